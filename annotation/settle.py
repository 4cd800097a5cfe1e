"""When is a task decided? The settled rule of adaptive overlap (``annotate push --overlap adaptive``,
``annotate replay``), as a pure function of the votes so far and the kind's acceptance rule.

An **item** is one question of one task; its votes are a ``label -> count`` mapping. An
:class:`ItemRule` gives the **outcome** of a set of votes, ``(status, label)`` (``label`` only when
accepted), exactly as the rest of biaskit decides it:

- :class:`MajorityRule`: ``annotate aggregate``'s majority vote with ties flagged (``--min-agree
  K``: accepted with at least ``K`` votes for the winner; fewer than ``K`` answers is
  ``needs_adjudication``; no ``K``: a strict majority), the rule ``apply`` uses for the
  ``tuple``, ``sentence``, ``pair`` and ``translation`` kinds;
- :class:`WriterLabelRule`: StereoSet's rule for one sentence of a CAT (:mod:`.cat_rule`): at
  least ``K`` validators gave the writer's label and no other label as many.

**Settled** (:meth:`ItemRule.settled`): with at most ``remaining`` further votes, whatever they
are and however many of them come (0, 1, ... ``remaining``), the outcome cannot change. The
checks are closed forms (a few comparisons, derived per outcome in the methods below) and are
tested against a brute force over every vote sequence up to 7 voters
(``tests/test_annot_adaptive.py``). Because the empty extension is one of the possibilities, a
settled item's outcome *is* the outcome of the votes collected: stopping there never changes a
decision, and aggregate and apply give the same result on the collected judgments as on the full
overlap.

A task is settled when its kind's decision is (:meth:`biaskit.annotation.kinds.base.TaskKind.task_settled`):
every deciding question settled; for a CAT also as soon as one sentence is settled ``rejected``.
"""

from __future__ import annotations

import itertools
from collections import Counter
from collections.abc import Mapping
from dataclasses import dataclass
from functools import cache
from typing import Any

Outcome = tuple[str, str | None]
NOT_ANNOTATED: Outcome = ("not_annotated", None)
STATUSES = ("accepted", "rejected", "needs_adjudication", "not_annotated")


@dataclass(frozen=True)
class ItemRule:
    """The acceptance rule of one item: ``labels`` are the answers it can get (votes for labels
    outside them are still counted)."""

    labels: tuple[str, ...]
    min_agree: int | None = None

    # -- what subclasses define
    def outcome(self, counts: Mapping[str, int]) -> Outcome:  # pragma: no cover - abstract
        raise NotImplementedError

    def settled(self, counts: Mapping[str, int], remaining: int) -> bool:  # pragma: no cover - abstract
        raise NotImplementedError

    def spec(self) -> str:  # pragma: no cover - abstract
        """A short name of the rule (recorded with adaptive decisions; ``majority:3``, ``writer:3``)."""
        raise NotImplementedError

    # -- shared
    def all_labels(self, counts: Mapping[str, int]) -> tuple[str, ...]:
        extra = tuple(sorted(str(k) for k in counts if k not in self.labels))
        return tuple(self.labels) + extra

    def more_needed(self, counts: Mapping[str, int], remaining: int, status: str | None = None) -> int:
        """The fewest further votes after which the item *could* be settled (0 when it is; ``remaining + 1``
        when it never can), with ``status``: settled with that outcome status. Settledness is monotone
        (an extension of a settled state is settled), so a follow-up round that asks for this many
        more annotators never asks for one too many."""
        if self.settled(counts, remaining) and (status is None or self.outcome(counts)[0] == status):
            return 0
        labels = self.all_labels(counts)
        for m in range(1, remaining + 1):
            for ext in extensions(len(labels), m):
                c = dict(counts)
                for lab, k in zip(labels, ext, strict=False):
                    if k:
                        c[lab] = c.get(lab, 0) + k
                if self.settled(c, remaining - m) and (status is None or self.outcome(c)[0] == status):
                    return m
        return remaining + 1


def _top_two(counts: Mapping[str, int], labels: tuple[str, ...]) -> tuple[int, int, list[str]]:
    """(highest count, second highest count (= highest when tied), labels with the highest)."""
    vals = sorted((int(counts.get(lab, 0)) for lab in labels), reverse=True)
    t = vals[0] if vals else 0
    s = vals[1] if len(vals) > 1 else 0
    return t, s, [lab for lab in labels if int(counts.get(lab, 0)) == t]


@dataclass(frozen=True)
class MajorityRule(ItemRule):
    """``annotate aggregate --method majority [--min-agree K]`` with ties flagged, on one item."""

    def spec(self) -> str:
        return f"majority:{self.min_agree if self.min_agree is not None else 'strict'}"

    def outcome(self, counts):
        import numpy as np

        labels = self.all_labels(counts)
        n = sum(int(v) for v in counts.values())
        if n == 0:
            return NOT_ANNOTATED
        t, _, tops = _top_two(counts, labels)
        status, _ = majority_status(np.array([t]), np.array([n]), self.min_agree)
        if len(tops) > 1:  # aggregate's ties='flag'
            return ("needs_adjudication", None)
        st = str(status[0])
        return (st, tops[0] if st == "accepted" else None)

    def settled(self, counts, remaining):
        """Closed form, per outcome (``t``, ``s``: the two highest counts, ``n`` votes, ``R`` remaining):

        - accepted: nothing may tie the winner: ``s + R < t`` (``K``); ``2t > n + R`` (strict majority);
        - rejected: no label may reach ``K`` (``t + R < K``; strict majority: ``n - 2t + 1 > R``) and no
          tie may form at the top (``t - s > R``);
        - needs adjudication: ``R = 0``, or (``K``) too few voters can ever come (``n + R < K``);
        - not annotated: ``R = 0``.
        """
        R = int(remaining)
        if R <= 0:
            return True
        labels = self.all_labels(counts)
        n = sum(int(v) for v in counts.values())
        status, _ = self.outcome(counts)
        K = self.min_agree
        t, s, _ = _top_two(counts, labels)
        if status == "accepted":
            return (s + R < t) if K is not None else (2 * t > n + R)
        if status == "rejected":
            reach = (K - t > R) if K is not None else (n - 2 * t + 1 > R)
            return reach and (t - s > R)
        if status == "needs_adjudication":
            return K is not None and n + R < K
        return False


@dataclass(frozen=True)
class WriterLabelRule(ItemRule):
    """StereoSet's rule for one CAT sentence written as ``gold`` (:func:`.cat_rule.option_verdict`)."""

    gold: str = ""

    def spec(self) -> str:
        return f"writer:{self.min_agree if self.min_agree is not None else 3}"

    @property
    def k(self) -> int:
        from .cat_rule import STEREOSET_MIN_AGREE

        return self.min_agree if self.min_agree is not None else STEREOSET_MIN_AGREE

    def outcome(self, counts):
        from .cat_rule import option_verdict

        votes = Counter({str(k): int(v) for k, v in counts.items() if int(v) > 0})
        st = option_verdict(self.gold, votes=votes or None, min_agree=self.k)["status"]
        return (st, self.gold if st == "accepted" else None)

    def settled(self, counts, remaining):
        """Closed form (``a``: votes for the writer's label, ``b``: the best other label's, ``n``, ``R``):

        - accepted: no other label may catch up: ``b + R < a``;
        - rejected: neither acceptance (``max(K - a, b - a + 1)`` more votes) nor a tie at ``K`` or
          above (``2 max(K, a, b) - a - b`` more votes) within ``R``;
        - needs adjudication: ``R = 0``, or too few voters can ever come (``n + R < K``);
        - not annotated: ``R = 0``.
        """
        R = int(remaining)
        if R <= 0:
            return True
        K = self.k
        a = int(counts.get(self.gold, 0))
        b = max((int(v) for lab, v in counts.items() if lab != self.gold), default=0)
        n = sum(int(v) for v in counts.values())
        status, _ = self.outcome(counts)
        if status == "accepted":
            return b + R < a
        if status == "rejected":
            to_accept = max(K - a, b - a + 1)
            T = max(K, a, b)
            to_tie = 2 * T - a - b
            return to_accept > R and to_tie > R
        if status == "needs_adjudication":
            return n + R < K
        return False


@cache
def extensions(n_labels: int, m: int) -> tuple[tuple[int, ...], ...]:
    """Every way ``m`` further votes can fall on ``n_labels`` labels (count vectors)."""
    out = []
    for cut in itertools.combinations(range(m + n_labels - 1), n_labels - 1):
        prev, vec = -1, []
        for c in cut + (m + n_labels - 1,):
            vec.append(c - prev - 1)
            prev = c
        out.append(tuple(vec))
    return tuple(out)


def counts_of(labels) -> dict[str, int]:
    """``label -> count`` of a sequence of labels."""
    return dict(Counter(str(x) for x in labels))


def majority_status(votes: Any, n: Any, min_agree: int | None) -> tuple[Any, Any]:
    """``(status, reason)`` arrays of majority votes: ``votes`` for the winner of ``n`` answers
    (``min_agree``: at least that many votes, else a strict majority). Shared by ``annotate aggregate``
    and :class:`MajorityRule`."""
    import numpy as np

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


# ------------------------------------------------------------------------------------------ recorded settlements
# the ``settled_*`` columns ``annotate pull`` writes for a project with adaptive overlap
SETTLED_COLUMNS = ["settled_by", "settled_status", "settled_label", "settled_p_change", "settled_rule"]


def read_settlements(df, source: str | None = None) -> dict[tuple[str, str], dict[str, Any]]:
    """``(task, question) -> {status, label, by, rule, p_change}`` from judgment rows that carry the
    ``settled_*`` columns (``annotate pull`` of an adaptive project); empty otherwise. A
    ``settled_p_change`` that is no number is refused (an :class:`~biaskit.errors.InputError` naming
    ``source``, the row and the column); an empty ``settled_by`` / ``settled_rule`` is None."""
    import pandas as pd

    from biaskit.errors import InputError

    def _blank(x: Any) -> bool:
        return x is None or (isinstance(x, float) and x != x) or str(x).strip() == ""

    def _p(x: Any, row: int) -> float | None:
        if _blank(x):
            return None
        try:
            return float(x)
        except (TypeError, ValueError):
            raise InputError(
                f"settled_p_change '{x}' is not a number.",
                path=source,
                row=row,
                column="settled_p_change",
                fix="give the probability `annotate pull` wrote (0 to 1), or leave the cell empty.",
            ) from None

    if df is not None and not isinstance(df, pd.DataFrame):
        df = pd.DataFrame(list(df))
    if df is None or not len(df) or "settled_status" not in df.columns:
        return {}
    out: dict[tuple[str, str], dict[str, Any]] = {}
    cols = [
        df[c] if c in df.columns else [None] * len(df)
        for c in (
            "task",
            "question",
            "settled_status",
            "settled_label",
            "settled_by",
            "settled_rule",
            "settled_p_change",
        )
    ]
    for row, (t, q, st, lab, by, rule, pc) in enumerate(zip(*cols, strict=False), start=1):
        if _blank(st):
            continue
        lab = None if lab is None or (isinstance(lab, float) and lab != lab) or str(lab) == "" else str(lab)
        out[(str(t), str(q if q is not None else "label"))] = {
            "status": str(st),
            "label": lab,
            "by": None if _blank(by) else str(by),
            "rule": None if _blank(rule) else str(rule),
            "p_change": _p(pc, row),
        }
    return out


def settled_overrides(settlements: Mapping[tuple[str, str], Mapping[str, Any]], spec: str) -> tuple[dict, int]:
    """The recorded risk decisions that apply under rule ``spec`` (``majority:3``, ``writer:3``), and how
    many were recorded under another rule (ignored: the caller warns). Exact decisions equal the
    rule's own result and need no override."""
    use, other = {}, 0
    for key, s in settlements.items():
        if s.get("by") != "risk":
            continue
        if spec in str(s.get("rule") or "").split("|"):
            use[key] = s
        else:
            other += 1
    return use, other
