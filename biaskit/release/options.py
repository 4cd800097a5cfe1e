"""The options of ``biaskit release build``, declared once (:mod:`biaskit.options`).

:class:`BuildOptions` is what :func:`~biaskit.release.build.build_release` takes besides the record
files and the output folder (the Python API: ``BuildOptions(name=..., version=...)``);
:class:`ReleaseBuildOptions` adds those two and is the command's model: the flags of ``release
build`` (``@ReleaseBuildOptions.cli()`` in ``release_cli.py``) and the ``[stages.release]`` table of
the pipeline's release stage come from it. Choices come from the code that implements them (the
split policies, the record kinds, the protocol registry's names).
"""

from __future__ import annotations

import re
from pathlib import Path
from typing import Annotated, Any

from pydantic import AfterValidator, ValidationError

from ..options import Options, option
from ..origin import PROTOCOL_NAMES
from .layout import KINDS, SPLITS

SPLIT_POLICIES = ("target", "keep")


#: the most characters of a release name: it names the release's folder (``NAME-VERSION``, with a temporary
#: sibling while it is written) and the dataset on the Hub and in lm-eval tasks (as biaskit.paths' data values)
NAME_MAX = 64


def name_problem(name: str) -> str | None:
    """Why ``name`` cannot name a release, or None."""
    if not re.match(r"^[A-Za-z0-9][A-Za-z0-9._-]*$", name):
        return "use letters, digits, '.', '_' and '-', starting with a letter or digit"
    if len(name) > NAME_MAX:
        return f"it is {len(name)} characters, a release name has at most {NAME_MAX}"
    return None


def _release_name(v: str) -> str:
    why = name_problem(v)
    if why:
        raise ValueError(why)
    return v


def _calendar_day(v: str | None) -> str | None:
    from .verify import valid_date

    if v is not None and not valid_date(v):
        raise ValueError(f"'{v}' is not a day of the calendar; use YYYY-MM-DD, e.g. \"2025-01-31\"")
    return v


class BuildOptions(Options):
    """Everything ``build_release`` needs besides the record files and the output folder."""

    def __init__(self, **values: Any) -> None:
        try:  # the Python API: a refused value is one line naming the keyword (an InputError), as a flag is
            super().__init__(**values)
        except ValidationError as exc:
            raise type(self).user_error(exc) from None

    name: Annotated[str, AfterValidator(_release_name)] = option(
        ..., "--name", help=f"Release name, e.g. indibias-release (at most {NAME_MAX} characters)."
    )
    version: str = option(..., "--version", help="Semantic version X.Y.Z.")
    langs: list[str] | None = option(
        None,
        "--lang",
        sep=",",
        help="Languages to release, comma-separated, primary first (default: all in the records, English first).",
    )
    kinds: list[str] | None = option(
        None, "--kinds", sep=",", choices=KINDS, what="kind", help="pairs,cats,tuples (default: all in the records)."
    )
    split_policy: str = option(
        "target",
        "--split-policy",
        choices=SPLIT_POLICIES,
        what="split policy",
        help="target: dev/test by target term, stratified (StereoSet §6.1); keep: the records' "
        "own meta.split (checked for leaks).",
    )
    dev_fraction: float = option(0.25, "--dev-fraction", gt=0, lt=1, help="Share of each stratum's records in dev.")
    seed: int = option(0, "--seed", help="Seed of the split (same seed -> same split).")
    previous: Path | None = option(
        None,
        "--previous",
        path="in_dir",
        help="An earlier release: its target terms keep their split, new ones are assigned.",
    )
    license: str | None = option(None, "--license", help="Hugging Face licence id, e.g. cc-by-sa-4.0.")
    citation: str | None = option(None, "--citation", help="BibTeX text or a .bib file.")
    pretty_name: str | None = option(None, "--pretty-name", help="Human-readable title of the card.")
    card_text: Path | None = option(
        None, "--card-text", path="in_file", help="Markdown with the card sections people write ('## Motivation' ...)."
    )
    history: list[str] = option(
        ...,
        "--history",
        factory=list,
        help="Stage reports ([LABEL=]PATH): run logs, checker output, agreement.json, apply "
        "summary/rejected, translation report.json, adapt report. Repeatable.",
    )
    discover_history: bool = option(
        True,
        "--discover",
        "--no-discover",
        help="Read STEM.rejected.jsonl, STEM.summary.json ... next to the records (default; --no-discover: do not).",
    )
    keep_flagged: bool = option(False, "--keep-flagged", help="Release pairs whose status is 'flagged'.")
    skip_invalid: bool = option(False, "--skip-invalid", help="Skip invalid pair rows (counted) instead of stopping.")
    keyness: bool = option(
        True, "--keyness", "--no-keyness", help="The keyness statistics (default; --no-keyness: skip them)."
    )
    plots: bool = option(True, "--plots", "--no-plots", help="The PNG plots (default; --no-plots: skip them).")
    created: Annotated[str | None, AfterValidator(_calendar_day)] = option(
        None,
        "--date",
        pattern=r"^\d{4}-\d{2}-\d{2}$",
        metavar="YYYY-MM-DD",
        help="Release date YYYY-MM-DD (default: today, UTC).",
    )
    hub_ready: bool = option(
        False,
        "--hub-ready",
        help="Refuse what the Hugging Face Hub would reject (licence id, card YAML, config names, "
        "file sizes); nothing is published then.",
    )
    pseudonym_key: Path | None = option(
        None,
        "--pseudonym-key",
        path="out_file",
        help="File holding the secret key of the annotators' pseudonyms (created on first use, never "
        "released; keep it to give the same people the same pseudonyms in the next version). Default: "
        ".biaskit/release.key beside the release folder.",
    )
    protocol: str | None = option(
        None,
        "--protocol",
        choices=(*PROTOCOL_NAMES, "none"),
        what="protocol",
        help="The paper protocol release.json records, which `biaskit evaluate` follows on "
        "this release by default (docs/fidelity.md); default: the records' origin "
        "(IndiBias -> indibias, CrowS-Pairs -> crows, StereoSet -> stereoset).",
    )


class ReleaseBuildOptions(BuildOptions):
    """``biaskit release build`` (:func:`biaskit.release.build.build_release`)."""

    command = "release build"

    records: list[Path] = option(
        ...,
        "--records",
        "-r",
        path="in_file",
        min_length=1,
        help="Validated records: pairs (biaskit JSONL/CSV from `annotate apply`, translation "
        "review output, CrowS-Pairs or IndiBias CSV), CATs or tuples (biaskit JSONL). "
        "Repeatable.",
    )
    out: Path = option(
        ...,
        "--out",
        path="out_dir",
        path_kw={"owns": ("release.json",)},
        help="Release folder to write (replaced whole, atomically).",
    )

    def build_options(self) -> BuildOptions:
        """The options of :func:`~biaskit.release.build.build_release` (all but the records and the folder)."""
        return BuildOptions.model_validate(self.model_dump(exclude={"records", "out"}))


class ReleaseVerifyOptions(Options):
    """``biaskit release verify`` (:func:`biaskit.release.verify.verify_release`; the release folder is
    the command's argument)."""

    command = "release verify"

    hub_ready: bool = option(
        False,
        "--hub-ready",
        help="Also check what the Hugging Face Hub would reject (licence id, card YAML, config names, file sizes).",
    )
    json_out: bool = option(False, "--json", operational=True, toml=False, help="Print the result as JSON.")


class ReleaseExportOptions(Options):
    """``biaskit release export`` (:func:`biaskit.release.lmeval.export_lm_eval`; the release folder is
    the command's argument)."""

    command = "release export"

    lm_eval: Path = option(
        ...,
        "--lm-eval",
        path="out_dir",
        path_kw={"owns": ("biaskit-lm-eval.json",)},
        help="Write lm-evaluation-harness tasks here (one per language and split, a group per "
        "split; run them with `lm_eval --include_path DIR`).",
    )
    prefix: str | None = option(
        None, "--prefix", help="Task-name prefix (default: the release name, e.g. biaskit_demo)."
    )
    splits: list[str] | None = option(
        None, "--split", choices=SPLITS, what="split", help="Only this split (dev or test). Repeatable."
    )
    langs: list[str] | None = option(None, "--lang", sep=",", help="Only these languages, comma-separated.")


class ReleaseDiffOptions(Options):
    """``biaskit release diff`` (:func:`biaskit.release.diff.diff_releases`; the two release folders are
    the command's arguments)."""

    command = "release diff"

    markdown: Path | None = option(None, "--markdown", path="out_file", help="Write the changelog (Markdown) here.")
    json_path: Path | None = option(None, "--json", path="out_file", help="Write the full diff (JSON) here.")
