"""What a text value read from a file may hold: no control characters, no absurd length.

Every reader checks the values it reads with these functions, so a NUL byte pasted into a cell, an
escape sequence, or a 50 MB "sentence" (the rest of a file swallowed by an unclosed quote) stops the
read with one line naming the file, the row and the column, instead of reaching a model, an
annotator or a release:

- :func:`check_record` walks a record (a JSONL object or a CSV row);
- :func:`check_frame` does the same for a whole DataFrame at once (``read_table``);
- :func:`suspect_json_line` tells, from a JSON line's text, whether its values need the walk (only a
  ``\\u00xx``/``\\b``/``\\f`` escape can put a control character into valid JSON), so large files
  are checked at almost no cost.

Control characters are C0 codes other than tab, newline and carriage return. The length limit is
:data:`MAX_TEXT` characters per value, the same as the CSV cell limit (``csv.field_size_limit``).
"""

from __future__ import annotations

import csv
import re
from pathlib import Path
from typing import Any

from .errors import InputError

MAX_TEXT = 1_000_000
CONTROL_CHARS = re.compile("[\x00-\x08\x0b\x0c\x0e-\x1f]")
_SUSPECT = re.compile(r"\\(u00[01][0-9a-fA-F]|[bf])")
_NAMES = {
    "\x00": "NUL",
    "\x1b": "ESC",
    "\x0b": "vertical tab",
    "\x0c": "form feed",
    "\x08": "backspace",
    "\x07": "bell",
    "\x1a": "SUB (Ctrl-Z)",
}
CONTROL_FIX = "remove it (a copy/paste accident, or a binary file?); tab and newline are fine."
LENGTH_FIX = (
    "check the quotes around it (an unclosed quote swallows the rest of a file); biaskit reads values of "
    f"up to {MAX_TEXT:,} characters."
)

csv.field_size_limit(MAX_TEXT)


def control_char_name(ch: str) -> str:
    return f"U+{ord(ch):04X}" + (f" ({_NAMES[ch]})" if ch in _NAMES else "")


def bad_text(value: str) -> str | None:
    """Why ``value`` cannot be read as text, or None."""
    if len(value) > MAX_TEXT:
        return f"a value of {len(value):,} characters (the limit is {MAX_TEXT:,})"
    m = CONTROL_CHARS.search(value)
    if m:
        return f"a control character {control_char_name(m.group())}"
    return None


def _walk(obj: Any, where: str = ""):
    if isinstance(obj, str):
        yield where, obj
    elif isinstance(obj, dict):
        for k, v in obj.items():
            yield from _walk(v, f"{where}.{k}" if where else str(k))
    elif isinstance(obj, (list, tuple)):
        for i, v in enumerate(obj):
            yield from _walk(v, f"{where}[{i}]")


def check_record(obj: Any, path: str | Path | None, row: int | None) -> None:
    """Raise :class:`InputError` (file, row, column) at the first value :func:`bad_text` refuses."""
    for where, value in _walk(obj):
        why = bad_text(value)
        if why:
            raise InputError(
                f"{why} in the text.",
                path=path,
                row=row,
                column=where or None,
                fix=LENGTH_FIX if why.startswith("a value of") else CONTROL_FIX,
            )


def suspect_json_line(line: str) -> bool:
    """True when a JSON line may decode to a refused value (an escape of a control character, or a
    line longer than :data:`MAX_TEXT`): only then does its object need :func:`check_record`."""
    return len(line) > MAX_TEXT or _SUSPECT.search(line) is not None


def check_frame(df, path: str | Path | None, offset: int = 0) -> None:
    """:func:`check_record` for every text cell of a DataFrame, vectorised (rows are 1-based data rows;
    ``offset``: data rows of the file before this frame, for a file read in chunks)."""
    for col in df.columns:
        s = df[col]
        if s.dtype != object:
            continue
        text = s[s.map(lambda v: isinstance(v, str))]
        if text.empty:
            continue
        bad = text.str.len() > MAX_TEXT
        bad |= text.str.contains(CONTROL_CHARS, regex=True)
        if bad.any():
            pos = df.index.get_loc(bad[bad].index[0])
            check_record({str(col): text[bad].iloc[0]}, path, offset + int(pos) + 1)
    for col in df.columns:  # the header is text too
        if isinstance(col, str) and bad_text(col):
            check_record({"header": col}, path, None)
