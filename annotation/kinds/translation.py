"""The ``translation`` kind: blind review of machine translations, and what the review releases.

The loop: ``biaskit curate translate`` writes candidate records
(:class:`~biaskit.schema.TranslationCandidates`) -> ``biaskit annotate push --kind translation``
shows them (candidates shuffled per pair with a seed, engines hidden; the slot -> engine order stays
in the task data) -> reviewers pick a slot (``A``, ``B``, ...) or ``none``; picking a slot shows its
S1/S2 in text areas prefilled with them, to correct in place (``none`` shows empty ones for the
reviewer's own translation) -> ``biaskit annotate pull`` gives judgment rows (each choice row
carries the candidate index and engine behind its slot; a correction is a ``corrected_more`` /
``corrected_less`` row only when it differs from the candidate) -> ``biaskit annotate apply
--kind translation`` writes

- ``OUT`` (JSONL): the released target-language pairs, :class:`~biaskit.schema.SentencePair` with
  ``lang`` = target, ``source_id`` = the source ``pair_id``, ``status = accepted`` and
  ``meta.review`` = who chose what, the winning engine, whether and by whom it was edited, the
  chosen MT text, the edit distance, the checker flags before and after review;
- ``OUT.needs_review.jsonl``: pairs *returned to review*, in the candidates format (so they can be
  pushed again) with the reviewers' edit added as a candidate (engine ``review``), ``status =
  needs_review`` and the reason: an edited or chosen pair that still fails a blocking check, a tie,
  too few votes;
- ``OUT.adjudicate.jsonl``: the adjudication queue, in the same format: pairs whose reviewers
  chose the same candidate but typed different corrections with no majority; each reviewer's
  corrected pair is added as a candidate (engine ``review``, model = the reviewer);
- ``OUT.rejected.jsonl``: pairs the reviewers rejected (``none`` and no correction).

Votes: the choices go through the same :func:`~biaskit.annotation.aggregate.prepare` and aggregator
as every other judgment (:meth:`TranslationKind.votes` maps each slot letter to the candidate it
showed: label ``"0"``, ``"1"``, ... or ``none``; a reviewer who answered twice counts with the latest
answer). The aggregated ``choice`` decides: accepted -> the winning candidate; a tie, too few
annotators or no majority -> back to review (``--min-agree K``: K reviewers must back the winner).
The final text is the winning candidate, replaced sentence by sentence by the corrections of the
reviewers who voted for the winner (from their latest annotation; per sentence, a correction typed
by a strict majority of them wins, otherwise the pair goes to adjudication: :mod:`.edits`). A
``none`` win with a complete correction releases the
correction; without one the pair is rejected. Every final pair is re-checked
(:func:`biaskit.mt_checks.check_candidate`: the minimal-pair checker + MT checks against the
source); one with a *blocking* flag (:data:`BLOCKING`) is returned to review instead of released.

``annotate apply --kind translation --report-dir R`` also writes the review report
(:func:`translation_report`: engine win rates, edits, flags before/after).
"""

from __future__ import annotations

import functools
import html
import string
from collections import Counter
from pathlib import Path
from typing import Any, cast

from biaskit.errors import InputError
from biaskit.options import say
from biaskit.schema import Direction, PairStatus, SentencePair, normalize_text
from biaskit.tables import md_table, num, pct

from .base import (
    CHOICE,
    TEXT,
    ApplyResult,
    Question,
    TaskKind,
    Votes,
    choices_xml,
    is_unchanged,
    seeded_order,
    text_answer,
    textarea_xml,
    xml_attr,
)
from .edits import decide_edit, edit_reason, latest_rows, present, when

SLOT_LETTERS = tuple(string.ascii_uppercase)
NONE_CHOICE = "none"
REVIEW_ENGINE = "review"

# Flags that stop a pair from being released: it is not a usable minimal pair in the target
# language. Informational flags are reported but do not block: span_substituted, entity_missing
# (reviewers may localise names, as IndiBias did), length_ratio, untranslated_latin / mixed_scripts
# (IndiBias' own translators kept "CEO" and "IQ" in Latin letters), multi_span / attribute_changed /
# span_not_identity (they also fire when the *English* pair is not minimal; translation_not_minimal
# is the one that compares with the source).
BLOCKING = frozenset(
    {
        "identical",
        "trivial_diff",
        "translation_collapsed",
        "empty_translation",
        "translation_not_minimal",
        "wrong_script",
    }
)


class TranslationKind(TaskKind):
    name = "translation"
    title = "Which translation of the pair is best? Engines are hidden and the order is random."
    records_name = "candidates"
    #: correction question -> (the candidate field it corrects, its label, the Text element its area
    #: points at); a subclass reviewing other records (``cat_translation``) names its own
    corrections: dict[str, tuple[str, str, str]] = {
        "corrected_more": ("sent_more", "sentence 1", "src_more"),
        "corrected_less": ("sent_less", "sentence 2", "src_less"),
    }
    record_word = "pair"
    reject_labels = (NONE_CHOICE,)
    questions: tuple[Question, ...] = (
        Question("choice", "choice", CHOICE, SLOT_LETTERS + (NONE_CHOICE,), required=True),
        Question("corrected_more", "corrected_more", TEXT),
        Question("corrected_less", "corrected_less", TEXT),
    )

    # --- records -----------------------------------------------------------------------------------
    def read(self, path, *, skip_invalid=False):
        from biaskit.readers import read_candidates

        return read_candidates(path, skip_invalid=skip_invalid, max_candidates=len(SLOT_LETTERS))

    def record_id(self, rec):
        return rec.pair_id

    def bias_type(self, rec):
        return rec.bias_type

    # --- Label Studio ------------------------------------------------------------------------------
    def n_slots(self, records) -> int:
        return max([2] + [len(r.candidates) for r in (records or [])])

    def config_for_tasks(self, tasks):
        n = max([2] + [len((t.get("data") or {}).get("biaskit_slots") or []) for t in tasks])
        return self._config(n)

    def config(self, records=None):
        # remembered for task_data: Label Studio refuses a task without a key the config names
        # ($slot_C_more), so tasks with fewer candidates get empty texts for the extra slots
        self._slots = self.n_slots(records)
        return self._config(self._slots)

    def _config(self, n: int) -> str:
        return (
            "<View>"
            f'<Header value="{xml_attr(self.title)}"/>'
            '<Header value="Source pair" size="5"/>'
            '<Text name="src_more" value="$source_more"/>'
            '<Text name="src_less" value="$source_less"/>'
            '<Header value="Candidate translations (with the checker\'s flags)" size="5"/>'
            '<HyperText name="candidates" value="$candidates_html"/>'
            + choices_xml("choice", "src_more", SLOT_LETTERS[:n] + (NONE_CHOICE,), required=True)
            + self._correction_views(n)
            + textarea_xml("comment", "src_more", "comment (optional)")
            + "</View>"
        )

    def _correction_views(self, n: int) -> str:
        """Per slot, the correction areas prefilled with its candidate (shown when it is chosen); for
        ``none``, empty areas for the reviewer's own translation."""
        out = "".join(_slot_view(s, self.corrections) for s in SLOT_LETTERS[:n])
        return (
            out + f'<View visibleWhen="choice-selected" whenTagName="choice" whenChoiceValue="{NONE_CHOICE}">'
            '<Header value="None is good enough: type your own translation (optional)" size="5"/>'
            + "".join(textarea_xml(q, to, f"translation of {label}") for q, (_, label, to) in self.corrections.items())
            + "</View>"
        )

    def task_data(self, rec, seed=0):
        order = seeded_order(len(rec.candidates), seed, self.record_id(rec))
        slots, rows, prefill = [], [], {}
        for s, i in zip(SLOT_LETTERS, order, strict=False):
            c = rec.candidates[i]
            slots.append({"slot": s, "index": i, "engine": c.engine, "model": c.model})
            prefill[f"slot_{s}_more"], prefill[f"slot_{s}_less"] = c.sent_more, c.sent_less
            flag_html = (
                "".join(
                    f"<li><b>{html.escape(str(f.get('code', '')))}</b>: {html.escape(str(f.get('reason', '')))}"
                    + (f" <i>suggestion: {html.escape(str(f['suggestion']))}</i>" if f.get("suggestion") else "")
                    + "</li>"
                    for f in c.flags
                    if isinstance(f, dict)
                )
                or "<li>none</li>"
            )
            rows.append(
                f"<div style='margin:6px 0;padding:4px;border:1px solid #ccc'><b>{s}</b><br/>"
                f"1. {html.escape(str(c.sent_more))}<br/>2. {html.escape(str(c.sent_less))}"
                f"<br/><small>flags:<ul>{flag_html}</ul></small></div>"
            )
        for s in SLOT_LETTERS[len(rec.candidates) : getattr(self, "_slots", 0)]:
            prefill[f"slot_{s}_more"] = prefill[f"slot_{s}_less"] = ""
        return {
            "source_more": rec.source.sent_more,
            "source_less": rec.source.sent_less,
            "source_lang": rec.source_lang,
            "target_lang": rec.target_lang,
            "direction": rec.direction,
            "candidates_html": "".join(rows),
            # each slot's text, prefilled in its correction areas
            **prefill,
            # the slot -> engine order: kept in the task data (not rendered by the config) so
            # that every choice maps back to its engine
            "biaskit_slots": slots,
        }

    def judgments(self, data, values):
        """Choice rows carry the engine behind the slot; the chosen slot's correction areas give
        ``corrected_more`` / ``corrected_less`` rows when they differ from the candidate (replacing
        the plain areas' text); other slots' areas are ignored."""
        rows = super().judgments(data, values)
        slots = {d["slot"]: d for d in (data.get("biaskit_slots") or [])}
        chosen = (values.get("choice") or [None])[0]
        if chosen in slots:
            for q in self.corrections:
                side = q.removeprefix("corrected_")
                text = text_answer(values.get(f"{q}_{chosen}"))
                if text and not is_unchanged(text, data.get(f"slot_{chosen}_{side}")):
                    rows = [r for r in rows if r["question"] != q]
                    rows.append({"question": q, "label": text, "qtype": TEXT})
        for r in rows:
            if r["question"] == "choice":
                s = slots.get(r["label"])
                r["engine"] = s["engine"] if s else None
                r["model"] = s.get("model") if s else None
                r["candidate_index"] = s["index"] if s else None
        return rows

    def check_task_values(self, data, values):
        """A choice must name one of this task's slots (configs list the most slots of any task)."""
        slots = {d["slot"] for d in (data.get("biaskit_slots") or [])}
        for v in values.get("choice") or []:
            if v != NONE_CHOICE and v not in slots:
                return f"choice '{v}' but this task shows only slots {', '.join(sorted(slots))}"
        return None

    # --- votes ---------------------------------------------------------------------------------------
    def allowed_labels(self):
        return {}  # after votes(): candidate indices, checked against the records there

    def votes(self, judgments, records=None):
        """Choice rows with the slot letter replaced by the candidate it showed (``"0"``, ``"1"``, ...)
        or ``none``: the same candidate gets the same label whatever slot it had."""
        df = judgments.copy()
        if len(df) == 0 or "question" not in df.columns:
            return df
        by_id = {self.record_id(r): r for r in records} if records is not None else None
        is_choice = df["question"].astype(str).eq("choice")
        keys = [_candidate_key(r, by_id) for r in df[is_choice].to_dict(orient="records")]
        df.loc[is_choice, "label"] = keys
        return df

    # --- apply ---------------------------------------------------------------------------------------
    def apply(self, records, votes: Votes, **options) -> ApplyResult:
        """The reviewers' choice and corrections per record (see the module docstring; one record:
        :meth:`_apply_record`); what the released record is, and which flags block it, is :meth:`finish`."""
        if votes.judgments is None:
            raise InputError(
                "applying a translation review needs the pulled judgments (the reviewers' choices and corrections).",
                fix=f"pass {say('judgments')} FILE (from `biaskit annotate pull`).",
            )
        res = ApplyResult(
            files={"needs_review": [], "adjudicate": [], "rejected": []},
            counts={"accepted": 0, "needs_review": 0, "adjudicate": 0, "rejected": 0, "not_reviewed": 0},
        )
        judged = votes.by_task()
        by_id = {self.record_id(r): r for r in records}
        for rec in records:
            pid = self.record_id(rec)
            if pid not in judged:
                res.counts["not_reviewed"] += 1
                continue
            reviewers = _per_worker(judged[pid], by_id, self.corrections)
            self._apply_record(rec, reviewers, votes.get(pid, "choice"), votes, res, options.get("min_agree"))
        return res

    def _apply_record(self, rec, reviewers: list[dict], agg: dict | None, votes: Votes, res: ApplyResult, min_agree):
        """One reviewed record (``agg``: its aggregated choice): released (``res.accept``), returned to review,
        sent to adjudication (different corrections of the same choice) or rejected."""
        raw = rec.model_dump(mode="json")
        decided = [v for v in reviewers if "choice" in v]
        review: dict[str, Any] = {
            "reviewers": [
                {k: v.get(k) for k in (*_REVIEWER_FIELDS, *self.corrections) if v.get(k) is not None} for v in reviewers
            ],
            "votes": dict(Counter(v["key"] for v in decided)),
            "n_reviewers": len(decided),
        }
        back = functools.partial(_send_back, res, raw, review)  # reads `review` as it is when called
        if agg is None or not decided:
            return back("no reviewer made a choice (only corrections or comments).")
        if agg["status"] != "accepted" or agg.get("label") in (None, ""):
            return back(_not_accepted_reason(agg, min_agree))
        winner = str(agg["label"])
        review["agreement"] = round(float(agg["agreement"]), 4)
        backers = [v for v in decided if v["key"] == winner]
        chosen_c = None if winner == NONE_CHOICE else raw["candidates"][int(winner)]
        edits = {
            q: decide_edit(
                q, (chosen_c or {}).get(f) or "", {v["worker"]: (v[q], v.get("when", "")) for v in backers if v.get(q)}
            )
            for q, (f, _, _) in self.corrections.items()
        }
        conflicts = [e for e in edits.values() if e.conflict]
        if conflicts:
            reason = f"chose {'none' if chosen_c is None else 'the same candidate'}, but " + edit_reason(conflicts)
            return back(reason, to="adjudicate", extras=_proposals(backers, chosen_c, self.corrections))
        corr: dict[str, str | None] = {q: e.text for q, e in edits.items()}
        if winner == NONE_CHOICE and not all(corr.values()):
            reason = "no candidate was good enough and no complete correction was given."
            res.files["rejected"].append({**raw, "status": "rejected", "review": {**review, "reason": reason}})
            res.counts["rejected"] += 1
            return None
        final, edited, editors = self._final_text(chosen_c, corr, edits, winner, review)
        blocked, record = self.finish(rec, raw, final, review, votes)
        if blocked:
            extra = self._edit_candidate(final, editors, review) if edited else None
            what = "edited" if edited else "chosen"
            return back(f"the {what} {self.record_word} still fails the checker: {', '.join(blocked)}.", extra)
        res.accept(record)
        return None

    def _final_text(self, chosen_c: dict | None, corr: dict, edits: dict, winner: str, review: dict[str, Any]):
        """``(final texts, edited?, editors)`` of a decided record: each field the backers' correction, else the
        chosen candidate's text; what was chosen and changed goes into ``review``."""
        mt = None if chosen_c is None else {f: chosen_c[f] for f, _, _ in self.corrections.values()}
        # all str: with no candidate chosen every correction is given (checked before), else the candidate's text
        final = cast(dict[str, str], {f: corr[q] or (mt or {}).get(f) for q, (f, _, _) in self.corrections.items()})
        edited = bool(mt is None or any(normalize_text(final[f]) != normalize_text(mt[f]) for f in final))
        editors = sorted({w for e in edits.values() if e.edited for w in e.annotators})
        review.update(
            {
                "winner_engine": chosen_c.get("engine") if chosen_c else REVIEW_ENGINE,
                "winner_model": chosen_c.get("model") if chosen_c else None,
                "winner_index": None if chosen_c is None else int(winner),
                "edited": edited,
                "editors": editors,
                "chosen_mt": mt,
                "edit_distance": None if mt is None else {f: levenshtein(mt[f], final[f]) for f in final},
                "flags_before": (chosen_c or {}).get("flags", []),
            }
        )
        return final, edited, editors

    @staticmethod
    def _edit_candidate(final: dict[str, str], editors: list[str], review: dict[str, Any]) -> dict[str, Any]:
        """The reviewers' edited text as a candidate of the next review round (it still fails the checker)."""
        return {
            "engine": REVIEW_ENGINE,
            "model": ",".join(editors) or None,
            **final,
            "flags": review["flags_after"],
            "strategy": "human-edit",
            "provenance": {"editors": editors},
        }

    def finish(self, rec, raw: dict, final: dict[str, str], review: dict[str, Any], votes: Votes):
        """``(blocking flags, released record)`` for one decided record: the final pair re-checked
        (:func:`biaskit.mt_checks.check_candidate`; ``review["flags_after"]``), a
        :class:`~biaskit.schema.SentencePair` in the target language with ``source_id`` = the source pair."""
        from biaskit.languages import default_target
        from biaskit.mt_checks import check_candidate

        pid, tgt = rec.pair_id, rec.target_lang or default_target()
        final_more, final_less = final["sent_more"], final["sent_less"]
        flags_after = check_candidate(_source_pair(rec), final_more, final_less, tgt)
        review["flags_after"] = flags_after
        blockers = sorted({f["code"] for f in flags_after} & BLOCKING)
        if not blockers and normalize_text(final_more) == normalize_text(final_less):
            blockers = ["identical"]
        record = (
            SentencePair(
                sent_more=final_more,
                sent_less=final_less,
                direction=rec.direction or Direction.stereo,
                bias_type=rec.bias_type or "unknown",
                lang=tgt,
                source_id=pid,
                status=PairStatus.accepted,
                provenance={
                    "source": "translation-review",
                    "candidates_file": votes.data_path,
                    "source_pair_id": pid,
                    "source_lang": rec.source_lang,
                    "engine": review["winner_engine"],
                    "model": review["winner_model"],
                    "source_provenance": rec.provenance,
                },
                meta={"review": review, "source": raw["source"]},
            )
            if not blockers
            else None
        )
        return blockers, record

    def report(self, records, applied, out_dir):
        return translation_report([r.model_dump(mode="json") for r in records], applied, out_dir=out_dir)


# ------------------------------------------------------------------------------------------ votes
_REVIEWER_FIELDS = ("worker", "choice", "engine", "model", "corrected_more", "corrected_less", "comment", "lead_time")


def _send_back(
    res: ApplyResult,
    raw: dict,
    review: dict[str, Any],
    reason: str,
    extra: dict | None = None,
    to: str = "needs_review",
    extras: list[dict] | None = None,
) -> None:
    """Queue a record for another round (``to``: needs_review or adjudicate) with ``reason``; ``extra`` /
    ``extras``: candidates added for that round (the reviewers' edit, each editor's proposal)."""
    r2 = {**raw, "status": "needs_review", "review": {**review, "reason": reason}}
    more = ([extra] if extra else []) + list(extras or [])
    if more:
        r2["candidates"] = raw["candidates"] + more
    res.queue(to, r2)


def _candidate_key(row: dict, by_id: dict | None) -> str | float | None:
    """The candidate a choice row stands for: its index as text, or ``none`` (a missing label as it is)."""
    label = row.get("label")
    if not present(label):
        return label  # no answer: prepare() drops it
    if str(label) == NONE_CHOICE:
        return NONE_CHOICE
    rec = by_id.get(str(row.get("task"))) if by_id is not None else None
    n = len(rec.candidates) if rec is not None else None
    idx: Any = row.get("candidate_index")  # a number or its text; None, NaN or "" when absent (present() below)
    if present(idx):
        try:
            i = int(float(idx))
        except (TypeError, ValueError):
            i = -1
        if i >= 0 and (n is None or i < n):
            return str(i)
        raise InputError(
            f"pair {row.get('task')}: candidate_index {idx!r} but the pair has {n} candidates.",
            fix="pull the judgments from the project the candidates file was pushed to.",
        )
    eng, model = row.get("engine"), row.get("model")
    if present(eng) and rec is not None:
        hits = [i for i, c in enumerate(rec.candidates) if c.engine == eng and (not present(model) or c.model == model)]
        if len(hits) == 1:
            return str(hits[0])
    raise InputError(
        f"pair {row.get('task')}: the choice '{label}' of {row.get('worker')} cannot be mapped to an "
        "engine (no candidate_index / engine column).",
        fix="use the judgments written by `biaskit annotate pull` for the translation kind: it adds the "
        "engine behind each slot from the task data.",
    )


def _per_worker(rows, by_id: dict, corrections=TranslationKind.corrections) -> list[dict[str, Any]]:
    """One dict per reviewer of a task, from their latest annotation (:func:`.edits.latest_rows`):
    ``worker, choice`` (the slot letter), ``key`` (the candidate), ``engine, model``, the correction
    questions (``corrected_more, corrected_less`` for pairs), ``comment``, ``when`` (the annotation's time)."""
    out = []
    for w, rs in latest_rows(rows).items():
        d: dict[str, Any] = {"worker": w}
        for r in rs:
            q = str(r["question"])
            d["when"] = max(d.get("when", ""), when(r))
            if q == "choice":
                d["choice"] = str(r.get("label"))
                d["key"] = _candidate_key(r, by_id)
                if d["key"] == NONE_CHOICE:
                    d.pop("engine", None)
                    d.pop("model", None)
                else:
                    c = by_id[str(r["task"])].candidates[int(d["key"])]
                    d["engine"], d["model"] = c.engine, c.model
            elif q in corrections and str(r.get("label", "")).strip():
                d[q] = str(r["label"]).strip()
            if r.get("comment"):
                d["comment"] = r["comment"]
            if r.get("lead_time") is not None:
                d["lead_time"] = r["lead_time"]
        out.append(d)
    return out


def _slot_view(slot: str, corrections: dict[str, tuple[str, str, str]]) -> str:
    """The correction areas of one slot, prefilled with its candidate, shown when it is chosen."""
    return (
        f'<View visibleWhen="choice-selected" whenTagName="choice" whenChoiceValue="{slot}">'
        f'<Header value="Correct candidate {slot} in place (optional)" size="5"/>'
        + "".join(
            textarea_xml(f"{q}_{slot}", to, f"{label} of {slot}", value=f"$slot_{slot}_{q.removeprefix('corrected_')}")
            for q, (_, label, to) in corrections.items()
        )
        + "</View>"
    )


def _proposals(backers: list[dict], chosen: dict | None, corrections=TranslationKind.corrections) -> list[dict]:
    """Each editor's corrected record (their correction, else the chosen candidate's text, field by
    field), as a candidate for the adjudication round (engine ``review``, model = the reviewer);
    identical ones once."""
    out, seen = [], set()
    for v in backers:
        if not any(v.get(q) for q in corrections):
            continue
        texts = {f: normalize_text(v.get(q) or (chosen or {}).get(f) or "") for q, (f, _, _) in corrections.items()}
        key = tuple(texts.values())
        if key in seen:
            continue
        seen.add(key)
        out.append(
            {
                "engine": REVIEW_ENGINE,
                "model": v["worker"],
                **texts,
                "flags": [],
                "strategy": "human-edit",
                "provenance": {"editors": [v["worker"]]},
            }
        )
    return out


def _not_accepted_reason(agg: dict, min_agree: int | None) -> str:
    reason = str(agg.get("reason") or agg.get("status"))
    if agg.get("tie") in (True, "True", "true", 1) or reason.startswith("tie"):
        tied = str(agg.get("tied_labels") or "").replace("|", ", ")
        return f"tie between choices {tied}: adjudicate."
    if reason in ("too_few_annotators", "below_min_agree"):
        return (
            f"only {agg.get('votes')} reviewer(s) back the winning choice, {min_agree or 'more'} needed "
            f"({agg.get('n_annotators')} answered)."
        )
    return f"no majority among the reviewers ({agg.get('votes')} of {agg.get('n_annotators')} back one choice)."


def _source_pair(rec) -> SentencePair:
    return SentencePair(
        sent_more=rec.source.sent_more,
        sent_less=rec.source.sent_less,
        direction=rec.direction or Direction.stereo,
        bias_type=rec.bias_type or "unknown",
        lang=rec.source_lang,
        pair_id=rec.pair_id,
    )


# ------------------------------------------------------------------------------------------ distance
def levenshtein(a: str, b: str) -> int:
    """Character edit distance (insertions, deletions, substitutions cost 1) on Unicode code points
    after NFC normalisation: a Devanagari vowel sign is one character."""
    a, b = normalize_text(a), normalize_text(b)
    if a == b:
        return 0
    if len(a) < len(b):
        a, b = b, a
    prev = list(range(len(b) + 1))
    for i, ca in enumerate(a, 1):
        cur = [i] + [0] * len(b)
        for j, cb in enumerate(b, 1):
            cur[j] = min(prev[j] + 1, cur[j - 1] + 1, prev[j - 1] + (ca != cb))
        prev = cur
    return prev[-1]


# ------------------------------------------------------------------------------------------ report
def _stats(xs: list[float]) -> dict[str, Any]:
    import statistics

    if not xs:
        return {"n": 0, "mean": None, "median": None, "max": None}
    return {"n": len(xs), "mean": round(statistics.fmean(xs), 4), "median": statistics.median(xs), "max": max(xs)}


def _sibling(out: Path, what: str) -> Path:
    return out.with_name(f"{out.stem}.{what}.jsonl")


def translation_report(candidates: Any, reviewed: Any, out_dir: str | Path | None = None) -> dict[str, Any]:
    """Engine win rates, edit rate, character edit distance, checker flags before/after review.

    ``candidates``: the candidates file (or its records as dicts); ``reviewed``: an
    :class:`~biaskit.annotation.kinds.base.ApplyResult` of this kind, or the path of the released
    pairs file (its ``.needs_review`` / ``.adjudicate`` / ``.rejected`` siblings are read when present). Writes
    ``report.json`` and ``report.md`` to ``out_dir`` when given.
    """
    from biaskit.io import write_json

    if isinstance(candidates, (str, Path)):
        from biaskit.readers import read_candidates

        candidates = [r.model_dump(mode="json") for r in read_candidates(candidates).records]
    accepted, back, adjudicate, rejected = _reviewed(reviewed)
    reviews = [a["meta"]["review"] for a in accepted] + [r.get("review", {}) for r in back + adjudicate + rejected]
    n_released = len(accepted)
    engine_rows, n_none = _engine_rows(candidates, accepted, reviews)
    edited = [a for a in accepted if a["meta"]["review"].get("edited")]
    report = {
        "pairs": {
            "candidates": len(candidates),
            "reviewed": len(accepted) + len(back) + len(adjudicate) + len(rejected),
            "released": n_released,
            "returned_to_review": len(back),
            "to_adjudicate": len(adjudicate),
            "rejected": len(rejected),
        },
        "engines": engine_rows,
        "none_choices": n_none,
        "edit_rate": round(len(edited) / n_released, 4) if n_released else None,
        "edited_pairs": len(edited),
        "char_edit_distance": _edit_distances(accepted),
        "flags": _flag_counts(candidates, reviews),
        "returned_reasons": dict(Counter(r.get("review", {}).get("reason", "").split(":")[0] for r in back)),
    }
    if out_dir is not None:
        from biaskit.io import atomic_dir, atomic_write_text

        with atomic_dir(out_dir, owns=("report.json",)) as tmp:  # published whole
            write_json(tmp / "report.json", report)
            atomic_write_text(tmp / "report.md", report_markdown(report))
    return report


def _reviewed(reviewed: Any) -> tuple[list[dict], list[dict], list[dict], list[dict]]:
    """``(accepted, needs_review, adjudicate, rejected)`` records of an :class:`ApplyResult` or of the files
    `apply` wrote (the released file refused when it is not the translation review's)."""
    from biaskit.io import read_jsonl

    if isinstance(reviewed, ApplyResult):
        accepted = [p.model_dump(mode="json") for p in reviewed.accepted]
        files = reviewed.files
        return accepted, files.get("needs_review", []), files.get("adjudicate", []), files.get("rejected", [])
    p = Path(reviewed)
    accepted = read_jsonl(p)
    for i, a in enumerate(accepted, start=1):
        rv = (a.get("meta") or {}).get("review") if isinstance(a.get("meta"), dict) else None
        if not isinstance(rv, dict) or "winner_engine" not in rv:
            raise InputError(
                "not a pair released by the translation review (no meta.review).",
                path=p,
                row=i,
                fix="pass the OUT file of `biaskit annotate apply --kind translation`.",
            )
    back, adjudicate, rejected = (
        [] if not _sibling(p, w).exists() else read_jsonl(_sibling(p, w))
        for w in ("needs_review", "adjudicate", "rejected")
    )
    return accepted, back, adjudicate, rejected


def _engine_rows(candidates: list[dict], accepted: list[dict], reviews: list[dict]) -> tuple[dict[str, Any], int]:
    """Per engine (``engine:model``): candidates shown, final wins (released pairs only: a win means the text
    was released), reviewers' individual choices over all reviewed pairs, flagged before review; and the
    number of reviewers' choices of *none*."""
    engines = sorted({f"{c.get('engine')}:{c.get('model')}" for r in candidates for c in r["candidates"]})
    shown = Counter(f"{c.get('engine')}:{c.get('model')}" for r in candidates for c in r["candidates"])
    wins = Counter(f"{rv['winner_engine']}:{rv['winner_model']}" for rv in (a["meta"]["review"] for a in accepted))
    choices: Counter = Counter()
    n_choices = 0
    for rv in reviews:
        for v in rv.get("reviewers", []):
            if "choice" in v:
                n_choices += 1
                choices[f"{v['engine']}:{v.get('model') or ''}" if v.get("engine") else "none"] += 1
    n_released = len(accepted)
    rows = {}
    for e in engines:
        cs = [c for r in candidates for c in r["candidates"] if f"{c.get('engine')}:{c.get('model')}" == e]
        rows[e] = {
            "candidates_shown": shown[e],
            "final_wins": wins[e],
            "final_win_rate": round(wins[e] / n_released, 4) if n_released else None,
            "reviewer_choices": choices[e],
            "reviewer_choice_rate": round(choices[e] / n_choices, 4) if n_choices else None,
            "flag_rate_before": round(sum(1 for c in cs if c.get("flags")) / len(cs), 4) if cs else None,
        }
    return rows, choices["none"]


def _edit_distances(accepted: list[dict]) -> dict[str, Any]:
    """Character edit distance from the chosen MT to the released text: all sentences, edited ones, and
    edited ones as a share of the longer sentence."""
    dists_all, dists_edited, norm = [], [], []
    for a in accepted:
        rv = a["meta"]["review"]
        ed = rv.get("edit_distance")
        if not ed:
            continue
        for side in ("sent_more", "sent_less"):
            d = ed[side]
            dists_all.append(d)
            if rv.get("edited"):
                dists_edited.append(d)
                mt = rv["chosen_mt"][side]
                norm.append(d / max(1, max(len(mt), len(a[side]))))
    return {
        "all_sentences": _stats(dists_all),
        "edited_sentences": _stats(dists_edited),
        "edited_normalised": _stats(norm),
    }


def _flag_counts(candidates: list[dict], reviews: list[dict]) -> dict[str, dict[str, int]]:
    """Checker flags by code: on every candidate, on the chosen ones (before review), on the final texts."""
    before: Counter[str] = Counter()
    after: Counter[str] = Counter()
    for rv in reviews:
        if "flags_before" in rv:
            before.update(f["code"] for f in rv["flags_before"])
        if "flags_after" in rv:
            after.update(f["code"] for f in rv["flags_after"])
    all_before = Counter(f["code"] for r in candidates for c in r["candidates"] for f in c.get("flags", []))
    return {
        "all_candidates_before": dict(sorted(all_before.items())),
        "chosen_before": dict(sorted(before.items())),
        "final_after": dict(sorted(after.items())),
    }


def _share(x: Any) -> str:
    return pct(x, missing="–")


def report_markdown(rep: dict[str, Any]) -> str:
    p = rep["pairs"]
    lines = [
        "# Translation review report",
        "",
        f"Pairs: {p['candidates']} translated, {p['reviewed']} reviewed, **{p['released']} released**, "
        f"{p['returned_to_review']} returned to review, {p.get('to_adjudicate', 0)} to adjudicate "
        f"(different corrections), {p['rejected']} rejected.",
        "",
        "## Engines",
        "",
        *_md_engines(rep),
        "",
        f"Reviewer choices of *none*: {rep['none_choices']}.",
        "",
        "## Edits",
        "",
        f"Edit rate: {_share(rep['edit_rate'])} of released pairs ({rep['edited_pairs']}).",
        "",
        *_md_edits(rep),
        "",
        "## Checker flags before and after review",
        "",
        *_md_flags(rep),
    ]
    if rep["returned_reasons"]:
        lines += ["", "## Returned to review", ""] + [f"- {k}: {n}" for k, n in rep["returned_reasons"].items()]
    return "\n".join(lines) + "\n"


def _md_engines(rep: dict[str, Any]) -> list[str]:
    header = [
        "engine",
        "candidates shown",
        "final wins",
        "final win rate",
        "reviewer choices",
        "choice rate",
        "flagged before review",
    ]
    rows = [
        [
            e,
            r["candidates_shown"],
            r["final_wins"],
            _share(r["final_win_rate"]),
            r["reviewer_choices"],
            _share(r["reviewer_choice_rate"]),
            _share(r["flag_rate_before"]),
        ]
        for e, r in rep["engines"].items()
    ]
    return [md_table(header, rows, align="lrrrrrr")]


def _md_edits(rep: dict[str, Any]) -> list[str]:
    ced = rep["char_edit_distance"]
    rows = []
    for k, label in (
        ("all_sentences", "all released sentences"),
        ("edited_sentences", "edited sentences"),
        ("edited_normalised", "edited, / longer length"),
    ):
        s = ced[k]
        # characters, and for the normalised row a share of the longer sentence
        f = _share if k == "edited_normalised" else (lambda x: num(x, 1, missing="–"))
        rows.append([label, s["n"], f(s["mean"]), f(s["median"]), f(s["max"])])
    header = ["character edit distance (chosen MT -> final)", "sentences", "mean", "median", "max"]
    return [md_table(header, rows, align="lrrrr")]


def _md_flags(rep: dict[str, Any]) -> list[str]:
    fl = rep["flags"]
    codes = sorted(set(fl["all_candidates_before"]) | set(fl["chosen_before"]) | set(fl["final_after"]))
    rows = [
        [c, fl["all_candidates_before"].get(c, 0), fl["chosen_before"].get(c, 0), fl["final_after"].get(c, 0)]
        for c in codes
    ]
    return [
        md_table(["flag", "all candidates", "chosen candidates (before)", "final pairs (after)"], rows, align="lrrr")
    ]
