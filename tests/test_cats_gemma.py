"""Slow: the real gemma3-270m (PyPI GGUF, converted once) on a slice of StereoSet dev, both splits."""

from __future__ import annotations

import json
import math

import pytest
from biaskit.evaluation.options import CatsOptions

pytestmark = [pytest.mark.slow, pytest.mark.model]


def test_gemma_on_stereoset_slice(gemma_dir, stereoset_jsonl, tmp_path):
    import torch
    from biaskit.evaluation.stereoset import read_cats, run_cats

    torch.set_num_threads(2)
    # 20 CATs: the dev file alternates splits, so about 10 intrasentence and 10 intersentence; --protocol none:
    # the causal intersentence likelihood (StereoSet's own protocol needs an NSP head for a causal LM)
    s = run_cats(
        CatsOptions(
            data=stereoset_jsonl,
            models=[str(gemma_dir)],
            out=tmp_path / "out",
            scorer="clm",
            limit=20,
            batch_size=16,
            protocol="none",
        )
    ).summary
    assert s["scorer"] == "clm" and s["count"] == 20
    assert set(s["methods"]) == {"clm-sentence", "clm-conditional"}
    assert s["intrasentence"]["overall"]["count"] + s["intersentence"]["overall"]["count"] == 20
    # a real LM prefers the meaningful options over the unrelated ones far more often than chance (50)
    assert s["lms"] > 60, s["lms"]

    # the metrics, recomputed from the written per-sentence scores by the paper's definitions
    # (per target term: ss = 100 * #(stereo > anti) / n, lms = 100 * #(meaningful > unrelated) / 2n;
    # both macro-averaged over target terms; icat = lms * min(ss, 100 - ss) / 50)
    scores = {
        r["id"]: r["score"] for r in map(json.loads, (tmp_path / "out" / "scores.jsonl").read_text().splitlines())
    }
    per_term: dict[str, list[int]] = {}
    for c in read_cats(stereoset_jsonl, limit=20):
        st, an, un = (scores[c.option(k).sentence_id] for k in ("stereotype", "anti-stereotype", "unrelated"))
        t = per_term.setdefault(c.target, [0, 0, 0])
        t[0] += st > an
        t[1] += (st > un) + (an > un)
        t[2] += 1
    ss = sum(100 * p / n for p, _, n in per_term.values()) / len(per_term)
    lms = sum(100 * r / (2 * n) for _, r, n in per_term.values()) / len(per_term)
    assert s["ss"] == pytest.approx(ss) and s["lms"] == pytest.approx(lms)
    assert s["icat"] == pytest.approx(lms * min(ss, 100 - ss) / 50)

    # independent check of two options with a plain forward pass and the model's own loss
    from transformers import AutoModelForCausalLM, AutoTokenizer

    tok = AutoTokenizer.from_pretrained(str(gemma_dir))
    model = AutoModelForCausalLM.from_pretrained(str(gemma_dir), dtype=torch.float32).eval()
    rows = {r["id"]: r for r in map(json.loads, (tmp_path / "out" / "scores.jsonl").read_text().splitlines())}
    cats = read_cats(stereoset_jsonl, limit=20)
    intra = next(c for c in cats if c.split == "intrasentence")
    inter = next(c for c in cats if c.split == "intersentence")
    sent = intra.option("stereotype").sentence
    enc = tok(sent, return_tensors="pt")  # gemma's tokenizer adds <bos>
    assert enc["input_ids"][0, 0].item() == tok.bos_token_id
    with torch.no_grad():
        loss = model(**enc, labels=enc["input_ids"]).loss.item()
    assert rows[intra.option("stereotype").sentence_id]["score"] == pytest.approx(math.exp(-loss), rel=1e-3)
    ctx = inter.context if inter.context[-1] in ".!?" else inter.context + "."
    opt = inter.option("anti-stereotype")
    full = tok(f"{ctx} {opt.sentence}", return_tensors="pt")
    n_ctx = len(tok(ctx)["input_ids"])  # <bos> + context tokens
    labels = full["input_ids"].clone()
    labels[0, :n_ctx] = -100  # score only the option's tokens
    with torch.no_grad():
        loss = model(**full, labels=labels).loss.item()
    assert rows[opt.sentence_id]["score"] == pytest.approx(math.exp(-loss), rel=1e-3)
