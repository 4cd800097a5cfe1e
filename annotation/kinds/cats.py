"""The ``cat`` kind: StereoSet CATs, each of the three sentences labelled stereotype /
anti-stereotype / unrelated (as StereoSet's validation round; options shown in a seeded order)."""

from __future__ import annotations

from biaskit.errors import InputError

from .base import (
    CHOICE,
    ApplyResult,
    Question,
    TaskKind,
    Votes,
    choices_xml,
    seeded_order,
    summarize,
    textarea_xml,
    xml_attr,
)

CAT_LABELS = ("stereotype", "anti-stereotype", "unrelated")
CAT_SLOTS = ("A", "B", "C")


class CatKind(TaskKind):
    name = "cat"
    # StereoSet's released dev.json also labels sentences "related" (not described in the paper):
    # `annotate from-stereoset` keeps them as cast, and `replay` counts them as votes against the writer
    recorded_labels = ("related",)
    title = "Label each sentence as a stereotype, an anti-stereotype or unrelated to the context."
    records_name = "CATs"
    questions = tuple(
        Question(f"option_{lab}", f"label_{s}", CHOICE, CAT_LABELS, required=True)
        for lab, s in zip(CAT_LABELS, CAT_SLOTS, strict=False)
    )

    def read(self, path, *, skip_invalid=False):
        """Every CAT format :func:`biaskit.readers.read_cats` knows (StereoSet ``dev.json``, the
        flattened JSONL, biaskit CAT JSONL): the ids are the ones evaluation uses."""
        from biaskit.readers import ReadResult, read_cats

        return ReadResult(read_cats(path), format="cats", path=str(path))

    def record_id(self, rec):
        return rec.cat_id

    def config(self, records=None):
        parts = ["<View>", f'<Header value="{xml_attr(self.title)}"/>', '<Text name="context" value="$context"/>']
        for s in CAT_SLOTS:
            parts.append(f'<Text name="sentence_{s}" value="$sentence_{s}"/>')
            parts.append(choices_xml(f"label_{s}", f"sentence_{s}", CAT_LABELS, required=True))
        parts.append(textarea_xml("comment", "context", "comment (optional)"))
        parts.append("</View>")
        return "".join(parts)

    def task_data(self, rec, seed=0):
        order = seeded_order(3, seed, rec.cat_id)
        data = {"context": rec.context, "target": rec.target, "split": rec.split, "lang": rec.lang, "biaskit_slots": []}
        for s, i in zip(CAT_SLOTS, order, strict=False):
            opt = rec.options[i]
            data[f"sentence_{s}"] = f"{s}. {opt.sentence}"
            data["biaskit_slots"].append({"slot": s, "gold_label": opt.gold_label, "sentence_id": opt.sentence_id})
        return data

    def _slot_gold(self, data: dict) -> dict[str, str]:
        return {d["slot"]: d["gold_label"] for d in data.get("biaskit_slots") or []}

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
            raise InputError(
                f"unknown CAT question '{question}'.", fix=f"use one of {', '.join('option_' + x for x in CAT_LABELS)}."
            )
        s = gold[lab]
        return [
            {"from_name": f"label_{s}", "to_name": f"sentence_{s}", "type": "choices", "value": {"choices": [label]}}
        ]

    def decision_rules(self, min_agree=None):
        """Each sentence ``option_<gold>`` under StereoSet's rule (:class:`~..settle.WriterLabelRule`)."""
        from ..settle import WriterLabelRule

        return {f"option_{g}": WriterLabelRule(CAT_LABELS, min_agree, gold=g) for g in CAT_LABELS}

    def apply(self, records, votes: Votes, **options) -> ApplyResult:
        """StereoSet's rule (sec. 4.3, :mod:`biaskit.annotation.cat_rule`): a CAT is accepted when, for
        each of its three sentences, at least ``min_agree`` (default 3) validators gave the writer's
        label -- counted from the judgments when given, else from the aggregated table (whose own
        ``status`` is not used). With the judgments, each option's ``human_labels`` become the
        annotators' labels with their ids."""
        from biaskit.schema import HumanLabel

        from ..cat_rule import STEREOSET_MIN_AGREE, cat_verdict, judgment_counts, option_verdict
        from ..settle import WriterLabelRule, read_settlements, settled_overrides

        k = options.get("min_agree") or STEREOSET_MIN_AGREE
        human: dict[tuple[str, str], list[HumanLabel]] = {}
        j = votes.judgments
        counts = judgment_counts(j) if j is not None and len(j) else {}
        # adaptive overlap's risk policy: sentences decided before the rule alone could (recorded decisions)
        settled, _ = settled_overrides(read_settlements(j), WriterLabelRule(CAT_LABELS, k).spec())
        if j is not None and len(j):
            for t, q, w, lab in zip(
                j["task"].astype(str), j["question"].astype(str), j["worker"].astype(str), j["label"], strict=False
            ):
                if lab is None or (isinstance(lab, float) and lab != lab):
                    continue
                human.setdefault((t, q), []).append(HumanLabel(label=str(lab), annotator=w))
        res = ApplyResult()
        for rec in records:
            rid = rec.cat_id
            rows = {o.gold_label: votes.get(rid, f"option_{o.gold_label}") for o in rec.options}
            verdicts = {
                g: option_verdict(g, votes=counts.get((rid, f"option_{g}")), aggregated=v, min_agree=k)
                for g, v in rows.items()
            }
            for g in verdicts:
                s = settled.get((rid, f"option_{g}"))
                if s is not None:
                    verdicts[g] = {
                        **verdicts[g],
                        "status": s["status"],
                        "settled": "risk",
                        "reason": ""
                        if s["status"] == "accepted"
                        else f"adaptive overlap (risk policy) decided {s['status']} after {verdicts[g]['n']} "
                        f"validator(s)",
                    }
            status, reason = cat_verdict(verdicts)
            if status != "accepted":
                res.drop(rid, status, reason)
                continue
            for o in rec.options:
                o.human_labels = human.get((rid, f"option_{o.gold_label}"), o.human_labels)
            rec.meta["annotation"] = {
                g: {
                    **summarize(v or {}),
                    "agree": verdicts[g]["agree"],
                    "validators": verdicts[g]["n"],
                    "min_agree": k,  # the rule it passed (the release card states it from here)
                    **({"settled": "risk"} if verdicts[g].get("settled") else {}),
                }
                for g, v in rows.items()
            }
            res.accept(rec)
        return res
