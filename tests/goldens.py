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
