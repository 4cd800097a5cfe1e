"""Benchmark: `annotate status` on a large project (100k tasks x 3 annotators of 40 = 300k judgments).

The expensive figure is the per-annotator disagreement with the leave-one-out majority. biaskit
computes it vectorised (per item the top two label counts decide every answer at once,
:func:`biaskit.annotation.status.leave_one_out`); the straightforward way counts the other
annotators' labels for every answer in a Python loop. The script checks that both give the same
flags, times the whole status report, and prints seconds and the ratio.
Run: ``python benchmarks/annotation_status.py [--items N]``.
"""

from __future__ import annotations

import argparse
import time
from collections import Counter, defaultdict

import numpy as np
import pandas as pd
from aggregate import make_judgments as make_votes  # run as a script: benchmarks/ is on sys.path


def make_judgments(n_items: int, n_per_item: int = 3, n_workers: int = 40, seed: int = 0) -> pd.DataFrame:
    """benchmarks/aggregate.py's synthetic crowd (workers of varying skill), as pulled judgments."""
    df = make_votes(n_items, n_per_item, n_workers, seed)
    rng = np.random.default_rng(seed + 1)
    return df.assign(question="validity", qtype="choice", lead_time=rng.gamma(2.0, 15.0, len(df)).round(2))[
        ["task", "question", "worker", "label", "qtype", "lead_time"]
    ]


def naive_leave_one_out(df: pd.DataFrame, min_others: int = 2):
    by_item: dict[tuple, list[tuple[str, str]]] = defaultdict(list)
    for t, q, w, lab in zip(df["task"], df["question"], df["worker"], df["label"], strict=False):
        by_item[(t, q)].append((w, lab))
    comp, dis = [], []
    for t, q, w, lab in zip(df["task"], df["question"], df["worker"], df["label"], strict=False):
        others = [x for ww, x in by_item[(t, q)] if ww != w]
        if len(others) < min_others:
            comp.append(False), dis.append(False)
            continue
        c = Counter(others).most_common()
        if len(c) > 1 and c[0][1] == c[1][1]:
            comp.append(False), dis.append(False)
            continue
        comp.append(True)
        dis.append(c[0][0] != lab)
    return np.array(comp), np.array(dis)


def main() -> None:
    from biaskit.annotation.status import leave_one_out, project_status

    ap = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    ap.add_argument("--items", type=int, default=100_000)
    args = ap.parse_args()
    df = make_judgments(args.items)
    t0 = time.perf_counter()
    fast = leave_one_out(df[["task", "question", "worker", "label"]])
    t_fast = time.perf_counter() - t0
    t0 = time.perf_counter()
    slow = naive_leave_one_out(df)
    t_slow = time.perf_counter() - t0
    assert (fast[0] == slow[0]).all() and (fast[1] == slow[1]).all(), "the two implementations differ"
    t0 = time.perf_counter()
    st = project_status(df, args.items, overlap=3)
    t_status = time.perf_counter() - t0
    print(
        f"{len(df):,} judgments, {args.items:,} tasks, {st['annotators']} annotators; "
        f"{int(fast[0].sum()):,} answers compared with their leave-one-out majority (identical results)"
    )
    print(
        f"leave-one-out disagreement: biaskit {t_fast:.2f} s, plain loop {t_slow:.2f} s, "
        f"speed-up {t_slow / t_fast:.1f}x"
    )
    print(f"whole status report (progress, agreement, time, disagreement): {t_status:.2f} s")


if __name__ == "__main__":
    main()
