"""The options of the ``biaskit annotate`` commands, declared once (:mod:`biaskit.options`).

Each model is the one source of its command's flags (``@PushOptions.cli()`` in ``cli.py``), of the
keys of the review stages' tables in ``biaskit.toml`` (``[stages.tuple_review]`` ...: the pipeline's
review stages derive their table from ``PushOptions``, ``PullOptions`` and ``ApplyOptions``) and of the
object the pure functions take (:func:`~biaskit.annotation.labelstudio.push`,
:func:`~biaskit.annotation.labelstudio.pull`, :func:`~biaskit.annotation.apply.run_apply`, ...).
Choices come from the registries and constants of the code that implements them. The Label Studio API
token is no option: it is read from ``$LABEL_STUDIO_API_KEY`` only (never a flag, a key or a field, never written).

Options several commands share are declared once, as the functions below (``kind_option()``), and the
adaptive overlap block as a base model (:class:`AdaptiveOptions`).
"""

from __future__ import annotations

from pathlib import Path
from typing import TYPE_CHECKING, Annotated, Any, ClassVar, Literal, Optional, Union

from pydantic import AfterValidator, field_validator

from biaskit.llm_options import DryRunFields, LLMOptions, PromptFields, decoding
from biaskit.options import Options, option

from .adaptive import DEFAULT_EPSILON, POLICIES
from .aggregate import AGGREGATORS
from .choices import EXPORT_MODES
from .kinds import KINDS
from .kinds.pairs import DIRECTION_POLICIES
from .stereoset_labels import OTHER_LABELS

ADAPTIVE_PANEL = "Adaptive overlap (--overlap adaptive)"
REPORT_FILES = ("report.json",)  # what an earlier report folder holds (`--out` folders are replaced whole)
KIND_HELP = "Task kind: " + "; ".join(f"{n}: {KINDS.help(n)}" for n in KINDS.names()) + "."
#: how ``overlap`` is written in biaskit.toml: a number of annotators or "adaptive"
Overlap = Union[int, Literal["adaptive"]]  # noqa: UP007 (a runtime value: pydantic reads it)


# ------------------------------------------------------------------------------------------ shared options
def kind_option(required: bool = True) -> Any:
    if required:
        return option(..., "--kind", choices=KINDS, what="task kind", help=KIND_HELP)
    return option(None, "--kind", choices=KINDS, what="task kind", help="Task kind (default: recorded in the tasks).")


def url_option() -> Any:
    return option(None, "--url", operational=True, help="Label Studio URL (default: $LABEL_STUDIO_URL).")


#: the longest Label Studio project title (its PROJECT_TITLE_MAX_LEN setting)
TITLE_MAX = 50


def project_option() -> Any:
    return option(
        ...,
        "--project",
        max_length=TITLE_MAX,
        help=f"Project title, at most {TITLE_MAX} characters (push creates it when missing).",
    )


def _guideline_langs(v: str | None) -> str | None:
    """Languages the kind's guidelines are shown in (checked when the option is read: a [stages.*_review]
    key is refused before any stage runs, not at its push); None: the default (English and the records'
    language)."""
    from biaskit.errors import InputError

    if v is None:
        return v
    from .guidelines import parse_langs

    try:
        parse_langs(v)
    except InputError as exc:
        raise ValueError(f"{exc.message.rstrip('.')}; {(exc.fix or '').rstrip('.')}") from None
    return v


def parse_overlap(v: Any) -> Any:
    """``--overlap``: a number of annotators per task (at least 1) or ``adaptive`` (None: not given)."""
    if v is None or isinstance(v, bool):
        return v
    if isinstance(v, str):
        t = v.strip()
        if t.lower() == "adaptive":
            return "adaptive"
        try:
            v = int(t)
        except ValueError:
            raise ValueError(
                "give a number of annotators or 'adaptive' (e.g. 3, or adaptive with the min/max judgments)"
            ) from None
    if isinstance(v, int) and v < 1:
        raise ValueError('give at least 1 annotator per task, or "adaptive"')
    return v


# ------------------------------------------------------------------------------------------ the commands
class AdaptiveOptions(Options):
    """Adaptive overlap's settings (``--overlap adaptive``; :class:`~.adaptive.AdaptiveSettings`)."""

    min_judgments: int = option(
        3, "--min-judgments", ge=1, panel=ADAPTIVE_PANEL, help="Judgments every task gets first."
    )
    max_judgments: int = option(
        5, "--max-judgments", ge=1, panel=ADAPTIVE_PANEL, help="The most judgments a task may get."
    )
    policy: str = option(
        "exact",
        "--policy",
        choices=POLICIES,
        what="stopping policy",
        panel=ADAPTIVE_PANEL,
        help="Adaptive overlap's stopping rule: exact (stop only when no remaining judgment can "
        "change the decision) | risk (also when the crowd model puts the chance of a change "
        "below --epsilon).",
    )
    epsilon: float = option(
        DEFAULT_EPSILON,
        "--epsilon",
        gt=0,
        lt=1,
        panel=ADAPTIVE_PANEL,
        help="risk: the highest accepted probability that the remaining judgments change a task's decision.",
    )

    def adaptive_settings(self, min_agree: int | None):
        from .adaptive import AdaptiveSettings

        return AdaptiveSettings(
            policy=self.policy,
            min_judgments=self.min_judgments,
            max_judgments=self.max_judgments,
            epsilon=self.epsilon,
            min_agree=min_agree,
        )


class PushOptions(AdaptiveOptions):
    """``biaskit annotate push`` (:func:`biaskit.annotation.labelstudio.push`)."""

    command = "annotate push"

    kind: str = kind_option()
    data: Path = option(
        ..., "--data", path="in_file", help="Records to annotate (pairs: CrowS/IndiBias/biaskit; others JSONL/CSV)."
    )
    project: str = project_option()
    overlap: Overlap | None = option(
        None,
        "--overlap",
        metavar="N|adaptive",
        user_type=Optional[str],  # noqa: UP045 (a runtime value typer reads; left as it landed)
        toml_type=Overlap,
        help="Annotators per task (maximum_annotations), or 'adaptive': "
        "--min-judgments first, more only while a task's decision can still "
        'change (docs/annotation.md, "Adaptive overlap").',
    )
    min_agree: int | None = option(
        None,
        "--min-agree",
        ge=1,
        help="Adaptive: the votes `aggregate` / `apply` will need to accept (default: the kind's).",
    )
    predictions: Path | None = option(
        None,
        "--predictions",
        path="in_file",
        help="Pre-annotations: task, question, label [, model, score] (`annotate prelabel` writes them).",
    )
    show_predictions: bool | None = option(
        None,
        "--show-predictions/--hide-predictions",
        help="Pre-fill annotators' answers with the predictions (default with --predictions: hidden; anchoring "
        "would bias a validity check).",
    )
    seed: int = option(0, "--seed", help="Seed of the per-task shuffle (cat options, translation candidates).")
    chunk_size: int = option(1000, "--chunk-size", ge=1, operational=True, help="Tasks per import request.")
    skip_invalid: bool = option(False, "--skip-invalid", help="Skip rows that are not valid records.")
    guidelines: Annotated[str | None, AfterValidator(_guideline_langs)] = option(
        None,
        "--guidelines",
        metavar="LANGS",
        show_default="English and the records' language (the default target language for English records)",
        help="Languages of the kind's annotator guidelines shown in the project's instructions "
        "panel: comma-separated codes of data/languages (e.g. en,hi or en,bn), or none (leave the panel as it is).",
    )
    url: str | None = url_option()

    @field_validator("overlap", mode="before")
    @classmethod
    def _overlap(cls, v: Any) -> Any:
        return parse_overlap(v)

    @field_validator("guidelines", mode="before")
    @classmethod
    def _langs(cls, v: Any) -> Any:  # the Python API also takes a list of languages
        return ",".join(v) if isinstance(v, (list, tuple)) else v

    def adaptive(self):
        """The adaptive overlap settings (None: a fixed or no ``overlap``)."""
        return self.adaptive_settings(self.min_agree) if self.overlap == "adaptive" else None

    def fixed_overlap(self) -> int | None:
        """The number of annotators per task (None: not given, or adaptive)."""
        return None if self.overlap in (None, "adaptive") else int(self.overlap)


class PullOptions(Options):
    """``biaskit annotate pull`` (:func:`biaskit.annotation.labelstudio.pull`)."""

    command = "annotate pull"

    project: str = project_option()
    out: Path = option(..., "--out", path="out_file", help="Judgments file (.csv or .jsonl).")
    kind: str | None = kind_option(required=False)
    raw: Path | None = option(
        None, "--raw", path="out_file", python="raw_out", help="Also save the raw Label Studio JSON export here."
    )
    export: str = option(
        "auto",
        "--export",
        choices=EXPORT_MODES,
        what="export mode",
        operational=True,
        help="plain: one request builds the file; snapshot: built on the server, then downloaded "
        "(large projects); auto: snapshot from 2,000 tasks.",
    )
    url: str | None = url_option()


class ApplyOptions(Options):
    """``biaskit annotate apply`` (:func:`biaskit.annotation.apply.run_apply`)."""

    command = "annotate apply"

    kind: str = kind_option()
    data: Path = option(
        ...,
        "--data",
        path="in_file",
        python="data_path",
        help="The records that were pushed (translation: the candidates file).",
    )
    out: Path = option(
        ..., "--out", path="out_file", python="out_path", help="Validated records (.jsonl; pairs also .csv)."
    )
    aggregated: Any | None = option(
        None,
        "--aggregated",
        path="in_file",
        user_type=Optional[Path],  # noqa: UP045 (a runtime value typer reads; left as it landed)
        help="Output of `aggregate` (default: aggregate --judgments here with --method/--min-agree).",
    )
    judgments: Any | None = option(
        None,
        "--judgments",
        path="in_file",
        user_type=Optional[Path],  # noqa: UP045 (a runtime value typer reads; left as it landed)
        help="Pulled judgments (translation: corrections; cat: exact vote counts and human_labels).",
    )
    method: str = option(
        "majority",
        "--method",
        choices=AGGREGATORS,
        what="aggregation method",
        help="Aggregator when --aggregated is not given.",
    )
    min_agree: int | None = option(
        None,
        "--min-agree",
        ge=1,
        help="Votes needed to accept (without --aggregated); cat: validators who must "
        "give each sentence its writer's label (default 3, StereoSet's rule; also "
        "with --aggregated).",
    )
    direction_policy: str | None = option(
        None,
        "--direction-policy",
        choices=DIRECTION_POLICIES,
        what="direction policy",
        help="pair: when the crowd's direction differs: annotators | reject.",
    )
    report_dir: Path | None = option(
        None,
        "--report-dir",
        path="out_dir",
        path_kw={"owns": REPORT_FILES},
        help="translation: folder for the review report (replaced whole).",
    )
    as_json: bool = option(
        False, "--json", toml=False, operational=True, help="Print the summary as JSON (also in OUT.summary.json)."
    )

    #: the fields that are a kind's own apply options (``TaskKind.apply_options``), passed when set
    KIND_OPTIONS: ClassVar[tuple[str, ...]] = ("direction_policy",)

    def kind_options(self) -> dict[str, Any]:
        return {n: getattr(self, n) for n in self.KIND_OPTIONS if getattr(self, n) is not None}


# ------------------------------------------------------------------------------------------ the other commands
def data_dir_option(must_exist: bool) -> Any:
    """``--data-dir`` of ``serve`` (created when missing) and ``stop`` (the folder given to ``serve``)."""
    from .server import default_data_dir

    if must_exist:
        return option(
            default_data_dir(), "--data-dir", path="in_dir", help="The Label Studio data folder given to `serve`."
        )
    return option(
        default_data_dir(),
        "--data-dir",
        path="in_dir",
        path_kw={"must_exist": False},
        help="Label Studio data folder (database, uploads); created when missing.",
    )


class ServeOptions(Options):
    """``biaskit annotate serve`` (:func:`biaskit.annotation.server.serve`)."""

    command = "annotate serve"

    data_dir: Path = data_dir_option(must_exist=False)
    port: int | None = option(None, "--port", help="Port on 127.0.0.1 (default: a free one).")
    email: str = option("admin@biaskit.local", "--email", help="Admin account created on first start.")
    database: str | None = option(
        None,
        "--database",
        metavar="URL",
        help="postgresql://USER[:PASSWORD]@HOST[:PORT]/DB to run Label Studio on PostgreSQL (default: SQLite in "
        "the data folder; a folder keeps the database it was created with). Without a password in the URL, "
        "libpq's $PGPASSWORD or ~/.pgpass is used. The password is never printed or stored.",
    )
    workers: int = option(
        1,
        "--workers",
        ge=1,
        help="Web worker processes (more than 1: Label Studio under gunicorn, PostgreSQL only).",
    )


class StopOptions(Options):
    """``biaskit annotate stop`` (:func:`biaskit.annotation.server.stop_server`)."""

    command = "annotate stop"

    data_dir: Path = data_dir_option(must_exist=True)


class ConfigOptions(Options):
    """``biaskit annotate config`` (a kind's :meth:`~biaskit.annotation.kinds.base.TaskKind.config`)."""

    command = "annotate config"

    kind: str = kind_option()
    data: Path | None = option(None, "--data", path="in_file", help="Records (translation: sets the number of slots).")


class GuidelinesOptions(Options):
    """``biaskit annotate guidelines`` (:func:`biaskit.annotation.guidelines.guidelines_markdown`)."""

    command = "annotate guidelines"

    kind: str = kind_option()
    lang: Annotated[str | None, AfterValidator(_guideline_langs)] = option(
        None,
        "--lang",
        metavar="LANGS",
        help="Comma-separated language codes, one after the other (default: English and the default target "
        "language; codes: data/languages).",
    )
    out: Path | None = option(None, "--out", path="out_file", help="Write the Markdown here instead of printing it.")


class ImportOptions(Options):
    """``biaskit annotate import`` (:func:`biaskit.annotation.labelstudio.import_export`)."""

    command = "annotate import"

    export: Path = option(..., "--export", path="in_file", help="A Label Studio JSON export (offline).")
    out: Path = option(..., "--out", path="out_file", help="Judgments file (.csv or .jsonl).")
    kind: str | None = kind_option(required=False)
    config: Path | None = option(
        None, "--config", path="in_file", help="The project's labeling config XML (default: the kind's)."
    )
    users: Path | None = option(
        None, "--users", path="in_file", help="CSV id,email to name annotators (else user:<id>)."
    )


class StatusOptions(Options):
    """``biaskit annotate status`` (:func:`biaskit.annotation.status.status_of`)."""

    command = "annotate status"

    project: str | None = option(None, "--project", help="Label Studio project title (read live).")
    judgments: Path | None = option(
        None, "--judgments", path="in_file", help="Offline: pulled judgments (.csv/.jsonl) instead of --project."
    )
    tasks: int | None = option(None, "--tasks", help="Offline: the project's number of tasks.")
    overlap: int | None = option(
        None, "--overlap", ge=1, help="Annotators wanted per task (default: the project's; offline 1)."
    )
    min_others: int = option(
        2, "--min-others", ge=1, help="Other annotators an item needs for the leave-one-out majority."
    )
    question: list[str] | None = option(
        None, "--question", help="Agreement and disagreement on this question only (repeatable; default all)."
    )
    as_json: bool = option(False, "--json", operational=True, help="Print the report as JSON.")
    url: str | None = url_option()


class FromStereosetOptions(Options):
    """``biaskit annotate from-stereoset`` (:func:`biaskit.annotation.stereoset_labels.from_stereoset`)."""

    command = "annotate from-stereoset"

    data: Path = option(
        ..., "--data", path="in_file", help="StereoSet's original dev.json (with the validators' labels)."
    )
    out: Path = option(
        ...,
        "--out",
        path="out_file",
        help="Judgments file (.csv or .jsonl); the summary goes to OUT.summary.json.",
    )
    other_labels: str = option(
        "keep",
        "--other-labels",
        choices=OTHER_LABELS,
        what="policy for other labels",
        help="Labels other than stereotype / anti-stereotype / unrelated (the file also "
        "has 'related'): keep them as votes, or drop them.",
    )
    min_agree: int = option(
        3,
        "--min-agree",
        ge=1,
        help="Validators who must give the writer's label on each "
        "sentence for a CAT to be retained (StereoSet: 3 of 5).",
    )


if TYPE_CHECKING:
    from biaskit.llm_options import DecodingFields as _PrelabelDecoding
else:  # the prelabel task's decoding defaults (curation/tasks/prelabel.py: default_params)
    _PrelabelDecoding = decoding({"temperature": 0.0, "seed": 0, "max_tokens": 256})


class PrelabelOptions(_PrelabelDecoding, LLMOptions, PromptFields, DryRunFields):
    """``biaskit annotate prelabel`` (:func:`biaskit.annotation.prelabel.run_prelabel`): the LLM block
    (:mod:`biaskit.llm_options`, with the ``prelabel`` task's decoding defaults) and the records."""

    command = "annotate prelabel"

    kind: str = kind_option()
    data: Path = option(..., "--data", path="in_file", help="Records to pre-label (the file you push).")
    out: Path = option(
        ...,
        "--out",
        path="out_file",
        help="The LLM's answers as judgment rows (.csv/.jsonl): `push --predictions` "
        "and `judge-agreement --llm` read it; the runner's resumable answers go "
        "to OUT.answers.jsonl.",
    )
    project: str | None = option(
        None,
        "--project",
        help="Also send the answers to this Label Studio project as predictions (created when missing).",
    )
    show_predictions: bool = option(
        False, "--show-predictions", help="Pre-fill annotators' answers with the predictions (default: hidden)."
    )
    guidelines_lang: str = option("en", "--guidelines-lang", help="Language of the guidelines the LLM reads.")
    shuffle_seed: int = option(
        0,
        "--shuffle-seed",
        help="The --seed given to `annotate push` (the per-task shuffle of CAT options and translation slots).",
    )
    url: str | None = url_option()
