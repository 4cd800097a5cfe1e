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
from biaskit.options import say
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
        raise InputError("file not found.", path=p, fix=f"check the {say('data')} path.")
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


@dataclass
class Known:
    """What is known of each task (:func:`resolve_codes`): its bias type and target term as codes into
    ``values`` (-1: unknown; the same for every row of a task), and each item's reference label as a
    code into ``ref_names`` (-1: unknown); tasks and items numbered as in :class:`~.aggregate.Counts`."""

    task_codes: dict[str, np.ndarray]  # name -> per task: code into values[name], -1 unknown
    values: dict[str, np.ndarray]  # name -> distinct values (object: str)
    row_task: np.ndarray  # per row: its task's code
    ref_code: np.ndarray  # per item: code into ref_names, -1 unknown
    ref_names: np.ndarray  # the reference labels (object: str)

    def has(self, name: str) -> bool:
        return bool((self.task_codes[name] >= 0).any())

    def has_reference(self) -> bool:
        return bool((self.ref_code >= 0).any())

    def named_tasks(self, name: str) -> tuple[np.ndarray, np.ndarray]:
        """Per task: a code into the names, where an unknown value is :data:`UNKNOWN` (names that read
        the same are one)."""
        import pandas as pd

        names = np.append(np.asarray(self.values[name], dtype=object), UNKNOWN).astype(str)
        merged, uniq = pd.factorize(names, sort=False)
        codes = self.task_codes[name]
        return merged[np.where(codes < 0, len(names) - 1, codes)], np.asarray(uniq, dtype=object)

    def per_item(self, name: str, item_task: np.ndarray):
        """Per item: its task's value, a categorical column (missing: unknown)."""
        from biaskit.readers.columnar import categorical

        return _categorical(self.task_codes[name][item_task], self.values[name], categorical)

    def reference_labels(self):
        """Per item: the reference label, a categorical column (missing: unknown)."""
        from biaskit.readers.columnar import categorical

        return _categorical(self.ref_code, self.ref_names, categorical)


def _categorical(codes: np.ndarray, values: np.ndarray, categorical):
    import pandas as pd

    return categorical(codes.astype(np.int64, copy=False), pd.Index(np.asarray(values, dtype=object), dtype="str"))


def resolve_codes(df, info: TaskInfo, coded) -> Known:
    """Bias type and target of each task from the data, else from the judgment columns (the first
    non-empty value of the task's rows, as text); the reference label of each item from the data, else
    from the judgment column ``reference`` (a non-empty value, as text). ``coded``: ``df`` as
    :func:`.subsets.code` numbers it."""
    from .aggregate import first_positions

    task_codes, values = {}, {}
    first_row = first_positions(coded.task, len(coded.tasks)) if not (info.bias_type and info.target) else None
    for name, from_data in (("bias_type", info.bias_type), ("target", info.target)):
        task_codes[name], values[name] = _task_values(df, name, from_data, coded, first_row)
    ref_code, ref_names = _item_references(df, info, coded)
    return Known(task_codes, values, coded.task, ref_code, ref_names)


def _task_values(df, name: str, from_data: dict, coded, first_row) -> tuple[np.ndarray, np.ndarray]:
    """Per task: a code into the values of ``name`` (numbered in order of the tasks), -1 unknown
    (``first_row``: each task's first row)."""
    import pandas as pd

    from .aggregate import first_appearance

    n_tasks = len(coded.tasks)
    if from_data:
        per_task = np.array([from_data.get(str(t)) for t in np.asarray(coded.tasks, dtype=object)], dtype=object)
        codes, uniq = pd.factorize(per_task, sort=False)  # None: -1
        return codes, np.asarray(uniq, dtype=object)
    codes, names = _first_codes(df, name, coded.task, first_row)
    known = codes >= 0
    out = np.full(n_tasks, -1, dtype=np.int64)
    if not known.any():
        return out, np.zeros(0, dtype=object)
    out[known], first = first_appearance(codes[known], len(names))
    return out, names[first]


def _item_references(df, info: TaskInfo, coded) -> tuple[np.ndarray, np.ndarray]:
    """Per item: a code into the reference labels (-1 unknown), and those labels."""
    import pandas as pd

    c = coded.counts
    if info.reference:
        tasks = np.asarray(coded.tasks, dtype=object)[c.item_task]
        questions = np.asarray(coded.questions, dtype=object)[c.item_question]
        ref = np.array(
            [info.reference.get((str(t), str(q))) for t, q in zip(tasks, questions, strict=True)], dtype=object
        )
        codes, uniq = pd.factorize(ref, sort=False)
        return codes, np.asarray(uniq, dtype=object)
    item_code = np.full(c.n_items, -1, dtype=np.int64)
    if "reference" not in df.columns:
        return item_code, np.zeros(0, dtype=object)
    codes, vals = _text_values(df["reference"])
    has = codes >= 0
    if has.all():
        item_code[c.row_item] = codes  # one reference per item (as item_reference_votes)
    elif has.any():
        item_code[c.row_item[has]] = codes[has]
    return item_code, vals


def _text_values(col) -> tuple[np.ndarray, np.ndarray]:
    """Per row a code into the distinct values as text (``str(value)``), -1 where the value is missing
    or blank."""
    import pandas as pd

    from .aggregate import factorize

    if isinstance(col.dtype, pd.CategoricalDtype):  # decided once per category, through the codes
        codes, uniq = col.cat.codes.to_numpy(), col.cat.categories
    else:
        codes, uniq = factorize(col)
    values = pd.Series(np.asarray(uniq, dtype=object), dtype=object)
    ok = (values.notna() & (values.astype(str).str.strip() != "")).to_numpy(dtype=bool)
    text = np.array([str(v) for v in values], dtype=object)
    merged, names = pd.factorize(text, sort=False) if len(text) else (np.zeros(0, np.int64), [])
    lut = np.append(np.where(ok, merged, -1), -1)  # the last entry: code -1 (missing)
    return lut[codes], np.asarray(names, dtype=object)


def _first_codes(df, col: str, row_task: np.ndarray, first_row: np.ndarray) -> tuple[np.ndarray, np.ndarray]:
    """Per task: a code into the texts of a judgment column, that of the first non-empty value among its
    rows (-1: none); and the texts. ``first_row``: each task's first row."""
    n_tasks = len(first_row)
    out = np.full(n_tasks, -1, dtype=np.int64)
    if col not in df.columns:
        return out, np.zeros(0, dtype=object)
    codes, names = _text_values(df[col])
    if len(codes) and codes.min() >= 0:  # every row has a value: the first row's
        return codes[first_row].astype(np.int64), names
    ok = np.flatnonzero(codes >= 0)
    if len(ok):
        first = np.full(n_tasks, -1, dtype=np.int64)
        first[row_task[ok[::-1]]] = ok[::-1]
        has = first >= 0
        out[has] = codes[first[has]]
    return out, names


def item_reference_votes(c, row_ref) -> tuple[np.ndarray, np.ndarray]:
    """Per item of ``c`` (:class:`~.aggregate.Counts`): its reference label (object, None when
    unknown) and the votes for it (float, NaN when unknown; 0 when nobody chose it)."""
    import pandas as pd

    ref = np.full(c.n_items, None, dtype=object)
    rr = np.asarray(row_ref, dtype=object)
    has = pd.notna(rr)
    if has.any():
        ref[c.row_item[has]] = rr[has]  # one reference per item (same for every row of the item)
    return ref, reference_votes(c, ref)


def reference_votes(c, ref: np.ndarray) -> np.ndarray:
    """Per item: the votes for its reference label ``ref`` (float; NaN when unknown, 0 when nobody chose it)."""
    import pandas as pd

    known = pd.notna(ref)
    codes = np.full(c.n_items, -1, dtype=np.int64)
    names: Any = []
    if known.any():
        codes[known], names = pd.factorize(ref[known], sort=False)  # a few distinct labels: each looked up once
    return reference_votes_of_codes(c, codes, np.asarray(names, dtype=object))


def reference_votes_of_codes(c, code: np.ndarray, names: np.ndarray) -> np.ndarray:
    """:func:`reference_votes` of references given as codes into ``names`` (-1: unknown)."""
    import pandas as pd

    votes = np.full(c.n_items, np.nan)
    idx = np.flatnonzero(code >= 0)
    if len(idx):
        L = max(len(c.labels), 1)
        text = np.asarray(names, dtype=object).astype(str)
        to_label = pd.Index(c.labels).get_indexer(text) if len(c.labels) else np.full(len(text), -1)
        label = to_label[code[idx]]
        want = idx.astype(np.int64) * L + label
        keys = c.item.astype(np.int64) * L + c.label  # increasing (count_votes sorts its entries)
        at = np.minimum(np.searchsorted(keys, want), max(len(keys) - 1, 0))
        found = (label >= 0) & (len(keys) > 0) & (keys[at] == want if len(keys) else False)
        votes[idx] = np.where(found, c.count[at] if len(keys) else 0, 0)
    return votes


def default_min_agree(c) -> int | None:
    """A strict majority of the usual (modal) number of annotators per item: 3 of 5, 2 of 3."""
    if c.n_items == 0:
        return None
    vals, cnts = np.unique(c.n, return_counts=True)
    return int(vals[np.argmax(cnts)]) // 2 + 1


def task_table(c, ref_votes: np.ndarray, top: np.ndarray, min_agree: int, task_ids=None):
    """One row per task: items, reference agreement (mean over its reference items), majority share,
    reference votes / answers, retained at ``min_agree``. ``task_ids``: the tasks' ids by task code (else
    taken from ``c.items``)."""
    import pandas as pd

    n = c.n.astype(np.float64)
    has_ref = ~np.isnan(ref_votes)
    ref_votes0 = np.where(has_ref, ref_votes, 0.0)
    top_f = top.astype(np.float64)
    # retention: on reference items when the task has any, else on the (unique) plurality label of every item
    # the reference label must also be the unique plurality (as annotation/cat_rule.py; with 5
    # validators and k = 3 this always holds when it has 3 votes)
    n_top = np.bincount(c.item[c.count == top[c.item]], minlength=c.n_items) if c.n_items else np.zeros(0)
    unique_winner = (ref_votes0 == top_f) & (n_top == 1)
    ok_ref = ~has_ref | ((ref_votes0 >= min_agree) & unique_winner)
    ok_top = (top_f >= min_agree) & (n_top == 1)
    if c.item_task is not None:
        key, names = c.item_task, None
    else:
        key, names = pd.factorize(c.items["task"].astype(str).to_numpy(), sort=False)
    n_tasks = int(key.max()) + 1 if len(key) else 0
    order = np.arange(n_tasks)  # the task codes run in order of first appearance: the table's order
    ref_share = np.where(has_ref, ref_votes0 / np.maximum(n, 1), np.nan)
    maj_share = top_f / np.maximum(n, 1)
    mean_ref, mean_maj = _task_means(key, n_tasks, ref_share, maj_share)

    def per_task(weights=None):
        return np.bincount(key, weights=weights, minlength=n_tasks)

    tab = pd.DataFrame(
        {
            "task": order,
            "n_items": per_task(),
            "n_reference_items": per_task(has_ref).astype(np.int64),
            "reference_agreement": mean_ref,  # NaN-skipping mean over reference items
            "reference_votes": per_task(ref_votes0),
            "reference_answers": per_task(np.where(has_ref, n, 0.0)),
            "majority_share": mean_maj,
        }
    )
    ok_r, ok_t = per_task(~ok_ref) == 0, per_task(~ok_top) == 0
    tab["retained"] = np.where(tab["n_reference_items"].to_numpy() > 0, ok_r, ok_t)
    tab["task_code"] = order
    if task_ids is not None:
        tab["task"] = task_ids
    elif names is None:  # grouped by the tasks' codes: their names back, from each task's first item
        _, first_item = np.unique(key, return_index=True)
        tab["task"] = c.items["task"].iloc[first_item].astype(str).reset_index(drop=True)
    else:
        tab["task"] = np.asarray(names, dtype=object)[order]
    return tab


def _task_means(key: np.ndarray, n_tasks: int, *values: np.ndarray) -> list[np.ndarray]:
    """Per task (``key``: each item's task code): the NaN-skipping mean of each of ``values`` over its
    items, as pandas' group mean computes it (a compensated sum): an item's own value where the task has
    one item, a pandas group-by over the items of the others."""
    import pandas as pd

    sizes = np.bincount(key, minlength=n_tasks)
    out = []
    single = sizes[key] == 1
    for v in values:
        m = np.full(n_tasks, np.nan)
        m[key[single]] = v[single]
        out.append(m)
    if not single.all():
        multi = ~single
        g = pd.DataFrame({i: v[multi] for i, v in enumerate(values)}).groupby(key[multi], sort=False).mean()
        idx = g.index.to_numpy()
        for i in range(len(values)):
            out[i][idx] = g[i].to_numpy()
    return out


def _f(x: Any) -> float | None:
    if x is None:
        return None
    x = float(x)
    return None if not np.isfinite(x) else round(x, 6)


#: the columns of :func:`task_table` that :func:`summarize_tasks` reads
TASK_FIGURES = (
    "n_items",
    "n_reference_items",
    "reference_agreement",
    "reference_votes",
    "reference_answers",
    "majority_share",
    "retained",
)


def task_columns(tasks, rows: Any = None) -> dict[str, np.ndarray]:
    """The columns of :func:`task_table` that :func:`summarize_tasks` reads, as arrays (of ``rows``: a mask
    or positions; default all); ``tasks``: the table or such columns."""
    cols = tasks if isinstance(tasks, dict) else {c: tasks[c].to_numpy() for c in TASK_FIGURES}
    return cols if rows is None else {c: v[rows] for c, v in cols.items()}


def summarize_tasks(tasks, min_agree: int) -> dict:
    """The StereoSet figures of a set of tasks (rows of :func:`task_table`, or :func:`task_columns`)."""
    cols = tasks if isinstance(tasks, dict) else task_columns(tasks)
    every = cols["reference_agreement"]
    ref = every[~np.isnan(every)]
    n = len(every)
    kept = int(cols["retained"].sum())
    return {
        "n_tasks": n,
        "reference_agreement": _f(_mean(ref)) if len(ref) else None,
        "n_reference_tasks": int(len(ref)),
        "reference_votes": int(cols["reference_votes"].sum()),
        "reference_answers": int(cols["reference_answers"].sum()),
        "n_reference_items": int(cols["n_reference_items"].sum()),
        "majority_share": _f(_mean(cols["majority_share"])) if n else None,
        "min_agree": int(min_agree),
        "retained": kept,
        "retention_rate": _f(kept / n) if n else None,
    }


def _mean(v: np.ndarray) -> float:
    """``pandas.Series(v).mean()`` as pandas computes it (without bottleneck): the sum of the values that
    are not NaN (NaN counted as 0, in place) divided by their number."""
    missing = np.isnan(v)
    if missing.any():
        return float(np.where(missing, 0.0, v).sum() / np.float64((~missing).sum()))
    return float(v.sum() / np.float64(len(v)))


def target_rows(tasks, known: Known, min_agree: int, group_stats) -> list[dict]:
    """One row per (bias type, target term), sorted by bias type, then reference agreement (highest
    first, as StereoSet's Table 10), then term. ``known``: :func:`resolve_codes`; ``tasks``:
    :func:`task_table`; ``group_stats(group, n)``: for tasks in ``n`` groups (``group``: each task's),
    the figures of each group's judgments (a dict per group: ``n_judgments``, ``n_annotators`` and the
    agreement statistics of :data:`TARGET_COLUMNS`)."""
    if not known.has("target"):
        return []
    import pandas as pd

    b_task, b_uni = known.named_tasks("bias_type")
    t_task, t_uni = known.named_tasks("target")
    group_of, g_uni = pd.factorize(b_task.astype(np.int64) * len(t_uni) + t_task, sort=False)  # per task
    stats = group_stats(group_of, len(g_uni))
    group = group_of[tasks["task_code"].to_numpy()]
    order = np.argsort(group, kind="stable")  # each group's tasks in the table's order
    bounds = np.searchsorted(group[order], np.arange(len(g_uni) + 1))
    cols = task_columns(tasks)
    rows = []
    for g in range(len(g_uni)):
        sub = {c: v[order[bounds[g] : bounds[g + 1]]] for c, v in cols.items()}
        row = {
            "bias_type": str(b_uni[g_uni[g] // len(t_uni)]),
            "target": str(t_uni[g_uni[g] % len(t_uni)]),
            **summarize_tasks(sub, min_agree),
            "n_items": int(sub["n_items"].sum()),
            **stats[g],
        }
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
