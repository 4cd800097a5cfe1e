"""Pair scorers: how likely a language model finds each sentence of a minimal pair.

``load_scorer("mlm" | "clm", model, ...)`` returns a :class:`PairScorer` whose
``score_pairs([(sent_more, sent_less), ...])`` gives one :class:`PairScore` per pair (higher = more
likely). The two scorers (see ``mlm.py`` / ``clm.py`` and ``docs/evaluation-scorers.md``):

- ``mlm``: CrowS-Pairs pseudo-log-likelihood (Nangia et al., 2020), ``method="pll"`` (default,
  P(U|M): mask each unmodified token in turn) or ``"pmu"`` (P(M|U): mask each modified token in
  turn), ``unit="token"`` (reference) or ``"word"`` (IndiBias §6.1, whole-word masking);
- ``clm``: sentence log-probability under a causal LM, ``method="sum"`` (default) or ``"mean"``
  (per scored token, as IndiBias normalises).

A scorer is a *planner*: it turns each sentence into engine requests (:class:`.engine.Request`:
token ids, positions, targets) and sums the returned log-probabilities. Execution — the length
check, exact-length batching, the head gather, log-softmax, device/dtype, progress and the on-disk
cache written after every batch — is the scoring engine's (:mod:`.engine`), shared with StereoSet.
"""

from __future__ import annotations

from collections.abc import Sequence
from dataclasses import dataclass
from typing import Any

from biaskit.errors import BiaskitError
from biaskit.options import say, tell, unset
from biaskit.registry import Registry

from .engine import DEFAULT_BATCH_SIZE, Request, make_engine
from .models import AmbiguousKindError, LoadedLM, load_lm

SCORERS: Registry = Registry("scorer")
SCORERS.register(
    "mlm",
    "biaskit.evaluation.mlm:MLMScorer",
    help="masked LM pseudo-log-likelihood (CrowS-Pairs; methods pll|pmu; units token|word|word-token)",
)
SCORERS.register(
    "clm", "biaskit.evaluation.clm:CLMScorer", help="causal LM sentence log-probability (methods sum|mean)"
)
SCORERS.register(
    "seq2seq",
    "biaskit.evaluation.seq2seq:Seq2SeqScorer",
    help="encoder-decoder LM (mT5, mBART): log P(sentence as decoder target | empty input), "
    "methods mean|sum (IndiBias §6.1)",
)
# served models (docs/evaluation-scorers.md "Scaling up"): an OpenAI-compatible /v1/completions server
SCORERS.register(
    "clm-api",
    "biaskit.evaluation.served:ServedCLMScorer",
    help="causal LM log-probability from a server's /v1/completions (--base-url; methods sum|mean)",
)


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
    """One sentence to score: its token ids and the groups of positions masked+scored together."""

    text: str
    ids: tuple[int, ...]
    groups: tuple[tuple[int, ...], ...]


class PairScorer:
    """Base class of the pair planners: sentences -> engine requests -> per-sentence sums."""

    name: str = "base"
    methods: tuple[str, ...] = ()
    units: tuple[str, ...] = ("token",)
    normalisations: tuple[str, ...] = ("none",)  # --normalise choices this scorer accepts
    kind: str = ""

    def __init__(
        self,
        lm: LoadedLM,
        *,
        unit: str = "token",
        method: str | None = None,
        batch_size: int = DEFAULT_BATCH_SIZE,
        cache: Any = True,
        progress: bool = True,
        lowercase: bool | None = None,
        max_logit_elements: int = 1 << 27,
        normalise: str = "none",
    ):
        if not isinstance(lm, LoadedLM):
            raise TypeError("lm must be a LoadedLM (see biaskit.evaluation.models.load_lm)")
        if lm.kind != self.kind:
            what = {"mlm": "masked", "clm": "causal", "seq2seq": "encoder-decoder (seq2seq)"}
            raise BiaskitError(
                f"model '{lm.name}' is a {what.get(lm.kind, lm.kind)} LM but scorer '{self.name}' "
                f"needs a {what.get(self.kind, self.kind)} LM. Fix: use {say('scorer', lm.kind)}"
            )
        unit, method = self.check_options(unit, method, batch_size)
        self.normalise = self.check_normalise(normalise, method)
        self.lm = lm
        self.unit = unit
        self.method = method
        self.lowercase = is_uncased(lm.tokenizer) if lowercase is None else bool(lowercase)
        self.engine = self._make_engine(
            lm,
            batch_size=batch_size,
            cache=cache,
            progress=progress,
            max_logit_elements=max_logit_elements,
            label=f"{self.name} {lm.name}",
        )
        self.batch_size = self.engine.batch_size

    @property
    def forward_passes(self) -> int:
        """Model calls made by this scorer (0 on a fully cached re-run)."""
        return self.engine.forward_passes

    @property
    def rows_scored(self) -> int:
        """Model inputs (masked variants / sentences) computed by this scorer."""
        return self.engine.rows_scored

    @classmethod
    def check_options(
        cls, unit: str | None, method: str | None, batch_size: int = DEFAULT_BATCH_SIZE
    ) -> tuple[str, str]:
        """``(unit, method)`` normalised, or the error for an option this scorer lacks (no model needed)."""
        unit = (unit or "token").lower()
        if unit not in cls.units:
            raise BiaskitError(f"scorer '{cls.name}' does not support unit '{unit}'. Fix: use {' or '.join(cls.units)}")
        method = (method or cls.methods[0]).lower()
        if method not in cls.methods:
            raise BiaskitError(
                f"scorer '{cls.name}' has no method '{method}'. Fix: use one of {', '.join(cls.methods)}"
            )
        if int(batch_size) < 1:
            raise BiaskitError(
                f"batch size must be >= 1, got {batch_size}. Fix: {tell('batch_size', DEFAULT_BATCH_SIZE)}"
            )
        return unit, method

    @classmethod
    def check_normalise(cls, normalise: str | None, method: str | None = None) -> str:
        """``normalise`` checked against :attr:`normalisations` (no model needed)."""
        n = (normalise or "none").lower()
        if n not in cls.normalisations:
            raise BiaskitError(
                f"scorer '{cls.name}' has no normalisation '{n}'. Fix: use "
                f"{' or '.join(say('normalise', x) for x in cls.normalisations)}"
            )
        return n

    # ---- API ------------------------------------------------------------------------------------

    def describe(self) -> dict:
        return {
            "model": self.lm.name,
            "fingerprint": self.lm.fingerprint,
            "scorer": self.name,
            "unit": self.unit,
            "method": self.method,
            "normalise": self.normalise,
            "normalisation": self._normalisation(),
            "lowercase": self.lowercase,
            "batch_size": self.batch_size,
            "device": self.lm.device,
            "dtype": self.lm.dtype,
            "engine": self.engine.describe(),
        }

    def score_pairs(self, pairs: Sequence[tuple[str, str]]) -> list[PairScore]:
        """Score ``[(sent_more, sent_less), ...]``; higher = the model finds the sentence more likely."""
        pairs = [(_check_text(a, i, "first"), _check_text(b, i, "second")) for i, (a, b) in enumerate(pairs)]
        jobs = [j for a, b in pairs for j in self._plan_pair(a, b)]
        res = self._execute(jobs)
        return [
            PairScore(self._finish(sa, na), self._finish(sb, nb), na, nb)
            for (sa, na), (sb, nb) in zip(res[0::2], res[1::2], strict=False)
        ]

    def pair_requests(self, pairs: Sequence[tuple[str, str]]) -> list[Request]:
        """The distinct engine requests (model inputs) that scoring ``pairs`` runs, in plan order
        (benchmarks count their work; sharding splits them)."""
        jobs = [j for a, b in pairs for j in self._plan_pair(a, b)]
        return list(dict.fromkeys(r for j in jobs for r in self._requests(j)))

    def score_texts(self, texts: Sequence[str]) -> list[tuple[float, int]]:
        """Score single sentences: ``(score, n_scored)`` each (mlm: PLL over every non-special token,
        Salazar et al. 2020; clm: log-probability as for pairs)."""
        jobs = [self._plan_text(_check_text(t, i, "")) for i, t in enumerate(texts)]
        return [(self._finish(s, n), n) for s, n in self._execute(jobs)]

    # ---- to implement ---------------------------------------------------------------------------

    def _make_engine(self, lm: LoadedLM, **kw: Any) -> Any:
        """The engine this planner runs on (a seq2seq scorer returns its own)."""
        return make_engine(lm, **kw)

    def _plan_pair(self, a: str, b: str) -> tuple[_Job, _Job]:
        raise NotImplementedError

    def _plan_text(self, text: str) -> _Job:
        raise NotImplementedError

    def _requests(self, job: _Job) -> list[Request]:
        """The engine requests of one sentence (their log-probabilities are summed)."""
        raise NotImplementedError

    def _finish(self, total: float, n: int) -> float:
        return total

    def _normalisation(self) -> str:
        return "sum"

    # ---- execution ------------------------------------------------------------------------------

    def _prep(self, text: str) -> str:
        return text.lower() if self.lowercase else text

    def _execute(self, jobs: Sequence[_Job]) -> list[tuple[float, int]]:
        """``(sum of log-probabilities, number of scored tokens)`` per job."""
        for j in jobs:
            self.engine.check_length(len(j.ids), j.text)
        per_job = [self._requests(j) for j in jobs]
        lps = self.engine.loglikelihood([r for rs in per_job for r in rs])
        out, i = [], 0
        for rs in per_job:
            total, n = 0.0, 0
            for lp in lps[i : i + len(rs)]:
                for v in lp:
                    total += v
                n += len(lp)
            i += len(rs)
            out.append((total, n))
        return out


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


def infer_scorer(models: Sequence[Any], served: bool = False) -> str:
    """The pair scorer the models' architecture calls for when ``--scorer`` is not given: ``clm-api``
    for a served model, else ``mlm`` / ``clm`` / ``seq2seq`` from each model's config (read, not
    loaded); models of different kinds need ``--scorer``."""
    from biaskit.errors import BiaskitError

    from .models import AmbiguousKindError, model_family

    if served:
        return "clm-api"
    kinds = {}
    for m in models:
        try:
            kinds[str(getattr(m, "name", m))] = model_family(m)
        except AmbiguousKindError as exc:
            raise BiaskitError(
                str(exc).replace(
                    f"pass kind='mlm' or kind='clm' ({say('scorer', 'mlm|clm')})",
                    f"pass {say('scorer', 'mlm')} or {say('scorer', 'clm')}",
                )
            ) from None
    found = sorted(set(kinds.values()))
    if len(found) > 1:
        raise BiaskitError(
            f"the models call for different scorers ({', '.join(f'{m}: {k}' for m, k in kinds.items())})"
            f". Fix: score them in separate runs, or {tell('scorer')} for all"
        )
    return found[0] if found else "mlm"


def load_scorer(
    name: str,
    model: Any = None,
    *,
    unit: str = "token",
    method: str | None = None,
    batch_size: int = DEFAULT_BATCH_SIZE,
    device: str = "auto",
    dtype: Any = None,
    cache: Any = True,
    progress: bool = True,
    lm: LoadedLM | None = None,
    device_map: Any = None,
    **kwargs: Any,
) -> PairScorer:
    """A ready scorer: ``name`` in :data:`SCORERS`, ``model`` a folder / alias / hub name / LoadedLM."""
    cls = SCORERS.get(name)
    cls.check_options(unit, method, batch_size)  # a wrong option fails before a model is loaded
    if "normalise" in kwargs:
        cls.check_normalise(kwargs["normalise"], method)
    if getattr(cls, "served", False):  # a served model: the server holds it, nothing to load
        return cls(model, unit=unit, method=method, batch_size=batch_size, cache=cache, progress=progress, **kwargs)
    if lm is None:
        if model is None:
            raise BiaskitError(f"no model given. Fix: {tell('models', 'DIR_OR_NAME')}")
        if isinstance(model, LoadedLM):
            lm = model
        elif getattr(cls, "load_model", None) is not None:  # a scorer with its own kind of model (seq2seq)
            if device_map is not None:
                raise BiaskitError(
                    f"{say('device_map')} is not supported by scorer '{name}'. Fix: {unset('device_map')}"
                )
            lm = cls.load_model(model, device=device, dtype=dtype)
        else:
            # detect the kind from the model itself, so that a BERT given to 'clm' fails clearly
            # instead of silently loading a random causal head; fall back to the scorer's kind
            try:
                lm = load_lm(model, kind="auto", device=device, dtype=dtype, device_map=device_map)
            except AmbiguousKindError:
                lm = load_lm(model, kind=cls.kind, device=device, dtype=dtype, device_map=device_map)
    return cls(lm, unit=unit, method=method, batch_size=batch_size, cache=cache, progress=progress, **kwargs)
