"""On-disk cache of sentence scores (``biaskit.cache.DiskCache``, namespace ``lm-scores``).

A key is the SHA-256 of: a format version, the model fingerprint, the scorer, its method and unit,
whether text was lower-cased, the sentence text and (for ``mlm``) the exact groups of token positions
that are masked and scored, because a masked-LM score of a sentence depends on its partner through
the U/M spans. The value is ``{"sum": total log-probability, "n": tokens scored}``, so the causal
scorer's ``sum`` and ``mean`` share one entry, and a re-run or a second metric costs no forward pass.
"""
from __future__ import annotations

from pathlib import Path
from typing import Any, Iterable

from biaskit.cache import DiskCache, request_hash

CACHE_VERSION = 1
NAMESPACE = "lm-scores"


def open_cache(cache: Any) -> DiskCache | None:
    """``True`` -> the default cache file, ``False``/``None`` -> no cache, a path or a DiskCache."""
    if cache is None or cache is False:
        return None
    if cache is True:
        return DiskCache(namespace=NAMESPACE)
    if isinstance(cache, DiskCache):
        return cache
    if isinstance(cache, (str, Path)):
        p = Path(cache)
        return DiskCache(p / "cache.sqlite3" if p.suffix == "" else p, namespace=NAMESPACE)
    raise TypeError(f"cache must be bool, a path or a DiskCache, not {type(cache).__name__}")


def score_key(*, fingerprint: str, scorer: str, method: str, unit: str, lowercase: bool, text: str,
              groups: Iterable[Iterable[int]] | None = None, extra: dict | None = None) -> str:
    return request_hash({
        "v": CACHE_VERSION, "model": fingerprint, "scorer": scorer, "method": method, "unit": unit,
        "lower": bool(lowercase), "text": text,
        "groups": [list(g) for g in groups] if groups is not None else None, "extra": extra or {},
    })
