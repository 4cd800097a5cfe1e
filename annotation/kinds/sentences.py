"""The ``sentence`` kind: annotators verify, filter and modify LLM-generated sentences (IndiBias
§4.2.2: the sentences an LLM wrote for each accepted tuple were "verified, filtered, and modified"
by annotators before pairs were built from them).

Each task shows the tuple (identity, attribute, axis, polarity) and the sentence. The annotator
chooses ``keep`` (usable as it is), ``fix`` (usable after the correction they type) or ``drop``,
corrects the sentence in place in a text area prefilled with it, and may tick problems.

``apply`` (see :mod:`.edits` for how edits are aggregated): the ``decision`` is aggregated like
every choice; ``drop`` rejects the sentence, ``keep`` accepts it unchanged, ``fix`` accepts the
edit that a strict majority of the annotators who chose ``fix`` typed (identical after
normalisation). Their edits disagree, or nobody typed one: the sentence goes to the adjudication
queue (``OUT.adjudicate.jsonl``). An edited sentence that no longer names the tuple's identity
(:meth:`biaskit.inventory.Inventory.mentions`, the check ``curate sentences`` applies) goes back
to review (``OUT.needs_review.jsonl``) instead of being accepted. Both files are sentence records
``push --kind sentence`` takes again (status ``needs_review``, the reason in ``meta.returned``).
"""

from __future__ import annotations

from typing import Any

from .base import (
    CHOICE,
    MULTI,
    TEXT,
    ApplyResult,
    Question,
    TaskKind,
    Votes,
    choices_xml,
    summarize,
    textarea_xml,
    xml_attr,
)
from .edits import edit_reason, edit_result, field_edits, latest_answers, returned_note, returned_record

DECISIONS = ("keep", "fix", "drop")
# code -> (label shown to annotators, hint)
SENTENCE_PROBLEMS: dict[str, tuple[str, str]] = {
    "not_the_stereotype": (
        "Does not express the stereotype",
        "the sentence does not tie the group to the tuple's attribute",
    ),
    "wrong_group": ("Wrong or missing group", "the sentence is not about the tuple's identity group"),
    "not_naturalistic": ("Not naturalistic", "nobody would write or say this (social media, novels, talk, films)"),
    "no_minimal_pair": (
        "No minimal pair possible",
        "putting a comparable group in its place would not give a sensible sentence",
    ),
    "grammar": ("Grammar / spelling problems", "typos or grammatical errors (correct them and choose fix)"),
    "irrelevant_to_culture": (
        "Irrelevant to the target culture",
        "the stereotype does not exist in the target culture",
    ),
}
_PROBLEM_BY_LABEL = {v[0]: k for k, v in SENTENCE_PROBLEMS.items()}


class SentenceKind(TaskKind):
    name = "sentence"
    title = "Keep, fix or drop this generated sentence?"
    records_name = "sentences"
    reject_labels = ("drop",)
    questions = (
        Question("decision", "decision", CHOICE, DECISIONS, required=True),
        Question("edited", "edited", TEXT, prefill="sentence"),
        Question("problem", "problems", MULTI, tuple(v[0] for v in SENTENCE_PROBLEMS.values())),
    )

    def read(self, path, *, skip_invalid=False):
        from biaskit.readers import read_sentences

        return read_sentences(path, skip_invalid=skip_invalid)

    def record_id(self, rec):
        return rec.sentence_id

    def bias_type(self, rec):
        return rec.axis

    def code(self, q, label):
        return _PROBLEM_BY_LABEL.get(label, label)

    def config(self, records=None):
        return (
            "<View>"
            f'<Header value="{xml_attr(self.title)}"/>'
            '<Text name="tuple" value="$tuple_display"/>'
            '<Text name="sentence" value="$sentence"/>'
            + choices_xml(
                "decision",
                "sentence",
                DECISIONS,
                required=True,
                hints={
                    "keep": "usable as it is",
                    "fix": "usable after the correction you type below",
                    "drop": "not usable: it cannot be fixed",
                },
            )
            + '<Header value="The sentence: correct it here (read when you choose fix)" size="5"/>'
            + textarea_xml("edited", "sentence", "the corrected sentence", rows=3, value="$sentence")
            + '<Header value="Problems (tick all that apply)" size="5"/>'
            + choices_xml(
                "problems",
                "sentence",
                (v[0] for v in SENTENCE_PROBLEMS.values()),
                multiple=True,
                hints={v[0]: v[1] for v in SENTENCE_PROBLEMS.values()},
            )
            + textarea_xml("comment", "sentence", "comment (optional)")
            + "</View>"
        )

    def task_data(self, rec, seed=0):
        return {
            "sentence": rec.sentence,
            "identity": rec.identity,
            "attribute": rec.attribute,
            "axis": rec.axis,
            "polarity": rec.polarity,
            "tuple_id": rec.tuple_id,
            "lang": rec.lang,
            "tuple_display": f"tuple: {rec.identity} — {rec.attribute}   ({rec.axis or 'axis unknown'}, "
            f"{rec.polarity or 'polarity unknown'})" + returned_note(rec.meta),
        }

    def apply(self, records, votes: Votes, **options) -> ApplyResult:
        """See the module docstring. Accepted sentences get ``status = accepted``,
        ``meta.annotation`` (the decision's votes, the problems ticked by a majority) and, when
        edited, a new ``sentence_id`` (ids are content hashes) and ``provenance.edits``."""
        from biaskit.inventory import load_inventory
        from biaskit.schema import Sentence

        inv = load_inventory()
        problems = votes.accepted_yes("problem")
        judged = votes.by_task()
        res = edit_result()
        for rec in records:
            rid = rec.sentence_id
            r = votes.accepted(res, rid, "decision")
            if r is None:
                continue
            if r["label"] == "drop":
                res.drop(rid, "rejected", "annotators: drop")
                continue
            ann: dict[str, Any] = {"decision": summarize(r), "problems": sorted(problems.get(rid, []))}
            if r["label"] == "fix":
                answers = latest_answers(judged[rid]) if rid in judged else {}
                fixers = {w for w, a in answers.items() if a.get("decision", {}).get("label") == "fix"}
                edit = field_edits(answers, {"edited": ("sentence", rec.sentence)}, fixers)["sentence"]
                if not edit.edited:
                    reason = (
                        edit_reason([edit])
                        if edit.conflict
                        else "the annotators chose fix but typed no correction. Adjudicate: correct it."
                    )
                    res.queue("adjudicate", returned_record(rec, "adjudicate", reason, fields=[edit.disagreement()]))
                    continue
                data = rec.model_dump(mode="json")
                data.update(
                    sentence=edit.text,
                    sentence_id="",
                    provenance={
                        **rec.provenance,
                        "edits": list(rec.provenance.get("edits") or []) + [edit.record(rid)],
                    },
                )
                rec = Sentence.model_validate(data)
                if not inv.mentions(rec.sentence, rec.identity, rec.lang):
                    res.queue(
                        "needs_review",
                        returned_record(
                            rec,
                            "needs_review",
                            (f"the corrected sentence no longer names the group '{rec.identity}'. Review it again."),
                        ),
                    )
                    continue
            rec.meta.pop("returned", None)  # a record back from review: accepted now
            rec.meta["annotation"] = ann
            rec.status = "accepted"
            res.accept(rec)
        return res
