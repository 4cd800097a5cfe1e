"""One progress-bar helper for every stage (scoring, generation, translation, downloads, pushes).

``with progress(total, "scoring") as bar: bar.advance(n)``. On a terminal the bar is drawn on stderr
with rich and disappears when done (``transient``). When stderr is not a terminal (a log file, a pipe,
``nohup``, CI) it is a line every 30 s instead (``scoring: 120/400 model inputs (1m 30s)``; the
interval is ``$BIASKIT_PROGRESS_EVERY`` seconds), and a last line with the time taken when any was
printed: a person reading the log can follow a long run. It is silent when disabled (``-q``) or when
``BIASKIT_NO_PROGRESS`` is set. ``total=None`` shows a bar of unknown length (lines: elapsed time, and
a count when one is kept); ``bytes=True`` shows transfer size and speed (downloads).

:func:`note` prints one line for the person running the command while work goes on (a warning, a
back-off), above a live bar when one is drawn.
"""

from __future__ import annotations

import contextlib
import os
import sys
import threading
import time
from collections.abc import Iterator
from typing import Any

EVERY_ENV = "BIASKIT_PROGRESS_EVERY"
_LIVE: list[Any] = []  # the rich Progress objects drawing now (a note prints above the innermost)
_OPEN: list[Any] = []  # the line bars open now (a stage's heartbeat is quiet while a bar inside it speaks)


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


class LineBar(Bar):
    """What :func:`progress` yields when stderr is not a terminal: counts kept, one line every ``every``
    seconds from a timer thread (``heartbeat``: only while no bar inside it is open), and a
    last line at the end when any was printed."""

    def __init__(self, total: int | None, label: str, unit: str, every: float, heartbeat: bool = False):
        super().__init__()
        self.total, self.label, self.unit, self.every, self.heartbeat = total, label, unit, every, heartbeat
        self.done = 0
        self.lines = 0
        self.started = time.monotonic()
        self._lock = threading.Lock()
        self._stop = threading.Event()
        self._thread = threading.Thread(target=self._loop, name=f"progress {label}", daemon=True)
        _OPEN.append(self)
        self._thread.start()

    def advance(self, n: int = 1) -> None:
        with self._lock:
            self.done += n

    def update(self, completed: int | None = None, total: int | None = None) -> None:
        with self._lock:
            if completed is not None:
                self.done = completed
            if total is not None:
                self.total = total

    __call__ = advance

    def text(self, final: bool = False) -> str:
        with self._lock:
            done, total = self.done, self.total
        took = _clock(time.monotonic() - self.started)
        if total is not None:
            count = f"{done}/{total}" + (f" {self.unit}" if self.unit else "")
        elif done or self.unit:
            count = f"{done}" + (f" {self.unit}" if self.unit else "")
        else:
            return f"{self.label}: running ({took})"
        return f"{self.label}: {count}" + (f", done in {took}" if final else f" ({took})")

    def _print(self, line: str) -> None:
        self.lines += 1
        try:
            sys.stderr.write(line + "\n")
            sys.stderr.flush()
        except (OSError, ValueError):  # stderr closed under us: nothing to tell
            pass

    def _loop(self) -> None:
        while not self._stop.wait(self.every):
            if self.heartbeat and any(not b.heartbeat for b in _OPEN):
                continue  # a bar inside this one says how far it is
            self._print(self.text())

    def close(self) -> None:
        if self in _OPEN:
            _OPEN.remove(self)
        self._stop.set()
        self._thread.join(timeout=2)
        if self.lines and not self.heartbeat:  # (a stage says itself that it is done)
            self._print(self.text(final=True))


def _clock(seconds: float) -> str:
    m, s = divmod(int(seconds), 60)
    return f"{m}m {s:02d}s" if m else f"{s}s"


def _every() -> float:
    try:
        return max(0.05, float(os.environ.get(EVERY_ENV, "") or 30))
    except ValueError:
        return 30.0


def note(text: str) -> None:
    """One line on stderr for the person running the command while work goes on (redacted): above the
    live bar when one is drawn, else a plain line (also with ``-q``: it is not progress)."""
    from .redact import redact

    text = redact(text)
    if _LIVE:
        from rich.text import Text

        _LIVE[-1].console.print(Text(text), soft_wrap=True)
        return
    try:
        sys.stderr.write(text + "\n")
        sys.stderr.flush()
    except (OSError, ValueError):
        pass


def lines_by_default() -> bool:
    """Lines instead of a bar: stderr is not a terminal and ``BIASKIT_NO_PROGRESS`` is unset."""
    return not os.environ.get("BIASKIT_NO_PROGRESS") and not enabled_by_default()


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
    total: int | None,
    label: str,
    *,
    enabled: bool = True,
    unit: str = "",
    bytes: bool = False,
    heartbeat: bool = False,
) -> Iterator[Bar]:
    """A transient rich progress bar over ``total`` items (``unit`` is printed after the count); lines
    when stderr is not a terminal (see the module docstring). ``heartbeat``: an outer bar (a pipeline
    stage) whose line is printed only when no bar inside it printed one for a while."""
    if not enabled or total == 0 or (heartbeat and enabled_by_default()):
        yield Bar()  # (a heartbeat on a terminal: the bars inside it are drawn; rich draws one at a time)
        return
    if not enabled_by_default():
        if not lines_by_default():
            yield Bar()
            return
        bar = LineBar(total, label, "bytes" if bytes else unit, _every(), heartbeat=heartbeat)
        try:
            yield bar
        finally:
            bar.close()
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
        _LIVE.append(prog)
        try:
            yield Bar(prog, task)
        finally:
            _LIVE.remove(prog)


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
