"""``biaskit curate prompts | tuples | sentences | pairs | llm-task | adapt | check`` (thin typer
wrappers around the pure functions of :mod:`.generate`, :mod:`.pairs`, :mod:`.adapt` and
:mod:`biaskit.check`). The LLM option block is declared once in :mod:`.cli_options`."""
from __future__ import annotations

import json
from pathlib import Path
from typing import Optional

import typer

from biaskit.clitools import choice_enum, echo, echo_error, value
from biaskit.paths import in_dir, in_file, out_file

from .cli_options import LLMOptions, PromptOptions, llm_options, prompt_options
from .pair_options import AdaptOptions, BuildPairsOptions, CheckOptions
from .tasks import TASKS
from .tasks.pair_rewrite import PairRewriteTask
from .tasks.sentences import MODES as SENTENCE_MODES
from .tasks.sentences import SentenceTask
from .tasks.tuples import TupleTask

app = typer.Typer(add_completion=False)

TaskName = choice_enum("TaskName", TASKS)
SentenceMode = choice_enum("SentenceMode", SENTENCE_MODES)


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
    echo(f"{what}: {s['rows']} row(s) written to {s['out'] or '(memory)'} from {s['run']} job(s) "
         f"({s['skipped_done']} already done, {failed}"
         + (f" -> {s['errors_file']}" if s["errors_file"] else "") + ")")
    echo(f"LLM: {llm['requests']} HTTP request(s), {llm['cache_hits']} cache hit(s), "
         f"{llm['prompt_tokens']}+{llm['completion_tokens']} tokens, "
         f"estimated cost {'unknown' if cost is None else f'${cost:.4f}'}")
    if summary.all_failed and exit_when_all_failed:
        echo_error(f"every one of the {s['run']} job(s) failed; see {s['errors_file']} for the raw replies. "
                   "Fix: check the model and prompt (--dry-run shows it), raise --max-tokens for cut-off replies, "
                   "then re-run with --retry-failed.")
        raise SystemExit(1)


def _inventory_opt():
    return in_dir(None, "--inventory", help="folder with edited inventory JSON files.")


# ------------------------------------------------------------------------------------------ prompts
@app.command("prompts")
def prompts_cmd(prompts_dir: Optional[list[Path]] = in_dir(None, "--prompts-dir", help="extra folder(s) of *.toml templates (also $BIASKIT_PROMPTS_DIR)."),
                show: Optional[str] = typer.Option(None, "--show", help="print one template (id or id@version).")) -> None:
    """List the prompt templates (id, version, hash, variables, file)."""
    from rich.table import Table

    from .prompts import get_prompt, load_prompts

    ps = load_prompts(prompts_dir)
    if show:
        p = get_prompt(show, prompts=ps)
        echo(f"{p.ref} hash {p.hash}  {p.path}\n{p.description}\n")
        echo(f"system:\n{p.system}\nuser:\n{p.user}\nschema: {json.dumps(p.schema)}")
        return
    t = Table("id", "version", "hash", "task", "variables", "file")
    for p in sorted(ps.values(), key=lambda p: (p.id, p.version)):
        t.add_row(p.id, p.version, p.hash, p.task or "", ", ".join(sorted(p.variables)), str(p.path))
    _console().print(t)


# ------------------------------------------------------------------------------------------ tuples
@app.command("tuples")
@llm_options(**TupleTask.default_params)
@prompt_options("attributes")
def tuples_cmd(
    axis: str = typer.Option(..., "--axis", help="bias axis: gender, religion, caste, age, region, physical-appearance, socioeconomic, ..."),
    out: Path = out_file(..., "--out", help="output JSONL (appended to; re-running resumes)."),
    polarity: str = typer.Option("both", "--polarity", help="positive, negative or both."),
    n: int = typer.Option(10, "--n", help="attributes per identity and polarity (IndiBias: 10 positive and 10 negative)."),
    identities: Optional[str] = typer.Option(None, "--identities", help="comma-separated identity terms (default: the inventory's terms for the axis)."),
    lang: str = typer.Option("en", "--lang"),
    inventory: Optional[Path] = _inventory_opt(),
    prompt_opts: PromptOptions = None,
    llm_opts: LLMOptions = None,
) -> None:
    """Generate (identity, attribute) tuples with polarity for one axis (IndiBias step 1)."""
    from biaskit.inventory import load_inventory

    from .generate import generate_tuples
    from .tasks.tuples import TupleTask, tuple_items

    inv = load_inventory(inventory)
    p = prompt_opts.template("attributes")
    idents = [x.strip() for x in identities.split(",") if x.strip()] if identities else inv.identities(axis, lang)
    if prompt_opts.dry_run:
        _print_dry_run(TupleTask(p, lang=lang), tuple_items(axis=axis, identities=idents, polarity=polarity, n=n),
                       llm_opts.params(), prompt_opts.show)
        return
    summary = generate_tuples(llm_opts.client(), p, axis=axis, out=out, identities=idents, polarity=polarity, n=n,
                              lang=lang, params=llm_opts.params(), concurrency=llm_opts.concurrency,
                              retry_failed=llm_opts.retry_failed, inventory=inv)
    report_run(summary, "tuples")


# ------------------------------------------------------------------------------------------ sentences
@app.command("sentences")
@llm_options(**SentenceTask.default_params)
@prompt_options(None)
def sentences_cmd(
    tuples: Path = in_file(..., "--tuples", help="tuples JSONL from `curate tuples` (or annotated)."),
    out: Path = out_file(..., "--out", help="output JSONL (appended to; re-running resumes)."),
    per_tuple: int = typer.Option(5, "--per-tuple", help="sentences per tuple (IndiBias: 5)."),
    mode: SentenceMode = typer.Option(SentenceMode("stereo"), "--mode", help="stereo: sentences that express the stereotype "
                                      "(template sentences); anti: sentences that go against it (sentences_anti)."),
    status: Optional[str] = typer.Option(None, "--status", help="only tuples with these statuses, e.g. accepted (default: all but rejected)."),
    inventory: Optional[Path] = _inventory_opt(),
    prompt_opts: PromptOptions = None,
    llm_opts: LLMOptions = None,
) -> None:
    """Generate sentences from each tuple (IndiBias step 3): expressing its stereotype, or with
    --mode anti going against it."""
    from biaskit.inventory import load_inventory

    from .generate import generate_sentences, sentence_items, usable_tuples
    from .tasks.sentences import MODES, SentenceTask

    inv = load_inventory(inventory)
    mode = value(mode)
    p = prompt_opts.template(MODES[mode])
    statuses = [s.strip() for s in status.split(",")] if status else None
    if prompt_opts.dry_run:
        _print_dry_run(SentenceTask(p, per_tuple=per_tuple, inventory=inv, mode=mode),
                       sentence_items(usable_tuples(tuples, statuses=statuses)), llm_opts.params(), prompt_opts.show)
        return
    summary = generate_sentences(llm_opts.client(), p, tuples=tuples, out=out, per_tuple=per_tuple, statuses=statuses,
                                 params=llm_opts.params(), concurrency=llm_opts.concurrency,
                                 retry_failed=llm_opts.retry_failed, inventory=inv, mode=mode)
    report_run(summary, "sentences")


# ------------------------------------------------------------------------------------------ pairs
@app.command("pairs")
@llm_options(**PairRewriteTask.default_params)
@prompt_options("pair_rewrite", dry_run=False)
@BuildPairsOptions.cli()
def pairs_cmd(opts: BuildPairsOptions, prompt_opts: PromptOptions = None, llm_opts: LLMOptions = None) -> None:
    """Build minimal pairs by swapping the identity span for its comparable group."""
    from .pairs import build_pairs_file

    client = p = None
    if opts.llm_fallback:
        client, p = llm_opts.client(), prompt_opts.template("pair_rewrite")
    res = build_pairs_file(opts, llm=client, prompt=p, llm_params=llm_opts.params(),
                           concurrency=llm_opts.concurrency, retry_failed=llm_opts.retry_failed, progress=True)
    echo(f"pairs: {len(res.pairs)} written to {opts.out} ({res.flagged} flagged by the checker); "
         f"{len(res.rejects)} sentence(s) not usable" + (f" -> {res.rejects_file}" if res.rejects else "")
         + (f"; LLM rewrites in {res.rewrites_file}" if res.rewrites_file else ""))


# ------------------------------------------------------------------------------------------ any task
@app.command("llm-task")
@llm_options()
@prompt_options(None)
def llm_task_cmd(
    task: TaskName = typer.Argument(..., help="the task to run (one per file in curation/tasks/)."),
    input: Path = in_file(..., "--input", help="JSONL, one input item per line (the task's template variables)."),
    out: Path = out_file(..., "--out", help="output JSONL (appended to; re-running resumes)."),
    prompt_opts: PromptOptions = None,
    llm_opts: LLMOptions = None,
) -> None:
    """Run any registered LLM task over input items, with the cache, resume, errors file and run log."""
    from biaskit.errors import InputError
    from biaskit.io import iter_jsonl

    from .runner import JobRunner

    cls = TASKS.get(value(task))
    t = cls(prompt_opts.template(cls.prompt_id), prompts_dir=prompt_opts.prompts_dir)
    items = []
    for i, item in iter_jsonl(input):   # every item must render before any request is made
        try:
            t.render(item)
            t.check_item(item)
        except InputError as exc:
            raise InputError(exc.message, path=input, row=i, fix=exc.fix) from None
        except (KeyError, TypeError) as exc:
            raise InputError(f"the '{t.name}' task cannot use this item ({type(exc).__name__}: {exc}).", path=input,
                             row=i, fix=f"see the {cls.__name__} docstring for the fields an item needs.") from None
        items.append(item)
    if prompt_opts.dry_run:
        _print_dry_run(t, items, {**t.default_params, **llm_opts.params()}, prompt_opts.show)
        return
    summary = JobRunner(llm_opts.client(), t, params=llm_opts.params(), out=out, concurrency=llm_opts.concurrency,
                        retry_failed=llm_opts.retry_failed).run(items)
    report_run(summary, t.name)


# ------------------------------------------------------------------------------------------ adapt
@app.command("adapt")
@AdaptOptions.cli()
def adapt_cmd(opts: AdaptOptions) -> None:
    """Adapt CrowS-Pairs to the Indian context: filter bias types, Indian names, substitution lexicon."""
    from .adapt import adapt_to_file

    _, report, rep_path = adapt_to_file(opts)
    r = report.as_dict()
    echo(f"adapt: kept {r['kept']} of {r['read']} pairs ({', '.join(f'{k} {v}' for k, v in r['by_type'].items())}); "
                     f"{r['changed']} changed ({r['names_replaced']} names, {r['lexicon_hits']} lexicon hits); "
                     f"{r['flagged']} flagged, {r['dropped']} dropped -> {opts.out}, report {rep_path}")


# ------------------------------------------------------------------------------------------ check
@app.command("check")
@CheckOptions.cli()
def check_cmd(opts: CheckOptions) -> None:
    """Check minimal pairs: word diff (U/M) and flags with reasons."""
    from rich.table import Table

    from biaskit.check import FLAG_CODES, check_file_stream
    from biaskit.inventory import load_inventory

    pairs, out = opts.pairs, opts.out
    res = check_file_stream(str(pairs), format=opts.format, lang=opts.lang, out=str(out) if out else None,
                            inventory=load_inventory(opts.inventory),
                            sources_path=str(opts.sources) if opts.sources else None, examples=opts.examples)
    summary = res.as_dict()
    con = _console()
    t = Table("flag", "pairs", "meaning", "example rows", title=f"{pairs.name}: {res.describe()}")
    for code, desc in FLAG_CODES.items():
        n = summary["flags"].get(code, 0)
        rows = [str(c.row) + (f" ({c.pair.get('lang')})" if len(summary["by_lang"]) > 1 else "")
                for c in res.rows.get(code, [])]
        t.add_row(code, str(n), desc, ", ".join(rows))
    con.print(t)
    if out:
        echo(f"every pair with its flags -> {out}")
    if opts.strict and summary["flagged"]:
        raise SystemExit(1)  # (typer.Exit's code is dropped by the root's standalone_mode=False)
