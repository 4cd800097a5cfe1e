"""report.md and the comparison table from hand-made scores (numbers worked out in test_pairs_metrics)."""

from __future__ import annotations

import re

import pandas as pd
import pytest
from biaskit.evaluation import report
from biaskit.evaluation.pairs import summarize_frame
from test_pairs_metrics import ROWS  # the 8 hand-worked pairs: metric 37.5, stereo 66.67, antistereo 50, 3 ties


def _frame(lang="en", shift=0.0):
    df = pd.DataFrame(ROWS, columns=["pair_id", "bias_type", "direction", "score_more", "score_less"])
    df["score_more"] = df["score_more"] + shift
    df["lang"] = lang
    df["source_id"] = df["pair_id"]
    df["sent_more"] = "more " + df["pair_id"]
    df["sent_less"] = "less " + df["pair_id"]
    df["n_scored_more"] = df["n_scored_less"] = 5
    return df


def test_report_shows_hand_worked_numbers():
    summary, out = summarize_frame(_frame(), runs=2, fraction=0.5, seed=0)
    summary.update(
        {
            "model": "toy",
            "scorer": "mlm",
            "unit": "token",
            "method": "pll",
            "data": {"path": "x"},
            "command": "biaskit evaluate pairs --data x",
        }
    )
    md = report.render_report(summary, out)
    # binomial SE by hand: 100 * sqrt(0.375 * 0.625 / 8) = 17.116
    assert re.search(
        r"\| en \| 8 \| 37\.50 \| \[\d+\.\d\d, \d+\.\d\d\] \| ± 17\.12 \| 66\.67 \| 50\.00 \| 3 \(37\.5%\) \|", md
    )
    # religion: 0 wins of 3 (SE 0), stereo undefined (both stereo pairs tied), antistereo 0/1
    assert "| religion | 3 | 0.00 | 0.00 | — | 0.00 | 2 |" in md
    assert "not a confidence interval" in md and "Sentence length" not in md  # mlm: no length section
    assert "![DS KDE](ds_kde.png)" in md and "biaskit evaluate pairs --data x" in md
    # strongest preference: p1 (DS = +2.0) first; weakest: p2 (DS = -4.0) first
    top = md.split("Largest DS")[1].split("\n| gender")[1]
    assert top.startswith(" | stereo | 2.000 | more p1")
    assert "| gender | stereo | -4.000 | more p2 | less p2 |" in md
    assert "pooled" not in md  # single language


def test_two_languages_and_comparison(tmp_path):
    # hi copy: every score_more +1.0 -> wins p1 p3 p4? p4: -19 vs -18 loss; p5: -4.0004 > -5.0001 win;
    # p6: -6.1236 > -7.1244 win; p7 win; p8: -5 > -6 win; p2: -14 < -11 loss -> 6 wins / 8 = 75 %
    df = pd.concat([_frame("en"), _frame("hi", shift=1.0)], ignore_index=True)
    summary, out = summarize_frame(df, runs=3, fraction=0.8)
    assert summary["by_lang"]["en"]["metric_score"] == pytest.approx(37.5)
    assert summary["by_lang"]["hi"]["metric_score"] == pytest.approx(75.0)
    assert summary["metric_score"] == pytest.approx(100 * 9 / 16) and summary["pooled_over_langs"]
    summary.update({"model": "toy", "model_slug": "toy", "scorer": "mlm", "unit": "token", "method": "pll"})
    md = report.render_report(summary, out, plot=None)
    assert "| all (pooled) | 16 | 56.25 |" in md and "counts twice" in md
    s2 = dict(summary, model="toy2", model_slug="toy2")
    path = report.write_comparison(tmp_path, [summary, s2], [out, out])
    cmp = pd.read_csv(path)
    assert list(cmp["lang"]) == ["en", "hi", "all", "en", "hi", "all"]
    assert list(cmp["metric_score"])[:3] == pytest.approx([37.5, 75.0, 56.25])
    assert cmp.loc[0, "metric_score[gender]"] == pytest.approx(200 / 3)
    md = (tmp_path / "comparison.md").read_text()
    assert "| toy2 | toy2 | hi | 8 | 75.00 |" in md
    assert (tmp_path / "ds_kde_comparison.png").read_bytes()[:4] == b"\x89PNG"
