"""LLM clients for curation: any OpenAI-compatible endpoint, with structured output, repair,
retries, a persistent response cache, usage and cost accounting.

::

    from biaskit.curation.llm import get_llm
    llm = get_llm("openai", model="gpt-4o-mini")                 # OPENAI_API_KEY / OPENAI_BASE_URL
    llm = get_llm("openai", model="local", base_url="http://127.0.0.1:8000/v1")   # llama.cpp, vLLM, ...
    res = llm.complete_json(messages, schema, temperature=0.7, seed=0, max_tokens=256)
    res.data, res.raw, res.error, res.cached, res.truncated, res.provenance()
    llm.stats.snapshot()  # requests, cache hits, tokens, estimated cost

The package, one job per module:

- :mod:`.protocol` — :class:`LLMClient` (the typed protocol callers depend on), results, errors;
- :mod:`.base` — :class:`BaseLLM`: cache, format negotiation, retries, early stop, reask;
- :mod:`.openai_backend` — the ``openai`` backend (one HTTP call);
- :mod:`.dummy` — the ``dummy`` backend (schema-valid offline replies);
- :mod:`.repair` — parsing and repair of replies, shape coercion, schema validation;
- :mod:`.pricing` — the price table and cost estimates.

Backends are looked up in :data:`LLMS` (the CLI's ``--llm`` choices come from it). A new backend
is a module with a :class:`BaseLLM` subclass implementing ``_send`` plus one ``LLMS.register``
line below (see docs/curation.md, "Adding an LLM backend").
"""

from __future__ import annotations

from typing import Any

from biaskit.llm_options import LLMS  # the registry is the floor's (annotate prelabel offers the same --llm)

from .base import FORMAT_MODES, BaseLLM
from .dummy import DummyLLM
from .pricing import DEFAULT_PRICES, estimate_cost, is_local_endpoint, load_prices
from .protocol import EndpointError, LLMClient, LLMError, LLMResult, Messages, Stats, Usage
from .repair import coerce_to_schema, parse_json_lenient, validate_schema

LLMS.register(
    "openai",
    "biaskit.curation.llm.openai_backend:OpenAILLM",
    help="any OpenAI-compatible chat completions endpoint (OpenAI, llama.cpp, vLLM, Ollama, ...)",
)
LLMS.register("dummy", DummyLLM, help="deterministic schema-valid replies, offline (for trying the commands)")


def get_llm(name: str = "openai", model: str | None = None, *, base_url: str | None = None, **kw: Any) -> LLMClient:
    """Build an LLM client from the registry: ``get_llm("openai", model="gpt-4o-mini")``."""
    return LLMS.create(name, model or ("dummy" if name == "dummy" else ""), base_url=base_url, **kw)


__all__ = [
    "LLMS",
    "get_llm",
    "LLMClient",
    "BaseLLM",
    "DummyLLM",
    "LLMResult",
    "Usage",
    "Stats",
    "Messages",
    "LLMError",
    "EndpointError",
    "FORMAT_MODES",
    "DEFAULT_PRICES",
    "load_prices",
    "estimate_cost",
    "is_local_endpoint",
    "parse_json_lenient",
    "coerce_to_schema",
    "validate_schema",
]
