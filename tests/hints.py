"""The hints of biaskit's messages, and whether each works where it is printed (issue 20).

A *hint* is what a message tells a user to type or set:

- a command in backticks: `` `biaskit release verify rel` `` -- it must name a real command, only
  options that command has, and, for a file or folder it reads, a path that exists from the folder
  the message was printed in (ALL-CAPS words such as FILE, DIR, MODEL are placeholders; ``...``
  stands for the rest of a command line);
- a flag in a message's ``Fix:`` part (``--skip-invalid``): an option of the command that printed it
  (``biaskit run`` takes its options from biaskit.toml, so there a flag must be one of ``run``'s);
- a biaskit.toml key (``base_url = "URL" in [llm]``, ``card_text in [stages.release]``, ``remove
  normalise from [stages.evaluate]``): a key the project file's model accepts in that table;
- a make target (`` `make test-data` ``): a target of the Makefile.

A hint must also not suggest a setting that is in force already (issue 28): ``key = VALUE in [table] of
FILE`` when FILE sets that key to VALUE (or leaves it at that default), ``--flag VALUE`` (or ``pass
--switch``) when the command line that printed it has it (``argv``).

``resolve(message, command)`` returns the hints that do not work. tests/test_fuzz_cli.py resolves
every message of every fuzzed run; tests/test_hints.py the messages of the paths fuzzing does not
reach (no endpoint, a placeholder URL, the pipeline's status, the evaluate errors under a command and
under `biaskit run`). Issue 21 derives options from one model (biaskit/options.py): the flags and keys
a hint names come from it, and this module checks them against the real CLI and project-file model.
"""

from __future__ import annotations

import re
import shlex
from pathlib import Path

REPO = Path(__file__).resolve().parents[1]
BACKTICK = re.compile(r"`([^`\n]+)`")
FLAG = re.compile(r"(?<![\w`/.=-])(--[a-z][a-z0-9-]*)")
TOML_SET = re.compile(r"\b([a-z_]+) = (?:\"[^\"]*\"|[^\s,;]+) in \[([a-z_.]+)\]")
TOML_KEY = re.compile(r"(?<!= )\b([a-z_]+) in \[([a-z_.]+)\]")  # (not the value of a key = value hint)
TOML_REMOVE = re.compile(r"\bremove ([a-z_]+) from \[([a-z_.]+)\]")
TOML_SET_IN = re.compile(r'\b([a-z_]+) = ("[^"]*"|\[[^\]]*\]|[^\s,;]+) in \[([a-z_.]+)\] of (\S+?\.toml)\b')
FLAG_SET = re.compile(r"(?<![\w`/.=-])(pass |add |use |or |and |run )?(--[a-z][a-z0-9-]*)(?:[ =]([^\s,;()`]+))?")
PLACEHOLDER = re.compile(r"^[A-Z][A-Z0-9_-]*(?:\.[a-z0-9]+)*(?:[=:][^\s]*)?$|^<.*>$|^X\.Y\.Z$")


def _leaf_commands() -> dict[str, object]:
    from typer.main import get_command

    from biaskit.cli import app

    out: dict[str, object] = {}

    def walk(c, prefix):
        if hasattr(c, "commands"):
            for name, sub in c.commands.items():
                walk(sub, prefix + [name])
        else:
            out[" ".join(prefix)] = c

    walk(get_command(app), [])
    return out


_COMMANDS: dict[str, object] = {}


def commands() -> dict[str, object]:
    if not _COMMANDS:
        _COMMANDS.update(_leaf_commands())
    return _COMMANDS


def _options(cmd) -> dict[str, object]:
    out = {"--help": None}
    for p in cmd.params:
        for o in list(getattr(p, "opts", [])) + list(getattr(p, "secondary_opts", [])):
            if o.startswith("-"):
                out[o] = p
    return out


def check_command(text: str, cwd: Path) -> str | None:
    """Why the command line ``text`` (``biaskit ...``) would not work from ``cwd``, or None."""
    from biaskit.paths import path_arg_of

    try:
        words = shlex.split(text)
    except ValueError as exc:
        return f"`{text}`: not a command line ({exc})"
    words = words[1:]
    leaves = commands()
    name = None
    for k in range(len(words), 0, -1):
        if " ".join(words[:k]) in leaves:
            name, rest = " ".join(words[:k]), words[k:]
            break
    if name is None:
        if (
            words
            and not words[0].startswith("-")
            and any(c.startswith(words[0] + " ") for c in leaves)
            and (len(words) == 1 or words[1] in ("...", "--help") or PLACEHOLDER.match(words[1]))
        ):
            return None  # a command group (`biaskit curate ...`)
        return f"`{text}`: no such command"
    opts = _options(leaves[name])
    i = 0
    while i < len(rest):
        w = rest[i]
        i += 1
        if w == "...":
            continue
        if w.startswith("--"):
            flag, eq, val = w.partition("=")
            if flag not in opts:
                return f"`{text}`: `biaskit {name}` has no option {flag}"
            p = opts[flag]
            if p is not None and not getattr(p, "is_flag", False) and not getattr(p, "count", False):
                if not eq:
                    if i >= len(rest):
                        return f"`{text}`: {flag} needs a value"
                    val, i = rest[i], i + 1
                pa = path_arg_of(p)
                if (
                    pa is not None
                    and pa.role == "in"
                    and pa.must_exist
                    and not PLACEHOLDER.match(val)
                    and val != "..."
                    and not (cwd / Path(val).expanduser()).exists()
                ):
                    return f"`{text}`: {flag} {val} does not exist from {cwd}"
            continue
        # a positional argument: a path the command reads must exist
        pos = [p for p in leaves[name].params if getattr(p, "param_type_name", "") == "argument"]
        for p in pos:
            pa = path_arg_of(p)
            if (
                pa is not None
                and pa.role == "in"
                and not PLACEHOLDER.match(w)
                and not (cwd / Path(w).expanduser()).exists()
                and not w.startswith("-")
            ):
                return f"`{text}`: {w} does not exist from {cwd}"
    return None


def _toml_tables() -> dict[str, set[str]]:
    """Every table of biaskit.toml and its keys (from the project file's pydantic models)."""
    from pydantic import BaseModel

    from biaskit.pipeline.project import ProjectFile

    out: dict[str, set[str]] = {}

    def walk(model, prefix):
        out[prefix] = set(model.model_fields) if prefix else set()
        for fname, field in model.model_fields.items():
            for cand in getattr(field.annotation, "__args__", (field.annotation,)):
                if isinstance(cand, type) and issubclass(cand, BaseModel):
                    walk(cand, f"{prefix}.{fname}" if prefix else fname)

    walk(ProjectFile, "")
    return out


def check_toml(key: str, table: str) -> str | None:
    tables = _toml_tables()
    if table not in tables:
        return f"[{table}]: no such table in biaskit.toml"
    if key not in tables[table]:
        return f"{key} in [{table}]: [{table}] has no key {key}"
    return None


def make_targets() -> set[str]:
    text = (REPO / "Makefile").read_text(encoding="utf-8")
    return set(re.findall(r"(?m)^([a-z][a-z0-9-]*):", text))


def hints(message: str) -> dict[str, list]:
    """The hints of one message, by kind."""
    cmds = [c for c in BACKTICK.findall(message) if c.startswith("biaskit ")]
    makes = [c.split()[1] for c in BACKTICK.findall(message) if c.startswith("make ") and len(c.split()) > 1]
    m = re.search(r"(?:^|\s)Fix: ", message)
    fix = message[m.end() :] if m else ""
    flags = FLAG.findall(BACKTICK.sub(" ", fix))
    keys = TOML_SET.findall(message) + TOML_KEY.findall(message) + TOML_REMOVE.findall(message)
    return {"commands": cmds, "flags": flags, "toml": keys, "make": makes}


def _toml_in_force(key: str, value: str, table: str, file: Path) -> bool:
    """Whether the project file ``file`` sets ``key`` of ``[table]`` to ``value`` (a TOML value), or
    leaves it at that default."""
    import tomllib

    from pydantic import ValidationError

    from biaskit.pipeline.project import ProjectFile

    try:
        want = tomllib.loads(f"v = {value}")["v"]
        raw = tomllib.loads(file.read_text(encoding="utf-8"))
    except (OSError, ValueError):
        return False
    try:
        obj: object = ProjectFile.model_validate(raw)
        get = getattr
    except ValidationError:  # a broken file: only what it says itself
        obj, get = raw, lambda o, k, d=None: o.get(k, d) if isinstance(o, dict) else d
    for part in [*table.split("."), key]:
        obj = get(obj, part, None)
        if obj is None:
            return False
    return obj == want


def in_force(message: str, argv: list[str] | None, cwd: Path) -> list[str]:
    """The hints of ``message`` that suggest a setting in force already (see the module docstring)."""
    bad: list[str] = []
    m = re.search(r"(?:^|\s)Fix: ", message)
    if not m:  # (a message may say what is set; only its fix suggests)
        return bad
    for key, value, table, file in TOML_SET_IN.findall(message[m.end() :]):
        if not PLACEHOLDER.match(value.strip('"')) and _toml_in_force(key, value, table, cwd / file):
            bad.append(f"{key} = {value} in [{table}]: {file} sets it already")
    if argv:
        given = {w.partition("=")[0]: i for i, w in enumerate(argv) if w.startswith("--")}
        for verb, flag, value in FLAG_SET.findall(BACKTICK.sub(" ", message[m.end() :])):
            i, value = given.get(flag), value.rstrip(".")
            if i is None or PLACEHOLDER.match(value) or value in ("...", "or", "and", "to", "with"):
                continue
            has = argv[i].partition("=")[2] or (argv[i + 1] if i + 1 < len(argv) else "")
            if (value and value == has) or (not value and verb):
                bad.append(f"{flag} {value}".strip() + ": the command line has it already")
    return bad


def resolve(message: str, command: str | None, cwd: Path | None = None, argv: list[str] | None = None) -> list[str]:
    """The hints of ``message`` (printed by ``biaskit COMMAND ARGV`` in ``cwd``) that do not work."""
    cwd = Path(cwd or Path.cwd())
    h = hints(message)
    bad = in_force(message, argv, cwd)
    for c in h["commands"]:
        why = check_command(c, cwd)
        if why:
            bad.append(why)
    if command is not None and command in commands():
        opts = _options(commands()[command])
        for f in h["flags"]:
            if f not in opts:
                bad.append(f"{f}: `biaskit {command}` has no such option")
    for key, table in h["toml"]:
        why = check_toml(key, table)
        if why:
            bad.append(why)
    targets = make_targets()
    for t in h["make"]:
        if t not in targets:
            bad.append(f"`make {t}`: no such target")
    return bad


def resolve_output(text: str, command: str | None, cwd: Path | None = None, argv: list[str] | None = None) -> list[str]:
    """:func:`resolve` over every line of a command's output (stdout + stderr)."""
    out = []
    for line in text.splitlines():
        if "`" in line or "Fix: " in line or " in [" in line:
            out += [f"{why} (in: {line.strip()[:160]})" for why in resolve(line, command, cwd, argv)]
    return out
