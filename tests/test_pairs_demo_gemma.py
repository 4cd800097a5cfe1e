"""Slow: the `make demo` command on the real gemma3-270m (PyPI GGUF), on a few demo pairs per language."""

from __future__ import annotations

import json
import os
import subprocess
import sys
from pathlib import Path

import pandas as pd
import pytest

REPO = Path(__file__).resolve().parents[1]
DEMO = REPO / "data" / "demo" / "demo_pairs.jsonl"


@pytest.mark.slow
@pytest.mark.model
def test_demo_command_on_gemma(gemma_dir, tmp_path):
    exe = Path(sys.executable).with_name("biaskit")
    out = tmp_path / "demo-out"
    env = {**os.environ, "HF_HUB_OFFLINE": "1", "TRANSFORMERS_OFFLINE": "1"}
    # the Makefile's demo line, limited to 3 pairs per language
    p = subprocess.run(
        [
            str(exe),
            "evaluate",
            "pairs",
            "--data",
            str(DEMO),
            "--model",
            "gemma3-270m",
            "--scorer",
            "clm",
            "--out",
            str(out),
            "--limit",
            "3",
            "--quiet",
        ],
        capture_output=True,
        text=True,
        env=env,
        timeout=900,
    )
    assert p.returncode == 0, p.stderr[-3000:]
    s = json.loads((out / "summary.json").read_text(encoding="utf-8"))
    assert s["model"] == "gemma3-270m" and s["scorer"] == "clm" and s["langs"] == ["en", "hi"]
    assert s["by_lang"]["en"]["n_pairs"] == 3 and s["by_lang"]["hi"]["n_pairs"] == 3
    assert (out / "ds_kde.png").read_bytes()[:4] == b"\x89PNG" and "| hi |" in (out / "report.md").read_text()
    df = pd.read_csv(out / "pairs.csv")
    assert (df[["score_more", "score_less"]] < 0).all().all() and (df["n_scored_more"] > 0).all()

    # independent check of one English and one Hindi score: log P(sentence) with a plain forward pass
    import torch
    from transformers import AutoModelForCausalLM, AutoTokenizer

    torch.set_num_threads(max(1, min(2, os.cpu_count() or 1)))
    tok = AutoTokenizer.from_pretrained(str(gemma_dir))
    model = AutoModelForCausalLM.from_pretrained(str(gemma_dir), dtype=torch.float32).eval()
    for lang in ("en", "hi"):
        row = df[df["lang"] == lang].iloc[0]
        ids = tok(row["sent_more"], return_tensors="pt")["input_ids"]
        assert ids[0, 0].item() == tok.bos_token_id  # gemma's tokenizer prepends <bos>, which is not scored
        with torch.inference_mode():
            logp = torch.log_softmax(model(ids).logits[0, :-1].float(), dim=-1)
        want = logp.gather(1, ids[0, 1:].unsqueeze(1)).sum().item()
        assert row["score_more"] == pytest.approx(want, abs=1e-3), lang
        assert row["n_scored_more"] == ids.shape[1] - 1
