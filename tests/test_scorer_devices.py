"""In-process models at other precisions and spread by accelerate (``--dtype``, ``--device-map``).

Tiny random models on the CPU (the machine has no GPU): bfloat16 weights must give the float32
scores within a tolerance measured here, and ``device_map="auto"`` (accelerate) must load and score
exactly as the plain load (on one CPU it places every layer on the CPU: the same float32 arithmetic).

Measured (tiny 2-layer GPT-2 / BERT, 6 pairs of 12-22 scored tokens, sentence sums about -130):
bfloat16 vs float32 max |difference| of a sentence score 0.0066 (clm) and 0.0075 (mlm), i.e.
4.8e-5 and 6.0e-5 relative; the test allows 2e-4 relative (about 3x the measured worst case).
"""

from __future__ import annotations

import json

import pytest
from biaskit.evaluation.scorers import load_scorer

pytest.importorskip("accelerate", reason="pip install accelerate (the evaluation extra)")

REL_BF16 = 2e-4


def _pairs():
    from fixtures_models import _EN

    return [(a, a.replace("The ", "A ", 1) if "The " in a else a.replace(" the ", " a ", 1)) for a in _EN]


@pytest.mark.parametrize("name,fixture", [("clm", "tiny_gpt2"), ("mlm", "tiny_bert")])
def test_bfloat16_and_device_map_auto(name, fixture, request):
    path = str(request.getfixturevalue(fixture))
    pairs = _pairs()
    f32 = load_scorer(name, path, device="cpu", cache=False, progress=False)
    ref = f32.score_pairs(pairs)
    bf = load_scorer(name, path, device="cpu", dtype="bfloat16", cache=False, progress=False)
    assert bf.describe()["dtype"] == "bfloat16"
    for a, b in zip(ref, bf.score_pairs(pairs), strict=False):
        assert (a.n_scored_more, a.n_scored_less) == (b.n_scored_more, b.n_scored_less)
        assert b.score_more == pytest.approx(a.score_more, rel=REL_BF16)
        assert b.score_less == pytest.approx(a.score_less, rel=REL_BF16)
        assert b.score_more != a.score_more  # it really ran in bfloat16
    dm = load_scorer(name, path, device="cpu", device_map="auto", cache=False, progress=False)
    info = dm.describe()
    assert info["engine"]["device_map"]["requested"] == "auto"
    assert set(info["engine"]["device_map"]["placement"].values()) == {"cpu"}
    got = dm.score_pairs(pairs)
    assert [(g.score_more, g.score_less) for g in got] == [(r.score_more, r.score_less) for r in ref]


def test_cli_records_dtype_and_device_map(tiny_gpt2, tmp_path, capsys):
    from conftest import run_cli

    data = tmp_path / "p.jsonl"
    data.write_text(
        "".join(
            json.dumps({"sent_more": a, "sent_less": b, "direction": "stereo", "bias_type": "gender"}) + "\n"
            for a, b in _pairs()[:6]
            if a != b
        )
    )
    code, out, err = run_cli(
        [
            "evaluate",
            "pairs",
            "--data",
            str(data),
            "--out",
            str(tmp_path / "o"),
            "--model",
            str(tiny_gpt2),
            "--scorer",
            "clm",
            "--device",
            "cpu",
            "--dtype",
            "bfloat16",
            "--device-map",
            "auto",
            "--runs",
            "1",
            "-q",
        ],
        capsys,
    )
    assert code == 0, err
    s = json.loads((tmp_path / "o" / "summary.json").read_text())
    assert s["scorer_info"]["dtype"] == "bfloat16"
    assert s["scorer_info"]["engine"]["device_map"]["requested"] == "auto"
