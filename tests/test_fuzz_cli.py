"""Bad inputs for every command that reads or writes a file (issue 12): no traceback, exit 2, the
file named, nothing left behind; inputs that are fine (a UTF-8 BOM, CRLF line ends) are accepted.

The table of commands and their valid sample inputs is ``tests/fuzz_table.py``. For each command the
fuzzer runs the valid command once (and once more into its own output folder), then again with each
file argument broken in every way its format allows (see :func:`mutations`), and each output
argument pointed at an existing folder, an existing file, a path under a file, a folder holding
other files and a read-only folder. Runs go in-process through ``biaskit.cli.main`` (fast);
``test_the_real_entry_point_behaves_the_same`` runs a sample through the installed ``biaskit``
console script. The 50 MB cell is in the slow variant (``-m slow``); the fast suite uses a 1.2 MB
cell, already over the limit.
"""

from __future__ import annotations

import codecs
import contextlib
import csv
import io
import json
import os
import re
import shlex
import shutil
import subprocess
import sys
import tempfile
from collections.abc import Callable
from dataclasses import dataclass
from pathlib import Path

import pytest
from fuzz_table import (
    COMMANDS,
    DAMAGED,
    HOSTILE_NAMES,
    PAIRS,
    PATH_FIELDS,
    PLANTED,
    SAMPLES,
    SHARED_OPTIONS,
    UNOWNED_DIRS,
    Cmd,
    Damage,
    Sample,
    _edit_parquet,
)
from hints import resolve_output
from llm_standin import standin_server  # noqa: F401 (a fixture: the echoed-secret cases)

HUGE_FAST = 1_200_000
HUGE_SLOW = 50_000_000
STATS = {"cases": 0, "failures": 0, "commands": 0}
PLACEHOLDER = re.compile(r"\{(in|use|out|outdir|model)(?::([\w.]+))?\}")


# ------------------------------------------------------------------------------------------ library
@pytest.fixture(scope="session")
def library(tmp_path_factory) -> dict[str, Path]:
    """Every valid sample, each in a folder of its own (copied per case, siblings included)."""
    root = tmp_path_factory.mktemp("fuzz-library")
    out = {}
    for name, s in SAMPLES.items():
        d = root / name
        d.mkdir()
        out[name] = s.build(d)
    return out


def _copy_sample(src: Path, dest_dir: Path) -> Path:
    dest_dir.mkdir(parents=True, exist_ok=True)
    if src.is_dir():
        return Path(shutil.copytree(src, dest_dir / src.name))
    for f in src.parent.iterdir():  # siblings too (OUT.rejected.jsonl next to an applied file)
        if f.is_file():
            shutil.copy2(f, dest_dir / f.name)
    return dest_dir / src.name


# ------------------------------------------------------------------------------------------ mutations
@dataclass
class Mutation:
    name: str
    expect: str  # refuse (exit 2, file named, nothing written) | accept (as the valid run) | either (one of the
    #             two) | any (no traceback; exit 2 with one error line, which may be about something else)


def _csv_rows(path: Path) -> list[list[str]]:
    with open(path, encoding="utf-8", newline="") as fh:
        return list(csv.reader(fh))


def _write_csv(path: Path, rows: list[list[str]]) -> None:
    buf = io.StringIO()
    csv.writer(buf, lineterminator="\n").writerows(rows)
    path.write_text(buf.getvalue(), encoding="utf-8")


def _jsonl_rows(path: Path) -> list[dict]:
    return [json.loads(x) for x in path.read_text(encoding="utf-8").splitlines() if x.strip()]


def _write_jsonl(path: Path, rows: list[dict]) -> None:
    path.write_text("".join(json.dumps(r, ensure_ascii=False) + "\n" for r in rows), encoding="utf-8")


def _first_text_key(rec: dict) -> str:
    return next(k for k, v in rec.items() if isinstance(v, str) and v)


def _insert(data: bytes, what: bytes) -> bytes:
    """``what`` after the first letter (in JSON: inside the first string value)."""
    m = re.search(rb'": "[A-Za-z]', data) or re.search(rb"[A-Za-z]", data)
    i = m.end() if m else 0
    return data[:i] + what + data[i:]


def mutations(sample: Sample, huge: int) -> list[tuple[Mutation, Callable[[Path], Path]]]:
    """(mutation, apply(path) -> path) for a sample's format; ``apply`` edits a private copy."""

    def missing(p):
        shutil.rmtree(p) if p.is_dir() else p.unlink()
        return p

    def folder(p):
        p.unlink()
        p.mkdir()
        (p / "x.csv").write_text("a\n1\n")
        return p

    def file_instead(p):
        shutil.rmtree(p)
        p.write_text("not a folder\n")
        return p

    def write_bytes(data: bytes):
        def f(p):
            p.write_bytes(data)
            return p

        return f

    def transform(fn):
        def f(p):
            p.write_bytes(fn(p.read_bytes()))
            return p

        return f

    R, A, E = "refuse", "accept", "either"
    out: list = [(Mutation("missing", R), missing)]
    fmt = sample.fmt
    if fmt == "dir":

        def bad_member(p):
            order = {".json": 0, ".jsonl": 1, ".toml": 2, ".csv": 3}
            # a release's own metadata first (croissant.json, which no command but verify reads, sorts before it)
            files = sorted(
                (f for f in p.rglob("*") if f.is_file()),
                key=lambda f: (f.name != "release.json", order.get(f.suffix, 9), str(f)),
            )
            files[0].write_bytes(b'\xff{"broken": \x00')
            return p

        def empty_dir(p):
            shutil.rmtree(p)
            p.mkdir()
            return p

        out += [(Mutation("a file, not a folder", R), file_instead), (Mutation("empty folder", E), empty_dir)]
        if any(p.is_file() for p in SAMPLE_PATHS.get(sample.name, Path("/nonexistent")).rglob("*")):
            out.append((Mutation("a corrupt file inside", R), bad_member))
        return out
    out.append((Mutation("a folder, not a file", R), folder))
    if fmt == "bytes":
        return out + [(Mutation("empty", R), write_bytes(b""))]
    text_like = [
        (Mutation("invalid UTF-8", R), transform(lambda b: _insert(b, b"caf\xe9"))),
        (Mutation("UTF-16 with BOM", R), transform(lambda b: b.decode("utf-8").encode("utf-16"))),
        (Mutation("UTF-16 without BOM", R), transform(lambda b: b.decode("utf-8").encode("utf-16-le"))),
        (Mutation("UTF-8 BOM", A), transform(lambda b: codecs.BOM_UTF8 + b)),
        (Mutation("CRLF line ends", A), transform(lambda b: b.replace(b"\r\n", b"\n").replace(b"\n", b"\r\n"))),
        (Mutation("empty", E), write_bytes(b"")),
    ]
    if fmt == "text":
        return out + text_like + [(Mutation("NUL byte", R), transform(lambda b: _insert(b, b"\x00")))]
    if fmt == "json":

        def wrong_shape(p):
            p.write_text('"just a string"\n')
            return p

        return (
            out
            + text_like
            + [
                (Mutation("NUL byte", R), transform(lambda b: _insert(b, b"\x00"))),
                (Mutation("truncated", R), transform(lambda b: b[: len(b) // 2])),
                (Mutation("not the expected JSON shape", R), wrong_shape),
            ]
        )
    if fmt == "csv":

        def rows_edit(fn):
            def f(p):
                rows = _csv_rows(p)
                _write_csv(p, fn(rows))
                return p

            return f

        def longest(rows) -> int:
            return max(range(len(rows[1])), key=lambda k: len(rows[1][k]))

        def enum(rows):
            rows[1][rows[0].index(sample.enum[0])] = sample.enum[1]
            return rows

        def nul(rows):
            j = longest(rows)
            rows[1][j] = rows[1][j][:2] + "\x00" + rows[1][j][2:]
            return rows

        def esc(rows):
            j = longest(rows)
            rows[1][j] = rows[1][j] + "\x1b[31m"
            return rows

        def huge_cell(rows):
            rows[1][longest(rows)] = "x" * huge
            return rows

        out += text_like + [
            (Mutation("header only", E), rows_edit(lambda r: r[:1])),
            (Mutation("wrong columns", R), rows_edit(lambda r: [[f"x_{h}" for h in r[0]]] + r[1:])),
            (Mutation("extra column", E), rows_edit(lambda r: [r[0] + ["extra_col"]] + [x + ["x"] for x in r[1:]])),
            (Mutation("NUL in a cell", R), rows_edit(nul)),
            (Mutation("ESC in a cell", R), rows_edit(esc)),
            (Mutation(f"a {huge:,}-character cell", R), rows_edit(huge_cell)),
            (Mutation("last row cut", E), transform(lambda b: b.rstrip(b"\n")[:-4])),
            (Mutation("unclosed quote", E), transform(lambda b: b.replace(b"\n", b'\n"', 1))),
        ]
        if sample.enum:
            out.append((Mutation(f"bad {sample.enum[0]} value", R), rows_edit(enum)))
        if sample.unique:
            out.append((Mutation(f"duplicate {sample.unique}", R), rows_edit(lambda r: r + [r[1]])))
        return out
    assert fmt == "jsonl", fmt

    def recs_edit(fn):
        def f(p):
            _write_jsonl(p, fn(_jsonl_rows(p)))
            return p

        return f

    def enum(rs):
        rs[0][sample.enum[0]] = sample.enum[1]
        return rs

    def escaped_nul(rs):
        k = _first_text_key(rs[0])
        rs[0][k] = rs[0][k] + "\u0000"
        return rs

    def huge_value(rs):
        k = _first_text_key(rs[0])
        rs[0][k] = "x" * huge
        return rs

    def truncated(b):
        b = b.rstrip(b"\n")
        cut = b.rfind(b"\n") + 1
        return b[: cut + (len(b) - cut) // 2]

    out += text_like + [
        (Mutation("raw NUL byte", R), transform(lambda b: _insert(b, b"\x00"))),
        (Mutation("escaped NUL (\\u0000) in a value", R), recs_edit(escaped_nul)),
        (Mutation("wrong fields", R), recs_edit(lambda rs: [{f"x_{k}": v for k, v in r.items()} for r in rs])),
        (Mutation("extra field", E), recs_edit(lambda rs: [{**r, "extra_field": 1} for r in rs])),
        (Mutation(f"a {huge:,}-character value", R), recs_edit(huge_value)),
        (Mutation("last line cut (truncated)", R), transform(truncated)),
        (
            Mutation("a JSON array, not JSON lines", R),
            transform(lambda b: b"[" + b",".join(x for x in b.splitlines() if x.strip()) + b"]\n"),
        ),
        (
            Mutation("a pretty-printed JSON array", R),
            transform(lambda b: json.dumps([json.loads(x) for x in b.splitlines() if x.strip()], indent=2).encode()),
        ),
    ]
    if sample.enum:
        out.append((Mutation(f"bad {sample.enum[0]} value", R), recs_edit(enum)))
    if sample.unique:
        out.append((Mutation(f"duplicate {sample.unique}", R), recs_edit(lambda rs: rs + [rs[0]])))
    return out


SAMPLE_PATHS: dict[str, Path] = {}  # filled by the library fixture's users (which dir samples hold files)


def out_mutations(kind: str, cmd: Cmd) -> list[tuple[Mutation, Callable[[Path], Path]]]:
    """For an output path ``p`` (not yet existing): the breakage and what must happen."""

    def existing_dir(p):
        p.mkdir(parents=True)
        (p / "keep.txt").write_text("the user's file\n")
        return p

    def existing_file(p):
        p.parent.mkdir(parents=True, exist_ok=True)
        p.write_text("the user's file\n")
        return p

    def under_file(p):
        p.parent.mkdir(parents=True, exist_ok=True)
        blocker = p.parent / "blocker"
        blocker.write_text("a file\n")
        return blocker / p.name

    if kind == "out":
        return [
            (Mutation("--out is an existing folder", "refuse"), existing_dir),
            (Mutation("--out is under a file", "refuse"), under_file),
            (Mutation("--out exists (earlier contents)", "either"), existing_file),
        ]
    owned = cmd.name not in UNOWNED_DIRS  # a folder replaced whole: one holding other files is refused
    return [
        (Mutation("--out folder is an existing file", "refuse"), existing_file),
        *([(Mutation("--out folder holds other files", "refuse"), existing_dir)] if owned else []),
        (Mutation("--out folder is under a file", "refuse"), under_file),
    ]


# ------------------------------------------------------------------------------------------ running
@dataclass
class Result:
    code: int
    out: str
    err: str
    traceback: str | None = None


def run_inprocess(argv: list[str], env: dict) -> Result:
    from biaskit.cli import main

    old = {k: os.environ.get(k) for k in env}
    os.environ.update(env)
    o, e = io.StringIO(), io.StringIO()
    tb = None
    try:
        with contextlib.redirect_stdout(o), contextlib.redirect_stderr(e):
            try:
                main(argv)
                code = 0
            except SystemExit as exc:
                code = exc.code if isinstance(exc.code, int) else 1
            except BaseException:  # what the fuzzer looks for
                import traceback

                tb = traceback.format_exc()
                code = 1
    finally:
        for k, v in old.items():
            if v is None:
                os.environ.pop(k, None)
            else:
                os.environ[k] = v
    return Result(code, o.getvalue(), e.getvalue(), tb)


def run_as_nobody(argv: list[str], env: dict) -> Result:
    """Run in a forked child that dropped root (root may write into a read-only folder)."""
    r, w = os.pipe()
    pid = os.fork()
    if pid == 0:  # pragma: no cover - the child
        try:
            os.close(r)
            os.setgid(65534)
            os.setuid(65534)
            res = run_inprocess(argv, env)
            data = json.dumps(res.__dict__).encode()
        except BaseException as exc:
            data = json.dumps({"code": 99, "out": "", "err": f"child failed: {exc!r}", "traceback": None}).encode()
        with os.fdopen(w, "wb") as fh:
            fh.write(data)
        os._exit(0)
    os.close(w)
    with os.fdopen(r, "rb") as fh:
        data = fh.read()
    os.waitpid(pid, 0)
    return Result(**json.loads(data))


class Case:
    """One command line with its files in a folder of its own."""

    def __init__(self, cmd: Cmd, root: Path, library: dict, model: Path | None):
        self.cmd, self.root = cmd, root
        self.inputs: dict[str, Path] = {}  # placeholder key -> path
        self.outputs: dict[str, tuple[str, Path]] = {}
        self.tokens: list = []
        for tok in shlex.split(cmd.args):
            m = PLACEHOLDER.fullmatch(tok)
            if not m:
                self.tokens.append(tok)
                continue
            kind, name = m.groups()
            if kind == "model":
                self.tokens.append(str(model))
            elif kind in ("in", "use"):
                key = f"{kind}:{name}"
                self.inputs[key] = _copy_sample(library[name], root / "in" / name)
                self.tokens.append(("in", key))
            else:
                self.outputs[f"{kind}:{name}"] = (kind, root / "out" / name)
                self.tokens.append(("out", f"{kind}:{name}"))

    def argv(self) -> list[str]:
        words = self.cmd.name.split()
        for t in self.tokens:
            if isinstance(t, tuple):
                words.append(str(self.inputs[t[1]] if t[0] == "in" else self.outputs[t[1]][1]))
            else:
                words.append(t)
        return words

    def files_written(self) -> set[str]:
        base = self.root / "out"
        return {str(p.relative_to(base)) for p in base.rglob("*")} if base.exists() else set()


def tree(root: Path, skip: str = "out") -> dict[str, tuple[int, int]]:
    """Every file under ``root`` but the ``skip`` folder: relative path -> (size, mtime)."""
    out = {}
    for p in root.rglob("*"):
        rel = p.relative_to(root)
        if rel.parts[0] == skip or p.is_dir():
            continue
        st = p.lstat()
        out[rel.as_posix()] = (st.st_size, st.st_mtime_ns)
    return out


def run_confined(case: Case, env: dict) -> tuple[Result, list[str]]:
    """Run ``case`` from an empty working folder of its own; also return what it created or changed
    outside the folder of its output arguments (``out/``): its inputs, the working folder, anything
    beside them (the outside-``--out`` check, issue 20)."""
    cwd = case.root / "cwd"
    cwd.mkdir(parents=True, exist_ok=True)
    before = tree(case.root)
    old = os.getcwd()
    os.chdir(cwd)
    try:
        res = run_inprocess(case.argv(), env)
    finally:
        os.chdir(old)
    after = tree(case.root)
    return res, sorted(k for k, v in after.items() if before.get(k) != v)


def check(
    res: Result,
    m: Mutation,
    path: Path,
    other_paths: list[Path],
    valid_code: int | None,
    before: set[str],
    after: set[str],
    cmd: Cmd,
    also: tuple = (),
) -> str | None:
    """Why this run breaks the contract, or None."""
    if res.traceback or "Traceback (most recent call last)" in res.err:
        return "traceback: " + (res.traceback or res.err).strip().splitlines()[-1][:300]
    errors = [x for x in res.err.splitlines() if x.startswith("error:")]
    if m.expect == "accept":
        if valid_code is None:
            return None
        if res.code != valid_code:
            return f"exit {res.code} (the valid input gave {valid_code}): {res.err.strip()[-300:]}"
        if not cmd.offline and any(str(path) in e for e in errors):
            return f"a valid file was blamed: {errors[0][:300]}"
        return None
    if m.expect in ("either", "any") and res.code == 0:
        return None
    if m.expect == "either" and not cmd.offline and res.code == valid_code and not any(str(path) in e for e in errors):
        return None  # the run failed for the server it needs, not for this (acceptable) file
    if res.code != 2:
        return f"exit {res.code}, expected 2: {res.err.strip()[-300:]}"
    if len(errors) != 1 and not (cmd.report and errors):
        return f"{len(errors)} error lines, expected one: {res.err.strip()[-300:]}"
    if m.expect == "any":
        return None
    names = [str(path), str(path.parent)] if "under a file" in m.name else [str(path)]
    names += [str(o) for o in also]
    line = next((e for e in errors if any(n in e for n in names)), errors[0]) if cmd.report else errors[0]
    at = min((line.find(n) for n in names if n in line), default=-1)
    if at < 0:
        return f"the file is not named: {line[:300]}"
    for o in other_paths:
        j = line.find(str(o))
        if 0 <= j < at and not str(path).startswith(str(o)):
            return f"blames another file first ({o}): {line[:300]}"
    new = after - before
    if new:
        return f"left output behind: {sorted(new)[:5]}"
    return None


def fuzz_command(
    cmd: Cmd, tmp: Path, library: dict, model: Path | None, huge: int, only: str | None = None
) -> tuple[int, list[str]]:
    env = {"BIASKIT_NO_PROGRESS": "1", "BIASKIT_CACHE_DIR": str(tmp / "cache"), **cmd.env}
    failures: list[str] = []
    n = 0
    valid_code = None
    if cmd.valid and not only:
        case = Case(cmd, tmp / "valid", library, model)
        res, outside = run_confined(case, env)
        n += 1
        valid_code = res.code
        if outside:
            failures.append(f"valid run wrote outside its output arguments: {outside[:5]}")
        failures += [
            f"valid run: a hint that does not work: {w}"
            for w in resolve_output(res.out + "\n" + res.err, cmd.name, case.root / "cwd", case.argv())
        ]
        if res.traceback or (cmd.offline and res.code != 0):
            failures.append(f"valid run: exit {res.code}: {(res.traceback or res.err).strip()[-400:]}")
        elif (
            cmd.offline and cmd.rerun and any(k.startswith("outdir") for k in case.outputs)
        ):  # an earlier output is replaced
            again = run_inprocess(case.argv(), env)
            n += 1
            if again.code != 0:
                failures.append(f"re-run into its own earlier output: exit {again.code}: {again.err.strip()[-300:]}")
    k = 0
    probe = Case(cmd, tmp / "probe", library, model)
    for key in probe.inputs:
        if not key.startswith("in:"):
            continue
        sample = SAMPLES[key.split(":", 1)[1]]
        for m, apply in mutations(sample, huge):
            if only and only not in m.name:
                continue
            k += 1
            case = Case(cmd, tmp / f"c{k}", library, model)
            target = apply(case.inputs[key])
            case.inputs[key] = target
            before = case.files_written()
            res = run_inprocess(case.argv(), env)
            n += 1
            if m.name in sample.lenient or f"{key} {m.name}" in cmd.lenient:
                m = Mutation(m.name, "any")
            why = check(
                res,
                m,
                target,
                [p for q, p in case.inputs.items() if q != key],
                valid_code,
                before,
                case.files_written(),
                cmd,
            )
            if why:
                failures.append(f"{key} {m.name}: {why}")
            failures += [
                f"{key} {m.name}: a hint that does not work: {w}"
                for w in resolve_output(res.err, cmd.name, argv=case.argv())
            ]
    if only:
        return n, failures
    for key, (kind, _) in probe.outputs.items():
        for m, apply in out_mutations(kind, cmd):
            k += 1
            case = Case(cmd, tmp / f"c{k}", library, model)
            p = apply(case.outputs[key][1])
            case.outputs[key] = (kind, p)
            snapshot = {
                f: (case.root / "out" / f).read_bytes()
                for f in case.files_written()
                if (case.root / "out" / f).is_file()
            }
            before = case.files_written()
            res = run_inprocess(case.argv(), env)
            n += 1
            why = check(res, m, p, list(case.inputs.values()), valid_code, before, case.files_written(), cmd)
            why = why or "; ".join(resolve_output(res.err, cmd.name)) or None
            if not why and res.code == 2:
                changed = [
                    f
                    for f, b in snapshot.items()
                    if not (case.root / "out" / f).exists() or (case.root / "out" / f).read_bytes() != b
                ]
                if changed:
                    why = f"refused but changed the user's files: {changed}"
            if why:
                failures.append(f"{key} {m.name}: {why}")
    if probe.outputs:  # a read-only output folder: refused before any work (as nobody: root ignores the bits)
        n += 1
        why = _read_only_case(cmd, library, model, env, valid_code)
        if why:
            failures.append(f"--out in a read-only folder: {why}")
    return n, failures


def _read_only_case(cmd, library, model, env, valid_code) -> str | None:
    ro = Path(tempfile.mkdtemp(prefix="biaskit-fuzz-ro-"))
    try:
        case = Case(cmd, ro / "case", library, model)
        (case.root / "out").mkdir(parents=True, exist_ok=True)
        for p in [ro, *ro.rglob("*")]:
            os.chmod(p, 0o755 if p.is_dir() else 0o644)
        os.chmod(case.root / "out", 0o555)
        runner = run_as_nobody if os.geteuid() == 0 else run_inprocess
        res = runner(case.argv(), {**env, "BIASKIT_CACHE_DIR": str(ro / "cache")})
        outs = [p for _, p in case.outputs.values()]
        return check(
            res,
            Mutation("--out in a read-only folder", "refuse"),
            outs[0],
            list(case.inputs.values()),
            valid_code,
            set(),
            case.files_written(),
            cmd,
            also=tuple(outs),
        )
    finally:
        if (ro / "case" / "out").exists():
            os.chmod(ro / "case" / "out", 0o755)
        shutil.rmtree(ro, ignore_errors=True)


@pytest.mark.skipif(not hasattr(os, "fork"), reason="drops root in a forked child (POSIX only)")
def test_an_existing_read_only_working_folder_is_refused():
    """A working folder written into (``biaskit init DIR``, ``data download --out``), not replaced:
    when it exists but cannot be written, the command stops with one line naming it."""
    base = Path(tempfile.mkdtemp(prefix="biaskit-ro-"))  # not under pytest's private (0700) folder
    ro = base / "project"
    ro.mkdir()
    os.chmod(base, 0o777)  # the folder above may be written: only the working folder itself is read-only
    os.chmod(ro, 0o555)
    try:
        runner = run_as_nobody if os.geteuid() == 0 else run_inprocess
        res = runner(["init", str(ro), "--no-hindi"], {"BIASKIT_NO_PROGRESS": "1"})
    finally:
        os.chmod(ro, 0o755)
    errors = [x for x in res.err.splitlines() if x.startswith("error:")]
    assert res.code == 2 and not res.traceback and len(errors) == 1, res
    try:
        assert str(ro) in errors[0] and "not writable" in errors[0], errors
        assert list(ro.iterdir()) == []
    finally:
        shutil.rmtree(base, ignore_errors=True)


def _model_for(cmd: Cmd, request) -> Path | None:
    return request.getfixturevalue("tiny_bert") if cmd.model else None


@pytest.fixture(autouse=True)
def _quiet_env(monkeypatch, library):
    monkeypatch.setenv("BIASKIT_NO_PROGRESS", "1")
    monkeypatch.delenv("OPENAI_API_KEY", raising=False)
    monkeypatch.delenv("BIASKIT_DEBUG", raising=False)
    SAMPLE_PATHS.update(library)


@pytest.mark.parametrize("cmd", COMMANDS, ids=[f"{c.name}#{i}" for i, c in enumerate(COMMANDS)])
def test_bad_files_give_one_line_exit_2_and_leave_nothing(cmd, library, tmp_path, request):
    n, failures = fuzz_command(cmd, tmp_path, library, _model_for(cmd, request), HUGE_FAST)
    STATS["cases"] += n
    STATS["failures"] += len(failures)
    STATS["commands"] += 1
    assert not failures, f"{cmd.name}: {len(failures)} of {n} cases fail:\n" + "\n".join(failures)


@pytest.mark.slow
@pytest.mark.parametrize(
    "cmd",
    [c for c in COMMANDS if any(f"{{in:{s}}}" in c.args for s in SAMPLES if SAMPLES[s].fmt in ("csv", "jsonl"))],
    ids=lambda c: c.name,
)
def test_a_50_mb_cell_is_refused_with_its_line(cmd, library, tmp_path, request):
    n, failures = fuzz_command(cmd, tmp_path, library, _model_for(cmd, request), HUGE_SLOW, only="-character")
    assert n > 0 and not failures, "\n".join(failures)


@pytest.mark.parametrize("pf", PATH_FIELDS, ids=lambda f: f"{f.cmd} {f.field}")
def test_a_data_value_never_becomes_a_path_unchecked(pf, library, tmp_path, request):
    """Every field whose value becomes part of a file name, set to each hostile value (a traversal,
    zero-width and RTL-override characters, 300 characters, '..', a backslash, empty): exit 2 with
    one line naming the file (and row), and nothing written outside the output arguments (issue 20)."""
    cmd = next(c for c in COMMANDS if c.name == pf.cmd and f"{{{pf.input}}}" in c.args)
    env = {"BIASKIT_NO_PROGRESS": "1", "BIASKIT_CACHE_DIR": str(tmp_path / "cache"), **cmd.env}
    failures = []
    for k, (label, value) in enumerate(HOSTILE_NAMES.items()):
        if label == "empty" and pf.empty_ok:
            continue
        case = Case(cmd, tmp_path / f"h{k}", library, _model_for(cmd, request))
        pf.set(case.inputs[pf.input], value)
        res, outside = run_confined(case, env)
        errors = [x for x in res.err.splitlines() if x.startswith("error:")]
        where = str(case.inputs[pf.input]) + (f", row {pf.row}" if pf.row else "")
        if res.traceback or res.code != 2 or len(errors) != 1 or where not in errors[0]:
            failures.append(
                f"{label}: exit {res.code}, expected 2 naming {where}: {(res.traceback or res.err).strip()[-300:]}"
            )
        if outside or case.files_written():
            failures.append(f"{label}: wrote {sorted(outside) + sorted(case.files_written())}")
    escaped = [str(p) for p in tmp_path.parent.rglob("escaped*")]
    assert not failures and not escaped, "\n".join(failures + escaped)


# ------------------------------------------------------------------------------------------ damaged artefacts
_OPENED: list[str] | None = None  # while a list: every path the process opens (an audit hook appends)


def _watch_opens() -> None:
    """Install (once per process) an audit hook that records the paths ``open`` is given while
    :data:`_OPENED` is a list: the proof that a planted file outside an artefact's folder is never read."""
    if getattr(_watch_opens, "done", False):
        return

    def hook(event: str, args: tuple) -> None:
        if _OPENED is not None and event == "open" and args and isinstance(args[0], (str, bytes, os.PathLike)):
            _OPENED.append(os.fsdecode(args[0]))

    sys.addaudithook(hook)
    _watch_opens.done = True  # type: ignore[attr-defined]


def run_api(argv: list[str]) -> Result:
    """``load_release PATH [--no-verify]`` through the Python API, as a :class:`Result` (an
    InputError is exit 2 with its line, as the CLI prints it)."""
    import traceback

    from biaskit.api import load_release
    from biaskit.errors import BiaskitError

    try:
        load_release(argv[1], verify="--no-verify" not in argv)
        return Result(0, "", "")
    except BiaskitError as exc:
        return Result(2, "", f"error: {exc}\n")
    except Exception:  # what the test looks for
        return Result(1, "", "", traceback.format_exc())


def _damaged_case(d: Damage, tmp: Path, library: dict, model: Path) -> tuple[Path | None, list[list[str]], str]:
    """The damaged copy, the command lines (argv) and the text the error must name."""
    art = None
    if d.sample is not None:
        art = _copy_sample(library[d.sample], tmp / "in")
        art = d.edit(art) or art if d.edit else art
    if d.outside:
        (tmp / PLANTED).write_bytes(b"planted: never to be read\n")
        if art is not None and art.is_dir():  # a release: plant beside its folder, inside the case's
            (art.parent / PLANTED).write_bytes(b"planted: never to be read\n")

    def fill(text: str) -> str:
        text = re.sub(r"\{lib:(\w+)\}", lambda m: shlex.quote(str(library[m.group(1)])), text)
        return (
            text.replace("{in_dir}", str(art.parent) if art else "")
            .replace("{in}", shlex.quote(str(art)) if art else "")
            .replace("{model}", shlex.quote(str(model)))
        )

    argvs = []
    for i, c in enumerate(d.cmds):
        argv = shlex.split(fill(c).replace("{out}", shlex.quote(str(tmp / "out" / f"o{i}"))))
        argvs.append(argv)
    where = fill(d.where)
    return art, argvs, where.strip("'") if where.startswith("'") else where


@pytest.mark.parametrize("d", DAMAGED, ids=lambda d: d.name)
def test_a_damaged_artefact_is_one_line_with_a_fix(d, library, tiny_bert, tmp_path):
    """Tampered releases, malformed NSP heads, corpora and groups files, templates, judgments and option
    values (issue 28): exit 2, no traceback, one error line naming the file (or the option) with a fix;
    nothing under a planted file outside the artefact's folder is opened."""
    global _OPENED
    _watch_opens()
    art, argvs, where = _damaged_case(d, tmp_path, library, tiny_bert)
    env = {"BIASKIT_NO_PROGRESS": "1", "BIASKIT_CACHE_DIR": str(tmp_path / "cache")}
    failures = []
    for argv in argvs:
        _OPENED = []
        try:
            res = run_api(argv) if argv[0] == "load_release" else run_inprocess(argv, env)
        finally:
            opened, _OPENED = _OPENED, None
        errors = [x for x in res.err.splitlines() if x.startswith("error:")]
        line = next((e for e in errors if where in e), None)
        one = len(errors) == 1 or (argv[:2] == ["release", "verify"] and errors)
        if res.traceback or res.code != 2 or not one or line is None or "Fix:" not in line:
            failures.append(f"{' '.join(argv[:3])}: exit {res.code}, {(res.traceback or res.err).strip()[-400:]}")
        planted = [o for o in opened if Path(o).name == PLANTED]
        if planted:
            failures.append(f"{' '.join(argv[:3])}: opened the planted file {planted[0]}")
        if argv[0] != "load_release":  # the fix works where it is printed (a flag of this command, ...)
            from hints import commands

            name = next(" ".join(argv[:k]) for k in (3, 2, 1) if " ".join(argv[:k]) in commands())
            failures += [f"{name}: a hint that does not work: {w}" for w in resolve_output(res.err, name)]
    assert not failures, f"expected one error line naming {where} with a fix:\n" + "\n".join(failures)


def test_an_edited_release_loads_only_unchecked(library, tmp_path):
    """load_release refuses an edited Parquet by default (SHA256SUMS) and loads it with verify=False."""
    from biaskit.api import load_release
    from biaskit.errors import InputError

    rel = _copy_sample(library["release"], tmp_path)
    assert len(load_release(rel)["pairs"]["test"]) == 5  # the sample release: 6 pairs, 5 in test
    _edit_parquet(rel)
    with pytest.raises(InputError, match="SHA256SUMS"):
        load_release(rel)
    assert "An edited sentence." in set(load_release(rel, verify=False)["pairs"]["test"]["sent_more_en"])


def test_judgment_ids_are_read_one_way(tmp_path):
    """Task ids written 1.0 and ids with spaces around them are the same tasks and annotators for
    `annotate aggregate` and `annotate replay` (issue 27): the same table, the same replay report."""
    import pandas as pd

    votes = {1: "sss", 2: "ssa", 3: "aas", 4: "saa", 5: "sas"}  # workers a, b, c; s = stereo, a = antistereo
    rows = [
        {"task": t, "worker": w, "question": "validity", "label": {"s": "stereo", "a": "antistereo"}[lab]}
        for t, labs in votes.items()
        for w, lab in zip("abc", labs, strict=True)
    ]
    variants = {
        "plain": rows,
        "float": [{**r, "task": f"{r['task']}.0"} for r in rows],
        "spaces": [{**r, "task": f" {r['task']}", "worker": f"{r['worker']} "} for r in rows],
    }
    got = {}
    for name, rs in variants.items():
        f = tmp_path / f"{name}.csv"
        pd.DataFrame(rs).to_csv(f, index=False)
        agg = run_inprocess(
            [
                "annotate",
                "aggregate",
                "--judgments",
                str(f),
                "--kind",
                "pair",
                "--out",
                str(tmp_path / f"{name}.agg.csv"),
            ],
            {},
        )
        rep = run_inprocess(
            [
                "annotate",
                "replay",
                "--judgments",
                str(f),
                "--kind",
                "pair",
                "--min-judgments",
                "2",
                "--max-judgments",
                "3",
                "--out",
                str(tmp_path / f"{name}.json"),
            ],
            {},
        )
        assert agg.code == rep.code == 0 and not agg.traceback and not rep.traceback, (name, agg.err, rep.err)
        report = json.loads((tmp_path / f"{name}.json").read_text())
        got[name] = (
            (tmp_path / f"{name}.agg.csv").read_text(),
            {k: v for k, v in report.items() if k not in ("source", "command")},
        )
    assert got["float"] == got["plain"] and got["spaces"] == got["plain"]
    table, report = got["plain"]
    # by hand: 5 tasks x 3 workers; every task has a strict majority (3-0 or 2-1): 3 stereo, 2 antistereo
    assert report["tasks"] == 5 and report["judgments_full"] == 15
    assert [r.split(",")[2] for r in table.splitlines()[1:]] == [
        "stereo",
        "stereo",
        "antistereo",
        "antistereo",
        "stereo",
    ]


def test_nan_scores_are_an_error_naming_the_item(tiny_bert, tmp_path, library):
    """A model whose weights hold NaN gives no score: exit 2 with one line naming the sentence (issue 27),
    never a NaN in a report."""
    import torch
    from transformers import AutoModelForMaskedLM, AutoTokenizer

    model = AutoModelForMaskedLM.from_pretrained(tiny_bert)
    with torch.no_grad():
        model.cls.predictions.bias[:] = float("nan")
    nan_dir = tmp_path / "nan-bert"
    model.save_pretrained(nan_dir)
    AutoTokenizer.from_pretrained(tiny_bert).save_pretrained(nan_dir)
    res = run_inprocess(
        [
            "evaluate",
            "pairs",
            "--data",
            str(library["pairs_csv"]),
            "-m",
            str(nan_dir),
            "--runs",
            "1",
            "--no-cache",
            "--out",
            str(tmp_path / "out"),
        ],
        {"BIASKIT_NO_PROGRESS": "1"},
    )
    errors = [x for x in res.err.splitlines() if x.startswith("error:")]
    assert res.code == 2 and not res.traceback and len(errors) == 1, res
    assert "NaN" in errors[0] and "Fix:" in errors[0] and not (tmp_path / "out").exists()
    assert any(s in errors[0] for a, b, *_ in PAIRS for s in (a, b)), errors[0]  # the item: one of its sentences


def test_evaluate_pairs_names_the_field_of_an_invalid_row(tiny_bert):
    import pandas as pd

    import biaskit
    from biaskit.errors import InputError

    frame = pd.DataFrame([{"sent_more": "A b.", "sent_less": "C b.", "bias_type": "x", "direction": "up"}])
    with pytest.raises(InputError) as exc:
        biaskit.evaluate_pairs(frame, model=str(tiny_bert))
    text = str(exc.value)
    assert "column 'direction'" in text and "'stereo' or 'antistereo'" in text and "errors.pydantic.dev" not in text


# every LLM command of the table (its valid run, on `--llm dummy` there) against a server that echoes the key
ECHO_ROWS = [c for c in COMMANDS if "--llm dummy" in c.args]


@pytest.mark.parametrize("cmd", ECHO_ROWS, ids=[f"{c.name}#{i}" for i, c in enumerate(ECHO_ROWS)])
def test_an_echoed_api_key_is_written_nowhere(cmd, library, tmp_path, request, standin_server):  # noqa: F811 (the fixture imported from llm_standin)
    """The command's valid run with the openai backend against a stand-in that echoes the API key in
    its replies (tests/echo_helpers.py): the replies reached the command, and no file under the case's
    folders or its cache holds the key, SQLite rows included (issue 28)."""
    import secrets

    from echo_helpers import echoing_server, files_holding

    server = echoing_server(standin_server)
    key = "zq" + secrets.token_hex(20)
    case = Case(cmd, tmp_path / "echo", library, _model_for(cmd, request))
    case.tokens = [t for t in case.tokens if t != "dummy"]
    at = case.tokens.index("--llm")
    model = [] if "llm:m" in cmd.args else ["--model", "m"]  # (the MT commands name it in --engines llm:m)
    case.tokens[at : at + 1] = ["--llm", "openai", *model, "--base-url", server.base_url]
    env = {"BIASKIT_NO_PROGRESS": "1", "BIASKIT_CACHE_DIR": str(tmp_path / "cache"), "OPENAI_API_KEY": key, **cmd.env}
    res, _ = run_confined(case, env)
    assert res.code in (0, 1) and not res.traceback, res.err
    assert server.echoed, "no reply echoed the key"
    assert files_holding(tmp_path, key) == []
    assert key not in res.out + res.err


def test_zz_report_the_figures(capsys):
    """Prints the suite's figures when the whole module ran: cases tried, failures."""
    with capsys.disabled():
        print(f"\nfuzz: {STATS['cases']} cases over {STATS['commands']} command rows, {STATS['failures']} failing")


# ------------------------------------------------------------------------------------------ coverage
def _leaf_commands():
    from typer.main import get_command

    from biaskit.cli import app

    def walk(c, prefix):
        if hasattr(c, "commands"):
            for name, sub in c.commands.items():
                yield from walk(sub, prefix + [name])
        else:
            yield " ".join(prefix), c

    return dict(walk(get_command(app), []))


def test_every_command_has_a_row():
    rows = {c.name for c in COMMANDS}
    leaves = set(_leaf_commands())
    assert not leaves - rows, (
        f"commands without a row in tests/fuzz_table.py: {sorted(leaves - rows)}. Add one "
        "line per command (see fuzz_table.py's docstring and docs/reliability.md)."
    )
    assert not rows - leaves, f"rows for commands that no longer exist: {sorted(rows - leaves)}"


def test_every_file_argument_is_checked_and_fuzzed():
    """A ``Path`` parameter is declared with a biaskit.paths builder (so it is checked before any
    work), and the command's row names it (so it is fuzzed)."""
    from biaskit.paths import path_arg_of

    args_of: dict[str, list[str]] = {}
    for c in COMMANDS:
        args_of.setdefault(c.name, []).extend(shlex.split(c.args))
    problems = []
    for name, c in _leaf_commands().items():
        args = args_of.get(name, [])
        for p in c.params:
            ann = str(getattr(getattr(p, "type_descriptor", None), "annotation", ""))
            pa = path_arg_of(p)
            if "Path" in ann and pa is None:
                problems.append(f"{name} {p.opts or p.name}: a Path parameter without biaskit.paths' checks")
            if pa is None or p.param_type_name != "option":
                continue
            shared = p.opts[0] in SHARED_OPTIONS and any(SHARED_OPTIONS[p.opts[0]] in r.args for r in COMMANDS)
            if not shared and not any(o in args for o in p.opts):
                problems.append(f"{name} {p.opts[0]}: not in its fuzz_table row")
    assert not problems, "\n".join(problems)


# ------------------------------------------------------------------------------------------ the real entry point
SUBPROCESS_SAMPLE = [
    ("annotate aggregate", "in:judgments", "NUL in a cell"),
    ("curate sentences", "in:tuples", "last line cut (truncated)"),
    ("curate check", "in:pairs_jsonl", "UTF-16 with BOM"),
    ("evaluate cats", "in:cats_flat", "a folder, not a file"),
    ("release verify", "in:release", "missing"),
]


def test_the_real_entry_point_behaves_the_same(library, tmp_path):
    """The console script (``biaskit``) gives the same exit code and error line as the in-process call."""
    exe = Path(sys.executable).with_name("biaskit")
    prog = [str(exe)] if exe.exists() else [sys.executable, "-m", "biaskit.cli"]
    rows = {c.name: c for c in COMMANDS}
    env = {**os.environ, "BIASKIT_NO_PROGRESS": "1", "BIASKIT_CACHE_DIR": str(tmp_path / "cache")}
    for i, (name, key, mname) in enumerate(SUBPROCESS_SAMPLE):
        case = Case(rows[name], tmp_path / f"s{i}", library, None)
        apply = next(a for m, a in mutations(SAMPLES[key.split(":")[1]], HUGE_FAST) if m.name == mname)
        case.inputs[key] = apply(case.inputs[key])
        inproc = run_inprocess(case.argv(), {"BIASKIT_NO_PROGRESS": "1"})
        p = subprocess.run(prog + case.argv(), capture_output=True, text=True, env=env, timeout=120)
        assert p.returncode == inproc.code == 2, (name, mname, p.stderr, inproc.err)
        assert "Traceback" not in p.stderr
        assert [x for x in p.stderr.splitlines() if x.startswith("error:")] == [
            x for x in inproc.err.splitlines() if x.startswith("error:")
        ], (p.stderr, inproc.err)
