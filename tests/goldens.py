"""Helpers shared by the golden tests (tests/test_*_golden*.py): run a command in this process as the
console script runs it, and list the files a case wrote."""

from __future__ import annotations

import contextlib
import io
from pathlib import Path


def run(argv: list[str]) -> tuple[int, str]:
    """``biaskit ARGV`` in this process, as the console script runs it: (exit code, its output)."""
    from biaskit.cli import main

    buf = io.StringIO()
    with contextlib.redirect_stdout(buf), contextlib.redirect_stderr(buf):
        try:
            main(argv)
            code = 0
        except SystemExit as exc:
            code = exc.code if isinstance(exc.code, int) else 1
    return code, buf.getvalue()


def outputs(folder: Path) -> dict[str, Path]:
    """Every file under FOLDER by its path relative to it (none when FOLDER does not exist)."""
    return {str(p.relative_to(folder)): p for p in sorted(folder.rglob("*")) if p.is_file()} if folder.exists() else {}


def compare(want_dir: Path, said: str, got: dict[str, Path], *, normalise, kept_whole, digest, update: bool) -> None:
    """Compare a case's terminal output ``said`` and files ``got`` with the recording in ``want_dir``:
    ``output.txt`` (the output after ``normalise(name, text)``), the files ``kept_whole(rel)`` says are
    recorded in full (compared first: their difference is the useful message), and ``MANIFEST``
    (``digest(rel, path)`` of every file). ``update`` (BIASKIT_UPDATE_GOLDEN=1): write the recording instead."""
    import shutil

    manifest = {rel: digest(rel, p) for rel, p in got.items()}
    if update:
        shutil.rmtree(want_dir, ignore_errors=True)
        want_dir.mkdir(parents=True)
        (want_dir / "output.txt").write_text(normalise("<output>", said), encoding="utf-8")
        (want_dir / "MANIFEST").write_text("".join(f"{h}  {rel}\n" for rel, h in manifest.items()))
        for rel, p in got.items():
            if kept_whole(rel):
                dest = want_dir / rel
                dest.parent.mkdir(parents=True, exist_ok=True)
                dest.write_text(normalise(rel, p.read_text(encoding="utf-8")), encoding="utf-8")
        return
    assert normalise("<output>", said) == (want_dir / "output.txt").read_text(encoding="utf-8"), "terminal output"
    for rel, p in got.items():
        if kept_whole(rel):
            assert normalise(rel, p.read_text(encoding="utf-8")) == (want_dir / rel).read_text(encoding="utf-8"), rel
    want = dict(line.split("  ", 1)[::-1] for line in (want_dir / "MANIFEST").read_text().splitlines())
    assert manifest == want, {
        k: (manifest.get(k), want.get(k)) for k in set(manifest) | set(want) if manifest.get(k) != want.get(k)
    }
