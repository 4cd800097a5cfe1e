"""Aggregate judgments into one label per (task, question), with explicit tie handling.

Input: judgments in crowd-kit's long format (``task, worker, label`` [+ ``question``, ``qtype``,
``updated_at``]). Output: one row per item ``(task, question)`` with the columns

``task, question, label, votes, n_annotators, agreement, status, tie, tied_labels, reason, method``
(+ ``confidence`` for model-based methods).

Definitions (``K`` = ``min_agree``; ``n`` = annotators who answered the question on the task):

- ``votes``: how many of the ``n`` annotators gave ``label``; ``agreement = votes / n``.
- ``tie``: two or more labels share the highest vote count (majority) or the highest posterior
  (model-based methods). Ties are never resolved silently: ``ties='flag'`` (default) leaves
  ``label`` empty, lists the tied labels and sets ``status = needs_adjudication``; ``'drop'``
  leaves the item out (counted in the report); ``'random'`` picks one of the tied labels with a
  seeded hash of (seed, task, question) -- the same pick whatever the row order -- and marks the
  row ``tie = True``.
- ``status``: ``accepted`` when ``votes >= K``; ``rejected`` when ``n >= K`` but ``votes < K``;
  ``needs_adjudication`` for flagged ties and when fewer than ``K`` annotators answered (the item
  cannot reach ``K`` yet: more annotations are needed, ``reason = too_few_annotators``).
  Without ``K`` the rule is a strict majority: accepted when ``votes > n / 2``, else rejected.
  A single annotator is a defined case: ``n = 1``, ``agreement = 1``; accepted by the default
  strict majority, needs_adjudication with ``K >= 2``.
- Missing labels (empty / null): the annotator gave no answer to that question -- no vote; the
  rows are dropped and counted. Text questions (``qtype = text``, e.g. corrected translations)
  are never voted on and are skipped.
- Unknown labels: with ``allowed`` (labels per question, or one set for all questions) a label
  outside it raises :class:`~biaskit.errors.InputError` naming the row, task and annotator.
- The same annotator twice on one (task, question): ``duplicates='error'`` (default) raises with
  the offending task/annotator; ``'last'`` keeps the latest (by ``updated_at``, else ``created_at``, else
  the later row); ``'first'`` the earliest.
- Empty input gives an empty table with the same columns (a defined result, reported as 0 items).

Model-based methods (Dawid-Skene, one-coin Dawid-Skene, GLAD, MACE) come from crowd-kit
and run separately per question; their ``label`` may differ from the plurality, ``votes`` is then
the raw count for their label and ``status`` follows the same vote rule.

Aggregators are classes in the registry :data:`AGGREGATORS` (``--method`` choices), crowd-kit
style: ``AGGREGATORS.create(name, ties=..., seed=..., min_agree=...).fit_predict(df)`` on the
prepared task / question / worker / label frame returns the table above. A new method is an
:class:`Aggregator` subclass registered here (or by a plugin, lazily as ``"module:Class"``).
"""

from __future__ import annotations

import hashlib
import warnings
from collections.abc import Iterable
from dataclasses import dataclass
from typing import TYPE_CHECKING, Any

import numpy as np

from biaskit.errors import InputError, require
from biaskit.options import say
from biaskit.registry import Registry

if TYPE_CHECKING:
    from .judgment_options import AggregateOptions
from .settle import SETTLED_COLUMNS, majority_status, read_settlements, settled_overrides

STATUSES = ("accepted", "rejected", "needs_adjudication")
TIES = ("flag", "drop", "random")
DUPLICATES = ("error", "last", "first")
OUT_COLUMNS = [
    "task",
    "question",
    "label",
    "votes",
    "n_annotators",
    "agreement",
    "status",
    "tie",
    "tied_labels",
    "reason",
    "method",
]

AGGREGATORS: Registry = Registry("aggregation method")


class Prepared:
    """Validated judgments (:func:`prepare`): ``df`` holds task, question, worker and label as text (and the
    kept columns as read); ``frame`` is the same table with those four as pandas ``Categorical`` columns (an
    integer code per row, each value once), what aggregation and agreement compute on. Either is made
    from the other when first asked for."""

    def __init__(
        self,
        df: Any = None,
        *,
        frame: Any = None,
        n_input: int = 0,
        n_missing: int = 0,
        n_text: int = 0,
        n_duplicates_removed: int = 0,
        notes: list[str] | None = None,
    ):
        self._df, self._frame = df, frame
        self.n_input, self.n_missing, self.n_text = n_input, n_missing, n_text
        self.n_duplicates_removed = n_duplicates_removed
        self.notes = notes if notes is not None else []

    @property
    def df(self):
        """task, question, worker, label as text (pandas' string dtype) and the kept columns."""
        if self._df is None:
            f = self._frame
            self._df = f.assign(**{c: f[c].astype("string") for c in CODED if c in f.columns})
        return self._df

    @property
    def frame(self):
        """:attr:`df` with task, question, worker and label as categorical columns."""
        if self._frame is None:
            d = self._df
            self._frame = d.assign(**{c: d[c].astype("category") for c in CODED if c in d.columns})
        return self._frame


CODED = ("task", "question", "worker", "label")  # the columns a prepared frame holds as codes


def _is_missing(series):
    """Null, NaN or blank (vectorised: no Python call per row)."""
    import pandas as pd

    miss = series.isna().to_numpy()
    if pd.api.types.is_numeric_dtype(series.dtype) or pd.api.types.is_bool_dtype(series.dtype):
        return pd.Series(miss, index=series.index)
    blank = series.astype("string").str.strip().eq("").fillna(False).to_numpy(dtype=bool)
    return pd.Series(miss | blank, index=series.index)


def check_columns(df, source: str | None = None) -> None:
    """Judgments need the columns task, worker and label."""
    missing_cols = [c for c in ("task", "worker", "label") if c not in df.columns]
    if missing_cols:
        raise InputError(
            f"missing column(s) {', '.join(missing_cols)} (found: {', '.join(map(str, df.columns))}).",
            path=source,
            fix="judgments need the columns task, worker, label (and optionally question).",
        )


#: the columns :func:`prepare` reads (with ``keep``, ``updated_at`` / ``created_at`` for --duplicates
#: last|first, and the ``settled_*`` columns of adaptive overlap): what a reader needs to load
READ_COLUMNS = ("task", "worker", "label", "question", "qtype")
STAMP_COLUMNS = ("updated_at", "created_at")


def prepare(
    judgments,
    *,
    allowed: dict[str, Iterable[str]] | Iterable[str] | None = None,
    duplicates: str = "error",
    source: str | None = None,
    keep: Iterable[str] = ("bias_type",),
) -> Prepared:
    """Check and normalise judgments (see the module docstring for the rules); ``keep``: columns
    carried along when present (agreement also keeps ``target`` and ``reference``).

    Vectorised on integer codes: each rule is decided once per distinct value of a column (what is
    missing or blank, how a value reads as text: ``1.0`` -> ``'1'``, stripped), then applied to every
    row through its code."""
    import pandas as pd

    if duplicates not in DUPLICATES:
        raise InputError(f"unknown duplicates policy '{duplicates}'.", fix=f"use one of {', '.join(DUPLICATES)}.")
    df = judgments if isinstance(judgments, pd.DataFrame) else pd.DataFrame(list(judgments))
    n_input = len(df)
    if n_input == 0:
        return Prepared(df=pd.DataFrame(columns=["task", "question", "worker", "label"]), n_input=0)
    check_columns(df, source)
    cols, live, n_text, n_missing = _columns_and_live_rows(df, source)
    rows = np.flatnonzero(live)
    del live
    codes = {col: cols[col].text_codes(rows) for col in CODED}  # (codes of the live rows, their text)
    if allowed is not None:
        _check_allowed(codes, rows, allowed, source)
    rows, codes, n_dup_removed = _without_duplicates(df, codes, rows, duplicates, source)
    return Prepared(
        frame=_coded_frame(df, codes, rows, keep),
        n_input=n_input,
        n_missing=n_missing,
        n_text=n_text,
        n_duplicates_removed=n_dup_removed,
    )


def _columns_and_live_rows(df, source: str | None) -> tuple[dict[str, _Column], np.ndarray, int, int]:
    """The coded columns, the rows still in play (no text answer, a label) and how many rows were text answers
    and had no label; an empty task or worker is refused (row ``i`` is the file's data row ``i + 1``)."""
    import pandas as pd

    live = np.ones(len(df), dtype=bool)
    n_text = 0
    if "qtype" in df.columns:
        text = _Column(df["qtype"]).rows(_is_text)
        n_text = int(text.sum())
        live &= ~text
    cols: dict[str, _Column] = {}
    for col in ("task", "worker"):
        cols[col] = c = _Column(df[col])
        bad = live & c.rows(_is_missing)
        if bad.any():
            raise InputError(
                f"empty {col} in {int(bad.sum())} row(s).",
                path=source,
                row=int(np.argmax(bad)) + 1,
                column=col,
                fix=f"every judgment needs a {col}.",
            )
    if "question" in df.columns:
        cols["question"] = _Column(df["question"], blank_as="label")
    else:
        cols["question"] = _Column(
            pd.Series(pd.Categorical.from_codes(np.zeros(len(df), np.int8), pd.Index(["label"])))
        )
    cols["label"] = c = _Column(df["label"])
    miss = live & c.rows(_is_missing)
    live &= ~miss
    return cols, live, n_text, int(miss.sum())


def _without_duplicates(df, codes: dict, rows: np.ndarray, duplicates: str, source: str | None):
    """``(rows, codes, n removed)`` with the answers given twice by one annotator resolved by ``duplicates``
    (``error``: refused, naming the first)."""
    dup_rows = _duplicate_rows(codes)
    if not len(dup_rows):
        return rows, codes, 0
    if duplicates == "error":
        first = int(dup_rows.min())
        names = {col: codes[col][1][codes[col][0][first]] for col in CODED}
        raise InputError(
            f"annotator '{names['worker']}' answered question '{names['question']}' of task '{names['task']}' "
            f"more than once ({_n_groups(codes, dup_rows)} such case(s)).",
            path=source,
            row=int(rows[first]) + 1,
            fix=f"remove the extra answers, or pass {say('duplicates')} last|first to keep one of them.",
        )
    drop = _duplicates_to_drop(df, codes, rows, dup_rows, duplicates)
    sel = np.ones(len(rows), dtype=bool)
    sel[drop] = False
    return rows[sel], {col: (c[sel], u) for col, (c, u) in codes.items()}, len(drop)


def _coded_frame(df, codes: dict, rows: np.ndarray, keep: Iterable[str]):
    """:attr:`Prepared.frame`: the coded columns as categoricals and the ``keep`` columns of ``rows``."""
    import pandas as pd

    from biaskit.readers.columnar import categorical

    out = pd.DataFrame({col: categorical(c, u) for col, (c, u) in codes.items()})  # texts distinct: factorized
    for col in keep:
        if col in df.columns:
            kept = df[col]
            if isinstance(kept.dtype, pd.CategoricalDtype):  # codes taken, not a Python object per row
                out[col] = pd.Categorical.from_codes(kept.cat.codes.to_numpy()[rows], dtype=kept.dtype)
            else:
                out[col] = kept.to_numpy()[rows]
    return out


def _is_text(series):
    return series.astype("object").eq("text")


class _Column:
    """One column of the judgments as integer codes: each row's code (-1 where the value is None / NaN)
    and the distinct values, as a Series of the column's own dtype, so that a rule decided on the
    distinct values (``rows(rule)``, ``text_codes``) is what it would be on every row. Columns whose
    distinct values pandas cannot tell apart safely (floats: 0.0 / -0.0; objects mixing types: 1, 1.0,
    True) are not coded: the rules run on the rows themselves."""

    def __init__(self, series, blank_as: str | None = None):
        import pandas as pd

        self.series, self.blank_as = series, blank_as
        dt = series.dtype
        self.codes: np.ndarray | None = None
        self.distinct = blank_as is None  # the values are distinct (a blank question becomes 'label': maybe not)
        if isinstance(dt, pd.CategoricalDtype):
            self.codes = series.cat.codes.to_numpy()
            self.values = pd.Series(series.cat.categories)
        elif (
            pd.api.types.is_bool_dtype(dt)
            or pd.api.types.is_integer_dtype(dt)
            or (pd.api.types.is_string_dtype(dt) and not pd.api.types.is_object_dtype(dt))
            or pd.api.types.infer_dtype(series, skipna=True) in ("string", "empty")
        ):
            codes, uniq = pd.factorize(series, sort=False, use_na_sentinel=True)
            self.codes, self.values = codes, pd.Series(uniq, dtype=dt if not isinstance(uniq, np.ndarray) else None)
        if self.codes is not None and self.blank_as is not None:  # a missing question is the question 'label'
            miss = np.append(_is_missing(self.values).to_numpy(), True)  # the last entry: code -1 (NaN)
            self.values = pd.Series([*self.values.astype(object), blank_as], dtype=object)
            self.codes = np.where(miss[self.codes], len(self.values) - 1, self.codes)
            self.values = self.values.where(~np.append(miss[:-1], False), blank_as)
        elif self.codes is None and blank_as is not None:
            s = series.astype("object")
            self.series = s.where(~_is_missing(s), blank_as)

    def rows(self, rule) -> np.ndarray:
        """``rule`` (a Series -> bool Series function, e.g. :func:`_is_missing`) on every row."""
        if self.codes is None:
            return rule(self.series).to_numpy(dtype=bool)
        on_values = np.append(rule(self.values).to_numpy(dtype=bool), bool(rule(_na()).iloc[0]))
        return on_values[self.codes]

    def text_codes(self, rows: np.ndarray) -> tuple[np.ndarray, Any]:
        """The given rows as text (:func:`_to_str`, decided on the values those rows use): their codes
        and the distinct texts (an Index; equal texts share one code, in order of first appearance)."""
        import pandas as pd

        if self.codes is None:
            codes, uniq = pd.factorize(_to_str(self.series.iloc[rows]).astype("str"), sort=False)
            return codes.astype(np.int32), pd.Index(uniq, dtype="str")
        sub = self.codes[rows]
        used = np.flatnonzero(np.bincount(sub, minlength=len(self.values)))
        values = self.values.iloc[used].reset_index(drop=True)
        text = _to_str(values).astype("str")
        if self.distinct and _same_text(text, values):  # distinct and already text: nothing merges
            merged, uniq = np.arange(len(text)), pd.Index(text, dtype="str")
        else:
            merged, uniq = pd.factorize(text, sort=False)  # ' a' and 'a' are one value
            uniq = pd.Index(uniq, dtype="str")
        remap = np.full(len(self.values), -1, dtype=np.int32)
        remap[used] = merged
        codes = remap[sub]
        del sub
        if len(codes) and codes[0] == 0 and _first_appearance_order(codes, len(uniq)):
            return codes, uniq
        # codes in order of the rows' first appearance (as pandas.factorize of the texts would give)
        codes, first = first_appearance(codes, len(uniq))
        return codes.astype(np.int32), uniq[first]


def _same_text(text, values) -> bool:
    """``values`` are strings equal to ``text`` (what :func:`_to_str` made of them)."""
    import pandas as pd

    if not pd.api.types.is_string_dtype(values.dtype) or pd.api.types.is_object_dtype(values.dtype):
        return False
    return bool(text.equals(values.astype("str")))


def _na():
    """A one-row Series holding NaN: what a rule says of a missing value (code -1)."""
    import pandas as pd

    return pd.Series([np.nan], dtype=object)


ID_COLUMNS = ("task", "worker")


def normalise_ids(df):
    """The one reading of judgment ids, for every command that reads judgments (aggregate, agreement,
    replay, the judge report, adaptive overlap's rounds): the task and worker ids as strings, spaces
    around them removed, an integral number written ``1.0`` read as ``1``; empty ids stay empty (None)
    for the caller to refuse. ``1``, ``1.0`` and `` 1 `` are one task (or one annotator) everywhere."""
    out = df.copy()
    for col in ID_COLUMNS:
        if col not in df.columns:
            continue
        s = df[col]
        miss = _is_missing(s).to_numpy()
        if not miss.any():
            out[col] = _to_str(s)
            continue
        ids = np.full(len(s), None, dtype=object)
        ids[~miss] = _to_str(s[~miss]).to_numpy(dtype=object)
        out[col] = ids
    return out


def _to_str(series):
    """Column -> str values (vectorised): strings stripped; 1.0 -> '1' for integral floats."""
    import pandas as pd

    dt = series.dtype
    if pd.api.types.is_bool_dtype(dt):
        return series.astype(str)
    if pd.api.types.is_integer_dtype(dt):
        return series.astype("int64").astype(str)
    if pd.api.types.is_float_dtype(dt):
        v = series.to_numpy(dtype=float)
        if np.all(np.isfinite(v)) and np.all(v == np.round(v)):
            return pd.Series(v.astype(np.int64).astype(str), index=series.index)
        return series.astype(str)
    if (pd.api.types.is_string_dtype(dt) and not pd.api.types.is_object_dtype(dt)) or pd.api.types.infer_dtype(
        series, skipna=True
    ) == "string":
        return series.astype("string").str.strip()
    return series.map(label_str)


def label_str(v: Any) -> str:
    if isinstance(v, float) and v.is_integer():
        return str(int(v))
    return str(v).strip() if isinstance(v, str) else str(v)


def _check_allowed(codes: dict, rows: np.ndarray, allowed, source) -> None:
    q_codes, q_text = codes["question"]
    l_codes, l_text = codes["label"]
    if isinstance(allowed, dict):
        allow = {str(q): {str(x) for x in v} for q, v in allowed.items()}
        combo = q_codes.astype(np.int64) * max(len(l_text), 1) + l_codes
        uniq, inv = np.unique(combo, return_inverse=True)
        ok_u = np.array(
            [
                str(l_text[k % len(l_text)]) in allow.get(str(q_text[k // len(l_text)]), {str(l_text[k % len(l_text)])})
                for k in uniq.tolist()
            ],
            dtype=bool,
        )
        ok = ok_u[inv.ravel()]
    else:
        s = {str(x) for x in allowed}
        allow = None
        ok = np.array([str(x) in s for x in l_text], dtype=bool)[l_codes]
    if not ok.all():
        bad = np.flatnonzero(~ok)
        r = int(bad[0])
        q, lab = q_text[q_codes[r]], l_text[l_codes[r]]
        worker, task = codes["worker"][1][codes["worker"][0][r]], codes["task"][1][codes["task"][0][r]]
        opts = sorted(allow.get(q, ())) if allow is not None else sorted({str(x) for x in allowed})
        raise InputError(
            f"unknown label '{lab}' for question '{q}' from annotator '{worker}' "
            f"on task '{task}' ({len(bad)} unknown label(s) in all; allowed: {', '.join(opts)}).",
            path=source,
            row=int(rows[r]) + 1,
            column="label",
            fix=f"correct the label, or widen {say('labels')}.",
        )


def _answer_keys(codes: dict) -> np.ndarray:
    """One int64 per row naming its (task, question, worker) (equal keys: the same answer)."""
    import pandas as pd

    t, q, w = codes["task"][0], codes["question"][0], codes["worker"][0]
    n_t, n_q, n_w = (max(len(codes[c][1]), 1) for c in ("task", "question", "worker"))
    if n_t * n_q * n_w < 1 << 62:
        key = t.astype(np.int64)  # in place: one array of 8 bytes a row at a time
        key *= n_q
        key += q
        key *= n_w
        key += w
        return key
    item = pd.factorize(t.astype(np.int64) * n_q + q, sort=False)[0]
    return item.astype(np.int64) * n_w + w


def _duplicate_rows(codes: dict) -> np.ndarray:
    """Positions (in the live rows) of the answers given more than once by the same annotator."""
    key = _answer_keys(codes)
    srt = np.sort(key)
    if not len(srt) or not (srt[1:] == srt[:-1]).any():  # the usual case: none (a sort, no hash table)
        return np.zeros(0, dtype=np.int64)
    order = np.argsort(key, kind="stable")
    k = key[order]
    same = np.r_[False, k[1:] == k[:-1]] | np.r_[k[1:] == k[:-1], False]
    return np.sort(order[same])


def _n_groups(codes: dict, dup_rows: np.ndarray) -> int:
    return len(np.unique(_answer_keys(codes)[dup_rows]))


def _duplicates_to_drop(df, codes: dict, rows: np.ndarray, dup_rows: np.ndarray, duplicates: str) -> np.ndarray:
    """Of each answer given more than once, every copy but the latest (``last``: by ``updated_at``, else
    ``created_at``, else the later row) or the earliest (``first``); positions in the live rows."""
    import pandas as pd

    stamps = [c for c in STAMP_COLUMNS if c in df.columns]
    order_ts: np.ndarray = np.zeros(len(dup_rows), dtype=np.int64)
    has_ts = np.zeros(len(dup_rows), dtype=bool)
    if stamps:
        ts = None
        for c in stamps:
            # parsed with the format pandas infers from the column's first value (as for the whole column)
            col = df[c].iloc[rows]
            head = col[col.notna()].iloc[:1]
            with warnings.catch_warnings():  # a stamp of another format is NaT (no time: the row order)
                warnings.simplefilter("ignore", UserWarning)  # pandas' "could not infer format" is no user's
                parsed = pd.to_datetime(
                    pd.concat([head, col.iloc[dup_rows]], ignore_index=True), errors="coerce", utc=True
                ).iloc[len(head) :]
            parsed = parsed.reset_index(drop=True)
            ts = parsed if ts is None else ts.fillna(parsed)
        assert ts is not None
        has_ts = ts.notna().to_numpy()
        order_ts = np.where(has_ts, ts.to_numpy(dtype="datetime64[ns]").view(np.int64), 0)
    keys = _answer_keys(codes)[dup_rows]
    # sorted as pandas sorts them (stable, missing stamps first), then the last (or first) of each answer kept
    order = np.lexsort((dup_rows, order_ts, has_ts, keys))
    k = keys[order]
    last_of = np.r_[k[1:] != k[:-1], True]
    first_of = np.r_[True, k[1:] != k[:-1]]
    kept = order[last_of if duplicates == "last" else first_of]
    drop = np.ones(len(dup_rows), dtype=bool)
    drop[kept] = False
    return dup_rows[drop]


@dataclass
class Counts:
    """Sparse (item, label) vote counts: the core of majority vote and of the agreement statistics."""

    items: Any  # DataFrame: task, question (one row per item, item code = row index)
    labels: np.ndarray  # label strings (label code = index)
    item: np.ndarray  # per (item, label) entry: item code
    label: np.ndarray  # per entry: label code
    count: np.ndarray  # per entry: votes
    n: np.ndarray  # per item: number of annotators
    row_item: np.ndarray | None = None  # per input row: its item code
    item_task: np.ndarray | None = None  # per item: its task's code (in order of the tasks' first appearance)
    item_question: np.ndarray | None = None  # per item: its question's code

    @property
    def n_items(self) -> int:
        return len(self.n)


def factorize(values) -> tuple[np.ndarray, np.ndarray]:
    """``pandas.factorize(values, sort=False)``: a code per row in order of first appearance, and the
    distinct values (object array). A categorical column (:attr:`Prepared.frame`) is factorized on its
    integer codes, without hashing a string per row (and not at all when its codes already run in
    order of first appearance, as :func:`prepare` makes them)."""
    codes, uniq = codes_of(values)
    return codes, uniq if isinstance(uniq, np.ndarray) else _objects(uniq)


def codes_of(values) -> tuple[np.ndarray, Any]:
    """:func:`factorize` with the distinct values as they are held (a categorical column's categories stay
    an Index: no Python string per value, where a million task ids would cost seconds and a hundred MB)."""
    import pandas as pd

    if isinstance(getattr(values, "dtype", None), pd.CategoricalDtype):
        cat_codes = values.cat.codes.to_numpy()
        cats = values.cat.categories
        if len(cat_codes) and cat_codes[0] == 0 and _first_appearance_order(cat_codes, len(cats)):
            return cat_codes, cats
        if not len(cat_codes) or cat_codes.min() >= 0:
            codes, first = first_appearance(cat_codes, len(cats))
            return codes, cats.take(first)
    codes, uniq = pd.factorize(values, sort=False)
    return codes, np.asarray(uniq, dtype=object)


def first_appearance(key: np.ndarray, size: int) -> tuple[np.ndarray, np.ndarray]:
    """``pandas.factorize(key, sort=False)`` of integer keys in ``[0, size)``: each key's code in order of
    first appearance (in the fewest bytes) and the distinct keys in that order; without a hash table
    when ``size`` is not much larger than ``key`` (:func:`first_positions`)."""
    import pandas as pd

    from biaskit.readers.columnar import code_type

    n = len(key)
    if size > max(4 * n, 1 << 20):
        codes, found = pd.factorize(key, sort=False)
        return codes.astype(code_type(len(found)), copy=False), np.asarray(found)
    first = first_positions(key, size)
    used = np.flatnonzero(first < n)
    uniq: np.ndarray
    if len(used) * 16 < n:
        uniq = used[np.argsort(first[used], kind="stable")]
    else:  # many distinct keys: placed at their first positions, read back in order (no sort)
        at = np.full(n, -1, dtype=np.int64)
        at[first[used]] = used
        uniq = at[at >= 0]
    del first
    rank = np.zeros(size, dtype=code_type(len(uniq)))
    rank[uniq] = np.arange(len(uniq))
    return rank[key], uniq


def first_positions(key: np.ndarray, size: int) -> np.ndarray:
    """Per value in ``[0, size)``: its first position in ``key`` (``len(key)`` where it is absent), found by
    writing the positions backwards (numpy assigns a repeated index in order: the last write, the first
    position)."""
    from biaskit.readers.columnar import code_type

    n = len(key)
    first = np.full(size, n, dtype=code_type(n + 1))
    first[key[::-1]] = _backwards(n)
    return first


_BACKWARDS: list[np.ndarray] = []


def _backwards(n: int) -> np.ndarray:
    """``arange(n - 1, -1, -1)`` in the fewest bytes, kept for the next call with the same ``n`` (each
    statistic of a million judgments asks for it)."""
    from biaskit.readers.columnar import code_type

    if not _BACKWARDS or len(_BACKWARDS[0]) != n:
        arr = np.arange(n - 1, -1, -1, dtype=code_type(n + 1))
        arr.flags.writeable = False
        _BACKWARDS[:] = [arr]
    return _BACKWARDS[0]


_OBJECTS: list[tuple[Any, np.ndarray]] = []  # the last categories made Python strings, and those strings


def _objects(cats) -> np.ndarray:
    """``cats`` (an Index) as an object array, made once for the categories of a prepared frame (every
    statistic of the whole frame asks for them)."""
    for known, arr in _OBJECTS:
        if known is cats:
            return arr
    arr = np.asarray(cats, dtype=object)
    _OBJECTS[:] = [(cats, arr), *_OBJECTS[:3]]
    return arr


def _first_appearance_order(codes: np.ndarray, n_values: int) -> bool:
    """Every code is 0 or one more than the largest before it, and all ``n_values`` are used (checked a
    slice at a time: the running maximum of a slice stays in the cache)."""
    top = -1
    for lo in range(0, len(codes), 1 << 18):
        part = codes[lo : lo + (1 << 18)]
        if part.min() < 0:
            return False
        run = np.maximum.accumulate(part)
        np.maximum(run, top, out=run)
        if int(run[0]) > top + 1 or (len(run) > 1 and int((run[1:] - run[:-1]).max()) > 1):
            return False
        top = int(run[-1])
    return top == n_values - 1


def sparse_counts(key: np.ndarray, size: int) -> tuple[np.ndarray, np.ndarray]:
    """``numpy.unique(key, return_counts=True)`` for keys in ``[0, size)``: a dense count when that is
    small enough (no sort), else the sort."""
    if size <= max(4 * len(key), 1 << 20):
        dense = np.bincount(key, minlength=size)
        uk = np.flatnonzero(dense)
        return uk, dense[uk]
    return np.unique(key, return_counts=True)


def count_votes(df) -> Counts:
    """Vote counts per item and label from prepared judgments (numpy, no Python loop per item)."""
    import pandas as pd

    if len(df) == 0:
        e = np.zeros(0, dtype=np.int64)
        return Counts(pd.DataFrame(columns=["task", "question"]), np.array([], dtype=object), e, e, e, e, e)
    t_codes, t_uni = factorize(df["task"])
    q_codes, q_uni = factorize(df["question"])
    l_codes, l_uni = factorize(df["label"])
    c = counts_of_codes(t_codes, q_codes, len(q_uni), l_codes, l_uni)
    c.items = pd.DataFrame({"task": t_uni[c.item_task], "question": q_uni[c.item_question]})
    return c


def counts_of_codes(task, question, n_questions: int, label, labels) -> Counts:
    """:func:`count_votes` of rows given as integer codes, each numbered in order of first appearance
    (``pandas.factorize``); ``labels``: the label of each label code. ``items`` is left out (None)."""
    if n_questions == 1:  # one question: the items are the tasks, already in order of first appearance
        item_codes = task
        item_task = np.arange(int(task.max()) + 1 if len(task) else 0, dtype=np.int64)
        item_question = np.zeros(len(item_task), dtype=np.int64)
    else:
        n_tasks = int(task.max()) + 1 if len(task) else 0
        item_codes, item_uni = first_appearance(task.astype(np.int64) * n_questions + question, n_tasks * n_questions)
        item_task, item_question = item_uni // n_questions, item_uni % n_questions
    from biaskit.readers.columnar import code_type

    L = len(labels)
    key = item_codes.astype(np.int64) * L + label
    uk, cnt = sparse_counts(key, len(item_task) * L)
    del key
    n = np.bincount(item_codes, minlength=len(item_task))
    return Counts(
        items=None,
        labels=labels,
        item=(uk // max(L, 1)).astype(code_type(len(item_task))),  # codes in the fewest bytes
        label=(uk % max(L, 1)).astype(code_type(L)),
        count=cnt,
        n=n,
        row_item=item_codes,
        item_task=item_task,
        item_question=item_question,
    )


def _tie_pick(seed: int, task: str, question: str, options: list[str]) -> str:
    h = hashlib.sha256(f"{seed}\x1f{task}\x1f{question}".encode()).hexdigest()
    return sorted(options)[int(h, 16) % len(options)]


class Aggregator:
    """One label per (task, question) from prepared judgments (crowd-kit's ``fit_predict`` on a
    task / worker / label frame, plus ``question``). Subclasses implement :meth:`_predict`."""

    name = ""

    def __init__(self, *, ties: str = "flag", seed: int = 0, min_agree: int | None = None):
        self.ties, self.seed, self.min_agree = ties, seed, min_agree

    def fit_predict(self, df):
        """``df``: :func:`prepare`'s frame; returns the table described in the module docstring."""
        return self._predict(count_votes(df), df)

    def _predict(self, c: Counts, df):  # pragma: no cover - abstract
        raise NotImplementedError


@AGGREGATORS.register("majority", help="plurality vote with ties flagged (vectorised numpy)")
class MajorityVote(Aggregator):
    name = "majority"

    def _predict(self, c, df):
        return _majority(c, ties=self.ties, seed=self.seed, min_agree=self.min_agree)


def _majority(c: Counts, *, ties: str, seed: int, min_agree: int | None):
    import pandas as pd

    if c.n_items == 0:
        return pd.DataFrame(columns=OUT_COLUMNS)
    # entries are sorted by item (np.unique on item*L+label): per-item max via reduceat
    starts = np.flatnonzero(np.r_[True, c.item[1:] != c.item[:-1]])
    top = np.maximum.reduceat(c.count, starts)
    is_top = c.count == top[c.item]
    n_top = np.bincount(c.item[is_top], minlength=c.n_items)
    tie = n_top > 1
    # winner label for untied items: the unique top entry
    win = np.full(c.n_items, -1, dtype=np.int64)
    sel = is_top & ~tie[c.item]
    win[c.item[sel]] = c.label[sel]
    out = c.items.copy()
    out["label"] = np.where(  # type: ignore[call-overload]  # numpy stubs: None is a valid (object) scalar
        win >= 0, c.labels[np.maximum(win, 0)] if len(c.labels) else None, None
    )
    out["votes"] = top
    out["n_annotators"] = c.n
    out["tie"] = tie
    out["tied_labels"] = ""
    if tie.any():
        tied_entries = is_top & tie[c.item]
        out["tied_labels"] = _tied_labels(c, tied_entries)
        if ties == "random":
            idx = np.flatnonzero(tie)
            out.loc[idx, "label"] = [
                _tie_pick(seed, t, q, s.split("|"))
                for t, q, s in zip(
                    out.loc[idx, "task"], out.loc[idx, "question"], out.loc[idx, "tied_labels"], strict=False
                )
            ]
    return _finish(out, ties=ties, min_agree=min_agree, method="majority")


def _tied_labels(c: Counts, entries: np.ndarray) -> np.ndarray:
    """Per item: '|'.join(sorted tied labels) ('' when untied), without a Python call per item."""
    import pandas as pd

    res = np.full(c.n_items, "", dtype=object)
    items, labs = c.item[entries], c.label[entries]
    if len(c.labels) <= 62:  # one bit per label, labels ranked alphabetically
        rank = np.argsort(np.argsort(c.labels.astype(str)))
        mask = np.zeros(c.n_items, dtype=np.int64)
        np.bitwise_or.at(mask, items, np.left_shift(np.int64(1), rank[labs].astype(np.int64)))
        by_rank = c.labels[np.argsort(rank)]
        for m in np.unique(mask[mask > 0]):
            res[mask == m] = "|".join(str(by_rank[b]) for b in range(len(by_rank)) if (int(m) >> b) & 1)
        return res
    tl = pd.Series(c.labels[labs].astype(str)).groupby(items).agg(lambda s: "|".join(sorted(s)))
    res[tl.index.to_numpy()] = tl.to_numpy()
    return res


def _finish(out, *, ties: str, min_agree: int | None, method: str):
    out["agreement"] = out["votes"] / out["n_annotators"]
    status, reason = majority_status(out["votes"].to_numpy(), out["n_annotators"].to_numpy(), min_agree)
    tie = out["tie"].to_numpy(dtype=bool)
    if ties == "flag":
        status[tie] = "needs_adjudication"
        reason[tie] = "tie"
    elif ties == "random":
        reason[tie] = np.where(
            reason[tie] == "", "tie_broken_randomly", reason[tie].astype(str) + ";tie_broken_randomly"
        )
    out["status"] = status
    out["reason"] = reason
    out["method"] = method
    if ties == "drop":
        out = out[~tie]
    cols = OUT_COLUMNS + [c for c in out.columns if c not in OUT_COLUMNS]
    return out[cols].reset_index(drop=True)


class CrowdKitAggregator(Aggregator):
    """A crowd-kit model (``model``: its class name in ``crowdkit.aggregation``), run per question;
    votes and ties from the raw counts and the posteriors."""

    model = ""
    params: dict[str, Any] = {}

    def _predict(self, c, df):
        return _crowdkit(
            c,
            df=df,
            method=self.name,
            cls_name=self.model,
            kwargs=self.params,
            ties=self.ties,
            seed=self.seed,
            min_agree=self.min_agree,
        )


@AGGREGATORS.register("dawid-skene", help="crowd-kit DawidSkene")
class DawidSkene(CrowdKitAggregator):
    name, model, params = "dawid-skene", "DawidSkene", {"n_iter": 100}


@AGGREGATORS.register("one-coin-dawid-skene", help="crowd-kit OneCoinDawidSkene")
class OneCoinDawidSkene(CrowdKitAggregator):
    name, model, params = "one-coin-dawid-skene", "OneCoinDawidSkene", {"n_iter": 100}


@AGGREGATORS.register("glad", help="crowd-kit GLAD")
class GLAD(CrowdKitAggregator):
    name, model, params = "glad", "GLAD", {"n_iter": 100}


@AGGREGATORS.register("mace", help="crowd-kit MACE")
class MACE(CrowdKitAggregator):
    name, model, params = "mace", "MACE", {"random_state": 0}


def _crowdkit(c: Counts, *, df, method: str, cls_name: str, kwargs: dict, ties: str, seed: int, min_agree: int | None):
    import pandas as pd

    require("crowdkit", "annotation", f"the {method} aggregator")
    import crowdkit.aggregation as ck

    if c.n_items == 0:
        return pd.DataFrame(columns=OUT_COLUMNS + ["confidence"])
    cnt = pd.DataFrame(
        {
            "task": c.items["task"].to_numpy()[c.item],
            "question": c.items["question"].to_numpy()[c.item],
            "label": c.labels[c.label],
            "votes": c.count,
        }
    )
    parts = []
    for q, sub in df.groupby("question", sort=False):
        model = getattr(ck, cls_name)(**kwargs)
        data = sub[["task", "worker", "label"]].astype(object).reset_index(drop=True)  # crowd-kit: no arrow strings
        with warnings.catch_warnings():  # crowd-kit's own pandas deprecation noise
            warnings.simplefilter("ignore")
            pred = model.fit_predict(data)
        probas = getattr(model, "probas_", None)
        res = pd.DataFrame({"task": pred.index.astype(str), "question": q, "label": pred.astype(str).to_numpy()})
        res["confidence"] = np.nan
        res["tie"] = False
        res["tied_labels"] = ""
        if probas is not None and len(probas):
            p = probas.loc[pred.index]
            top = p.max(axis=1).to_numpy()
            res["confidence"] = top
            near = np.isclose(p.to_numpy(), top[:, None], rtol=0, atol=1e-9)
            n_top = near.sum(axis=1)
            res["tie"] = n_top > 1
            cols = np.asarray(p.columns.astype(str))
            res["tied_labels"] = [
                "|".join(sorted(cols[row])) if k > 1 else "" for row, k in zip(near, n_top, strict=False)
            ]
            if ties == "random" and res["tie"].any():
                idx = np.flatnonzero(res["tie"].to_numpy())
                res.loc[idx, "label"] = [
                    _tie_pick(seed, t, q, s.split("|"))
                    for t, s in zip(res.loc[idx, "task"], res.loc[idx, "tied_labels"], strict=False)
                ]
            if ties != "random":
                res.loc[res["tie"], "label"] = None
        parts.append(res)
    res = pd.concat(parts, ignore_index=True)
    res = c.items.merge(res, on=["task", "question"], how="left")
    res["n_annotators"] = c.n
    res = res.merge(cnt, on=["task", "question", "label"], how="left")
    res["votes"] = res["votes"].fillna(0).astype(np.int64)
    return _finish(res, ties=ties, min_agree=min_agree, method=method)


@dataclass
class AggregateReport:
    method: str
    n_judgments_in: int
    n_judgments_used: int
    n_missing_labels: int
    n_text_skipped: int
    n_duplicates_removed: int
    n_items: int
    n_ties: int
    n_dropped_ties: int
    status_counts: dict[str, int]
    #: adaptive overlap: items decided by a recorded risk decision (``settled_*`` columns of the judgments)
    n_settled_risk: int = 0
    #: ... and recorded decisions left unused because they were made under another rule (method / --min-agree)
    n_settled_other_rule: int = 0

    def to_json(self) -> dict:
        return dict(self.__dict__)


def aggregate(
    judgments,
    *,
    method: str = "majority",
    min_agree: int | None = None,
    ties: str = "flag",
    seed: int = 0,
    duplicates: str = "error",
    allowed=None,
    source: str | None = None,
):
    """Aggregate judgments; returns ``(table, AggregateReport)`` (see the module docstring)."""
    if ties not in TIES:
        raise InputError(f"unknown ties policy '{ties}'.", fix=f"use one of {', '.join(TIES)}.")
    if min_agree is not None and min_agree < 1:
        raise InputError(
            f"{say('min_agree')} must be at least 1, got {min_agree}.", fix="give the number of agreeing annotators."
        )
    from .settle import MajorityRule

    model = AGGREGATORS.create(method, ties="flag" if ties == "drop" else ties, seed=seed, min_agree=min_agree)
    from biaskit.readers.columnar import give_back_memory

    prep = prepare(judgments, allowed=allowed, duplicates=duplicates, source=source)
    give_back_memory()  # what preparing freed, before the votes are counted
    full = model.fit_predict(prep.frame)
    # adaptive overlap's recorded risk decisions (a task stopped before the rule alone could decide it)
    use, other = settled_overrides(
        read_settlements(judgments, source),
        MajorityRule((), min_agree).spec() if method.lower() == "majority" else f"{method.lower()}:",
    )
    if use and len(full):
        full = override_settled(full, use)
    n_ties = int(full["tie"].sum()) if len(full) else 0
    table = full[~full["tie"].astype(bool)].reset_index(drop=True) if ties == "drop" else full
    report = AggregateReport(
        method=method.lower(),
        n_judgments_in=prep.n_input,
        n_judgments_used=len(prep.frame),
        n_missing_labels=prep.n_missing,
        n_text_skipped=prep.n_text,
        n_duplicates_removed=prep.n_duplicates_removed,
        n_items=len(table),
        n_ties=n_ties,
        n_dropped_ties=n_ties if ties == "drop" else 0,
        status_counts={s: int((table["status"] == s).sum()) if len(table) else 0 for s in STATUSES},
        n_settled_risk=len(use),
        n_settled_other_rule=other,
    )
    return table, report


def judgment_columns(duplicates: str = "error", keep: Iterable[str] = ()) -> tuple[str, ...]:
    """The judgment columns aggregation (and, with ``keep``, agreement) reads: :func:`prepare`'s, the
    time stamps when duplicates are resolved, and adaptive overlap's recorded decisions."""
    stamps = STAMP_COLUMNS if duplicates != "error" else ()
    return (*READ_COLUMNS, *keep, *stamps, *SETTLED_COLUMNS)


def override_settled(table, settled: dict):
    """The aggregated rows of items adaptive overlap's risk policy decided (``(task, question) ->
    {status, label, p_change}``): that status and label, reason ``settled_risk``, no tie."""
    keys = list(zip(table["task"].astype(str), table["question"].astype(str), strict=False))
    hit = np.array([k in settled for k in keys], dtype=bool)
    if not hit.any():
        return table
    table = table.copy()
    for col in ("status", "label", "reason", "tied_labels"):
        table[col] = table[col].astype(object)
    for i in np.flatnonzero(hit):
        s = settled[keys[i]]
        table.at[i, "status"] = s["status"]
        table.at[i, "label"] = s.get("label")
        table.at[i, "tie"] = False
        table.at[i, "tied_labels"] = ""
        table.at[i, "reason"] = "settled_risk" + (
            f" (p_change {s['p_change']:.4g})" if s.get("p_change") is not None else ""
        )
    return table


def aggregate_file(opts: AggregateOptions) -> AggregateReport:
    """``annotate aggregate``: read ``opts.judgments`` (CSV/JSONL), aggregate, write the table atomically to
    ``opts.out`` (CSV/JSONL by extension).

    With ``opts.kind``, the kind's :meth:`~biaskit.annotation.kinds.base.TaskKind.votes` maps the answers
    first (translation: slot letters -> candidates) and, unless ``opts.labels`` is given, labels outside
    the kind's options are rejected."""
    from biaskit.io import write_table
    from biaskit.readers import read_judgments

    k = None
    if opts.kind is not None:
        from .kinds import get_kind
        from .kinds.base import TaskKind

        k = get_kind(opts.kind)
    # a kind that maps the answers (translation: slot letters) may read any column: the whole table
    maps_votes = k is not None and type(k).votes is not TaskKind.votes
    columns = None if maps_votes else judgment_columns(opts.duplicates)
    df = read_judgments(opts.judgments, columns=columns)
    allowed: Any = opts.labels  # a list for every question, or the kind's labels per question
    if k is not None:
        df = k.votes(df)
        if allowed is None:
            allowed = k.allowed_labels() or None
    table, report = aggregate(
        df,
        source=str(opts.judgments),
        method=opts.method,
        min_agree=opts.min_agree,
        ties=opts.ties,
        seed=opts.seed,
        duplicates=opts.duplicates,
        allowed=allowed,
    )
    write_table(opts.out, table)
    return report
