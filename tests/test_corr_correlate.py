"""Intrinsic vs extrinsic correlation on synthetic result folders, checked against an independent
numpy computation (variances, Pearson, Spearman by ranks, t-distribution p-values)."""

from __future__ import annotations

import json
import math
from pathlib import Path

import numpy as np
import pandas as pd
import pytest
from biaskit.evaluation.correlate import correlate, read_result_folder, write_outputs
from biaskit.evaluation.options import CorrelateOptions
from scipy import stats

from biaskit.errors import InputError

RNG = np.random.default_rng(42)
MODELS = [f"m{i}" for i in range(6)]
GROUPS = {"gender": ["female", "male", "nonbinary"], "religion": ["hindu", "muslim", "christian", "sikh"]}


def _correlate(dirs, extrinsic, **options):
    """:func:`correlate` of result folders and an extrinsic file: (variances, correlations, info)."""
    res = correlate(CorrelateOptions(results=dirs, extrinsic=extrinsic, out=Path("not-written"), **options))
    return res.variances, res.correlations, res.info


def _folder(tmp_path, name, rows, model_path=None):
    d = tmp_path / "results" / name
    d.mkdir(parents=True)
    (d / "summary.json").write_text(json.dumps({"model": model_path or f"/models/{name}", "benchmark": "stereoset"}))
    pd.DataFrame(rows, columns=["domain", "group", "metric", "score", "count"]).to_csv(d / "groups.csv", index=False)
    return d


@pytest.fixture
def synthetic(tmp_path):
    """6 models; intrinsic group scores spread grows with the model index, extrinsic tracks it + noise."""
    intr, ext, dirs = {}, [], []
    for i, m in enumerate(MODELS):
        rows = []
        for dom, groups in GROUPS.items():
            for k, g in enumerate(groups):
                offset = k - (len(groups) - 1) / 2  # a fixed pattern over groups, scaled by the model index
                rows.append((dom, g, "ss", 50 + (i + 1) * 3 * offset + RNG.normal(0, 0.5), 10))
                rows.append((dom, g, "lms", 90 + RNG.normal(0, 1), 10))
                ext.append(
                    {
                        "model": m,
                        "domain": dom,
                        "group": g,
                        "metric": "tpr",
                        "score": 0.8 + (i + 1) * 0.01 * offset + RNG.normal(0, 0.002),
                    }
                )
        intr[m] = rows
        dirs.append(_folder(tmp_path, m, rows))
    csv = tmp_path / "extrinsic.csv"
    pd.DataFrame(ext).to_csv(csv, index=False)
    return dirs, csv, intr, pd.DataFrame(ext)


def _ranks(v):
    return np.argsort(np.argsort(v)).astype(float)  # no ties in continuous synthetic data


def _t_p(r, n):
    if abs(r) >= 1:
        return 0.0
    t = abs(r) * math.sqrt((n - 2) / (1 - r * r))
    return 2 * stats.t.sf(t, n - 2)


def test_variances_and_correlations_match_numpy(synthetic):
    dirs, csv, intr, ext = synthetic
    variances, corrs, info = _correlate(dirs, csv)
    assert info["models"] == MODELS and info["domains"] == ["gender", "religion"]
    assert len(corrs) == 2 * 2  # (ss, lms) x (tpr) x 2 domains
    for dom in GROUPS:
        for metric in ("ss", "lms"):
            xs = np.array([np.var([r[3] for r in intr[m] if r[0] == dom and r[2] == metric]) for m in MODELS])
            ys = np.array([np.var(ext[(ext.model == m) & (ext.domain == dom)]["score"]) for m in MODELS])
            row = corrs[(corrs.domain == dom) & (corrs.intrinsic == f"stereoset:{metric}")].iloc[0]
            assert row["extrinsic"] == "tpr" and row["n_models"] == 6
            r = np.corrcoef(xs, ys)[0, 1]
            rho = np.corrcoef(_ranks(xs), _ranks(ys))[0, 1]
            assert row["pearson_r"] == pytest.approx(r, abs=1e-10)
            assert row["spearman_rho"] == pytest.approx(rho, abs=1e-10)
            assert row["pearson_p"] == pytest.approx(_t_p(r, 6), rel=1e-6)
            assert row["spearman_p"] == pytest.approx(_t_p(rho, 6), rel=1e-6)
            v = variances[(variances.domain == dom) & (variances.intrinsic == f"stereoset:{metric}")]
            assert v.sort_values("model")["var_intrinsic"].to_numpy() == pytest.approx(xs)
    # the synthetic spread grows with the model index on both sides: strongly positive for ss
    ss = corrs[corrs.intrinsic == "stereoset:ss"]
    assert (ss["spearman_rho"] > 0.9).all() and (ss["pearson_r"] > 0.9).all()
    # ddof=1: sample variance
    v1, _, _ = _correlate(dirs, csv, ddof=1)
    m0 = [r[3] for r in intr["m0"] if r[0] == "gender" and r[2] == "ss"]
    got = v1[(v1.model == "m0") & (v1.domain == "gender") & (v1.intrinsic == "stereoset:ss")]["var_intrinsic"].iloc[0]
    assert got == pytest.approx(np.var(m0, ddof=1))


def test_aligned_groups_and_group_map(tmp_path):
    # intrinsic terms (StereoSet-like) mapped to shared groups; extrinsic has an extra group
    dirs, ext = [], []
    for i, m in enumerate(MODELS[:4]):
        rows = [
            ("gender", "mother", "ss", 60.0 + i, 5),
            ("gender", "schoolgirl", "ss", 70.0 + i, 5),
            ("gender", "father", "ss", 40.0, 5),
            ("gender", "gentleman", "ss", 30.0 - i, 5),
        ]
        dirs.append(_folder(tmp_path, m, rows))
        ext += [
            {"model": m, "domain": "gender", "group": "Female", "metric": "f1", "score": 0.9},
            {"model": m, "domain": "gender", "group": "Male", "metric": "f1", "score": 0.9 - 0.1 * i},
            {"model": m, "domain": "gender", "group": "Other", "metric": "f1", "score": 0.1 * i * i},
        ]
    csv = tmp_path / "ext.csv"
    pd.DataFrame(ext).to_csv(csv, index=False)
    gmap = tmp_path / "map.csv"
    gmap.write_text(
        "domain,term,group\ngender,mother,female\ngender,schoolgirl,female\ngender,father,male\ngender,gentleman,male\n"
    )
    v, c, _ = _correlate(dirs, csv, groups="aligned", group_map=gmap)
    # model i: female = mean(60+i, 70+i) = 65+i, male = mean(40, 30-i) = 35-i/2 -> var = ((30+1.5i)/2)^2
    for i, m in enumerate(MODELS[:4]):
        row = v[v.model == m].iloc[0]
        assert row["n_groups_intrinsic"] == 2 and row["n_groups_extrinsic"] == 2  # "Other" dropped
        assert row["var_intrinsic"] == pytest.approx(((30 + 1.5 * i) / 2) ** 2)
        assert row["var_extrinsic"] == pytest.approx((0.1 * i / 2) ** 2)
    xs = [((30 + 1.5 * i) / 2) ** 2 for i in range(4)]
    ys = [(0.1 * i / 2) ** 2 for i in range(4)]
    assert c.iloc[0]["pearson_r"] == pytest.approx(np.corrcoef(xs, ys)[0, 1])
    assert c.iloc[0]["spearman_rho"] == pytest.approx(1.0)
    # without alignment every group counts (4 intrinsic terms, 3 extrinsic groups)
    v_all, _, _ = _correlate(dirs, csv)
    assert set(v_all["n_groups_intrinsic"]) == {4} and set(v_all["n_groups_extrinsic"]) == {3}


def test_pairs_folder_without_groups_uses_bias_types(tmp_path):
    d = tmp_path / "pairs-run"
    d.mkdir()
    (d / "summary.json").write_text(json.dumps({"model": "gemma3-270m", "metric_score": 55.0}))
    pd.DataFrame(
        {
            "pair_id": list("abcdef"),
            "bias_type": ["age", "age", "age", "caste", "caste", "gender"],
            "win": [True, False, True, True, True, False],
            "tie": [False] * 6,
        }
    ).to_csv(d / "pairs.csv", index=False)
    f = read_result_folder(d)
    assert f.group_source == "bias_type" and f.benchmark == "pairs"
    g = f.groups.set_index("group")["score"]
    assert g["age"] == pytest.approx(200 / 3) and g["caste"] == 100.0 and g["gender"] == 0.0
    assert set(f.groups["domain"]) == {"all"} and set(f.groups["metric"]) == {"pairs:metric_score"}


def test_errors(synthetic, tmp_path):
    dirs, csv, _, ext = synthetic
    other = tmp_path / "other.csv"
    ext.assign(model=ext["model"] + "-x").to_csv(other, index=False)
    with pytest.raises(InputError, match=r"model '/models/m0'.*no rows in the extrinsic file"):
        _correlate(dirs, other)
    nocol = tmp_path / "nocol.csv"
    ext.drop(columns=["metric"]).to_csv(nocol, index=False)
    with pytest.raises(InputError, match=r"nocol.csv: missing column\(s\) metric"):
        _correlate(dirs, nocol)
    badnum = tmp_path / "badnum.csv"
    e2 = ext.astype({"score": object})
    e2.loc[3, "score"] = "high"
    e2.to_csv(badnum, index=False)
    with pytest.raises(InputError, match=r"badnum.csv, row 4, column 'score'"):
        _correlate(dirs, badnum)
    with pytest.raises(InputError, match="no summary.json"):
        _correlate([tmp_path], csv)
    listed = tmp_path / "listed"  # valid JSON, but not the object a result folder's summary is
    listed.mkdir()
    (listed / "summary.json").write_text("[]")
    with pytest.raises(InputError, match=r"listed/summary.json: summary.json is a JSON list, not the object"):
        _correlate([listed], csv)
    # fewer than 3 models: no correlation, a note
    _, c, _ = _correlate(dirs[:2], csv)
    assert c["pearson_r"].isna().all() and (c["note"] != "").all()


def test_outputs_and_cli(synthetic, tmp_path, capsys):
    dirs, csv, _, _ = synthetic
    out = tmp_path / "corr"
    v, c, info = _correlate(dirs, csv)
    s = write_outputs(v, c, info, out)
    assert len(s["plots"]) == 4 and all((out / p).stat().st_size > 1000 for p in s["plots"])
    for f in ("variances.csv", "correlations.csv", "summary.json", "report.md"):
        assert (out / f).exists()
    from biaskit.cli import main

    args = ["evaluate", "correlate", "--extrinsic", str(csv), "--out", str(tmp_path / "cli"), "--no-plots"]
    for d in dirs:
        args += ["--results", str(d)]
    try:
        main(args)
        code = 0
    except SystemExit as exc:
        code = exc.code
    cap = capsys.readouterr()
    assert code == 0, cap.err
    assert "Pearson" in cap.out
    back = pd.read_csv(tmp_path / "cli" / "correlations.csv")
    assert back["pearson_r"].to_numpy() == pytest.approx(c["pearson_r"].to_numpy())
