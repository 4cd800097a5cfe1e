"""``release verify``'s privacy scan: no person, no path of the building machine, no secret.

Every file of a release is read as a stream (a text file line by line or CSV row by row, a Parquet
file row group by row group) and each value is checked for

- an **e-mail address** (:data:`biaskit.public.EMAIL`; an annotator's Label Studio login). The
  addresses the maintainers wrote into the card themselves (``release.json`` ``public_addresses``:
  from ``--card-text`` and ``--citation``) are allowed in the card, ``croissant.json`` and
  ``release.json``, nowhere else;
- an **absolute path** (:data:`biaskit.public.POSIX_PATH`, :data:`~biaskit.public.WINDOWS_PATH`), and
  the home folder of the user running the check;
- the **user name** of the user running the check (as a word; not a generic account such as
  ``root``: :data:`GENERIC_USERS`);
- a **secret**: a value :func:`biaskit.redact.known_secrets` knows (``*_API_KEY``/``*_TOKEN``
  variables, ``--token`` values) or one :func:`biaskit.redact.redact` would mask (an ``sk-`` key, an
  ``Authorization`` header, a URL's password).

A line is parsed only when a cheap test on its raw text says it may hold one of these, so a clean
release is scanned at the speed of reading it. Each finding is one line naming the file, the row
(JSONL: the line; CSV and Parquet: the data row, header excluded; JSON and Markdown: the line) and
the field (a JSONL record's path, ``options[0].human_labels[1].annotator``; a CSV or Parquet
column; the key a JSON line is under), never the secret itself.
"""

from __future__ import annotations

import csv
import getpass
import json
import re
from collections.abc import Iterator
from dataclasses import dataclass
from pathlib import Path
from typing import Any

from ..errors import InputError
from ..public import EMAIL, POSIX_PATH, WINDOWS_PATH

MAX_FINDINGS = 20  # per file: the first ones, then a count
GENERIC_USERS = frozenset(
    ("root", "user", "admin", "ubuntu", "runner", "jovyan", "nobody", "guest", "vagrant", "ec2-user", "codespace")
)
# a release's own files that hold the maintainers' text (where their contact addresses may appear)
CARD_FILES = frozenset(("README.md", "croissant.json", "release.json"))
BINARY_SUFFIXES = frozenset((".png", ".jpg", ".jpeg", ".gif", ".pdf", ".svg", ".zip", ".gz"))
FIX = (
    "rebuild the release with `biaskit release build` (it pseudonymises annotators and writes paths relative "
    "to the project); if the value is in the records' text, correct the record and rebuild."
)


@dataclass
class Finding:
    file: Path
    row: int | None
    field: str | None
    what: str
    column: bool = False  # the field is a table column (CSV, Parquet): named as the column

    def message(self) -> str:
        where = "" if self.column or not self.field else f"field '{self.field}': "
        return str(
            InputError(
                f"{where}{self.what}.",
                path=self.file,
                row=self.row,
                column=self.field if self.column else None,
                fix=FIX,
            )
        )


class Detector:
    """What the scan looks for, built once per scan (the secrets and the user of this process)."""

    def __init__(self, allowed_addresses: set[str] | None = None):
        from ..redact import known_secrets

        self.secrets = [s for s in known_secrets() if s]
        try:
            user = getpass.getuser()
        except Exception:  # no user name (a container without passwd entry)
            user = ""
        self.user = user if len(user) >= 3 and user.lower() not in GENERIC_USERS else ""
        self.home = str(Path.home()).rstrip("/")
        self.user_re = re.compile(r"(?<![\w.-])" + re.escape(self.user) + r"(?![\w-])") if self.user else None
        self.home_re = re.compile(re.escape(self.home) + r"(?![\w.-])") if len(self.home) > 1 else None
        self.allowed = {a.lower() for a in allowed_addresses or ()}
        literals = [re.escape(s) for s in self.secrets] + ([re.escape(self.user)] if self.user else [])
        self.literals = self.secrets + ([self.user] if self.user else [])
        self.quick = re.compile("|".join([*_QUICK, *literals]))
        self.literal_bytes = [x.encode("utf-8") for x in self.literals]
        # the same for Arrow's RE2 kernel (no lookbehind: the character before the slash is matched)
        self.quick_re2 = "|".join([*_QUICK_RE2, *literals])

    def maybe(self, text: str) -> bool:
        return bool(self.quick.search(text))

    def maybe_bytes(self, block: bytes) -> bool:
        """:meth:`maybe` for a block of raw bytes, at the speed of reading it: substring searches and
        regexes that start with a literal (Python's ``re`` runs an alternation of character classes
        at every position, 40 times slower on a large block). A credential written as a bare ``token
        <value>`` without an ``Authorization`` header is found in a row flagged for another reason
        only; a configured secret is searched for literally."""
        if b"@" in block and _EMAIL_B.search(block):
            return True
        if b"/" in block and (_PATH_B.search(block) or block.startswith(b"/")):
            return True
        if b":" in block and _DRIVE_B.search(block):
            return True
        if b"\\\\" in block or b"sk-" in block or b"hf_" in block:
            return True
        if b"uthorization" in block or b"UTHORIZATION" in block or b"://" in block and _URL_PW_B.search(block):
            return True
        return any(x in block for x in self.literal_bytes)

    def check(self, value: str, card: bool = False) -> list[str]:
        """What ``value`` holds that a release must not (empty when nothing)."""
        if not value or not self.quick.search(value):
            return []
        out = []
        for m in EMAIL.finditer(value):
            if not (card and m.group(0).lower() in self.allowed):
                out.append(f"an e-mail address ({_hint(m.group(0))})")
                break
        hit = POSIX_PATH.search(value) or WINDOWS_PATH.search(value)
        if hit:
            out.append(f"an absolute path ({hit.group(0)[:60]})")
        elif self.home_re is not None and self.home_re.search(value):
            out.append(f"the home folder of this machine's user ({self.home})")
        if self.user_re is not None and self.user_re.search(value):
            out.append(f"the user name of this machine ({self.user})")
        for s in self.secrets:
            if s in value:
                out.append("a secret (the value of a configured key or token)")
                break
        else:
            from ..redact import redact

            if re.search(r"sk-|hf_|(?i:bearer|authorization|token)|://", value) and redact(value) != value:
                out.append("a secret (a key, token or password as biaskit.redact recognises them)")
        return out


# a cheap test of raw text (a JSONL line, a block of a file) for what :meth:`Detector.check` may find: the
# shapes of an e-mail address (@host.), a path's first slash at the start of a token (not a URL's //), a
# Windows drive or UNC path (also JSON-escaped), and the words of credentials
_QUICK = (
    r"@[A-Za-z0-9-]+\.",
    r"(?<![^\s'\"`(\[{<=,;|])/[^\s/'\"]",
    r"\b[A-Za-z]:[\\/]",
    r"\\\\",
    r"sk-",
    r"hf_",
    r"(?i:bearer|authorization|token)",
    r"://[^\s/@]*:[^\s/@]+@",
)
# the same for Arrow's RE2 kernel: no lookbehind (the character before the slash is matched), and RE2's \s is
# ASCII only, so the other characters Python's \s matches are named (\v, \x1c-\x1f, \x85, Unicode spaces \pZ)
_QUICK_RE2 = (_QUICK[0], r"(?:^|[\s\v\x{1c}-\x{1f}\x{85}\pZ'\"`(\[{<=,;|])/[^\s/'\"]", *_QUICK[2:])
_EMAIL_B = re.compile(rb"@[A-Za-z0-9-]+\.")
# (also after a JSON escape, "\t/home/a", and after a non-ASCII byte: a space such as U+00A0 in UTF-8)
_PATH_B = re.compile(rb"/(?:(?<=[\s'\"`(\[{<=,;|\x80-\xff]/)|(?<=\\[nrtfb]/)|(?<=\\u[0-9a-fA-F]{4}/))[^\s/'\"]")
_DRIVE_B = re.compile(rb":(?:\\|/(?!/))")
_URL_PW_B = re.compile(rb"://[^\s/@]*:[^\s/@]+@")
_BLOCK = 8 << 20


def _hint(address: str) -> str:
    """An address as a finding shows it: enough to find it, not the whole of it."""
    local, _, domain = address.partition("@")
    return f"{local[:2]}…@{domain}"


def scan_release(folder: str | Path, *, allowed_addresses: set[str] | None = None) -> list[str]:
    """One line per finding in the release ``folder`` (see the module docstring); [] when it is clean.
    ``allowed_addresses``: default, ``release.json``'s ``public_addresses``."""
    folder = Path(folder)
    if allowed_addresses is None:
        allowed_addresses = _public_addresses(folder)
    det = Detector(allowed_addresses)
    problems: list[str] = []
    for f in sorted(p for p in folder.rglob("*") if p.is_file()):
        rel = f.relative_to(folder).as_posix()
        findings = 0
        for fd in scan_file(f, det, card=rel in CARD_FILES):
            findings += 1
            if findings <= MAX_FINDINGS:
                problems.append(fd.message())
        if findings > MAX_FINDINGS:
            problems.append(
                str(InputError(f"{findings - MAX_FINDINGS} more values a release must not hold.", path=f, fix=FIX))
            )
    return problems


def _public_addresses(folder: Path) -> set[str]:
    try:
        meta = json.loads((folder / "release.json").read_text(encoding="utf-8"))
    except (OSError, ValueError, UnicodeDecodeError):
        return set()
    got = meta.get("public_addresses") if isinstance(meta, dict) else None
    return {str(a) for a in got} if isinstance(got, list) else set()


def scan_file(f: Path, det: Detector, card: bool = False) -> Iterator[Finding]:
    """The findings of one file, as it is streamed: a text file is first searched block by block as raw
    bytes (at the speed of reading it) and read row by row only when a block may hold a finding."""
    suffix = f.suffix.lower()
    if suffix in BINARY_SUFFIXES:
        return
    if suffix != ".parquet" and not _may_hold(f, det):
        return
    try:
        if suffix == ".parquet":
            yield from _parquet(f, det)
        elif suffix == ".jsonl":
            yield from _jsonl(f, det, card)
        elif suffix == ".csv":
            yield from _csv(f, det, card)
        elif suffix == ".json":
            yield from _json(f, det, card)
        else:
            yield from _lines(f, det, card)
    except (OSError, UnicodeDecodeError, csv.Error, ValueError) as exc:
        # a file that cannot be read is named by the other checks; scan what can be read of it as bytes
        if not _is_binary(f):
            yield Finding(f, None, None, f"could not be scanned ({type(exc).__name__})")


def _may_hold(f: Path, det: Detector) -> bool:
    """Does any block of the file's raw bytes pass :meth:`Detector.maybe_bytes`? (Blocks overlap by
    4 KB, so a match across a block boundary is seen.)"""
    with open(f, "rb") as fh:
        tail = b""
        while True:
            block = fh.read(_BLOCK)
            if not block:
                return False
            if det.maybe_bytes(tail + block):
                return True
            tail = block[-4096:]


def _is_binary(f: Path) -> bool:
    with open(f, "rb") as fh:
        return b"\0" in fh.read(8192)


def _lines(f: Path, det: Detector, card: bool) -> Iterator[Finding]:
    if _is_binary(f):
        return
    with open(f, encoding="utf-8", errors="replace") as fh:
        for row, line in enumerate(fh, start=1):
            for what in det.check(line, card):
                yield Finding(f, row, None, what)


def _jsonl(f: Path, det: Detector, card: bool) -> Iterator[Finding]:
    with open(f, "rb") as fh:
        for row, raw in enumerate(fh, start=1):
            if not det.maybe_bytes(raw):
                continue
            text = raw.decode("utf-8", errors="replace")
            try:
                obj = json.loads(text)
            except ValueError:
                for what in det.check(text, card):
                    yield Finding(f, row, None, what)
                continue
            for field, value in _strings(obj):
                for what in det.check(value, card):
                    yield Finding(f, row, field, what)


def _strings(obj: Any, path: str = "") -> Iterator[tuple[str, str]]:
    """``(field path, string)`` of every string in a JSON value, dict keys included."""
    if isinstance(obj, str):
        yield path or "(value)", obj
    elif isinstance(obj, dict):
        for k, v in obj.items():
            p = f"{path}.{k}" if path else str(k)
            yield p + " (key)", str(k)
            yield from _strings(v, p)
    elif isinstance(obj, list):
        for i, v in enumerate(obj):
            yield from _strings(v, f"{path}[{i}]")


_JSON_KEY = re.compile(r'^(\s*)"((?:[^"\\]|\\.)*)"\s*:')


def _json(f: Path, det: Detector, card: bool) -> Iterator[Finding]:
    """An indented JSON file line by line: a finding names the keys above its line (``data.intrasentence``
    ...), found from the indentation; a one-line file is parsed to name the field exactly."""
    stack: list[tuple[int, str]] = []
    with open(f, encoding="utf-8") as fh:
        for row, line in enumerate(fh, start=1):
            m = _JSON_KEY.match(line)
            if m:
                indent = len(m.group(1))
                while stack and stack[-1][0] >= indent:
                    stack.pop()
                stack.append((indent, m.group(2)))
            if not det.maybe(line):
                continue
            if row == 1 and line.rstrip().endswith(("}", "]")) and line.lstrip().startswith(("{", "[")):
                try:
                    for field, value in _strings(json.loads(line)):
                        for what in det.check(value, card):
                            yield Finding(f, row, field, what)
                    continue
                except ValueError:
                    pass
            under = ".".join(k for _, k in stack) or None
            for what in det.check(line, card):
                yield Finding(f, row, under, what)


def _csv(f: Path, det: Detector, card: bool) -> Iterator[Finding]:
    with open(f, encoding="utf-8", newline="") as fh:
        reader = csv.reader(fh)
        header = next(reader, None) or []
        for i, name in enumerate(header):
            for what in det.check(name, card):
                yield Finding(f, None, name or f"column {i + 1}", what, column=True)
        for row, cells in enumerate(reader, start=1):
            if not det.maybe(",".join(cells)):
                continue
            for i, cell in enumerate(cells):
                for what in det.check(cell, card):
                    name = header[i] if i < len(header) else f"column {i + 1}"
                    yield Finding(f, row, name, what, column=True)


def _parquet(f: Path, det: Detector) -> Iterator[Finding]:
    """Row group by row group, column by column: Arrow's regex kernel picks the rows worth a look."""
    import pyarrow as pa
    import pyarrow.compute as pc
    import pyarrow.parquet as pq

    pf = pq.ParquetFile(f)  # one row group in memory at a time
    offset = 0
    for g in range(pf.num_row_groups):
        table = pf.read_row_group(g)
        for name in table.column_names:
            col = table.column(name)
            if not (pa.types.is_string(col.type) or pa.types.is_large_string(col.type)):
                continue
            mask = _match(pc, col, det)
            if mask is None:
                continue
            for i in mask:
                value = col[i].as_py()
                for what in det.check(value or ""):
                    yield Finding(f, offset + i + 1, name, what, column=True)
        offset += table.num_rows


def _match(pc, col, det: Detector) -> list[int] | None:
    """Indices of the values of ``col`` that may hold a finding (Arrow's RE2 kernel per test)."""
    import pyarrow as pa

    hit = pc.fill_null(pc.match_substring_regex(col, det.quick_re2), False)
    if isinstance(hit, pa.ChunkedArray):
        hit = hit.combine_chunks()
    idx = pc.indices_nonzero(hit).to_pylist()
    return idx or None
