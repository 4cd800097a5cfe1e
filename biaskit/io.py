"""File helpers: atomic writes, JSONL/CSV by extension, crash-safe append logs.

Partial work is never lost: whole files are written to a temporary sibling and renamed into place
(``os.replace`` is atomic on POSIX); long runs append one JSON line per finished item to a log that
:func:`read_jsonl` reads back tolerating a truncated last line, so a run can resume.
"""

from __future__ import annotations

import contextlib
import json
import os
import tempfile
from collections.abc import Iterable, Iterator
from dataclasses import dataclass
from pathlib import Path
from typing import Any, cast

from .errors import InputError


@contextlib.contextmanager
def atomic_open(path: str | Path, mode: str = "w", encoding: str | None = "utf-8", newline: str | None = None):
    """Open a temporary file next to ``path``; on success rename it over ``path``."""
    path = Path(path)
    path.parent.mkdir(parents=True, exist_ok=True)
    fd, tmp = tempfile.mkstemp(prefix=f".{path.name}.", suffix=".tmp", dir=path.parent)
    try:
        with os.fdopen(
            fd, mode, encoding=None if "b" in mode else encoding, newline=None if "b" in mode else newline
        ) as fh:
            yield fh
            fh.flush()
            os.fsync(fh.fileno())
        os.chmod(tmp, 0o666 & ~_umask())  # mkstemp creates 0600; give the file normal permissions
        os.replace(tmp, path)
    except BaseException:
        with contextlib.suppress(FileNotFoundError):
            os.unlink(tmp)
        raise


@contextlib.contextmanager
def no_empty_output(path: str | Path):
    """Within this block ``path`` may be created (an append log opened early); if the block fails and
    leaves it created and empty, it is removed: a command that produced nothing leaves no empty file."""
    path = Path(path)
    existed = path.exists()
    try:
        yield
    except BaseException:
        if not existed and path.is_file() and not path.stat().st_size:
            path.unlink()
        raise


def _umask() -> int:
    mask = os.umask(0)
    os.umask(mask)
    return mask


@contextlib.contextmanager
def atomic_dir(path: str | Path, *, owns: Iterable[str] | None = None):
    """Build a folder in a temporary sibling; on success it replaces ``path`` whole.

    Where the system can (Linux ``renameat2(RENAME_EXCHANGE)``) the new folder and the previous one
    are swapped in one step. Elsewhere the previous folder is renamed aside, the new one renamed into
    place, then the previous one deleted: a crash (even ``kill -9``) during the build leaves the
    previous folder untouched, and a process killed between the two renames (microseconds) leaves the
    previous folder aside, which the next call puts back. Folders left by killed builds
    (``.NAME.tmp-PID-*`` of a process that no longer runs, ``.NAME.old-*``) are removed by the next
    call. A re-run never leaves a mix of old and new files. The published folder and its files get
    normal permissions (``mkdtemp`` and some writers create them private).

    ``owns``: names of files an earlier output of the same command holds. An existing ``path`` that
    is not empty and holds none of them is refused (:class:`InputError`), never deleted: a user's
    ``--out .`` must not replace their folder. ``None`` (internal caches) replaces whatever is there.
    """
    import shutil

    path = Path(path)
    owns = tuple(owns) if owns is not None else None
    _check_replaceable(path, owns)
    path.parent.mkdir(parents=True, exist_ok=True)
    _atomic_dir_leftovers(path)
    tmp = Path(tempfile.mkdtemp(prefix=f".{path.name}.tmp-{os.getpid()}-", dir=path.parent))
    try:
        yield tmp
        mask = _umask()
        os.chmod(tmp, 0o777 & ~mask)
        for f in tmp.rglob("*"):
            os.chmod(f, (0o777 if f.is_dir() else 0o666) & ~mask)
        _check_replaceable(path, owns)  # again: something may have appeared there while the folder was built
        exists = path.exists() or path.is_symlink()
        if exists and _exchange(tmp, path):
            pass  # tmp now holds the previous folder, deleted below
        else:
            old = None
            if exists:
                old = Path(tempfile.mkdtemp(prefix=f".{path.name}.old-{os.getpid()}-", dir=path.parent))
                os.replace(path, old)  # (a folder replaces the empty placeholder)
            os.replace(tmp, path)
            if old is not None:
                shutil.rmtree(old, ignore_errors=True)
    finally:
        if tmp.exists():  # a failed build, or (after a swap) the previous output
            shutil.rmtree(tmp, ignore_errors=True)


def _check_replaceable(path: Path, owns: tuple[str, ...] | None) -> None:
    """Refuse to replace a file, or (``owns`` given) a folder holding none of the files an earlier
    output of the same command holds."""
    if path.exists() and not path.is_dir():
        raise InputError(
            "is an existing file; a folder is written here.", path=path, fix="name a folder (the file is left alone)."
        )
    if owns is not None and path.is_dir():
        entries = sorted(os.listdir(path))
        if entries and not any((path / o).exists() for o in owns):
            raise InputError(
                f"is a folder that holds other files (e.g. '{entries[0]}'); an output folder is "
                "replaced whole, so only a new, empty or earlier output folder is written.",
                path=path,
                fix=f"pass a new folder, e.g. {path / 'results'}.",
            )


def _exchange(a: Path, b: Path) -> bool:
    """Swap two paths in one atomic step (Linux ``renameat2(RENAME_EXCHANGE)``); False where the
    system or the file system cannot."""
    import ctypes
    import ctypes.util
    import sys

    if not sys.platform.startswith("linux"):
        return False
    try:
        libc = ctypes.CDLL(ctypes.util.find_library("c") or "libc.so.6", use_errno=True)
        fn = libc.renameat2
    except (OSError, AttributeError):
        return False
    fn.argtypes = [ctypes.c_int, ctypes.c_char_p, ctypes.c_int, ctypes.c_char_p, ctypes.c_uint]
    at_fdcwd, rename_exchange = -100, 2
    return fn(at_fdcwd, os.fsencode(a), at_fdcwd, os.fsencode(b), rename_exchange) == 0


def pid_alive(pid: int) -> bool:
    """Whether process ``pid`` runs (one of another user counts as running)."""
    try:
        os.kill(pid, 0)
    except ProcessLookupError:
        return False
    except PermissionError:
        return True
    return True


def _atomic_dir_leftovers(path: Path) -> None:
    """Put back a folder left aside by a build killed between its two renames; delete the temporary
    folders of builds whose process is gone (see :func:`atomic_dir`)."""
    import glob
    import re
    import shutil

    name = glob.escape(path.name)
    olds = sorted(path.parent.glob(f".{name}.old-*"), key=lambda p: p.stat().st_mtime)
    if olds and not (path.exists() or path.is_symlink()):
        os.replace(olds.pop(), path)
    for o in olds:
        shutil.rmtree(o, ignore_errors=True)
    for t in path.parent.glob(f".{name}.tmp-*"):
        m = re.match(r"^\.(.*)\.tmp-(\d+)-", t.name)
        if m and m.group(1) == path.name and int(m.group(2)) != os.getpid() and not pid_alive(int(m.group(2))):
            shutil.rmtree(t, ignore_errors=True)


def atomic_write_text(path: str | Path, text: str) -> Path:
    with atomic_open(path, "w") as fh:
        fh.write(text)
    return Path(path)


def atomic_write_bytes(path: str | Path, data: bytes) -> Path:
    with atomic_open(path, "wb") as fh:
        fh.write(data)
    return Path(path)


def write_json(path: str | Path, obj: Any) -> Path:
    return atomic_write_text(path, json.dumps(obj, ensure_ascii=False, indent=2, default=_default) + "\n")


def _default(o: Any) -> Any:
    if hasattr(o, "model_dump"):
        return o.model_dump(mode="json")
    if hasattr(o, "item"):  # numpy scalar
        return o.item()
    if hasattr(o, "tolist"):
        return o.tolist()
    if isinstance(o, (set, frozenset)):
        return sorted(o)
    if isinstance(o, Path):
        return str(o)
    raise TypeError(f"not JSON serialisable: {type(o).__name__}")


def dumps_line(obj: Any) -> str:
    if hasattr(obj, "model_dump"):
        obj = obj.model_dump(mode="json")
    return json.dumps(obj, ensure_ascii=False, default=_default)


def write_jsonl(path: str | Path, rows: Iterable[Any]) -> Path:
    with atomic_open(path, "w") as fh:
        for row in rows:
            fh.write(dumps_line(row) + "\n")
    return Path(path)


def iter_jsonl(
    path: str | Path, *, tolerate_truncated_tail: bool = False, check_text: bool = True
) -> Iterator[tuple[int, dict]]:
    """Yield ``(line_number, object)`` from the file's lines as they are read (one line in memory at a
    time); bad JSON raises :class:`InputError` with the line number.

    A last line that does not parse and has no final newline is reported as a cut-off file. With
    ``tolerate_truncated_tail`` such a line (a crash mid-write of a log this process owns) is
    skipped instead; use :func:`repair_jsonl_tail` first where the loss must be reported.
    ``check_text``: refuse control characters and over-long values (:mod:`biaskit.textcheck`).
    """
    from .textcheck import check_record, suspect_json_line

    path = Path(path)
    try:
        fh = open(path, "rb")
    except FileNotFoundError:
        raise InputError("file not found.", path=path, fix="check the path.") from None
    except IsADirectoryError:
        raise InputError("is a directory, expected a JSONL file.", path=path, fix="pass the file itself.") from None
    with fh:
        offset = 0
        for i, raw in enumerate(fh, start=1):
            if i == 1 and raw.startswith(b"\xef\xbb\xbf"):
                raw = raw[3:]
                offset = 3
            try:
                line = raw.decode("utf-8")
            except UnicodeDecodeError as exc:
                raise InputError(
                    f"not valid UTF-8 ({exc.reason} at byte {offset + exc.start}).",
                    path=path,
                    row=i,
                    fix="re-save the file as UTF-8.",
                ) from None
            offset += len(raw)
            if "\r" in line.rstrip("\r\n"):
                yield from _split_cr_lines(path, i, line, check_text)  # old Mac line ends: lines inside the line
                continue
            if not line.strip():
                continue
            try:
                obj = json.loads(line)
            except json.JSONDecodeError as exc:
                last = not raw.endswith(b"\n")  # only the last line of a file can lack its newline
                if tolerate_truncated_tail and last:
                    return
                if last:
                    raise InputError(
                        f"the last line is cut off ({exc.msg}, column {exc.colno}): the file looks truncated.",
                        path=path,
                        row=i,
                        fix="restore the complete file, or re-run the step that wrote it.",
                    ) from None
                raise InputError(
                    f"invalid JSON ({exc.msg}, column {exc.colno}).",
                    path=path,
                    row=i,
                    fix="each line must be one JSON object.",
                ) from None
            _check_object(obj, path, i)
            if check_text and suspect_json_line(line):
                check_record(obj, path, i)
            yield i, obj


def _check_object(obj: Any, path: Path, i: int) -> None:
    if not isinstance(obj, dict):
        what = "a JSON array" if isinstance(obj, list) else f"a JSON {type(obj).__name__}"
        raise InputError(
            f"expected a JSON object on this line, found {what}.",
            path=path,
            row=i,
            fix='each line must be one JSON object (JSON Lines), e.g. {"sent_more": ...}; '
            "a file holding one JSON array is not JSON Lines.",
        )


def _split_cr_lines(path: Path, i: int, line: str, check_text: bool) -> Iterator[tuple[int, dict]]:
    """A line holding carriage returns that end lines (``str.splitlines`` would split there, as the
    reader always did): each part is a line of its own, numbered on from ``i``."""
    from .textcheck import check_record, suspect_json_line

    for k, part in enumerate(line.splitlines()):
        if not part.strip():
            continue
        try:
            obj = json.loads(part)
        except json.JSONDecodeError as exc:
            raise InputError(
                f"invalid JSON ({exc.msg}, column {exc.colno}).",
                path=path,
                row=i + k,
                fix="each line must be one JSON object.",
            ) from None
        _check_object(obj, path, i + k)
        if check_text and suspect_json_line(part):
            check_record(obj, path, i + k)
        yield i + k, obj


def sha256_file(path: str | Path, chunk: int = 1 << 20) -> str:
    """SHA-256 of a file's bytes, read in chunks."""
    import hashlib

    h = hashlib.sha256()
    with open(path, "rb") as fh:
        for block in iter(lambda: fh.read(chunk), b""):
            h.update(block)
    return h.hexdigest()


_HASH_CACHE: dict[str, Any] = {}


def sha256_cached(path: str | Path) -> str:
    """:func:`sha256_file`, remembered in biaskit's cache by the file's path, size, modification time
    and inode: a model's gigabytes or a release's files are read once, and again only after they
    change (a rewrite changes the modification time even when the size stays)."""
    from .cache import DiskCache, default_cache_dir

    path = Path(path)
    st = path.stat()
    key = {"path": str(path.resolve()), "size": st.st_size, "mtime_ns": st.st_mtime_ns, "ino": st.st_ino}
    if st.st_size < (1 << 20):  # small files: hashing is cheaper than a cache lookup
        return sha256_file(path)
    where = str(default_cache_dir() / "cache.sqlite3")
    cache = _HASH_CACHE.get(where)
    if cache is None:
        try:
            cache = _HASH_CACHE[where] = DiskCache(where, namespace="file-sha256")
        except Exception:  # a read-only or broken cache folder: hash every time
            return sha256_file(path)
    hit = cache.get(key)
    if hit is None:
        hit = sha256_file(path)
        try:
            cache.set(key, hit)
        except Exception:
            pass
    return hit


def read_json(
    path: str | Path,
    *,
    fix: str = "repair the JSON (a trailing comma or a missing quote?).",
    missing_fix: str = "check the path.",
) -> Any:
    """Read one JSON document; a missing file, bad UTF-8 or invalid JSON raises :class:`InputError`
    naming the file and line, with ``fix`` / ``missing_fix`` as the fix."""
    path = Path(path)
    try:
        text = path.read_bytes().decode("utf-8-sig")
    except FileNotFoundError:
        raise InputError("file not found.", path=path, fix=missing_fix) from None
    except IsADirectoryError:
        raise InputError("is a directory, expected a JSON file.", path=path, fix=missing_fix) from None
    except UnicodeDecodeError as exc:
        raise InputError(
            f"not valid UTF-8 ({exc.reason} at byte {exc.start}).", path=path, fix="re-save the file as UTF-8."
        ) from None
    try:
        obj = json.loads(text)
    except json.JSONDecodeError as exc:
        raise InputError(
            f"invalid JSON ({exc.msg}, line {exc.lineno}, column {exc.colno}).", path=path, row=exc.lineno, fix=fix
        ) from None
    from .textcheck import check_record, suspect_json_line

    if suspect_json_line(text):
        check_record(obj, path, None)
    return obj


def read_jsonl(path: str | Path, *, tolerate_truncated_tail: bool = False) -> list[dict]:
    return [obj for _, obj in iter_jsonl(path, tolerate_truncated_tail=tolerate_truncated_tail)]


@dataclass
class TailRepair:
    """What :func:`repair_jsonl_tail` did to a log's unterminated last line (``line`` is 1-based)."""

    path: Path
    line: int
    kept: bool  # a complete record: a newline was added
    moved_to: Path | None  # a fragment: moved here (appended), not deleted

    def message(self) -> str:
        if self.kept:
            return f"{self.path}, row {self.line}: the last record had no final newline; kept it."
        return (
            f"{self.path}, row {self.line}: the last line is incomplete (an interrupted write?); moved it to "
            f"{self.moved_to} and continued."
        )


def repair_jsonl_tail(path: str | Path) -> TailRepair | None:
    """Make an append-only JSONL log end with a newline, without losing anything.

    A last line without a final newline is kept when it parses as a JSON object (only the newline
    is added); otherwise it is moved to ``<path>.broken-tail`` (appended) and removed from the log.
    Returns what was done, or None when the file was fine (or absent).
    """
    path = Path(path)
    if not path.exists() or not path.stat().st_size:
        return None
    data = path.read_bytes()
    if data.endswith(b"\n"):
        return None
    cut = data.rfind(b"\n") + 1
    tail = data[cut:]
    line = data.count(b"\n") + 1
    try:
        kept = isinstance(json.loads(tail.decode("utf-8-sig")), dict)
    except (UnicodeDecodeError, json.JSONDecodeError):
        kept = False
    with open(path, "rb+") as fh:
        if kept:
            fh.seek(0, os.SEEK_END)
            fh.write(b"\n")
            moved = None
        else:
            moved = path.with_name(path.name + ".broken-tail")
            with open(moved, "ab") as side:
                side.write(tail + b"\n")
                side.flush()
                os.fsync(side.fileno())
            fh.truncate(cut)
        fh.flush()
        os.fsync(fh.fileno())
    return TailRepair(path, line, kept, moved)


class JsonlAppender:
    """Append-only JSONL log for resumable runs: each ``write`` is flushed and fsync'ed.

    On opening, an unterminated last line is repaired with :func:`repair_jsonl_tail` (a complete
    record is kept, a fragment moved aside); ``tail_repair`` says what was done, for the caller to
    report."""

    def __init__(self, path: str | Path):
        self.path = Path(path)
        self.path.parent.mkdir(parents=True, exist_ok=True)
        self.tail_repair = repair_jsonl_tail(self.path)
        self._fh = open(self.path, "a", encoding="utf-8")

    def existing(self) -> list[dict]:
        if not self.path.exists():
            return []
        return [o for _, o in iter_jsonl(self.path, tolerate_truncated_tail=True, check_text=False)]

    def write(self, obj: Any) -> None:
        self.write_many([obj])

    def write_many(self, objs: Iterable[Any]) -> None:
        """Append several records with one write and one fsync (a kill leaves all or a cut tail)."""
        text = "".join(dumps_line(o) + "\n" for o in objs)
        if text:
            self._fh.write(text)
            self._fh.flush()
            os.fsync(self._fh.fileno())

    def close(self) -> None:
        self._fh.close()

    def __enter__(self) -> JsonlAppender:
        return self

    def __exit__(self, *exc: Any) -> None:
        self.close()


def read_table(path: str | Path):
    """Read a CSV or JSONL file (by extension) into a DataFrame with clear errors."""
    import pandas as pd

    path = Path(path)
    if not path.exists():
        raise InputError("file not found.", path=path, fix="check the path.")
    suffix = path.suffix.lower()
    if suffix in (".jsonl", ".ndjson"):
        return pd.DataFrame(read_jsonl(path))
    if suffix in (".csv", ".tsv"):
        return next(iter_csv_chunks(path, None))
    if suffix == ".json":
        obj = read_json(path, fix='a .json table is a list of objects (or {"data": [...]}).')
        return pd.DataFrame(obj if isinstance(obj, list) else obj.get("data", obj))
    raise InputError(f"unsupported file type '{suffix}'.", path=path, fix="use .csv, .tsv, .jsonl or .json.")


def iter_csv_chunks(path: str | Path, chunksize: int | None = 50_000) -> Iterator[Any]:
    """A CSV/TSV table as DataFrames of ``chunksize`` rows, read as it goes (``None``: one frame), every
    text cell checked (:func:`biaskit.textcheck.check_frame`, rows numbered in the file); clear errors."""
    import pandas as pd

    from .textcheck import check_frame

    path = Path(path)
    if path.is_dir():
        raise InputError("is a folder; a file is expected here.", path=path, fix="pass the file itself.")
    seen = 0
    try:
        got = pd.read_csv(
            path,
            sep="\t" if path.suffix.lower() == ".tsv" else ",",
            encoding="utf-8-sig",
            keep_default_na=False,
            na_values=[""],
            chunksize=chunksize,
        )
        # a DataFrame without chunksize, else a reader of DataFrames
        for df in cast("Iterable[pd.DataFrame]", [got] if chunksize is None else got):
            check_frame(df, path, offset=seen)
            seen += len(df)
            yield df
    except UnicodeDecodeError as exc:
        raise InputError(
            f"not valid UTF-8 ({exc.reason} at byte {exc.start}).", path=path, fix="re-save the file as UTF-8."
        ) from None
    except pd.errors.EmptyDataError:
        raise InputError(
            "the file is empty (no header row).", path=path, fix="pass a table with a header row naming its columns."
        ) from None
    except pd.errors.ParserError as exc:
        raise InputError(
            f"malformed CSV: {' '.join(str(exc).split())}",
            path=path,
            fix="check quoting and the number of columns on that line.",
        ) from None


FAST_CSV_ROWS = 50_000  # larger tables are written through Arrow (biaskit.csvtext: pandas' bytes, faster)


def write_table(path: str | Path, df) -> Path:
    """Write a DataFrame as CSV or JSONL (by extension), atomically."""
    path = Path(path)
    suffix = path.suffix.lower()
    if suffix in (".jsonl", ".ndjson"):
        return write_jsonl(path, ({k: _clean(v) for k, v in rec.items()} for rec in df.to_dict(orient="records")))
    if suffix in (".csv", ".tsv"):
        sep = "\t" if suffix == ".tsv" else ","
        if len(df) >= FAST_CSV_ROWS:
            from .csvtext import csv_blocks

            blocks = csv_blocks(df, sep)
            if blocks is not None:
                with atomic_open(path, "wb") as fh:
                    for block in blocks:
                        fh.write(block)
                return path
        with atomic_open(path, "w", newline="") as fh:
            df.to_csv(fh, index=False, sep=sep)
        return path
    raise InputError(f"unsupported output type '{suffix}'.", path=path, fix="use .csv, .tsv or .jsonl.")


def _clean(v: Any) -> Any:
    try:
        import math

        if isinstance(v, float) and math.isnan(v):
            return None
    except Exception:  # pragma: no cover
        pass
    if hasattr(v, "item") and not isinstance(v, (list, dict)):
        try:
            return v.item()
        except Exception:
            return v
    return v
