"""What every pipeline stage has: its folder, its input, its fingerprint, and ``run() -> Outcome``.

A stage class owns everything about its stage (docs/architecture.md, "Where a change goes"): its
``name``, ``title``, its table in the project file (``table``), the artifacts it reads
(``inputs``: any one of them) and the one it writes (``output``), the options that do not change
its results (``operational``) and, for a stage that runs commands whose options are declared once
(:mod:`biaskit.options`), those commands (``commands``: :class:`Command`), from which its table,
its operational options and the keys its hints name are derived (:func:`stage_table`).
``STAGE_ORDER``, ``STAGE_IO`` and the project file's ``[stages]`` table are made from the classes
(:mod:`.` and :mod:`..project`).

A stage class calls the pure functions of its stage package (``biaskit.curation``,
``biaskit.annotation``, ``biaskit.release``, ``biaskit.evaluation``) exactly as the stage's own
command does, with the options of its table in the project file. It never calls the CLI.
"""

from __future__ import annotations

import typing
from collections.abc import Callable, Mapping
from dataclasses import dataclass, field
from pathlib import Path
from typing import TYPE_CHECKING, Any, ClassVar, Optional

from pydantic import Field, create_model

from biaskit.curation.cli_options import LLM_TOML_KEYS
from biaskit.errors import BiaskitError, InputError
from biaskit.options import Key, Keys, Options, spec_of

from ..state import State, fingerprint, hash_path, rel_path, shown_path
from ..tables import StageTable

if TYPE_CHECKING:
    from ..project import Project

WORK_DIR = "work"


class StageFailed(BiaskitError):
    """A stage ran but produced nothing usable (every LLM job failed, the release does not verify):
    ``biaskit run`` exits with code 1 (bad input is code 2)."""


@dataclass
class RunOptions:
    partial: bool = False  # human stages: go on with the judgments there are
    retry_failed: bool = False  # LLM stages: ask again for the jobs that failed
    progress: bool = True
    command: str | None = None  # the command line recorded by the stages (run logs, release.json)


@dataclass
class Context:
    project: Project
    state: State
    options: RunOptions
    artifacts: dict[str, Path] = field(default_factory=dict)  # artifact -> the latest stage's output
    echo: Callable[[str], None] = lambda s: None


@dataclass
class Outcome:
    """What a stage run gives: ``done`` (its ``produces`` path feeds the next stages) or ``waiting``
    (a human stage whose tasks are not all annotated yet)."""

    status: str
    produces: Path | None = None
    outputs: dict[str, Path] = field(default_factory=dict)  # every file or folder worth showing
    message: str = ""
    summary: dict[str, Any] = field(default_factory=dict)
    progress: dict[str, Any] | None = None
    warnings: list[str] = field(default_factory=list)
    partial: bool = False
    errors: int = 0  # LLM jobs still failing (retry_failed)


@dataclass(frozen=True)
class NameLimit:
    """How long the project's name may be for a stage: ``chars``, ``what`` is named after it (a folder,
    a Label Studio title, with its own limit), and what to do ``instead`` of shortening it (a key)."""

    chars: int
    what: str
    instead: str = ""


@dataclass(frozen=True)
class Command:
    """A command a stage runs (its options model) and how those options are set in the stage's table:
    every option of the model is a key of the same name, except ``keys`` (option -> the key's name,
    where two commands of a stage would clash or the table's word differs) and ``supplied`` (option
    -> how the stage fills it itself, e.g. ``"data": "the release"``: no key). ``input``: the option
    the stage's ``input`` key sets (hints name ``input`` for it)."""

    options: type[Options]
    keys: Mapping[str, str] = field(default_factory=dict)
    supplied: Mapping[str, str] = field(default_factory=dict)
    input: str | None = None

    def key(self, name: str) -> str | None:
        """The key of option ``name`` in the stage's table (None: supplied by the stage, or not a
        biaskit.toml option at all, such as ``--quiet``)."""
        spec = self.options.spec(name)
        if spec is None or not spec.toml or name in self.supplied:
            return None
        return self.keys.get(name, name)

    def mapping(self) -> dict[str, str]:
        """Option -> key, for every option that is a key of the stage's table."""
        return {n: k for n in self.options.specs() if (k := self.key(n)) is not None}


def stage_table(
    name: str,
    commands: tuple[Command, ...],
    *,
    base: type[StageTable] = StageTable,
    own: dict[str, Any] | None = None,
    defaults: dict[str, Any] | None = None,
    doc: str = "",
) -> type[StageTable]:
    """The table of a stage that runs ``commands``: one key per option (:meth:`Command.mapping`),
    with the option's type, default, checks, choices and help (an option two commands share is one
    key, the first command's), plus the stage's ``own`` keys (``key -> (annotation, Field)``).
    ``defaults``: the stage's own default for a key (None makes it optional; a function: made when the
    table is read, e.g. from the languages' data)."""
    fields: dict[str, Any] = {}
    defaults = defaults or {}
    for c in commands:
        for opt_name, key in c.mapping().items():
            if key in fields:
                continue
            fi = c.options.model_fields[opt_name]
            spec = spec_of(fi)
            ann = spec.user_type if spec is not None and spec.user_type is not None else fi.annotation
            if spec is not None and spec.toml_type is not None:
                ann = spec.toml_type
            if fi.metadata:
                ann = typing.Annotated[(ann, *fi.metadata)]
            kw: dict[str, Any] = {"description": fi.description, "json_schema_extra": fi.json_schema_extra}
            if key in defaults:
                d = defaults[key]
                if d is None:
                    ann = Optional[ann]  # noqa: UP045 (a runtime value pydantic reads)
                fld = Field(default_factory=d, **kw) if callable(d) else Field(d, **kw)
            elif fi.default_factory is not None:
                fld = Field(default_factory=fi.default_factory, **kw)
            else:
                fld = Field(fi.default, **kw)
            fields[key] = (ann, fld)
    fields.update(own or {})
    model = create_model(name, __base__=base, **fields)
    model.__doc__ = doc or f"``[stages]`` table of the stage running {', '.join(c.options.command for c in commands)}."
    model.own_keys = tuple(own or ())
    model.stage_defaults = dict(defaults)
    return model


# the options of curation's LLM block and their [llm] keys (hints under `biaskit run`), from its options model
LLM_KEYS = LLM_TOML_KEYS
# flags of `biaskit run` itself that a stage's hint may name
RUN_FLAGS = {"retry_failed": "--retry-failed", "partial": "--partial"}


class StageRunner:
    """Base class of the stage classes; :data:`biaskit.pipeline.stages.STAGES` lists them in run order."""

    name: ClassVar[str] = ""
    human: ClassVar[bool] = False
    title: ClassVar[str] = ""
    #: the stage's table in biaskit.toml (``[stages.NAME]``)
    table: ClassVar[type[StageTable]] = StageTable
    #: the artifacts it reads (any one of them, the first a stage before it made); () : only its ``input``
    inputs: ClassVar[tuple[str, ...]] = ()
    #: the artifact it writes
    output: ClassVar[str] = ""
    #: options that do not change a stage's results (left out of its fingerprint); a stage with
    #: ``commands`` adds their operational options by itself
    operational: ClassVar[tuple[str, ...]] = ("enabled",)
    #: the commands it runs whose options are declared once (its table is :func:`stage_table` of them)
    commands: ClassVar[tuple[Command, ...]] = ()
    #: keys that name a file or hold the text itself (a card text, a citation): checked when they name a file
    text_or_file: ClassVar[tuple[str, ...]] = ()
    #: keys that name a prompt template -> the template used when the key is not set (checked by :meth:`check`)
    prompt_keys: ClassVar[dict[str, str]] = {}

    def __init_subclass__(cls, **kw: Any) -> None:
        super().__init_subclass__(**kw)
        if cls.commands:
            ops = [k for c in cls.commands for n, k in c.mapping().items() if c.options.specs()[n].operational]
            cls.operational = tuple(dict.fromkeys((*cls.operational, *ops)))

    @classmethod
    def calls_llm(cls, table: StageTable) -> bool:
        """Whether the stage sends requests to the LLM of ``[llm]`` with these options."""
        return False

    @classmethod
    def needs_llm_model(cls, table: StageTable) -> bool:
        """Whether it needs ``[llm]``'s model (an MT engine ``llm:MODEL`` names its own)."""
        return cls.calls_llm(table)

    # ---- checked before any stage runs
    @classmethod
    def check(cls, project: Project) -> list[InputError]:
        """What is wrong with this stage's settings in ``project``, found before the first stage runs
        (:func:`~..project.check_project` asks every enabled stage; issue 28): one error per problem,
        naming its key and line. Here: the prompt templates it will use (:meth:`prompts_used`) exist, and
        the project's name fits what the stage makes of it (:meth:`name_limit`); a stage class adds what
        only it knows (its languages, models, a title it makes) by extending this method."""
        table = project.stage(cls.name)
        assert table is not None  # (asked for enabled stages only)
        out: list[InputError] = []
        dirs = project.config.project.prompts_dir
        if not dirs or project.path(dirs).is_dir():  # (a missing prompts folder is reported on its key)
            from biaskit.curation.prompts import get_prompt

            for key, ref in cls.prompts_used(table).items():
                try:
                    get_prompt(ref, [project.path(dirs)] if dirs else None)
                except InputError as exc:
                    out.append(project.error(f"stages.{cls.name}.{key}", exc.message, exc.fix or ""))
        limit = cls.name_limit(project)
        if limit is not None and len(project.name) > limit.chars:
            out.append(
                project.error(
                    "project.name",
                    f"the name is {len(project.name)} characters, too long for {limit.what}.",
                    f"shorten name in [project] to at most {limit.chars} characters"
                    + (f", or {limit.instead}." if limit.instead else "."),
                )
            )
        return out

    @classmethod
    def prompts_used(cls, table: Any) -> dict[str, str]:
        """Key -> the template reference this stage will load (:attr:`prompt_keys`, the key's value or
        its default)."""
        return {k: getattr(table, k, None) or default for k, default in cls.prompt_keys.items()}

    @classmethod
    def name_limit(cls, project: Project) -> NameLimit | None:
        """The most characters the project's name may have for this stage (a folder or a Label Studio
        title is named after it); None: any length. ``biaskit init`` refuses a name longer than its
        template's stages allow."""
        return None

    def __init__(self, ctx: Context):
        self.ctx = ctx
        self.project = ctx.project
        self.current_fingerprint = ""  # set by the runner before run()

    # ---- where things are
    @property
    def opts(self) -> Any:
        s = self.project.stage(self.name)
        assert s is not None
        return s

    @property
    def folder(self) -> Path:
        return self.project.workdir / WORK_DIR / self.name

    def rel(self, p: Path) -> str:
        """``p`` relative to the working folder when inside it (for messages)."""
        return rel_path(self.project.workdir, p)

    def key(self, p: Path | None) -> str | None:
        """How a path enters a fingerprint: relative to the working folder or else the project's folder
        when inside one of them, so that moving the folders changes no fingerprint."""
        if p is None:
            return None
        for base, tag in ((self.project.workdir, "work"), (self.project.root, "project")):
            rel = rel_path(base, p)
            if not Path(rel).is_absolute():
                return f"{tag}:{rel}"
        return str(p)

    @property
    def reads(self) -> str | None:
        """The artifact this stage reads: the first of :attr:`inputs` that a stage before it made (or
        the first one, when none did yet)."""
        options = self.inputs
        return next((r for r in options if r in self.ctx.artifacts), options[0] if options else None)

    def input_path(self) -> Path | None:
        """The file this stage reads: its ``input`` option, else the previous stage's output."""
        given = self.opts.input
        if isinstance(given, str):
            return self.project.path(given)
        return self.ctx.artifacts.get(self.reads) if self.reads else None

    def required_input(self) -> Path:
        """:meth:`input_path` of a stage that cannot be run without one (:func:`~..project.check_project`
        refuses a project where nothing gives an enabled stage its input)."""
        p = self.input_path()
        assert p is not None, f"stage {self.name}: nothing to read (check_project lets no such project run)"
        return p

    def input_files(self) -> list[Path]:
        """Every file whose content this stage's result depends on (hashed into its fingerprint)."""
        p = self.input_path()
        return [p] if p is not None else []

    # ---- fingerprint
    def option_values(self) -> dict[str, Any]:
        d = self.opts.model_dump(mode="json")
        for k in self.operational:
            d.pop(k, None)
        d.pop("llm", None)  # the effective LLM settings go in through extra()
        return d

    def extra(self) -> dict[str, Any]:
        """What else the result depends on (LLM endpoint and prompts, inventory, ...)."""
        return {}

    def fingerprint(self) -> str:
        from biaskit.version import __version__

        files = {self.key(p): hash_path(p) for p in self.input_files()}
        return fingerprint(
            {
                "stage": self.name,
                "options": self.option_values(),
                "inputs": files,
                "biaskit": __version__,
                **self.extra(),
            }
        )

    # ---- the commands it runs
    def command(self, options: type[Options]) -> Command:
        return next(c for c in self.commands if c.options is options)

    def command_options(self, options: type[Options], **supplied: Any) -> Any:
        """The options object of one of its commands from the stage's table: each option from its key
        (a file it reads relative to the project's folder), ``supplied`` for what the stage fills in,
        the command's default for the rest."""
        c = self.command(options)
        values: dict[str, Any] = {}
        for n, spec in options.specs().items():
            if n in supplied:
                values[n] = supplied[n]
                continue
            key = c.key(n)
            if key is None:
                continue
            v = getattr(self.opts, key)
            if spec.path in ("in_file", "in_dir", "in_path") and isinstance(v, (str, Path)):
                v = str(self.project.path(v))
            values[n] = v
        return options.model_validate(values)

    def speaker(self, options: type[Options] | None = None) -> Keys:
        """How hints name options while this stage runs (one of its commands: ``options``): the keys of
        its table, ``[llm]`` (or its own ``llm`` table) for the LLM block, flags of ``biaskit run``."""
        return self.speaker_for(self.project, options, self.ctx.options)

    @classmethod
    def speaker_for(cls, project: Project, options: type[Options] | None = None, run: RunOptions | None = None) -> Keys:
        """:meth:`speaker` of this stage in ``project``, also before it runs (:meth:`check`); it knows the
        values in force (its table, ``[llm]``, ``[project]``, the flags of ``biaskit run``), so that a hint
        never suggests what is set (:func:`biaskit.options.in_force`)."""
        table = f"stages.{cls.name}"
        opts = project.stage(cls.name)
        assert opts is not None  # (asked for an enabled stage)
        llm = f"{table}.llm" if getattr(opts, "llm", None) is not None else "llm"
        keys = {n: Key(llm, k) for n, k in LLM_KEYS.items()}
        keys.update({n: Key("run", f) for n, f in RUN_FLAGS.items()})
        keys.update({n: Key("project", n) for n in ("inventory", "prompts_dir")})  # [project]'s, for every stage
        for c in reversed([c for c in cls.commands if options is None or c.options is options]):
            if c.input:
                keys[c.input] = Key(table, "input")
            for n, k in c.mapping().items():
                ann = cls.table.model_fields[k].annotation
                keys[n] = Key(table, k, list_value=_holds_list(ann))
        tables: dict[str, Any] = {table: opts, "project": project.config.project, "run": run or RunOptions()}
        try:
            tables[f"{table}.llm"] = tables["llm"] = project.llm(cls.name)
        except ValueError:  # an invalid stage llm table: check_project reports it before any stage runs
            pass
        values = {k: getattr(opts, k) for k in type(opts).model_fields}
        for n, key in keys.items():
            attr = key.key.lstrip("-").replace("-", "_")  # (a flag of `biaskit run`: RunOptions' field)
            if key.table in tables and hasattr(tables[key.table], attr):
                values[n] = getattr(tables[key.table], attr)
        return Keys(shown_path(project.file), keys, default=table, values=values)

    # ---- running
    def run(self) -> Outcome:  # pragma: no cover - abstract
        raise NotImplementedError

    # ---- helpers for subclasses
    def inventory(self):
        from biaskit.inventory import load_inventory

        return load_inventory(self.project.path(self.project.config.project.inventory))

    def inventory_extra(self) -> dict[str, Any]:
        inv = self.project.config.project.inventory
        return {"inventory": hash_path(self.project.path(inv)) if inv else "builtin"}

    def prompts_dir(self) -> list[Path] | None:
        d = self.project.config.project.prompts_dir
        return [self.project.path(d)] if d else None

    def prompt(self, default: str):
        from biaskit.curation.prompts import get_prompt

        return get_prompt(getattr(self.opts, "prompt", None) or default, self.prompts_dir())

    def llm_values(self) -> dict[str, Any]:
        """The LLM block of the command a stage runs (:class:`~biaskit.curation.cli_options.LLMOptions`'s
        fields), from ``[llm]`` and the stage's own ``llm`` table (and ``biaskit run --retry-failed``)."""
        s = self.project.llm(self.name)
        values = {n: getattr(s, k) for n, k in LLM_KEYS.items()}
        prices = self.project.path(s.prices)
        values.update(
            prices=str(prices) if prices else None, no_cache=not s.cache, retry_failed=self.ctx.options.retry_failed
        )
        return values

    def llm_options(self):
        """The curation commands' LLM option block filled from ``[llm]`` and the stage's own ``llm`` table."""
        from biaskit.curation.cli_options import LLMOptions

        return LLMOptions(**self.llm_values())

    def llm_extra(self, *prompt_ids: str) -> dict[str, Any]:
        """The LLM settings that change replies (endpoint, model, decoding) and the prompts' hashes."""
        from biaskit.curation.llm_server import default_base_url

        s = self.project.llm(self.name)
        # given, else $OPENAI_BASE_URL, else the server `biaskit llm serve` runs for this model
        endpoint = default_base_url(s.base_url, s.model) or ("offline" if s.backend == "dummy" else "openai")
        prompts = {}
        for pid in prompt_ids:
            p = self.prompt(pid) if pid == prompt_ids[0] else _get_prompt(pid, self.prompts_dir())
            prompts[pid] = f"{p.ref}#{p.hash}"
        return {
            "llm": {
                "backend": s.backend,
                "model": s.model,
                "endpoint": endpoint,
                "temperature": s.temperature,
                "seed": s.seed,
                "max_tokens": s.max_tokens,
                "response_format": s.response_format,
            },
            "prompts": prompts,
        }

    def path_out(self, name: str) -> Path:
        self.folder.mkdir(parents=True, exist_ok=True)
        return self.folder / name


def _holds_list(ann: Any) -> bool:
    """Whether a field's annotation is a list (``list[str]``, ``Optional[list[str]]``, annotated)."""
    origin = typing.get_origin(ann)
    if origin in (list, tuple):
        return True
    return any(_holds_list(a) for a in typing.get_args(ann)) if origin is not None else False


def _get_prompt(pid: str, dirs):
    from biaskit.curation.prompts import get_prompt

    return get_prompt(pid, dirs)


def count_rows(path: Path) -> int:
    """Non-empty lines of a JSONL file (0 when missing)."""
    if not Path(path).is_file():
        return 0
    with open(path, "rb") as fh:
        return sum(1 for line in fh if line.strip())
