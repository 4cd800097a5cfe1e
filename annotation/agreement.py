"""Inter-annotator agreement: Krippendorff's alpha, Fleiss' kappa, pairwise Cohen's kappa, percent agreement.

Computed from the same sparse vote counts as :mod:`.aggregate` (an *item* is a ``(task,
question)``; ``n_i`` annotators answered it; ``n_ij`` of them chose label ``j``):

- **Krippendorff's alpha** (Krippendorff 2011, "Computing Krippendorff's Alpha-Reliability"): the
  ``krippendorff`` package on the item x label value-count matrix, nominal by default (interval /
  ordinal / ratio for numeric labels). Items with one answer are not pairable and do not count.
- **Fleiss' kappa** (Fleiss 1971): ``P_i = (sum_j n_ij^2 - n_i) / (n_i (n_i - 1))``,
  ``P = mean_i P_i``, ``p_j = sum_i n_ij / sum_i n_i``, ``P_e = sum_j p_j^2``,
  ``kappa = (P - P_e) / (1 - P_e)`` over items with ``n_i >= 2``. With the same number of
  annotators on every item this is exactly Fleiss' statistic; with varying ``n_i`` it is the usual
  generalisation (each item's ``P_i`` uses its own ``n_i``).
- **Mean pairwise Cohen's kappa** (Cohen 1960): for every pair of annotators sharing at least
  ``min_overlap`` items, ``(p_o - p_e) / (1 - p_e)`` on their shared items (``p_e`` from each
  annotator's own label distribution on those items); the unweighted mean over pairs (and the
  overlap-weighted mean). Pairs with ``p_e = 1`` (both always gave the same single label) have no
  defined kappa and are counted, not averaged.
- **Percent agreement**: the mean over items of ``P_i``, the share of agreeing annotator pairs.
- **Agreement with the majority** (per annotator): the share of their answers equal to the item's
  unique plurality label, over items with ``n_i >= 2`` and no tie (their own vote included).
- **Retention** at threshold ``k``: items whose plurality label has ``>= k`` votes (StereoSet kept
  a CAT at 3 of 5, IndiBias a tuple at 2 of 3).

- **Agreement with the reference label, per target term and domain** (StereoSet's Table 10 and its
  >= 3 of 5 retention): :mod:`.targets`, where the definition is; ``per_target`` in the report and
  ``agreement_targets.csv``.

Pooled figures (the top level of the report) treat every question's labels as distinct categories
(``question=label``); ``per_question`` has each question alone.
"""

from __future__ import annotations

from pathlib import Path
from typing import Any, cast

import numpy as np

from biaskit.errors import InputError, require
from biaskit.tables import md_table, num

from .aggregate import Counts, count_votes, counts_of_codes, factorize, prepare

LEVELS = ("nominal", "ordinal", "interval", "ratio")


def _f(x: Any) -> float | None:
    if x is None:
        return None
    x = float(x)
    return None if not np.isfinite(x) else round(x, 6)


def _dense(c: Counts) -> tuple[np.ndarray, np.ndarray]:
    """(items x used-labels) count matrix and the label codes of its columns (counts as int32)."""
    used, col = np.unique(c.label, return_inverse=True)
    m = np.zeros((c.n_items, len(used)), dtype=np.int32)
    m[c.item, col] = c.count
    return m, used


def krippendorff_alpha(c: Counts, level: str = "nominal") -> float | None:
    if level not in LEVELS:
        raise InputError(f"unknown level of measurement '{level}'.", fix=f"use one of {', '.join(LEVELS)}.")
    keep = c.n >= 2
    if keep.sum() == 0:
        return None
    m, used = _dense(c)
    m = m[keep]
    nz = m.sum(axis=0) > 0
    m, used = m[:, nz], used[nz]
    if m.shape[1] < 2:  # one category only: no variation, alpha undefined (0/0)
        return None
    require("krippendorff", "annotation", "Krippendorff's alpha")
    vals: np.ndarray = np.arange(m.shape[1], dtype=np.float64)
    if level != "nominal":
        try:
            vals = np.array([float(x) for x in c.labels[used]])
        except ValueError:
            raise InputError(
                f"level '{level}' needs numeric labels, got e.g. '{c.labels[used][0]}'.",
                fix="use --level nominal for categories.",
            ) from None
        order = np.argsort(vals)
        m, vals = m[:, order], vals[order]
    return _f(alpha_from_counts(m, vals, level))


def alpha_from_counts(value_counts: np.ndarray, value_domain: np.ndarray, level: str = "nominal") -> float:
    """Krippendorff's alpha of a units x values count matrix, as ``krippendorff.alpha(value_counts=...,
    value_domain=..., level_of_measurement=level)`` computes it (the package's coincidence, expected and
    distance matrices), with the coincidence matrix summed per number of pairable values: units that
    have ``m`` values add ``(n n^T - diag n) / (m - 1)``, whose sum over those units is a matrix of
    integers (summed here a block of units at a time, exactly). The package builds a units x values x
    values array for it (a million units of five values: three arrays of 200 MB)."""
    counts = np.asarray(value_counts)
    V = counts.shape[1]
    pairable = np.maximum(counts.sum(axis=1), 2)
    sums: dict[int, np.ndarray] = {}
    step = 1 << 17
    for lo in range(0, len(counts), step):
        block, m_block = counts[lo : lo + step].astype(np.float64), pairable[lo : lo + step]
        for m in np.unique(m_block).tolist():
            rows = block[m_block == m]
            part = rows.T @ rows - np.diag(rows.sum(axis=0))  # whole numbers: exact in any order
            sums[m] = sums[m] + part if m in sums else part
    o = np.zeros((V, V))
    for m in sorted(sums):
        o += sums[m] / (m - 1)
    n_v = o.sum(axis=0)
    e = (np.outer(n_v, n_v) - np.diagflat(n_v)) / (n_v.sum() - 1)
    d = _distance_matrix(np.asarray(value_domain), n_v, level)
    with np.errstate(invalid="ignore", divide="ignore"):  # no disagreement expected: 0/0, alpha undefined
        return float(1 - (o * d).sum() / (e * d).sum())


def _distance_matrix(domain: np.ndarray, n_v: np.ndarray, level: str) -> np.ndarray:
    """The ``krippendorff`` package's squared distances between the values of an ordered domain."""
    v1, v2 = domain[:, np.newaxis], domain[np.newaxis, :]
    if level == "nominal":
        return (v1 != v2).astype(np.float64)
    if level == "interval":
        return ((v1 - v2) ** 2).astype(np.float64)
    if level == "ratio":
        s = v1 + v2
        return np.divide(v1 - v2, s, out=np.zeros(np.broadcast(v1, v2).shape), where=s != 0) ** 2
    idx = np.arange(len(domain))
    i1, i2 = np.minimum(idx[:, np.newaxis], idx[np.newaxis, :]), np.maximum(idx[:, np.newaxis], idx[np.newaxis, :])
    ranges = np.dstack((i1, i2 + 1))
    between = np.add.reduceat(np.append(n_v, 0), ranges.reshape(-1))[::2].reshape(*i1.shape)
    return (between - (n_v[i1] + n_v[i2]) / 2) ** 2


def fleiss_kappa(c: Counts) -> tuple[float | None, float | None, np.ndarray]:
    """(kappa, percent agreement, per-item P_i with NaN where n_i < 2)."""
    n = c.n.astype(np.float64)
    sq = np.bincount(c.item, weights=c.count.astype(np.float64) ** 2, minlength=c.n_items)
    with np.errstate(divide="ignore", invalid="ignore"):
        p_i = np.where(n >= 2, (sq - n) / (n * (n - 1)), np.nan)
    ok = n >= 2
    if not ok.any():
        return None, None, p_i
    p_bar = float(np.mean(p_i[ok]))
    sel = ok[c.item]
    tot = np.bincount(c.label[sel], weights=c.count[sel].astype(np.float64), minlength=len(c.labels))
    p_j = tot / tot.sum()
    p_e = float(np.sum(p_j**2))
    kappa = None if np.isclose(p_e, 1.0) else (p_bar - p_e) / (1 - p_e)
    return _f(kappa), _f(p_bar), p_i


def pairwise_cohen(df, min_overlap: int = 2) -> dict:
    """Cohen's kappa for every annotator pair sharing ``>= min_overlap`` items (vectorised).

    ``df``: prepared judgments (task, question, worker, label). Returns the mean, the
    overlap-weighted mean, the number of pairs used and of pairs without a defined kappa.
    All co-annotations are enumerated in numpy: rows sorted by item, row ``r`` paired with row
    ``r + d`` (d = 1 .. max annotators - 1) when both belong to the same item; each slice of rows is
    reduced to counts per annotator pair (and per pair and label) at once, so memory stays at a slice.
    """
    import pandas as pd

    res: dict[str, Any] = {
        "mean_pairwise_cohen_kappa": None,
        "weighted_pairwise_cohen_kappa": None,
        "n_pairs": 0,
        "n_pairs_undefined": 0,
        "min_overlap": min_overlap,
    }
    if len(df) == 0:
        return res
    t_codes, t_uni = factorize(df["task"])
    q_codes, q_uni = factorize(df["question"])
    item = t_codes.astype(np.int64) * len(q_uni) + q_codes if len(q_uni) > 1 else t_codes
    w_codes, w_uni = factorize(df["worker"])
    l0, l0_uni = factorize(df["label"])  # labels of different questions are different categories
    if len(q_uni) > 1:
        l_codes, l_uni = pd.factorize(q_codes.astype(np.int64) * max(len(l0_uni), 1) + l0, sort=False)
    else:
        l_codes, l_uni = l0, l0_uni
    small = np.int32 if max(len(t_uni) * len(q_uni), len(w_uni), len(l_uni)) < 1 << 31 else np.int64
    if len(item) > 1 and bool(np.all(item[1:] >= item[:-1])):  # rows already grouped by item (one question)
        it, w, lab = item.astype(small), w_codes.astype(small), l_codes.astype(small)
    else:
        order = np.argsort(item, kind="stable")
        it, w, lab = item[order].astype(small), w_codes[order].astype(small), l_codes[order].astype(small)
        del order
    del item
    starts = np.flatnonzero(np.r_[True, it[1:] != it[:-1], True])
    max_n = int(np.diff(starts).max())  # the most annotators on one item
    W, L = len(w_uni), len(l_uni)
    pairs = _PairCounts(W, L)
    step = 1 << 20
    for d in range(1, max_n):
        for lo in range(0, len(it) - d, step):
            hi = min(lo + step, len(it) - d)
            m = it[lo:hi] == it[lo + d : hi + d]
            a, b, la, lb = w[lo:hi][m], w[lo + d : hi + d][m], lab[lo:hi][m], lab[lo + d : hi + d][m]
            swap = a > b
            lo_w, hi_w = np.where(swap, b, a).astype(np.int64), np.where(swap, a, b).astype(np.int64)
            pairs.add(lo_w, hi_w, np.where(swap, lb, la).astype(np.int64), np.where(swap, la, lb).astype(np.int64))
    if not pairs.n:
        return res
    pu, n, agree, k1, c1, k2, c2 = pairs.result()
    # marginals per (pair, label), sparse: sum_l c1[p, l] * c2[p, l]
    common, i1, i2 = np.intersect1d(k1, k2, assume_unique=True, return_indices=True)
    pe_num = np.bincount(common // L, weights=c1[i1].astype(np.float64) * c2[i2], minlength=len(pu))
    keep = n >= min_overlap
    if not keep.any():
        return res
    po = agree[keep] / n[keep]
    pe = pe_num[keep] / n[keep] ** 2
    defined = ~np.isclose(pe, 1.0)
    kappa = (po[defined] - pe[defined]) / (1 - pe[defined])
    res["n_pairs"] = int(defined.sum())
    res["n_pairs_undefined"] = int((~defined).sum())
    if len(kappa):
        res["mean_pairwise_cohen_kappa"] = _f(kappa.mean())
        res["weighted_pairwise_cohen_kappa"] = _f(np.average(kappa, weights=n[keep][defined]))
    return res


class _PairCounts:
    """Co-annotations of annotator pairs ``(a, b)``, ``a < b``, added slice by slice: per pair the items
    shared and agreed on, and per (pair, label) how often ``a`` / ``b`` gave it. Counted in dense arrays
    when annotators x annotators x labels is small (a few thousand annotators), else as sparse int64 keys."""

    DENSE = 1 << 23

    def __init__(self, n_workers: int, n_labels: int):
        self.W, self.L = n_workers, n_labels
        self.n = 0
        self.dense = n_workers * n_workers * max(n_labels, 1) <= self.DENSE
        if self.dense:
            P = n_workers * n_workers
            self._n, self._agree = np.zeros(P, np.int64), np.zeros(P, np.int64)
            self._c1, self._c2 = np.zeros(P * n_labels, np.int64), np.zeros(P * n_labels, np.int64)
        self._parts: list[tuple[np.ndarray, ...]] = []

    def add(self, a: np.ndarray, b: np.ndarray, la: np.ndarray, lb: np.ndarray) -> None:
        if not len(a):
            return
        self.n += len(a)
        pair = a * self.W + b
        if self.dense:
            P = len(self._n)
            self._n += np.bincount(pair, minlength=P)
            self._agree += np.bincount(pair[la == lb], minlength=P)
            self._c1 += np.bincount(pair * self.L + la, minlength=P * self.L)
            self._c2 += np.bincount(pair * self.L + lb, minlength=P * self.L)
            return
        self._parts.append(
            (
                *_count(pair),
                *_count(pair[la == lb]),
                *_count(pair * self.L + la),
                *_count(pair * self.L + lb),
            )
        )
        if len(self._parts) >= 16:
            self._parts = [self._merged()]

    def _merged(self) -> tuple[np.ndarray, ...]:
        if self.dense:
            out: list[np.ndarray] = []
            for arr in (self._n, self._agree, self._c1, self._c2):
                k = np.flatnonzero(arr)
                out += [k, arr[k]]
            return tuple(out)
        out = []
        for j in range(0, 8, 2):
            out += _count(np.concatenate([p[j] for p in self._parts]), np.concatenate([p[j + 1] for p in self._parts]))
        return tuple(out)

    def result(self):
        """(pairs, shared, agreed, (pair, label) keys of a and counts, of b and counts); pairs as keys
        ``a * W + b`` in increasing order (float counts, as the kappas use them)."""
        pu, n, ak, ac, k1, c1, k2, c2 = self._merged()
        agree = np.zeros(len(pu))
        agree[np.searchsorted(pu, ak)] = ac
        # (pair, label) keys over pair *indices*, as numpy.unique(..., return_inverse) would number them
        idx1, idx2 = np.searchsorted(pu, k1 // self.L), np.searchsorted(pu, k2 // self.L)
        return pu, n.astype(np.float64), agree, idx1 * self.L + k1 % self.L, c1, idx2 * self.L + k2 % self.L, c2


def _count(keys: np.ndarray, weights: np.ndarray | None = None) -> list[np.ndarray]:
    """Distinct keys (increasing) and how many times each occurs (or the sum of its ``weights``)."""
    if weights is None:
        u, c = np.unique(keys, return_counts=True)
        return [u, c.astype(np.int64)]
    u, inv = np.unique(keys, return_inverse=True)
    return [u, np.bincount(inv.ravel(), weights=weights, minlength=len(u)).astype(np.int64)]


def _majority_label(c: Counts) -> tuple[np.ndarray, np.ndarray, np.ndarray]:
    """Per item: plurality label code (-1 on ties), its votes, tie flag."""
    if c.n_items == 0:
        e = np.zeros(0, dtype=np.int64)
        return e, e, e.astype(bool)
    starts = np.flatnonzero(np.r_[True, c.item[1:] != c.item[:-1]])
    top = np.maximum.reduceat(c.count, starts)
    is_top = c.count == top[c.item]
    n_top = np.bincount(c.item[is_top], minlength=c.n_items)
    win = np.full(c.n_items, -1, dtype=np.int64)
    sel = is_top & (n_top[c.item] == 1)
    win[c.item[sel]] = c.label[sel]
    return win, top, n_top > 1


def _namespaced(df):
    """The labels as ``question=label`` (each question's labels are categories of their own)."""
    import pandas as pd

    q_codes, q_uni = factorize(df["question"])
    l_codes, l_uni = factorize(df["label"])
    codes, first = pd.factorize(q_codes.astype(np.int64) * max(len(l_uni), 1) + l_codes, sort=False)
    names = [f"{q_uni[k // len(l_uni)]}={l_uni[k % len(l_uni)]}" for k in first.tolist()]
    merged, uniq = pd.factorize(np.asarray(names, dtype=object), sort=False)  # 'a=b' + 'c' is 'a' + 'b=c'
    return df.assign(label=pd.Categorical.from_codes(merged[codes], categories=pd.Index(uniq, dtype="str")))


def metrics(df, *, level: str = "nominal", min_overlap: int = 2) -> dict:
    """All agreement statistics for one set of prepared judgments (labels namespaced by question)."""
    d = _namespaced(df) if df["question"].nunique() > 1 else df
    c = count_votes(d)
    kappa, pct, p_i = fleiss_kappa(c)
    out: dict[str, Any] = {
        "krippendorff_alpha": krippendorff_alpha(c, level) if level == "nominal" or d is df else None,
        "fleiss_kappa": kappa,
        "percent_agreement": pct,
        "n_items": int(c.n_items),
        "n_items_multi": int((c.n >= 2).sum()),
        "n_judgments": int(len(df)),
        "n_annotators": int(df["worker"].nunique()) if len(df) else 0,
    }
    if len(df) and level != "nominal" and d is not df:
        out["krippendorff_alpha_note"] = "non-nominal alpha is computed per question only"
    out.update(pairwise_cohen(df, min_overlap))
    win, top, tie = _majority_label(c)
    out["mean_majority_share"] = _f(np.mean(top / c.n)) if c.n_items else None
    if c.n_items:
        out["annotators_per_item"] = {"min": int(c.n.min()), "max": int(c.n.max()), "mean": _f(c.n.mean())}
    return out


def retention(c: Counts) -> list[dict]:
    if c.n_items == 0:
        return []
    _, top, _ = _majority_label(c)
    vals, cnts = np.unique(c.n, return_counts=True)
    modal = int(vals[np.argmax(cnts)])
    out = []
    for k in range(1, int(c.n.max()) + 1):
        kept = int((top >= k).sum())
        out.append(
            {
                "k": k,
                "of": modal,
                "threshold": f">={k} of {modal}" if len(vals) == 1 else f">={k} votes",
                "retained": kept,
                "rate": _f(kept / c.n_items),
            }
        )
    return out


def per_annotator(df, c: Counts) -> list[dict]:
    import pandas as pd

    win, top, tie = _majority_label(c)
    item = c.row_item
    l_codes, l_uni = factorize(df["label"])
    lab_codes = pd.Index(c.labels).get_indexer(l_uni)[l_codes] if len(l_uni) else l_codes
    usable = (c.n[item] >= 2) & ~tie[item]
    agree = (lab_codes == win[item]) & usable
    w_codes, w_uni = factorize(df["worker"])
    n_items = np.bincount(w_codes, minlength=len(w_uni))
    n_compared = np.bincount(w_codes, weights=usable, minlength=len(w_uni)).astype(np.int64)
    n_agree = np.bincount(w_codes, weights=agree, minlength=len(w_uni)).astype(np.int64)
    # plain lists, not iterrows: StereoSet-sized sets have thousands of annotators (sorted by annotator)
    return [
        {
            "worker": w_uni[k],
            "n_items": int(n_items[k]),
            "n_compared": int(n_compared[k]),
            "agreement_with_majority": _f(int(n_agree[k]) / int(n_compared[k])) if n_compared[k] else None,
        }
        for k in np.argsort(np.asarray(w_uni, dtype=str), kind="stable").tolist()
    ]


def item_table(df, c: Counts):

    win, top, tie = _majority_label(c)
    _, _, p_i = fleiss_kappa(c)
    out = c.items.copy()
    out["n_annotators"] = c.n
    out["majority_label"] = np.where(  # type: ignore[call-overload]  # numpy stubs: None is a valid (object) scalar
        win >= 0, c.labels[np.maximum(win, 0)] if len(c.labels) else None, None
    )
    out["majority_votes"] = top
    out["majority_share"] = np.round(top / np.maximum(c.n, 1), 6)
    out["tie"] = tie
    out["pairwise_agreement"] = np.round(p_i, 6)
    return out


def core_stats(df, level: str = "nominal") -> dict:
    """Fleiss' kappa, percent agreement and Krippendorff's alpha of a subset (per target term)."""
    t, _ = factorize(df["task"])
    q, q_uni = factorize(df["question"])
    lab, l_uni = factorize(df["label"])
    return codes_stats(t, q, q_uni, lab, l_uni, level)


def codes_stats(task, question, questions, label, labels, level: str = "nominal") -> dict:
    """:func:`core_stats` of rows given as codes in order of first appearance (``pandas.factorize``), with
    the distinct questions and labels: labels namespaced by question when there are several."""
    import pandas as pd

    several = len(questions) > 1
    if several:  # question=label, as _namespaced
        pairs, first = pd.factorize(question.astype(np.int64) * max(len(labels), 1) + label, sort=False)
        names = [f"{questions[k // len(labels)]}={labels[k % len(labels)]}" for k in first.tolist()]
        merged, uniq = pd.factorize(np.asarray(names, dtype=object), sort=False)
        label, labels = merged[pairs], np.asarray(uniq, dtype=object)
    c = counts_of_codes(task, question, len(questions), label, labels)
    kappa, pct, _ = fleiss_kappa(c)
    alpha = krippendorff_alpha(c, level) if level == "nominal" or not several else None
    return {
        "fleiss_kappa": kappa,
        "percent_agreement": pct,
        "krippendorff_alpha": alpha,
        "n_items_multi": int((c.n >= 2).sum()),
    }


def by_value(df, col: str):
    """``(value, rows of df)`` for each value of a column, sorted by value as text: what
    ``df.groupby(col, sort=True)`` gives on the values present, through integer codes."""
    codes, values = factorize(df[col])
    for _, group in _by_code(df, codes, values):
        yield group


def _by_code(df, codes: np.ndarray, values: Any):
    """``(code, (value, rows of df))`` for each value of ``values`` the rows' ``codes`` use, sorted by value as text."""
    values = np.asarray(values, dtype=object)
    for k in np.argsort(values.astype(str), kind="stable").tolist():
        mask = codes == k
        if mask.any():
            yield k, (values[k], df[mask])


def agreement(
    judgments,
    *,
    level: str = "nominal",
    min_overlap: int = 2,
    duplicates: str = "error",
    data_path: str | Path | None = None,
    source: str | None = None,
    min_agree: int | None = None,
):
    """The full report (dict) and the per-item table (DataFrame).

    With target terms (from ``data_path`` records or a ``target`` judgment column) the report has
    ``per_target``: StereoSet's per-term agreement with its counts (:mod:`.targets`); ``min_agree``
    is the retention threshold of those tables (default: a strict majority of the usual number of
    annotators per item, 3 of 5)."""
    from biaskit.readers.columnar import give_back_memory

    from . import targets

    prep = prepare(judgments, duplicates=duplicates, source=source, keep=("bias_type", "target", "reference"))
    full = prep.frame
    give_back_memory()  # what preparing freed, before the statistics
    df = full[[c for c in ("task", "question", "worker", "label") if c in full.columns]]  # what subsets carry
    if len(df) == 0:
        raise InputError(
            "no judgments with a label: agreement is undefined.",
            path=source,
            fix="pull or collect annotations first (text answers are not counted).",
        )
    report: dict[str, Any] = metrics(df, level=level, min_overlap=min_overlap)
    give_back_memory()
    report["level_of_measurement"] = level
    report["n_missing_labels"] = prep.n_missing
    report["n_text_skipped"] = prep.n_text
    q_codes, q_uni = factorize(df["question"])
    report["questions"] = sorted(str(q) for q in q_uni)
    questions = report["questions"]
    if len(questions) == 1:  # the pooled figures are this question's
        report["per_question"] = {
            questions[0]: {
                k: v
                for k, v in report.items()
                if k not in ("level_of_measurement", "n_missing_labels", "n_text_skipped", "questions")
            }
        }
    else:
        report["per_question"] = {
            q: metrics(sub, level=level, min_overlap=min_overlap) for _, (q, sub) in _by_code(df, q_codes, q_uni)
        }
    for _, (q, sub) in _by_code(df, q_codes, q_uni):
        report["per_question"][q]["retention"] = retention(count_votes(sub))
    info = targets.task_info(data_path)
    c = count_votes(df)
    known = targets.resolve_codes(full, info, c)
    _, top, _ = _majority_label(c)
    ref_label, ref_votes = known.ref, targets.reference_votes(c, known.ref)
    if min_agree is None:
        min_agree = cast(int, targets.default_min_agree(c))  # not None: df has judgments, so c has items
    elif min_agree < 1:
        raise InputError(f"--min-agree must be at least 1, got {min_agree}.", fix="use e.g. 3 (StereoSet: 3 of 5).")
    tasks = targets.task_table(c, ref_votes, top, min_agree)
    report.update(targets.summarize_tasks(tasks, min_agree))
    report["reference_agreement_definition"] = targets.DEFINITION
    report["per_bias_type"] = {}
    if known.has("bias_type"):
        bt_task, bt_names = known.named_tasks("bias_type")
        tasks_bt = bt_task[tasks["task_code"].to_numpy()]
        for k, (b, sub) in _by_code(df, bt_task[known.row_task], bt_names):
            report["per_bias_type"][b] = {
                **metrics(sub, level=level, min_overlap=min_overlap),
                **targets.summarize_tasks(tasks[tasks_bt == k], min_agree),
            }
    report["per_target"] = targets.target_rows(
        df, tasks, known, min_agree, lambda t, q, qs, lab, labs: codes_stats(t, q, qs, lab, labs, level)
    )
    report["per_annotator"] = per_annotator(df, c)
    report["retention"] = retention(c)
    items = item_table(df, c)
    if any(x is not None for x in ref_label):
        items["reference_label"] = ref_label
        items["reference_votes"] = ref_votes
    if report["per_target"] or report["per_bias_type"]:
        for name in ("bias_type", "target"):
            if known.has(name):
                items[name] = known.raw_tasks(name)[c.item_task]
    return report, items


def _fmt(x: Any) -> str:
    return num(x, 3)


def to_markdown(rep: dict) -> str:
    lines = [
        "# Inter-annotator agreement",
        "",
        f"{rep['n_judgments']} judgments, {rep['n_items']} items (task x question; {rep['n_items_multi']} with "
        f"2+ answers), {rep['n_annotators']} annotators; questions: {', '.join(rep['questions'])}.",
        "",
    ]
    if rep.get("collection"):
        lines += [f"**Adaptive overlap.** {rep['collection']['note'][0].upper()}{rep['collection']['note'][1:]}.", ""]
    stats = [
        [f"Krippendorff's alpha ({rep['level_of_measurement']})", _fmt(rep["krippendorff_alpha"])],
        ["Fleiss' kappa", _fmt(rep["fleiss_kappa"])],
        [f"mean pairwise Cohen's kappa ({rep['n_pairs']} pairs)", _fmt(rep["mean_pairwise_cohen_kappa"])],
        ["percent agreement (pairwise)", _fmt(rep["percent_agreement"])],
        ["mean majority share", _fmt(rep["mean_majority_share"])],
    ]
    k = rep.get("min_agree")
    if rep.get("reference_agreement") is not None:
        stats.append(
            [
                f"agreement with the reference label, per example ({rep['n_reference_tasks']} examples; "
                f"{rep['reference_votes']} of {rep['reference_answers']} answers)",
                _fmt(rep["reference_agreement"]),
            ]
        )
    if k is not None:
        on = "reference label" if rep.get("reference_agreement") is not None else "majority label"
        stats.append(
            [
                f"examples retained (every item's {on} >= {k} votes)",
                f"{rep['retained']} of {rep['n_tasks']} ({_fmt(rep['retention_rate'])})",
            ]
        )
    lines += [md_table(["statistic", "value"], stats), ""]

    def table(title: str, groups: dict) -> None:
        if not groups:
            return
        lines.extend(
            [
                f"## {title}",
                "",
                md_table(
                    ["", "items", "alpha", "Fleiss", "Cohen (mean)", "% agree"],
                    [
                        [
                            k,
                            m["n_items"],
                            _fmt(m["krippendorff_alpha"]),
                            _fmt(m["fleiss_kappa"]),
                            _fmt(m["mean_pairwise_cohen_kappa"]),
                            _fmt(m["percent_agreement"]),
                        ]
                        for k, m in groups.items()
                    ],
                ),
                "",
            ]
        )

    table("Per question", rep["per_question"])
    table("Per bias type", rep["per_bias_type"])
    if rep["per_bias_type"] and k is not None:
        lines.extend(
            [
                f"## Per bias type, as StereoSet (retained: >= {k} votes)",
                "",
                md_table(
                    [
                        "bias type",
                        "examples",
                        "agreement with reference",
                        "votes / answers",
                        "majority share",
                        "retained",
                    ],
                    [
                        [
                            b,
                            m["n_tasks"],
                            _fmt(m["reference_agreement"]),
                            f"{m['reference_votes']} / {m['reference_answers']}",
                            _fmt(m["majority_share"]),
                            f"{m['retained']} ({_fmt(m['retention_rate'])})",
                        ]
                        for b, m in rep["per_bias_type"].items()
                    ],
                ),
                "",
            ]
        )
    from .targets import markdown as target_markdown

    lines.extend(target_markdown(rep))
    lines.extend(
        [
            "## Retention (items whose majority label has at least k votes)",
            "",
            md_table(
                ["threshold", "retained", "rate"],
                [[r["threshold"], r["retained"], _fmt(r["rate"])] for r in rep["retention"]],
            ),
            "",
            "## Per annotator",
            "",
            md_table(
                ["annotator", "items", "compared", "agreement with majority"],
                [
                    [a["worker"], a["n_items"], a["n_compared"], _fmt(a["agreement_with_majority"])]
                    for a in rep["per_annotator"]
                ],
            ),
            "",
        ]
    )
    return "\n".join(lines)


def agreement_report(judgments_path: str | Path, out_dir: str | Path, *, command: str | None = None, **kw) -> dict:
    """Read judgments, write ``DIR/agreement.json``, ``DIR/agreement.md``, ``DIR/agreement_items.csv``
    and, with target terms, ``DIR/agreement_targets.csv`` (``command``: the command line recorded in
    agreement.json). The folder is published whole (:func:`biaskit.io.atomic_dir`)."""
    from biaskit.io import atomic_dir, atomic_write_text, write_json, write_table
    from biaskit.readers import read_judgments

    from .aggregate import judgment_columns

    keep = ("bias_type", "target", "reference")
    df = read_judgments(judgments_path, columns=judgment_columns(kw.get("duplicates", "error"), keep=keep))
    rep, items = agreement(df, source=str(judgments_path), **kw)
    rep["per_item_file"] = "agreement_items.csv"
    if len(df) and "settled_by" in df.columns:  # pulled from a project with adaptive overlap
        from .status import ADAPTIVE_ALPHA_NOTE

        rep["collection"] = {"overlap": "adaptive", "note": ADAPTIVE_ALPHA_NOTE}
    if command is not None:
        rep["command"] = command
    with atomic_dir(out_dir, owns=AGREEMENT_FILES) as out:
        write_table(out / "agreement_items.csv", items)
        if rep["per_target"]:
            import pandas as pd

            from .targets import TARGET_COLUMNS

            rep["per_target_file"] = "agreement_targets.csv"
            write_table(out / "agreement_targets.csv", pd.DataFrame(rep["per_target"], columns=list(TARGET_COLUMNS)))
        write_json(out / "agreement.json", rep)
        atomic_write_text(out / "agreement.md", to_markdown(rep))
    return rep


AGREEMENT_FILES = ("agreement.json",)  # what an earlier output folder of agreement_report holds
