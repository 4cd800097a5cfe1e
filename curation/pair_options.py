"""The options of ``biaskit curate pairs | adapt | check``, declared once (:mod:`biaskit.options`).

Each model is the one source of its command's flags (``@AdaptOptions.cli()`` in ``gen_cli.py``), of
the table of the pipeline stage that runs it (``[stages.pairs]``, ``[stages.adapt]``,
``[stages.check]``: :func:`biaskit.pipeline.stages.base.stage_table`) and of the object the pure
function takes (:func:`~biaskit.curation.pairs.build_pairs_file`,
:func:`~biaskit.curation.adapt.adapt_to_file`). Choices come from the code that implements them.
``curate pairs`` also has the LLM and prompt blocks of :mod:`.cli_options` (its LLM fallback).
"""

from __future__ import annotations

from pathlib import Path
from typing import TYPE_CHECKING

from biaskit.options import Options, option
from biaskit.readers import FORMATS as PAIR_FORMATS

from .choices import DEFAULT_KEEP, NAME_SETS
from .cli_options import LLMOptions, PromptFields, decoding, inventory_option, prompt_option
from .tasks.pair_rewrite import PairRewriteTask

# the decoding options with the pair_rewrite task's defaults (a base built by a call: mypy sees DecodingFields)
if TYPE_CHECKING:
    from .cli_options import DecodingFields as _PairsDecoding
else:
    _PairsDecoding = decoding(PairRewriteTask.default_params)


class BuildPairsOptions(_PairsDecoding, LLMOptions, PromptFields):
    """``biaskit curate pairs`` (:func:`biaskit.curation.pairs.build_pairs_file`; the LLM and prompt
    blocks: its LLM fallback's client and ``pair_rewrite`` template)."""

    command = "curate pairs"

    sentences: Path = option(..., "--sentences", path="in_file", help="sentences JSONL from `curate sentences`.")
    out: Path = option(..., "--out", path="out_file", help="pairs file (.jsonl or .csv, biaskit schema).")
    inventory: Path | None = inventory_option()
    llm_fallback: bool = option(
        False, "--llm-fallback", help="ask the LLM (pair_rewrite prompt) when the identity span is not found."
    )
    prompt: str | None = prompt_option("pair_rewrite")


def language_codes() -> list[str]:
    """The languages with first names to draw (``data/languages/<code>/names.json``, origin ``india``)."""
    from biaskit import languages as L

    return [c for c, lg in L.all_languages().items() if lg.names is not None and lg.names.origin == "india"]


class AdaptOptions(Options):
    """``biaskit curate adapt`` (:func:`biaskit.curation.adapt.adapt_to_file`)."""

    command = "curate adapt"

    crows: Path = option(..., "--crows", path="in_file", help="CrowS-Pairs CSV (crows_pairs_anonymized.csv).")
    out: Path = option(..., "--out", path="out_file", help="adapted pairs (.jsonl or .csv).")
    keep: list[str] = option(
        ..., "--keep", factory=lambda: list(DEFAULT_KEEP), sep=",", help="comma-separated bias types to keep."
    )
    names: str = option(
        "indibias",
        "--names",
        choices=NAME_SETS,
        what="name set",
        help="indibias (IndiBias Table 10's most common names, one religion per pair), indibias-hindu, "
        "indibias-muslim, india (random from the inventory), india-hindu, india-muslim, "
        "india-christian, india-sikh or none.",
    )
    seed: int = option(0, "--seed", help="name choice seed (same seed -> same names).")
    lexicon: Path | None = option(
        None,
        "--lexicon",
        path="in_file",
        help="CSV source,target[,match,note] (default: the packaged US -> India lexicon).",
    )
    drop_flagged: bool = option(False, "--drop-flagged", help="drop pairs the checker finds not minimal.")
    limit: int | None = option(None, "--limit", ge=1, help="stop after the first N adapted pairs (a trial).")
    inventory: Path | None = inventory_option()
    lang: str | None = option(
        None,
        "--lang",
        choices=language_codes,
        what="language",
        help="the language the pairs will be translated into: --names india* draws from its first names "
        "(data/languages/LANG/names.json; default: the default target language's).",
    )


class CheckOptions(Options):
    """``biaskit curate check`` (:func:`biaskit.check.check_file_stream`; the pipeline's check stage runs
    :func:`biaskit.check.check_pairs` on the pairs before it)."""

    command = "curate check"

    pairs: Path = option(
        ..., "--pairs", path="in_file", help="pairs file: biaskit JSONL/CSV, CrowS-Pairs or IndiBias CSV."
    )
    out: Path | None = option(None, "--out", path="out_file", help="write every pair with its flags (JSONL).")
    format: str = option(
        "auto", "--format", choices=PAIR_FORMATS, what="pair format", help="auto, crows, indibias or biaskit."
    )
    lang: str | None = option(None, "--lang", help="only this language view (IndiBias: en or hi).")
    sources: Path | None = option(
        None,
        "--sources",
        path="in_file",
        help="source-language pairs for translated files (matched by source_id / pair_id).",
    )
    inventory: Path | None = inventory_option()
    strict: bool = option(False, "--strict", toml=False, help="exit with code 1 when any pair is flagged.")
    examples: int = option(3, "--examples", toml=False, operational=True, help="example rows to print per flag.")
