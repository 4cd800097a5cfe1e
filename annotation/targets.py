"""Agreement per target term and per domain, as StereoSet reports it (with the counts behind it).

StereoSet (Nadeem et al., ACL 2021, §4.3 and Table 10) had five validators label each sentence of a
CAT; a CAT was kept when at least three of them agreed with the writer's label on its sentences, and
Table 10 lists every target term with its "per-term annotator agreement" (0.64 - 0.90), "computed
using the average of annotator agreement per example". The paper gives no formula; this module
uses the reading that fits every published figure (none is below 0.6, the floor the >= 3 of 5 rule
sets on the kept CATs, which a chance-corrected statistic or pairwise agreement would not respect):

- an *item* is one (task, question) -- for a CAT, one of its three sentences; its **reference
  label** is the writer's label (StereoSet's ``gold_label``; the ``cat`` kind's question
  ``option_<gold>`` is "what did the annotator call the sentence written as <gold>");
- item agreement = annotators who gave the reference label / annotators who answered;
- example (task) agreement = the mean over its items with a reference label;
- **term agreement** (``reference_agreement``) = the mean over the term's examples; the same for a
  domain (bias type) and for the whole set;
- an example is **retained** at ``k`` when every item with a reference label has ``>= k`` votes
  for it and no other label has as many (StereoSet: ``k = 3`` of 5, where the second condition
  always holds; the same rule as ``apply --kind cat``, :mod:`.cat_rule`). ``k`` defaults to a
  strict majority of the usual number of annotators per item (3 of 5, 2 of 3: IndiBias' rule).

Where no reference label is known (tuples, concern questions, judgments without data), the plurality
label stands in: ``majority_share`` (top votes / answers, averaged the same way) and retention on
the plurality label's votes. Every row also carries Fleiss' kappa, pairwise percent agreement and
Krippendorff's alpha of its own items (:mod:`.agreement`), and the counts behind each figure.

Where each task's target term, bias type and reference labels come from (first that applies):
the records passed as ``--data`` (any kind's file: CAT ``target`` and gold labels; pair
``group_more`` and ``direction`` for the ``validity`` question; tuple ``identity``), else the
judgment columns ``target``, ``bias_type`` and ``reference`` (``annotate from-stereoset`` writes
them; ``pull`` writes ``bias_type``).
"""

from __future__ import annotations

from dataclasses import dataclass, field
from pathlib import Path
from typing import Any

import numpy as np

from biaskit.errors import InputError
from biaskit.tables import md_table, num

UNKNOWN = "(unknown)"
TARGET_COLUMNS = (
    "bias_type",
    "target",
    "n_tasks",
    "n_items",
    "n_judgments",
    "n_annotators",
    "reference_agreement",
    "reference_votes",
    "reference_answers",
    "n_reference_items",
    "majority_share",
    "min_agree",
    "retained",
    "retention_rate",
    "fleiss_kappa",
    "percent_agreement",
    "krippendorff_alpha",
    "n_items_multi",
)
DEFINITION = (
    "reference_agreement: per item, the share of annotators who gave the reference (writer's) label; "
    "averaged over an example's items, then over the examples of the term/domain (StereoSet, ACL 2021, "
    "Table 10: per-term annotator agreement). retained: examples whose every reference item has >= "
    "min_agree votes for the reference label and no other label as many (StereoSet: >= 3 of 5); "
    "without a reference label the "
    "plurality label stands in (majority_share)."
)


@dataclass
class TaskInfo:
    """Per task: bias type and target term; per (task, question): the reference label."""

    bias_type: dict[str, str] = field(default_factory=dict)
    target: dict[str, str] = field(default_factory=dict)
    reference: dict[tuple[str, str], str] = field(default_factory=dict)


def record_target(rec: Any) -> str | None:
    """The target term of a record: a CAT's ``target``, a pair's ``group_more``, a tuple's ``identity``."""
    for attr in ("target", "group_more", "identity"):
        v = getattr(rec, attr, None)
        if v is not None and str(v).strip():
            return str(v).strip()
    return None


def record_reference(rec: Any) -> dict[str, str]:
    """question -> the writer's label: a CAT's sentences (``option_<gold>`` -> ``<gold>``); a pair's
    ``validity`` -> its ``direction`` (stereo / antistereo)."""
    opts = getattr(rec, "options", None)
    if opts and all(getattr(o, "gold_label", None) for o in opts):
        return {f"option_{o.gold_label}": str(o.gold_label) for o in opts}
    direction = getattr(rec, "direction", None)
    if direction is not None and hasattr(rec, "sent_more"):
        return {"validity": str(getattr(direction, "value", direction))}
    return {}


def task_info(data_path: str | Path | None) -> TaskInfo:
    """Bias types, target terms and reference labels from a data file: any kind's records (pairs in
    CrowS/IndiBias/biaskit format, tuples, CATs, translation candidates), or a table with an id and a
    bias_type column (and optionally target / group_more / identity)."""
    info = TaskInfo()
    if not data_path:
        return info
    from biaskit.io import read_table

    from .kinds import KINDS, get_kind

    p = Path(data_path)
    if not p.exists():
        raise InputError("file not found.", path=p, fix="check the --data path.")
    for kname in KINDS.names():  # whichever kind's reader accepts the file
        k = get_kind(kname)
        try:
            recs = k.load(p, skip_invalid=True)
        except (InputError, KeyError, TypeError, ValueError):
            continue
        if recs:
            for r in recs:
                rid = k.record_id(r)
                bt = k.bias_type(r)
                if bt is not None:
                    info.bias_type[rid] = str(bt)
                t = record_target(r)
                if t is not None:
                    info.target[rid] = t
                for q, lab in record_reference(r).items():
                    info.reference[(rid, q)] = lab
            return info
    df = read_table(p)
    for id_col in ("task", "pair_id", "tuple_id", "cat_id", "biaskit_id", "id"):
        if id_col in df.columns:
            bt = "bias_type" if "bias_type" in df.columns else "axis" if "axis" in df.columns else None
            if bt:
                ids = df[id_col].astype(str)
                info.bias_type = dict(zip(ids, df[bt].astype(str), strict=False))
                tcol = next((c for c in ("target", "group_more", "identity") if c in df.columns), None)
                if tcol:
                    info.target = {a: str(b) for a, b in zip(ids, df[tcol], strict=False) if b == b and str(b).strip()}
                return info
    raise InputError(
        "cannot find the records' ids and bias types.",
        path=p,
        fix="give the pushed records (pairs, tuples, CATs, candidates) or a table with "
        "task|pair_id|id and bias_type columns.",
    )


def _column_map(df, col: str) -> dict[str, str]:
    """task -> the first non-empty value of a judgment column."""
    if col not in df.columns:
        return {}
    s = df[["task", col]].dropna()
    s = s[s[col].astype(str).str.strip() != ""].drop_duplicates("task")
    return dict(zip(s["task"].astype(str).tolist(), s[col].astype(str).tolist(), strict=False))


def resolve(df, info: TaskInfo):
    """Per judgment row: bias type and target (data first, then judgment columns; None when unknown),
    and per row the item's reference label (None when unknown)."""
    import pandas as pd

    task = df["task"].astype(str)
    out = {}
    for name, from_data in (("bias_type", info.bias_type), ("target", info.target)):
        m = from_data or _column_map(df, name)
        out[name] = task.map(m) if m else pd.Series([None] * len(df), index=df.index, dtype=object)
    if info.reference:
        ref = pd.Series(
            [info.reference.get((t, q)) for t, q in zip(task, df["question"].astype(str), strict=False)],
            index=df.index,
            dtype=object,
        )
    elif "reference" in df.columns:
        r = df["reference"].astype(object)
        ref = r.where(r.notna() & (r.astype(str).str.strip() != ""), None).map(lambda x: None if x is None else str(x))
    else:
        ref = pd.Series([None] * len(df), index=df.index, dtype=object)
    return out["bias_type"], out["target"], ref


def item_reference_votes(c, row_ref) -> tuple[np.ndarray, np.ndarray]:
    """Per item of ``c`` (:class:`~.aggregate.Counts`): its reference label (object, None when
    unknown) and the votes for it (float, NaN when unknown; 0 when nobody chose it)."""
    import pandas as pd

    ref = np.full(c.n_items, None, dtype=object)
    rr = np.asarray(row_ref, dtype=object)
    has = pd.notna(rr)
    if has.any():
        ref[c.row_item[has]] = rr[has]  # one reference per item (same for every row of the item)
    votes = np.full(c.n_items, np.nan)
    known = pd.notna(ref)
    if known.any():
        L = max(len(c.labels), 1)
        code = pd.Index(c.labels).get_indexer(ref[known].astype(str)) if len(c.labels) else np.full(known.sum(), -1)
        entry = dict(zip((c.item * L + c.label).tolist(), c.count.tolist(), strict=False))
        idx = np.flatnonzero(known)
        votes[idx] = [entry.get(int(i) * L + int(k), 0) if k >= 0 else 0 for i, k in zip(idx, code, strict=False)]
    return ref, votes


def default_min_agree(c) -> int | None:
    """A strict majority of the usual (modal) number of annotators per item: 3 of 5, 2 of 3."""
    if c.n_items == 0:
        return None
    vals, cnts = np.unique(c.n, return_counts=True)
    return int(vals[np.argmax(cnts)]) // 2 + 1


def task_table(c, ref_votes: np.ndarray, top: np.ndarray, min_agree: int):
    """One row per task: items, reference agreement (mean over its reference items), majority share,
    reference votes / answers, retained at ``min_agree``."""
    import pandas as pd

    n = c.n.astype(np.float64)
    has_ref = ~np.isnan(ref_votes)
    t = pd.DataFrame(
        {
            "task": c.items["task"].astype(str).to_numpy(),
            "n": n,
            "top": top.astype(np.float64),
            "has_ref": has_ref,
            "ref_votes": np.where(has_ref, ref_votes, 0.0),
            "ref_n": np.where(has_ref, n, 0.0),
        }
    )
    t["ref_share"] = np.where(has_ref, t["ref_votes"] / np.maximum(n, 1), np.nan)
    t["maj_share"] = t["top"] / np.maximum(n, 1)
    # retention: on reference items when the task has any, else on the (unique) plurality label of every item
    # the reference label must also be the unique plurality (as annotation/cat_rule.py; with 5
    # validators and k = 3 this always holds when it has 3 votes)
    n_top = np.bincount(c.item[c.count == top[c.item]], minlength=c.n_items) if c.n_items else np.zeros(0)
    unique_winner = (t["ref_votes"].to_numpy() == t["top"].to_numpy()) & (n_top == 1)
    t["ok_ref"] = ~has_ref | ((t["ref_votes"] >= min_agree) & unique_winner)
    t["ok_top"] = (t["top"] >= min_agree) & (n_top == 1)
    g = t.groupby("task", sort=False)
    tab = pd.DataFrame(
        {
            "n_items": g.size(),
            "n_reference_items": g["has_ref"].sum(),
            "reference_agreement": g["ref_share"].mean(),  # NaN-skipping mean over reference items
            "reference_votes": g["ref_votes"].sum(),
            "reference_answers": g["ref_n"].sum(),
            "majority_share": g["maj_share"].mean(),
            "ok_ref": g["ok_ref"].all(),
            "ok_top": g["ok_top"].all(),
        }
    )
    tab["retained"] = np.where(tab["n_reference_items"] > 0, tab["ok_ref"], tab["ok_top"])
    return tab.drop(columns=["ok_ref", "ok_top"]).reset_index()


def _f(x: Any) -> float | None:
    if x is None:
        return None
    x = float(x)
    return None if not np.isfinite(x) else round(x, 6)


def summarize_tasks(tasks, min_agree: int) -> dict:
    """The StereoSet figures of a set of tasks (rows of :func:`task_table`)."""
    ref = tasks["reference_agreement"].dropna()
    n = len(tasks)
    kept = int(tasks["retained"].sum())
    return {
        "n_tasks": n,
        "reference_agreement": _f(ref.mean()) if len(ref) else None,
        "n_reference_tasks": int(len(ref)),
        "reference_votes": int(tasks["reference_votes"].sum()),
        "reference_answers": int(tasks["reference_answers"].sum()),
        "n_reference_items": int(tasks["n_reference_items"].sum()),
        "majority_share": _f(tasks["majority_share"].mean()) if n else None,
        "min_agree": int(min_agree),
        "retained": kept,
        "retention_rate": _f(kept / n) if n else None,
    }


def target_rows(df, tasks, bias_type, target, min_agree: int, stats) -> list[dict]:
    """One row per (bias type, target term), sorted by bias type, then reference agreement (highest
    first, as StereoSet's Table 10), then term. ``stats(sub)``: agreement statistics of the rows."""
    if target.isna().all():
        return []
    import pandas as pd

    b_codes, b_uni = pd.factorize(bias_type.astype(object).where(bias_type.notna(), UNKNOWN))
    t_codes, t_uni = pd.factorize(target.astype(object).where(target.notna(), UNKNOWN))
    group, g_uni = pd.factorize(b_codes.astype(np.int64) * len(t_uni) + t_codes)
    task_codes, task_uni = pd.factorize(df["task"].astype(str))
    _, first = np.unique(task_codes, return_index=True)  # a task's first row gives its term
    group_of = np.full(len(task_uni), -1, dtype=np.int64)
    group_of[task_codes[first]] = group[first]
    tk = tasks.assign(group=group_of[pd.Index(task_uni).get_indexer(tasks["task"].astype(str))])
    n_judg = np.bincount(group, minlength=len(g_uni))
    w_codes, w_uni = pd.factorize(df["worker"])
    n_ann = np.bincount(
        np.unique(group.astype(np.int64) * max(len(w_uni), 1) + w_codes) // max(len(w_uni), 1), minlength=len(g_uni)
    )
    subs = dict(iter(df.groupby(group, sort=False))) if stats is not None else {}
    rows = []
    for g, sub_tasks in tk.groupby("group", sort=False):
        g = int(g)
        b, t = str(b_uni[g_uni[g] // len(t_uni)]), str(t_uni[g_uni[g] % len(t_uni)])
        row = {
            "bias_type": b,
            "target": t,
            **summarize_tasks(sub_tasks, min_agree),
            "n_items": int(sub_tasks["n_items"].sum()),
            "n_judgments": int(n_judg[g]),
            "n_annotators": int(n_ann[g]),
        }
        if stats is not None:
            row.update(stats(subs[g]))
        rows.append({k: row.get(k) for k in TARGET_COLUMNS})
    rows.sort(
        key=lambda r: (
            r["bias_type"],
            -(r["reference_agreement"] if r["reference_agreement"] is not None else r["majority_share"] or 0.0),
            r["target"],
        )
    )
    return rows


def markdown(rep: dict) -> list[str]:
    """The per-term section of agreement.md (grouped by bias type, StereoSet's order)."""
    rows = rep.get("per_target") or []
    if not rows:
        return []

    k = rows[0]["min_agree"]
    return [
        "## Per target term (StereoSet, Table 10)",
        "",
        "Agreement with the reference (writer's) label per item, averaged per example, then over the term's "
        f"examples; retained: examples whose reference items all have >= {k} votes for it. "
        "Sorted by bias type, then agreement.",
        "",
        md_table(
            [
                "bias type",
                "target",
                "examples",
                "items",
                "agreement with reference",
                "votes / answers",
                "majority share",
                f"retained (>={k})",
                "Fleiss",
                "% agree",
            ],
            [
                [
                    r["bias_type"],
                    r["target"],
                    r["n_tasks"],
                    r["n_items"],
                    num(r["reference_agreement"], 3),
                    f"{r['reference_votes']} / {r['reference_answers']}",
                    num(r["majority_share"], 3),
                    f"{r['retained']} ({num(r['retention_rate'], 3)})",
                    num(r["fleiss_kappa"], 3),
                    num(r["percent_agreement"], 3),
                ]
                for r in rows
            ],
        ),
        "",
    ]
