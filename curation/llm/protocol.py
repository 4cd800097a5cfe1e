"""What every LLM client gives its callers: the :class:`LLMClient` protocol, results, usage, errors.

Callers (the job runner, the translation engine) depend on this protocol only, never on a backend
class, so a new backend plugs in by implementing it (in practice: subclassing
:class:`~biaskit.curation.llm.base.BaseLLM`, which implements everything but one HTTP call).
"""

from __future__ import annotations

import threading
from collections.abc import Sequence
from dataclasses import dataclass, field
from typing import Any, Protocol, runtime_checkable

from biaskit.errors import BiaskitError

Messages = Sequence[dict[str, Any]]


class LLMError(BiaskitError):
    """A configuration problem the user can fix (no endpoint, no model, bad price file)."""


class EndpointError(BiaskitError):
    """The endpoint cannot serve this run (connection refused, wrong key, failing request after
    request): the run stops at once with this one-line message instead of failing every job."""


# --------------------------------------------------------------------------------------------- results
@dataclass
class Usage:
    prompt_tokens: int = 0
    completion_tokens: int = 0

    @property
    def total_tokens(self) -> int:
        return self.prompt_tokens + self.completion_tokens

    def add(self, other: Usage) -> Usage:
        return Usage(self.prompt_tokens + other.prompt_tokens, self.completion_tokens + other.completion_tokens)

    def as_dict(self) -> dict[str, int]:
        return {
            "prompt_tokens": self.prompt_tokens,
            "completion_tokens": self.completion_tokens,
            "total_tokens": self.total_tokens,
        }

    @classmethod
    def from_dict(cls, d: Any) -> Usage:
        d = d or {}
        return cls(int(d.get("prompt_tokens") or 0), int(d.get("completion_tokens") or 0))


@dataclass
class LLMResult:
    """One structured (or free-text) completion: ``data`` when usable, else ``error``; ``raw`` always
    keeps the model's text. ``truncated``: the reply was cut off (``finish_reason == "length"`` or
    JSON that ends mid-way), so ``data`` may hold only part of what was asked for."""

    data: Any
    raw: str | None
    usage: Usage
    request_hash: str
    cached: bool
    error: str | None = None
    model: str = ""
    endpoint: str = ""
    created_at: str | None = None
    repairs: list[str] = field(default_factory=list)
    attempts: int = 1
    finish_reason: str | None = None
    response_format: str | None = None
    cost: float | None = None
    params: dict[str, Any] = field(default_factory=dict)
    history: list[dict[str, Any]] = field(default_factory=list)
    truncated: bool = False

    @property
    def ok(self) -> bool:
        return self.error is None

    @property
    def status(self) -> str:
        """``ok``, or the error's kind: ``parse_error``, ``schema_error``, ``request_error``."""
        return "ok" if self.error is None else self.error.split(":", 1)[0]

    def provenance(self) -> dict[str, Any]:
        """What an output row records about how it was generated."""
        return {
            "model": self.model,
            "endpoint": self.endpoint,
            "request_hash": self.request_hash,
            "temperature": self.params.get("temperature"),
            "seed": self.params.get("seed"),
            "timestamp": self.created_at,
            "cached": self.cached,
            "response_format": self.response_format,
            **({"repairs": self.repairs} if self.repairs else {}),
        }


class Stats:
    """Thread-safe counters for one client (summed into a run log)."""

    FIELDS = ("calls", "requests", "responses", "cache_hits", "retries", "errors")

    def __init__(self) -> None:
        self._lock = threading.Lock()
        self.requests = 0  # HTTP requests sent (retries and format probes included)
        self.responses = 0  # successful HTTP responses
        self.cache_hits = 0  # complete_json/complete calls answered from the cache
        self.calls = 0  # complete_json/complete calls
        self.retries = 0
        self.errors = 0  # calls whose final result has an error
        self.usage = Usage()  # tokens actually spent in this process
        self.cost: float | None = 0.0
        self.saved_usage = Usage()  # tokens that cache hits did not have to pay again

    def add(self, **kw: Any) -> None:
        with self._lock:
            for k, v in kw.items():
                if k == "usage":
                    self.usage = self.usage.add(v)
                elif k == "saved_usage":
                    self.saved_usage = self.saved_usage.add(v)
                elif k == "cost":
                    self.cost = None if (self.cost is None or v is None) else self.cost + v
                else:
                    setattr(self, k, getattr(self, k) + v)

    def snapshot(self) -> dict[str, Any]:
        with self._lock:
            return {
                **{k: getattr(self, k) for k in self.FIELDS},
                **self.usage.as_dict(),
                "estimated_cost_usd": None if self.cost is None else round(self.cost, 6),
                "saved_tokens": self.saved_usage.total_tokens,
            }


# --------------------------------------------------------------------------------------------- protocol
@runtime_checkable
class LLMClient(Protocol):
    """The interface of every LLM backend (``get_llm(name, ...)`` returns one).

    ``complete_json`` never raises for model junk or a failed request (the result carries ``error``
    and ``raw``); it raises :class:`EndpointError` only when the endpoint cannot serve the run at all.
    """

    name: str
    model: str
    stats: Stats

    @property
    def endpoint(self) -> str: ...

    def describe(self) -> dict[str, Any]: ...

    def job_hash(self, messages: Messages, schema: dict | None = None, **params: Any) -> str: ...

    def complete_json(
        self, messages: Messages, schema: dict | None = None, *, refresh: bool = False, **params: Any
    ) -> LLMResult: ...

    def complete(self, messages: Messages, *, refresh: bool = False, **params: Any) -> LLMResult: ...
