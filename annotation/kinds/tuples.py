"""The ``tuple`` kind: is this (identity, attribute) a prevalent stereotype? (IndiBias step 2)."""

from __future__ import annotations

from .base import CHOICE, ApplyResult, Question, TaskKind, Votes, choices_xml, summarize, textarea_xml, xml_attr


class TupleKind(TaskKind):
    name = "tuple"
    title = "Is this (identity, attribute) a prevalent stereotype?"
    records_name = "tuples"
    reject_labels = ("no",)
    questions = (
        Question("stereotype", "stereotype", CHOICE, ("yes", "no"), required=True),
        Question("polarity", "polarity", CHOICE, ("positive", "negative")),
    )

    def read(self, path, *, skip_invalid=False):
        from biaskit.readers import read_tuples

        return read_tuples(path, skip_invalid=skip_invalid)

    def record_id(self, rec):
        return rec.tuple_id

    def bias_type(self, rec):
        return rec.axis

    def config(self, records=None):
        return (
            "<View>"
            f'<Header value="{xml_attr(self.title)}"/>'
            '<Text name="tuple" value="$display"/>'
            '<Header value="Is this a prevalent stereotype in the target culture?" size="5"/>'
            + choices_xml("stereotype", "tuple", ("yes", "no"), required=True)
            + '<Header value="Polarity of the attribute" size="5"/>'
            + choices_xml("polarity", "tuple", ("positive", "negative"))
            + textarea_xml("comment", "tuple", "comment (optional)")
            + "</View>"
        )

    def task_data(self, rec, seed=0):
        return {
            "identity": rec.identity,
            "attribute": rec.attribute,
            "axis": rec.axis,
            "polarity": rec.polarity,
            "lang": rec.lang,
            "display": f"{rec.identity} — {rec.attribute}   ({rec.axis}, given polarity: {rec.polarity})",
        }

    def apply(self, records, votes: Votes, **options) -> ApplyResult:
        """Accepted when ``stereotype`` is accepted as ``yes`` (IndiBias: >= 2 of 3); an accepted
        ``polarity`` that differs from the data replaces it (``polarity_before`` recorded)."""
        res = ApplyResult()
        for rec in records:
            rid = rec.tuple_id
            r = votes.accepted(res, rid, "stereotype")
            if r is None:
                continue
            if r["label"] != "yes":
                res.drop(rid, "rejected", "annotators: not a prevalent stereotype")
                continue
            ann = {"stereotype": summarize(r)}
            p = votes.get(rid, "polarity")
            if p is not None:
                ann["polarity"] = summarize(p)
                if p["status"] == "accepted" and p["label"] != rec.polarity:
                    ann["polarity_before"] = rec.polarity
                    rec.polarity = p["label"]
            rec.meta["annotation"] = ann
            rec.status = "accepted"
            res.accept(rec)
        return res
