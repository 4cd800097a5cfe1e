"""The LLM option block every command that calls an LLM declares, and the LLM job runner as stages other
than curation reach it (docs/architecture.md, "LLM package").

Curation owns the LLM clients, the tasks and the one job runner (``curation/llm/``, ``curation/tasks/``,
``curation/runner.py``); other stages and the pipeline use them without importing curation (stages never
import each other) through what lives here:

- :data:`LLMS`, the LLM backend registry (the ``--llm`` choices): curation registers its backends in it
  when it is imported (``curation/llm/__init__.py``);
- :class:`LLMOptions` (``--llm``, ``--model``, ``--base-url``, the decoding options, ``--concurrency``,
  ``--max-retries``, ``--response-format``, ``--prices``, ``--timeout``, ``--no-cache``, ``--retry-failed``
  in the "LLM options" help panel), :class:`PromptFields` (``--prompt``, ``--prompts-dir``),
  :class:`DryRunFields` (``--dry-run``, ``--show``) and :func:`decoding` (a command's own decoding
  defaults): the base models of every such command's options model (curation's in
  ``curation/options.py`` and ``curation/pair_options.py``, ``annotate prelabel``'s in
  ``annotation/options.py``); the pipeline's ``[llm]`` table is made from the same fields
  (:data:`LLM_TOML_KEYS`);
- :func:`llm_jobs`: the job runner as one object (:class:`LLMJobs`: prices, prompt templates, tasks,
  :class:`~biaskit.curation.runner.JobRunner` and its run summary), a lazy entry of :data:`LLM_JOBS`
  that curation registers when it is imported (``curation/__init__.py`` names ``curation/jobs.py``).
  The CLI root imports every stage before a command is built, so the entry and the backends are there
  whenever a command runs.
"""

from __future__ import annotations

from pathlib import Path
from typing import TYPE_CHECKING, Any, Protocol

from .options import Options, name_of, option, tell
from .registry import Registry

PANEL = "LLM options"
#: the structured-output modes an LLM client negotiates, best first (``--response-format``)
FORMAT_MODES = ("json_schema", "json_object_schema", "json_object", "none")
RESPONSE_FORMATS = ("auto", *FORMAT_MODES)

#: the LLM backends (``--llm``): curation registers each one (``curation/llm/__init__.py``)
LLMS: Registry = Registry("LLM backend")
#: the LLM job runner (one entry, ``runner``): curation registers it (``curation/__init__.py``)
LLM_JOBS: Registry = Registry("LLM job runner")


class LLMJobs(Protocol):
    """What the LLM job runner offers a stage that is not curation (``curation/jobs.py`` implements it)."""

    def load_prices(self, path: Path | None) -> Any: ...

    def prompt(self, ref: str, prompts_dir: Any = None) -> Any: ...

    def task(self, name: str, prompt: Any = None, prompts_dir: Any = None) -> Any: ...

    def run(self, llm: Any, task: Any, items: list[dict], **runner: Any) -> Any: ...

    def print_dry_run(self, task: Any, items: list[dict], params: dict, show: int) -> None: ...

    def report_run(self, summary: Any, what: str, *, exit_when_all_failed: bool = True) -> None: ...


def llm_jobs() -> LLMJobs:
    """The LLM job runner (registered by curation when it is imported: the CLI root and the pipeline
    import it; a notebook that calls ``annotate prelabel``'s function imports ``biaskit.cli`` first)."""
    from .errors import BiaskitError

    if "runner" not in LLM_JOBS:
        raise BiaskitError(
            "no LLM job runner is registered: curation registers it when it is imported. Fix: run the "
            "command through `biaskit`, or `import biaskit.cli` before calling the function from Python."
        )
    return LLM_JOBS.get("runner")


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
        """Everything but backend, model and endpoint that an LLM backend of :data:`LLMS` takes."""
        from .cache import DiskCache

        return {
            "max_retries": self.max_retries,
            "response_format": self.response_format,
            "prices": llm_jobs().load_prices(self.prices),
            "timeout": self.timeout,
            "cache": False if self.no_cache else DiskCache(namespace="llm"),
        }

    def client(self):
        """The LLM client these options describe (``model`` is required except for the dummy backend)."""
        from .errors import InputError

        if not self.model and self.llm != "dummy":
            raise InputError(
                f"{name_of('model')} is required.",
                fix=f"{tell('model', 'gpt-4o-mini')} (the model id your endpoint serves; "
                f"{name_of('base_url')} for a local server), or {tell('llm', 'dummy')} to try "
                "offline.",
            )
        model = self.model or ("dummy" if self.llm == "dummy" else "")  # as curation's get_llm
        return LLMS.create(self.llm, model, base_url=self.base_url, **self.client_kwargs())


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
        """The prompt template these options name (``default``: the task's own)."""
        return llm_jobs().prompt(self.prompt or default, self.prompts_dir)


class DryRunFields(Options):
    """``--dry-run`` and ``--show`` of the commands that can print their prompts instead of sending them."""

    dry_run: bool = dry_run_option()
    show: int = show_option()
