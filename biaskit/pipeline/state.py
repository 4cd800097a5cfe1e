"""The state of a project's run: ``WORKDIR/.biaskit/state.json``, written atomically after every step.

Per stage: ``status`` (``running``, ``done``, ``waiting``, ``failed``), ``fingerprint`` (what the
finished run was made from), ``attempt`` (the fingerprint of the run in progress: an interrupted or
failed run with the same fingerprint resumes on its files, a different one starts the stage's folder
afresh), ``outputs`` (name -> path, SHA-256, rows), ``message``, ``summary``, ``progress`` (human
stages), times. A fingerprint is a SHA-256 over the stage's options (without the ones that do not
change results, such as concurrency), the SHA-256 of every input file's content (a folder: of
every file in it) named by its path relative to the working or project folder (moving the folders
re-runs nothing), the biaskit version and, for LLM stages, the endpoint, model, decoding parameters
and prompt hashes; for the evaluate stage, the content of each model's files.

One ``biaskit run`` at a time per working folder: :func:`lock` holds ``.biaskit/lock`` (an
``flock``, released by the kernel when the process dies, so a killed run never leaves it held).
"""

from __future__ import annotations

import contextlib
import datetime as _dt
import fcntl
import hashlib
import json
import os
from collections.abc import Iterator
from pathlib import Path
from typing import Any

from ..errors import BiaskitError

STATE_DIR = ".biaskit"
STATE_FILE = "state.json"
LOCK_FILE = "lock"
STATE_VERSION = 1


def now() -> str:
    return _dt.datetime.now(_dt.UTC).isoformat(timespec="seconds")


def fingerprint(obj: Any) -> str:
    payload = json.dumps(obj, sort_keys=True, ensure_ascii=False, separators=(",", ":"), default=str)
    return hashlib.sha256(payload.encode("utf-8")).hexdigest()


def hash_path(path: Path) -> str | None:
    """SHA-256 of a file's content; of a folder (a release, a model), of every file's relative name
    and content, so an edit of any file (a release's card, new weights saved into the same folder)
    changes it (None: missing). File hashes are cached by size and modification time
    (:func:`biaskit.io.sha256_cached`)."""
    from ..io import sha256_cached

    path = Path(path)
    if path.is_file():
        return sha256_cached(path)
    if path.is_dir():
        h = hashlib.sha256()
        for f in sorted(p for p in path.rglob("*") if p.is_file() and not p.name.startswith(".")):
            h.update(f.relative_to(path).as_posix().encode() + b"\0" + sha256_cached(f).encode() + b"\n")
        return h.hexdigest()
    return None


def rel_path(workdir: Path, p: str | Path) -> str:
    """``p`` relative to the working folder when inside it (the state stays valid when the folder moves)."""
    try:
        return Path(p).resolve().relative_to(Path(workdir).resolve()).as_posix()
    except ValueError:
        return str(p)


def shown_path(p: Path) -> str:
    """``p`` as a hint shows it: relative to the current folder when inside it, else absolute, so the
    path works where the message is printed."""
    import os

    try:
        rel = os.path.relpath(Path(p).resolve(), Path.cwd().resolve())
    except ValueError:
        return str(p)
    return rel if not rel.startswith("..") else str(Path(p).resolve())


def abs_path(workdir: Path, p: str) -> Path:
    q = Path(p)
    return q if q.is_absolute() else Path(workdir) / q


class State:
    """``WORKDIR/.biaskit/state.json`` (see the module docstring)."""

    def __init__(self, workdir: Path):
        self.dir = Path(workdir) / STATE_DIR
        self.path = self.dir / STATE_FILE
        self.data: dict[str, Any] = {"version": STATE_VERSION, "stages": {}}
        if self.path.exists():
            from ..io import read_json

            data = read_json(
                self.path,
                fix=f"delete {self.path} (the next run redoes what it cannot prove done; the caches keep it cheap).",
            )
            if isinstance(data, dict) and data.get("version") == STATE_VERSION:
                self.data = data
                self.data.setdefault("stages", {})

    def stage(self, name: str) -> dict[str, Any]:
        return self.data["stages"].setdefault(name, {})

    def get(self, name: str) -> dict[str, Any]:
        return dict(self.data["stages"].get(name) or {})

    def update(self, name: str, **fields: Any) -> dict[str, Any]:
        st = self.stage(name)
        st.update(fields)
        self.save()
        return st

    def save(self) -> None:
        from ..io import write_json
        from ..redact import redact_obj

        self.dir.mkdir(parents=True, exist_ok=True)
        self.data["updated"] = now()
        write_json(self.path, redact_obj(self.data))


@contextlib.contextmanager
def lock(workdir: Path) -> Iterator[None]:
    """Hold the working folder's run lock, or say that another run holds it."""
    d = Path(workdir) / STATE_DIR
    d.mkdir(parents=True, exist_ok=True)
    fh = open(d / LOCK_FILE, "a+")
    try:
        try:
            fcntl.flock(fh, fcntl.LOCK_EX | fcntl.LOCK_NB)
        except BlockingIOError:
            fh.seek(0)
            who = fh.read().strip()
            raise BiaskitError(
                f"another `biaskit run` is working in {workdir}"
                + (f" ({who})" if who else "")
                + f". Fix: wait for it to finish (`biaskit status --workdir {shown_path(workdir)}` "
                "shows where it is)."
            ) from None
        fh.seek(0)
        fh.truncate()
        fh.write(f"pid {os.getpid()} since {now()}")
        fh.flush()
        yield
    finally:
        fh.close()


def is_locked(workdir: Path) -> bool:
    """True while a `biaskit run` holds the working folder's lock."""
    p = Path(workdir) / STATE_DIR / LOCK_FILE
    if not p.exists():
        return False
    with open(p, "a+") as fh:
        try:
            fcntl.flock(fh, fcntl.LOCK_EX | fcntl.LOCK_NB)
        except BlockingIOError:
            return True
        fcntl.flock(fh, fcntl.LOCK_UN)
        return False
