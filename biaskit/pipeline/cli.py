"""``biaskit init | run | status``: thin typer wrappers around :mod:`biaskit.pipeline`.

Exit codes of ``biaskit run``: 0 every stage done; 1 a stage produced nothing usable (every LLM job
failed, the release does not verify); 2 bad input (the project file, an input file, an unreachable
service); 3 waiting for people (a human stage's tasks lack annotators: annotate, then run again);
130 interrupted (Ctrl-C; the next run resumes).
"""

from __future__ import annotations

import json
from pathlib import Path

import typer

from biaskit.clitools import echo, echo_error
from biaskit.paths import out_dir

from .options import InitOptions, RunCommandOptions, StatusOptions


def _load(project: Path | None, workdir: Path | None, *, check_inputs: bool = True):
    from .project import load_project
    from .status import find_workdir_project

    if project is None and workdir is not None:
        # the project the working folder's state names, else a project file in the folder itself, else
        # ./biaskit.toml (a first `biaskit run --workdir out` from the project's folder)
        project = find_workdir_project(workdir) or (workdir if (Path(workdir) / "biaskit.toml").is_file() else None)
    return load_project(project, workdir=workdir, check_inputs=check_inputs)


@InitOptions.cli()
def init_command(
    opts: InitOptions,
    directory: Path = out_dir(Path("."), arg="DIRECTORY", help="Folder for the new project (created when missing)."),
) -> None:
    """Write a commented biaskit.toml (never over an existing one)."""
    from .project import init_project

    path = init_project(directory, opts)
    if opts.trial:
        echo(
            f"wrote {path}, sized for a trial: start the local LLM (`biaskit llm serve`) and Label Studio, then "
            f'`biaskit run --project {path.parent}` (docs/pipeline.md, "A first trial").'
        )
        return
    echo(
        f"wrote {path}: edit it, then `biaskit run --project {path.parent}` "
        f"(`biaskit status --project {path.parent}` shows where it stands)."
    )


@RunCommandOptions.cli()
def run_command(opts: RunCommandOptions) -> None:
    """Run the project's stages in order: skip what has not changed, resume what stopped, stop at
    people's work (exit 3) until it is done."""
    from biaskit.clitools import command_line

    from .run import EXIT_FAILED, command_for, run_project
    from .stages import StageFailed

    p = _load(opts.project, opts.workdir)
    try:
        res = run_project(p, opts, command=command_line(), echo=echo)
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


@StatusOptions.cli()
def status_command(opts: StatusOptions) -> None:
    """The whole picture: each stage's state, counts, what people still have to do, where the files are."""
    from .status import project_status, render_status

    st = project_status(_load(opts.project, opts.workdir, check_inputs=False))
    if opts.json_out:
        echo(json.dumps(st, ensure_ascii=False, indent=2))
    else:
        render_status(st)


def register(app: typer.Typer) -> None:
    """Mount ``init``, ``run`` and ``status`` on the ``biaskit`` root command."""
    app.command("init")(init_command)
    app.command("run")(run_command)
    app.command("status")(status_command)
