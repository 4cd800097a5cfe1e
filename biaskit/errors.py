"""Errors that users see as one clear message (never a traceback).

Every error names what went wrong, where (file, row) and how to fix it. The CLI root catches
:class:`BiaskitError` and prints ``str(err)`` with exit code 2.
"""

from __future__ import annotations

import os


class BiaskitError(Exception):
    """Base class for all errors biaskit raises on purpose."""


class InputError(BiaskitError):
    """Bad input data: names the file, the row (1-based data row, or line for JSONL) and a fix.

    ``arg`` is the command-line argument that named the file (``--data``); the CLI root fills it in
    when a stage raised the error without it (see :func:`biaskit.paths.argument_for`).
    """

    def __init__(
        self,
        message: str,
        *,
        path: str | os.PathLike | None = None,
        row: int | None = None,
        column: str | None = None,
        fix: str | None = None,
        arg: str | None = None,
    ):
        self.message = message
        self.path = str(path) if path is not None else None
        self.row = row
        self.column = column
        self.fix = fix
        self.arg = arg  # the command-line argument that named the file (--data), when known
        super().__init__(self.__str__())

    def __str__(self) -> str:
        if self.path is None and self.row is None and not self.column:
            # nothing to locate (a setting, a choice): the message alone, under any command or `biaskit run`
            return self.message + (f" Fix: {self.fix}" if self.fix else "")
        where = self.path or "<input>"
        if self.arg and self.path is not None:
            where = f"{self.arg} {where}"
        if self.row is not None:
            where += f", row {self.row}"
        if self.column:
            where += f", column '{self.column}'"
        text = f"{where}: {self.message}"
        if self.fix:
            text += f" Fix: {self.fix}"
        return text


class UnknownNameError(BiaskitError, KeyError):
    """A registry lookup failed; the message lists close matches ("did you mean")."""

    def __str__(self) -> str:
        return str(self.args[0]) if self.args else "unknown name"


class MissingDependencyError(BiaskitError, ImportError):
    """An optional dependency is not installed; the message names the extra to install."""

    def __init__(self, package: str, extra: str, purpose: str = ""):
        msg = (
            f"'{package}' is required{(' for ' + purpose) if purpose else ''} but is not installed. "
            f"Fix: install biaskit's '{extra}' extra: pip install -e '.[{extra}]' in your biaskit clone "
            f"(or pip install 'biaskit[{extra}] @ git+URL')"
        )
        super().__init__(msg)


def require(module: str, extra: str, purpose: str = ""):
    """Import an optional module or raise :class:`MissingDependencyError` naming the extra."""
    import importlib

    try:
        return importlib.import_module(module)
    except ImportError as exc:  # pragma: no cover - depends on the environment
        raise MissingDependencyError(module.split(".")[0], extra, purpose) from exc
