"""StereoSet's SentimentLM baseline (arXiv 2020 §6.3, ACL 2021 §5.3), as ``eval_sentiment_models.py`` computes it.

"For a given pair of context associations, the model always picks the association with the most
negative sentiment." The reference scores every option with a sentiment classifier (the authors'
BERT fine-tuned on IMDB reviews, arXiv A.5) and uses the softmax probability of its class 0 (the
negative class) as the option's score, so the most negative option wins:

- intrasentence: the context with BLANK filled in, alone (``[CLS] sentence [SEP]``);
- intersentence: the pair ``[CLS] context [SEP] sentence [SEP]`` (token types 0 / 1);
- at most 128 tokens (``--max-seq-length 128``).

biaskit takes any Hugging Face sequence classifier: the negative class is the label whose name says
"neg" in ``config.id2label``, else index 0 as in the reference. The scores then go through the same
metric code as a model's (lms, ss, icat per split).
"""

from __future__ import annotations

from collections.abc import Sequence
from pathlib import Path
from typing import Any

from biaskit.errors import BiaskitError
from biaskit.options import say

MAX_LENGTH = 128  # the reference's --max-seq-length


def negative_index(config: Any) -> tuple[int, str]:
    """The index of the negative class and how it was found."""
    labels = {int(k): str(v) for k, v in (getattr(config, "id2label", None) or {}).items()}
    neg = [i for i, name in labels.items() if "neg" in name.lower()]
    if len(neg) == 1:
        return neg[0], f"label '{labels[neg[0]]}' (config.id2label)"
    return 0, "index 0, as the reference (the labels do not name a negative class)"


def option_inputs(cats: Sequence[Any]) -> list[tuple[str, str | None]]:
    """The text (and text pair) the reference classifies for every option, in CAT/option order."""
    from .cat_plan import locate_fill

    out: list[tuple[str, str | None]] = []
    for c in cats:
        for o in c.options:
            if c.split == "intrasentence":
                out.append((locate_fill(c.context, o.sentence).text, None))
            else:
                out.append((c.context, o.sentence))
    return out


def sentiment_scores(
    cats: Sequence[Any],
    model: str | Path,
    *,
    device: str = "auto",
    batch_size: int = 32,
    cache: Any = None,
    progress: bool = False,
) -> tuple[dict[str, float], dict]:
    """Sentence id -> P(negative) of every option, and a description of the classifier."""
    from biaskit.cache import cached_results
    from biaskit.errors import require
    from biaskit.progress import progress as bar_of

    require("torch", "evaluation", "SentimentLM")
    transformers = require("transformers", "evaluation", "SentimentLM")
    import torch

    from .engine import ENGINE_CACHE_VERSION, forward_batches
    from .models import fingerprint_dir, pick_device, resolve_model

    path = resolve_model(model)
    dev = pick_device(device)
    fix = "pass a sentiment classifier folder (AutoModelForSequenceClassification with its trained head) as " + say(
        "sentiment_model"
    )
    try:
        tok = transformers.AutoTokenizer.from_pretrained(str(path))
        clf, info = transformers.AutoModelForSequenceClassification.from_pretrained(str(path), output_loading_info=True)
    except (OSError, ValueError) as exc:
        raise BiaskitError(f"{path}: cannot load it as a sequence classifier ({exc}). Fix: {fix}") from exc
    untrained = [k for k in info.get("missing_keys", []) if not k.endswith("position_ids")]
    if untrained:  # transformers would put a random classification head on a language model
        raise BiaskitError(
            f"{path}: not a trained sequence classifier ({', '.join(sorted(untrained)[:2])} missing; the head "
            f"would be random). Fix: {fix}"
        )
    if clf.config.pad_token_id is None:  # batches are unpadded: the id only tells the model where a row ends
        clf.config.pad_token_id = tok.pad_token_id if tok.pad_token_id is not None else tok.eos_token_id
    clf = clf.to(dev).eval()
    neg, how = negative_index(clf.config)
    mid = {"engine": "sentiment", "v": ENGINE_CACHE_VERSION, "model": fingerprint_dir(path, kind="cls"), "neg": neg}
    inputs = option_inputs(cats)
    ids = [o.sentence_id for c in cats for o in c.options]

    def probs(x):
        return torch.softmax(clf(**x).logits.float(), dim=-1)[:, neg].double().cpu().tolist()

    def run(todo: list[int]):
        enc = [tok(inputs[i][0], inputs[i][1], truncation=True, max_length=MAX_LENGTH) for i in todo]
        with bar_of(len(todo), f"sentiment {Path(str(model)).name}", enabled=progress, unit="options") as bar:
            for idx, out in forward_batches(todo, enc, batch_size, dev, probs):
                yield idx, out
                bar.advance(len(idx))

    vals = cached_results(cache, [{"sent": mid, "a": a, "b": b} for a, b in inputs], run)
    return dict(zip(ids, vals, strict=False)), {"model": str(model), "negative_class": neg, "negative_class_from": how}


def sentiment_baseline(
    cats: Sequence[Any],
    model: str | Path,
    *,
    device: str = "auto",
    batch_size: int = 32,
    cache: Any = None,
    progress: bool = False,
    tie_policy: str = "reference",
) -> dict:
    """The SentimentLM row of ``summary["baselines"]``: lms, ss, icat per split and overall, with the
    paper's development-set figures beside it (arXiv 2020 Table 4)."""
    from .cat_metrics import SPLITS, evaluate, to_metric_items
    from .published import sentiment_comparison

    scores, info = sentiment_scores(cats, model, device=device, batch_size=batch_size, cache=cache, progress=progress)
    items, _ = to_metric_items(cats, scores)
    keys = ("lms", "ss", "icat", "count")
    out: dict = {
        s: {k: v for k, v in evaluate([x for x in items if x.split == s], tie_policy).items() if k in keys}
        for s in SPLITS
        if any(x.split == s for x in items)
    }
    out["overall"] = {k: v for k, v in evaluate(items, tie_policy).items() if k in keys}
    out["classifier"] = info
    out["published"] = sentiment_comparison(out)
    return out
