"""Do intrinsic bias scores predict extrinsic (downstream) bias? Correlation across models.

Follows the protocol of Cao et al. (ACL 2022, "On the Intrinsic and Extrinsic Fairness Evaluation
Metrics for Contextualized Language Representations"; 19 models): for every model and domain, a
metric's bias measure is the **variance of its group-level scores** (a model that treats every group
alike has variance 0); then, for every pair (intrinsic metric, extrinsic metric), the measures are
correlated **across models** with Pearson's r and Spearman's rho (scipy, two-sided p-values).

Inputs
------
Intrinsic: biaskit result folders. Group-level scores are read from, in this order:

1. ``groups.csv`` in the folder (``domain, group, metric, score[, count]``), written by
   ``biaskit evaluate cats`` (group = StereoSet target term; metrics ``ss``, ``lms``, ``icat``) and
   accepted from any tool;
2. ``pairs.csv`` (``biaskit evaluate pairs``): the group-level score is the pair metric score
   ``100 * wins / pairs`` of the pairs of each group, with the group from a ``group_more`` (or
   ``group``) column and the domain from ``bias_type``; when the file has no group column each bias
   type is one group of the single domain ``all`` (reported as ``group_source: bias_type``).

The model name is ``summary.json``'s ``model`` (also matched by its last path component and by the
folder's name). Metric names are prefixed by the benchmark: ``stereoset:ss``, ``pairs:metric_score``.

Extrinsic: a CSV (or JSONL) with the columns ``model, domain, group, metric, score`` (one row per
group-level score of a downstream task, e.g. a classifier's per-group TPR or F1).

``groups="aligned"`` keeps, for each model, domain and metric pair, only the groups present on both
sides (after lower-casing and an optional ``group_map`` CSV ``domain, term, group`` that maps terms,
e.g. StereoSet target terms or extrinsic group labels, to shared group names; several terms mapped to
one group are averaged). ``groups="all"`` (default) uses every group of each side.

Variance is the population variance (``ddof=0``) by default; ``ddof=1`` gives the sample variance.
"""

from __future__ import annotations

import json
import math
import re
from collections.abc import Sequence
from dataclasses import dataclass
from pathlib import Path
from typing import TYPE_CHECKING

from biaskit.errors import BiaskitError, InputError
from biaskit.tables import md_table, num

from .choices import GROUP_MODES
from .results import Correlation

if TYPE_CHECKING:
    import pandas as pd

    from .options import CorrelateOptions

LONG_COLUMNS = ["model", "domain", "group", "metric", "score"]


@dataclass
class ResultFolder:
    path: Path
    model: str
    names: tuple[str, ...]
    benchmark: str
    groups: pd.DataFrame  # domain, group, metric, score, count
    group_source: str


def _norm(s: str) -> str:
    return re.sub(r"\s+", " ", str(s)).strip().lower()


def read_result_folder(path: str | Path) -> ResultFolder:
    """A result folder's model name and long-format group scores (see the module docstring)."""
    path = Path(path)
    summary = _folder_summary(path)
    model = str(summary.get("model") or path.name)
    benchmark = str(
        summary.get("benchmark") or ("pairs" if "metric_score" in summary else summary.get("kind") or "intrinsic")
    )
    gpath, ppath = path / "groups.csv", path / "pairs.csv"
    if gpath.exists():
        df, source = _groups_csv(gpath), "groups.csv"
    elif ppath.exists():
        df, source = _pairs_groups(ppath)
    else:
        raise InputError(
            "no group-level scores (groups.csv or pairs.csv) in this result folder.",
            path=path,
            fix="pass folders written by `biaskit evaluate cats` or `biaskit evaluate pairs`, or add "
            "a groups.csv with domain, group, metric, score.",
        )
    df = df.assign(metric=[f"{benchmark}:{m}" for m in df["metric"]])
    return ResultFolder(
        path=path,
        model=model,
        names=tuple(dict.fromkeys([model, Path(model).name, path.name])),
        benchmark=benchmark,
        groups=df[["domain", "group", "metric", "score", "count"]],
        group_source=source,
    )


def _folder_summary(path: Path) -> dict:
    """The summary.json of a result folder (an error naming the folder when there is none)."""
    from biaskit.io import read_json

    if not path.is_dir():
        raise InputError("not a folder.", path=path, fix="pass result folders written by biaskit evaluate cats|pairs.")
    if not (path / "summary.json").exists():
        raise InputError(
            "no summary.json in this result folder.",
            path=path,
            fix="pass folders written by `biaskit evaluate cats` or `biaskit evaluate pairs`.",
        )
    summary = read_json(path / "summary.json", fix="re-run the evaluation that wrote it.")
    if not isinstance(summary, dict):
        raise InputError(
            f"summary.json is a JSON {type(summary).__name__}, not the object biaskit evaluate writes.",
            path=path / "summary.json",
            fix="re-run the evaluation that wrote it.",
        )
    return summary


def _groups_csv(gpath: Path):
    """The group scores of a ``groups.csv`` (``count`` 1 when it has none)."""
    from biaskit.io import read_table

    df = read_table(gpath)
    missing = [c for c in ("domain", "group", "metric", "score") if c not in df.columns]
    if missing:
        raise InputError(
            f"missing column(s) {', '.join(missing)}.",
            path=gpath,
            fix="groups.csv needs domain, group, metric, score [, count].",
        )
    df = _numeric(df, gpath)
    if "count" not in df.columns:
        df["count"] = 1
    return df


def _pairs_groups(ppath: Path):
    """The group scores of a ``pairs.csv``: ``100 * wins / pairs`` per group (``group_more`` or
    ``group``) and bias type, or per bias type of the domain ``all`` when no group is named. Returns
    the scores and where the groups came from."""
    import pandas as pd

    from biaskit.io import read_table

    pairs = read_table(ppath)
    if "win" not in pairs.columns or "bias_type" not in pairs.columns:
        raise InputError(
            "pairs.csv lacks 'win' or 'bias_type'.",
            path=ppath,
            fix="use a pairs.csv written by `biaskit evaluate pairs`.",
        )
    gcol = next((c for c in ("group_more", "group") if c in pairs.columns and pairs[c].notna().any()), None)
    win = pairs["win"].map(lambda v: str(v).strip().lower() in ("1", "true", "1.0")).astype(float)
    pairs = pairs.assign(_win=win)
    if gcol:
        pairs = pairs[pairs[gcol].notna()]
    keys = ["bias_type", gcol] if gcol else ["bias_type"]
    grp = pairs.groupby(keys)["_win"].agg(["mean", "size"]).reset_index()
    df = pd.DataFrame(
        {
            "domain": grp["bias_type"] if gcol else "all",
            "group": grp[gcol] if gcol else grp["bias_type"],
            "metric": "metric_score",
            "score": 100.0 * grp["mean"],
            "count": grp["size"],
        }
    )
    return df, gcol or "bias_type"


def _numeric(df, path: Path):
    import pandas as pd

    sc = pd.to_numeric(df["score"], errors="coerce")
    bad = sc.isna() & df["score"].notna()
    if bad.any():
        i = int(bad.idxmax())
        raise InputError(
            f"score {df['score'][i]!r} is not a number.",
            path=path,
            row=i + 1,
            column="score",
            fix="scores must be numbers.",
        )
    return df.assign(score=sc)[sc.notna()]


def read_extrinsic(path: str | Path):
    """The extrinsic CSV/JSONL (``model, domain, group, metric, score``), validated."""
    from biaskit.io import read_table

    path = Path(path)
    df = read_table(path)
    missing = [c for c in LONG_COLUMNS if c not in df.columns]
    if missing:
        raise InputError(
            f"missing column(s) {', '.join(missing)} (found: {', '.join(map(str, df.columns))}).",
            path=path,
            fix="the extrinsic file needs one row per group-level score with the columns "
            "model, domain, group, metric, score.",
        )
    for c in ("model", "domain", "group", "metric"):
        empty = df[c].isna() | (df[c].astype(str).str.strip() == "")
        if empty.any():
            raise InputError(
                f"empty '{c}'.", path=path, row=int(empty.idxmax()) + 1, column=c, fix=f"fill in {c} on every row."
            )
    df = _numeric(df, path)
    if df.empty:
        raise InputError("no scores.", path=path, fix="add rows model, domain, group, metric, score.")
    df = df.assign(
        model=df["model"].astype(str).str.strip(),
        domain=df["domain"].astype(str).str.strip(),
        group=df["group"].astype(str).str.strip(),
        metric=df["metric"].astype(str).str.strip(),
    )
    return df


def read_group_map(path: str | Path | None) -> dict[tuple[str, str], str]:
    """``(domain or '', term) -> group`` from a CSV with ``term, group`` [+ ``domain``]."""
    if not path:
        return {}
    from biaskit.io import read_table

    df = read_table(Path(path))
    if not {"term", "group"} <= set(df.columns):
        raise InputError(
            "a group map needs the columns term, group (and optionally domain).",
            path=path,
            fix="write rows like: domain,term,group / gender,schoolgirl,female",
        )
    out = {}
    for _, r in df.iterrows():
        dom = _norm(r["domain"]) if "domain" in df.columns and isinstance(r.get("domain"), str) else ""
        out[(dom, _norm(r["term"]))] = _norm(r["group"])
    return out


def _map_groups(df, gmap: dict, aligned: bool):
    """Normalise group names (and map them) and average scores of terms mapped to one group."""
    if not aligned and not gmap:
        return df.assign(group_key=df["group"].map(_norm))

    def key(row) -> str:
        g = _norm(row["group"])
        return gmap.get((_norm(row["domain"]), g), gmap.get(("", g), g))

    df = df.assign(group_key=[key(r) for _, r in df.iterrows()])
    return df.groupby(["model", "domain", "metric", "group_key"], as_index=False)["score"].mean()


def _variance(values, ddof: int) -> float:
    import numpy as np

    v = np.asarray(list(values), dtype=float)
    if len(v) <= ddof or len(v) < 2:
        return float("nan")
    return float(np.var(v, ddof=ddof))


def correlate_protocol(requested: str | None, given: dict):
    """The protocol of a correlation (``cao2022`` only by name: a correlation has no data origin)."""
    from biaskit.options import say

    from .protocols import apply_protocol, get_protocol
    from .protocols import words as W

    proto = get_protocol(requested) if requested not in (None, "auto") else None
    if proto is not None and "correlate" not in proto.commands:
        raise BiaskitError(
            f"protocol '{proto.name}' does not cover `evaluate correlate`. Fix: pass {say('protocol', 'cao2022')} or "
            f"{say('protocol', 'none')}"
        )
    return apply_protocol(
        proto,
        "correlate",
        given,
        {"groups": "all", "correlation": "pearson and spearman"},
        chosen_by=say("protocol") if proto else f"no {say('protocol')}",
        words={
            "groups": W.GROUPS,
            "correlation": {**W.CORRELATION, "pearson and spearman": "Pearson's r and Spearman's rho"},
        },
    )


def check_cao2022_folders(folders: Sequence[ResultFolder]) -> list[str]:
    """Cao et al. 2022 §2: StereoSet group scores from intrasentence CATs scored by pseudo-likelihood,
    and CEAT, ILPS and StereoSet for every model. A StereoSet folder run otherwise is refused with the
    command that fixes it; a model lacking a metric is reported (returned as notes)."""
    from biaskit.io import read_json

    by_model: dict[str, set] = {}
    for f in folders:
        by_model.setdefault(f.model, set()).add(f.benchmark)
        if f.benchmark != "stereoset":
            continue
        summ = read_json(f.path / "summary.json")
        split = (summ.get("data") or {}).get("split")
        mode = summ.get("cat_mode")
        if split != "intrasentence" or mode != "pll":
            # a command of `evaluate cats` (not this one's options): spelled as that command takes them
            rerun = f"`biaskit evaluate cats --data DATA --model {f.model} --split intrasentence --cat-mode pll"
            rerun += " --out DIR` (or `--protocol cao2022`)"
            raise InputError(
                f"a StereoSet result scored with split {split!r} and mode {mode!r}; Cao et al. 2022 §2 "
                "use intrasentence CATs scored by pseudo-likelihood.",
                path=f.path,
                fix=f"re-run: {rerun}.",
            )
    notes = []
    for m, have in sorted(by_model.items()):
        lacking = [x for x in ("ceat", "ilps", "stereoset") if x not in have]
        if lacking:
            notes.append(
                f"model {m} lacks {', '.join(lacking)} (Cao et al. 2022 §2 correlate CEAT, ILPS and "
                "StereoSet for every model)"
            )
    return notes


def run_intrinsic(opts: CorrelateOptions) -> list[Path]:
    """``correlate --protocol cao2022 --model M ...``: run Cao et al.'s intrinsic metrics for every model
    (StereoSet intrasentence by pseudo-likelihood, CEAT, ILPS; §2) into ``OUT-intrinsic/<model>/<metric>``
    and return the folders. Masked LMs get all three; a causal LM gets StereoSet and CEAT (ILPS masks)."""
    from biaskit.io import atomic_dir, write_json

    from .ceat import run_ceat
    from .ilps import run_ilps
    from .options import CatsOptions, CeatOptions, IlpsOptions
    from .pairs import _unique_slugs
    from .seat import read_family
    from .seat_names import corpus_lines
    from .stereoset import run_cats

    _check_intrinsic(opts)
    for _ in corpus_lines(opts.corpus or []):  # a corpus that cannot be read stops the run before any model runs
        pass
    out_root = intrinsic_folder(opts.out)
    models, protocol = list(opts.models or []), opts.protocol
    rel: list[str] = []
    with atomic_dir(out_root, owns=("intrinsic.json",)) as stage:  # published whole when every metric ran
        for m, slug in zip(models, _unique_slugs(models), strict=False):
            run_ceat(CeatOptions(model=m, corpus=opts.corpus, out=stage / slug / "ceat", protocol=protocol))
            rel.append(f"{slug}/ceat")
            if read_family(m)[0] == "encoder":
                run_ilps(IlpsOptions(model=m, out=stage / slug / "ilps", protocol=protocol))
                rel.append(f"{slug}/ilps")
            run_cats(CatsOptions(data=opts.cats, models=[m], out=stage / slug / "stereoset", protocol=protocol))
            rel.append(f"{slug}/stereoset")
        write_json(stage / "intrinsic.json", {"protocol": protocol, "models": models, "folders": rel})
    return [out_root / r for r in rel]


def intrinsic_folder(out: Path) -> Path:
    """Where ``correlate --model`` writes the intrinsic metrics' folders: ``OUT-intrinsic``."""
    out = Path(out)
    return out.with_name(out.name + "-intrinsic")


def _check_intrinsic(o: CorrelateOptions) -> None:
    """Running the intrinsic metrics is a paper protocol's, and needs its data."""
    from biaskit.options import say

    if o.protocol != "cao2022":
        raise BiaskitError(
            f"{say('models')} runs the intrinsic metrics of a paper protocol. Fix: pass {say('protocol', 'cao2022')} "
            f"(or {say('results', 'DIR')} for metrics you ran yourself)"
        )
    if o.cats is None or not o.corpus:
        raise BiaskitError(
            f"{say('protocol', 'cao2022')} with {say('models')} needs the StereoSet data and a corpus for CEAT. Fix: "
            f"pass {say('cats', 'DATA')} and {say('corpus', 'FILE')}"
        )


def run_correlate(opts: CorrelateOptions, *, command: str | None = None) -> Correlation:
    """``biaskit evaluate correlate``: the intrinsic metrics first when models are given
    (:func:`run_intrinsic`), then :func:`correlate` of those folders and ``results``, written to
    ``opts.out`` (:func:`write_outputs`)."""
    from biaskit.options import say

    folders = list(opts.results or [])
    if opts.models:
        read_extrinsic(opts.extrinsic)  # checked before the metrics run
        folders += run_intrinsic(opts)
    if not folders:
        raise BiaskitError(
            f"nothing to correlate. Fix: pass {say('results', 'DIR')} (repeatable), or {say('protocol', 'cao2022')} "
            f"with {say('models')}, {say('cats')} and {say('corpus')} to run the paper's intrinsic metrics"
        )
    res = correlate(opts.model_copy(update={"results": folders}))
    res.info["command"] = command
    write_outputs(res.variances, res.correlations, res.info, opts.out, plots=not opts.no_plots)
    res.folder = Path(opts.out)
    return res


def correlate(opts: CorrelateOptions) -> Correlation:
    """Variances per (model, domain, metric) and Pearson/Spearman correlations across models, of the
    result folders ``opts.results`` and the extrinsic scores ``opts.extrinsic`` (nothing is written).

    ``protocol="cao2022"``: Cao et al. 2022's setup (their intrinsic metrics, StereoSet folders from
    intrasentence pseudo-likelihood runs, Pearson's r as the headline)."""
    applied = correlate_protocol(opts.protocol, {"groups": opts.groups})
    groups = applied.values["groups"]
    if groups not in GROUP_MODES:
        from biaskit.options import say

        raise BiaskitError(f"unknown {say('groups')} '{groups}'. Fix: use {' or '.join(GROUP_MODES)}.")
    folders = [read_result_folder(p) for p in opts.results or []]
    if applied.name == "cao2022":
        _note_cao2022(applied, folders)
    ext = read_extrinsic(opts.extrinsic)
    gmap = read_group_map(opts.group_map)
    intr = _intrinsic_scores(folders, set(ext["model"]), opts.extrinsic)
    aligned = groups == "aligned"
    intr_g, ext_g = _map_groups(intr, gmap, aligned), _map_groups(ext, gmap, aligned)
    domains = _common_domains(intr_g, ext_g, opts.extrinsic)
    models = sorted(set(intr_g["model"]))
    var_rows: list[dict] = []
    corr_rows: list[dict] = []
    for dom in domains:
        for a in sorted(set(intr_g.loc[intr_g["domain"] == dom, "metric"])):
            for b in sorted(set(ext_g.loc[ext_g["domain"] == dom, "metric"])):
                xs, ys, used = [], [], []
                for m in models:
                    v = _model_variances(intr_g, ext_g, m, dom, a, b, aligned, opts.ddof)
                    var_rows.append(v)
                    if _counts(v, opts.min_groups):
                        xs.append(v["var_intrinsic"])
                        ys.append(v["var_extrinsic"])
                        used.append(m)
                corr_rows.append(_correlation(dom, a, b, xs, ys, used))
    return Correlation(
        variances=_frame(var_rows),
        correlations=_frame(corr_rows),
        info=_info(opts, applied, groups, models, domains, folders),
    )


def _frame(rows: list[dict]):
    import pandas as pd

    return pd.DataFrame(rows)


def _note_cao2022(applied, folders: Sequence[ResultFolder]) -> None:
    """Cao et al. 2022's metrics a model lacks, as deviations (a StereoSet folder not run their way is
    refused: :func:`check_cao2022_folders`)."""
    for n in check_cao2022_folders(folders):
        applied.deviations.append(
            {
                "key": "metrics",
                "option": "",
                "used": None,
                "protocol_value": None,
                "section": "Cao et al. 2022 §2",
                "text": n,
            }
        )


def _intrinsic_scores(folders: Sequence[ResultFolder], ext_models: set, extrinsic: Path):
    """The folders' group scores in one table, each under the model name the extrinsic file uses; a
    folder whose model has no extrinsic rows, or two folders of one model and benchmark, are refused."""
    import pandas as pd

    intr_rows, unmatched = [], []
    for f in folders:
        name = next((n for n in f.names if n in ext_models), None)
        if name is None:
            unmatched.append(f)
            continue
        intr_rows.append(f.groups.assign(model=name))
    if unmatched:
        f = unmatched[0]
        raise InputError(
            f"model '{f.model}' (folder {f.path.name}) has no rows in the extrinsic file "
            f"(its models: {', '.join(sorted(ext_models))}).",
            path=extrinsic,
            column="model",
            fix="use the model name of summary.json, its last path component or the result "
            "folder's name in the extrinsic CSV.",
        )
    intr = pd.concat(intr_rows, ignore_index=True)
    dups = intr[intr.duplicated(["model", "domain", "group", "metric"], keep=False)]
    if len(dups):
        r = dups.iloc[0]
        raise BiaskitError(
            f"model '{r['model']}' has two scores for {r['metric']} / {r['domain']} / {r['group']} "
            "(two result folders of the same model and benchmark?). Fix: pass one folder per model "
            "and benchmark."
        )
    return intr.assign(domain=intr["domain"].astype(str))


def _common_domains(intr_g, ext_g, extrinsic: Path) -> list[str]:
    domains = sorted(set(intr_g["domain"]) & set(ext_g["domain"]))
    if not domains:
        raise InputError(
            f"no domain in common between the result folders ({', '.join(sorted(set(intr_g['domain'])))}) "
            f"and the extrinsic file ({', '.join(sorted(set(ext_g['domain'])))}).",
            path=extrinsic,
            column="domain",
            fix="use the same domain names (e.g. gender, race, religion).",
        )
    return domains


def _model_variances(intr_g, ext_g, m: str, dom: str, a: str, b: str, aligned: bool, ddof: int) -> dict:
    """One row of variances.csv: model ``m``'s variance of intrinsic metric ``a`` and extrinsic metric
    ``b`` in domain ``dom`` (``aligned``: over the groups both sides have)."""
    ga = intr_g[(intr_g["model"] == m) & (intr_g["domain"] == dom) & (intr_g["metric"] == a)]
    gb = ext_g[(ext_g["model"] == m) & (ext_g["domain"] == dom) & (ext_g["metric"] == b)]
    if aligned:
        common = set(ga["group_key"]) & set(gb["group_key"])
        ga, gb = ga[ga["group_key"].isin(common)], gb[gb["group_key"].isin(common)]
    return {
        "model": m,
        "domain": dom,
        "intrinsic": a,
        "extrinsic": b,
        "n_groups_intrinsic": len(ga),
        "n_groups_extrinsic": len(gb),
        "var_intrinsic": _variance(ga["score"], ddof),
        "var_extrinsic": _variance(gb["score"], ddof),
    }


def _counts(v: dict, min_groups: int) -> bool:
    """A model counts in a correlation with ``min_groups`` groups on each side and both variances."""
    return (
        v["n_groups_intrinsic"] >= min_groups
        and v["n_groups_extrinsic"] >= min_groups
        and math.isfinite(v["var_intrinsic"])
        and math.isfinite(v["var_extrinsic"])
    )


def _correlation(dom: str, a: str, b: str, xs: list[float], ys: list[float], used: list[str]) -> dict:
    """One row of correlations.csv: Pearson and Spearman across the models that count (scipy)."""
    from scipy import stats

    row = {
        "domain": dom,
        "intrinsic": a,
        "extrinsic": b,
        "n_models": len(used),
        "pearson_r": float("nan"),
        "pearson_p": float("nan"),
        "spearman_rho": float("nan"),
        "spearman_p": float("nan"),
        "models": used,
        "note": "",
    }
    if len(used) < 3:
        row["note"] = "fewer than 3 models with both variances"
    elif len(set(xs)) < 2 or len(set(ys)) < 2:
        row["note"] = "a variance is constant across models"
    else:
        pr, sr = stats.pearsonr(xs, ys), stats.spearmanr(xs, ys)
        row.update(
            pearson_r=float(pr.statistic),
            pearson_p=float(pr.pvalue),
            spearman_rho=float(sr.statistic),
            spearman_p=float(sr.pvalue),
        )
    return row


def _info(o: CorrelateOptions, applied, groups: str, models: list, domains: list, folders) -> dict:
    """What summary.json records of the run besides the correlations."""
    return {
        "protocol": applied.as_dict(),
        "headline": applied.values.get("correlation"),
        "groups": groups,
        "ddof": o.ddof,
        "min_groups": o.min_groups,
        "models": models,
        "domains": domains,
        "group_map": str(o.group_map) if o.group_map else None,
        "folders": [
            {"path": str(f.path), "model": f.model, "benchmark": f.benchmark, "group_source": f.group_source}
            for f in folders
        ],
        "extrinsic": str(o.extrinsic),
    }


def _slug(s: str) -> str:
    from biaskit.paths import slug_component

    return slug_component(re.sub(r"[^A-Za-z0-9._-]+", "-", s).strip("-"), max_len=60)


def scatter_plots(variances, corrs, out_dir: str | Path) -> list[Path]:
    """One PNG per (domain, intrinsic, extrinsic) with at least one model: a point per model."""
    import matplotlib

    matplotlib.use("Agg")
    import matplotlib.pyplot as plt

    out_dir = Path(out_dir)
    out_dir.mkdir(parents=True, exist_ok=True)
    paths = []
    for _, c in corrs.iterrows():
        sub = variances[
            (variances["domain"] == c["domain"])
            & (variances["intrinsic"] == c["intrinsic"])
            & (variances["extrinsic"] == c["extrinsic"])
            & variances["model"].isin(c["models"])
        ]
        if sub.empty:
            continue
        fig, ax = plt.subplots(figsize=(4.5, 3.6), dpi=110)
        ax.scatter(sub["var_intrinsic"], sub["var_extrinsic"], s=28)
        for _, r in sub.iterrows():
            ax.annotate(
                Path(str(r["model"])).name,
                (r["var_intrinsic"], r["var_extrinsic"]),
                fontsize=7,
                xytext=(3, 3),
                textcoords="offset points",
            )
        title = (
            f"{c['domain']}: r={c['pearson_r']:.2f}, rho={c['spearman_rho']:.2f}"
            if math.isfinite(c["pearson_r"])
            else f"{c['domain']}: {c['note']}"
        )
        ax.set_title(title, fontsize=9)
        ax.set_xlabel(f"variance of {c['intrinsic']}", fontsize=8)
        ax.set_ylabel(f"variance of {c['extrinsic']}", fontsize=8)
        fig.tight_layout()
        p = out_dir / f"{_slug(c['domain'])}__{_slug(c['intrinsic'])}__{_slug(c['extrinsic'])}.png"
        from biaskit.io import atomic_open

        with atomic_open(p, "wb") as fh:
            fig.savefig(fh, format="png")
        plt.close(fig)
        paths.append(p)
    return paths


def write_outputs(variances, corrs, info: dict, out_dir: str | Path, plots: bool = True) -> dict:
    """variances.csv, correlations.csv, summary.json, report.md and plots/ in ``out_dir`` (published whole)."""
    from biaskit.io import atomic_dir

    with atomic_dir(out_dir, owns=("summary.json",)) as stage:
        return _write_files(variances, corrs, info, stage, plots)


def _write_files(variances, corrs, info: dict, out: Path, plots: bool) -> dict:
    from biaskit.io import atomic_write_text, write_json, write_table

    write_table(out / "variances.csv", variances)
    c2 = corrs.assign(models=corrs["models"].map(lambda m: ";".join(map(str, m)))) if len(corrs) else corrs
    write_table(out / "correlations.csv", c2)
    pngs = scatter_plots(variances, corrs, out / "plots") if plots and len(corrs) else []
    rows = json.loads(corrs.to_json(orient="records")) if len(corrs) else []
    summary = {"kind": "correlate", **info, "correlations": rows, "plots": [str(p.relative_to(out)) for p in pngs]}
    write_json(out / "summary.json", summary)
    from .protocols.base import render_protocol

    lines = [
        "# Intrinsic vs extrinsic bias: correlation across models",
        "",
        f"Bias measure: variance of group-level scores per model and domain (ddof={info['ddof']}); "
        f"groups: {info['groups']}. Pearson r and Spearman rho across models (scipy, two-sided p)"
        + (
            "; **Pearson's r is the paper's figure** (Cao et al. 2022 §3), Spearman's rho is shown beside it."
            if info.get("headline") == "pearson"
            else "."
        ),
        "",
        render_protocol(info.get("protocol") or {}),
        md_table(
            ["domain", "intrinsic", "extrinsic", "models", "Pearson r (p)", "Spearman rho (p)", "note"],
            [
                [
                    r["domain"],
                    r["intrinsic"],
                    r["extrinsic"],
                    r["n_models"],
                    f"{num(r['pearson_r'], 3)} ({num(r['pearson_p'], 3)})",
                    f"{num(r['spearman_rho'], 3)} ({num(r['spearman_p'], 3)})",
                    r["note"],
                ]
                for r in rows
            ],
        ),
    ]
    if pngs:
        lines += ["", "## Scatter plots (one point per model)", ""] + [
            f"![{p.stem}]({p.relative_to(out)})" for p in pngs
        ]
    atomic_write_text(out / "report.md", "\n".join(lines) + "\n")
    return summary
