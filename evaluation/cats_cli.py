"""`biaskit evaluate cats | seat | correlate`: thin typer wrappers around
:func:`biaskit.evaluation.stereoset.run_cats` / ``run_cats_predictions``,
:func:`biaskit.evaluation.seat.run_seat` and :mod:`biaskit.evaluation.correlate`."""

from __future__ import annotations

from pathlib import Path

import typer

from biaskit.clitools import command_line
from biaskit.errors import BiaskitError
from biaskit.paths import in_dir, in_file, in_path, out_dir
from biaskit.tables import num, pvalue

from . import cli_options as opt
from .options import CatsOptions, SeatOptions


def _fmt(x) -> str:
    return num(x)


@CatsOptions.cli()
def cats_command(opts: CatsOptions) -> None:
    """StereoSet context association tests: LMS, SS and ICAT per split, domain and target term."""
    from rich.table import Table
    from rich.text import Text

    from biaskit.clitools import console as make_console

    from .stereoset import run_cats, run_cats_predictions

    o, out = opts, opts.out
    if (not o.models) == (o.predictions is None):
        raise BiaskitError("pass either --model (score the CATs) or --predictions (metrics from a score file).")
    if o.ensemble and len(o.models or ()) < 2:
        raise BiaskitError("--ensemble combines several models. Fix: repeat --model (at least two) or drop --ensemble")
    if (o.nsp_head is not None or o.sentiment_model is not None) and not o.models:
        raise BiaskitError("--nsp-head and --sentiment-model go with --model. Fix: pass --model DIR")
    if o.models and len(o.models) > 1:
        if o.nsp_head is not None:
            raise BiaskitError("an NSP head belongs to one model. Fix: run each model with its own --nsp-head")
        _cats_multi(o)
        return
    if o.predictions is not None:
        s = run_cats_predictions(
            o.data,
            o.predictions,
            out,
            fmt=o.format,
            tie_policy=o.ties,
            allow_missing=o.allow_missing,
            seed=o.seed,
            command=command_line(),
            protocol=o.protocol,
        )
    else:
        s = run_cats(o, progress=not o.quiet, command=command_line())
    console = make_console()
    table = Table(title=f"StereoSet: {s['model']} (ideal: LMS 100, SS 50, ICAT 100)")
    for col in ("split", "domain", "LMS", "SS", "ICAT", "CATs", "targets"):
        table.add_column(col, justify="left" if col in ("split", "domain") else "right")

    def add(split_name: str, dom: str, r: dict) -> None:
        table.add_row(
            split_name, dom, _fmt(r["lms"]), _fmt(r["ss"]), _fmt(r["icat"]), str(r["count"]), str(r["n_targets"])
        )

    for sp in ("intrasentence", "intersentence"):
        if sp in s:
            add(sp, "all", s[sp]["overall"])
            for d, r in s[sp]["by_domain"].items():
                add("", d, r)
    add("overall", "all", s["overall"])
    console.print(table)
    for w in s.get("warnings") or []:
        console.print(Text.assemble(("warning: ", "bold yellow"), w), soft_wrap=True)
    for sp, info in (s.get("skipped") or {}).items():
        console.print(Text.assemble((f"{sp} not scored:", "yellow"), f" {info['reason']}"), soft_wrap=True)
    sent = (s.get("baselines") or {}).get("SentimentLM")
    if sent:
        o = sent["overall"]
        console.print(
            f"SentimentLM ({sent['classifier']['model']}): LMS {_fmt(o['lms'])}, SS {_fmt(o['ss'])}, "
            f"ICAT {_fmt(o['icat'])}",
            soft_wrap=True,
        )
    opt.print_protocol(console, s.get("protocol") or {})
    opt.print_published(console, s.get("published") or {})
    console.print(
        f"wrote {out / 'summary.json'}, {out / 'report.md'}"
        + (f", {out / 'scores.jsonl'}, {out / 'predictions.json'}" if opts.predictions is None else "")
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
    t = res["table"]
    table = Table(title="StereoSet: model comparison (ideal: LMS 100, SS 50, ICAT 100)")
    for col in ("model", "split", "domain", "LMS", "SS", "ICAT", "CATs"):
        table.add_column(col, justify="left" if col in ("model", "split", "domain") else "right")
    for _, r in t[t["domain"] == "all"].iterrows():
        table.add_row(
            r["model"], r["split"], r["domain"], _fmt(r["lms"]), _fmt(r["ss"]), _fmt(r["icat"]), str(r["count"])
        )
    console = make_console()
    console.print(table)
    first, *others = res["summaries"]
    opt.print_protocol(console, first.get("protocol") or {}, str(first.get("model")))
    for other in others:  # each model's checkpoint decides its own verdict
        opt.print_verdict(console, other.get("protocol") or {}, str(other.get("model")))
    c = res["correlations"]
    top = c[(c["split"] == "overall") & (c["domain"] == "all")]
    if len(top):
        r = top.iloc[0]
        console.print(
            f"Spearman rho (LMS vs SS, overall, {r['n_models']} models): {_fmt(r['spearman_rho'])}"
            f", p {_pfmt(r['p_value'])}",
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

    from biaskit.clitools import console as make_console

    from .seat import run_seat

    model, out = opts.models, opts.out
    if len(model) > 1:
        from .compare import run_seat_multi
        from .seat import significance_legend

        res = run_seat_multi(opts, command=command_line())
        t = res["table"]
        first = res["summaries"][0]
        table = Table(
            title=f"SEAT: effect size d per model ({first['pooling']} pooling; "
            f"{significance_legend(first).replace('underlined', '*')})"
        )
        table.add_column("test")
        table.add_column("lang")
        for n in res["names"]:
            table.add_column(n, justify="right")
        for (tname, lg), g in t.groupby(["test", "lang"], sort=False):
            cells = []
            for n in res["names"]:
                r = g[g["model"] == n]
                cells.append(
                    "n/a" if r.empty else f"{float(r['effect_size'].iloc[0]):.3f}" + (r["significance"].iloc[0] or "")
                )
            table.add_row(tname, lg, *cells)
        make_console().print(table)
        opt.print_protocol(make_console(), first["protocol"], str(first["model"]))
        for other in res["summaries"][1:]:  # each model's checkpoint decides its own verdict
            opt.print_verdict(make_console(), other["protocol"], str(other["model"]))
        make_console().print(
            f"wrote {out / 'comparison.csv'}, {out / 'comparison.md'}, {out / 'comparison.json'} "
            "and one folder per model",
            soft_wrap=True,
        )
        return
    model = model[0]
    s = run_seat(opts, command=command_line())
    table = Table(
        title=f"SEAT: {model} ({s['pooling']} pooling; d > 0: X~A, Y~B; "
        f"*: p ≤ {s['alpha']:g}" + ("; **: after Holm-Bonferroni" if s["correction"] == "holm-bonferroni" else "") + ")"
    )
    for col in ("test", "lang", "d", "p", "p method", "n X/Y/A/B"):
        table.add_column(col, justify="left" if col in ("test", "lang", "p method") else "right")
    for r in s["tests"]:
        table.add_row(
            r["test"] + (" (noise!)" if r.get("warning") else ""),
            r["lang"],
            f"{r['effect_size']:.3f}{r.get('significance') or ''}",
            f"{r['p_value']:.2g}",
            r["p_method"],
            f"{r['n_targ1']}/{r['n_targ2']}/{r['n_attr1']}/{r['n_attr2']}",
        )
    console = make_console()
    console.print(table)
    from rich.text import Text

    for w in s.get("warnings") or []:
        console.print(Text.assemble(("warning: ", "yellow"), w), soft_wrap=True)
    opt.print_protocol(console, s["protocol"])
    opt.print_published(console, s.get("published") or {})
    console.print(f"wrote {out / 'results.csv'}, {out / 'summary.json'}, {out / 'report.md'}", soft_wrap=True)


def correlate_command(
    results: list[Path] | None = in_dir(
        None,
        "--results",
        "-r",
        help="biaskit result folders (evaluate cats/pairs/ceat/ilps), one per model and benchmark. Repeatable.",
    ),
    extrinsic: Path = in_file(
        ..., "--extrinsic", help="CSV of downstream group scores: model, domain, group, metric, score."
    ),
    out: Path = out_dir(
        ...,
        "--out",
        owns=("summary.json",),
        help="Output folder (correlations.csv, variances.csv, summary.json, report.md, plots/).",
    ),
    groups: opt.GroupMode | None = typer.Option(
        None, "--groups", help="all (default) or aligned: only groups present on both sides.", show_default=False
    ),
    protocol: opt.Protocol = None,
    model: opt.OptionalModels = None,
    cats: Path | None = in_path(
        None,
        "--cats",
        help="--protocol cao2022 with --model: the StereoSet data to score "
        "(intrasentence, pseudo-likelihood). The metrics' folders go to OUT-intrinsic/.",
    ),
    corpus: list[Path] | None = in_path(
        None,
        "--corpus",
        text=False,
        help="--protocol cao2022 with --model: the "
        "text corpus CEAT draws the words' contexts from (one sentence per line).",
    ),
    group_map: Path | None = in_file(
        None, "--group-map", help="CSV domain,term,group mapping terms to shared group names (averaged)."
    ),
    ddof: int = typer.Option(0, "--ddof", help="Variance: 0 population (default), 1 sample."),
    min_groups: int = typer.Option(2, "--min-groups", help="Groups a model needs on each side to count."),
    no_plots: bool = typer.Option(False, "--no-plots", help="Skip the scatter plots."),
) -> None:
    """Correlate intrinsic and extrinsic bias across models (variance of group-level scores; Pearson, Spearman)."""
    from rich.table import Table

    from biaskit.clitools import console, value

    from .correlate import correlate, run_intrinsic, write_outputs

    folders = list(results or [])
    if model:
        from .correlate import read_extrinsic

        read_extrinsic(extrinsic)  # checked before the metrics run
        folders += run_intrinsic(
            list(model),
            out.with_name(out.name + "-intrinsic"),
            protocol=opt.protocol_value(protocol),
            cats=cats,
            corpus=corpus,
        )
    if not folders:
        raise BiaskitError(
            "nothing to correlate. Fix: pass --results DIR (repeatable), or --protocol cao2022 with "
            "--model, --cats and --corpus to run the paper's intrinsic metrics"
        )
    variances, corrs, info = correlate(
        folders,
        extrinsic,
        groups=value(groups),
        group_map=group_map,
        ddof=ddof,
        min_groups=min_groups,
        protocol=opt.protocol_value(protocol),
    )
    info["command"] = command_line()
    write_outputs(variances, corrs, info, out, plots=not no_plots)
    table = Table(title="Intrinsic vs extrinsic (variance of group scores, across models)")
    for col in ("domain", "intrinsic", "extrinsic", "models", "Pearson r", "p", "Spearman rho", "p "):
        table.add_column(col)
    for _, r in corrs.iterrows():
        table.add_row(
            r["domain"],
            r["intrinsic"],
            r["extrinsic"],
            str(r["n_models"]),
            _fmt(r["pearson_r"]),
            _pfmt(r["pearson_p"]),
            _fmt(r["spearman_rho"]),
            _pfmt(r["spearman_p"]),
        )
    con = console()
    con.print(table)
    opt.print_protocol(con, info["protocol"])
    con.print(f"wrote {out / 'correlations.csv'}, {out / 'variances.csv'}, {out / 'report.md'}", soft_wrap=True)


def _pfmt(x) -> str:
    return pvalue(x)
