"""Benchmark: peak memory (RSS) and time of `biaskit curate check` and `biaskit release build` on 50 MB
and 200 MB of validated pair records, against a plain line loop over the same file.

The inputs are written here (``benchmarks/release.py``'s synthetic records: an English and a Hindi
view of every pair, linked by ``source_id``) into a temporary folder that is deleted afterwards. Each
command runs in a process of its own; its peak RSS comes from ``wait4`` (the kernel's figure for
that process alone). The straightforward baseline is a line loop that decodes every record and keeps
nothing (``for line in open(f): json.loads(line)``): the least memory a reader can take. Goals
(issue 20): ``curate check`` within 200 MB RSS on a 200 MB input; ``release build`` within 4x its
input (at 200 MB: below ~100 MB the interpreter and its libraries, about 250 MB whatever the
input, dominate, so the build's ratio is judged at 200 MB only).

Run: ``python benchmarks/streaming_memory.py [--sizes 50,200] [--keep DIR]``. On a shared machine
the CPU seconds are the figure to compare; RSS does not depend on the load.
"""

from __future__ import annotations

import argparse
import os
import shutil
import subprocess
import sys
import tempfile
import time
from pathlib import Path

sys.path.insert(0, str(Path(__file__).resolve().parent))

from release import make_records  # noqa: E402  (the synthetic records of the release benchmark)

BYTES_PER_PAIR = 1324  # both views of one synthetic pair, as make_records writes them
BASELINE = "import json,sys\nn=0\nfor line in open(sys.argv[1], 'rb'):\n    json.loads(line); n += 1\nprint(n)\n"


def run(argv: list[str], env: dict) -> tuple[float, float, int, int]:
    """(wall s, CPU s, peak RSS in bytes, exit code) of one command in a process of its own."""
    t0 = time.perf_counter()
    p = subprocess.Popen(argv, env=env, stdout=subprocess.DEVNULL, stderr=subprocess.PIPE)
    _, status, ru = os.wait4(p.pid, 0)
    p.returncode = os.waitstatus_to_exitcode(status)
    err = p.stderr.read().decode("utf-8", "replace") if p.stderr else ""
    if p.returncode not in (0, 1):  # curate check exits 1 with --strict only; 1 is kept for safety
        raise SystemExit(f"{' '.join(argv)} failed ({p.returncode}): {err[-500:]}")
    return time.perf_counter() - t0, ru.ru_utime + ru.ru_stime, ru.ru_maxrss * 1024, p.returncode


def main() -> None:
    ap = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    ap.add_argument("--sizes", default="50,200", help="input sizes in MB, comma-separated")
    ap.add_argument("--keep", help="keep the inputs and outputs in this folder")
    a = ap.parse_args()
    exe = Path(sys.executable).with_name("biaskit")
    biaskit = [str(exe)] if exe.exists() else [sys.executable, "-m", "biaskit.cli"]
    work = Path(a.keep) if a.keep else Path(tempfile.mkdtemp(prefix="biaskit-bench-mem-"))
    work.mkdir(parents=True, exist_ok=True)
    env = {**os.environ, "BIASKIT_NO_PROGRESS": "1", "BIASKIT_CACHE_DIR": str(work / "cache"), "OMP_NUM_THREADS": "1"}
    rows = []
    try:
        for mb in (int(x) for x in a.sizes.split(",") if x.strip()):
            src = work / f"pairs-{mb}mb.jsonl"
            make_records(src, mb * 1_000_000 // BYTES_PER_PAIR)
            size = src.stat().st_size
            base = run([sys.executable, "-c", BASELINE, str(src)], env)
            check = run(
                biaskit + ["curate", "check", "--pairs", str(src), "--out", str(work / f"check-{mb}.jsonl")], env
            )
            build = run(
                biaskit
                + [
                    "release",
                    "build",
                    "--records",
                    str(src),
                    "--name",
                    "bench",
                    "--version",
                    "1.0.0",
                    "--date",
                    "2025-01-01",
                    "--out",
                    str(work / f"release-{mb}"),
                ],
                env,
            )
            for name, (wall, cpu, rss, _), goal in (
                ("plain line loop", base, None),
                ("curate check", check, 200e6),
                ("release build", build, 4 * size if mb >= 200 else None),
            ):
                rows.append((size, name, wall, cpu, rss, goal, base))
            if not a.keep:
                for p in work.glob(f"*{mb}*"):
                    shutil.rmtree(p) if p.is_dir() else p.unlink()
        print(
            f"{'input':>8}  {'command':<16} {'wall s':>8} {'CPU s':>8} {'RSS MB':>8} {'RSS/input':>9} "
            f"{'RSS vs loop':>11} {'CPU vs loop':>11}  goal"
        )
        for size, name, wall, cpu, rss, goal, base in rows:
            verdict = "" if goal is None else (f"<= {goal / 1e6:.0f} MB: " + ("met" if rss <= goal else "MISSED"))
            print(
                f"{size / 1e6:>6.0f}MB  {name:<16} {wall:>8.1f} {cpu:>8.1f} {rss / 1e6:>8.0f} {rss / size:>9.2f} "
                f"{rss / base[2]:>10.1f}x {cpu / max(base[1], 1e-9):>10.1f}x  {verdict}"
            )
    finally:
        if not a.keep:
            shutil.rmtree(work, ignore_errors=True)


if __name__ == "__main__":
    main()
