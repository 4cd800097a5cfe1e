"""Pair scorers: how likely a language model finds each sentence of a minimal pair.

``load_scorer("mlm" | "clm", model, ...)`` returns a :class:`PairScorer` whose
``score_pairs([(sent_more, sent_less), ...])`` gives one :class:`PairScore` per pair (higher = more
likely). The two scorers (see ``mlm.py`` / ``clm.py`` and ``docs/evaluation-scorers.md``):

- ``mlm``: CrowS-Pairs pseudo-log-likelihood (Nangia et al., 2020), ``method="pll"`` (default,
  P(U|M): mask each unmodified token in turn) or ``"pmu"`` (P(M|U): mask each modified token in
  turn), ``unit="token"`` (reference) or ``"word"`` (IndiBias §6.1, whole-word masking);
- ``clm``: sentence log-probability under a causal LM, ``method="sum"`` (default) or ``"mean"``
  (per scored token, as IndiBias normalises).

Execution (shared by both, in :class:`PairScorer`): all masked variants / sentences of all pairs are
de-duplicated, looked up in the on-disk score cache, sorted by length and packed into padded
batches of ``batch_size`` rows, run under ``torch.inference_mode``, and the LM head is applied only
at the positions that are scored (a pre-hook on the output-embedding layer gathers those hidden
states, verified once per scorer against the plain full-logits forward). Finished sentences are
written to the cache after every batch, so an interrupted run resumes where it stopped.
"""
from __future__ import annotations

import contextlib
from dataclasses import dataclass
from typing import Any, Iterable, Sequence

from biaskit.errors import BiaskitError
from biaskit.registry import Registry

from .models import AmbiguousKindError, LoadedLM, load_lm
from .score_cache import open_cache

SCORERS: Registry = Registry("scorer")
SCORERS.register("mlm", "biaskit.evaluation.mlm:MLMScorer",
                 help="masked LM pseudo-log-likelihood (CrowS-Pairs; methods pll|pmu; units token|word)")
SCORERS.register("clm", "biaskit.evaluation.clm:CLMScorer",
                 help="causal LM sentence log-probability (methods sum|mean)")


@dataclass
class PairScore:
    """Scores of the two sentences of a pair (log-probabilities: higher = more likely)."""

    score_more: float
    score_less: float
    n_scored_more: int
    n_scored_less: int

    @property
    def ds(self) -> float:
        """Difference of scores, ``score_more - score_less`` (IndiBias Appendix C)."""
        return self.score_more - self.score_less


@dataclass
class _Job:
    """One unique sentence to score: its ids and the groups of positions masked+scored together."""

    key: str
    text: str
    ids: tuple[int, ...]
    groups: tuple[tuple[int, ...], ...]
    n_rows: int = 0


class _HeadGather:
    """Forward pre-hook on the output-embedding (vocabulary projection) layer that keeps only the
    hidden states of the scored positions, so the ``hidden x vocab`` matmul runs K times instead of
    ``batch x length`` times. Anything between the encoder and that layer (BERT's transform + layer
    norm) is per-position, so the gathered logits equal the full logits at those positions."""

    def __init__(self, module: Any):
        self.index: tuple[Any, Any] | None = None
        self.handle = module.register_forward_pre_hook(self._hook)

    def _hook(self, module: Any, args: tuple) -> tuple | None:
        if self.index is None or not args:
            return None
        h = args[0]
        b, p = self.index
        return (h[b, p].unsqueeze(0),) + tuple(args[1:])

    def remove(self) -> None:
        self.handle.remove()


class PairScorer:
    """Base class: batching, de-duplication, caching and progress for the LM scorers."""

    name: str = "base"
    methods: tuple[str, ...] = ()
    units: tuple[str, ...] = ("token",)
    kind: str = ""

    def __init__(self, lm: LoadedLM, *, unit: str = "token", method: str | None = None,
                 batch_size: int = 32, cache: Any = True, progress: bool = True,
                 lowercase: bool | None = None, max_logit_elements: int = 1 << 27):
        if not isinstance(lm, LoadedLM):
            raise TypeError("lm must be a LoadedLM (see biaskit.evaluation.models.load_lm)")
        if lm.kind != self.kind:
            other = "clm" if self.kind == "mlm" else "mlm"
            raise BiaskitError(f"model '{lm.name}' is a {'causal' if lm.kind == 'clm' else 'masked'} LM but "
                               f"scorer '{self.name}' needs a {'masked' if self.kind == 'mlm' else 'causal'} "
                               f"LM. Fix: use --scorer {other}")
        unit, method = self.check_options(unit, method, batch_size)
        self.lm = lm
        self.unit = unit
        self.method = method
        self.batch_size = int(batch_size)
        self.progress = bool(progress)
        self.max_logit_elements = int(max_logit_elements)
        self.lowercase = is_uncased(lm.tokenizer) if lowercase is None else bool(lowercase)
        self.cache = open_cache(cache)
        self.forward_passes = 0  # model calls made by this scorer (0 on a fully cached re-run)
        self.rows_scored = 0
        self._gather_ok: bool | None = None  # None: not verified yet
        tok = lm.tokenizer
        self.pad_id = tok.pad_token_id if tok.pad_token_id is not None else (tok.eos_token_id or 0)
        self.vocab_size = int(getattr(lm.model.config, "vocab_size", 0) or len(tok))
        self.max_len = _max_positions(lm.model.config)

    @classmethod
    def check_options(cls, unit: str | None, method: str | None, batch_size: int = 32) -> tuple[str, str]:
        """``(unit, method)`` normalised, or the error for an option this scorer lacks (no model needed)."""
        unit = (unit or "token").lower()
        if unit not in cls.units:
            raise BiaskitError(f"scorer '{cls.name}' does not support unit '{unit}'. Fix: use "
                               f"{' or '.join(cls.units)}")
        method = (method or cls.methods[0]).lower()
        if method not in cls.methods:
            raise BiaskitError(f"scorer '{cls.name}' has no method '{method}'. Fix: use one of "
                               f"{', '.join(cls.methods)}")
        if int(batch_size) < 1:
            raise BiaskitError(f"batch size must be >= 1, got {batch_size}. Fix: pass --batch-size 32")
        return unit, method

    # ---- API ------------------------------------------------------------------------------------

    def describe(self) -> dict:
        return {"model": self.lm.name, "fingerprint": self.lm.fingerprint, "scorer": self.name,
                "unit": self.unit, "method": self.method, "normalisation": self._normalisation(),
                "lowercase": self.lowercase, "batch_size": self.batch_size, "device": self.lm.device,
                "dtype": self.lm.dtype}

    def score_pairs(self, pairs: Sequence[tuple[str, str]]) -> list[PairScore]:
        """Score ``[(sent_more, sent_less), ...]``; higher = the model finds the sentence more likely."""
        pairs = [(_check_text(a, i, "first"), _check_text(b, i, "second")) for i, (a, b) in enumerate(pairs)]
        plans = [self._plan_pair(a, b) for a, b in pairs]
        results = self._execute([j for plan in plans for j in plan])
        out = []
        for ja, jb in plans:
            (sa, na), (sb, nb) = results[ja.key], results[jb.key]
            out.append(PairScore(self._finish(sa, na), self._finish(sb, nb), na, nb))
        return out

    def score_texts(self, texts: Sequence[str]) -> list[tuple[float, int]]:
        """Score single sentences: ``(score, n_scored)`` each (mlm: PLL over every non-special token,
        Salazar et al. 2020; clm: log-probability as for pairs)."""
        plans = [self._plan_text(_check_text(t, i, "")) for i, t in enumerate(texts)]
        results = self._execute(plans)
        return [(self._finish(*results[j.key]), results[j.key][1]) for j in plans]

    # ---- to implement ---------------------------------------------------------------------------

    def _plan_pair(self, a: str, b: str) -> tuple[_Job, _Job]:
        raise NotImplementedError

    def _plan_text(self, text: str) -> _Job:
        raise NotImplementedError

    def _rows(self, job: _Job) -> list[tuple[list[int], list[int], list[int]]]:
        """The model inputs for one job: ``(input_ids, scored positions, target ids)`` per row."""
        raise NotImplementedError

    def _finish(self, total: float, n: int) -> float:
        return total

    def _normalisation(self) -> str:
        return "sum"

    # ---- engine ---------------------------------------------------------------------------------

    def _prep(self, text: str) -> str:
        return text.lower() if self.lowercase else text

    def _execute(self, jobs: Iterable[_Job]) -> dict[str, tuple[float, int]]:
        unique: dict[str, _Job] = {}
        for j in jobs:
            unique.setdefault(j.key, j)
        results: dict[str, tuple[float, int]] = {}
        if self.cache is not None and unique:
            for k, v in self.cache.get_many(list(unique)).items():
                results[k] = (float(v["sum"]), int(v["n"]))
        todo = [j for k, j in unique.items() if k not in results]
        rows: list[tuple[int, list[int], list[int], list[int]]] = []
        for ji, job in enumerate(todo):
            jr = self._rows(job)
            job.n_rows = len(jr)
            if not jr:  # nothing to score (e.g. no modified token for pmu)
                results[job.key] = (0.0, 0)
                continue
            for ids, pos, tgt in jr:
                if self.max_len and len(ids) > self.max_len:
                    raise BiaskitError(f"sentence too long for the model ({len(ids)} tokens > {self.max_len}): "
                                       f"{job.text[:80]!r}. Fix: shorten it or drop the pair")
                rows.append((ji, ids, pos, tgt))
        if todo and self.cache is not None:
            self.cache.set_many([(j.key, {"sum": 0.0, "n": 0}) for j in todo if j.n_rows == 0])
        if not rows:
            return results
        rows.sort(key=lambda r: len(r[1]))  # stable: a job's rows stay together, in order
        sums = [0.0] * len(todo)
        ns = [0] * len(todo)
        left = [j.n_rows for j in todo]
        with progress_bar(len(rows), f"{self.name} {self.lm.name}", enabled=self.progress) as advance:
            for batch in self._batches(rows):
                lps = self._logprobs([r[1] for r in batch], [r[2] for r in batch], [r[3] for r in batch])
                done = []
                for (ji, _ids, pos, _t), lp in zip(batch, lps):
                    for v in lp:
                        sums[ji] += v
                    ns[ji] += len(pos)
                    left[ji] -= 1
                    if left[ji] == 0:
                        done.append(ji)
                        results[todo[ji].key] = (sums[ji], ns[ji])
                if self.cache is not None and done:
                    self.cache.set_many([(todo[ji].key, {"sum": sums[ji], "n": ns[ji]}) for ji in done])
                self.rows_scored += len(batch)
                advance(len(batch))
        return results

    def _batches(self, rows: list) -> Iterable[list]:
        batch: list = []
        k = 0
        for r in rows:
            rk = len(r[2])
            if batch and (len(batch) >= self.batch_size or (k + rk) * self.vocab_size > self.max_logit_elements):
                yield batch
                batch, k = [], 0
            batch.append(r)
            k += rk
        if batch:
            yield batch

    def _logprobs(self, inputs: list[list[int]], positions: list[list[int]],
                  targets: list[list[int]]) -> list[list[float]]:
        """One padded forward pass; per row, the log-probabilities of ``targets`` at ``positions``."""
        import torch

        model = self.lm.model
        dev = self.lm.device
        B, L = len(inputs), max(len(x) for x in inputs)
        x = torch.full((B, L), int(self.pad_id), dtype=torch.long)
        att = torch.zeros((B, L), dtype=torch.long)
        for i, seq in enumerate(inputs):
            x[i, :len(seq)] = torch.tensor(seq, dtype=torch.long)
            att[i, :len(seq)] = 1
        b_idx = [i for i, ps in enumerate(positions) for _ in ps]
        p_idx = [p for ps in positions for p in ps]
        tgt = torch.tensor([t for ts in targets for t in ts], dtype=torch.long, device=dev)
        b = torch.tensor(b_idx, dtype=torch.long, device=dev)
        p = torch.tensor(p_idx, dtype=torch.long, device=dev)
        x, att = x.to(dev), att.to(dev)
        with torch.inference_mode():
            logits = self._gathered_logits(x, att, b, p)
            if self._gather_ok is None:
                self._verify_gather(x, att, b, p, tgt, logits)
                if self._gather_ok is False:
                    logits = self._full_logits(x, att, b, p)
            lp = _target_logprobs(logits, tgt, self.max_logit_elements // 4 or 1)
        flat = lp.double().cpu().tolist()
        out, i = [], 0
        for ps in positions:
            out.append(flat[i:i + len(ps)])
            i += len(ps)
        return out

    def _call(self, x, att):
        self.forward_passes += 1
        if bool(att.all()):  # a length bucket without padding: let attention skip the mask
            att = None
        return self.lm.model(input_ids=x, attention_mask=att).logits

    def _full_logits(self, x, att, b, p):
        return self._call(x, att)[b, p]

    def _gathered_logits(self, x, att, b, p):
        head = self.lm.model.get_output_embeddings() if self._gather_ok is not False else None
        if head is None:
            return self._full_logits(x, att, b, p)
        g = _HeadGather(head)
        g.index = (b, p)
        try:
            out = self._call(x, att)
        finally:
            g.remove()
        if out.dim() == 3 and out.shape[0] == 1 and out.shape[1] == b.numel():
            return out[0]
        return out[b, p]  # the hook did not run on this architecture: plain gather

    def _verify_gather(self, x, att, b, p, tgt, logits) -> None:
        """Once per scorer: compare the gathered logits with a plain forward on the first rows."""
        import torch

        sel = (b < 2).nonzero().flatten()
        full = self._call(x[:2], att[:2])[b[sel], p[sel]]
        a = torch.log_softmax(logits[sel].float(), -1).gather(-1, tgt[sel, None])
        c = torch.log_softmax(full.float(), -1).gather(-1, tgt[sel, None])
        self._gather_ok = bool(torch.allclose(a, c, atol=1e-4, rtol=0))


def _target_logprobs(logits, tgt, chunk_elems: int):
    """``log_softmax(logits)[k, tgt[k]]`` in float32, computed in row chunks to bound memory.

    ``torch.log_softmax`` in float32 is the operation of the reference loops (bit-identical per
    row). Over gemma's 262k-word vocabulary it is ~1e-4 per token away from a float64 computation
    (``logsumexp`` would be ~1e-6); we keep the reference's operation for parity."""
    import torch

    V = logits.shape[-1]
    rows = max(1, chunk_elems // max(V, 1))
    parts = []
    for i in range(0, logits.shape[0], rows):
        lg = logits[i:i + rows].float()
        parts.append(torch.log_softmax(lg, -1).gather(-1, tgt[i:i + rows, None])[:, 0])
    return torch.cat(parts) if parts else logits.new_zeros(0)


def _max_positions(config: Any) -> int | None:
    for name in ("max_position_embeddings", "n_positions", "max_seq_len"):
        v = getattr(config, name, None)
        if isinstance(v, int) and v > 0:
            # RoBERTa-style models reserve padding_idx + 1 positions
            off = (getattr(config, "pad_token_id", 0) or 0) + 1 if getattr(config, "model_type", "") in (
                "roberta", "xlm-roberta", "camembert", "xlm-roberta-xl") else 0
            return v - off
    return None


def is_uncased(tokenizer: Any) -> bool:
    """True when the tokenizer lower-cases its input (the reference then lower-cases the text)."""
    v = getattr(tokenizer, "do_lower_case", None)
    if v is None:
        v = (getattr(tokenizer, "init_kwargs", None) or {}).get("do_lower_case")
    return bool(v)


def _check_text(t: Any, i: int, which: str) -> str:
    if not isinstance(t, str) or not t.strip():
        where = f"pair {i + 1}" + (f", {which} sentence" if which else "")
        raise BiaskitError(f"{where}: empty or non-text sentence {t!r}. Fix: drop or repair that pair")
    return t


def load_scorer(name: str, model: Any = None, *, unit: str = "token", method: str | None = None,
                batch_size: int = 32, device: str = "auto", dtype: Any = None, cache: Any = True,
                progress: bool = True, lm: LoadedLM | None = None, **kwargs: Any) -> PairScorer:
    """A ready scorer: ``name`` in :data:`SCORERS`, ``model`` a folder / alias / hub name / LoadedLM."""
    cls = SCORERS.get(name)
    cls.check_options(unit, method, batch_size)  # a wrong option fails before a model is loaded
    if lm is None:
        if model is None:
            raise BiaskitError("no model given. Fix: pass --model DIR_OR_NAME")
        if isinstance(model, LoadedLM):
            lm = model
        else:
            # detect the kind from the model itself, so that a BERT given to 'clm' fails clearly
            # instead of silently loading a random causal head; fall back to the scorer's kind
            try:
                lm = load_lm(model, kind="auto", device=device, dtype=dtype)
            except AmbiguousKindError:
                lm = load_lm(model, kind=cls.kind, device=device, dtype=dtype)
    return cls(lm, unit=unit, method=method, batch_size=batch_size, cache=cache, progress=progress, **kwargs)


@contextlib.contextmanager
def progress_bar(total: int, label: str, enabled: bool = True):
    """A rich progress bar over ``total`` rows; yields ``advance(n)``. Silent when disabled."""
    if not enabled:
        yield lambda n: None
        return
    from rich.progress import (BarColumn, MofNCompleteColumn, Progress, TextColumn, TimeElapsedColumn,
                               TimeRemainingColumn)

    with Progress(TextColumn("[bold]{task.description}"), BarColumn(), MofNCompleteColumn(),
                  TextColumn("masked variants/sentences"), TimeElapsedColumn(), TimeRemainingColumn(),
                  transient=True) as prog:
        from rich.markup import escape

        task = prog.add_task(escape(label), total=total)  # a model path may hold [brackets]
        yield lambda n: prog.advance(task, n)
