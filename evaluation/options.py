"""The options of every ``biaskit evaluate`` command, declared once (:mod:`biaskit.options`).

Each model is the one source of its command's flags (``@PairsOptions.cli()`` in ``pairs_cli.py``),
of the pipeline's tables that run the command (``[stages.evaluate]`` from ``PairsOptions``,
``CatsOptions`` and ``SeatOptions``; ``[stages.seat_tests]`` from ``SeatTestsOptions``) and of the
one object the pure function takes (:func:`~biaskit.evaluation.pairs.run_pairs`,
:func:`~biaskit.evaluation.stereoset.run_cats`, :func:`~biaskit.evaluation.seat.run_seat`,
:func:`~biaskit.evaluation.ceat.run_ceat`, :func:`~biaskit.evaluation.ilps.run_ilps`,
:func:`~biaskit.evaluation.correlate.run_correlate`, ...; a notebook: ``biaskit.evaluate_pairs``,
which builds it from keywords). Choices come from the registries and constants of the code that
implements them, so no list here can drift from the code.

Options several commands share are declared once, as the functions below (``batch_size_option()``),
and used by each model as a field.
"""

from __future__ import annotations

from pathlib import Path
from typing import Any

from biaskit.options import Options, option
from biaskit.readers import CAT_FORMATS
from biaskit.readers import FORMATS as PAIR_FORMATS
from biaskit.readers.seat import TEMPLATE_KINDS

from .cat_metrics import SPLITS, TIE_POLICIES
from .cat_modes import CAT_MODES
from .choices import BLEACH_MODES, CLASSIFIER_METRICS, GROUP_MODES, PIECE_AGGS, POOLINGS, PREDICT
from .engine import DEFAULT_BATCH_SIZE
from .mlm import NORMALISATIONS
from .models import KINDS
from .protocols import CHOICES as PROTOCOL_CHOICES
from .scorers import SCORERS

MODEL_PANEL = "Model and device"
SERVED_PANEL = "Served model (--scorer clm-api)"
MODEL_HELP = "Model folder, alias (gemma3-270m, all-minilm-l6-v2) or cached hub name"
RELEASE_SPLITS = ("dev", "test")
UNITS = tuple(sorted({u for name in SCORERS for u in SCORERS.get(name).units}))
CAT_SCORERS = ("auto", *KINDS, *(n for n in SCORERS if getattr(SCORERS.get(n), "served", False)))


# ------------------------------------------------------------------------------------------ shared options
def models_option(*, required: bool = True, help: str = ". Repeat to compare models.") -> Any:
    return option(
        ... if required else None,
        "--model",
        "-m",
        help=MODEL_HELP + help,
        user_type=list[str] if required else list[str] | None,
        min_length=1 if required else None,
    )


def protocol_option() -> Any:
    return option(
        None,
        "--protocol",
        choices=PROTOCOL_CHOICES,
        what="protocol",
        show_default=False,
        help="A paper's setup by name (docs/fidelity.md); default auto: the protocol of the data's origin. "
        "none: biaskit's own defaults (not comparable with a paper). Options you pass override the "
        "protocol and are reported as deviations.",
    )


def batch_size_option(default: int = DEFAULT_BATCH_SIZE) -> Any:
    return option(
        default,
        "--batch-size",
        ge=1,
        operational=True,
        panel=MODEL_PANEL,
        help="Most model inputs per forward pass (inputs of one length are batched together).",
    )


def device_option() -> Any:
    return option("auto", "--device", operational=True, panel=MODEL_PANEL, help="auto, cpu or cuda[:N].")


def dtype_option() -> Any:
    return option(None, "--dtype", panel=MODEL_PANEL, help="float32 (default), bfloat16, float16 (GPU).")


def device_map_option() -> Any:
    return option(
        None,
        "--device-map",
        operational=True,
        panel=MODEL_PANEL,
        help="Spread the model over the GPUs (then CPU) with accelerate: auto, balanced or sequential.",
    )


def no_cache_option() -> Any:
    return option(
        False, "--no-cache", operational=True, panel=MODEL_PANEL, help="Do not read or write the on-disk score cache."
    )


def quiet_option() -> Any:
    return option(False, "--quiet", "-q", operational=True, toml=False, panel=MODEL_PANEL, help="No progress bar.")


def base_url_option() -> Any:
    return option(
        None,
        "--base-url",
        panel=SERVED_PANEL,
        help="clm-api: the server's OpenAI-compatible root, e.g. http://127.0.0.1:8000/v1 (API key from "
        "$OPENAI_API_KEY).",
    )


def concurrency_option() -> Any:
    return option(
        8, "--concurrency", ge=1, operational=True, panel=SERVED_PANEL, help="clm-api: requests in flight at once."
    )


def release_split_option(flag: str, help: str, **spec: Any) -> Any:
    return option(None, flag, choices=RELEASE_SPLITS, what="split", help=help, **spec)


def out_option(help: str) -> Any:
    return option(
        ..., "--out", path="out_dir", path_kw={"owns": ("summary.json", "comparison.csv")}, python="out_dir", help=help
    )


# ------------------------------------------------------------------------------------------ the commands
class ModelOptions(Options):
    """The model block of the commands that score with language models (``evaluate pairs``, ``evaluate
    cats``): in their ``--help``, the "Model and device" and "Served model" panels."""

    batch_size: int = batch_size_option()
    device: str = device_option()
    dtype: str | None = dtype_option()
    device_map: str | None = device_map_option()
    no_cache: bool = no_cache_option()
    quiet: bool = quiet_option()
    base_url: str | None = base_url_option()
    concurrency: int = concurrency_option()


class PairsOptions(ModelOptions):
    """``biaskit evaluate pairs`` (:func:`biaskit.evaluation.pairs.run_pairs`)."""

    command = "evaluate pairs"

    data: Path = option(
        ...,
        "--data",
        path="in_path",
        help="Minimal-pair file (CrowS-Pairs CSV, IndiBias CSV, biaskit JSONL/CSV) or a release folder "
        "(`biaskit release build`).",
    )
    release_split: str | None = release_split_option(
        "--split", "Release folder: score only this split (dev or test).", python="split"
    )
    out: Path = out_option("Output folder (summary.json, pairs.csv, report.md, ds_kde.png).")
    models: list[Any] = models_option()
    scorer: str | None = option(
        None,
        "--scorer",
        choices=SCORERS,
        what="scorer",
        help="mlm: pseudo-log-likelihood (masked LMs); clm: causal LMs; seq2seq: "
        "encoder-decoder LMs (mT5, mBART); clm-api: a served causal LM (--base-url). "
        "Default: the one the model's architecture calls for (its config.json; "
        "clm-api with --base-url).",
    )
    format: str = option(
        "auto",
        "--format",
        choices=PAIR_FORMATS,
        what="pair format",
        help="Input format (auto-detected from columns/extension).",
    )
    lang: str | None = option(
        None,
        "--lang",
        help="Score only this language (IndiBias: en or hi). Default: every language in the file, reported separately.",
    )
    unit: str | None = option(
        None,
        "--unit",
        choices=UNITS,
        what="masking unit",
        help="mlm masking unit: token (CrowS-Pairs); word (IndiBias §6.1 as biaskit reads it: U and M by words, "
        "each word masked whole); word-token (§6.1's formula read literally: U and M by words, one token of U "
        "masked at a time). Default: the protocol's.",
    )
    method: str | None = option(
        None,
        "--method",
        help="mlm: pll | pmu; clm: sum | mean; seq2seq: mean | sum. "
        "Default: the protocol's (IndiBias: mean for clm/seq2seq; no "
        "protocol: pll, sum, mean).",
    )
    normalise: str | None = option(
        None,
        "--normalise",
        choices=NORMALISATIONS,
        what="normalisation",
        help="mlm pll: none (CrowS-Pairs sum) or unmodified (divide by |C|, IndiBias §6.1). Default: the protocol's.",
    )
    protocol: str | None = protocol_option()
    limit: int | None = option(None, "--limit", ge=1, help="Score only the first N pairs of each language.")
    skip_invalid: bool = option(False, "--skip-invalid", help="Skip invalid rows (reported) instead of stopping.")
    seed: int = option(0, "--seed", help="Seed of the first subsample run (run i uses seed + i).")
    runs: int | None = option(None, "--runs", ge=1, show_default=False, help="Subsample runs (IndiBias Table 2: 5).")
    fraction: float | None = option(
        None,
        "--fraction",
        gt=0,
        le=1,
        show_default=False,
        help="Fraction of pairs per subsample run (IndiBias Table 2: 0.8).",
    )


class CatsOptions(ModelOptions):
    """``biaskit evaluate cats`` (:func:`biaskit.evaluation.stereoset.run_cats`; several models:
    :func:`biaskit.evaluation.compare.run_cats_multi`; ``--predictions``:
    :func:`~biaskit.evaluation.stereoset.run_cats_predictions`)."""

    command = "evaluate cats"

    data: Path = option(
        ...,
        "--data",
        path="in_path",
        help="StereoSet JSON (dev.json), the flat StereoSet JSONL, biaskit CAT JSONL, or a release folder with CATs.",
    )
    out: Path = out_option(
        "Output folder (summary.json, report.md, scores.jsonl, predictions.json, targets.csv, groups.csv)."
    )
    models: list[Any] | None = models_option(required=False, help=". Repeat to compare models (one table).")
    scorer: str = option(
        "auto",
        "--scorer",
        choices=CAT_SCORERS,
        what="CAT scorer",
        help="mlm: masked LM (word pieces; NSP for intersentence); clm: causal LM; clm-api: a served "
        "causal LM (--base-url).",
    )
    predictions: Path | None = option(
        None,
        "--predictions",
        path="in_file",
        help="Compute the metrics from this per-sentence score file (StereoSet "
        "predictions JSON or JSONL id/score) instead of a model.",
    )
    format: str = option(
        "auto", "--format", choices=CAT_FORMATS, what="CAT format", python="fmt", help="Input format (auto-detected)."
    )
    split: str | None = option(
        None,
        "--split",
        choices=("both", *SPLITS),
        what="CAT split",
        show_default=False,
        help="Which CATs to score (default: both; cao2022: intrasentence).",
    )
    release_split: str | None = release_split_option(
        "--release-split", "Release folder (--data DIR): score only its dev or test split."
    )
    lang: str | None = option(None, cli=False, help="Score only the CATs of this language.")
    limit: int | None = option(None, "--limit", ge=1, help="Score only the first N CATs (after --split).")
    piece_agg: str | None = option(
        None,
        "--piece-agg",
        choices=PIECE_AGGS,
        what="piece aggregation",
        show_default=False,
        help="mlm intrasentence: mean of piece probabilities (default, the reference) or log-probs.",
    )
    cat_mode: str | None = option(
        None,
        "--cat-mode",
        choices=CAT_MODES,
        what="CAT scoring mode",
        python="mode",
        show_default=False,
        help="likelihood (default; StereoSet ACL 2021 Table 4: fill pieces, NSP) or pll "
        "(pseudo-likelihood, Table 5; cao2022).",
    )
    ties: str | None = option(
        None,
        "--ties",
        choices=TIE_POLICIES,
        what="tie rule",
        python="tie_policy",
        show_default=False,
        help="Tie rule (default reference: tie = anti / not related).",
    )
    protocol: str | None = protocol_option()
    nsp_head: Path | None = option(
        None,
        "--nsp-head",
        path="in_file",
        path_kw={"text": False},
        help="A next-sentence head in the StereoSet reference format (ModelNSP .pth, "
        "e.g. the authors' GPT2Model_gpt2_0.0005.pth) to score intersentence CATs, "
        "as the paper does for every model.",
    )
    nsp_label: int | None = option(
        None,
        "--nsp-label",
        show_default=False,
        help="The head's 'is next' output (0 or 1) when its file name does not say "
        "(reference names: 0 for bert*/roberta-base).",
    )
    sentiment_model: str | None = option(
        None,
        "--sentiment-model",
        help="A sentiment classifier (folder or cached hub name): adds StereoSet's "
        "SentimentLM baseline (the most negative option wins).",
    )
    ensemble: bool = option(
        False,
        "--ensemble",
        help="Several --model: add the reference ENSEMBLE (weighted vote of the models' sentence scores) as a row.",
    )
    seed: int = option(0, "--seed", help="Seed of the RandomLM baseline.")
    allow_missing: bool = option(False, "--allow-missing", help="--predictions: drop CATs without scores.")


class SeatOptions(Options):
    """``biaskit evaluate seat`` (:func:`biaskit.evaluation.seat.run_seat`; several models:
    :func:`biaskit.evaluation.compare.run_seat_multi`)."""

    command = "evaluate seat"

    tests: list[Any] = option(
        ...,
        "--test",
        "-t",
        min_length=1,
        user_type=list[str],
        help="SEAT test (sent-bias .jsonl), a folder of tests, or shipped tests: indibias-paper "
        "(the IndiBias paper's Tables 3, 4, 9), indibias-team (biaskit's own), indibias "
        "(both), + /en or /hi, or a table row such as indibias-t3 / indibias-t4-r02. "
        "Repeatable.",
    )
    models: list[Any] = models_option()
    out: Path = out_option(
        "Output folder (results.csv, summary.json, report.md; several --model: one folder each + "
        "comparison.csv / comparison.md)."
    )
    pooling: str | None = option(
        None,
        "--pooling",
        choices=POOLINGS,
        what="pooling",
        show_default=False,
        help="Sentence vector from the last layer: mean of the tokens, cls (first position: "
        "IndiBias), first (first word piece without special tokens: sent-bias BERT), "
        "last (sent-bias GPT). Default: the protocol's.",
    )
    bleach: str | None = option(
        None,
        "--bleach",
        choices=BLEACH_MODES,
        what="bleach mode",
        show_default=False,
        help="Put word-list tests into bleached templates (auto: when every example is a "
        "word; sent-bias: never). Default: the protocol's.",
    )
    template: str | None = option(
        None, "--template", choices=TEMPLATE_KINDS, what="template kind", help="Force one template kind."
    )
    lang: str | None = option(None, "--lang", help="Template language en|hi (default: detected).")
    n_samples: int | None = option(
        None,
        "--n-samples",
        ge=1,
        show_default=False,
        help="Permutations (default 100,000); exact test when there are no more partitions than this.",
    )
    seed: int | None = option(
        None, "--seed", show_default=False, help="Seed of the sampled permutation test (default 1111)."
    )
    alpha: float | None = option(
        None,
        "--alpha",
        gt=0,
        lt=1,
        show_default=False,
        help="Significance level of the marks (IndiBias and sent-bias: 0.01; no protocol: 0.05).",
    )
    protocol: str | None = protocol_option()
    batch_size: int = batch_size_option(64)
    device: str = device_option()
    no_cache: bool = no_cache_option()


CEAT_GROUPS_HELP = (
    "Protected groups and attribute sets (JSON like data/cao2022/groups.json); default: Cao et al. "
    "2022's Table 4 groups against pleasant / unpleasant words."
)


def model_option() -> Any:
    """One model (the commands that score one model at a time: ``evaluate ceat | ilps``)."""
    return option(..., "--model", "-m", user_type=str, help=MODEL_HELP + ".")


def result_out_option(help: str) -> Any:
    """The result folder of an intrinsic metric (what ``evaluate correlate`` reads)."""
    return option(..., "--out", path="out_dir", path_kw={"owns": ("summary.json",)}, help=help)


class CeatOptions(Options):
    """``biaskit evaluate ceat`` (:func:`biaskit.evaluation.ceat.run_ceat`)."""

    command = "evaluate ceat"

    model: Any = model_option()
    corpus: list[Path] = option(
        ...,
        "--corpus",
        path="in_path",
        path_kw={"text": False},
        help="Text the words' contexts come from (files or "
        "folders of *.txt, one sentence per line; the paper used Reddit comments).",
    )
    out: Path = result_out_option("Output folder (results.csv, groups.csv, summary.json, report.md).")
    tests: list[str] | None = option(
        None, "--test", "-t", help="SEAT-format tests (X, Y, A, B word lists); default: group-level CEAT of --groups."
    )
    groups: Path | None = option(None, "--groups", path="in_file", help=CEAT_GROUPS_HELP)
    n_samples: int | None = option(
        None, "--n-samples", show_default=False, help="Samples N (default 10,000, the reference's)."
    )
    max_contexts: int = option(1000, "--max-contexts", help="Contexts per word (the first ones in the corpus).")
    seed: int = option(0, "--seed", help="Seed of the sampling.")
    protocol: str | None = protocol_option()
    batch_size: int = batch_size_option(64)
    device: str = device_option()
    no_cache: bool = no_cache_option()


class IlpsOptions(Options):
    """``biaskit evaluate ilps`` (:func:`biaskit.evaluation.ilps.run_ilps`)."""

    command = "evaluate ilps"

    model: Any = model_option()
    out: Path = result_out_option("Output folder (results.csv, groups.csv, summary.json, report.md).")
    groups: Path | None = option(None, "--groups", path="in_file", help=CEAT_GROUPS_HELP)
    template: list[str] | None = option(
        None,
        "--template",
        help="A template with {target} and {attribute} (repeatable; default '{target} is {attribute}.').",
    )
    predict: str | None = option(
        None,
        "--predict",
        choices=PREDICT,
        what="ILPS direction",
        show_default=False,
        help="target (Kurita et al. 2019, default) or attribute (Cao et al. 2022 §2).",
    )
    protocol: str | None = protocol_option()
    batch_size: int = batch_size_option(32)
    device: str = device_option()
    dtype: str | None = dtype_option()
    no_cache: bool = no_cache_option()
    quiet: bool = quiet_option()


class CorrelateOptions(Options):
    """``biaskit evaluate correlate`` (:func:`biaskit.evaluation.correlate.run_correlate`)."""

    command = "evaluate correlate"

    results: list[Path] | None = option(
        None,
        "--results",
        "-r",
        path="in_dir",
        help="biaskit result folders (evaluate cats/pairs/ceat/ilps), one per model and benchmark. Repeatable.",
    )
    extrinsic: Path = option(
        ...,
        "--extrinsic",
        path="in_file",
        help="CSV of downstream group scores: model, domain, group, metric, score.",
    )
    out: Path = result_out_option("Output folder (correlations.csv, variances.csv, summary.json, report.md, plots/).")
    groups: str | None = option(
        None,
        "--groups",
        choices=GROUP_MODES,
        what="group mode",
        show_default=False,
        help="all (default) or aligned: only groups present on both sides.",
    )
    protocol: str | None = protocol_option()
    models: list[Any] | None = models_option(required=False, help=". Repeat to compare models (one table).")
    cats: Path | None = option(
        None,
        "--cats",
        path="in_path",
        help="--protocol cao2022 with --model: the StereoSet data to score "
        "(intrasentence, pseudo-likelihood). The metrics' folders go to OUT-intrinsic/.",
    )
    corpus: list[Path] | None = option(
        None,
        "--corpus",
        path="in_path",
        path_kw={"text": False},
        help="--protocol cao2022 with --model: the "
        "text corpus CEAT draws the words' contexts from (one sentence per line).",
    )
    group_map: Path | None = option(
        None,
        "--group-map",
        path="in_file",
        help="CSV domain,term,group mapping terms to shared group names (averaged).",
    )
    ddof: int = option(0, "--ddof", help="Variance: 0 population (default), 1 sample.")
    min_groups: int = option(2, "--min-groups", help="Groups a model needs on each side to count.")
    no_plots: bool = option(False, "--no-plots", help="Skip the scatter plots.")


class SeatNamesOptions(Options):
    """``biaskit evaluate seat-names`` (:func:`biaskit.evaluation.seat_names.seat_names`)."""

    command = "evaluate seat-names"

    corpus: list[Path] = option(
        ...,
        "--corpus",
        "-c",
        path="in_path",
        path_kw={"text": False},
        help="Text corpus: a UTF-8 file (.txt, .gz) or a folder of *.txt / *.txt.gz. Repeatable.",
    )
    candidates: Path = option(
        ...,
        "--candidates",
        path="in_file",
        help="Candidate names per group: CSV/TSV/JSONL with group, "
        "name; JSON {group: [names]}; or a lexicon with lists.",
    )
    out: Path = option(
        ..., "--out", path="out_file", help="JSON with the top-k names per group (shipped list format) and counts."
    )
    top_k: int = option(14, "--top-k", "-k", help="Names kept per group (IndiBias: 14).")
    lang: str | None = option(None, "--lang", help="Lexicon candidates: which words, en or hi.")
    counts: Path | None = option(None, "--counts", path="out_file", help="Also write every candidate's count (CSV).")


class SeatTestsOptions(Options):
    """``biaskit evaluate seat-tests`` (:func:`biaskit.evaluation.seat_release.release_seat_tests`)."""

    command = "evaluate seat-tests"

    data: Path = option(..., "--data", path="in_path", help="A release folder (`biaskit release build`).")
    out: Path = option(
        ...,
        "--out",
        path="out_dir",
        help="Folder for the tests: <lang>/release-*.jsonl and index.json (written whole).",
    )
    lang: list[str] | None = option(None, "--lang", min_length=1, help="Languages (repeatable; default en and hi).")
    attributes: list[str] | None = option(
        None,
        "--attributes",
        help="Attribute pairs of the IndiBias lexicon, e.g. Pleasant/Unpleasant (repeatable; default per axis).",
    )
    min_records: int = option(1, "--min-records", ge=1, help="Released records a pair of groups needs.")
    split: str | None = option(
        None, "--split", choices=RELEASE_SPLITS, what="split", help="Only the groups of this split (dev or test)."
    )


def extrinsic_input_option(help: str) -> Any:
    return option(..., "--input", "-i", path="in_file", help=help)


class ExtrinsicOptions(Options):
    """What ``evaluate extrinsic classifier | generations`` share (declared here once, after each
    command's own options): the output, the models, and where a row names its group(s), domain and
    model."""

    out: Path = option(
        ..., "--out", path="out_file", help="CSV of group scores (model, domain, group, metric, score, count)."
    )
    model: list[str] | None = option(
        None, "--model", "-m", help="Model name for every row of the matching --input (else a 'model' column)."
    )
    append: bool = option(
        False, "--append", help="Merge into an existing --out (rows of the same model, domain and metric are replaced)."
    )
    group_col: str = option("group", "--group-col", help="Column with the group(s) a row mentions.")
    group_sep: str = option(";", "--group-sep", help="Separator of several groups in one cell.")
    domain_col: str = option("domain", "--domain-col", help="Column with the domain (gender, religion, ...).")
    domain: str | None = option(None, "--domain", help="One domain for every row (instead of a column).")
    model_col: str = option("model", "--model-col", help="Column with the model name.")


class ClassifierFields(Options):
    """The own options of ``evaluate extrinsic classifier`` (first in its ``--help``)."""

    input: list[Path] = extrinsic_input_option(
        "Per-example predictions (CSV/TSV/JSONL): gold label, prediction, group(s). Repeatable."
    )
    name: str = option("clf", "--name", help="Metric name prefix, e.g. toxd or hatex.")
    label_col: str = option("label", "--label-col", help="Gold label column.")
    pred_col: str = option("pred", "--pred-col", help="Prediction column (label, or score with --threshold).")
    positive: str | None = option(
        None, "--positive", help="The value of the positive (e.g. toxic) class (default: 1/true/toxic/...)."
    )
    threshold: float | None = option(None, "--threshold", help="Predictions are scores: positive when >= this.")
    metrics: list[str] = option(
        ...,
        "--metrics",
        factory=lambda: ["fpr", "fpr_gap"],
        sep=",",
        choices=CLASSIFIER_METRICS,
        what="metric",
        help="Comma-separated: fpr, fpr_gap, fnr, fnr_gap.",
    )


class ClassifierOptions(ExtrinsicOptions, ClassifierFields):
    """``biaskit evaluate extrinsic classifier`` (:func:`biaskit.evaluation.extrinsic.run_classifier`)."""

    command = "evaluate extrinsic classifier"


class GenerationsFields(Options):
    """The own options of ``evaluate extrinsic generations`` (first in its ``--help``)."""

    input: list[Path] = extrinsic_input_option(
        "Scored generations (CSV/TSV/JSONL): group(s) of the prompt and the classifier's score or label. Repeatable."
    )
    name: str = option("gen", "--name", help="Metric name prefix, e.g. b-sent, b-tox, b-regard.")
    score_col: str = option("score", "--score-col", help="Numeric score column (sentiment, toxicity, ...).")
    label_col: str = option("label", "--label-col", help="Label column (with --label-map or --positive).")
    label_map: str | None = option(
        None, "--label-map", help="Labels to numbers, e.g. negative=-1,neutral=0,positive=1."
    )
    positive: str | None = option(None, "--positive", help="Score = share of generations with this label.")


class GenerationsOptions(ExtrinsicOptions, GenerationsFields):
    """``biaskit evaluate extrinsic generations`` (:func:`biaskit.evaluation.extrinsic.run_generations`)."""

    command = "evaluate extrinsic generations"


def served_options(scorer: str, base_url: str | None, concurrency: int) -> dict:
    """The scorer options of a served scorer, or the one-line error for a misplaced base URL (named
    where the user is: ``--base-url`` / ``base_url in [stages.evaluate]``)."""
    from biaskit.errors import BiaskitError
    from biaskit.options import say, tell, unset

    served = scorer in SCORERS and getattr(SCORERS.get(scorer), "served", False)
    if served and not base_url:
        raise BiaskitError(f"{say('scorer', scorer)} needs the server. Fix: {tell('base_url', 'http://HOST:PORT/v1')}")
    if base_url and not served:
        raise BiaskitError(
            f"{say('base_url')} is for a served model. Fix: {tell('scorer', 'clm-api')} (or {unset('base_url')})"
        )
    return {"base_url": base_url, "concurrency": concurrency} if served else {}


def one_model(opts: Any, function: str) -> Any:
    """The one model of ``opts`` (a function that scores one model at a time)."""
    from biaskit.errors import BiaskitError
    from biaskit.options import tell

    models = list(opts.models or [])
    if len(models) != 1:
        raise BiaskitError(
            f"{function} scores one model, got {len(models)}. Fix: {tell('models', 'MODEL')}"
            + (" (several: the comparison functions of biaskit.evaluation.compare)" if models else "")
        )
    return models[0]
