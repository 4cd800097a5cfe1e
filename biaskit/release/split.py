"""Dev/test splits disjoint by target term, stratified, seeded (StereoSet §6.1).

StereoSet split its CATs "based on the target terms: 25% of the target terms and their instances for
the development set and 75% for the hidden test set", with the terms of the two sets disjoint. Here a
*unit* is a target term (a pair's ``group_more``, a CAT's ``target``, a tuple's ``identity``): all
records of one target go to the same split. Targets are assigned greedily, largest first (ties in a
seeded random order), each to the split whose per-stratum shortfall it reduces most, where a stratum
is ``kind | bias type | direction`` and the goal of the dev split is ``dev_fraction`` of every
stratum's records. When one split would get no record at all, the smallest target goes to it (with
two or more targets): a split cannot be empty. The result depends only on the records, the fraction
and the seed.
"""

from __future__ import annotations

from collections.abc import Iterable, Mapping, Sequence

import numpy as np

from ..errors import InputError
from ..options import tell
from ..schema import normalize_text


def norm_target(t: str | None) -> str:
    return normalize_text(t or "").casefold()


def assign_splits(
    targets: Sequence[str],
    strata: Sequence[str],
    *,
    dev_fraction: float = 0.25,
    seed: int = 0,
    fixed: Mapping[str, str] | None = None,
) -> dict[str, str]:
    """``{target: "dev" | "test"}`` for the targets of the given records (one target and stratum per record).

    ``fixed``: targets whose split is already decided (e.g. by a previous release); they keep it and
    count towards the strata's totals.
    """
    import pandas as pd

    t_codes, t_names = pd.factorize(pd.Series(list(targets), dtype=object), sort=True)
    s_codes, s_names = pd.factorize(pd.Series(list(strata), dtype=object), sort=True)
    counts = np.zeros((len(t_names), len(s_names)), dtype=np.int64)
    np.add.at(counts, (t_codes, s_codes), 1)
    return assign_split_counts(list(t_names), counts, dev_fraction=dev_fraction, seed=seed, fixed=fixed)


def assign_split_counts(
    t_names: Sequence[str],
    counts: np.ndarray,
    *,
    dev_fraction: float = 0.25,
    seed: int = 0,
    fixed: Mapping[str, str] | None = None,
) -> dict[str, str]:
    """:func:`assign_splits` from the records counted per target and stratum: ``counts[i, j]`` records of
    target ``t_names[i]`` in stratum ``j``, targets and strata each in sorted order (a release streamed
    from disk counts them without a list of every record)."""
    if not 0 < dev_fraction < 1:
        raise InputError(
            f"the dev fraction must be between 0 and 1, got {dev_fraction}.",
            fix=f"{tell('dev_fraction', 0.25)} (StereoSet: 25% dev, 75% test).",
        )
    total = counts.sum(axis=0).astype(float)
    goal = np.stack([dev_fraction * total, (1 - dev_fraction) * total])  # [dev, test] x strata
    have = np.zeros_like(goal)
    out: dict[str, str] = {}
    fixed = fixed or {}
    free = []
    for i, t in enumerate(t_names):
        sp = fixed.get(t)
        if sp in ("dev", "test"):
            out[t] = sp
            have[0 if sp == "dev" else 1] += counts[i]
        else:
            free.append(i)
    if not free:
        return out
    free_arr = np.array(free)
    rng = np.random.default_rng(seed)
    tie = rng.permutation(len(free_arr))
    sizes = counts[free_arr].sum(axis=1)
    order = free_arr[np.lexsort((tie, -sizes))]  # largest first, seeded order among equals
    flips = rng.random(len(order))
    for k, i in enumerate(order):
        nz = np.flatnonzero(counts[i])
        c = counts[i, nz]
        # gain of adding c to split j: (goal - have)^2 - (goal - have - c)^2 = 2c(goal - have) - c^2
        gain_dev = float(np.sum(2 * c * (goal[0, nz] - have[0, nz]) - c * c))
        gain_test = float(np.sum(2 * c * (goal[1, nz] - have[1, nz]) - c * c))
        if gain_dev > gain_test or (gain_dev == gain_test and flips[k] < dev_fraction):
            j = 0
        else:
            j = 1
        have[j, nz] += c
        out[t_names[i]] = "dev" if j == 0 else "test"
    for j, sp in enumerate(("dev", "test")):
        if have[j].sum() == 0 and len(order) > 1:
            # a split without any record (few targets, e.g. two groups of very different sizes): move the
            # smallest target there -- Hugging Face `datasets` cannot load an empty split, and a dev set
            # with no data is no dev set
            last = order[-1]
            have[1 - j] -= counts[last]
            have[j] += counts[last]
            out[t_names[last]] = sp
    return out


def split_report_counts(t_names: Sequence[str], s_names: Sequence[str], counts: np.ndarray, split_of: Mapping) -> dict:
    """:func:`split_report` from the records counted per target and stratum (``counts``, rows
    ``t_names``, columns ``s_names``) and each target's split (one per target: leaks are refused before)."""
    if not counts.sum():
        return {"records": {}, "targets": {}, "dev_share_by_stratum": {}, "records_by_stratum": {}}
    per_target = counts.sum(axis=1)
    dev = np.array([split_of[t] == "dev" for t in t_names], dtype=bool)
    rec = {"dev": int(per_target[dev].sum()), "test": int(per_target[~dev].sum())}
    used = per_target > 0
    tg = {"dev": int((dev & used).sum()), "test": int((~dev & used).sum())}
    d_st, n_st = counts[dev].sum(axis=0), counts.sum(axis=0)
    strata = sorted((str(st), int(d), int(n)) for st, d, n in zip(s_names, d_st, n_st, strict=True) if n)
    return {
        "records": rec,
        "targets": tg,
        "dev_share_by_stratum": {st: round(float(d / n), 4) for st, d, n in strata},
        "records_by_stratum": {st: {"dev": d, "test": n - d} for st, d, n in strata},
    }


def find_leaks(targets: Iterable[str], splits: Iterable[str]) -> dict[str, list[str]]:
    """Targets that occur in more than one split: ``{target: sorted splits}``."""
    seen: dict[str, set[str]] = {}
    for t, s in zip(targets, splits, strict=False):
        seen.setdefault(t, set()).add(s)
    return {t: sorted(s) for t, s in seen.items() if len(s) > 1}


def refuse_leaks(
    targets: Sequence[str],
    splits: Sequence[str],
    ids: Sequence[str],
    *,
    path: str | None = None,
    fix: str | None = None,
    n_leaks: int | None = None,
) -> None:
    """Raise :class:`InputError` naming the first leaking target and two of its records (``n_leaks``:
    how many targets leak, when the records given are only the first leaking target's). The default
    ``fix`` names the split policy where the user is (a flag, or the biaskit.toml key under ``biaskit run``)."""
    leaks = find_leaks(targets, splits)
    if not leaks:
        return
    if fix is None:
        fix = (
            f"give each target term one split ({tell('split_policy', 'target')}, or fix the records' "
            "meta.split), so that no target term is in both dev and test."
        )
    t = sorted(leaks)[0]
    ex = {}
    for tt, s, i in zip(targets, splits, ids, strict=False):
        if tt == t and s not in ex:
            ex[s] = i
    where = ", ".join(f"{i} in {s}" for s, i in sorted(ex.items()))
    raise InputError(
        f"target term '{t}' is in both splits ({where}); {n_leaks or len(leaks)} target(s) leak across "
        "dev and test (StereoSet §6.1: the splits must be disjoint by target term).",
        path=path,
        fix=fix,
    )


def split_report(targets: Sequence[str], strata: Sequence[str], splits: Sequence[str]) -> dict:
    """Achieved figures: records and targets per split, and the dev share of every stratum (counted
    in one pass, without a table of every record)."""
    from collections import Counter

    if not len(targets):
        return {"records": {}, "targets": {}, "dev_share_by_stratum": {}, "records_by_stratum": {}}
    rec: Counter = Counter()
    first_split: dict[str, str] = {}
    per_stratum: dict[str, list[int]] = {}
    for t, st, sp in zip(targets, strata, splits, strict=False):
        rec[sp] += 1
        first_split.setdefault(t, sp)
        c = per_stratum.setdefault(st, [0, 0])
        c[0] += sp == "dev"
        c[1] += 1
    tg = Counter(first_split.values())
    return {
        "records": {k: int(rec.get(k, 0)) for k in ("dev", "test")},
        "targets": {k: int(tg.get(k, 0)) for k in ("dev", "test")},
        "dev_share_by_stratum": {st: round(float(d / n), 4) for st, (d, n) in sorted(per_stratum.items())},
        "records_by_stratum": {st: {"dev": d, "test": n - d} for st, (d, n) in sorted(per_stratum.items())},
    }
