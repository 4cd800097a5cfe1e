"""The one cache layer of the evaluators (lm-evaluation-harness's ``CachingLM`` pattern).

Every model output biaskit computes for evaluation (token log-probabilities of the scoring engine,
next-sentence probabilities of StereoSet's NSP head, SEAT sentence encodings) goes through
:func:`cached_results`: each request is hashed (SHA-256 of its canonical JSON, which names the
model, its numerics and the exact input), the hits are read from :class:`biaskit.cache.DiskCache`
in one query, identical requests are computed once, and the misses are computed batch by batch,
each batch written to the cache as soon as it is done. A re-run costs nothing for what was already
computed, and an interrupted run loses at most the batch in flight.

All of it lives in one SQLite file (``$BIASKIT_CACHE_DIR/cache.sqlite3``), namespace ``lm-scores``
unless a caller passes its own :class:`~biaskit.cache.DiskCache`.
"""
from __future__ import annotations

from pathlib import Path
from typing import Any, Callable, Iterable, Sequence

from biaskit.cache import DiskCache

NAMESPACE = "lm-scores"

# (indices into the requests, one result per index) for every finished batch
Batches = Iterable[tuple[Sequence[int], Sequence[Any]]]


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


def cached_results(cache: DiskCache | None, keys: Sequence[Any], run: Callable[[list[int]], Batches]) -> list[Any]:
    """The result of every request, from ``cache`` where present, else computed by ``run``.

    ``keys[i]`` identifies request ``i`` (a JSON-serialisable object; hashed with
    :func:`biaskit.cache.request_hash`). ``run(todo)`` receives the indices of the requests to
    compute (one per distinct key, cache misses only) and yields ``(indices, results)`` per batch;
    each batch is written to the cache before the next one is computed. Results must be
    JSON-serialisable; a cached result reads back equal to the computed one.
    """
    hashed = [DiskCache.key(k) for k in keys]
    first: dict[str, int] = {}
    for i, h in enumerate(hashed):
        first.setdefault(h, i)
    by_hash: dict[str, Any] = cache.get_many(list(first)) if cache is not None and first else {}
    todo = [i for h, i in first.items() if h not in by_hash]
    if todo:
        for idx, values in run(todo):
            batch = [(hashed[i], v) for i, v in zip(idx, values)]
            if cache is not None:
                cache.set_many(batch)
            by_hash.update(batch)
    return [by_hash[h] for h in hashed]
