"""Pieces every typer command shares: choices from registries, the recorded command line, output.

- :func:`choice_enum` turns a :class:`~biaskit.registry.Registry` (or a list of names) into the
  ``Enum`` typer needs for ``--scorer``-style options, so the CLI's choices are the registry's and
  cannot drift from it.
- :func:`command_line` is the one place that writes the command line a run records (summary.json,
  release.json, run logs): ``biaskit`` + the real arguments, with secret values masked.
- :func:`echo` / :func:`echo_error` print user-supplied text literally (no rich markup, so
  ``pip install 'biaskit[annotation]'`` keeps its brackets) and redacted.
"""
from __future__ import annotations

import shlex
import sys
from enum import Enum
from typing import Iterable, Optional, Sequence

from .redact import MASK, redact, register_secret

# options whose value is a secret: never recorded or echoed
SECRET_OPTIONS = ("--token", "--api-key", "--password", "--hf-token")


def choice_enum(name: str, choices: Iterable[str] | object) -> type[Enum]:
    """An ``Enum`` (str values) whose members are ``choices``: a registry's names or any strings."""
    names = choices.names() if hasattr(choices, "names") else list(choices)  # type: ignore[union-attr]
    return Enum(name, {n: n for n in names}, type=str)  # type: ignore[return-value]


def value(x) -> Optional[str]:
    """An option's plain value: ``Enum`` members give their value, ``None`` stays ``None``."""
    if x is None:
        return None
    return x.value if isinstance(x, Enum) else str(x)


def mask_secret_args(argv: Sequence[str]) -> list[str]:
    """``argv`` with the values of :data:`SECRET_OPTIONS` replaced by ``***`` (``--token X`` and
    ``--token=X``); the masked values are registered so that later output is redacted too."""
    out: list[str] = []
    hide_next = False
    for a in argv:
        if hide_next:
            register_secret(a)
            out.append(MASK)
            hide_next = False
            continue
        opt, eq, val = a.partition("=")
        if opt in SECRET_OPTIONS:
            if eq:
                register_secret(val)
                out.append(f"{opt}={MASK}")
            else:
                out.append(a)
                hide_next = True
            continue
        out.append(a)
    return out


def command_line(argv: Optional[Sequence[str]] = None) -> str:
    """The command line of this run as a user would type it (``biaskit evaluate pairs ...``),
    with secrets masked. ``argv`` defaults to ``sys.argv[1:]``; for calls made from Python (tests,
    ``biaskit run``) pass the arguments explicitly or get ``biaskit <python>``."""
    if argv is None:
        prog = sys.argv[0] if sys.argv else ""
        if not prog.endswith("biaskit") and "biaskit" not in prog.rsplit("/", 1)[-1]:
            return "biaskit <called from python>"
        argv = sys.argv[1:]
    return redact(shlex.join(["biaskit", *mask_secret_args(list(argv))]))


def echo(text: str = "", *, err: bool = False) -> None:
    """Print ``text`` literally (no markup interpretation), redacted."""
    stream = sys.stderr if err else sys.stdout
    stream.write(redact(str(text)) + "\n")
    stream.flush()


def echo_error(message: str) -> None:
    """``error: <message>`` on stderr, literally and redacted (the one-line error format)."""
    echo(f"error: {message}", err=True)
