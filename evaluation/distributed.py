"""Several processes (GPUs) for one scoring run: each scores a shard of the plan into the shared cache.

Launched with ``torchrun --nproc-per-node N -m biaskit evaluate pairs ...`` (or ``accelerate launch``),
every process runs the same command. The plan is deterministic: the distinct engine requests of the
pairs (:meth:`PairScorer.pair_requests`) cut into the engine's exact-length batches
(:meth:`LocalEngine.batches`). Rank ``r`` of ``w`` runs batches ``r, r + w, r + 2w, ...`` — each one
exactly as one process would run it, same rows, same shape — through the caching engine, so every
result lands in the shared SQLite cache (WAL: concurrent writers are safe). After a barrier, rank 0
scores the pairs as usual, which now reads every result from the cache (no forward pass), and writes
the outputs; the other ranks write nothing. The result is identical to one process, bit for bit,
because each cached value was computed by the same batch a single process would have run.

Without ``torchrun`` (``WORLD_SIZE`` unset or 1) nothing changes. The process group is gloo on the
CPU and NCCL on GPUs; with ``--device auto``/``cuda`` rank ``r`` uses ``cuda:$LOCAL_RANK``.
"""

from __future__ import annotations

import os
from collections.abc import Sequence
from typing import Any

from biaskit.errors import BiaskitError
from biaskit.options import unset


def world() -> tuple[int, int]:
    """``(rank, world size)`` from torchrun's environment (``(0, 1)`` outside it)."""
    return int(os.environ.get("RANK", "0") or 0), int(os.environ.get("WORLD_SIZE", "1") or 1)


def is_main_process() -> bool:
    return world()[0] == 0


def rank_device(device: str) -> str:
    """Each rank its own GPU (``cuda:$LOCAL_RANK``) when several processes share a node."""
    rank, size = world()
    if size > 1 and (device or "auto").lower() in ("auto", "cuda"):
        import torch

        if torch.cuda.is_available():
            return f"cuda:{int(os.environ.get('LOCAL_RANK', '0') or 0)}"
        return "cpu" if (device or "auto").lower() == "auto" else device
    return device


def _group(device: str):
    import torch.distributed as dist

    if not dist.is_initialized():
        dist.init_process_group(backend="nccl" if str(device).startswith("cuda") else "gloo")
    return dist


def score_pairs(scorer: Any, pairs: Sequence[tuple[str, str]]) -> list | None:
    """``scorer.score_pairs(pairs)``, shared among the torchrun processes (see the module docstring).

    Returns the scores on rank 0 and ``None`` on the other ranks (after their shard is cached)."""
    rank, size = world()
    inner = getattr(scorer.engine, "inner", None)
    if size <= 1 or inner is None or not hasattr(inner, "batches"):
        return scorer.score_pairs(pairs)
    if getattr(scorer.engine, "cache", None) is None:
        raise BiaskitError(f"several processes share their results through the score cache. Fix: {unset('no_cache')}")
    dist = _group(scorer.lm.device)
    plan = list(inner.batches(scorer.pair_requests(pairs)))
    for batch in plan[rank::size]:
        scorer.engine.loglikelihood(batch)  # exactly this batch, written to the shared cache
    dist.barrier()
    out = scorer.score_pairs(pairs) if rank == 0 else None
    dist.barrier()  # the others leave only when rank 0 has read everything
    return out
