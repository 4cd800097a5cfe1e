"""`biaskit evaluate seat-names` and `biaskit evaluate seat-tests`: thin wrappers around
:func:`biaskit.evaluation.seat_names.seat_names` and
:func:`biaskit.evaluation.seat_release.release_seat_tests` (options:
:class:`~biaskit.evaluation.options.SeatNamesOptions`, ``SeatTestsOptions``).

They live with the SEAT commands because their outputs are SEAT resources: name lists in the format of
``data/seat/indibias-paper/lexicon.json`` and tests from a release's groups, ready for ``biaskit
evaluate seat``."""

from __future__ import annotations

from .options import SeatNamesOptions, SeatTestsOptions


@SeatNamesOptions.cli()
def seat_names_command(opts: SeatNamesOptions) -> None:
    """Most frequent candidate names of each group in a corpus (the IndiBias recipe for SEAT name lists)."""
    from rich.console import Console
    from rich.table import Table

    from biaskit.clitools import command_line

    from .seat_names import seat_names

    res = seat_names(opts, command=command_line())
    table = Table(title=f"Top {opts.top_k} names per group by corpus frequency")
    table.add_column("group")
    table.add_column("names (count)")
    for g, lst in res["lists"].items():
        table.add_row(g, ", ".join(f"{next(iter(w.values()))} ({w['count']})" for w in lst["words"]))
    console = Console()
    console.print(table)
    for n in res["notes"]:
        console.print(f"note: {n}", highlight=False, soft_wrap=True, markup=False)
    console.print(
        f"wrote {opts.out}" + (f", {opts.counts}" if opts.counts else ""), highlight=False, soft_wrap=True, markup=False
    )


@SeatTestsOptions.cli()
def seat_tests_command(opts: SeatTestsOptions) -> None:
    """IndiBias-style SEAT tests from a release's groups: each pair of comparable groups in bleached
    person templates against the paper's attribute lists, in English and Hindi. Run them with
    `biaskit evaluate seat --test OUT/en`."""
    from biaskit.clitools import echo

    from .seat_release import release_seat_tests

    res = release_seat_tests(opts)
    for g in res["groups"]:
        echo(f"{g['axis']}: {g['targ1']} vs {g['targ2']} ({g['records']} records)")
    echo(f"{len(res['tests'])} SEAT tests -> {opts.out}" + (f" ({res['why']})" if res["why"] else ""))
