"""`--scorer seq2seq` on tiny random mT5 and mBART built offline, against plain loops.

Expected values: a hand loop that builds the decoder input itself (T5: decoder_start_token_id +
labels[:-1]; mBART: the final language code moved to the front), runs one unbatched forward per
sentence with the empty-text encoder input, and averages log_softmax at the label ids; and, as a
second independent reference, the model's own cross-entropy loss for ``labels=`` (its mean NLL).
"""

from __future__ import annotations

import json
from pathlib import Path

import pandas as pd
import pytest
import torch
from biaskit.evaluation.scorers import load_scorer
from biaskit.evaluation.seq2seq import load_seq2seq
from conftest import run_cli

from biaskit.errors import BiaskitError

SENTS = [
    "The doctor told the nurse that she would be late.",
    "He was a very good cook.",
    "गरीब परिवार अपने बच्चों को स्कूल नहीं भेज सकता था।",
    "She is a brilliant scientist who works on climate research.",
]
DEMO = Path(__file__).resolve().parents[1] / "data" / "demo" / "demo_pairs.jsonl"


def hand_loop(lm, text: str, kind: str) -> tuple[float, int]:
    tok, model = lm.tokenizer, lm.model
    enc = tok("", add_special_tokens=True)["input_ids"]
    labels = tok(text_target=text)["input_ids"]
    if kind == "t5":
        assert labels[-1] == tok.eos_token_id
        dec = [model.config.decoder_start_token_id] + labels[:-1]
    else:  # mBART: "S </s> en_XX" -> decoder input "en_XX S </s>"
        assert tok.convert_ids_to_tokens(labels[-1]) == "en_XX"
        dec = [labels[-1]] + labels[:-1]
    total = 0.0
    with torch.no_grad():
        logits = model(input_ids=torch.tensor([enc]), decoder_input_ids=torch.tensor([dec])).logits[0]
    for t, y in enumerate(labels):
        total += torch.log_softmax(logits[t], -1)[y].item()
    return total, len(labels)


def model_loss(lm, text: str) -> float:
    tok = lm.tokenizer
    with torch.no_grad():
        out = lm.model(
            input_ids=torch.tensor([tok("")["input_ids"]]), labels=torch.tensor([tok(text_target=text)["input_ids"]])
        )
    return float(out.loss)


@pytest.mark.parametrize("which,kind", [("tiny_mt5", "t5"), ("tiny_mbart", "mbart")])
def test_seq2seq_matches_hand_loop_and_model_loss(which, kind, request):
    lm = load_seq2seq(request.getfixturevalue(which), device="cpu")
    assert lm.kind == "seq2seq"
    mean = load_scorer("seq2seq", lm=lm, cache=False, progress=False)
    summ = load_scorer("seq2seq", lm=lm, method="sum", cache=False, progress=False, batch_size=3)
    got_mean = mean.score_texts(SENTS)
    got_sum = summ.score_texts(SENTS)
    for s, (m, n), (t, n2) in zip(SENTS, got_mean, got_sum, strict=False):
        exp, n_exp = hand_loop(lm, s, kind)
        assert n == n2 == n_exp
        assert t == pytest.approx(exp, abs=1e-4)
        assert m == pytest.approx(exp / n_exp, abs=1e-5)
        assert m == pytest.approx(-model_loss(lm, s), abs=1e-5)
    # pairs: each side is its own sentence score
    ps = mean.score_pairs([(SENTS[0], SENTS[1])])[0]
    assert (ps.score_more, ps.score_less) == pytest.approx((got_mean[0][0], got_mean[1][0]), abs=1e-9)
    assert mean.describe()["method"] == "mean" and "IndiBias" in mean.describe()["normalisation"]


def test_seq2seq_cache_rerun_costs_no_forward_pass(tiny_mt5, tmp_path):
    lm = load_seq2seq(tiny_mt5, device="cpu")
    a = load_scorer("seq2seq", lm=lm, cache=tmp_path / "c.sqlite3", progress=False)
    first = a.score_texts(SENTS)
    assert a.forward_passes > 0
    b = load_scorer("seq2seq", lm=lm, cache=tmp_path / "c.sqlite3", progress=False)
    assert b.score_texts(SENTS) == first and b.forward_passes == 0


def test_wrong_model_kinds_fail_clearly(tiny_mt5, tiny_bert):
    with pytest.raises(BiaskitError, match="not an encoder-decoder"):
        load_scorer("seq2seq", tiny_bert)
    with pytest.raises(BiaskitError, match="--scorer seq2seq"):
        load_scorer("clm", tiny_mt5)
    with pytest.raises(BiaskitError, match="no method 'pll'"):
        load_scorer("seq2seq", tiny_mt5, method="pll")


def test_cli_seq2seq_on_demo(tiny_mbart, tmp_path, capsys):
    code, out, err = run_cli(
        [
            "evaluate",
            "pairs",
            "--data",
            str(DEMO),
            "--limit",
            "4",
            "--model",
            str(tiny_mbart),
            "--scorer",
            "seq2seq",
            "--runs",
            "2",
            "--out",
            str(tmp_path / "o"),
            "-q",
        ],
        capsys,
    )
    assert code == 0, err
    s = json.loads((tmp_path / "o" / "summary.json").read_text())
    assert s["scorer"] == "seq2seq" and s["method"] == "mean" and s["n_pairs"] == 8
    # the sentence-length check of causal scores applies to seq2seq scores too (sum = mean x tokens)
    assert s["by_lang"]["en"]["length"]["other"]["method"] == "sum"
    df = pd.read_csv(tmp_path / "o" / "pairs.csv")
    lm = load_seq2seq(tiny_mbart, device="cpu")
    row = df.iloc[0]
    exp, n = hand_loop(lm, row["sent_more"], "mbart")
    assert row["score_more"] == pytest.approx(exp / n, abs=1e-5) and row["n_scored_more"] == n
