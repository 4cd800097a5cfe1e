"""Pause Python's cyclic garbage collector while a release is built or verified.

A 100k-pair release holds a few million small objects (validated pairs, record dicts); every
generation-2 collection walks all of them, and with the collector on, a build spends about a fifth
of its CPU time there (``benchmarks/release.py``). The records form no reference cycles that need
collecting during the build, and reference counting still frees everything as usual; the collector
is switched back on (if it was on) when the function returns or raises.
"""

from __future__ import annotations

import functools
import gc
from collections.abc import Callable, Iterator
from contextlib import contextmanager
from typing import TypeVar

F = TypeVar("F", bound=Callable)


@contextmanager
def gc_paused() -> Iterator[None]:
    was_enabled = gc.isenabled()
    gc.disable()
    try:
        yield
    finally:
        if was_enabled:
            gc.enable()


def without_gc(fn: F) -> F:
    """Decorator: run ``fn`` inside :func:`gc_paused`."""

    @functools.wraps(fn)
    def wrapper(*args, **kwargs):
        with gc_paused():
            return fn(*args, **kwargs)

    return wrapper  # type: ignore[return-value]
