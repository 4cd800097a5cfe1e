"""What biaskit writes for other people names no path of the machine that wrote it.

A release, an evaluation's ``summary.json`` / ``report.md`` / result tables and a dataset card are
read on other machines: an absolute path there says nothing useful and tells who built it and how
their disk is laid out (``/home/alice/...``). Before such a file is written, each path in it becomes
:func:`public_path`: relative to the folder the command ran in when it lies inside it, else its last
component (a model folder ``/home/alice/models/muril-base-cased`` is ``muril-base-cased``).

- :func:`public_path`: one path;
- :func:`public_command`: a recorded command line (``biaskit run --project /home/alice/proj``), token
  by token (``shlex``), so a quoted path with spaces stays one token;
- :func:`public_text`: the paths inside free text (a warning naming a file);
- :func:`public_obj`: a JSON-like object (a summary): every string value whose key is a command goes
  through :func:`public_command`, every other one through :func:`public_text`; keys are kept.

:data:`POSIX_PATH` and :data:`WINDOWS_PATH` are what counts as an absolute path in text, :data:`EMAIL`
an e-mail address; the release scanner (:mod:`biaskit.release.scan`) looks for the same shapes.
"""

from __future__ import annotations

import os
import re
import shlex
from pathlib import Path, PurePosixPath, PureWindowsPath
from typing import Any

# the characters a path component may hold in running text (no space, quote, bracket or separator)
_PART = r"[^\s/\\'\"`<>|,;()\[\]{}*?]+"
# an absolute POSIX path of at least two components (/tmp/x, /home/alice/proj): it starts a token
# (start, whitespace, a quote, a bracket, =, a comma ...), so 'and/or', '1/2' and URLs
# (https://host/x) are not paths
_START = r"(?<![^\s'\"`(\[{<=,;|])"
POSIX_PATH = re.compile(_START + "/" + _PART + "(?:/" + _PART + ")+/?")
# C:\Users\alice, D:/data, \\server\share
WINDOWS_PATH = re.compile(_START + r"(?:[A-Za-z]:[\\/]|\\\\[^\s\\/]+\\)(?:[^\s'\"`<>|,;()\[\]{}*?]*)")
# an e-mail address (a Label Studio login): what a release must never hold
EMAIL = re.compile(r"(?<![\w.%+-])[A-Za-z0-9._%+-]+@[A-Za-z0-9-]+(?:\.[A-Za-z0-9-]+)*\.[A-Za-z]{2,}(?![\w-])")
COMMAND_KEYS = frozenset(("command", "commands", "stage_commands", "command_line"))


def is_absolute(value: str) -> bool:
    """``value`` is one absolute path (POSIX, a Windows drive or UNC path, or ``~/...``)."""
    if not value or "\n" in value or len(value) > 4096:
        return False
    if value.startswith("~/") or value == "~":
        return True
    if value.startswith("/") and not value.startswith("//"):
        return True
    return bool(re.match(r"^(?:[A-Za-z]:[\\/]|\\\\[^\\/]+\\)", value))


def public_path(value: str | os.PathLike, base: str | os.PathLike | None = None) -> str:
    """``value`` as a file written for others shows it: unchanged when relative; relative to ``base``
    (default: the current folder) when it lies inside it; else its last component."""
    s = os.fspath(value)
    if not is_absolute(s):
        return s
    windows = not s.startswith(("/", "~"))
    if not windows:
        p = Path(os.path.expanduser(s))
        root = Path(base) if base is not None else Path.cwd()
        try:
            rel = os.path.relpath(os.path.abspath(p), os.path.abspath(root))
        except ValueError:
            rel = ".."
        if rel == ".":
            return "."
        if not rel.startswith(".."):
            return PurePosixPath(*Path(rel).parts).as_posix()
        return PurePosixPath(os.path.normpath(p)).name or "."
    return PureWindowsPath(s).name or "."


def public_text(text: str, base: str | os.PathLike | None = None) -> str:
    """``text`` with every absolute path in it made :func:`public_path`."""
    if not text or ("/" not in text and "\\" not in text and "~" not in text):
        return text
    if is_absolute(text):
        return public_path(text, base)

    def sub(m: re.Match) -> str:
        return public_path(m.group(0), base)

    return WINDOWS_PATH.sub(sub, POSIX_PATH.sub(sub, text))


def public_command(command: str, base: str | os.PathLike | None = None) -> str:
    """A recorded command line with every path argument made :func:`public_path` (``--out=/x/y``
    included); text that does not split as a shell line goes through :func:`public_text`."""
    if not command or ("/" not in command and "\\" not in command and "~" not in command):
        return command
    try:
        tokens = shlex.split(command)
    except ValueError:
        return public_text(command, base)
    out = []
    for t in tokens:
        flag, eq, value = t.partition("=")
        if eq and flag.startswith("-") and is_absolute(value):
            out.append(f"{flag}={public_path(value, base)}")
        else:
            out.append(public_path(t, base) if is_absolute(t) else public_text(t, base))
    return shlex.join(out)


def public_obj(obj: Any, base: str | os.PathLike | None = None, _key: str | None = None) -> Any:
    """A copy of a JSON-like object with every path in its strings made public (see the module)."""
    if isinstance(obj, str):
        return public_command(obj, base) if _key in COMMAND_KEYS else public_text(obj, base)
    if isinstance(obj, dict):
        return {k: public_obj(v, base, str(k)) for k, v in obj.items()}
    if isinstance(obj, (list, tuple)):
        return type(obj)(public_obj(v, base, _key) for v in obj)
    if isinstance(obj, os.PathLike):
        return public_path(obj, base)
    return obj


def public_table(df, base: str | os.PathLike | None = None):
    """A pandas DataFrame with the paths in its text columns made public (a copy)."""
    from pandas.api.types import is_object_dtype, is_string_dtype

    out = df.copy()
    for c in out.columns:
        if is_object_dtype(out[c].dtype) or is_string_dtype(out[c].dtype):
            out[c] = out[c].map(lambda v: public_text(v, base) if isinstance(v, str) else v)
    return out
