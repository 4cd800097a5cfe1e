"""Several processes for masked-LM scoring (``torchrun -m biaskit evaluate pairs``): two CPU processes
(gloo) on a tiny random BERT give exactly the single-process result."""

from __future__ import annotations

import json
import os
import subprocess
import sys

import pytest
from biaskit.evaluation import distributed


def test_outside_torchrun_nothing_changes(monkeypatch):
    monkeypatch.delenv("WORLD_SIZE", raising=False)
    monkeypatch.delenv("RANK", raising=False)
    assert distributed.world() == (0, 1) and distributed.is_main_process()
    assert distributed.rank_device("auto") == "auto"


@pytest.mark.slow
def test_two_processes_equal_one(tiny_bert, crows_csv, tmp_path, capsys):
    from conftest import run_cli

    args = [
        "evaluate",
        "pairs",
        "--data",
        str(crows_csv),
        "--limit",
        "24",
        "--model",
        str(tiny_bert),
        "--scorer",
        "mlm",
        "--device",
        "cpu",
        "--runs",
        "2",
        "-q",
    ]
    code, _, err = run_cli(args + ["--out", str(tmp_path / "one")], capsys)
    assert code == 0, err
    env = {
        **os.environ,
        "BIASKIT_CACHE_DIR": str(tmp_path / "shared-cache"),
        "OMP_NUM_THREADS": "1",
        "BIASKIT_NO_PROGRESS": "1",
    }
    r = subprocess.run(
        [
            sys.executable,
            "-m",
            "torch.distributed.run",
            "--nproc-per-node",
            "2",
            "-m",
            "biaskit",
            *args,
            "--out",
            str(tmp_path / "two"),
        ],
        env=env,
        capture_output=True,
        text=True,
        timeout=600,
    )
    assert r.returncode == 0, r.stderr[-3000:]
    one = (tmp_path / "one" / "pairs.csv").read_bytes()
    assert one == (tmp_path / "two" / "pairs.csv").read_bytes()  # every score, bit for bit
    s1 = json.loads((tmp_path / "one" / "summary.json").read_text())
    s2 = json.loads((tmp_path / "two" / "summary.json").read_text())
    assert s2["timings"]["processes"] == 2 and s1["timings"]["processes"] == 1
    # rank 0 ran only its shard of the model inputs; rank 1 ran the rest
    assert 0 < s2["timings"]["rows_scored"] < s1["timings"]["rows_scored"]
    assert s1["metric_score"] == s2["metric_score"]
    assert r.stdout.count("Minimal-pair bias") == 1  # only rank 0 reports
