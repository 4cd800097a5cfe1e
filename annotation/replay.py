"""``biaskit annotate replay``: what adaptive overlap would have saved on judgments already collected.

The recorded judgments are replayed in their recorded order (per task, its annotators in the order
their first answer appears in the file) in rounds, as a live adaptive project runs: every task
first gets ``min_judgments``; after each round the policy (:func:`.adaptive.decide`, the crowd
model refitted on everything revealed so far for ``risk``) settles the tasks it can, and each open
task gets the further judgments it asks for, up to ``max_judgments`` or until the file has no more.
Each task's adaptive decision is compared with its **full-overlap decision** (the kind's rule on its
first ``max_judgments`` recorded annotators).

``unit``: ``task`` (default) -- a judgment is one annotator's answer to a whole task, as in Label
Studio (a CAT's three sentences together); ``item`` -- each deciding question of a task is collected
on its own (StereoSet's "five validators per sentence"), so a CAT's settled sentences stop while its
open ones go on.

Works on any judgments file of a kind: ``annotate pull`` output, ``annotate from-stereoset`` output
(StereoSet's validator labels, kind ``cat``), or synthetic crowds (``benchmarks/adaptive_overlap.py``).
"""

from __future__ import annotations

from pathlib import Path
from typing import TYPE_CHECKING, Any

from biaskit.errors import InputError
from biaskit.options import say
from biaskit.tables import pct

from .adaptive import AdaptiveSettings, Decision, TaskVotes, decide, fit_model, rule_spec

if TYPE_CHECKING:
    from .judgment_options import ReplayOptions

UNITS = ("task", "item")


class _OneQuestion:
    """A kind seen through one of its deciding questions (``unit='item'``)."""

    def __init__(self, kind, question: str):
        self.kind, self.question = kind, question
        self.name = kind.name

    def decision_rules(self, min_agree=None):
        return {self.question: self.kind.decision_rules(min_agree)[self.question]}

    def task_outcome(self, outcomes):
        return next(iter(outcomes.values()))

    def task_settled(self, outcomes, settled):
        return all(settled.values())

    def accepts(self, outcome):
        return self.kind.accepts(outcome)


def _infer_kind(df, source: str | None) -> str:
    from .kinds import KINDS

    kinds = sorted({str(k) for k in df["kind"].dropna().unique()}) if "kind" in df.columns else []
    if len(kinds) == 1 and kinds[0] in KINDS.names():
        return kinds[0]
    if len(kinds) == 1:
        import difflib

        close = difflib.get_close_matches(kinds[0], list(KINDS.names()), n=1)
        raise InputError(
            f"unknown task kind '{kinds[0]}' in the 'kind' column"
            + (f" (did you mean '{close[0]}'?)." if close else "."),
            path=source,
            column="kind",
            fix=f"correct the column, or pass {say('kind')} {'|'.join(KINDS.names())}.",
        )
    if len(kinds) > 1:
        raise InputError(
            f"the judgments mix task kinds ({', '.join(kinds)}).",
            path=source,
            fix="replay one kind at a time (filter the rows by their 'kind' column).",
        )
    raise InputError(
        "the judgments do not say their task kind (no 'kind' column).",
        path=source,
        fix=f"pass {say('kind')} {'|'.join(KINDS.names())}.",
    )


def run_replay(opts: ReplayOptions, *, command: str | None = None) -> dict[str, Any]:
    """``annotate replay``: :func:`replay` of ``opts.judgments`` under the adaptive overlap settings of
    ``opts``; the report records ``command`` and is written to ``opts.out`` as JSON when given."""
    rep = replay(
        opts.judgments,
        opts.adaptive_settings(opts.min_agree),
        kind=opts.kind,
        unit=opts.unit,
        duplicates=opts.duplicates,
        allowed=opts.labels,
    )
    rep["command"] = command
    if opts.out is not None:
        from biaskit.io import write_json

        write_json(opts.out, rep)
    return rep


def replay(
    judgments,
    settings: AdaptiveSettings,
    *,
    kind: str | None = None,
    unit: str = "task",
    source: str | None = None,
    examples: int = 20,
    duplicates: str = "error",
    allowed: Any = None,
) -> dict[str, Any]:
    """Replay ``judgments`` (path, DataFrame or rows) under ``settings``; returns the report (see the
    module docstring; ``judgments_*`` count annotations: one annotator's answer to one task).

    The judgments are read as ``annotate aggregate --kind`` reads them (:func:`.aggregate.prepare`):
    the same ids (:func:`.aggregate.normalise_ids`), a label outside the kind's options refused
    (``cat`` also counts StereoSet's released ``related`` as a vote: :attr:`recorded_labels`), the same
    annotator twice on a question refused unless ``duplicates`` is ``last`` or ``first``, empty labels
    left out and counted (``empty_labels``); ``allowed`` replaces the kind's labels (``--labels``)."""
    from biaskit.readers import read_judgments

    from .aggregate import check_columns, prepare
    from .kinds import get_kind

    if unit not in UNITS:
        raise InputError(f"unknown unit '{unit}'.", fix=f"use one of {', '.join(UNITS)}.")
    df = read_judgments(judgments)
    src = source or (str(judgments) if isinstance(judgments, (str, Path)) else None)
    if not len(df):
        raise InputError(
            "no judgments in the file.", path=src, fix="pass the judgments `annotate pull` (or `from-stereoset`) wrote."
        )
    check_columns(df, src)
    k = get_kind(kind or _infer_kind(df, src))
    rules = k.decision_rules(settings.min_agree)
    if "question" not in df.columns:
        if len(rules) != 1:
            raise InputError(
                "the judgments have no 'question' column.",
                path=src,
                fix=f"kind '{k.name}' decides on {', '.join(rules)}: give each row its question.",
            )
        df = df.assign(question=next(iter(rules)))
    allowed = allowed if allowed is not None else _labels(k)
    prep = prepare(k.votes(df), allowed=allowed, duplicates=duplicates, source=src)
    df = prep.df
    asked = set(df["question"])
    deciding = [q for q in rules if q in asked]
    if not deciding:
        raise InputError(
            f"none of the questions that decide a '{k.name}' task ({', '.join(rules)}) is answered.",
            path=src,
            fix=f"replay the judgments of the kind's deciding questions (check {say('kind')}).",
        )
    from .adaptive import task_votes

    tasks = task_votes(df)
    groups: list[tuple[Any, dict[str, TaskVotes]]]  # (the kind, or one question of it, its tasks)
    if unit == "task":
        groups = [(k, tasks)]
    else:
        groups = []
        for q in deciding:
            sub = {
                f"{t}\x1f{q}": TaskVotes(f"{t}\x1f{q}", [w for w, _ in tv.votes[q]], {q: list(tv.votes[q])})
                for t, tv in tasks.items()
                if tv.votes.get(q)
            }
            groups.append((_OneQuestion(k, q), sub))
    finals: dict[str, tuple[Decision, Any, int]] = {}
    rounds = 0
    for gk, gtasks in groups:
        res, r = _replay_group(gk, gtasks, settings)
        rounds = max(rounds, r)
        finals.update(res)
    rep = _report(finals, tasks, k, settings, unit, rules, deciding, rounds, examples, src)
    rep.update(empty_labels=prep.n_missing, duplicates_removed=prep.n_duplicates_removed)
    return rep


def _labels(kind) -> dict[str, set[str]] | None:
    """The labels a replay counts per question: the kind's options (as ``aggregate --kind``), plus the
    labels a recorded source holds beyond them (:attr:`TaskKind.recorded_labels`)."""
    allowed = kind.allowed_labels()
    extra = set(getattr(kind, "recorded_labels", ()))
    return {q: labs | extra for q, labs in allowed.items()} if allowed else None


def _replay_group(kind, tasks: dict[str, TaskVotes], settings: AdaptiveSettings):
    K, N = settings.min_judgments, settings.max_judgments
    rules = kind.decision_rules(settings.min_agree)
    full_n = {t: min(N, len(tv.annotators)) for t, tv in tasks.items()}
    full = {
        t: kind.task_outcome({q: rules[q].outcome(tv.first(full_n[t]).counts(q)) for q in rules})
        for t, tv in tasks.items()
    }
    revealed = {t: min(K, full_n[t]) for t in tasks}
    open_ = [t for t in tasks]
    final: dict[str, tuple[Decision, Any, int]] = {}
    rounds = 0
    while open_:
        rounds += 1
        cur = {t: tasks[t].first(revealed[t]) for t in tasks}
        model = fit_model(cur, rules) if settings.policy == "risk" else None
        dec = decide({t: cur[t] for t in open_}, kind, settings, model=model, ids=open_)
        still = []
        for t in open_:
            d = dec[t]
            if d.settled:
                final[t] = (d, full[t], full_n[t])
            elif revealed[t] >= full_n[t]:  # the file has no more judgments for it
                final[t] = (
                    Decision(t, d.judgments, True, "exhausted", d.outcome, d.items, p_change=d.p_change),
                    full[t],
                    full_n[t],
                )
            else:
                revealed[t] = min(full_n[t], revealed[t] + max(1, d.more))
                still.append(t)
        open_ = still
    return final, rounds


def _alpha(rows) -> float | None:
    import pandas as pd

    from .agreement import metrics

    df = pd.DataFrame(rows, columns=["task", "question", "worker", "label"])
    if df.empty or df["label"].nunique() < 2:
        return None
    try:
        a = metrics(df)["krippendorff_alpha"]
    except Exception:  # alpha is undefined on some data (one label only)
        return None
    return None if a is None else round(float(a), 4)


def _report(finals, tasks, k, settings, unit, rules, deciding, rounds, examples, src) -> dict[str, Any]:
    used = sum(d.judgments for d, _, _ in finals.values())
    full = sum(fn for _, _, fn in finals.values())
    changed = [(t, d, f) for t, (d, f, _) in finals.items() if tuple(d.outcome) != tuple(f)]
    by: dict[str, int] = {}
    hist: dict[int, int] = {}
    for d, _, _ in finals.values():
        by[str(d.by)] = by.get(str(d.by), 0) + 1
        hist[d.judgments] = hist.get(d.judgments, 0) + 1
    n = len(finals)
    acc_full = sum(1 for _, f, _ in finals.values() if k.accepts(tuple(f)))
    acc_ad = sum(1 for d, _, _ in finals.values() if k.accepts(tuple(d.outcome)))
    # alpha on the deciding questions' judgments: full overlap vs what adaptive collection keeps
    full_rows, kept_rows = [], []
    used_rows = full_rows_n = 0
    for t, (d, _, fn) in finals.items():
        base, q_only = (t.split("\x1f", 1) + [None])[:2] if unit == "item" else (t, None)
        tv = tasks[base]
        for q in deciding if q_only is None else [q_only]:
            order = [w for w, _ in tv.votes.get(q, [])] if q_only else tv.annotators
            take_full, take_kept = set(order[:fn]), set(order[: d.judgments])
            for w, lab in tv.votes.get(q, []):
                if w in take_full:
                    full_rows.append((base, q, w, lab))
                    full_rows_n += 1
                if w in take_kept:
                    kept_rows.append((base, q, w, lab))
                    used_rows += 1
    out: dict[str, Any] = {
        "policy": settings.policy,
        "epsilon": settings.epsilon if settings.policy == "risk" else None,
        "unit": unit,
        "kind": k.name,
        "rule": rule_spec({q: rules[q] for q in deciding}),
        "questions": deciding,
        "min_judgments": settings.min_judgments,
        "max_judgments": settings.max_judgments,
        "tasks": n,
        "judgments_full": full,
        "judgments_used": used,
        "judgments_saved": full - used,
        "saved_share": round((full - used) / full, 4) if full else None,
        "rows_full": full_rows_n,
        "rows_used": used_rows,
        "decisions_changed": len(changed),
        "changed_share": round(len(changed) / n, 4) if n else None,
        "accepted_full": acc_full,
        "accepted_adaptive": acc_ad,
        "retention_full": round(acc_full / n, 4) if n else None,
        "retention_adaptive": round(acc_ad / n, 4) if n else None,
        "settled_by": dict(sorted(by.items())),
        "judgments_per_task": {str(j): c for j, c in sorted(hist.items())},
        "rounds": rounds,
        "alpha_full": _alpha(full_rows),
        "alpha_collected": _alpha(kept_rows),
        "changed_examples": [
            {
                "task": t.replace("\x1f", " / "),
                "adaptive": list(d.outcome),
                "full": list(f),
                "judgments": d.judgments,
                "by": d.by,
                "p_change": d.p_change,
            }
            for t, d, f in changed[:examples]
        ],
        "source": src,
    }
    return out


def replay_markdown(rep: dict[str, Any]) -> str:
    """The replay report in a few lines (what ``annotate replay`` prints)."""
    pol = rep["policy"] + (f" (epsilon {rep['epsilon']:g})" if rep.get("epsilon") else "")
    lines = [
        f"replay of {rep['tasks']} {rep['kind']} task(s) ({rep['unit']} level, rule {rep['rule']}), policy {pol}, "
        f"{rep['min_judgments']}..{rep['max_judgments']} judgments per task, {rep['rounds']} round(s):",
        f"  judgments: {rep['judgments_used']} used of {rep['judgments_full']} at full overlap "
        f"({rep['judgments_saved']} saved, {pct(rep['saved_share'])})",
        f"  decisions changed: {rep['decisions_changed']} of {rep['tasks']} ({pct(rep['changed_share'])})",
        f"  retention: {pct(rep['retention_adaptive'])} adaptive, {pct(rep['retention_full'])} at full overlap",
        "  settled by: " + ", ".join(f"{k} {v}" for k, v in rep["settled_by"].items()),
        f"  Krippendorff's alpha: {rep['alpha_full'] if rep['alpha_full'] is not None else 'n/a'} on the full "
        f"judgments, {rep['alpha_collected'] if rep['alpha_collected'] is not None else 'n/a'} on those "
        f"adaptive collection keeps",
    ]
    skipped = [
        f"{rep[k]} {what}"
        for k, what in (
            ("empty_labels", "empty label(s) ignored"),
            ("duplicates_removed", "duplicate answer(s) removed"),
        )
        if rep.get(k)
    ]
    if skipped:
        lines.append("  " + "; ".join(skipped) + " (as annotate aggregate does)")
    return "\n".join(lines)
