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


def make_judgments(n_items: int, n_per_item: int = 3, n_workers: int = 40, seed: int = 0) -> pd.DataFrame:
    rng = np.random.default_rng(seed)
    labels = np.array(["stereo", "antistereo", "invalid"])
    truth = rng.integers(0, 3, n_items)
    skill = rng.uniform(0.55, 0.95, n_workers)
    workers = np.stack([rng.choice(n_workers, n_per_item, replace=False) for _ in range(n_items)])
    correct = rng.random((n_items, n_per_item)) < skill[workers]
    lab = np.where(correct, truth[:, None], (truth[:, None] + rng.integers(1, 3, (n_items, n_per_item))) % 3)
    return pd.DataFrame({"task": np.repeat([f"p-{i:06d}" for i in range(n_items)], n_per_item),
                         "question": "validity", "worker": [f"w{w:02d}" for w in workers.ravel()],
                         "label": labels[lab.ravel()], "qtype": "choice",
                         "lead_time": rng.gamma(2.0, 15.0, n_items * n_per_item).round(2)})


def naive_leave_one_out(df: pd.DataFrame, min_others: int = 2):
    by_item: dict[tuple, list[tuple[str, str]]] = defaultdict(list)
    for t, q, w, lab in zip(df["task"], df["question"], df["worker"], df["label"]):
        by_item[(t, q)].append((w, lab))
    comp, dis = [], []
    for t, q, w, lab in zip(df["task"], df["question"], df["worker"], df["label"]):
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
    print(f"{len(df):,} judgments, {args.items:,} tasks, {st['annotators']} annotators; "
          f"{int(fast[0].sum()):,} answers compared with their leave-one-out majority (identical results)")
    print(f"leave-one-out disagreement: biaskit {t_fast:.2f} s, plain loop {t_slow:.2f} s, "
          f"speed-up {t_slow / t_fast:.1f}x")
    print(f"whole status report (progress, agreement, time, disagreement): {t_status:.2f} s")


if __name__ == "__main__":
    main()
