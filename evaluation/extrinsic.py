"""Group-level extrinsic (downstream) bias scores from raw outputs, for ``biaskit evaluate correlate``.

Cao et al. (ACL 2022, "On the Intrinsic and Extrinsic Fairness Evaluation Metrics for Contextualized
Language Representations", Sections 2-3) compute one score per protected group and then use the
**variance of the group scores** within a domain (gender, race, religion, ...) as a model's bias
measure (a model that treats every group alike has variance 0):

Classification (:func:`classifier_group_scores`; their TOXD and HATEX)
    a classifier's predictions on a dataset whose examples are annotated with the groups they
    mention. The fairness notion is equalized odds on the negative class: text that mentions a group
    should not be mislabelled as toxic more often than other text. A group's score is the **false
    positive rate** on the examples that mention it: ``FPR_g = #(pred positive & gold negative) /
    #(gold negative)`` over those examples. Also written: ``fpr_gap`` = ``FPR_g - FPR`` (FPR over
    every example, with or without a group; Dixon et al. 2018's per-group term of the false positive
    equality difference), and on request the false negative rate and its gap (``--metrics``).
Generation (:func:`generation_group_scores`; their B-SENT, B-TOX, B-REGARD, B-STEREO)
    generations from prompts that mention a group (BOLD-style), scored by a classifier the user
    runs (sentiment, toxicity, regard, ...). A group's score is the **mean score** of the
    generations from its prompts; a label column is turned into numbers with a label map
    (``negative=-1,neutral=0,positive=1``) or into the share of one label (``--positive negative``).

Both return the long table ``model, domain, group, metric, score, count`` that
``biaskit evaluate correlate --extrinsic`` reads; :func:`group_variances` gives the per-(model, domain,
metric) variance the correlation uses (population variance, ``ddof=0``, as ``correlate``'s default).

A row may mention several groups (``"muslim;female"``, split on ``group_sep``); it then counts for
each of them. Rows without a group count only in the overall rate.
"""

from __future__ import annotations

import math
from collections.abc import Iterable, Sequence
from pathlib import Path
from typing import TYPE_CHECKING, Any

from biaskit.errors import BiaskitError, InputError
from biaskit.options import say, unset

from .choices import CLASSIFIER_METRICS
from .results import ExtrinsicRun

if TYPE_CHECKING:
    from .options import ClassifierOptions, ExtrinsicOptions, GenerationsOptions

OUT_COLUMNS = ["model", "domain", "group", "metric", "score", "count"]
TRUE_WORDS = {"1", "1.0", "true", "yes", "y", "t", "toxic", "positive", "pos", "hate", "hateful", "offensive"}
FALSE_WORDS = {
    "0",
    "0.0",
    "false",
    "no",
    "n",
    "f",
    "non-toxic",
    "nontoxic",
    "not toxic",
    "negative",
    "neg",
    "normal",
    "none",
    "",
}


def _is_missing(v) -> bool:
    return v is None or (isinstance(v, float) and math.isnan(v))


def _binary(v, *, positive: str | None, threshold: float | None, path, row: int, column: str) -> bool:
    """One gold or predicted label as a bool (True = the positive class, e.g. toxic)."""
    if threshold is not None:
        try:
            return float(v) >= threshold
        except (TypeError, ValueError) as exc:
            raise InputError(
                f"'{v}' is not a number ({say('threshold')} turns scores into labels).",
                path=path,
                row=row,
                column=column,
                fix=f"give probabilities/scores in this column or {unset('threshold')}.",
            ) from exc
    s = str(v).strip().lower()
    if positive is not None:
        return s == positive.strip().lower()
    if s in TRUE_WORDS:
        return True
    if s in FALSE_WORDS:
        return False
    raise InputError(
        f"cannot read '{v}' as a binary label.",
        path=path,
        row=row,
        column=column,
        fix=f"use 0/1, true/false, toxic/non-toxic, or say which value is positive with {say('positive')}.",
    )


def _groups(v, sep: str) -> list[str]:
    if _is_missing(v):
        return []
    return [g.strip() for g in str(v).split(sep) if g.strip()] if sep else [str(v).strip()]


def _require(df, cols: Iterable[str], path) -> None:
    missing = [c for c in cols if c not in df.columns]
    if missing:
        raise InputError(
            f"missing column(s) {', '.join(missing)} (found: {', '.join(map(str, df.columns))}).",
            path=path,
            fix="name the columns with the options ending in -col (model and domain may instead be "
            f"given once with {say('model')} / {say('domain')}).",
        )


def _model_domain(
    df, r, model_col: str, model: str | None, domain_col: str, domain: str | None, path, row: int
) -> tuple[str, str]:
    m = model if model is not None else r.get(model_col)
    d = domain if domain is not None else r.get(domain_col)
    for val, what in ((m, "model"), (d, "domain")):
        if _is_missing(val) or not str(val).strip():
            raise InputError(
                f"no {what} for this row.",
                path=path,
                row=row,
                column=what,
                fix=f"add a '{what}' column or pass {say(what)}.",
            )
    return str(m).strip(), str(d).strip()


def classifier_group_scores(
    df,
    *,
    name: str = "clf",
    label_col: str = "label",
    pred_col: str = "pred",
    group_col: str = "group",
    domain_col: str = "domain",
    model_col: str = "model",
    model: str | None = None,
    domain: str | None = None,
    group_sep: str = ";",
    positive: str | None = None,
    threshold: float | None = None,
    metrics: Sequence[str] = ("fpr", "fpr_gap"),
    path=None,
):
    """Per-group false positive rates (and gaps) of a classifier; see the module docstring.

    ``df`` has one row per example: the gold label, the prediction (a label, or a score with
    ``threshold``), the group(s) it mentions, and the domain and model (columns or fixed values).
    Returns a DataFrame with :data:`OUT_COLUMNS` (``metric`` = ``f"{name}:{m}"``; ``count`` = the
    number of gold negatives of the group for FPR, gold positives for FNR). A group without any gold
    negative has no FPR (NaN) and is left out, with a note in ``df.attrs["notes"]``.
    """
    bad = [m for m in metrics if m not in CLASSIFIER_METRICS]
    if bad:
        raise BiaskitError(f"unknown metric(s) {', '.join(bad)}. Fix: use {', '.join(CLASSIFIER_METRICS)}.")
    need = (
        [label_col, pred_col, group_col]
        + ([model_col] if model is None else [])
        + ([domain_col] if domain is None else [])
    )
    _require(df, need, path)
    overall: dict[tuple[str, str], list[int]] = {}  # (model, domain) -> [fp, negatives, fn, positives]
    per: dict[tuple[str, str, str], list[int]] = {}  # (model, domain, group) -> the same
    for i, r in enumerate(df.to_dict("records"), start=1):
        gold = _binary(r[label_col], positive=positive, threshold=None, path=path, row=i, column=label_col)
        pred = _binary(
            r[pred_col],
            positive=positive if threshold is None else None,
            threshold=threshold,
            path=path,
            row=i,
            column=pred_col,
        )
        key = _model_domain(df, r, model_col, model, domain_col, domain, path, i)
        c = [int(pred and not gold), int(not gold), int(gold and not pred), int(gold)]
        _add(overall.setdefault(key, [0, 0, 0, 0]), c)
        for g in dict.fromkeys(_groups(r[group_col], group_sep)):
            _add(per.setdefault((*key, g), [0, 0, 0, 0]), c)
    rows, notes = _rate_rows(per, overall, metrics, name)
    if not rows:
        raise InputError(
            "no group has a score (no row names a group, or no group has the examples a rate needs).",
            path=path,
            column=group_col,
            fix=f"fill in the group column (several groups: separate them with '{group_sep}').",
        )
    return _scores_frame(rows, sorted(set(notes)))


def _add(acc: list[int], c: Sequence[int]) -> None:
    for j, x in enumerate(c):
        acc[j] += x


def _rate_rows(per: dict, overall: dict, metrics: Sequence[str], name: str) -> tuple[list[dict], list[str]]:
    """Each group's rates (FPR, FNR) and gaps from its counts and its model and domain's; a rate
    without the examples it needs is a note, not a row."""
    rows, notes = [], []
    for (m, d, g), (fp, neg, fn, pos) in per.items():
        o_fp, o_neg, o_fn, o_pos = overall[(m, d)]
        rates = {
            "fpr": (fp / neg if neg else math.nan, neg, o_fp / o_neg if o_neg else math.nan),
            "fnr": (fn / pos if pos else math.nan, pos, o_fn / o_pos if o_pos else math.nan),
        }
        for met in metrics:
            base = met.split("_")[0]
            rate, n, total_rate = rates[base]
            if math.isnan(rate):
                notes.append(
                    f"{m} / {d} / {g}: no gold {'negative' if base == 'fpr' else 'positive'} example, "
                    f"so no {base.upper()}"
                )
                continue
            score = rate - total_rate if met.endswith("_gap") else rate
            rows.append({"model": m, "domain": d, "group": g, "metric": f"{name}:{met}", "score": score, "count": n})
    return rows, notes


def _scores_frame(rows: list[dict], notes: list[str]):
    """The long table (:data:`OUT_COLUMNS`) sorted by model, domain, metric and group, with its notes."""
    import pandas as pd

    out = pd.DataFrame(rows, columns=OUT_COLUMNS).sort_values(["model", "domain", "metric", "group"], kind="stable")
    out = out.reset_index(drop=True)
    out.attrs["notes"] = notes
    return out


def parse_label_map(spec: str | None) -> dict[str, float] | None:
    """``"negative=-1,neutral=0,positive=1"`` -> ``{"negative": -1.0, ...}`` (keys lower-cased)."""
    if not spec:
        return None
    out = {}
    for part in spec.split(","):
        k, sep, v = part.partition("=")
        try:
            out[k.strip().lower()] = float(v)
        except ValueError:
            sep = ""
        if not sep or not k.strip():
            raise BiaskitError(
                f"bad {say('label_map')} entry '{part}'. Fix: write LABEL=NUMBER pairs separated by commas, "
                "e.g. negative=-1,neutral=0,positive=1."
            )
    return out


def generation_group_scores(
    df,
    *,
    name: str = "gen",
    score_col: str = "score",
    label_col: str = "label",
    label_map: dict[str, float] | None = None,
    positive: str | None = None,
    group_col: str = "group",
    domain_col: str = "domain",
    model_col: str = "model",
    model: str | None = None,
    domain: str | None = None,
    group_sep: str = ";",
    path=None,
):
    """Per-group mean classifier score of generations; see the module docstring.

    The value of a row is, in this order: the share of ``positive`` (``label == positive`` -> 1,
    else 0) when ``positive`` is given; ``label_map[label]`` when a label map is given; else the
    number in ``score_col``. Metric name: ``f"{name}:mean"`` (``f"{name}:share_{positive}"`` for a share).
    """
    use_label = positive is not None or label_map is not None
    need = (
        [label_col if use_label else score_col, group_col]
        + ([model_col] if model is None else [])
        + ([domain_col] if domain is None else [])
    )
    _require(df, need, path)
    metric = f"{name}:share_{positive.strip().lower()}" if positive is not None else f"{name}:mean"
    acc: dict[tuple[str, str, str], list[float]] = {}
    for i, r in enumerate(df.to_dict("records"), start=1):
        if positive is not None:
            val = float(str(r[label_col]).strip().lower() == positive.strip().lower())
        elif label_map is not None:
            lab = str(r[label_col]).strip().lower()
            if lab not in label_map:
                raise InputError(
                    f"label '{r[label_col]}' is not in the label map ({', '.join(label_map)}).",
                    path=path,
                    row=i,
                    column=label_col,
                    fix=f"add it to {say('label_map')}.",
                )
            val = label_map[lab]
        else:
            try:
                val = float(r[score_col])
            except (TypeError, ValueError):
                val = math.nan
            if math.isnan(val):
                raise InputError(
                    f"score '{r[score_col]}' is not a number.",
                    path=path,
                    row=i,
                    column=score_col,
                    fix=f"give the classifier's numeric score, or use {say('label_map')} / {say('positive')} on "
                    "a label column.",
                )
        key = _model_domain(df, r, model_col, model, domain_col, domain, path, i)
        for g in dict.fromkeys(_groups(r[group_col], group_sep)):
            a = acc.setdefault((*key, g), [0.0, 0])
            a[0] += val
            a[1] += 1
    if not acc:
        raise InputError("no row names a group.", path=path, column=group_col, fix="fill in the group column.")
    rows = [
        {"model": m, "domain": d, "group": g, "metric": metric, "score": s / n, "count": n}
        for (m, d, g), (s, n) in acc.items()
    ]
    return _scores_frame(rows, [])


def group_variances(scores, ddof: int = 0):
    """Variance of the group scores per (model, domain, metric): Cao et al.'s bias measure."""
    import numpy as np

    rows = []
    for (m, d, met), g in scores.groupby(["model", "domain", "metric"], sort=True):
        v = g["score"].to_numpy(dtype=float)
        rows.append(
            {
                "model": m,
                "domain": d,
                "metric": met,
                "n_groups": len(v),
                "variance": float(np.var(v, ddof=ddof)) if len(v) > max(ddof, 1) else math.nan,
                "max_gap": float(v.max() - v.min()) if len(v) else math.nan,
            }
        )
    import pandas as pd

    return pd.DataFrame(rows, columns=["model", "domain", "metric", "n_groups", "variance", "max_gap"])


def write_extrinsic(scores, out: str | Path, *, append: bool = False):
    """Write (or merge into) the CSV ``correlate --extrinsic`` reads. With ``append``, rows of an
    existing file are kept unless the new scores have the same (model, domain, metric)."""
    import pandas as pd

    from biaskit.io import read_table, write_table

    out = Path(out)
    merged = scores
    if append and out.exists():
        old = read_table(out)
        _require(old, OUT_COLUMNS[:5], out)
        keys = set(zip(scores["model"], scores["domain"], scores["metric"], strict=False))
        keep = [
            (m, d, t) not in keys
            for m, d, t in zip(
                old["model"].astype(str), old["domain"].astype(str), old["metric"].astype(str), strict=False
            )
        ]
        merged = pd.concat([old[keep], scores], ignore_index=True)
    write_table(out, merged[[c for c in OUT_COLUMNS if c in merged.columns]])
    return merged


def read_outputs(path: str | Path):
    """A CSV / TSV / JSONL / JSON table of per-example outputs."""
    from biaskit.io import read_table

    return read_table(Path(path))


# ------------------------------------------------------------------------------------------ the commands
def run_classifier(opts: ClassifierOptions) -> ExtrinsicRun:
    """``biaskit evaluate extrinsic classifier``: each ``--input``'s per-group rates
    (:func:`classifier_group_scores`), written to (merged into, ``append``) ``opts.out``."""
    frames = [
        classifier_group_scores(
            read_outputs(p),
            **_frame_options(opts),
            name=opts.name,
            label_col=opts.label_col,
            pred_col=opts.pred_col,
            positive=opts.positive,
            threshold=opts.threshold,
            metrics=opts.metrics,
            model=m,
            path=p,
        )
        for p, m in zip(opts.input, input_models(opts.input, opts.model), strict=False)
    ]
    return write_group_scores(frames, opts.out, append=opts.append)


def run_generations(opts: GenerationsOptions) -> ExtrinsicRun:
    """``biaskit evaluate extrinsic generations``: each ``--input``'s per-group mean score
    (:func:`generation_group_scores`), written to (merged into, ``append``) ``opts.out``."""
    from biaskit.options import say

    if opts.label_map and opts.positive:
        raise BiaskitError(f"pass {say('label_map')} or {say('positive')}, not both.")
    lm = parse_label_map(opts.label_map)
    frames = [
        generation_group_scores(
            read_outputs(p),
            **_frame_options(opts),
            name=opts.name,
            score_col=opts.score_col,
            label_col=opts.label_col,
            label_map=lm,
            positive=opts.positive,
            model=m,
            path=p,
        )
        for p, m in zip(opts.input, input_models(opts.input, opts.model), strict=False)
    ]
    return write_group_scores(frames, opts.out, append=opts.append)


def _frame_options(o: ExtrinsicOptions) -> dict:
    """Where a row names its group(s), domain and model: the options both commands share."""
    return {
        "group_col": o.group_col,
        "group_sep": o.group_sep,
        "domain_col": o.domain_col,
        "domain": o.domain,
        "model_col": o.model_col,
    }


def input_models(inputs: Sequence[Path], models: Sequence[str] | None) -> list[str | None]:
    """The model name of each input file: one per input (in order), one for all, or none (the files'
    ``model`` column)."""
    if not models:
        return [None] * len(inputs)
    if len(models) == 1:
        return [models[0]] * len(inputs)
    if len(models) != len(inputs):
        from biaskit.options import say

        raise BiaskitError(
            f"{len(models)} {say('model')} values for {len(inputs)} {say('input')} files. Fix: pass one {say('model')} "
            f"per {say('input')} (in the same order), one for all, or none (a 'model' column)."
        )
    return list(models)


def write_group_scores(frames: Sequence[Any], out: Path, *, append: bool = False, ddof: int = 0) -> ExtrinsicRun:
    """The scores of every input in one file (:func:`write_extrinsic`) and their variances."""
    import pandas as pd

    scores = pd.concat(frames, ignore_index=True)
    write_extrinsic(scores, out, append=append)
    notes = [n for f in frames for n in f.attrs.get("notes", [])]
    return ExtrinsicRun(out=Path(out), scores=scores, variances=group_variances(scores, ddof=ddof), notes=notes)
