"""Edits typed into prefilled text areas: whose count, how they are aggregated, how they are recorded.

The editing kinds (``sentence``, ``pair``, ``translation``) show a record's text in a text area
that annotators correct in place. A judgment row of a text question is always an *edit* (pull
drops an area submitted untouched: :meth:`~.base.TaskKind.judgments`). In ``apply``, per record
and per field:

1. each annotator counts with their latest annotation (:func:`latest_answers`: a second
   annotation of the same task replaces the first), and only the annotators whose vote decided
   the record (e.g. those who chose ``fix``, or the accepted direction) -- the kind says who;
2. the edits are compared after NFC normalisation and whitespace collapsing
   (:func:`biaskit.ids.normalize_text`); an edit equal to the original text is no edit;
3. :func:`decide_edit`: a text typed by a strict majority of the editors (the only editor,
   both of two, two of three, ...) wins; when no text has a majority the editors disagree
   (``conflict``) and the record goes to the adjudication queue (``OUT.adjudicate.jsonl``);
4. the winning edit is recorded in the record's ``provenance["edits"]`` (:meth:`EditOutcome.record`):
   field, original text, edited text, the annotators who typed it (the ids ``pull`` gives),
   the time of their latest annotation, and how many annotators edited the field at all.
"""

from __future__ import annotations

import dataclasses
from dataclasses import dataclass
from typing import Any

from biaskit.ids import normalize_text


def present(v: Any) -> bool:
    """A value that is there (not None, NaN or the empty string)."""
    return v is not None and not (isinstance(v, float) and v != v) and v != ""


def when(row: dict) -> str:
    """When an answer was given: ``updated_at``, else ``created_at`` (ISO text sorts by time)."""
    return str(row.get("updated_at") or row.get("created_at") or "")


def latest_rows(rows) -> dict[str, list[dict]]:
    """worker -> their judgment rows of one task, from their latest annotation only (by time,
    then Label Studio annotation id), oldest first; rows without ``ls_annotation`` are all kept."""
    recs = [{k: v for k, v in r.items() if present(v)} for r in rows.to_dict(orient="records")]
    by_worker: dict[str, list[dict]] = {}
    for r in recs:
        by_worker.setdefault(str(r["worker"]), []).append(r)
    out: dict[str, list[dict]] = {}
    for w in sorted(by_worker):
        rs = by_worker[w]
        if any("ls_annotation" in r for r in rs):
            latest = max((when(r), str(r.get("ls_annotation", ""))) for r in rs)
            rs = [r for r in rs if (when(r), str(r.get("ls_annotation", ""))) == latest]
        out[w] = sorted(rs, key=when)
    return out


def latest_answers(rows) -> dict[str, dict[str, dict]]:
    """worker -> question -> judgment row, from each worker's latest annotation of the task."""
    return {w: {str(r["question"]): r for r in rs} for w, rs in latest_rows(rows).items()}


@dataclass
class EditOutcome:
    """What the editors of one field of one record decided."""

    field: str
    original: str
    #: the winning edit (normalised); None: no edit, or the editors disagree
    text: str | None = None
    # dataclasses.field: the `field` attribute above shadows the function for type checkers (not at run time)
    annotators: list[str] = dataclasses.field(default_factory=list)  # who typed the winning text
    time: str | None = None  # the latest annotation time among them
    #: every distinct edit, most typed first: {"text", "annotators", "time"}
    candidates: list[dict] = dataclasses.field(default_factory=list)
    n_editors: int = 0

    @property
    def edited(self) -> bool:
        return self.text is not None

    @property
    def conflict(self) -> bool:
        return self.text is None and bool(self.candidates)

    def record(self, record_id: str | None = None) -> dict[str, Any]:
        """The provenance entry of an applied edit (``provenance["edits"]``)."""
        out = {
            "field": self.field,
            "original": self.original,
            "edited": self.text,
            "annotators": self.annotators,
            "time": self.time,
            "editors": self.n_editors,
        }
        if record_id is not None:
            out["record_id"] = record_id
        return out

    def disagreement(self) -> dict[str, Any]:
        """What the adjudication queue shows for a conflicting field."""
        return {
            "field": self.field,
            "original": self.original,
            "candidates": self.candidates,
            "editors": self.n_editors,
        }


def decide_edit(field_name: str, original: str, typed: dict[str, tuple[str, str]]) -> EditOutcome:
    """Aggregate the edits of one field: ``typed`` = worker -> (text, time) of the annotators
    whose edits count. A strict majority of identical (normalised) edits wins; see the module doc."""
    orig = normalize_text(original)
    groups: dict[str, list[tuple[str, str]]] = {}
    for w in sorted(typed):
        text, t = typed[w]
        n = normalize_text(text or "")
        if n and n != orig:
            groups.setdefault(n, []).append((w, t or ""))
    ranked = sorted(groups.items(), key=lambda kv: (-len(kv[1]), kv[0]))
    cands: list[dict[str, Any]] = [
        {"text": t, "annotators": [w for w, _ in ws], "time": max(x for _, x in ws) or None} for t, ws in ranked
    ]
    out = EditOutcome(field_name, original, candidates=cands, n_editors=sum(len(ws) for ws in groups.values()))
    if ranked and 2 * len(ranked[0][1]) > out.n_editors:
        out.text, out.annotators, out.time = cands[0]["text"], cands[0]["annotators"], cands[0]["time"]
    return out


def field_edits(
    answers: dict[str, dict[str, dict]], fields: dict[str, tuple[str, str]], voters: set[str] | None = None
) -> dict[str, EditOutcome]:
    """Per field, the outcome of the edits in ``answers`` (:func:`latest_answers`);
    ``fields`` = question -> (record field, original text); ``voters``: whose edits count (None: all)."""
    out = {}
    for q, (name, original) in fields.items():
        typed = {
            w: (str(a[q]["label"]), when(a[q]))
            for w, a in answers.items()
            if q in a and present(a[q].get("label")) and (voters is None or w in voters)
        }
        out[name] = decide_edit(name, original, typed)
    return out


def edit_reason(conflicts: list[EditOutcome]) -> str:
    """One line naming the fields the editors disagree on, with the competing texts."""
    parts = []
    for e in conflicts:
        alts = "; ".join(f"'{c['text']}' ({', '.join(c['annotators'])})" for c in e.candidates)
        parts.append(f"{e.field}: {alts}")
    return "the annotators typed different corrections: " + " | ".join(parts) + ". Adjudicate: keep one."


# ------------------------------------------------------------------------------------------ returned records
def edit_result():
    """An :class:`~.base.ApplyResult` of an editing kind: both queue files are always written
    (empty when nothing went back) and counted."""
    from .base import APPLY_STATUSES, ApplyResult

    return ApplyResult(
        files={"rejected": [], "needs_review": [], "adjudicate": []},
        counts={**{st: 0 for st in APPLY_STATUSES}, "needs_review": 0, "adjudicate": 0},
    )


def returned_record(rec: Any, to: str, reason: str, **extra: Any) -> dict:
    """A record sent back (``to`` = ``needs_review`` or ``adjudicate``) as a dict in its kind's
    input format (``push`` takes the file again): ``status = needs_review``, the reason (and what
    the editors typed) in ``meta.returned``."""
    d = rec.model_dump(mode="json")
    d["status"] = "needs_review"
    d["meta"] = {**(d.get("meta") or {}), "returned": {"to": to, "reason": reason, **extra}}
    return d


def returned_note(meta: dict | None) -> str:
    """The reason a record came back, shown in its next task (empty for a first round)."""
    r = (meta or {}).get("returned") or {}
    return f"  [returned: {r['reason']}]" if r.get("reason") else ""
