"""``biaskit.evaluate_pairs``: score minimal pairs from a notebook (docs/python-api.md).

The same run as ``biaskit evaluate pairs`` (:func:`biaskit.evaluation.pairs.run_pairs`: the scorer,
the cache, the metrics, the files), returned as a :class:`PairsResult` instead of printed::

    res = biaskit.evaluate_pairs(rel, model="gemma3-270m", split="test")
    res.pairs          # DataFrame, one row per pair (pairs.csv): scores, ds, win, tie, sentences
    res.summary        # dict (summary.json): metric_score, stereo/antistereo, CI, by_lang, by_bias_type
    res.table()        # DataFrame: the headline numbers per language
    res.plots["ds_kde"]  # the KDE of DS (IndiBias Appendix C): .figure is the matplotlib Figure

``data``: a release folder or :class:`~biaskit.release.frames.Release` (``split``, ``lang`` pick
a part), a pairs file any reader reads, or a DataFrame with ``sent_more, sent_less, bias_type,
direction`` (and optionally ``lang``, ``pair_id``, ``source_id``, ``group_more``, ``group_less``) or
the release's wide layout (``sent_more_<lang>`` ...).
"""

from __future__ import annotations

import tempfile
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any

from biaskit.errors import BiaskitError, InputError


class Plot:
    """A matplotlib ``Figure`` that shows itself in a notebook (``_repr_png_``: biaskit draws on the Agg
    canvas, not through pyplot, so Jupyter would print the Figure's repr). ``.figure`` is the Figure;
    ``savefig`` and every other attribute are the Figure's."""

    def __init__(self, figure: Any):
        self.figure = figure

    def _repr_png_(self) -> bytes:
        import io

        buf = io.BytesIO()
        self.figure.savefig(buf, format="png")
        return buf.getvalue()

    def __getattr__(self, name: str) -> Any:
        return getattr(self.figure, name)

    def __repr__(self) -> str:
        return f"Plot({self.figure!r})"


@dataclass
class PairsResult:
    """One model's result: the per-pair frame, the summary, the plots, and where the files are."""

    pairs: Any  # pandas DataFrame (pairs.csv)
    summary: dict[str, Any]  # summary.json
    plots: dict[str, Any] = field(default_factory=dict)  # name -> Plot (.figure: the matplotlib Figure)
    out_dir: Path | None = None  # the files (None: written to a temporary folder, removed)

    @property
    def metric_score(self) -> float | None:
        return self.summary.get("metric_score")

    def table(self):
        """The headline numbers per language (and pooled when there are several)."""
        import pandas as pd

        s = self.summary
        items = list((s.get("by_lang") or {}).items()) + ([("all", s)] if s.get("pooled_over_langs") else [])
        rows = [
            {
                "model": s.get("model"),
                "lang": lg,
                "pairs": v["n_pairs"],
                "metric_score": v["metric_score"],
                "ci_low": (v.get("uncertainty") or {}).get("ci_low"),
                "ci_high": (v.get("uncertainty") or {}).get("ci_high"),
                "stereo_score": v["stereo_score"],
                "antistereo_score": v["antistereo_score"],
                "ties": v["n_ties"],
                "ds_mean": v.get("ds_mean"),
            }
            for lg, v in items
        ]
        return pd.DataFrame(rows)

    def _repr_html_(self) -> str:  # a notebook shows the table
        return (
            f"<p><b>{self.summary.get('model')}</b> ({self.summary.get('scorer')}, "
            f"{self.summary.get('method')}): % of pairs where the model prefers sent_more (50 = none)</p>"
            + self.table().to_html(index=False, float_format=lambda x: f"{x:.2f}")
        )

    def __repr__(self) -> str:
        score = "n/a" if self.metric_score is None else f"{self.metric_score:.2f}"
        return f"PairsResult({self.summary.get('model')}: metric_score {score} on {self.summary.get('n_pairs')} pairs)"


def _frame_to_file(df, path: Path) -> Path:
    """A pairs DataFrame (long, or a release's wide layout) as a biaskit JSONL file."""
    from pydantic import ValidationError

    from biaskit.readers import validation_error, write_pairs
    from biaskit.schema import PairStatus, SentencePair

    cols = set(df.columns)
    if {"sent_more", "sent_less"} <= cols:
        views = [(None, df)]
    else:
        langs = [c[len("sent_more_") :] for c in df.columns if c.startswith("sent_more_")]
        if not langs:
            raise InputError(
                "the DataFrame has neither sent_more/sent_less nor sent_more_<lang> columns.",
                fix="pass a frame with sent_more, sent_less, bias_type, direction (or a release).",
            )
        views = [(lg, df[df[f"sent_more_{lg}"].notna()]) for lg in langs]
    missing = [c for c in ("bias_type", "direction") if c not in cols]
    if missing:
        raise InputError(
            f"the DataFrame lacks column(s) {', '.join(missing)}.",
            fix="add bias_type and direction (stereo / antistereo) to every pair.",
        )
    pairs = []
    for lg, sub in views:
        for i, r in enumerate(sub.to_dict("records"), start=1):

            def get(c):
                v = r.get(f"{c}_{lg}" if lg else c)  # noqa: B023 (called only within this iteration of the loop)
                return None if v is None or v != v else v  # NaN -> None

            try:
                pairs.append(
                    SentencePair(
                        sent_more=get("sent_more"),
                        sent_less=get("sent_less"),
                        bias_type=r["bias_type"],
                        direction=r["direction"],
                        lang=lg or r.get("lang") or "en",
                        group_more=get("group_more"),
                        group_less=get("group_less"),
                        source_id=r.get("source_id") or r.get("id"),
                        pair_id=get("pair_id") or "",
                        status=PairStatus.raw,
                    )
                )
            except ValidationError as exc:
                raise validation_error("<DataFrame>", i, exc, "pair", "fix that row of the frame.") from None
    return write_pairs(path, pairs)


def _scorer_for(model: Any) -> str:
    """The pair scorer a model's architecture calls for: mlm, clm or seq2seq."""
    from .models import LoadedLM, _detect_kind, resolve_model

    if isinstance(model, LoadedLM):
        return model.kind
    from transformers import AutoConfig

    config = AutoConfig.from_pretrained(str(resolve_model(model)))
    if getattr(config, "is_encoder_decoder", False):
        return "seq2seq"
    return _detect_kind(config)


def evaluate_pairs(
    data: Any,
    *,
    model: Any,
    protocol: str | None = None,
    scorer: str | None = None,
    split: str | None = None,
    lang: str | None = None,
    out: str | Path | None = None,
    progress: bool = False,
    **options: Any,
) -> PairsResult:
    """Score minimal pairs with one model; see the module docstring.

    ``scorer``: mlm | clm | seq2seq | clm-api (default: from the model's architecture). ``protocol``:
    a paper's protocol by name, passed to :func:`~biaskit.evaluation.pairs.run_pairs` where this
    biaskit has protocols. ``out``: keep the files (summary.json, pairs.csv, report.md, ds_kde.png)
    there; by default they are written to a temporary folder and removed. ``options`` are the options
    of ``biaskit evaluate pairs`` by name (``method``, ``unit``, ``normalise``, ``batch_size``,
    ``device``, ``dtype``, ``limit``, ``seed``, ``runs``, ``fraction``, ``base_url`` ...; ``cache``:
    False or a cache object, ``scorer_options``: ``{"base_url", "concurrency"}``) and ``run_pairs``'
    own keywords (``ddof``, ``decimals``, ``tie_tolerance``).
    """
    import pandas as pd

    from .pairs import run_pairs

    if isinstance(model, (list, tuple)):
        raise BiaskitError(
            "evaluate_pairs scores one model; call it once per model (or use `biaskit evaluate "
            "pairs --model A --model B` for one comparison table)"
        )
    run_kw = {k: options.pop(k) for k in RUN_KEYWORDS if k in options}
    _check_keywords(options)
    with tempfile.TemporaryDirectory(prefix="biaskit-pairs-") as tmp_name:
        tmp = Path(tmp_name)
        target = _target(out, tmp)
        opts = pairs_options(
            _data_path(data, tmp),
            model,
            target,
            protocol=protocol,
            scorer=scorer or _scorer_for(model),
            split=split,
            lang=lang,
            **options,
        )
        res = run_pairs(opts, progress=progress, **run_kw)
        m = res.models[0]
        frame = pd.read_csv(m.folder / "pairs.csv", keep_default_na=False, na_values=[""])
    return PairsResult(pairs=frame, summary=m.summary, plots={"ds_kde": _ds_plot(frame, m.summary)}, out_dir=_kept(out))


# run_pairs' keywords that are not options of `evaluate pairs`
RUN_KEYWORDS = ("cache", "command", "ddof", "decimals", "tie_tolerance")


def _check_keywords(options: dict[str, Any]) -> None:
    """Every keyword names an option of `evaluate pairs` (its Python name), or run_pairs' own."""
    from .options import PairsOptions

    params = [s.python or n for n, s in PairsOptions.specs().items()] + [*RUN_KEYWORDS, "scorer_options"]
    unknown = sorted(set(options) - set(params))
    if unknown:
        raise BiaskitError(
            f"unknown option(s) {', '.join(unknown)}. Fix: use run_pairs' options: "
            + ", ".join(p for p in params if p not in ("data", "models", "out_dir"))
        )


def pairs_options(data: Any, model: Any, out: Path, *, scorer_options: dict | None = None, **options: Any):
    """The :class:`~biaskit.evaluation.options.PairsOptions` of one model from the Python API's keywords
    (the options' Python names: ``split`` for ``release_split``; ``scorer_options``: ``base_url`` and
    ``concurrency`` in one dict)."""
    from .options import PairsOptions

    served = {k: v for k, v in (scorer_options or {}).items() if k in ("base_url", "concurrency") and v is not None}
    return PairsOptions.from_kwargs(**{**served, **options, "data": data, "models": [model], "out": out})


def _data_path(data: Any, tmp: Path) -> Any:
    """A release folder or pairs file as given; a DataFrame written to a file, a Release as its folder."""
    import pandas as pd

    if isinstance(data, pd.DataFrame):
        return _frame_to_file(data, tmp / "pairs.jsonl")
    if hasattr(data, "configs") and hasattr(data, "path"):  # a loaded Release
        return data.path
    return data


def _target(out: str | Path | None, tmp: Path) -> Path:
    """Where the files go: ``out`` (checked as a result folder) or a temporary folder."""
    if out is None:
        return tmp / "result"
    from biaskit.paths import check_output

    target = Path(out)
    check_output(target, "out", kind="dir", owns=("summary.json", "comparison.csv"))
    return target


def _kept(out: str | Path | None) -> Path | None:
    return Path(out) if out is not None else None


def _ds_plot(frame: Any, summary: dict[str, Any]) -> Plot:
    from .report import ds_figure, ds_unit, kde_panels

    return Plot(
        ds_figure(
            kde_panels(frame),
            title=f"DS distribution: {summary.get('model')} ({summary.get('scorer')}, {summary.get('method')})",
            unit=ds_unit(summary),
        )
    )
