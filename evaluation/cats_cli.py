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

from . import cli_options as opt


def _fmt(x) -> str:
    return "n/a" if x is None else f"{x:.2f}"


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
    split: opt.CatSplit = typer.Option("both", "--split", help="Which CATs to score."),
    release_split: Optional[str] = typer.Option(None, "--release-split",
                                                help="Release folder (--data DIR): score only its dev or test split."),
    limit: Optional[int] = typer.Option(None, "--limit", help="Score only the first N CATs (after --split)."),
    piece_agg: opt.PieceAgg = typer.Option("mean-prob", "--piece-agg",
                                           help="mlm intrasentence: mean of piece probabilities (reference) or log-probs."),
    cat_mode: opt.CatMode = typer.Option("likelihood", "--cat-mode",
                                         help="likelihood (StereoSet ACL 2021 Table 4: fill pieces, NSP) or pll "
                                              "(pseudo-likelihood, Table 5: mask each context token in turn)."),
    ties: opt.TiePolicy = typer.Option("reference", "--ties", help="Tie rule (reference: tie = anti / not related)."),
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
    if model and len(model) > 1:
        _cats_multi(data, list(model), out, scorer=scorer.value, fmt=format.value, split=split.value, limit=limit,
                    batch_size=batch_size, piece_agg=piece_agg.value, tie_policy=ties.value, device=device,
                    dtype=dtype, cache=not no_cache, seed=seed, progress=not quiet, command=command_line(),
                    release_split=release_split, mode=cat_mode.value, ensemble=ensemble, device_map=device_map,
                    scorer_options=opt.served_options(scorer.value, base_url, concurrency))
        return
    if predictions is not None:
        s = run_cats_predictions(data, predictions, out, fmt=format.value, tie_policy=ties.value,
                                 allow_missing=allow_missing, seed=seed, command=command_line())
    else:
        s = run_cats(data, model[0], out, scorer=scorer.value, fmt=format.value, split=split.value, limit=limit,
                     batch_size=batch_size, piece_agg=piece_agg.value, tie_policy=ties.value, device=device,
                     dtype=dtype, cache=not no_cache, seed=seed, progress=not quiet, command=command_line(),
                     release_split=release_split, mode=cat_mode.value, device_map=device_map,
                     scorer_options=opt.served_options(scorer.value, base_url, concurrency))
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
    c = res["correlations"]
    top = c[(c["split"] == "overall") & (c["domain"] == "all")]
    if len(top):
        r = top.iloc[0]
        console.print(f"Spearman rho (LMS vs SS, overall, {r['n_models']} models): {_fmt(_num(r['spearman_rho']))}"
                      f", p {_pfmt(_num(r['p_value']))}", soft_wrap=True)
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
    pooling: opt.Pooling = typer.Option("mean", "--pooling", help="Sentence vector: mean of tokens or first token."),
    bleach: opt.Bleach = typer.Option("auto", "--bleach",
                                      help="Put word-list tests into bleached templates (auto: when every example is a word)."),
    template: Optional[opt.TemplateKind] = typer.Option(None, "--template", help="Force one template kind."),
    lang: Optional[str] = typer.Option(None, "--lang", help="Template language en|hi (default: detected)."),
    n_samples: int = typer.Option(100_000, "--n-samples", help="Permutations; exact test when there are no more "
                                                                "partitions than this."),
    seed: int = typer.Option(1111, "--seed", help="Seed of the sampled permutation test."),
    batch_size: opt.BatchSize = 64,
    device: opt.Device = "auto",
    no_cache: opt.NoCache = False,
) -> None:
    """SEAT/WEAT effect sizes and permutation p-values (May et al. 2019), incl. IndiBias intersectional tests."""
    from rich.table import Table

    from biaskit.clitools import console as make_console

    from .seat import run_seat

    if len(model) > 1:
        from .compare import run_seat_multi

        res = run_seat_multi(test, list(model), out, pooling=pooling.value, bleach=bleach.value,
                             template=template.value if template is not None else None, lang=lang,
                             n_samples=n_samples, seed=seed, batch_size=batch_size, device=device,
                             cache=not no_cache, command=command_line())
        t = res["table"]
        table = Table(title=f"SEAT: effect size d per model ({pooling.value} pooling; * p < 0.05)")
        table.add_column("test")
        table.add_column("lang")
        for n in res["names"]:
            table.add_column(n, justify="right")
        for (tname, lg), g in t.groupby(["test", "lang"], sort=False):
            cells = []
            for n in res["names"]:
                r = g[g["model"] == n]
                cells.append("n/a" if r.empty else f"{float(r['effect_size'].iloc[0]):.3f}"
                             + ("*" if float(r["p_value"].iloc[0]) < 0.05 else ""))
            table.add_row(tname, lg, *cells)
        make_console().print(table)
        make_console().print(f"wrote {out / 'comparison.csv'}, {out / 'comparison.md'}, {out / 'comparison.json'} "
                             "and one folder per model", soft_wrap=True)
        return
    model = model[0]
    s = run_seat(test, model, out, pooling=pooling.value, bleach=bleach.value,
                 template=template.value if template is not None else None, lang=lang, n_samples=n_samples,
                 seed=seed, batch_size=batch_size, device=device, cache=not no_cache, command=command_line())
    table = Table(title=f"SEAT: {model} ({pooling.value} pooling; d > 0: X~A, Y~B)")
    for col in ("test", "lang", "d", "p", "p method", "n X/Y/A/B"):
        table.add_column(col, justify="left" if col in ("test", "lang", "p method") else "right")
    for r in s["tests"]:
        table.add_row(r["test"] + (" (noise!)" if r.get("warning") else ""), r["lang"], f"{r['effect_size']:.3f}",
                      f"{r['p_value']:.2g}", r["p_method"], f"{r['n_targ1']}/{r['n_targ2']}/{r['n_attr1']}/{r['n_attr2']}")
    console = make_console()
    console.print(table)
    from rich.text import Text

    for w in s.get("warnings") or []:
        console.print(Text.assemble(("warning: ", "yellow"), w), soft_wrap=True)
    console.print(f"wrote {out / 'results.csv'}, {out / 'summary.json'}, {out / 'report.md'}", soft_wrap=True)


def correlate_command(
    results: List[Path] = in_dir(..., "--results", "-r", help="biaskit result folders (evaluate cats/pairs), one "
                                                                     "per model and benchmark. Repeatable."),
    extrinsic: Path = in_file(..., "--extrinsic", help="CSV of downstream group scores: model, domain, group, "
                                                            "metric, score."),
    out: Path = out_dir(..., "--out", owns=("summary.json",), help="Output folder (correlations.csv, variances.csv, summary.json, "
                                                "report.md, plots/)."),
    groups: opt.GroupMode = typer.Option("all", "--groups", help="aligned: only groups present on both sides."),
    group_map: Optional[Path] = in_file(None, "--group-map", help="CSV domain,term,group mapping terms to shared "
                                                                       "group names (averaged)."),
    ddof: int = typer.Option(0, "--ddof", help="Variance: 0 population (default), 1 sample."),
    min_groups: int = typer.Option(2, "--min-groups", help="Groups a model needs on each side to count."),
    no_plots: bool = typer.Option(False, "--no-plots", help="Skip the scatter plots."),
) -> None:
    """Correlate intrinsic and extrinsic bias across models (variance of group-level scores; Pearson, Spearman)."""
    from rich.table import Table

    from biaskit.clitools import console

    from .correlate import correlate, write_outputs

    variances, corrs, info = correlate(results, extrinsic, groups=groups.value, group_map=group_map, ddof=ddof,
                                       min_groups=min_groups)
    info["command"] = command_line()
    write_outputs(variances, corrs, info, out, plots=not no_plots)
    table = Table(title="Intrinsic vs extrinsic (variance of group scores, across models)")
    for col in ("domain", "intrinsic", "extrinsic", "models", "Pearson r", "p", "Spearman rho", "p "):
        table.add_column(col)
    for _, r in corrs.iterrows():
        table.add_row(r["domain"], r["intrinsic"], r["extrinsic"], str(r["n_models"]), _fmt(_num(r["pearson_r"])),
                      _pfmt(_num(r["pearson_p"])), _fmt(_num(r["spearman_rho"])), _pfmt(_num(r["spearman_p"])))
    con = console()
    con.print(table)
    con.print(f"wrote {out / 'correlations.csv'}, {out / 'variances.csv'}, {out / 'report.md'}", soft_wrap=True)


def _pfmt(x) -> str:
    return "n/a" if x is None else f"{x:.2g}"


def _num(x):
    import math

    return None if x is None or (isinstance(x, float) and not math.isfinite(x)) else float(x)
