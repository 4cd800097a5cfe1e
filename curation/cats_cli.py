"""``biaskit curate cats`` and ``curate cats-retention`` (thin typer wrappers around
:func:`biaskit.curation.generate.generate_cats` and :func:`biaskit.curation.cats.cat_retention`)."""
from __future__ import annotations

from pathlib import Path
from typing import Optional

import typer

from biaskit.clitools import choice_enum, echo, echo_error, value
from biaskit.paths import in_dir, in_file, out_file

from .cats import DOMAIN_PRESETS, SPLITS
from .cli_options import LLMOptions, llm_options

app = typer.Typer(add_completion=False)
CatSplit = choice_enum("CatSplit", [*SPLITS, "both"])
_PRESETS = "; ".join(f"{k} = {','.join(v)}" for k, v in DOMAIN_PRESETS.items())


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
    fmt = lambda v: "-" if v is None else str(v)  # noqa: E731
    for r in [*report["rows"], *report["totals"], report["overall"]]:
        cells = [r["split"], r["domain"], str(r["targets"]), f"{r['jobs']} ({r['failed_jobs']})", str(r["drafted"]),
                 str(r["valid"]), fmt(r["valid_pct"])]
        if with_val:
            cells += [str(r["validated"]), str(r["rejected"]), str(r["needs_adjudication"]), str(r["not_annotated"]),
                      fmt(r["validated_pct"]), fmt(r["overall_pct"])]
        t.add_row(*cells)
    _console().print(t)
    if report["problems"]:
        echo("structural problems: " + ", ".join(f"{k} {v}" for k, v in report["problems"].items()))


@app.command("cats")
@llm_options(temperature=0.7, max_tokens=1200)
def cats_cmd(
    out: Path = out_file(..., "--out", help="CATs JSONL (biaskit.schema.CAT), rebuilt from every draft so far; "
                                                "drafts, invalid drafts and the retention report go beside it."),
    domains: str = typer.Option("stereoset", "--domains", help="comma-separated domains (inventory axes, race, "
                                f"profession) or a preset: {_PRESETS}."),
    split: CatSplit = typer.Option(CatSplit("both"), "--split", help="intrasentence, intersentence or both."),
    per_target: int = typer.Option(5, "--per-target", help="CATs asked for per target term and split (one request)."),
    society: str = typer.Option("India", "--society", help="whose stereotypes the prompts ask for (StereoSet: "
                                                            "'the United States')."),
    lang: str = typer.Option("en", "--lang", help="the language the CATs are written in (en, hi; the target terms "
                                                  "are the inventory's terms in it)."),
    targets: Optional[str] = typer.Option(None, "--targets", help="comma-separated target terms (default: the "
                                                                  "inventory's terms for the domain; one domain only)."),
    intra_prompt: str = typer.Option("cat_intrasentence", "--intra-prompt", help="template id (or id@version)."),
    inter_prompt: str = typer.Option("cat_intersentence", "--inter-prompt", help="template id (or id@version)."),
    prompts_dir: Optional[list[Path]] = in_dir(None, "--prompts-dir", help="extra folder(s) of *.toml templates."),
    inventory: Optional[Path] = in_dir(None, "--inventory", help="folder with edited inventory JSON files."),
    dry_run: bool = typer.Option(False, "--dry-run", help="print the prompts and exit (no requests)."),
    show: int = typer.Option(3, "--show", help="prompts to print per split with --dry-run."),
    llm_opts: LLMOptions = None,
) -> None:
    """Draft StereoSet CATs (intrasentence with BLANK, intersentence) per target term, check their
    structure, and write the valid ones as CAT records (StereoSet sec. 4.1-4.2)."""
    from biaskit.inventory import load_inventory

    from .cats import cat_items, cat_targets, retention_path
    from .gen_cli import _print_dry_run, report_run
    from .generate import generate_cats
    from .prompts import get_prompt
    from .tasks import TASKS

    inv = load_inventory(inventory)
    splits = list(SPLITS) if value(split) == "both" else [value(split)]
    prompts = {"intrasentence": get_prompt(intra_prompt, prompts_dir), "intersentence": get_prompt(inter_prompt, prompts_dir)}
    tlist = [t for t in targets.split(",")] if targets else None
    if dry_run:
        items = cat_items(cat_targets(domains, inventory=inv, targets=tlist, lang=lang), per_target=per_target,
                          society=society, lang=lang)
        for s in splits:
            task = TASKS.get(f"cat_{s}")(prompts[s])
            _print_dry_run(task, items, {**task.default_params, **llm_opts.params()}, show)
        return
    summaries, report = generate_cats(llm_opts.client, out=out, domains=domains, splits=splits, per_target=per_target,
                                      society=society, targets=tlist, prompts=prompts, params=llm_opts.params(),
                                      concurrency=llm_opts.concurrency, retry_failed=llm_opts.retry_failed,
                                      inventory=inv, lang=lang)
    for s, summary in summaries.items():
        report_run(summary, f"{s} drafts", exit_when_all_failed=False)
    if report:      # (nothing drafted: no output written)
        o = report["overall"]
        echo(f"cats: {o['valid']} of {o['drafted']} drafted CATs are structurally valid -> {out}; "
             f"retention report {retention_path(out)}")
        print_retention(report, f"{out.name}: drafted -> structurally valid")
    if summaries and all(s.all_failed for s in summaries.values()):
        echo_error("every drafting job failed; see the .drafts.errors.jsonl files for the raw replies. Fix: check "
                   "the model and prompts (--dry-run shows them), raise --max-tokens, then re-run with --retry-failed.")
        raise SystemExit(1)


@app.command("cats-retention")
def cats_retention_cmd(
    cats: Path = in_file(..., "--cats", help="the --out of `curate cats` (its drafts and invalid files are read too)."),
    validated: Optional[Path] = in_file(None, "--validated", help="the --out of `annotate apply --kind cat` "
                                                                        "(its .rejected.jsonl is read too)."),
    out: Optional[Path] = out_file(None, "--out", help="write the report as JSON."),
) -> None:
    """How many CATs were drafted, structurally valid and validated, per split and domain (StereoSet
    Table 1 and the retention of sec. 4.3)."""
    from biaskit.io import write_json

    from .cats import cat_retention

    report = cat_retention(cats, validated)
    print_retention(report, f"{cats.name}: drafted -> structurally valid" + (" -> validated" if validated else ""))
    if out:
        write_json(out, report)
        echo(f"report -> {out}")
