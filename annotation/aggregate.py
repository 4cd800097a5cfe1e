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
from dataclasses import dataclass, field
from typing import Any

import numpy as np

from biaskit.errors import InputError, require
from biaskit.registry import Registry

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


@dataclass
class Prepared:
    """Validated judgments: integer codes for items (task, question), workers and labels."""

    df: Any  # pandas DataFrame: task, question, worker, label (all str)
    n_input: int = 0
    n_missing: int = 0
    n_text: int = 0
    n_duplicates_removed: int = 0
    notes: list[str] = field(default_factory=list)


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


def prepare(
    judgments,
    *,
    allowed: dict[str, Iterable[str]] | Iterable[str] | None = None,
    duplicates: str = "error",
    source: str | None = None,
    keep: Iterable[str] = ("bias_type",),
) -> Prepared:
    """Check and normalise judgments (see the module docstring for the rules); ``keep``: columns
    carried along when present (agreement also keeps ``target`` and ``reference``)."""
    import pandas as pd

    if duplicates not in DUPLICATES:
        raise InputError(f"unknown duplicates policy '{duplicates}'.", fix=f"use one of {', '.join(DUPLICATES)}.")
    df = judgments if isinstance(judgments, pd.DataFrame) else pd.DataFrame(list(judgments))
    n_input = len(df)
    if n_input == 0:
        return Prepared(df=pd.DataFrame(columns=["task", "question", "worker", "label"]), n_input=0)
    check_columns(df, source)
    df = normalise_ids(df.reset_index(drop=True))
    df["_row"] = np.arange(1, len(df) + 1)
    if "question" not in df.columns:
        df["question"] = "label"
    n_text = 0
    if "qtype" in df.columns:
        text = df["qtype"].astype("object").eq("text")
        n_text = int(text.sum())
        df = df[~text]
    for col in ("task", "worker"):
        bad = _is_missing(df[col])
        if bad.any():
            row = int(df.loc[bad, "_row"].iloc[0])
            raise InputError(
                f"empty {col} in {int(bad.sum())} row(s).",
                path=source,
                row=row,
                column=col,
                fix=f"every judgment needs a {col}.",
            )
    df["question"] = df["question"].astype("object").where(~_is_missing(df["question"]), "label")
    miss = _is_missing(df["label"])
    n_missing = int(miss.sum())
    df = df[~miss].copy()
    for col in ("question", "label"):
        df[col] = _to_str(df[col])
    if allowed is not None:
        _check_allowed(df, allowed, source)
    n_dup_removed = 0
    key = ["task", "question", "worker"]
    dup = df.duplicated(key, keep=False)
    if dup.any():
        if duplicates == "error":
            first = df[dup].iloc[0]
            n_pairs = int(df[dup].groupby(key).ngroups)
            raise InputError(
                f"annotator '{first['worker']}' answered question '{first['question']}' of task '{first['task']}' "
                f"more than once ({n_pairs} such case(s)).",
                path=source,
                row=int(first["_row"]),
                fix="remove the extra answers, or pass --duplicates last|first to keep one of them.",
            )
        order = ["_row"]
        stamps = [c for c in ("updated_at", "created_at") if c in df.columns]
        if stamps:
            ts = pd.to_datetime(df[stamps[0]], errors="coerce", utc=True)
            for c in stamps[1:]:
                ts = ts.fillna(pd.to_datetime(df[c], errors="coerce", utc=True))
            df["_ts"] = ts
            order = ["_ts", "_row"]
        df = df.sort_values(order, kind="stable", na_position="first")
        before = len(df)
        df = df.drop_duplicates(key, keep="last" if duplicates == "last" else "first").sort_values("_row")
        n_dup_removed = before - len(df)
    out = df[["task", "question", "worker", "label"]].reset_index(drop=True)
    extra = [c for c in keep if c in df.columns]
    for c in extra:
        out[c] = df[c].to_numpy()
    return Prepared(df=out, n_input=n_input, n_missing=n_missing, n_text=n_text, n_duplicates_removed=n_dup_removed)


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


def _check_allowed(df, allowed, source) -> None:
    if isinstance(allowed, dict):
        allow = {str(q): {str(x) for x in v} for q, v in allowed.items()}
        ok = np.array(
            [lab in allow.get(q, {lab}) for q, lab in zip(df["question"], df["label"], strict=False)], dtype=bool
        )
    else:
        s = {str(x) for x in allowed}
        allow = None
        ok = df["label"].isin(s).to_numpy()
    if not ok.all():
        bad = df[~ok]
        r = bad.iloc[0]
        opts = sorted(allow.get(r["question"], ())) if allow is not None else sorted({str(x) for x in allowed})
        raise InputError(
            f"unknown label '{r['label']}' for question '{r['question']}' from annotator '{r['worker']}' "
            f"on task '{r['task']}' ({len(bad)} unknown label(s) in all; allowed: {', '.join(opts)}).",
            path=source,
            row=int(r["_row"]),
            column="label",
            fix="correct the label, or widen --labels.",
        )


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

    @property
    def n_items(self) -> int:
        return len(self.n)


def count_votes(df) -> Counts:
    """Vote counts per item and label from prepared judgments (numpy, no Python loop per item)."""
    import pandas as pd

    if len(df) == 0:
        e = np.zeros(0, dtype=np.int64)
        return Counts(pd.DataFrame(columns=["task", "question"]), np.array([], dtype=object), e, e, e, e, e)
    t_codes, t_uni = pd.factorize(df["task"], sort=False)
    q_codes, q_uni = pd.factorize(df["question"], sort=False)
    pair = t_codes.astype(np.int64) * len(q_uni) + q_codes
    item_codes, item_uni = pd.factorize(pair, sort=False)
    items = pd.DataFrame(
        {
            "task": np.asarray(t_uni, dtype=object)[item_uni // len(q_uni)],
            "question": np.asarray(q_uni, dtype=object)[item_uni % len(q_uni)],
        }
    )
    l_codes, l_uni = pd.factorize(df["label"], sort=False)
    L = len(l_uni)
    key = item_codes.astype(np.int64) * L + l_codes
    uk, cnt = np.unique(key, return_counts=True)
    item = uk // L
    n = np.bincount(item_codes, minlength=len(items))
    return Counts(
        items=items,
        labels=np.asarray(l_uni, dtype=object),
        item=item,
        label=uk % L,
        count=cnt,
        n=n,
        row_item=item_codes,
    )


def _tie_pick(seed: int, task: str, question: str, options: list[str]) -> str:
    h = hashlib.sha256(f"{seed}\x1f{task}\x1f{question}".encode()).hexdigest()
    return sorted(options)[int(h, 16) % len(options)]


def _status(votes: np.ndarray, n: np.ndarray, min_agree: int | None) -> tuple[np.ndarray, np.ndarray]:
    if min_agree is None:
        ok = votes * 2 > n
        status = np.where(ok, "accepted", "rejected").astype(object)
        reason = np.where(ok, "", "no_majority").astype(object)
    else:
        ok = votes >= min_agree
        few = n < min_agree
        status = np.where(ok, "accepted", np.where(few, "needs_adjudication", "rejected")).astype(object)
        reason = np.where(ok, "", np.where(few, "too_few_annotators", "below_min_agree")).astype(object)
    return status, reason


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
    status, reason = _status(out["votes"].to_numpy(), out["n_annotators"].to_numpy(), min_agree)
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
            f"--min-agree must be at least 1, got {min_agree}.", fix="give the number of agreeing annotators."
        )
    from .adaptive import read_settlements, settled_overrides
    from .settle import MajorityRule

    model = AGGREGATORS.create(method, ties="flag" if ties == "drop" else ties, seed=seed, min_agree=min_agree)
    prep = prepare(judgments, allowed=allowed, duplicates=duplicates, source=source)
    full = model.fit_predict(prep.df)
    # adaptive overlap's recorded risk decisions (a task stopped before the rule alone could decide it)
    use, other = settled_overrides(
        read_settlements(judgments),
        MajorityRule((), min_agree).spec() if method.lower() == "majority" else f"{method.lower()}:",
    )
    if use and len(full):
        full = override_settled(full, use)
    n_ties = int(full["tie"].sum()) if len(full) else 0
    table = full[~full["tie"].astype(bool)].reset_index(drop=True) if ties == "drop" else full
    report = AggregateReport(
        method=method.lower(),
        n_judgments_in=prep.n_input,
        n_judgments_used=len(prep.df),
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


def aggregate_file(judgments_path, out_path, *, kind: str | None = None, **kw) -> AggregateReport:
    """Read judgments (CSV/JSONL), aggregate, write the table atomically (CSV/JSONL by extension).

    With ``kind``, the kind's :meth:`~biaskit.annotation.kinds.base.TaskKind.votes` maps the answers
    first (translation: slot letters -> candidates) and, unless ``allowed`` is given, labels outside
    the kind's options are rejected."""
    from biaskit.io import write_table
    from biaskit.readers import read_judgments

    df = read_judgments(judgments_path)
    if kind is not None:
        from .kinds import get_kind

        k = get_kind(kind)
        df = k.votes(df)
        if kw.get("allowed") is None:
            kw["allowed"] = k.allowed_labels() or None
    table, report = aggregate(df, source=str(judgments_path), **kw)
    write_table(out_path, table)
    return report
