"""Token prices and cost estimates for the run log (USD per 1M input / output tokens).

The defaults are list prices as published by the providers (mid-2025). ``--prices FILE`` (TOML or
JSON ``{"model": [input, output]}``) or ``$BIASKIT_LLM_PRICES`` add or override entries. Endpoints
on localhost cost 0; unknown hosted models cost ``None`` ("unknown").
"""

from __future__ import annotations

import json
import os
import re
from pathlib import Path

from biaskit.errors import InputError

from .protocol import Usage

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


def load_prices(path: str | Path | None = None) -> dict[str, tuple[float, float]]:
    """The default price table updated from ``path`` or ``$BIASKIT_LLM_PRICES`` (TOML or JSON)."""
    prices = dict(DEFAULT_PRICES)
    path = path or os.environ.get("BIASKIT_LLM_PRICES")
    if not path:
        return prices
    p = Path(path)
    fix = "pass a TOML/JSON file mapping model -> [input, output] USD per 1M tokens."
    try:
        text = p.read_text(encoding="utf-8-sig")
    except FileNotFoundError:
        raise InputError("price file not found.", path=p, fix=fix) from None
    except (IsADirectoryError, UnicodeDecodeError) as exc:
        raise InputError(f"cannot read the price file ({type(exc).__name__}).", path=p, fix=fix) from None
    try:
        if p.suffix.lower() == ".toml":
            import tomllib

            obj = tomllib.loads(text)
        else:
            obj = json.loads(text)
    except ValueError as exc:  # tomllib.TOMLDecodeError and json.JSONDecodeError are ValueErrors
        raise InputError(
            f"cannot parse the price file ({exc}).",
            path=p,
            fix='write e.g. {"my-model": [0.5, 1.5]} (USD per 1M input, output tokens).',
        ) from None
    if not isinstance(obj, dict):
        raise InputError("the price file must map model names to prices.", path=p, fix=fix)
    for model, val in obj.items():
        if isinstance(val, dict):
            val = [val.get("input"), val.get("output")]
        if not (isinstance(val, (list, tuple)) and len(val) == 2 and all(isinstance(x, (int, float)) for x in val)):
            raise InputError(
                f"price for '{model}' must be [input, output] numbers, got {val!r}.",
                path=p,
                fix="USD per 1M tokens, e.g. [0.15, 0.6].",
            )
        prices[str(model)] = (float(val[0]), float(val[1]))
    return prices


def is_local_endpoint(base_url: str | None) -> bool:
    return bool(base_url) and bool(
        re.match(r"^https?://(localhost|127\.\d+\.\d+\.\d+|\[::1\]|0\.0\.0\.0)(:|/|$)", base_url or "")
    )


def estimate_cost(
    model: str, usage: Usage, prices: dict[str, tuple[float, float]], base_url: str | None = None
) -> float | None:
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
