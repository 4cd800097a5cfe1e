"""The shared body of every LLM backend: cache, structured-output negotiation, retries, parsing.

A backend subclasses :class:`BaseLLM` and implements one method, :meth:`BaseLLM._send` (one HTTP
call returning ``(text, usage, finish_reason)``), raising the exceptions below for failures.
Everything else lives here:

- **Structured output.** ``response_format={"type": "json_schema", ...}`` (OpenAI) is tried first; a
  server that rejects it (llama.cpp answers HTTP 500 "Input should be 'text' or 'json_object'";
  others 400/422) is retried with llama.cpp's ``{"type": "json_object", "schema": ...}``, then with
  plain ``json_object``, then with no ``response_format``. The mode that worked is remembered per
  endpoint + model, in memory and in the disk cache, so later runs do not probe again.
- **Parse and repair** (:mod:`.repair`), validated against the schema; when it still fails the
  model is re-asked once with the error ("reask", as in *instructor*); after that the result
  carries the raw text and an ``error``.
- **Retries.** HTTP 408/409/425/429/5xx and dropped connections are retried with exponential
  backoff plus jitter, honouring ``Retry-After`` / ``retry-after-ms`` (a 429 pauses every thread of
  the client until the server's deadline). A request that times out is asked again only after backing
  off (below). A refused connection is retried once after half a second.
- **Fitting the server** (:mod:`.fit`): :meth:`BaseLLM.server_slots` asks how many requests the server
  takes at once (the job runner keeps no more in flight); a request that times out backs off (fewer
  requests in flight, then a longer timeout, up to 4x the one set) and is asked again, with one line
  saying so; when nothing is left to back off to, the run stops with "it is up but slow", not as a
  server that is down.
- **Stopping early.** Some failures will not go away by asking again: a refused connection or an
  unknown host, a rejected API key (401/403), an unknown model or path (404), and
  ``max_failures_in_a_row`` requests that failed in a row (after their retries) with no success in
  between. These raise :class:`~.protocol.EndpointError`, which stops the run with one line naming
  the endpoint, instead of failing every remaining job slowly.
- **Cache.** :class:`biaskit.cache.DiskCache` (namespace ``llm``) keyed by the full request: kind,
  model, endpoint, messages, params and schema. Every successful HTTP response is stored (raw text,
  usage, finish reason, timestamp), also when it fails to parse, so a re-run costs zero requests
  and better repairs apply retroactively. ``refresh=True`` asks again and overwrites the entry.
- **Secrets.** Error texts from servers pass through :func:`biaskit.redact.redact` before they
  reach a result (a 401 body quoting the API key never reaches an errors file), and every reply is
  masked (:func:`biaskit.redact.masked`) as it comes back, before it is cached or parsed: a server
  that echoes the key in a normal reply leaves it in no cache, output, errors file, run log or
  release (issue 28).
"""

from __future__ import annotations

import datetime as _dt
import email.utils
import random
import threading
import time
from collections.abc import Callable
from typing import Any

from biaskit.cache import DiskCache, request_hash
from biaskit.llm_options import FORMAT_MODES
from biaskit.options import tell
from biaskit.redact import masked, redact

from .fit import Backoff, InFlight, probe_slots
from .pricing import estimate_cost, load_prices
from .protocol import EndpointError, LLMError, LLMResult, Messages, Stats, Usage
from .repair import coerce_to_schema, parse_json_lenient, validate_schema

RETRYABLE_STATUS = {408, 409, 425, 429, 500, 502, 503, 504, 520, 522, 524}


class Transient(Exception):
    """A failed request that may succeed when asked again.

    ``kind``: ``http`` (a retryable status), ``timeout``, ``connect`` (refused / unknown host), or
    ``network`` (a connection dropped mid-request)."""

    def __init__(
        self, message: str, *, kind: str = "http", retry_after: float | None = None, status: int | None = None
    ):
        super().__init__(message)
        self.kind = kind
        self.retry_after = retry_after
        self.status = status


class FormatRejected(Exception):
    """The server rejected the ``response_format`` we sent."""


class Fatal(Exception):
    """A request error that asking again will not fix for this job (bad request, a non-JSON body)."""


_FORMAT_MEMORY: dict[tuple[str, str], str] = {}
_FORMAT_LOCK = threading.Lock()


def now_iso() -> str:
    return _dt.datetime.now(_dt.UTC).isoformat(timespec="seconds")


def clean_params(params: dict[str, Any]) -> dict[str, Any]:
    return {k: v for k, v in sorted(params.items()) if v is not None}


def retry_after_seconds(headers: Any) -> float | None:
    """Seconds from ``retry-after-ms`` or ``Retry-After`` (seconds or an HTTP date), else None."""
    if headers is None:
        return None
    ms = headers.get("retry-after-ms")
    if ms:
        try:
            return float(ms) / 1000.0
        except ValueError:
            pass
    ra = headers.get("retry-after")
    if not ra:
        return None
    try:
        return float(ra)
    except ValueError:
        try:
            when = email.utils.parsedate_to_datetime(ra)
            return max(0.0, (when - _dt.datetime.now(when.tzinfo or _dt.UTC)).total_seconds())
        except (TypeError, ValueError):
            return None


class BaseLLM:
    """Implements :class:`~.protocol.LLMClient` except :meth:`_send`."""

    name = "base"

    def __init__(
        self,
        model: str,
        *,
        base_url: str | None = None,
        cache: bool | DiskCache | None = True,
        max_retries: int = 4,
        backoff: float = 1.0,
        max_backoff: float = 60.0,
        parse_retries: int = 1,
        response_format: str = "auto",
        prices: dict[str, tuple[float, float]] | None = None,
        timeout: float = 120.0,
        max_failures_in_a_row: int = 3,
        connect_retries: int = 1,
        sleep: Callable[[float], None] = time.sleep,
    ):
        if not model:
            raise LLMError(f"no model given. Fix: {tell('model', 'NAME')} (the model id your endpoint serves).")
        if response_format not in ("auto", *FORMAT_MODES):
            raise LLMError(
                f"unknown response_format '{response_format}'. Fix: use auto or one of {', '.join(FORMAT_MODES)}."
            )
        self.model = model
        self.base_url = base_url
        if cache is True:
            cache = DiskCache(namespace="llm")
        # (not `cache or None`: an empty DiskCache is falsy because it defines __len__)
        self.cache: DiskCache | None = cache if isinstance(cache, DiskCache) else None
        self.max_retries = max_retries
        self.backoff = backoff
        self.max_backoff = max_backoff
        self.parse_retries = parse_retries
        self.response_format = response_format
        self.prices = prices if prices is not None else load_prices()
        self.timeout = timeout
        self.max_failures_in_a_row = max_failures_in_a_row
        self.connect_retries = connect_retries
        self.stats = Stats()
        self._sleep = sleep
        self._pause_until = 0.0
        self._lock = threading.Lock()
        self._failures_in_a_row = 0
        self._stopped: EndpointError | None = None  # once set, no request is sent any more
        self._flight = InFlight()  # requests in flight (lowered to the server's slots, or by the back-off)
        self._backoff = Backoff(timeout)
        self._slots: tuple[int | None, str] | None = None  # server_slots(), asked once

    # ---- identity
    @property
    def endpoint(self) -> str:
        return (self.base_url or f"{self.name}:default").rstrip("/")

    def describe(self) -> dict[str, Any]:
        return {"backend": self.name, "model": self.model, "endpoint": self.endpoint}

    # ---- the one method a backend implements
    def _send(
        self, messages: Messages, params: dict[str, Any], response_format: dict | None
    ) -> tuple[str, Usage, str | None]:
        """One request; returns ``(text, usage, finish_reason)``. Raise :class:`Transient` for
        failures worth retrying, :class:`FormatRejected` when ``response_format`` is refused,
        :class:`Fatal` for a failure of this request only, :class:`EndpointError` when no request
        to this endpoint can succeed."""
        raise NotImplementedError

    # ---- format negotiation
    def _format_key(self) -> tuple[str, str]:
        return (self.endpoint, self.model)

    def _format_mode(self) -> str:
        if self.response_format != "auto":
            return self.response_format
        key = self._format_key()
        with _FORMAT_LOCK:
            mode = _FORMAT_MEMORY.get(key)
        if mode is None and self.cache is not None:
            mode = self.cache.get({"endpoint_format": list(key)})
            if mode:
                with _FORMAT_LOCK:
                    _FORMAT_MEMORY[key] = mode
        return mode or FORMAT_MODES[0]

    def _remember_format(self, mode: str) -> None:
        if self.response_format != "auto":
            return
        key = self._format_key()
        with _FORMAT_LOCK:
            _FORMAT_MEMORY[key] = mode
        if self.cache is not None:
            self.cache.set({"endpoint_format": list(key)}, mode)

    @staticmethod
    def _response_format(mode: str, schema: dict | None) -> dict | None:
        if mode == "none":
            return None
        if schema is None:
            return {"type": "json_object"}
        if mode == "json_schema":
            return {"type": "json_schema", "json_schema": {"name": "output", "schema": schema}}
        if mode == "json_object_schema":
            return {"type": "json_object", "schema": schema}
        return {"type": "json_object"}

    # ---- retries and the early stop
    def _wait_for_pause(self) -> None:
        while True:
            with self._lock:
                delay = self._pause_until - time.monotonic()
            if delay <= 0:
                return
            self._sleep(min(delay, self.max_backoff))

    def _allowed_retries(self, exc: Transient) -> int:
        if exc.kind == "connect":
            return self.connect_retries
        return self.max_retries

    # ---- fitting the server (:mod:`.fit`)
    def _server_slots_url(self) -> str | None:
        """The API root to ask for the server's slots (None: do not ask; a backend with an endpoint
        of its own overrides it)."""
        return None

    def server_slots(self) -> tuple[int | None, str]:
        """``(requests the server takes at once, how that is known)``, asked once; ``(None, "")``:
        unknown. Requests in flight are kept to that many from then on."""
        with self._lock:
            if self._slots is None:
                url = self._server_slots_url()
                self._slots = probe_slots(url) if url else (None, "")
                n = self._slots[0]
                if n is not None and (self._flight.limit is None or n < self._flight.limit):
                    self._flight.lower(n)
            return self._slots

    def fit_report(self) -> dict[str, Any]:
        """What the client learnt about the server (for the run log): its slots, the back-off steps."""
        out: dict[str, Any] = {}
        if self._slots is not None and self._slots[0] is not None:
            out["slots"], out["slots_from"] = self._slots
        if self._backoff.steps:
            out["backoff"] = list(self._backoff.steps)
            out["timeout"] = self._backoff.current
        return out

    @property
    def current_timeout(self) -> float:
        """The timeout in force (the one set, or longer after backing off)."""
        return self._backoff.current

    def _in_flight(self) -> InFlight:
        return self._flight

    def _backed_off(self, sent: tuple[float, int | None]) -> bool:
        """A request sent with ``sent`` timed out: back off one step (:class:`.fit.Backoff`) and say so
        on stderr; False when nothing is left to back off to."""
        with self._lock:
            waited, n = sent[0], self._backoff.in_a_row + 1
            done = self._backoff.step(self._flight, sent)
        if done is None:
            return False
        if done != "retry":
            from biaskit.progress import note

            note(
                f"{self.endpoint} answered none of {n} request(s) within {waited:g} s: it is up but slow. "
                f"Backing off to {done} and asking again (to start there: "
                f"{tell('concurrency', 1)} or {tell('timeout', int(self._backoff.current))})."
            )
        return True

    def _timed_out(self) -> EndpointError:
        """A request timed out with one request at a time and the longest timeout: the run stops
        with the server named as up but slow (not as down: a refused connection says that)."""
        from biaskit.options import say

        b = self._backoff
        return EndpointError(
            f"{self.endpoint} answered none of {b.in_a_row} request(s) in a row"
            + (
                f" (the last within {b.current:g} s, after backing off to {', then '.join(b.steps)})"
                if b.steps
                else f" within {b.current:g} s"
            )
            + f": it is up but slow. Fix: {tell('concurrency', 1)} and {tell('timeout', int(b.current * 2))}, "
            f"or ask for shorter replies ({say('max_tokens')}); finished jobs are saved and a re-run resumes."
        )

    def _failed(self, message: str) -> Fatal:
        """Count a request that failed for good; too many in a row stop the run."""
        with self._lock:
            self._failures_in_a_row += 1
            stop = self.max_failures_in_a_row and self._failures_in_a_row >= self.max_failures_in_a_row
        if stop:
            from biaskit.options import say

            raise EndpointError(
                f"{self.endpoint}: {self._failures_in_a_row} requests in a row failed, the last "
                f"with: {message}. Fix: check that the server at {self.endpoint} is up and serves "
                f"model '{self.model}' ({say('base_url')}, {say('model')}, {say('timeout')}); "
                "finished jobs are saved and a re-run resumes."
            )
        return Fatal(message)

    def _send_with_retries(self, messages: Messages, params: dict[str, Any], response_format: dict | None):
        try:
            return self._send_until_done(messages, params, response_format)
        except EndpointError as exc:
            with self._lock:  # other threads' jobs stop too, without another request
                self._stopped = self._stopped or exc
            raise

    def _send_until_done(self, messages: Messages, params: dict[str, Any], response_format: dict | None):
        attempt = 0
        while True:
            if self._stopped is not None:
                raise self._stopped
            self._wait_for_pause()
            self.stats.add(requests=1)
            sent = self._backoff.settings(self._flight)
            try:
                with self._in_flight():
                    out = self._send(messages, params, response_format)
            except Transient as exc:
                msg = redact(str(exc))
                if exc.kind == "timeout":
                    if self._backed_off(sent):
                        self.stats.add(retries=1)
                        continue  # asked again with fewer requests in flight or a longer timeout
                    raise self._timed_out() from None
                if attempt >= self._allowed_retries(exc):
                    from biaskit.options import say

                    if exc.kind == "connect":
                        raise EndpointError(
                            f"cannot connect to {self.endpoint}: {msg}. Fix: start the server, "
                            f"or check {say('base_url')} / $OPENAI_BASE_URL."
                        ) from None
                    raise self._failed(msg + (f" (gave up after {attempt + 1} attempts)" if attempt else "")) from None
                delay = exc.retry_after
                if delay is None:
                    base = 0.5 if exc.kind == "connect" else self.backoff
                    delay = min(self.max_backoff, base * (2**attempt)) * (0.5 + random.random() / 2)
                delay = max(0.0, min(float(delay), self.max_backoff))
                if exc.status == 429:
                    with self._lock:
                        self._pause_until = max(self._pause_until, time.monotonic() + delay)
                self.stats.add(retries=1)
                attempt += 1
                self._sleep(delay)
            except Fatal as exc:
                raise self._failed(redact(str(exc))) from None
            else:
                with self._lock:
                    self._failures_in_a_row = 0
                    self._backoff.answered()
                return out

    def _request(
        self, messages: Messages, params: dict[str, Any], schema: dict | None, want_json: bool
    ) -> dict[str, Any]:
        """One logical request (format fallback + retries) -> a cacheable entry."""
        if not want_json:
            text, usage, finish = self._send_with_retries(messages, params, None)
            return {
                "raw": text,
                "usage": usage.as_dict(),
                "finish_reason": finish,
                "created_at": now_iso(),
                "response_format": None,
            }
        mode = self._format_mode()
        modes = list(FORMAT_MODES[FORMAT_MODES.index(mode) :]) if self.response_format == "auto" else [mode]
        last: Exception | None = None
        for m in modes:
            try:
                text, usage, finish = self._send_with_retries(messages, params, self._response_format(m, schema))
            except FormatRejected as exc:
                last = exc
                continue
            if m != mode or self.response_format == "auto":
                self._remember_format(m)
            return {
                "raw": text,
                "usage": usage.as_dict(),
                "finish_reason": finish,
                "created_at": now_iso(),
                "response_format": m,
            }
        raise self._failed(f"the server rejected every response_format ({redact(str(last))})")

    # ---- the client protocol
    def request_key(self, messages: Messages, params: dict[str, Any], schema: dict | None, kind: str) -> dict[str, Any]:
        return {
            "kind": kind,
            "model": self.model,
            "endpoint": self.endpoint,
            "messages": list(messages),
            "params": params,
            "schema": schema,
        }

    def job_hash(self, messages: Messages, schema: dict | None = None, **params: Any) -> str:
        """The request hash :meth:`complete_json` uses for this call (its first attempt)."""
        return request_hash(self.request_key(list(messages), clean_params(params), schema, "json"))

    def _cost(self, usage: Usage) -> float | None:
        return estimate_cost(self.model, usage, self.prices, self.base_url)

    def _cached_call(
        self, messages: Messages, params: dict[str, Any], schema: dict | None, kind: str, refresh: bool
    ) -> tuple[dict[str, Any], bool, str]:
        h = request_hash(self.request_key(messages, params, schema, kind))
        if self.cache is not None and not refresh:
            entry = self.cache.get(h)
            if entry is not None:
                return masked(entry), True, h  # (an entry cached before replies were masked)
        entry = masked(self._request(messages, params, schema, want_json=(kind == "json")))
        usage = Usage.from_dict(entry["usage"])
        self.stats.add(responses=1, usage=usage, cost=self._cost(usage))
        if self.cache is not None:
            self.cache.set(h, entry)
        return entry, False, h

    def _request_failed(self, exc: Fatal, h: str, params: dict[str, Any], **kw: Any) -> LLMResult:
        self.stats.add(errors=1)
        return LLMResult(
            None,
            kw.pop("raw", None),
            kw.pop("usage", Usage()),
            h,
            False,
            error=f"request_error: {exc}",
            model=self.model,
            endpoint=self.endpoint,
            created_at=now_iso(),
            params=params,
            **kw,
        )

    def complete(self, messages: Messages, *, refresh: bool = False, **params: Any) -> LLMResult:
        """Free-text completion (cached). ``data`` is the text."""
        params = clean_params(params)
        self.stats.add(calls=1)
        try:
            entry, cached, h = self._cached_call(messages, params, None, "text", refresh)
        except Fatal as exc:
            return self._request_failed(exc, request_hash(self.request_key(messages, params, None, "text")), params)
        usage = Usage.from_dict(entry["usage"])
        if cached:
            self.stats.add(cache_hits=1, saved_usage=usage)
        return LLMResult(
            entry["raw"],
            entry["raw"],
            usage,
            h,
            cached,
            model=self.model,
            endpoint=self.endpoint,
            created_at=entry.get("created_at"),
            finish_reason=entry.get("finish_reason"),
            cost=self._cost(usage),
            params=params,
            truncated=entry.get("finish_reason") == "length",
        )

    def complete_json(
        self, messages: Messages, schema: dict | None = None, *, refresh: bool = False, **params: Any
    ) -> LLMResult:
        """Structured completion: parse, repair, validate against ``schema``; one reask on failure.

        Never raises for model junk or a failed request: the result carries ``error`` and ``raw``.
        Raises :class:`EndpointError` when the endpoint cannot serve the run.
        """
        params = clean_params(params)
        self.stats.add(calls=1)
        msgs = list(messages)
        total = Usage()
        history: list[dict[str, Any]] = []
        all_cached = True
        first_hash: str | None = None
        result: LLMResult | None = None
        for attempt in range(self.parse_retries + 1):
            try:
                entry, cached, h = self._cached_call(msgs, params, schema, "json", refresh)
            except Fatal as exc:
                h = request_hash(self.request_key(msgs, params, schema, "json"))
                return self._request_failed(
                    exc,
                    first_hash or h,
                    params,
                    raw=result.raw if result else None,
                    usage=total,
                    attempts=attempt + 1,
                    history=history,
                )
            first_hash = first_hash or h
            all_cached = all_cached and cached
            usage = Usage.from_dict(entry["usage"])
            total = total.add(usage)
            if cached:
                self.stats.add(saved_usage=usage)
            data, repairs, error, truncated = _checked_reply(entry, schema)
            result = LLMResult(
                data if error is None else None,
                entry["raw"],
                total,
                first_hash,
                all_cached,
                error=error,
                model=self.model,
                endpoint=self.endpoint,
                created_at=entry.get("created_at"),
                repairs=repairs,
                attempts=attempt + 1,
                finish_reason=entry.get("finish_reason"),
                response_format=entry.get("response_format"),
                params=params,
                truncated=truncated,
            )
            history.append({"request_hash": h, "raw": entry["raw"], "error": error, "cached": cached})
            if error is None:
                break
            msgs = msgs + _reask(entry["raw"], error)
        assert result is not None
        return self._finished(result, history, total, all_cached)

    def _finished(self, result: LLMResult, history: list[dict[str, Any]], total: Usage, all_cached: bool) -> LLMResult:
        """The last attempt's result with every attempt's history and the cost of all; counted."""
        result.history = history
        result.cost = self._cost(total)
        if all_cached:
            self.stats.add(cache_hits=1)
        if result.error:
            self.stats.add(errors=1)
        return result


def _checked_reply(entry: dict[str, Any], schema: dict | None) -> tuple[Any, list[str], str | None, bool]:
    """A reply parsed (leniently), shaped to ``schema`` and validated: ``(data, repairs, error, truncated)``;
    ``error`` (None: usable) is ``"parse_error: ..."`` or ``"schema_error: ..."``, and says when the reply
    was cut off."""
    data, repairs, err = parse_json_lenient(entry["raw"])
    kind = "parse_error"
    if err is None:
        data, fixes = coerce_to_schema(data, schema)
        repairs += fixes
        serr = validate_schema(data, schema)
        if serr:
            err, kind = serr, "schema_error"
    truncated = entry.get("finish_reason") == "length" or "cut_off" in repairs
    if err is not None and truncated:
        err += " (the reply was cut off: raise --max-tokens)"
    return data, repairs, None if err is None else f"{kind}: {err}", truncated


def _reask(raw: str | None, error: str) -> list[dict[str, str]]:
    """The turns that ask again after an unusable reply: the reply, then what was wrong with it."""
    return [
        {"role": "assistant", "content": raw or ""},
        {
            "role": "user",
            "content": f"That reply was not usable ({error}). Reply again "
            "with only the JSON, exactly in the requested format, nothing else.",
        },
    ]
