"""Where an annotation project stands: progress per annotator, overlap, agreement so far, time per
task, and who disagrees most with the others (quality control).

:func:`project_status` is a pure function of a project's pulled judgments (the rows ``biaskit
annotate pull`` writes) and its number of tasks; ``biaskit annotate status --project P`` feeds it
from a live Label Studio, ``--judgments F --tasks N`` from files, and a pipeline can call it
directly. Definitions (an *annotation* is one annotator's answer to one task; an annotator who
answered a task twice counts once, with the latest answer):

- ``done``: tasks with at least ``overlap`` annotators (the project's annotators per task);
  ``in_progress``: 1 to ``overlap - 1``; ``not_started``: none. ``annotators_per_task`` counts
  the tasks by their number of annotators (0 included).
- per annotator, ``done``: the tasks they annotated; ``pending``: the tasks still short of the
  overlap that they have not annotated (what is left for them to pick from).
- ``agreement``: :func:`biaskit.annotation.agreement.metrics` on the choice answers so far
  (text answers are edits, not votes), on the items two or more annotators answered.
- ``time_per_task``: Label Studio's ``lead_time`` (seconds an annotator spent on a task), per
  annotation: overall and per annotator (median, mean).
- ``disagreement_rate`` (per annotator): of the items (task x question) they answered that at
  least ``min_others`` other annotators answered too and where those others have a unique most
  frequent label (the *leave-one-out majority*: the annotator's own answer left out), the share
  where the annotator's label differs from it. High rates single out careless or misunderstanding
  annotators; the list is sorted by it, highest first. Each option of a multiple-choice question
  is an item of its own (``concern:<code>``, yes / no), as in aggregation and agreement;
  ``questions`` restricts agreement and disagreement to some questions (``concern`` = all its options).
"""

from __future__ import annotations

from typing import TYPE_CHECKING, Any

import numpy as np

from biaskit.errors import InputError
from biaskit.tables import MISSING, md_table, num, pct

from .adaptive import ADAPTIVE_ALPHA_NOTE

if TYPE_CHECKING:
    from .options import StatusOptions


def _annotations(df):
    """One row per (task, worker) with the annotation's lead time (the latest when answered twice)."""
    import pandas as pd

    from .aggregate import normalise_ids

    cols = [c for c in ("task", "worker", "lead_time", "updated_at", "created_at") if c in df.columns]
    a = normalise_ids(df[cols])  # the ids as every judgments reader reads them (1.0 = 1, spaces dropped)
    if "updated_at" in a.columns or "created_at" in a.columns:
        ts = pd.to_datetime(a.get("updated_at", a.get("created_at")), errors="coerce", utc=True)
        if "created_at" in a.columns:
            ts = ts.fillna(pd.to_datetime(a["created_at"], errors="coerce", utc=True))
        a["_ts"] = ts
        a = a.sort_values("_ts", kind="stable", na_position="first")
    a = a.drop_duplicates(["task", "worker"], keep="last")
    lt = (
        pd.to_numeric(a["lead_time"], errors="coerce") if "lead_time" in a.columns else pd.Series(np.nan, index=a.index)
    )
    return pd.DataFrame({"task": a["task"].to_numpy(), "worker": a["worker"].to_numpy(), "lead_time": lt.to_numpy()})


def _round(x) -> float | None:
    return None if x is None or not np.isfinite(x) else round(float(x), 3)


def _time_stats(x) -> dict[str, Any]:
    x = np.asarray(x, dtype=float)
    x = x[np.isfinite(x)]
    if not len(x):
        return {"n": 0, "median": None, "mean": None}
    return {"n": int(len(x)), "median": round(float(np.median(x)), 3), "mean": round(float(np.mean(x)), 3)}


def leave_one_out(df, min_others: int = 2):
    """Per judgment row of prepared choice judgments (task, question, worker, label; one answer per
    annotator and item): ``compared`` (the others' majority is defined) and ``disagree`` (the row's
    label is not it). Vectorised: per item, the top two label counts decide the others' majority."""
    import pandas as pd

    n_rows = len(df)
    if n_rows == 0:
        return np.zeros(0, bool), np.zeros(0, bool)
    item = pd.factorize(df["task"].astype(str) + "\x1f" + df["question"].astype(str))[0]
    lab = pd.factorize(df["label"].astype(str))[0]
    key = item.astype(np.int64) * (lab.max() + 1) + lab
    uk, inv, cnt = np.unique(key, return_inverse=True, return_counts=True)
    e_item = uk // (lab.max() + 1)
    n_item = np.bincount(item)
    own = cnt[inv]  # votes for the row's own label in its item (itself included)
    # per item: the highest and second-highest label counts, and how many labels reach the highest
    order = np.lexsort((-cnt, e_item))
    si, sc = e_item[order], cnt[order]
    first = np.r_[True, si[1:] != si[:-1]]
    top1 = np.zeros(len(n_item), np.int64)
    top1[si[first]] = sc[first]
    second = np.r_[False, (si[1:] == si[:-1]) & first[:-1]]  # the entry right after each item's first
    top2 = np.zeros(len(n_item), np.int64)
    top2[si[second]] = sc[second]
    n_top1 = np.bincount(e_item[cnt == top1[e_item]], minlength=len(n_item))
    n_top2 = np.bincount(e_item[cnt == top2[e_item]], minlength=len(n_item))
    t1, t2, nt1, nt2 = top1[item], top2[item], n_top1[item], n_top2[item]
    mine = own - 1  # the others' votes for my label
    own_is_sole_top = (own == t1) & (nt1 == 1)
    # the best count among the *other* labels, and how many other labels reach it
    best_other = np.where(own_is_sole_top, t2, t1)
    n_best_other = np.where(own_is_sole_top, np.where(t2 > 0, nt2, 0), nt1 - (own == t1))
    enough = (n_item[item] - 1) >= min_others
    agree = mine > best_other
    disagree = (best_other > mine) & (n_best_other == 1)
    compared = enough & (agree | disagree)
    return compared, compared & disagree


def project_status(
    judgments,
    n_tasks: int,
    *,
    overlap: int = 1,
    min_others: int = 2,
    questions: list[str] | None = None,
    source: str | None = None,
    adaptive: tuple[Any, dict] | None = None,
) -> dict[str, Any]:
    """The status report (a JSON-able dict) of a project with ``n_tasks`` tasks, ``overlap``
    annotators wanted per task, from its pulled ``judgments`` (a DataFrame or rows); see the module
    docstring for every figure. ``adaptive``: ``(AdaptiveSettings, {task: Decision})`` of a project
    with adaptive overlap: ``done`` are then the settled tasks (``overlap`` is the first round's
    ``min_judgments``), and ``adaptive`` reports settled / open tasks and the judgments saved so far
    (:func:`biaskit.annotation.adaptive.summarize`)."""
    import pandas as pd

    from biaskit.options import say

    from .aggregate import check_columns

    if overlap < 1:
        raise InputError(f"overlap must be at least 1, got {overlap}.", fix="give the annotators wanted per task.")
    df = judgments if isinstance(judgments, pd.DataFrame) else pd.DataFrame(list(judgments))
    if len(df):
        check_columns(df, source)
    ann = _annotations(df) if len(df) else pd.DataFrame(columns=["task", "worker", "lead_time"])
    per_task = ann.groupby("task").size() if len(ann) else pd.Series(dtype=int)
    if len(per_task) > n_tasks:
        raise InputError(
            f"the judgments name {len(per_task)} tasks but the project has {n_tasks}.",
            path=source,
            fix=f"pass the project's number of tasks ({say('tasks')}), or the judgments of this project.",
        )
    hist = per_task.value_counts().to_dict()
    hist[0] = n_tasks - len(per_task)
    done_tasks = per_task.index[per_task >= overlap]
    if adaptive is not None:
        done_tasks = pd.Index(sorted(t for t, d in adaptive[1].items() if d.settled))
    short = n_tasks - len(done_tasks)  # tasks below the overlap target (not started included)
    prep = _answers(df, questions, source)
    people = _per_annotator(ann, prep, done_tasks, short, min_others)
    started = set(per_task.index)
    return {
        "tasks": int(n_tasks),
        "overlap": int(overlap),
        "done": len(done_tasks),
        "in_progress": int(len(started - set(done_tasks))),
        "not_started": int(n_tasks - len(started | set(done_tasks))),
        "annotations": int(len(ann)),
        "annotators": len(people),
        "annotators_per_task": {str(k): int(v) for k, v in sorted(hist.items())},
        "agreement": _agreement_so_far(prep),
        "time_per_task": _time_stats(ann["lead_time"]) if len(ann) else _time_stats([]),
        "min_others": min_others,
        "questions": _base_questions(prep),
        "per_annotator": people,
        **({"adaptive": _adaptive_block(adaptive)} if adaptive is not None else {}),
    }


def _answers(df, questions: list[str] | None, source: str | None):
    """The answers agreement and disagreement are computed on: one per item and annotator (the latest),
    only of ``questions`` when given (a question, or all options of a multiple-choice one: ``concern``
    -> ``concern:<code>``)."""
    import pandas as pd

    from .aggregate import prepare

    prep = (
        prepare(df, duplicates="last", source=source).df
        if len(df)
        else pd.DataFrame(columns=["task", "question", "worker", "label"])
    )
    if not questions:
        return prep
    wanted = {q for q in map(str, prep["question"].unique()) if q in questions or q.split(":")[0] in questions}
    if len(prep) and not wanted:
        raise InputError(
            f"no answers to question(s) {', '.join(questions)}.",
            path=source,
            fix=f"use one of {', '.join(_base_questions(prep))}.",
        )
    return prep[prep["question"].isin(wanted)].reset_index(drop=True)


def _per_annotator(ann, prep, done_tasks, short: int, min_others: int) -> list[dict[str, Any]]:
    """One entry per annotator (tasks done and pending, judgments, lead times, leave-one-out
    disagreement), the highest disagreement rate first."""
    import pandas as pd

    compared, disagree = leave_one_out(prep, min_others)
    loo = pd.DataFrame({"worker": prep["worker"].to_numpy(), "compared": compared, "disagree": disagree})
    loo_by = loo.groupby("worker").sum() if len(loo) else pd.DataFrame(columns=["compared", "disagree"])
    n_judg = prep["worker"].value_counts()
    people = []
    if len(ann):  # one row per (task, worker): counts and lead times per annotator, grouped once
        g = ann.groupby("worker", sort=True)
        done = g.size()
        short_done = ann[~ann["task"].isin(done_tasks)].groupby("worker").size()
        med, mean = g["lead_time"].median(), g["lead_time"].mean()
        for w in done.index:
            c = int(loo_by.loc[w, "compared"]) if w in loo_by.index else 0
            d = int(loo_by.loc[w, "disagree"]) if w in loo_by.index else 0
            people.append(
                {
                    "annotator": w,
                    "done": int(done[w]),
                    "pending": short - int(short_done.get(w, 0)),
                    "judgments": int(n_judg.get(w, 0)),
                    "lead_time_median": _round(med[w]),
                    "lead_time_mean": _round(mean[w]),
                    "compared": c,
                    "disagreements": d,
                    "disagreement_rate": round(d / c, 4) if c else None,
                }
            )
    people.sort(key=lambda p: (p["disagreement_rate"] is None, -(p["disagreement_rate"] or 0), p["annotator"]))
    return people


def _agreement_so_far(prep) -> dict[str, Any]:
    """:func:`~.agreement.metrics` on the answers so far (only the count of multi-annotator items when none)."""
    from .agreement import metrics

    if not len(prep):
        return {"n_items_multi": 0}
    m = metrics(prep)
    keys = (
        "krippendorff_alpha",
        "fleiss_kappa",
        "mean_pairwise_cohen_kappa",
        "percent_agreement",
        "n_items",
        "n_items_multi",
    )
    return {k: m.get(k) for k in keys}


def _adaptive_block(adaptive: tuple[Any, dict]) -> dict[str, Any]:
    """Settled / open tasks and the judgments saved (:func:`~.adaptive.summarize`), with the note on alpha."""
    from .adaptive import summarize

    block = summarize(adaptive[1], adaptive[0])
    block["agreement_note"] = ADAPTIVE_ALPHA_NOTE
    return block


def status_of(opts: StatusOptions) -> tuple[dict[str, Any], str]:
    """``biaskit annotate status``: the report of :func:`project_status` and its title, from a live
    project (``opts.project``, read through :func:`~.labelstudio.project_judgments`) or from files
    (``opts.judgments`` with ``opts.tasks``)."""
    from biaskit.options import say, tell

    if (opts.project is None) == (opts.judgments is None):
        raise InputError(
            f"give either {say('project')} (a live Label Studio) or {say('judgments')} with {say('tasks')} (files).",
            fix=f"e.g. {say('project')} 'hi pairs v1'.",
        )
    common: dict[str, Any] = {"min_others": opts.min_others, "questions": opts.question}
    if opts.project is not None:
        from .labelstudio import project_judgments

        got = project_judgments(opts.project, url=opts.url)
        st = project_status(
            got.judgments,
            got.n_tasks,
            overlap=opts.overlap or got.overlap,
            source=got.url,
            adaptive=(got.adaptive, got.decisions) if got.adaptive is not None else None,
            **common,
        )
        return st, f"'{opts.project}' ({got.url})"
    from biaskit.readers import read_judgments

    if opts.tasks is None:
        raise InputError(
            f"{say('judgments')} needs {say('tasks')} (the project's number of tasks).",
            fix=f"{tell('tasks', 'N')} (tasks with no answer yet are pending).",
        )
    st = project_status(
        read_judgments(opts.judgments), opts.tasks, overlap=opts.overlap or 1, source=str(opts.judgments), **common
    )
    return st, str(opts.judgments)


#: what the status and agreement reports say about alpha on adaptively collected judgments
def _base_questions(prep) -> list[str]:
    """The questions answered (a multiple-choice question once, not per option)."""
    return sorted({str(q).split(":")[0] for q in prep["question"].unique()})


def _f(x: Any, nd: int = 3) -> str:
    return num(x, nd)


def status_markdown(st: dict[str, Any], title: str = "") -> str:
    """The status report as Markdown (what ``annotate status`` prints)."""
    n = st["tasks"]
    share = (lambda k: f"{k} ({pct(k / n)})") if n else str
    a, t = st["agreement"], st["time_per_task"]
    ad = st.get("adaptive")
    wanted = (
        f"adaptive overlap ({ad['min_judgments']}..{ad['max_judgments']} annotators per task): "
        f"**{share(st['done'])} settled**"
        if ad
        else f"{st['overlap']} annotator(s) wanted per task: **{share(st['done'])} done**"
    )
    lines = [
        f"# Annotation status{': ' + title if title else ''}",
        "",
        f"{n} tasks, {wanted}, "
        f"{st['in_progress']} in progress, {st['not_started']} not started; {st['annotations']} annotations by "
        f"{st['annotators']} annotator(s).",
        "",
        "Tasks by number of annotators: " + ", ".join(f"{k}: {v}" for k, v in st["annotators_per_task"].items()) + ".",
        "",
        f"Agreement so far ({a.get('n_items_multi', 0)} items with 2+ answers; questions: "
        f"{', '.join(st['questions']) or 'none'}): Krippendorff's alpha "
        f"{_f(a.get('krippendorff_alpha'))}, Fleiss' kappa {_f(a.get('fleiss_kappa'))}, percent agreement "
        f"{_f(a.get('percent_agreement'))}.",
        "",
        f"Time per task (Label Studio lead time, {t['n']} annotations): median {_f(t['median'], 1)} s, "
        f"mean {_f(t['mean'], 1)} s.",
        "",
    ]
    if ad:
        pol = ad["policy"] + (f", epsilon {ad['epsilon']:g}" if ad.get("epsilon") else "")
        by = ", ".join(f"{k} {v}" for k, v in ad["settled_by"].items()) or "none yet"
        lines += [
            f"Adaptive overlap ({pol}; {ad['min_judgments']}..{ad['max_judgments']} judgments per task): "
            f"**{ad['settled']} settled** (by {by}), {ad['open']} open ({ad['asked_for']} more judgment(s) "
            f"asked for); {ad['judgments']} judgments so far, {ad['judgments_saved']} saved against "
            f"{ad['max_judgments']} per task ({_f(ad['saved_share'])} of {ad['judgments_full_overlap']}). "
            f"Agreement above: {ad['agreement_note']}.",
            "",
        ]
    lines.append(
        md_table(
            [
                "annotator",
                "tasks done",
                "pending",
                "median s/task",
                f"disagrees with the others' majority (items with {st['min_others']}+ others)",
            ],
            [
                [
                    p["annotator"],
                    p["done"],
                    p["pending"],
                    _f(p["lead_time_median"], 1),
                    MISSING
                    if p["disagreement_rate"] is None
                    else f"{pct(p['disagreement_rate'])} ({p['disagreements']} of {p['compared']})",
                ]
                for p in st["per_annotator"]
            ],
            align="lrrrr",
        )
    )
    return "\n".join(lines) + "\n"
