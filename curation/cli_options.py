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
``--dry-run``, ``--show``); :func:`decoding` gives a command its task's decoding defaults.
"""

from __future__ import annotations

from typing import TYPE_CHECKING

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
