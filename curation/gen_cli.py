"""``biaskit curate prompts | tuples | sentences | pairs | adapt | check`` (thin typer wrappers)."""
from __future__ import annotations

import json
import os
from pathlib import Path
from typing import Optional

import typer

from .cli import app  # noqa: F401

_LLM_HELP = "LLM options"


def _console(stderr: bool = False):
    from biaskit.clitools import console

    return console(stderr=stderr, soft_wrap=True)  # literal: prompts and sentences keep their [brackets]


def _build_llm(llm: str, model: Optional[str], base_url: Optional[str], prices: Optional[str], max_retries: int,
               response_format: str, no_cache: bool, timeout: float):
    from biaskit.cache import DiskCache

    from .llm import get_llm, load_prices

    kw = {"max_retries": max_retries, "response_format": response_format, "prices": load_prices(prices),
          "timeout": timeout, "cache": False if no_cache else DiskCache(namespace="llm")}
    if llm == "dummy":
        kw.pop("timeout")
        return get_llm("dummy", model=model or "dummy", **kw)
    if not model:
        from biaskit.errors import InputError
        raise InputError("--model is required.", fix="pass the model id your endpoint serves, e.g. --model gpt-4o-mini.")
    return get_llm(llm, model=model, base_url=base_url, **kw)


def _params(temperature: float, seed: Optional[int], max_tokens: int) -> dict:
    return {"temperature": temperature, "seed": seed, "max_tokens": max_tokens}


def _print_dry_run(jobs, prompt, params, limit: int) -> None:
    con = _console()
    con.print(f"dry run: {len(jobs)} request(s) with prompt {prompt.ref} (hash {prompt.hash}), params {params}")
    for j in jobs[:limit]:
        con.rule(json.dumps(j.context, ensure_ascii=False)[:120])
        for m in j.messages:
            con.print(f"{m['role']}: {m['content']}")
    if len(jobs) > limit:
        con.print(f"... and {len(jobs) - limit} more (raise --show).")


def _print_summary(summary, what: str) -> None:
    con = _console()
    s = summary.as_dict()
    llm = s["llm"]
    cost = llm.get("estimated_cost_usd")
    con.print(f"{what}: {s['rows']} row(s) written to {s['out']} from {s['run']} request job(s) "
              f"({s['skipped_done']} already done, {s['errors']} failed -> {Path(s['out']).name.removesuffix('.jsonl')}.errors.jsonl)")
    con.print(f"LLM: {llm['requests']} HTTP request(s), {llm['cache_hits']} cache hit(s), "
              f"{llm['prompt_tokens']}+{llm['completion_tokens']} tokens, "
              f"estimated cost {'unknown' if cost is None else f'${cost:.4f}'}")


# ------------------------------------------------------------------------------------------ prompts
@app.command("prompts")
def prompts_cmd(prompts_dir: Optional[list[Path]] = typer.Option(None, "--prompts-dir", help="extra folder(s) of *.toml templates (also $BIASKIT_PROMPTS_DIR)."),
                show: Optional[str] = typer.Option(None, "--show", help="print one template (id or id@version).")) -> None:
    """List the prompt templates (id, version, hash, variables, file)."""
    from rich.table import Table

    from .prompts import get_prompt, load_prompts

    ps = load_prompts(prompts_dir)
    con = _console()
    if show:
        p = get_prompt(show, prompts=ps)
        con.print(f"{p.ref} hash {p.hash}  {p.path}\n{p.description}\n")
        con.print(f"system:\n{p.system}\nuser:\n{p.user}\nschema: {json.dumps(p.schema)}")
        return
    t = Table("id", "version", "hash", "task", "variables", "file")
    for p in sorted(ps.values(), key=lambda p: (p.id, p.version)):
        t.add_row(p.id, p.version, p.hash, p.task or "", ", ".join(sorted(p.variables)), str(p.path))
    con.print(t)


# ------------------------------------------------------------------------------------------ tuples
@app.command("tuples")
def tuples_cmd(
    axis: str = typer.Option(..., "--axis", help="bias axis: gender, religion, caste, age, region, physical-appearance, socioeconomic, ..."),
    out: Path = typer.Option(..., "--out", help="output JSONL (appended to; re-running resumes)."),
    polarity: str = typer.Option("both", "--polarity", help="positive, negative or both."),
    n: int = typer.Option(10, "--n", help="attributes per identity and polarity (IndiBias: 10)."),
    identities: Optional[str] = typer.Option(None, "--identities", help="comma-separated identity terms (default: the inventory's terms for the axis)."),
    lang: str = typer.Option("en", "--lang"),
    model: Optional[str] = typer.Option(None, "--model", help="model id served by the endpoint.", rich_help_panel=_LLM_HELP),
    base_url: Optional[str] = typer.Option(None, "--base-url", help="OpenAI-compatible endpoint (default $OPENAI_BASE_URL, else OpenAI).", rich_help_panel=_LLM_HELP),
    llm: str = typer.Option("openai", "--llm", help="LLM backend: openai (any compatible endpoint) or dummy.", rich_help_panel=_LLM_HELP),
    temperature: float = typer.Option(0.7, "--temperature", rich_help_panel=_LLM_HELP),
    seed: Optional[int] = typer.Option(0, "--seed", rich_help_panel=_LLM_HELP),
    max_tokens: int = typer.Option(256, "--max-tokens", rich_help_panel=_LLM_HELP),
    concurrency: int = typer.Option(1, "--concurrency", help="parallel requests (threads).", rich_help_panel=_LLM_HELP),
    max_retries: int = typer.Option(4, "--max-retries", help="retries on 429/5xx/connection errors.", rich_help_panel=_LLM_HELP),
    response_format: str = typer.Option("auto", "--response-format", help="auto, json_schema, json_object_schema, json_object or none.", rich_help_panel=_LLM_HELP),
    prices: Optional[str] = typer.Option(None, "--prices", help="TOML/JSON price table {model: [in, out]} USD per 1M tokens.", rich_help_panel=_LLM_HELP),
    timeout: float = typer.Option(120.0, "--timeout", rich_help_panel=_LLM_HELP),
    no_cache: bool = typer.Option(False, "--no-cache", help="do not read or write the response cache.", rich_help_panel=_LLM_HELP),
    retry_failed: bool = typer.Option(False, "--retry-failed", help="re-ask jobs whose replies could not be parsed (bypasses their cached reply).", rich_help_panel=_LLM_HELP),
    prompt: str = typer.Option("attributes", "--prompt", help="template id[@version]."),
    prompts_dir: Optional[list[Path]] = typer.Option(None, "--prompts-dir"),
    inventory: Optional[Path] = typer.Option(None, "--inventory", help="folder with edited inventory JSON files."),
    dry_run: bool = typer.Option(False, "--dry-run", help="print the prompts and exit (no requests)."),
    show: int = typer.Option(5, "--show", help="prompts to print with --dry-run."),
) -> None:
    """Generate (identity, attribute) tuples with polarity for one axis (IndiBias step 1)."""
    from .generate import generate_tuples, tuple_jobs
    from biaskit.inventory import load_inventory
    from .prompts import get_prompt

    inv = load_inventory(inventory)
    p = get_prompt(prompt, prompts_dir)
    idents = [x.strip() for x in identities.split(",") if x.strip()] if identities else inv.identities(axis, lang)
    params = _params(temperature, seed, max_tokens)
    if dry_run:
        _print_dry_run(tuple_jobs(p, axis=axis, identities=idents, polarity=polarity, n=n), p, params, show)
        return
    client = _build_llm(llm, model, base_url, prices, max_retries, response_format, no_cache, timeout)
    summary = generate_tuples(client, p, axis=axis, out=out, identities=idents, polarity=polarity, n=n, lang=lang,
                              params=params, concurrency=concurrency, retry_failed=retry_failed, inventory=inv)
    _print_summary(summary, "tuples")


# ------------------------------------------------------------------------------------------ sentences
@app.command("sentences")
def sentences_cmd(
    tuples: Path = typer.Option(..., "--tuples", help="tuples JSONL from `curate tuples` (or annotated)."),
    out: Path = typer.Option(..., "--out", help="output JSONL (appended to; re-running resumes)."),
    per_tuple: int = typer.Option(5, "--per-tuple", help="sentences per tuple."),
    status: Optional[str] = typer.Option(None, "--status", help="only tuples with these statuses, e.g. accepted (default: all but rejected)."),
    model: Optional[str] = typer.Option(None, "--model", rich_help_panel=_LLM_HELP),
    base_url: Optional[str] = typer.Option(None, "--base-url", rich_help_panel=_LLM_HELP),
    llm: str = typer.Option("openai", "--llm", rich_help_panel=_LLM_HELP),
    temperature: float = typer.Option(0.7, "--temperature", rich_help_panel=_LLM_HELP),
    seed: Optional[int] = typer.Option(0, "--seed", rich_help_panel=_LLM_HELP),
    max_tokens: int = typer.Option(400, "--max-tokens", rich_help_panel=_LLM_HELP),
    concurrency: int = typer.Option(1, "--concurrency", rich_help_panel=_LLM_HELP),
    max_retries: int = typer.Option(4, "--max-retries", rich_help_panel=_LLM_HELP),
    response_format: str = typer.Option("auto", "--response-format", rich_help_panel=_LLM_HELP),
    prices: Optional[str] = typer.Option(None, "--prices", rich_help_panel=_LLM_HELP),
    timeout: float = typer.Option(120.0, "--timeout", rich_help_panel=_LLM_HELP),
    no_cache: bool = typer.Option(False, "--no-cache", rich_help_panel=_LLM_HELP),
    retry_failed: bool = typer.Option(False, "--retry-failed", rich_help_panel=_LLM_HELP),
    prompt: str = typer.Option("sentences", "--prompt"),
    prompts_dir: Optional[list[Path]] = typer.Option(None, "--prompts-dir"),
    inventory: Optional[Path] = typer.Option(None, "--inventory"),
    dry_run: bool = typer.Option(False, "--dry-run"),
    show: int = typer.Option(5, "--show"),
) -> None:
    """Generate sentences that express each tuple (IndiBias step 3)."""
    from .generate import Job, generate_sentences, read_tuples
    from biaskit.inventory import load_inventory
    from .prompts import get_prompt

    inv = load_inventory(inventory)
    p = get_prompt(prompt, prompts_dir)
    statuses = [s.strip() for s in status.split(",")] if status else None
    params = _params(temperature, seed, max_tokens)
    if dry_run:
        ts = read_tuples(tuples, statuses=statuses)
        jobs = [Job(p.render(identity=t.identity, attribute=t.attribute, axis=t.axis, k=per_tuple),
                    {"tuple_id": t.tuple_id}) for t in ts]
        _print_dry_run(jobs, p, params, show)
        return
    client = _build_llm(llm, model, base_url, prices, max_retries, response_format, no_cache, timeout)
    summary = generate_sentences(client, p, tuples=tuples, out=out, per_tuple=per_tuple, statuses=statuses,
                                 params=params, concurrency=concurrency, retry_failed=retry_failed, inventory=inv)
    _print_summary(summary, "sentences")


# ------------------------------------------------------------------------------------------ pairs
@app.command("pairs")
def pairs_cmd(
    sentences: Path = typer.Option(..., "--sentences", help="sentences JSONL from `curate sentences`."),
    out: Path = typer.Option(..., "--out", help="pairs file (.jsonl or .csv, biaskit schema)."),
    inventory: Optional[Path] = typer.Option(None, "--inventory"),
    llm_fallback: bool = typer.Option(False, "--llm-fallback", help="ask the LLM (pair_rewrite prompt) when the identity span is not found."),
    model: Optional[str] = typer.Option(None, "--model", rich_help_panel=_LLM_HELP),
    base_url: Optional[str] = typer.Option(None, "--base-url", rich_help_panel=_LLM_HELP),
    llm: str = typer.Option("openai", "--llm", rich_help_panel=_LLM_HELP),
    prompts_dir: Optional[list[Path]] = typer.Option(None, "--prompts-dir"),
) -> None:
    """Build minimal pairs by swapping the identity span for its comparable group."""
    from biaskit.io import write_jsonl
    from biaskit.readers import write_pairs

    from .generate import errors_path
    from biaskit.inventory import load_inventory
    from .pairs import build_pairs, read_sentence_rows
    from .prompts import get_prompt

    inv = load_inventory(inventory)
    client = prompt = None
    if llm_fallback:
        client = _build_llm(llm, model, base_url, None, 4, "auto", False, 120.0)
        prompt = get_prompt("pair_rewrite", prompts_dir)
    pairs, rejects = build_pairs(read_sentence_rows(sentences), inventory=inv, llm=client, prompt=prompt,
                                 llm_params={"temperature": 0.0, "seed": 0, "max_tokens": 200})
    write_pairs(out, pairs)
    rej = errors_path(out) if out.suffix == ".jsonl" else out.with_suffix(".rejects.jsonl")
    if rejects:
        write_jsonl(rej, rejects)
    flagged = sum(1 for p in pairs if p.status == "flagged")
    _console().print(f"pairs: {len(pairs)} written to {out} ({flagged} flagged by the checker); "
                     f"{len(rejects)} sentence(s) not usable" + (f" -> {rej}" if rejects else ""))


# ------------------------------------------------------------------------------------------ adapt
@app.command("adapt")
def adapt_cmd(
    crows: Path = typer.Option(..., "--crows", help="CrowS-Pairs CSV (crows_pairs_anonymized.csv)."),
    out: Path = typer.Option(..., "--out", help="adapted pairs (.jsonl or .csv)."),
    keep: str = typer.Option("gender,age,disability,physical-appearance,socioeconomic", "--keep",
                             help="comma-separated bias types to keep."),
    names: str = typer.Option("india", "--names", help="india, india-hindu, india-muslim, india-christian, india-sikh or none."),
    seed: int = typer.Option(0, "--seed", help="name choice seed (same seed -> same names)."),
    lexicon: Optional[Path] = typer.Option(None, "--lexicon", help="CSV source,target[,match,note] (default: the packaged US -> India lexicon)."),
    drop_flagged: bool = typer.Option(False, "--drop-flagged", help="drop pairs the checker finds not minimal."),
    inventory: Optional[Path] = typer.Option(None, "--inventory"),
) -> None:
    """Adapt CrowS-Pairs to the Indian context: filter bias types, Indian names, substitution lexicon."""
    from biaskit.io import write_json
    from biaskit.readers import write_pairs

    from .adapt import adapt_crows
    from biaskit.inventory import load_inventory

    pairs, report = adapt_crows(crows, keep=[k for k in keep.split(",")], names=names, seed=seed, lexicon=lexicon,
                                inventory=load_inventory(inventory), drop_flagged=drop_flagged)
    write_pairs(out, pairs)
    rep_path = out.with_name(out.stem + ".report.json")
    write_json(rep_path, report.as_dict())
    r = report.as_dict()
    _console().print(f"adapt: kept {r['kept']} of {r['read']} pairs ({', '.join(f'{k} {v}' for k, v in r['by_type'].items())}); "
                     f"{r['changed']} changed ({r['names_replaced']} names, {r['lexicon_hits']} lexicon hits); "
                     f"{r['flagged']} flagged, {r['dropped']} dropped -> {out}, report {rep_path}")


# ------------------------------------------------------------------------------------------ check
@app.command("check")
def check_cmd(
    pairs: Path = typer.Option(..., "--pairs", help="pairs file: biaskit JSONL/CSV, CrowS-Pairs or IndiBias CSV."),
    out: Optional[Path] = typer.Option(None, "--out", help="write every pair with its flags (JSONL)."),
    format: str = typer.Option("auto", "--format", help="auto, crows, indibias or biaskit."),
    lang: Optional[str] = typer.Option(None, "--lang", help="only this language view (IndiBias: en or hi)."),
    sources: Optional[Path] = typer.Option(None, "--sources", help="source-language pairs for translated files (matched by source_id / pair_id)."),
    inventory: Optional[Path] = typer.Option(None, "--inventory"),
    strict: bool = typer.Option(False, "--strict", help="exit with code 1 when any pair is flagged."),
    examples: int = typer.Option(3, "--examples", help="example rows to print per flag."),
) -> None:
    """Check minimal pairs: word diff (U/M) and flags with reasons."""
    from rich.table import Table

    from biaskit.check import FLAG_CODES, check_file
    from biaskit.inventory import load_inventory

    checked, summary = check_file(str(pairs), format=format, lang=lang, out=str(out) if out else None,
                                  inventory=load_inventory(inventory), sources_path=str(sources) if sources else None)
    con = _console()
    t = Table("flag", "pairs", "meaning", "example rows", title=f"{pairs.name}: {summary['pairs']} pairs "
              f"({', '.join(f'{k} {v}' for k, v in summary['by_lang'].items())}), {summary['flagged']} flagged")
    for code, desc in FLAG_CODES.items():
        n = summary["flags"].get(code, 0)
        rows = [str(c.row) + (f" ({c.pair.get('lang')})" if len(summary["by_lang"]) > 1 else "")
                for c in checked if code in c.codes][:examples]
        t.add_row(code, str(n), desc, ", ".join(rows))
    con.print(t)
    if out:
        con.print(f"every pair with its flags -> {out}")
    if strict and summary["flagged"]:
        raise SystemExit(1)  # (typer.Exit's code is dropped by the root's standalone_mode=False)
