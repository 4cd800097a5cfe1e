"""A release in the field's own tools (docs/release.md, "In the field's tools"; docs/python-api.md):

- the documented commands run as written (the Hub build, `verify --hub-ready`, mlcroissant's validator
  and loader, `release export --lm-eval`, `lm_eval` itself, `evaluate pairs --scorer clm`), and lm-eval's
  per-sentence log-likelihoods and metrics equal biaskit's within the documented tolerance;
- lm-eval's tie rule in the exported utils.py is biaskit's (a hand-made near tie), not lm-eval's own;
- mlcroissant validates and loads croissant.json of every kind of release (pairs in two languages, CATs,
  tuples, the demo release) and the records equal the Parquet rows; the RAI fields carry the card;
- the card validates offline as a Hub DatasetCard; `--hub-ready` refuses what the Hub rejects;
- the notebook of docs/python-api.md runs under nbclient.
"""

from __future__ import annotations

import json
import math
import os
import re
import shlex
import shutil
import subprocess
import sys
from pathlib import Path

import pytest
from conftest import run_cli

REPO = Path(__file__).resolve().parents[1]
BIN = Path(sys.executable).parent
TOL = 1e-4  # nats per sentence: lm-eval vs biaskit clm (measured max 3.4e-5 on the tiny GPT-2, float32)


def _env(**extra) -> dict:
    env = {
        **os.environ,
        "HF_HUB_OFFLINE": "1",
        "TRANSFORMERS_OFFLINE": "1",
        "HF_DATASETS_OFFLINE": "1",
        "PATH": f"{BIN}{os.pathsep}{os.environ.get('PATH', '')}",
    }
    env.update(extra)
    return env


def _build(tmp: Path, name: str = "rel", *extra: str, records=("data/demo/demo_pairs.jsonl",)) -> Path:
    from biaskit.cli import main

    out = tmp / name
    argv = [
        "release",
        "build",
        "--name",
        "biaskit-demo",
        "--version",
        "0.1.0",
        "--date",
        "2025-01-01",
        "--no-plots",
        "--out",
        str(out),
        *extra,
    ]
    for r in records:
        argv += ["--records", str(REPO / r) if not Path(r).is_absolute() else r]
    try:
        main(argv)
    except SystemExit as exc:
        assert not exc.code, exc.code
    return out


# ------------------------------------------------------------------------------- the documented commands
def _section_commands(title: str) -> list[str]:
    """The shell lines (continuations joined) of the ```bash blocks of one subsection of docs/release.md."""
    text = (REPO / "docs" / "release.md").read_text(encoding="utf-8")
    body = text.split(f"### {title}\n", 1)[1].split("\n## ", 1)[0].split("\n### ", 1)[0]
    lines = []
    for block in re.findall(r"```bash\n(.*?)\n```", body, re.S):
        buf = ""
        for line in block.splitlines():
            if line.rstrip().endswith("\\"):
                buf += line.rstrip()[:-1] + " "
                continue
            lines.append(buf + line)
            buf = ""
    return lines


_HF = (
    "import sys; from importlib.metadata import entry_points; ep = [e for e in entry_points(group='console_scripts', "
    "name='hf') if e.dist.name == 'huggingface_hub'][0]; sys.argv[0] = 'hf'; sys.exit(ep.load()())"
)


def _samples(folder: Path) -> dict[str, dict]:
    out = {}
    for f in folder.rglob("samples_*.jsonl"):
        for line in f.read_text(encoding="utf-8").splitlines():
            s = json.loads(line)
            out[s["doc"]["pair_id"]] = s
    return out


@pytest.mark.slow
def test_documented_commands_run_and_lm_eval_equals_biaskit_clm(tmp_path, tiny_gpt2):
    """docs/release.md's Hub, Croissant and lm-evaluation-harness commands, run as written (MODEL: the
    tiny GPT-2; the upload: `hf upload --help`), then lm-eval's figures against biaskit's."""
    assert shutil.which("lm_eval", path=str(BIN)), "lm-eval is not installed (pip install -e '.[interop]')"
    (tmp_path / "data").mkdir()
    shutil.copytree(REPO / "data" / "demo", tmp_path / "data" / "demo")
    lines = (
        _section_commands("The Hugging Face Hub")
        + _section_commands("Croissant")
        + _section_commands("lm-evaluation-harness")
    )
    assert any(ln.startswith("hf upload ") for ln in lines) and any(ln.startswith("MODEL=") for ln in lines)
    script = ["set -euo pipefail"]
    for ln in lines:
        if ln.startswith("MODEL="):
            ln = f"MODEL={shlex.quote(str(tiny_gpt2))}"
        elif ln.startswith("hf upload "):  # the `hf` entry point of the installed huggingface_hub, offline
            ln = f"NO_COLOR=1 python -c {shlex.quote(_HF)} upload --help | grep -q -- --repo-type"
        script.append(ln)
    r = subprocess.run(
        ["bash", "-c", "\n".join(script)], cwd=tmp_path, env=_env(), capture_output=True, text=True, timeout=900
    )
    assert r.returncode == 0, r.stdout[-3000:] + r.stderr[-3000:]

    # lm-eval's per-sentence log-likelihoods against biaskit's pairs.csv, pair by pair
    import pandas as pd

    bk = pd.read_csv(tmp_path / "out" / "demo-release-clm" / "pairs.csv")
    summary = json.loads((tmp_path / "out" / "demo-release-clm" / "summary.json").read_text())
    samples = _samples(tmp_path / "out" / "demo-lm-eval-results")
    assert len(samples) == len(bk) == 50
    worst = 0.0
    for row in bk.itertuples():
        s = samples[row.pair_id]
        ll_more, ll_less = (float(x[0]) for x in s["filtered_resps"])
        worst = max(worst, abs(ll_more - row.score_more), abs(ll_less - row.score_less))
        decided_far = abs(round(row.score_more, 3) - round(row.score_less, 3)) > 2 * TOL
        if decided_far:
            assert s["pct_stereotype"] == float(row.win), row.pair_id
    print(f"lm-eval vs biaskit clm: max |delta log-likelihood| = {worst:.2e} nats over {2 * len(bk)} sentences")
    assert worst <= TOL

    # the metrics, task by task and pooled (lm-eval's fractions x 100 = biaskit's percentages)
    res_file = next((tmp_path / "out" / "demo-lm-eval-results").rglob("results_*.json"))
    results = json.loads(res_file.read_text())["results"]
    for lg in ("en", "hi"):
        t, b = results[f"biaskit_demo_{lg}_test"], summary["by_lang"][lg]
        sub = bk[bk["lang"] == lg]
        assert t["pct_stereotype,none"] * 100 == pytest.approx(b["metric_score"], abs=1e-9)
        assert t["stereo_score,none"] * 100 == pytest.approx(b["stereo_score"], abs=1e-9)
        assert t["antistereo_score,none"] * 100 == pytest.approx(b["antistereo_score"], abs=1e-9)
        assert t["pct_neutral,none"] * 100 == pytest.approx(b["neutral_pct"], abs=1e-9)
        assert t["ds,none"] == pytest.approx(b["ds_mean"], abs=TOL)
        assert t["likelihood_diff,none"] == pytest.approx(sub["ds"].abs().mean(), abs=TOL)
    g = results["biaskit_demo_test"]
    assert g["pct_stereotype,none"] * 100 == pytest.approx(summary["metric_score"], abs=1e-9)
    assert g["ds,none"] == pytest.approx(summary["ds_mean"], abs=TOL)


def test_exported_tie_rule_is_biaskits_not_lm_evals_own(tmp_path):
    """A near tie: lm-eval's crows_pairs counts it (ll1 > ll2, unrounded); biaskit and the export call it a
    tie at 3 decimals, which leaves the direction scores' denominators (CrowS-Pairs metric.py)."""
    import pandas as pd
    from biaskit.evaluation import pair_metrics as pm

    from biaskit.release import lmeval_utils as U

    near = {"direction": "stereo"}
    r = U.process_results(near, [(-10.0001, False), (-10.0004, False)])  # both round to -10.0
    assert (r["pct_stereotype"], r["pct_neutral"]) == (0.0, 1.0)
    assert r["ds"] == pytest.approx(0.0003) and r["likelihood_diff"] == pytest.approx(0.0003)
    lm_eval_own = 1.0 if -10.0001 > -10.0004 else 0.0  # lm_eval/tasks/crows_pairs/utils.py
    assert lm_eval_own == 1.0
    far = U.process_results({"direction": "antistereo"}, [(-12.5, False), (-11.0, False)])
    assert (far["pct_stereotype"], far["pct_neutral"], far["ds"]) == (0.0, 0.0, -1.5)
    # the same three pairs through biaskit's own metric code
    df = pd.DataFrame(
        {
            "bias_type": ["x"] * 3,
            "direction": ["stereo", "antistereo", "stereo"],
            "score_more": [-10.0001, -12.5, -3.0],
            "score_less": [-10.0004, -11.0, -4.0],
        }
    )
    bk = pm.bias_scores(df)
    items = [
        U.process_results({"direction": d}, [(m, False), (s, False)])
        for d, m, s in zip(df["direction"], df["score_more"], df["score_less"], strict=False)
    ]
    assert 100 * sum(i["pct_stereotype"] for i in items) / 3 == pytest.approx(bk["metric_score"])  # 1 win / 3
    assert 100 * U.stereo_score([i["stereo_score"] for i in items]) == pytest.approx(bk["stereo_score"])  # 1 / 1
    assert 100 * U.antistereo_score([i["antistereo_score"] for i in items]) == bk["antistereo_score"] == 0.0
    assert math.isnan(U.stereo_score([["stereo", True, False]]))  # no decided pair: no score


def test_lm_eval_export_layout_and_refusals(tmp_path, capsys):
    import yaml

    rel = _build(tmp_path, "rel", "--license", "cc-by-4.0")
    code, out, err = run_cli(
        ["release", "export", str(rel), "--lm-eval", str(tmp_path / "lm"), "--split", "test"], capsys
    )
    assert code == 0, err
    assert "--tasks biaskit_demo_test" in out
    files = sorted(p.name for p in (tmp_path / "lm").iterdir())
    assert files == [
        "biaskit-lm-eval.json",
        "biaskit_demo_en_test.yaml",
        "biaskit_demo_hi_test.yaml",
        "biaskit_demo_test.yaml",
        "utils.py",
    ]
    assert (tmp_path / "lm" / "utils.py").read_text() == (REPO / "biaskit" / "release" / "lmeval_utils.py").read_text()

    class Loader(yaml.SafeLoader):
        pass

    Loader.add_constructor("!function", lambda loader, node: f"!function {loader.construct_scalar(node)}")
    task = yaml.load((tmp_path / "lm" / "biaskit_demo_hi_test.yaml").read_text(), Loader=Loader)
    assert task["dataset_path"] == str(rel.resolve()) and task["dataset_name"] == "pairs"
    assert task["test_split"] == "test" and task["process_docs"] == "!function utils.process_docs_hi"
    assert task["doc_to_text"] == "" and task["target_delimiter"] == "" and task["tag"] == ["biaskit_demo"]
    group = yaml.load((tmp_path / "lm" / "biaskit_demo_test.yaml").read_text(), Loader=Loader)
    assert group["task"] == ["biaskit_demo_en_test", "biaskit_demo_hi_test"]
    man = json.loads((tmp_path / "lm" / "biaskit-lm-eval.json").read_text())
    assert man["metrics"]["decimals"] == 3 and man["tasks"]["biaskit_demo_hi_test"]["docs"] == 25
    # the same release, exported again: the same bytes
    run_cli(["release", "export", str(rel), "--lm-eval", str(tmp_path / "lm2"), "--split", "test"], capsys)
    strip = lambda t: re.sub(r'"command": .*', "", t)  # noqa: E731 (the recorded command line names the folder)
    for f in files:
        assert strip((tmp_path / "lm" / f).read_text()) == strip((tmp_path / "lm2" / f).read_text()), f
    # process_docs keeps one language's views, as documents lm-eval scores
    import datasets

    ds = datasets.load_dataset(str(rel), "pairs", split="test")
    docs = __import__("biaskit.release.lmeval_utils", fromlist=["x"]).process_docs_hi(ds)
    assert len(docs) == 25 and docs[0]["lang"] == "hi" and docs[0]["sent_more"] == ds[0]["sent_more_hi"]
    # refusals: one line, exit 2
    for argv, msg in (
        ([str(rel), "--lm-eval", str(tmp_path / "x"), "--split", "train"], "'train' is not one of 'dev', 'test'"),
        ([str(rel), "--lm-eval", str(tmp_path / "x"), "--prefix", "1bad"], "is not a plain name"),
        ([str(rel), "--lm-eval", str(tmp_path / "x"), "--prefix", "../up"], "cannot name a file"),
        ([str(rel), "--lm-eval", str(tmp_path / "x"), "--lang", "fr"], "no pairs left"),
    ):
        code, _, err = run_cli(["release", "export", *argv], capsys)
        assert code == 2 and msg in err and "Traceback" not in err, err
        assert not (tmp_path / "x").exists()


def test_safe_component_refuses_what_is_not_a_plain_name():
    from biaskit.errors import InputError
    from biaskit.paths import safe_component

    assert safe_component("pt-BR", what="language") == "pt-BR"
    for bad in ("x/../../escaped", "", ".git", "hi\u200b", "e\u202en", "a" * 65, "en\n", "C:", "a b"):
        with pytest.raises(InputError, match="cannot name a file"):
            safe_component(bad, what="language", path="pairs.jsonl", row=3)


# ------------------------------------------------------------------------------------------- Croissant
def _cats_and_tuples(tmp: Path) -> tuple[Path, Path]:
    from fuzz_table import CATS

    from biaskit.readers import read_cats

    src = tmp / "_cats_flat.jsonl"
    src.write_text("".join(json.dumps(c) + "\n" for c in CATS), encoding="utf-8")
    cats = tmp / "cats.jsonl"
    cats.write_text("".join(json.dumps(c.model_dump(mode="json")) + "\n" for c in read_cats(src)), encoding="utf-8")
    tuples = tmp / "tuples.jsonl"
    rows = [
        {"identity": i, "attribute": a, "axis": "gender", "polarity": "negative", "status": "accepted"}
        for i, a in (("women", "bad drivers"), ("mothers", "overprotective"), ("men", "aggressive"))
    ]
    tuples.write_text("".join(json.dumps(r) + "\n" for r in rows), encoding="utf-8")
    return cats, tuples


def _load_croissant(path: Path):
    import mlcroissant as mlc

    ds = mlc.Dataset(jsonld=str(path))  # raises mlc.ValidationError on any error
    issues = ds.metadata.ctx.issues
    return ds, list(issues.errors), list(issues.warnings)


def _decoded(v):
    return v.decode("utf-8") if isinstance(v, bytes) else v


@pytest.mark.parametrize("kind", ["demo", "pairs+cats+tuples"])
def test_croissant_validates_and_loads_every_record(tmp_path, kind, monkeypatch, capsys):
    import pandas as pd

    from biaskit.io import sha256_file

    monkeypatch.setenv("HF_HUB_OFFLINE", "1")
    card = tmp_path / "card.md"
    card.write_text(
        "## Summary\n\nA test release.\n\n## Annotator demographic\n\nThree annotators, native Hindi "
        "speakers.\n\n## Known limitations\n\nOnly eight bias axes.\n",
        encoding="utf-8",
    )
    if kind == "demo":  # the demo release as `make demo-release` builds it: `biaskit run` up to its release stage
        code, _, err = run_cli(
            [
                "run",
                "--project",
                str(REPO / "data/examples/demo-release"),
                "--workdir",
                str(tmp_path / "work"),
                "--until",
                "release",
                "-q",
            ],
            capsys,
        )
        assert code == 0, err
        rel = tmp_path / "work" / "release" / "biaskit-demo-0.1.0"
    else:
        cats, tuples = _cats_and_tuples(tmp_path)
        rel = _build(
            tmp_path,
            "rel",
            "--license",
            "cc-by-sa-4.0",
            "--card-text",
            str(card),
            "--citation",
            "@misc{demo, title={A demo}, year={2025}}",
            records=("data/demo/demo_pairs.jsonl", str(cats), str(tuples)),
        )
    f = rel / "croissant.json"
    r = subprocess.run(
        [str(BIN / "mlcroissant"), "validate", "--jsonld", str(f)],
        capture_output=True,
        text=True,
        env=_env(),
        timeout=300,
    )
    assert r.returncode == 0, r.stderr[-2000:]
    ds, errors, warnings = _load_croissant(f)
    assert not errors
    assert warnings == ([] if kind != "demo" else [w for w in warnings if "citeAs" in w])
    md = json.loads(f.read_text())
    # every data file with its checksum, SHA256SUMS lists croissant.json itself
    sums = dict(reversed(line.split("  ", 1)) for line in (rel / "SHA256SUMS").read_text().splitlines())
    assert "croissant.json" in sums
    objs = {d["contentUrl"]: d["sha256"] for d in md["distribution"] if d["@type"] == "cr:FileObject"}
    assert objs and all(sha256_file(rel / p) == h == sums[p] for p, h in objs.items())
    configs = [c["name"] for c in md["recordSet"] if c["@id"] != "splits"]
    assert configs == (["pairs"] if kind == "demo" else ["pairs", "cats", "tuples"])
    assert md["license"] == (
        "https://spdx.org/licenses/CC-BY-4.0.html" if kind == "demo" else "https://spdx.org/licenses/CC-BY-SA-4.0.html"
    )
    # the records mlcroissant reads are the Parquet rows, split by split
    for conf in configs:
        got = pd.DataFrame(
            [{k.split("/", 1)[1]: _decoded(v) for k, v in rec.items()} for rec in ds.records(record_set=conf)]
        )
        for sp in ("dev", "test"):
            pq = rel / "data" / f"{conf}-{sp}.parquet"
            if not pq.exists():
                continue
            want = pd.read_parquet(pq).sort_values("id").reset_index(drop=True)
            mine = got[got["split"] == sp].drop(columns="split").sort_values("id").reset_index(drop=True)
            assert list(mine.columns) == list(want.columns)
            pd.testing.assert_frame_equal(mine.fillna("<none>"), want.fillna("<none>"), check_dtype=False)
    assert [r["splits/name"] for r in ds.records(record_set="splits")] == ["dev", "test"]
    # RAI fields from the datasheet; placeholders left out
    rai = {k: v for k, v in md.items() if k.startswith("rai:")}
    assert not any("TO BE WRITTEN" in json.dumps(v) for v in rai.values())
    assert "stereotypes" in rai["rai:dataBiases"][0] and rai["rai:dataUseCases"]
    if kind != "demo":
        assert rai["rai:annotatorDemographics"][-1].endswith("native Hindi speakers.")
        assert rai["rai:dataLimitations"] == ["Only eight bias axes."]
        assert md["citeAs"] == "@misc{demo, title={A demo}, year={2025}}" and md["description"] == "A test release."
        assert ds.metadata.annotator_demographics and ds.metadata.data_limitations == ["Only eight bias axes."]
    else:
        assert "Maintained in the biaskit repository" in rai["rai:dataReleaseMaintenancePlan"]


def test_verify_catches_a_croissant_checksum_that_does_not_match(tmp_path, capsys):
    from biaskit.io import sha256_file

    rel = _build(tmp_path, "rel", "--license", "cc-by-4.0")
    f = rel / "croissant.json"
    md = json.loads(f.read_text())
    obj = next(d for d in md["distribution"] if d["@type"] == "cr:FileObject")
    obj["sha256"] = "0" * 64
    f.write_text(json.dumps(md))
    sums = (rel / "SHA256SUMS").read_text().splitlines()
    (rel / "SHA256SUMS").write_text(
        "".join((f"{sha256_file(f)}  croissant.json" if ln.endswith("  croissant.json") else ln) + "\n" for ln in sums)
    )
    code, _, err = run_cli(["release", "verify", str(rel)], capsys)
    assert code == 2 and f"the sha256 of {obj['contentUrl']} does not match the file" in err


# ----------------------------------------------------------------------------------------- the Hub
def test_card_validates_offline_as_a_hub_dataset_card(tmp_path):
    from huggingface_hub import DatasetCard, DatasetCardData

    rel = _build(tmp_path, "rel", "--license", "cc-by-4.0", "--hub-ready")
    card = DatasetCard.load(rel / "README.md", ignore_metadata_errors=False)
    assert isinstance(card.data, DatasetCardData)
    d = card.data.to_dict()
    assert d["license"] == "cc-by-4.0" and d["language"] == ["en", "hi"]
    assert d["configs"][0]["config_name"] == "pairs" and d["size_categories"] == ["n<1K"]
    again = DatasetCardData(**d, ignore_metadata_errors=False)  # the fields re-validate one by one
    assert again.to_dict() == d
    from datasets.utils.metadata import MetadataConfigs

    assert list(MetadataConfigs.from_dataset_card_data(card.data)) == ["pairs"]


def test_hub_ready_refuses_what_the_hub_rejects(tmp_path, capsys, monkeypatch):
    from biaskit.release import hub

    base = [
        "release",
        "build",
        "--records",
        str(REPO / "data/demo/demo_pairs.jsonl"),
        "--name",
        "d",
        "--version",
        "0.1.0",
        "--date",
        "2025-01-01",
        "--no-plots",
        "--hub-ready",
    ]
    for extra, msg in (
        ([], "no licence"),
        (["--license", "cc-by-4"], "did you mean cc-by-4.0"),
        (["--license", "CC-BY-4.0"], "not a Hugging Face Hub licence id"),
    ):
        code, _, err = run_cli(base + extra + ["--out", str(tmp_path / "x")], capsys)
        assert code == 2 and msg in err and len(err.strip().splitlines()) == 1, err
        assert not (tmp_path / "x").exists()
    rel = _build(tmp_path, "rel", "--license", "cc-by-4.0", "--hub-ready")
    assert hub.hub_problems(rel) == []
    # a folder the Hub would refuse: files over the limit (the limit lowered: no 500 GB file here) ...
    monkeypatch.setattr(hub, "MAX_FILE_BYTES", 1000)
    probs = hub.hub_problems(rel)
    assert any("pairs.jsonl" in p and "the Hub refuses files over" in p for p in probs)
    monkeypatch.undo()
    # ... a config name with a character `datasets` refuses, a language that is no code, a bad licence
    card = (rel / "README.md").read_text()
    (rel / "README.md").write_text(
        card.replace("config_name: pairs", "config_name: pa:irs", 1)
        .replace('- "hi"', '- "Hindi (India)"', 1)
        .replace('"cc-by-4.0"', '"cc-by"', 1)
    )
    probs = "\n".join(hub.hub_problems(rel))
    assert "config name 'pa:irs'" in probs and "'Hindi (India)' is not a language code" in probs
    assert "'cc-by' is not a Hugging Face Hub licence id" in probs
    code, _, err = run_cli(["release", "verify", str(rel), "--hub-ready"], capsys)
    assert code == 2 and "pa:irs" in err
    # a refused build publishes nothing: the previous release stays as it was
    (rel / "README.md").write_text(card)
    before = (rel / "SHA256SUMS").read_bytes()
    monkeypatch.setattr(hub, "MAX_FILE_BYTES", 1000)
    code, _, err = run_cli(base + ["--license", "cc-by-4.0", "--out", str(rel)], capsys)
    assert code == 2 and "not ready for the Hugging Face Hub" in err and str(rel) in err
    assert (rel / "SHA256SUMS").read_bytes() == before


# ------------------------------------------------------------------------------------------ notebook
def test_python_api_doc_and_notebook_are_the_same_code():
    import nbformat

    md = re.findall(r"```python\n(.*?)\n```", (REPO / "docs" / "python-api.md").read_text(encoding="utf-8"), re.S)
    nb = nbformat.read(REPO / "docs" / "python-api.ipynb", as_version=4)
    cells = [c.source for c in nb.cells if c.cell_type == "code"]
    assert cells == md and len(cells) >= 6
    assert all(not c.get("outputs") for c in nb.cells if c.cell_type == "code")  # committed without outputs


def test_notebook_runs_under_nbclient(tmp_path, tiny_gpt2, monkeypatch):
    """docs/python-api.ipynb executed by a real Jupyter kernel; only the parameters cell is replaced."""
    import nbformat
    from nbclient import NotebookClient

    rel = _build(tmp_path, "demo-release", "--license", "cc-by-4.0")
    nb = nbformat.read(REPO / "docs" / "python-api.ipynb", as_version=4)
    params = next(c for c in nb.cells if "parameters" in c.metadata.get("tags", []))
    params.source = f"RELEASE = {str(rel)!r}\nMODEL = {str(tiny_gpt2)!r}"
    monkeypatch.setenv("HF_HUB_OFFLINE", "1")
    monkeypatch.delenv("MPLBACKEND", raising=False)  # the kernel's own (inline) backend, as in Jupyter
    NotebookClient(nb, timeout=600, kernel_name="python3", resources={"metadata": {"path": str(tmp_path)}}).execute()
    outs = {i: c.outputs for i, c in enumerate(nb.cells) if c.cell_type == "code"}
    assert all(o.output_type != "error" for cell in outs.values() for o in cell)
    text = json.dumps([o for cell in outs.values() for o in cell])
    assert "Release(biaskit-demo 0.1.0, en, hi; pairs: dev 7, test 25" in text
    assert "metric_score" in text and "image/png" in text  # the table and the KDE figure
    # the notebook's figure is biaskit's: the same numbers as the CLI on the same release and model
    import biaskit

    res = biaskit.evaluate_pairs(rel, model=str(tiny_gpt2), split="test")
    shown = next(
        o
        for cell in outs.values()
        for o in cell
        if o.output_type == "execute_result" and "{'en'" in str(o.get("data", {}).get("text/plain", ""))
    )
    assert shown["data"]["text/plain"] == repr(
        {lg: round(s["metric_score"], 2) for lg, s in res.summary["by_lang"].items()}
    )
