"""Several models in one `evaluate cats` / `evaluate seat`: the comparison table equals the single-model
runs, the lms-ss Spearman correlation equals scipy's on the table's numbers, the ENSEMBLE equals the
reference loop over the single runs' sentence scores."""

from __future__ import annotations

import json
import math

import pandas as pd
import pytest
from biaskit.evaluation.cat_metrics import evaluate
from biaskit.evaluation.cat_modes import ENSEMBLE_WEIGHTS
from biaskit.evaluation.compare import run_cats_multi, run_seat_multi
from biaskit.evaluation.options import CatsOptions, SeatOptions
from biaskit.evaluation.seat import run_seat
from biaskit.evaluation.stereoset import read_cats, run_cats, to_metric_items
from conftest import run_cli
from fixtures_models import build_tiny_bert, build_tiny_gpt2
from scipy.stats import spearmanr
from test_cat_modes import _reference_ensemble


@pytest.fixture(scope="module")
def three_gpt2(tmp_path_factory):
    return [str(build_tiny_gpt2(tmp_path_factory.mktemp(f"g{k}"), seed=k)) for k in range(3)]


@pytest.fixture(scope="module")
def three_bert(tmp_path_factory):
    return [str(build_tiny_bert(tmp_path_factory.mktemp(f"b{k}"), seed=k)) for k in range(3)]


def test_cats_multi_table_equals_single_runs_and_spearman_equals_scipy(three_gpt2, stereoset_jsonl, tmp_path):
    res = run_cats_multi(
        CatsOptions(
            data=stereoset_jsonl,
            models=three_gpt2,
            out=tmp_path / "cmp",
            scorer="clm",
            limit=12,
            ensemble=True,
            protocol="none",
            batch_size=8,
        )
    )
    table = pd.read_csv(tmp_path / "cmp" / "comparison.csv")
    names = res.names
    assert len(set(names)) == 3 and set(table["model"]) == set(names) | {"ENSEMBLE"}
    for name, m in zip(names, three_gpt2, strict=False):
        single = run_cats(
            CatsOptions(
                data=stereoset_jsonl,
                models=[m],
                out=tmp_path / f"single-{name}",
                scorer="clm",
                limit=12,
                batch_size=8,
                protocol="none",
            )
        )
        rows = table[table["model"] == name].set_index(["split", "domain"])
        assert [sp.split for sp in single.splits] == ["intrasentence", "intersentence"]
        for sp in single.splits:  # the typed result of the single run is the table's row
            for dom, r in [("all", sp.overall), *sp.by_domain.items()]:
                got = rows.loc[(sp.split, dom)]
                assert (got["lms"], got["ss"], got["icat"], got["count"]) == pytest.approx(
                    (r.lms, r.ss, r.icat, r.count), abs=1e-9
                )
        got = rows.loc[("overall", "all")]
        o = single.overall
        assert (got["lms"], got["ss"], got["icat"]) == pytest.approx((o.lms, o.ss, o.icat), abs=1e-9)
        assert (
            single.folder == tmp_path / f"single-{name}"
            and res.models[names.index(name)].folder == tmp_path / "cmp" / name
        )
        assert (tmp_path / "cmp" / name / "summary.json").exists()
    corr = pd.read_csv(tmp_path / "cmp" / "correlations.csv").set_index(["split", "domain"])
    models_only = table[table["model"] != "ENSEMBLE"]
    checked = 0
    for (split, dom), g in models_only.groupby(["split", "domain"]):
        rho = corr.loc[(split, dom), "spearman_rho"]
        if g["lms"].nunique() > 1 and g["ss"].nunique() > 1:
            exp = spearmanr(g["lms"], g["ss"]).statistic
            assert rho == pytest.approx(exp, abs=1e-12)
            checked += 1
        else:
            assert math.isnan(rho)
    assert checked >= 1
    assert corr.loc[("overall", "all"), "n_models"] == 3
    md = (tmp_path / "cmp" / "comparison.md").read_text()
    assert "Spearman" in md and all(n in md for n in names)


def test_ensemble_equals_reference_loop_over_single_runs(three_gpt2, stereoset_jsonl, tmp_path):
    res = run_cats_multi(
        CatsOptions(
            data=stereoset_jsonl,
            models=three_gpt2,
            out=tmp_path / "cmp",
            scorer="clm",
            limit=12,
            ensemble=True,
            protocol="none",
        )
    )
    cats = read_cats(stereoset_jsonl, limit=12)
    runs = []
    for name in res.names:
        rows = [json.loads(x) for x in (tmp_path / "cmp" / name / "scores.jsonl").read_text().splitlines()]
        runs.append(("clm", {r["id"]: r["score"] for r in rows}))
    exp = _reference_ensemble(cats, runs, ENSEMBLE_WEIGHTS)
    ens_rows = [json.loads(x) for x in (tmp_path / "cmp" / "ENSEMBLE" / "scores.jsonl").read_text().splitlines()]
    assert {r["id"]: r["score"] for r in ens_rows} == pytest.approx(exp, rel=1e-12)
    items, _ = to_metric_items(cats, exp)
    top = evaluate(items, "reference")
    s = json.loads((tmp_path / "cmp" / "ENSEMBLE" / "summary.json").read_text())
    assert (s["lms"], s["ss"], s["icat"]) == pytest.approx((top["lms"], top["ss"], top["icat"]), abs=1e-9)
    assert s["members"] == res.names


def test_cli_cats_several_models(three_gpt2, stereoset_jsonl, tmp_path, capsys):
    args = [
        "evaluate",
        "cats",
        "--data",
        str(stereoset_jsonl),
        "--scorer",
        "clm",
        "--limit",
        "6",
        "--out",
        str(tmp_path / "o"),
        "-q",
        "--protocol",
        "none",
    ]
    for m in three_gpt2:
        args += ["--model", m]
    code, out, err = run_cli(args + ["--ensemble"], capsys)
    assert code == 0, err
    assert "Spearman rho (LMS vs SS, overall, 3 models)" in out
    for f in ("comparison.csv", "comparison.md", "correlations.csv", "comparison.json"):
        assert (tmp_path / "o" / f).stat().st_size > 0
    code, _, err = run_cli(
        [
            "evaluate",
            "cats",
            "--data",
            str(stereoset_jsonl),
            "--model",
            three_gpt2[0],
            "--ensemble",
            "--out",
            str(tmp_path / "e"),
        ],
        capsys,
    )
    assert code == 2 and len(err.strip().splitlines()) == 1 and "Traceback" not in err and "--ensemble" in err
    assert not (tmp_path / "e").exists()


def test_seat_multi_table_equals_single_runs(three_bert, seat_dir, tmp_path, capsys):
    test = str(seat_dir / "weat6.jsonl")
    res = run_seat_multi(
        SeatOptions(tests=[test], models=three_bert, out=tmp_path / "s", bleach="never", device="cpu", n_samples=500)
    )
    table = pd.read_csv(tmp_path / "s" / "comparison.csv")
    assert len(table) == 3
    for name, m in zip(res.names, three_bert, strict=False):
        [r] = run_seat(
            SeatOptions(
                tests=[test], models=[m], out=tmp_path / f"single-{name}", bleach="never", device="cpu", n_samples=500
            )
        ).summary["tests"]
        got = table[table["model"] == name].iloc[0]
        assert (got["effect_size"], got["p_value"]) == pytest.approx((r["effect_size"], r["p_value"]), abs=1e-12)
    assert table["effect_size"].nunique() == 3  # three different random encoders
    args = [
        "evaluate",
        "seat",
        "--test",
        test,
        "--out",
        str(tmp_path / "c"),
        "--bleach",
        "never",
        "--n-samples",
        "500",
        "--device",
        "cpu",
    ]
    for m in three_bert:
        args += ["--model", m]
    code, out, err = run_cli(args, capsys)
    assert code == 0, err
    assert pd.read_csv(tmp_path / "c" / "comparison.csv")["effect_size"].tolist() == pytest.approx(
        table["effect_size"].tolist(), abs=1e-12
    )
    assert "weat6" in (tmp_path / "c" / "comparison.md").read_text()


def test_the_python_api_refuses_what_the_command_refuses(tmp_path):
    """run_cats_multi checks the options as `evaluate cats` does (one NSP head for several models, an
    ensemble of one), before any model is loaded: the models named here do not exist."""
    from biaskit.evaluation.compare import run_cats_multi
    from biaskit.evaluation.options import CatsOptions

    from biaskit.errors import BiaskitError

    base = {"data": tmp_path / "cats.jsonl", "out": tmp_path / "o"}
    with pytest.raises(BiaskitError, match="an NSP head belongs to one model"):
        run_cats_multi(CatsOptions(**base, models=["a", "b"], nsp_head=tmp_path / "head"))
    with pytest.raises(BiaskitError, match="combines several models"):
        run_cats_multi(CatsOptions(**base, models=["a"], ensemble=True))
    assert not (tmp_path / "o").exists()
