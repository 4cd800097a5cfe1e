"""Several models in one `evaluate cats` / `evaluate seat` run: one comparison table, like the papers'.

:func:`run_cats_multi` scores the CATs with every model (each in its own sub-folder, exactly as a
single-model run writes it), then writes

    comparison.csv / comparison.md   one row per model x split x domain: lms, ss, icat, CATs
                                     (StereoSet ACL 2021 Tables 4-8, arXiv Table 5: per domain, per model)
    correlations.csv                 Spearman's rho of lms vs ss across models, per split x domain
                                     (the ACL version reports rho = 0.87 over its models, §7)
    comparison.json                  the same numbers + what was run

and, with ``ensemble=True``, an ``ENSEMBLE`` model: the reference's weighted vote over the models'
per-sentence scores (:func:`.cat_modes.ensemble_scores`), scored and reported like a model but left
out of the correlation (it is built from the other rows).

:func:`run_seat_multi` does the same for SEAT: ``comparison.csv`` (one row per test x model: effect
size, p-value) and ``comparison.md`` (effect size per test x model, IndiBias Tables 3, 4, 9 layout).

The output folder is built in a temporary sibling and renamed into place when every model is done
(:func:`biaskit.io.atomic_dir`); every model output is in the score cache, so a re-run after a crash
costs no forward pass for what was already scored.
"""

from __future__ import annotations

import math
import warnings
from collections.abc import Sequence
from pathlib import Path
from typing import TYPE_CHECKING, Any

from biaskit.errors import BiaskitError
from biaskit.options import say
from biaskit.tables import MISSING, md_table, num

from .results import CatsComparison, CatsRun, SeatComparison, SeatRun

if TYPE_CHECKING:
    from .options import CatsOptions, SeatOptions

CATS_COLUMNS = ["model", "scorer", "cat_mode", "split", "domain", "lms", "ss", "icat", "count"]
ENSEMBLE = "ENSEMBLE"


def _check_models(models: Sequence[Any]) -> list[Any]:
    models = list(models)
    if len(models) < 2:
        raise BiaskitError(
            f"a comparison needs at least two models. Fix: repeat {say('models')}, or run one model alone"
        )
    return models


def cats_rows(name: str, summary: dict) -> list[dict]:
    """The comparison rows of one model's summary: per split (and overall), all domains then each."""
    rows = []
    for split in ("intrasentence", "intersentence", "overall"):
        part = summary if split == "overall" else summary.get(split)
        if not part:
            continue
        pairs = [("all", part["overall"])] + sorted((part.get("by_domain") or {}).items())
        for dom, r in pairs:
            rows.append(
                {
                    "model": name,
                    "scorer": summary.get("scorer"),
                    "cat_mode": summary.get("cat_mode"),
                    "split": split,
                    "domain": dom,
                    "lms": r["lms"],
                    "ss": r["ss"],
                    "icat": r["icat"],
                    "count": r["count"],
                }
            )
    return rows


def spearman_lms_ss(table, exclude: Sequence[str] = (ENSEMBLE,)):
    """Spearman's rho (and p) of lms vs ss across models, per split x domain (``scipy.stats.spearmanr``).
    rho is None where fewer than two models have both numbers or one of them is constant."""
    import pandas as pd
    from scipy.stats import spearmanr

    rows = []
    sub = table[~table["model"].isin(list(exclude))]
    for (split, dom), g in sub.groupby(["split", "domain"], sort=False):
        g = g.dropna(subset=["lms", "ss"])
        rho = p = None
        if len(g) >= 2 and g["lms"].nunique() > 1 and g["ss"].nunique() > 1:
            with warnings.catch_warnings():
                warnings.simplefilter("ignore")
                res = spearmanr(g["lms"].to_numpy(dtype=float), g["ss"].to_numpy(dtype=float))
            rho = float(res.statistic)
            p = float(res.pvalue) if len(g) > 2 and math.isfinite(float(res.pvalue)) else None
        rows.append(
            {
                "split": split,
                "domain": dom,
                "n_models": int(len(g)),
                "spearman_rho": rho,
                "p_value": p,
                "models": ";".join(g["model"]),
            }
        )
    return pd.DataFrame(rows, columns=["split", "domain", "n_models", "spearman_rho", "p_value", "models"])


def render_cats_md(table, corr, info: dict) -> str:
    lines = [
        "# StereoSet: model comparison",
        "",
        f"Data `{info['data']}`, scoring mode `{info['cat_mode']}`, tie rule `{info['tie_policy']}`. "
        "Ideal: LMS 100, SS 50, ICAT 100. Each model's full report is in its sub-folder.",
        "",
        "## Overall (as the papers' Table 4)",
        "",
    ]
    ov = table[(table["split"] == "overall") & (table["domain"] == "all")]
    lines.append(
        md_table(
            ["model", "scorer", "LMS", "SS", "ICAT", "CATs"],
            [
                [r["model"], r["scorer"], num(r["lms"]), num(r["ss"]), num(r["icat"]), r["count"]]
                for _, r in ov.iterrows()
            ],
        )
    )
    lines += [
        "",
        "## Per split and domain",
        "",
        md_table(
            ["split", "domain", "model", "LMS", "SS", "ICAT", "CATs"],
            [
                [r["split"], r["domain"], r["model"], num(r["lms"]), num(r["ss"]), num(r["icat"]), r["count"]]
                for _, r in table.sort_values(["split", "domain"], kind="stable").iterrows()
            ],
        ),
    ]
    lines += [
        "",
        "## LMS vs SS across models (Spearman)",
        "",
        "Spearman's rank correlation of LMS and SS over the models (not the ENSEMBLE), per split and "
        "domain (`scipy.stats.spearmanr`); with few models it is a description, not evidence.",
        "",
        md_table(
            ["split", "domain", "models", "rho", "p"],
            [
                [r["split"], r["domain"], r["n_models"], num(r["spearman_rho"], 3), num(r["p_value"], 3)]
                for _, r in corr.iterrows()
            ],
        ),
    ]
    if info.get("protocol"):
        from .protocols.base import render_protocol

        lines += ["", render_protocol(info["protocol"])]
    return "\n".join(lines) + "\n"


def _ensemble(o: CatsOptions, runs: Sequence[CatsRun], names: Sequence[str], out: Path, command: str | None) -> CatsRun:
    """The reference's ENSEMBLE (a weighted vote of the models' sentence scores) scored like a model,
    into ``out/ENSEMBLE``; the CATs' split, limit and tie rule are the models' (as the protocol decided)."""
    from biaskit.io import iter_jsonl

    from .cat_metrics import full_report
    from .cat_modes import ENSEMBLE_WEIGHTS, ensemble_scores
    from .stereoset import SentenceScore, _summary, read_run_cats, to_metric_items, write_cat_outputs

    first = runs[0]
    cats, _ = read_run_cats(
        o.data, fmt=o.format, split=first.split or "both", limit=o.limit, release_split=o.release_split
    )
    members = []
    for name, r in zip(names, runs, strict=False):
        scores = {row["id"]: float(row["score"]) for _, row in iter_jsonl(out / name / "scores.jsonl")}
        members.append((r.scorer, scores))
    ens = ensemble_scores(cats, members)
    items, n_missing = to_metric_items(cats, ens, allow_missing=True)
    if not items:
        raise BiaskitError("no CAT was scored by the models, so the ENSEMBLE has nothing to combine.")
    kept = {it.cat_id for it in items}
    cats = [c for c in cats if c.cat_id in kept]
    report = full_report(items, tie_policy=first.tie_policy)
    sentence_scores = [
        SentenceScore(
            sentence_id=op.sentence_id,
            cat_id=c.cat_id,
            split=c.split,
            gold_label=op.gold_label,
            score=ens[op.sentence_id],
            method="ensemble",
        )
        for c in cats
        for op in c.options
    ]
    extra = {
        "model": ENSEMBLE,
        "scorer": ENSEMBLE.lower(),
        "cat_mode": first.cat_mode,
        "members": list(names),
        "weights": {f"{k}/{sp}": w for (k, sp), w in ENSEMBLE_WEIGHTS.items()},
        "tie_policy": first.tie_policy,
        "missing_cats": n_missing,
        "skipped": {},
        "data": first.summary.get("data"),
        "command": command,
    }
    summary = _summary(cats, items, report, tie_policy=first.tie_policy, seed=o.seed, extra=extra)
    write_cat_outputs(out / ENSEMBLE, summary, sentence_scores, cats)
    return CatsRun.from_summary(summary, out / ENSEMBLE)


def check_cats_options(o: CatsOptions) -> None:
    """The combinations of options ``evaluate cats`` refuses before any work (the command and
    :func:`run_cats_multi` ask; hints name each option where the user is)."""
    n = len(o.models or ())
    if (not n) == (o.predictions is None):
        raise BiaskitError(
            f"pass either {say('models')} (score the CATs) or {say('predictions')} (metrics from a score file)."
        )
    if o.ensemble and n < 2:
        raise BiaskitError(
            f"{say('ensemble')} combines several models. Fix: name at least two models ({say('models')}) or drop "
            f"{say('ensemble')}"
        )
    if (o.nsp_head is not None or o.sentiment_model is not None) and not n:
        raise BiaskitError(
            f"{say('nsp_head')} and {say('sentiment_model')} go with {say('models')}. Fix: give {say('models')}"
        )
    if n > 1 and o.nsp_head is not None:
        raise BiaskitError(f"an NSP head belongs to one model. Fix: run each model with its own {say('nsp_head')}")


def run_cats_multi(
    opts: CatsOptions, *, progress: bool = False, command: str | None = None, cache: Any = None
) -> CatsComparison:
    """Score the CATs with every model and write the comparison (see the module docstring).
    ``opts``: the :class:`~biaskit.evaluation.options.CatsOptions` of ``biaskit evaluate cats`` with
    several models (each is scored by :func:`.stereoset.run_cats` with the same options)."""
    from biaskit.io import atomic_dir

    from .cat_modes import check_mode
    from .pairs import _unique_slugs
    from .stereoset import run_cats

    check_cats_options(opts)
    models = _check_models(opts.models or [])
    if opts.cat_mode is not None:
        check_mode(opts.cat_mode)
    names = _unique_slugs(models)
    if opts.ensemble and ENSEMBLE in names:
        raise BiaskitError(f"a model folder is named {ENSEMBLE}, the name of the ensemble row. Fix: rename it")
    with atomic_dir(opts.out) as tmp:
        runs = [
            run_cats(
                opts.model_copy(update={"models": [m], "out": tmp / n}), progress=progress, command=command, cache=cache
            )
            for m, n in zip(models, names, strict=False)
        ]
        ens = _ensemble(opts, runs, names, tmp, command) if opts.ensemble else None
        table, corr = _write_cats_comparison(tmp, opts, models, names, runs, ens, command)
    for r, n in zip(runs, names, strict=False):
        r.folder = Path(opts.out) / n
    if ens is not None:
        ens.folder = Path(opts.out) / ENSEMBLE
    return CatsComparison(models=runs, names=names, table=table, correlations=corr, ensemble=ens)


def _write_cats_comparison(
    out: Path,
    o: CatsOptions,
    models: Sequence[Any],
    names: Sequence[str],
    runs: Sequence[CatsRun],
    ens: CatsRun | None,
    command: str | None,
) -> tuple[Any, Any]:
    """comparison.csv / .md / .json and correlations.csv; returns the table and the correlations."""
    import pandas as pd

    from biaskit.io import atomic_write_text, write_json, write_table
    from biaskit.public import public_obj, public_table

    table = pd.DataFrame(
        [row for n, r in zip(names, runs, strict=False) for row in cats_rows(n, r.summary)]
        + (cats_rows(ENSEMBLE, ens.summary) if ens else []),
        columns=CATS_COLUMNS,
    )
    corr = spearman_lms_ss(table)
    info = {
        "data": str(o.data),
        "models": [str(m) for m in models],
        "names": list(names),
        "ensemble": bool(o.ensemble),
        "cat_mode": runs[0].cat_mode,
        "tie_policy": runs[0].tie_policy,
        "command": command,
        "protocol": runs[0].summary.get("protocol"),
    }
    table, info = public_table(table), public_obj(info)  # no path of this machine (biaskit.public)
    write_table(out / "comparison.csv", table)
    write_table(out / "correlations.csv", corr)
    atomic_write_text(out / "comparison.md", render_cats_md(table, corr, info))
    write_json(
        out / "comparison.json", {**info, "rows": table.to_dict("records"), "correlations": corr.to_dict("records")}
    )
    return table, corr


# ============================================================================================  SEAT
SEAT_COLUMNS = [
    "test",
    "lang",
    "model",
    "effect_size",
    "p_value",
    "significance",
    "p_method",
    "n_targ1",
    "n_targ2",
    "n_attr1",
    "n_attr2",
]


def run_seat_multi(opts: SeatOptions, *, command: str | None = None, cache: Any = None) -> SeatComparison:
    """Run the SEAT tests with every encoder (one sub-folder each, as a single run) and write
    ``comparison.csv`` (test x model rows) and ``comparison.md`` (effect size per test x model).
    ``opts``: the :class:`~biaskit.evaluation.options.SeatOptions` of ``biaskit evaluate seat`` with
    several models."""
    from biaskit.io import atomic_dir

    from .pairs import _unique_slugs
    from .seat import run_seat

    models = _check_models(opts.models)
    names = _unique_slugs(models)
    with atomic_dir(opts.out) as tmp:
        runs = [
            run_seat(opts.model_copy(update={"models": [m], "out": tmp / n}), command=command, cache=cache)
            for m, n in zip(models, names, strict=False)
        ]
        table = _write_seat_comparison(tmp, opts, models, names, runs, command)
    for r, n in zip(runs, names, strict=False):
        r.folder = Path(opts.out) / n
    return SeatComparison(models=runs, names=names, table=table)


def _write_seat_comparison(
    out: Path, o: SeatOptions, models: Sequence[Any], names: Sequence[str], runs: Sequence[SeatRun], command: str | None
) -> Any:
    """comparison.csv / .md / .json; the marks are the protocol's, over the whole table (sent-bias
    corrects across it). Returns the table."""
    import pandas as pd

    from biaskit.io import atomic_write_text, write_json, write_table
    from biaskit.public import public_obj, public_table

    from .seat import significance

    rows = [
        {"model": name, **{k: r.get(k) for k in SEAT_COLUMNS if k not in ("model", "significance")}}
        for name, run in zip(names, runs, strict=False)
        for r in run.summary["tests"]
    ]
    first = runs[0]
    for r, sig in zip(rows, significance(rows, first.alpha, first.correction) if rows else [], strict=False):
        r["significance"] = sig
    table = public_table(pd.DataFrame(rows, columns=SEAT_COLUMNS))  # no path of this machine (biaskit.public)
    write_table(out / "comparison.csv", table)
    atomic_write_text(out / "comparison.md", render_seat_md(table, public_obj(list(names)), public_obj(first.summary)))
    summary = {
        "tests": list(o.tests),
        "models": [str(m) for m in models],
        "names": list(names),
        "command": command,
        "rows": table.to_dict("records"),
    }
    write_json(out / "comparison.json", public_obj(summary))
    return table


def render_seat_md(table, names: Sequence[str], summary: dict | None = None) -> str:
    """Effect size per test and model, significance marked as the run's protocol prints it."""
    from .protocols.base import render_protocol
    from .seat import mark, significance_legend

    summary = summary or {}
    lines = [
        "# SEAT: model comparison",
        "",
        "Effect size d per test and model (d > 0: X is closer to A and Y to B); "
        f"{significance_legend(summary) if summary else '`*`: p ≤ 0.05'}. "
        "Each model's full report is in its sub-folder.",
        "",
    ]
    rows = []
    for (test, lang), g in table.groupby(["test", "lang"], sort=False):
        cells = [test, lang]
        for n in names:
            r = g[g["model"] == n]
            if r.empty:
                cells.append(MISSING)
                continue
            sig = r["significance"].iloc[0] if "significance" in r else ""
            cells.append(
                mark(float(r["effect_size"].iloc[0]), sig if isinstance(sig, str) else "", summary.get("marks", "star"))
            )
        rows.append(cells)
    lines.append(md_table(["test", "lang", *names], rows))
    if summary.get("protocol"):
        lines += ["", render_protocol(summary["protocol"])]
    return "\n".join(lines) + "\n"
