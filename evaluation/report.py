"""Markdown reports, comparison tables and figures for the pair evaluator (`evaluate pairs`).

:mod:`.pair_metrics` computes; this module draws and writes:

- :func:`render_report` — one model's ``report.md`` from its summary and per-pair outcome table;
- :func:`ds_figure` / :func:`plot_ds_kde` — the DS densities (IndiBias Appendix C), one panel per
  language (``ds_kde.png``; the notebook API's ``plots["ds_kde"]``);
- :func:`comparison_frame` / :func:`render_comparison_md` / :func:`write_comparison` — one table
  comparing several models (one row per model and language), plus a DS KDE plot per language.
"""

from __future__ import annotations

import math
from collections.abc import Iterable, Mapping, Sequence
from pathlib import Path
from typing import Any

from biaskit.tables import md_table, num, pvalue

from . import pair_metrics as pm
from .protocols.base import render_protocol
from .published import markdown as published_markdown

CITATIONS = {
    "crows": "Nangia, Vania, Bhalerao & Bowman (2020). CrowS-Pairs: A Challenge Dataset for Measuring Social "
    "Biases in Masked Language Models. EMNLP 2020. Reference code: github.com/nyu-mll/crows-pairs "
    "(metric.py).",
    "indibias": "Sahoo, Kulkarni, Asad, Ahmad, Goyal, Garimella & Bhattacharyya (2024). IndiBias: A Benchmark "
    "Dataset to Measure Social Biases in Language Models for Indian Context. NAACL 2024.",
}


NONE = "—"  # a missing number in this report


def pfmt(p: Any) -> str:
    """A p-value: two significant digits, ``< 0.001`` below that."""
    return pvalue(p, floor=0.001, missing=NONE)


def fmt(x: Any, nd: int = 2) -> str:
    return num(x, nd, missing=NONE)


def _sub(s: dict) -> str:
    sub = s.get("subsample") or {}
    if sub.get("mean") is None:
        return NONE
    return f"{num(sub['mean'])} ± {fmt(sub.get('std'))}"


def ci_text(s: dict) -> str:
    """``[lo, hi]`` of the bootstrap confidence interval of the metric score (or "—")."""
    u = s.get("uncertainty") or {}
    if u.get("ci_low") is None:
        return NONE
    return f"[{num(u['ci_low'])}, {num(u['ci_high'])}]"


def se_text(s: dict) -> str:
    u = s.get("uncertainty") or {}
    return NONE if u.get("se_binomial") is None else f"± {num(u['se_binomial'])}"


def ds_unit(summary: dict) -> str:
    """The unit of DS: scores are natural-log probabilities (torch ``log_softmax``), so nats; a per-token
    mean (``clm`` ``mean``, ``mlm --normalise unmodified``) gives nats per token."""
    per_token = summary.get("method") == "mean" or summary.get("normalise") == "unmodified"
    return "nats per token" if per_token else "nats"


def length_note(s: dict) -> str | None:
    """One sentence on sentence length for causal-LM scores (``summary["length"]``), or None."""
    ln = s.get("length") or {}
    if not ln or not ln.get("n_unequal"):
        return None
    other = ln.get("other") or {}
    text = (
        f"{ln['n_unequal']} of {ln['n_pairs']} pairs differ in length (tokens); the shorter sentence scores "
        f"higher in {ln['shorter_wins']} of the {ln['n_unequal_decided']} decided ones "
        f"({fmt(ln.get('shorter_win_pct'), 1)}%, binomial p {pfmt(ln.get('p_shorter'))})"
    )
    if other.get("metric_score") is not None:
        text += f"; metric score with `{other['method']}` scoring: {fmt(other['metric_score'])}"
    return text + "."


def _md_table(header: list[str], rows: list[list[Any]]) -> str:
    return md_table(header, rows, fmt=fmt)


def kde_panels(out) -> dict[str, dict[str, list[float]]]:
    """DS series for :func:`plot_ds_kde`: one panel per language, curves all/stereo/antistereo."""
    panels: dict[str, dict[str, list[float]]] = {}
    langs = sorted(out["lang"].unique().tolist()) if len(out) else []
    for lg in langs or ["-"]:
        sub = out[out["lang"] == lg] if langs else out
        series = {"all pairs": sub["ds"].tolist()}
        for d in pm.DIRECTIONS:
            vals = sub.loc[sub["direction"] == d, "ds"].tolist()
            if vals:
                series[d] = vals
        panels[f"lang: {lg}"] = series
    return panels


# ------------------------------------------------------------------------------------------ figure


def ds_figure(
    panels: Mapping[str, Mapping[str, Iterable[float]]],
    *,
    title: str = "",
    unit: str = "nats",
    xlabel: str | None = None,
):
    """A matplotlib ``Figure`` with one axes per panel and one KDE curve per series (IndiBias Appendix C
    style). Every panel shares one x-range (the range of all DS values, padded), so panels compare at a
    glance; the x-axis is labelled with the unit of DS and the y-axis with density per that unit.

    ``panels``: ``{panel title: {series label: DS values}}``. Series too small for a KDE are drawn as a
    rug only. Uses the Agg canvas directly (no pyplot global state).
    """
    import numpy as np
    from matplotlib.backends.backend_agg import FigureCanvasAgg
    from matplotlib.figure import Figure

    def finite(vals):
        return [float(x) for x in vals if x is not None and not math.isnan(float(x))]

    panels = {k: v for k, v in panels.items()}
    n = max(1, len(panels))
    fig = Figure(figsize=(6.4, 3.6 * n), dpi=110)
    FigureCanvasAgg(fig)
    axes = [fig.add_subplot(n, 1, 1)]
    axes += [fig.add_subplot(n, 1, i + 1, sharex=axes[0]) for i in range(1, n)]
    allv = np.asarray([x for series in panels.values() for vals in series.values() for x in finite(vals)], dtype=float)
    grid = None
    lo, hi = -1.0, 1.0
    if allv.size:
        span = float(allv.max() - allv.min()) or max(1.0, abs(float(allv.max())))
        lo, hi = float(allv.min()) - 0.25 * span, float(allv.max()) + 0.25 * span
        lo, hi = min(lo, -0.05 * span), max(hi, 0.05 * span)  # keep DS = 0 (no preference) in view
        grid = np.linspace(lo, hi, 512)
    xlabel = xlabel or f"DS = score(sent_more) − score(sent_less)  [{unit}]"
    for ax, (ptitle, series) in zip(axes, panels.items(), strict=False):
        for label, vals in series.items():
            vals = finite(vals)
            res = pm.ds_kde(vals, grid)
            if res is not None:
                ax.plot(res[0], res[1], label=f"{label} (n={len(vals)})")
            elif vals:
                ax.plot(vals, [0.0] * len(vals), "|", markersize=12, label=f"{label} (n={len(vals)}, no KDE)")
        ax.axvline(0.0, color="grey", linestyle="--", linewidth=0.8)
        ax.set_xlim(lo, hi)
        ax.set_title(ptitle, fontsize=10)
        ax.set_xlabel(xlabel, fontsize=9)
        ax.set_ylabel(f"density (per {unit.replace('nats per token', 'nat/token').replace('nats', 'nat')})", fontsize=9)
        if ax.get_legend_handles_labels()[0]:
            ax.legend(fontsize=8)
    if title:
        fig.suptitle(title, fontsize=11)
    fig.tight_layout()
    return fig


def plot_ds_kde(
    panels: Mapping[str, Mapping[str, Iterable[float]]],
    path,
    *,
    title: str = "",
    unit: str = "nats",
    xlabel: str | None = None,
) -> Any:
    """Write :func:`ds_figure` as a PNG, atomically; returns ``path``."""
    from biaskit.io import atomic_open

    fig = ds_figure(panels, title=title, unit=unit, xlabel=xlabel)
    with atomic_open(path, "wb") as fh:
        fig.savefig(fh, format="png")
    return path


# ------------------------------------------------------------------------------------------ report


def _overall_rows(summary: dict) -> list[list[Any]]:
    rows = []
    by_lang = summary.get("by_lang") or {}
    items = list(by_lang.items())
    if summary.get("pooled_over_langs"):
        items.append(("all (pooled)", summary))
    for lg, s in items:
        rows.append(
            [
                lg,
                s["n_pairs"],
                s["metric_score"],
                ci_text(s),
                se_text(s),
                s["stereo_score"],
                s["antistereo_score"],
                f"{s['n_ties']} ({fmt(s['neutral_pct'], 1)}%)" if s.get("neutral_pct") is not None else s["n_ties"],
                _sub(s),
                s.get("ds_mean"),
            ]
        )
    return rows


def _strongest(out, lang: str, k: int = 5) -> str:
    sub = out[out["lang"] == lang].dropna(subset=["ds"])
    k = min(k, len(sub) // 2)  # top and bottom never share a pair
    if k < 1:
        return ""
    top = sub.sort_values("ds", ascending=False).head(k)
    bottom = sub.sort_values("ds", ascending=True).head(k)
    rows_top = [[r.bias_type, r.direction, num(r.ds, 3), r.sent_more, r.sent_less] for r in top.itertuples()]
    rows_bot = [[r.bias_type, r.direction, num(r.ds, 3), r.sent_more, r.sent_less] for r in bottom.itertuples()]
    head = ["bias type", "direction", "DS", "sent_more", "sent_less"]
    return (
        f"Largest DS (model prefers `sent_more` most):\n\n{_md_table(head, rows_top)}\n\n"
        f"Smallest DS (model prefers `sent_less` most):\n\n{_md_table(head, rows_bot)}\n"
    )


def render_report(summary: dict, out, *, plot: str | None = "ds_kde.png") -> str:
    """``report.md`` for one model: its sections in order, each a function of the summary (and the
    per-pair outcome table ``out``)."""
    lines = _head(summary) + _bias_scores(summary)
    pub = published_markdown(summary.get("published") or {}, summary.get("protocol"))
    if pub:
        lines += [pub]
    lines += _pooled_note(summary) + _length_section(summary) + _by_bias_type(summary)
    lines += _ds_section(summary, out, plot) + _definitions(summary)
    if summary.get("command"):
        lines += ["## Reproduce", "", f"```\n{summary['command']}\n```", ""]
    return "\n".join(lines)


def _head(summary: dict) -> list[str]:
    """The title, what was scored with what, and the protocol."""
    d = summary.get("data", {})
    return [
        f"# Pair-bias report: {summary.get('model')}",
        "",
        f"- data: `{d.get('path')}` (format `{d.get('format')}`, sha256 `{str(d.get('sha256'))[:16]}…`); "
        f"{d.get('n_pairs_scored')} pairs scored"
        + (f", {d.get('n_skipped')} invalid rows skipped" if d.get("n_skipped") else "")
        + (f", first {d.get('limit')} per language" if d.get("limit") else ""),
        f"- model: `{summary.get('model')}`, scorer `{summary.get('scorer')}`, unit `{summary.get('unit')}`, "
        f"method `{summary.get('method')}`"
        + (f" ({summary.get('normalisation')})" if summary.get("normalisation") else ""),
        f"- languages: {', '.join(summary.get('langs') or [])}",
        f"- biaskit {summary.get('biaskit_version')}, {summary.get('created_at')}",
        "",
        render_protocol(summary.get("protocol") or {}),
    ]


def _bias_scores(summary: dict) -> list[str]:
    """The headline table per language (and pooled) and how precise its metric score is."""
    sub = summary.get("subsample", {})
    unc = summary.get("uncertainty") or {}
    conf = f"{round(100 * unc.get('confidence', 0.95))}%"
    return [
        "## Bias scores",
        "",
        "Percent of pairs where the model gives the more stereotypical sentence (`sent_more`) the higher "
        "score. 50 = no preference.",
        "",
        _md_table(
            [
                "lang",
                "pairs",
                "metric score",
                f"{conf} CI (bootstrap)",
                "SE (binomial)",
                "stereo score",
                "antistereo score",
                "neutral (ties)",
                f"subsample mean ± std ({sub.get('runs')}×{fmt(sub.get('fraction'))})",
                f"mean DS ({ds_unit(summary)})",
            ],
            _overall_rows(summary),
        ),
        "",
        f"How precise is the metric score? The **{conf} CI** is a bootstrap confidence interval over pairs "
        f"({unc.get('n_resamples')} resamples, seed {unc.get('seed')}) and the **SE** the binomial standard error "
        "100·√(p(1−p)/N): both say how far the score could move with another sample of pairs like these. The "
        "**subsample mean ± std** is the IndiBias protocol (the metric on seeded 80% subsamples of these same "
        "pairs, drawn without replacement): its std is about half the binomial SE by construction and is not a "
        "confidence interval.",
        "",
    ]


def _pooled_note(summary: dict) -> list[str]:
    """Several languages: how to read the pooled row."""
    if not summary.get("pooled_over_langs"):
        return []
    from biaskit.languages import name_of

    langs = " and ".join(name_of(lg) for lg in (summary.get("by_lang") or {})) or "two languages"
    return [
        "The pooled row counts every language view as its own pair (the same source pair in "
        f"{langs} counts twice); read the per-language rows first.",
        "",
    ]


def _length_section(summary: dict) -> list[str]:
    """Causal-LM scores: sentence length against the score, and the other scoring method's metric."""
    by_lang = summary.get("by_lang") or {}
    if not any(length_note(s) for s in by_lang.values()):
        return []
    m = summary.get("method")
    lines = ["## Sentence length (causal LM)", ""]
    if m == "sum":
        lines += [
            "With `sum` scoring every token adds a negative log-probability, so a shorter sentence is "
            "favoured whatever its content. Read the metric score next to the per-token `mean` result "
            "(computed from the same forward passes) before concluding anything about bias.",
            "",
        ]
    else:
        lines += [
            "With `mean` scoring the log-probability is divided by the number of tokens; the `sum` "
            "result (same forward passes) is shown for comparison.",
            "",
        ]
    other = "mean" if m == "sum" else "sum"
    rows = [_length_row(lg, s) for lg, s in by_lang.items() if s.get("length")]
    head = ["lang", "pairs", "unequal length", "shorter wins", "shorter wins %", "binomial p", f"metric ({m})"]
    head += [f"metric ({other})", f"stereo ({other})", f"antistereo ({other})"]
    return lines + [_md_table(head, rows), ""]


def _length_row(lg: str, s: dict) -> list[Any]:
    ln = s["length"]
    o = ln.get("other") or {}
    return [
        lg,
        ln["n_pairs"],
        ln["n_unequal"],
        f"{ln['shorter_wins']} / {ln['n_unequal_decided']}" if ln["n_unequal"] else "—",
        ln.get("shorter_win_pct"),
        pfmt(ln.get("p_shorter")),
        s["metric_score"],
        o.get("metric_score"),
        o.get("stereo_score"),
        o.get("antistereo_score"),
    ]


def _by_bias_type(summary: dict) -> list[str]:
    """One table per language: the metric per bias type."""
    by_lang = summary.get("by_lang") or {}
    lines = ["## By bias type", ""]
    head = ["bias type", "pairs", "metric score", "SE (binomial)", "stereo", "antistereo", "ties", "mean DS"]
    for lg, s in by_lang.items():
        if len(by_lang) > 1:
            lines += [f"### {lg}", ""]
        rows = [
            [
                bt,
                v["n_pairs"],
                v["metric_score"],
                pm.binomial_se(v["n_wins"], v["n_pairs"]),
                v["stereo_score"],
                v["antistereo_score"],
                v["n_ties"],
                v.get("ds_mean"),
            ]
            for bt, v in s["by_bias_type"].items()
        ]
        lines += [_md_table(head, rows), ""]
    return lines


def _ds_section(summary: dict, out, plot: str | None) -> list[str]:
    """DS: what it is, its plot, and the pairs the model prefers most either way."""
    lines = [
        "## Difference of scores (DS)",
        "",
        f"DS = score(`sent_more`) − score(`sent_less`) per pair, in {ds_unit(summary)} (scores are natural-log "
        "probabilities; positive: the model prefers the more stereotypical sentence). Kernel density estimate "
        "(Gaussian, Scott's bandwidth) as in IndiBias Appendix C; every panel shares one x-axis.",
        "",
    ]
    if plot:
        lines += [f"![DS KDE]({plot})", ""]
    for lg in summary.get("langs") or []:
        block = _strongest(out, lg)
        if block:
            lines += [f"### Strongest preferences ({lg})", "", block]
    return lines


def _definitions(summary: dict) -> list[str]:
    sub = summary.get("subsample", {})
    tie = summary.get("tie_rule", {})
    return [
        "## Definitions",
        "",
        f"- Scores are rounded to {tie.get('decimals')} decimals before comparison; equal rounded scores "
        f"(tolerance {tie.get('tolerance')}) make a pair *neutral*. Neutral pairs are not wins; they count "
        "in the metric score's denominator but not in the stereo / antistereo denominators, exactly as the "
        "CrowS-Pairs reference code.",
        "- A pair is a win when score(`sent_more`) > score(`sent_less`), for both directions (antistereo "
        "pairs included, as the reference).",
        f"- Subsample protocol (IndiBias): {sub.get('runs')} runs, each on {sub.get('size')} pairs "
        f"({fmt(sub.get('fraction'))} of them) drawn without replacement with seed {sub.get('seed')} + run "
        f"index; mean and standard deviation (ddof={sub.get('ddof')}) of the metric score.",
        f"- {CITATIONS['crows']}",
        f"- {CITATIONS['indibias']}",
        "",
    ]


# ------------------------------------------------------------------------------------- comparison


def comparison_frame(summaries: Sequence[dict]):
    """One row per model and language (plus a pooled row per model when several languages)."""
    import pandas as pd

    rows = []
    for s in summaries:
        items = list((s.get("by_lang") or {}).items())
        if s.get("pooled_over_langs"):
            items.append(("all", s))
        for lg, v in items:
            row = {
                "model": s.get("model"),
                "folder": s.get("model_slug"),
                "scorer": s.get("scorer"),
                "unit": s.get("unit"),
                "method": s.get("method"),
                "protocol": (s.get("protocol") or {}).get("name"),
                "deviations": len((s.get("protocol") or {}).get("deviations") or []),
                "comparable": bool((s.get("protocol") or {}).get("comparable")),
                "lang": lg,
                "n_pairs": v["n_pairs"],
                "metric_score": v["metric_score"],
                "stereo_score": v["stereo_score"],
                "antistereo_score": v["antistereo_score"],
                "n_ties": v["n_ties"],
                "subsample_mean": (v.get("subsample") or {}).get("mean"),
                "subsample_std": (v.get("subsample") or {}).get("std"),
                "ds_mean": v.get("ds_mean"),
            }
            for bt, b in (v.get("by_bias_type") or {}).items():
                row[f"metric_score[{bt}]"] = b["metric_score"]
            rows.append(row)
    return pd.DataFrame(rows)


def render_comparison_md(df, *, plot: str | None = "ds_kde_comparison.png") -> str:
    base = [
        "model",
        "folder",
        "lang",
        "n_pairs",
        "metric_score",
        "stereo_score",
        "antistereo_score",
        "n_ties",
        "subsample_mean",
        "subsample_std",
    ]
    bt_cols = [c for c in df.columns if c.startswith("metric_score[")]
    lines = [
        "# Model comparison (minimal pairs)",
        "",
        "Metric score = % of pairs where the model prefers the more stereotypical sentence (50 = none).",
        "",
        _md_table(base, [[r[c] for c in base] for r in df.to_dict(orient="records")]),
        "",
    ]
    if bt_cols:
        head = ["model", "folder", "lang"] + [c[len("metric_score[") : -1] for c in bt_cols]
        lines += [
            "## Metric score by bias type",
            "",
            _md_table(
                head,
                [
                    [r["model"], r["folder"], r["lang"]] + [r.get(c) for c in bt_cols]
                    for r in df.to_dict(orient="records")
                ],
            ),
            "",
        ]
    if "protocol" in df.columns:
        cols = ["model", "folder", "protocol", "deviations"] + (["comparable"] if "comparable" in df.columns else [])
        prot = df.drop_duplicates("folder")[cols]
        lines += [
            "## Protocol",
            "",
            "Each model's report lists its protocol's settings, every deviation in words, and why the run is or is "
            "not comparable with the paper's figures (its data and its checkpoint).",
            "",
            _md_table(
                cols,
                [
                    [r[c] if c != "comparable" else ("yes" if r[c] else "no") for c in cols]
                    for r in prot.to_dict(orient="records")
                ],
            ),
            "",
        ]
    if plot:
        lines += [f"![DS KDE per model]({plot})", ""]
    return "\n".join(lines)


def write_comparison(out_dir: str | Path, summaries: Sequence[dict], frames: Sequence[Any]) -> Path:
    """Write ``comparison.csv``, ``comparison.md`` and ``ds_kde_comparison.png`` into ``out_dir``."""
    from biaskit.io import atomic_write_text, write_table

    out_dir = Path(out_dir)
    df = comparison_frame(summaries)
    write_table(out_dir / "comparison.csv", df)
    panels: dict[str, dict[str, list[float]]] = {}
    for s, out in zip(summaries, frames, strict=False):
        for lg in sorted(out["lang"].unique().tolist()):
            panels.setdefault(f"lang: {lg}", {})[str(s.get("model_slug") or s.get("model"))] = out.loc[
                out["lang"] == lg, "ds"
            ].tolist()
    units = {ds_unit(s) for s in summaries}
    plot_ds_kde(
        panels,
        out_dir / "ds_kde_comparison.png",
        title="DS distribution per model",
        unit=units.pop() if len(units) == 1 else "nats; nats per token for mean-scored models",
    )
    atomic_write_text(out_dir / "comparison.md", render_comparison_md(df))
    return out_dir / "comparison.csv"
