"""The `evaluate pairs` pipeline: read minimal pairs, score them with one or more LMs, write results.

:func:`run_pairs` reads with :func:`biaskit.readers.read_pairs`, scores with
:func:`biaskit.evaluation.scorers.load_scorer` (batched, cached on disk: a re-run costs no forward
pass), computes the CrowS-Pairs / IndiBias metrics of :mod:`biaskit.evaluation.pair_metrics` and
writes, per model (all atomically)::

    summary.json   metrics (+ by_bias_type, by_lang, subsample), model/scorer info, data sha256, timings
    pairs.csv      one row per pair: ids, bias_type, direction, lang, scores, ds, win, tie, sentences
    report.md      a readable report (tables, DS plot, strongest pairs, definitions)
    ds_kde.png     KDE of DS = score_more - score_less (IndiBias Appendix C)

One model: the files go straight into ``out_dir``. Several models: one sub-folder per model plus
``comparison.csv``, ``comparison.md`` and ``ds_kde_comparison.png`` in ``out_dir``.

Languages: every language present in the data is scored; ``summary["by_lang"][lang]`` holds the full
metrics of each language view, and the top-level metrics pool all pairs read. An IndiBias CSV read
without ``lang`` gives both views (en and hi) of every row; pass ``lang="en"`` or ``"hi"`` to score
only one. For biaskit files ``lang`` keeps only the records of that language.
"""

from __future__ import annotations

import os
import re
import time
from collections.abc import Sequence
from dataclasses import dataclass
from datetime import UTC, datetime
from pathlib import Path
from typing import TYPE_CHECKING, Any

from biaskit.errors import BiaskitError, InputError
from biaskit.io import sha256_file
from biaskit.progress import library_bars
from biaskit.version import __version__

from . import pair_metrics as pm
from .results import PairsModel, PairsRun

if TYPE_CHECKING:
    from biaskit.readers.pairs import ReadResult
    from biaskit.release.read import ReleasePairs

    from .options import PairsOptions

_UNSET: Any = "protocol"  # decimals: take the protocol's value (None means: do not round)
OUTPUT_FILES = ("summary.json", "comparison.csv")  # what an earlier output folder holds (one model / several)
PAIRS_COLUMNS = [
    "pair_id",
    "source_id",
    "lang",
    "bias_type",
    "direction",
    "score_more",
    "score_less",
    "ds",
    "win",
    "tie",
    "n_scored_more",
    "n_scored_less",
    "group_more",
    "group_less",
    "sent_more",
    "sent_less",
]


def model_name(model: Any) -> str:
    """The name a model was given by: the path / alias / hub name string, or a LoadedLM's name."""
    if isinstance(model, (str, os.PathLike)):
        return str(model)
    return str(getattr(model, "name", None) or model)


def model_slug(model: Any) -> str:
    """A folder name for a model given as a path, alias, hub name or LoadedLM."""
    name = model_name(model)
    p = Path(name).expanduser()
    base = (p.stem if p.is_file() else p.name) if p.exists() else name.replace("/", "--")
    from biaskit.paths import slug_component

    return slug_component(re.sub(r"[^A-Za-z0-9._-]+", "-", base).strip("-."), default="model", max_len=80)


def _unique_slugs(models: Sequence[Any]) -> list[str]:
    """One folder name per model; clashing path names take their parent folder's name as prefix
    (``runs/a/model`` and ``runs/b/model`` -> ``a-model``, ``b-model``), then a ``-2`` suffix."""
    base = [model_slug(m) for m in models]
    out, seen = [], set()
    for m, s in zip(models, base, strict=False):
        if base.count(s) > 1:
            p = Path(model_name(m)).expanduser()
            if p.exists() and p.parent.name:
                s = model_slug(f"{p.parent.name}-{p.name}")
        cand, i = s, 1
        while cand in seen:
            i += 1
            cand = f"{s}-{i}"
        seen.add(cand)
        out.append(cand)
    return out


def _select(pairs: list, lang: str | None, limit: int | None, path: Path) -> list:
    from biaskit.options import say, tell, unset

    if lang:
        lang = lang.strip().lower()
        found = sorted({p.lang for p in pairs})
        pairs = [p for p in pairs if p.lang == lang]
        if not pairs:
            raise InputError(
                f"no pairs in language '{lang}' (found: {', '.join(found) or 'none'}).",
                path=path,
                fix=f"{' or '.join(tell('lang', f) for f in found)}, or {unset('lang')}."
                if found
                else "check the file.",
            )
    if limit is not None:
        if limit < 1:
            raise BiaskitError(
                f"{say('limit')} must be >= 1, got {limit}. Fix: give a positive number, or {unset('limit')}"
            )
        kept: dict[str, int] = {}
        out = []
        for p in pairs:  # the first `limit` pairs of each language (IndiBias: same rows in en and hi)
            if kept.get(p.lang, 0) < limit:
                kept[p.lang] = kept.get(p.lang, 0) + 1
                out.append(p)
        pairs = out
    return pairs


def score_frame(pairs: Sequence[Any], scores: Sequence[Any]):
    """The per-pair table (``PAIRS_COLUMNS`` minus the outcome columns) from pairs and PairScores."""
    import pandas as pd

    if len(pairs) != len(scores):
        raise BiaskitError(f"scorer returned {len(scores)} scores for {len(pairs)} pairs")
    rows = [
        {
            "pair_id": p.pair_id,
            "source_id": p.source_id,
            "lang": p.lang,
            "bias_type": p.bias_type,
            "direction": p.direction,
            "score_more": float(s.score_more),
            "score_less": float(s.score_less),
            "n_scored_more": int(s.n_scored_more),
            "n_scored_less": int(s.n_scored_less),
            "group_more": p.group_more,
            "group_less": p.group_less,
            "sent_more": p.sent_more,
            "sent_less": p.sent_less,
        }
        for p, s in zip(pairs, scores, strict=False)
    ]
    return pd.DataFrame(rows, columns=[c for c in PAIRS_COLUMNS if c not in ("ds", "win", "tie")])


def summarize_frame(
    df,
    *,
    seed: int = 0,
    runs: int = 5,
    fraction: float = 0.8,
    ddof: int = 0,
    decimals: int | None = pm.DEFAULT_DECIMALS,
    tie_tolerance: float = 0.0,
    clm_method: str | None = None,
):
    """Metrics for a scored table: pooled + ``by_lang``. Returns ``(summary, outcome table)``.
    ``clm_method`` ("sum" | "mean", causal-LM scores) adds the sentence-length check."""
    kw: dict[str, Any] = dict(
        seed=seed,
        runs=runs,
        fraction=fraction,
        ddof=ddof,
        decimals=decimals,
        tie_tolerance=tie_tolerance,
        clm_method=clm_method,
    )
    summary, out = pm.summarize(df, **kw)
    langs = sorted(df["lang"].unique().tolist()) if len(df) else []
    summary["langs"] = langs
    summary["lang"] = langs[0] if len(langs) == 1 else None
    summary["pooled_over_langs"] = len(langs) > 1
    summary["by_lang"] = {}
    for lg in langs:
        s, _ = pm.summarize(df[df["lang"] == lg], **kw)
        summary["by_lang"][lg] = s
    return summary, out


def run_pairs(
    opts: PairsOptions,
    *,
    progress: bool = True,
    command: str | None = None,
    cache: Any = None,
    ddof: int = 0,
    decimals: int | None = _UNSET,
    tie_tolerance: float = 0.0,
) -> PairsRun:
    """Score minimal pairs with each model and write the result files (see the module docstring).

    ``opts``: the :class:`~biaskit.evaluation.options.PairsOptions` of ``biaskit evaluate pairs``
    (what the command and the pipeline's evaluate stage build; a notebook: ``biaskit.evaluate_pairs``).

    ``protocol``: a paper protocol by name (:mod:`biaskit.evaluation.protocols`: ``crows``,
    ``indibias``), ``none`` (biaskit's defaults) or None/``auto`` (the protocol of the data's origin).
    ``unit``, ``method``, ``normalise``, ``runs``, ``fraction`` and ``decimals`` left at None take the
    protocol's value; a value given explicitly overrides it and is reported as a deviation
    (``summary["protocol"]``, report.md).

    ``models``: model folders, aliases (``gemma3-270m``), offline hub names or
    :class:`~biaskit.evaluation.models.LoadedLM` objects. ``data`` may be a release folder (``biaskit
    release build``); ``split`` (dev/test) then picks one split and the summary names the release.
    ``base_url`` (``--base-url``): a served model (``clm-api``). Not options of the command:
    ``progress`` (the command passes: not ``quiet``), ``command`` (recorded), ``cache`` (default: not
    ``no_cache``; or a cache object), ``ddof``, ``decimals``, ``tie_tolerance`` (the metrics').
    """
    t_start = time.perf_counter()
    scoring = _Scoring.of(opts, cache)
    read = _read(opts)
    applied = pairs_protocol(
        opts.protocol,
        read.res.format,
        read.res.pairs,
        read.info if read.release else None,
        scoring.cls,
        _given(opts, decimals),
        decimals_given=decimals is not _UNSET,
    )
    settings = _Settings.of(applied.values, seed=opts.seed, ddof=ddof, tie_tolerance=tie_tolerance)
    data_info = _data_info(opts, read, applied)
    models = list(opts.models)
    slugs = _unique_slugs(models)
    multi = len(models) > 1
    scored: list[tuple[dict, Path, Any]] = []  # (summary, folder, outcome table) per model
    with _publish(Path(opts.out)) as stage:
        for model, slug in zip(models, slugs, strict=False):
            run = _run_model(model, slug, opts, scoring, read, settings, applied, data_info, progress, command)
            if run is None:  # another rank of a torchrun launch: its shard is in the cache, rank 0 writes
                continue
            summary, out, timings = run
            _write_model(stage / slug if multi else stage, summary, out, timings)
            scored.append((summary, Path(opts.out) / slug if multi else Path(opts.out), out))
        comparison = _write_comparison(stage, Path(opts.out), scored) if multi and scored else None
    for summary, _, _ in scored:
        summary["timings"]["total_s"] = time.perf_counter() - t_start
    return PairsRun(
        out_dir=Path(opts.out),
        models=[PairsModel.from_summary(s, d) for s, d, _ in scored],
        comparison=comparison,
        skipped=read.res.skipped,
        protocol=applied,
    )


@dataclass
class _Scoring:
    """How the models are scored, from the options alone (an impossible option fails before any data
    is read or model loaded): the scorer, its class, the served model's options, the cache."""

    name: str
    cls: Any
    served: dict
    cache: Any

    @classmethod
    def of(cls, o: PairsOptions, cache: Any) -> _Scoring:
        from biaskit.options import tell

        from .options import served_options
        from .scorers import SCORERS, infer_scorer

        if not o.models:
            raise BiaskitError(f"no model given. Fix: {tell('models', 'DIR_OR_NAME')} (repeatable)")
        scorer = o.scorer or ("clm-api" if o.base_url else None)
        served = served_options(scorer, o.base_url, o.concurrency) if scorer else {}
        if scorer is None:  # from the models' architecture (their config; no weights loaded)
            scorer = infer_scorer(list(o.models), served=bool(o.base_url))
        scorer_cls = SCORERS.get(scorer)
        scorer_cls.check_options(o.unit, o.method, o.batch_size)
        if o.normalise is not None:
            scorer_cls.check_normalise(o.normalise, o.method)
        return cls(scorer, scorer_cls, served, not o.no_cache if cache is None else cache)


@dataclass
class _Read:
    """The pairs a run scores: what the reader read (``res``), the pairs selected (language, limit),
    the release's info when ``data`` is a release, and how long reading took."""

    data: Path
    res: ReleasePairs | ReadResult
    pairs: list
    release: bool
    info: dict[str, Any]
    seconds: float


def _read(o: PairsOptions) -> _Read:
    from biaskit.options import unset
    from biaskit.readers import read_pairs

    t0 = time.perf_counter()
    data = Path(o.data)
    release = data.is_dir() or o.release_split is not None
    res: ReleasePairs | ReadResult
    info: dict[str, Any] = {}
    if release:
        from biaskit.release.read import read_release_pairs

        res = read_release_pairs(data, split=o.release_split, lang=o.lang)
        info = res.info
    else:
        res = read_pairs(data, format=o.format, lang=o.lang, skip_invalid=o.skip_invalid)
    pairs = _select(res.pairs, o.lang, o.limit, data)
    if not pairs:
        raise InputError(
            "no valid pairs to score" + (f" ({len(res.skipped)} invalid rows skipped)." if res.skipped else "."),
            path=data,
            fix=f"check the file (or {unset('skip_invalid')} to see the first error).",
        )
    return _Read(data, res, pairs, release, info, time.perf_counter() - t0)


def _given(o: PairsOptions, decimals: Any) -> dict[str, Any]:
    """The settings a protocol decides, as given (None: not given)."""
    return {
        "method": o.method,
        "unit": o.unit,
        "normalise": o.normalise,
        "runs": o.runs,
        "fraction": o.fraction,
        "decimals": None if decimals is _UNSET else decimals,
    }


@dataclass(frozen=True)
class _Settings:
    """What the metrics and the scorer use once the protocol is applied."""

    unit: str
    method: str | None
    normalise: str
    runs: int
    fraction: float
    decimals: int | None
    seed: int
    ddof: int
    tie_tolerance: float

    @classmethod
    def of(cls, v: dict[str, Any], **kw: Any) -> _Settings:
        return cls(
            unit=v.get("unit", "token"),
            method=v.get("method"),
            normalise=v.get("normalise", "none"),
            runs=v["runs"],
            fraction=v["fraction"],
            decimals=v["decimals"],
            **kw,
        )


def _data_info(o: PairsOptions, read: _Read, applied: Any) -> dict[str, Any]:
    """``summary["data"]``: what was read and scored; the data's reasons for not being comparable go
    into ``applied``."""
    from collections import Counter

    from .published import pairs_data_reasons

    info = {
        "path": str(read.data.resolve()),
        "sha256": read.info["sha256"] if read.release else sha256_file(read.data),
        **({"release": read.info} if read.release else {}),
        "format": read.res.format,
        "lang_filter": o.lang,
        "limit": o.limit,
        "n_pairs_read": len(read.res.pairs),
        "n_pairs_scored": len(read.pairs),
        "n_skipped": len(read.res.skipped),
        "skipped": [str(e) for e in read.res.skipped[:50]],
    }
    langs = Counter(p.lang for p in read.pairs)
    pairs_data_reasons(applied, info, {lg: {"n_pairs": n} for lg, n in langs.items()})
    return info


def _publish(out_dir: Path):
    """The result folder, published at once: a run that dies leaves the earlier result as it was (the
    other ranks of a torchrun launch write nothing: their stage is never published)."""
    import contextlib

    from biaskit.io import atomic_dir

    from . import distributed

    if distributed.is_main_process():
        return atomic_dir(out_dir, owns=OUTPUT_FILES)
    return contextlib.nullcontext(out_dir)


def _load_scorer(model: Any, o: PairsOptions, scoring: _Scoring, settings: _Settings, progress: bool) -> Any:
    from . import distributed
    from .scorers import load_scorer

    extra: dict[str, Any] = dict(scoring.served)
    if settings.normalise != "none":
        extra["normalise"] = settings.normalise
    if o.device_map:
        extra["device_map"] = o.device_map
    with library_bars(progress):  # transformers' loading bars follow -q / the terminal, as ours
        return load_scorer(
            scoring.name,
            model,
            unit=settings.unit,
            method=settings.method,
            batch_size=o.batch_size,
            device=distributed.rank_device(o.device),
            dtype=o.dtype,
            cache=scoring.cache,
            progress=progress,
            **extra,
        )


def _run_model(
    model: Any,
    slug: str,
    o: PairsOptions,
    scoring: _Scoring,
    read: _Read,
    settings: _Settings,
    applied: Any,
    data_info: dict,
    progress: bool,
    command: str | None,
) -> tuple[dict, Any, dict] | None:
    """Score the pairs with one model: its summary, per-pair outcome table and the time each step took;
    None on a torchrun rank other than the first."""
    from . import distributed

    t0 = time.perf_counter()
    sc = _load_scorer(model, o, scoring, settings, progress)
    load_s = time.perf_counter() - t0
    t0 = time.perf_counter()
    scores = distributed.score_pairs(sc, [(p.sent_more, p.sent_less) for p in read.pairs])
    if scores is None:
        return None
    score_s = time.perf_counter() - t0
    t0 = time.perf_counter()
    summary, out = _metrics(read.pairs, scores, sc, settings)
    metrics_s = time.perf_counter() - t0
    summary.update(_describe(model, slug, sc, scoring.name, settings, applied, summary, data_info, command))
    timings = {
        "read_s": read.seconds,
        "load_s": load_s,
        "score_s": score_s,
        "metrics_s": metrics_s,
        "pairs_per_s": len(read.pairs) / score_s if score_s > 0 else None,
        "forward_passes": sc.forward_passes,
        "rows_scored": sc.rows_scored,
        "processes": distributed.world()[1],
    }
    return summary, out, timings


def _metrics(pairs: Sequence[Any], scores: Sequence[Any], sc: Any, settings: _Settings) -> tuple[dict, Any]:
    """The metrics of one model's scores (:func:`summarize_frame`) and its outcome table."""
    method = sc.describe().get("method") if getattr(sc, "kind", "") in ("clm", "seq2seq") else None
    return summarize_frame(
        score_frame(pairs, scores),
        seed=settings.seed,
        runs=settings.runs,
        fraction=settings.fraction,
        ddof=settings.ddof,
        decimals=settings.decimals,
        tie_tolerance=settings.tie_tolerance,
        clm_method=method,
    )


def _describe(
    model: Any,
    slug: str,
    sc: Any,
    scorer: str,
    settings: _Settings,
    applied: Any,
    summary: dict,
    data_info: dict,
    command: str | None,
) -> dict[str, Any]:
    """What summary.json says besides the metrics: the published figures, the model and scorer, the
    checkpoint, the protocol as it applies to this model, the data, the version and the command."""
    from .published import model_protocol, pairs_comparison

    info = sc.describe()
    applied_m, checkpoint = model_protocol(applied, model, sc.lm if getattr(sc, "lm", None) is not None else sc)
    return {
        "published": pairs_comparison(checkpoint.get("paper"), summary),
        "benchmark": "pairs",
        "model": model_name(model),
        "model_slug": slug,
        "scorer": scorer,
        "unit": info.get("unit", settings.unit),
        "method": info.get("method", settings.method),
        "normalise": info.get("normalise", "none"),
        "normalisation": info.get("normalisation"),
        "scorer_info": info,
        "checkpoint": checkpoint,
        "protocol": applied_m.as_dict(),
        "data": data_info,
        "biaskit_version": __version__,
        "created_at": datetime.now(UTC).isoformat(timespec="seconds"),
        "command": command,
    }


def _write_model(folder: Path, summary: dict, out: Any, timings: dict) -> None:
    """One model's files; summary.json is written again with the timings, the writing's included."""
    from biaskit.io import write_json
    from biaskit.public import public_obj

    t0 = time.perf_counter()
    write_model_outputs(folder, summary, out)
    read_to_metrics = {k: timings[k] for k in ("read_s", "load_s", "score_s", "metrics_s")}
    summary["timings"] = {**read_to_metrics, "write_s": time.perf_counter() - t0, **timings}
    write_json(folder / "summary.json", _ordered(public_obj(summary)))


def _write_comparison(stage: Path, out_dir: Path, scored: list[tuple[dict, Path, Any]]) -> Path:
    from biaskit.public import public_obj

    from .report import write_comparison

    return out_dir / write_comparison(stage, [public_obj(s) for s, _, _ in scored], [o for _, _, o in scored]).name


def pairs_protocol(
    requested: str | None,
    fmt: str,
    pairs: Sequence[Any],
    release: dict | None,
    scorer_cls: Any,
    given: dict[str, Any],
    *,
    decimals_given: bool = True,
):
    """The protocol a pairs run follows (:mod:`.protocols`) applied to the options given (None = not
    given): the values it uses and its deviations. The settings depend on the scorer's kind (the
    masking unit and |C| normalisation are masked-LM settings)."""
    from .protocols import apply_protocol, choose
    from .protocols import words as W
    from .protocols.origin import pairs_origin

    kind = "clm" if getattr(scorer_cls, "served", False) else scorer_cls.kind
    proto, how = choose("pairs", requested, pairs_origin(fmt, pairs, release))
    given = dict(given)
    if not decimals_given:
        given.pop("decimals", None)
    elif given.get("decimals") is None:
        given["decimals"] = "unrounded"  # an explicit None (compare unrounded scores) is an option, not "not given"
    mlm = kind == "mlm"
    if mlm and given.get("method") not in (None, "pll") and given.get("normalise") is None:
        given["normalise"] = "none"  # |C| normalisation is defined for P(U|M) only
    if not mlm:
        for k in ("unit", "normalise"):
            if given.get(k) not in (None, "token", "none"):
                from biaskit.options import say, unset

                raise BiaskitError(
                    f"{say(k, given[k])} is a masked-LM setting; scorer '{scorer_cls.name}' has no {k}. Fix: {unset(k)}"
                )
            given.pop(k, None)
    defaults = {"method": scorer_cls.methods[0], "runs": 5, "fraction": 0.8, "decimals": pm.DEFAULT_DECIMALS}
    if mlm:
        defaults.update(unit="token", normalise="none")
    applied = apply_protocol(
        proto,
        "pairs",
        given,
        defaults,
        context={"kind": kind},
        chosen_by=how,
        words={
            "method": W.METHOD,
            "unit": W.UNIT,
            "normalise": W.NORMALISE,
            "decimals": {
                pm.DEFAULT_DECIMALS: "scores rounded to 3 decimals before comparison",
                "unrounded": "scores compared unrounded",
            },
            "runs": {5: "5 subsample runs"},
            "fraction": {0.8: "80% of the pairs per run"},
        },
    )
    if applied.values.get("decimals") == "unrounded":
        applied.values["decimals"] = None
    if mlm:
        scorer_cls.check_normalise(applied.values["normalise"], applied.values["method"])
    return applied


_FIRST_KEYS = [
    "model",
    "scorer",
    "unit",
    "method",
    "normalise",
    "normalisation",
    "lang",
    "langs",
    "pooled_over_langs",
    "metric_score",
    "stereo_score",
    "antistereo_score",
    "neutral_pct",
    "n_pairs",
    "n_ties",
]


def _ordered(summary: dict) -> dict:
    """Most-read keys first in summary.json."""
    return {
        **{k: summary[k] for k in _FIRST_KEYS if k in summary},
        **{k: v for k, v in summary.items() if k not in _FIRST_KEYS},
    }


def write_model_outputs(mdir: Path, summary: dict, out) -> None:
    """Write pairs.csv, ds_kde.png, report.md and summary.json for one model (each atomically; no path
    of this machine in what is published: :mod:`biaskit.public`)."""
    from biaskit.io import atomic_write_text, write_json, write_table
    from biaskit.public import public_obj

    from .report import ds_unit, kde_panels, plot_ds_kde, render_report

    summary = public_obj(summary)
    mdir.mkdir(parents=True, exist_ok=True)
    write_table(mdir / "pairs.csv", out[PAIRS_COLUMNS])
    plot_ds_kde(
        kde_panels(out),
        mdir / "ds_kde.png",
        title=f"DS distribution: {summary.get('model')} ({summary.get('scorer')}, {summary.get('method')})",
        unit=ds_unit(summary),
    )
    atomic_write_text(mdir / "report.md", render_report(summary, out, plot="ds_kde.png"))
    write_json(mdir / "summary.json", _ordered(summary))
