"""`biaskit evaluate pairs`: a thin typer wrapper around :func:`biaskit.evaluation.pairs.run_pairs`."""
from __future__ import annotations

from pathlib import Path
from typing import Optional

import typer

from biaskit.clitools import command_line
from biaskit.paths import in_path, out_dir

from . import cli_options as opt


def pairs_command(
    data: Path = in_path(..., "--data", help="Minimal-pair file (CrowS-Pairs CSV, IndiBias CSV, biaskit JSONL/CSV) "
                                                  "or a release folder (`biaskit release build`)."),
    split: Optional[str] = typer.Option(None, "--split", help="Release folder: score only this split (dev or test)."),
    out: Path = out_dir(..., "--out", owns=("summary.json", "comparison.csv"), help="Output folder (summary.json, pairs.csv, report.md, ds_kde.png)."),
    model: opt.Models = ...,
    scorer: Optional[opt.PairScorer] = typer.Option(None, "--scorer", help="mlm: pseudo-log-likelihood (masked LMs); "
                                                    "clm: causal LMs; seq2seq: encoder-decoder LMs (mT5, mBART); "
                                                    "clm-api: a served causal LM (--base-url). Default: the one the "
                                                    "model's architecture calls for (its config.json; clm-api with "
                                                    "--base-url)."),
    format: opt.PairFormat = typer.Option("auto", "--format", help="Input format (auto-detected from columns/extension)."),
    lang: Optional[str] = typer.Option(None, "--lang", help="Score only this language (IndiBias: en or hi). "
                                       "Default: every language in the file, reported separately."),
    unit: Optional[opt.Unit] = typer.Option(None, "--unit", help="mlm masking unit: token (CrowS-Pairs) or word "
                                                                 "(IndiBias §6.1). Default: the protocol's."),
    method: Optional[str] = typer.Option(None, "--method", help="mlm: pll | pmu; clm: sum | mean; seq2seq: mean | sum. "
                                                                 "Default: the protocol's (IndiBias: mean for clm/"
                                                                 "seq2seq; no protocol: pll, sum, mean)."),
    normalise: Optional[opt.Normalise] = typer.Option(None, "--normalise",
                                                      help="mlm pll: none (CrowS-Pairs sum) or unmodified (divide by "
                                                           "|C|, IndiBias §6.1). Default: the protocol's."),
    protocol: opt.Protocol = None,
    batch_size: opt.BatchSize = opt.DEFAULT_BATCH_SIZE,
    device: opt.Device = "auto",
    dtype: opt.Dtype = None,
    limit: Optional[int] = typer.Option(None, "--limit", help="Score only the first N pairs of each language."),
    skip_invalid: bool = typer.Option(False, "--skip-invalid", help="Skip invalid rows (reported) instead of stopping."),
    seed: int = typer.Option(0, "--seed", help="Seed of the first subsample run (run i uses seed + i)."),
    runs: Optional[int] = typer.Option(None, "--runs", help="Subsample runs (IndiBias Table 2: 5).", show_default=False),
    fraction: Optional[float] = typer.Option(None, "--fraction", help="Fraction of pairs per subsample run "
                                                                      "(IndiBias Table 2: 0.8).", show_default=False),
    no_cache: opt.NoCache = False,
    quiet: opt.Quiet = False,
    device_map: opt.DeviceMap = None,
    base_url: opt.BaseUrl = None,
    concurrency: opt.Concurrency = 8,
) -> None:
    """Score minimal pairs (CrowS-Pairs / IndiBias metric) with one or more language models."""
    from rich.table import Table
    from rich.text import Text

    from biaskit.clitools import console as make_console

    from .pairs import run_pairs
    from .report import ci_text, fmt, length_note

    name = scorer.value if scorer is not None else ("clm-api" if base_url else None)   # None: from the model
    served = opt.served_options(name, base_url, concurrency) if name else {}
    res = run_pairs(data, format=format.value, lang=lang, models=list(model), scorer=name,
                    unit=unit.value if unit is not None else None, method=method, batch_size=batch_size, device=device,
                    dtype=dtype, limit=limit, out_dir=out, skip_invalid=skip_invalid, seed=seed, runs=runs,
                    fraction=fraction, cache=not no_cache, progress=not quiet, command=command_line(), split=split,
                    normalise=normalise.value if normalise is not None else None, scorer_options=served,
                    device_map=device_map, protocol=opt.protocol_value(protocol))
    if not res["summaries"]:  # a rank > 0 of a torchrun launch: rank 0 reports
        return
    console = make_console()
    if res["skipped"]:
        console.print(Text.assemble((f"skipped {len(res['skipped'])} invalid row(s)", "yellow"),
                                    f"; first: {res['skipped'][0]}"))
    table = Table(title="Minimal-pair bias (% of pairs where the model prefers sent_more; 50 = none)")
    table.add_column("model", no_wrap=True)
    table.add_column("lang")
    for col in ("pairs", "metric", "95% CI\n(bootstrap)", "stereo", "antistereo", "ties"):
        table.add_column(col, justify="right", no_wrap=True)
    table.add_column("subsample\nmean ± std", justify="right", no_wrap=True)
    for s in res["summaries"]:
        items = list(s["by_lang"].items()) + ([("all", s)] if s.get("pooled_over_langs") else [])
        for lg, v in items:
            sub = v["subsample"]
            table.add_row(s["model_slug"], lg, str(v["n_pairs"]), fmt(v["metric_score"]), ci_text(v),
                          fmt(v["stereo_score"]), fmt(v["antistereo_score"]), str(v["n_ties"]),
                          f"{fmt(sub['mean'])} ± {fmt(sub['std'])}")
    console.print(table)
    opt.print_protocol(console, res["protocol"])
    for s in res["summaries"]:
        opt.print_published(console, s.get("published") or {})
    console.print("95% CI: bootstrap over pairs (sampling uncertainty); subsample: the IndiBias 5 x 80% protocol "
                  "(spread over subsets of these pairs, not an interval).", soft_wrap=True)
    for s in res["summaries"]:
        for lg, v in s["by_lang"].items():
            note = length_note(v)
            if note and s.get("method") == "sum":
                console.print(Text.assemble((f"{s['model_slug']} ({lg}), sum scoring: ", "yellow"), note),
                              soft_wrap=True)
    for d in res["model_dirs"]:
        console.print(f"wrote {d / 'summary.json'}, {d / 'pairs.csv'}, {d / 'report.md'}, {d / 'ds_kde.png'}",
                      soft_wrap=True)
    if res["comparison"]:
        console.print(f"comparison: {res['comparison']} and {Path(res['comparison']).with_suffix('.md')}",
                      soft_wrap=True)
