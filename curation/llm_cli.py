"""``biaskit llm serve | stop``: a local LLM for the curation stages (thin wrappers around :mod:`.llm_server`)."""

from __future__ import annotations

from pathlib import Path

import typer

from biaskit.clitools import echo

from .options import LLMServeOptions, LLMStopOptions

app = typer.Typer(no_args_is_help=True, add_completion=False)


@app.command("serve")
@LLMServeOptions.cli()
def serve_command(opts: LLMServeOptions) -> None:
    """Start llama.cpp's OpenAI-compatible server on 127.0.0.1 with a GGUF model from PyPI (or a file),
    wait until it answers and print the lines of a project's biaskit.toml that use it."""
    from .llm_server import default_dir, llm_lines, serve

    info = serve(opts)
    where = "" if opts.dir is None or Path(opts.dir).expanduser().resolve() == default_dir() else f" --dir {opts.dir}"
    started = f", started in {info.started_in_s:g} s" if info.started_in_s is not None else ", already running"
    echo(
        f"llama.cpp serves {info.model} (pid {info.pid}, {info.threads} thread(s), chat format "
        f"{info.chat_format or 'from the model file'}{started}): {info.url}"
    )
    if not where:
        echo(
            f'  a project whose [llm] has model = "{info.model}" and no base_url sends its requests here; '
            "elsewhere, paste:"
        )
    else:
        echo("  paste into a project's biaskit.toml:")
    for line in llm_lines(info):
        echo(f"    {line}")
    echo(f"  one command: --model {info.model} --base-url {info.url}")
    echo(f"  stop it with: biaskit llm stop{where}")


@app.command("stop")
@LLMStopOptions.cli()
def stop_command(opts: LLMStopOptions) -> None:
    """Stop the server `biaskit llm serve` started."""
    from .llm_server import default_dir, stop

    info = stop(opts)
    d = opts.dir or default_dir()
    echo(
        f"stopped llama.cpp serving {info.model} (pid {info.pid}, {info.url})"
        if info
        else f"no LLM server was running for {d}"
    )
