"""What the ``evaluate`` functions return: small typed results that the commands, the pipeline's
evaluate stage and the Python API read by field (docs/architecture.md, "Options" and "Where a change
goes").

Each run writes its files (``summary.json``, report, tables) and returns one of these: the numbers
its callers show (a table row, a stage's one-line message) as fields, the folder it wrote, and the
``summary`` it wrote to ``summary.json`` (a dict: the file's content, for the Python API and for
renderers that read a summary back). The fields are read from that summary once, here
(``from_summary``), so a caller never spells a key of the file.

==============================  =====================================  ==============================
function                        returns                                one part
==============================  =====================================  ==============================
``pairs.run_pairs``             :class:`PairsRun`                      :class:`PairsModel`, :class:`PairScores`
``stereoset.run_cats``          :class:`CatsRun`                       :class:`SplitScores`, :class:`CatScores`
``compare.run_cats_multi``      :class:`CatsComparison`                :class:`CatsRun` per model
``seat.run_seat``               :class:`SeatRun`                       :class:`SeatResult`
``compare.run_seat_multi``      :class:`SeatComparison`                :class:`SeatRun` per model
``ceat.run_ceat``               :class:`CeatRun`                       :class:`CeatResult`
``ilps.run_ilps``               :class:`IlpsRun`                       :class:`GroupScore`
``correlate.correlate``         :class:`Correlation`
==============================  =====================================  ==============================
"""

from __future__ import annotations

from dataclasses import dataclass, field
from pathlib import Path
from typing import Any

CAT_SPLITS = ("intrasentence", "intersentence")


# ------------------------------------------------------------------------------------------ pairs
@dataclass(frozen=True)
class PairScores:
    """The headline of one language of a pairs run (``lang="all"``: every language pooled).
    ``metrics``: this part of ``summary.json`` (the report's helpers format it: ``ci_text``,
    ``length_note``)."""

    lang: str
    n_pairs: int
    metric_score: float | None
    stereo_score: float | None
    antistereo_score: float | None
    n_ties: int
    ci_low: float | None
    ci_high: float | None
    subsample_mean: float | None
    subsample_std: float | None
    ds_mean: float | None
    metrics: dict[str, Any] = field(repr=False)

    @classmethod
    def from_summary(cls, lang: str, m: dict[str, Any]) -> PairScores:
        u = m.get("uncertainty") or {}
        sub = m.get("subsample") or {}
        return cls(
            lang=lang,
            n_pairs=m["n_pairs"],
            metric_score=m["metric_score"],
            stereo_score=m["stereo_score"],
            antistereo_score=m["antistereo_score"],
            n_ties=m["n_ties"],
            ci_low=u.get("ci_low"),
            ci_high=u.get("ci_high"),
            subsample_mean=sub.get("mean"),
            subsample_std=sub.get("std"),
            ds_mean=m.get("ds_mean"),
            metrics=m,
        )


@dataclass
class PairsModel:
    """One model of a pairs run: where its files are and its headline per language."""

    model: str
    slug: str
    folder: Path
    scorer: str
    method: str | None
    metric_score: float | None
    n_pairs: int
    by_lang: dict[str, PairScores]
    pooled: PairScores | None  # every language pooled (only when there are several)
    protocol: dict[str, Any]  # summary.json's protocol (settings, deviations, comparable or why not)
    published: dict[str, Any]  # the paper's figures beside the run's
    summary: dict[str, Any] = field(repr=False)  # summary.json (with the run's total time)

    @classmethod
    def from_summary(cls, s: dict[str, Any], folder: Path) -> PairsModel:
        return cls(
            model=s["model"],
            slug=s["model_slug"],
            folder=Path(folder),
            scorer=s["scorer"],
            method=s.get("method"),
            metric_score=s.get("metric_score"),
            n_pairs=s["n_pairs"],
            by_lang={lg: PairScores.from_summary(lg, v) for lg, v in (s.get("by_lang") or {}).items()},
            pooled=PairScores.from_summary("all", s) if s.get("pooled_over_langs") else None,
            protocol=s.get("protocol") or {},
            published=s.get("published") or {},
            summary=s,
        )

    def rows(self) -> list[PairScores]:
        """Each language, then every language pooled (when several): the rows of a headline table."""
        return list(self.by_lang.values()) + ([self.pooled] if self.pooled is not None else [])


@dataclass
class PairsRun:
    """What ``evaluate pairs`` did: one :class:`PairsModel` per model scored (none on a process of a
    ``torchrun`` launch other than the first: that one writes), the comparison table of several
    models, the rows skipped as invalid and the protocol applied to the data."""

    out_dir: Path
    models: list[PairsModel]
    comparison: Path | None
    skipped: list[Any]
    protocol: Any  # protocols.base.Applied (before each model's checkpoint is verified)


# ------------------------------------------------------------------------------------------ CATs
@dataclass(frozen=True)
class CatScores:
    """StereoSet's numbers of one part of a run: LMS, SS, ICAT, the CATs and target terms they cover."""

    lms: float | None
    ss: float | None
    icat: float | None
    count: int
    n_targets: int | None = None

    @classmethod
    def from_summary(cls, r: dict[str, Any]) -> CatScores:
        return cls(lms=r["lms"], ss=r["ss"], icat=r["icat"], count=r["count"], n_targets=r.get("n_targets"))


@dataclass(frozen=True)
class SplitScores:
    """One split (intrasentence, intersentence): overall and per domain."""

    split: str
    overall: CatScores
    by_domain: dict[str, CatScores]

    @classmethod
    def from_summary(cls, split: str, part: dict[str, Any]) -> SplitScores:
        return cls(
            split=split,
            overall=CatScores.from_summary(part["overall"]),
            by_domain={d: CatScores.from_summary(r) for d, r in (part.get("by_domain") or {}).items()},
        )


@dataclass
class CatsRun:
    """What ``evaluate cats`` did for one model (or a score file): the numbers per split and overall,
    what was not scored and why, the SentimentLM baseline when asked for."""

    model: str
    folder: Path
    scorer: str
    cat_mode: str | None
    tie_policy: str
    split: str | None  # the CATs scored: both, intrasentence or intersentence
    overall: CatScores
    splits: list[SplitScores]
    warnings: list[str]
    skipped: dict[str, str]  # split -> why it was not scored
    sentiment: CatScores | None  # the SentimentLM baseline (--sentiment-model)
    sentiment_model: str | None
    protocol: dict[str, Any]
    published: dict[str, Any]
    summary: dict[str, Any] = field(repr=False)

    @classmethod
    def from_summary(cls, s: dict[str, Any], folder: Path) -> CatsRun:
        sent = (s.get("baselines") or {}).get("SentimentLM")
        return cls(
            model=str(s["model"]),
            folder=Path(folder),
            scorer=s["scorer"],
            cat_mode=s.get("cat_mode"),
            tie_policy=s["tie_policy"],
            split=(s.get("data") or {}).get("split"),
            overall=CatScores.from_summary(s["overall"]),
            splits=[SplitScores.from_summary(sp, s[sp]) for sp in CAT_SPLITS if sp in s],
            warnings=list(s.get("warnings") or []),
            skipped={sp: info["reason"] for sp, info in (s.get("skipped") or {}).items()},
            sentiment=CatScores.from_summary(sent["overall"]) if sent else None,
            sentiment_model=sent["classifier"]["model"] if sent else None,
            protocol=s.get("protocol") or {},
            published=s.get("published") or {},
            summary=s,
        )


@dataclass
class CatsComparison:
    """Several models on the same CATs: each model's run, the comparison table (one row per model,
    split and domain), the Spearman correlation of LMS and SS across models, the ENSEMBLE row's run."""

    models: list[CatsRun]
    names: list[str]  # each model's sub-folder
    table: Any  # pandas DataFrame: comparison.csv
    correlations: Any  # pandas DataFrame: correlations.csv
    ensemble: CatsRun | None


# ------------------------------------------------------------------------------------------ SEAT
@dataclass(frozen=True)
class SeatResult:
    """One SEAT test of a run: its effect size, p-value, how the p-value was computed, the sets' sizes."""

    test: str
    lang: str
    effect_size: float
    p_value: float
    p_method: str
    significance: str
    sizes: tuple[int, int, int, int]  # n of X, Y, A, B
    warning: str | None

    @classmethod
    def from_summary(cls, r: dict[str, Any]) -> SeatResult:
        return cls(
            test=r["test"],
            lang=r["lang"],
            effect_size=r["effect_size"],
            p_value=r["p_value"],
            p_method=r["p_method"],
            significance=r.get("significance") or "",
            sizes=(r["n_targ1"], r["n_targ2"], r["n_attr1"], r["n_attr2"]),
            warning=r.get("warning"),
        )


@dataclass
class SeatRun:
    """What ``evaluate seat`` did for one encoder."""

    model: str
    folder: Path
    pooling: str
    alpha: float
    correction: str
    tests: list[SeatResult]
    warnings: list[str]
    protocol: dict[str, Any]
    published: dict[str, Any]
    summary: dict[str, Any] = field(repr=False)

    @classmethod
    def from_summary(cls, s: dict[str, Any], folder: Path) -> SeatRun:
        return cls(
            model=str(s["model"]),
            folder=Path(folder),
            pooling=s["pooling"],
            alpha=s["alpha"],
            correction=s["correction"],
            tests=[SeatResult.from_summary(r) for r in s["tests"]],
            warnings=list(s.get("warnings") or []),
            protocol=s.get("protocol") or {},
            published=s.get("published") or {},
            summary=s,
        )


@dataclass
class SeatComparison:
    """Several encoders on the same tests: each one's run and the table (one row per test and model)."""

    models: list[SeatRun]
    names: list[str]
    table: Any  # pandas DataFrame: comparison.csv


# ------------------------------------------------------------------------------------------ CEAT, ILPS
@dataclass(frozen=True)
class CeatResult:
    """One CEAT result: a test's (``test``) or a group's (``domain``, ``group``) combined effect size."""

    test: str | None
    domain: str | None
    group: str | None
    ces: float
    p_value: float
    pes: float
    min_contexts: int

    @property
    def name(self) -> str:
        return self.test or f"{self.domain}/{self.group}"

    @classmethod
    def from_summary(cls, r: dict[str, Any]) -> CeatResult:
        return cls(
            test=r.get("test"),
            domain=r.get("domain"),
            group=r.get("group"),
            ces=r["ces"],
            p_value=r["p_value"],
            pes=r["pes"],
            min_contexts=r["min_contexts"],
        )


@dataclass
class CeatRun:
    """What ``evaluate ceat`` did."""

    model: str
    folder: Path
    n_samples: int
    results: list[CeatResult]
    dropped_words: list[str]
    protocol: dict[str, Any]
    summary: dict[str, Any] = field(repr=False)

    @classmethod
    def from_summary(cls, s: dict[str, Any], folder: Path) -> CeatRun:
        return cls(
            model=str(s["model"]),
            folder=Path(folder),
            n_samples=s["n_samples"],
            results=[CeatResult.from_summary(r) for r in s["results"]],
            dropped_words=list(s["dropped_words"]),
            protocol=s.get("protocol") or {},
            summary=s,
        )


@dataclass(frozen=True)
class GroupScore:
    """A group-level score (a row of ``groups.csv``, what ``evaluate correlate`` reads)."""

    domain: str
    group: str
    metric: str
    score: float
    count: int


@dataclass
class IlpsRun:
    """What ``evaluate ilps`` did: the group scores (``A``, ``B``, ``A-B`` per group)."""

    model: str
    folder: Path
    predict: str
    groups: list[GroupScore]
    protocol: dict[str, Any]
    summary: dict[str, Any] = field(repr=False)

    @classmethod
    def from_summary(cls, s: dict[str, Any], folder: Path) -> IlpsRun:
        return cls(
            model=str(s["model"]),
            folder=Path(folder),
            predict=s["predict"],
            groups=[GroupScore(**r) for r in s["groups"]],
            protocol=s.get("protocol") or {},
            summary=s,
        )

    def by_group(self) -> dict[tuple[str, str], dict[str, float]]:
        """``(domain, group) -> {metric: score}``."""
        out: dict[tuple[str, str], dict[str, float]] = {}
        for g in self.groups:
            out.setdefault((g.domain, g.group), {})[g.metric] = g.score
        return out


# ------------------------------------------------------------------------------------------ correlate
@dataclass
class Correlation:
    """Intrinsic vs extrinsic bias across models: the variances per model, domain and metric pair, the
    correlations across models, and what the run was (``info``: what ``summary.json`` records besides
    the correlations)."""

    variances: Any  # pandas DataFrame: variances.csv
    correlations: Any  # pandas DataFrame: correlations.csv
    info: dict[str, Any]
    folder: Path | None = None  # where it was written (None: not written)

    @property
    def protocol(self) -> dict[str, Any]:
        return self.info["protocol"]


# ------------------------------------------------------------------------------------------ extrinsic
@dataclass
class ExtrinsicRun:
    """What ``evaluate extrinsic classifier | generations`` wrote: the group scores of this run, their
    variances per model, domain and metric, and notes (a group without the examples a rate needs)."""

    out: Path
    scores: Any  # pandas DataFrame (model, domain, group, metric, score, count)
    variances: Any  # pandas DataFrame (model, domain, metric, n_groups, variance, max_gap)
    notes: list[str]
