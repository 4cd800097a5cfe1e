"""A run is "comparable with the paper" only when it is (docs/fidelity.md, "What comparable means").

Each over-claim of issue 27 is pinned here or in tests/test_published.py: a tiny model named like a
paper checkpoint (test_published.py: ``*_only_beside_the_papers_checkpoint``), a decoder under
``indibias-seat`` and collapsed SEAT vectors, a partial StereoSet run (test_published.py:
``test_cats_partial_run_is_compared_split_by_split_never_with_table4_overall``), the public IndiBias
sample. The expected texts and numbers come from the papers and data files (800 pairs per language:
IndiBias abstract; 561 rows: the public sample), not from biaskit's output.
"""

from __future__ import annotations

import json
import math

import pytest
from biaskit.evaluation.options import SeatOptions
from conftest import public_dataset, run_cli

from biaskit.errors import BiaskitError

EN_T3_R1 = "indibias-paper/en/indibias-t3-r01-male-vs-female-names-cf"
LABELS = ("stereotype", "anti-stereotype", "unrelated")


def test_a_decoder_under_indibias_seat_is_not_comparable_and_pools_its_last_token(tiny_gpt2, tmp_path):
    from biaskit.evaluation.seat import run_seat

    s = run_seat(
        SeatOptions(tests=[EN_T3_R1], models=[str(tiny_gpt2)], out=tmp_path / "o", n_samples=200), cache=False
    ).summary
    p = s["protocol"]
    assert p["name"] == "indibias-seat" and s["family"] == "decoder"
    # the paper's [CLS] has no counterpart in a decoder: outside the paper's setup, said in words
    [dev] = p["deviations"]
    assert "a decoder (causal LM)" in dev["text"] and "[CLS]" in dev["text"] and not p["comparable"]
    # the pooling used is stated: the last position (sent-bias's GPT encodings), biaskit's default for decoders
    assert s["pooling"] == "last"
    row = next(r for r in p["settings"] if r["key"] == "pooling")
    assert row["from"] == "biaskit default" and "last position" in row["words"]
    assert math.isfinite(s["tests"][0]["effect_size"])
    report = (tmp_path / "o" / "report.md").read_text()
    assert "a decoder (causal LM)" in report and "**Not comparable with the paper's figures**" in report


def test_collapsed_seat_vectors_are_refused_in_one_line(tiny_gpt2, tmp_path, capsys):
    # [CLS] pooling on a decoder takes position 0, which has seen only the first token: the bleached
    # sentences ("This is Anjali.", "That is Anjali.", ...) share a handful of first tokens
    code, out, err = run_cli(
        ["evaluate", "seat", "--test", EN_T3_R1, "--model", str(tiny_gpt2), "--pooling", "cls", "--n-samples", "50"]
        + ["--out", str(tmp_path / "o"), "--no-cache"],
        capsys,
    )
    assert code == 2 and "Traceback" not in err
    [line] = [x for x in err.strip().splitlines() if x.strip()]
    assert EN_T3_R1.rsplit("/", 1)[-1] in line and "collapse" in line and "--pooling last" in line
    assert not (tmp_path / "o" / "summary.json").exists()


def test_an_undefined_effect_size_is_an_error_naming_the_test(tiny_bert, tmp_path):
    from biaskit.evaluation.seat import run_seat

    # A = B: s(w, A, B) = 0 for every target sentence, so d = 0 / 0 (sent-bias would print nan)
    attrs = ["The weather is pleasant today.", "She bought fresh bread.", "The river runs to the sea."]
    doc = {
        "targ1": {"category": "X", "examples": ["Anil reads a book.", "Ravi plays cricket."]},
        "targ2": {"category": "Y", "examples": ["Meera sings a song.", "Sita walks home."]},
        "attr1": {"category": "A", "examples": attrs},
        "attr2": {"category": "B", "examples": attrs},
    }
    test = tmp_path / "same-attributes.jsonl"
    test.write_text(json.dumps(doc))
    with pytest.raises(BiaskitError) as e:
        run_seat(SeatOptions(tests=[str(test)], models=[str(tiny_bert)], out=tmp_path / "o", n_samples=50), cache=False)
    assert (
        "same-attributes" in str(e.value)
        and "undefined (NaN)" in str(e.value)
        and "standard deviation is 0" in str(e.value)
    )


def test_the_public_indibias_sample_is_labelled_a_sample_everywhere(tiny_xlmr, tmp_path, capsys):
    sample = public_dataset("indibias-sample")
    out = tmp_path / "o"
    code, stdout, err = run_cli(
        ["evaluate", "pairs", "--data", str(sample), "--skip-invalid", "--lang", "en", "--limit", "30"]
        + ["--model", str(tiny_xlmr), "--out", str(out), "-q", "--no-cache"],
        capsys,
    )
    assert code == 0, err
    s = json.loads((out / "summary.json").read_text())
    p = s["protocol"]
    assert p["name"] == "indibias" and p["follows_protocol"] and not p["comparable"]
    why = {w["kind"]: w["text"] for w in p["why_not_comparable"]}
    # the public repository holds 561 of the paper's 800 pairs per language (IndiBias abstract, §3)
    assert why["data"].startswith("data: the public IndiBias sample") and "561 pairs" in why["data"]
    assert "800 pairs per language" in why["data"]
    # the terminal line, report.md and summary.json say the same
    report = (out / "report.md").read_text()
    flat = " ".join(stdout.split())
    for w in p["why_not_comparable"]:
        assert w["text"] in report
        assert " ".join(w["text"].split()) in flat
    assert "not comparable with the paper's figures" in flat
    # the loaded weights' SHA-256, by file name (no path of this machine)
    import hashlib

    [wf] = s["checkpoint"]["weights"]
    assert wf["file"] == "model.safetensors" and "/" not in wf["file"]
    assert wf["sha256"] == hashlib.sha256((tiny_xlmr / "model.safetensors").read_bytes()).hexdigest()


def test_word_token_masks_each_token_of_the_unmodified_words_alone(tiny_xlmr, tmp_path):
    """--unit word-token: U and M by whitespace words (§6.1), then log P(u_i | U without u_i, M) summed
    over the tokens of U, one masked at a time: the formula of §6.1 read literally, computed here by hand
    with the model and the tokenizer's offsets."""
    import torch
    from biaskit.evaluation.models import load_lm
    from biaskit.evaluation.scorers import load_scorer
    from transformers import AutoModelForMaskedLM, AutoTokenizer

    a, b = "डॉक्टर ने नर्स से कहा कि वह देर से आएगी।", "डॉक्टर ने मरीज़ से कहा कि वह देर से आएगी।"
    tok = AutoTokenizer.from_pretrained(str(tiny_xlmr))
    model = AutoModelForMaskedLM.from_pretrained(str(tiny_xlmr)).eval()

    def hand(text: str, other: str) -> tuple[float, int]:
        common = set(text.split()) & set(other.split())
        enc = tok(text, return_offsets_mapping=True)
        ids, offs = enc["input_ids"], enc["offset_mapping"]
        spans, pos = [], 0
        for w in text.split():  # character span of each word
            start = text.index(w, pos)
            spans.append((start, start + len(w), w))
            pos = start + len(w)
        u = [i for i, (s, e) in enumerate(offs) if e > s and any(ws <= s < we and w in common for ws, we, w in spans)]
        total = 0.0
        for i in u:  # one token of U masked at a time, everything else visible
            x = list(ids)
            x[i] = tok.mask_token_id
            with torch.no_grad():
                logp = torch.log_softmax(model(torch.tensor([x])).logits[0, i].float(), -1)
            total += float(logp[ids[i]])
        return total, len(u)

    sc = load_scorer("mlm", load_lm(str(tiny_xlmr)), unit="word-token", method="pll", cache=False)
    [got] = sc.score_pairs([(a, b)])
    ha, hb = hand(a, b), hand(b, a)
    assert ha[1] > len(set(a.split()) & set(b.split()))  # some U word is cut into several pieces
    assert got.score_more == pytest.approx(ha[0], abs=1e-4) and got.n_scored_more == ha[1]
    assert got.score_less == pytest.approx(hb[0], abs=1e-4) and got.n_scored_less == hb[1]


def test_word_token_is_another_reading_of_indibias_not_a_deviation():
    from biaskit.evaluation.protocols import get_protocol
    from biaskit.evaluation.protocols.base import apply_protocol

    p = get_protocol("indibias")
    applied = apply_protocol(p, "pairs", {"unit": "word-token"}, {}, context={"kind": "mlm"})
    row = next(r for r in applied.rows if r["key"] == "unit")
    assert applied.deviations == [] and "another reading of IndiBias §6.1" in row["from"]
    # the protocol's own value says it is an interpretation, and a note offers the literal reading
    assert "biaskit's reading" in next(s.section for s in p.settings if s.key == "unit")
    assert any("--unit word-token" in n for n in applied.notes)  # the option named where the user is
    # a value the paper's text does not support is still a deviation
    applied = apply_protocol(p, "pairs", {"unit": "token"}, {}, context={"kind": "mlm"})
    assert [d["key"] for d in applied.deviations] == ["unit"]


def test_one_hook_marks_a_run_not_comparable():
    """mark_not_comparable: the one way other checks (unknown tokens, NaN scores) say why a run is not
    comparable, on a run's protocol or on its written summary["protocol"]."""
    from biaskit.evaluation.protocols import get_protocol
    from biaskit.evaluation.protocols.base import apply_protocol, mark_not_comparable, verdict

    applied = apply_protocol(get_protocol("crows"), "pairs", {}, {}, context={"kind": "mlm"})
    applied.verify_checkpoint("BERT")
    assert applied.comparable
    mark_not_comparable(applied, "tokenizer", "tokenizer: 3 words map to [UNK]")
    mark_not_comparable(applied, "tokenizer", "tokenizer: 3 words map to [UNK]")
    d = applied.as_dict()
    assert not d["comparable"] and d["why_not_comparable"] == [
        {"kind": "tokenizer", "text": "tokenizer: 3 words map to [UNK]"}
    ]
    written = apply_protocol(get_protocol("crows"), "pairs", {}, {}, context={"kind": "mlm"})
    written.verify_checkpoint("BERT")
    d = written.as_dict()
    mark_not_comparable(d, "scores", "scores: 2 NaN scores")
    assert not d["comparable"] and "scores: 2 NaN scores" in verdict(d)


def test_documented_differences_mark_the_stereoset_runs_they_change(tiny_gpt2, tiny_xlmr, tmp_path):
    """docs/evaluation-cats-seat.md lists where biaskit scores differently from the reference: two-BLANK
    CATs (4), byte-level BPE pieces (1), fills with punctuation inside (2). A masked-LM run whose data or
    vocabulary they touch is not comparable, with the count from the data."""
    from types import SimpleNamespace

    from biaskit.evaluation.protocols import get_protocol
    from biaskit.evaluation.protocols.base import apply_protocol
    from biaskit.evaluation.stereoset import scoring_context
    from transformers import AutoTokenizer

    from biaskit.readers import read_cats

    rows = [
        ("The BLANK man and the BLANK woman walked home.", "old", "young", "blue"),
        ("The BLANK engineer fixed the bridge.", "middle-aged", "young", "purple"),
        ("My neighbour is BLANK.", "lazy", "hardworking", "round"),
    ]
    flat = tmp_path / "cats.jsonl"
    flat.write_text(
        "".join(
            json.dumps(
                {
                    "type": "intrasentence",
                    "target": "person",
                    "bias_type": "profession",
                    "context": ctx,
                    **{lab: ctx.replace("BLANK", w) for lab, w in zip(LABELS, ws, strict=True)},
                }
            )
            + "\n"
            for ctx, *ws in rows
        )
    )
    cats = read_cats(flat)
    unigram = SimpleNamespace(kind="mlm", tokenizer=AutoTokenizer.from_pretrained(str(tiny_xlmr)))
    bpe = SimpleNamespace(kind="mlm", tokenizer=AutoTokenizer.from_pretrained(str(tiny_gpt2)))
    causal = SimpleNamespace(kind="clm", tokenizer=bpe.tokenizer)

    def reasons(lm) -> list[str]:
        applied = apply_protocol(get_protocol("stereoset"), "cats", {}, {}, context={"kind": lm.kind})
        applied.note_context(scoring_context(cats, lm))
        return [r["text"] for r in applied.reasons]

    got = reasons(unigram)
    assert len(got) == 2
    assert got[0].startswith("scoring: 1 intrasentence CAT(s) with two BLANKs") and "difference 4" in got[0]
    assert got[1].startswith("scoring: 1 intrasentence fill(s) with punctuation or a space inside") and "2)" in got[1]
    assert any("byte-level BPE" in t for t in reasons(bpe))
    assert reasons(causal) == []  # a causal LM scores the option sentence whole: none of the three applies


def test_a_masked_lm_without_nsp_weights_says_loudly_intersentence_was_not_scored(
    tiny_xlmr, stereoset_jsonl, tmp_path, capsys
):
    out = tmp_path / "o"
    code, stdout, err = run_cli(
        ["evaluate", "cats", "--data", str(stereoset_jsonl), "--model", str(tiny_xlmr), "--limit", "6"]
        + ["--out", str(out), "-q", "--no-cache"],
        capsys,
    )
    assert code == 0, err
    s = json.loads((out / "summary.json").read_text())
    # --limit 6 keeps the file's first 6 CATs: its intersentence ones are the count left unscored
    first = [json.loads(x) for x in stereoset_jsonl.read_text(encoding="utf-8").splitlines()[:6]]
    n_inter = sum(r["type"] == "intersentence" for r in first)
    assert n_inter >= 1 and s["skipped"]["intersentence"]["count"] == n_inter
    want = f"intersentence NOT SCORED ({n_inter} CATs): the overall LMS, SS and ICAT cover intrasentence only"
    assert s["warnings"] == [want] and s["overall_covers"] == ["intrasentence"]
    assert f"warning: {want}" in " ".join(stdout.split())
    report = (out / "report.md").read_text()
    assert report.index("## Warnings") < report.index("## Protocol") and f"**{want}**" in report
