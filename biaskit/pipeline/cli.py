"""``biaskit init | run | status``: thin typer wrappers around :mod:`biaskit.pipeline`.

Exit codes of ``biaskit run``: 0 every stage done; 1 a stage produced nothing usable (every LLM job
failed, the release does not verify); 2 bad input (the project file, an input file, an unreachable
service); 3 waiting for people (a human stage's tasks lack annotators: annotate, then run again);
130 interrupted (Ctrl-C; the next run resumes).
"""

from __future__ import annotations

import json
from enum import Enum
from pathlib import Path
from typing import TYPE_CHECKING

import typer

from biaskit.clitools import choice_enum, echo, echo_error, value
from biaskit.paths import in_dir, in_path, out_dir

from .project import STAGE_ORDER
from .templates import TEMPLATES

if TYPE_CHECKING:  # built from the choices at run time: an Enum to a type checker
    StageName = Enum
    Template = Enum
else:
    StageName = choice_enum("StageName", STAGE_ORDER)
    Template = choice_enum("Template", TEMPLATES)

ProjectOpt = in_path(
    None,
    "--project",
    "-p",
    help="The project file, or its folder (default: ./biaskit.toml; "
    "with --workdir alone: the project its state names).",
)
WorkdirOpt = in_dir(
    None, "--workdir", must_exist=False, help="Where outputs and state go (default: the project file's folder)."
)
StatusWorkdirOpt = in_dir(
    None, "--workdir", help="The working folder of `biaskit run` (default: the project file's folder)."
)


def _load(project: Path | None, workdir: Path | None, *, check_inputs: bool = True):
    from .project import load_project
    from .status import find_workdir_project

    if project is None and workdir is not None:
        # the project the working folder's state names, else a project file in the folder itself, else
        # ./biaskit.toml (a first `biaskit run --workdir out` from the project's folder)
        project = find_workdir_project(workdir) or (workdir if (Path(workdir) / "biaskit.toml").is_file() else None)
    return load_project(project, workdir=workdir, check_inputs=check_inputs)


def init_command(
    directory: Path = out_dir(Path("."), arg="DIRECTORY", help="Folder for the new project (created when missing)."),
    template: Template = typer.Option(
        "generate",
        "--template",
        help="generate: IndiBias-style LLM tuples -> "
        "sentences -> pairs; adapt: CrowS-Pairs adapted to the Indian context; "
        "stereoset: StereoSet-style CATs drafted by the LLM, five validators.",
    ),
    hindi: bool = typer.Option(
        True, "--hindi/--no-hindi", help="Translate into the target language (--lang) with a blind review."
    ),
    name: str | None = typer.Option(None, "--name", help="Project name (default: the folder's name)."),
    trial: bool = typer.Option(
        False,
        "--trial",
        help="Sized for a first try on 2 CPU cores with 3 people and a local LLM (`biaskit llm serve`): a few "
        "groups or target terms, overlap 3, a small evaluation; the full-size values are in the comments.",
    ),
    lang: str | None = typer.Option(
        None,
        "--lang",
        help="The target language: a folder of data/languages (e.g. bn; default: data/languages/languages.json).",
    ),
) -> None:
    """Write a commented biaskit.toml (never over an existing one)."""
    from .project import init_project

    chosen = value(template)
    assert chosen is not None  # typer gives a member of Template (default: generate)
    path = init_project(directory, template=chosen, hindi=hindi, name=name, trial=trial, lang=lang)
    if trial:
        echo(
            f"wrote {path}, sized for a trial: start the local LLM (`biaskit llm serve`) and Label Studio, then "
            f'`biaskit run --project {path.parent}` (docs/pipeline.md, "A first trial").'
        )
        return
    echo(
        f"wrote {path}: edit it, then `biaskit run --project {path.parent}` "
        f"(`biaskit status --project {path.parent}` shows where it stands)."
    )


def run_command(
    project: Path | None = ProjectOpt,
    workdir: Path | None = WorkdirOpt,
    partial: bool = typer.Option(
        False,
        "--partial",
        help="Human stages: go on with the answers there are, without waiting for every task to have its annotators.",
    ),
    from_stage: StageName | None = typer.Option(
        None,
        "--from",
        help="Run this stage and the ones after it again even if unchanged (a human stage pulls again).",
    ),
    until: StageName | None = typer.Option(None, "--until", help="Stop after this stage."),
    retry_failed: bool = typer.Option(
        False, "--retry-failed", help="LLM stages: ask again for the jobs that failed (bypassing their cached replies)."
    ),
    quiet: bool = typer.Option(False, "--quiet", "-q", help="No progress bars."),
) -> None:
    """Run the project's stages in order: skip what has not changed, resume what stopped, stop at
    people's work (exit 3) until it is done."""
    from biaskit.clitools import command_line

    from .run import EXIT_FAILED, command_for, run_project
    from .stages import StageFailed

    p = _load(project, workdir)
    try:
        res = run_project(
            p,
            partial=partial,
            from_stage=value(from_stage),
            until=value(until),
            retry_failed=retry_failed,
            progress=not quiet,
            command=command_line(),
            echo=echo,
        )
    except StageFailed as exc:
        echo_error(str(exc))
        raise SystemExit(EXIT_FAILED) from None
    if res.status == "waiting":
        echo(
            f"waiting for people: {res.message}. Annotate in Label Studio, then run `{command_for(p)}` again "
            f"(or `{command_for(p, 'run', '--partial')}` to go on with the answers there are). Exit code 3."
        )
        raise SystemExit(res.exit_code)
    echo(
        f"done: {len(res.ran)} stage(s) run, {len(res.skipped)} unchanged. `{command_for(p, 'status')}` shows the "
        "files."
    )


def status_command(
    project: Path | None = ProjectOpt,
    workdir: Path | None = StatusWorkdirOpt,
    json_out: bool = typer.Option(False, "--json", help="Print the status as JSON."),
) -> None:
    """The whole picture: each stage's state, counts, what people still have to do, where the files are."""
    from .status import project_status, render_status

    st = project_status(_load(project, workdir, check_inputs=False))
    if json_out:
        echo(json.dumps(st, ensure_ascii=False, indent=2))
    else:
        render_status(st)


def register(app: typer.Typer) -> None:
    """Mount ``init``, ``run`` and ``status`` on the ``biaskit`` root command."""
    app.command("init")(init_command)
    app.command("run")(run_command)
    app.command("status")(status_command)
