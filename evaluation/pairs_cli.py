"""`biaskit evaluate pairs`: a thin typer wrapper around :func:`biaskit.evaluation.pairs.run_pairs`; its options
are :class:`~biaskit.evaluation.options.PairsOptions` (declared once: the flags, the pipeline's
``[stages.evaluate]`` keys and the function's argument come from that model)."""

from __future__ import annotations

from biaskit.clitools import command_line

from . import cli_options as opt
from .options import PairsOptions


@PairsOptions.cli()
def pairs_command(opts: PairsOptions) -> None:
    """Score minimal pairs (CrowS-Pairs / IndiBias metric) with one or more language models."""
    from rich.table import Table
    from rich.text import Text

    from biaskit.clitools import console as make_console

    from .pairs import run_pairs
    from .report import ci_text, fmt, length_note

    res = run_pairs(opts, progress=not opts.quiet, command=command_line())
    if not res.models:  # a rank > 0 of a torchrun launch: rank 0 reports
        return
    console = make_console()
    if res.skipped:
        console.print(
            Text.assemble((f"skipped {len(res.skipped)} invalid row(s)", "yellow"), f"; first: {res.skipped[0]}")
        )
    table = Table(title="Minimal-pair bias (% of pairs where the model prefers sent_more; 50 = none)")
    table.add_column("model", no_wrap=True)
    table.add_column("lang")
    for col in ("pairs", "metric", "95% CI\n(bootstrap)", "stereo", "antistereo", "ties"):
        table.add_column(col, justify="right", no_wrap=True)
    table.add_column("subsample\nmean ± std", justify="right", no_wrap=True)
    for m in res.models:
        for v in m.rows():
            table.add_row(
                m.slug,
                v.lang,
                str(v.n_pairs),
                fmt(v.metric_score),
                ci_text(v.metrics),
                fmt(v.stereo_score),
                fmt(v.antistereo_score),
                str(v.n_ties),
                f"{fmt(v.subsample_mean)} ± {fmt(v.subsample_std)}",
            )
    console.print(table)
    first, *others = res.models
    opt.print_protocol(console, first.protocol, first.slug if others else "")
    for m in others:
        opt.print_verdict(console, m.protocol, m.slug)
    for m in res.models:
        opt.print_published(console, m.published)
    console.print(
        "95% CI: bootstrap over pairs (sampling uncertainty); subsample: the IndiBias 5 x 80% protocol "
        "(spread over subsets of these pairs, not an interval).",
        soft_wrap=True,
    )
    for m in res.models:
        for v in m.by_lang.values():
            note = length_note(v.metrics)
            if note and m.method == "sum":
                console.print(Text.assemble((f"{m.slug} ({v.lang}), sum scoring: ", "yellow"), note), soft_wrap=True)
    for m in res.models:
        d = m.folder
        console.print(
            f"wrote {d / 'summary.json'}, {d / 'pairs.csv'}, {d / 'report.md'}, {d / 'ds_kde.png'}", soft_wrap=True
        )
    if res.comparison:
        console.print(f"comparison: {res.comparison} and {res.comparison.with_suffix('.md')}", soft_wrap=True)
