"""Registries for pluggable backends (LLM, MT engine, scorer, aggregator, ...).

Entries may be registered eagerly (a class or factory) or lazily as ``"module:attr"`` strings so
that heavy imports (torch, openai, label-studio-sdk) happen only when the backend is used.
Unknown names raise :class:`~biaskit.errors.UnknownNameError` with "did you mean" suggestions.
"""

from __future__ import annotations

import difflib
import importlib
from collections.abc import Callable, Iterator
from typing import Any, Generic, TypeVar, cast

from .errors import UnknownNameError

T = TypeVar("T")


class Registry(Generic[T]):
    def __init__(self, kind: str):
        self.kind = kind
        self._entries: dict[str, Any] = {}
        self._help: dict[str, str] = {}

    def register(self, name: str, obj: Any = None, *, help: str = "") -> Callable[[T], T] | T:
        """Register ``obj`` under ``name``; usable as a decorator when ``obj`` is omitted.

        ``obj`` may be a ``"package.module:attribute"`` string, resolved on first use.
        """
        key = name.lower()

        def _add(o: T) -> T:
            if key in self._entries and self._entries[key] is not o:
                raise ValueError(f"{self.kind} '{name}' is already registered")
            self._entries[key] = o
            self._help[key] = help or (getattr(o, "__doc__", None) or "").strip().split("\n")[0]
            return o

        if obj is None:
            return _add
        return _add(obj)

    def names(self) -> list[str]:
        return sorted(self._entries)

    def __contains__(self, name: str) -> bool:
        return name.lower() in self._entries

    def __iter__(self) -> Iterator[str]:
        return iter(self.names())

    def help(self, name: str) -> str:
        return self._help.get(name.lower(), "")

    def get(self, name: str) -> T:
        key = (name or "").lower()
        if key not in self._entries:
            close = difflib.get_close_matches(key, self.names(), n=3, cutoff=0.5)
            hint = f" Did you mean {', '.join(repr(c) for c in close)}?" if close else ""
            raise UnknownNameError(
                f"unknown {self.kind} '{name}'.{hint} Available: {', '.join(self.names()) or '(none)'}"
            )
        obj = self._entries[key]
        if isinstance(obj, str):
            mod, _, attr = obj.partition(":")
            obj = getattr(importlib.import_module(mod), attr)
            self._entries[key] = obj
        return obj

    def create(self, name: str, *args: Any, **kwargs: Any) -> Any:
        """Look ``name`` up and call it with the given arguments (factory style)."""
        return cast(Callable[..., Any], self.get(name))(*args, **kwargs)  # create() is for factory entries
