"""Pieces every typer command shares: choices from registries, the recorded command line, output.

- :func:`choice_enum` turns a :class:`~biaskit.registry.Registry` (or a list of names) into the
  ``Enum`` typer needs for ``--scorer``-style options, so the CLI's choices are the registry's and
  cannot drift from it.
- :func:`command_line` is the one place that writes the command line a run records (summary.json,
  release.json, run logs): ``biaskit`` + the real arguments, with secret values masked.
- :func:`echo` / :func:`echo_error` print user-supplied text literally (no rich markup, so
  ``pip install 'biaskit[annotation]'`` keeps its brackets) and redacted.
- :func:`console` is the one rich ``Console`` commands print tables and messages with: literal
  (no markup, emoji codes or highlighting: a model path ``runs/[v2]`` or a sentence with ``:fire:``
  prints as written; styling is done with ``rich.text.Text`` objects, never with markup in strings),
  and, when its stream is not a terminal (pipes, logs, CI), wide enough that table rows never wrap
  (``$COLUMNS`` still wins when set).
- :func:`plain_flag_help` keeps ``--help`` from printing a value type after options that take none.
- :func:`offer`: a hint that names a flag only when the running command has it (a hint that names an
  option where the user is, flag or ``biaskit.toml`` key: :func:`biaskit.options.say`).
"""

from __future__ import annotations

import os
import shlex
import sys
from collections.abc import Iterable, Sequence
from enum import Enum
from typing import overload

from .redact import MASK, redact, register_secret

# options whose value is a secret: never recorded or echoed
SECRET_OPTIONS = ("--token", "--api-key", "--password", "--hf-token")


def choice_enum(name: str, choices: Iterable[str]) -> type[Enum]:
    """An ``Enum`` (str values) whose members are ``choices``: a registry's names or any strings."""
    names = choices.names() if hasattr(choices, "names") else list(choices)
    return Enum(name, {n: n for n in names}, type=str)  # type: ignore[return-value]


@overload
def value(x: None) -> None: ...
@overload
def value(x: Enum | str) -> str: ...
def value(x: Enum | str | None) -> str | None:
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


_INVOKED: list[str] | None = None  # the arguments biaskit.cli.main was called with


def remember_argv(argv: Sequence[str]) -> None:
    """Called by :func:`biaskit.cli.main`: the arguments of this invocation, for :func:`command_line`
    (in-process calls such as ``main([...])`` in tests or a pipeline runner have no ``sys.argv``)."""
    global _INVOKED
    _INVOKED = list(argv)


def command_line(argv: Sequence[str] | None = None) -> str:
    """The command line of this run as a user would type it (``biaskit evaluate pairs ...``),
    with secrets masked. ``argv`` defaults to the arguments :func:`biaskit.cli.main` was called
    with, else ``sys.argv[1:]``; for other calls made from Python pass the arguments explicitly or
    get ``biaskit <python>``."""
    if argv is None and _INVOKED is not None:
        argv = _INVOKED
    if argv is None:
        prog = sys.argv[0] if sys.argv else ""
        if not prog.endswith("biaskit") and "biaskit" not in prog.rsplit("/", 1)[-1]:
            return "biaskit <called from python>"
        argv = sys.argv[1:]
    return redact(shlex.join(["biaskit", *mask_secret_args(list(argv))]))


# ------------------------------------------------------------------------------------------ Ctrl-C
_SAVED: list[str] = []  # what the interrupted work had saved, as each layer that knows says it


def saved_on_interrupt(what: str, *, first: bool = False) -> None:
    """Say, as Ctrl-C stops the work, what is saved (``3 of 8 cat_intrasentence jobs are in X``);
    ``first``: an outer layer (a pipeline stage) whose words come before the inner ones'. Printed by
    :func:`interrupted_message` when the command ends."""
    _SAVED.insert(0, what) if first else _SAVED.append(what)


def interrupted_message(argv: Sequence[str] | None = None) -> str:
    """The one line a command interrupted by Ctrl-C ends with: what was saved and how to resume."""
    saved = "; ".join(dict.fromkeys(_SAVED)) or (
        "everything finished before it is saved (outputs are written as work finishes, and the caches keep "
        "every answer)"
    )
    _SAVED.clear()
    return f"interrupted (Ctrl-C): {saved}. To resume, run the same command again: {command_line(argv)}"


def echo(text: str = "", *, err: bool = False) -> None:
    """Print ``text`` literally (no markup interpretation), redacted."""
    stream = sys.stderr if err else sys.stdout
    stream.write(redact(str(text)) + "\n")
    stream.flush()


def echo_error(message: str) -> None:
    """``error: <message>`` on stderr, literally and redacted (the one-line error format)."""
    echo(f"error: {message}", err=True)


# Width of a console whose stream is not a terminal: wide enough that a table never folds a cell
# (a pipe or a log has no width; rich would otherwise assume 80 columns and wrap "gemma3-270m").
PIPE_WIDTH = 1000


def _isatty(stream) -> bool:
    try:
        return bool(stream.isatty())
    except (AttributeError, ValueError):  # closed or replaced stream
        return False


def console(*, stderr: bool = False, **kwargs):
    """A rich ``Console`` for command output: literal text (``markup=False``, ``emoji=False``,
    ``highlight=False``) and no wrapping when piped (see the module docstring)."""
    from rich.console import Console

    stream = sys.stderr if stderr else sys.stdout
    if not _isatty(stream) and not os.environ.get("COLUMNS", "").isdigit():
        kwargs.setdefault("width", PIPE_WIDTH)
    kwargs.setdefault("markup", False)
    kwargs.setdefault("emoji", False)
    kwargs.setdefault("highlight", False)
    return Console(stderr=stderr, **kwargs)


def plain_flag_help() -> None:
    """Make typer's rich ``--help`` panel show no value type for flags (``--quiet``, ``--help``).

    Why: typer >= 0.2x renders the options panel with ``param.display_type_rich(ctx)`` for *every*
    option, and for an option declared ``bool = typer.Option(False, "--quiet")`` (with or without
    ``--x/--no-x``, ``is_flag=True`` or ``Annotated``, all the same) that returns the type of the
    annotation, ``<bool>``, although a flag takes no value; the plain-text help (``get_help_record``)
    already skips flags. We give flags (and counters) no type column, for every command at once.
    Idempotent; a no-op with a typer that has no ``TyperOption.display_type_rich``.
    """
    try:
        from typer.core import TyperOption
    except ImportError:  # pragma: no cover - older typer: no such panel column
        return
    original = getattr(TyperOption, "display_type_rich", None)
    if original is None or getattr(original, "_biaskit_plain_flags", False):
        return

    def display_type_rich(self, ctx):
        if getattr(self, "is_flag", False) or getattr(self, "count", False):
            return self.metavar  # None unless a command set one on purpose: nothing to show
        return original(self, ctx)

    display_type_rich._biaskit_plain_flags = True  # type: ignore[attr-defined]
    TyperOption.display_type_rich = display_type_rich  # type: ignore[method-assign]


# ------------------------------------------------------------------------------------------ hints
# (a hint that names an option, a flag under a command or a biaskit.toml key under `biaskit run`:
# biaskit.options.say / tell / unset)


def current_options() -> set[str] | None:
    """The flags of the command running now (None outside a command: a library call)."""
    try:
        from typer._click.globals import get_current_context  # typer's own click (typer >= 0.2x)
    except ImportError:  # pragma: no cover - an older typer uses click itself
        from click import get_current_context  # type: ignore[no-redef]  # the same function, from click
    ctx = get_current_context(silent=True)
    if ctx is None:
        return None
    return {o for p in ctx.command.params for o in (*getattr(p, "opts", ()), *getattr(p, "secondary_opts", ()))}


def has_option(name: str) -> bool:
    """Whether a hint may offer option ``name`` (``skip_invalid``): the running command has the flag
    (a library call: yes). A reader shared by many commands offers only what the command can take."""
    opts = current_options()
    return opts is None or "--" + name.replace("_", "-") in opts


def offer(name: str, text: str, otherwise: str = "") -> str:
    """``text`` (a hint naming the flag of ``name``) when the running command has that option, else
    ``otherwise``."""
    return text if has_option(name) else otherwise
