"""Benchmark: peak memory (RSS) and time of `biaskit release build`, `release verify` and `curate check`
on 50, 200 and 800 MB of validated pair records, against a plain line loop over the same file (and,
with ``--baseline BIASKIT``, another biaskit executable: the current code before a change).

The inputs are written here (``benchmarks/release.py``'s synthetic records: an English and a Hindi
view of every pair, linked by ``source_id``) into a temporary folder that is deleted afterwards. Each
command runs in a process of its own; its peak RSS comes from ``wait4`` (the kernel's figure for
that process alone). The straightforward baseline is a line loop that decodes every record and keeps
nothing (``for line in open(f): json.loads(line)``): the least memory a reader can take. Goals
(issue 31): ``release build`` and ``release verify`` in memory bounded by a constant -- peak RSS at
every size within 20% of each other and under 400 MB; ``curate check`` within 200 MB RSS on 200 MB
(issue 20; it runs up to ``--check-up-to`` MB, 136 CPU seconds at 200 MB). With ``--baseline`` the
two builds' files must be byte-identical.

Run: ``python benchmarks/streaming_memory.py [--sizes 50,200,800] [--baseline PATH] [--keep DIR]``. On a
shared machine the CPU seconds are the figure to compare; RSS does not depend on the load.
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

from release import make_records  # the synthetic records of the release benchmark

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


def _digest(folder: Path) -> dict[str, str]:
    import hashlib

    return {
        f.relative_to(folder).as_posix(): hashlib.sha256(f.read_bytes()).hexdigest()
        for f in sorted(folder.rglob("*"))
        if f.is_file()
    }


def main() -> None:
    ap = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    ap.add_argument("--sizes", default="50,200,800", help="input sizes in MB, comma-separated")
    ap.add_argument("--check-up-to", type=int, default=200, help="run curate check on inputs up to this size (MB)")
    ap.add_argument("--baseline", help="another biaskit executable to compare with (e.g. the previous release)")
    ap.add_argument("--keep", help="keep the inputs and outputs in this folder")
    a = ap.parse_args()
    exe = Path(sys.executable).with_name("biaskit")
    biaskit = [str(exe)] if exe.exists() else [sys.executable, "-m", "biaskit.cli"]
    work = Path(a.keep) if a.keep else Path(tempfile.mkdtemp(prefix="biaskit-bench-mem-"))
    work.mkdir(parents=True, exist_ok=True)
    env = {**os.environ, "BIASKIT_NO_PROGRESS": "1", "BIASKIT_CACHE_DIR": str(work / "cache"), "OMP_NUM_THREADS": "1"}
    rows, builds, verifies = [], [], []
    print(f"load {os.getloadavg()[0]:.1f} on {os.cpu_count()} CPUs")
    try:
        for mb in (int(x) for x in a.sizes.split(",") if x.strip()):
            src = work / f"pairs-{mb}mb.jsonl"
            make_records(src, mb * 1_000_000 // BYTES_PER_PAIR)
            size = src.stat().st_size
            base = run([sys.executable, "-c", BASELINE, str(src)], env)
            rows.append((size, "plain line loop", base, None, base, None))
            if mb <= a.check_up_to:
                check = run(
                    biaskit + ["curate", "check", "--pairs", str(src), "--out", str(work / f"check-{mb}.jsonl")], env
                )
                rows.append((size, "curate check", check, 200e6, base, None))
            who = [("biaskit", biaskit)] + ([("baseline", [a.baseline])] if a.baseline else [])
            res = {}
            for name, argv in who:
                out = work / name / f"release-{mb}"
                out.parent.mkdir(exist_ok=True)
                build = run(
                    argv
                    + ["release", "build", "--records", str(src), "--name", "bench", "--version", "1.0.0"]
                    + ["--date", "2025-01-01", "--out", str(out)],
                    env,
                )
                verify = run(argv + ["release", "verify", str(out)], env)
                res[name] = (build, verify, out)
            b_build, b_verify = (res["baseline"][0], res["baseline"][1]) if a.baseline else (None, None)
            rows.append((size, "release build", res["biaskit"][0], 400e6, base, b_build))
            rows.append((size, "release verify", res["biaskit"][1], 400e6, base, b_verify))
            builds.append(res["biaskit"][0][2])
            verifies.append(res["biaskit"][1][2])
            if a.baseline:
                # the builds record their command line (--out differs): compare the data, stats and card files
                d1, d2 = _digest(res["biaskit"][2]), _digest(res["baseline"][2])
                same = [k for k in d1 if k not in ("release.json", "README.md", "SHA256SUMS", "croissant.json")]
                ok = all(d1[k] == d2.get(k) for k in same) and set(d1) == set(d2)
                print(
                    f"{size / 1e6:.0f} MB: the release files of biaskit and the baseline are "
                    f"{'byte-identical' if ok else 'DIFFERENT'} "
                    "(all but release.json, the card, SHA256SUMS, croissant.json)"
                )
            if not a.keep:
                for p in work.glob(f"*{mb}*"):
                    shutil.rmtree(p) if p.is_dir() else p.unlink()
                for name, _ in who:
                    shutil.rmtree(work / name / f"release-{mb}", ignore_errors=True)
        print(
            f"{'input':>8}  {'command':<16} {'wall s':>8} {'CPU s':>8} {'RSS MB':>8} {'RSS/input':>9} "
            f"{'RSS vs loop':>11} {'CPU vs loop':>11}"
            + (f" {'RSS vs base':>11} {'CPU vs base':>11}" if a.baseline else "")
            + "  goal"
        )
        for size, name, (wall, cpu, rss, _), goal, base, other in rows:
            verdict = "" if goal is None else (f"<= {goal / 1e6:.0f} MB: " + ("met" if rss <= goal else "MISSED"))
            vs = ""
            if a.baseline:
                vs = f" {other[2] / rss:>10.1f}x {other[1] / max(cpu, 1e-9):>10.1f}x" if other else " " * 24
            print(
                f"{size / 1e6:>6.0f}MB  {name:<16} {wall:>8.1f} {cpu:>8.1f} {rss / 1e6:>8.0f} {rss / size:>9.2f} "
                f"{rss / base[2]:>10.1f}x {cpu / max(base[1], 1e-9):>10.1f}x{vs}  {verdict}"
            )
        for name, peaks in (("release build", builds), ("release verify", verifies)):
            if len(peaks) > 1:
                spread = max(peaks) / min(peaks)
                print(
                    f"{name}: peak RSS {min(peaks) / 1e6:.0f}-{max(peaks) / 1e6:.0f} MB over "
                    f"{len(peaks)} sizes, max/min {spread:.2f} (goal <= 1.20: {'met' if spread <= 1.2 else 'MISSED'})"
                )
    finally:
        if not a.keep:
            shutil.rmtree(work, ignore_errors=True)


if __name__ == "__main__":
    main()
