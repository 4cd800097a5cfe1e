"""Readers for the records curation writes and annotation reviews: tuples, generated sentences and
translation candidates. JSONL (line numbers) or a table (CSV, TSV, Parquet: data rows; cells holding
JSON objects or lists are decoded). Invalid rows raise a one-line :class:`~biaskit.errors.InputError`
(file, row, column, fix), or, with ``skip_invalid``, are collected in ``ReadResult.skipped``.
"""

from __future__ import annotations

from collections.abc import Sequence
from pathlib import Path

from pydantic import ValidationError

from ..errors import InputError
from ..schema import BiasTuple, Sentence, TranslationCandidates
from ._common import UniqueIds, iter_rows, validation_error
from .pairs import ReadResult

TUPLE_FIX = (
    "a tuple needs identity, attribute, axis and polarity (positive/negative): the output of `biaskit curate tuples`."
)
SENTENCE_FIX = "pass the output of `biaskit curate sentences` (fields sentence, identity, axis, polarity)."
CANDIDATES_FIX = "pass the output of `biaskit curate translate` (pair_id, source, candidates, target_lang)."


def read_tuples(
    path: str | Path,
    *,
    statuses: Sequence[str] | None = None,
    skip_invalid: bool = False,
    tolerate_truncated_tail: bool = False,
) -> ReadResult:
    """:class:`~biaskit.schema.BiasTuple` records; ``statuses`` keeps only those statuses."""
    out, skipped = [], []
    given = UniqueIds(path, "tuple_id", rescan=lambda: ((i, r.get("tuple_id")) for i, r in iter_rows(path)))
    for i, rec in iter_rows(path, tolerate_truncated_tail=tolerate_truncated_tail):
        given.add(rec.get("tuple_id"), i)
        try:
            t = BiasTuple.model_validate({k: v for k, v in rec.items() if k in BiasTuple.model_fields})
        except ValidationError as exc:
            err = validation_error(path, i, exc, "tuple", TUPLE_FIX)
            if not skip_invalid:
                raise err from None
            skipped.append(err)
            continue
        if statuses is None or t.status in statuses:
            out.append(t)
    return ReadResult(out, skipped, format="tuples", path=str(path))


def read_sentence_rows(path: str | Path) -> list[tuple[int, dict]]:
    """``(row, fields)`` of generated sentences, unvalidated beyond the fields every row needs
    (``sentence``, ``identity``): pair building reports bad rows itself, row by row."""
    rows = list(iter_rows(path))  # a truncated last line is an error: the input is incomplete
    given = UniqueIds(path, "sentence_id")
    for i, r in rows:
        given.add(r.get("sentence_id"), i)
        for k in ("sentence", "identity"):
            if k not in r:
                raise InputError(f"missing field '{k}'.", path=path, row=i, fix=SENTENCE_FIX)
    return rows


def read_sentences(path: str | Path, *, skip_invalid: bool = False) -> ReadResult:
    """Generated sentences as :class:`~biaskit.schema.Sentence` records."""
    out, skipped = [], []
    for i, rec in read_sentence_rows(path):
        try:
            out.append(Sentence.model_validate(rec))
        except ValidationError as exc:
            err = validation_error(path, i, exc, "sentence", SENTENCE_FIX)
            if not skip_invalid:
                raise err from None
            skipped.append(err)
    return ReadResult(out, skipped, format="sentences", path=str(path))


def read_candidates(path: str | Path, *, skip_invalid: bool = False, max_candidates: int | None = None) -> ReadResult:
    """Translation candidates (:class:`~biaskit.schema.TranslationCandidates`), one pair per row.

    ``max_candidates``: the most candidates a record may have (the review shows one slot letter each).
    """
    out, skipped = [], []
    given = UniqueIds(
        path,
        "pair_id",
        fix="each pair is translated once: keep one of the two records.",
        rescan=lambda: ((i, r.get("pair_id")) for i, r in iter_rows(path)),
    )
    for i, rec in iter_rows(path):
        given.add(rec.get("pair_id"), i)
        try:
            out.append(_candidates(path, i, rec, max_candidates))
        except InputError as err:
            if not skip_invalid:
                raise
            skipped.append(err)
    return ReadResult(out, skipped, format="candidates", path=str(path))


def read_cat_candidates(
    path: str | Path, *, skip_invalid: bool = False, max_candidates: int | None = None
) -> ReadResult:
    """CAT translation candidates (:class:`~biaskit.schema.CATTranslationCandidates`), one CAT per row."""
    from ..schema import CATTranslationCandidates

    fix = "use the output of `biaskit curate cat-translate`."
    out, skipped = [], []
    given = UniqueIds(path, "cat_id", fix="each CAT is translated once: keep one of the two records.")
    for i, rec in iter_rows(path):
        given.add(rec.get("cat_id"), i)
        try:
            missing = [k for k in ("cat_id", "source", "candidates", "target_lang", "split") if k not in rec]
            if missing:
                raise InputError(
                    f"missing key(s) {', '.join(repr(k) for k in missing)}: not a CAT-candidates record.",
                    path=path,
                    row=i,
                    fix=fix,
                )
            _check_candidate_list(path, i, rec["candidates"], max_candidates, "CAT")
            try:
                out.append(CATTranslationCandidates.model_validate({**rec, "cat_id": str(rec["cat_id"])}))
            except ValidationError as exc:
                raise validation_error(path, i, exc, "CAT-candidates record", fix) from None
        except InputError as err:
            if not skip_invalid:
                raise
            skipped.append(err)
    return ReadResult(out, skipped, format="cat_candidates", path=str(path))


def _check_candidate_list(path, row: int, cands, max_candidates: int | None, what: str) -> None:
    if not isinstance(cands, list) or not cands:
        raise InputError(
            "no candidate translations.",
            path=path,
            row=row,
            column="candidates",
            fix=f"translate the {what} with at least one engine first.",
        )
    if max_candidates is not None and len(cands) > max_candidates:
        raise InputError(
            f"{len(cands)} candidates; at most {max_candidates} can be shown.",
            path=path,
            row=row,
            column="candidates",
            fix="use fewer engines.",
        )


def _candidates(path, row: int, rec: dict, max_candidates: int | None) -> TranslationCandidates:
    missing = [k for k in ("pair_id", "source", "candidates", "target_lang") if k not in rec]
    if missing:
        raise InputError(
            f"missing key(s) {', '.join(repr(k) for k in missing)}: not a translation-candidates record.",
            path=path,
            row=row,
            fix=CANDIDATES_FIX,
        )
    src = rec["source"]
    if not isinstance(src, dict) or not src.get("sent_more") or not src.get("sent_less"):
        raise InputError(
            "source must have sent_more and sent_less.",
            path=path,
            row=row,
            column="source",
            fix='write "source": {"sent_more": ..., "sent_less": ...}.',
        )
    cands = rec["candidates"]
    _check_candidate_list(path, row, cands, max_candidates, "pair")
    for j, c in enumerate(cands):
        if not isinstance(c, dict) or "sent_more" not in c or "sent_less" not in c or not c.get("engine"):
            raise InputError(
                f"candidate {j + 1} needs engine, sent_more and sent_less.",
                path=path,
                row=row,
                column="candidates",
                fix="use the output of `biaskit curate translate`.",
            )
    try:
        return TranslationCandidates.model_validate({**rec, "pair_id": str(rec["pair_id"])})
    except ValidationError as exc:
        raise validation_error(path, row, exc, "translation-candidates record", CANDIDATES_FIX) from None
