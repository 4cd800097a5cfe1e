"""`evaluate seat` warns when the encoder's tokenizer cannot represent a test's language (an English-only
vocabulary on Devanagari) instead of printing numbers that are noise."""

from __future__ import annotations

import json

import pytest
from conftest import run_cli
from transformers import AutoTokenizer


def test_coverage_by_hand_on_the_minilm_vocabulary(tiny_bert, tiny_xlmr):
    """BERT-uncased normalisation drops combining marks of Unicode category Mn: in पुरुष (प ु र ु ष) both
    ु go, 3 of 5 characters survive; in किसान (क ि स ा न) the vowel signs are Mc and stay (5 of 5).
    So 2 of 10 characters are lost, and no piece is unknown."""
    from biaskit.evaluation.coverage import coverage_warning, tokenizer_coverage

    bert = AutoTokenizer.from_pretrained(str(tiny_bert))  # the real all-MiniLM-L6-v2 WordPiece vocabulary
    cov = tokenizer_coverage(bert, ["पुरुष", "किसान"])
    assert cov["n_chars"] == 10 and cov["lost_char_share"] == pytest.approx(0.2)
    assert cov["n_unknown"] == 0 and coverage_warning(cov, lang="hi") is not None  # 20% lost > 10%
    # English through the same vocabulary: lower-casing and spacing are not losses
    cov = tokenizer_coverage(bert, ["The Doctor's bag is here.", "Women are engineers."])
    assert cov["lost_char_share"] == 0.0 and cov["unknown_share"] == 0.0 and coverage_warning(cov) is None
    # a multilingual vocabulary (the tiny XLM-R's SentencePiece alphabet has Devanagari) keeps everything
    xlmr = AutoTokenizer.from_pretrained(str(tiny_xlmr))
    cov = tokenizer_coverage(xlmr, ["पुरुष", "किसान"])
    assert cov["lost_char_share"] == 0.0 and cov["unknown_share"] == 0.0


def test_seat_warns_in_output_and_report(tiny_bert, tmp_path, capsys):
    en, hi = (
        "indibias-team/en/team-gr3-hindu-male-vs-female-career-vs-family",
        "indibias-team/hi/team-gr3-hindu-male-vs-female-career-vs-family",
    )
    out = tmp_path / "seat"
    code, stdout, err = run_cli(
        [
            "evaluate",
            "seat",
            "--test",
            en,
            "--test",
            hi,
            "--model",
            str(tiny_bert),
            "--out",
            str(out),
            "--n-samples",
            "200",
            "--device",
            "cpu",
        ],
        capsys,
    )
    assert code == 0, err
    warn = [ln for ln in stdout.splitlines() if ln.startswith("warning: ")]
    assert len(warn) == 1 and "gr3-hindu-male-vs-female-career-vs-family" in warn[0]
    assert "Hindi (Devanagari)" in warn[0] and "noise" in warn[0]
    s = json.loads((out / "summary.json").read_text())
    rows = {r["lang"]: r for r in s["tests"]}
    assert rows["en"]["warning"] is None and rows["hi"]["warning"] and s["warnings"] == [rows["hi"]["warning"]]
    assert rows["hi"]["tok_lost_char_share"] > 0.1 and rows["en"]["tok_lost_char_share"] == 0.0
    md = (out / "report.md").read_text(encoding="utf-8")
    assert "## Warnings" in md and "(noise: see warnings)" in md
