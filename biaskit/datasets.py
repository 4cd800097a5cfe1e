"""Public bias datasets biaskit knows: where they live, their licence, citation and checksum.

The registry is ``data/datasets.json`` (package data ``biaskit.data``). :func:`download` fetches a
release with :mod:`urllib` into a temporary file next to the destination, hashes it while it
streams, checks the recorded sha256 (when one is recorded) and only then renames it into place, so
an interrupted or corrupted download never leaves a file under the final name. A sidecar
``<file>.source.json`` records URL, sha256, time, licence and citation. Offline, the error names the
URL and how to proceed.
"""
from __future__ import annotations

import contextlib
import hashlib
import os
import tempfile
from dataclasses import asdict, dataclass
from datetime import datetime, timezone
from pathlib import Path
from typing import Any, Callable, Optional

from .errors import BiaskitError, InputError
from .io import read_json, sha256_file
from .registry import Registry

USER_AGENT = "biaskit-data/1 (+https://github.com/)"


@dataclass(frozen=True)
class DatasetInfo:
    name: str
    title: str
    url: str
    filename: str
    format: str
    licence: str
    homepage: str = ""
    citation: str = ""
    sha256: Optional[str] = None
    rows: Optional[int] = None
    notes: str = ""


@dataclass
class DownloadResult:
    name: str
    path: Path
    url: str
    sha256: str
    bytes: int
    verified: Optional[bool]  # True: matched the recorded checksum; None: no checksum recorded
    skipped: bool = False  # already present (and verified when a checksum is recorded)


@dataclass
class VerifyResult:
    name: str
    path: Path
    sha256: str
    expected: Optional[str]
    status: str  # "ok" | "mismatch" | "no-checksum"

    @property
    def message(self) -> str:
        if self.status == "ok":
            return f"{self.path}: sha256 {self.sha256} matches the recorded checksum of '{self.name}'."
        if self.status == "no-checksum":
            return (f"{self.path}: no checksum recorded for '{self.name}'; sha256 of this file is {self.sha256} "
                    "(record it to pin this version).")
        return (f"{self.path}: sha256 {self.sha256} does not match the recorded {self.expected} for "
                f"'{self.name}'.")


def registry_path() -> Path:
    """``$BIASKIT_DATASETS_FILE`` or the packaged ``data/datasets.json``."""
    env = os.environ.get("BIASKIT_DATASETS_FILE")
    if env:
        return Path(env)
    from importlib.resources import files

    return Path(str(files("biaskit.data") / "datasets.json"))


def load_registry(path: str | Path | None = None) -> Registry[DatasetInfo]:
    """Read the dataset registry (clear errors on a broken file)."""
    path = Path(path) if path else registry_path()
    doc = read_json(path, fix="repair the registry file.",
                    missing_fix="reinstall biaskit or unset BIASKIT_DATASETS_FILE.")
    reg: Registry[DatasetInfo] = Registry("dataset")
    fields = set(DatasetInfo.__dataclass_fields__)
    for name, entry in (doc.get("datasets") or {}).items():
        unknown = set(entry) - fields
        try:
            info = DatasetInfo(name=name, **{k: v for k, v in entry.items() if k in fields and k != "name"})
        except TypeError as exc:
            raise InputError(f"dataset '{name}': {exc}.", path=path,
                             fix="each entry needs title, url, filename, format and licence.") from None
        if unknown:
            raise InputError(f"dataset '{name}': unknown field(s) {sorted(unknown)}.", path=path,
                             fix=f"use only {sorted(fields - {'name'})}.")
        if info.sha256 is not None and (len(info.sha256) != 64 or any(c not in "0123456789abcdef" for c in info.sha256)):
            raise InputError(f"dataset '{name}': sha256 must be 64 lower-case hex digits or null.", path=path,
                             fix="paste the output of `sha256sum FILE` or use null.")
        reg.register(name, info, help=info.title)
    return reg


def get_dataset(name: str, registry: str | Path | None = None) -> DatasetInfo:
    """Look a dataset up by name ("did you mean" on typos)."""
    return load_registry(registry).get(name)


def list_datasets(registry: str | Path | None = None) -> list[DatasetInfo]:
    reg = load_registry(registry)
    return [reg.get(n) for n in reg.names()]



def verify(name: str, file: str | Path, registry: str | Path | None = None) -> VerifyResult:
    """Compare a file's sha256 with the one recorded for dataset ``name``."""
    info = get_dataset(name, registry)
    path = Path(file)
    if not path.is_file():
        raise InputError("file not found." if not path.exists() else "is not a file.", path=path,
                         fix=f"pass the downloaded file, e.g. DIR/{info.filename}.")
    digest = sha256_file(path)
    if info.sha256 is None:
        status = "no-checksum"
    else:
        status = "ok" if digest == info.sha256 else "mismatch"
    return VerifyResult(name=name, path=path, sha256=digest, expected=info.sha256, status=status)


def _fetch(url: str, dest_dir: Path, filename: str, timeout: float,
           on_progress: Optional[Callable[[int, Optional[int]], None]] = None) -> tuple[Path, str, int]:
    """Stream ``url`` into a temporary file in ``dest_dir``; return (tmp path, sha256, bytes)."""
    import http.client
    import urllib.error
    import urllib.request

    req = urllib.request.Request(url, headers={"User-Agent": USER_AGENT})
    fd, tmp = tempfile.mkstemp(prefix=f".{filename}.", suffix=".part", dir=dest_dir)
    h = hashlib.sha256()
    n = 0
    try:
        with os.fdopen(fd, "wb") as fh:
            try:
                with urllib.request.urlopen(req, timeout=timeout) as resp:  # noqa: S310 - http(s) URLs from the registry
                    total = resp.headers.get("Content-Length")
                    total = int(total) if total and total.isdigit() else None
                    while True:
                        block = resp.read(1 << 16)
                        if not block:
                            break
                        fh.write(block)
                        h.update(block)
                        n += len(block)
                        if on_progress:
                            on_progress(n, total)
                    if total is not None and n != total:
                        raise BiaskitError(f"download of {url} was cut short ({n} of {total} bytes). "
                                           "Fix: run the command again")
            except urllib.error.HTTPError as exc:
                raise BiaskitError(f"cannot download {url}: HTTP {exc.code} {exc.reason}. Fix: check the URL "
                                   "(the upstream file may have moved) or pass --url with a mirror") from None
            except http.client.IncompleteRead as exc:
                raise BiaskitError(f"download of {url} was cut short ({n + len(exc.partial)} bytes received). "
                                   "Fix: run the command again") from None
            except (urllib.error.URLError, http.client.HTTPException, TimeoutError, ConnectionError, OSError) as exc:
                reason = getattr(exc, "reason", exc)
                raise BiaskitError(f"cannot download {url}: {reason} (offline?). Fix: connect to the internet, "
                                   "or download the file by hand and check it with `biaskit data verify`") from None
            fh.flush()
            os.fsync(fh.fileno())
    except BaseException:
        with contextlib.suppress(FileNotFoundError):
            os.unlink(tmp)
        raise
    return Path(tmp), h.hexdigest(), n


def download(name: str, out_dir: str | Path, *, url: Optional[str] = None, force: bool = False,
             timeout: float = 60.0, registry: str | Path | None = None, progress: bool = False) -> DownloadResult:
    """Download dataset ``name`` into ``out_dir`` (see the module docstring).

    ``url`` overrides the registry URL (a mirror, or a local stand-in in tests); the recorded
    sha256 is still enforced. An existing file is kept unless ``force`` (and re-verified when a
    checksum is recorded; a mismatching existing file is an error, never silently replaced).
    """
    info = get_dataset(name, registry)
    out_dir = Path(out_dir)
    if out_dir.exists() and not out_dir.is_dir():
        raise BiaskitError(f"{out_dir}: exists and is not a folder. Fix: pass another --out")
    out_dir.mkdir(parents=True, exist_ok=True)
    dest = out_dir / info.filename
    src = url or info.url
    if dest.exists() and not force:
        digest = sha256_file(dest)
        if info.sha256 and digest != info.sha256:
            raise BiaskitError(f"{dest}: exists but its sha256 {digest} does not match the recorded {info.sha256}. "
                               "Fix: pass --force to download it again")
        return DownloadResult(name, dest, src, digest, dest.stat().st_size,
                              verified=True if info.sha256 else None, skipped=True)
    with _progress(progress, info.filename) as cb:
        tmp, digest, n = _fetch(src, out_dir, info.filename, timeout, cb)
    if info.sha256 and digest != info.sha256:
        tmp.unlink(missing_ok=True)
        raise BiaskitError(f"checksum mismatch for '{name}' from {src}: got sha256 {digest}, expected "
                           f"{info.sha256}; nothing was written. Fix: the upstream file changed or the download "
                           "is corrupt: retry, or check the release")
    os.chmod(tmp, 0o644 & ~_umask())
    os.replace(tmp, dest)
    from .io import write_json

    write_json(dest.with_name(dest.name + ".source.json"), {
        "dataset": name, "url": src, "sha256": digest, "bytes": n,
        "verified": bool(info.sha256), "downloaded_at": datetime.now(timezone.utc).isoformat(timespec="seconds"),
        "licence": info.licence, "citation": info.citation, "homepage": info.homepage,
    })
    return DownloadResult(name, dest, src, digest, n, verified=True if info.sha256 else None)


def _umask() -> int:
    m = os.umask(0)
    os.umask(m)
    return m


@contextlib.contextmanager
def _progress(enabled: bool, label: str):
    if not enabled:
        yield None
        return
    from rich.progress import BarColumn, DownloadColumn, Progress, TextColumn, TransferSpeedColumn

    with Progress(TextColumn("{task.description}"), BarColumn(), DownloadColumn(), TransferSpeedColumn(),
                  transient=True) as prog:
        task = prog.add_task(label, total=None)

        def cb(done: int, total: Optional[int]) -> None:
            prog.update(task, completed=done, total=total)
        yield cb


def info_dict(info: DatasetInfo) -> dict[str, Any]:
    return asdict(info)
