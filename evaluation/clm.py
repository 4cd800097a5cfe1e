"""``clm`` scorer: sentence log-probability under a causal (left-to-right) language model.

score(S) = sum over t >= 1 of log P(x_t | x_<t) over the tokenizer's ids for S (``method="sum"``,
the default), or that sum divided by the number of scored tokens (``method="mean"``, the per-token
normalisation IndiBias uses for causal models so that longer sentences are not penalised).

BOS: the first token is only scored when something precedes it. When the tokenizer adds a BOS token
itself (Gemma, Llama) its ids are used unchanged; when it adds none (GPT-2 and most BPE models) we
prepend ``bos_token_id`` or, if the tokenizer has none, ``eos_token_id`` (GPT-2 uses
``<|endoftext|>`` for both, the convention of lm-evaluation-harness), so every real token is scored.
A tokenizer with neither leaves the first token unscored. An EOS the tokenizer appends itself is
scored like any other token. For ``clm`` the U/M spans play no part: a pair's scores are its two
sentence scores, and both methods share one cache entry per sentence.
"""

from __future__ import annotations

from .engine import Request
from .scorers import PairScorer, _Job


class CLMScorer(PairScorer):
    """Causal-LM log-probability of each sentence (sum, or mean per scored token)."""

    name = "clm"
    kind = "clm"
    methods = ("sum", "mean")
    units = ("token",)

    def __init__(self, lm, **kw):
        super().__init__(lm, **kw)
        tok = lm.tokenizer
        self.bos_id = tok.bos_token_id if tok.bos_token_id is not None else tok.eos_token_id

    def _normalisation(self) -> str:
        return "sum of log P(token | prefix)" if self.method == "sum" else "mean log P(token | prefix) per scored token"

    def _finish(self, total: float, n: int) -> float:
        if self.method == "mean":
            return total / n if n else 0.0
        return total

    def encode(self, text: str) -> tuple[int, ...]:
        """Token ids as scored: the tokenizer's ids, with a BOS (or EOS) prepended when it adds none."""
        ids = list(self.lm.tokenizer(self._prep(text), add_special_tokens=True)["input_ids"])
        if self.bos_id is not None and (not ids or ids[0] != self.bos_id):
            ids = [self.bos_id] + ids
        return tuple(ids)

    def _plan_text(self, text: str) -> _Job:
        ids = self.encode(text)
        return _Job(text=text, ids=ids, groups=(tuple(range(1, len(ids))),))

    def _plan_pair(self, a: str, b: str) -> tuple[_Job, _Job]:
        return self._plan_text(a), self._plan_text(b)

    def _requests(self, job: _Job) -> list[Request]:
        """One input: the sentence; position t-1 predicts token t for every t >= 1."""
        if len(job.ids) < 2:
            return []
        return [Request(ids=job.ids, positions=tuple(range(len(job.ids) - 1)), targets=job.ids[1:], text=job.text)]
