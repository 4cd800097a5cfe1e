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
from typing import TYPE_CHECKING, Any, cast

import numpy as np

from biaskit.errors import InputError, require
from biaskit.options import say
from biaskit.tables import md_table, num

from .aggregate import Counts, prepare
from .subsets import Coded, Groups, Pairs, co_annotations, code

if TYPE_CHECKING:
    from .judgment_options import AgreementOptions

LEVELS = ("nominal", "ordinal", "interval", "ratio")


def _f(x: Any) -> float | None:
    if x is None:
        return None
    x = float(x)
    return None if not np.isfinite(x) else round(x, 6)


def _dense(c: Counts) -> tuple[np.ndarray, np.ndarray]:
    """(items x used-labels) count matrix and the label codes of its columns (counts as int32)."""
    used = np.flatnonzero(np.bincount(c.label, minlength=len(c.labels)))  # as numpy.unique, without a sort
    col = np.zeros(len(c.labels), dtype=np.int64)
    col[used] = np.arange(len(used))
    m = np.zeros((c.n_items, len(used)), dtype=np.int32)
    m[c.item, col[c.label]] = c.count
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
                fix=f"use {say('level', 'nominal')} for categories.",
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
    overlap-weighted mean, the number of pairs used and of pairs without a defined kappa
    (the pairs enumerated in numpy: :func:`.subsets.co_annotations`)."""
    if len(df) == 0:
        return _kappas(*(np.zeros(0),) * 3, min_overlap)
    coded = code(df)
    pairs = _pooled_pairs(coded)
    return _cohen(pairs, np.arange(len(coded.workers)), min_overlap)


def _pooled_pairs(coded: Coded) -> tuple[np.ndarray, ...]:
    one = np.zeros(coded.counts.n_items, dtype=np.int8)
    return co_annotations(coded, one, 1).grouped(np.zeros(1, dtype=np.int64), 1)[0]


def _cohen(pairs: tuple[np.ndarray, ...], rank: np.ndarray, min_overlap: int) -> dict:
    """:func:`pairwise_cohen` of one group's pair counts (:meth:`.subsets.Pairs.grouped`); ``rank``: each
    worker's number in the group (the pairs are averaged in the order of those numbers, as on the group's
    rows alone)."""
    a, b, shared, agreed, marginals = pairs
    ra, rb = rank[a], rank[b]
    order = np.argsort(np.minimum(ra, rb) * max(len(rank), 1) + np.maximum(ra, rb), kind="stable")
    return _kappas(shared[order], agreed[order], marginals[order], min_overlap)


def _kappas(n: np.ndarray, agree: np.ndarray, pe_num: np.ndarray, min_overlap: int) -> dict:
    """The kappas of annotator pairs: ``n`` items shared, ``agree`` agreed on, ``pe_num`` the sum over labels
    of the two annotators' counts multiplied (chance agreement times ``n`` squared)."""
    res: dict[str, Any] = {
        "mean_pairwise_cohen_kappa": None,
        "weighted_pairwise_cohen_kappa": None,
        "n_pairs": 0,
        "n_pairs_undefined": 0,
        "min_overlap": min_overlap,
    }
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


def _majority_label(c: Counts) -> tuple[np.ndarray, np.ndarray, np.ndarray]:
    """Per item: plurality label code (-1 on ties), its votes, tie flag."""
    if c.n_items == 0:
        e = np.zeros(0, dtype=np.int64)
        return e, e, e.astype(bool)
    sizes = np.bincount(c.item, minlength=c.n_items)  # entries are sorted by item, each item has some
    top = np.maximum.reduceat(c.count, np.cumsum(sizes) - sizes)
    is_top = c.count == top[c.item]
    n_top = np.bincount(c.item[is_top], minlength=c.n_items)
    win = np.full(c.n_items, -1, dtype=np.int64)
    sel = is_top & (n_top[c.item] == 1)
    win[c.item[sel]] = c.label[sel]
    return win, top, n_top > 1


def metrics(df, *, level: str = "nominal", min_overlap: int = 2) -> dict:
    """All agreement statistics for one set of prepared judgments (labels namespaced by question)."""
    coded = code(df)
    groups = Groups(coded, np.zeros(coded.counts.n_items, dtype=np.int8), None, 1)
    c, several = groups.counts(0)
    head, tail = _count_figures(c, several, groups.n_judgments(0), groups.n_workers(0), level)
    return {**head, **_cohen(_pooled_pairs(coded), groups.worker_rank(0), min_overlap), **tail}


def _count_figures(
    c: Counts, several: bool, n_judgments: int, n_annotators: int, level: str, top: np.ndarray | None = None
) -> tuple[dict, dict]:
    """:func:`metrics` of a group's votes (:meth:`.subsets.Groups.counts`) but Cohen's kappa: the figures
    before it and those after it (``top``: each item's most votes, when known)."""
    kappa, pct, _ = fleiss_kappa(c)
    head: dict[str, Any] = {
        "krippendorff_alpha": krippendorff_alpha(c, level) if level == "nominal" or not several else None,
        "fleiss_kappa": kappa,
        "percent_agreement": pct,
        "n_items": int(c.n_items),
        "n_items_multi": int((c.n >= 2).sum()),
        "n_judgments": n_judgments,
        "n_annotators": n_annotators,
    }
    if level != "nominal" and several:
        head["krippendorff_alpha_note"] = "non-nominal alpha is computed per question only"
    if top is None:
        _, top, _ = _majority_label(c)
    tail: dict[str, Any] = {"mean_majority_share": _f(np.mean(top / c.n)) if c.n_items else None}
    if c.n_items:
        tail["annotators_per_item"] = {"min": int(c.n.min()), "max": int(c.n.max()), "mean": _f(c.n.mean())}
    return head, tail


def retention(c: Counts, top: np.ndarray | None = None) -> list[dict]:
    """Items whose majority label has at least k votes, for every k (``top``: each item's most votes, when known)."""
    if c.n_items == 0:
        return []
    if top is None:
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


def per_annotator(coded: Coded, win: np.ndarray, tie: np.ndarray) -> list[dict]:
    """Per annotator: items answered, items compared with the majority (2+ answers, no tie), agreement with it;
    ``win``, ``tie``: :func:`_majority_label` of ``coded.counts``."""
    c = coded.counts
    item = c.row_item
    usable = (c.n[item] >= 2) & ~tie[item]
    agree = (coded.label == win[item]) & usable
    W = len(coded.workers)
    n_items = np.bincount(coded.worker, minlength=W)
    n_compared = np.bincount(coded.worker, weights=usable, minlength=W).astype(np.int64)
    n_agree = np.bincount(coded.worker, weights=agree, minlength=W).astype(np.int64)
    names = np.asarray(coded.workers, dtype=object)
    # plain lists, not iterrows: StereoSet-sized sets have thousands of annotators (sorted by annotator)
    return [
        {
            "worker": names[k],
            "n_items": int(n_items[k]),
            "n_compared": int(n_compared[k]),
            "agreement_with_majority": _f(int(n_agree[k]) / int(n_compared[k])) if n_compared[k] else None,
        }
        for k in np.argsort(names.astype(str), kind="stable").tolist()
    ]


def item_table(coded: Coded, win: np.ndarray, top: np.ndarray, tie: np.ndarray):
    """One row per item: task, question, annotators, the majority label, its votes and share, tie, pairwise
    agreement (text columns categorical: a million items are written in a second)."""
    import pandas as pd

    c = coded.counts
    assert c.item_task is not None and c.item_question is not None  # coded by prepare: set
    _, _, p_i = fleiss_kappa(c)
    return pd.DataFrame(
        {
            "task": _categorical(c.item_task, coded.tasks),
            "question": _categorical(c.item_question, coded.questions),
            "n_annotators": c.n,
            "majority_label": _categorical(win, c.labels),
            "majority_votes": top,
            "majority_share": np.round(top / np.maximum(c.n, 1), 6),
            "tie": tie,
            "pairwise_agreement": np.round(p_i, 6),
        }
    )


def _categorical(codes: np.ndarray, values: Any):
    """A categorical column of ``values[codes]`` (-1: missing), the values distinct text."""
    import pandas as pd

    from biaskit.readers.columnar import categorical

    index = values if isinstance(values, pd.Index) else pd.Index(np.asarray(values, dtype=object), dtype="str")
    return categorical(np.asarray(codes, dtype=np.int64), index)


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
    annotators per item, 3 of 5).

    Every subset -- the whole set, each question, each bias type, each target term -- is a group of
    the items of one set of codes (:mod:`.subsets`): one pass over the judgments for all of them."""
    prep = _prepared(judgments, duplicates, source)
    return _agreement_of(prep, level=level, min_overlap=min_overlap, data_path=data_path, min_agree=min_agree)


def _agreement_of(
    prep, *, level: str = "nominal", min_overlap: int = 2, data_path: str | Path | None = None, min_agree=None
):
    """:func:`agreement` of prepared judgments (:func:`_prepared`)."""
    from . import targets

    coded = code(prep.frame)
    run = _Run(coded, level, min_overlap)  # the whole set and each question first: errors in this order
    known = targets.resolve_codes(prep.frame, targets.task_info(data_path), coded)
    min_agree = _min_agree(min_agree, coded.counts)
    win, top, tie = _majority_label(coded.counts)
    ref_votes = targets.reference_votes_of_codes(coded.counts, known.ref_code, known.ref_names)
    tasks = targets.task_table(coded.counts, ref_votes, top, min_agree, task_ids=coded.tasks)
    run.add_bias_types(known)
    run.add_cohen()
    report: dict[str, Any] = {
        **run.metrics("pooled", 0),
        "level_of_measurement": level,
        "n_missing_labels": prep.n_missing,
        "n_text_skipped": prep.n_text,
        "questions": sorted(str(q) for q in coded.questions),
        "per_question": run.per_question(),
        **targets.summarize_tasks(tasks, min_agree),
        "reference_agreement_definition": targets.DEFINITION,
        "per_bias_type": run.per_bias_type(tasks, min_agree),
        "per_target": targets.target_rows(tasks, known, min_agree, run.target_stats),
        "per_annotator": per_annotator(coded, win, tie),
        "retention": retention(coded.counts, top),
    }
    return report, _items(coded, known, report, win, top, tie, ref_votes)


def _items(coded: Coded, known, report: dict, win, top, tie, ref_votes):
    """:func:`item_table` with each item's reference label and votes and its task's bias type and target."""
    items = item_table(coded, win, top, tie)
    if known.has_reference():
        items["reference_label"] = known.reference_labels()
        items["reference_votes"] = ref_votes
    if report["per_target"] or report["per_bias_type"]:
        for name in ("bias_type", "target"):
            if known.has(name):
                items[name] = known.per_item(name, coded.counts.item_task)
    return items


def _prepared(judgments, duplicates: str, source: str | None):
    """:func:`~.aggregate.prepare`'s frame of the judgments (refused when no judgment has a label)."""
    from biaskit.readers.columnar import give_back_memory

    prep = prepare(judgments, duplicates=duplicates, source=source, keep=("bias_type", "target", "reference"))
    give_back_memory()  # what preparing freed, before the statistics
    if len(prep.frame) == 0:
        raise InputError(
            "no judgments with a label: agreement is undefined.",
            path=source,
            fix="pull or collect annotations first (text answers are not counted).",
        )
    return prep


def _min_agree(min_agree: int | None, c: Counts) -> int:
    from .targets import default_min_agree

    if min_agree is None:
        return cast(int, default_min_agree(c))  # not None: there are judgments, so items
    if min_agree < 1:
        raise InputError(
            f"{say('min_agree')} must be at least 1, got {min_agree}.", fix="use e.g. 3 (StereoSet: 3 of 5)."
        )
    return min_agree


def _sorted_by_name(names: Any, present: np.ndarray) -> list[tuple[int, str]]:
    """``(code, name)`` of the groups with items, sorted by name as text (as ``groupby(sort=True)``)."""
    names = np.asarray(names, dtype=object)
    return [(k, names[k]) for k in np.argsort(names.astype(str), kind="stable").tolist() if present[k]]


class _Run:
    """The statistics of one :func:`agreement` call, group by group: the whole set and each question (at
    once, as their errors come first), each bias type, each target term; Cohen's kappas of the first three
    from one pass over the pairs of annotators (:meth:`add_cohen`). The groups' vote counts are let go once
    their figures are computed."""

    def __init__(self, coded: Coded, level: str, min_overlap: int):
        self.coded, self.level, self.min_overlap = coded, level, min_overlap
        c = coded.counts
        assert c.item_question is not None  # coded by prepare: set
        n_q = len(coded.questions)
        self.names: dict[str, list[tuple[int, str]]] = {"pooled": [(0, "")]}
        self.names["question"] = _sorted_by_name(coded.questions, np.ones(n_q, dtype=bool))
        self.partial: dict[str, dict[int, tuple[dict, dict]]] = {}  # (figures before Cohen's, after)
        self.ranks: dict[str, dict[int, np.ndarray]] = {}  # each group's numbering of the workers
        self.retention: dict[int, list[dict]] = {}  # per question
        self.full: dict[str, dict[int, dict]] = {}
        self.bias_task: np.ndarray | None = None
        self._count("pooled", Groups(coded, np.zeros(c.n_items, dtype=np.int8), None, 1), retained=n_q == 1)
        if n_q > 1:
            self._count("question", Groups(coded, c.item_question, coded.question, n_q), retained=True)

    def _count(self, kind: str, groups: Groups, retained: bool = False) -> None:
        self.partial[kind], self.ranks[kind] = {}, {}
        for k, _ in self.names[kind]:
            c, several = groups.counts(k)
            _, top, _ = _majority_label(c)
            n_judgments, n_workers = groups.n_judgments(k), groups.n_workers(k)
            self.partial[kind][k] = _count_figures(c, several, n_judgments, n_workers, self.level, top)
            self.ranks[kind][k] = groups.worker_rank(k)
            if retained:
                self.retention[k] = retention(c, top)

    def add_bias_types(self, known) -> None:
        """Groups of the items by their task's bias type (none when no bias type is known)."""
        if not known.has("bias_type"):
            return
        c = self.coded.counts
        self.bias_task, names = known.named_tasks("bias_type")
        per_item = self.bias_task[c.item_task]
        self.names["bias_type"] = _sorted_by_name(names, np.bincount(per_item, minlength=len(names)) > 0)
        self._count("bias_type", Groups(self.coded, per_item, self.bias_task[self.coded.task], len(names)))

    def add_cohen(self) -> None:
        """Cohen's kappas of every group counted so far, from one pass over the pairs of annotators: each
        item's pairs counted per (question, bias type), then summed per question, per bias type and in all."""
        c = self.coded.counts
        assert c.item_task is not None and c.item_question is not None  # coded by prepare: set
        n_q = len(self.coded.questions)
        n_b = int(self.bias_task.max()) + 1 if self.bias_task is not None else 1
        bias = self.bias_task[c.item_task] if self.bias_task is not None else np.zeros(c.n_items, np.int64)
        pairs = _fine_pairs(self.coded, c.item_question.astype(np.int64) * n_b + bias, n_q * n_b)
        fine = np.arange(n_q * n_b)
        coarse = {"pooled": (fine * 0, 1), "question": (fine // n_b, n_q), "bias_type": (fine % n_b, n_b)}
        for kind, partial in self.partial.items():
            per_group, ranks = pairs(*coarse[kind]), self.ranks[kind]
            self.full[kind] = {
                k: {**head, **_cohen(per_group[k], ranks[k], self.min_overlap), **tail}
                for k, (head, tail) in partial.items()
            }

    def metrics(self, kind: str, k: int) -> dict:
        return self.full[kind][k]

    def per_question(self) -> dict:
        """Per question (by name): :func:`metrics` of its judgments and their :func:`retention`."""
        figures = self.full["question" if len(self.coded.questions) > 1 else "pooled"]
        return {str(q): {**figures[k], "retention": self.retention[k]} for k, q in self.names["question"]}

    def per_bias_type(self, tasks, min_agree: int) -> dict:
        """Per bias type (by name): :func:`metrics` of its judgments and StereoSet's figures of its tasks."""
        from .targets import summarize_tasks, task_columns

        if self.bias_task is None:
            return {}
        tasks_bt = self.bias_task[tasks["task_code"].to_numpy()]
        cols = task_columns(tasks)
        return {
            str(b): {**self.full["bias_type"][k], **summarize_tasks(task_columns(cols, tasks_bt == k), min_agree)}
            for k, b in self.names["bias_type"]
        }

    def target_stats(self, group_of_task: np.ndarray, n: int) -> list[dict]:
        """Per group of tasks (a target term): its judgments, annotators, Fleiss' kappa, percent
        agreement, Krippendorff's alpha and items with 2+ answers (:func:`.targets.target_rows`)."""
        coded, level = self.coded, self.level
        groups = Groups(coded, group_of_task[coded.counts.item_task], group_of_task[coded.task], n)
        out = []
        for g in range(n):
            c, several = groups.counts(g)
            kappa, pct, _ = fleiss_kappa(c)
            alpha = krippendorff_alpha(c, level) if level == "nominal" or not several else None
            out.append(
                {
                    "n_judgments": groups.n_judgments(g),
                    "n_annotators": groups.n_workers(g),
                    "fleiss_kappa": kappa,
                    "percent_agreement": pct,
                    "krippendorff_alpha": alpha,
                    "n_items_multi": int((c.n >= 2).sum()),
                }
            )
        return out


def _fine_pairs(coded: Coded, fine: np.ndarray, n_fine: int):
    """``pairs(coarse, n)``: the co-annotations summed per group of fine groups (:meth:`.subsets.Pairs.grouped`),
    from one pass when annotator pairs x fine groups x labels fit in 62 bits, else one pass per grouping."""
    W, L = max(len(coded.workers), 1), max(len(coded.combo_question), 1)
    if n_fine * W * W * L < 1 << 62:
        counted: Pairs = co_annotations(coded, fine, n_fine)
        return counted.grouped

    def separately(coarse: np.ndarray, n: int) -> list:
        return co_annotations(coded, coarse[fine], n).grouped(np.arange(n), n)

    return separately


def _fmt(x: Any) -> str:
    return num(x, 3)


def to_markdown(rep: dict) -> str:
    """agreement.md: the pooled statistics, then per question, per bias type (and as StereoSet), per target
    term, retention and per annotator."""
    from .targets import markdown as target_markdown

    lines = _md_summary(rep)
    lines += _md_groups("Per question", rep["per_question"])
    lines += _md_groups("Per bias type", rep["per_bias_type"])
    lines += _md_bias_types_as_stereoset(rep)
    lines += target_markdown(rep)
    lines += _md_retention_and_annotators(rep)
    return "\n".join(lines)


def _md_summary(rep: dict) -> list[str]:
    """The title, what was counted, the adaptive-overlap note and the table of pooled statistics."""
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
    return lines + [md_table(["statistic", "value"], stats), ""]


def _md_groups(title: str, groups: dict) -> list[str]:
    """A section with the statistics of each group (question, bias type); nothing without groups."""
    if not groups:
        return []
    rows = [
        [
            k,
            m["n_items"],
            _fmt(m["krippendorff_alpha"]),
            _fmt(m["fleiss_kappa"]),
            _fmt(m["mean_pairwise_cohen_kappa"]),
            _fmt(m["percent_agreement"]),
        ]
        for k, m in groups.items()
    ]
    return [f"## {title}", "", md_table(["", "items", "alpha", "Fleiss", "Cohen (mean)", "% agree"], rows), ""]


def _md_bias_types_as_stereoset(rep: dict) -> list[str]:
    """Per bias type, StereoSet's figures (agreement with the reference, retention at ``min_agree``)."""
    k = rep.get("min_agree")
    if not rep["per_bias_type"] or k is None:
        return []
    header = ["bias type", "examples", "agreement with reference", "votes / answers", "majority share", "retained"]
    rows = [
        [
            b,
            m["n_tasks"],
            _fmt(m["reference_agreement"]),
            f"{m['reference_votes']} / {m['reference_answers']}",
            _fmt(m["majority_share"]),
            f"{m['retained']} ({_fmt(m['retention_rate'])})",
        ]
        for b, m in rep["per_bias_type"].items()
    ]
    return [f"## Per bias type, as StereoSet (retained: >= {k} votes)", "", md_table(header, rows), ""]


def _md_retention_and_annotators(rep: dict) -> list[str]:
    retained = [[r["threshold"], r["retained"], _fmt(r["rate"])] for r in rep["retention"]]
    people = [
        [a["worker"], a["n_items"], a["n_compared"], _fmt(a["agreement_with_majority"])] for a in rep["per_annotator"]
    ]
    return [
        "## Retention (items whose majority label has at least k votes)",
        "",
        md_table(["threshold", "retained", "rate"], retained),
        "",
        "## Per annotator",
        "",
        md_table(["annotator", "items", "compared", "agreement with majority"], people),
        "",
    ]


def agreement_report(opts: AgreementOptions, *, command: str | None = None) -> dict:
    """``annotate agreement``: read ``opts.judgments``, write ``OUT/agreement.json``, ``OUT/agreement.md``,
    ``OUT/agreement_items.csv`` and, with target terms, ``OUT/agreement_targets.csv`` (``command``: the
    command line recorded in agreement.json). The folder is published whole (:func:`biaskit.io.atomic_dir`)."""
    from biaskit.io import atomic_dir, atomic_write_text, write_json, write_table
    from biaskit.readers import read_judgments

    from .aggregate import judgment_columns

    keep = ("bias_type", "target", "reference")
    df = read_judgments(opts.judgments, columns=judgment_columns(opts.duplicates, keep=keep))
    adaptive = bool(len(df)) and "settled_by" in df.columns  # pulled from a project with adaptive overlap
    prep = _prepared(df, opts.duplicates, str(opts.judgments))
    del df  # the prepared codes are all the statistics need
    rep, items = _agreement_of(
        prep, level=opts.level, min_overlap=opts.min_overlap, data_path=opts.data, min_agree=opts.min_agree
    )
    rep["per_item_file"] = "agreement_items.csv"
    if adaptive:
        from .adaptive import ADAPTIVE_ALPHA_NOTE

        rep["collection"] = {"overlap": "adaptive", "note": ADAPTIVE_ALPHA_NOTE}
    if command is not None:
        rep["command"] = command
    with atomic_dir(opts.out, owns=AGREEMENT_FILES) as out:
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
