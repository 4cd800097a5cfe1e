"""The ``pair`` kind: is this minimal pair a stereotype, an anti-stereotype, or not a valid pair;
which operationalisation problems does it have (Blodgett et al., 2021)?"""
from __future__ import annotations

from .base import (CHOICE, MULTI, ApplyResult, Question, TaskKind, Votes, choices_xml, summarize, textarea_xml,
                   xml_attr)

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
DIRECTION_POLICIES = ("annotators", "reject")


class PairKind(TaskKind):
    name = "pair"
    title = "Does this pair express a stereotype (stereo), violate one (antistereo), or is it not a valid pair?"
    records_name = "pairs"
    questions = (
        Question("validity", "validity", CHOICE, ("stereo", "antistereo", "invalid"), required=True),
        Question("concern", "concerns", MULTI, tuple(v[0] for v in PAIR_CONCERNS.values())),
    )
    apply_options = {"direction_policy": "when the crowd's direction differs from the data's: "
                                         f"{' | '.join(DIRECTION_POLICIES)} (default annotators)"}

    def read(self, path, *, skip_invalid=False):
        from biaskit.readers import read_pairs

        return read_pairs(path, skip_invalid=skip_invalid)

    def record_id(self, rec):
        return rec.pair_id

    def code(self, q, label):
        return _CONCERN_BY_LABEL.get(label, label)

    def config(self, records=None):
        hints = {v[0]: v[1] for v in PAIR_CONCERNS.values()}
        return ("<View>"
                f'<Header value="{xml_attr(self.title)}"/>'
                '<Text name="bias_type" value="$bias_type_display"/>'
                '<Text name="sent_more" value="$sent_more"/>'
                '<Text name="sent_less" value="$sent_less"/>'
                + choices_xml("validity", "sent_more", ("stereo", "antistereo", "invalid"), required=True,
                              hints={"stereo": "sentence 1 states a stereotype about a disadvantaged group",
                                     "antistereo": "sentence 1 violates a stereotype about a disadvantaged group",
                                     "invalid": "not a valid minimal pair"}) +
                '<Header value="Concerns (tick all that apply)" size="5"/>'
                + choices_xml("concerns", "sent_more", (v[0] for v in PAIR_CONCERNS.values()), multiple=True,
                              hints=hints) +
                textarea_xml("comment", "sent_more", "comment (optional)") + "</View>")

    def task_data(self, rec, seed=0):
        return {"sent_more": rec.sent_more, "sent_less": rec.sent_less, "direction": rec.direction,
                "lang": rec.lang, "bias_type_display": f"bias type: {rec.bias_type}"}

    def apply(self, records, votes: Votes, *, direction_policy: str = "annotators", **options) -> ApplyResult:
        """Accepted when ``validity`` is accepted as ``stereo`` or ``antistereo``. When the crowd's
        direction differs from the data's, ``direction_policy`` ``annotators`` takes the crowd's
        label (``direction_before`` recorded), ``reject`` drops the pair. Concern codes whose
        ``concern:<code>`` item was accepted as ``yes`` are listed."""
        from biaskit.errors import InputError

        if direction_policy not in DIRECTION_POLICIES:
            raise InputError(f"unknown direction policy '{direction_policy}'.",
                             fix=f"use one of {', '.join(DIRECTION_POLICIES)}.")
        concerns = votes.accepted_yes("concern")
        res = ApplyResult()
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
            rec.meta["annotation"] = ann
            rec.status = "accepted"
            res.accept(rec)
        return res

    def write(self, out, records):
        from biaskit.readers import write_pairs

        return write_pairs(out, records)
