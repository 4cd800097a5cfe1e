"""Benchmark: how many human judgments adaptive overlap saves, and what it changes.

Replays (``biaskit.annotation.replay.replay``, the function behind ``biaskit annotate replay``)
synthetic crowds with known worker accuracies, under both stopping policies:

- ``stereoset``: like StereoSet's released validator labels (Nadeem et al. 2021, sec. 4.3): CATs
  of three sentences, five validators per CAT from a pool of 60 (accuracies ~ N(0.85, 0.05)), errors
  spread over the two other labels, the writer's label wrong on 1% of sentences; the rule ">= 3 of
  5 gave the writer's label". The released file holds the CATs StereoSet kept: CATs the rule rejects
  are kept with probability 0.05 only, so about 99% of the CATs are accepted; Krippendorff's alpha
  about 0.66. Replayed per sentence (``unit=item``: StereoSet's "five validators per sentence") and
  per CAT (``unit=task``: a Label Studio task holds the three sentences).
- ``hard``: the same validators on CATs with 32% hard sentences (half ambiguous: each vote gives
  the writer's label with probability 0.4; half mislabelled by the writer), nothing filtered, so
  that about 30% of the sentences are rejected.
- ``tuples``: IndiBias's tuple rule: three annotators say whether a tuple is a prevalent
  stereotype, accepted by >= 2 of 3 (``--min-agree 2``); accuracies ~ N(0.85, 0.07).

For each it prints Krippendorff's alpha and the full-overlap acceptance of the crowd, then per
policy the judgments used and saved, the decisions that differ from full overlap and the time, and
the straightforward implementation's time for the settled check (a brute force over every way the
remaining votes can fall) against biaskit's closed form on the same states, with their ratio.

With ``--stereoset-dev FILE`` it also replays StereoSet's released validator labels (the original
``dev.json``, through ``annotate from-stereoset``'s reader), which is not in the offline mirror.

Run: ``python benchmarks/adaptive_overlap.py [--items N] [--seed S] [--stereoset-dev dev.json]``.
"""

from __future__ import annotations

import argparse
import itertools
import time

import numpy as np
import pandas as pd

CAT_LABELS = ("stereotype", "anti-stereotype", "unrelated")


def cat_crowd(
    n_cats: int,
    *,
    seed: int = 0,
    n_per: int = 5,
    n_workers: int = 60,
    skill_mean: float = 0.875,
    skill_sd: float = 0.05,
    writer_wrong: float = 0.01,
    hard_share: float = 0.0,
    released: float | None = None,
) -> pd.DataFrame:
    """Judgments of the ``cat`` kind (``task, worker, question, label, kind``) for ``n_cats`` CATs.

    ``released``: keep the CATs StereoSet's rule retains (>= 3 of 5 on each sentence), as the released
    file holds the CATs StereoSet kept, and this share of the others (None: keep every CAT)."""
    rng = np.random.default_rng(seed)
    skill = np.clip(rng.normal(skill_mean, skill_sd, n_workers), 0.34, 0.995)
    rows: list = []
    c = 0
    while c < n_cats:
        workers = rng.choice(n_workers, n_per, replace=False)
        cat_rows, kept = [], True
        for gi, gold in enumerate(CAT_LABELS):
            truth = gi
            ambiguous = False
            r = rng.random()
            if r < hard_share / 2:
                ambiguous = True
            elif r < hard_share or rng.random() < writer_wrong:
                truth = (gi + rng.integers(1, 3)) % 3
            agree = 0
            for w in workers:
                if ambiguous:
                    lab = gi if rng.random() < 0.4 else (gi + rng.integers(1, 3)) % 3
                elif rng.random() < skill[w]:
                    lab = truth
                else:
                    lab = (truth + rng.integers(1, 3)) % 3
                agree += lab == gi
                cat_rows.append((f"c-{c:06d}", f"v{w:02d}", f"option_{gold}", CAT_LABELS[lab]))
            kept = kept and agree >= 3
        if released is not None and not kept and rng.random() >= released:
            continue
        rows += cat_rows
        c += 1
    df = pd.DataFrame(rows, columns=["task", "worker", "question", "label"])
    df["kind"] = "cat"
    return df


def tuple_crowd(
    n: int,
    *,
    seed: int = 0,
    n_per: int = 3,
    n_workers: int = 30,
    skill_mean: float = 0.85,
    skill_sd: float = 0.07,
    yes_share: float = 0.6,
) -> pd.DataFrame:
    """Judgments of the ``tuple`` kind (question ``stereotype``, yes / no) for ``n`` tuples."""
    rng = np.random.default_rng(seed)
    skill = np.clip(rng.normal(skill_mean, skill_sd, n_workers), 0.3, 0.995)
    rows = []
    for i in range(n):
        truth = rng.random() < yes_share
        for w in rng.choice(n_workers, n_per, replace=False):
            said = truth if rng.random() < skill[w] else not truth
            rows.append((f"t-{i:06d}", f"a{w:02d}", "stereotype", "yes" if said else "no"))
    df = pd.DataFrame(rows, columns=["task", "worker", "question", "label"])
    df["kind"] = "tuple"
    return df


def crowd_facts(df: pd.DataFrame, kind: str, min_agree=None) -> dict:
    """Krippendorff's alpha and the share of items / tasks accepted at full overlap."""
    from biaskit.annotation.adaptive import task_votes
    from biaskit.annotation.aggregate import prepare
    from biaskit.annotation.agreement import metrics
    from biaskit.annotation.kinds import get_kind

    k = get_kind(kind)
    rules = k.decision_rules(min_agree)
    tv = task_votes(df)
    items = [k.accepts(rules[q].outcome(t.counts(q))) for t in tv.values() for q in rules if t.votes.get(q)]
    tasks = [k.accepts(k.task_outcome({q: rules[q].outcome(t.counts(q)) for q in rules})) for t in tv.values()]
    alpha = metrics(prepare(df).df)["krippendorff_alpha"]
    return {"alpha": alpha, "items_accepted": float(np.mean(items)), "tasks_accepted": float(np.mean(tasks))}


def brute_settled(rule, counts: dict, remaining: int) -> bool:
    """The straightforward settled check: every sequence of up to ``remaining`` further votes."""
    base = rule.outcome(counts)
    labels = rule.all_labels(counts)
    for m in range(1, remaining + 1):
        for seq in itertools.product(labels, repeat=m):
            c = dict(counts)
            for lab in seq:
                c[lab] = c.get(lab, 0) + 1
            if rule.outcome(c) != base:
                return False
    return True


def time_settled_check(df: pd.DataFrame, kind: str, max_j: int, min_agree=None, limit: int = 3000) -> dict:
    """Closed form vs brute force on the item states of the crowd (first 1..max_j votes of each)."""
    from biaskit.annotation.adaptive import task_votes
    from biaskit.annotation.kinds import get_kind

    rules = get_kind(kind).decision_rules(min_agree)
    states = []
    for t in list(task_votes(df).values())[:limit]:
        for q, vs in t.votes.items():
            for n in range(1, min(max_j, len(vs)) + 1):
                c: dict = {}
                for _, lab in vs[:n]:
                    c[lab] = c.get(lab, 0) + 1
                states.append((rules[q], c, max_j - n))
    t0 = time.perf_counter()
    fast = [r.settled(c, R) for r, c, R in states]
    t_fast = time.perf_counter() - t0
    t0 = time.perf_counter()
    slow = [brute_settled(r, c, R) for r, c, R in states]
    t_slow = time.perf_counter() - t0
    assert fast == slow, "closed form and brute force disagree"
    return {
        "states": len(states),
        "closed_form_s": t_fast,
        "brute_force_s": t_slow,
        "ratio": t_slow / max(t_fast, 1e-9),
    }


SCENARIOS = {
    # name: (crowd builder, kind, min_judgments, max_judgments, min_agree, units)
    "stereoset": (
        lambda n, s: cat_crowd(n, seed=s, skill_mean=0.85, released=0.05),
        "cat",
        2,
        5,
        None,
        ("item", "task"),
    ),
    "hard": (
        lambda n, s: cat_crowd(n, seed=s + 1, skill_mean=0.85, hard_share=0.32),
        "cat",
        2,
        5,
        None,
        ("item", "task"),
    ),
    "tuples": (lambda n, s: tuple_crowd(3 * n, seed=s + 2), "tuple", 2, 3, 2, ("task",)),
}


def run(items: int, seed: int, epsilons=(0.01, 0.02), stereoset_dev=None, out=None) -> list[dict]:
    from biaskit.annotation.adaptive import AdaptiveSettings
    from biaskit.annotation.replay import replay

    results = []
    todo = [(name, *spec) for name, spec in SCENARIOS.items()]
    if stereoset_dev:
        from biaskit.annotation.stereoset_labels import stereoset_judgments

        dev, _ = stereoset_judgments(stereoset_dev)
        todo.append(("stereoset-dev", lambda n, s: dev, "cat", 2, 5, None, ("item", "task")))

    # (policy, epsilon, first judgments): the scenario's K for both policies, and the risk policy also
    # from a single first judgment (K = 1: a task stops there when the model says one more vote cannot
    # plausibly change it; the goal ">= 50% saved, <= 1% changed" at the default epsilon needs it)
    def policies(kmin):
        out = [("exact", 0.01, kmin)] + [("risk", e, kmin) for e in epsilons]
        return out + ([("risk", e, 1) for e in epsilons] if kmin > 1 else [])

    for name, build, kind, kmin, kmax, min_agree, units in todo:
        df = build(items, seed)
        facts = crowd_facts(df, kind, min_agree)
        print(
            f"\n== {name}: {df['task'].nunique()} tasks, {len(df)} judgment rows; Krippendorff's alpha "
            f"{facts['alpha']:.3f}; accepted at full overlap: {facts['items_accepted']:.1%} of items, "
            f"{facts['tasks_accepted']:.1%} of tasks; {kmin}..{kmax} judgments",
            flush=True,
        )
        chk = time_settled_check(df, kind, kmax, min_agree)
        print(
            f"   settled check on {chk['states']} vote states: closed form {chk['closed_form_s']:.3f} s, "
            f"straightforward brute force {chk['brute_force_s']:.3f} s ({chk['ratio']:.1f}x), same answers"
        )
        for unit in units:
            for policy, eps, k in policies(kmin):
                st = AdaptiveSettings(
                    policy=policy, min_judgments=k, max_judgments=kmax, epsilon=eps, min_agree=min_agree
                )
                t0 = time.perf_counter()
                rep = replay(df, st, kind=kind, unit=unit)
                secs = time.perf_counter() - t0
                label = (policy if policy == "exact" else f"risk@{eps:g}") + f" K={k}"
                print(
                    f"   {unit:>4} {label:>13}: {rep['judgments_used']:>6} of {rep['judgments_full']:>6} judgments "
                    f"({rep['saved_share']:.1%} saved), {rep['decisions_changed']} of {rep['tasks']} decisions "
                    f"changed ({rep['changed_share']:.2%}), retention {rep['retention_adaptive']:.1%} vs "
                    f"{rep['retention_full']:.1%}, alpha {rep['alpha_collected']} collected vs {rep['alpha_full']} "
                    f"full, {secs:.1f} s",
                    flush=True,
                )
                results.append(
                    {
                        "crowd": name,
                        "unit": unit,
                        "epsilon": eps if policy == "risk" else None,
                        "min_judgments": k,
                        **{
                            k: rep[k]
                            for k in (
                                "policy",
                                "tasks",
                                "judgments_full",
                                "judgments_used",
                                "saved_share",
                                "decisions_changed",
                                "changed_share",
                                "retention_full",
                                "retention_adaptive",
                                "alpha_full",
                                "alpha_collected",
                            )
                        },
                        "alpha": facts["alpha"],
                        "seconds": round(secs, 2),
                    }
                )
    if out:
        from biaskit.io import write_json

        write_json(out, results)
    return results


def main() -> None:
    ap = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    ap.add_argument("--items", type=int, default=2000, help="CATs per crowd (tuples: 3x as many)")
    ap.add_argument("--seed", type=int, default=0)
    ap.add_argument(
        "--epsilon",
        type=float,
        action="append",
        default=None,
        help="risk policy bound(s) to run (repeatable; default 0.01 and 0.02)",
    )
    ap.add_argument("--stereoset-dev", default=None, help="StereoSet's original dev.json (with validator labels)")
    ap.add_argument("--out", default=None, help="also write the figures as JSON here")
    a = ap.parse_args()
    run(a.items, a.seed, tuple(a.epsilon or (0.01, 0.02)), a.stereoset_dev, a.out)


if __name__ == "__main__":
    main()
