"""The ``cat_translation`` kind: blind review of machine-translated StereoSet CATs, as pair
translations are reviewed (:mod:`.translation`: the same slots, votes, corrections in place,
adjudication and return-to-review queues).

``biaskit curate cat-translate`` writes candidate records
(:class:`~biaskit.schema.CATTranslationCandidates`); each task shows the English CAT (target term,
context with its ``BLANK``, the three options) and the candidates in a seeded random order with the
checker's flags, engines hidden. Reviewers pick a slot (``A``, ``B``, ...) or ``none`` and correct,
in place, the target term, the context (one ``BLANK``) and the three options (fills of the ``BLANK``
for an intrasentence CAT, sentences for an intersentence one). The gold labels come from the
English CAT, which people have already validated (StereoSet's rule, kind ``cat``): the translation
review only decides the text.

``annotate apply --kind cat_translation`` writes ``OUT`` with the released CATs in the target
language (:class:`~biaskit.schema.CAT`, ``lang`` = target, ``source_id`` = the English ``cat_id``,
``meta.review`` as for pairs, ``meta.fills`` for an intrasentence CAT). Every final CAT is re-checked
(:func:`biaskit.cat_checks.check_cat_translation`): one with a blocking flag
(:data:`biaskit.cat_checks.BLOCKING`: the ``BLANK`` lost, options not distinct or not word-sized,
the wrong script, ...) goes back to review (``OUT.needs_review.jsonl``) instead of being released.
"""

from __future__ import annotations

import html

from biaskit.cat_checks import OPTION_KEYS

from .base import CHOICE, TEXT, Question, choices_xml, seeded_order, textarea_xml, xml_attr
from .translation import NONE_CHOICE, SLOT_LETTERS, TranslationKind

_PARTS = {
    "target": "target term",
    "context": "context",
    "stereotype": "option 1 (stereotype)",
    "anti_stereotype": "option 2 (anti-stereotype)",
    "unrelated": "option 3 (unrelated)",
}


class CatTranslationKind(TranslationKind):
    name = "cat_translation"
    title = "Which translation of the CAT is best? Engines are hidden and the order is random."
    records_name = "CAT candidates"
    record_word = "CAT"
    corrections = {f"corrected_{f}": (f, label, f"src_{f}") for f, label in _PARTS.items()}
    questions = (
        Question("choice", "choice", CHOICE, SLOT_LETTERS + (NONE_CHOICE,), required=True),
        *(Question(q, q, TEXT) for q in corrections),
    )

    def read(self, path, *, skip_invalid=False):
        from biaskit.readers import read_cat_candidates

        return read_cat_candidates(path, skip_invalid=skip_invalid, max_candidates=len(SLOT_LETTERS))

    def record_id(self, rec):
        return rec.cat_id

    def _config(self, n: int) -> str:
        return (
            "<View>"
            f'<Header value="{xml_attr(self.title)}"/>'
            '<Header value="Source CAT (the options are labelled as their writer and five validators agreed)" '
            'size="5"/>'
            + "".join(f'<Text name="src_{f}" value="$source_{f}"/>' for f in _PARTS)
            + '<Header value="Candidate translations (with the checker\'s flags)" size="5"/>'
            '<HyperText name="candidates" value="$candidates_html"/>'
            + choices_xml("choice", "src_context", SLOT_LETTERS[:n] + (NONE_CHOICE,), required=True)
            + self._correction_views(n)
            + textarea_xml("comment", "src_context", "comment (optional)")
            + "</View>"
        )

    def task_data(self, rec, seed=0):
        order = seeded_order(len(rec.candidates), seed, rec.cat_id)
        src = rec.source.model_dump()
        intra = rec.split == "intrasentence"
        data = {f"source_{f}": f"{_PARTS[f]}: {src[f]}" for f in _PARTS}
        slots, rows, prefill = [], [], {}
        for s, i in zip(SLOT_LETTERS, order, strict=False):
            c = rec.candidates[i].model_dump()
            slots.append({"slot": s, "index": i, "engine": c["engine"], "model": c.get("model")})
            for f in _PARTS:
                prefill[f"slot_{s}_{f}"] = c.get(f) or ""
            flag_html = (
                "".join(
                    f"<li><b>{html.escape(str(x.get('code', '')))}</b>: {html.escape(str(x.get('reason', '')))}</li>"
                    for x in c.get("flags") or []
                    if isinstance(x, dict)
                )
                or "<li>none</li>"
            )
            opts = "".join(
                f"<br/>{k + 1}. {html.escape(str(c.get(f) or ''))}"
                + (f" &rarr; {html.escape(_filled(c.get('context'), c.get(f)))}" if intra else "")
                for k, f in enumerate(OPTION_KEYS)
            )
            rows.append(
                f"<div style='margin:6px 0;padding:4px;border:1px solid #ccc'><b>{s}</b><br/>"
                f"target: {html.escape(str(c.get('target') or ''))}<br/>"
                f"context: {html.escape(str(c.get('context') or ''))}{opts}"
                f"<br/><small>flags:<ul>{flag_html}</ul></small></div>"
            )
        for s in SLOT_LETTERS[len(rec.candidates) : getattr(self, "_slots", 0)]:
            for f in _PARTS:
                prefill[f"slot_{s}_{f}"] = ""
        return {
            **data,
            "split": rec.split,
            "source_lang": rec.source_lang,
            "target_lang": rec.target_lang,
            "candidates_html": "".join(rows),
            **prefill,
            "biaskit_slots": slots,
        }

    def finish(self, rec, raw, final, review, votes):
        """The final CAT re-checked (:func:`biaskit.cat_checks.check_cat_translation`) and, when no
        blocking flag is left, a :class:`~biaskit.schema.CAT` in the target language."""
        from biaskit.cat_checks import BLOCKING, check_cat_translation, fill
        from biaskit.languages import default_target
        from biaskit.schema import CAT

        tgt = rec.target_lang or default_target()
        source = {**rec.source.model_dump(), "split": rec.split}
        flags_after = check_cat_translation(source, final, tgt)
        review["flags_after"] = flags_after
        blockers = sorted({f["code"] for f in flags_after} & BLOCKING)
        if blockers:
            return blockers, None
        intra = rec.split == "intrasentence"
        options = [
            {"sentence": fill(final["context"], final[k]) if intra else final[k], "gold_label": lab}
            for k, lab in OPTION_KEYS.items()
        ]
        meta = {"review": review, "source": raw["source"]}
        if intra:
            meta["fills"] = {lab: final[k] for k, lab in OPTION_KEYS.items()}
        src_meta = (rec.provenance or {}).get("source_meta") or {}
        if src_meta.get("society"):
            meta["society"] = src_meta["society"]
        record = CAT(
            split=rec.split,
            target=final["target"],
            bias_type=rec.bias_type or "unknown",
            context=final["context"],
            options=options,
            lang=tgt,
            source_id=rec.cat_id,
            provenance={
                "source": "cat-translation-review",
                "candidates_file": votes.data_path,
                "source_cat_id": rec.cat_id,
                "source_lang": rec.source_lang,
                "engine": review["winner_engine"],
                "model": review["winner_model"],
                "source_provenance": (rec.provenance or {}).get("source_provenance"),
            },
            meta=meta,
        )
        return [], record

    def report(self, records, applied, out_dir):
        return None


def _filled(context, word) -> str:
    from biaskit.cat_checks import fill

    ctx, w = str(context or ""), str(word or "")
    return fill(ctx, w) if "BLANK" in ctx and w else ""
