"""``biaskit status``: the whole picture of a project, from its state file and its files (offline: no
LLM, no Label Studio; the human stages show what the last ``biaskit run`` pulled).

Each enabled stage gets one of: ``done``; ``stale`` (done, but its input or options changed: the next
run redoes it); ``waiting`` (people: "hi review: 57 of 142 tasks have 3 judgments"); ``failed``;
``interrupted`` (killed or stopped: the next run resumes it); ``running`` (a ``biaskit run`` holds
the project now); ``pending`` (not run yet).
"""

from __future__ import annotations

from pathlib import Path
from typing import Any

from biaskit.errors import BiaskitError

from .project import Project
from .run import can_skip, produced
from .stages import STAGES, Context, RunOptions
from .state import State, is_locked


def project_status(project: Project) -> dict[str, Any]:
    """The status as a dict (what ``biaskit status --json`` prints)."""
    state = State(project.workdir)
    running = is_locked(project.workdir)
    ctx = Context(project, state, RunOptions())
    rows: list[dict[str, Any]] = []
    for name in project.enabled():
        stage = STAGES[name](ctx)
        st = state.get(name)
        reads = stage.inputs
        ready = stage.opts.input is not None or not reads or bool(set(reads) & set(ctx.artifacts))
        status, note = st.get("status") or "pending", None
        if status == "running" and not running:
            status = "interrupted"
        if ready and status == "done":
            try:
                if not can_skip(project.workdir, st, stage.fingerprint(), RunOptions()):
                    status, note = "stale", "its input, options or output changed: the next run redoes it"
            except BiaskitError as exc:
                status, note = "stale", f"cannot be checked: {exc}"
        if status in ("done", "stale") and (kept := produced(project.workdir, st)) is not None:
            ctx.artifacts[stage.output] = kept
        rows.append(
            {
                "name": name,
                "title": stage.title,
                "human": stage.human,
                "status": status,
                "detail": note or st.get("error") or st.get("message") or "",
                "progress": st.get("progress"),
                "partial": bool(st.get("partial")),
                "outputs": dict(st.get("outputs") or {}),
                "started": st.get("started"),
                "finished": st.get("finished") or st.get("checked"),
            }
        )
    from .run import command_for

    return {
        "project": str(project.file),
        "name": project.name,
        "workdir": str(project.workdir),
        "state_file": str(state.path),
        "running": running,
        "stages": rows,
        "next": _next(rows, running, command_for(project), command_for(project, "run", "--partial")),
    }


def _next(rows: list[dict], running: bool, run: str = "biaskit run", partial: str = "biaskit run --partial") -> str:
    """What to do next; ``run`` / ``partial``: the commands for this project, as typed here."""
    if running:
        return "a `biaskit run` is working on this project now."
    todo = [r for r in rows if r["status"] != "done"]
    if not todo:
        return f"every stage is done; `{run}` re-checks and skips what has not changed."
    first = todo[0]
    s, n = first["status"], first["name"]
    if s == "waiting":
        p = first.get("progress") or {}
        where = f" in Label Studio project '{p.get('project')}' ({p.get('url')})" if p.get("project") else ""
        return (
            f"waiting for people: {first['detail'].split(' (Label Studio', 1)[0]}{where}; then `{run}` "
            f"(or `{partial}` to go on with the answers there are)."
        )
    if s == "failed":
        return f"stage '{n}' failed (above); fix it, then `{run}` resumes it."
    if s == "interrupted":
        return f"stage '{n}' was interrupted; `{run}` resumes it."
    return f"`{run}` will run: {', '.join(r['name'] for r in todo)}."


def render_status(st: dict[str, Any]) -> None:
    """Print the status as a table (literal text, see :func:`biaskit.clitools.console`)."""
    from rich.table import Table

    from biaskit.clitools import console, echo

    echo(f"project {st['name']} ({st['project']}); working folder {st['workdir']}")
    t = Table("stage", "state", "detail", "files")
    for r in st["stages"]:
        state = r["status"] + (" (partial)" if r["partial"] else "") + (" [people]" if r["human"] else "")
        t.add_row(r["name"], state, r["detail"], "\n".join(f"{k}: {v}" for k, v in r["outputs"].items()))
    console().print(t)
    echo(f"next: {st['next']}")


def find_workdir_project(workdir: Path | None) -> Path | None:
    """The project file a working folder's state names (for ``--workdir`` without ``--project``)."""
    if workdir is None:
        return None
    st = State(Path(workdir))
    p = st.data.get("project")
    return Path(p) if p else None
