"""``biaskit curate cats`` and ``curate cats-retention`` (thin typer wrappers around
:func:`biaskit.curation.generate.generate_cats` and :func:`biaskit.curation.cats.cat_retention`)."""

from __future__ import annotations

import typer

from biaskit.clitools import echo, echo_error

from .cats import SPLITS
from .options import CatsOptions, CatsRetentionOptions

app = typer.Typer(add_completion=False)


def _console():
    from biaskit.clitools import console

    return console(soft_wrap=True)


def print_retention(report: dict, title: str) -> None:
    """The retention table (per split and domain, then totals), as StereoSet's Table 1 + sec. 4.3."""
    from rich.table import Table

    with_val = "validated" in report["overall"]
    cols = ["split", "domain", "targets", "jobs (failed)", "drafted", "valid", "valid %"]
    if with_val:
        cols += ["validated", "rejected", "adjud.", "not annotated", "validated % of valid", "validated % of drafted"]
    t = Table(*cols, title=title)

    def fmt(v):
        return "-" if v is None else str(v)

    for r in [*report["rows"], *report["totals"], report["overall"]]:
        cells = [
            r["split"],
            r["domain"],
            str(r["targets"]),
            f"{r['jobs']} ({r['failed_jobs']})",
            str(r["drafted"]),
            str(r["valid"]),
            fmt(r["valid_pct"]),
        ]
        if with_val:
            cells += [
                str(r["validated"]),
                str(r["rejected"]),
                str(r["needs_adjudication"]),
                str(r["not_annotated"]),
                fmt(r["validated_pct"]),
                fmt(r["overall_pct"]),
            ]
        t.add_row(*cells)
    _console().print(t)
    if report["problems"]:
        echo("structural problems: " + ", ".join(f"{k} {v}" for k, v in report["problems"].items()))


@app.command("cats")
@CatsOptions.cli()
def cats_cmd(opts: CatsOptions) -> None:
    """Draft StereoSet CATs (intrasentence with BLANK, intersentence) per target term, check their
    structure, and write the valid ones as CAT records (StereoSet sec. 4.1-4.2)."""
    from biaskit.inventory import load_inventory

    from .cats import cat_items, cat_targets, retention_path
    from .gen_cli import _print_dry_run, report_run
    from .generate import generate_cats
    from .prompts import get_prompt
    from .tasks import TASKS

    inv = load_inventory(opts.inventory)
    splits = list(SPLITS) if opts.split == "both" else [opts.split]
    prompts = {
        "intrasentence": get_prompt(opts.intra_prompt, opts.prompts_dir),
        "intersentence": get_prompt(opts.inter_prompt, opts.prompts_dir),
    }
    out = opts.out
    if opts.dry_run:
        items = cat_items(
            cat_targets(opts.domains, inventory=inv, targets=opts.targets, lang=opts.lang),
            per_target=opts.per_target,
            society=opts.society,
            lang=opts.lang,
        )
        for s in splits:
            task = TASKS.get(f"cat_{s}")(prompts[s])
            _print_dry_run(task, items, {**task.default_params, **opts.params()}, opts.show)
        return
    summaries, report = generate_cats(opts.client, opts, prompts=prompts, inventory=inv)
    for s, summary in summaries.items():
        report_run(summary, f"{s} drafts", exit_when_all_failed=False)
    if report:  # (nothing drafted: no output written)
        o = report["overall"]
        echo(
            f"cats: {o['valid']} of {o['drafted']} drafted CATs are structurally valid -> {out}; "
            f"retention report {retention_path(out)}"
        )
        print_retention(report, f"{out.name}: drafted -> structurally valid")
    if summaries and all(s.all_failed for s in summaries.values()):
        echo_error(
            "every drafting job failed; see the .drafts.errors.jsonl files for the raw replies. Fix: check "
            "the model and prompts (--dry-run shows them), raise --max-tokens, then re-run with --retry-failed."
        )
        raise SystemExit(1)


@app.command("cats-retention")
@CatsRetentionOptions.cli()
def cats_retention_cmd(opts: CatsRetentionOptions) -> None:
    """How many CATs were drafted, structurally valid and validated, per split and domain (StereoSet
    Table 1 and the retention of sec. 4.3)."""
    from biaskit.io import write_json

    from .cats import cat_retention

    report = cat_retention(opts.cats, opts.validated)
    print_retention(
        report, f"{opts.cats.name}: drafted -> structurally valid" + (" -> validated" if opts.validated else "")
    )
    if opts.out:
        write_json(opts.out, report)
        echo(f"report -> {opts.out}")
