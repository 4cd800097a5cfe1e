"""The DS distribution with and without IndiBias's |C| normalisation (`--normalise unmodified`), one figure.

Scores the same pairs twice with `biaskit evaluate pairs`' pipeline (masked LM, P(U|M)): once as the
CrowS-Pairs sum, once divided by |C| (the number of unmodified tokens, IndiBias §6.1), and draws both
DS = score(sent_more) - score(sent_less) densities with the plot of the pairs report (two panels, each
in its own unit), plus the metric score of each setting and how many pairs change side.

    python benchmarks/ds_normalise.py --out docs/img/ds_normalise.png                 # tiny random BERT
    python benchmarks/ds_normalise.py --model ./bert-base-uncased --data crows.csv --limit 300 --out ds.png

Without --model a seeded 2-layer BERT with random weights and the real uncased WordPiece vocabulary is
built offline (as the tests do): its DS says nothing about any real model's bias; the figure only shows
what the normalisation does to the scale and the ranking of the same scores.
"""

from __future__ import annotations

import argparse
import json
import os
import sys
import tempfile
from pathlib import Path

REPO = Path(__file__).resolve().parents[1]
sys.path.insert(0, str(REPO / "tests"))


def main(argv=None) -> dict:
    ap = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    ap.add_argument("--model", help="masked LM folder (default: a tiny random BERT built offline)")
    ap.add_argument("--data", default=str(REPO / "data" / "demo" / "demo_pairs.jsonl"))
    ap.add_argument("--lang", default="en")
    ap.add_argument("--limit", type=int, default=None)
    ap.add_argument("--out", default="ds_normalise.png")
    a = ap.parse_args(argv)
    os.environ.setdefault("HF_HUB_OFFLINE", "1")
    os.environ.setdefault("BIASKIT_NO_PROGRESS", "1")
    from biaskit.evaluation.options import PairsOptions
    from biaskit.evaluation.pairs import run_pairs

    with tempfile.TemporaryDirectory() as tmp:
        model = a.model
        if model is None:
            from fixtures_models import build_tiny_bert

            model = str(build_tiny_bert(Path(tmp) / "bert"))
        res = {}
        for norm in ("none", "unmodified"):
            r = run_pairs(
                PairsOptions(
                    data=a.data,
                    lang=a.lang,
                    models=[model],
                    scorer="mlm",
                    limit=a.limit,
                    runs=1,
                    out=Path(tmp) / norm,
                    normalise=norm,
                ),
                cache=False,
                progress=False,
            )
            import pandas as pd

            res[norm] = (r.models[0].summary, pd.read_csv(Path(tmp) / norm / "pairs.csv"))
    (s0, d0), (s1, d1) = res["none"], res["unmodified"]
    flips = int(((d0["ds"] > 0) != (d1["ds"] > 0)).sum())
    title = f"{Path(model).name if a.model else 'tiny random BERT'}, {len(d0)} pairs ({a.lang})"
    figure(
        a.out,
        title,
        [
            (f"sum over U (CrowS-Pairs): metric {s0['metric_score']:.1f}", "nats", d0),
            (f"sum / |C| (IndiBias §6.1): metric {s1['metric_score']:.1f}", "nats per token", d1),
        ],
    )
    out = {
        "pairs": len(d0),
        "metric_sum": s0["metric_score"],
        "metric_over_c": s1["metric_score"],
        "ties_sum": s0["n_ties"],
        "ties_over_c": s1["n_ties"],
        "pairs_changing_side": flips,
        "ds_std_sum": float(d0["ds"].std()),
        "ds_std_over_c": float(d1["ds"].std()),
        "figure": a.out,
    }
    print(json.dumps(out, indent=2))
    return out


def figure(path: str, title: str, panels) -> None:
    """Side-by-side DS densities (the pairs report's KDE, :func:`pair_metrics.ds_kde`), each on its own
    x-axis because the two settings have different units."""
    import numpy as np
    from biaskit.evaluation import pair_metrics as pm
    from matplotlib.backends.backend_agg import FigureCanvasAgg
    from matplotlib.figure import Figure

    from biaskit.io import atomic_open

    fig = Figure(figsize=(10, 3.6), dpi=110)
    FigureCanvasAgg(fig)
    for k, (ptitle, unit, df) in enumerate(panels):
        ax = fig.add_subplot(1, len(panels), k + 1)
        ds = df["ds"].to_numpy(dtype=float)
        span = float(ds.max() - ds.min()) or 1.0
        grid = np.linspace(min(ds.min() - 0.25 * span, 0), max(ds.max() + 0.25 * span, 0), 512)
        for label, sel in (
            ("all pairs", slice(None)),
            ("stereo", df["direction"] == "stereo"),
            ("antistereo", df["direction"] == "antistereo"),
        ):
            vals = df.loc[sel, "ds"].tolist()
            res = pm.ds_kde(vals, grid)
            if res is not None:
                ax.plot(res[0], res[1], label=f"{label} (n={len(vals)})")
        ax.axvline(0.0, color="grey", linestyle="--", linewidth=0.8)
        ax.set_title(ptitle, fontsize=9)
        ax.set_xlabel(f"DS [{unit}]", fontsize=9)
        ax.set_ylabel(
            "density (per " + unit.replace("nats per token", "nat/token").replace("nats", "nat") + ")", fontsize=9
        )
        ax.legend(fontsize=7)
    fig.suptitle(title, fontsize=10)
    fig.tight_layout()
    with atomic_open(path, "wb") as fh:
        fig.savefig(fh, format="png")


if __name__ == "__main__":
    main()
