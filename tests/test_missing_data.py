"""Without a mirror and without the network, the tests that need public data skip, the run ends
with one line counting them and naming the command that fetches the data, and the run fails unless
missing data was allowed (`make test-offline`). Run in a subprocess pytest with the mirror hidden,
an empty data cache and a registry whose URLs point at a port nobody listens on (offline)."""

from __future__ import annotations

import json
import os
import re
import socket
import subprocess
import sys
from pathlib import Path

import pytest

REPO = Path(__file__).resolve().parents[1]
TESTS = [
    "tests/test_foundation.py::test_crows_reader_real_file",
    "tests/test_foundation.py::test_indibias_reader_two_views",
    "tests/test_foundation.py::test_bias_type_normalisation",
]  # needs no data: passes


def _offline_env(tmp_path: Path) -> dict:
    with socket.socket() as s:
        s.bind(("127.0.0.1", 0))
        port = s.getsockname()[1]
    reg = json.loads((REPO / "data" / "datasets.json").read_text(encoding="utf-8"))
    for d in reg["datasets"].values():
        d["url"] = f"http://127.0.0.1:{port}/" + ("" if d["url"].endswith("/") else d["filename"])
    (tmp_path / "datasets.json").write_text(json.dumps(reg), encoding="utf-8")
    env = {
        k: v
        for k, v in os.environ.items()
        if k not in ("BIASKIT_DATA_MIRROR", "BIASKIT_ALLOW_MISSING_DATA", "PYTEST_ADDOPTS", "PYTEST_CURRENT_TEST")
    }
    env.update(
        BIASKIT_SHARED_DATA=str(tmp_path / "no-mirror"),
        BIASKIT_TEST_DATA=str(tmp_path / "cache"),
        BIASKIT_DATASETS_FILE=str(tmp_path / "datasets.json"),
        COLUMNS="200",
    )
    return env


def _pytest(args: list[str], env: dict) -> subprocess.CompletedProcess:
    return subprocess.run(
        [sys.executable, "-m", "pytest", "-q", "-p", "no:cacheprovider", *args],
        cwd=REPO,
        env=env,
        capture_output=True,
        text=True,
        timeout=600,
    )


@pytest.mark.parametrize("dist", [[], ["-n", "2"]], ids=["one-process", "xdist"])
def test_missing_data_is_counted_named_and_fails_the_run(tmp_path, dist):
    """The same with pytest-xdist (`make test` runs two workers): the controller counts the skips."""
    if dist:
        pytest.importorskip("xdist", reason="pytest-xdist is in the dev extra")
    env = _offline_env(tmp_path)
    r = _pytest([*TESTS, *dist], env)
    out = r.stdout + r.stderr
    assert r.returncode == 1, out
    assert re.search(r"1 passed, 2 skipped", out), out
    last = [ln for ln in out.splitlines() if "skipped because public data is missing" in ln]
    assert len(last) == 1, out
    assert last[0].startswith("2 tests skipped because public data is missing (crows-pairs, indibias-sample)")
    assert "make test-data" in last[0] and "the run fails" in last[0]
    # it is the last line before pytest's final counts
    lines = [ln for ln in out.splitlines() if ln.strip()]
    assert lines.index(last[0]) == len(lines) - 2, out
    # each skip names its dataset and the command too
    assert "public dataset not available: 'crows-pairs'" in out and "biaskit data download crows-pairs" in out


def test_missing_data_allowed_explicitly(tmp_path):
    env = _offline_env(tmp_path)
    r = _pytest([*TESTS, "--allow-missing-data"], env)
    out = r.stdout + r.stderr
    assert r.returncode == 0, out
    assert "2 tests skipped because public data is missing" in out and "allowed by --allow-missing-data" in out


def test_mirror_fills_the_cache_through_the_downloader(tmp_path):
    """With a mirror (a copy of the release under any sub-folder) the same tests run, offline."""
    env = _offline_env(tmp_path)
    mirror = tmp_path / "mirror" / "crows"
    mirror.mkdir(parents=True)
    from conftest import public_dataset

    src = public_dataset("crows-pairs")  # this session's copy (skips, counted, when it has none)
    (mirror / src.name).write_bytes(src.read_bytes())
    env["BIASKIT_SHARED_DATA"] = str(tmp_path / "mirror")
    r = _pytest([TESTS[0], "--allow-missing-data"], env)
    out = r.stdout + r.stderr
    assert r.returncode == 0 and "1 passed" in out and "public data is missing" not in out, out
    cached = tmp_path / "cache" / "crows_pairs_anonymized.csv"
    side = json.loads((tmp_path / "cache" / "crows_pairs_anonymized.csv.source.json").read_text())
    assert cached.read_bytes() == src.read_bytes() and side["verified"] is True
    assert side["mirror"] == str(mirror / src.name)


def test_stereoset_fixture_flattens_the_original_dev_json(tmp_path, monkeypatch, stereoset_jsonl):
    """What `biaskit data download stereoset-dev` fetches (the original dev.json) becomes the flat JSONL
    the tests read line by line, splits alternating as in the mirror's flattened copy."""
    import conftest

    from biaskit.readers import read_cats

    cats = read_cats(stereoset_jsonl, limit=40)
    data = {"intrasentence": [], "intersentence": []}
    for c in cats:
        data[c.split].append(
            {
                "id": c.cat_id,
                "target": c.target,
                "bias_type": c.bias_type,
                "context": c.context,
                "sentences": [
                    {
                        "id": f"{c.cat_id}{o.gold_label}",
                        "sentence": o.sentence,
                        "labels": [],
                        "gold_label": o.gold_label,
                    }
                    for o in c.options
                ],
            }
        )
    cache = tmp_path / "cache"
    cache.mkdir()
    (cache / "stereoset_dev.json").write_text(json.dumps({"version": "test", "data": data}), encoding="utf-8")
    monkeypatch.setattr(conftest, "TEST_DATA", cache)
    monkeypatch.setattr(conftest, "MIRROR", tmp_path / "no-mirror")
    monkeypatch.setattr(conftest, "_FETCHED", {})
    flat = conftest._stereoset_flat()
    assert flat == cache / "stereoset_dev.flat.jsonl"
    rows = [json.loads(x) for x in flat.read_text(encoding="utf-8").splitlines()]
    assert len(rows) == len(cats)
    n = min(len(data["intrasentence"]), len(data["intersentence"]))
    assert [r["type"] for r in rows[: 2 * n]] == ["intersentence", "intrasentence"] * n
    back = read_cats(flat)
    assert {(c.target, c.context, c.option("stereotype").sentence) for c in back} == {
        (c.target, c.context, c.option("stereotype").sentence) for c in cats
    }
