"""The options of the commands that read judgments offline -- ``biaskit annotate aggregate | agreement |
judge-agreement | replay | report`` -- declared once (:mod:`biaskit.options`; the pattern of
:mod:`.options`, which holds push / pull / apply and the options several commands share).

Each model is the one source of its command's flags (``@AggregateOptions.cli()`` in ``cli.py``) and of
the object its pure function takes (:func:`~.aggregate.aggregate_file`,
:func:`~.agreement.agreement_report`, :func:`~.judge.judge_agreement`, :func:`~.replay.run_replay`,
:func:`~.kinds.report_applied`). Choices come from the registries and constants of the code that
implements them.
"""

from __future__ import annotations

from pathlib import Path
from typing import Any

from biaskit.options import Options, option

from .aggregate import AGGREGATORS, DUPLICATES, TIES
from .agreement import AGREEMENT_FILES, LEVELS
from .judge import JUDGE_FILES
from .kinds import KINDS
from .options import REPORT_FILES, AdaptiveOptions, kind_option
from .replay import UNITS


def judgments_option(help: str) -> Any:
    return option(..., "--judgments", path="in_file", help=help)


def duplicates_option() -> Any:
    return option(
        "error",
        "--duplicates",
        choices=DUPLICATES,
        what="duplicates rule",
        help="An annotator who answered an item twice: error | last | first.",
    )


def labels_option(help: str) -> Any:
    return option(None, "--labels", sep=",", help=help)


class AggregateOptions(Options):
    """``biaskit annotate aggregate`` (:func:`biaskit.annotation.aggregate.aggregate_file`)."""

    command = "annotate aggregate"

    judgments: Path = judgments_option("task, worker, label [, question] (.csv/.jsonl).")
    out: Path = option(..., "--out", path="out_file", help="One row per task and question (.csv/.jsonl).")
    min_agree: int | None = option(
        None, "--min-agree", ge=1, help="Votes needed to accept (default: a strict majority)."
    )
    method: str = option(
        "majority", "--method", choices=AGGREGATORS, what="aggregation method", help="majority, or a crowd-kit model."
    )
    ties: str = option(
        "flag", "--ties", choices=TIES, what="ties rule", help="flag (needs_adjudication) | drop | random (seeded)."
    )
    seed: int = option(0, "--seed", help="Seed for --ties random.")
    duplicates: str = duplicates_option()
    kind: str | None = option(
        None,
        "--kind",
        choices=KINDS,
        what="task kind",
        help="Map answers the kind's way (translation: slots -> "
        "candidates) and reject labels that are not its options.",
    )
    labels: list[str] | None = labels_option("Comma-separated allowed labels (all questions).")


class AgreementOptions(Options):
    """``biaskit annotate agreement`` (:func:`biaskit.annotation.agreement.agreement_report`)."""

    command = "annotate agreement"

    judgments: Path = judgments_option("task, worker, label [, question, bias_type].")
    out: Path = option(
        ...,
        "--out",
        path="out_dir",
        path_kw={"owns": AGREEMENT_FILES},
        help="Folder for agreement.json, agreement.md, agreement_items.csv (replaced whole).",
    )
    data: Path | None = option(
        None,
        "--data",
        path="in_file",
        help="Records giving each task's bias type, target term and "
        "reference label (per-term and per-bias-type figures).",
    )
    level: str = option(
        "nominal", "--level", choices=LEVELS, what="level of measurement", help="Krippendorff level of measurement."
    )
    min_overlap: int = option(
        2, "--min-overlap", ge=1, help="Shared items a pair of annotators needs for Cohen's kappa."
    )
    duplicates: str = duplicates_option()
    min_agree: int | None = option(
        None,
        "--min-agree",
        ge=1,
        help="Votes for the reference label an example needs to be retained in the per-term "
        "tables (default: a strict majority of the usual number of annotators, 3 of 5).",
    )


class JudgeOptions(Options):
    """``biaskit annotate judge-agreement`` (:func:`biaskit.annotation.judge.judge_agreement`)."""

    command = "annotate judge-agreement"

    judgments: Path = judgments_option("The people's judgments (`annotate pull`).")
    llm: Path = option(..., "--llm", path="in_file", help="The LLM's judgments (`annotate prelabel --out`).")
    out: Path = option(
        ...,
        "--out",
        path="out_dir",
        path_kw={"owns": JUDGE_FILES},
        help="Folder for judge.json and judge.md (replaced whole).",
    )
    kind: str | None = kind_option(required=False)
    min_agree: int | None = option(
        None,
        "--min-agree",
        ge=1,
        help="The rule deciding a task (default: the kind's), for the precision / coverage curve.",
    )
    tolerance: float = option(
        0.005,
        "--tolerance",
        ge=0,
        le=1,
        help="How much less precise than one more person the LLM may be and still stand in for one.",
    )


class ReplayOptions(AdaptiveOptions):
    """``biaskit annotate replay`` (:func:`biaskit.annotation.replay.run_replay`); the adaptive overlap
    settings replayed are ``annotate push``'s (:class:`~.options.AdaptiveOptions`)."""

    command = "annotate replay"

    judgments: Path = judgments_option(
        "Recorded judgments (.csv/.jsonl: `pull` or `from-stereoset` output), replayed per task in file order."
    )
    kind: str | None = kind_option(required=False)
    min_agree: int | None = option(
        None,
        "--min-agree",
        ge=1,
        help="The rule's votes to accept (default: the kind's: cat 3 of the writer's label, others a strict majority).",
    )
    unit: str = option(
        "task",
        "--unit",
        choices=UNITS,
        what="unit",
        help="task: a judgment answers a whole task (Label Studio); item: "
        "each deciding question is collected on its own (StereoSet's "
        "five validators per sentence).",
    )
    duplicates: str = duplicates_option()
    labels: list[str] | None = labels_option(
        "Comma-separated allowed labels (all questions; default: the kind's options)."
    )
    out: Path | None = option(None, "--out", path="out_file", help="Write the report as JSON here.")


class ReportOptions(Options):
    """``biaskit annotate report`` (:func:`biaskit.annotation.kinds.report_applied`)."""

    command = "annotate report"

    kind: str = kind_option()
    data: Path = option(
        ..., "--data", path="in_file", help="The records that were pushed (translation: the candidates file)."
    )
    applied: Path = option(
        ...,
        "--applied",
        path="in_file",
        help="The OUT file `apply` wrote (its .needs_review / .rejected siblings are read too).",
    )
    out: Path = option(
        ...,
        "--out",
        path="out_dir",
        path_kw={"owns": REPORT_FILES},
        help="Folder for report.json and report.md (replaced whole).",
    )
