"""The one cache layer of the evaluators (lm-evaluation-harness's ``CachingLM`` pattern).

Every model output biaskit computes for evaluation (token log-probabilities of the scoring engine,
next-sentence probabilities of StereoSet's NSP head, SEAT sentence encodings) goes through
:func:`biaskit.cache.cached_results` (the function the MT engines' cache uses too): each request is
hashed (SHA-256 of its canonical JSON, which names the model, its numerics and the exact input), the
hits are read from :class:`biaskit.cache.DiskCache` in one query, identical requests are computed
once, and the misses are computed batch by batch, each batch written to the cache as soon as it is
done. A re-run costs nothing for what was already
computed, and an interrupted run loses at most the batch in flight.

All of it lives in one SQLite file (``$BIASKIT_CACHE_DIR/cache.sqlite3``), namespace ``lm-scores``
unless a caller passes its own :class:`~biaskit.cache.DiskCache`.
"""

from __future__ import annotations

from pathlib import Path
from typing import Any

from biaskit.cache import DiskCache

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
