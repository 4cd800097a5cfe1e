"""What the golden tests (tests/test_*_golden*.py) share: :func:`run`, a ``biaskit`` command run in this
process with its output and errors in one text, in the order they were written (conftest's ``run_cli``
needs ``capsys``, which a module-scoped fixture that runs every case once cannot take)."""

from __future__ import annotations

import contextlib
import io


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
