"""What every reader shares: opening a file with clear errors, rows from JSONL or CSV, and turning a
pydantic validation error into the one-line :class:`~biaskit.errors.InputError` (file, row, fix)."""

from __future__ import annotations

import json
from collections.abc import Callable, Iterable, Iterator
from pathlib import Path
from typing import Any

from pydantic import ValidationError

from ..errors import InputError

JSONL_SUFFIXES = (".jsonl", ".ndjson")


def check_file(path: str | Path, fix: str = "check the --data path.") -> Path:
    """``path`` as a Path; a missing file or a folder is an :class:`InputError`."""
    path = Path(path)
    if not path.exists():
        raise InputError("file not found.", path=path, fix=fix)
    if path.is_dir():
        raise InputError("is a directory, expected a file.", path=path, fix="point at a .csv, .json or .jsonl file.")
    return path


def read_text(path: str | Path) -> str:
    """The file's text (UTF-8, a BOM dropped), or an :class:`InputError` naming the bad byte's line."""
    path = check_file(path)
    raw = path.read_bytes()
    try:
        return raw.decode("utf-8-sig")
    except UnicodeDecodeError as exc:
        line = raw[: exc.start].count(b"\n") + 1
        raise InputError(
            f"bad encoding: not valid UTF-8 ({exc.reason}) at byte {exc.start}, line {line}.",
            path=path,
            fix="re-save the file as UTF-8 (e.g. `iconv -f latin1 -t utf-8`).",
        ) from None


def read_head(path: str | Path, size: int = 1 << 16) -> str:
    """The start of a file as text (at least ``size`` bytes and its whole first line), without reading
    the rest; a bad byte in it raises :func:`read_text`'s error."""
    path = check_file(path)
    with open(path, "rb") as fh:
        raw = fh.readline()
        if len(raw) < size:
            raw += fh.read(size - len(raw))
        more = bool(fh.read(1))
    try:
        return raw.decode("utf-8-sig")
    except UnicodeDecodeError as exc:
        if more and exc.start >= len(raw) - 3 and exc.reason == "unexpected end of data":
            return raw[: exc.start].decode("utf-8-sig")  # a character cut at the end of the head
        line = raw[: exc.start].count(b"\n") + 1
        raise InputError(
            f"bad encoding: not valid UTF-8 ({exc.reason}) at byte {exc.start}, line {line}.",
            path=path,
            fix="re-save the file as UTF-8 (e.g. `iconv -f latin1 -t utf-8`).",
        ) from None


def first_record(path: str | Path) -> dict:
    """The first JSON object of a JSONL file ({} when it has none), read without loading the file;
    used to tell what a file holds before reading it."""
    path = Path(path)
    with open(path, "rb") as fh:
        for i, line in enumerate(fh, start=1):
            if i == 1:
                line = line.removeprefix(b"\xef\xbb\xbf")  # a UTF-8 BOM
            if line.strip():
                try:
                    obj = json.loads(line)
                except json.JSONDecodeError as exc:
                    raise InputError(
                        f"invalid JSON ({exc.msg}, column {exc.colno}).",
                        path=path,
                        row=i,
                        fix="each line must be one JSON object.",
                    ) from None
                if not isinstance(obj, dict):
                    raise InputError(
                        "expected a JSON object on this line.",
                        path=path,
                        row=i,
                        fix="each line must be one JSON object.",
                    )
                return obj
    return {}


class UniqueIds:
    """Ids a file gives explicitly must be unique: ``add(id, row)`` raises :class:`InputError` naming
    both rows when an id comes back (a file concatenated twice, a bad merge). Records without an
    explicit id are numbered by :class:`biaskit.ids.Numbering` instead and never come here.

    ``rescan``: a callable giving ``(row, id)`` of the file again from its start. With it only each
    id's hash is kept (a streaming reader of a file of a million records keeps a few tens of MB), and
    the first row of a repeated id is found by reading the file again; without it, every id's first
    row is kept."""

    def __init__(
        self,
        path,
        field: str,
        fix: str = "keep one of the two rows (or remove the id field to let biaskit number identical records).",
        rescan: Callable[[], Iterable[tuple[int | None, Any]]] | None = None,
    ):
        self.path, self.field, self.fix = path, field, fix
        self._rescan = rescan
        self._first: dict[str, int] = {}
        self._seen: set[int] = set()

    def add(self, value: Any, row: int | None) -> None:
        if value in (None, ""):
            return
        key = str(value)
        first: int | None
        if self._rescan is None:
            first = self._first.setdefault(key, row if row is not None else -1)
            if first == (row if row is not None else -1):
                return
        else:
            h = hash(key)
            if h not in self._seen:
                self._seen.add(h)
                return
            first = next((i for i, v in self._rescan() if v not in (None, "") and str(v) == key), None)
            if first is None or first == row:
                return  # another id with the same hash: not a repeat
        raise InputError(
            f"duplicate {self.field} '{key}' (first at row {first}).",
            path=self.path,
            row=row,
            column=self.field,
            fix=self.fix,
        )


def unknown_name(what: str, name: str, choices: Iterable[str], path=None) -> InputError:
    """``unknown <what> 'x'. Did you mean 'y'?`` listing the choices."""
    import difflib

    choices = list(choices)
    close = difflib.get_close_matches(name, choices, n=1)
    return InputError(
        f"unknown {what} '{name}'." + (f" Did you mean '{close[0]}'?" if close else ""),
        path=path,
        fix=f"use one of {', '.join(choices)}.",
    )


def iter_rows(path: str | Path, *, tolerate_truncated_tail: bool = False) -> Iterator[tuple[int, dict]]:
    """``(row, record)`` from JSONL (1-based line numbers) or CSV/TSV/Parquet (1-based data rows).

    Table cells that look like JSON objects or lists (``provenance``, ``candidates``) are decoded;
    empty cells are left out.
    """
    from ..io import iter_csv_chunks, iter_jsonl, read_table

    path = check_file(path)
    if path.suffix.lower() in JSONL_SUFFIXES:
        yield from iter_jsonl(path, tolerate_truncated_tail=tolerate_truncated_tail)
        return
    frames = iter_csv_chunks(path) if path.suffix.lower() in (".csv", ".tsv") else [read_table(path)]
    i = 0
    for df in frames:
        for rec in df.to_dict(orient="records"):
            i += 1
            yield i, _clean_cells(rec)


def _clean_cells(rec: dict) -> dict:
    """A table row: empty cells left out, cells that look like JSON objects or lists decoded."""
    clean = {}
    for k, v in rec.items():
        if v is None or (isinstance(v, float) and v != v):
            continue
        if isinstance(v, str) and v[:1] in "[{":
            try:
                v = json.loads(v)
            except json.JSONDecodeError:
                pass
        clean[k] = v
    return clean


def first_error(exc: ValidationError) -> tuple[str | None, str]:
    """(field path, message) of a validation error's first problem."""
    err = exc.errors()[0]
    loc = ".".join(str(x) for x in err.get("loc", ())) or None
    msg = err.get("msg", "invalid").removeprefix("Value error, ")
    if msg == "Field required":
        msg = "missing value"
    return loc, msg


def validation_error(path, row: int | None, exc: ValidationError, what: str, fix: str) -> InputError:
    """``<file>, row N, column 'c': not a valid <what>: <message>. Fix: <fix>``."""
    loc, msg = first_error(exc)
    return InputError(f"not a valid {what}: {msg}.", path=path, row=row, column=loc, fix=fix)
