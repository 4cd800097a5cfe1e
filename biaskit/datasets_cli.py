"""`biaskit data list | download | verify` (thin wrappers around :mod:`biaskit.datasets`)."""

from __future__ import annotations

from pathlib import Path

import typer

from .datasets import DataListOptions, DataVerifyOptions, DownloadOptions
from .languages import CheckLanguageOptions
from .paths import in_path

app = typer.Typer(no_args_is_help=True, add_completion=False)


@app.command("list")
@DataListOptions.cli()
def list_command(opts: DataListOptions) -> None:
    """List the public datasets biaskit can download (URL, licence, checksum)."""
    from rich.table import Table

    from .clitools import console as make_console
    from .datasets import list_datasets

    console = make_console()
    table = Table(title="Datasets (biaskit data download NAME --out DIR)")
    table.add_column("name", no_wrap=True)
    for col in ("title", "rows", "licence", "sha256"):
        table.add_column(col, overflow="fold")
    datasets = list_datasets(opts.registry)
    for d in datasets:
        table.add_row(
            d.name, d.title, str(d.rows or ""), d.licence, d.sha256[:12] + "…" if d.sha256 else "not recorded"
        )
    console.print(table)
    for d in datasets:
        console.print(f"{d.name}: {d.url}" + (f" ({len(d.files)} files)" if d.files else ""), soft_wrap=True)


@app.command("download")
@DownloadOptions.cli()
def download_command(
    opts: DownloadOptions,
    name: str = typer.Argument(..., help="Dataset name (see `biaskit data list`)."),
) -> None:
    """Download a dataset release, verify its checksum (when recorded) and move it into place atomically."""
    from .clitools import console as make_console
    from .datasets import download, get_dataset
    from .options import say

    console = make_console()
    res = download(name, opts, progress=True)
    info = get_dataset(name, opts.registry)
    if res.skipped:
        console.print(
            f"{res.path} already present ({res.bytes} bytes); use {say('force')} to download again.", soft_wrap=True
        )
    elif res.mirror:
        console.print(f"copied {res.mirror} (mirror) -> {res.path} ({res.bytes} bytes)", soft_wrap=True)
    else:
        console.print(f"downloaded {res.url} -> {res.path} ({res.bytes} bytes)", soft_wrap=True)
    check = "verified against the recorded checksum" if res.verified else "no checksum recorded"
    console.print(f"sha256 {res.sha256} ({check})", soft_wrap=True)
    console.print(f"licence: {info.licence}\ncite: {info.citation}", soft_wrap=True)


@app.command("verify")
@DataVerifyOptions.cli()
def verify_command(
    opts: DataVerifyOptions,
    name: str = typer.Argument(..., help="Dataset name (see `biaskit data list`)."),
    file: Path = in_path(..., arg="FILE", text=False, help="The file to check (the folder, for a multi-file release)."),
) -> None:
    """Check a file against the sha256 recorded for a dataset (exit 2 on mismatch)."""
    from .clitools import console
    from .datasets import verify
    from .errors import BiaskitError

    res = verify(name, file, opts.registry)
    if res.status == "mismatch":
        raise BiaskitError(
            res.message + f" Fix: download it again with `biaskit data download {name} --out DIR --force`"
        )
    console().print(res.message, soft_wrap=True)


@app.command("check-language")
@CheckLanguageOptions.cli()
def check_language_command(
    opts: CheckLanguageOptions,
    code: str = typer.Argument(..., help="The language's code: its folder under data/languages (e.g. bn)."),
) -> None:
    """Check a language folder (data/languages/CODE): every file against its schema and against
    biaskit's inventory, SEAT sets and guidelines (docs/languages.md, "Adding a language")."""
    from .clitools import echo, echo_error
    from .languages import check_language

    rep = check_language(code, opts.root)
    for p in rep.problems:
        if p.warning:
            echo(str(p), err=True)
        else:
            echo_error(str(p))
    bad = [p for p in rep.problems if opts.strict or not p.warning]
    counts = ", ".join(f"{v} {k}" for k, v in rep.counts.items())
    if bad:
        raise SystemExit(2)
    warn = sum(p.warning for p in rep.problems)
    echo(f"{code}: ok ({counts})" + (f"; {warn} warning(s)" if warn else ""))
