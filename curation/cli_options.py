"""The LLM and prompt option blocks of the ``curate`` commands, declared once (:mod:`biaskit.options`).

:class:`LLMOptions` is the base model of every command that calls the LLM (``curate tuples``,
``curate sentences``, ...: their models in :mod:`.options` derive from it): ``--llm``, ``--model``,
``--base-url``, ``--temperature``, ``--seed``, ``--max-tokens``, ``--concurrency``,
``--max-retries``, ``--response-format``, ``--prices``, ``--timeout``, ``--no-cache`` and
``--retry-failed`` (in the "LLM options" help panel). The ``--llm`` and ``--response-format``
choices come from the backend registry and the client's format list, so they cannot drift. The
pipeline's ``[llm]`` table (:class:`biaskit.pipeline.tables.LLMSettings`) and the keys its hints
name are derived from the same fields (:data:`LLM_TOML_KEYS`).

:class:`PromptFields` is the prompt block (``--prompt``, ``--prompts-dir``; :class:`DryRunFields`:
``--dry-run``, ``--show``); :func:`decoding` gives a command its task's decoding defaults. A command
not converted yet (``annotate prelabel``) takes either block through :func:`llm_options` /
:func:`prompt_options` (one typer argument, ``llm_opts`` / ``prompt_opts``), made from the same fields.
"""

from __future__ import annotations

import functools
from collections.abc import Callable
from pathlib import Path
from typing import TYPE_CHECKING, Any, cast

from biaskit.clitools import choice_enum
from biaskit.options import _NO, Options, name_of, option, spec_of, tell, typer_param

from .llm import FORMAT_MODES, LLMS

PANEL = "LLM options"
RESPONSE_FORMATS = ("auto", *FORMAT_MODES)
# the --llm and --response-format choices as enums (as the commands' typer options build them)
LLMBackend = choice_enum("LLMBackend", LLMS)
ResponseFormat = choice_enum("ResponseFormat", RESPONSE_FORMATS)


# ------------------------------------------------------------------------------------------ shared fields
def temperature_option(default: float | None = None) -> Any:
    return option(default, "--temperature", panel=PANEL, help="sampling temperature sent with every request.")


def seed_option(default: int | None = 0) -> Any:
    return option(default, "--seed", panel=PANEL, help="sampling seed sent with every request.")


def max_tokens_option(default: int | None = None) -> Any:
    return option(
        default, "--max-tokens", ge=1, panel=PANEL, help="longest reply; a reply cut off at this length is 'partial'."
    )


def prompt_option(default: str | None) -> Any:
    return option(
        default,
        "--prompt",
        help="template id (or id@version)" + (" (default: the task's own)." if default is None else "."),
    )


def prompts_dir_option() -> Any:
    return option(
        None, "--prompts-dir", path="in_dir", help="extra folder(s) of *.toml templates (also $BIASKIT_PROMPTS_DIR)."
    )


def dry_run_option() -> Any:
    return option(False, "--dry-run", toml=False, operational=True, help="print the prompts and exit (no requests).")


def show_option(default: int = 5, help: str = "prompts to print with --dry-run.") -> Any:
    return option(default, "--show", toml=False, operational=True, help=help)


def inventory_option() -> Any:
    return option(None, "--inventory", path="in_dir", help="folder with edited inventory JSON files.")


class LLMOptions(Options):
    """The LLM block of the commands that call the LLM (a base model: each command's model derives
    from it and may set its own defaults for ``temperature``, ``seed`` and ``max_tokens``)."""

    llm: str = option(
        "openai",
        "--llm",
        choices=LLMS,
        what="LLM backend",
        panel=PANEL,
        help="LLM backend: openai (any OpenAI-compatible endpoint) or dummy (offline, deterministic, "
        "schema-valid replies).",
    )
    model: str | None = option(None, "--model", panel=PANEL, help="model id served by the endpoint.")
    base_url: str | None = option(
        None, "--base-url", panel=PANEL, help="OpenAI-compatible endpoint (default $OPENAI_BASE_URL, else OpenAI)."
    )
    temperature: float | None = temperature_option()
    seed: int | None = seed_option()
    max_tokens: int | None = max_tokens_option()
    concurrency: int = option(
        1, "--concurrency", ge=1, le=64, operational=True, panel=PANEL, help="requests in flight (threads)."
    )
    max_retries: int = option(
        4,
        "--max-retries",
        ge=0,
        operational=True,
        panel=PANEL,
        help="retries on HTTP 429/5xx and dropped connections (with backoff).",
    )
    response_format: str = option(
        "auto",
        "--response-format",
        choices=RESPONSE_FORMATS,
        what="response format",
        panel=PANEL,
        help="structured-output mode (auto: the best the server accepts).",
    )
    prices: Path | None = option(
        None,
        "--prices",
        path="in_file",
        operational=True,
        panel=PANEL,
        help="TOML or JSON file mapping a model name to its input and output price, USD per 1M tokens.",
    )
    timeout: float = option(
        120.0, "--timeout", gt=0, operational=True, panel=PANEL, help="seconds a request may take (not retried)."
    )
    no_cache: bool = option(
        False, "--no-cache", toml=False, operational=True, panel=PANEL, help="do not read or write the response cache."
    )
    retry_failed: bool = option(
        False,
        "--retry-failed",
        toml=False,
        operational=True,
        panel=PANEL,
        help="ask again for the jobs in the errors file (failed or partial replies), bypassing their cached reply.",
    )

    def params(self) -> dict[str, Any]:
        """Decoding parameters sent with every request (None: the task's default)."""
        return {"temperature": self.temperature, "seed": self.seed, "max_tokens": self.max_tokens}

    def client_kwargs(self) -> dict[str, Any]:
        """Everything but backend, model and endpoint that :func:`~biaskit.curation.llm.get_llm` takes."""
        from biaskit.cache import DiskCache

        from .llm import load_prices

        return {
            "max_retries": self.max_retries,
            "response_format": self.response_format,
            "prices": load_prices(self.prices),
            "timeout": self.timeout,
            "cache": False if self.no_cache else DiskCache(namespace="llm"),
        }

    def client(self):
        """The LLM client these options describe (``model`` is required except for the dummy backend)."""
        from biaskit.errors import InputError

        from .llm import get_llm

        if not self.model and self.llm != "dummy":
            raise InputError(
                f"{name_of('model')} is required.",
                fix=f"{tell('model', 'gpt-4o-mini')} (the model id your endpoint serves; "
                f"{name_of('base_url')} for a local server), or {tell('llm', 'dummy')} to try "
                "offline.",
            )
        return get_llm(self.llm, model=self.model, base_url=self.base_url, **self.client_kwargs())


#: the LLM block's options in the project file's ``[llm]`` table: field -> key (the ``--llm`` flag is
#: the ``backend`` key; ``--no-cache`` is ``cache = false``, ``--retry-failed`` is ``biaskit run --retry-failed``)
LLM_TOML_KEYS = {n: ("backend" if n == "llm" else n) for n in LLMOptions.toml_fields()}
#: how a stage fills the LLM block of the command it runs (none of it is a key of the stage's own table)
LLM_SUPPLIED = {
    **{n: "from [llm] and the stage's own llm table" for n in LLMOptions.specs()},
    "retry_failed": "from `biaskit run --retry-failed`",
}


def decoding(params: dict[str, Any]) -> type[Options]:
    """The decoding options with a command's own defaults (its task's ``default_params``), as a base
    placed before :class:`LLMOptions`."""

    class Decoding(Options):
        temperature: float | None = temperature_option(params.get("temperature"))
        seed: int | None = seed_option(params.get("seed", 0))
        max_tokens: int | None = max_tokens_option(params.get("max_tokens"))

    return Decoding


if TYPE_CHECKING:

    class DecodingFields(Options):
        """The class :func:`decoding` builds, as a type checker sees it: mypy cannot follow a base class made
        by a call, so the models derived from one name this instead while type-checked (same fields and types;
        the defaults are each command's own at run time)."""

        temperature: float | None = None
        seed: int | None = None
        max_tokens: int | None = None


class PromptFields(Options):
    """The prompt block of the commands that render prompts (``--prompt`` is each command's own field)."""

    prompt: str | None = prompt_option(None)
    prompts_dir: list[Path] | None = prompts_dir_option()

    def template(self, default: str):
        from .prompts import get_prompt

        return get_prompt(self.prompt or default, self.prompts_dir)


class DryRunFields(Options):
    """``--dry-run`` and ``--show`` of the commands that can print their prompts instead of sending them."""

    dry_run: bool = dry_run_option()
    show: int = show_option()


class PromptOptions(PromptFields, DryRunFields):
    """The prompt block of a command not converted yet (:func:`prompt_options`)."""


# ------------------------------------------------------------------------------------------ not converted yet
def option_block(
    arg: str, cls: Callable[..., Any], options: list[tuple[str, Any, Any]]
) -> Callable[[Callable], Callable]:
    """Add ``options`` (``(name, annotation, typer.Option)``) to a typer command's signature and
    hand the command one ``cls(**values)`` argument named ``arg`` instead (enum values unwrapped);
    the signature rewriting is :func:`biaskit.options.one_argument`'s (an options model's commands
    use ``Model.cli()``, docs/architecture.md "Options")."""
    from pydantic import ValidationError

    from biaskit.options import Flags, one_argument, speaking

    model = cast("type[Options]", getattr(cls, "func", cls))  # a functools.partial carries a command's defaults

    def make(values: dict[str, Any]) -> Any:
        try:
            return cls(**values)
        except ValidationError as exc:  # a bad value: one line naming its flag (exit 2), not pydantic's dump
            with speaking(Flags(model)):
                raise model.user_error(exc) from None

    return lambda fn: one_argument(fn, arg, options, make)


def _block(model: type[Options], names: list[str], defaults: dict[str, Any]) -> list[tuple[str, Any, Any]]:
    specs = model.specs()
    return [(n, *typer_param(model, n, specs[n], defaults[n] if n in defaults else _NO)) for n in names]


def llm_options(*, exclude: tuple[str, ...] = (), **defaults: Any) -> Callable[[Callable], Callable]:
    """Add the LLM option block to a typer command; the command receives ``llm_opts: LLMOptions``.
    ``defaults`` set this command's defaults (e.g. ``temperature=0.7``); ``exclude`` leaves options out."""
    names = [n for n in LLMOptions.specs() if n not in exclude]
    return option_block("llm_opts", functools.partial(LLMOptions, **defaults), _block(LLMOptions, names, defaults))


def prompt_options(default: str | None, *, dry_run: bool = True) -> Callable[[Callable], Callable]:
    """Add the prompt option block; the command receives ``prompt_opts: PromptOptions``."""
    names = ["prompt", "prompts_dir", *(["dry_run", "show"] if dry_run else [])]
    block = _block(PromptOptions, names, {"prompt": default})
    spec = spec_of(prompt_option(default))
    assert spec is not None  # option() always attaches its Opt
    block[0] = ("prompt", *typer_param(PromptOptions, "prompt", spec, default))
    return option_block("prompt_opts", PromptOptions, block)
