"""One progress-bar helper for every stage (scoring, generation, translation, downloads, pushes).

``with progress(total, "scoring") as bar: bar.advance(n)``. The bar is drawn on stderr with rich,
disappears when done (``transient``), and is silent when disabled (``-q``), when stderr is not a
terminal (pipes, CI logs, tests), or when ``BIASKIT_NO_PROGRESS`` is set. ``total=None`` shows a
spinner-style bar of unknown length; ``bytes=True`` shows transfer size and speed (downloads).
"""

from __future__ import annotations

import contextlib
import os
import sys
from collections.abc import Iterator
from typing import Any


class Bar:
    """What :func:`progress` yields: ``advance(n)`` and ``update(completed, total)``; no-ops when silent."""

    def __init__(self, prog=None, task=None):
        self._prog = prog
        self._task = task

    @property
    def visible(self) -> bool:
        return self._prog is not None

    def advance(self, n: int = 1) -> None:
        if self._prog is not None:
            self._prog.advance(self._task, n)

    def update(self, completed: int | None = None, total: int | None = None) -> None:
        if self._prog is not None:
            kw = {}
            if completed is not None:
                kw["completed"] = completed
            if total is not None:
                kw["total"] = total
            self._prog.update(self._task, **kw)

    __call__ = advance  # ``advance = bar`` reads naturally where a callable is expected


def enabled_by_default() -> bool:
    """Bars are drawn only on an interactive stderr and when ``BIASKIT_NO_PROGRESS`` is unset."""
    if os.environ.get("BIASKIT_NO_PROGRESS"):
        return False
    try:
        return sys.stderr.isatty()
    except (AttributeError, ValueError):  # closed or replaced stderr
        return False


@contextlib.contextmanager
def progress(
    total: int | None, label: str, *, enabled: bool = True, unit: str = "", bytes: bool = False
) -> Iterator[Bar]:
    """A transient rich progress bar over ``total`` items (``unit`` is printed after the count)."""
    if not enabled or not enabled_by_default() or total == 0:
        yield Bar()
        return
    from rich.console import Console
    from rich.progress import (
        BarColumn,
        DownloadColumn,
        MofNCompleteColumn,
        Progress,
        TextColumn,
        TimeElapsedColumn,
        TimeRemainingColumn,
        TransferSpeedColumn,
    )

    cols: list = [TextColumn("[bold]{task.description}"), BarColumn()]
    if bytes:
        cols += [DownloadColumn(), TransferSpeedColumn()]
    else:
        cols += [MofNCompleteColumn()]
        if unit:
            cols.append(TextColumn(unit))
        cols += [TimeElapsedColumn(), TimeRemainingColumn()]
    with Progress(*cols, transient=True, console=Console(stderr=True)) as prog:
        task = prog.add_task(label.replace("[", r"\["), total=total)
        yield Bar(prog, task)


@contextlib.contextmanager
def library_bars(enabled: bool = True) -> Iterator[None]:
    """Let transformers' and huggingface_hub's own tqdm bars ("Loading weights", "Writing model
    shards", ...) show only where biaskit's bars would: not under ``-q``, not when stderr is not a
    terminal (a log or a pipe would collect every refresh), not with ``BIASKIT_NO_PROGRESS``.
    Wrap model loading in it; the libraries' previous settings are restored on exit."""
    if enabled and enabled_by_default():
        yield
        return
    restore = []
    try:
        from transformers.utils import logging as tf_logging

        if tf_logging.is_progress_bar_enabled():
            tf_logging.disable_progress_bar()
            restore.append(tf_logging.enable_progress_bar)
    except ImportError:
        pass
    try:
        from huggingface_hub import utils as hub_utils

        if not hub_utils.are_progress_bars_disabled():
            hub_utils.disable_progress_bars()
            restore.append(hub_utils.enable_progress_bars)
    except ImportError:
        pass
    # transformers' GGUF loader (the gemma3-270m conversion) calls tqdm.auto directly, past the switch above:
    # silenced here when already imported, else by the conversion itself (evaluation.models.convert_gguf),
    # so that a run that converts nothing does not pay for importing it (seconds: the warm `make demo`)
    import sys as _sys

    gguf: Any = _sys.modules.get("transformers.modeling_gguf_pytorch_utils")  # a module whose tqdm is swapped
    if gguf is not None and hasattr(gguf, "tqdm"):
        import functools

        original = gguf.tqdm
        gguf.tqdm = functools.partial(original, disable=True)
        restore.append(lambda: setattr(gguf, "tqdm", original))
    try:
        yield
    finally:
        for undo in restore:
            undo()
