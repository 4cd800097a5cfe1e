"""The options of ``biaskit init | run | status``, each declared once (biaskit/options.py): the commands
are thin wrappers (:mod:`.cli`) around :func:`~.project.init_project`, :func:`~.run.run_project` and
:func:`~.status.project_status`. None of them is a stage, so none is a biaskit.toml key."""

from __future__ import annotations

from pathlib import Path
from typing import Any, ClassVar

from biaskit.options import Options, option

from .project import STAGE_ORDER
from .templates import TEMPLATES


def project_option() -> Any:
    return option(
        None,
        "--project",
        "-p",
        path="in_path",
        help="The project file, or its folder (default: ./biaskit.toml; "
        "with --workdir alone: the project its state names).",
    )


class InitOptions(Options):
    """``biaskit init [DIRECTORY]`` (:func:`~.project.init_project`; DIRECTORY is the command's argument)."""

    command: ClassVar[str] = "init"

    template: str = option(
        "generate",
        "--template",
        choices=TEMPLATES,
        what="template",
        help="generate: IndiBias-style LLM tuples -> "
        "sentences -> pairs; adapt: CrowS-Pairs adapted to the Indian context; "
        "stereoset: StereoSet-style CATs drafted by the LLM, five validators.",
    )
    hindi: bool = option(
        True, "--hindi", "--no-hindi", help="Translate into the target language (--lang) with a blind review."
    )
    name: str | None = option(None, "--name", help="Project name (default: the folder's name).")
    trial: bool = option(
        False,
        "--trial",
        help="Sized for a first try on 2 CPU cores with 3 people and a local LLM (`biaskit llm serve`): a few "
        "groups or target terms, overlap 3, a small evaluation; the full-size values are in the comments.",
    )
    lang: str | None = option(
        None,
        "--lang",
        help="The target language: a folder of data/languages (e.g. bn; default: data/languages/languages.json).",
    )


class RunCommandOptions(Options):
    """``biaskit run`` (:func:`~.run.run_project`)."""

    command: ClassVar[str] = "run"

    project: Path | None = project_option()
    workdir: Path | None = option(
        None,
        "--workdir",
        path="in_dir",
        path_kw={"must_exist": False},
        help="Where outputs and state go (default: the project file's folder).",
    )
    partial: bool = option(
        False,
        "--partial",
        help="Human stages: go on with the answers there are, without waiting for every task to have its annotators.",
    )
    from_stage: str | None = option(
        None,
        "--from",
        choices=STAGE_ORDER,
        what="stage",
        help="Run this stage and the ones after it again even if unchanged (a human stage pulls again).",
    )
    until: str | None = option(None, "--until", choices=STAGE_ORDER, what="stage", help="Stop after this stage.")
    retry_failed: bool = option(
        False, "--retry-failed", help="LLM stages: ask again for the jobs that failed (bypassing their cached replies)."
    )
    quiet: bool = option(False, "--quiet", "-q", help="No progress bars.")


class StatusOptions(Options):
    """``biaskit status`` (:func:`~.status.project_status`)."""

    command: ClassVar[str] = "status"

    project: Path | None = project_option()
    workdir: Path | None = option(
        None,
        "--workdir",
        path="in_dir",
        help="The working folder of `biaskit run` (default: the project file's folder).",
    )
    json_out: bool = option(False, "--json", help="Print the status as JSON.")
