"""Options the `biaskit evaluate` commands share, declared once.

Choices come from the registries and constants of the code that implements them (through
:func:`biaskit.clitools.choice_enum`), so the CLI cannot offer a choice the code lacks or miss one
it gained. The model / device / dtype / batch-size / cache / quiet block is written here once and
used by every command as ``device: Device = "auto"`` etc.
"""
from __future__ import annotations

from typing import Annotated, List, Optional

import typer

from biaskit.clitools import choice_enum
from biaskit.readers import CAT_FORMATS, FORMATS as PAIR_FORMATS

from .cat_metrics import SPLITS, TIE_POLICIES
from .cat_modes import CAT_MODES
from .correlate import GROUP_MODES
from .engine import DEFAULT_BATCH_SIZE
from .ilps import PREDICT
from .mlm import NORMALISATIONS
from .models import KINDS
from .scorers import SCORERS
from .seat import BLEACH_MODES, POOLINGS, TEMPLATE_KINDS
from .protocols import CHOICES as PROTOCOL_CHOICES
from .stereoset import PIECE_AGGS

# ---- choices ------------------------------------------------------------------------------------------
PairScorer = choice_enum("PairScorer", SCORERS)
PairFormat = choice_enum("PairFormat", PAIR_FORMATS)
Unit = choice_enum("Unit", sorted({u for name in SCORERS for u in SCORERS.get(name).units}))
CatScorer = choice_enum("CatScorer", ("auto", *KINDS, *(n for n in SCORERS if getattr(SCORERS.get(n), "served", False))))
CatFormat = choice_enum("CatFormat", CAT_FORMATS)
CatSplit = choice_enum("CatSplit", ("both", *SPLITS))
PieceAgg = choice_enum("PieceAgg", PIECE_AGGS)
TiePolicy = choice_enum("TiePolicy", TIE_POLICIES)
Pooling = choice_enum("Pooling", POOLINGS)
Bleach = choice_enum("Bleach", BLEACH_MODES)
TemplateKind = choice_enum("TemplateKind", TEMPLATE_KINDS)
GroupMode = choice_enum("GroupMode", GROUP_MODES)
Predict = choice_enum("Predict", PREDICT)

# ---- scoring modes (IndiBias |C| normalisation, StereoSet CAT modes) ---------------------------------
Normalise = choice_enum("Normalise", NORMALISATIONS)
CatMode = choice_enum("CatMode", CAT_MODES)

# ---- paper protocols (docs/fidelity.md) ------------------------------------------------------------
ProtocolChoice = choice_enum("ProtocolChoice", PROTOCOL_CHOICES)
Protocol = Annotated[Optional[ProtocolChoice], typer.Option(
    "--protocol", help="A paper's setup by name (docs/fidelity.md); default auto: the protocol of the data's origin. "
                       "none: biaskit's own defaults (not comparable with a paper). Options you pass override "
                       "the protocol and are reported as deviations.", show_default=False)]


def protocol_value(p) -> Optional[str]:
    """The --protocol value (None when not given: the data's origin decides)."""
    return None if p is None else p.value


def print_protocol(console, applied) -> None:
    """The protocol line every evaluate command prints (yellow when the run deviates from it)."""
    from rich.text import Text

    d = applied if isinstance(applied, dict) else applied.as_dict()
    if not d:
        return
    style = "green" if d.get("comparable") else "yellow"
    if d.get("name") == "none":
        console.print(Text.assemble(("protocol none", style), f" ({d.get('chosen_by')}): biaskit's own defaults, not "
                                    "comparable with a paper's figures"), soft_wrap=True)
        return
    devs = d.get("deviations") or []
    console.print(Text.assemble((f"protocol {d.get('name')}", style), f": {d.get('title')} (chosen by "
                                f"{d.get('chosen_by')}); " + (f"{len(devs)} deviation(s):" if devs else
                                                               "no deviation")), soft_wrap=True)
    for x in devs:
        console.print(Text.assemble(("  deviation: ", "yellow"), x["text"]), soft_wrap=True)


def print_published(console, comp: dict) -> None:
    """The paper's figures beside the run, in the terminal (the first rows; report.md has them all)."""
    if not comp or not comp.get("rows"):
        return
    rows = [r for r in comp["rows"] if r.get("biaskit") is not None]
    shown = rows[:6]
    console.print(f"published figures ({comp['model']}, {comp['paper'].split('.')[0]}): " + "; ".join(
        f"{r['what']} paper {r['paper']:.2f} vs biaskit {r['biaskit']:.2f}" for r in shown)
        + (f"; ... {len(rows) - len(shown)} more in report.md" if len(rows) > len(shown) else ""), soft_wrap=True)


# ---- the model block ----------------------------------------------------------------------------------
_MODEL_HELP = "Model folder, alias (gemma3-270m, all-minilm-l6-v2) or cached hub name"
Models = Annotated[List[str], typer.Option("--model", "-m", help=_MODEL_HELP + ". Repeat to compare models.")]
Model = Annotated[str, typer.Option("--model", "-m", help=_MODEL_HELP + ".")]
OptionalModels = Annotated[Optional[List[str]], typer.Option("--model", "-m", help=_MODEL_HELP + ". Repeat to compare "
                                                                                    "models (one table).")]
Device = Annotated[str, typer.Option("--device", help="auto, cpu or cuda[:N].")]
Dtype = Annotated[Optional[str], typer.Option("--dtype", help="float32 (default), bfloat16, float16 (GPU).")]
BatchSize = Annotated[int, typer.Option("--batch-size", help="Most model inputs per forward pass (inputs of one "
                                                             "length are batched together).")]
NoCache = Annotated[bool, typer.Option("--no-cache", help="Do not read or write the on-disk score cache.")]
Quiet = Annotated[bool, typer.Option("--quiet", "-q", help="No progress bar.")]

# ---- large in-process models (docs/evaluation-scorers.md "Scaling up") ------------------------------
DeviceMap = Annotated[Optional[str], typer.Option(
    "--device-map", help="Spread the model over the GPUs (then CPU) with accelerate: auto, balanced or sequential.")]

# ---- served models (--scorer clm-api; docs/evaluation-scorers.md "Scaling up") ------------------------
BaseUrl = Annotated[Optional[str], typer.Option(
    "--base-url", help="clm-api: the server's OpenAI-compatible root, e.g. http://127.0.0.1:8000/v1 "
                       "(API key from $OPENAI_API_KEY).")]
Concurrency = Annotated[int, typer.Option("--concurrency", help="clm-api: requests in flight at once.")]


def served_options(scorer: str, base_url: Optional[str], concurrency: int) -> dict:
    """The scorer options of a served scorer, or the one-line error for a misplaced --base-url."""
    from biaskit.errors import BiaskitError

    served = scorer in SCORERS and getattr(SCORERS.get(scorer), "served", False)
    if served and not base_url:
        raise BiaskitError(f"--scorer {scorer} needs the server. Fix: pass --base-url http://HOST:PORT/v1")
    if base_url and not served:
        raise BiaskitError("--base-url is for a served model. Fix: pass --scorer clm-api (or drop --base-url)")
    return {"base_url": base_url, "concurrency": concurrency} if served else {}
