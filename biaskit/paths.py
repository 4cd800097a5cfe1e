"""File arguments, checked in one place before a command does any work.

Every path a command takes is declared with one of the option builders below instead of a plain
``typer.Option``::

    data: Path = in_file(..., "--data", help="...")          # a file to read
    release: Path = in_path(..., "--data", help="...")       # a file or a folder to read
    inventory: Optional[Path] = in_dir(None, "--inventory")  # a folder to read
    out: Path = out_file(..., "--out", help="...")           # a file to write (or append to)
    out: Path = out_dir(..., "--out", owns=("summary.json",))  # a folder to write (replaced whole)
    path: Path = in_dir(..., arg="RELEASE", help="...")      # the same for a positional argument

The builder gives typer a *parser* (:class:`PathArg`) that typer calls while it reads the command
line, so a bad path stops the command before it loads a model or sends a request, with one line
that names the argument, the path and a fix (exit 2, through :class:`~biaskit.errors.InputError`):

- inputs: exists, is a file (or a folder) as required, readable; a text file decodes as UTF-8 (a
  UTF-8 byte-order mark is fine; UTF-16/UTF-32 are recognised and named), holds no control
  character (NUL and the other C0 codes but tab, newline and carriage return), and a CSV/TSV has no
  cell longer than :data:`MAX_CELL` characters (an unclosed quote makes the rest of a file one cell);
- outputs: ``--out`` is not an existing folder where a file is written, nor an existing file
  where a folder is written, an existing output folder holds an earlier output of the same command
  (``owns``: it is replaced whole, so a folder holding other files is refused, never deleted), and
  the nearest existing folder above it can be written to (tried, not guessed from permission bits).

The fuzz suite (``tests/test_fuzz_cli.py``) fails when a command declares a ``Path`` parameter
without one of these builders.

Values from data (a record's ``lang``, a registry's file name, a domain name) become part of a file
name only through :func:`safe_component` (refused with the record's file and row when unsafe) or
:func:`slug_component` (a name made safe by replacement, for labels a user chose). A relative path
from data that is read (a release card's data files, ``SHA256SUMS``, a groups file's word lists) goes
through :func:`inside`: it never leaves the folder it is relative to.
"""

from __future__ import annotations

import codecs
import contextlib
import csv
import os
import tempfile
from collections.abc import Iterable, Sequence
from pathlib import Path
from typing import Any

from .errors import InputError
from .textcheck import CONTROL_CHARS, control_char_name
from .textcheck import MAX_TEXT as MAX_CELL

# MAX_CELL: the longest CSV/TSV cell biaskit reads, in characters (a sentence is < 1,000; a 1 MB cell
# is a file whose quotes do not close); the readers use the same limit (biaskit.textcheck).

TEXT_SUFFIXES = {
    ".csv",
    ".tsv",
    ".jsonl",
    ".ndjson",
    ".json",
    ".txt",
    ".toml",
    ".xml",
    ".md",
    ".bib",
    ".yaml",
    ".yml",
    ".html",
    "",
}
TABLE_SUFFIXES = {".csv": ",", ".tsv": "\t"}
_BOMS = (
    (codecs.BOM_UTF32_LE, "UTF-32 (little-endian)"),
    (codecs.BOM_UTF32_BE, "UTF-32 (big-endian)"),
    (codecs.BOM_UTF16_LE, "UTF-16 (little-endian)"),
    (codecs.BOM_UTF16_BE, "UTF-16 (big-endian)"),
)
_CHUNK = 1 << 20
# every byte but the control characters CONTROL_CHARS names (all ASCII: in UTF-8 they are these bytes alone)
_NOT_CONTROL = bytes(b for b in range(256) if not CONTROL_CHARS.match(chr(b)))


# ------------------------------------------------------------------------------------------ checks
def check_input(path: str | Path, arg: str | None, *, kind: str = "file", text: bool = True) -> Path:
    """``path`` checked as an input (``kind``: file, dir or any); raises :class:`InputError`."""
    path = Path(path)
    if not path.exists():
        hint = ""
        if not path.parent.exists():
            hint = f" (the folder {path.parent} does not exist either)"
        what = "folder" if kind == "dir" else "file"
        raise InputError(
            f"{what} not found{hint}.",
            path=path,
            arg=arg,
            fix=f"check the path (relative paths start at {Path.cwd()}).",
        )
    if path.is_dir():
        if kind == "file":
            raise InputError(
                "is a folder; a file is expected here.",
                path=path,
                arg=arg,
                fix=f"pass the file itself (e.g. a file inside {path}).",
            )
        try:
            next(iter(os.scandir(path)), None)
        except OSError as exc:
            raise InputError(
                f"the folder cannot be read ({exc.strerror}).",
                path=path,
                arg=arg,
                fix="fix its permissions or pass another folder.",
            ) from None
        return path
    if kind == "dir":
        raise InputError(
            "is a file; a folder is expected here.", path=path, arg=arg, fix=f"pass the folder (e.g. {path.parent})."
        )
    if not path.is_file():
        raise InputError("is not a regular file (a device or a pipe?).", path=path, arg=arg, fix="pass a regular file.")
    try:
        with open(path, "rb") as fh:
            head = fh.read(4)
    except OSError as exc:
        raise InputError(
            f"cannot be read ({exc.strerror}).", path=path, arg=arg, fix="fix its permissions or pass another file."
        ) from None
    if text and path.suffix.lower() in TEXT_SUFFIXES:
        check_text(path, arg, head)
        sep = TABLE_SUFFIXES.get(path.suffix.lower())
        if sep:
            check_cells(path, arg, sep)
    return path


def check_text(path: Path, arg: str | None = None, head: bytes = b"") -> None:
    """UTF-8 (a BOM allowed), no control characters; errors name the line."""
    for bom, name in _BOMS:
        if head.startswith(bom):
            raise InputError(
                f"is encoded as {name}; biaskit reads UTF-8.",
                path=path,
                arg=arg,
                fix=f"re-save it as UTF-8, e.g. iconv -f UTF-16 -t UTF-8 '{path}' > '{path}.utf8'.",
            )
    decoder = codecs.getincrementaldecoder("utf-8")()
    done = 0  # bytes read before this chunk: its first line is counted only for a message
    first = True
    with open(path, "rb") as fh:
        while True:
            chunk = fh.read(_CHUNK)
            if first and chunk.startswith(codecs.BOM_UTF8):
                chunk = chunk[3:]
                done = 3
            control = chunk.translate(None, _NOT_CONTROL)  # the bytes first: fast
            if chunk and not control and chunk.isascii() and not decoder.getstate()[0]:
                done += len(chunk)  # ASCII with nothing pending: UTF-8, no control character
                first = False
                continue
            try:
                text = decoder.decode(chunk, final=not chunk)
            except UnicodeDecodeError as exc:
                at = _line_at(path, done) + chunk[: max(exc.start, 0)].count(b"\n")
                bad = exc.object[exc.start : exc.start + 1].hex() if exc.object else "?"
                raise InputError(
                    f"line {at}: not valid UTF-8 (byte 0x{bad}: {exc.reason}).",
                    path=path,
                    arg=arg,
                    fix="re-save it as UTF-8 (e.g. iconv -f latin1 -t utf-8, or your editor's 'save with encoding').",
                ) from None
            m = CONTROL_CHARS.search(text) if control else None
            if m:
                at = _line_at(path, done) + text.count("\n", 0, m.start())
                if first and _looks_utf16(chunk):
                    raise InputError(
                        "looks like UTF-16 without a byte-order mark (every other byte is 0); biaskit reads UTF-8.",
                        path=path,
                        arg=arg,
                        fix="re-save it as UTF-8.",
                    )
                raise InputError(
                    f"line {at}: a control character {control_char_name(m.group())} in the text.",
                    path=path,
                    arg=arg,
                    fix="remove it (a binary file, or a copy/paste accident?); tab and newline are fine.",
                )
            if not chunk:
                return
            done += len(chunk)
            first = False


def _line_at(path: Path, offset: int) -> int:
    """The number of the line the byte at ``offset`` of a file is on."""
    with open(path, "rb") as fh:
        return 1 + fh.read(offset).count(b"\n")


def _looks_utf16(data: bytes) -> bool:
    sample = data[:2048]
    if len(sample) < 4:
        return False
    even, odd = sample[0::2], sample[1::2]
    return even.count(0) > 0.4 * len(even) or odd.count(0) > 0.4 * len(odd)


def check_cells(path: Path, arg: str | None, sep: str = ",") -> None:
    """Every CSV/TSV cell is at most :data:`MAX_CELL` characters (names the line of a longer one)."""
    if _plain_lines(path):
        return  # no quote and no longer line: the csv module can find nothing to refuse (a million rows: 3 s)
    with open(path, encoding="utf-8-sig", newline="") as fh:
        reader = csv.reader(fh, delimiter=sep)
        try:
            for _ in reader:
                pass
        except csv.Error as exc:
            if "field larger than field limit" in str(exc):
                raise InputError(
                    f"line {reader.line_num}: a cell longer than {MAX_CELL:,} characters ends here.",
                    path=path,
                    arg=arg,
                    fix="check the quotes above this line (an unclosed quote makes the rest of the "
                    "file one cell); biaskit reads cells up to that length.",
                ) from None
            raise InputError(
                f"line {reader.line_num}: malformed CSV ({exc}).",
                path=path,
                arg=arg,
                fix="check the quoting on that line.",
            ) from None


def _plain_lines(path: Path) -> bool:
    """The file holds no double quote and no line longer than :data:`MAX_CELL` bytes (so no cell longer than
    that), read a block at a time; False where it cannot tell cheaply."""
    line = 0  # bytes of the line the previous block ended in
    with open(path, "rb") as fh:
        while chunk := fh.read(_CHUNK):
            if b'"' in chunk:
                return False
            first = chunk.find(b"\n")
            if first < 0:
                line += len(chunk)
            else:
                last = chunk.rfind(b"\n")
                # a line longer than MAX_CELL between the two would leave no newline in this window
                window = chunk.find(b"\n", max(0, last - MAX_CELL - 1), first + MAX_CELL + 2)
                if line + first > MAX_CELL or (last - first > MAX_CELL and window < 0):
                    return False
                line = len(chunk) - last - 1
            if line > MAX_CELL:
                return False
    return True


def check_output(path: str | Path, arg: str | None, *, kind: str = "file", owns: Sequence[str] | None = None) -> Path:
    """``path`` checked as an output (``kind``: file or dir); raises :class:`InputError`.

    ``owns`` (folders): names of files an earlier output of the command holds; an existing non-empty
    folder holding none of them is refused (it would be replaced whole).
    """
    path = Path(path)
    if path.exists() or path.is_symlink():
        if kind == "file" and path.is_dir():
            raise InputError(
                "is an existing folder; this option names a file to write.",
                path=path,
                arg=arg,
                fix=f"name a file, e.g. a new file inside {path}.",
            )
        if kind == "dir" and not path.is_dir():
            raise InputError(
                "is an existing file; this option names a folder to write.",
                path=path,
                arg=arg,
                fix=f"name a folder, e.g. {path.with_suffix('')}-out (the file is left alone).",
            )
        if kind == "dir" and owns:
            foreign = _foreign_folder(path, owns)
            if foreign:
                raise InputError(
                    f"is a folder that holds other files (e.g. '{foreign}'); biaskit replaces an "
                    "output folder whole, so it only writes into a new, empty or earlier output "
                    f"folder (one with {' or '.join(owns)}).",
                    path=path,
                    arg=arg,
                    fix=f"pass a new folder, e.g. {path / 'results'}.",
                )
        if kind == "file" and not path.is_file():
            raise InputError("exists and is not a regular file.", path=path, arg=arg, fix="name another file.")
        if kind == "dir" and not owns:  # a working folder is written into (not replaced): it must be writable
            check_writable(path, arg, inside=True)
            return path
    check_writable(path, arg)
    return path


def _foreign_folder(path: Path, owns: Sequence[str]) -> str | None:
    """The name of an entry of ``path`` when it is a non-empty folder holding none of ``owns``."""
    try:
        entries = sorted(os.listdir(path))
    except OSError:
        return None  # check_writable reports it
    if not entries or any((path / o).exists() for o in owns):
        return None
    return entries[0]


def nearest_existing(path: Path) -> Path:
    p = path.absolute()
    while not p.exists() and p != p.parent:
        p = p.parent
    return p


def check_writable(path: Path, arg: str | None, *, inside: bool = False) -> None:
    """The folder that will hold ``path`` (its nearest existing ancestor; ``inside``: the existing
    folder ``path`` itself) can be written to: tried with a probe file, because permission bits lie
    (root, ACLs, read-only mounts)."""
    base = path.absolute() if inside else nearest_existing(path.absolute().parent)
    if not base.is_dir():
        raise InputError(
            f"cannot be created: {base} is a file, not a folder.",
            path=path,
            arg=arg,
            fix=f"choose a path whose parent folders are folders (not {base}).",
        )
    try:
        fd, probe = tempfile.mkstemp(prefix=".biaskit-write-test-", dir=base)
        os.close(fd)
        os.unlink(probe)
    except OSError as exc:
        raise InputError(
            f"cannot be written: the folder {base} is not writable ({exc.strerror}).",
            path=path,
            arg=arg,
            fix="choose a folder you can write to, or fix its permissions.",
        ) from None


# ------------------------------------------------------------------------------------------ data -> names
MAX_COMPONENT = 64  # characters of a file-name part made from data (a language, a dataset file)
_COMPONENT_OK = frozenset("abcdefghijklmnopqrstuvwxyzABCDEFGHIJKLMNOPQRSTUVWXYZ0123456789._-+")


def component_problem(value: Any, *, max_len: int = MAX_COMPONENT) -> str | None:
    """Why ``value`` (NFC-normalised) cannot be one part of a file name, or None when it can: ASCII
    letters, digits, ``.``, ``_``, ``-`` and ``+`` only (no separator, space, control, zero-width or
    bidirectional-override character: portable to every file system and the Hugging Face Hub), not
    empty, not ``.``-led (``..``, hidden files), at most ``max_len`` characters."""
    import unicodedata

    text = unicodedata.normalize("NFC", str(value)) if value is not None else ""
    if not text:
        return "is empty"
    if len(text) > max_len:
        return f"is {len(text)} characters long (at most {max_len})"
    if text.startswith("."):
        return "starts with '.'"
    bad = next((ch for ch in text if ch not in _COMPONENT_OK), None)
    if bad is not None:
        name = unicodedata.name(bad, "")
        what = "'/'" if bad == "/" else "'\\'" if bad == "\\" else f"U+{ord(bad):04X}" + (f" {name}" if name else "")
        return f"holds {what} (only ASCII letters, digits, '.', '_', '-' and '+' can)"
    return None


def safe_component(
    value: Any,
    *,
    what: str = "value",
    path: str | os.PathLike | None = None,
    row: int | None = None,
    column: str | None = None,
    fix: str | None = None,
    max_len: int = MAX_COMPONENT,
) -> str:
    """``value`` (a data value: a language code, a config or split name, a dataset's file name) as one
    file-name component, or :class:`InputError` naming the value and the file, row and column it came
    from (see :func:`component_problem`). The one gate a value from data passes before it reaches a
    path; nothing is rewritten: a value that would change is refused."""
    import unicodedata

    problem = component_problem(value, max_len=max_len)
    if problem:
        text = str(value) if value is not None else ""
        shown = ascii(text[:40]) + ("..." if len(text) > 40 else "")
        raise InputError(
            f"{what} {shown} cannot name a file: it {problem}.",
            path=path,
            row=row,
            column=column,
            fix=fix
            or f"give a plain {what} (e.g. 'en', 'hi'): letters, digits, '.', '_', '-' and '+', at "
            f"most {max_len} characters.",
        )
    return unicodedata.normalize("NFC", str(value))


def inside(
    base: str | os.PathLike,
    value: Any,
    *,
    what: str = "path",
    path: str | os.PathLike | None = None,
    row: int | None = None,
    column: str | None = None,
    fix: str | None = None,
) -> Path:
    """``base / value`` for a relative path taken from data that is then read (a card's data file, an
    entry of ``SHA256SUMS``, a ``contentUrl``, a groups file's word lists): the read-side gate, as
    :func:`safe_component` is the write-side one. Refused with :class:`InputError` naming the file,
    row and field the value came from when it is not a non-empty string, holds a NUL, is absolute
    (``/x``, ``C:\\x``, ``\\\\host``) or leads out of ``base`` (a ``..`` part, or a symbolic link inside
    ``base`` that points elsewhere). Whether the file exists is the caller's question."""
    text = value if isinstance(value, str) else None
    problem = None
    if not text:
        problem = "is empty" if text == "" or value is None else f"is a {type(value).__name__}, not a path"
    elif "\x00" in text:
        problem = "holds a NUL character"
    elif text.startswith(("/", "\\")) or (len(text) > 1 and text[1] == ":") or Path(text).is_absolute():
        problem = "is absolute"
    else:
        root = Path(base).resolve()
        target = (Path(base) / text).resolve()
        if target != root and root not in target.parents:
            problem = f"leads outside {base}"
    if problem:
        shown = ascii(str(value)[:80]) if value is not None else "null"
        raise InputError(
            f"{what} {shown} {problem}; biaskit reads only files inside that folder.",
            path=path,
            row=row,
            column=column,
            fix=fix or f"give a path relative to {base} that stays inside it (no '..', not absolute).",
        )
    return Path(base) / str(value)


def slug_component(text: Any, *, default: str = "x", max_len: int = 80) -> str:
    """A safe file-name part made from any label (a model path, a domain name): runs of characters
    :func:`safe_component` refuses become ``-``, leading dots and dashes are dropped, the length is cut."""
    import re
    import unicodedata

    s = unicodedata.normalize("NFC", str(text))
    s = "".join(ch if ch in _COMPONENT_OK else " " for ch in s)
    s = re.sub(r"\s+", "-", s.strip()).lstrip(".-")[:max_len].rstrip("-") or default
    return safe_component(s, max_len=max_len)


# ------------------------------------------------------------------------------------------ typer
_CHECKS_OFF: list[bool] = []


@contextlib.contextmanager
def checks_disabled():
    """Parse command lines without looking at the files they name (a tool that only checks that a
    documented or planned command line parses)."""
    _CHECKS_OFF.append(True)
    try:
        yield
    finally:
        _CHECKS_OFF.pop()


class PathArg:
    """The typer ``parser`` of a file argument: checks the path (see the module docstring) and
    returns it as a :class:`~pathlib.Path`. ``role``: in or out; ``kind``: file, dir or any."""

    def __init__(
        self,
        name: str | None,
        role: str,
        kind: str,
        *,
        text: bool = True,
        owns: Iterable[str] | None = None,
        must_exist: bool = True,
    ):
        self.name, self.role, self.kind, self.text = name, role, kind, text
        self.owns = tuple(owns) if owns else None
        self.must_exist = must_exist
        self.__name__ = f"{role}_{kind}"  # typer names the parameter type after the parser

    def __call__(self, value: Any) -> Path:
        path = Path(os.path.expanduser(str(value)))
        if _CHECKS_OFF:
            return path
        if self.role == "in":
            if not self.must_exist and not path.exists():
                check_writable(path, self.name)
                return path
            return check_input(path, self.name, kind=self.kind, text=self.text)
        return check_output(path, self.name, kind=self.kind, owns=self.owns)

    def __repr__(self) -> str:
        return f"PathArg({self.name!r}, {self.role!r}, {self.kind!r})"


_METAVARS = {
    ("in", "file"): "FILE",
    ("in", "dir"): "DIR",
    ("in", "any"): "PATH",
    ("out", "file"): "FILE",
    ("out", "dir"): "DIR",
}


def _param(
    default: Any,
    decls: tuple[str, ...],
    role: str,
    kind: str,
    *,
    arg: str | None = None,
    text: bool = True,
    owns: Iterable[str] | None = None,
    must_exist: bool = True,
    **kw: Any,
):
    import typer

    metavar = kw.pop("metavar", None) or _METAVARS[(role, kind)]
    if arg is not None:  # a positional argument: its path alone names it in messages
        parser = PathArg(None, role, kind, text=text, owns=owns, must_exist=must_exist)
        return typer.Argument(default, parser=parser, metavar=metavar, **kw)
    if not decls:
        raise TypeError("an option needs its name, e.g. in_file(..., '--data')")
    name = next((d for d in decls if d.startswith("--")), decls[0])
    parser = PathArg(name, role, kind, text=text, owns=owns, must_exist=must_exist)
    return typer.Option(default, *decls, parser=parser, metavar=metavar, **kw)


def in_file(default: Any, *decls: str, text: bool = True, **kw: Any):
    """An input file (``text=False``: do not read it here, e.g. a large corpus or a binary file)."""
    return _param(default, decls, "in", "file", text=text, **kw)


def in_dir(default: Any, *decls: str, must_exist: bool = True, **kw: Any):
    """An input folder (``must_exist=False``: a working folder created when missing)."""
    return _param(default, decls, "in", "dir", must_exist=must_exist, **kw)


def in_path(default: Any, *decls: str, text: bool = True, **kw: Any):
    """An input that may be a file or a folder (a release folder, a folder of tests)."""
    return _param(default, decls, "in", "any", text=text, **kw)


def out_file(default: Any, *decls: str, **kw: Any):
    """A file to write or append to (never an existing folder)."""
    return _param(default, decls, "out", "file", **kw)


def out_dir(default: Any, *decls: str, owns: Iterable[str] | None = None, **kw: Any):
    """A folder to write whole (never an existing file; ``owns``: see :func:`check_output`)."""
    return _param(default, decls, "out", "dir", owns=owns, **kw)


def path_arg_of(param: Any) -> PathArg | None:
    """The :class:`PathArg` of a click parameter built by typer, or None."""
    td = getattr(param, "type_descriptor", None)
    info = getattr(td, "parameter_info", None)
    parser = getattr(info, "parser", None)
    return parser if isinstance(parser, PathArg) else None


# ------------------------------------------------------------------------------------------ errors
def argument_for(filename: str | os.PathLike, argv: Sequence[str]) -> str | None:
    """The command-line argument (``--out``) whose value is ``filename``, a folder holding it, or the
    temporary sibling biaskit writes it through (``.NAME.tmp-…``); None when no argument names it."""
    if not filename:
        return None
    try:
        target = Path(os.fspath(filename)).absolute()
    except (TypeError, ValueError):
        return None
    best: tuple[int, str | None] = (-1, None)
    for opt, val in _option_values(argv):
        try:
            p = Path(os.path.expanduser(val)).absolute()
        except (TypeError, ValueError):
            continue
        score = -1
        if target == p:
            score = 1000
        elif p in target.parents:
            score = len(p.parts)
        elif p.parent in target.parents or p.parent == target.parent:
            rel = target.relative_to(p.parent).parts if p.parent in target.parents else (target.name,)
            if rel and (rel[0].startswith(f".{p.name}.") or rel[0].startswith(f"{p.stem}.")):
                score = 500  # the temporary sibling, or a sibling such as OUT.summary.json
        if score > best[0]:
            best = (score, opt)
    return best[1]


def _option_values(argv: Sequence[str]) -> list[tuple[str, str]]:
    out: list[tuple[str, str]] = []
    prev: str | None = None
    for a in argv:
        if a.startswith("--") and "=" in a:
            opt, _, val = a.partition("=")
            out.append((opt, val))
            prev = None
        elif a.startswith("-") and len(a) > 1:
            prev = a
        elif prev is not None:  # a positional argument (prev None) is named by its path alone
            out.append((prev, a))
            prev = None
    return out
