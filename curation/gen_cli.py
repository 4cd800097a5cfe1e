"""``biaskit curate prompts | tuples | sentences | pairs | llm-task | adapt | check`` (thin typer
wrappers around the pure functions of :mod:`.generate`, :mod:`.pairs`, :mod:`.adapt` and
:mod:`biaskit.check`). The LLM option block is declared once in :mod:`.cli_options`."""

from __future__ import annotations

import json
from enum import Enum
from typing import TYPE_CHECKING, Annotated

import typer

from biaskit.clitools import choice_enum, echo, echo_error, value

from .options import LLMTaskOptions, PromptsOptions, SentencesOptions, TuplesOptions
from .pair_options import AdaptOptions, BuildPairsOptions, CheckOptions
from .tasks import TASKS

app = typer.Typer(add_completion=False)

if TYPE_CHECKING:  # built from the task registry at run time: an Enum to a type checker
    TaskName = Enum
else:
    TaskName = choice_enum("TaskName", TASKS)


def _console():
    from biaskit.clitools import console

    return console(soft_wrap=True)  # literal: prompts and sentences keep their [brackets]


def _print_dry_run(task, items: list[dict], params: dict, limit: int) -> None:
    p = task.prompt
    echo(f"dry run: {len(items)} request(s) with prompt {p.ref} (hash {p.hash}), params {params}")
    for it in items[:limit]:
        echo("-" * 8 + " " + json.dumps(task.context(it), ensure_ascii=False)[:120])
        for m in task.render(it):
            echo(f"{m['role']}: {m['content']}")
    if len(items) > limit:
        echo(f"... and {len(items) - limit} more (raise --show).")


def report_run(summary, what: str, *, exit_when_all_failed: bool = True) -> None:
    """Print a run's summary (and what was repaired on resume); exit 1 when every job failed
    (unless ``exit_when_all_failed`` is False: the caller decides)."""
    for note in summary.notes:
        echo(f"warning: {note}", err=True)
    s = summary.as_dict()
    llm = s["llm"]
    cost = llm.get("estimated_cost_usd")
    failed = f"{s['errors']} failed" + (f" ({s['partial']} partial)" if s["partial"] else "")
    echo(
        f"{what}: {s['rows']} row(s) written to {s['out'] or '(memory)'} from {s['run']} job(s) "
        f"({s['skipped_done']} already done, {failed}" + (f" -> {s['errors_file']}" if s["errors_file"] else "") + ")"
    )
    echo(
        f"LLM: {llm['requests']} HTTP request(s), {llm['cache_hits']} cache hit(s), "
        f"{llm['prompt_tokens']}+{llm['completion_tokens']} tokens, "
        f"estimated cost {'unknown' if cost is None else f'${cost:.4f}'}"
    )
    if summary.all_failed and exit_when_all_failed:
        echo_error(
            f"every one of the {s['run']} job(s) failed; see {s['errors_file']} for the raw replies. "
            "Fix: check the model and prompt (--dry-run shows it), raise --max-tokens for cut-off replies, "
            "then re-run with --retry-failed."
        )
        raise SystemExit(1)


# ------------------------------------------------------------------------------------------ prompts
@app.command("prompts")
@PromptsOptions.cli()
def prompts_cmd(opts: PromptsOptions) -> None:
    """List the prompt templates (id, version, hash, variables, file)."""
    from rich.table import Table

    from .prompts import get_prompt, load_prompts

    ps = load_prompts(opts.prompts_dir)
    if opts.show:
        p = get_prompt(opts.show, prompts=ps)
        echo(f"{p.ref} hash {p.hash}  {p.path}\n{p.description}\n")
        echo(f"system:\n{p.system}\nuser:\n{p.user}\nschema: {json.dumps(p.schema)}")
        return
    t = Table("id", "version", "hash", "task", "variables", "file")
    for p in sorted(ps.values(), key=lambda p: (p.id, p.version)):
        t.add_row(p.id, p.version, p.hash, p.task or "", ", ".join(sorted(p.variables)), str(p.path))
    _console().print(t)


# ------------------------------------------------------------------------------------------ tuples
@app.command("tuples")
@TuplesOptions.cli()
def tuples_cmd(opts: TuplesOptions) -> None:
    """Generate (identity, attribute) tuples with polarity for one axis (IndiBias step 1)."""
    from biaskit.inventory import load_inventory

    from .generate import generate_tuples
    from .tasks.tuples import TupleTask, tuple_items

    inv = load_inventory(opts.inventory)
    p = opts.template("attributes")
    idents = opts.identities or inv.identities(opts.axis, opts.lang)
    if opts.dry_run:
        _print_dry_run(
            TupleTask(p, lang=opts.lang),
            tuple_items(axis=opts.axis, identities=idents, polarity=opts.polarity, n=opts.n),
            opts.params(),
            opts.show,
        )
        return
    summary = generate_tuples(opts.client(), p, opts, inventory=inv)
    report_run(summary, "tuples")


# ------------------------------------------------------------------------------------------ sentences
@app.command("sentences")
@SentencesOptions.cli()
def sentences_cmd(opts: SentencesOptions) -> None:
    """Generate sentences from each tuple (IndiBias step 3): expressing its stereotype, or with
    --mode anti going against it."""
    from biaskit.inventory import load_inventory

    from .generate import generate_sentences, sentence_items, usable_tuples
    from .tasks.sentences import MODES, SentenceTask

    inv = load_inventory(opts.inventory)
    p = opts.template(MODES[opts.mode])
    if opts.dry_run:
        _print_dry_run(
            SentenceTask(p, per_tuple=opts.per_tuple, inventory=inv, mode=opts.mode),
            sentence_items(usable_tuples(opts.tuples, statuses=opts.statuses)),
            opts.params(),
            opts.show,
        )
        return
    summary = generate_sentences(opts.client(), p, opts, inventory=inv)
    report_run(summary, "sentences")


# ------------------------------------------------------------------------------------------ pairs
@app.command("pairs")
@BuildPairsOptions.cli()
def pairs_cmd(opts: BuildPairsOptions) -> None:
    """Build minimal pairs by swapping the identity span for its comparable group."""
    from .pairs import build_pairs_file

    client = p = None
    if opts.llm_fallback:
        client, p = opts.client(), opts.template("pair_rewrite")
    res = build_pairs_file(
        opts,
        llm=client,
        prompt=p,
        llm_params=opts.params(),
        concurrency=opts.concurrency,
        retry_failed=opts.retry_failed,
        progress=True,
    )
    echo(
        f"pairs: {len(res.pairs)} written to {opts.out} ({res.flagged} flagged by the checker); "
        f"{len(res.rejects)} sentence(s) not usable"
        + (f" -> {res.rejects_file}" if res.rejects else "")
        + (f"; LLM rewrites in {res.rewrites_file}" if res.rewrites_file else "")
    )


# ------------------------------------------------------------------------------------------ any task
@app.command("llm-task")
@LLMTaskOptions.cli()
def llm_task_cmd(
    task: Annotated[TaskName, typer.Argument(help="the task to run (one per file in curation/tasks/).")],
    opts: LLMTaskOptions,
) -> None:
    """Run any registered LLM task over input items, with the cache, resume, errors file and run log."""
    from biaskit.errors import InputError
    from biaskit.io import iter_jsonl

    from .runner import JobRunner

    cls = TASKS.get(value(task) or "")  # (a required argument: never None; get() reads None as "" too)
    t = cls(opts.template(cls.prompt_id), prompts_dir=opts.prompts_dir)
    items = []
    for i, item in iter_jsonl(opts.input):  # every item must render before any request is made
        try:
            t.render(item)
            t.check_item(item)
        except InputError as exc:
            raise InputError(exc.message, path=opts.input, row=i, fix=exc.fix) from None
        except (KeyError, TypeError) as exc:
            raise InputError(
                f"the '{t.name}' task cannot use this item ({type(exc).__name__}: {exc}).",
                path=opts.input,
                row=i,
                fix=f"see the {cls.__name__} docstring for the fields an item needs.",
            ) from None
        items.append(item)
    if opts.dry_run:
        _print_dry_run(t, items, {**t.default_params, **opts.params()}, opts.show)
        return
    summary = JobRunner(
        opts.client(),
        t,
        params=opts.params(),
        out=opts.out,
        concurrency=opts.concurrency,
        retry_failed=opts.retry_failed,
    ).run(items)
    report_run(summary, t.name)


# ------------------------------------------------------------------------------------------ adapt
@app.command("adapt")
@AdaptOptions.cli()
def adapt_cmd(opts: AdaptOptions) -> None:
    """Adapt CrowS-Pairs to the Indian context: filter bias types, Indian names, substitution lexicon."""
    from .adapt import adapt_to_file

    _, report, rep_path = adapt_to_file(opts)
    r = report.as_dict()
    echo(
        f"adapt: kept {r['kept']} of {r['read']} pairs ({', '.join(f'{k} {v}' for k, v in r['by_type'].items())}); "
        f"{r['changed']} changed ({r['names_replaced']} names, {r['lexicon_hits']} lexicon hits); "
        f"{r['flagged']} flagged, {r['dropped']} dropped -> {opts.out}, report {rep_path}"
    )


# ------------------------------------------------------------------------------------------ check
@app.command("check")
@CheckOptions.cli()
def check_cmd(opts: CheckOptions) -> None:
    """Check minimal pairs: word diff (U/M) and flags with reasons."""
    from rich.table import Table

    from biaskit.check import FLAG_CODES, check_file_stream
    from biaskit.inventory import load_inventory

    pairs, out = opts.pairs, opts.out
    res = check_file_stream(
        str(pairs),
        format=opts.format,
        lang=opts.lang,
        out=str(out) if out else None,
        inventory=load_inventory(opts.inventory),
        sources_path=str(opts.sources) if opts.sources else None,
        examples=opts.examples,
    )
    summary = res.as_dict()
    con = _console()
    t = Table("flag", "pairs", "meaning", "example rows", title=f"{pairs.name}: {res.describe()}")
    for code, desc in FLAG_CODES.items():
        n = summary["flags"].get(code, 0)
        rows = [
            str(c.row) + (f" ({c.pair.get('lang')})" if len(summary["by_lang"]) > 1 else "")
            for c in res.rows.get(code, [])
        ]
        t.add_row(code, str(n), desc, ", ".join(rows))
    con.print(t)
    if out:
        echo(f"every pair with its flags -> {out}")
    if opts.strict and summary["flagged"]:
        raise SystemExit(1)  # (typer.Exit's code is dropped by the root's standalone_mode=False)
