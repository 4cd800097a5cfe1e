"""`biaskit evaluate ceat` and `biaskit evaluate ilps`: thin wrappers around :func:`.ceat.run_ceat`
and :func:`.ilps.run_ilps` (the intrinsic metrics Cao et al. 2022 correlate)."""

from __future__ import annotations

from pathlib import Path

import typer

from biaskit.clitools import command_line
from biaskit.paths import in_file, in_path, out_dir

from . import cli_options as opt

_GROUPS_HELP = (
    "Protected groups and attribute sets (JSON like data/cao2022/groups.json); default: Cao et al. "
    "2022's Table 4 groups against pleasant / unpleasant words."
)


def ceat_command(
    model: opt.Model,
    corpus: list[Path] = in_path(
        ...,
        "--corpus",
        text=False,
        help="Text the words' contexts come from (files or "
        "folders of *.txt, one sentence per line; the paper used Reddit comments).",
    ),
    out: Path = out_dir(
        ..., "--out", owns=("summary.json",), help="Output folder (results.csv, groups.csv, summary.json, report.md)."
    ),
    test: list[str] | None = typer.Option(
        None, "--test", "-t", help="SEAT-format tests (X, Y, A, B word lists); default: group-level CEAT of --groups."
    ),
    groups: Path | None = in_file(None, "--groups", help=_GROUPS_HELP),
    n_samples: int | None = typer.Option(
        None, "--n-samples", help="Samples N (default 10,000, the reference's).", show_default=False
    ),
    max_contexts: int = typer.Option(1000, "--max-contexts", help="Contexts per word (the first ones in the corpus)."),
    seed: int = typer.Option(0, "--seed", help="Seed of the sampling."),
    protocol: opt.Protocol = None,
    batch_size: opt.BatchSize = 64,
    device: opt.Device = "auto",
    no_cache: opt.NoCache = False,
) -> None:
    """CEAT (Guo & Caliskan 2021): random-effects combined effect size over sampled contextual embeddings."""
    from biaskit.clitools import console

    from .ceat import run_ceat

    s = run_ceat(
        model,
        corpus,
        out,
        tests=list(test or []),
        groups=groups,
        n_samples=n_samples,
        seed=seed,
        max_contexts=max_contexts,
        batch_size=batch_size,
        device=device,
        cache=not no_cache,
        protocol=opt.protocol_value(protocol),
        command=command_line(),
    )
    con = console()
    for r in s["results"]:
        name = r.get("test") or f"{r['domain']}/{r['group']}"
        con.print(
            f"{name}: CES {r['ces']:.3f} (p {r['p_value']:.2g}), fewest contexts {r['min_contexts']}", soft_wrap=True
        )
    opt.print_protocol(con, s["protocol"])
    con.print(f"wrote {out / 'summary.json'}, {out / 'report.md'}, {out / 'results.csv'}", soft_wrap=True)


def ilps_command(
    model: opt.Model,
    out: Path = out_dir(
        ..., "--out", owns=("summary.json",), help="Output folder (results.csv, groups.csv, summary.json, report.md)."
    ),
    groups: Path | None = in_file(None, "--groups", help=_GROUPS_HELP),
    template: list[str] | None = typer.Option(
        None,
        "--template",
        help="A template with {target} and {attribute} (repeatable; default '{target} is {attribute}.').",
    ),
    predict: opt.Predict | None = typer.Option(
        None,
        "--predict",
        help="target (Kurita et al. 2019, default) or attribute (Cao et al. 2022 §2).",
        show_default=False,
    ),
    protocol: opt.Protocol = None,
    batch_size: opt.BatchSize = 32,
    device: opt.Device = "auto",
    dtype: opt.Dtype = None,
    no_cache: opt.NoCache = False,
    quiet: opt.Quiet = False,
) -> None:
    """ILPS (Kurita et al. 2019): increased log probability of a word given the other one, per group."""
    from biaskit.clitools import console

    from .ilps import run_ilps

    s = run_ilps(
        model,
        out,
        groups=groups,
        templates=list(template or []),
        predict=predict.value if predict is not None else None,
        batch_size=batch_size,
        device=device,
        dtype=dtype,
        cache=not no_cache,
        progress=not quiet,
        protocol=opt.protocol_value(protocol),
        command=command_line(),
    )
    con = console()
    by: dict = {}
    for r in s["groups"]:
        by.setdefault(f"{r['domain']}/{r['group']}", {})[r["metric"]] = r["score"]
    for g, v in by.items():
        con.print(f"{g}: A {v['A']:.3f}, B {v['B']:.3f}, A-B {v['A-B']:.3f}", soft_wrap=True)
    opt.print_protocol(con, s["protocol"])
    con.print(f"wrote {out / 'summary.json'}, {out / 'report.md'}, {out / 'groups.csv'}", soft_wrap=True)
