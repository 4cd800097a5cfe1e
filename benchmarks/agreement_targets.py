"""Benchmark: StereoSet's per-term agreement table on a StereoSet-sized set (16,995 CATs x 3 sentences x 5
validators = 254,925 judgments, 321 target terms in 4 domains; labels drawn at random).

Compares biaskit's vectorised per-term table (:mod:`biaskit.annotation.targets`: vote counts, reference
votes, per-CAT and per-term means, retention at >= 3 of 5) with a straightforward Python loop over
terms, CATs and sentences (dicts and Counters), checks that both give the same figures, and prints
seconds and the ratio. Run: ``python benchmarks/agreement_targets.py [--cats N]``.
"""

from __future__ import annotations

import argparse
import time
from collections import Counter, defaultdict

import numpy as np
import pandas as pd

LABELS = np.array(["stereotype", "anti-stereotype", "unrelated", "related"])
DOMAINS = ("gender", "profession", "race", "religion")


def make_judgments(n_cats: int, n_terms: int = 321, n_workers: int = 1278, seed: int = 0) -> pd.DataFrame:
    rng = np.random.default_rng(seed)
    term = np.arange(n_cats) % n_terms
    rows_task = np.repeat([f"c-{i:06d}" for i in range(n_cats)], 15)
    gold = np.tile(np.repeat(np.arange(3), 5), n_cats)
    workers = np.stack([rng.choice(n_workers, 5, replace=False) for _ in range(n_cats)])
    worker = np.repeat(workers, 3, axis=0).ravel()  # the same 5 validators on the 3 sentences of a CAT
    skill = rng.uniform(0.6, 0.95, n_workers)
    correct = rng.random(len(gold)) < skill[worker]
    other = (gold + rng.integers(1, 4, len(gold))) % 4
    lab = np.where(correct, gold, other)
    t = np.repeat(term, 15)
    return pd.DataFrame(
        {
            "task": rows_task,
            "worker": [f"h{w:04d}" for w in worker],
            "question": "option_" + LABELS[gold],
            "label": LABELS[lab],
            "reference": LABELS[gold],
            "target": [f"term{x:03d}" for x in t],
            "bias_type": np.array(DOMAINS)[t % 4],
        }
    )


def naive_targets(df: pd.DataFrame, k: int = 3) -> dict:
    votes: dict[tuple, Counter] = defaultdict(Counter)
    ref: dict[tuple, str] = {}
    meta: dict[str, tuple] = {}
    for t, q, lab, r, tg, bt in zip(
        df["task"].tolist(),
        df["question"].tolist(),
        df["label"].tolist(),
        df["reference"].tolist(),
        df["target"].tolist(),
        df["bias_type"].tolist(),
        strict=False,
    ):
        votes[(t, q)][lab] += 1
        ref[(t, q)] = r
        meta[t] = (bt, tg)
    per_task: dict[str, list] = defaultdict(list)
    for (t, q), c in votes.items():
        per_task[t].append((c[ref[(t, q)]], sum(c.values())))
    per_term: dict[tuple, list] = defaultdict(list)
    for t, items in per_task.items():
        share = sum(v / n for v, n in items) / len(items)
        kept = all(v >= k for v, _ in items)
        per_term[meta[t]].append((share, kept, sum(v for v, _ in items), sum(n for _, n in items)))
    return {
        key: (
            sum(s for s, *_ in xs) / len(xs),
            sum(kp for _, kp, *_ in xs),
            sum(v for *_, v, _ in xs),
            sum(n for *_, n in xs),
        )
        for key, xs in per_term.items()
    }


def biaskit_targets(df: pd.DataFrame, k: int = 3, timings: dict | None = None) -> list[dict]:
    from biaskit.annotation.aggregate import count_votes, prepare
    from biaskit.annotation.targets import item_reference_votes, target_rows, task_table

    t0 = time.perf_counter()
    d = prepare(df, keep=("bias_type", "target", "reference")).df  # validation the loop does not do
    if timings is not None:
        timings["prepare"] = time.perf_counter() - t0
    c = count_votes(d)
    _, ref_votes = item_reference_votes(c, d["reference"].to_numpy(dtype=object))
    top = np.zeros(c.n_items)
    np.maximum.at(top, c.item, c.count)
    tasks = task_table(c, ref_votes, top, k)
    return target_rows(d, tasks, d["bias_type"], d["target"], k, None)


def main() -> None:
    ap = argparse.ArgumentParser()
    ap.add_argument("--cats", type=int, default=16_995)
    args = ap.parse_args()
    df = make_judgments(args.cats)
    print(
        f"{args.cats:,} CATs x 3 sentences x 5 validators = {len(df):,} judgments, "
        f"{df['target'].nunique()} target terms"
    )
    t0 = time.perf_counter()
    timings: dict = {}
    rows = biaskit_targets(df, timings=timings)
    t_ours = time.perf_counter() - t0
    t0 = time.perf_counter()
    ref = naive_targets(df)
    t_loop = time.perf_counter() - t0
    assert len(rows) == len(ref)
    for r in rows:
        share, kept, votes, answers = ref[(r["bias_type"], r["target"])]
        assert abs(r["reference_agreement"] - share) < 1e-6 and r["retained"] == kept
        assert (r["reference_votes"], r["reference_answers"]) == (votes, answers)
    print(f"{'step':<34}{'biaskit (s)':>12}{'loop (s)':>12}{'speed-up':>10}")
    print(f"{'per-term table (>= 3 of 5)':<34}{t_ours:>12.2f}{t_loop:>12.2f}{t_loop / t_ours:>9.1f}x")
    rest = t_ours - timings["prepare"]
    print(f"{'  without input validation':<34}{rest:>12.2f}{t_loop:>12.2f}{t_loop / rest:>9.1f}x")
    print(
        "(same figures for every term; biaskit's table also has the per-term Fleiss / alpha in "
        "`annotate agreement`, not timed here)"
    )


if __name__ == "__main__":
    main()
