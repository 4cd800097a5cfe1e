"""The scoring engine: token log-probabilities for any planner, computed in one place.

The shape is lm-evaluation-harness's ``LM.loglikelihood(requests)``. A *planner* (the pair scorers
``mlm`` / ``clm``, StereoSet intra/intersentence, sentence pseudo-log-likelihood) turns its records
into :class:`Request` s — token ids, the positions whose output distribution is read, and the
target token at each of them — and an *engine* returns, per request, ``log P(target | input)`` at
every position::

    engine = make_engine(lm, cache=True)         # a LocalEngine wrapped in a CachingEngine
    engine.loglikelihood([Request(ids=(101, 103, 2003, 102), positions=(1,), targets=(2023,))])
    # -> [[-7.31...]]

A masked-LM pseudo-log-likelihood row is the sentence with one position (or a whole word) masked and
that position as target; a causal-LM sentence is one row whose positions ``0..n-2`` predict tokens
``1..n-1``. Everything below is the same for every planner:

- **length check** against the model's maximum positions (no silent truncation);
- **exact-length batching**: requests are grouped by their exact token count, so a batch has no
  padding, no attention mask is built, and the model's SDPA attention runs its unmasked kernel
  (causal models: its causal kernel); each group is cut into batches of at most ``batch_size`` rows
  and ``max_logit_elements`` gathered logits;
- **head gather**: a forward pre-hook on the model's output head keeps only the hidden states of the
  scored positions, so the ``hidden x vocab`` projection (and BERT's transform + layer norm before
  it) runs once per scored token, not once per position of every row; checked once per engine
  against a plain full-logits forward (switched off for an architecture that disagrees);
- **chunked float32 log-softmax** over the gathered logits (bounded memory for 262k vocabularies);
- **device / dtype**: inputs go to the model's device; log-softmax is float32 whatever the weights;
- **progress** (:func:`biaskit.progress.progress`) over the model inputs actually run;
- **de-duplication**: identical requests are computed once.

:class:`CachingEngine` wraps any engine once with the on-disk cache (lm-eval's ``CachingLM``): a
request's key is the engine's :attr:`~LocalEngine.cache_id` (model fingerprint, dtype) plus the
request itself, results are written after every batch (:func:`biaskit.cache.cached_results`).

Adding a backend (see docs/evaluation-scorers.md, "Adding a scorer"): implement
``cache_id``, ``iter_loglikelihood(requests)`` (yield ``(indices, results)`` per batch) and
``loglikelihood``; requests only need a ``cache_key()``. A seq2seq model or a served model
(``/v1/completions`` with ``echo`` and ``logprobs``) is such a backend; the planners and the
cache stay as they are.
"""

from __future__ import annotations

import math
from collections.abc import Iterator, Sequence
from dataclasses import dataclass, field
from typing import Any, Protocol

from biaskit.cache import cached_results
from biaskit.errors import BiaskitError
from biaskit.options import tell
from biaskit.progress import progress

from .models import LoadedLM
from .score_cache import open_cache

ENGINE_CACHE_VERSION = 2  # bump when the meaning of a cached log-probability changes
DEFAULT_BATCH_SIZE = 64  # rows per forward pass; see docs/evaluation-scorers.md "Speed"


@dataclass(frozen=True)
class Request:
    """One model input: ``log P(targets[k] | ids)`` read at output position ``positions[k]``.

    ``text`` only names the request in error messages (it is not part of its identity)."""

    ids: tuple[int, ...]
    positions: tuple[int, ...]
    targets: tuple[int, ...]
    text: str = field(default="", compare=False)

    def cache_key(self) -> dict:
        return {"ids": list(self.ids), "pos": list(self.positions), "tgt": list(self.targets)}


Batch = tuple[list[int], list[list[float]]]


class Engine(Protocol):
    """What a planner needs from a backend (a local model, a seq2seq model, a served model)."""

    name: str
    forward_passes: int
    rows_scored: int

    @property
    def cache_id(self) -> dict: ...

    def describe(self) -> dict: ...

    def check_length(self, n_tokens: int, text: str) -> None: ...

    def iter_loglikelihood(self, requests: Sequence[Any]) -> Iterator[Batch]: ...

    def loglikelihood(self, requests: Sequence[Any]) -> list[list[float]]: ...


def _collect(n: int, batches: Iterator[Batch]) -> list[list[float]]:
    out: list[Any] = [None] * n
    for idx, res in batches:
        for i, r in zip(idx, res, strict=False):
            out[i] = r
    return out


class LocalEngine:
    """Log-probabilities from an in-process Hugging Face masked or causal LM (:class:`LoadedLM`)."""

    def __init__(
        self,
        lm: LoadedLM,
        *,
        batch_size: int = DEFAULT_BATCH_SIZE,
        max_logit_elements: int = 1 << 27,
        progress: bool = True,
        label: str = "",
    ):
        if int(batch_size) < 1:
            raise BiaskitError(
                f"batch size must be >= 1, got {batch_size}. Fix: {tell('batch_size', DEFAULT_BATCH_SIZE)}"
            )
        self.lm = lm
        self.name = lm.name
        self.batch_size = int(batch_size)
        self.max_logit_elements = int(max_logit_elements)
        self.progress = bool(progress)
        self.label = label or lm.name
        self.max_len = max_positions(lm.model.config)
        self.vocab_size = int(getattr(lm.model.config, "vocab_size", 0) or len(lm.tokenizer))
        self.forward_passes = 0  # model calls (0 on a fully cached re-run)
        self.rows_scored = 0  # model inputs (rows) computed
        self._gather_ok: bool | None = None  # None: not verified yet
        self._head_found = False  # the head is looked up at the first forward pass: a re-run answered
        self._head_module = None  # from the cache never loads a lazily loaded model (models.load_lm)
        if lm.device == "cpu":
            keep_freed_memory()

    @property
    def _head(self):
        if not self._head_found:
            self._head_module, self._head_found = _head_module(self.lm.model), True
        return self._head_module

    @property
    def cache_id(self) -> dict:
        return {"engine": "local", "v": ENGINE_CACHE_VERSION, "model": self.lm.fingerprint, "dtype": self.lm.dtype}

    def describe(self) -> dict:
        loaded = getattr(self.lm.model, "loaded", True)
        return {
            "engine": "local",
            "device": self.lm.device,
            "dtype": self.lm.dtype,
            "batch_size": self.batch_size,
            "attention": getattr(self.lm.model.config, "_attn_implementation", None)
            if loaded
            else "(model not loaded: every score came from the cache)",
            "device_map": self.lm.meta.get("device_map"),
        }

    def check_length(self, n_tokens: int, text: str) -> None:
        if self.max_len and n_tokens > self.max_len:
            raise BiaskitError(
                f"sentence too long for the model ({n_tokens} tokens > {self.max_len}): "
                f"{text[:80]!r}. Fix: shorten it or drop the pair"
            )

    def loglikelihood(self, requests: Sequence[Request]) -> list[list[float]]:
        return _collect(len(requests), self.iter_loglikelihood(requests))

    def iter_loglikelihood(self, requests: Sequence[Request]) -> Iterator[Batch]:
        """Yield ``(indices, log-probabilities)`` per batch; duplicates of a request share its result."""
        same: dict[Request, list[int]] = {}
        for i, r in enumerate(requests):
            same.setdefault(r, []).append(i)
        uniq = list(same)
        for r in uniq:
            self.check_length(len(r.ids), r.text or f"token ids {list(r.ids[:20])}")
            if len(r.positions) != len(r.targets):
                raise ValueError("a request needs one target per position")
        scored = [r for r in uniq if r.positions]
        if len(scored) < len(uniq):  # nothing to score: an empty result, no model call
            empty = [i for r in uniq if not r.positions for i in same[r]]
            yield empty, [[] for _ in empty]
        if not scored:
            return
        with progress(len(scored), self.label, enabled=self.progress, unit="model inputs") as bar:
            for batch in self.batches(scored):
                lps = self._run(batch)
                idx, res = [], []
                for r, lp in zip(batch, lps, strict=False):
                    for i in same[r]:
                        idx.append(i)
                        res.append(lp)
                self.rows_scored += len(batch)
                yield idx, res
                bar.advance(len(batch))

    # ---- batching ---------------------------------------------------------------------------------

    def batches(self, reqs: Sequence[Request]) -> Iterator[list[Request]]:
        """Exact-length groups (shortest first), each cut into as few batches as ``batch_size``
        allows, of even size (45 rows at 32 -> 23 + 22, not 32 + 13), then by gathered logits."""
        by_len: dict[Any, list[Request]] = {}
        for r in reqs:
            by_len.setdefault(self.batch_key(r), []).append(r)
        for n in sorted(by_len):
            for chunk in even_chunks(by_len[n], self.batch_size):
                batch: list[Request] = []
                k = 0
                for r in chunk:
                    rk = len(r.positions)
                    if batch and (k + rk) * self.vocab_size > self.max_logit_elements:
                        yield batch
                        batch, k = [], 0
                    batch.append(r)
                    k += rk
                if batch:
                    yield batch

    @staticmethod
    def batch_key(r: Any) -> Any:
        """Requests with equal keys share a batch without padding: the token count (an encoder-decoder
        engine adds the encoder's)."""
        return len(r.ids)

    # ---- one forward pass -------------------------------------------------------------------------

    def _run(self, batch: list[Request]) -> list[list[float]]:
        """One unpadded forward pass over rows of equal length; per row, the target log-probs."""
        import torch

        dev = self.lm.device
        x = torch.tensor([r.ids for r in batch], dtype=torch.long)
        b = torch.tensor([i for i, r in enumerate(batch) for _ in r.positions], dtype=torch.long)
        p = torch.tensor([q for r in batch for q in r.positions], dtype=torch.long)
        tgt = torch.tensor([t for r in batch for t in r.targets], dtype=torch.long)
        if dev != "cpu":
            x, b, p, tgt = x.to(dev), b.to(dev), p.to(dev), tgt.to(dev)
        with torch.inference_mode():
            logits = self._gathered_logits(x, b, p)
            if self._gather_ok is None:
                self._verify_gather(x, b, p, tgt, logits)
                if self._gather_ok is False:
                    logits = self._full_logits(x, b, p)
            lp = target_logprobs(logits, tgt, self.max_logit_elements // 4 or 1)
        flat = lp.double().cpu().tolist()
        out, i = [], 0
        for r in batch:
            out.append(flat[i : i + len(r.positions)])
            i += len(r.positions)
            check_finite(out[-1], self.name, r.text or f"token ids {list(r.ids[:20])}")
        return out

    def _call(self, x):
        self.forward_passes += 1
        return self.lm.model(input_ids=x).logits

    def _full_logits(self, x, b, p):
        return self._call(x)[b, p]

    def _gathered_logits(self, x, b, p):
        if self._gather_ok is False or self._head is None:
            return self._full_logits(x, b, p)
        handle = self._head.register_forward_pre_hook(_gather_hook(b, p))
        try:
            out = self._call(x)
        finally:
            handle.remove()
        if out.dim() == 3 and out.shape[0] == 1 and out.shape[1] == b.numel():
            return out[0]
        return out[b, p]  # the hook did not run on this architecture: plain gather

    def _verify_gather(self, x, b, p, tgt, logits) -> None:
        """Once per engine: compare the gathered logits with a plain forward on the first rows."""
        import torch

        sel = (b < 2).nonzero().flatten()
        full = self._call(x[:2])[b[sel], p[sel]]
        a = torch.log_softmax(logits[sel].float(), -1).gather(-1, tgt[sel, None])
        c = torch.log_softmax(full.float(), -1).gather(-1, tgt[sel, None])
        self._gather_ok = bool(torch.allclose(a, c, atol=1e-4, rtol=0))


class CachingEngine:
    """Any engine plus the on-disk cache (lm-evaluation-harness's ``CachingLM``)."""

    def __init__(self, inner: Any, cache: Any):
        self.inner = inner
        self.cache = open_cache(cache)

    def __getattr__(self, name: str) -> Any:  # name, forward_passes, rows_scored, check_length, ...
        return getattr(self.inner, name)

    @property
    def cache_id(self) -> dict:
        return self.inner.cache_id

    def describe(self) -> dict:
        return {**self.inner.describe(), "cache": str(self.cache.path) if self.cache is not None else None}

    def loglikelihood(self, requests: Sequence[Any]) -> list[list[float]]:
        cid = self.inner.cache_id
        keys = [{"lp": cid, **r.cache_key()} for r in requests]

        def run(todo: list[int]):
            for idx, res in self.inner.iter_loglikelihood([requests[i] for i in todo]):
                yield [todo[i] for i in idx], res

        return cached_results(self.cache, keys, run)

    def iter_loglikelihood(self, requests: Sequence[Any]) -> Iterator[Batch]:
        yield list(range(len(requests))), self.loglikelihood(requests)


def make_engine(
    lm: LoadedLM,
    *,
    batch_size: int = DEFAULT_BATCH_SIZE,
    cache: Any = True,
    progress: bool = True,
    max_logit_elements: int = 1 << 27,
    label: str = "",
) -> Any:
    """The engine for ``lm``: a :class:`LocalEngine`, wrapped in a :class:`CachingEngine` unless
    ``cache`` is ``False``/``None``."""
    eng = LocalEngine(lm, batch_size=batch_size, max_logit_elements=max_logit_elements, progress=progress, label=label)
    return CachingEngine(eng, cache) if open_cache(cache) is not None else eng


# ---- helpers ------------------------------------------------------------------------------------------


def check_finite(values: Sequence[float], model: str, item: str) -> None:
    """What a model computed for one item is finite: a NaN or an infinite value (NaN weights, an
    overflow in float16) is an error naming the item, never a number in a report."""
    bad = next((v for v in values if not math.isfinite(v)), None)
    if bad is not None:
        raise BiaskitError(
            f"'{model}' gave {'NaN' if bad != bad else 'an infinite value'} for {item[:80]!r}, so no score can be "
            "computed. Fix: check the model's weights for NaN or infinite values (a damaged or diverged "
            "checkpoint?), or load it in float32 if it runs in float16"
        )


_ALLOCATOR_TUNED: bool | None = None


def keep_freed_memory() -> bool:
    """Let glibc keep freed activation buffers for reuse instead of giving them back to the OS.

    By default glibc serves every allocation above a moving threshold (128 KiB to 32 MiB) with a
    fresh ``mmap`` and returns it with ``munmap`` when freed, so each forward pass on the CPU
    page-faults (and has the kernel zero) all of its activations again; measured on bert-base, that
    costs 5-10% of the forward pass. ``mallopt`` raises the mmap threshold to its 32 MiB maximum and
    the trim threshold to 1 GiB, which is what PyTorch's CPU tuning guide gets from jemalloc or
    tcmalloc. Process-wide, once; a no-op (False) where the C library is not glibc."""
    global _ALLOCATOR_TUNED
    if _ALLOCATOR_TUNED is None:
        import ctypes
        import ctypes.util

        try:
            libc = ctypes.CDLL(ctypes.util.find_library("c") or "libc.so.6")
            M_TRIM_THRESHOLD, M_MMAP_THRESHOLD = -1, -3
            _ALLOCATOR_TUNED = bool(libc.mallopt(M_TRIM_THRESHOLD, 1 << 30)) and bool(
                libc.mallopt(M_MMAP_THRESHOLD, 32 << 20)
            )
        except (OSError, AttributeError):  # not glibc (macOS, musl without mallopt)
            _ALLOCATOR_TUNED = False
    return _ALLOCATOR_TUNED


def _gather_hook(b, p):
    """Forward pre-hook: replace the head's input hidden states ``[B, L, H]`` by ``[1, K, H]``, the
    hidden states of the K scored positions. Everything in a LM head (BERT's transform + layer norm,
    the vocabulary projection, gemma's logit soft-capping) is per position, so the gathered logits
    equal the full logits at those positions."""

    def hook(module: Any, args: tuple) -> tuple | None:
        if not args:
            return None
        return (args[0][b, p].unsqueeze(0),) + tuple(args[1:])

    return hook


def _head_module(model: Any) -> Any:
    """The module that maps the encoder's last hidden states to logits: the model's only child
    besides its base model when that child holds the output embeddings (BERT ``cls``, RoBERTa
    ``lm_head``, GPT-2/Gemma ``lm_head``), else the output-embedding layer itself."""
    out = model.get_output_embeddings()
    if out is None:
        return None
    prefix = getattr(model, "base_model_prefix", "")
    others = [m for n, m in model.named_children() if n != prefix]
    if len(others) == 1 and any(m is out for m in others[0].modules()):
        return others[0]
    return out


def target_logprobs(logits, tgt, chunk_elems: int):
    """``log_softmax(logits)[k, tgt[k]]`` in float32, computed in row chunks to bound memory.

    ``torch.log_softmax`` in float32 is the operation of the reference loops (bit-identical per
    row). Over gemma's 262k-word vocabulary it is ~1e-4 per token away from a float64 computation
    (``logsumexp`` would be ~1e-6); we keep the reference's operation for parity."""
    import torch

    V = logits.shape[-1]
    rows = max(1, chunk_elems // max(V, 1))
    parts = []
    for i in range(0, logits.shape[0], rows):
        lg = logits[i : i + rows].float()
        parts.append(torch.log_softmax(lg, -1).gather(-1, tgt[i : i + rows, None])[:, 0])
    return torch.cat(parts) if parts else logits.new_zeros(0)


def max_positions(config: Any) -> int | None:
    """The longest input the model accepts (RoBERTa-style models reserve ``pad_token_id + 1``)."""
    for name in ("max_position_embeddings", "n_positions", "max_seq_len"):
        v = getattr(config, name, None)
        if isinstance(v, int) and v > 0:
            off = (
                (getattr(config, "pad_token_id", 0) or 0) + 1
                if getattr(config, "model_type", "") in ("roberta", "xlm-roberta", "camembert", "xlm-roberta-xl")
                else 0
            )
            return v - off
    return None


def even_chunks(items: Sequence[Any], size: int) -> Iterator[list[Any]]:
    """``items`` in the fewest chunks of at most ``size``, their sizes differing by at most one."""
    n = len(items)
    if n == 0:
        return
    k = -(-n // size)
    base, extra = divmod(n, k)
    i = 0
    for j in range(k):
        m = base + (1 if j < extra else 0)
        yield list(items[i : i + m])
        i += m


def forward_batches(
    todo: Sequence[int],
    enc: Sequence[dict],
    batch_size: int,
    device: Any,
    fn: Any,
    keys: Sequence[str] = ("input_ids", "token_type_ids"),
) -> Iterator[tuple[list[int], Any]]:
    """Run ``fn(inputs)`` over tokenized inputs in exact-length batches (no padding, no attention mask)
    under ``torch.inference_mode``: ``enc[j]`` holds the token lists of request ``todo[j]``; yields
    ``(request indices, fn's results)`` per batch, the shape :func:`biaskit.cache.cached_results`
    expects. Used by everything that is not a log-probability request (NSP heads, sentence encodings,
    sentiment classifiers)."""
    import torch

    for batch in length_batches([len(e["input_ids"]) for e in enc], batch_size):
        x = {k: torch.tensor([enc[j][k] for j in batch], device=device) for k in keys if k in enc[batch[0]]}
        with torch.inference_mode():
            out = fn(x)
        yield [todo[j] for j in batch], out


def length_batches(lengths: Sequence[int], batch_size: int) -> Iterator[list[int]]:
    """Indices grouped by exact length (shortest first), in even batches of at most ``batch_size``:
    the batching rule of :class:`LocalEngine` for inputs that are not log-probability requests
    (NSP pairs, sentence encodings)."""
    by_len: dict[int, list[int]] = {}
    for i, n in enumerate(lengths):
        by_len.setdefault(n, []).append(i)
    for n in sorted(by_len):
        yield from even_chunks(by_len[n], batch_size)
