"""What every Label Studio task kind has, and the helpers kinds share.

A kind (:class:`TaskKind` subclass, one module per kind in this package, registered in
:data:`biaskit.annotation.kinds.KINDS`) owns everything about its records in Label Studio:

==========================  ==================================================================
``read`` / ``load``         its records, through :mod:`biaskit.readers` (``skip_invalid`` aware)
``record_id``               the biaskit id of a record (kept in ``data.biaskit_id`` of its task)
``config``                  the labeling config (generated; validated offline with label-studio-sdk)
``task_data`` / ``task``    a record -> Label Studio task data
``questions``               what annotators answer (:class:`Question`: choice / multi / text)
``check_task_values``       per-task validation of pulled values (beyond the config's options)
``judgments``               one annotation's values -> judgment rows
``prediction_result``       a pre-annotation (model/LLM label) -> a Label Studio result
``votes``                   judgment rows -> the rows the aggregator votes on (default: as is)
``decision_rules``          the questions adaptive overlap waits on, and the rule deciding each
``task_outcome``            a task's decision from its questions' outcomes (``task_settled``: can it change)
``apply``                   records + aggregated votes (+ judgments) -> :class:`ApplyResult`
``write``                   how the accepted records are written (default JSONL)
``report``                  an optional report on applied annotations (translation: the review report)
``guidelines``              annotator instructions per language (Markdown, ``data/guidelines/<kind>.<lang>.md``):
                            Label Studio's instructions panel (push) and ``annotate guidelines``
==========================  ==================================================================

Editing: a text question with ``prefill`` (a task data key) is a text area prefilled with that
text (``textarea_xml(..., value="$key")``); an annotator edits in place. Label Studio submits a
prefilled area even when nobody touched it, so :meth:`TaskKind.judgments` keeps a text answer
only when it differs from its prefill (after :func:`biaskit.ids.normalize_text`): a text row is
always an edit. How edits are aggregated and recorded: :mod:`.edits`.

Nothing outside the kind's module switches on its name: the push, pull, aggregate, agreement and
apply code call these methods. A new kind = one module here + one line in ``__init__.py``.
"""

from __future__ import annotations

import html
import random
from collections.abc import Iterable
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any

from biaskit.errors import BiaskitError, InputError

from ..guidelines import load_guidelines

CHOICE, MULTI, TEXT = "choice", "multi", "text"
APPLY_STATUSES = ("accepted", "rejected", "needs_adjudication", "not_annotated")


@dataclass(frozen=True)
class Question:
    """One question annotators answer; ``control`` is the Label Studio control (``from_name``)."""

    name: str
    control: str
    type: str  # choice | multi | text
    labels: tuple[str, ...] = ()
    required: bool = False
    #: text questions: the task data key the text area is prefilled with (an edit in place)
    prefill: str | None = None


@dataclass
class ParsedConfig:
    """What a labeling config allows: control name -> (tag, labels, to_name)."""

    controls: dict[str, tuple[str, tuple[str, ...], list[str]]] = field(default_factory=dict)

    @classmethod
    def from_xml(cls, xml: str) -> ParsedConfig:
        li = validate_config(xml)
        out = cls()
        for c in li.controls:
            out.controls[c.name] = (c.tag, tuple(getattr(c, "labels", None) or ()), list(c.to_name or []))
        return out


def validate_config(xml: str):
    """Validate a labeling config offline with ``LabelInterface``; returns the interface."""
    from biaskit.errors import require

    require("label_studio_sdk", "annotation", "Label Studio configs")
    from label_studio_sdk.label_interface import LabelInterface

    try:
        li = LabelInterface(xml)
        li.validate()
    except Exception as exc:  # LabelStudioValidationErrorSentryIgnored, XML errors
        raise BiaskitError(f"invalid Label Studio config: {exc}") from None
    return li


def xml_attr(value: str) -> str:
    """Escape an XML attribute value."""
    return html.escape(str(value), quote=True)


def choices_xml(
    name: str,
    to: str,
    labels: Iterable[str],
    *,
    multiple: bool = False,
    required: bool = False,
    hints: dict[str, str] | None = None,
) -> str:
    hints = hints or {}
    opts = "".join(
        f'<Choice value="{xml_attr(v)}"' + (f' hint="{xml_attr(hints[v])}"' if v in hints else "") + "/>"
        for v in labels
    )
    req = ' required="true"' if required else ""
    mode = "multiple" if multiple else "single-radio"
    return f'<Choices name="{name}" toName="{to}" choice="{mode}"{req} showInline="true">{opts}</Choices>'


def textarea_xml(name: str, to: str, placeholder: str, rows: int = 2, value: str | None = None) -> str:
    """A text area; ``value`` (e.g. ``$sent_more``) prefills it with task data (editing tasks)."""
    pre = f' value="{xml_attr(value)}"' if value else ""
    return (
        f'<TextArea name="{name}" toName="{to}" maxSubmissions="1" editable="true" rows="{rows}" '
        f'placeholder="{xml_attr(placeholder)}"{pre}/>'
    )


def text_answer(values: list | None) -> str:
    """The text of a text area's answer (its submissions joined by new lines), stripped."""
    return "\n".join(str(t) for t in (values or []) if t is not None).strip()


def is_unchanged(text: str | None, original: Any) -> bool:
    """Is ``text`` the ``original`` (NFC, whitespace collapsed)? An untouched prefilled area is no edit."""
    from biaskit.ids import normalize_text

    return original is not None and normalize_text(text or "") == normalize_text(str(original))


def seeded_order(n: int, seed: int, key: str) -> list[int]:
    """A permutation of ``range(n)`` that depends only on (seed, key): stable across runs and machines."""
    order = list(range(n))
    random.Random(f"{seed}:{key}").shuffle(order)
    return order


# ------------------------------------------------------------------------------------------ apply
@dataclass
class Votes:
    """What :meth:`TaskKind.apply` decides from: the aggregated table indexed by (task, question),
    and the judgments themselves when given (text answers, individual labels, annotators)."""

    aggregated: dict[tuple[str, str], dict]
    judgments: Any = None  # DataFrame or None
    data_path: str | None = None  # the records' file (for provenance)

    def get(self, task: str, question: str) -> dict | None:
        return self.aggregated.get((task, question))

    def accepted(self, res: ApplyResult, task: str, question: str) -> dict | None:
        """The aggregated row of (task, question) when it is accepted; otherwise None, with the record
        counted in ``res`` as not annotated, or dropped with the aggregator's status and reason."""
        r = self.get(task, question)
        if r is None:
            res.drop(task, "not_annotated", "")
        elif r["status"] != "accepted":
            res.drop(task, r["status"], r.get("reason") or r["status"])
        else:
            return r
        return None

    def accepted_yes(self, prefix: str) -> dict[str, list[str]]:
        """task -> the ``<prefix>:<code>`` items accepted as ``yes`` (multi-choice questions)."""
        out: dict[str, list[str]] = {}
        for (t, q), x in self.aggregated.items():
            if q.startswith(prefix + ":") and x["status"] == "accepted" and x["label"] == "yes":
                out.setdefault(t, []).append(q.split(":", 1)[1])
        return out

    def by_task(self) -> dict[str, Any]:
        """task -> its judgment rows (a DataFrame per task); empty without judgments."""
        if self.judgments is None or len(self.judgments) == 0:
            return {}
        return {str(t): sub for t, sub in self.judgments.groupby(self.judgments["task"].astype(str), sort=False)}


def summarize(row: dict) -> dict:
    """The parts of an aggregated row kept in ``meta.annotation``."""
    keep = ("label", "votes", "n_annotators", "agreement", "status", "method", "confidence")
    return {k: row[k] for k in keep if k in row and row[k] is not None}


@dataclass
class ApplyResult:
    """What a kind's ``apply`` returns: accepted records (written to OUT by the kind's ``write``),
    sibling files (``OUT.<name>.jsonl``: ``rejected`` always, ``needs_review`` for kinds that send
    records back) and counts; ``paths`` is filled when the files are written."""

    accepted: list = field(default_factory=list)
    files: dict[str, list] = field(default_factory=lambda: {"rejected": []})
    counts: dict[str, int] = field(default_factory=lambda: {s: 0 for s in APPLY_STATUSES})
    paths: dict[str, Path] = field(default_factory=dict)
    report: dict | None = None
    warnings: list[str] = field(default_factory=list)

    def drop(self, rid: str, status: str, reason: str) -> None:
        """Count a record that is not accepted; rejected / needs-adjudication ones are listed in
        ``OUT.rejected.jsonl`` with the reason (nothing is lost silently)."""
        self.counts[status] = self.counts.get(status, 0) + 1
        if status != "not_annotated":
            self.files.setdefault("rejected", []).append({"id": rid, "status": status, "reason": reason})

    def accept(self, rec: Any) -> None:
        self.accepted.append(rec)
        self.counts["accepted"] = self.counts.get("accepted", 0) + 1

    def queue(self, name: str, row: dict) -> None:
        """A whole record (as a dict, in the kind's input format: ``push`` takes the file) sent to
        ``OUT.<name>.jsonl``: ``needs_review`` (an edited record the checker still flags) or
        ``adjudicate`` (the editors typed different corrections); counted under ``name``."""
        self.files.setdefault(name, []).append(row)
        self.counts[name] = self.counts.get(name, 0) + 1

    def summary(self) -> dict[str, Any]:
        out: dict[str, Any] = dict(self.counts)
        if "out" in self.paths:
            out["out"] = str(self.paths["out"])
        for name, p in self.paths.items():
            if name != "out":
                out[f"{name}_file"] = str(p)
        if self.warnings:
            out["warnings"] = list(self.warnings)
        return out


# ------------------------------------------------------------------------------------------ kind
class TaskKind:
    """Base class: subclasses set the class attributes and implement the record handling."""

    name: str = ""
    title: str = ""
    #: what the records are called in messages ("pairs file", "candidates file", ...)
    records_name: str = "data"
    questions: tuple[Question, ...] = ()
    comment_control: str | None = "comment"
    #: options :meth:`apply` accepts beyond the votes (name -> help), e.g. ``direction_policy``
    apply_options: dict[str, str] = {}
    #: labels of the deciding question that, once accepted, reject the record (a tuple accepted as
    #: "no", a pair as "invalid"): :meth:`accepts`
    reject_labels: tuple[str, ...] = ()
    #: labels a recorded source holds beyond the options, counted as votes for none of them by
    #: ``annotate replay`` (``aggregate --kind`` still refuses them)
    recorded_labels: tuple[str, ...] = ()

    def __init__(self) -> None:
        #: rows skipped by the last ``load(..., skip_invalid=True)``
        self.skipped: list[InputError] = []

    @property
    def guidelines(self) -> dict[str, str]:
        """Annotator instructions (Markdown) per language (``en``, ``hi``), from
        ``data/guidelines/<kind>.<lang>.md`` (see :mod:`biaskit.annotation.guidelines`)."""
        return load_guidelines(self.name)

    # --- records ---------------------------------------------------------------------------------
    def read(self, path: str | Path, *, skip_invalid: bool = False):  # pragma: no cover - abstract
        """A :class:`biaskit.readers.ReadResult` of this kind's records."""
        raise NotImplementedError

    def load(self, path: str | Path, skip_invalid: bool = False) -> list[Any]:
        res = self.read(path, skip_invalid=skip_invalid)
        self.skipped = list(res.skipped)
        return list(res.records)

    def record_id(self, rec: Any) -> str:  # pragma: no cover - abstract
        raise NotImplementedError

    def bias_type(self, rec: Any) -> str | None:
        return getattr(rec, "bias_type", None)

    # --- Label Studio ------------------------------------------------------------------------------
    def config(self, records: list[Any] | None = None) -> str:  # pragma: no cover - abstract
        raise NotImplementedError

    def task_data(self, rec: Any, seed: int = 0) -> dict:  # pragma: no cover - abstract
        raise NotImplementedError

    def config_for_tasks(self, tasks: list[dict]) -> str:
        """The config to validate exported ``tasks`` against when the project's own is not at hand."""
        return self.config(None)

    def task(self, rec: Any, seed: int = 0) -> dict:
        data = self.task_data(rec, seed)
        data["biaskit_id"] = self.record_id(rec)
        data["biaskit_kind"] = self.name
        bt = self.bias_type(rec)
        if bt is not None:
            data.setdefault("bias_type", bt)
        return {"data": data}

    def question(self, name: str) -> Question:
        for q in self.questions:
            if q.name == name:
                return q
        raise InputError(
            f"kind '{self.name}' has no question '{name}'.",
            fix=f"use one of {', '.join(q.name for q in self.questions)}.",
        )

    def code(self, q: Question, label: str) -> str:
        """The short code of a multiple-choice option in judgment questions (``concern:<code>``)."""
        return label

    def allowed_labels(self) -> dict[str, set[str]]:
        """question -> the labels the aggregator may see for it (after :meth:`votes`): the options of
        single-choice questions, ``yes``/``no`` for each option of a multiple-choice question."""
        allowed = {q.name: set(q.labels) for q in self.questions if q.type == CHOICE}
        for q in self.questions:
            if q.type == MULTI:
                for lab in q.labels:
                    allowed[f"{q.name}:{self.code(q, lab)}"] = {"yes", "no"}
        return allowed

    def check_task_values(self, data: dict, values: dict[str, list[str]]) -> str | None:
        """A problem with one annotation's values that the config alone cannot catch (None if fine)."""
        return None

    # --- annotation -> judgments -----------------------------------------------------------------
    def judgments(self, data: dict, values: dict[str, list[str]]) -> list[dict]:
        """Rows ``{question, label, qtype}`` for one annotation; ``values``: control -> chosen values/texts.

        Single choices give one row; a multiple-choice control gives one yes/no row per option
        (``concern:<code>``: unticked options are an explicit "no" from that annotator); text
        areas give ``text`` rows (kept, never aggregated by vote); a prefilled area gives one only
        when its text differs from the prefill (an edit). The comment control is not a question:
        it fills the ``comment`` column of every row of the annotation.
        """
        rows = []
        for q in self.questions:
            got = values.get(q.control)
            if q.type == CHOICE:
                if got:
                    rows.append({"question": q.name, "label": got[0], "qtype": CHOICE})
            elif q.type == TEXT:
                text = text_answer(got)
                if text and not (q.prefill and is_unchanged(text, data.get(q.prefill))):
                    rows.append({"question": q.name, "label": text, "qtype": TEXT})
        for q in self.questions:
            if q.type == MULTI:
                ticked = set(values.get(q.control) or [])
                for lab in q.labels:
                    rows.append(
                        {
                            "question": f"{q.name}:{self.code(q, lab)}",
                            "label": "yes" if lab in ticked else "no",
                            "qtype": CHOICE,
                        }
                    )
        return rows

    def prediction_result(self, data: dict, question: str, label: str) -> list[dict]:
        """A Label Studio result item for a pre-annotation (``question`` = a choice question)."""
        q = self.question(question)
        if q.type != CHOICE:
            raise InputError(
                f"predictions are supported for choice questions only, not '{question}'.",
                fix=f"use one of {', '.join(x.name for x in self.questions if x.type == CHOICE)}.",
            )
        to = ParsedConfig.from_xml(self.config([])).controls[q.control][2][0]
        return [{"from_name": q.control, "to_name": to, "type": "choices", "value": {"choices": [label]}}]

    # --- adaptive overlap: when is a task decided ---------------------------------------------------
    def decision_rules(self, min_agree: int | None = None) -> dict[str, Any]:
        """question -> the :class:`~biaskit.annotation.settle.ItemRule` that decides it: what adaptive
        overlap (``push --overlap adaptive``, ``annotate replay``) waits on. Default: the required
        single-choice questions under ``apply``'s majority vote (``min_agree`` K, else a strict
        majority); other questions (optional choices, concerns, corrections) are not waited for."""
        from ..settle import MajorityRule

        return {
            q.name: MajorityRule(tuple(q.labels), min_agree) for q in self.questions if q.type == CHOICE and q.required
        }

    def task_outcome(self, outcomes: dict[str, tuple]) -> tuple:
        """The task's decision from its deciding questions' outcomes (``(status, label)`` each): one
        question -> its outcome; several -> accepted when all are, rejected when any is, else
        needs_adjudication (not_annotated when none was answered) -- :func:`~..cat_rule.cat_verdict`."""
        if len(outcomes) == 1:
            return next(iter(outcomes.values()))
        st = [o[0] for o in outcomes.values()]
        if all(s == "not_annotated" for s in st):
            return ("not_annotated", None)
        if all(s == "accepted" for s in st):
            return ("accepted", None)
        return ("rejected" if "rejected" in st else "needs_adjudication", None)

    def accepts(self, outcome: tuple) -> bool:
        """Does a task decision (:meth:`task_outcome`) keep the record? Accepted with a label that is not
        one of :attr:`reject_labels` (replay's retention, the judge report's acceptance)."""
        return outcome[0] == "accepted" and outcome[1] not in self.reject_labels

    def task_settled(self, outcomes: dict[str, tuple], settled: dict[str, bool]) -> bool:
        """Can the task's decision still change? Not when every deciding question is settled, nor (several
        questions) when one is settled ``rejected`` (:meth:`task_outcome` rejects the task whatever the others)."""
        if all(settled.values()):
            return True
        return len(outcomes) > 1 and any(settled[q] and outcomes[q][0] == "rejected" for q in outcomes)

    # --- judgments -> validated records ------------------------------------------------------------
    def votes(self, judgments, records: list[Any] | None = None):
        """The judgment rows the aggregator votes on (a DataFrame). Kinds whose answers mean different
        things per task (the translation kind's slot letters) map them to comparable labels here."""
        return judgments

    def apply(self, records: list[Any], votes: Votes, **options: Any) -> ApplyResult:  # pragma: no cover
        raise NotImplementedError

    def write(self, out: Path, records: list[Any]) -> Path:
        from biaskit.io import write_jsonl

        return write_jsonl(out, records)

    def report(self, records: list[Any], applied: ApplyResult | Path, out_dir: Path) -> dict | None:
        """An optional report on applied annotations: ``applied`` is the result of ``apply`` or the
        path of the OUT file it wrote (``annotate apply --report-dir``, ``annotate report``)."""
        raise InputError(f"kind '{self.name}' has no apply report.", fix="leave out --report-dir.")
