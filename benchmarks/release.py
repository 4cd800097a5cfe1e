"""Benchmark: `biaskit release build` + `release verify` on N synthetic pairs in two languages.

Writes a synthetic validated-records file (English + Hindi view of every pair, linked by
``source_id``, ``group_more`` set as curated pairs have it), then times

- build: read + validate 2N views once, merge, split, every export, stats + keyness, card, checksums;
- verify: checksums, schema of every row, split disjointness, card;
- the straightforward baseline: writing the same N merged rows once as JSONL (``json.dumps`` per row)

and prints seconds (wall and this process's CPU time) and ratios. Goal: build + verify under 30 s for
100k pairs on a 2-core machine; on a shared machine the CPU seconds are the figure to judge.
Run: ``python benchmarks/release.py [--pairs 100000] [--keep DIR] [--profile]``. Timings are noisy
on a shared machine: re-run on a quiet one.
"""

from __future__ import annotations

import argparse
import json
import os
import tempfile
import time
from pathlib import Path

os.environ.setdefault("OMP_NUM_THREADS", "1")
os.environ.setdefault("BIASKIT_NO_PROGRESS", "1")

BIAS_TYPES = ["gender", "religion", "caste", "age", "disability", "socioeconomic", "physical-appearance"]
EN_WORDS = (
    "people are often said to be lazy clever poor rich loud quiet careless careful honest greedy kind "
    "rude smart weak strong in the city village office school market at home work"
).split()
HI_WORDS = (
    "लोग अक्सर आलसी चतुर गरीब अमीर ज़ोरदार शांत लापरवाह सावधान ईमानदार लालची दयालु असभ्य होशियार कमज़ोर "
    "मज़बूत शहर गाँव दफ़्तर स्कूल बाज़ार घर काम में पर होते हैं"
).split()


def make_records(path: Path, n_pairs: int, seed: int = 0, n_groups: int = 400) -> None:
    import random

    from biaskit.schema import make_pair_id

    rng = random.Random(seed)
    groups = [f"group{i}" for i in range(n_groups)]
    hi_groups = [f"समूह{i}" for i in range(n_groups)]
    with open(path, "w", encoding="utf-8") as fh:
        for i in range(n_pairs):
            g = rng.randrange(n_groups)
            h = (g + 1 + rng.randrange(n_groups - 1)) % n_groups
            bt = BIAS_TYPES[g % len(BIAS_TYPES)]
            direction = "stereo" if rng.random() < 0.8 else "antistereo"
            words = rng.sample(EN_WORDS, 8)
            hw = rng.sample(HI_WORDS, 9)
            sid = f"syn-{i}"
            common = {
                "direction": direction,
                "bias_type": bt,
                "status": "accepted",
                "source_id": sid,
                "provenance": {
                    "source": "synthetic",
                    "generation": {"model": "synthetic", "prompt_id": "bench", "prompt_version": "1"},
                },
                "meta": {"annotation": {"validity": {"label": direction, "n_annotators": 3}}},
            }
            for lang, more, less, gm, gl in (
                (
                    "en",
                    f"The {groups[g]} {' '.join(words)} {i}.",
                    f"The {groups[h]} {' '.join(words)} {i}.",
                    groups[g],
                    groups[h],
                ),
                (
                    "hi",
                    f"{hi_groups[g]} {' '.join(hw)} {i}।",
                    f"{hi_groups[h]} {' '.join(hw)} {i}।",
                    hi_groups[g],
                    hi_groups[h],
                ),
            ):
                # validated records carry their pair_id (annotate apply writes it)
                fh.write(
                    json.dumps(
                        {
                            "pair_id": make_pair_id(more, less, lang),
                            "sent_more": more,
                            "sent_less": less,
                            "lang": lang,
                            "group_more": gm,
                            "group_less": gl,
                            **common,
                        },
                        ensure_ascii=False,
                    )
                    + "\n"
                )


def baseline_write(records_path: Path, out: Path) -> tuple[float, float]:
    """Merge the two views of each pair in a dict and write the rows once: no validation, no exports.
    Returns (wall seconds, CPU seconds)."""
    t0, c0 = time.perf_counter(), time.process_time()
    merged: dict[str, dict] = {}
    with open(records_path, encoding="utf-8") as fh:
        for line in fh:
            r = json.loads(line)
            m = merged.setdefault(
                r["source_id"],
                {"id": r["source_id"], "bias_type": r["bias_type"], "direction": r["direction"], "views": {}},
            )
            m["views"][r["lang"]] = {"sent_more": r["sent_more"], "sent_less": r["sent_less"]}
    with open(out, "w", encoding="utf-8") as fh:
        for m in merged.values():
            fh.write(json.dumps(m, ensure_ascii=False) + "\n")
    return time.perf_counter() - t0, time.process_time() - c0


def main() -> None:
    ap = argparse.ArgumentParser(description=__doc__.split("\n")[0])
    ap.add_argument("--pairs", type=int, default=100_000)
    ap.add_argument("--keep", type=Path, default=None, help="write the release here and keep it")
    ap.add_argument("--profile", action="store_true", help="print the top functions of the build (cProfile)")
    args = ap.parse_args()

    from biaskit.release import BuildOptions, build_release, verify_release

    with tempfile.TemporaryDirectory() as tmpd:
        tmp = Path(tmpd)
        recs = tmp / "validated.jsonl"
        t0 = time.perf_counter()
        make_records(recs, args.pairs)
        print(
            f"synthetic records: {args.pairs} pairs x 2 languages ({recs.stat().st_size / 1e6:.1f} MB) "
            f"in {time.perf_counter() - t0:.1f} s"
        )
        base, base_cpu = baseline_write(recs, tmp / "baseline.jsonl")
        out = args.keep or tmp / "release"
        opts = BuildOptions(name="bench", version="1.0.0", created="2025-01-01", license="cc-by-4.0")
        t0, c0 = time.perf_counter(), time.process_time()
        if args.profile:
            import cProfile
            import pstats

            prof = cProfile.Profile()
            prof.enable()
            s = build_release([recs], out, opts)
            prof.disable()
        else:
            s = build_release([recs], out, opts)
        build, build_cpu = time.perf_counter() - t0, time.process_time() - c0
        t0, c0 = time.perf_counter(), time.process_time()
        v = verify_release(out)
        verify, verify_cpu = time.perf_counter() - t0, time.process_time() - c0
        if not v.ok:
            raise SystemExit("verify failed:\n" + "\n".join(v.problems[:5]))
        total = build + verify
        print(
            f"release: {s.counts['pairs']['records']} pairs, {len(s.files)} files, "
            f"{s.counts['pairs']['targets']} targets"
        )
        cpu = build_cpu + verify_cpu
        print(f"{'step':<34}{'wall s':>9}{'x baseline':>12}{'CPU s':>9}{'x baseline':>12}")
        for name, t, c in (
            ("baseline: write merged rows once", base, base_cpu),
            ("build", build, build_cpu),
            ("verify", verify, verify_cpu),
            ("build + verify", total, cpu),
        ):
            print(f"{name:<34}{t:>9.2f}{t / base:>12.1f}{c:>9.2f}{c / base_cpu:>12.1f}")
        print("build steps (wall s): " + ", ".join(f"{k} {v:.2f}" for k, v in s.timings.items()))
        print(f"load average (1 min) at the end: {os.getloadavg()[0]:.2f}")
        verdict = (
            "n/a (fewer than 100k pairs)"
            if args.pairs < 100_000
            else f"wall {'met' if total < 30 else 'NOT met'}, CPU {'met' if cpu < 30 else 'NOT met'}"
        )
        print(
            f"goal: build + verify < 30 s for 100k pairs: {verdict} ({total:.1f} s wall, {cpu:.1f} s CPU "
            f"for {args.pairs} pairs; on a shared machine judge by CPU seconds)"
        )
        if args.profile:
            pstats.Stats(prof).sort_stats("tottime").print_stats(30)


if __name__ == "__main__":
    main()
