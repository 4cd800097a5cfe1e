"""`biaskit evaluate cats | seat | correlate`: thin typer wrappers around
:func:`biaskit.evaluation.stereoset.run_cats` / ``run_cats_predictions``,
:func:`biaskit.evaluation.seat.run_seat` and :mod:`biaskit.evaluation.correlate`."""
from __future__ import annotations

from pathlib import Path
from typing import List, Optional

import typer

from biaskit.clitools import command_line
from biaskit.errors import BiaskitError
from biaskit.paths import in_dir, in_file, in_path, out_dir
from biaskit.tables import num, pvalue

from . import cli_options as opt


def _fmt(x) -> str:
    return num(x)


def cats_command(
    data: Path = in_path(..., "--data", help="StereoSet JSON (dev.json), the flat StereoSet JSONL, biaskit CAT JSONL, "
                                                  "or a release folder with CATs."),
    out: Path = out_dir(..., "--out", owns=("summary.json", "comparison.csv"), help="Output folder (summary.json, report.md, scores.jsonl, "
                                                "predictions.json, targets.csv, groups.csv)."),
    model: opt.OptionalModels = None,
    scorer: opt.CatScorer = typer.Option("auto", "--scorer",
                                         help="mlm: masked LM (word pieces; NSP for intersentence); clm: causal LM; "
                                              "clm-api: a served causal LM (--base-url)."),
    predictions: Optional[Path] = in_file(None, "--predictions",
                                               help="Compute the metrics from this per-sentence score file (StereoSet "
                                                    "predictions JSON or JSONL id/score) instead of a model."),
    format: opt.CatFormat = typer.Option("auto", "--format", help="Input format (auto-detected)."),
    split: Optional[opt.CatSplit] = typer.Option(None, "--split", help="Which CATs to score (default: both; "
                                                 "cao2022: intrasentence).", show_default=False),
    release_split: Optional[str] = typer.Option(None, "--release-split",
                                                help="Release folder (--data DIR): score only its dev or test split."),
    limit: Optional[int] = typer.Option(None, "--limit", help="Score only the first N CATs (after --split)."),
    piece_agg: Optional[opt.PieceAgg] = typer.Option(None, "--piece-agg", help="mlm intrasentence: mean of piece "
                                                     "probabilities (default, the reference) or log-probs.",
                                                     show_default=False),
    cat_mode: Optional[opt.CatMode] = typer.Option(None, "--cat-mode",
                                                   help="likelihood (default; StereoSet ACL 2021 Table 4: fill "
                                                        "pieces, NSP) or pll (pseudo-likelihood, Table 5; cao2022).",
                                                   show_default=False),
    ties: Optional[opt.TiePolicy] = typer.Option(None, "--ties", help="Tie rule (default reference: tie = anti / not "
                                                 "related).", show_default=False),
    protocol: opt.Protocol = None,
    nsp_head: Optional[Path] = in_file(None, "--nsp-head", text=False, help="A next-sentence head in the StereoSet reference "
                                       "format (ModelNSP .pth, e.g. the authors' GPT2Model_gpt2_0.0005.pth) to score "
                                       "intersentence CATs, as the paper does for every model."),
    nsp_label: Optional[int] = typer.Option(None, "--nsp-label", help="The head's 'is next' output (0 or 1) when its "
                                            "file name does not say (reference names: 0 for bert*/roberta-base).",
                                            show_default=False),
    sentiment_model: Optional[str] = typer.Option(None, "--sentiment-model", help="A sentiment classifier (folder or "
                                                  "cached hub name): adds StereoSet's SentimentLM baseline (the most "
                                                  "negative option wins)."),
    ensemble: bool = typer.Option(False, "--ensemble", help="Several --model: add the reference ENSEMBLE (weighted "
                                                            "vote of the models' sentence scores) as a row."),
    batch_size: opt.BatchSize = opt.DEFAULT_BATCH_SIZE,
    device: opt.Device = "auto",
    dtype: opt.Dtype = None,
    device_map: opt.DeviceMap = None,
    base_url: opt.BaseUrl = None,
    concurrency: opt.Concurrency = 8,
    seed: int = typer.Option(0, "--seed", help="Seed of the RandomLM baseline."),
    allow_missing: bool = typer.Option(False, "--allow-missing", help="--predictions: drop CATs without scores."),
    no_cache: opt.NoCache = False,
    quiet: opt.Quiet = False,
) -> None:
    """StereoSet context association tests: LMS, SS and ICAT per split, domain and target term."""
    from rich.table import Table
    from rich.text import Text

    from biaskit.clitools import console as make_console

    from .stereoset import run_cats, run_cats_predictions

    if (not model) == (predictions is None):
        raise BiaskitError("pass either --model (score the CATs) or --predictions (metrics from a score file).")
    if ensemble and len(model or ()) < 2:
        raise BiaskitError("--ensemble combines several models. Fix: repeat --model (at least two) or drop --ensemble")
    from biaskit.clitools import value

    kw = dict(split=value(split), piece_agg=value(piece_agg), tie_policy=value(ties), mode=value(cat_mode),
              protocol=opt.protocol_value(protocol))
    if (nsp_head is not None or sentiment_model is not None) and not model:
        raise BiaskitError("--nsp-head and --sentiment-model go with --model. Fix: pass --model DIR")
    if model and len(model) > 1:
        if nsp_head is not None:
            raise BiaskitError("an NSP head belongs to one model. Fix: run each model with its own --nsp-head")
        _cats_multi(data, list(model), out, scorer=scorer.value, fmt=format.value, limit=limit,
                    batch_size=batch_size, device=device, dtype=dtype, cache=not no_cache, seed=seed,
                    progress=not quiet, command=command_line(), release_split=release_split, ensemble=ensemble,
                    device_map=device_map, scorer_options=opt.served_options(scorer.value, base_url, concurrency),
                    sentiment_model=sentiment_model, **kw)
        return
    if predictions is not None:
        s = run_cats_predictions(data, predictions, out, fmt=format.value, tie_policy=kw["tie_policy"],
                                 allow_missing=allow_missing, seed=seed, command=command_line(),
                                 protocol=kw["protocol"])
    else:
        s = run_cats(data, model[0], out, scorer=scorer.value, fmt=format.value, limit=limit, batch_size=batch_size,
                     device=device, dtype=dtype, cache=not no_cache, seed=seed, progress=not quiet,
                     command=command_line(), release_split=release_split, device_map=device_map,
                     scorer_options=opt.served_options(scorer.value, base_url, concurrency), nsp_head=nsp_head,
                     nsp_label=nsp_label, sentiment_model=sentiment_model, **kw)
    console = make_console()
    table = Table(title=f"StereoSet: {s['model']} (ideal: LMS 100, SS 50, ICAT 100)")
    for col in ("split", "domain", "LMS", "SS", "ICAT", "CATs", "targets"):
        table.add_column(col, justify="left" if col in ("split", "domain") else "right")

    def add(split_name: str, dom: str, r: dict) -> None:
        table.add_row(split_name, dom, _fmt(r["lms"]), _fmt(r["ss"]), _fmt(r["icat"]), str(r["count"]),
                      str(r["n_targets"]))

    for sp in ("intrasentence", "intersentence"):
        if sp in s:
            add(sp, "all", s[sp]["overall"])
            for d, r in s[sp]["by_domain"].items():
                add("", d, r)
    add("overall", "all", s["overall"])
    console.print(table)
    for sp, info in (s.get("skipped") or {}).items():
        console.print(Text.assemble((f"{sp} not scored:", "yellow"), f" {info['reason']}"), soft_wrap=True)
    sent = (s.get("baselines") or {}).get("SentimentLM")
    if sent:
        o = sent["overall"]
        console.print(f"SentimentLM ({sent['classifier']['model']}): LMS {_fmt(o['lms'])}, SS {_fmt(o['ss'])}, "
                      f"ICAT {_fmt(o['icat'])}", soft_wrap=True)
    opt.print_protocol(console, s.get("protocol") or {})
    opt.print_published(console, s.get("published") or {})
    console.print(f"wrote {out / 'summary.json'}, {out / 'report.md'}"
                  + (f", {out / 'scores.jsonl'}, {out / 'predictions.json'}" if predictions is None else "")
                  + f", {out / 'targets.csv'}, {out / 'groups.csv'}", soft_wrap=True)


def _cats_multi(data: Path, models: list, out: Path, **kw) -> None:
    """Several models: one sub-folder each plus the comparison table and the lms-ss Spearman correlation."""
    from rich.table import Table

    from biaskit.clitools import console as make_console

    from .compare import run_cats_multi

    res = run_cats_multi(data, models, out, **kw)
    t = res["table"]
    table = Table(title="StereoSet: model comparison (ideal: LMS 100, SS 50, ICAT 100)")
    for col in ("model", "split", "domain", "LMS", "SS", "ICAT", "CATs"):
        table.add_column(col, justify="left" if col in ("model", "split", "domain") else "right")
    for _, r in t[t["domain"] == "all"].iterrows():
        table.add_row(r["model"], r["split"], r["domain"], _fmt(r["lms"]), _fmt(r["ss"]), _fmt(r["icat"]),
                      str(r["count"]))
    console = make_console()
    console.print(table)
    opt.print_protocol(console, res["summaries"][0].get("protocol") or {})
    c = res["correlations"]
    top = c[(c["split"] == "overall") & (c["domain"] == "all")]
    if len(top):
        r = top.iloc[0]
        console.print(f"Spearman rho (LMS vs SS, overall, {r['n_models']} models): {_fmt(r['spearman_rho'])}"
                      f", p {_pfmt(r['p_value'])}", soft_wrap=True)
    console.print(f"wrote {out / 'comparison.csv'}, {out / 'comparison.md'}, {out / 'correlations.csv'}, "
                  f"{out / 'comparison.json'} and one folder per model", soft_wrap=True)


def seat_command(
    test: List[str] = typer.Option(..., "--test", "-t", help="SEAT test (sent-bias .jsonl), a folder of tests, or "
                                                              "shipped tests: indibias-paper (the IndiBias paper's "
                                                              "Tables 3, 4, 9), indibias-team (biaskit's own), "
                                                              "indibias (both), + /en or /hi, or a table row such as "
                                                              "indibias-t3 / indibias-t4-r02. Repeatable."),
    model: opt.Models = ...,
    out: Path = out_dir(..., "--out", owns=("summary.json", "comparison.csv"), help="Output folder (results.csv, summary.json, report.md; several "
                                                "--model: one folder each + comparison.csv / comparison.md)."),
    pooling: Optional[opt.Pooling] = typer.Option(None, "--pooling", help="Sentence vector from the last layer: mean "
                                                  "of the tokens, cls (first position: IndiBias), first (first word "
                                                  "piece without special tokens: sent-bias BERT), last (sent-bias "
                                                  "GPT). Default: the protocol's.", show_default=False),
    bleach: Optional[opt.Bleach] = typer.Option(None, "--bleach", help="Put word-list tests into bleached templates "
                                                "(auto: when every example is a word; sent-bias: never). Default: the "
                                                "protocol's.", show_default=False),
    template: Optional[opt.TemplateKind] = typer.Option(None, "--template", help="Force one template kind."),
    lang: Optional[str] = typer.Option(None, "--lang", help="Template language en|hi (default: detected)."),
    n_samples: Optional[int] = typer.Option(None, "--n-samples", help="Permutations (default 100,000); exact test "
                                            "when there are no more partitions than this.", show_default=False),
    seed: Optional[int] = typer.Option(None, "--seed", help="Seed of the sampled permutation test (default 1111).",
                                       show_default=False),
    alpha: Optional[float] = typer.Option(None, "--alpha", help="Significance level of the marks (IndiBias and "
                                          "sent-bias: 0.01; no protocol: 0.05).", show_default=False),
    protocol: opt.Protocol = None,
    batch_size: opt.BatchSize = 64,
    device: opt.Device = "auto",
    no_cache: opt.NoCache = False,
) -> None:
    """SEAT/WEAT effect sizes and permutation p-values (May et al. 2019), incl. IndiBias intersectional tests."""
    from rich.table import Table

    from biaskit.clitools import console as make_console

    from .seat import run_seat

    kw = dict(pooling=pooling.value if pooling is not None else None, bleach=bleach.value if bleach is not None else None,
              template=template.value if template is not None else None, lang=lang, n_samples=n_samples, seed=seed,
              alpha=alpha, protocol=opt.protocol_value(protocol), batch_size=batch_size, device=device,
              cache=not no_cache, command=command_line())
    if len(model) > 1:
        from .compare import run_seat_multi
        from .seat import significance_legend

        res = run_seat_multi(test, list(model), out, **kw)
        t = res["table"]
        first = res["summaries"][0]
        table = Table(title=f"SEAT: effect size d per model ({first['pooling']} pooling; "
                            f"{significance_legend(first).replace('underlined', '*')})")
        table.add_column("test")
        table.add_column("lang")
        for n in res["names"]:
            table.add_column(n, justify="right")
        for (tname, lg), g in t.groupby(["test", "lang"], sort=False):
            cells = []
            for n in res["names"]:
                r = g[g["model"] == n]
                cells.append("n/a" if r.empty else f"{float(r['effect_size'].iloc[0]):.3f}"
                             + (r["significance"].iloc[0] or ""))
            table.add_row(tname, lg, *cells)
        make_console().print(table)
        opt.print_protocol(make_console(), first["protocol"])
        make_console().print(f"wrote {out / 'comparison.csv'}, {out / 'comparison.md'}, {out / 'comparison.json'} "
                             "and one folder per model", soft_wrap=True)
        return
    model = model[0]
    s = run_seat(test, model, out, **kw)
    table = Table(title=f"SEAT: {model} ({s['pooling']} pooling; d > 0: X~A, Y~B; "
                        f"*: p ≤ {s['alpha']:g}"
                        + ("; **: after Holm-Bonferroni" if s["correction"] == "holm-bonferroni" else "") + ")")
    for col in ("test", "lang", "d", "p", "p method", "n X/Y/A/B"):
        table.add_column(col, justify="left" if col in ("test", "lang", "p method") else "right")
    for r in s["tests"]:
        table.add_row(r["test"] + (" (noise!)" if r.get("warning") else ""), r["lang"],
                      f"{r['effect_size']:.3f}{r.get('significance') or ''}",
                      f"{r['p_value']:.2g}", r["p_method"], f"{r['n_targ1']}/{r['n_targ2']}/{r['n_attr1']}/{r['n_attr2']}")
    console = make_console()
    console.print(table)
    from rich.text import Text

    for w in s.get("warnings") or []:
        console.print(Text.assemble(("warning: ", "yellow"), w), soft_wrap=True)
    opt.print_protocol(console, s["protocol"])
    opt.print_published(console, s.get("published") or {})
    console.print(f"wrote {out / 'results.csv'}, {out / 'summary.json'}, {out / 'report.md'}", soft_wrap=True)


def correlate_command(
    results: Optional[List[Path]] = in_dir(None, "--results", "-r", help="biaskit result folders (evaluate cats/pairs/"
                                           "ceat/ilps), one per model and benchmark. Repeatable."),
    extrinsic: Path = in_file(..., "--extrinsic", help="CSV of downstream group scores: model, domain, group, "
                                                            "metric, score."),
    out: Path = out_dir(..., "--out", owns=("summary.json",), help="Output folder (correlations.csv, variances.csv, summary.json, "
                                                "report.md, plots/)."),
    groups: Optional[opt.GroupMode] = typer.Option(None, "--groups", help="all (default) or aligned: only groups "
                                                   "present on both sides.", show_default=False),
    protocol: opt.Protocol = None,
    model: opt.OptionalModels = None,
    cats: Optional[Path] = in_path(None, "--cats", help="--protocol cao2022 with --model: the StereoSet data to score "
                                   "(intrasentence, pseudo-likelihood). The metrics' folders go to OUT-intrinsic/."),
    corpus: Optional[List[Path]] = in_path(None, "--corpus", text=False, help="--protocol cao2022 with --model: the "
                                           "text corpus CEAT draws the words' contexts from (one sentence per line)."),
    group_map: Optional[Path] = in_file(None, "--group-map", help="CSV domain,term,group mapping terms to shared "
                                                                       "group names (averaged)."),
    ddof: int = typer.Option(0, "--ddof", help="Variance: 0 population (default), 1 sample."),
    min_groups: int = typer.Option(2, "--min-groups", help="Groups a model needs on each side to count."),
    no_plots: bool = typer.Option(False, "--no-plots", help="Skip the scatter plots."),
) -> None:
    """Correlate intrinsic and extrinsic bias across models (variance of group-level scores; Pearson, Spearman)."""
    from rich.table import Table

    from biaskit.clitools import console

    from biaskit.clitools import value

    from .correlate import correlate, run_intrinsic, write_outputs

    folders = list(results or [])
    if model:
        from .correlate import read_extrinsic

        read_extrinsic(extrinsic)  # checked before the metrics run
        folders += run_intrinsic(list(model), out.with_name(out.name + "-intrinsic"),
                                 protocol=opt.protocol_value(protocol), cats=cats, corpus=corpus)
    if not folders:
        raise BiaskitError("nothing to correlate. Fix: pass --results DIR (repeatable), or --protocol cao2022 with "
                           "--model, --cats and --corpus to run the paper's intrinsic metrics")
    variances, corrs, info = correlate(folders, extrinsic, groups=value(groups), group_map=group_map, ddof=ddof,
                                       min_groups=min_groups, protocol=opt.protocol_value(protocol))
    info["command"] = command_line()
    write_outputs(variances, corrs, info, out, plots=not no_plots)
    table = Table(title="Intrinsic vs extrinsic (variance of group scores, across models)")
    for col in ("domain", "intrinsic", "extrinsic", "models", "Pearson r", "p", "Spearman rho", "p "):
        table.add_column(col)
    for _, r in corrs.iterrows():
        table.add_row(r["domain"], r["intrinsic"], r["extrinsic"], str(r["n_models"]), _fmt(r["pearson_r"]),
                      _pfmt(r["pearson_p"]), _fmt(r["spearman_rho"]), _pfmt(r["spearman_p"]))
    con = console()
    con.print(table)
    opt.print_protocol(con, info["protocol"])
    con.print(f"wrote {out / 'correlations.csv'}, {out / 'variances.csv'}, {out / 'report.md'}", soft_wrap=True)


def _pfmt(x) -> str:
    return pvalue(x)
