"""Every `biaskit ...` command shown in docs/*.md names a command that exists and only options it has.

tests/test_readme.py runs README.md's and docs/datasets.md's commands; the other pages' commands
need models, services or data a test machine may not have, so here they are checked against the
CLI itself: the sub-command path resolves and every ``--option`` is one of that command's options
(a renamed or removed option in the code, or a typo in the docs, fails here). Conflict markers
left by a merge fail too.
"""

from __future__ import annotations

import re
import subprocess
from pathlib import Path

import pytest
import typer.main
from test_readme import extract_commands

REPO = Path(__file__).resolve().parents[1]
PAGES = sorted((REPO / "docs").glob("*.md"))
COMMANDS = [c for p in PAGES for c in extract_commands(p) if c.argv[0] == "biaskit"]


def _root():
    from biaskit.cli import app

    return typer.main.get_command(app)


def _resolve(argv: list[str]):
    # typer may ship its own copy of click: duck typing, and each command's own context class
    cmd, rest = _root(), argv[1:]
    ctx = cmd.context_class(cmd, info_name="biaskit")
    while _is_group(cmd) and rest and not rest[0].startswith("-"):
        sub = cmd.get_command(ctx, rest[0])
        if sub is None:
            break
        cmd, rest = sub, rest[1:]
        ctx = cmd.context_class(cmd, parent=ctx, info_name=cmd.name)
    return cmd, rest


def _is_group(cmd) -> bool:
    return hasattr(cmd, "get_command") and hasattr(cmd, "list_commands")


def _options(cmd) -> set[str]:
    return {o for p in cmd.params for o in (*getattr(p, "opts", ()), *getattr(p, "secondary_opts", ()))} | {"--help"}


def test_the_pages_show_commands():
    assert len(PAGES) >= 8 and len(COMMANDS) >= 60, (len(PAGES), len(COMMANDS))


@pytest.mark.parametrize("c", COMMANDS, ids=lambda c: f"{c.doc}:{c.line}")
def test_documented_command_exists_with_its_options(c):
    cmd, rest = _resolve(c.argv)
    assert not _is_group(cmd), f"{c.doc}:{c.line}: no such command: {c.text}"
    known = _options(cmd)
    used = {t.split("=", 1)[0].strip("[]()|") for t in rest if t.lstrip("[(|").startswith("--")}
    unknown = sorted(o for o in used if o.lstrip("[(|") not in known)
    assert not unknown, f"{c.doc}:{c.line}: {' '.join(c.argv[:3])} has no option {unknown} (it has {sorted(known)})"


def test_no_merge_conflict_markers_in_tracked_files():
    files = subprocess.run(["git", "ls-files"], cwd=REPO, capture_output=True, text=True, check=True).stdout.split()
    bad = []
    for f in files:
        p = REPO / f
        if p.suffix not in {".py", ".md", ".toml", ".json", ".cfg", ".txt", ".yml", ".yaml"} and p.name != "Makefile":
            continue
        try:
            text = p.read_text(encoding="utf-8")
        except (OSError, UnicodeDecodeError):
            continue
        bad += [f"{f}:{i}" for i, line in enumerate(text.splitlines(), 1) if re.match(r"^(<{7} |>{7} |={7}$)", line)]
    assert not bad, bad
