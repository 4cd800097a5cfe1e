"""``mlm`` scorer: CrowS-Pairs pseudo-log-likelihood for masked language models.

Nangia et al. (2020), "CrowS-Pairs", §3 and the reference ``nyu-mll/crows-pairs`` ``metric.py``
(``mask_unigram``): lower-case both sentences when the model is uncased, tokenize each with its
special tokens, find the unmodified tokens U with ``difflib`` over the two id sequences
(:mod:`.spans`), then for each U token in turn replace it by ``[MASK]`` and add
``log P(original token | masked sentence)``. The sum is score(S), an estimate of P(U|M, θ).

Methods (``method=``):

- ``pll`` (default, the reference): mask one U token at a time, sum over U.
- ``pmu``: P(M|U), the variant the paper discusses and rejects (it favours frequent modified
  words): mask one *modified* token at a time (everything else, including the other modified
  tokens, stays visible, as in Salazar et al. 2020's PLL), sum over M. A sentence with no
  modified token (the shorter side of a pure insertion) scores 0 with ``n_scored == 0``.

Units (``unit=``):

- ``token`` (default, the reference).
- ``word`` (IndiBias §6.1): U and M are decided on whitespace words, so every piece of a changed
  word is in M even when a piece also occurs elsewhere. Each scored word is masked *as a whole*
  (all of its pieces replaced by ``[MASK]`` in one input) and its score is the sum of the
  log-probabilities of its original pieces at those positions ("whole-word-masking PLL"). Masking
  piece by piece would let the model see the rest of the word and inflate the scores of words cut
  into many pieces (Kauf & Ivanova 2023), which is exactly the Hindi/Devanagari case; whole-word
  masking keeps one input per word, so a sentence's score does not depend on how finely the
  tokenizer cuts it into pieces beyond the pieces' own probabilities. For a pair where every word is
  one piece, ``word`` equals ``token`` whenever the word diff and the token diff agree. Masking whole
  words is biaskit's *reading* of §6.1 (its formula sums log P(u_i | U\\u_i, M) over the tokens of U).
- ``word-token``: §6.1 read literally: U and M decided on words as ``word`` does, then each *token*
  of U masked alone (the rest of its word visible), as ``token`` does. Equal to ``word`` when every
  U word is one piece.

Normalisation (``normalise=``):

- ``none`` (default, the CrowS-Pairs reference): score(S) is the sum.
- ``unmodified`` (IndiBias §6.1: "score(S) is then calculated by normalizing the probability
  P(U|M, θ) relative to the number of tokens |C|", |C| = the number of tokens in the U set):
  score(S) = sum / |C|, the mean log-probability per unmodified token. With ``unit="word"`` |C|
  counts the U words' *pieces* (every piece is a scored token). Only with ``method="pll"``.
"""

from __future__ import annotations

from biaskit.errors import BiaskitError
from biaskit.options import say, unset

from .engine import Request
from .scorers import PairScorer, _Job
from .spans import SentenceSpans, pair_spans

NORMALISATIONS = ("none", "unmodified")  # the --normalise choices (IndiBias §6.1: divide by |C|)


class MLMScorer(PairScorer):
    """Masked-LM pseudo-log-likelihood over the unmodified (pll) or modified (pmu) tokens/words."""

    name = "mlm"
    kind = "mlm"
    methods = ("pll", "pmu")
    units = ("token", "word", "word-token")
    normalisations = NORMALISATIONS

    def __init__(self, lm, **kw):
        super().__init__(lm, **kw)
        self.mask_id = lm.tokenizer.mask_token_id
        if self.mask_id is None:
            raise BiaskitError(
                f"tokenizer of '{lm.name}' has no mask token, so it cannot score with a "
                f"masked LM. Fix: use {say('scorer', 'clm')} or a masked LM"
            )

    @classmethod
    def check_normalise(cls, normalise, method=None):
        n = super().check_normalise(normalise, method)
        if n == "unmodified" and (method or cls.methods[0]).lower() != "pll":
            raise BiaskitError(
                f"{say('normalise', 'unmodified')} divides P(U|M) by the number of unmodified tokens |C| "
                f"(IndiBias §6.1), so it needs {say('method', 'pll')}. Fix: {unset('normalise')} or use "
                f"{say('method', 'pll')}"
            )
        return n

    def _finish(self, total: float, n: int) -> float:
        if self.normalise == "unmodified":
            return total / n if n else 0.0
        return total

    def _normalisation(self) -> str:
        text = (
            "sum of log P(token) over "
            + ("unmodified (U)" if self.method == "pll" else "modified (M)")
            + {
                "token": " tokens, one token masked at a time",
                "word": " words, one whole word masked at a time",
                "word-token": " words, one token of them masked at a time",
            }[self.unit]
        )
        if self.normalise == "unmodified":
            text += ", divided by |C| = the number of unmodified tokens (IndiBias §6.1)"
        return text

    def _job(self, text: str, sp: SentenceSpans) -> _Job:
        groups = sp.u_groups if self.method == "pll" else sp.m_groups
        if self.unit == "word-token":  # the words' tokens, each masked alone
            groups = tuple((p,) for g in groups for p in g)
        return _Job(text=text, ids=sp.ids, groups=groups)

    def plan(self, a: str, b: str) -> tuple[SentenceSpans, SentenceSpans]:
        """The U/M spans of a pair as scored (after lower-casing when the model is uncased)."""
        return pair_spans(self.lm.tokenizer, self._prep(a), self._prep(b), self.unit)

    def _plan_pair(self, a: str, b: str) -> tuple[_Job, _Job]:
        sa, sb = self.plan(a, b)
        return self._job(a, sa), self._job(b, sb)

    def _plan_text(self, text: str) -> _Job:
        enc = self.lm.tokenizer(self._prep(text), add_special_tokens=True, return_special_tokens_mask=True)
        ids = tuple(enc["input_ids"])
        groups = tuple((i,) for i, s in enumerate(enc["special_tokens_mask"]) if not s)
        return _Job(text=text, ids=ids, groups=groups)

    def _requests(self, job: _Job) -> list[Request]:
        """One input per group: the sentence with the group's positions masked, scored there."""
        out = []
        for g in job.groups:
            masked = list(job.ids)
            for p in g:
                masked[p] = self.mask_id
            out.append(Request(ids=tuple(masked), positions=g, targets=tuple(job.ids[p] for p in g), text=job.text))
        return out
