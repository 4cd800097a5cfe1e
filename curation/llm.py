"""LLM clients for curation: any OpenAI-compatible endpoint, with structured output, repair,
retries, a persistent response cache, usage and cost accounting.

Public interface (also used by the translation engines)::

    from biaskit.curation.llm import get_llm
    llm = get_llm("openai", model="gpt-4o-mini")                 # OPENAI_API_KEY / OPENAI_BASE_URL
    llm = get_llm("openai", model="local", base_url="http://127.0.0.1:8000/v1")   # llama.cpp, vLLM, ...
    res = llm.complete_json(messages, schema, temperature=0.7, seed=0, max_tokens=256)
    res.data        # parsed (and, if needed, repaired) JSON, or None
    res.raw         # the model's raw text (kept also when parsing failed)
    res.error       # None, or "parse_error: ..." / "schema_error: ..." / "request_error: ..."
    res.cached      # True when no HTTP request was made
    res.provenance()  # model, endpoint, request hash, timestamp, ... for the output row
    llm.stats.snapshot()  # requests, cache hits, tokens, estimated cost

Design (see docs/curation.md):

- **Structured output.** ``response_format={"type": "json_schema", ...}`` (OpenAI) is tried first; a
  server that rejects it (llama.cpp answers HTTP 500 "Input should be 'text' or 'json_object'";
  others 400/422) is retried with llama.cpp's ``{"type": "json_object", "schema": ...}``, then with
  plain ``json_object``, then with no ``response_format``. The mode that worked is remembered per
  endpoint + model, in memory and in the disk cache, so later runs do not probe again.
- **Parse and repair.** Code fences, prose around the JSON, trailing commas, single quotes,
  unquoted keys and truncated arrays are repaired with the ``json-repair`` library; the result is
  validated against the schema (``jsonschema``) after light shape coercion (a bare list for a
  one-array-property object, a differently named single list key). When it still fails, the model
  is re-asked once with the error ("reask", as in *instructor*); after that the result carries the
  raw text and an ``error``: callers write it to a rejects file and carry on.
- **Retries.** HTTP 408/409/425/429/5xx and connection errors are retried with exponential
  backoff plus jitter, honouring ``Retry-After`` / ``retry-after-ms``; a 429 pauses every thread
  of the same client until the server's deadline.
- **Cache.** :class:`biaskit.cache.DiskCache` (namespace ``llm``) keyed by the full request: kind,
  model, endpoint, messages, params (temperature, seed, max_tokens, ...) and schema. Every successful
  HTTP response is stored (raw text + usage + timestamp), including ones that fail to parse, so a
  re-run costs zero requests and repairs improve retroactively. ``refresh=True`` bypasses it.
"""
from __future__ import annotations

import datetime as _dt
import email.utils
import json
import os
import random
import re
import threading
import time
from dataclasses import dataclass, field
from typing import Any, Callable, Iterable, Optional, Sequence

from biaskit.cache import DiskCache, request_hash
from biaskit.errors import BiaskitError, InputError
from biaskit.registry import Registry

Messages = Sequence[dict[str, Any]]

LLMS: Registry = Registry("LLM backend")

# USD per 1M tokens (input, output), list prices as published by the providers (mid-2025).
# Override with --prices FILE (TOML/JSON: {"model": [in, out]}) or $BIASKIT_LLM_PRICES.
# Endpoints on localhost / 127.0.0.1 cost 0. Unknown hosted models: cost None ("unknown").
DEFAULT_PRICES: dict[str, tuple[float, float]] = {
    "gpt-4o-mini": (0.15, 0.60),
    "gpt-4o": (2.50, 10.00),
    "gpt-4.1-nano": (0.10, 0.40),
    "gpt-4.1-mini": (0.40, 1.60),
    "gpt-4.1": (2.00, 8.00),
    "gpt-3.5-turbo": (0.50, 1.50),
    "o4-mini": (1.10, 4.40),
    "o3-mini": (1.10, 4.40),
}

RETRYABLE_STATUS = {408, 409, 425, 429, 500, 502, 503, 504, 520, 522, 524}
FORMAT_MODES = ("json_schema", "json_object_schema", "json_object", "none")


class LLMError(BiaskitError):
    """A configuration problem the user can fix (no API key, unknown model, bad price file)."""


class _Transient(Exception):
    def __init__(self, message: str, retry_after: Optional[float] = None, status: Optional[int] = None):
        super().__init__(message)
        self.retry_after = retry_after
        self.status = status


class _FormatRejected(Exception):
    """The server rejected the ``response_format`` we sent."""


class _Fatal(Exception):
    """A request error that retrying will not fix (auth, bad request)."""


# --------------------------------------------------------------------------------------------- results
@dataclass
class Usage:
    prompt_tokens: int = 0
    completion_tokens: int = 0

    @property
    def total_tokens(self) -> int:
        return self.prompt_tokens + self.completion_tokens

    def add(self, other: "Usage") -> "Usage":
        return Usage(self.prompt_tokens + other.prompt_tokens, self.completion_tokens + other.completion_tokens)

    def as_dict(self) -> dict[str, int]:
        return {"prompt_tokens": self.prompt_tokens, "completion_tokens": self.completion_tokens,
                "total_tokens": self.total_tokens}


@dataclass
class LLMResult:
    data: Any
    raw: Optional[str]
    usage: Usage
    request_hash: str
    cached: bool
    error: Optional[str] = None
    model: str = ""
    endpoint: str = ""
    created_at: Optional[str] = None
    repairs: list[str] = field(default_factory=list)
    attempts: int = 1
    finish_reason: Optional[str] = None
    response_format: Optional[str] = None
    cost: Optional[float] = None
    params: dict[str, Any] = field(default_factory=dict)
    history: list[dict[str, Any]] = field(default_factory=list)

    @property
    def ok(self) -> bool:
        return self.error is None

    def provenance(self) -> dict[str, Any]:
        """What an output row records about how it was generated."""
        return {
            "model": self.model, "endpoint": self.endpoint, "request_hash": self.request_hash,
            "temperature": self.params.get("temperature"), "seed": self.params.get("seed"),
            "timestamp": self.created_at, "cached": self.cached, "response_format": self.response_format,
            **({"repairs": self.repairs} if self.repairs else {}),
        }


class Stats:
    """Thread-safe counters for one client (summed into a run log)."""

    def __init__(self) -> None:
        self._lock = threading.Lock()
        self.requests = 0          # HTTP requests sent (retries and format probes included)
        self.responses = 0         # successful HTTP responses
        self.cache_hits = 0        # complete_json/complete calls answered from the cache
        self.calls = 0             # complete_json/complete calls
        self.retries = 0
        self.errors = 0            # calls whose final result has an error
        self.usage = Usage()       # tokens actually spent in this process
        self.cost: Optional[float] = 0.0
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
            return {"calls": self.calls, "requests": self.requests, "responses": self.responses,
                    "cache_hits": self.cache_hits, "retries": self.retries, "errors": self.errors,
                    **self.usage.as_dict(),
                    "estimated_cost_usd": None if self.cost is None else round(self.cost, 6),
                    "saved_tokens": self.saved_usage.total_tokens}


# --------------------------------------------------------------------------------------------- prices
def load_prices(path: Optional[str] = None) -> dict[str, tuple[float, float]]:
    """The default price table updated from ``path`` or ``$BIASKIT_LLM_PRICES`` (TOML or JSON)."""
    prices = dict(DEFAULT_PRICES)
    path = path or os.environ.get("BIASKIT_LLM_PRICES")
    if not path:
        return prices
    from pathlib import Path

    p = Path(path)
    try:
        text = p.read_text(encoding="utf-8")
    except FileNotFoundError:
        raise InputError("price file not found.", path=p, fix="pass a TOML/JSON file mapping model -> [input, output] USD per 1M tokens.") from None
    try:
        if p.suffix.lower() == ".toml":
            import tomllib
            obj = tomllib.loads(text)
        else:
            obj = json.loads(text)
    except Exception as exc:  # noqa: BLE001
        raise InputError(f"cannot parse the price file ({exc}).", path=p,
                         fix='write e.g. {"my-model": [0.5, 1.5]} (USD per 1M input, output tokens).') from None
    for model, val in obj.items():
        if isinstance(val, dict):
            val = [val.get("input"), val.get("output")]
        if not (isinstance(val, (list, tuple)) and len(val) == 2 and all(isinstance(x, (int, float)) for x in val)):
            raise InputError(f"price for '{model}' must be [input, output] numbers, got {val!r}.", path=p,
                             fix="USD per 1M tokens, e.g. [0.15, 0.6].")
        prices[str(model)] = (float(val[0]), float(val[1]))
    return prices


def is_local_endpoint(base_url: Optional[str]) -> bool:
    return bool(base_url) and bool(re.match(r"^https?://(localhost|127\.\d+\.\d+\.\d+|\[::1\]|0\.0\.0\.0)(:|/|$)", base_url))


def estimate_cost(model: str, usage: Usage, prices: dict[str, tuple[float, float]],
                  base_url: Optional[str] = None) -> Optional[float]:
    """USD for ``usage``; exact model name first, then the longest price-table prefix
    (``gpt-4o-mini-2024-07-18`` -> ``gpt-4o-mini``). Local endpoints cost 0; unknown -> None."""
    if model in prices:
        pin, pout = prices[model]
    else:
        keys = sorted((k for k in prices if model.startswith(k)), key=len, reverse=True)
        if keys:
            pin, pout = prices[keys[0]]
        elif is_local_endpoint(base_url):
            return 0.0
        else:
            return None
    return (usage.prompt_tokens * pin + usage.completion_tokens * pout) / 1_000_000


# --------------------------------------------------------------------------------------------- parsing
_FENCE = re.compile(r"```[a-zA-Z0-9_-]*\s*\n?(.*?)(?:```|$)", re.S)


def parse_json_lenient(text: Optional[str]) -> tuple[Any, list[str], Optional[str]]:
    """Parse a model's reply as JSON, repairing common junk.

    Returns ``(data, repairs, error)``: ``repairs`` names what was fixed (``code_fence``,
    ``json_repair``), ``error`` is None on success. Never raises.
    """
    repairs: list[str] = []
    if text is None or not str(text).strip():
        return None, repairs, "empty response"
    s = str(text).strip()
    m = _FENCE.search(s)
    if m and m.group(1).strip():
        s = m.group(1).strip()
        repairs.append("code_fence")
    try:
        return json.loads(s), repairs, None
    except json.JSONDecodeError as exc:
        first_err = f"{exc.msg} at line {exc.lineno} column {exc.colno}"
    if not re.search(r"[\[{]", s):
        return None, repairs, f"no JSON object or array in the response ({first_err})"
    try:
        import json_repair
    except ImportError:  # pragma: no cover - optional dependency
        return None, repairs, f"invalid JSON ({first_err}); install json-repair for automatic repair"
    try:
        data = json_repair.repair_json(s, return_objects=True, skip_json_loads=True)
    except Exception as exc:  # noqa: BLE001 - the repair library must never crash a run
        return None, repairs, f"invalid JSON ({first_err}); repair failed: {exc}"
    if data in ("", None) or (isinstance(data, (list, dict)) and not data and not re.search(r"\[\s*\]|\{\s*\}", s)):
        return None, repairs, f"invalid JSON ({first_err}); nothing recoverable"
    repairs.append("json_repair")
    return data, repairs, None


def coerce_to_schema(data: Any, schema: Optional[dict]) -> tuple[Any, list[str]]:
    """Light shape fixes before validation: a bare list for an object whose only required
    property is an array; a single-key object whose key is misnamed; a list of one-key objects
    for an array of strings; a comma-separated string for an array of strings; items that break
    the item schema are dropped (when at least one valid item remains)."""
    fixes: list[str] = []
    if not schema or schema.get("type") != "object":
        return data, fixes
    props = schema.get("properties") or {}
    arrays = [k for k, v in props.items() if isinstance(v, dict) and v.get("type") == "array"]
    required = schema.get("required") or list(props)
    if len(arrays) == 1 and set(required) <= {arrays[0]}:
        key = arrays[0]
        if isinstance(data, list):
            data, _ = {key: data}, fixes.append("wrapped_bare_list")
        elif isinstance(data, dict) and key not in data:
            lists = [k for k, v in data.items() if isinstance(v, list)]
            if len(lists) == 1:
                data = {key: data[lists[0]]}
                fixes.append(f"renamed_key:{lists[0]}->{key}")
        if isinstance(data, dict) and key in data:
            items = props[key].get("items") or {}
            val = data[key]
            if items.get("type") == "string":
                if isinstance(val, str):
                    data = {**data, key: [x.strip() for x in re.split(r"[,;\n]", val) if x.strip()]}
                    fixes.append("split_string")
                elif isinstance(val, list) and any(isinstance(x, dict) for x in val):
                    flat = []
                    for x in val:
                        if isinstance(x, dict):
                            strs = [v for v in x.values() if isinstance(v, str)]
                            if strs:
                                flat.append(strs[0])
                        elif isinstance(x, str):
                            flat.append(x)
                    data = {**data, key: flat}
                    fixes.append("flattened_objects")
            val = data[key]
            if isinstance(val, list) and items:
                try:
                    import jsonschema
                    v = jsonschema.Draft202012Validator(items)
                    good = [x for x in val if v.is_valid(x)]
                except ImportError:  # pragma: no cover
                    good = val
                if good and len(good) < len(val):
                    data = {**data, key: good}
                    fixes.append(f"dropped_invalid_items:{len(val) - len(good)}")
    return data, fixes


def validate_schema(data: Any, schema: Optional[dict]) -> Optional[str]:
    """None when ``data`` satisfies ``schema`` (JSON Schema draft 2020-12 via jsonschema)."""
    if not schema:
        return None
    try:
        import jsonschema
    except ImportError:  # pragma: no cover
        return None
    errors = sorted(jsonschema.Draft202012Validator(schema).iter_errors(data), key=lambda e: list(e.path))
    if not errors:
        return None
    e = errors[0]
    where = "/".join(str(p) for p in e.path) or "(root)"
    return f"{where}: {e.message[:200]}"


# --------------------------------------------------------------------------------------------- base
_FORMAT_MEMORY: dict[tuple[str, str], str] = {}
_FORMAT_LOCK = threading.Lock()


def _now() -> str:
    return _dt.datetime.now(_dt.timezone.utc).isoformat(timespec="seconds")


class LLM:
    """Base class: subclasses implement :meth:`_send` (one HTTP call); everything else (cache,
    format fallback, retries, parsing, repair, reask, accounting) lives here."""

    name = "base"

    def __init__(self, model: str, *, base_url: Optional[str] = None, cache: bool | DiskCache | None = True,
                 max_retries: int = 4, backoff: float = 1.0, max_backoff: float = 60.0,
                 parse_retries: int = 1, response_format: str = "auto",
                 prices: Optional[dict[str, tuple[float, float]]] = None, timeout: float = 120.0,
                 sleep: Callable[[float], None] = time.sleep):
        if not model:
            raise LLMError("no model given. Fix: pass --model NAME (the model id your endpoint serves).")
        if response_format not in ("auto", *FORMAT_MODES):
            raise LLMError(f"unknown response_format '{response_format}'. Fix: use auto or one of {', '.join(FORMAT_MODES)}.")
        self.model = model
        self.base_url = base_url
        if cache is True:
            cache = DiskCache(namespace="llm")
        # (not `cache or None`: an empty DiskCache is falsy because it defines __len__)
        self.cache: Optional[DiskCache] = cache if isinstance(cache, DiskCache) else None
        self.max_retries = max_retries
        self.backoff = backoff
        self.max_backoff = max_backoff
        self.parse_retries = parse_retries
        self.response_format = response_format
        self.prices = prices if prices is not None else load_prices()
        self.timeout = timeout
        self.stats = Stats()
        self._sleep = sleep
        self._pause_until = 0.0
        self._pause_lock = threading.Lock()

    # ---- identity
    @property
    def endpoint(self) -> str:
        return self.base_url or f"{self.name}:default"

    def describe(self) -> dict[str, Any]:
        return {"backend": self.name, "model": self.model, "endpoint": self.endpoint}

    # ---- subclass hook
    def _send(self, messages: Messages, params: dict[str, Any], response_format: Optional[dict]) -> tuple[str, Usage, Optional[str]]:
        """One request; returns ``(text, usage, finish_reason)``. Raise :class:`_Transient` for
        retryable failures, :class:`_FormatRejected` when ``response_format`` is refused,
        :class:`_Fatal` for anything else."""
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
    def _response_format(mode: str, schema: Optional[dict]) -> Optional[dict]:
        if mode == "none":
            return None
        if schema is None:
            return {"type": "json_object"} if mode != "none" else None
        if mode == "json_schema":
            return {"type": "json_schema", "json_schema": {"name": "output", "schema": schema}}
        if mode == "json_object_schema":
            return {"type": "json_object", "schema": schema}
        return {"type": "json_object"}

    # ---- retries
    def _wait_for_pause(self) -> None:
        while True:
            with self._pause_lock:
                delay = self._pause_until - time.monotonic()
            if delay <= 0:
                return
            self._sleep(min(delay, self.max_backoff))

    def _send_with_retries(self, messages: Messages, params: dict[str, Any], response_format: Optional[dict]):
        attempt = 0
        while True:
            self._wait_for_pause()
            self.stats.add(requests=1)
            try:
                return self._send(messages, params, response_format)
            except _Transient as exc:
                if attempt >= self.max_retries:
                    raise _Fatal(f"{exc} (gave up after {attempt + 1} attempts)") from None
                delay = exc.retry_after
                if delay is None:
                    delay = min(self.max_backoff, self.backoff * (2 ** attempt)) * (0.5 + random.random() / 2)
                delay = max(0.0, min(float(delay), self.max_backoff))
                if exc.status == 429:
                    with self._pause_lock:
                        self._pause_until = max(self._pause_until, time.monotonic() + delay)
                self.stats.add(retries=1)
                attempt += 1
                self._sleep(delay)

    def _request(self, messages: Messages, params: dict[str, Any], schema: Optional[dict], want_json: bool) -> dict[str, Any]:
        """One logical request (format fallback + retries) -> a cacheable entry."""
        if not want_json:
            text, usage, finish = self._send_with_retries(messages, params, None)
            return {"raw": text, "usage": usage.as_dict(), "finish_reason": finish, "created_at": _now(),
                    "response_format": None}
        mode = self._format_mode()
        modes = list(FORMAT_MODES[FORMAT_MODES.index(mode):]) if self.response_format == "auto" else [mode]
        last: Optional[Exception] = None
        for m in modes:
            try:
                text, usage, finish = self._send_with_retries(messages, params, self._response_format(m, schema))
            except _FormatRejected as exc:
                last = exc
                continue
            if m != mode or self.response_format == "auto":
                self._remember_format(m)
            return {"raw": text, "usage": usage.as_dict(), "finish_reason": finish, "created_at": _now(),
                    "response_format": m}
        raise _Fatal(f"the server rejected every response_format ({last})")

    # ---- public API
    def request_key(self, messages: Messages, params: dict[str, Any], schema: Optional[dict], kind: str) -> dict[str, Any]:
        return {"kind": kind, "model": self.model, "endpoint": self.endpoint, "messages": list(messages),
                "params": params, "schema": schema}

    def job_hash(self, messages: Messages, schema: Optional[dict] = None, **params: Any) -> str:
        """The request hash :meth:`complete_json` will use for this call (its first attempt)."""
        return request_hash(self.request_key(list(messages), _clean_params(params), schema, "json"))

    def _cached_call(self, messages: Messages, params: dict[str, Any], schema: Optional[dict], kind: str,
                     refresh: bool) -> tuple[dict[str, Any], bool, str]:
        key = self.request_key(messages, params, schema, kind)
        h = request_hash(key)
        if self.cache is not None and not refresh:
            entry = self.cache.get(h)
            if entry is not None:
                return entry, True, h
        entry = self._request(messages, params, schema, want_json=(kind == "json"))
        self.stats.add(responses=1, usage=_usage(entry["usage"]),
                       cost=estimate_cost(self.model, _usage(entry["usage"]), self.prices, self.base_url))
        if self.cache is not None:
            self.cache.set(h, entry)
        return entry, False, h

    def complete(self, messages: Messages, *, refresh: bool = False, **params: Any) -> LLMResult:
        """Free-text completion (cached). ``data`` is the text."""
        params = _clean_params(params)
        self.stats.add(calls=1)
        try:
            entry, cached, h = self._cached_call(messages, params, None, "text", refresh)
        except _Fatal as exc:
            self.stats.add(errors=1)
            return LLMResult(None, None, Usage(), request_hash(self.request_key(messages, params, None, "text")),
                             False, error=f"request_error: {exc}", model=self.model, endpoint=self.endpoint,
                             params=params, created_at=_now())
        usage = _usage(entry["usage"])
        if cached:
            self.stats.add(cache_hits=1, saved_usage=usage)
        return LLMResult(entry["raw"], entry["raw"], usage, h, cached, model=self.model, endpoint=self.endpoint,
                         created_at=entry.get("created_at"), finish_reason=entry.get("finish_reason"),
                         cost=estimate_cost(self.model, usage, self.prices, self.base_url), params=params)

    def complete_json(self, messages: Messages, schema: Optional[dict] = None, *, refresh: bool = False,
                      **params: Any) -> LLMResult:
        """Structured completion: parse, repair, validate against ``schema``; one reask on failure.

        Never raises for model junk or request failures: the result carries ``error`` and ``raw``.
        """
        params = _clean_params(params)
        self.stats.add(calls=1)
        msgs = list(messages)
        total = Usage()
        history: list[dict[str, Any]] = []
        all_cached = True
        first_hash = None
        result: Optional[LLMResult] = None
        for attempt in range(self.parse_retries + 1):
            try:
                entry, cached, h = self._cached_call(msgs, params, schema, "json", refresh)
            except _Fatal as exc:
                h = request_hash(self.request_key(msgs, params, schema, "json"))
                self.stats.add(errors=1)
                return LLMResult(None, result.raw if result else None, total, first_hash or h, False,
                                 error=f"request_error: {exc}", model=self.model, endpoint=self.endpoint,
                                 created_at=_now(), attempts=attempt + 1, params=params, history=history)
            first_hash = first_hash or h
            all_cached = all_cached and cached
            usage = _usage(entry["usage"])
            total = total.add(usage)
            if cached:
                self.stats.add(saved_usage=usage)
            raw = entry["raw"]
            data, repairs, err = parse_json_lenient(raw)
            kind = "parse_error"
            if err is None:
                data, fixes = coerce_to_schema(data, schema)
                repairs += fixes
                serr = validate_schema(data, schema)
                if serr:
                    err, kind = serr, "schema_error"
            if err is not None and entry.get("finish_reason") == "length":
                err += " (the reply was cut off at max_tokens: raise max_tokens)"
            result = LLMResult(data if err is None else None, raw, total, first_hash, all_cached,
                               error=None if err is None else f"{kind}: {err}", model=self.model,
                               endpoint=self.endpoint, created_at=entry.get("created_at"), repairs=repairs,
                               attempts=attempt + 1, finish_reason=entry.get("finish_reason"),
                               response_format=entry.get("response_format"), params=params)
            history.append({"request_hash": h, "raw": raw, "error": result.error, "cached": cached})
            if err is None:
                break
            msgs = msgs + [{"role": "assistant", "content": raw or ""},
                           {"role": "user", "content": f"That reply was not usable ({kind}: {err}). Reply again "
                            "with only the JSON, exactly in the requested format, nothing else."}]
        assert result is not None
        result.history = history
        result.cost = estimate_cost(self.model, total, self.prices, self.base_url)
        if all_cached:
            self.stats.add(cache_hits=1)
        if result.error:
            self.stats.add(errors=1)
        return result


def _usage(d: Any) -> Usage:
    d = d or {}
    return Usage(int(d.get("prompt_tokens") or 0), int(d.get("completion_tokens") or 0))


def _clean_params(params: dict[str, Any]) -> dict[str, Any]:
    return {k: v for k, v in sorted(params.items()) if v is not None}


def _retry_after(headers: Any) -> Optional[float]:
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
            return max(0.0, (when - _dt.datetime.now(when.tzinfo or _dt.timezone.utc)).total_seconds())
        except (TypeError, ValueError):
            return None


# --------------------------------------------------------------------------------------------- openai
@LLMS.register("openai", help="any OpenAI-compatible chat completions endpoint (OpenAI, llama.cpp, vLLM, Ollama, ...)")
class OpenAILLM(LLM):
    """Chat completions through the official ``openai`` client.

    ``base_url`` defaults to ``$OPENAI_BASE_URL`` (else OpenAI); ``api_key`` to ``$OPENAI_API_KEY``
    (a placeholder is used for local endpoints, which ignore it).
    """

    name = "openai"

    def __init__(self, model: str, *, base_url: Optional[str] = None, api_key: Optional[str] = None, **kw: Any):
        base_url = base_url or os.environ.get("OPENAI_BASE_URL") or None
        super().__init__(model, base_url=base_url, **kw)
        self._api_key = api_key or os.environ.get("OPENAI_API_KEY")
        if not self._api_key:
            if base_url and is_local_endpoint(base_url):
                self._api_key = "sk-local-placeholder"
            elif base_url:
                self._api_key = "sk-placeholder"
            else:
                raise LLMError("no API key: set OPENAI_API_KEY (or pass --base-url for a local "
                               "OpenAI-compatible server, which needs none).")
        self._client = None
        self._client_lock = threading.Lock()

    @property
    def endpoint(self) -> str:
        return (self.base_url or "https://api.openai.com/v1").rstrip("/")

    def client(self):
        with self._client_lock:
            if self._client is None:
                from biaskit.errors import require

                openai = require("openai", "curation", "LLM generation")
                self._client = openai.OpenAI(api_key=self._api_key, base_url=self.base_url,
                                             max_retries=0, timeout=self.timeout)
            return self._client

    def _send(self, messages, params, response_format):
        import openai

        kwargs = dict(params)
        extra_body = {}
        # the openai client validates nothing here, but keep non-standard keys in extra_body
        if response_format is not None:
            if response_format.get("type") == "json_object" and "schema" in response_format:
                extra_body["response_format"] = response_format
            else:
                kwargs["response_format"] = response_format
        try:
            resp = self.client().chat.completions.create(model=self.model, messages=list(messages),
                                                         extra_body=extra_body or None, **kwargs)
        except openai.APIStatusError as exc:
            status = exc.status_code
            text = str(exc)
            if response_format is not None and status in (400, 422, 500) and re.search(
                    r"response_format|json_schema|json_object|schema", text, re.I):
                raise _FormatRejected(f"HTTP {status}: {text[:200]}") from None
            if status in RETRYABLE_STATUS:
                raise _Transient(f"HTTP {status}: {text[:200]}", _retry_after(exc.response.headers), status) from None
            raise _Fatal(f"HTTP {status}: {text[:300]}") from None
        except (openai.APITimeoutError, openai.APIConnectionError) as exc:
            raise _Transient(f"{type(exc).__name__}: {exc}") from None
        choice = resp.choices[0] if resp.choices else None
        text = (choice.message.content if choice and choice.message else None) or ""
        u = resp.usage
        usage = Usage(getattr(u, "prompt_tokens", 0) or 0, getattr(u, "completion_tokens", 0) or 0) if u else Usage()
        return text, usage, getattr(choice, "finish_reason", None)


# --------------------------------------------------------------------------------------------- dummy
@LLMS.register("dummy", help="deterministic canned responses (for testing pipeline logic offline)")
class DummyLLM(LLM):
    """Deterministic canned responses, for unit tests of pipeline logic and ``--llm dummy`` demos.

    ``responses``: a list of strings returned in turn (cycled), or a callable
    ``(messages, params, response_format) -> str``. Without it, the reply is a schema-shaped
    JSON built from the request (deterministic). No network. Usage counts whitespace tokens.
    """

    name = "dummy"

    def __init__(self, model: str = "dummy", *, responses: Optional[Sequence[str] | Callable[..., str]] = None,
                 base_url: Optional[str] = None, **kw: Any):
        kw.setdefault("prices", {model: (0.0, 0.0)})
        super().__init__(model, base_url=base_url or "dummy://local", **kw)
        self._responses = responses
        self._i = 0
        self._lock = threading.Lock()
        self.sent: list[dict[str, Any]] = []

    def _send(self, messages, params, response_format):
        with self._lock:
            self.sent.append({"messages": list(messages), "params": dict(params), "response_format": response_format})
            i = self._i
            self._i += 1
        if callable(self._responses):
            text = self._responses(messages, params, response_format)
        elif self._responses:
            text = self._responses[i % len(self._responses)]
        else:
            text = json.dumps(_dummy_from_schema((response_format or {}).get("schema")
                                                 or ((response_format or {}).get("json_schema") or {}).get("schema"),
                                                 request_hash([messages, params])))
        if isinstance(text, BaseException):
            raise text
        prompt_tokens = sum(len(str(m.get("content", "")).split()) for m in messages)
        return text, Usage(prompt_tokens, len(str(text).split())), "stop"


_DUMMY_WORDS = ["careful", "loud", "generous", "quiet", "strict", "clever", "lazy", "honest", "proud", "poor",
                "wealthy", "pious", "rude", "kind", "orthodox", "modern", "traditional", "frugal", "noisy", "gentle"]


def _dummy_from_schema(schema: Optional[dict], seed_hex: str, depth: int = 0) -> Any:
    rnd = random.Random(seed_hex)
    if not schema:
        return {"text": _DUMMY_WORDS[rnd.randrange(len(_DUMMY_WORDS))]}
    t = schema.get("type")
    if t == "object":
        return {k: _dummy_from_schema(v, f"{seed_hex}:{k}", depth + 1) for k, v in (schema.get("properties") or {}).items()}
    if t == "array":
        n = max(int(schema.get("minItems", 3)), 1)
        n = min(n, int(schema.get("maxItems", n)))
        return [_dummy_from_schema(schema.get("items") or {"type": "string"}, f"{seed_hex}:{i}", depth + 1) for i in range(n)]
    if t == "string":
        if "enum" in schema:
            return schema["enum"][0]
        return _DUMMY_WORDS[rnd.randrange(len(_DUMMY_WORDS))]
    if t in ("integer", "number"):
        return rnd.randrange(10)
    if t == "boolean":
        return True
    return None


def get_llm(name: str = "openai", model: Optional[str] = None, *, base_url: Optional[str] = None, **kw: Any) -> LLM:
    """Build an LLM client from the registry: ``get_llm("openai", model="gpt-4o-mini")``."""
    return LLMS.create(name, model or ("dummy" if name == "dummy" else ""), base_url=base_url, **kw)
