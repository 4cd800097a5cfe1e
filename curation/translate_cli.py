"""`biaskit curate translate` (a thin wrapper around :func:`biaskit.curation.translate.translate_file`).

The blind review of the candidates is the ``translation`` annotation kind: ``biaskit annotate push /
pull / apply / report --kind translation`` (:mod:`biaskit.annotation.kinds.translation`).
"""
from __future__ import annotations

from pathlib import Path
from typing import Optional

import typer

from biaskit.clitools import echo, echo_error
from biaskit.paths import in_dir, in_file, out_file

from .cli_options import LLMOptions, llm_options
from .mt_base import MT_ENGINES

app = typer.Typer(add_completion=False)

# the engine options both commands take, declared once
DeviceOpt = typer.Option(None, "--device", help="hf engine: cpu, cuda, cuda:1 (default: cuda if available)")
BatchSizeOpt = typer.Option(16, "--batch-size", help="hf engine: sentences per forward pass")
NumBeamsOpt = typer.Option(1, "--num-beams", help="hf engine: beam size (1 = greedy)")
ConcurrencyOpt = typer.Option(4, "--concurrency", help="googletrans / llm: requests in flight")
RestartOpt = typer.Option(False, "--restart", help="ignore the records already in --out (the cache still applies)")
PromptsDirOpt = in_dir(None, "--prompts-dir", help="extra folder of prompt templates (llm engine)")


def _console():
    from biaskit.clitools import console

    return console(stderr=True)


def _engines_help() -> str:
    names = ", ".join(f"{n}{':MODEL' if n == 'llm' else ':PATH_OR_NAME' if n == 'hf' else ''}" for n in MT_ENGINES.names())
    return f"comma-separated engines: {names}"


@app.command("translate")
@llm_options(exclude=("model", "concurrency"))
def translate_cmd(
    pairs: Path = in_file(..., "--pairs", help="pairs to translate: biaskit JSONL/CSV, CrowS-Pairs or IndiBias CSV"),
    target: str = typer.Option(..., "--target", help="target language (ISO 639-1), e.g. hi"),
    engines: str = typer.Option(..., "--engines", help=_engines_help()),
    out: Path = out_file(..., "--out", help="candidates JSONL (appended as pairs finish; resumable)"),
    source_lang: str = typer.Option("en", "--source-lang", help="language of the pairs to translate"),
    format: str = typer.Option("auto", "--format", help="auto | crows | indibias | biaskit"),
    device: Optional[str] = DeviceOpt,
    batch_size: int = BatchSizeOpt,
    num_beams: int = NumBeamsOpt,
    concurrency: int = ConcurrencyOpt,
    batch_pairs: int = typer.Option(16, "--batch-pairs", help="pairs per unit of work (written to --out when done)"),
    limit: Optional[int] = typer.Option(None, "--limit", help="translate only the first N pairs"),
    align: bool = typer.Option(True, "--align/--no-align",
                               help="span substitution when an engine's S1/S2 are not minimal (see docs)"),
    restart: bool = RestartOpt,
    prompts_dir: Optional[Path] = PromptsDirOpt,
    llm_opts: LLMOptions = None,
) -> None:
    """Translate both sentences of every pair with every engine; check each candidate."""
    from .translate import translate_file

    opts = _engine_options(llm_opts, engines, device, batch_size, num_beams, concurrency, prompts_dir)
    res = translate_file(pairs, target, engines, out, source_lang=source_lang, format=format, limit=limit,
                         engine_options=opts, batch_pairs=batch_pairs, align=align, resume=not restart,
                         progress=True)
    s = res.summary()
    _report(s, out, "pairs", f"{s['pairs']} pairs -> {s['candidates']} candidates in {out} ({s['resumed']} resumed "
                             f"from an earlier run, {s['retried']} asked again after an engine failure, "
                             f"{s['seconds']} s)")


@app.command("cat-translate")
@llm_options(exclude=("model", "concurrency"))
def cat_translate_cmd(
    cats: Path = in_file(..., "--cats", help="CATs to translate: biaskit CAT JSONL (e.g. `annotate apply --kind cat` "
                                             "output), StereoSet dev.json or the flattened JSONL"),
    target: str = typer.Option(..., "--target", help="target language (ISO 639-1), e.g. hi"),
    engines: str = typer.Option(..., "--engines", help=_engines_help() + " (llm translates a whole CAT in one request)"),
    out: Path = out_file(..., "--out", help="CAT candidates JSONL (appended as CATs finish; resumable)"),
    source_lang: str = typer.Option("en", "--source-lang", help="language of the CATs to translate"),
    device: Optional[str] = DeviceOpt,
    batch_size: int = BatchSizeOpt,
    num_beams: int = NumBeamsOpt,
    concurrency: int = ConcurrencyOpt,
    batch_cats: int = typer.Option(16, "--batch-cats", help="CATs per unit of work (written to --out when done)"),
    restart: bool = RestartOpt,
    prompts_dir: Optional[Path] = PromptsDirOpt,
    llm_opts: LLMOptions = None,
) -> None:
    """Translate StereoSet CATs (context, BLANK and the three options together) with every engine;
    check each candidate. Review: `annotate push|pull|apply --kind cat_translation`."""
    from .cat_translate import translate_cats_file

    opts = _engine_options(llm_opts, engines, device, batch_size, num_beams, concurrency, prompts_dir)
    res = translate_cats_file(cats, target, engines, out, source_lang=source_lang, engine_options=opts,
                              batch_cats=batch_cats, resume=not restart, progress=True)
    s = res.summary()
    _report(s, out, "cats", f"{s['cats']} CATs -> {s['candidates']} candidates in {out} ({s['resumed']} resumed "
                            f"from an earlier run, {s['seconds']} s)")


def _engine_options(llm_opts: LLMOptions, engines: str, device, batch_size, num_beams, concurrency, prompts_dir) -> dict:
    """The one options bag every engine is built from (each takes what it accepts)."""
    opts = {"base_url": llm_opts.base_url, "device": device, "batch_size": batch_size, "num_beams": num_beams,
            "concurrency": concurrency, "prompts_dir": str(prompts_dir) if prompts_dir else None,
            "backend": llm_opts.llm, "retry_failed": llm_opts.retry_failed, **llm_opts.params()}
    if any(s.strip().lower().startswith("llm") for s in engines.split(",")):
        opts["client_options"] = llm_opts.client_kwargs()
    return opts


def _report(s: dict, out: Path, unit: str, line: str) -> None:
    """Notes, the summary line, the engine and flag tables; exit 1 when every record failed."""
    for note in s["notes"]:
        echo(f"warning: {note}", err=True)
    echo(line, err=True)
    from rich.table import Table

    t = Table("engine", "sent to engine", "from cache")
    for e, st in s["engines"].items():
        t.add_row(e, str(st["requested"]), str(st["cache_hits"]))
    con = _console()
    con.print(t)
    if s["flags"]:
        ft = Table("flag", "candidates")
        for code, n in s["flags"].items():
            ft.add_row(code, str(n))
        con.print(ft)
    if s["engine_failed"]:
        msg = (f"{s['engine_failed']} of {s[unit]} {unit[:-1] if unit == 'pairs' else 'CAT'}(s) have an engine_failed "
               f"candidate (see the engine's errors file beside {out}); re-run the same command to ask again.")
        if s["engine_failed"] == s[unit]:
            echo_error(f"every {unit[:-1] if unit == 'pairs' else 'CAT'} failed: " + msg)
            raise SystemExit(1)
        echo(f"warning: {msg}", err=True)
