"""Run LLM-driven tests N times in a row and report how many passed (issue 28; a script, not collected by
pytest, not part of `make test`).

An LLM-driven test fixes its decoding (temperature 0, seed 0, one request in flight where order
matters) and asserts only what the model reliably does (docs/BRIEF: "run it 10 times before you trust
it"). This script is how that is checked: each test runs ``--runs`` times, one after the other, each
in a fresh pytest process (its services -- llama.cpp, Label Studio -- started anew, as on a fresh
clone), at ``nice -n 10`` by default (a shared machine). It prints a Markdown table (test, runs,
passes, mean and slowest seconds) and writes every run's outcome to ``--json``.

    .venv/bin/python tests/llm_repeat.py                      # every test marked llm, 10 runs each
    .venv/bin/python tests/llm_repeat.py --runs 3 tests/test_pipeline_e2e.py::test_one_path_from_tuples_to_scores

A failed run's last lines are kept in the JSON (``tail``); ``--stop`` stops a test at its first failure.
"""

from __future__ import annotations

import argparse
import json
import os
import subprocess
import sys
import tempfile
import time
from pathlib import Path

REPO = Path(__file__).resolve().parents[1]


def llm_tests() -> list[str]:
    """The node ids of every test marked ``llm`` (pytest's own collection)."""
    p = subprocess.run(
        [sys.executable, "-m", "pytest", "-q", "--collect-only", "-m", "llm", "-p", "no:cacheprovider", "tests"],
        cwd=REPO,
        capture_output=True,
        text=True,
        check=False,
    )
    return [x.strip() for x in p.stdout.splitlines() if "::" in x and not x.startswith(" ")]


def run_once(node: str, nice: int, env: dict) -> dict:
    with tempfile.TemporaryDirectory(prefix="llm-repeat-") as tmp:
        cmd = ["nice", "-n", str(nice), sys.executable, "-m", "pytest", "-q", "-n", "0", "-p", "no:cacheprovider"]
        cmd += ["--basetemp", str(Path(tmp) / "t"), "-o", "addopts=", "-rs", node]
        t0 = time.monotonic()
        p = subprocess.run(cmd, cwd=REPO, capture_output=True, text=True, env=env, check=False)
        seconds = time.monotonic() - t0
    out = p.stdout + p.stderr
    skipped = " skipped" in out.splitlines()[-1] if out.strip() else False
    return {
        "node": node,
        "passed": p.returncode == 0 and not skipped,
        "skipped": skipped,
        "code": p.returncode,
        "seconds": round(seconds, 1),
        "tail": "" if p.returncode == 0 else "\n".join(out.strip().splitlines()[-15:]),
    }


def main() -> int:
    ap = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    ap.add_argument("tests", nargs="*", help="pytest node ids (default: every test marked llm)")
    ap.add_argument("--runs", type=int, default=10)
    ap.add_argument("--nice", type=int, default=10)
    ap.add_argument("--stop", action="store_true", help="stop a test at its first failure")
    ap.add_argument("--json", type=Path, default=Path("llm_repeat.json"), help="every run's outcome")
    a = ap.parse_args()
    tests = a.tests or llm_tests()
    env = {
        **os.environ,
        "HF_HUB_OFFLINE": "1",
        "TRANSFORMERS_OFFLINE": "1",
        "BIASKIT_TEST_DATA": os.environ.get("BIASKIT_TEST_DATA", str(Path.home() / ".cache/biaskit/test-data")),
    }
    runs: list[dict] = []
    started = time.strftime("%Y-%m-%d %H:%M:%S")
    for node in tests:
        for i in range(a.runs):
            r = run_once(node, a.nice, env)
            r["run"] = i + 1
            runs.append(r)
            state = "pass" if r["passed"] else ("SKIP" if r["skipped"] else f"FAIL (exit {r['code']})")
            print(f"{node} run {i + 1}/{a.runs}: {state} in {r['seconds']} s", flush=True)
            a.json.write_text(json.dumps({"started": started, "runs": runs}, indent=1), encoding="utf-8")
            if a.stop and not r["passed"]:
                break
    print("\n| test | runs | passes | mean s | slowest s |\n|---|---:|---:|---:|---:|")
    for node in tests:
        rs = [r for r in runs if r["node"] == node]
        secs = [r["seconds"] for r in rs]
        print(
            f"| `{node}` | {len(rs)} | {sum(r['passed'] for r in rs)} | {sum(secs) / len(secs):.0f} | {max(secs):.0f} |"
        )
    return 0 if all(r["passed"] for r in runs) else 1


if __name__ == "__main__":
    sys.exit(main())
