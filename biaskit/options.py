"""Each command's options, declared once: one pydantic model per command (docs/architecture.md,
"Options").

A command's options model is a subclass of :class:`Options` whose fields are declared with
:func:`option`: the field's name, type and default, and what the CLI and the project file need
(flag spelling, help text, help panel, choices from a registry, a path's kind, whether the option
changes results or is operational)::

    class PairsOptions(Options):
        data: Path = option(..., "--data", path="in_path", help="Minimal-pair file or release folder.")
        models: list[Any] = option(..., "--model", "-m", user_type=list[str], min_length=1, help="...")
        scorer: Optional[str] = option(None, "--scorer", choices=SCORERS, what="scorer", help="...")
        batch_size: int = option(64, "--batch-size", ge=1, operational=True, help="...")

From that one declaration come

- the **typer options** of the command: ``@PairsOptions.cli()`` on a function taking ``opts:
  PairsOptions`` gives it every field as an option (choices as an ``Enum`` built from the
  registry, paths checked by :mod:`biaskit.paths` before any work) and hands it one validated
  ``opts`` object (a bad value is one line naming the flag, exit 2);
- the **biaskit.toml table** of a pipeline stage that runs the command
  (:func:`biaskit.pipeline.stages.base.stage_table` copies the fields: same types, defaults, choices
  and checks; the project file's errors name the file, key and line);
- the **object the pure function takes** (``run_pairs(opts)``), its one entry shape; the keyword
  form of a notebook is the Python API's (:mod:`biaskit.api`), which builds the object with
  :meth:`Options.from_kwargs`;
- the **fingerprint**: :meth:`Options.operational` lists the fields that do not change results.

Hints speak the user's language: code that tells a user to set an option calls :func:`say`
(``say("lang", "en")``), :func:`name_of` or :func:`unset` with the option's field name, and the
place the user is renders it -- ``--lang en`` under a command (:class:`Flags`, set by
:meth:`Options.cli`), ``lang = "en" in [stages.evaluate] of biaskit.toml`` under ``biaskit run``
(:class:`Keys`, set by the pipeline for each stage), the keyword of the Python API elsewhere.
"""

from __future__ import annotations

import contextlib
import contextvars
import copy
import dataclasses
import difflib
import functools
import inspect
import json
import types
import typing
from collections.abc import Callable, Iterator
from enum import Enum
from typing import Any, ClassVar, Union

from pydantic import BaseModel, ConfigDict, Field, ValidationError, field_validator

from .errors import InputError

PATH_KINDS = ("in_file", "in_dir", "in_path", "out_file", "out_dir")


class OptionError(InputError):
    """An option value its model refuses: one line naming the option where the user is (exit 2)."""

    def __init__(self, message: str, fix: str):
        super().__init__(message, fix=fix)

    def __str__(self) -> str:
        return f"{self.message} Fix: {self.fix}"


# ------------------------------------------------------------------------------------------ declaring
@dataclasses.dataclass(frozen=True)
class Opt:
    """What an option is besides its type and default (kept in the field's ``json_schema_extra``).

    ``flags``: the CLI spellings (``"--model", "-m"``, a switch ``"--align/--no-align"``; default
    ``--field-name``); ``help``; ``panel``:
    the ``--help`` panel; ``choices``: a :class:`~biaskit.registry.Registry`, a list of names or a
    function returning them (checked with "did you mean"; ``what`` names them in the message);
    ``path``: one of :data:`PATH_KINDS` (``path_kw``: ``text=``, ``owns=``, ``must_exist=`` of
    :mod:`biaskit.paths`); ``operational``: does not change results (left out of a stage's
    fingerprint); ``cli``: offered as a flag; ``toml``: may be a biaskit.toml key (False: a flag of
    the command only, such as ``--quiet``: ``biaskit run`` has its own); ``python``: the keyword of
    the Python API when it is not the field's name (``out_dir`` for ``out``); ``user_type``: the type
    typed on the command line and in the file when the Python API accepts more (model objects);
    ``show_default``, ``metavar``: as typer's; ``toml_type``: the type in biaskit.toml when it differs
    from ``user_type`` (``--overlap N|adaptive`` is a string on the command line, a number or
    ``"adaptive"`` in the file); ``sep``: a list option the command line takes as one
    string of items separated by ``sep`` (``--lang en,hi``; the file and Python take a list, or such a
    string; choices are checked item by item). A ``bool`` option whose flags are ``"--x", "--no-x"`` is
    an on/off pair (``--no-plots`` for ``plots = false``).
    """

    flags: tuple[str, ...] = ()
    help: str = ""
    panel: str | None = None
    choices: Any = None
    what: str | None = None
    path: str | None = None
    path_kw: tuple[tuple[str, Any], ...] = ()
    operational: bool = False
    cli: bool = True
    toml: bool = True
    python: str | None = None
    user_type: Any = None
    show_default: bool | str = True
    metavar: str | None = None
    toml_type: Any = None
    sep: str | None = None

    def __call__(self, schema: dict) -> None:  # pydantic's json_schema_extra: the flag and kind, for tools
        schema["x-biaskit"] = {"flags": list(self.flags), "operational": self.operational, "path": self.path}

    def names(self) -> list[str] | None:
        """The allowed values (None: any)."""
        c = self.choices
        if c is None:
            return None
        if callable(c) and not hasattr(c, "names"):
            c = c()
        return list(c.names()) if hasattr(c, "names") else list(c)


def option(
    default: Any = ...,
    *flags: str,
    help: str = "",
    factory: Callable[[], Any] | None = None,
    ge: Any = None,
    gt: Any = None,
    le: Any = None,
    lt: Any = None,
    min_length: int | None = None,
    max_length: int | None = None,
    pattern: str | None = None,
    path_kw: dict | None = None,
    **spec: Any,
) -> Any:
    """A field of an :class:`Options` model (see :class:`Opt` for ``spec``); ``ge``/``gt``/``le``/
    ``lt``/``min_length``/``max_length``/``pattern`` are pydantic's checks (the CLI and the project file both get
    them); ``factory``: a default made per object (lists)."""
    if spec.get("path") is not None and spec["path"] not in PATH_KINDS:
        raise ValueError(f"path kind {spec['path']!r}: use one of {', '.join(PATH_KINDS)}")
    o = Opt(flags=tuple(flags), help=help, path_kw=tuple(sorted((path_kw or {}).items())), **spec)
    checks = {
        k: v
        for k, v in dict(
            ge=ge, gt=gt, le=le, lt=lt, min_length=min_length, max_length=max_length, pattern=pattern
        ).items()
        if v is not None
    }
    if factory is not None:
        return Field(default_factory=factory, description=help or None, json_schema_extra=o, **checks)
    return Field(default, description=help or None, json_schema_extra=o, **checks)


def spec_of(field: Any) -> Opt | None:
    """The :class:`Opt` of a pydantic ``FieldInfo`` (None: a plain field)."""
    x = getattr(field, "json_schema_extra", None)
    return x if isinstance(x, Opt) else None


def choice_value(value: Any, names: list[str], what: str) -> str:
    """``value`` as one of ``names`` (case-insensitively), or the error with "did you mean"."""
    v = value.value if isinstance(value, Enum) else str(value)
    if v in names:
        return v
    low = {n.lower(): n for n in names}
    if v.lower() in low:
        return low[v.lower()]
    close = difflib.get_close_matches(v.lower(), list(low), n=1)
    raise ValueError(
        f"unknown {what} '{v}'"
        + (f" (did you mean '{low[close[0]]}'?)" if close else "")
        + f"; use one of {', '.join(names)}"
    )


# ------------------------------------------------------------------------------------------ the model
class Options(BaseModel):
    """Base class of every command's options model (see the module docstring)."""

    model_config = ConfigDict(extra="forbid", arbitrary_types_allowed=True, protected_namespaces=())

    #: the command these options belong to (``"evaluate pairs"``), for messages and the parity test
    command: ClassVar[str] = ""

    @classmethod
    def __pydantic_init_subclass__(cls, **kw: Any) -> None:
        super().__pydantic_init_subclass__(**kw)
        if cls.command:
            _COMMAND_MODELS.append(cls)

    @field_validator("*", mode="before")
    @classmethod
    def _split(cls, v: Any, info) -> Any:
        spec = spec_of(cls.model_fields.get(info.field_name))
        if spec is None or not spec.sep or not isinstance(v, str):
            return v
        return [x.strip() for x in v.split(spec.sep) if x.strip()] or None

    @field_validator("*")
    @classmethod
    def _choices(cls, v: Any, info) -> Any:
        spec = spec_of(cls.model_fields.get(info.field_name))
        if spec is None or v is None:
            return v
        names = spec.names()
        if names is None:
            return v
        what = spec.what or info.field_name.replace("_", " ")
        if isinstance(v, (list, tuple)):
            return [choice_value(x, names, what) for x in v]
        return choice_value(v, names, what)

    # ---- what the model declares
    @classmethod
    def specs(cls) -> dict[str, Opt]:
        """Every option field and its :class:`Opt`, in declaration order."""
        return {n: s for n, f in cls.model_fields.items() if (s := spec_of(f)) is not None}

    @classmethod
    def spec(cls, name: str) -> Opt | None:
        return spec_of(cls.model_fields.get(name))

    @classmethod
    def flag(cls, name: str) -> str:
        """The long flag of field ``name`` (``models`` -> ``--model``; ``--show-x/--hide-x`` -> ``--show-x``)."""
        s = cls.spec(name)
        return next(
            (f.split("/")[0] for f in (s.flags if s else ()) if f.startswith("--")), "--" + name.replace("_", "-")
        )

    @classmethod
    def cli_fields(cls) -> dict[str, Opt]:
        return {n: s for n, s in cls.specs().items() if s.cli}

    @classmethod
    def toml_fields(cls) -> dict[str, Opt]:
        return {n: s for n, s in cls.specs().items() if s.toml}

    @classmethod
    def operational(cls) -> tuple[str, ...]:
        """The fields that do not change results (left out of a fingerprint)."""
        return tuple(n for n, s in cls.specs().items() if s.operational)

    @classmethod
    def default(cls, name: str) -> Any:
        f = cls.model_fields[name]
        if f.default_factory is not None:
            return f.get_default(call_default_factory=True)
        return f.default

    # ---- the Python API
    @classmethod
    def from_kwargs(cls, **kw: Any):
        """The options from the keywords of the Python API (``python`` aliases accepted); an error is
        one :class:`~biaskit.errors.InputError` naming the option where the user is (:func:`name_of`)."""
        alias = {s.python: n for n, s in cls.specs().items() if s.python}
        values = {alias.get(k, k): v for k, v in kw.items()}
        try:
            return cls.model_validate(values)
        except ValidationError as exc:
            raise cls.user_error(exc) from None

    @classmethod
    def user_error(cls, exc: ValidationError) -> OptionError:
        """A validation error as one line naming each option where the user is (a flag under a
        command, a key under ``biaskit run``, a keyword in Python)."""
        sp = _SPEAKER.get() or Python(cls)
        lines, fixes = [], []
        for e in exc.errors(include_url=False):
            field = str(e["loc"][0]) if e["loc"] else ""
            msg = e["msg"].removeprefix("Value error, ")
            if e["type"] == "extra_forbidden":
                close = difflib.get_close_matches(field, list(cls.specs()), n=1)
                lines.append(f"unknown option {sp.name(field)}")
                fixes.append(
                    (f"did you mean {sp.name(close[0])}? " if close else "")
                    + f"the options are: {', '.join(sp.name(n) for n in cls.specs())}"
                )
            elif e["type"] == "missing":
                lines.append(f"{sp.name(field)} is required")
                fixes.append(sp.tell(field))
            else:
                lines.append(f"{sp.set(field, e.get('input'))}: {msg}")
                fixes.append(f"give a valid {sp.name(field)}")
        return OptionError("; ".join(lines) + ".", "; ".join(fixes) + ".")

    # ---- the CLI
    @classmethod
    def cli(
        cls, arg: str = "opts", *, exclude: tuple[str, ...] = (), **defaults: Any
    ) -> Callable[[Callable], Callable]:
        """Decorator: a typer command taking ``arg: <this model>`` gets every CLI field as an option
        (``defaults``: this command's own defaults; ``exclude``: fields it does not offer) and is
        called with one validated object. While it runs, hints name its flags (:class:`Flags`)."""
        fields = {n: s for n, s in cls.cli_fields().items() if n not in exclude}
        params = [(n, *typer_param(cls, n, s, defaults.get(n, _NO))) for n, s in fields.items()]

        def make(values: dict[str, Any]) -> Options:
            try:
                return cls.model_validate(values)
            except ValidationError as exc:
                raise cls.user_error(exc) from None

        def deco(fn: Callable) -> Callable:
            wrapper = one_argument(fn, arg, params, make, speaker=Flags(cls))
            wrapper.__biaskit_options__ = cls  # type: ignore[attr-defined]
            return wrapper

        return deco


def one_argument(
    fn: Callable,
    arg: str,
    params: list[tuple[str, Any, Any]],
    make: Callable[[dict], Any],
    speaker: Speaker | None = None,
) -> Callable:
    """``fn`` as a typer command whose parameter ``arg`` is replaced by the options ``params``
    (``(name, annotation, typer.Option)``): typer sees each option, ``fn`` gets ``make(values)`` (enum
    values unwrapped) as ``arg``; ``speaker``: how hints name options while it runs. The one place a
    command's signature is rewritten (:meth:`Options.cli`)."""
    sig = inspect.signature(fn)
    hints = typing.get_type_hints(fn, include_extras=True)  # string annotations, Annotated[..., Option] kept
    own = [p.replace(annotation=hints.get(p.name, p.annotation)) for p in sig.parameters.values() if p.name != arg]
    extra = [inspect.Parameter(n, inspect.Parameter.KEYWORD_ONLY, default=opt, annotation=a) for n, a, opt in params]
    names = [n for n, _, _ in params]

    @functools.wraps(fn)
    def wrapper(**kw: Any) -> Any:
        values = {n: plain(kw.pop(n)) for n in names}
        if speaker is None:
            return fn(**{arg: make(values)}, **kw)
        with speaking(speaker):
            opts = make(values)
        with speaking(speaker.knowing(opts)):  # hints know what is set (never suggest it again)
            return fn(**{arg: opts}, **kw)

    wrapper.__signature__ = sig.replace(parameters=[*own, *extra], return_annotation=None)  # type: ignore[attr-defined]
    wrapper.__annotations__ = {p.name: p.annotation for p in [*own, *extra]}
    del wrapper.__wrapped__  # typer must read the new signature, not the wrapped one
    return wrapper


_NO: Any = object()
UNKNOWN: Any = object()  # an option whose value in force a speaker does not know
# every command's options model (hints outside a command: a field's flag is the one its command declares)
_COMMAND_MODELS: list[type[Options]] = []
# how to load a stage package's models when a hint needs them (a stage registers a loader on import)
_LOADERS: list[Callable[[], Any]] = []


def declare_models(loader: Callable[[], Any]) -> None:
    """Register ``loader`` (imports a stage package's options models): a hint given outside any command
    (a library call) finds a field's flag among them. A stage package calls this when it is imported,
    so that naming its options never depends on what was imported before."""
    _LOADERS.append(loader)


def command_models() -> list[type[Options]]:
    """Every command's options model (the registered loaders run once)."""
    while _LOADERS:
        _LOADERS.pop(0)()
    return _COMMAND_MODELS


def plain(x: Any) -> Any:
    """A value typer parsed, as the model takes it (``Enum`` members give their value)."""
    if isinstance(x, Enum):
        return x.value
    if isinstance(x, (list, tuple)):
        return [plain(v) for v in x]
    return x


_UNIONS = (Union, types.UnionType)  # Optional[X] and X | None


def _with(ann: Any, inner: Any) -> Any:
    """``ann`` (``str``, ``str | None``, ``list[str]``, ``list[str] | None``, either union spelling) with
    ``str`` replaced by ``inner``."""
    origin = typing.get_origin(ann)
    if origin in _UNIONS:
        args = [a for a in typing.get_args(ann) if a is not type(None)]
        return _with(args[0], inner) | None if len(args) == 1 else ann
    if origin is list:
        return list[inner]
    return inner


def _is_optional(ann: Any) -> bool:
    return typing.get_origin(ann) in _UNIONS and type(None) in typing.get_args(ann)


def typer_param(cls: type[Options], name: str, spec: Opt, default: Any = _NO) -> tuple[Any, Any]:
    """``(annotation, typer.Option)`` of one field (see :meth:`Options.cli`)."""
    import typer

    from . import paths
    from .clitools import choice_enum

    field = cls.model_fields[name]
    ann = spec.user_type or field.annotation
    names = spec.names()
    if spec.sep:  # one string of items on the command line (checked by the model, item by item)
        ann = str | None if _is_optional(ann) or field.default is None else str
        names = None
        if isinstance(default if default is not _NO else cls.default(name), (list, tuple)):
            default = spec.sep.join(default if default is not _NO else cls.default(name))
    if names is not None:
        enum = choice_enum(cls.__name__ + "".join(p.title() for p in name.split("_")), names)
        ann = _with(ann, enum)
    if default is _NO:
        default = ... if field.is_required() else cls.default(name)
    if isinstance(default, Enum):
        default = default.value
    kw: dict[str, Any] = {"help": spec.help or None, "show_default": spec.show_default}
    if spec.panel:
        kw["rich_help_panel"] = spec.panel
    if spec.metavar:
        kw["metavar"] = spec.metavar
    flags = spec.flags or ("--" + name.replace("_", "-"),)
    on = [f for f in flags if f.startswith("--") and not f.startswith("--no-")]
    off = [f for f in flags if f.startswith("--no-")]
    if field.annotation is bool and on and off:  # an on/off pair: --plots/--no-plots
        flags = (f"{on[0]}/{off[0]}", *(f for f in flags if f not in (on[0], off[0])))
    if spec.path:
        return ann, getattr(paths, spec.path)(default, *flags, **dict(spec.path_kw), **kw)
    return ann, typer.Option(default, *flags, **kw)


# ------------------------------------------------------------------------------------------ hints
class Speaker:
    """How an option is named in a hint, where the user is. The base: the Python API's keyword.

    ``values``: the options in force where the user is (the command's options object, the running
    stage's table), when known: :func:`in_force` reads them, so that a hint never tells the user to
    set what is set already (issue 28)."""

    verb = "pass"  # how a hint says to set it: "pass --lang en", "set lang = ... in [...]"
    values: Any = None  # an options object or a mapping field -> value (None: not known)

    def knowing(self, values: Any) -> Speaker:
        """This speaker, knowing the options in force (``values``: an options object or a mapping)."""
        other = copy.copy(self)
        other.values = values
        return other

    def value(self, field: str) -> Any:
        """The value of option ``field`` in force, or :data:`UNKNOWN`."""
        v = self.values
        if isinstance(v, dict):
            return v.get(field, UNKNOWN)
        return getattr(v, field, UNKNOWN) if v is not None else UNKNOWN

    def name(self, field: str) -> str:
        return f"{field}="

    def set(self, field: str, value: Any) -> str:
        return f"{field}={value!r}"

    def drop(self, field: str) -> str:
        return f"leave out {field}="

    def tell(self, field: str, value: Any = None, given: bool = False) -> str:
        return f"{self.verb} {self.set(field, value) if given else self.name(field)}"


class Python(Speaker):
    """In Python: the keyword of the function (the model's ``python`` alias when it has one)."""

    def __init__(self, model: type[Options] | None = None):
        self.model = model

    def name(self, field: str) -> str:
        s = self.model.spec(field) if self.model is not None else None
        return f"{s.python if s is not None and s.python else field}="

    def set(self, field: str, value: Any) -> str:
        return f"{self.name(field)}{value!r}"


class Flags(Speaker):
    """Under a command: its flags, from its options model(s) (a field they lack: ``--field-name``)."""

    def __init__(self, *models: type[Options]):
        self.models = models

    def flag(self, field: str) -> str:
        for m in self.models:
            if (s := m.spec(field)) is not None and s.cli:
                return m.flag(field)
        for m in command_models():  # outside a command (a library call): the command that declares it
            s = m.spec(field)
            if s is not None and s.cli:
                return m.flag(field)
        return "--" + field.replace("_", "-")

    def name(self, field: str) -> str:
        return self.flag(field)

    def set(self, field: str, value: Any) -> str:
        if isinstance(value, bool):  # a switch takes no value: --llm-fallback, --no-plots
            return self.flag(field) if value else (self.switch_off(field) or f"no {self.flag(field)}")
        return f"{self.flag(field)} {value}"

    def tell(self, field: str, value: Any = None, given: bool = False) -> str:
        if given and value is False and self.switch_off(field) is None:
            return f"leave out {self.flag(field)}"
        return super().tell(field, value, given)

    def switch_off(self, field: str) -> str | None:
        """The ``--no-`` flag of a switch, when it has one."""
        for m in (*self.models, *command_models()):
            s = m.spec(field)
            if s is not None and s.cli:
                return next((f for f in s.flags if f.startswith("--no-")), None)
        return None

    def drop(self, field: str) -> str:
        return f"drop {self.flag(field)}"


@dataclasses.dataclass
class Key:
    """Where an option is set in biaskit.toml: ``table`` (``stages.evaluate``, ``llm``) and ``key``;
    ``table == "run"``: a flag of ``biaskit run`` itself (``--retry-failed``); ``list_value``: the
    key holds a list (a value is shown as ``["..."]``)."""

    table: str
    key: str
    list_value: bool = False


class Keys(Speaker):
    """Under ``biaskit run``: the keys of the project file ``file`` (``keys``: field -> :class:`Key`;
    a field not there: ``default`` table, key = field; no default: the flag)."""

    verb = "set"

    def __init__(self, file: str, keys: dict[str, Key], default: str | None = None, values: Any = None):
        self.file, self.keys, self.default, self.values = str(file), dict(keys), default, values

    def where(self, field: str) -> Key | None:
        k = self.keys.get(field)
        if k is None and self.default:
            k = Key(self.default, field)
        return k

    def name(self, field: str) -> str:
        k = self.where(field)
        if k is None:
            return Flags().name(field)
        if k.table == "run":
            return f"`biaskit run {k.key}`"
        return f"{k.key} in [{k.table}] of {self.file}"

    def set(self, field: str, value: Any) -> str:
        k = self.where(field)
        if k is None:
            return Flags().set(field, value)
        if k.table == "run":
            return f"`biaskit run {k.key}`"
        shown = toml_value([value] if k.list_value and not isinstance(value, (list, tuple)) else value)
        return f"{k.key} = {shown} in [{k.table}] of {self.file}"

    def drop(self, field: str) -> str:
        k = self.where(field)
        if k is None or k.table == "run":
            return Flags().drop(field)
        return f"remove {k.key} from [{k.table}] of {self.file}"

    def tell(self, field: str, value: Any = None, given: bool = False) -> str:
        k = self.where(field)
        if k is not None and k.table == "run":
            return f"run {self.name(field)}"
        return super().tell(field, value, given)


def toml_value(v: Any) -> str:
    """A value as written in TOML (strings quoted, lists in brackets)."""
    if isinstance(v, bool):
        return "true" if v else "false"
    if isinstance(v, (int, float)):
        return repr(v)
    if isinstance(v, (list, tuple)):
        return "[" + ", ".join(toml_value(x) for x in v) + "]"
    return json.dumps(str(v), ensure_ascii=False)


_SPEAKER: contextvars.ContextVar[Speaker | None] = contextvars.ContextVar("biaskit_speaker", default=None)


@contextlib.contextmanager
def speaking(speaker: Speaker) -> Iterator[None]:
    """Within this block, hints name options as ``speaker`` does (a command: flags; a pipeline
    stage: project keys)."""
    token = _SPEAKER.set(speaker)
    try:
        yield
    finally:
        _SPEAKER.reset(token)


def current() -> Speaker:
    """The speaker of the place the user is; outside any: flags (a command not converted yet, or a
    library call made on a command's behalf)."""
    return _SPEAKER.get() or Flags()


def name_of(field: str, model: type[Options] | None = None) -> str:
    """Option ``field`` named where the user is (``--lang``, ``lang in [stages.evaluate] of FILE``);
    a validation error of ``model`` met outside a command or stage names the Python keyword."""
    sp = _SPEAKER.get()
    if sp is None and model is not None:
        return Python(model).name(field)
    return (sp or Flags()).name(field)


def say(field: str, value: Any = _NO) -> str:
    """How to set option ``field`` (to ``value``) where the user is: ``--lang en`` under a command,
    ``lang = "en" in [stages.evaluate] of biaskit.toml`` under ``biaskit run``."""
    sp = current()
    return sp.name(field) if value is _NO else sp.set(field, value)


def tell(field: str, value: Any = _NO) -> str:
    """:func:`say` with its verb: ``pass --lang en`` / ``set lang = "en" in [stages.evaluate] of biaskit.toml``."""
    return current().tell(field, None if value is _NO else value, given=value is not _NO)


def unset(field: str) -> str:
    """How to leave option ``field`` out where the user is: ``drop --normalise`` / ``remove normalise
    from [stages.evaluate] of biaskit.toml``."""
    return current().drop(field)


def in_force(field: str, value: Any) -> bool:
    """Whether option ``field`` is set to ``value`` where the user is (the command's options, the running
    stage's table). A hint never suggests a setting already in force: a message offers
    ``tell(field, value)`` only when this is False, and says what else to do when it is True."""
    v = current().value(field)
    return v is not UNKNOWN and v == value
