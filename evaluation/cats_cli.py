"""`biaskit evaluate cats | seat | correlate`: thin typer wrappers around
:func:`biaskit.evaluation.stereoset.run_cats` / ``run_cats_predictions`` (several models:
:func:`biaskit.evaluation.compare.run_cats_multi`), :func:`biaskit.evaluation.seat.run_seat`
(:func:`~biaskit.evaluation.compare.run_seat_multi`) and
:func:`biaskit.evaluation.correlate.run_correlate`; their options are the models of
:mod:`biaskit.evaluation.options` (``CatsOptions``, ``SeatOptions``, ``CorrelateOptions``)."""

from __future__ import annotations

from typing import TYPE_CHECKING

from biaskit.clitools import command_line
from biaskit.tables import num, pvalue

from . import cli_options as opt
from .options import CatsOptions, CorrelateOptions, SeatOptions

if TYPE_CHECKING:
    from .results import CatScores, CatsRun


@CatsOptions.cli()
def cats_command(opts: CatsOptions) -> None:
    """StereoSet context association tests: LMS, SS and ICAT per split, domain and target term."""
    from .compare import check_cats_options
    from .stereoset import run_cats, run_cats_predictions

    check_cats_options(opts)
    if opts.models and len(opts.models) > 1:
        _cats_multi(opts)
        return
    if opts.predictions is not None:
        run = run_cats_predictions(opts, command=command_line())
    else:
        run = run_cats(opts, progress=not opts.quiet, command=command_line())
    _print_cats(run, scored=opts.predictions is None)


def _print_cats(run: CatsRun, *, scored: bool) -> None:
    """One model's table (per split and domain, then overall), its warnings, the baseline, the
    protocol line and the files written."""
    from rich.table import Table
    from rich.text import Text

    from biaskit.clitools import console as make_console

    table = Table(title=f"StereoSet: {run.model} (ideal: LMS 100, SS 50, ICAT 100)")
    for col in ("split", "domain", "LMS", "SS", "ICAT", "CATs", "targets"):
        table.add_column(col, justify="left" if col in ("split", "domain") else "right")

    def add(split_name: str, dom: str, r: CatScores) -> None:
        table.add_row(split_name, dom, num(r.lms), num(r.ss), num(r.icat), str(r.count), str(r.n_targets))

    for sp in run.splits:
        add(sp.split, "all", sp.overall)
        for d, r in sp.by_domain.items():
            add("", d, r)
    add("overall", "all", run.overall)
    console = make_console()
    console.print(table)
    for w in run.warnings:
        console.print(Text.assemble(("warning: ", "bold yellow"), w), soft_wrap=True)
    for split, reason in run.skipped.items():
        console.print(Text.assemble((f"{split} not scored:", "yellow"), f" {reason}"), soft_wrap=True)
    if run.sentiment is not None:
        o = run.sentiment
        console.print(
            f"SentimentLM ({run.sentiment_model}): LMS {num(o.lms)}, SS {num(o.ss)}, ICAT {num(o.icat)}",
            soft_wrap=True,
        )
    opt.print_protocol(console, run.protocol)
    opt.print_published(console, run.published)
    out = run.folder
    console.print(
        f"wrote {out / 'summary.json'}, {out / 'report.md'}"
        + (f", {out / 'scores.jsonl'}, {out / 'predictions.json'}" if scored else "")
        + f", {out / 'targets.csv'}, {out / 'groups.csv'}",
        soft_wrap=True,
    )


def _cats_multi(opts: CatsOptions) -> None:
    """Several models: one sub-folder each plus the comparison table and the lms-ss Spearman correlation."""
    from rich.table import Table

    from biaskit.clitools import console as make_console

    from .compare import run_cats_multi

    out = opts.out
    res = run_cats_multi(opts, progress=not opts.quiet, command=command_line())
    t = res.table
    table = Table(title="StereoSet: model comparison (ideal: LMS 100, SS 50, ICAT 100)")
    for col in ("model", "split", "domain", "LMS", "SS", "ICAT", "CATs"):
        table.add_column(col, justify="left" if col in ("model", "split", "domain") else "right")
    for _, r in t[t["domain"] == "all"].iterrows():
        table.add_row(r["model"], r["split"], r["domain"], num(r["lms"]), num(r["ss"]), num(r["icat"]), str(r["count"]))
    console = make_console()
    console.print(table)
    first, *others = res.models
    opt.print_protocol(console, first.protocol, first.model)
    for other in others:  # each model's checkpoint decides its own verdict
        opt.print_verdict(console, other.protocol, other.model)
    c = res.correlations
    top = c[(c["split"] == "overall") & (c["domain"] == "all")]
    if len(top):
        r = top.iloc[0]
        console.print(
            f"Spearman rho (LMS vs SS, overall, {r['n_models']} models): {num(r['spearman_rho'])}"
            f", p {pvalue(r['p_value'])}",
            soft_wrap=True,
        )
    console.print(
        f"wrote {out / 'comparison.csv'}, {out / 'comparison.md'}, {out / 'correlations.csv'}, "
        f"{out / 'comparison.json'} and one folder per model",
        soft_wrap=True,
    )


@SeatOptions.cli()
def seat_command(opts: SeatOptions) -> None:
    """SEAT/WEAT effect sizes and permutation p-values (May et al. 2019), incl. IndiBias intersectional tests."""
    from rich.table import Table
    from rich.text import Text

    from biaskit.clitools import console as make_console

    from .seat import run_seat

    if len(opts.models) > 1:
        _seat_multi(opts)
        return
    run = run_seat(opts, command=command_line())
    holm = "; **: after Holm-Bonferroni" if run.correction == "holm-bonferroni" else ""
    table = Table(title=f"SEAT: {opts.models[0]} ({run.pooling} pooling; d > 0: X~A, Y~B; *: p ≤ {run.alpha:g}{holm})")
    for col in ("test", "lang", "d", "p", "p method", "n X/Y/A/B"):
        table.add_column(col, justify="left" if col in ("test", "lang", "p method") else "right")
    for r in run.tests:
        table.add_row(
            r.test + (" (noise!)" if r.warning else ""),
            r.lang,
            f"{r.effect_size:.3f}{r.significance}",
            f"{r.p_value:.2g}",
            r.p_method,
            "/".join(map(str, r.sizes)),
        )
    console = make_console()
    console.print(table)
    for w in run.warnings:
        console.print(Text.assemble(("warning: ", "yellow"), w), soft_wrap=True)
    opt.print_protocol(console, run.protocol)
    opt.print_published(console, run.published)
    out = run.folder
    console.print(f"wrote {out / 'results.csv'}, {out / 'summary.json'}, {out / 'report.md'}", soft_wrap=True)


def _seat_multi(opts: SeatOptions) -> None:
    """Several encoders: the effect size per test and model, each model's verdict, the files."""
    from rich.table import Table

    from biaskit.clitools import console as make_console

    from .compare import run_seat_multi
    from .seat import significance_legend

    res = run_seat_multi(opts, command=command_line())
    first = res.models[0]
    table = Table(
        title=f"SEAT: effect size d per model ({first.pooling} pooling; "
        f"{significance_legend(first.summary).replace('underlined', '*')})"
    )
    table.add_column("test")
    table.add_column("lang")
    for n in res.names:
        table.add_column(n, justify="right")
    for (tname, lg), g in res.table.groupby(["test", "lang"], sort=False):
        cells = []
        for n in res.names:
            r = g[g["model"] == n]
            cells.append(
                "n/a" if r.empty else f"{float(r['effect_size'].iloc[0]):.3f}" + (r["significance"].iloc[0] or "")
            )
        table.add_row(tname, lg, *cells)
    make_console().print(table)
    opt.print_protocol(make_console(), first.protocol, first.model)
    for other in res.models[1:]:  # each model's checkpoint decides its own verdict
        opt.print_verdict(make_console(), other.protocol, other.model)
    out = opts.out
    make_console().print(
        f"wrote {out / 'comparison.csv'}, {out / 'comparison.md'}, {out / 'comparison.json'} and one folder per model",
        soft_wrap=True,
    )


@CorrelateOptions.cli()
def correlate_command(opts: CorrelateOptions) -> None:
    """Correlate intrinsic and extrinsic bias across models (variance of group-level scores; Pearson, Spearman)."""
    from rich.table import Table

    from biaskit.clitools import console

    from .correlate import run_correlate

    res = run_correlate(opts, command=command_line())
    table = Table(title="Intrinsic vs extrinsic (variance of group scores, across models)")
    for col in ("domain", "intrinsic", "extrinsic", "models", "Pearson r", "p", "Spearman rho", "p "):
        table.add_column(col)
    for _, r in res.correlations.iterrows():
        table.add_row(
            r["domain"],
            r["intrinsic"],
            r["extrinsic"],
            str(r["n_models"]),
            num(r["pearson_r"]),
            pvalue(r["pearson_p"]),
            num(r["spearman_rho"]),
            pvalue(r["spearman_p"]),
        )
    con = console()
    con.print(table)
    opt.print_protocol(con, res.protocol)
    out = opts.out
    con.print(f"wrote {out / 'correlations.csv'}, {out / 'variances.csv'}, {out / 'report.md'}", soft_wrap=True)
