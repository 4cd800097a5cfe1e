"""Readers for minimal-pair datasets with validation that names file, row and fix.

Formats:
- ``crows``: CrowS-Pairs CSV (``sent_more, sent_less, stereo_antistereo, bias_type`` [+ ``annotations``,
  ``anon_writer``, ``anon_annotators``]).
- ``indibias``: IndiBias CSV (``modified_eng_sent_more/less``, ``sent_more_hindi``/``sent_less_hindi``,
  ``bias_type`` (inconsistent casing, normalised here), ``stereo_antistereo``). English and Hindi
  columns are two *language views* of the same pairs: both share ``source_id``. The ``*_more*``
  columns hold the paper's S1 and ``*_less*`` its S2 in both directions; antistereo rows are read
  with ``sent_more = S2, sent_less = S1`` (CrowS-Pairs' convention, see :func:`indibias_columns`),
  recorded in ``provenance.columns`` and ``provenance.s1``.
- ``biaskit``: JSONL or CSV with the shared schema's columns (:class:`~biaskit.schema.SentencePair`).
  A release's ``pairs.jsonl`` (:class:`~biaskit.schema.ReleasePair`, one record per pair with its
  language ``views``) reads as one SentencePair per view.

Row numbers are 1-based data rows for CSV (the header is not counted; line = row + 1 when no cell
spans lines) and 1-based line numbers for JSONL.
"""

from __future__ import annotations

import csv
import json
from collections.abc import Iterable, Iterator
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any

from pydantic import ValidationError

from ..clitools import offer
from ..errors import InputError
from ..ids import Numbering
from ..schema import SentencePair, normalize_direction
from ._common import UniqueIds, check_file, unknown_name

FORMATS = ("auto", "crows", "indibias", "biaskit")

CROWS_REQUIRED = ["sent_more", "sent_less", "stereo_antistereo", "bias_type"]
INDIBIAS_REQUIRED = [
    "modified_eng_sent_more",
    "modified_eng_sent_less",
    "sent_more_hindi",
    "sent_less_hindi",
    "bias_type",
    "stereo_antistereo",
]
BIASKIT_REQUIRED = ["sent_more", "sent_less", "direction", "bias_type"]


@dataclass
class ReadResult:
    """What a reader returns: the valid records (``pairs`` for pair files) and the invalid rows it
    skipped (only with ``skip_invalid``; otherwise the first invalid row raises)."""

    records: list
    skipped: list[InputError] = field(default_factory=list)
    format: str = "biaskit"
    path: str | None = None

    @property
    def pairs(self) -> list[SentencePair]:
        return self.records

    def __iter__(self):
        return iter(self.records)

    def __len__(self) -> int:
        return len(self.records)


def _csv_rows(path: Path) -> tuple[list[str], Iterator[tuple[int, dict]]]:
    """The header and a row iterator of a CSV file, read as it goes (one row in memory at a time)."""
    from ..textcheck import check_record

    path = check_file(path)
    fh = open(path, "rb")

    def lines():  # decoded line by line, so that a bad byte is named with its line
        for n, raw in enumerate(fh, start=1):
            if n == 1 and raw.startswith(b"\xef\xbb\xbf"):
                raw = raw[3:]
            try:
                yield raw.decode("utf-8")
            except UnicodeDecodeError as exc:
                raise _decode_error(path, exc, n) from None

    reader = csv.DictReader(lines())
    try:
        header = [h.strip() if h else "" for h in (reader.fieldnames or [])]
    except (csv.Error, InputError) as exc:
        fh.close()
        if isinstance(exc, InputError):
            raise
        raise _csv_error(path, reader, exc) from None
    reader.fieldnames = header
    check_record({"header": " ".join(header)}, path, None)

    def gen():
        i = 0
        with fh:
            while True:
                try:
                    row = next(reader)
                except StopIteration:
                    return
                except csv.Error as exc:
                    raise _csv_error(path, reader, exc, i + 1) from None
                i += 1
                if None in row:
                    raise InputError(
                        f"row has {len(header) + len(row[None])} cells but the header has {len(header)}.",
                        path=path,
                        row=i,
                        fix="quote cells that contain commas.",
                    )
                check_record(row, path, i)
                yield i, row

    return header, gen()


def _decode_error(path: Path, exc: UnicodeDecodeError, line: int) -> InputError:
    return InputError(
        f"bad encoding: not valid UTF-8 ({exc.reason}) at byte {exc.start} of line {line}.",
        path=path,
        fix="re-save the file as UTF-8 (e.g. `iconv -f latin1 -t utf-8`).",
    )


def _csv_error(path: Path, reader, exc: Exception, row: int | None = None) -> InputError:
    from ..textcheck import LENGTH_FIX

    if "field larger than field limit" in str(exc):
        return InputError(
            f"a cell longer than the limit ends on line {reader.line_num}.", path=path, row=row, fix=LENGTH_FIX
        )
    return InputError(
        f"malformed CSV on line {reader.line_num} ({exc}).", path=path, row=row, fix="check the quoting on that line."
    )


def detect_format(path: str | Path, columns: list[str] | None = None) -> str:
    path = Path(path)
    if path.suffix.lower() in (".jsonl", ".ndjson", ".json"):
        return "biaskit"
    if columns is None:
        header, rows = _csv_rows(path)
        for _ in rows:  # the header is all that is needed: close the file
            break
        columns = header
    cols = set(columns)
    if {"modified_eng_sent_more", "sent_more_hindi"} & cols:
        return "indibias"
    if "direction" in cols:
        return "biaskit"
    if "stereo_antistereo" in cols:
        return "crows"
    raise InputError(
        f"cannot tell the format from the columns {sorted(cols)}.",
        path=path,
        fix=offer("format", "pass --format crows|indibias|biaskit, or ") + "add the columns sent_more, sent_less, "
        "direction, bias_type.",
    )


def indibias_view_columns() -> dict[str, tuple[str, str]]:
    """IndiBias' columns per language view, in the file's order: S1 (``*_more*``), S2 (``*_less*``)
    (``data/languages/<code>/language.json``: ``indibias_columns``; the source language first)."""
    from biaskit import languages as L

    out: dict[str, tuple[str, str]] = {}
    for code in L.indibias_languages():
        cols = L.language(code).info.indibias_columns
        if cols is not None:
            out[code] = (cols[0], cols[1])
    return out


def indibias_columns(lang: str, direction: Any) -> tuple[str, str]:
    """The IndiBias columns that hold ``(sent_more, sent_less)`` of a row with this direction.

    IndiBias' CSV is positional: its ``*_more*`` column is the paper's S1 and ``*_less*`` its S2, in
    both directions, and the paper counts a stereo pair when score(S1) > score(S2) but an antistereo
    pair when score(S2) > score(S1) (Sahoo et al., 2024, §6.1.1 and Eq. 4; Figure 9: "For pair with
    antistereo label, sentence S2 represents a commonly held stereotype and S1 is a less stereotyping
    sentence"). biaskit follows CrowS-Pairs, where ``sent_more`` is always the more stereotypical
    sentence, so an antistereo row reads as ``sent_more = S2, sent_less = S1``; a stereo row (or a
    direction validation will reject) as ``sent_more = S1, sent_less = S2``. The writers of the
    IndiBias layout (``biaskit.release.export``) use the same function to swap back.
    """
    s1, s2 = indibias_view_columns()[lang]
    return (s2, s1) if normalize_direction(direction) == "antistereo" else (s1, s2)


def _require(path: Path, columns: list[str], required: list[str], fmt: str) -> None:
    missing = [c for c in required if c not in columns]
    if missing:
        raise InputError(
            f"missing column(s) {', '.join(missing)} for format '{fmt}' (found: {', '.join(columns) or 'none'}).",
            path=path,
            row=None,
            fix=f"a {fmt} file needs the columns {', '.join(required)}; "
            + offer("format", "or pass the right --format.", "or fix the header."),
        )


def iter_pair_rows(path: str | Path, format: str = "auto", lang: str | None = None) -> Iterator[tuple[int, dict]]:
    """Yield ``(row, fields)`` in the shared schema's field names *without* validating them.

    Used by :func:`read_pairs` and by tools (like the minimal-pair checker) that must see invalid
    pairs too. For IndiBias with ``lang=None`` each row yields its English then its Hindi view.
    A ``pair_id`` the file gives must be unique (pairs without one are numbered by the reader).
    """
    given = UniqueIds(
        path, "pair_id", rescan=lambda: ((i, r.get("pair_id")) for i, r in _pair_rows(path, format, lang))
    )
    for row, rec in _pair_rows(path, format, lang):
        given.add(rec.get("pair_id"), row)
        yield row, rec


def _pair_rows(path: str | Path, format: str, lang: str | None) -> Iterator[tuple[int, dict]]:
    """``(row, record dict)`` of each pair of the file in ``format`` (``auto``: detected), the views of
    language ``lang`` (None: every view of a file that has several)."""
    path = Path(path)
    if format not in FORMATS:
        raise unknown_name("format", format, FORMATS, path)
    if format == "auto":
        format = detect_format(path)
    if format == "biaskit" and path.suffix.lower() in (".jsonl", ".ndjson"):
        yield from _jsonl_rows(path, lang)
        return
    header, rows = _csv_rows(path)
    if format == "crows":
        _require(path, header, CROWS_REQUIRED, "crows")
        yield from _crows_rows(path, rows, lang)
    elif format == "indibias":
        _require(path, header, INDIBIAS_REQUIRED, "indibias")
        yield from _indibias_rows(path, rows, lang)
    elif format == "biaskit":
        _require(path, header, BIASKIT_REQUIRED, "biaskit")
        yield from _biaskit_csv_rows(path, rows, lang)


def _jsonl_rows(path: Path, lang: str | None) -> Iterator[tuple[int, dict]]:
    """biaskit JSONL: a record per line, or a released record (``views``): one row per language view."""
    from ..io import iter_jsonl

    first = True
    for i, obj in iter_jsonl(path):
        if "views" in obj:  # a released record (biaskit release pairs.jsonl): one row per language view
            from ..schema import release_views

            for rec in release_views(obj):
                if lang is None or rec["lang"] == lang:
                    yield i, rec
            continue
        if first:
            _require(path, list(obj), BIASKIT_REQUIRED, "biaskit")
            first = False
        rec = dict(obj)
        rec.setdefault("provenance", {})
        rec["provenance"] = {**rec["provenance"]} if isinstance(rec["provenance"], dict) else {}
        if lang and "lang" not in obj:
            rec["lang"] = lang
        yield i, rec


def _crows_rows(path: Path, rows: Iterable[tuple[int, dict]], lang: str | None) -> Iterator[tuple[int, dict]]:
    """CrowS-Pairs' CSV: its columns as a record's fields, its row index as the source id."""
    for i, row in rows:
        idx = row.get("") or row.get("Unnamed: 0") or str(i - 1)
        meta = {k: row[k] for k in ("annotations", "anon_writer", "anon_annotators") if k in row}
        yield (
            i,
            {
                "sent_more": row["sent_more"],
                "sent_less": row["sent_less"],
                "direction": row["stereo_antistereo"],
                "bias_type": row["bias_type"],
                "lang": lang or "en",
                "source_id": f"crows-{idx}",
                "provenance": {"source": "crows-pairs", "file": path.name, "row": i},
                "meta": meta,
            },
        )


def _indibias_rows(path: Path, rows: Iterable[tuple[int, dict]], lang: str | None) -> Iterator[tuple[int, dict]]:
    """IndiBias' CSV: one record per row and language view (``lang``, or every view it has), its two
    sentence columns ordered by the row's direction."""
    have = list(indibias_view_columns())
    views = [lang] if lang else have
    for v in views:
        if v not in have:
            from biaskit import languages as L
            from biaskit.options import say

            raise InputError(
                f"IndiBias has {' and '.join(L.name_of(c) for c in have)} columns, not '{v}'.",
                path=path,
                fix=f"use {' or '.join(say('lang', c) for c in have)} (or omit it for both).",
            )
    for i, row in rows:
        idx = row.get("index") or row.get("") or str(i - 1)
        s1_is_less = normalize_direction(row["stereo_antistereo"]) == "antistereo"
        for v in views:
            more, less = indibias_columns(v, row["stereo_antistereo"])
            yield (
                i,
                {
                    "sent_more": row[more],
                    "sent_less": row[less],
                    "direction": row["stereo_antistereo"],
                    "bias_type": row["bias_type"],
                    "lang": v,
                    "source_id": f"indibias-{idx}",
                    "provenance": {
                        "source": "indibias",
                        "file": path.name,
                        "row": i,
                        "columns": [more, less],
                        "s1": "sent_less" if s1_is_less else "sent_more",
                    },
                    "meta": {},
                },
            )


def _biaskit_csv_rows(path: Path, rows: Iterable[tuple[int, dict]], lang: str | None) -> Iterator[tuple[int, dict]]:
    """biaskit's CSV: the record's fields as columns, ``provenance`` and ``meta`` as JSON text."""
    for i, row in rows:
        rec = {k: v for k, v in row.items() if k and v not in (None, "")}
        for k in ("provenance", "meta"):
            if k in rec and isinstance(rec[k], str):
                try:
                    rec[k] = json.loads(rec[k])
                except json.JSONDecodeError:
                    raise InputError(
                        f"column '{k}' is not valid JSON.",
                        path=path,
                        row=i,
                        column=k,
                        fix="write it as a JSON object or leave it empty.",
                    ) from None
        rec.setdefault("provenance", {})
        if lang and "lang" not in rec:
            rec["lang"] = lang
        yield i, rec


_FIXES = {
    "sent_more": "write the sentence about the more-stereotyped group in sent_more.",
    "sent_less": "write the contrasting sentence in sent_less.",
    "direction": "use 'stereo' or 'antistereo' (CrowS-Pairs: stereo_antistereo).",
    "bias_type": "give a bias type such as gender, religion, caste, age.",
}


def _validation_error(path: Path, row: int, exc: ValidationError) -> InputError:
    err = exc.errors()[0]
    loc = ".".join(str(x) for x in err.get("loc", ())) or None
    msg = err.get("msg", "invalid").removeprefix("Value error, ")
    if loc == "direction":
        msg = f"unknown direction {err.get('input')!r}"
    if loc in (None, "") and "identical" in msg:
        return InputError(
            "identical pair: sent_more and sent_less are the same sentence.",
            path=path,
            row=row,
            fix="make the two sentences differ in the group term, or drop the row"
            + offer("skip_invalid", " (or pass --skip-invalid to skip such rows)")
            + ".",
        )
    if msg == "Field required":
        msg = "missing value"
    return InputError(
        f"{msg}.",
        path=path,
        row=row,
        column=loc,
        fix=_FIXES.get(
            loc or "", "correct the value" + offer("skip_invalid", " or pass --skip-invalid to skip such rows") + "."
        ),
    )


def read_pairs(
    path: str | Path,
    format: str = "auto",
    lang: str | None = None,
    *,
    skip_invalid: bool = False,
    limit: int | None = None,
) -> ReadResult:
    """Read and validate minimal pairs. Invalid rows raise :class:`InputError` unless
    ``skip_invalid``, in which case they are collected in ``ReadResult.skipped``.

    Pairs with the same content get distinct ids (``<id>~2``, ...) and ``meta['duplicate_of']``.
    """
    path = Path(path)
    fmt = detect_format(path) if format == "auto" else format
    pairs: list[SentencePair] = []
    skipped: list[InputError] = []
    for _, pair in iter_valid_pairs(path, fmt, lang, skipped=skipped if skip_invalid else None):
        pairs.append(pair)
        if limit is not None and len(pairs) >= limit:
            break
    return ReadResult(pairs, skipped, format=fmt, path=str(path))


def iter_valid_pairs(
    path: str | Path, format: str = "auto", lang: str | None = None, *, skipped: list[InputError] | None = None
) -> Iterator[tuple[int, SentencePair]]:
    """``(row, SentencePair)`` validated one at a time as the file is read (:func:`read_pairs` without
    the list). An invalid row raises, or, when ``skipped`` is a list, is appended to it and skipped."""
    path = Path(path)
    fmt = detect_format(path) if format == "auto" else format
    number = Numbering()
    for row, rec in iter_pair_rows(path, fmt, lang):
        try:
            pair = SentencePair.model_validate(rec)
        except ValidationError as exc:
            err = _validation_error(path, row, exc)
            if skipped is None:
                raise err from None
            skipped.append(err)
            continue
        numbered = number(pair.pair_id)
        if numbered != pair.pair_id:
            pair.meta["duplicate_of"] = pair.pair_id
            pair.pair_id = numbered
        yield row, pair


def write_pairs(path: str | Path, pairs) -> Path:
    """Write pairs as biaskit JSONL or CSV (by extension), atomically."""
    from ..io import write_jsonl, write_table
    from ..schema import pairs_to_frame

    path = Path(path)
    if path.suffix.lower() in (".jsonl", ".ndjson"):
        return write_jsonl(path, pairs)
    df = pairs_to_frame(list(pairs))
    for col in ("provenance", "meta"):
        if col in df:
            df[col] = df[col].map(lambda d: json.dumps(d, ensure_ascii=False))
    return write_table(path, df)
