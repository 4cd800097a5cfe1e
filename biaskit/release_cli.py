"""``biaskit release build | verify | export | diff``: thin typer wrappers around :mod:`biaskit.release`, each
taking its options model (:mod:`biaskit.release.options`); the release folders are the commands' arguments."""

from __future__ import annotations

import json
from pathlib import Path

import typer

from .clitools import echo
from .paths import in_dir
from .release.options import ReleaseBuildOptions, ReleaseDiffOptions, ReleaseExportOptions, ReleaseVerifyOptions

app = typer.Typer(no_args_is_help=True, add_completion=False)


@app.command("build")
@ReleaseBuildOptions.cli()
def build_command(opts: ReleaseBuildOptions) -> None:
    """Build a release folder: splits, Parquet/CSV/JSON exports, dataset card, statistics, checksums."""
    from .clitools import command_line
    from .release import build_release

    s = build_release(opts.records, opts.out, opts.build_options(), command=command_line())
    counts = "; ".join(
        f"{k} {c['records']} (dev {c['by_split'].get('dev', 0)}, test {c['by_split'].get('test', 0)}, "
        f"{c['targets']} targets)"
        for k, c in s.counts.items()
    )
    echo(f"release {s.name} {s.version} -> {s.out}: {counts}; {len(s.files)} files in {s.seconds:.1f} s")
    if s.warnings:
        echo(f"{len(s.warnings)} card section(s) are left to the maintainers (see `biaskit release verify {s.out}`).")
    if opts.hub_ready:
        echo(f"ready for the Hub: hf upload USER/NAME {s.out} . --repo-type dataset")
    echo(f"check it: biaskit release verify {s.out}")


@app.command("verify")
@ReleaseVerifyOptions.cli()
def verify_command(
    path: Path = in_dir(..., arg="RELEASE", help="Release folder."),
    *,
    opts: ReleaseVerifyOptions,
) -> None:
    """Check a release: checksums, every row's schema, split disjointness, card fields (exit 2 on problems)."""
    from .release import verify_release

    res = verify_release(path, opts)
    if opts.json_out:
        echo(
            json.dumps(
                {"ok": res.ok, "problems": res.problems, "warnings": res.warnings, "checked": res.checked},
                ensure_ascii=False,
                indent=2,
            )
        )
    else:
        for line in res.problems:
            echo(f"error: {line}", err=True)
        for line in res.warnings:
            echo(f"warning: {line}", err=True)
        if res.ok:
            echo(res.summary())
        else:
            echo(f"{path}: {len(res.problems)} problem(s).", err=True)
    if not res.ok:
        raise SystemExit(2)


@app.command("export")
@ReleaseExportOptions.cli()
def export_command(
    path: Path = in_dir(..., arg="RELEASE", help="Release folder."),
    *,
    opts: ReleaseExportOptions,
) -> None:
    """Export a release for other tools: lm-evaluation-harness tasks with biaskit's clm metrics."""
    from .clitools import command_line
    from .release.lmeval import export_lm_eval

    res = export_lm_eval(path, opts, command=command_line())
    for group, tasks in res.groups.items():
        echo(f"{group}: " + ", ".join(f"{t} ({res.tasks[t]['docs']} pairs)" for t in tasks))
    first = next((g for g in res.groups if g.endswith("_test")), next(iter(res.groups)))
    echo(
        f"wrote {len(res.tasks)} task(s) and {len(res.groups)} group(s) to {res.out}; run them with:\n"
        f"  lm_eval --model hf --model_args pretrained=MODEL --tasks {first} --include_path {res.out} "
        "--log_samples --output_path OUT"
    )


@app.command("diff")
@ReleaseDiffOptions.cli()
def diff_command(
    old: Path = in_dir(..., arg="OLD", help="The earlier release folder."),
    new: Path = in_dir(..., arg="NEW", help="The later release folder."),
    *,
    opts: ReleaseDiffOptions,
) -> None:
    """Added, removed and changed records (by stable id) between two releases, as a changelog."""
    from .io import atomic_write_text, write_json
    from .release import diff_markdown, diff_releases

    d = diff_releases(old, new)
    md = diff_markdown(d)
    markdown, json_path = opts.markdown, opts.json_path
    if markdown:
        atomic_write_text(markdown, md)
    if json_path:
        write_json(json_path, d)
    if markdown or json_path:
        summary = "; ".join(
            f"{k}: +{len(v['added'])} -{len(v['removed'])} ~{len(v['changed'])}" for k, v in d["kinds"].items()
        )
        echo(f"{old} -> {new}: {summary}" + "".join(f"; wrote {p}" for p in (markdown, json_path) if p))
    else:
        echo(md.rstrip())
