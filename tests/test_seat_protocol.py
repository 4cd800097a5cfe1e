"""SEAT as each paper ran it: the pooling each protocol names (checked against vectors built by hand,
so a wrong pooling fails), encoder states for mT5 and mBART, and significance marks as printed."""

from __future__ import annotations

import numpy as np
import pytest
import torch
from biaskit.evaluation.options import SeatOptions
from biaskit.evaluation.seat import Encoder, mark, read_seat_test, resolve_tests, run_seat, significance, weat

T9R1 = "indibias-paper/en/indibias-t9-r01-young-male-vs-young-female-terms-pu"
SENTS = ["This is Rahul.", "Rahul is here.", "This is a dalit man.", "They are peaceful."]


def _unit(v: torch.Tensor) -> np.ndarray:
    v = v.double()
    return (v / v.norm()).numpy()


def hand_vectors(model, tok, texts, pooling: str) -> np.ndarray:
    """The sentence vector by hand: one text at a time, the last layer, the position the pooling names."""
    out = []
    for t in texts:
        ids = tok(t, add_special_tokens=pooling != "first")["input_ids"]
        with torch.no_grad():
            h = model(input_ids=torch.tensor([ids])).last_hidden_state[0]
        v = {"cls": h[0], "first": h[0], "last": h[-1], "mean": h.mean(0)}[pooling]
        out.append(_unit(v))
    return np.stack(out)


@pytest.mark.parametrize("pooling", ["mean", "cls", "first", "last"])
def test_each_pooling_equals_a_hand_built_vector(tiny_bert, pooling):
    from transformers import AutoModel, AutoTokenizer

    enc = Encoder.load(str(tiny_bert), device="cpu")
    got = enc.encode(SENTS, pooling=pooling, cache=None)
    model, tok = AutoModel.from_pretrained(tiny_bert).eval(), AutoTokenizer.from_pretrained(tiny_bert)
    want = hand_vectors(model, tok, SENTS, pooling)
    assert np.allclose(got, want, atol=1e-5)
    # and the poolings are really different vectors (a wrong one cannot pass by accident)
    others = [p for p in ("mean", "cls", "first", "last") if p != pooling]
    for p in others:
        assert not np.allclose(got, hand_vectors(model, tok, SENTS, p), atol=1e-3), (pooling, p)


def _effect(enc, test, pooling: str) -> float:
    """The effect size from :meth:`Encoder.encode` vectors of one pooling (each pooling is checked
    against hand-built vectors above)."""
    from biaskit.evaluation.seat import prepare_sentences

    v = {k: enc.encode(s, pooling=pooling, cache=None) for k, s in prepare_sentences(test, bleach="auto").items()}
    return weat(v["targ1"], v["targ2"], v["attr1"], v["attr2"], n_samples=10)["effect_size"]


def test_indibias_tests_run_with_the_cls_embedding_by_default(tiny_bert, tmp_path):
    s = run_seat(
        SeatOptions(tests=[T9R1], models=[str(tiny_bert)], out=tmp_path / "o", n_samples=100), cache=False
    ).summary
    assert s["protocol"]["name"] == "indibias-seat" and s["pooling"] == "cls" and s["alpha"] == 0.01
    enc = Encoder.load(str(tiny_bert), device="cpu")
    test = read_seat_test(resolve_tests([T9R1])[0])
    assert s["tests"][0]["effect_size"] == pytest.approx(_effect(enc, test, "cls"), abs=1e-6)
    # biaskit's own default (mean pooling) gives another number: the protocol's pooling is what matters
    assert s["tests"][0]["effect_size"] != pytest.approx(_effect(enc, test, "mean"), abs=1e-4)
    # an explicit pooling is a deviation, in words
    s = run_seat(
        SeatOptions(tests=[T9R1], models=[str(tiny_bert)], out=tmp_path / "m", pooling="mean", n_samples=100),
        cache=False,
    ).summary
    [dev] = s["protocol"]["deviations"]
    assert "instead of the first position" in dev["text"] and "Appendix B" in dev["text"]


def test_sent_bias_tests_run_as_sent_bias_does_per_model_family(tiny_bert, tiny_gpt2, seat_dir, tmp_path):
    s = run_seat(
        SeatOptions(tests=[str(seat_dir / "weat6.jsonl")], models=[str(tiny_bert)], out=tmp_path / "b"), cache=False
    ).summary
    # the protocol, followed; May et al.'s checkpoints are not recorded, so never verified: not comparable
    assert s["protocol"]["name"] == "seat-may2019" and s["protocol"]["follows_protocol"]
    assert not s["protocol"]["comparable"]
    assert (s["pooling"], s["bleach"], s["n_samples"], s["seed"]) == ("first", "never", 100_000, 1111)
    assert not s["tests"][0]["bleached"] and s["correction"] == "holm-bonferroni"
    s = run_seat(
        SeatOptions(tests=[str(seat_dir / "weat6.jsonl")], models=[str(tiny_gpt2)], out=tmp_path / "g"), cache=False
    ).summary
    assert s["family"] == "decoder" and s["pooling"] == "last"


def _encoder_states(model_cls, path, texts):
    from transformers import AutoTokenizer

    m = model_cls.from_pretrained(path).eval()
    tok = AutoTokenizer.from_pretrained(path)
    return hand_vectors(m.get_encoder(), tok, texts, "cls")


@pytest.mark.parametrize("which", ["mt5", "mbart"])
def test_mt5_and_mbart_seat_use_encoder_states(which, tiny_mt5, tiny_mbart, tmp_path):
    from transformers import AutoModel, AutoTokenizer, MBartForConditionalGeneration, MT5ForConditionalGeneration

    path = tiny_mt5 if which == "mt5" else tiny_mbart
    cls = MT5ForConditionalGeneration if which == "mt5" else MBartForConditionalGeneration
    enc = Encoder.load(str(path), device="cpu")
    assert enc.family == "encoder-decoder" and enc.part == "encoder"
    got = enc.encode(SENTS, pooling="cls", cache=None)
    assert np.allclose(got, _encoder_states(cls, path, SENTS), atol=1e-5)
    if which == "mbart":  # the full model, given only the input, returns decoder states: not these
        full, tok = AutoModel.from_pretrained(path).eval(), AutoTokenizer.from_pretrained(path)
        assert not np.allclose(got, hand_vectors(full, tok, SENTS, "cls"), atol=1e-3)
    s = run_seat(
        SeatOptions(tests=["indibias-t3-r01"], models=[str(path)], out=tmp_path / "o", n_samples=100), cache=False
    ).summary
    assert [r["lang"] for r in s["tests"]] == ["en", "hi"] and s["encoder_part"] == "encoder"
    assert all(np.isfinite(r["effect_size"]) for r in s["tests"])
    assert "encoded by its **encoder** alone" in (tmp_path / "o" / "report.md").read_text()


def test_significance_marks_as_the_papers_print_them():
    rows = [{"p_value": p} for p in (0.009, 0.001, 0.02, 0.004)]
    # p <= 0.01 is significant; Holm-Bonferroni at 0.01 over 4 tests: 0.001 <= 0.01/4 rejects, 0.004 > 0.01/3 stops
    assert significance(rows, 0.01, "none") == ["*", "*", "", "*"]
    assert significance(rows, 0.01, "holm-bonferroni") == ["*", "**", "", "*"]
    assert significance(rows, 0.05, "none") == ["*", "*", "*", "*"]
    assert mark(0.5, "*", "underline") == "<u>0.500</u>" and mark(0.5, "**", "star") == "0.500**"
    assert mark(-0.25, "", "underline") == "-0.250"


def test_comparison_table_marks_as_the_protocol(tiny_bert, tiny_xlmr, tmp_path):
    from biaskit.evaluation.compare import run_seat_multi

    res = run_seat_multi(
        SeatOptions(tests=[T9R1], models=[str(tiny_bert), str(tiny_xlmr)], out=tmp_path / "c", n_samples=100),
        cache=False,
    )
    md = (tmp_path / "c" / "comparison.md").read_text()
    assert "underlined: significant at p ≤ 0.01" in md and "## Protocol" in md
    t = res.table
    for _, r in t.iterrows():  # every cell's mark follows its p-value
        assert (r["significance"] == "*") == (r["p_value"] <= 0.01)
