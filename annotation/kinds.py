"""Annotation task kinds: Label Studio config, task builder, annotation -> judgment parser.

Each kind (registry :data:`KINDS`: ``tuple``, ``pair``, ``cat``, ``translation``) knows

- how to read its input records (``load``) and the biaskit id of a record (``record_id``),
- its Label Studio labeling config (``config``; generated here, validated offline with
  label-studio-sdk's ``LabelInterface``),
- how to turn a record into Label Studio task data (``task_data``: the biaskit id is kept in
  ``data.biaskit_id`` so that pushes are idempotent and pulls map back to records),
- how to turn one Label Studio annotation into judgment rows (``judgments``), and a prediction
  (a judgment-like row from a model or LLM) into a Label Studio result (``prediction_result``).

Question names and labels of every kind are listed in ``docs/annotation.md``.
"""
from __future__ import annotations

import html
import json
import random
import string
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any, Iterable, Optional

from biaskit.errors import BiaskitError, InputError
from biaskit.registry import Registry

CHOICE, MULTI, TEXT = "choice", "multi", "text"


@dataclass(frozen=True)
class Question:
    """One question annotators answer; ``control`` is the Label Studio control (``from_name``)."""

    name: str
    control: str
    type: str  # choice | multi | text
    labels: tuple[str, ...] = ()
    required: bool = False


@dataclass
class ParsedConfig:
    """What a labeling config allows: control name -> (tag, labels, to_name)."""

    controls: dict[str, tuple[str, tuple[str, ...], list[str]]] = field(default_factory=dict)

    @classmethod
    def from_xml(cls, xml: str) -> "ParsedConfig":
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


def _a(value: str) -> str:
    """Escape an XML attribute value."""
    return html.escape(str(value), quote=True)


def _choices(name: str, to: str, labels: Iterable[str], *, multiple: bool = False, required: bool = False,
             hints: Optional[dict[str, str]] = None) -> str:
    hints = hints or {}
    opts = "".join(
        f'<Choice value="{_a(v)}"' + (f' hint="{_a(hints[v])}"' if v in hints else "") + "/>" for v in labels)
    req = ' required="true"' if required else ""
    mode = "multiple" if multiple else "single-radio"
    return f'<Choices name="{name}" toName="{to}" choice="{mode}"{req} showInline="true">{opts}</Choices>'


def _textarea(name: str, to: str, placeholder: str, rows: int = 2) -> str:
    return (f'<TextArea name="{name}" toName="{to}" maxSubmissions="1" editable="true" rows="{rows}" '
            f'placeholder="{_a(placeholder)}"/>')


class TaskKind:
    """Base class: subclasses fill in the class attributes and the record handling."""

    name: str = ""
    title: str = ""
    questions: tuple[Question, ...] = ()
    comment_control: Optional[str] = "comment"

    # --- records -------------------------------------------------------------------------------
    def load(self, path: str | Path) -> list[Any]:  # pragma: no cover - abstract
        raise NotImplementedError

    #: rows skipped by the last ``load(..., skip_invalid=True)`` (pairs only)
    skipped: list = []

    def record_id(self, rec: Any) -> str:  # pragma: no cover - abstract
        raise NotImplementedError

    def bias_type(self, rec: Any) -> Optional[str]:
        return getattr(rec, "bias_type", None)

    # --- Label Studio ----------------------------------------------------------------------------
    def config(self, records: Optional[list[Any]] = None) -> str:  # pragma: no cover - abstract
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
        raise InputError(f"kind '{self.name}' has no question '{name}'.",
                         fix=f"use one of {', '.join(q.name for q in self.questions)}.")

    def allowed_labels(self) -> dict[str, set[str]]:
        """question -> allowed labels for the categorical questions of this kind's default config."""
        return {q.name: set(q.labels) for q in self.questions if q.type == CHOICE}

    def multi_questions(self) -> dict[str, Question]:
        return {q.control: q for q in self.questions if q.type == MULTI}

    # --- annotation -> judgments -------------------------------------------------------------
    def judgments(self, data: dict, values: dict[str, list[str]]) -> list[dict]:
        """Rows ``{question, label, qtype}`` for one annotation; ``values``: control -> chosen values/texts.

        Single choices give one row; a multiple-choice control gives one yes/no row per option
        (``concern:<code>``: unticked options are an explicit "no" from that annotator); text
        areas give ``text`` rows (kept, never aggregated by vote). The comment control is not a
        question: it fills the ``comment`` column of every row of the annotation.
        """
        rows = []
        for q in self.questions:
            got = values.get(q.control)
            if q.type == CHOICE:
                if got:
                    rows.append({"question": q.name, "label": got[0], "qtype": CHOICE})
            elif q.type == TEXT:
                text = "\n".join(t for t in (got or []) if t is not None).strip()
                if text:
                    rows.append({"question": q.name, "label": text, "qtype": TEXT})
        for control, q in self.multi_questions().items():
            ticked = set(values.get(control) or [])
            for lab in q.labels:
                rows.append({"question": f"{q.name}:{self.code(q, lab)}", "label": "yes" if lab in ticked else "no",
                             "qtype": CHOICE})
        return rows

    def code(self, q: Question, label: str) -> str:
        return label

    def prediction_result(self, data: dict, question: str, label: str) -> list[dict]:
        """A Label Studio result item for a pre-annotation (``question`` = a choice question)."""
        q = self.question(question)
        if q.type != CHOICE:
            raise InputError(f"predictions are supported for choice questions only, not '{question}'.",
                             fix=f"use one of {', '.join(x.name for x in self.questions if x.type == CHOICE)}.")
        to = self._to_name(q.control)
        return [{"from_name": q.control, "to_name": to, "type": "choices", "value": {"choices": [label]}}]

    def _to_name(self, control: str) -> str:
        pc = ParsedConfig.from_xml(self.config([]))
        return pc.controls[control][2][0]


KINDS: Registry[TaskKind] = Registry("annotation kind")


def get_kind(name: str) -> TaskKind:
    return KINDS.get(name)()


def _read_records(path: str | Path) -> list[tuple[int, dict]]:
    """``(row, record)`` from JSONL (line numbers) or CSV (data rows); JSON-looking cells decoded."""
    from biaskit.io import iter_jsonl, read_table

    path = Path(path)
    if path.suffix.lower() in (".jsonl", ".ndjson"):
        return list(iter_jsonl(path))
    df = read_table(path)
    out = []
    for i, rec in enumerate(df.to_dict(orient="records"), start=1):
        clean = {}
        for k, v in rec.items():
            if isinstance(v, float) and v != v:
                continue
            if isinstance(v, str) and v[:1] in "[{":
                try:
                    v = json.loads(v)
                except json.JSONDecodeError:
                    pass
            clean[k] = v
        out.append((i, clean))
    return out


def _validation(path, row, exc, what: str, fix: str) -> InputError:
    err = exc.errors()[0]
    loc = ".".join(str(x) for x in err.get("loc", ())) or None
    msg = err.get("msg", "invalid").removeprefix("Value error, ")
    return InputError(f"not a valid {what}: {msg}.", path=path, row=row, column=loc, fix=fix)


# ---------------------------------------------------------------------------------------------
# tuple
# ---------------------------------------------------------------------------------------------
@KINDS.register("tuple", help="(identity, attribute) tuples: prevalent stereotype? yes/no, polarity, comment")
class TupleKind(TaskKind):
    name = "tuple"
    title = "Is this (identity, attribute) a prevalent stereotype?"
    questions = (
        Question("stereotype", "stereotype", CHOICE, ("yes", "no"), required=True),
        Question("polarity", "polarity", CHOICE, ("positive", "negative")),
    )

    def load(self, path):
        from pydantic import ValidationError

        from biaskit.schema import BiasTuple

        out = []
        for row, rec in _read_records(path):
            rec = {k: v for k, v in rec.items() if k in BiasTuple.model_fields}
            try:
                out.append(BiasTuple.model_validate(rec))
            except ValidationError as exc:
                raise _validation(path, row, exc, "tuple",
                                  "a tuple needs identity, attribute, axis and polarity (positive/negative).") from None
        return out

    def record_id(self, rec):
        return rec.tuple_id

    def bias_type(self, rec):
        return rec.axis

    def config(self, records=None):
        return ("<View>"
                f'<Header value="{_a(self.title)}"/>'
                '<Text name="tuple" value="$display"/>'
                '<Header value="Is this a prevalent stereotype in the target culture?" size="5"/>'
                + _choices("stereotype", "tuple", ("yes", "no"), required=True) +
                '<Header value="Polarity of the attribute" size="5"/>'
                + _choices("polarity", "tuple", ("positive", "negative")) +
                _textarea("comment", "tuple", "comment (optional)") + "</View>")

    def task_data(self, rec, seed=0):
        return {"identity": rec.identity, "attribute": rec.attribute, "axis": rec.axis,
                "polarity": rec.polarity, "lang": rec.lang,
                "display": f"{rec.identity} — {rec.attribute}   ({rec.axis}, given polarity: {rec.polarity})"}


# ---------------------------------------------------------------------------------------------
# pair
# ---------------------------------------------------------------------------------------------
# Concern codes: the operationalisation pitfalls of Blodgett et al. (2021), "Stereotyping Norwegian
# Salmon", ACL, plus two used in this project's checks (multiple perturbations, IndiBias' cultural
# relevance filter). code -> (label shown to annotators, hint)
PAIR_CONCERNS: dict[str, tuple[str, str]] = {
    "not_a_stereotype": ("Not a meaningful stereotype", "the pair does not express a stereotype about a group"),
    "anti_vs_non_stereotype": ("Non-stereotype, not anti-stereotype",
                               "the contrasting sentence is merely neutral, not an anti-stereotype"),
    "misaligned_stereotype": ("Misaligned stereotype", "the stereotype is not about the group that is perturbed"),
    "invalid_perturbation": ("Invalid perturbation", "the changed words do not swap one group for another"),
    "incommensurable_groups": ("Incommensurable groups", "the two groups are not comparable (e.g. not on one axis)"),
    "indirect_identification": ("Indirect group identification", "the group is identified only through names or proxies"),
    "logical_failure": ("Logical failure", "the sentence does not make sense for one of the groups"),
    "stereotype_conflation": ("Stereotype conflation", "several stereotypes or axes are mixed"),
    "multiple_perturbations": ("Multiple perturbations", "the sentences differ in more than the group term"),
    "not_naturalistic": ("Not naturalistic", "text nobody would write or say"),
    "grammar": ("Grammar / spelling problems", "typos or grammatical errors"),
    "irrelevant_to_culture": ("Irrelevant to the target culture", "the stereotype does not exist in the target culture"),
}
_CONCERN_BY_LABEL = {v[0]: k for k, v in PAIR_CONCERNS.items()}


@KINDS.register("pair", help="minimal pairs: stereo / antistereo / not a valid pair, concern codes, comment")
class PairKind(TaskKind):
    name = "pair"
    title = "Does this pair express a stereotype (stereo), violate one (antistereo), or is it not a valid pair?"
    questions = (
        Question("validity", "validity", CHOICE, ("stereo", "antistereo", "invalid"), required=True),
        Question("concern", "concerns", MULTI, tuple(v[0] for v in PAIR_CONCERNS.values())),
    )

    def load(self, path, skip_invalid: bool = False):
        from biaskit.readers import read_pairs

        res = read_pairs(path, skip_invalid=skip_invalid)
        self.skipped = list(res.skipped)
        return res.pairs

    def record_id(self, rec):
        return rec.pair_id

    def code(self, q, label):
        return _CONCERN_BY_LABEL.get(label, label)

    def config(self, records=None):
        hints = {v[0]: v[1] for v in PAIR_CONCERNS.values()}
        return ("<View>"
                f'<Header value="{_a(self.title)}"/>'
                '<Text name="bias_type" value="$bias_type_display"/>'
                '<Text name="sent_more" value="$sent_more"/>'
                '<Text name="sent_less" value="$sent_less"/>'
                + _choices("validity", "sent_more", ("stereo", "antistereo", "invalid"), required=True,
                           hints={"stereo": "sentence 1 states a stereotype about a disadvantaged group",
                                  "antistereo": "sentence 1 violates a stereotype about a disadvantaged group",
                                  "invalid": "not a valid minimal pair"}) +
                '<Header value="Concerns (tick all that apply)" size="5"/>'
                + _choices("concerns", "sent_more", (v[0] for v in PAIR_CONCERNS.values()), multiple=True,
                           hints=hints) +
                _textarea("comment", "sent_more", "comment (optional)") + "</View>")

    def task_data(self, rec, seed=0):
        return {"sent_more": rec.sent_more, "sent_less": rec.sent_less, "direction": rec.direction,
                "lang": rec.lang, "bias_type_display": f"bias type: {rec.bias_type}"}


# ---------------------------------------------------------------------------------------------
# cat
# ---------------------------------------------------------------------------------------------
CAT_LABELS = ("stereotype", "anti-stereotype", "unrelated")
CAT_SLOTS = ("A", "B", "C")


def _seeded_order(n: int, seed: int, key: str) -> list[int]:
    """A permutation of ``range(n)`` that depends only on (seed, key): stable across runs and machines."""
    order = list(range(n))
    random.Random(f"{seed}:{key}").shuffle(order)
    return order


@KINDS.register("cat", help="StereoSet CATs: label each of the 3 associations stereotype / anti-stereotype / unrelated")
class CatKind(TaskKind):
    name = "cat"
    title = "Label each sentence as a stereotype, an anti-stereotype or unrelated to the context."
    questions = tuple(Question(f"option_{lab}", f"label_{s}", CHOICE, CAT_LABELS, required=True)
                      for lab, s in zip(CAT_LABELS, CAT_SLOTS))

    def load(self, path):
        from pydantic import ValidationError

        from biaskit.schema import CAT

        out = []
        for row, rec in _read_records(path):
            if "options" not in rec and all(k in rec for k in CAT_LABELS):  # StereoSet flat rows
                rec = {"split": rec.get("type") or rec.get("split"), "target": rec.get("target"),
                       "bias_type": rec.get("bias_type"), "context": rec.get("context"),
                       "options": [{"sentence": rec[lab], "gold_label": lab} for lab in CAT_LABELS],
                       "provenance": {"file": Path(path).name, "row": row}}
            rec = {k: v for k, v in rec.items() if k in CAT.model_fields}
            try:
                out.append(CAT.model_validate(rec))
            except ValidationError as exc:
                raise _validation(path, row, exc, "CAT",
                                  "give split, target, bias_type, context and options (or StereoSet's flat "
                                  "stereotype / anti-stereotype / unrelated columns).") from None
        return out

    def record_id(self, rec):
        return rec.cat_id

    def config(self, records=None):
        parts = ["<View>", f'<Header value="{_a(self.title)}"/>', '<Text name="context" value="$context"/>']
        for s in CAT_SLOTS:
            parts.append(f'<Text name="sentence_{s}" value="$sentence_{s}"/>')
            parts.append(_choices(f"label_{s}", f"sentence_{s}", CAT_LABELS, required=True))
        parts.append(_textarea("comment", "context", "comment (optional)"))
        parts.append("</View>")
        return "".join(parts)

    def task_data(self, rec, seed=0):
        order = _seeded_order(3, seed, rec.cat_id)
        data = {"context": rec.context, "target": rec.target, "split": rec.split, "lang": rec.lang,
                "biaskit_slots": []}
        for s, i in zip(CAT_SLOTS, order):
            opt = rec.options[i]
            data[f"sentence_{s}"] = f"{s}. {opt.sentence}"
            data["biaskit_slots"].append({"slot": s, "gold_label": opt.gold_label, "sentence_id": opt.sentence_id})
        return data

    def _slot_gold(self, data: dict) -> dict[str, str]:
        slots = data.get("biaskit_slots") or []
        return {d["slot"]: d["gold_label"] for d in slots}

    def judgments(self, data, values):
        gold = self._slot_gold(data)
        rows = []
        for s in CAT_SLOTS:
            got = values.get(f"label_{s}")
            if got and s in gold:
                rows.append({"question": f"option_{gold[s]}", "label": got[0], "qtype": CHOICE})
        return rows

    def prediction_result(self, data, question, label):
        gold = {v: k for k, v in self._slot_gold(data).items()}
        lab = question.removeprefix("option_")
        if lab not in gold:
            raise InputError(f"unknown CAT question '{question}'.",
                             fix=f"use one of {', '.join('option_' + x for x in CAT_LABELS)}.")
        s = gold[lab]
        return [{"from_name": f"label_{s}", "to_name": f"sentence_{s}", "type": "choices",
                 "value": {"choices": [label]}}]


# ---------------------------------------------------------------------------------------------
# translation (blind review of machine translations, issue 5)
# ---------------------------------------------------------------------------------------------
SLOT_LETTERS = tuple(string.ascii_uppercase)
NONE_CHOICE = "none"


@dataclass
class TranslationRecord:
    pair_id: str
    source_lang: str
    target_lang: str
    bias_type: Optional[str]
    direction: Optional[str]
    source: dict
    candidates: list[dict]
    provenance: dict


@KINDS.register("translation", help="blind review of candidate translations: pick A/B/.../none, correct S1/S2")
class TranslationKind(TaskKind):
    name = "translation"
    title = "Which translation of the pair is best? Engines are hidden and the order is random."
    questions = (
        Question("choice", "choice", CHOICE, SLOT_LETTERS + (NONE_CHOICE,), required=True),
        Question("corrected_more", "corrected_more", TEXT),
        Question("corrected_less", "corrected_less", TEXT),
    )

    def load(self, path):
        out = []
        for row, rec in _read_records(path):
            missing = [k for k in ("pair_id", "source", "candidates") if k not in rec]
            if missing:
                raise InputError(f"missing field(s) {', '.join(missing)}.", path=path, row=row,
                                 fix="use the output of `biaskit curate translate` (pair_id, source, candidates).")
            src = rec["source"]
            if not isinstance(src, dict) or not src.get("sent_more") or not src.get("sent_less"):
                raise InputError("source must have sent_more and sent_less.", path=path, row=row, column="source",
                                 fix='write "source": {"sent_more": ..., "sent_less": ...}.')
            cands = rec["candidates"]
            if not isinstance(cands, list) or not cands:
                raise InputError("no candidate translations.", path=path, row=row, column="candidates",
                                 fix="translate the pair with at least one engine first.")
            if len(cands) > len(SLOT_LETTERS):
                raise InputError(f"{len(cands)} candidates; at most {len(SLOT_LETTERS)} can be shown.",
                                 path=path, row=row, column="candidates", fix="use fewer engines.")
            for j, c in enumerate(cands):
                if not isinstance(c, dict) or "sent_more" not in c or "sent_less" not in c or not c.get("engine"):
                    raise InputError(f"candidate {j + 1} needs engine, sent_more and sent_less.", path=path, row=row,
                                     column="candidates", fix="use the output of `biaskit curate translate`.")
            out.append(TranslationRecord(
                pair_id=str(rec["pair_id"]), source_lang=rec.get("source_lang", "en"),
                target_lang=rec.get("target_lang", ""), bias_type=rec.get("bias_type"),
                direction=rec.get("direction"), source=src, candidates=cands,
                provenance=rec.get("provenance") or {}))
        return out

    def record_id(self, rec):
        return rec.pair_id

    def n_slots(self, records) -> int:
        return max([2] + [len(r.candidates) for r in (records or [])])

    def config_for_tasks(self, tasks):
        n = max([2] + [len((t.get("data") or {}).get("biaskit_slots") or []) for t in tasks])
        return self._config(n)

    def config(self, records=None):
        return self._config(self.n_slots(records))

    def _config(self, n: int) -> str:
        return ("<View>"
                f'<Header value="{_a(self.title)}"/>'
                '<Header value="Source pair" size="5"/>'
                '<Text name="src_more" value="$source_more"/>'
                '<Text name="src_less" value="$source_less"/>'
                '<Header value="Candidate translations (with the checker\'s flags)" size="5"/>'
                '<HyperText name="candidates" value="$candidates_html"/>'
                + _choices("choice", "src_more", SLOT_LETTERS[:n] + (NONE_CHOICE,), required=True) +
                '<Header value="Corrected translation (optional; start from the best candidate)" size="5"/>'
                + _textarea("corrected_more", "src_more", "corrected sentence 1")
                + _textarea("corrected_less", "src_less", "corrected sentence 2")
                + _textarea("comment", "src_more", "comment (optional)") + "</View>")

    def task_data(self, rec, seed=0):
        order = _seeded_order(len(rec.candidates), seed, rec.pair_id)
        slots, rows = [], []
        for s, i in zip(SLOT_LETTERS, order):
            c = rec.candidates[i]
            slots.append({"slot": s, "index": i, "engine": c.get("engine"), "model": c.get("model")})
            flags = c.get("flags") or []
            flag_html = "".join(
                f"<li><b>{html.escape(str(f.get('code', '')))}</b>: {html.escape(str(f.get('reason', '')))}"
                + (f" <i>suggestion: {html.escape(str(f['suggestion']))}</i>" if f.get("suggestion") else "")
                + "</li>"
                for f in flags if isinstance(f, dict)) or "<li>none</li>"
            rows.append(f"<div style='margin:6px 0;padding:4px;border:1px solid #ccc'><b>{s}</b><br/>"
                        f"1. {html.escape(str(c['sent_more']))}<br/>2. {html.escape(str(c['sent_less']))}"
                        f"<br/><small>flags:<ul>{flag_html}</ul></small></div>")
        return {"source_more": rec.source["sent_more"], "source_less": rec.source["sent_less"],
                "source_lang": rec.source_lang, "target_lang": rec.target_lang,
                "direction": rec.direction, "candidates_html": "".join(rows),
                # the slot -> engine order: kept in the task data (not rendered by the config) so
                # that every choice maps back to its engine
                "biaskit_slots": slots}

    def bias_type(self, rec):
        return rec.bias_type

    def judgments(self, data, values):
        rows = super().judgments(data, values)
        slots = {d["slot"]: d for d in (data.get("biaskit_slots") or [])}
        for r in rows:
            if r["question"] == "choice":
                s = slots.get(r["label"])
                r["engine"] = s["engine"] if s else None
                r["model"] = s.get("model") if s else None
                r["candidate_index"] = s["index"] if s else None
        return rows

    def check_task_values(self, data: dict, values: dict[str, list[str]]) -> Optional[str]:
        """A choice must name one of this task's slots (configs list the most slots of any task)."""
        got = values.get("choice") or []
        slots = {d["slot"] for d in (data.get("biaskit_slots") or [])}
        for v in got:
            if v != NONE_CHOICE and v not in slots:
                return f"choice '{v}' but this task shows only slots {', '.join(sorted(slots))}"
        return None
