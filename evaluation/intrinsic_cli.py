"""`biaskit evaluate ceat` and `biaskit evaluate ilps`: thin wrappers around :func:`.ceat.run_ceat`
and :func:`.ilps.run_ilps` (the intrinsic metrics Cao et al. 2022 correlate); their options are
:class:`~biaskit.evaluation.options.CeatOptions` and :class:`~biaskit.evaluation.options.IlpsOptions`."""

from __future__ import annotations

from biaskit.clitools import command_line

from . import cli_options as opt
from .options import CeatOptions, IlpsOptions


@CeatOptions.cli()
def ceat_command(opts: CeatOptions) -> None:
    """CEAT (Guo & Caliskan 2021): random-effects combined effect size over sampled contextual embeddings."""
    from biaskit.clitools import console

    from .ceat import run_ceat

    run = run_ceat(opts, command=command_line())
    con = console()
    for r in run.results:
        con.print(f"{r.name}: CES {r.ces:.3f} (p {r.p_value:.2g}), fewest contexts {r.min_contexts}", soft_wrap=True)
    opt.print_protocol(con, run.protocol)
    out = opts.out
    con.print(f"wrote {out / 'summary.json'}, {out / 'report.md'}, {out / 'results.csv'}", soft_wrap=True)


@IlpsOptions.cli()
def ilps_command(opts: IlpsOptions) -> None:
    """ILPS (Kurita et al. 2019): increased log probability of a word given the other one, per group."""
    from biaskit.clitools import console

    from .ilps import run_ilps

    run = run_ilps(opts, progress=not opts.quiet, command=command_line())
    con = console()
    for (dom, group), v in run.by_group().items():
        con.print(f"{dom}/{group}: A {v['A']:.3f}, B {v['B']:.3f}, A-B {v['A-B']:.3f}", soft_wrap=True)
    opt.print_protocol(con, run.protocol)
    out = opts.out
    con.print(f"wrote {out / 'summary.json'}, {out / 'report.md'}, {out / 'groups.csv'}", soft_wrap=True)
