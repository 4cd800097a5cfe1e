"""`evaluate pairs` end to end with the tiny real models (H1's fixtures), the real CLI, real readers."""

from __future__ import annotations

import json
import os
import subprocess
import sys
from pathlib import Path

import pandas as pd
import pytest
from biaskit.evaluation.options import PairsOptions
from biaskit.evaluation.pairs import PAIRS_COLUMNS, run_pairs
from conftest import run_cli

from biaskit.errors import InputError

REPO = Path(__file__).resolve().parents[1]
DEMO = REPO / "data" / "demo" / "demo_pairs.jsonl"


def _recount(df: pd.DataFrame) -> dict:
    """Metric / stereo / antistereo recomputed from pairs.csv the plain way (rounded to 3, ties excluded
    from the direction denominators only)."""
    more, less = df["score_more"].map(lambda v: round(v, 3)), df["score_less"].map(lambda v: round(v, 3))
    win, tie = more > less, more == less
    st, an = df["direction"] == "stereo", df["direction"] == "antistereo"

    def pct(a, b):
        return 100.0 * a / b if b else None

    return {
        "metric_score": pct(win.sum(), len(df)),
        "stereo_score": pct((win & st).sum(), (st & ~tie).sum()),
        "antistereo_score": pct((win & an).sum(), (an & ~tie).sum()),
        "n_ties": int(tie.sum()),
    }


def test_demo_clm_end_to_end(tiny_gpt2, tmp_path):
    out = tmp_path / "out"
    res = run_pairs(PairsOptions(data=DEMO, models=[tiny_gpt2], scorer="clm", out=out, limit=5, seed=3), progress=False)
    for f in ("summary.json", "pairs.csv", "report.md", "ds_kde.png"):
        assert (out / f).stat().st_size > 0, f
    assert not list(out.glob(".*.tmp")), "temporary files left behind"
    s = json.loads((out / "summary.json").read_text(encoding="utf-8"))
    for k in (
        "metric_score",
        "stereo_score",
        "antistereo_score",
        "n_pairs",
        "n_ties",
        "by_bias_type",
        "subsample",
        "model",
        "scorer",
        "unit",
        "method",
        "by_lang",
        "data",
        "biaskit_version",
        "timings",
    ):
        assert k in s, k
    # the model folder is outside the folder the run started in: summary.json names it by its last component,
    # never by a path of this machine (docs/release.md, Privacy); the result in memory keeps the path
    assert (
        s["scorer"] == "clm" and s["model"] == Path(tiny_gpt2).name and res.models[0].summary["model"] == str(tiny_gpt2)
    )
    assert str(tmp_path) not in (out / "summary.json").read_text(encoding="utf-8") + (out / "report.md").read_text(
        encoding="utf-8"
    )
    assert s["langs"] == ["en", "hi"] and s["pooled_over_langs"] is True
    assert s["n_pairs"] == 10 and set(s["by_lang"]) == {"en", "hi"} and s["by_lang"]["hi"]["n_pairs"] == 5
    assert s["subsample"]["runs"] == 5 and s["subsample"]["fraction"] == 0.8 and s["subsample"]["seed"] == 3
    assert s["subsample"]["size"] == 8  # round(0.8 * 10)
    import hashlib

    assert s["data"]["sha256"] == hashlib.sha256(DEMO.read_bytes()).hexdigest()

    df = pd.read_csv(out / "pairs.csv")
    assert list(df.columns) == PAIRS_COLUMNS and len(df) == 10
    assert (df["ds"] - (df["score_more"] - df["score_less"])).abs().max() < 1e-9
    # the same source pair appears in both languages
    assert set(df.loc[df["lang"] == "en", "source_id"]) == set(df.loc[df["lang"] == "hi", "source_id"])
    for lg in ("en", "hi"):
        want = _recount(df[df["lang"] == lg])
        got = s["by_lang"][lg]
        for k, v in want.items():
            assert got[k] == pytest.approx(v), (lg, k)
    assert s["metric_score"] == pytest.approx(_recount(df)["metric_score"])

    # the scores are the model's: score_more is the first sentence's log-probability (single-sentence path)
    from biaskit.evaluation.scorers import load_scorer

    sc = load_scorer("clm", tiny_gpt2, progress=False, cache=False)
    first = df.iloc[:3]
    singles = sc.score_texts(list(first["sent_more"]) + list(first["sent_less"]))
    assert [x[0] for x in singles[:3]] == pytest.approx(list(first["score_more"]), abs=1e-4)
    assert [x[0] for x in singles[3:]] == pytest.approx(list(first["score_less"]), abs=1e-4)

    report = (out / "report.md").read_text(encoding="utf-8")
    assert "| en |" in report and "| hi |" in report and "ds_kde.png" in report
    assert res.models[0].summary["timings"]["forward_passes"] > 0


def test_rerun_is_served_from_cache(tiny_gpt2, tmp_path):
    a = run_pairs(
        PairsOptions(data=DEMO, models=[tiny_gpt2], scorer="clm", out=tmp_path / "a", limit=3), progress=False
    )
    b = run_pairs(
        PairsOptions(data=DEMO, models=[tiny_gpt2], scorer="clm", out=tmp_path / "b", limit=3), progress=False
    )
    assert a.models[0].summary["timings"]["forward_passes"] > 0
    assert b.models[0].summary["timings"]["forward_passes"] == 0
    pa, pb = pd.read_csv(tmp_path / "a" / "pairs.csv"), pd.read_csv(tmp_path / "b" / "pairs.csv")
    pd.testing.assert_frame_equal(pa, pb)


def test_lang_filter_and_errors(tiny_gpt2, tmp_path):
    res = run_pairs(
        PairsOptions(data=DEMO, models=[tiny_gpt2], scorer="clm", lang="hi", out=tmp_path / "hi", limit=4),
        progress=False,
    )
    s = res.models[0].summary
    assert s["langs"] == ["hi"] and s["lang"] == "hi" and not s["pooled_over_langs"] and s["n_pairs"] == 4
    with pytest.raises(InputError, match=r"no pairs in language 'fr' \(found: en, hi\)"):
        run_pairs(
            PairsOptions(data=DEMO, models=[tiny_gpt2], scorer="clm", lang="fr", out=tmp_path / "fr"), progress=False
        )
    assert not (tmp_path / "fr").exists()


def test_two_models_on_crows_give_a_comparison(tiny_bert, tiny_xlmr, crows_csv, tmp_path):
    out = tmp_path / "cmp"
    res = run_pairs(
        PairsOptions(data=crows_csv, models=[tiny_bert, tiny_xlmr], scorer="mlm", out=out, limit=6), progress=False
    )
    dirs = [m.folder for m in res.models]
    assert len(dirs) == 2 and dirs[0] != dirs[1] and all((d / "summary.json").exists() for d in dirs)
    cmp = pd.read_csv(out / "comparison.csv")
    assert len(cmp) == 2 and set(cmp["lang"]) == {"en"}
    for d, row in zip(dirs, cmp.itertuples(), strict=False):
        s = json.loads((d / "summary.json").read_text())
        assert row.metric_score == pytest.approx(s["metric_score"])
        assert row.n_pairs == 6 and s["data"]["format"] == "crows"
    assert (out / "comparison.md").read_text().count("| en |") >= 2
    assert (out / "ds_kde_comparison.png").read_bytes()[:4] == b"\x89PNG"


def test_indibias_both_views_word_unit(tiny_xlmr, indibias_csv, tmp_path):
    # the sample has one row whose two Hindi sentences are identical: the whole file is validated even
    # with --limit, so it must be skipped explicitly
    with pytest.raises(InputError, match="row 485: identical pair"):
        run_pairs(
            PairsOptions(data=indibias_csv, models=[tiny_xlmr], scorer="mlm", out=tmp_path / "x", limit=4),
            progress=False,
        )
    res = run_pairs(
        PairsOptions(
            data=indibias_csv,
            models=[tiny_xlmr],
            scorer="mlm",
            unit="word",
            out=tmp_path / "ib",
            limit=4,
            skip_invalid=True,
        ),
        progress=False,
    )
    s = res.models[0].summary
    assert s["data"]["n_skipped"] == 1 and "row 485" in s["data"]["skipped"][0]
    assert s["unit"] == "word" and s["data"]["format"] == "indibias"
    assert s["by_lang"]["en"]["n_pairs"] == 4 and s["by_lang"]["hi"]["n_pairs"] == 4
    df = pd.read_csv(tmp_path / "ib" / "pairs.csv")
    # the en and hi rows are views of the same 4 IndiBias rows; bias types are normalised lower-case
    assert sorted(df.loc[df.lang == "en", "source_id"]) == sorted(df.loc[df.lang == "hi", "source_id"])
    assert df["bias_type"].str.islower().all()


# ----------------------------------------------------------------------------------------------- CLI


def test_cli_runs_and_prints_table(tiny_gpt2, tmp_path, capsys):
    code, out, err = run_cli(
        [
            "evaluate",
            "pairs",
            "--data",
            str(DEMO),
            "--model",
            str(tiny_gpt2),
            "--scorer",
            "clm",
            "--out",
            str(tmp_path / "o"),
            "--limit",
            "2",
            "--quiet",
            "--runs",
            "3",
        ],
        capsys,
    )
    assert code == 0, err
    assert "metric" in out and "hi" in out and "summary.json" in out
    s = json.loads((tmp_path / "o" / "summary.json").read_text())
    assert s["subsample"]["runs"] == 3 and s["command"].startswith("biaskit evaluate pairs --data")


def test_cli_bad_input_is_one_line_exit_2(tiny_gpt2, tmp_path, capsys):
    bad = tmp_path / "bad.csv"
    bad.write_text(
        "sent_more,sent_less,stereo_antistereo,bias_type\n"
        "Women are bad drivers.,Men are bad drivers.,stereo,gender\n"
        "Old people are slow.,Old people are slow.,stereo,age\n",
        encoding="utf-8",
    )
    code, out, err = run_cli(
        [
            "evaluate",
            "pairs",
            "--data",
            str(bad),
            "--model",
            str(tiny_gpt2),
            "--scorer",
            "clm",
            "--out",
            str(tmp_path / "o"),
        ],
        capsys,
    )
    assert code == 2
    assert "Traceback" not in err and len(err.strip().splitlines()) == 1
    assert "bad.csv, row 2" in err and "identical pair" in err and "Fix:" in err
    assert not (tmp_path / "o").exists()
    # --skip-invalid: scored, and the skipped row is reported
    code, out, err = run_cli(
        [
            "evaluate",
            "pairs",
            "--data",
            str(bad),
            "--model",
            str(tiny_gpt2),
            "--scorer",
            "clm",
            "--out",
            str(tmp_path / "o"),
            "--skip-invalid",
            "-q",
        ],
        capsys,
    )
    assert code == 0, err
    assert "skipped 1 invalid row" in out
    s = json.loads((tmp_path / "o" / "summary.json").read_text())
    assert s["n_pairs"] == 1 and s["data"]["n_skipped"] == 1 and "row 2" in s["data"]["skipped"][0]


def test_cli_missing_column_and_unknown_model(tmp_path, capsys, tiny_gpt2):
    bad = tmp_path / "nocol.csv"
    bad.write_text("sent_more,sent_less,bias_type\na b,c d,gender\n", encoding="utf-8")
    code, _, err = run_cli(
        [
            "evaluate",
            "pairs",
            "--data",
            str(bad),
            "--format",
            "crows",
            "--model",
            str(tiny_gpt2),
            "--out",
            str(tmp_path / "o"),
        ],
        capsys,
    )
    assert code == 2 and "missing column(s) stereo_antistereo" in err and "Traceback" not in err
    code, _, err = run_cli(
        [
            "evaluate",
            "pairs",
            "--data",
            str(DEMO),
            "--model",
            str(tmp_path / "no-such-model"),
            "--scorer",
            "clm",
            "--out",
            str(tmp_path / "o"),
        ],
        capsys,
    )
    assert code == 2 and "not found" in err and "Traceback" not in err
    code, _, err = run_cli(
        [
            "evaluate",
            "pairs",
            "--data",
            str(DEMO),
            "--model",
            str(tiny_gpt2),
            "--scorer",
            "mlm",
            "--out",
            str(tmp_path / "o"),
        ],
        capsys,
    )
    assert code == 2 and "masked LM" in err and "--scorer" in err and "Traceback" not in err


def test_console_script_subprocess(tiny_gpt2, tmp_path):
    exe = Path(sys.executable).with_name("biaskit")
    env = {**os.environ, "HF_HUB_OFFLINE": "1"}
    bad = tmp_path / "enc.csv"
    bad.write_bytes(
        "sent_more,sent_less,stereo_antistereo,bias_type\nCaf\xe9 owners,x y,stereo,age\n".encode("latin-1")
    )
    p = subprocess.run(
        [
            str(exe),
            "evaluate",
            "pairs",
            "--data",
            str(bad),
            "--model",
            str(tiny_gpt2),
            "--scorer",
            "clm",
            "--out",
            str(tmp_path / "o"),
        ],
        capture_output=True,
        text=True,
        env=env,
        timeout=300,
    )
    assert p.returncode == 2
    assert "enc.csv" in p.stderr and "UTF-8" in p.stderr and "Traceback" not in p.stderr
