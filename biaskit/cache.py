"""A persistent key/value cache on SQLite (WAL), shared by every stage.

Keys are SHA-256 hashes of a canonical JSON of the full request (as lm-evaluation-harness's
CachingLM keys by request hash); values are JSON. Used for LM scores (keyed by model fingerprint +
sentence + method), LLM responses and MT outputs, so a re-run costs nothing and an interrupted
run resumes. Writes commit immediately; concurrent readers/writers in threads and processes are
fine (WAL, a 60 s busy timeout, and a retry around opening a fresh file).

:func:`cached_results` is the one way a batch of work goes through the cache (lm-evaluation-harness's
``CachingLM`` pattern): the evaluators' scores, NSP probabilities and sentence encodings
(:mod:`biaskit.evaluation.score_cache` opens their cache) and the MT engines' translations
(:class:`biaskit.curation.translate.CachedEngine`).

No secret is stored: every value passes :func:`biaskit.redact.masked` before it is written (a server
that echoes the API key in a normal reply, issue 28), and :func:`cached_results` returns the masked
results, so a first run and a re-run from the cache give the same records.
"""

from __future__ import annotations

import hashlib
import json
import os
import sqlite3
import threading
import time
from collections.abc import Callable, Iterable, Sequence
from pathlib import Path
from typing import Any

from .redact import known_secrets, masked


def _retry_locked(fn, seconds: float = 60.0) -> None:
    """Run ``fn``, retrying while SQLite says "database is locked". Switching a new database to WAL
    needs a lock that SQLite's busy timeout does not wait for, so two processes opening the same
    fresh cache at once could fail there (tests/test_cur_reliability.py)."""
    deadline = time.monotonic() + seconds
    delay = 0.01
    while True:
        try:
            return fn()
        except sqlite3.OperationalError as exc:
            if "locked" not in str(exc) or time.monotonic() > deadline:
                raise
            time.sleep(delay)
            delay = min(delay * 2, 0.5)


def default_cache_dir() -> Path:
    """``$BIASKIT_CACHE_DIR`` or ``~/.cache/biaskit``."""
    return Path(os.environ.get("BIASKIT_CACHE_DIR") or Path.home() / ".cache" / "biaskit")


def default_model_dir() -> Path:
    """``$BIASKIT_MODEL_DIR`` or ``~/.cache/biaskit/models`` (independent of ``$BIASKIT_CACHE_DIR``): model
    files biaskit unpacks or converts once (the gemma3-270m folder, its GGUF for ``biaskit llm serve``)."""
    return Path(os.environ.get("BIASKIT_MODEL_DIR") or Path.home() / ".cache" / "biaskit" / "models")


def request_hash(obj: Any) -> str:
    """Stable SHA-256 of a JSON-serialisable request (sorted keys, no whitespace)."""
    payload = json.dumps(obj, sort_keys=True, ensure_ascii=False, separators=(",", ":"), default=str)
    return hashlib.sha256(payload.encode("utf-8")).hexdigest()


class DiskCache:
    def __init__(self, path: str | Path | None = None, namespace: str = "default"):
        if path is None:
            path = default_cache_dir() / "cache.sqlite3"
        self.path = Path(path)
        self.path.parent.mkdir(parents=True, exist_ok=True)
        self.namespace = namespace
        self._local = threading.local()
        self._lock = threading.Lock()
        _retry_locked(self._setup)

    def _setup(self) -> None:
        conn = self._conn()
        if conn.execute("PRAGMA journal_mode").fetchone()[0].lower() != "wal":
            conn.execute("PRAGMA journal_mode=WAL")
        conn.execute(
            "CREATE TABLE IF NOT EXISTS kv (ns TEXT NOT NULL, k TEXT NOT NULL, v TEXT NOT NULL, PRIMARY KEY (ns, k))"
        )
        conn.commit()

    def _conn(self) -> sqlite3.Connection:
        conn = getattr(self._local, "conn", None)
        if conn is None:
            conn = sqlite3.connect(self.path, timeout=60)
            conn.execute("PRAGMA synchronous=NORMAL")
            self._local.conn = conn
        return conn

    @staticmethod
    def key(obj: Any) -> str:
        return obj if isinstance(obj, str) and len(obj) == 64 else request_hash(obj)

    def get(self, key: Any, default: Any = None) -> Any:
        row = self._conn().execute("SELECT v FROM kv WHERE ns=? AND k=?", (self.namespace, self.key(key))).fetchone()
        return json.loads(row[0]) if row else default

    def __contains__(self, key: Any) -> bool:
        return (
            self._conn().execute("SELECT 1 FROM kv WHERE ns=? AND k=?", (self.namespace, self.key(key))).fetchone()
            is not None
        )

    def set(self, key: Any, value: Any) -> None:
        with self._lock:
            conn = self._conn()
            conn.execute(
                "INSERT OR REPLACE INTO kv (ns, k, v) VALUES (?, ?, ?)",
                (self.namespace, self.key(key), json.dumps(masked(value), ensure_ascii=False)),
            )
            conn.commit()

    def get_many(self, keys: Iterable[Any]) -> dict[str, Any]:
        """Return ``{hashed_key: value}`` for the keys present."""
        hashed = [self.key(k) for k in keys]
        out: dict[str, Any] = {}
        conn = self._conn()
        for i in range(0, len(hashed), 500):
            chunk = hashed[i : i + 500]
            q = f"SELECT k, v FROM kv WHERE ns=? AND k IN ({','.join('?' * len(chunk))})"
            for k, v in conn.execute(q, (self.namespace, *chunk)):
                out[k] = json.loads(v)
        return out

    def set_many(self, items: Iterable[tuple[Any, Any]]) -> None:
        secrets = known_secrets()
        rows = [(self.namespace, self.key(k), json.dumps(masked(v, secrets), ensure_ascii=False)) for k, v in items]
        if not rows:
            return
        with self._lock:
            conn = self._conn()
            conn.executemany("INSERT OR REPLACE INTO kv (ns, k, v) VALUES (?, ?, ?)", rows)
            conn.commit()

    def __len__(self) -> int:
        return self._conn().execute("SELECT COUNT(*) FROM kv WHERE ns=?", (self.namespace,)).fetchone()[0]

    def clear(self) -> None:
        with self._lock:
            conn = self._conn()
            conn.execute("DELETE FROM kv WHERE ns=?", (self.namespace,))
            conn.commit()


# (indices into the requests, one result per index) for every finished batch
Batches = Iterable[tuple[Sequence[int], Sequence[Any]]]


def cached_results(cache: DiskCache | None, keys: Sequence[Any], run: Callable[[list[int]], Batches]) -> list[Any]:
    """The result of every request, from ``cache`` where present, else computed by ``run``.

    ``keys[i]`` identifies request ``i`` (a JSON-serialisable object, hashed with :func:`request_hash`;
    ``cache=None``: nothing is read or stored). The hits are read in one query, identical requests are
    computed once: ``run(todo)`` receives the indices of the requests to compute (one per distinct key,
    cache misses only) and yields ``(indices, results)`` per batch; each batch is written to the cache
    before the next one is computed, so an interrupted run loses at most the batch in flight. Results
    must be JSON-serialisable (a cached result reads back equal to the computed one); a ``None`` result
    (the work failed for that request) is returned but not stored, so the next run asks again. A result
    holding a secret is returned and stored masked (:func:`biaskit.redact.masked`).
    """
    hashed = [DiskCache.key(k) for k in keys]
    first: dict[str, int] = {}
    for i, h in enumerate(hashed):
        first.setdefault(h, i)
    by_hash: dict[str, Any] = cache.get_many(list(first)) if cache is not None and first else {}
    todo = [i for h, i in first.items() if h not in by_hash]
    if todo:
        secrets = known_secrets()
        for idx, values in run(todo):
            batch = [(hashed[i], masked(v, secrets)) for i, v in zip(idx, values, strict=False)]
            if cache is not None:
                cache.set_many([(h, v) for h, v in batch if v is not None])
            by_hash.update(batch)
    return [by_hash[h] for h in hashed]
