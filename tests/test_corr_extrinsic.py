"""Extrinsic group scores from raw outputs (Cao et al. 2022): values worked out by hand, the CLI, and
the end-to-end path into `evaluate correlate`."""

from __future__ import annotations

import json

import pandas as pd
import pytest
from biaskit.evaluation.extrinsic import (
    classifier_group_scores,
    generation_group_scores,
    group_variances,
    parse_label_map,
)
from conftest import run_cli

from biaskit.errors import BiaskitError, InputError


def _toy_predictions() -> pd.DataFrame:
    # gold label, prediction, groups mentioned (domain religion, model m1)
    rows = [
        # muslim: 4 gold negatives, 2 predicted toxic -> FPR 2/4; 2 gold positives, 1 missed -> FNR 1/2
        (0, 1, "muslim"),
        (0, 1, "muslim"),
        (0, 0, "muslim"),
        (0, 0, "muslim"),
        (1, 1, "muslim"),
        (1, 0, "muslim"),
        # hindu: 3 gold negatives, 0 predicted toxic -> FPR 0; 1 gold positive, caught -> FNR 0
        (0, 0, "hindu"),
        (0, 0, "hindu"),
        (0, 0, "hindu"),
        (1, 1, "hindu"),
        # one row mentioning both: a gold negative predicted toxic -> counts for each (muslim 3/5, hindu 1/4)
        (0, 1, "muslim;hindu"),
        # no group: 2 gold negatives, 0 predicted toxic; they count only in the overall rate
        (0, 0, None),
        (0, 0, ""),
    ]
    return pd.DataFrame([{"label": a, "pred": b, "group": g, "domain": "religion", "model": "m1"} for a, b, g in rows])


def test_classifier_fpr_and_gaps_by_hand():
    s = classifier_group_scores(_toy_predictions(), name="toxd", metrics=("fpr", "fpr_gap", "fnr", "fnr_gap"))
    got = {(r.group, r.metric): (r.score, r["count"]) for _, r in s.iterrows()}
    # overall: gold negatives 4 + 3 + 1 + 2 = 10, false positives 2 + 0 + 1 + 0 = 3 -> FPR 0.3
    #          gold positives 2 + 1 = 3, false negatives 1 -> FNR 1/3
    assert got[("muslim", "toxd:fpr")] == (pytest.approx(3 / 5), 5)
    assert got[("hindu", "toxd:fpr")] == (pytest.approx(1 / 4), 4)
    assert got[("muslim", "toxd:fpr_gap")][0] == pytest.approx(3 / 5 - 0.3)
    assert got[("hindu", "toxd:fpr_gap")][0] == pytest.approx(1 / 4 - 0.3)
    assert got[("muslim", "toxd:fnr")] == (pytest.approx(1 / 2), 2)
    assert got[("hindu", "toxd:fnr")] == (pytest.approx(0.0), 1)
    assert got[("hindu", "toxd:fnr_gap")][0] == pytest.approx(-1 / 3)
    assert set(s["model"]) == {"m1"} and set(s["domain"]) == {"religion"} and len(s) == 8
    v = group_variances(s)
    fpr = v[v["metric"] == "toxd:fpr"].iloc[0]
    # population variance of {0.6, 0.25}: mean 0.425, ((0.175)^2 + (0.175)^2) / 2
    assert fpr["variance"] == pytest.approx(0.175**2) and fpr["max_gap"] == pytest.approx(0.35)
    assert fpr["n_groups"] == 2


def test_classifier_labels_thresholds_and_errors():
    df = pd.DataFrame(
        {
            "gold": ["toxic", "non-toxic", "non-toxic", "non-toxic"],
            "p": [0.9, 0.7, 0.2, 0.5],
            "grp": ["a", "a", "a", "b"],
        }
    )
    s = classifier_group_scores(
        df, label_col="gold", pred_col="p", group_col="grp", threshold=0.5, model="m", domain="d", metrics=("fpr",)
    )
    # a: negatives 0.7 (>= .5, FP) and 0.2 -> 1/2; b: negative 0.5 (>= .5, FP) -> 1/1
    assert dict(zip(s["group"], s["score"], strict=False)) == {"a": 0.5, "b": 1.0}
    with pytest.raises(InputError, match="cannot read 'maybe' as a binary label"):
        classifier_group_scores(pd.DataFrame({"label": ["maybe"], "pred": [1], "group": ["a"]}), model="m", domain="d")
    with pytest.raises(InputError, match=r"missing column\(s\) model .*--model"):
        classifier_group_scores(pd.DataFrame({"label": [0], "pred": [1], "group": ["a"], "domain": ["d"]}))
    with pytest.raises(InputError, match="missing column"):
        classifier_group_scores(pd.DataFrame({"label": [0], "group": ["a"]}), model="m", domain="d")
    with pytest.raises(BiaskitError, match="unknown metric"):
        classifier_group_scores(_toy_predictions(), metrics=("auc",))
    # a group with no gold negative has no FPR: left out, with a note
    s = classifier_group_scores(
        pd.DataFrame({"label": [1, 0], "pred": [1, 1], "group": ["a", "b"]}), model="m", domain="d", metrics=("fpr",)
    )
    assert list(s["group"]) == ["b"] and "m / d / a: no gold negative" in s.attrs["notes"][0]


def test_generation_means_labels_and_shares_by_hand():
    df = pd.DataFrame(
        {
            "model": ["g1"] * 6,
            "domain": ["gender"] * 6,
            "group": ["woman", "woman", "woman", "man", "man", "man;woman"],
            "score": [0.2, 0.4, 0.9, -0.5, 0.1, 0.3],
            "label": ["positive", "neutral", "negative", "negative", "negative", "positive"],
        }
    )
    s = generation_group_scores(df, name="b-sent")
    # woman: (0.2 + 0.4 + 0.9 + 0.3) / 4 = 0.45; man: (-0.5 + 0.1 + 0.3) / 3 = -0.0333...
    got = dict(zip(s["group"], s["score"], strict=False))
    assert got == {"man": pytest.approx(-0.1 / 3), "woman": pytest.approx(0.45)}
    assert dict(zip(s["group"], s["count"], strict=False)) == {"man": 3, "woman": 4} and set(s["metric"]) == {
        "b-sent:mean"
    }
    lm = parse_label_map("negative=-1, neutral=0, positive=1")
    s = generation_group_scores(df, name="b-regard", label_map=lm)
    # woman: (1 + 0 - 1 + 1) / 4 = 0.25; man: (-1 - 1 + 1) / 3
    assert dict(zip(s["group"], s["score"], strict=False)) == {
        "man": pytest.approx(-1 / 3),
        "woman": pytest.approx(0.25),
    }
    s = generation_group_scores(df, name="b-regard", positive="negative")
    assert set(s["metric"]) == {"b-regard:share_negative"}
    assert dict(zip(s["group"], s["score"], strict=False)) == {
        "man": pytest.approx(2 / 3),
        "woman": pytest.approx(1 / 4),
    }
    v = group_variances(generation_group_scores(df, name="b-sent"))
    m = (0.45 + (-0.1 / 3)) / 2
    assert v.iloc[0]["variance"] == pytest.approx(((0.45 - m) ** 2 + (-0.1 / 3 - m) ** 2) / 2)
    with pytest.raises(InputError, match="not in the label map"):
        generation_group_scores(df, label_map={"positive": 1.0})
    with pytest.raises(InputError, match="is not a number"):
        generation_group_scores(df.assign(score=["x"] * 6))
    with pytest.raises(BiaskitError, match="bad --label-map"):
        parse_label_map("negative:-1")


def test_cli_extrinsic_then_correlate(tmp_path, capsys):
    """Raw outputs of three 'models' -> extrinsic CSV (appended per model) -> correlate with groups.csv
    result folders; the correlation is Pearson's r of the two variances across models, by hand."""
    fprs = {"m1": (0.5, 0.0), "m2": (0.5, 0.25), "m3": (0.75, 0.25)}  # (muslim, hindu) FPRs per model
    out = tmp_path / "ext.csv"
    for i, (m, (fm, fh)) in enumerate(fprs.items()):
        rows = [{"label": 0, "pred": int(k < fm * 4), "group": "muslim"} for k in range(4)] + [
            {"label": 0, "pred": int(k < fh * 4), "group": "hindu"} for k in range(4)
        ]
        p = tmp_path / f"{m}.csv"
        pd.DataFrame(rows).to_csv(p, index=False)
        args = [
            "evaluate",
            "extrinsic",
            "classifier",
            "--input",
            str(p),
            "--model",
            m,
            "--domain",
            "religion",
            "--name",
            "toxd",
            "--metrics",
            "fpr",
            "--out",
            str(out),
        ] + (["--append"] if i else [])
        code, stdout, err = run_cli(args, capsys)
        assert code == 0, err
        assert "wrote" in stdout and "toxd:fpr" in stdout
    ext = pd.read_csv(out)
    assert len(ext) == 6 and set(ext["model"]) == set(fprs)
    assert ext.set_index(["model", "group"])["score"].to_dict()[("m3", "muslim")] == 0.75
    # intrinsic side: a groups.csv per model with two religion groups
    intr = {"m1": (50, 50), "m2": (60, 40), "m3": (70, 40)}
    dirs = []
    for m, (a, b) in intr.items():
        d = tmp_path / f"res-{m}"
        d.mkdir()
        (d / "summary.json").write_text(json.dumps({"model": m, "benchmark": "stereoset"}))
        pd.DataFrame({"domain": "religion", "group": ["muslim", "hindu"], "metric": "ss", "score": [a, b]}).to_csv(
            d / "groups.csv", index=False
        )
        dirs += ["--results", str(d)]
    code, stdout, err = run_cli(
        ["evaluate", "correlate", *dirs, "--extrinsic", str(out), "--out", str(tmp_path / "corr"), "--no-plots"], capsys
    )
    assert code == 0, err
    corr = pd.read_csv(tmp_path / "corr" / "correlations.csv")
    [row] = corr.to_dict("records")
    # variances (ddof 0) of two groups = (difference / 2)^2: intrinsic 0, 100, 225; extrinsic .0625, .015625, .0625
    import numpy as np

    x, y = np.array([0.0, 100.0, 225.0]), np.array([0.0625, 0.015625, 0.0625])
    r = ((x - x.mean()) * (y - y.mean())).sum() / np.sqrt(((x - x.mean()) ** 2).sum() * ((y - y.mean()) ** 2).sum())
    assert row["pearson_r"] == pytest.approx(r) and row["n_models"] == 3


def test_cli_bad_input_is_one_line(tmp_path, capsys):
    p = tmp_path / "bad.csv"
    p.write_text("label,pred,group\n0,1,a\nmaybe,0,b\n", encoding="utf-8")
    code, _, err = run_cli(
        [
            "evaluate",
            "extrinsic",
            "classifier",
            "--input",
            str(p),
            "--model",
            "m",
            "--domain",
            "d",
            "--out",
            str(tmp_path / "o.csv"),
        ],
        capsys,
    )
    assert code == 2 and "Traceback" not in err and len(err.strip().splitlines()) == 1
    assert "bad.csv, row 2" in err and "Fix:" in err and not (tmp_path / "o.csv").exists()
