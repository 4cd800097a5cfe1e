"""What users see from the CLI: literal text (no rich markup), tables that do not wrap when piped,
help without a value type after flags (every command), options checked before a model loads, -q
silencing transformers' loading bars, and `evaluate cats` naming every file it wrote."""

from __future__ import annotations

import json
import os
import subprocess
import sys
from pathlib import Path

import pytest
from conftest import run_cli

REPO = Path(__file__).resolve().parents[1]


def _pairs_file(path: Path) -> Path:
    rows = [
        {
            "sent_more": "Women [bold]never[/] drive well :fire:.",
            "sent_less": "Men [bold]never[/] drive well :fire:.",
            "direction": "stereo",
            "bias_type": "gender",
            "lang": "en",
        },
        {
            "sent_more": "The poor man stole the bread.",
            "sent_less": "The rich man stole the bread.",
            "direction": "stereo",
            "bias_type": "socioeconomic",
            "lang": "en",
        },
        {
            "sent_more": "Old people cannot learn computers.",
            "sent_less": "Young people cannot learn computers.",
            "direction": "stereo",
            "bias_type": "age",
            "lang": "en",
        },
    ]
    path.write_text("".join(json.dumps(r) + "\n" for r in rows), encoding="utf-8")
    return path


# ---------------------------------------------------------------------------------- literal output
def test_console_prints_markup_emoji_and_brackets_literally(capsys):
    from rich.table import Table

    from biaskit.clitools import console

    t = Table(title="run [red]1[/]")
    t.add_column("model [v2]")
    t.add_row("pip install 'biaskit[annotation]' :fire: [/bold]")
    con = console()
    con.print(t)
    con.print("error [yellow]x[/] :smile:")
    out = capsys.readouterr().out
    for text in (
        "run [red]1[/]",
        "model [v2]",
        "pip install 'biaskit[annotation]' :fire: [/bold]",
        "error [yellow]x[/] :smile:",
    ):
        assert text in out, out


def test_pairs_cli_prints_paths_and_names_literally(tiny_gpt2, tmp_path, capsys):
    out = tmp_path / "run [1] :fire:"
    code, stdout, err = run_cli(
        [
            "evaluate",
            "pairs",
            "--data",
            str(_pairs_file(tmp_path / "p.jsonl")),
            "--model",
            str(tiny_gpt2),
            "--scorer",
            "clm",
            "--out",
            str(out),
            "-q",
        ],
        capsys,
    )
    assert code == 0, err
    assert f"wrote {out / 'summary.json'}" in stdout


def test_curate_prompts_show_keeps_brackets(tmp_path, capsys):
    d = tmp_path / "prompts"
    d.mkdir()
    (d / "t.toml").write_text(
        'id = "bracket-demo"\nversion = "1"\ntask = "sentences"\n'
        'description = "keeps [square] brackets"\n[variables]\nidentity = "a group"\n'
        '[template]\nsystem = "You write [bold]test[/bold] data."\n'
        'user = "Write about {identity} [one sentence]."\n'
        '[schema]\ntype = "object"\n',
        encoding="utf-8",
    )
    code, stdout, err = run_cli(["curate", "prompts", "--prompts-dir", str(d), "--show", "bracket-demo"], capsys)
    assert code == 0, err
    assert "You write [bold]test[/bold] data." in stdout and "[one sentence]" in stdout, stdout


def test_data_list_table_rows_do_not_wrap_when_piped(tmp_path):
    """rich assumes 80 columns on a pipe; our consoles are wide when not a terminal (no COLUMNS)."""
    env = {k: v for k, v in os.environ.items() if k not in ("COLUMNS", "LINES")}
    r = subprocess.run(
        [sys.executable, "-m", "biaskit.cli", "data", "list"],
        capture_output=True,
        text=True,
        env=env,
        stdin=subprocess.DEVNULL,
        timeout=120,
    )
    assert r.returncode == 0, r.stderr
    row = [ln for ln in r.stdout.splitlines() if "crows-pairs" in ln and "│" in ln]
    assert len(row) == 1 and "CrowS-Pairs (anonymized release)" in row[0] and "CC BY-SA 4.0" in row[0], r.stdout
    # COLUMNS still wins when the user sets it
    r = subprocess.run(
        [sys.executable, "-m", "biaskit.cli", "data", "list"],
        capture_output=True,
        text=True,
        env={**env, "COLUMNS": "60"},
        stdin=subprocess.DEVNULL,
        timeout=120,
    )
    assert max(len(ln) for ln in r.stdout.splitlines() if "│" in ln) <= 60


# ------------------------------------------------------------------------------------------- help
def _commands(group, path=()):
    """Every (command path, click command) under the typer app, the groups (and the root) included."""
    yield path, group
    for name, cmd in sorted(group.commands.items()):
        if getattr(cmd, "hidden", False):
            continue
        if hasattr(cmd, "commands"):
            yield from _commands(cmd, path + (name,))
        else:
            yield path + (name,), cmd


def test_every_commands_help_shows_no_type_after_flags(capsys, monkeypatch):
    import typer

    from biaskit.cli import app

    monkeypatch.setenv("COLUMNS", "200")
    root = typer.main.get_command(app)
    cmds = list(_commands(root))
    assert len(cmds) >= 30, [c for c, _ in cmds]  # the root, evaluate, curate, annotate, data
    n_flags = 0
    for path, cmd in cmds:
        code, out, err = run_cli([*path, "--help"], capsys)
        assert code == 0, (path, err)
        assert "<bool>" not in out, (path, out)
        flags = [p for p in cmd.params if getattr(p, "is_flag", False)]
        n_flags += len(flags)
        for p in cmd.params:  # options that take a value still show their type
            if (
                getattr(p, "param_type_name", "") == "option"
                and not getattr(p, "is_flag", False)
                and not getattr(p, "hidden", False)
                and p.opts[0] != "--help"
            ):
                if p.opts[0] in out and "int" in str(getattr(p, "type", "")).lower():
                    assert "<int>" in out, (path, p.opts)
        assert "--help" in out
    assert n_flags >= 10  # the check above was really exercised


# ------------------------------------------------------------------------------ options and loading
def test_scorer_options_are_checked_before_the_model_loads(tmp_path, capsys):
    """A model that does not exist would fail on loading: the option error must come first."""
    data = _pairs_file(tmp_path / "p.jsonl")
    code, _, err = run_cli(
        [
            "evaluate",
            "pairs",
            "--data",
            str(data),
            "--model",
            str(tmp_path / "no-such-model"),
            "--scorer",
            "clm",
            "--unit",
            "word",
            "--out",
            str(tmp_path / "o"),
        ],
        capsys,
    )
    assert code == 2 and "scorer 'clm' does not support unit 'word'" in err and "not found" not in err, err
    code, _, err = run_cli(
        [
            "evaluate",
            "pairs",
            "--data",
            str(data),
            "--model",
            str(tmp_path / "no-such-model"),
            "--scorer",
            "mlm",
            "--method",
            "mean",
            "--out",
            str(tmp_path / "o"),
        ],
        capsys,
    )
    assert code == 2 and "scorer 'mlm' has no method 'mean'" in err, err


def _run_in_pty(args: list[str], env: dict) -> tuple[int, str]:
    """Run a command with stdin/stdout/stderr on a pseudo-terminal (as a user at a terminal)."""
    import fcntl
    import pty
    import select
    import struct
    import termios

    master, slave = pty.openpty()
    fcntl.ioctl(slave, termios.TIOCSWINSZ, struct.pack("HHHH", 40, 120, 0, 0))  # a 120x40 terminal (tqdm sizes to it)
    p = subprocess.Popen(args, stdin=slave, stdout=slave, stderr=slave, env=env, cwd=REPO, close_fds=True)
    os.close(slave)
    chunks = []
    while True:
        r, _, _ = select.select([master], [], [], 1.0)
        if master in r:
            try:
                data = os.read(master, 65536)
            except OSError:  # the child closed the terminal
                break
            if not data:
                break
            chunks.append(data)
        elif p.poll() is not None:
            break
    p.wait(timeout=300)
    os.close(master)
    return p.returncode, b"".join(chunks).decode("utf-8", "replace")


@pytest.mark.skipif(sys.platform == "win32", reason="needs a POSIX pseudo-terminal")
def test_quiet_hides_transformers_loading_bars_on_a_terminal(tiny_gpt2, tmp_path):
    data = _pairs_file(tmp_path / "p.jsonl")
    env = {k: v for k, v in os.environ.items() if k != "BIASKIT_NO_PROGRESS"}
    env["COLUMNS"] = "120"
    cmd = [
        sys.executable,
        "-m",
        "biaskit.cli",
        "evaluate",
        "pairs",
        "--data",
        str(data),
        "--model",
        str(tiny_gpt2),
        "--scorer",
        "clm",
        "--no-cache",
    ]
    code, out = _run_in_pty(cmd + ["--out", str(tmp_path / "loud")], env)
    assert code == 0, out
    assert "Loading weights" in out  # on a terminal, without -q, transformers shows its bar (the test can fail)
    code, out = _run_in_pty(cmd + ["--out", str(tmp_path / "quiet"), "-q"], env)
    assert code == 0, out
    assert "Loading weights" not in out and "it/s]" not in out, out
    assert "Minimal-pair bias" in out  # the result table is still printed


def test_library_bars_restore_the_libraries_settings():
    from transformers.utils import logging as tf_logging

    from biaskit.progress import library_bars

    assert tf_logging.is_progress_bar_enabled()
    with library_bars(False):
        assert not tf_logging.is_progress_bar_enabled()
    assert tf_logging.is_progress_bar_enabled()


def test_cats_lists_every_file_it_wrote(tiny_gpt2, stereoset_jsonl, tmp_path, capsys):
    data = tmp_path / "cats.jsonl"
    data.write_text(
        "".join(stereoset_jsonl.read_text(encoding="utf-8").splitlines(keepends=True)[:6]), encoding="utf-8"
    )
    out = tmp_path / "cats"
    code, stdout, err = run_cli(
        [
            "evaluate",
            "cats",
            "--data",
            str(data),
            "--model",
            str(tiny_gpt2),
            "--scorer",
            "clm",
            "--out",
            str(out),
            "-q",
            "--protocol",
            "none",
        ],
        capsys,
    )
    assert code == 0, err
    wrote = [ln for ln in stdout.splitlines() if ln.startswith("wrote ")][0]
    written = sorted(p.name for p in out.iterdir() if not p.name.startswith("."))
    assert written == ["groups.csv", "predictions.json", "report.md", "scores.jsonl", "summary.json", "targets.csv"]
    for name in written:
        assert str(out / name) in wrote, (name, wrote)
