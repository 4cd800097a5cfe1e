"""The ``pair`` kind: is this minimal pair a stereotype, an anti-stereotype, or not a valid pair;
which operationalisation problems does it have (Blodgett et al., 2021)? Annotators may also
correct either sentence in place (text areas prefilled with them).

Edits (:mod:`.edits`): the edits of the annotators whose ``validity`` vote won count; per
sentence, a text typed by a strict majority of them wins, different ones send the pair to the
adjudication queue (``OUT.adjudicate.jsonl``). An edited pair gets a new ``pair_id`` (a content
hash; ``source_id`` is kept), ``provenance.edits`` (who changed what, when) and is checked again
with the minimal-pair checker (:func:`biaskit.check.check_pair`): one that still has a flag in
:data:`EDIT_BLOCKING` goes back to review (``OUT.needs_review.jsonl``, pairs ``push`` takes) instead
of being accepted.
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

# Concern codes: the operationalisation pitfalls of Blodgett et al. (2021), "Stereotyping Norwegian
# Salmon", ACL, plus two used in this project's checks (multiple perturbations, IndiBias' cultural
# relevance filter). code -> (label shown to annotators, hint)
PAIR_CONCERNS: dict[str, tuple[str, str]] = {
    "not_a_stereotype": ("Not a meaningful stereotype", "the pair does not express a stereotype about a group"),
    "anti_vs_non_stereotype": (
        "Non-stereotype, not anti-stereotype",
        "the contrasting sentence is merely neutral, not an anti-stereotype",
    ),
    "misaligned_stereotype": ("Misaligned stereotype", "the stereotype is not about the group that is perturbed"),
    "invalid_perturbation": ("Invalid perturbation", "the changed words do not swap one group for another"),
    "incommensurable_groups": ("Incommensurable groups", "the two groups are not comparable (e.g. not on one axis)"),
    "indirect_identification": (
        "Indirect group identification",
        "the group is identified only through names or proxies",
    ),
    "logical_failure": ("Logical failure", "the sentence does not make sense for one of the groups"),
    "stereotype_conflation": ("Stereotype conflation", "several stereotypes or axes are mixed"),
    "multiple_perturbations": ("Multiple perturbations", "the sentences differ in more than the group term"),
    "not_naturalistic": ("Not naturalistic", "text nobody would write or say"),
    "grammar": ("Grammar / spelling problems", "typos or grammatical errors"),
    "irrelevant_to_culture": (
        "Irrelevant to the target culture",
        "the stereotype does not exist in the target culture",
    ),
}
_CONCERN_BY_LABEL = {v[0]: k for k, v in PAIR_CONCERNS.items()}
DIRECTION_POLICIES = ("annotators", "reject")
#: checker flags that send an edited pair back to review: it is not a minimal pair (informational
#: flags such as span_not_identity, which depends on the inventory's coverage, do not)
EDIT_BLOCKING = frozenset({"identical", "trivial_diff", "multi_span", "attribute_changed"})
EDIT_FIELDS = {"edited_more": "sent_more", "edited_less": "sent_less"}


class PairKind(TaskKind):
    name = "pair"
    title = "Does this pair express a stereotype (stereo), violate one (antistereo), or is it not a valid pair?"
    records_name = "pairs"
    reject_labels = ("invalid",)
    questions = (
        Question("validity", "validity", CHOICE, ("stereo", "antistereo", "invalid"), required=True),
        Question("concern", "concerns", MULTI, tuple(v[0] for v in PAIR_CONCERNS.values())),
        Question("edited_more", "edited_more", TEXT, prefill="sent_more"),
        Question("edited_less", "edited_less", TEXT, prefill="sent_less"),
    )
    apply_options = {
        "direction_policy": "when the crowd's direction differs from the data's: "
        f"{' | '.join(DIRECTION_POLICIES)} (default annotators)"
    }

    def read(self, path, *, skip_invalid=False):
        from biaskit.readers import read_pairs

        return read_pairs(path, skip_invalid=skip_invalid)

    def record_id(self, rec):
        return rec.pair_id

    def code(self, q, label):
        return _CONCERN_BY_LABEL.get(label, label)

    def config(self, records=None):
        hints = {v[0]: v[1] for v in PAIR_CONCERNS.values()}
        return (
            "<View>"
            f'<Header value="{xml_attr(self.title)}"/>'
            '<Text name="bias_type" value="$bias_type_display"/>'
            '<Text name="sent_more" value="$sent_more"/>'
            '<Text name="sent_less" value="$sent_less"/>'
            + choices_xml(
                "validity",
                "sent_more",
                ("stereo", "antistereo", "invalid"),
                required=True,
                hints={
                    "stereo": "sentence 1 states a stereotype about a disadvantaged group",
                    "antistereo": "sentence 1 violates a stereotype about a disadvantaged group",
                    "invalid": "not a valid minimal pair",
                },
            )
            + '<Header value="Correct the sentences in place (optional: only small fixes that keep the pair '
            'minimal)" size="5"/>'
            + textarea_xml("edited_more", "sent_more", "sentence 1", value="$sent_more")
            + textarea_xml("edited_less", "sent_less", "sentence 2", value="$sent_less")
            + '<Header value="Concerns (tick all that apply)" size="5"/>'
            + choices_xml("concerns", "sent_more", (v[0] for v in PAIR_CONCERNS.values()), multiple=True, hints=hints)
            + textarea_xml("comment", "sent_more", "comment (optional)")
            + "</View>"
        )

    def task_data(self, rec, seed=0):
        return {
            "sent_more": rec.sent_more,
            "sent_less": rec.sent_less,
            "direction": rec.direction,
            "lang": rec.lang,
            "bias_type_display": f"bias type: {rec.bias_type}" + returned_note(rec.meta),
        }

    def apply(self, records, votes: Votes, *, direction_policy: str = "annotators", **options) -> ApplyResult:
        """Accepted when ``validity`` is accepted as ``stereo`` or ``antistereo``. When the crowd's
        direction differs from the data's, ``direction_policy`` ``annotators`` takes the crowd's
        label (``direction_before`` recorded), ``reject`` drops the pair. Concern codes whose
        ``concern:<code>`` item was accepted as ``yes`` are listed. Edits: see the module docstring."""
        from biaskit.errors import InputError

        if direction_policy not in DIRECTION_POLICIES:
            raise InputError(
                f"unknown direction policy '{direction_policy}'.", fix=f"use one of {', '.join(DIRECTION_POLICIES)}."
            )
        concerns = votes.accepted_yes("concern")
        judged = votes.by_task()
        res = edit_result()
        for rec in records:
            rid = rec.pair_id
            r = votes.accepted(res, rid, "validity")
            if r is None:
                continue
            if r["label"] == "invalid":
                res.drop(rid, "rejected", "annotators: not a valid pair")
                continue
            ann = {"validity": summarize(r), "concerns": sorted(concerns.get(rid, []))}
            if r["label"] != rec.direction:
                if direction_policy == "reject":
                    res.drop(rid, "rejected", f"annotators say {r['label']}, data says {rec.direction}")
                    continue
                ann["direction_before"] = rec.direction
                rec.direction = r["label"]
            if rid in judged:
                rec = self._edited(rec, judged[rid], r["label"], ann, res)
                if rec is None:
                    continue
            rec.meta.pop("returned", None)  # a pair back from review: accepted now
            rec.meta["annotation"] = ann
            rec.status = "accepted"
            res.accept(rec)
        return res

    def _edited(self, rec, rows, label: str, ann: dict, res: ApplyResult):
        """The pair with its majority edits applied (None when it went to adjudication or review)."""
        from pydantic import ValidationError

        from biaskit.check import check_pair
        from biaskit.schema import SentencePair

        answers = latest_answers(rows)
        backers = {w for w, a in answers.items() if a.get("validity", {}).get("label") == label}
        edits = field_edits(answers, {q: (f, getattr(rec, f)) for q, f in EDIT_FIELDS.items()}, backers)
        conflicts = [e for e in edits.values() if e.conflict]
        if conflicts:
            res.queue(
                "adjudicate",
                returned_record(
                    rec, "adjudicate", edit_reason(conflicts), fields=[e.disagreement() for e in conflicts]
                ),
            )
            return None
        done = [e for e in edits.values() if e.edited]
        if not done:
            return rec
        data: dict[str, Any] = rec.model_dump(mode="json")
        data.update({e.field: e.text for e in done})
        data.update(
            pair_id="",
            provenance={
                **rec.provenance,
                "edits": list(rec.provenance.get("edits") or []) + [e.record(rec.pair_id) for e in done],
            },
        )
        try:
            new = SentencePair.model_validate(data)
        except ValidationError:  # the edits made the two sentences identical
            res.queue(
                "needs_review",
                returned_record(
                    rec,
                    "needs_review",
                    ("the corrected sentences are identical; review the pair again."),
                    edits=[e.record() for e in done],
                ),
            )
            return None
        flags = check_pair(new)
        new.meta["flags"] = [f.as_dict() for f in flags]
        blockers = sorted({f.code for f in flags} & EDIT_BLOCKING)
        if blockers:
            res.queue(
                "needs_review",
                returned_record(
                    new,
                    "needs_review",
                    (f"the edited pair still fails the minimal-pair checker: {', '.join(blockers)}."),
                ),
            )
            return None
        ann["edited"] = [e.field for e in done]
        return new

    def write(self, out, records):
        from biaskit.readers import write_pairs

        return write_pairs(out, records)
