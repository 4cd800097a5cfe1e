"""The project file, ``biaskit.toml``: which stages a curator wants, with their options.

Read with :func:`load_project`: TOML (``tomllib``), then secrets refused (:func:`find_secrets`), then
validated with pydantic (unknown keys are errors, with a "did you mean"), then the stages checked
against each other (every stage has something to read). Every problem is one
:class:`~biaskit.errors.InputError` naming the file, the key (and its line) and the fix.

Each stage's table is its stage class's (:mod:`.stages`: a stage owns its name, table, inputs and
output); the tables are documented in docs/pipeline.md; the order the stages run in is
:data:`~.stages.STAGE_ORDER`, whatever the order of the tables in the file.
"""

from __future__ import annotations

import difflib
import os
import re
from pathlib import Path
from typing import TYPE_CHECKING, Any, Optional, overload

from pydantic import BaseModel, Field, ValidationError, create_model
from pydantic_core import ErrorDetails

from ..errors import BiaskitError, InputError
from ..options import OptionError, spec_of
from .stages import HUMAN_STAGES, STAGE_IO, STAGE_ORDER, STAGES, reads_of  # noqa: F401 (the pipeline's names)
from .tables import (
    LabelStudioSettings,
    LLMSettings,
    ProjectMeta,
    StageTable,
    Table,
)

if TYPE_CHECKING:
    from .options import InitOptions
    from .stages.base import NameLimit

PROJECT_FILE = "biaskit.toml"

ARTIFACT_WORDS = {
    "tuples": "tuples",
    "sentences": "sentences",
    "pairs": "pairs",
    "candidates": "translation candidates",
    "translations": "reviewed translations",
    "cats": "CATs",
    "cat_candidates": "CAT translation candidates",
    "cat_translations": "reviewed CAT translations",
    "seat_tests": "SEAT tests",
    "release": "a release folder",
    "results": "evaluation results",
}


# Keys that hold secrets (a key named so, or ending in _NAME; case-insensitive) and where each secret goes.
_SECRET_KEY = re.compile(r"(^|_)(api_?key|access_?key|token|auth|password|passwd|pwd|secret|credentials?)$", re.I)
SECRET_ENV = {"llm": "OPENAI_API_KEY", "labelstudio": "LABEL_STUDIO_API_KEY"}
_SECRET_VALUE = re.compile(r"^(sk-[A-Za-z0-9_-]{16,}|hf_[A-Za-z0-9]{20,}|Token\s+\S{20,}|Bearer\s+\S{20,})$")
_URL_PASSWORD = re.compile(r"^[a-z][a-z0-9+.-]*://[^/@\s:]+:[^/@\s]+@", re.I)


class ProjectProblems(InputError):
    """Every problem found in a project file, one :class:`InputError` each (file, key, line, fix): the
    CLI prints one ``error:`` line per problem, so a typo in the last stage is seen before any stage
    runs, together with any other."""

    def __init__(self, problems: list[InputError]):
        self.problems = list(problems)
        first = self.problems[0]
        super().__init__(first.message, path=first.path, row=first.row, column=first.column, fix=first.fix)

    def __str__(self) -> str:
        problems = getattr(self, "problems", None)
        if not problems:
            return super().__str__()
        for q in problems:
            q.arg = q.arg or self.arg
        return "\nerror: ".join(InputError.__str__(q) for q in problems)


def raise_problems(problems: list[InputError]) -> None:
    if len(problems) == 1:
        raise problems[0]
    if problems:
        raise ProjectProblems(problems)


# The [stages] table: one key per stage class, its table the class's (a stage owns its options).
if TYPE_CHECKING:  # built at run time from the stage classes: to a type checker, each key is a stage table

    class Stages(Table):
        def __getattr__(self, name: str) -> StageTable | None: ...

else:
    _STAGE_FIELDS: dict[str, Any] = {n: (Optional[c.table], None) for n, c in STAGES.items()}  # noqa: UP045 (a runtime value pydantic reads)
    Stages = create_model("Stages", __base__=Table, **_STAGE_FIELDS)


class ProjectFile(Table):
    project: ProjectMeta
    llm: LLMSettings = Field(default_factory=LLMSettings)
    labelstudio: LabelStudioSettings = Field(default_factory=LabelStudioSettings)
    stages: Stages = Field(default_factory=Stages)


# ------------------------------------------------------------------------------------------ the project
class Project:
    """A loaded, validated project: ``file`` (its path), ``root`` (the folder paths in it are relative
    to), ``workdir`` (where the outputs and the state go) and ``config`` (:class:`ProjectFile`)."""

    def __init__(self, file: Path, config: ProjectFile, text: str, workdir: Path | None = None):
        self.file = file
        self.root = file.parent
        self.workdir = (workdir or self.root).resolve()
        self.config = config
        self.text = text

    @property
    def name(self) -> str:
        return self.config.project.name

    def stage(self, name: str) -> StageTable | None:
        s = getattr(self.config.stages, name)
        return s if s is not None and s.enabled else None

    def enabled(self) -> list[str]:
        """The enabled stages, in run order."""
        return [n for n in STAGE_ORDER if self.stage(n) is not None]

    @overload
    def path(self, p: str | Path) -> Path: ...
    @overload
    def path(self, p: None) -> None: ...
    @overload
    def path(self, p: str | Path | None) -> Path | None: ...
    def path(self, p: str | Path | None) -> Path | None:
        """A path from the project file: ``~`` expanded, relative ones taken from the project's folder."""
        if p is None:
            return None
        q = Path(os.path.expanduser(p))
        return q if q.is_absolute() else (self.root / q)

    def llm(self, stage: str | None = None) -> LLMSettings:
        """The ``[llm]`` settings with the stage's own ``llm`` table applied."""
        base = self.config.llm
        s = self.stage(stage) if stage else None
        over = getattr(s, "llm", None)
        if over is None:
            return base
        upd = {k: v for k, v in over.model_dump().items() if v is not None}
        return LLMSettings.model_validate({**base.model_dump(), **upd})

    def line_of(self, key: str) -> int | None:
        return key_line(self.text, key.split("."))

    def error(self, key: str, message: str, fix: str) -> InputError:
        line = self.line_of(key)
        return InputError(
            f"key '{key}'" + (f" (line {line})" if line else "") + f": {message}", path=self.file, fix=fix
        )


def find_project_file(path: str | Path | None) -> Path:
    """``path`` itself (a file), ``path/biaskit.toml`` (a folder), or ``./biaskit.toml``."""
    p = Path(path) if path is not None else Path(PROJECT_FILE)
    if p.is_dir():
        p = p / PROJECT_FILE
    if not p.is_file():
        raise InputError(
            "no project file here.",
            path=p,
            fix="run `biaskit init` to write one, or pass --project PATH (a biaskit.toml or its folder).",
        )
    return p


def load_project(
    path: str | Path | None = None, *, workdir: str | Path | None = None, check_inputs: bool = True
) -> Project:
    """Read, check and validate a project file (see the module docstring); ``check_inputs``: also
    that every file it names exists (``biaskit status`` shows a project whose inputs are missing)."""
    import tomllib

    file = find_project_file(path)
    try:
        text = file.read_text(encoding="utf-8-sig")
    except UnicodeDecodeError as exc:
        raise InputError(f"not UTF-8 text ({exc.reason}).", path=file, fix="save the file as UTF-8.") from None
    try:
        raw = tomllib.loads(text)
    except tomllib.TOMLDecodeError as exc:
        raise InputError(
            f"not valid TOML: {exc}.",
            path=file,
            fix="fix the syntax there (strings need quotes, tables are written [stages.name]).",
        ) from None
    secrets = find_secrets(raw)
    if secrets:
        key, why = secrets[0]
        top = key.split(".")[0]
        env = SECRET_ENV.get(top) or (
            SECRET_ENV["llm"]
            if "llm" in key
            else SECRET_ENV["labelstudio"]
            if "label" in key
            else "an environment variable"
        )
        line = key_line(text, key.split("."))
        raise InputError(
            f"key '{key}'" + (f" (line {line})" if line else "") + f" holds a secret ({why}); a project "
            "file is shared and committed, so biaskit refuses it.",
            path=file,
            fix=f"delete it from the file and set {env} in the environment instead "
            "(the file may name endpoints, never keys, tokens or passwords).",
        )
    try:
        config = ProjectFile.model_validate(raw)
    except ValidationError as exc:
        raise_problems(_validation_errors(file, text, exc))
    project = Project(file.resolve(), config, text, Path(workdir) if workdir is not None else None)
    check_project(project, check_inputs=check_inputs)
    return project


def find_secrets(obj: Any, prefix: str = "") -> list[tuple[str, str]]:
    """``(dotted key, why)`` for every value that is (or looks like) a secret."""
    out: list[tuple[str, str]] = []
    if isinstance(obj, dict):
        for k, v in obj.items():
            key = f"{prefix}.{k}" if prefix else str(k)
            if _SECRET_KEY.search(str(k).replace("-", "_")) and v not in (None, "", False):
                out.append((key, f"'{k}' names a secret"))
            else:
                out += find_secrets(v, key)
    elif isinstance(obj, list):
        for v in obj:
            out += find_secrets(v, prefix)
    elif isinstance(obj, str):
        if _SECRET_VALUE.match(obj.strip()):
            out.append((prefix, "the value looks like an API key"))
        elif _URL_PASSWORD.match(obj.strip()):
            out.append((prefix, "the URL carries a password"))
    return out


def key_line(text: str, loc: list[str]) -> int | None:
    """The line of ``text`` (TOML) where the dotted key ``loc`` (or its longest prefix) is set."""
    loc = [str(x) for x in loc]
    table: list[str] = []
    best: tuple[int, int | None] = (0, None)
    for i, line in enumerate(text.splitlines(), start=1):
        s = line.split("#", 1)[0].strip()
        m = re.match(r"^\[\[?\s*([^\]]+?)\s*\]\]?$", s)
        if m:
            table = [p.strip().strip("\"'") for p in m.group(1).split(".")]
            key = table
        else:
            m = re.match(r"^([A-Za-z0-9_.\"' -]+?)\s*=", s)
            if not m:
                continue
            key = table + [p.strip().strip("\"'") for p in m.group(1).split(".")]
        if loc[: len(key)] == key and len(key) > best[0]:
            best = (len(key), i)
    return best[1]


_FIXES = {
    "missing": "add it",
    "int_parsing": "give a whole number (no quotes)",
    "int_type": "give a whole number (no quotes)",
    "float_parsing": "give a number (no quotes)",
    "float_type": "give a number (no quotes)",
    "bool_type": "give true or false (no quotes)",
    "bool_parsing": "give true or false (no quotes)",
    "string_type": "give a quoted string",
    "list_type": 'give a list, e.g. ["a", "b"]',
    "dict_type": "give a table",
    "model_type": "give a table ([section] or {key = value})",
    "too_short": "give at least one value",
}


def _allowed_keys(loc: tuple) -> list[str]:
    """The keys the table at ``loc`` accepts (for "did you mean")."""
    model: Any = ProjectFile
    for part in loc:
        field = getattr(model, "model_fields", {}).get(part)
        if field is None:
            return []
        ann = field.annotation
        for cand in getattr(ann, "__args__", (ann,)):
            if isinstance(cand, type) and issubclass(cand, BaseModel):
                model = cand
                break
        else:
            return []
    return list(getattr(model, "model_fields", {}))


def _validation_errors(file: Path, text: str, exc: ValidationError) -> list[InputError]:
    """One :class:`InputError` per problem pydantic found (the same key reported once)."""
    out, seen = [], set()
    for err in exc.errors(include_url=False):
        e = _validation_error(file, text, err)
        if str(e) not in seen:
            seen.add(str(e))
            out.append(e)
    return out


def _validation_error(file: Path, text: str, err: ErrorDetails) -> InputError:
    loc = tuple(x for x in err["loc"] if not isinstance(x, int) and not str(x).startswith(("function-", "literal[")))
    key = ".".join(str(x) for x in loc) or "(top level)"
    line = key_line(text, list(loc))
    typ = err["type"]
    msg = err["msg"].removeprefix("Value error, ")
    if typ == "extra_forbidden":
        allowed = _allowed_keys(loc[:-1])
        close = difflib.get_close_matches(str(loc[-1]), allowed, n=1)
        where = ".".join(map(str, loc[:-1]))
        msg = "unknown setting" + (f" in [{where}]" if where else "")
        fix = (f"did you mean '{close[0]}'? " if close else "") + (
            f"[{where}] takes: {', '.join(allowed)}." if where else f"the file has the tables: {', '.join(allowed)}."
        )
        if loc[:1] == ("stages",) and len(loc) == 2:
            fix = (f"did you mean '{close[0]}'? " if close else "") + f"the stages are: {', '.join(STAGE_ORDER)}."
    elif typ == "missing":
        fix = f"add {loc[-1]} = ... to [{'.'.join(map(str, loc[:-1]))}] (see docs/pipeline.md)."
    else:
        fix = _FIXES.get(typ, "see docs/pipeline.md for the allowed values") + "."
    return InputError(f"key '{key}'" + (f" (line {line})" if line else "") + f": {msg}.", path=file, fix=fix)


def check_project(p: Project, *, check_inputs: bool = True) -> None:
    """The whole project before any stage runs: something to read for every stage, one source of
    pairs, a model for LLMs; with ``check_inputs``, also every file and folder it names, the card text
    and what each enabled stage checks of its own settings (:func:`check_resources`). Every problem is
    reported (one line each), not only the first."""
    names = p.enabled()
    if not names:
        raise InputError(
            "no stage is enabled.",
            path=p.file,
            fix="add at least one [stages.NAME] table (run `biaskit init` for an example).",
        )
    problems = flow_problems(p, check_inputs=check_inputs) + llm_problems(p)
    if check_inputs:
        problems += check_resources(p)
    raise_problems(problems)


def flow_problems(p: Project, *, check_inputs: bool = True) -> list[InputError]:
    """Every enabled stage has something to read (an earlier stage's output or its ``input``, which
    exists when ``check_inputs``), and one stage makes the pairs."""
    names = p.enabled()
    problems: list[InputError] = []
    add = problems.append
    if "pairs" in names and "adapt" in names:
        add(
            p.error(
                "stages.adapt",
                "both [stages.pairs] and [stages.adapt] make the pairs.",
                "keep one source of pairs (set enabled = false in the other).",
            )
        )
    have: set[str] = set()
    for n in names:
        s = p.stage(n)
        reads, writes = reads_of(n), STAGE_IO[n][1]
        given = s.input if s is not None else None
        if n == "adapt" and not given:
            add(
                p.error(
                    "stages.adapt",
                    "adapt needs the CrowS-Pairs file.",
                    'set input = "crows_pairs_anonymized.csv" (`biaskit data download crows-pairs`).',
                )
            )
        if reads and not set(reads) & have and not given:
            before = [m for m in STAGE_ORDER if STAGE_IO[m][1] in reads and m != n]
            add(
                p.error(
                    f"stages.{n}",
                    f"nothing gives this stage its {' or '.join(ARTIFACT_WORDS[r] for r in reads)}.",
                    f"add one of the stages {', '.join('[stages.' + b + ']' for b in before)} before it, or "
                    f'set input = "FILE" in [stages.{n}].',
                )
            )
        for f in ([given] if isinstance(given, str) else given or []) if check_inputs else []:
            q = p.path(f)
            if not q.exists():
                add(
                    p.error(
                        f"stages.{n}.input",
                        f"'{f}' does not exist (looked for {q}).",
                        "paths are relative to the project file's folder; check the name.",
                    )
                )
        have.add(writes)
    return problems


def llm_problems(p: Project) -> list[InputError]:
    """Each stage's ``[llm]`` overrides are valid, and a stage that calls an LLM names a model."""
    names = p.enabled()
    problems: list[InputError] = []
    add = problems.append
    for n in names:
        if getattr(p.stage(n), "llm", None) is not None:
            try:
                p.llm(n)
            except ValidationError as exc:
                e = exc.errors(include_url=False)[0]
                key = f"stages.{n}.llm." + ".".join(str(x) for x in e["loc"])
                add(p.error(key, e["msg"].removeprefix("Value error, ") + ".", "see [llm] in docs/pipeline.md."))
    for n in names:
        s = p.stage(n)
        if s is not None and STAGES[n].needs_llm_model(s):
            try:
                llm = p.llm(n)
            except ValidationError:
                continue  # reported above
            if llm.backend != "dummy" and not llm.model:
                key = f"stages.{n}.llm" if getattr(p.stage(n), "llm", None) else "llm"
                add(
                    p.error(
                        key,
                        f"the {n} stage calls an LLM but no model is named.",
                        'set model = "MODEL" in [llm] (the id your endpoint serves; base_url for a local '
                        'server), or backend = "dummy" to try offline.',
                    )
                )
    return problems


_TEXT_SUFFIXES = (".md", ".markdown", ".txt", ".bib", ".bibtex")
_PATH_KINDS = {"in_file": "file", "in_dir": "dir", "in_path": "any"}


def _path_keys(p: Project) -> list[tuple[str, str, str]]:
    """``(table, key, kind)`` of every key that names a file or folder (kind: file, dir or any; text: a
    file when it names one, else the text itself), from the tables' declarations (``path=`` of
    :func:`biaskit.options.option`) and the stage classes' ``text_or_file``."""
    tables: list[tuple[str, Any]] = [("project", p.config.project), ("llm", p.config.llm)]
    tables += [(f"stages.{n}", p.stage(n)) for n in p.enabled()]
    out = []
    for name, t in tables:
        for key, field in type(t).model_fields.items():
            spec = spec_of(field)
            if spec is not None and spec.path in _PATH_KINDS:
                out.append((name, key, _PATH_KINDS[spec.path]))
        if name.startswith("stages."):
            out += [(name, key, "text") for key in STAGES[name.split(".", 1)[1]].text_or_file]
    return out


def _looks_like_path(value: str) -> bool:
    return "\n" not in value and len(value) < 400 and Path(value).suffix.lower() in _TEXT_SUFFIXES


def check_resources(p: Project) -> list[InputError]:
    """What the project's keys name exists: files and folders, each stage's own ``llm.prices``, the
    card text of a release (a file that exists and holds card sections), an endpoint for the LLM
    stages; then each enabled stage's own check (:meth:`~.stages.base.StageRunner.check`: its prompt
    templates, the tuple axes in the inventory, the SEAT languages, the evaluate stage's models, what
    the project's name becomes). Nothing is loaded or sent."""
    out = path_problems(p) + price_problems(p) + endpoint_problems(p)
    for n in p.enabled():  # what each stage knows about its own settings (prompts, languages, models, names)
        out += STAGES[n].check(p)
    return out


def path_problems(p: Project) -> list[InputError]:
    """Every key that names a file or folder (:func:`_path_keys`) names one that exists."""
    out: list[InputError] = []
    for table, key, kind in _path_keys(p):
        obj: Any = p.config
        for part in table.split("."):
            obj = getattr(obj, part, None)
        value = getattr(obj, key, None) if obj is not None else None
        if not value:
            continue
        q = p.path(value)
        dotted = f"{table}.{key}"
        if kind == "text":
            out += text_problems(p, dotted, key, value)
        elif kind == "dir" and not q.is_dir():
            out.append(
                p.error(
                    dotted,
                    f"'{value}' is not a folder (looked for {q}).",
                    "paths are relative to the project file's folder; check the name.",
                )
            )
        elif kind == "file" and not q.is_file() or kind == "any" and not q.exists():
            out.append(
                p.error(
                    dotted,
                    f"'{value}' does not exist (looked for {q}).",
                    "paths are relative to the project file's folder; check the name.",
                )
            )
    return out


def text_problems(p: Project, dotted: str, key: str, value: str) -> list[InputError]:
    """A key that holds a text or names a file of it (``card_text``): the file exists, and a card text
    holds card sections."""
    out: list[InputError] = []
    q = p.path(value)
    if not _looks_like_path(value):
        return out  # the text itself
    if not q.is_file():
        out.append(
            p.error(
                dotted,
                f"'{value}' does not exist (looked for {q}).",
                "paths are relative to the project file's folder; check the name (or write the text itself there).",
            )
        )
    elif key == "card_text":
        try:
            from ..release.card import read_card_text

            if not read_card_text(q):
                out.append(
                    p.error(
                        dotted,
                        f"{q} holds no card section ('## Heading' followed by text).",
                        "write the sections people write, e.g. '## Motivation' and "
                        "'## Known limitations' (docs/release.md lists them).",
                    )
                )
        except InputError as exc:
            out.append(p.error(dotted, exc.message, exc.fix or "fix the file."))
    return out


def price_problems(p: Project) -> list[InputError]:
    """Each stage's own ``llm.prices`` file exists."""
    out: list[InputError] = []
    for n in p.enabled():
        over = getattr(p.stage(n), "llm", None)
        if over is not None and over.prices and not p.path(over.prices).is_file():
            out.append(
                p.error(
                    f"stages.{n}.llm.prices",
                    f"'{over.prices}' does not exist (looked for {p.path(over.prices)}).",
                    "paths are relative to the project file's folder.",
                )
            )
    return out


def endpoint_problems(p: Project) -> list[InputError]:
    """An LLM stage has an endpoint to send requests to, and its ``base_url`` is a URL (the first such
    stage without one is reported, not every one)."""
    out: list[InputError] = []
    from ..curation.llm_server import default_base_url

    for n in p.enabled():  # an LLM stage needs an endpoint: known before anything runs
        st = p.stage(n)
        if st is None or not STAGES[n].calls_llm(st):  # (enabled: never None)
            continue
        try:
            s = p.llm(n)
        except ValidationError:
            continue
        if (
            s.backend == "openai"
            and not default_base_url(s.base_url, s.model)  # given, $OPENAI_BASE_URL or `biaskit llm serve`'s
            and not os.environ.get("OPENAI_API_KEY")
        ):
            key = f"stages.{n}.llm" if getattr(p.stage(n), "llm", None) else "llm"
            out.append(
                p.error(
                    f"{key}.base_url",
                    f"the {n} stage sends requests to an LLM, but no endpoint is given.",
                    f'set base_url = "URL" in [{key}], the API root of an OpenAI-compatible '
                    'server (e.g. "http://127.0.0.1:8000/v1"; or the environment variable '
                    "OPENAI_BASE_URL), or start a local server: `biaskit llm serve` serves gemma3-270m, and a "
                    'project with model = "gemma3-270m" and no base_url uses it; for OpenAI\'s API set '
                    'OPENAI_API_KEY; or backend = "dummy" in '
                    f"[{key}] to try it offline.",
                )
            )
            break
        if s.base_url and s.backend == "openai":
            from ..curation.llm.openai_backend import check_base_url

            try:
                check_base_url(s.base_url)
            except BiaskitError as exc:
                over = getattr(st, "llm", None)
                key = f"stages.{n}.llm" if over and over.base_url else "llm"
                out.append(
                    p.error(
                        f"{key}.base_url",
                        str(exc).split(" Fix:")[0],
                        f'set base_url = "URL" in [{key}] to your server\'s API root, e.g. "http://127.0.0.1:8000/v1".',
                    )
                )
    return out


def name_limit(p: Project) -> NameLimit | None:
    """The most characters the project's name may have for its enabled stages (the tightest of their
    :meth:`~.stages.base.StageRunner.name_limit`); None: any length."""
    limits = [lim for n in p.enabled() if (lim := STAGES[n].name_limit(p)) is not None]
    return min(limits, key=lambda lim: lim.chars) if limits else None


def init_project(directory: str | Path, opts: InitOptions) -> Path:
    """``biaskit init``: write a commented ``biaskit.toml`` into ``directory`` (never over an existing one)
    with the options of the command; ``opts.trial``: sized for a first try on one machine (:mod:`.templates`)."""
    import tomllib

    from ..io import atomic_open
    from .templates import project_template

    template, hindi, name, trial, lang = opts.template, opts.hindi, opts.name, opts.trial, opts.lang
    d = Path(directory)
    f = d / PROJECT_FILE
    if f.exists():
        raise InputError(
            "a project file is already there; biaskit init never overwrites one.",
            path=f,
            fix="edit it, or choose another folder.",
        )
    if d.exists() and not d.is_dir():
        raise InputError("exists and is not a folder.", path=d, fix="choose a folder for the project.")
    name = name or re.sub(r"[^A-Za-z0-9._-]+", "-", d.resolve().name).strip("-._") or "my-benchmark"
    shown = name if len(name) <= 40 else name[:40] + "..."
    try:
        ProjectMeta(name=name)
    except ValidationError:
        raise OptionError(
            f"--name '{shown}' is not a usable project name.", "pass --name with letters, digits, '.', '_' and '-'."
        ) from None
    if lang is not None:
        from biaskit import languages as L

        if L.get(lang) is None or lang == L.source_code():
            raise InputError(
                f"no target language '{lang}'.",
                fix=f"use one of {', '.join(c for c in L.codes() if c != L.source_code())} (--lang), or add "
                f"data/languages/{lang}/ (docs/languages.md).",
            )
    text = project_template(name, template=template, hindi=hindi, lang=lang, trial=trial)
    limit = name_limit(Project(d / PROJECT_FILE, ProjectFile.model_validate(tomllib.loads(text)), text))
    if limit is not None and len(name) > limit.chars:  # what `biaskit run` would refuse later
        raise OptionError(
            f"--name '{shown}' is {len(name)} characters, too long for {limit.what} of the {template} template.",
            f"pass --name with at most {limit.chars} characters (letters, digits, '.', '_' and '-').",
        )
    d.mkdir(parents=True, exist_ok=True)
    tmp = d / f".{PROJECT_FILE}.new"
    with atomic_open(tmp) as fh:
        fh.write(text)
    try:
        os.link(tmp, f)  # whole, and only if no file appeared meanwhile
    except FileExistsError:
        raise InputError(
            "a project file is already there; biaskit init never overwrites one.",
            path=f,
            fix="edit it, or choose another folder.",
        ) from None
    finally:
        tmp.unlink(missing_ok=True)
    _write_gitignore(d)
    return f


def _write_gitignore(d: Path) -> None:
    """``.gitignore`` beside a new project file, naming what a project folder keeps that is never to be
    published: the run's state with the release's pseudonym key (``.biaskit/release.key``: whoever holds
    it can test a guessed login against a pseudonym) and the work folder (pulled judgments name the
    annotators by their logins). An existing ``.gitignore`` gains the lines it lacks; nothing else of it
    changes."""
    from ..io import atomic_open
    from .stages.base import WORK_DIR
    from .state import STATE_DIR

    want = [f"{STATE_DIR}/", f"{WORK_DIR}/"]
    g = d / ".gitignore"
    have = g.read_text(encoding="utf-8") if g.is_file() else ""
    missing = [x for x in want if x not in {line.strip() for line in have.splitlines()}]
    if not missing:
        return
    head = "# written by `biaskit init`: never publish these (docs/release.md, 'Privacy')\n"
    sep = "" if not have or have.endswith("\n") else "\n"
    with atomic_open(g) as fh:
        fh.write(have + sep + head + "".join(f"{x}\n" for x in missing))
