"""The curator demo: `biaskit run` on the shipped example project data/examples/demo-release, as
`make demo-release` runs it -- the demo pairs -> the minimal-pair check -> a release -> release verify
(fast, offline: `--until release`), and the whole recipe with gemma3-270m scoring the test split (slow)."""

from __future__ import annotations

import json
import re
import subprocess
from pathlib import Path

import pytest
from conftest import run_cli

REPO = Path(__file__).resolve().parents[1]
EXAMPLE = REPO / "data" / "examples" / "demo-release"


def _recipe() -> list[str]:
    """The command lines of the Makefile's demo-release target."""
    text = (REPO / "Makefile").read_text(encoding="utf-8")
    body = re.search(r"^demo-release:.*\n((?:\t.*\n)+)", text, re.M).group(1)
    return [line.strip() for line in body.splitlines() if line.strip() and not line.strip().startswith("@")]


def test_the_makefile_runs_the_example_project():
    assert _recipe() == ["$(BIN)/biaskit run --project data/examples/demo-release --workdir demo-release-out"]


def test_demo_release_builds_offline(tmp_path, capsys):
    from biaskit.release import verify_release

    code, out, err = run_cli(
        ["run", "--project", str(EXAMPLE), "--workdir", str(tmp_path), "--until", "release"], capsys
    )
    assert code == 0, out + err
    assert "check: done: 32 pairs (64 language views) checked, 0 flagged" in out
    rel = tmp_path / "release" / "biaskit-demo-0.1.0"
    assert verify_release(rel).ok
    demo = [
        json.loads(x) for x in (REPO / "data" / "demo" / "demo_pairs.jsonl").read_text(encoding="utf-8").splitlines()
    ]
    rows = [json.loads(x) for x in (rel / "pairs.jsonl").read_text(encoding="utf-8").splitlines()]
    assert len(rows) == 32 and all(set(r["views"]) == {"en", "hi"} for r in rows)  # 32 pairs x en + hi
    assert {r["views"]["hi"]["sent_more"] for r in rows} == {d["sent_more"] for d in demo if d["lang"] == "hi"}
    assert {r["split"] for r in rows} == {"dev", "test"}
    meta = json.loads((rel / "release.json").read_text(encoding="utf-8"))
    assert (meta["name"], meta["version"], meta["created"], meta["license"]) == (
        "biaskit-demo",
        "0.1.0",
        "2025-01-01",
        "cc-by-4.0",
    )
    card = (rel / "README.md").read_text(encoding="utf-8")
    assert "32 pairs per language are far too few" in card  # from card.md, not a placeholder
    assert (EXAMPLE / "card.md").exists() and not list(EXAMPLE.glob("work"))  # the example folder stays clean
    code, out, err = run_cli(["status", "--workdir", str(tmp_path), "--json"], capsys)
    st = {r["name"]: r["status"] for r in json.loads(out)["stages"]}
    assert st == {"check": "done", "release": "done", "evaluate": "pending"}
    # the same again: nothing to do up to the release
    code, out, err = run_cli(
        ["run", "--project", str(EXAMPLE), "--workdir", str(tmp_path), "--until", "release"], capsys
    )
    assert code == 0 and out.count("unchanged, skipped") == 2


@pytest.mark.slow
@pytest.mark.model
def test_make_demo_release_recipe_end_to_end(tmp_path, gemma_dir):
    from pipeline_helpers import biaskit_exe, clean_env

    (cmd,) = _recipe()
    argv = cmd.replace("$(BIN)/biaskit", biaskit_exe()).replace("demo-release-out", str(tmp_path / "out")).split()
    done = subprocess.run(argv, cwd=REPO, env=clean_env(), capture_output=True, text=True, timeout=1800)
    assert done.returncode == 0, done.stdout + done.stderr
    assert "evaluate: done: gemma3-270m: metric score" in done.stdout
    summary = json.loads((tmp_path / "out" / "eval" / "biaskit-demo-0.1.0" / "pairs" / "summary.json").read_text())
    rel = json.loads((tmp_path / "out" / "release" / "biaskit-demo-0.1.0" / "release.json").read_text())
    assert (summary["data"]["release"]["release"], summary["data"]["release"]["split"]) == ("biaskit-demo", "test")
    assert summary["n_pairs"] == 2 * rel["counts"]["pairs"]["by_split"]["test"]  # en + hi views of the test pairs
    again = subprocess.run(argv, cwd=REPO, env=clean_env(), capture_output=True, text=True, timeout=600)
    assert again.returncode == 0 and again.stdout.count("unchanged, skipped") == 3, again.stdout
