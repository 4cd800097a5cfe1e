"""`biaskit evaluate extrinsic classifier | generations`: thin wrappers around
:func:`biaskit.evaluation.extrinsic.run_classifier` and ``run_generations`` (options:
:class:`~biaskit.evaluation.options.ClassifierOptions`, ``GenerationsOptions``), writing the CSV that
``biaskit evaluate correlate --extrinsic`` reads."""

from __future__ import annotations

from typing import TYPE_CHECKING

import typer

from .options import ClassifierOptions, GenerationsOptions

if TYPE_CHECKING:
    from .results import ExtrinsicRun

ext_app = typer.Typer(
    no_args_is_help=True,
    add_completion=False,
    help="Group-level extrinsic bias scores from raw outputs (Cao et al. 2022), for `correlate`.",
)


def _print(run: ExtrinsicRun) -> None:
    from rich.console import Console
    from rich.table import Table

    table = Table(title="Extrinsic bias: variance of group scores (Cao et al. 2022)")
    for col in ("model", "domain", "metric", "groups", "variance", "max gap"):
        table.add_column(col, justify="right" if col in ("groups", "variance", "max gap") else "left")
    for _, r in run.variances.iterrows():
        table.add_row(
            str(r["model"]),
            str(r["domain"]),
            str(r["metric"]),
            str(r["n_groups"]),
            f"{r['variance']:.4g}",
            f"{r['max_gap']:.4g}",
        )
    console = Console()
    console.print(table)
    for note in run.notes:
        console.print(f"note: {note}", highlight=False, soft_wrap=True, markup=False)
    console.print(
        f"wrote {run.out} ({len(run.scores)} group scores); next: biaskit evaluate correlate --extrinsic {run.out} ...",
        highlight=False,
        soft_wrap=True,
        markup=False,
    )


@ext_app.command("classifier")
@ClassifierOptions.cli()
def classifier_command(opts: ClassifierOptions) -> None:
    """Per-group false positive rates of a classifier on group-annotated data (TOXD / HATEX style)."""
    from .extrinsic import run_classifier

    _print(run_classifier(opts))


@ext_app.command("generations")
@GenerationsOptions.cli()
def generations_command(opts: GenerationsOptions) -> None:
    """Per-group mean classifier score of generations from group prompts (BOLD style: B-SENT, B-TOX, B-REGARD)."""
    from .extrinsic import run_generations

    _print(run_generations(opts))
