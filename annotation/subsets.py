"""The vote counts of many subsets of one set of judgments -- the whole set, each question, each bias
type, each target term -- from one set of integer codes, instead of a pass over the rows per subset.

:func:`code` numbers the prepared judgments once (tasks, questions, workers, labels and each item's
votes: :class:`Coded`). A subset is a *group* of items (an item: one question of one task; all its
judgments fall in its group): :class:`Groups` partitions the items, and :meth:`Groups.counts` gives a
group's votes as a :class:`~.aggregate.Counts` of its own, numbered as
:func:`~.aggregate.count_votes` numbers that subset's rows alone -- items and labels in order of first
appearance among those rows, labels named ``question=label`` when the subset has several questions.
Every statistic computed from it (:mod:`.agreement`) is thus, to the last bit, what it is on the
subset's rows. The pairs of annotators behind Cohen's kappa are enumerated once
(:func:`co_annotations`) and summed per group (:meth:`Pairs.grouped`).
"""

from __future__ import annotations

from dataclasses import dataclass
from typing import Any

import numpy as np

from biaskit.readers.columnar import code_type

from .aggregate import Counts, codes_of, counts_of_codes, factorize, first_appearance, first_positions


@dataclass
class Coded:
    """Prepared judgments as integer codes, each numbered in order of first appearance (as
    ``pandas.factorize``), and their votes per item (``counts``: labels coded as ``label``)."""

    task: np.ndarray  # per row: its task
    tasks: Any  # the tasks' ids (an Index for a categorical column, else an object array)
    question: np.ndarray
    questions: np.ndarray
    worker: np.ndarray
    workers: np.ndarray
    label: np.ndarray
    labels: np.ndarray
    counts: Counts  # per (item, label): votes; counts.row_item: each row's item
    combo: np.ndarray  # per row: its (question, label) pair
    combo_question: np.ndarray  # per pair: its question
    combo_label: np.ndarray  # per pair: its label
    combo_name: np.ndarray  # per pair: its name ``question=label`` (names that read the same are one)
    names: np.ndarray  # the names
    entry_combo: np.ndarray  # per entry of counts: its pair
    entry_start: np.ndarray  # per item: its first entry in counts (one more at the end: the number of entries)

    @property
    def n_rows(self) -> int:
        return len(self.task)


def code(frame) -> Coded:
    """:class:`Coded` of a frame of task, question, worker and label (:func:`~.aggregate.prepare`'s)."""
    import pandas as pd

    task, tasks = codes_of(frame["task"])
    question, questions = factorize(frame["question"])
    worker, workers = factorize(frame["worker"])
    label, labels = factorize(frame["label"])
    c = counts_of_codes(task, question, len(questions), label, labels)
    assert c.item_question is not None  # counts_of_codes sets it
    n_labels = max(len(labels), 1)
    combo, keys = first_appearance(question.astype(np.int64) * n_labels + label, len(questions) * n_labels)
    combo_question, combo_label = keys // n_labels, keys % n_labels
    text = [
        f"{questions[q]}={labels[lab]}" for q, lab in zip(combo_question.tolist(), combo_label.tolist(), strict=True)
    ]
    combo_name, names = pd.factorize(np.asarray(text, dtype=object), sort=False)  # 'a=b' + 'c' is 'a' + 'b=c'
    by_key = np.argsort(keys)
    entry_key = c.item_question.astype(np.int64)[c.item] * n_labels + c.label
    entry_combo = by_key[np.searchsorted(keys[by_key], entry_key)] if len(keys) else entry_key
    del entry_key
    return Coded(
        task=task,
        tasks=tasks,
        question=question,
        questions=questions,
        worker=worker,
        workers=workers,
        label=label,
        labels=labels,
        counts=c,
        combo=combo,
        combo_question=combo_question,
        combo_label=combo_label,
        combo_name=combo_name,
        names=np.asarray(names, dtype=object),
        entry_combo=entry_combo.astype(code_type(len(keys))),
        entry_start=np.searchsorted(c.item, np.arange(c.n_items + 1)),
    )


class Groups:
    """The items of ``coded`` in ``n`` groups: ``item_group`` is each item's group, ``row_group`` each
    row's (the group of its item); ``n == 1``: the whole set (``row_group`` unused). Groups are numbered
    0 .. n-1; a number no item has is an empty group."""

    def __init__(self, coded: Coded, item_group: np.ndarray, row_group: np.ndarray | None, n: int):
        self.coded, self.n = coded, n
        c = coded.counts
        if n == 1:  # the whole set: the items, entries, labels and workers as numbered
            self.item_order = self.entries = None
            self.item_bounds = np.array([0, c.n_items])
            self.entry_bounds = np.array([0, len(c.item)])
            self.entry_item = c.item
            self._appearance = _Appearance.whole(coded)
            return
        small = code_type(max(c.n_items, len(c.item)))
        item_group = item_group.astype(code_type(n), copy=False)  # a radix sort for a few groups
        self.item_order = np.argsort(item_group, kind="stable").astype(small)
        self.item_bounds = np.searchsorted(item_group[self.item_order], np.arange(n + 1))
        sizes = np.diff(coded.entry_start)[self.item_order]
        self.entries = _ranges(coded.entry_start[:-1][self.item_order], sizes).astype(small)
        self.entry_bounds = np.concatenate([[0], np.cumsum(sizes)])[self.item_bounds]
        rank = np.arange(c.n_items, dtype=small) - np.repeat(self.item_bounds[:-1], np.diff(self.item_bounds))
        self.entry_item = np.repeat(rank.astype(small), sizes)  # per entry: its item's number within its group
        assert row_group is not None
        self._appearance = _Appearance(row_group, coded, n)

    def items(self, g: int) -> Any:
        """Group ``g``'s items (increasing; a slice for the whole set)."""
        if self.item_order is None:
            return slice(None)
        return self.item_order[self.item_bounds[g] : self.item_bounds[g + 1]]

    def n_judgments(self, g: int) -> int:
        return int(self.coded.counts.n[self.items(g)].sum())

    def n_workers(self, g: int) -> int:
        return len(self._appearance.workers(g))

    def worker_rank(self, g: int) -> np.ndarray:
        """Per worker: their number in group ``g`` (order of first appearance in its rows; -1: not in it)."""
        workers = self._appearance.workers(g)
        rank = np.full(len(self.coded.workers), -1, dtype=np.int64)
        rank[workers] = np.arange(len(workers))
        return rank

    def counts(self, g: int) -> tuple[Counts, bool]:
        """Group ``g``'s votes as :func:`~.aggregate.count_votes` counts its rows alone (``items`` left
        out), and whether it has several questions (its labels are then ``question=label`` names)."""
        lut, labels, several = self._labels(g)
        lo, hi = self.entry_bounds[g], self.entry_bounds[g + 1]
        entries = self.entries[lo:hi] if self.entries is not None else slice(None)
        items = self.items(g)
        c = self.coded.counts
        local = Counts(
            items=None,
            labels=labels,
            item=self.entry_item[lo:hi],
            label=lut[self.coded.entry_combo[entries]],
            count=c.count[entries],
            n=c.n[items],
            item_task=c.item_task[items] if c.item_task is not None else None,
            item_question=c.item_question[items] if c.item_question is not None else None,
        )
        return local, several

    def _labels(self, g: int) -> tuple[np.ndarray, np.ndarray, bool]:
        """Per (question, label) pair: its label code in group ``g`` (-1: not in it); the group's labels;
        several questions or not."""
        cd = self.coded
        combos = self._appearance.combos(g)  # in order of first appearance
        lut = np.full(len(cd.combo_question), -1, dtype=code_type(len(cd.combo_question)))
        several = len(np.unique(cd.combo_question[combos])) > 1
        if not several:
            lut[combos] = np.arange(len(combos))
            return lut, cd.labels[cd.combo_label[combos]], False
        # a name's first appearance is its first pair's (pairs that read the same are one label)
        codes, order = first_appearance(cd.combo_name[combos], len(cd.names))
        lut[combos] = codes
        return lut, cd.names[order], True


def _ranges(starts: np.ndarray, sizes: np.ndarray) -> np.ndarray:
    """``concatenate([arange(s, s + k) for s, k in zip(starts, sizes)])`` without a loop."""
    ends = np.cumsum(sizes)
    return np.repeat(starts - (ends - sizes), sizes) + np.arange(int(ends[-1]) if len(ends) else 0)


class _Appearance:
    """Per group, the (question, label) pairs and the workers of its rows, each in order of first
    appearance: from the first row of each (group, pair, worker), found in one pass over the rows
    (:func:`~.aggregate.first_appearance`'s backward writes) when there are not too many, else per kind
    with a sort."""

    def __init__(self, row_group: np.ndarray, coded: Coded, n_groups: int):
        n, C, W = coded.n_rows, len(coded.combo_question), len(coded.workers)
        self._combos: list[np.ndarray] = []
        self._workers: list[np.ndarray] = []
        if n_groups * C * W <= max(4 * n, 1 << 20):
            key = row_group.astype(code_type(n_groups * C * W)) * C + coded.combo
            key *= W
            key += coded.worker
            first = first_positions(key, n_groups * C * W).reshape(n_groups, C, W)
            del key
            self._combos = _in_order(first.min(axis=2), n)
            self._workers = _in_order(first.min(axis=1), n)
            return
        for codes, K, out in ((coded.combo, C, self._combos), (coded.worker, W, self._workers)):
            key = row_group.astype(np.int64) * K + codes
            keys, firsts = np.unique(key, return_index=True)
            del key
            group = keys // max(K, 1)
            bounds = np.searchsorted(group, np.arange(n_groups + 1))
            for lo, hi in zip(bounds[:-1].tolist(), bounds[1:].tolist(), strict=True):
                out.append(keys[lo:hi][np.argsort(firsts[lo:hi])] % K)

    @classmethod
    def whole(cls, coded: Coded) -> _Appearance:
        """The whole set: pairs and workers are numbered in order of first appearance."""
        self = cls.__new__(cls)
        self._combos = [np.arange(len(coded.combo_question))]
        self._workers = [np.arange(len(coded.workers))]
        return self

    def combos(self, g: int) -> np.ndarray:
        return self._combos[g]

    def workers(self, g: int) -> np.ndarray:
        return self._workers[g]


def _in_order(first: np.ndarray, n: int) -> list[np.ndarray]:
    """Per row of ``first`` (groups x codes: each code's first row, ``n`` where absent): the codes present,
    in order of their first rows."""
    out = []
    for row in first:
        present = np.flatnonzero(row < n)
        out.append(present[np.argsort(row[present])])
    return out


class Pairs:
    """Co-annotations -- two annotators who answered the same item -- counted per fine group and annotator
    pair (:func:`co_annotations`): items shared, items agreed on, and the pair's label marginals, whose
    products summed over the labels (``sum_l n_a(l) n_b(l)``) are Cohen's chance agreement times the shared
    items squared."""

    def __init__(self, result: tuple | None, n_workers: int, n_labels: int):
        self.result, self.W, self.L = result, n_workers, n_labels

    def grouped(self, coarse: np.ndarray, n_groups: int) -> list[tuple[np.ndarray, ...]]:
        """Per group (``coarse``: the group of each fine group): ``(a, b, shared, agreed, marginals)``
        per annotator pair ``a < b`` (worker codes), the counts summed over the fine groups."""
        empty = np.zeros(0, dtype=np.int64)
        if self.result is None:
            return [(empty, empty, empty.astype(float), empty.astype(float), empty.astype(float))] * n_groups
        W, L = self.W, self.L
        pu, n, agree, k1, c1, k2, c2 = self.result
        key = coarse[pu // (W * W)].astype(np.int64) * (W * W) + pu % (W * W)  # (group, a, b)
        keys, inv = np.unique(key, return_inverse=True)
        inv = inv.ravel()
        shared = np.bincount(inv, weights=n, minlength=len(keys))
        agreed = np.bincount(inv, weights=agree, minlength=len(keys))
        u1, s1 = _sum_by(inv[k1 // L] * L + k1 % L, c1)
        u2, s2 = _sum_by(inv[k2 // L] * L + k2 % L, c2)
        common, i1, i2 = np.intersect1d(u1, u2, assume_unique=True, return_indices=True)
        marg = np.bincount(common // L, weights=s1[i1].astype(np.float64) * s2[i2], minlength=len(keys))
        bounds = np.searchsorted(keys // (W * W), np.arange(n_groups + 1))
        a, b = keys // W % W, keys % W
        return [
            (a[lo:hi], b[lo:hi], shared[lo:hi], agreed[lo:hi], marg[lo:hi])
            for lo, hi in zip(bounds[:-1].tolist(), bounds[1:].tolist(), strict=True)
        ]


def co_annotations(coded: Coded, fine: np.ndarray, n_fine: int, step: int = 1 << 20) -> Pairs:
    """Every pair of annotators on every item, counted per fine group (``fine``: each item's) in one pass.

    The rows sorted by item, row ``r`` is paired with row ``r + d`` (d = 1 .. most annotators on an
    item - 1) when both are of the same item; a slice of rows at a time is reduced to counts per (fine
    group, annotator pair) -- the key ``(f * W + a) * W + b``, ``a < b`` -- and per (key, label), so
    memory stays at a slice. Labels are (question, label) pairs: an item's labels are its question's."""
    item = coded.counts.row_item
    W, L = len(coded.workers), len(coded.combo_question)
    if item is None or len(item) < 2:
        return Pairs(None, W, L)
    if bool(np.all(item[1:] >= item[:-1])):  # already grouped by item (one question, rows of a task together)
        it, lab = item, coded.combo
        fw = fine[it].astype(np.int64) * W + coded.worker  # per row: (fine group, worker)
    else:
        order = np.argsort(item, kind="stable")
        it, lab = item[order], coded.combo[order]
        fw = fine[it].astype(np.int64) * W + coded.worker[order]
        del order
    acc = _PairCounts(n_fine * W * W, L)
    for d in range(1, int(coded.counts.n.max())):
        for lo in range(0, len(it) - d, step):
            hi = min(lo + step, len(it) - d)
            same = it[lo:hi] == it[lo + d : hi + d]
            a, b = fw[lo:hi][same], fw[lo + d : hi + d][same]  # the same fine group: a < b as workers
            la, lb = lab[lo:hi][same].astype(np.int64), lab[lo + d : hi + d][same].astype(np.int64)
            swap = a > b
            pair = np.where(swap, b, a) * W + np.where(swap, a, b) % W
            acc.add(pair, np.where(swap, lb, la), np.where(swap, la, lb))
    return Pairs(acc.result() if acc.n else None, W, L)


class _PairCounts:
    """Co-annotations of annotator pairs (keys in ``[0, n_pairs)``), added slice by slice: per pair the
    items shared and agreed on, and per (pair, label) how often its first / second annotator gave it.
    Counted in dense arrays when pairs x labels is small (a few thousand annotators), else as sparse
    int64 keys."""

    DENSE = 1 << 23

    def __init__(self, n_pairs: int, n_labels: int):
        self.P, self.L = n_pairs, n_labels
        self.n = 0
        self.dense = n_pairs * max(n_labels, 1) <= self.DENSE
        if self.dense:
            self._n, self._agree = np.zeros(n_pairs, np.int64), np.zeros(n_pairs, np.int64)
            self._c1, self._c2 = np.zeros(n_pairs * n_labels, np.int64), np.zeros(n_pairs * n_labels, np.int64)
        self._parts: list[tuple[np.ndarray, ...]] = []

    def add(self, pair: np.ndarray, la: np.ndarray, lb: np.ndarray) -> None:
        if not len(pair):
            return
        self.n += len(pair)
        if self.dense:
            P, L = self.P, self.L
            self._n += np.bincount(pair, minlength=P)
            self._agree += np.bincount(pair[la == lb], minlength=P)
            self._c1 += np.bincount(pair * L + la, minlength=P * L)
            self._c2 += np.bincount(pair * L + lb, minlength=P * L)
            return
        self._parts.append(
            (
                *_sum_by(pair),
                *_sum_by(pair[la == lb]),
                *_sum_by(pair * self.L + la),
                *_sum_by(pair * self.L + lb),
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
            out += _sum_by(np.concatenate([p[j] for p in self._parts]), np.concatenate([p[j + 1] for p in self._parts]))
        return tuple(out)

    def result(self):
        """(pairs, shared, agreed, (pair, label) keys of the first annotator and counts, of the second and
        counts); pairs as keys in increasing order (float counts, as the kappas use them)."""
        pu, n, ak, ac, k1, c1, k2, c2 = self._merged()
        agree = np.zeros(len(pu))
        agree[np.searchsorted(pu, ak)] = ac
        # (pair, label) keys over pair *indices*, as numpy.unique(..., return_inverse) would number them
        idx1, idx2 = np.searchsorted(pu, k1 // self.L), np.searchsorted(pu, k2 // self.L)
        return pu, n.astype(np.float64), agree, idx1 * self.L + k1 % self.L, c1, idx2 * self.L + k2 % self.L, c2


def _sum_by(keys: np.ndarray, weights: np.ndarray | None = None) -> list[np.ndarray]:
    """Distinct keys (increasing) and how many times each occurs (or the sum of its ``weights``)."""
    if weights is None:
        u, c = np.unique(keys, return_counts=True)
        return [u, c.astype(np.int64)]
    u, inv = np.unique(keys, return_inverse=True)
    return [u, np.bincount(inv.ravel(), weights=weights, minlength=len(u)).astype(np.int64)]
