"""Public bias datasets biaskit knows: where they live, their licence, citation and checksum.

The registry is ``data/datasets.json`` (package data ``biaskit.data``). :func:`download` fetches a
release with :mod:`urllib` into a temporary file next to the destination, hashes it while it
streams, checks the recorded sha256 (when one is recorded) and only then renames it into place, so
an interrupted or corrupted download never leaves a file under the final name. A sidecar
``<file>.source.json`` records URL, sha256, time, licence and citation. Offline, the error names the
URL and how to proceed.

A **mirror** is a local folder (or file) that already holds a release, e.g. a lab share or a copy
made on a machine with internet: ``--mirror DIR`` (``DownloadOptions(mirror=DIR)``) copies ``DIR/<filename>`` (or
``DIR/*/<filename>``) instead of going to the network, through the same hash-verify-rename path, so
a mirror file that differs from the recorded checksum is refused exactly like a bad download. When
the mirror lacks the file the URL is used.

Entries with ``files`` are several files under one base URL (e.g. the sent-bias SEAT tests); they
are downloaded into the folder ``filename`` as a whole (atomically), and their "sha256" is the
digest of the manifest (one ``<sha256>  <file>`` line per file, sorted by name).
"""

from __future__ import annotations

import contextlib
import hashlib
import os
import tempfile
from collections.abc import Callable, Sequence
from dataclasses import dataclass
from datetime import UTC, datetime
from pathlib import Path
from typing import Any, ClassVar

from .errors import BiaskitError, InputError
from .io import read_json, sha256_file
from .options import Options, option, say
from .paths import safe_component
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
    sha256: str | None = None
    rows: int | None = None
    notes: str = ""
    files: tuple[str, ...] | None = None  # several files under the base URL ``url`` (ends with "/")


@dataclass
class DownloadResult:
    name: str
    path: Path
    url: str
    sha256: str
    bytes: int
    verified: bool | None  # True: matched the recorded checksum; None: no checksum recorded
    skipped: bool = False  # already present (and verified when a checksum is recorded)
    mirror: Path | None = None  # the local mirror file/folder it was copied from (None: downloaded)


@dataclass
class VerifyResult:
    name: str
    path: Path
    sha256: str
    expected: str | None
    status: str  # "ok" | "mismatch" | "no-checksum"

    @property
    def message(self) -> str:
        what = "manifest sha256" if self.path.is_dir() else "sha256"
        if self.status == "ok":
            return f"{self.path}: {what} {self.sha256} matches the recorded checksum of '{self.name}'."
        if self.status == "no-checksum":
            return (
                f"{self.path}: no checksum recorded for '{self.name}'; {what} of this "
                f"{'folder' if self.path.is_dir() else 'file'} is {self.sha256} (record it to pin this version)."
            )
        return f"{self.path}: {what} {self.sha256} does not match the recorded {self.expected} for '{self.name}'."


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
    doc = read_json(
        path, fix="repair the registry file.", missing_fix="reinstall biaskit or unset BIASKIT_DATASETS_FILE."
    )
    reg: Registry[DatasetInfo] = Registry("dataset")
    fields = set(DatasetInfo.__dataclass_fields__)
    if not isinstance(doc, dict) or not isinstance(doc.get("datasets") or {}, dict):
        raise InputError(
            'not a dataset registry: expected {"version": 1, "datasets": {NAME: {...}}}.',
            path=path,
            fix="repair the registry file (see biaskit's data/datasets.json).",
        )
    for name, entry in (doc.get("datasets") or {}).items():
        if not isinstance(entry, dict):
            raise InputError(
                f"dataset '{name}': expected an object of fields.",
                path=path,
                fix="repair the registry file (see biaskit's data/datasets.json).",
            )
        unknown = set(entry) - fields
        try:
            kw = {k: v for k, v in entry.items() if k in fields and k != "name"}
            if kw.get("files") is not None:
                files = kw["files"]
                if not isinstance(files, list) or not files:
                    raise InputError(
                        f"dataset '{name}': 'files' must be a non-empty list of file names.",
                        path=path,
                        fix="list the file names under the base URL, or drop 'files'.",
                    )
                kw["files"] = tuple(
                    safe_component(
                        f,
                        what=f"dataset '{name}': file name",
                        path=path,
                        fix="list plain file names (no folders) under the base URL.",
                    )
                    for f in files
                )
            if "filename" in kw:  # the name the download gets inside --out: never a path of its own
                kw["filename"] = safe_component(
                    kw["filename"],
                    what=f"dataset '{name}': filename",
                    path=path,
                    max_len=128,
                    fix='give a plain file or folder name, e.g. "crows_pairs_anonymized.csv".',
                )
            info = DatasetInfo(name=name, **kw)
        except TypeError as exc:
            raise InputError(
                f"dataset '{name}': {exc}.", path=path, fix="each entry needs title, url, filename, format and licence."
            ) from None
        if unknown:
            raise InputError(
                f"dataset '{name}': unknown field(s) {sorted(unknown)}.",
                path=path,
                fix=f"use only {sorted(fields - {'name'})}.",
            )
        if info.sha256 is not None and (
            len(info.sha256) != 64 or any(c not in "0123456789abcdef" for c in info.sha256)
        ):
            raise InputError(
                f"dataset '{name}': sha256 must be 64 lower-case hex digits or null.",
                path=path,
                fix="paste the output of `sha256sum FILE` or use null.",
            )
        reg.register(name, info, help=info.title)
    return reg


def get_dataset(name: str, registry: str | Path | None = None) -> DatasetInfo:
    """Look a dataset up by name ("did you mean" on typos)."""
    return load_registry(registry).get(name)


def list_datasets(registry: str | Path | None = None) -> list[DatasetInfo]:
    reg = load_registry(registry)
    return [reg.get(n) for n in reg.names()]


def manifest_digest(folder: str | Path, files: Sequence[str]) -> tuple[str, dict[str, str]]:
    """``(digest, {file: sha256})`` of a multi-file release: sha256 over ``"<sha256>  <file>\\n"`` lines
    sorted by file name (the format of ``sha256sum``)."""
    folder = Path(folder)
    per = {f: sha256_file(folder / f) for f in sorted(files)}
    text = "".join(f"{d}  {f}\n" for f, d in per.items())
    return hashlib.sha256(text.encode("utf-8")).hexdigest(), per


def verify(name: str, file: str | Path, registry: str | Path | None = None) -> VerifyResult:
    """Compare a file's sha256 (a folder's manifest digest for multi-file releases) with the recorded one."""
    info = get_dataset(name, registry)
    path = Path(file)
    if info.files:
        missing = [f for f in info.files if not (path / f).is_file()]
        if not path.is_dir() or missing:
            raise InputError(
                "folder not found."
                if not path.exists()
                else f"is not a complete '{name}' folder ({len(missing)} of {len(info.files)} files missing, "
                f"e.g. {missing[0]})."
                if path.is_dir()
                else "is not a folder.",
                path=path,
                fix=f"pass the downloaded folder, e.g. DIR/{info.filename}.",
            )
        digest, _ = manifest_digest(path, info.files)
    else:
        if not path.is_file():
            raise InputError(
                "file not found." if not path.exists() else "is not a file.",
                path=path,
                fix=f"pass the downloaded file, e.g. DIR/{info.filename}.",
            )
        digest = sha256_file(path)
    if info.sha256 is None:
        status = "no-checksum"
    else:
        status = "ok" if digest == info.sha256 else "mismatch"
    return VerifyResult(name=name, path=path, sha256=digest, expected=info.sha256, status=status)


def find_in_mirror(info: DatasetInfo, mirror: str | Path) -> Path | None:
    """The release's file (folder, for multi-file releases) inside a local mirror, or None.

    ``mirror`` may be the file itself, or a folder holding ``<filename>`` directly or one level down
    (``mirror/crows_pairs/crows_pairs_anonymized.csv``). A multi-file release is found as
    ``mirror/<filename>/``, or any sub-folder of ``mirror`` (or ``mirror`` itself) holding all its files.
    """
    m = Path(mirror).expanduser()
    if info.files:
        if not m.is_dir():
            return None
        cands = [m / info.filename, m] + sorted(p for p in m.iterdir() if p.is_dir())
        return next((c for c in cands if c.is_dir() and all((c / f).is_file() for f in info.files)), None)
    if m.is_file():
        return m
    if not m.is_dir():
        return None
    if (m / info.filename).is_file():
        return m / info.filename
    return next((p for p in sorted(m.glob(f"*/{info.filename}")) if p.is_file()), None)


def _copy(
    src: Path, dest_dir: Path, filename: str, on_progress: Callable[[int, int | None], None] | None = None
) -> tuple[Path, str, int]:
    """Copy a mirror file into a temporary file in ``dest_dir``, hashing it; return (tmp path, sha256, bytes)."""
    fd, tmp = tempfile.mkstemp(prefix=f".{filename}.", suffix=".part", dir=dest_dir)
    h = hashlib.sha256()
    n = 0
    total = src.stat().st_size
    try:
        with os.fdopen(fd, "wb") as fh, open(src, "rb") as inp:
            for block in iter(lambda: inp.read(1 << 20), b""):
                fh.write(block)
                h.update(block)
                n += len(block)
                if on_progress:
                    on_progress(n, total)
            fh.flush()
            os.fsync(fh.fileno())
    except OSError as exc:
        with contextlib.suppress(FileNotFoundError):
            os.unlink(tmp)
        raise BiaskitError(
            f"cannot copy {src} from the mirror: {exc.strerror or exc}. Fix: check the mirror "
            "folder, or download without --mirror"
        ) from None
    except BaseException:
        with contextlib.suppress(FileNotFoundError):
            os.unlink(tmp)
        raise
    return Path(tmp), h.hexdigest(), n


def _fetch(
    url: str,
    dest_dir: Path,
    filename: str,
    timeout: float,
    on_progress: Callable[[int, int | None], None] | None = None,
) -> tuple[Path, str, int]:
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
                with urllib.request.urlopen(req, timeout=timeout) as resp:  # http(s) URLs from the registry
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
                        raise BiaskitError(
                            f"download of {url} was cut short ({n} of {total} bytes). Fix: run the command again"
                        )
            except urllib.error.HTTPError as exc:
                raise BiaskitError(
                    f"cannot download {url}: HTTP {exc.code} {exc.reason}. Fix: check the URL "
                    "(the upstream file may have moved) or pass --url / --mirror with a copy"
                ) from None
            except http.client.IncompleteRead as exc:
                raise BiaskitError(
                    f"download of {url} was cut short ({n + len(exc.partial)} bytes received). "
                    "Fix: run the command again"
                ) from None
            except (urllib.error.URLError, http.client.HTTPException, TimeoutError, ConnectionError, OSError) as exc:
                reason = getattr(exc, "reason", exc)
                raise BiaskitError(
                    f"cannot download {url}: {reason} (offline?). Fix: connect to the internet, "
                    "or copy the file from a mirror (--mirror DIR, or the environment variable "
                    "BIASKIT_DATA_MIRROR=DIR), or download it by hand and "
                    "check it with `biaskit data verify`"
                ) from None
            fh.flush()
            os.fsync(fh.fileno())
    except BaseException:
        with contextlib.suppress(FileNotFoundError):
            os.unlink(tmp)
        raise
    return Path(tmp), h.hexdigest(), n


def download(name: str, opts: DownloadOptions, *, progress: bool = False) -> DownloadResult:
    """Download dataset ``name`` into ``opts.out`` (see the module docstring) with the options of
    ``biaskit data download`` (Python: ``DownloadOptions.from_kwargs(out_dir=..., registry=...)``).

    ``url`` overrides the registry URL (an HTTP mirror, or a local stand-in in tests); ``mirror`` is a
    local folder (or file) copied instead of the network when it holds the release. The recorded
    sha256 is enforced on every path. An existing file is kept unless ``force`` (and re-verified
    when a checksum is recorded; a mismatching existing file is an error, never silently replaced).
    """
    url, mirror, force, timeout = opts.url, opts.mirror, opts.force, opts.timeout
    info = get_dataset(name, opts.registry)
    out_dir = Path(opts.out)
    if out_dir.exists() and not out_dir.is_dir():
        raise BiaskitError(f"{out_dir}: exists and is not a folder. Fix: pass another {say('out')}")
    created = [] if out_dir.exists() else [out_dir, *(p for p in out_dir.parents if not p.exists())]
    out_dir.mkdir(parents=True, exist_ok=True)
    try:
        return _download(info, name, out_dir, url=url, mirror=mirror, force=force, timeout=timeout, progress=progress)
    except BaseException:
        for d in created:  # a failed download leaves no empty folder behind
            with contextlib.suppress(OSError):
                d.rmdir()
        raise


def _download(
    info: DatasetInfo,
    name: str,
    out_dir: Path,
    *,
    url: str | None,
    mirror: str | Path | None,
    force: bool,
    timeout: float,
    progress: bool,
) -> DownloadResult:
    if info.files:
        return _download_files(info, out_dir, url=url, mirror=mirror, force=force, timeout=timeout, progress=progress)
    dest = out_dir / info.filename
    if dest.exists() and not force:
        digest = sha256_file(dest)
        if info.sha256 and digest != info.sha256:
            raise BiaskitError(
                f"{dest}: exists but its sha256 {digest} does not match the recorded {info.sha256}. "
                "Fix: pass --force to download it again"
            )
        return DownloadResult(
            name,
            dest,
            url or info.url,
            digest,
            dest.stat().st_size,
            verified=True if info.sha256 else None,
            skipped=True,
        )
    src_file = find_in_mirror(info, mirror) if mirror is not None else None
    src = str(src_file) if src_file else (url or info.url)
    from .progress import progress as bar

    with bar(None, info.filename, enabled=progress, bytes=True) as b:
        if src_file:
            tmp, digest, n = _copy(src_file, out_dir, info.filename, b.update)
        else:
            tmp, digest, n = _fetch(src, out_dir, info.filename, timeout, b.update)
    if info.sha256 and digest != info.sha256:
        tmp.unlink(missing_ok=True)
        what = f"the mirror file {src_file}" if src_file else src
        raise BiaskitError(
            f"checksum mismatch for '{name}' from {what}: got sha256 {digest}, expected "
            f"{info.sha256}; nothing was written. Fix: "
            + (
                "the mirror holds another version of the file: replace it, or download without --mirror"
                if src_file
                else "the upstream file changed or the download is corrupt: retry, or check the release"
            )
        )
    os.chmod(tmp, 0o644 & ~_umask())
    os.replace(tmp, dest)
    _write_source(dest.with_name(dest.name + ".source.json"), info, url or info.url, src_file, digest, n)
    return DownloadResult(name, dest, src, digest, n, verified=True if info.sha256 else None, mirror=src_file)


def _write_source(
    path: Path,
    info: DatasetInfo,
    url: str,
    mirror: Path | None,
    digest: str,
    n: int,
    files: dict[str, str] | None = None,
) -> None:
    from .io import write_json

    write_json(
        path,
        {
            "dataset": info.name,
            "url": url,
            **({"mirror": str(mirror)} if mirror else {}),
            "sha256": digest,
            **({"files": files} if files else {}),
            "bytes": n,
            "verified": bool(info.sha256),
            "downloaded_at": datetime.now(UTC).isoformat(timespec="seconds"),
            "licence": info.licence,
            "citation": info.citation,
            "homepage": info.homepage,
        },
    )


def _download_files(
    info: DatasetInfo,
    out_dir: Path,
    *,
    url: str | None,
    mirror: str | Path | None,
    force: bool,
    timeout: float,
    progress: bool,
) -> DownloadResult:
    """A multi-file release: every file into a temporary folder, verified, then published as one folder."""
    dest = out_dir / info.filename
    base = url or info.url
    if not base.endswith("/"):
        base += "/"
    assert info.files
    if dest.is_dir() and not force and all((dest / f).is_file() for f in info.files):
        digest, _ = manifest_digest(dest, info.files)
        if info.sha256 and digest != info.sha256:
            raise BiaskitError(
                f"{dest}: exists but its manifest sha256 {digest} does not match the recorded "
                f"{info.sha256}. Fix: pass --force to download it again"
            )
        n = sum((dest / f).stat().st_size for f in info.files)
        return DownloadResult(info.name, dest, base, digest, n, verified=True if info.sha256 else None, skipped=True)
    src_dir = find_in_mirror(info, mirror) if mirror is not None else None
    from .io import atomic_dir
    from .progress import progress as bar

    with atomic_dir(dest) as tmp:
        n = 0
        with bar(len(info.files), info.filename, enabled=progress, unit="files") as b:
            for f in info.files:
                part, _, k = _copy(src_dir / f, tmp, f) if src_dir else _fetch(base + f, tmp, f, timeout)
                os.replace(part, tmp / f)
                n += k
                b.advance()
        digest, per = manifest_digest(tmp, info.files)
        if info.sha256 and digest != info.sha256:
            what = f"the mirror folder {src_dir}" if src_dir else base
            raise BiaskitError(
                f"checksum mismatch for '{info.name}' from {what}: manifest sha256 {digest}, "
                f"expected {info.sha256}; nothing was written. Fix: check the files (`biaskit data "
                "verify` prints each file's sha256 in the .source.json) or retry"
            )
    _write_source(dest.with_name(dest.name + ".source.json"), info, base, src_dir, digest, n, files=per)
    return DownloadResult(
        info.name,
        dest,
        str(src_dir) if src_dir else base,
        digest,
        n,
        verified=True if info.sha256 else None,
        mirror=src_dir,
    )


def _umask() -> int:
    m = os.umask(0)
    os.umask(m)
    return m


# ------------------------------------------------------------------------------------------ the commands' options
def registry_option() -> Any:
    """``--registry FILE`` (hidden: another datasets.json, for tests and mirrors), shared by the data commands."""
    return option(None, "--registry", path="in_file", path_kw={"hidden": True}, help="Another datasets.json.")


class DataListOptions(Options):
    """``biaskit data list`` (:func:`list_datasets`)."""

    command: ClassVar[str] = "data list"

    registry: Path | None = registry_option()


class DownloadOptions(Options):
    """``biaskit data download NAME`` (:func:`download`; NAME is the command's argument)."""

    command: ClassVar[str] = "data download"

    out: Path = option(..., "--out", path="out_dir", python="out_dir", help="Folder to write the file into.")
    url: str | None = option(None, "--url", help="Download from this URL (an HTTP mirror) instead of the registry URL.")
    mirror: Path | None = option(
        None,
        "--mirror",
        path="in_path",
        path_kw={"envvar": "BIASKIT_DATA_MIRROR", "text": False},
        help="Local folder holding a copy (DIR/FILE or DIR/*/FILE): copied instead "
        "of downloaded when present, checked against the recorded checksum. "
        "Default: $BIASKIT_DATA_MIRROR.",
    )
    force: bool = option(False, "--force", help="Download again even if the file is already there.")
    timeout: float = option(60.0, "--timeout", gt=0, help="Network timeout in seconds.")
    registry: Path | None = registry_option()


class DataVerifyOptions(Options):
    """``biaskit data verify NAME FILE`` (:func:`verify`; NAME and FILE are the command's arguments)."""

    command: ClassVar[str] = "data verify"

    registry: Path | None = registry_option()
