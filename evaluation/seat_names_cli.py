"""`biaskit evaluate seat-names`: a thin wrapper around :func:`biaskit.evaluation.seat_names.top_names`.

It lives with the SEAT commands because its output is a SEAT resource: name lists in the format of
``data/seat/indibias-paper/lexicon.json``, ready to build tests for ``biaskit evaluate seat``."""

from __future__ import annotations

from pathlib import Path

import typer

from biaskit.paths import in_file, in_path, out_dir, out_file


def seat_names_command(
    corpus: list[Path] = in_path(
        ...,
        "--corpus",
        "-c",
        text=False,
        help="Text corpus: a UTF-8 file (.txt, .gz) or a folder of *.txt / *.txt.gz. Repeatable.",
    ),
    candidates: Path = in_file(
        ...,
        "--candidates",
        help="Candidate names per group: CSV/TSV/JSONL with group, "
        "name; JSON {group: [names]}; or a lexicon with lists.",
    ),
    out: Path = out_file(..., "--out", help="JSON with the top-k names per group (shipped list format) and counts."),
    top_k: int = typer.Option(14, "--top-k", "-k", help="Names kept per group (IndiBias: 14)."),
    lang: str | None = typer.Option(None, "--lang", help="Lexicon candidates: which words, en or hi."),
    counts: Path | None = out_file(None, "--counts", help="Also write every candidate's count (CSV)."),
) -> None:
    """Most frequent candidate names of each group in a corpus (the IndiBias recipe for SEAT name lists)."""
    from rich.console import Console
    from rich.table import Table

    from biaskit.clitools import command_line

    from .seat_names import read_candidates, top_names, write_names

    cands = read_candidates(candidates, lang=lang)
    res = top_names(corpus, cands, k=top_k)
    write_names(res, out, corpus, top_k, counts_csv=counts, command=command_line())
    table = Table(title=f"Top {top_k} names per group by corpus frequency")
    table.add_column("group")
    table.add_column("names (count)")
    for g, lst in res["lists"].items():
        table.add_row(g, ", ".join(f"{next(iter(w.values()))} ({w['count']})" for w in lst["words"]))
    console = Console()
    console.print(table)
    for n in res["notes"]:
        console.print(f"note: {n}", highlight=False, soft_wrap=True, markup=False)
    console.print(f"wrote {out}" + (f", {counts}" if counts else ""), highlight=False, soft_wrap=True, markup=False)


def seat_tests_command(
    data: Path = in_path(..., "--data", help="A release folder (`biaskit release build`)."),
    out: Path = out_dir(
        ..., "--out", help="Folder for the tests: <lang>/release-*.jsonl and index.json (written whole)."
    ),
    lang: list[str] | None = typer.Option(None, "--lang", help="Languages (repeatable; default en and hi)."),
    attributes: list[str] | None = typer.Option(
        None,
        "--attributes",
        help="Attribute pairs of the IndiBias lexicon, e.g. Pleasant/Unpleasant (repeatable; default per axis).",
    ),
    min_records: int = typer.Option(1, "--min-records", help="Released records a pair of groups needs."),
    split: str | None = typer.Option(None, "--split", help="Only the groups of this split (dev or test)."),
) -> None:
    """IndiBias-style SEAT tests from a release's groups: each pair of comparable groups in bleached
    person templates against the paper's attribute lists, in English and Hindi. Run them with
    `biaskit evaluate seat --test OUT/en`."""
    from biaskit.clitools import echo

    from .seat_release import default_seat_langs, release_seat_tests

    if split not in (None, "dev", "test"):
        from biaskit.errors import InputError

        raise InputError(f"unknown split '{split}'.", fix="use --split dev or --split test.")
    res = release_seat_tests(
        data, out, langs=lang or default_seat_langs(), attributes=attributes, min_records=min_records, split=split
    )
    for g in res["groups"]:
        echo(f"{g['axis']}: {g['targ1']} vs {g['targ2']} ({g['records']} records)")
    echo(f"{len(res['tests'])} SEAT tests -> {out}" + (f" ({res['why']})" if res["why"] else ""))
