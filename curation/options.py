"""The options of ``biaskit curate prompts | tuples | sentences | llm-task | cats | cats-retention | translate |
cat-translate``, declared once (:mod:`biaskit.options`).

Each model is the one source of its command's flags (``@TuplesOptions.cli()`` in ``gen_cli.py``)
and of the table of the pipeline stage that runs the command (``[stages.tuples]`` ...: the stage
classes of :mod:`biaskit.pipeline.stages.curation` derive their tables from these models). The
commands that call the LLM derive from :class:`~.cli_options.LLMOptions` (the LLM block, whose
fields are also the ``[llm]`` table) and take the task's own decoding defaults.
"""

from __future__ import annotations

from pathlib import Path
from typing import TYPE_CHECKING, Any, Literal

from pydantic import field_validator

from biaskit.options import Options, option

from .cats import DOMAIN_PRESETS
from .cats import SPLITS as CAT_SPLITS
from .cli_options import (
    DryRunFields,
    LLMOptions,
    PromptFields,
    decoding,
    dry_run_option,
    inventory_option,
    prompt_option,
    prompts_dir_option,
    show_option,
)
from .tasks.sentences import MODES as SENTENCE_MODES
from .tasks.sentences import SentenceTask
from .tasks.tuples import POLARITIES, TupleTask

# each LLM command's decoding options, with its task's defaults (a base built by a call: mypy sees DecodingFields)
if TYPE_CHECKING:
    from .cli_options import DecodingFields as _CatsDecoding
    from .cli_options import DecodingFields as _SentencesDecoding
    from .cli_options import DecodingFields as _TuplesDecoding
else:
    _TuplesDecoding = decoding(TupleTask.default_params)
    _SentencesDecoding = decoding(SentenceTask.default_params)
    _CatsDecoding = decoding({"temperature": 0.7, "max_tokens": 1200})

DOMAIN_PRESETS_HELP = "; ".join(f"{k} = {','.join(v)}" for k, v in DOMAIN_PRESETS.items())


def commas(v: Any) -> Any:
    """A comma-separated string (or a list of them: a repeated flag) as a list of its items."""
    if v is None:
        return None
    return [p.strip() for x in ([v] if isinstance(v, str) else v) for p in str(x).split(",") if p.strip()]


def out_jsonl_option() -> Any:
    return option(..., "--out", path="out_file", help="output JSONL (appended to; re-running resumes).")


class PromptsOptions(Options):
    """``biaskit curate prompts`` (:func:`biaskit.curation.prompts.load_prompts`): list the templates, or
    print one."""

    command = "curate prompts"

    prompts_dir: list[Path] | None = prompts_dir_option()
    show: str | None = option(None, "--show", toml=False, help="print one template (id or id@version).")


class TuplesOptions(_TuplesDecoding, LLMOptions, PromptFields, DryRunFields):
    """``biaskit curate tuples`` (:func:`biaskit.curation.generate.generate_tuples`)."""

    command = "curate tuples"

    axis: str = option(
        ..., "--axis", help="bias axis: gender, religion, caste, age, region, physical-appearance, socioeconomic, ..."
    )
    out: Path = out_jsonl_option()
    polarity: Literal["positive", "negative", "both"] = option(
        "both", "--polarity", choices=(*POLARITIES, "both"), help="positive, negative or both."
    )
    n: int = option(
        10, "--n", ge=1, help="attributes per identity and polarity (IndiBias: 10 positive and 10 negative)."
    )
    identities: list[str] | None = option(
        None,
        "--identities",
        user_type=str | None,
        help="comma-separated identity terms (default: the inventory's terms for the axis).",
    )
    lang: str = option("en", "--lang", help="the language of the attributes (the inventory's terms in it).")
    inventory: Path | None = inventory_option()
    prompt: str | None = prompt_option("attributes")

    _identities = field_validator("identities", mode="before")(lambda v: commas(v))


class SentencesOptions(_SentencesDecoding, LLMOptions, PromptFields, DryRunFields):
    """``biaskit curate sentences`` (:func:`biaskit.curation.generate.generate_sentences`)."""

    command = "curate sentences"

    tuples: Path = option(..., "--tuples", path="in_file", help="tuples JSONL from `curate tuples` (or annotated).")
    out: Path = out_jsonl_option()
    per_tuple: int = option(5, "--per-tuple", ge=1, help="sentences per tuple (IndiBias: 5).")
    mode: str = option(
        "stereo",
        "--mode",
        choices=tuple(SENTENCE_MODES),
        what="sentence mode",
        help="stereo: sentences that express the stereotype (template sentences); anti: sentences "
        "that go against it (sentences_anti).",
    )
    statuses: list[str] | None = option(
        None,
        "--status",
        help="only tuples with these statuses (comma-separated "
        "or repeated), e.g. accepted (default: all but "
        "rejected).",
    )
    inventory: Path | None = inventory_option()

    _statuses = field_validator("statuses", mode="before")(lambda v: commas(v))


class LLMTaskOptions(LLMOptions, PromptFields, DryRunFields):
    """``biaskit curate llm-task TASK`` (:class:`biaskit.curation.runner.JobRunner` over any task)."""

    command = "curate llm-task"

    input: Path = option(
        ..., "--input", path="in_file", help="JSONL, one input item per line (the task's template variables)."
    )
    out: Path = out_jsonl_option()


class CatsOptions(_CatsDecoding, LLMOptions):
    """``biaskit curate cats`` (:func:`biaskit.curation.generate.generate_cats`)."""

    command = "curate cats"

    out: Path = option(
        ...,
        "--out",
        path="out_file",
        help="CATs JSONL (biaskit.schema.CAT), rebuilt from every draft so far; drafts, invalid drafts "
        "and the retention report go beside it.",
    )
    domains: str = option(
        "stereoset",
        "--domains",
        help=f"comma-separated domains (inventory axes, race, profession) or a preset: {DOMAIN_PRESETS_HELP}.",
    )
    split: Literal["intrasentence", "intersentence", "both"] = option(
        "both", "--split", choices=(*CAT_SPLITS, "both"), help="intrasentence, intersentence or both."
    )
    per_target: int = option(5, "--per-target", ge=1, help="CATs asked for per target term and split (one request).")
    society: str = option(
        "India", "--society", help="whose stereotypes the prompts ask for (StereoSet: 'the United States')."
    )
    lang: str = option(
        "en",
        "--lang",
        help="the language the CATs are written in (en, hi; the target terms are the inventory's terms in it).",
    )
    targets: list[str] | None = option(
        None,
        "--targets",
        help="comma-separated target terms (default: the inventory's terms for the domain; one domain only).",
    )
    intra_prompt: str = option("cat_intrasentence", "--intra-prompt", help="template id (or id@version).")
    inter_prompt: str = option("cat_intersentence", "--inter-prompt", help="template id (or id@version).")
    prompts_dir: list[Path] | None = option(
        None, "--prompts-dir", path="in_dir", help="extra folder(s) of *.toml templates."
    )
    inventory: Path | None = inventory_option()
    dry_run: bool = dry_run_option()
    show: int = show_option(3, "prompts to print per split with --dry-run.")

    _targets = field_validator("targets", mode="before")(lambda v: commas(v))

    @field_validator("domains", mode="before")
    @classmethod
    def _domains(cls, v: Any) -> Any:
        return ",".join(commas(v)) if isinstance(v, (list, tuple)) else v


class CatsRetentionOptions(Options):
    """``biaskit curate cats-retention`` (:func:`biaskit.curation.cats.cat_retention`)."""

    command = "curate cats-retention"

    cats: Path = option(
        ..., "--cats", path="in_file", help="the --out of `curate cats` (its drafts and invalid files are read too)."
    )
    validated: Path | None = option(
        None,
        "--validated",
        path="in_file",
        help="the --out of `annotate apply --kind cat` (its .rejected.jsonl is read too).",
    )
    out: Path | None = option(None, "--out", path="out_file", help="write the report as JSON.")


# ------------------------------------------------------------------------------------------ translation
def _engines_help() -> str:
    from .mt_base import MT_ENGINES

    names = ", ".join(
        f"{n}{':MODEL' if n == 'llm' else ':PATH_OR_NAME' if n == 'hf' else ''}" for n in MT_ENGINES.names()
    )
    return f"comma-separated engines: {names}"


class MTOptions(LLMOptions):
    """What ``curate translate`` and ``curate cat-translate`` share: the target, the engines and the
    hf / googletrans / llm engines' options (the LLM block goes to the ``llm`` engine, whose model is
    named in ``--engines llm:MODEL``)."""

    model: str | None = option(None, cli=False, toml=False, help="the llm engine's model (llm:MODEL in --engines).")
    target: str = option(..., "--target", help="target language (ISO 639-1), e.g. hi")
    out: Path = option(..., "--out", path="out_file", help="candidates JSONL (appended as pairs finish; resumable)")
    source_lang: str = option("en", "--source-lang", help="language of the pairs to translate")
    device: str | None = option(
        None, "--device", operational=True, help="hf engine: cpu, cuda, cuda:1 (default: cuda if available)"
    )
    batch_size: int = option(16, "--batch-size", ge=1, operational=True, help="hf engine: sentences per forward pass")
    num_beams: int = option(1, "--num-beams", ge=1, help="hf engine: beam size (1 = greedy)")
    concurrency: int = option(4, "--concurrency", ge=1, operational=True, help="googletrans / llm: requests in flight")
    restart: bool = option(
        False,
        "--restart",
        toml=False,
        operational=True,
        help="ignore the records already in --out (the cache still applies)",
    )
    prompts_dir: Path | None = option(
        None, "--prompts-dir", path="in_dir", help="extra folder of prompt templates (llm engine)"
    )

    _engines = field_validator("engines", mode="before", check_fields=False)(lambda v: commas(v))

    def uses_llm(self) -> bool:
        return any(e.split(":", 1)[0].strip().lower() == "llm" for e in self.engines)  # type: ignore[attr-defined]

    def engine_options(self) -> dict[str, Any]:
        """The one options bag every engine is built from (each takes what it accepts)."""
        opts = {
            "base_url": self.base_url,
            "device": self.device,
            "batch_size": self.batch_size,
            "num_beams": self.num_beams,
            "concurrency": self.concurrency,
            "prompts_dir": str(self.prompts_dir) if self.prompts_dir else None,
            "backend": self.llm,
            "retry_failed": self.retry_failed,
            **self.params(),
        }
        if self.uses_llm():
            opts["client_options"] = self.client_kwargs()
        return opts


class TranslateOptions(MTOptions):
    """``biaskit curate translate`` (:func:`biaskit.curation.translate.translate_file`)."""

    command = "curate translate"

    pairs: Path = option(
        ..., "--pairs", path="in_file", help="pairs to translate: biaskit JSONL/CSV, CrowS-Pairs or IndiBias CSV"
    )
    engines: list[str] = option(..., "--engines", min_length=1, help=_engines_help())
    format: str = option("auto", "--format", help="auto | crows | indibias | biaskit")
    batch_pairs: int = option(
        16, "--batch-pairs", ge=1, operational=True, help="pairs per unit of work (written to --out when done)"
    )
    limit: int | None = option(None, "--limit", help="translate only the first N pairs")
    align: bool = option(
        True, "--align/--no-align", help="span substitution when an engine's S1/S2 are not minimal (see docs)"
    )


class CatTranslateOptions(MTOptions):
    """``biaskit curate cat-translate`` (:func:`biaskit.curation.cat_translate.translate_cats_file`)."""

    command = "curate cat-translate"

    cats: Path = option(
        ...,
        "--cats",
        path="in_file",
        help="CATs to translate: biaskit CAT JSONL (e.g. `annotate apply --kind cat` output), "
        "StereoSet dev.json or the flattened JSONL",
    )
    engines: list[str] = option(
        ..., "--engines", min_length=1, help=_engines_help() + " (llm translates a whole CAT in one request)"
    )
    out: Path = option(..., "--out", path="out_file", help="CAT candidates JSONL (appended as CATs finish; resumable)")
    source_lang: str = option("en", "--source-lang", help="language of the CATs to translate")
    batch_cats: int = option(
        16, "--batch-cats", ge=1, operational=True, help="CATs per unit of work (written to --out when done)"
    )


# ------------------------------------------------------------------------------------------ biaskit llm
def llm_dir_option(help: str, *, must_exist: bool = False) -> Any:
    return option(None, "--dir", path="in_dir", path_kw={"must_exist": must_exist}, operational=True, help=help)


class LLMServeOptions(Options):
    """``biaskit llm serve``: llama.cpp's OpenAI-compatible server on loopback (:mod:`.llm_server`)."""

    command = "llm serve"

    model: str = option(
        "gemma3-270m",
        "--model",
        help="gemma3-270m (GGUF from PyPI, chat format gemma), smollm2 (SmolLM2-135M-Instruct) or the path of a "
        ".gguf file; the name is the model id the server answers to.",
    )
    chat_format: str | None = option(
        None, "--chat-format", help="llama.cpp's chat format (default: the model's own; gemma for gemma3-270m)."
    )
    port: int | None = option(
        None,
        "--port",
        ge=1024,
        le=65535,
        help="port on 127.0.0.1 (default: the one used last if free, else a free one).",
    )
    ctx: int = option(2048, "--ctx", ge=256, help="context size in tokens (prompt + reply).")
    wait: float = option(300.0, "--wait", gt=0, help="seconds to wait for the server to answer.")
    dir: Path | None = llm_dir_option(
        "folder recording the server (pid, port, model; its log), default $BIASKIT_LLM_DIR or "
        "~/.local/share/biaskit/llm: a project whose llm table names the served model and no base_url uses it."
    )

    @field_validator("model")
    @classmethod
    def _model(cls, v: str) -> str:
        from .served_models import check_model

        return check_model(v)


class LLMStopOptions(Options):
    """``biaskit llm stop``: stop the server ``llm serve`` started."""

    command = "llm stop"

    dir: Path | None = llm_dir_option(
        "the folder given to `llm serve` (default $BIASKIT_LLM_DIR or ~/.local/share/biaskit/llm).", must_exist=True
    )
