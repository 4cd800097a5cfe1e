"""``biaskit run``: execute a project's stages in order, skip what has not changed, resume what stopped.

For each enabled stage (:data:`~.project.STAGE_ORDER`):

1. its fingerprint is computed (:mod:`.state`); a stage recorded ``done`` with the same fingerprint,
   whose output is still the file it wrote, is **skipped** (its output feeds the next stage);
2. otherwise it runs. If the state holds an unfinished attempt with the same fingerprint (killed,
   interrupted, failed), the stage **resumes** on its files (the job runner re-reads finished LLM
   jobs, ``curate translate`` its finished pairs, a push lists the tasks already in Label Studio);
   a different fingerprint starts the stage's folder ``work/<stage>/`` afresh (the LLM and MT
   caches answer every request made before, so nothing paid for is paid again);
3. a human stage whose tasks lack annotators returns ``waiting``: the run stops there
   (:attr:`RunResult.status` ``waiting``, exit code 3) and the next run pulls again.
"""

from __future__ import annotations

import shutil
from collections.abc import Callable
from dataclasses import dataclass, field
from pathlib import Path
from typing import TYPE_CHECKING

from biaskit.errors import BiaskitError
from biaskit.options import say, speaking
from biaskit.progress import progress as progress_lines
from biaskit.redact import redact

from .project import Project
from .stages import STAGES, Context, Outcome, RunOptions, StageFailed, StageRunner
from .state import State, abs_path, hash_path, lock, now, rel_path, shown_path

EXIT_DONE, EXIT_FAILED, EXIT_INPUT, EXIT_WAITING = 0, 1, 2, 3


if TYPE_CHECKING:
    from .options import RunCommandOptions


class StageError(BiaskitError):
    """A stage stopped on bad input or an unreachable service (exit 2); the message names the stage."""


@dataclass
class RunResult:
    status: str  # done | waiting
    ran: list[str] = field(default_factory=list)
    skipped: list[str] = field(default_factory=list)
    waiting: str | None = None  # the human stage the run stopped at
    message: str = ""

    @property
    def exit_code(self) -> int:
        return EXIT_WAITING if self.status == "waiting" else EXIT_DONE


def produced(workdir: Path, st: dict) -> Path | None:
    """The output a stage recorded (what the next stage reads), or None."""
    p = (st.get("produces") or {}).get("path")
    return abs_path(workdir, p) if p else None


def can_skip(workdir: Path, st: dict, fp: str, options: RunOptions) -> bool:
    """A stage is skipped when it is done with this fingerprint, its output is intact, it was not
    a partial human stage (unless this run is ``--partial`` too) and no failed LLM job is to be retried."""
    if st.get("status") != "done" or st.get("fingerprint") != fp:
        return False
    p = produced(workdir, st)
    if p is None or hash_path(p) != st["produces"].get("sha256"):
        return False
    if st.get("partial") and not options.partial:
        return False
    if options.retry_failed and st.get("errors"):
        return False
    return True


def run_project(
    project: Project,
    opts: RunCommandOptions,
    *,
    command: str | None = None,
    echo: Callable[[str], None] = lambda s: None,
) -> RunResult:
    """Run the project's stages (see the module docstring) with the options of ``biaskit run``
    (``opts.project`` / ``opts.workdir`` are how the command found ``project``): ``from_stage``: run it
    and the later ones even when unchanged; ``until``: stop after this stage; ``quiet``: no progress."""
    from_stage, until = opts.from_stage, opts.until
    check_stage_names(project, from_stage, until)
    options = RunOptions(partial=opts.partial, retry_failed=opts.retry_failed, progress=not opts.quiet, command=command)
    with lock(project.workdir):
        state = State(project.workdir)
        state.data["project"] = str(project.file)
        state.save()
        ctx = Context(project, state, options, echo=echo)
        result = RunResult("done")
        forced = False
        for name in project.enabled():
            forced = forced or name == from_stage
            if not run_step(ctx, name, forced, result):  # a human stage waits for people: the run stops
                return result
            if name == until:
                break
        return result


def check_stage_names(project: Project, from_stage: str | None, until: str | None) -> None:
    """``--from`` / ``--until`` name stages the project enables."""
    for opt, picked in (("from_stage", from_stage), ("until", until)):
        if picked is not None and picked not in project.enabled():
            raise BiaskitError(
                f"{say(opt, picked)}: that stage is not enabled in {project.file}. Fix: use one of "
                f"{', '.join(project.enabled())}."
            )


def run_step(ctx: Context, name: str, forced: bool, result: RunResult) -> bool:
    """Stage ``name``: skipped when unchanged (unless ``forced``), else run and recorded in the state
    and in ``result``. False when it waits for people (the run stops there)."""
    stage = STAGES[name](ctx)
    try:
        fp = stage.fingerprint()
    except BiaskitError as exc:
        raise StageError(f"stage '{name}': {exc}") from None
    workdir = ctx.project.workdir
    st = ctx.state.get(name)
    if not forced and can_skip(workdir, st, fp, ctx.options):
        kept = produced(workdir, st)
        assert kept is not None  # can_skip found it there, intact
        ctx.artifacts[stage.output] = kept
        result.skipped.append(name)
        ctx.echo(f"{name}: unchanged, skipped ({st.get('message', '')})")
        return True
    out = execute(ctx, stage, fp, st, result)
    for w in out.warnings:
        ctx.echo(f"warning: {name}: {w}")
    outputs = {k: rel_path(workdir, v) for k, v in out.outputs.items()}
    if out.status == "waiting":
        ctx.state.update(
            name, status="waiting", progress=out.progress, message=out.message, outputs=outputs, checked=now()
        )
        result.status, result.waiting, result.message = "waiting", name, out.message
        result.ran.append(name)
        return False
    assert out.produces is not None, f"stage {name} finished without an output"
    ctx.state.update(
        name,
        status="done",
        fingerprint=fp,
        finished=now(),
        message=out.message,
        produces={"path": rel_path(workdir, out.produces), "sha256": hash_path(out.produces)},
        outputs=outputs,
        progress=out.progress,
        partial=out.partial,
        errors=out.errors,
        warnings=out.warnings,
        summary=_small(out.summary),
    )
    ctx.artifacts[stage.output] = out.produces
    result.ran.append(name)
    ctx.echo(f"{name}: done: {out.message}")
    return True


def execute(ctx: Context, stage: StageRunner, fp: str, st: dict, result: RunResult) -> Outcome:
    """Run ``stage`` (resuming on its files when the state holds an unfinished attempt with fingerprint
    ``fp``; a new attempt starts its folder afresh); a failure is recorded in the state and raised
    with the stage's name."""
    name, state = stage.name, ctx.state
    if st.get("attempt") != fp and stage.folder.exists():
        shutil.rmtree(stage.folder)  # a new attempt starts afresh; the caches keep it cheap
    ctx.echo(
        f"{name}: {'resuming' if st.get('attempt') == fp and st.get('status') != 'done' else 'running'} "
        f"({stage.title}) ..."
    )
    state.update(name, status="running", attempt=fp, started=now(), error=None)
    stage.current_fingerprint = fp
    try:
        # hints name this project's keys, not the stage command's flags; without a terminal, a line
        # every 30 s says the stage still runs when nothing inside it said how far it is
        with speaking(stage.speaker()), progress_lines(None, name, enabled=ctx.options.progress, heartbeat=True):
            return stage.run()
    except KeyboardInterrupt:
        from biaskit.clitools import saved_on_interrupt

        state.update(name, status="interrupted", finished=now())
        done = [n for n in result.ran + result.skipped if n != name]
        saved_on_interrupt(
            f"stage '{name}' stopped and resumes on its files in {rel_path(ctx.project.workdir, stage.folder)}"
            + (f" (done before it: {', '.join(done)})" if done else ""),
            first=True,
        )
        raise
    except StageFailed as exc:
        state.update(name, status="failed", error=redact(str(exc)), finished=now())
        raise StageFailed(f"stage '{name}': {exc}") from None
    except BiaskitError as exc:
        state.update(name, status="failed", error=redact(str(exc)), finished=now())
        raise StageError(f"stage '{name}': {exc}") from None
    except BaseException as exc:
        state.update(name, status="failed", error=redact(f"{type(exc).__name__}: {exc}"), finished=now())
        raise


def command_for(project: Project, verb: str = "run", *flags: str) -> str:
    """``biaskit VERB`` for this project as typed in the current folder: ``--project`` unless the
    project file is ./biaskit.toml, ``--workdir`` when the outputs go elsewhere (a hint that works
    where it is printed)."""
    import shlex

    from .project import PROJECT_FILE

    parts = ["biaskit", verb]
    f = Path(project.file)
    if shown_path(f) != PROJECT_FILE:
        parts += ["--project", shown_path(f.parent) if f.name == PROJECT_FILE else shown_path(f)]
    if Path(project.workdir).resolve() != Path(project.root).resolve():
        parts += ["--workdir", shown_path(project.workdir)]
    return shlex.join(parts + list(flags))


def _small(obj, depth: int = 0):
    """A stage summary for the state file: nested dicts kept shallow, long lists cut."""
    if isinstance(obj, dict):
        return {k: _small(v, depth + 1) for k, v in obj.items()} if depth < 3 else "..."
    if isinstance(obj, list):
        return [_small(v, depth + 1) for v in obj[:20]]
    return obj if isinstance(obj, (str, int, float, bool, type(None))) else str(obj)
