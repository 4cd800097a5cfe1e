"""The ``dummy`` backend: deterministic replies without a network, for trying the commands offline
(``--llm dummy``) and for tests of pipeline logic.

Without scripted ``responses`` every reply is built from the JSON Schema the task asks for, so it
is valid for every prompt: objects get their properties, arrays between ``minItems`` and
``maxItems`` distinct items, strings a length within ``minLength``/``maxLength`` (or an ``enum``
value), numbers within ``minimum``/``maximum``. Text is made of a fixed word list, and the phrases the
prompt puts in double quotes (the identity term in the sentence prompt: ``"Dalit"``; the target term
and ``"BLANK"`` in the intrasentence CAT prompt) are used in sentence-length strings, the first as
the subject and the others after it, so generated sentences mention them and later steps (pairs,
check, translate, CAT checks) have something to work on. The same request always gets the same reply. It is not a
model: the words mean nothing.
"""

from __future__ import annotations

import json
import random
import re
import threading
from collections.abc import Callable, Sequence
from typing import Any

from biaskit.cache import request_hash

from .base import BaseLLM
from .protocol import Messages, Usage

WORDS = [
    "careful",
    "loud",
    "generous",
    "quiet",
    "strict",
    "clever",
    "lazy",
    "honest",
    "proud",
    "poor",
    "wealthy",
    "pious",
    "rude",
    "kind",
    "orthodox",
    "modern",
    "traditional",
    "frugal",
    "noisy",
    "gentle",
]
_SENTENCE_MIN = 12  # strings that must be at least this long are written as sentences


def prompt_phrases(messages: Messages) -> list[str]:
    """Short phrases the last user message puts in double quotes, JSON examples left out."""
    user = next((str(m.get("content", "")) for m in reversed(list(messages)) if m.get("role") == "user"), "")
    prose, before = user, None
    while prose != before:  # nested JSON examples ({"items": [{...}]}) from the inside out
        before, prose = prose, re.sub(r"\{[^{}]*\}", " ", prose)
    out: list[str] = []
    for p in re.findall(r'"([^"\n]{1,40})"', prose):
        p = p.strip()
        if re.search(r"\w", p) and p not in out:
            out.append(p)
    return out


def _fit(text: str, schema: dict) -> str:
    lo, hi = int(schema.get("minLength", 0)), schema.get("maxLength")
    while len(text) < lo:
        text = text.rstrip(".") + " and " + WORDS[len(text) % len(WORDS)] + "."
    if hi is not None and len(text) > int(hi):
        text = text[: int(hi)]
    return text


def from_schema(schema: dict | None, seed: str, phrases: Sequence[str] = (), _index: int = 0) -> Any:
    """A value that validates against ``schema`` (deterministic in ``seed``)."""
    rnd = random.Random(seed)
    if not schema:
        return {"text": WORDS[rnd.randrange(len(WORDS))]}
    for alt in ("anyOf", "oneOf"):
        if schema.get(alt):
            return from_schema(schema[alt][0], seed, phrases, _index)
    if "const" in schema:
        return schema["const"]
    if "enum" in schema:
        return schema["enum"][0]
    t = schema.get("type")
    if isinstance(t, list):
        t = next((x for x in t if x != "null"), t[0])
    if t == "object" or (t is None and "properties" in schema):
        props = schema.get("properties") or {}
        return {k: from_schema(v, f"{seed}/{k}", phrases) for k, v in props.items()}
    if t == "array":
        lo = int(schema.get("minItems", 0))
        n = max(lo, 3)
        if "maxItems" in schema:
            n = min(n, int(schema["maxItems"]))
        items = schema.get("items") or {"type": "string"}
        out: list[Any] = []
        for i in range(n * 4):  # distinct items (uniqueItems, and dedup in the tasks)
            v = from_schema(items, f"{seed}/{i}", phrases, i)
            if v not in out:
                out.append(v)
            if len(out) == n:
                break
        return out
    if t == "string":
        lo = int(schema.get("minLength", 0))
        words = rnd.sample(WORDS, 3)
        if lo >= _SENTENCE_MIN:
            subject = phrases[0] if phrases else "The neighbour"
            text = (
                f"{subject} people are {words[0]} and {words[1]}"
                if phrases
                else f"{subject} is {words[0]} and {words[1]}"
            )
            text += "".join(f", {p}" for p in phrases[1:]) + "."
            return _fit(text, schema)
        return _fit(WORDS[(_index + rnd.randrange(len(WORDS))) % len(WORDS)], schema)
    if t in ("integer", "number"):
        lo = schema.get("minimum", schema.get("exclusiveMinimum", -1) + 1)
        hi = schema.get("maximum", lo + 9)
        return rnd.randint(int(lo), max(int(lo), int(hi)))
    if t == "boolean":
        return True
    return None


class DummyLLM(BaseLLM):
    """Deterministic replies, for ``--llm dummy`` and tests of pipeline logic.

    ``responses``: a list of strings returned in turn (cycled), or a callable
    ``(messages, params, response_format) -> str`` (it may return an exception to raise). Without it,
    the reply is built from the request's JSON Schema (see the module docstring). No network; usage
    counts whitespace-separated words; every request is recorded in ``sent``.
    """

    name = "dummy"

    def __init__(
        self,
        model: str = "dummy",
        *,
        responses: Sequence[str] | Callable[..., str] | None = None,
        base_url: str | None = None,
        **kw: Any,
    ):
        super().__init__(model, base_url=base_url or "dummy://local", **kw)
        self._responses = responses
        self._i = 0
        self._sent_lock = threading.Lock()
        self.sent: list[dict[str, Any]] = []

    def _cost(self, usage: Usage) -> float:
        return 0.0  # no provider, nothing to pay

    def _send(self, messages, params, response_format):
        with self._sent_lock:
            self.sent.append({"messages": list(messages), "params": dict(params), "response_format": response_format})
            i = self._i
            self._i += 1
        if callable(self._responses):
            text = self._responses(messages, params, response_format)
        elif self._responses:
            text = self._responses[i % len(self._responses)]
        else:
            rf = response_format or {}
            schema = rf.get("schema") or (rf.get("json_schema") or {}).get("schema")
            value = from_schema(schema, request_hash([list(messages), params]), prompt_phrases(messages))
            text = json.dumps(value, ensure_ascii=False)
        if isinstance(text, BaseException):
            raise text
        prompt_tokens = sum(len(str(m.get("content", "")).split()) for m in messages)
        return text, Usage(prompt_tokens, len(str(text).split())), "stop"
