"""Adaptive overlap: a task gets ``min_judgments`` judgments first, and more (up to
``max_judgments``) only while its decision under the kind's rule can still change.

:func:`decide` is the one place that says, for every task, whether it is **settled** and what its
decision is, from the judgments collected so far; ``annotate push --overlap adaptive`` (through
:func:`biaskit.annotation.labelstudio.advance`), ``annotate status``, ``biaskit run``'s review stages
and ``annotate replay`` (:mod:`.replay`) all call it. Two policies:

- ``exact``: settled when no remaining judgments, whatever they are and however many come, could
  change the decision (:mod:`.settle`; per question, then the kind's
  :meth:`~biaskit.annotation.kinds.base.TaskKind.task_settled`). The decision is then the one the
  collected judgments give, so it never differs from the full-overlap decision, and ``aggregate`` /
  ``apply`` need to know nothing about it.
- ``risk``: also settled when the crowd model (:mod:`.risk`, fitted on every judgment collected so
  far) gives the most probable final decision a probability above ``1 - epsilon``. That decision
  may be one the collected judgments alone do not reach yet (two of five StereoSet validators
  cannot accept a sentence), so it is **recorded** with the task (Label Studio task ``meta``) and
  travels in the pulled judgments (``settled_*`` columns, :func:`settlement_columns`), where
  ``aggregate`` and ``apply`` honour it (:func:`.settle.settled_overrides`) when they apply the same rule.

A task is never stopped before ``min_judgments`` (unless it has no way to get more: ``max``); an
open task asks for the fewest further judgments after which it could be settled (``exact``; 1 for
``risk``), so a round never asks for a judgment that could not matter.
"""

from __future__ import annotations

from collections.abc import Iterable, Mapping
from dataclasses import asdict, dataclass, field
from typing import Any

from biaskit.errors import InputError

from .settle import Outcome

# what a report of agreement says of judgments collected adaptively (annotate status, annotate agreement)
ADAPTIVE_ALPHA_NOTE = (
    "judgments collected adaptively: settled tasks never got the judgments that could still "
    "have disagreed, so agreement here is not what full overlap would show (it reads higher on "
    "the replays of docs/annotation.md)"
)

POLICIES = ("exact", "risk")
DEFAULT_EPSILON = 0.01
META_KEY = "biaskit_adaptive"


@dataclass(frozen=True)
class AdaptiveSettings:
    """``--overlap adaptive --min-judgments K --max-judgments N --policy exact|risk --epsilon E``
    (``min_agree``: the rule's ``--min-agree``; None: the kind's default)."""

    policy: str = "exact"
    min_judgments: int = 3
    max_judgments: int = 5
    epsilon: float = DEFAULT_EPSILON
    min_agree: int | None = None

    def __post_init__(self) -> None:
        from biaskit.options import say

        if self.policy not in POLICIES:
            raise InputError(f"unknown stopping policy '{self.policy}'.", fix=f"use one of {', '.join(POLICIES)}.")
        if self.min_judgments < 1:
            raise InputError(
                f"{say('min_judgments')} must be at least 1, got {self.min_judgments}.",
                fix=f"give the judgments every task gets first (e.g. {say('min_judgments', 3)}).",
            )
        if self.max_judgments < self.min_judgments:
            raise InputError(
                f"{say('max_judgments')} ({self.max_judgments}) is below {say('min_judgments')} "
                f"({self.min_judgments}).",
                fix=f"give the most judgments a task may get, at least {say('min_judgments')} "
                f"(e.g. {say('min_judgments', 3)} and {say('max_judgments', 5)}).",
            )
        if not 0 < self.epsilon < 1:
            raise InputError(
                f"{say('epsilon')} must be between 0 and 1, got {self.epsilon}.",
                fix=f"give the accepted probability of a changed decision, e.g. {say('epsilon', 0.01)}.",
            )
        if self.min_agree is not None and self.min_agree < 1:
            raise InputError(
                f"{say('min_agree')} must be at least 1, got {self.min_agree}.", fix=f"e.g. {say('min_agree', 3)}."
            )

    def to_meta(self) -> dict[str, Any]:
        return {"v": 1, **asdict(self)}

    @classmethod
    def from_meta(cls, d: Mapping[str, Any]) -> AdaptiveSettings:
        return cls(
            policy=d.get("policy", "exact"),
            min_judgments=int(d.get("min_judgments", 3)),
            max_judgments=int(d.get("max_judgments", 5)),
            epsilon=float(d.get("epsilon", DEFAULT_EPSILON)),
            min_agree=None if d.get("min_agree") is None else int(d["min_agree"]),
        )

    def describe(self) -> str:
        pol = f"risk (epsilon {self.epsilon:g})" if self.policy == "risk" else "exact"
        return f"adaptive {self.min_judgments}..{self.max_judgments} judgments, policy {pol}"


@dataclass
class TaskVotes:
    """One task's judgments: its annotators in order, and each question's ``(worker, label)`` votes."""

    task: str
    annotators: list[str] = field(default_factory=list)
    votes: dict[str, list[tuple[str, str]]] = field(default_factory=dict)

    def counts(self, question: str) -> dict[str, int]:
        out: dict[str, int] = {}
        for _, lab in self.votes.get(question, ()):
            out[lab] = out.get(lab, 0) + 1
        return out

    def first(self, n: int) -> TaskVotes:
        """The task as it was after its first ``n`` annotators."""
        keep = set(self.annotators[:n])
        return TaskVotes(
            self.task, self.annotators[:n], {q: [(w, lab) for w, lab in v if w in keep] for q, v in self.votes.items()}
        )


@dataclass
class Decision:
    """Where one task stands: ``settled`` (``by`` exact | risk | max) or open (``more``: further
    judgments asked for); ``outcome``: the task's decision (open tasks: what the judgments so far
    give); ``items``: each deciding question's; ``p_change``: the model's probability that the
    remaining judgments change the decision (risk policy)."""

    task: str
    judgments: int
    settled: bool
    by: str | None
    outcome: Outcome
    items: dict[str, Outcome]
    more: int = 0
    p_change: float | None = None
    recorded: bool = False  # the decision came from the task's record (an earlier round)

    def to_meta(self, settings: AdaptiveSettings, rule: str) -> dict[str, Any]:
        return {
            **settings.to_meta(),
            "settled": self.settled,
            "by": self.by,
            "judgments": self.judgments,
            "rule": rule,
            "outcome": list(self.outcome),
            "items": {q: list(o) for q, o in self.items.items()},
            "p_change": self.p_change,
        }


def task_votes(judgments, kind=None) -> dict[str, TaskVotes]:
    """``task -> TaskVotes`` from judgment rows (choice answers only; an annotator who answered an
    item twice counts once, with the latest answer). Annotators and votes keep the rows' order."""
    import pandas as pd

    from .aggregate import normalise_ids, prepare

    df = judgments if isinstance(judgments, pd.DataFrame) else pd.DataFrame(list(judgments))
    out: dict[str, TaskVotes] = {}
    if not len(df):
        return out
    if kind is not None:
        df = kind.votes(df)
    df = normalise_ids(df)  # the annotators' order and the votes below read the same ids
    seen: set[tuple[str, str]] = set()
    for t, w in zip(
        df["task"].astype(str), df["worker"].astype(str), strict=False
    ):  # annotators in order of first answer
        if (t, w) not in seen:
            seen.add((t, w))
            out.setdefault(t, TaskVotes(t)).annotators.append(w)
    prep = prepare(df, duplicates="last").df
    for t, q, w, lab in zip(prep["task"], prep["question"], prep["worker"], prep["label"], strict=False):
        out[t].votes.setdefault(q, []).append((w, lab))
    return out


def rule_spec(rules: Mapping[str, Any]) -> str:
    specs = sorted({r.spec() for r in rules.values()})
    return "|".join(specs)


def fit_model(tasks: Mapping[str, TaskVotes], rules: Mapping[str, Any]):
    """The risk policy's crowd model (:func:`.risk.fit_crowd`) on the deciding questions' votes."""
    import pandas as pd

    from .risk import fit_crowd

    rows = [(t, q, w, lab) for t, tv in tasks.items() for q, vs in tv.votes.items() if q in rules for w, lab in vs]
    df = pd.DataFrame(rows, columns=["task", "question", "worker", "label"])
    return fit_crowd(df, {q: tuple(r.labels) for q, r in rules.items()})


def decide(
    tasks: Mapping[str, TaskVotes],
    kind,
    settings: AdaptiveSettings,
    *,
    model=None,
    recorded: Mapping[str, Mapping[str, Any]] | None = None,
    ids: Iterable[str] | None = None,
    new_risk: bool = True,
) -> dict[str, Decision]:
    """Every task's :class:`Decision` (see the module docstring). ``ids``: every task of the project
    (those without judgments are open); ``recorded``: task -> the settlement recorded in an earlier
    round (a risk decision stands once made); ``model``: the fitted crowd model (risk; fitted here
    on ``tasks`` when not given); ``new_risk=False``: make no new risk decision (read-only views:
    ``pull``, ``status`` report what the rounds recorded, and exact settlements, which are a pure
    function of the judgments)."""
    from .risk import task_distribution

    rules = kind.decision_rules(settings.min_agree)
    spec = rule_spec(rules)
    K, N = settings.min_judgments, settings.max_judgments
    recorded = recorded or {}
    if not new_risk:
        model = None
    elif settings.policy == "risk" and model is None:
        model = fit_model(tasks, rules)
    out: dict[str, Decision] = {}
    for t in list(ids) if ids is not None else list(tasks):
        tv = tasks.get(t) or TaskVotes(t)
        n = len(tv.annotators)
        R = max(N - n, 0)
        counts = {q: tv.counts(q) for q in rules}
        items = {q: rules[q].outcome(counts[q]) for q in rules}
        current = kind.task_outcome(items)
        rec = recorded.get(t)
        if rec and rec.get("settled") and rec.get("by") == "risk" and rec.get("rule") == spec:
            out[t] = Decision(
                t,
                n,
                True,
                "risk",
                tuple(rec["outcome"]),
                {q: tuple(o) for q, o in (rec.get("items") or {}).items()},
                p_change=rec.get("p_change"),
                recorded=True,
            )
            continue
        if n >= N:
            out[t] = Decision(t, n, True, "max", current, items)
            continue
        if n < K:
            out[t] = Decision(t, n, False, None, current, items, more=K - n)
            continue
        settled = {q: rules[q].settled(counts[q], R) for q in rules}
        if kind.task_settled(items, settled):
            out[t] = Decision(t, n, True, "exact", current, items, p_change=0.0)
            continue
        if settings.policy == "risk" and new_risk and model is not None:
            dists = {q: model.item_distribution(rules[q], q, tv.votes.get(q, []), R) for q in rules}
            td = task_distribution(kind, dists)
            best = max(sorted(td, key=str), key=td.__getitem__)
            p_change = max(0.0, 1.0 - td[best])
            per_q = {q: max(sorted(d, key=str), key=d.__getitem__) for q, d in dists.items()}
            if p_change < settings.epsilon and kind.task_outcome(per_q) == best:
                out[t] = Decision(t, n, True, "risk", best, per_q, p_change=round(p_change, 6))
                continue
            out[t] = Decision(t, n, False, None, current, items, more=1, p_change=round(p_change, 6))
            continue
        out[t] = Decision(t, n, False, None, current, items, more=_more_needed(kind, rules, counts, items, R))
    return out


def _more_needed(kind, rules, counts, items, R: int) -> int:
    """The fewest further judgments after which the task could be settled (each judgment answers
    every deciding question): all questions settled (the largest of theirs), or -- several questions
    -- one settled rejected (the smallest of those)."""
    need_all = max(rules[q].more_needed(counts[q], R) for q in rules)
    best = need_all
    if len(rules) > 1:
        probe = {q: ("rejected", None) for q in rules}
        if kind.task_outcome(probe)[0] == "rejected":
            best = min([best] + [rules[q].more_needed(counts[q], R, status="rejected") for q in rules])
    return max(1, min(best, R))


def summarize(decisions: Mapping[str, Decision], settings: AdaptiveSettings) -> dict[str, Any]:
    """Settled / open tasks and the judgments saved so far (against every task getting ``max_judgments``)."""
    settled = [d for d in decisions.values() if d.settled]
    by: dict[str, int] = {}
    for d in settled:
        by[str(d.by)] = by.get(str(d.by), 0) + 1
    used = sum(d.judgments for d in decisions.values())
    full = settings.max_judgments * len(decisions)
    saved_settled = sum(max(settings.max_judgments - d.judgments, 0) for d in settled)
    return {
        "policy": settings.policy,
        "min_judgments": settings.min_judgments,
        "max_judgments": settings.max_judgments,
        "epsilon": settings.epsilon if settings.policy == "risk" else None,
        "tasks": len(decisions),
        "settled": len(settled),
        "open": len(decisions) - len(settled),
        "settled_by": dict(sorted(by.items())),
        "judgments": used,
        "judgments_full_overlap": full,
        "judgments_saved": saved_settled,
        "saved_share": round(saved_settled / full, 4) if full else None,
        "asked_for": sum(d.more for d in decisions.values() if not d.settled),
    }


# ---------------------------------------------------------------------------------------------
# a Label Studio project's adaptive state (task meta)
# ---------------------------------------------------------------------------------------------
def project_settings(metas: Iterable[Mapping[str, Any] | None]) -> AdaptiveSettings | None:
    """The adaptive settings recorded in the tasks' ``meta`` (the most common, should they differ);
    None when the project is not adaptive."""
    seen: dict[str, tuple[int, Mapping[str, Any]]] = {}
    for m in metas:
        a = (m or {}).get(META_KEY)
        if isinstance(a, Mapping) and a.get("policy"):
            key = repr(
                sorted((k, a.get(k)) for k in ("policy", "min_judgments", "max_judgments", "epsilon", "min_agree"))
            )
            n, _ = seen.get(key, (0, a))
            seen[key] = (n + 1, a)
    if not seen:
        return None
    _, best = max(seen.values(), key=lambda x: x[0])
    return AdaptiveSettings.from_meta(best)


def recorded_settlements(rows: Iterable[tuple[str | None, Mapping[str, Any] | None]]) -> dict[str, dict]:
    """``task -> its recorded settlement`` from ``(biaskit id, meta)`` pairs (settled tasks only)."""
    out: dict[str, dict] = {}
    for bid, m in rows:
        a = (m or {}).get(META_KEY)
        if bid is not None and isinstance(a, Mapping) and a.get("settled"):
            out[str(bid)] = dict(a)
    return out


def export_decisions(tasks: list[dict], judgments, kind) -> tuple[AdaptiveSettings | None, dict[str, Decision], str]:
    """A Label Studio export's adaptive state: its settings (None: not adaptive), every task's decision
    as the rounds recorded it (exact settlements recomputed, no new risk decision) and the rule spec."""
    settings = project_settings(t.get("meta") for t in tasks)
    if settings is None:
        return None, {}, ""
    ids = [str((t.get("data") or {}).get("biaskit_id")) for t in tasks if (t.get("data") or {}).get("biaskit_id")]
    rec = recorded_settlements(((t.get("data") or {}).get("biaskit_id"), t.get("meta")) for t in tasks)
    dec = decide(task_votes(judgments, kind), kind, settings, recorded=rec, ids=ids, new_risk=False)
    return settings, dec, rule_spec(kind.decision_rules(settings.min_agree))


# ---------------------------------------------------------------------------------------------
# the decisions in the pulled judgments, and where aggregate / apply honour them
# ---------------------------------------------------------------------------------------------
def settlement_columns(df, decisions: Mapping[str, Decision], rules_spec: str):
    """Add the ``settled_*`` columns to pulled judgment rows: the decision recorded for the row's
    (task, question) when the task is settled (empty otherwise)."""
    import numpy as np

    by: list[str | None] = []
    st: list[str | None] = []
    lab: list[str | None] = []
    pc: list[float | None] = []
    rule: list[str | None] = []
    for t, q in zip(df["task"].astype(str), df["question"].astype(str), strict=False):
        d = decisions.get(t)
        o = d.items.get(q) if d is not None and d.settled else None
        if d is not None and o is not None:
            by.append(d.by)
            st.append(o[0])
            lab.append(o[1])
            pc.append(d.p_change)
            rule.append(rules_spec)
        else:
            by.append(None)
            st.append(None)
            lab.append(None)
            pc.append(np.nan)
            rule.append(None)
    df = df.copy()
    df["settled_by"], df["settled_status"], df["settled_label"] = by, st, lab
    df["settled_p_change"], df["settled_rule"] = pc, rule
    return df
