"""The LLM and prompt option blocks of the ``curate`` commands, declared once (:mod:`biaskit.options`)
in :mod:`biaskit.llm_options` (``annotate prelabel`` and the pipeline's ``[llm]`` table share them)
and imported from here by curation's commands.

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
not converted yet takes either block through :func:`llm_options` / :func:`prompt_options` (one typer
argument, ``llm_opts`` / ``prompt_opts``), made from the same fields.
"""

from __future__ import annotations

import functools
from collections.abc import Callable
from typing import TYPE_CHECKING, Any, cast

from biaskit.clitools import choice_enum
from biaskit.llm_options import (  # the LLM block, shared with annotate prelabel and the pipeline
    LLM_SUPPLIED,
    LLM_TOML_KEYS,
    PANEL,
    RESPONSE_FORMATS,
    DryRunFields,
    LLMOptions,
    PromptFields,
    decoding,
    dry_run_option,
    inventory_option,
    max_tokens_option,
    prompt_option,
    prompts_dir_option,
    seed_option,
    show_option,
    temperature_option,
)
from biaskit.options import _NO, Options, spec_of, typer_param

from .llm import LLMS  # the floor's backend registry, with curation's backends registered

if TYPE_CHECKING:
    from biaskit.llm_options import DecodingFields

# the --llm and --response-format choices as enums (as the commands' typer options build them)
LLMBackend = choice_enum("LLMBackend", LLMS)
ResponseFormat = choice_enum("ResponseFormat", RESPONSE_FORMATS)

__all__ = [  # re-exported: the LLM and prompt blocks (declared in biaskit/llm_options.py) curation's commands import
    "LLM_SUPPLIED",
    "LLM_TOML_KEYS",
    "LLMS",
    "PANEL",
    "RESPONSE_FORMATS",
    "DecodingFields",
    "DryRunFields",
    "LLMOptions",
    "PromptFields",
    "decoding",
    "dry_run_option",
    "inventory_option",
    "max_tokens_option",
    "prompt_option",
    "prompts_dir_option",
    "seed_option",
    "show_option",
    "temperature_option",
]


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
