"""`biaskit evaluate extrinsic classifier | generations`: thin wrappers around
:mod:`biaskit.evaluation.extrinsic`, writing the CSV that ``biaskit evaluate correlate --extrinsic`` reads."""

from __future__ import annotations

from pathlib import Path

import typer

from biaskit.errors import BiaskitError
from biaskit.paths import in_file, out_file

ext_app = typer.Typer(
    no_args_is_help=True,
    add_completion=False,
    help="Group-level extrinsic bias scores from raw outputs (Cao et al. 2022), for `correlate`.",
)

_COMMON = {
    "group_col": typer.Option("group", "--group-col", help="Column with the group(s) a row mentions."),
    "group_sep": typer.Option(";", "--group-sep", help="Separator of several groups in one cell."),
    "domain_col": typer.Option("domain", "--domain-col", help="Column with the domain (gender, religion, ...)."),
    "domain": typer.Option(None, "--domain", help="One domain for every row (instead of a column)."),
    "model_col": typer.Option("model", "--model-col", help="Column with the model name."),
    "out": out_file(..., "--out", help="CSV of group scores (model, domain, group, metric, score, count)."),
    "model": typer.Option(
        None, "--model", "-m", help="Model name for every row of the matching --input (else a 'model' column)."
    ),
    "append": typer.Option(
        False, "--append", help="Merge into an existing --out (rows of the same model, domain and metric are replaced)."
    ),
}


def _models(inputs: list[Path], model: list[str] | None) -> list[str | None]:
    if not model:
        return [None] * len(inputs)
    if len(model) == 1:
        return [model[0]] * len(inputs)
    if len(model) != len(inputs):
        raise BiaskitError(
            f"{len(model)} --model values for {len(inputs)} --input files. Fix: pass one --model per "
            "--input (in the same order), one for all, or none (a 'model' column)."
        )
    return list(model)


def _finish(frames, out: Path, append: bool, ddof: int = 0) -> None:
    import pandas as pd
    from rich.console import Console
    from rich.table import Table

    from .extrinsic import group_variances, write_extrinsic

    scores = pd.concat(frames, ignore_index=True)
    write_extrinsic(scores, out, append=append)
    var = group_variances(scores, ddof=ddof)
    table = Table(title="Extrinsic bias: variance of group scores (Cao et al. 2022)")
    for col in ("model", "domain", "metric", "groups", "variance", "max gap"):
        table.add_column(col, justify="right" if col in ("groups", "variance", "max gap") else "left")
    for _, r in var.iterrows():
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
    for f in frames:
        for note in f.attrs.get("notes", []):
            console.print(f"note: {note}", highlight=False, soft_wrap=True, markup=False)
    console.print(
        f"wrote {out} ({len(scores)} group scores); next: biaskit evaluate correlate --extrinsic {out} ...",
        highlight=False,
        soft_wrap=True,
        markup=False,
    )


@ext_app.command("classifier")
def classifier_command(
    input: list[Path] = in_file(
        ...,
        "--input",
        "-i",
        help="Per-example predictions (CSV/TSV/JSONL): gold label, prediction, group(s). Repeatable.",
    ),
    name: str = typer.Option("clf", "--name", help="Metric name prefix, e.g. toxd or hatex."),
    label_col: str = typer.Option("label", "--label-col", help="Gold label column."),
    pred_col: str = typer.Option("pred", "--pred-col", help="Prediction column (label, or score with --threshold)."),
    positive: str | None = typer.Option(
        None, "--positive", help="The value of the positive (e.g. toxic) class (default: 1/true/toxic/...)."
    ),
    threshold: float | None = typer.Option(None, "--threshold", help="Predictions are scores: positive when >= this."),
    metrics: str = typer.Option("fpr,fpr_gap", "--metrics", help="Comma-separated: fpr, fpr_gap, fnr, fnr_gap."),
    out: Path = _COMMON["out"],
    model: list[str] | None = _COMMON["model"],
    append: bool = _COMMON["append"],
    group_col: str = _COMMON["group_col"],
    group_sep: str = _COMMON["group_sep"],
    domain_col: str = _COMMON["domain_col"],
    domain: str | None = _COMMON["domain"],
    model_col: str = _COMMON["model_col"],
) -> None:
    """Per-group false positive rates of a classifier on group-annotated data (TOXD / HATEX style)."""
    from .extrinsic import classifier_group_scores, read_outputs

    frames = [
        classifier_group_scores(
            read_outputs(p),
            name=name,
            label_col=label_col,
            pred_col=pred_col,
            group_col=group_col,
            domain_col=domain_col,
            model_col=model_col,
            model=m,
            domain=domain,
            group_sep=group_sep,
            positive=positive,
            threshold=threshold,
            metrics=[x.strip() for x in metrics.split(",") if x.strip()],
            path=p,
        )
        for p, m in zip(input, _models(input, model), strict=False)
    ]
    _finish(frames, out, append)


@ext_app.command("generations")
def generations_command(
    input: list[Path] = in_file(
        ...,
        "--input",
        "-i",
        help="Scored generations (CSV/TSV/JSONL): group(s) of the "
        "prompt and the classifier's score or label. Repeatable.",
    ),
    name: str = typer.Option("gen", "--name", help="Metric name prefix, e.g. b-sent, b-tox, b-regard."),
    score_col: str = typer.Option("score", "--score-col", help="Numeric score column (sentiment, toxicity, ...)."),
    label_col: str = typer.Option("label", "--label-col", help="Label column (with --label-map or --positive)."),
    label_map: str | None = typer.Option(
        None, "--label-map", help="Labels to numbers, e.g. negative=-1,neutral=0,positive=1."
    ),
    positive: str | None = typer.Option(None, "--positive", help="Score = share of generations with this label."),
    out: Path = _COMMON["out"],
    model: list[str] | None = _COMMON["model"],
    append: bool = _COMMON["append"],
    group_col: str = _COMMON["group_col"],
    group_sep: str = _COMMON["group_sep"],
    domain_col: str = _COMMON["domain_col"],
    domain: str | None = _COMMON["domain"],
    model_col: str = _COMMON["model_col"],
) -> None:
    """Per-group mean classifier score of generations from group prompts (BOLD style: B-SENT, B-TOX, B-REGARD)."""
    from .extrinsic import generation_group_scores, parse_label_map, read_outputs

    if label_map and positive:
        raise BiaskitError("pass --label-map or --positive, not both.")
    lm = parse_label_map(label_map)
    frames = [
        generation_group_scores(
            read_outputs(p),
            name=name,
            score_col=score_col,
            label_col=label_col,
            label_map=lm,
            positive=positive,
            group_col=group_col,
            domain_col=domain_col,
            model_col=model_col,
            model=m,
            domain=domain,
            group_sep=group_sep,
            path=p,
        )
        for p, m in zip(input, _models(input, model), strict=False)
    ]
    _finish(frames, out, append)
