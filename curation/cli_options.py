"""The LLM option block of the ``curate`` commands, declared once.

``@llm_options(temperature=0.7, max_tokens=256)`` adds ``--llm``, ``--model``, ``--base-url``,
``--temperature``, ``--seed``, ``--max-tokens``, ``--concurrency``, ``--max-retries``,
``--response-format``, ``--prices``, ``--timeout``, ``--no-cache`` and ``--retry-failed`` (in the
"LLM options" help panel) to a typer command and hands the command one :class:`LLMOptions`
argument named ``llm_opts``. The ``--llm`` and ``--response-format`` choices come from the backend
registry and the client's format list, so they cannot drift.
"""
from __future__ import annotations

import functools
from dataclasses import dataclass
from pathlib import Path
from typing import Any, Callable, Optional

import typer

from biaskit.clitools import choice_enum
from biaskit.paths import in_dir, in_file

from .llm import FORMAT_MODES, LLMS

PANEL = "LLM options"
LLMBackend = choice_enum("LLMBackend", LLMS)
ResponseFormat = choice_enum("ResponseFormat", ["auto", *FORMAT_MODES])


@dataclass
class LLMOptions:
    llm: str = "openai"
    model: Optional[str] = None
    base_url: Optional[str] = None
    temperature: Optional[float] = None
    seed: Optional[int] = 0
    max_tokens: Optional[int] = None
    concurrency: int = 1
    max_retries: int = 4
    response_format: str = "auto"
    prices: Optional[str | Path] = None
    timeout: float = 120.0
    no_cache: bool = False
    retry_failed: bool = False

    def params(self) -> dict[str, Any]:
        """Decoding parameters sent with every request (None: the task's default)."""
        return {"temperature": self.temperature, "seed": self.seed, "max_tokens": self.max_tokens}

    def client_kwargs(self) -> dict[str, Any]:
        """Everything but backend, model and endpoint that :func:`~biaskit.curation.llm.get_llm` takes."""
        from biaskit.cache import DiskCache

        from .llm import load_prices

        return {"max_retries": self.max_retries, "response_format": self.response_format,
                "prices": load_prices(self.prices), "timeout": self.timeout,
                "cache": False if self.no_cache else DiskCache(namespace="llm")}

    def client(self):
        """The LLM client these options describe (``--model`` is required except for ``dummy``)."""
        from biaskit.errors import InputError

        from .llm import get_llm

        if not self.model and self.llm != "dummy":
            raise InputError("--model is required.", fix="pass the model id your endpoint serves, e.g. "
                                                         "--model gpt-4o-mini (or --llm dummy to try offline).")
        return get_llm(self.llm, model=self.model, base_url=self.base_url, **self.client_kwargs())


def _options(defaults: dict[str, Any]) -> list[tuple[str, Any, Any]]:
    """``(name, annotation, typer.Option)`` for every LLM option."""
    d = {**{f: getattr(LLMOptions, f) for f in LLMOptions.__dataclass_fields__}, **defaults}
    o = functools.partial(typer.Option, rich_help_panel=PANEL)
    return [
        ("llm", LLMBackend, o(d["llm"], "--llm", help="LLM backend: openai (any OpenAI-compatible endpoint) or "
                                                      "dummy (offline, deterministic, schema-valid replies).")),
        ("model", Optional[str], o(d["model"], "--model", help="model id served by the endpoint.")),
        ("base_url", Optional[str], o(d["base_url"], "--base-url",
                                      help="OpenAI-compatible endpoint (default $OPENAI_BASE_URL, else OpenAI).")),
        ("temperature", Optional[float], o(d["temperature"], "--temperature")),
        ("seed", Optional[int], o(d["seed"], "--seed")),
        ("max_tokens", Optional[int], o(d["max_tokens"], "--max-tokens",
                                        help="longest reply; a reply cut off at this length is 'partial'.")),
        ("concurrency", int, o(d["concurrency"], "--concurrency", help="requests in flight (threads).")),
        ("max_retries", int, o(d["max_retries"], "--max-retries", help="retries on HTTP 429/5xx and dropped "
                                                                       "connections (with backoff).")),
        ("response_format", ResponseFormat, o(d["response_format"], "--response-format",
                                              help="structured-output mode (auto: the best the server accepts).")),
        ("prices", Optional[Path], in_file(d["prices"], "--prices", rich_help_panel=PANEL,
                                           help="TOML or JSON file mapping a model name to its input and output price, USD per 1M tokens.")),
        ("timeout", float, o(d["timeout"], "--timeout", help="seconds a request may take (not retried).")),
        ("no_cache", bool, o(d["no_cache"], "--no-cache", help="do not read or write the response cache.")),
        ("retry_failed", bool, o(d["retry_failed"], "--retry-failed",
                                 help="ask again for the jobs in the errors file (failed or partial replies), "
                                      "bypassing their cached reply.")),
    ]


def option_block(arg: str, cls: type, options: list[tuple[str, Any, Any]]) -> Callable[[Callable], Callable]:
    """Add ``options`` (``(name, annotation, typer.Option)``) to a typer command's signature and
    hand the command one ``cls(**values)`` argument named ``arg`` instead (enum values unwrapped);
    the signature rewriting is :func:`biaskit.options.one_argument`'s (an options model's commands
    use ``Model.cli()``, docs/architecture.md "Options")."""
    from biaskit.options import one_argument

    return lambda fn: one_argument(fn, arg, options, lambda values: cls(**values))


def llm_options(*, exclude: tuple[str, ...] = (), **defaults: Any) -> Callable[[Callable], Callable]:
    """Add the LLM option block to a typer command; the command receives ``llm_opts: LLMOptions``.
    ``defaults`` set this command's defaults (e.g. ``temperature=0.7``); ``exclude`` leaves options out."""
    return option_block("llm_opts", functools.partial(LLMOptions, **{k: v for k, v in defaults.items()}),
                        [o for o in _options(defaults) if o[0] not in exclude])


@dataclass
class PromptOptions:
    """``--prompt``, ``--prompts-dir``, ``--dry-run``, ``--show`` of the commands that render prompts."""
    prompt: Optional[str] = None
    prompts_dir: Optional[list[Path]] = None
    dry_run: bool = False
    show: int = 5

    def template(self, default: str):
        from .prompts import get_prompt

        return get_prompt(self.prompt or default, self.prompts_dir)


def prompt_options(default: Optional[str], *, dry_run: bool = True) -> Callable[[Callable], Callable]:
    """Add the prompt option block; the command receives ``prompt_opts: PromptOptions``."""
    opts = [("prompt", Optional[str], typer.Option(default, "--prompt", help="template id (or id@version)"
                                                   + (" (default: the task's own)." if default is None else "."))),
            ("prompts_dir", Optional[list[Path]], in_dir(None, "--prompts-dir", help="extra folder(s) of "
                                                          "*.toml templates (also $BIASKIT_PROMPTS_DIR)."))]
    if dry_run:
        opts += [("dry_run", bool, typer.Option(False, "--dry-run", help="print the prompts and exit (no requests).")),
                 ("show", int, typer.Option(5, "--show", help="prompts to print with --dry-run."))]
    return option_block("prompt_opts", PromptOptions, opts)
