"""``biaskit release build | verify | diff``: thin typer wrappers around :mod:`biaskit.release`."""
from __future__ import annotations

import json
from pathlib import Path
from typing import List, Optional

import typer

from .clitools import choice_enum, echo
from .paths import in_dir, in_file, out_dir, out_file

app = typer.Typer(no_args_is_help=True, add_completion=False)

_Policy = choice_enum("SplitPolicy", ["target", "keep"])


def _csv_list(value: Optional[str]) -> Optional[list[str]]:
    if not value:
        return None
    return [x.strip() for x in value.split(",") if x.strip()]


@app.command("build")
def build_command(
    records: List[Path] = in_file(..., "--records", "-r", help="Validated records: pairs (biaskit JSONL/CSV from "
                                       "`annotate apply`, translation review output, CrowS-Pairs or IndiBias CSV), "
                                       "CATs or tuples (biaskit JSONL). Repeatable."),
    name: str = typer.Option(..., "--name", help="Release name, e.g. indibias-release."),
    version: str = typer.Option(..., "--version", help="Semantic version X.Y.Z."),
    out: Path = out_dir(..., "--out", owns=("release.json",), help="Release folder to write (replaced whole, atomically)."),
    lang: Optional[str] = typer.Option(None, "--lang", help="Languages to release, comma-separated, primary first "
                                       "(default: all in the records, English first)."),
    kinds: Optional[str] = typer.Option(None, "--kinds", help="pairs,cats,tuples (default: all in the records)."),
    split_policy: _Policy = typer.Option("target", "--split-policy",  # type: ignore[valid-type]
                                         help="target: dev/test by target term, stratified (StereoSet §6.1); keep: "
                                              "the records' own meta.split (checked for leaks)."),
    dev_fraction: float = typer.Option(0.25, "--dev-fraction", help="Share of each stratum's records in dev."),
    seed: int = typer.Option(0, "--seed", help="Seed of the split (same seed -> same split)."),
    previous: Optional[Path] = in_dir(None, "--previous", help="An earlier release: its target terms keep their "
                                            "split, new ones are assigned."),
    license: Optional[str] = typer.Option(None, "--license", help="Hugging Face licence id, e.g. cc-by-sa-4.0."),
    citation: Optional[str] = typer.Option(None, "--citation", help="BibTeX text or a .bib file."),
    pretty_name: Optional[str] = typer.Option(None, "--pretty-name", help="Human-readable title of the card."),
    card_text: Optional[Path] = in_file(None, "--card-text", help="Markdown with the card sections people write "
                                             "('## Motivation' ...)."),
    history: Optional[List[str]] = typer.Option(None, "--history", help="Stage reports ([LABEL=]PATH): run logs, "
                                                "checker output, agreement.json, apply summary/rejected, translation "
                                                "report.json, adapt report. Repeatable."),
    no_discover: bool = typer.Option(False, "--no-discover", help="Do not read STEM.rejected.jsonl, STEM.summary.json "
                                     "... next to the records."),
    keep_flagged: bool = typer.Option(False, "--keep-flagged", help="Release pairs whose status is 'flagged'."),
    skip_invalid: bool = typer.Option(False, "--skip-invalid", help="Skip invalid pair rows (counted) instead of stopping."),
    no_keyness: bool = typer.Option(False, "--no-keyness", help="Skip the keyness statistics."),
    no_plots: bool = typer.Option(False, "--no-plots", help="Skip the PNG plots."),
    date: Optional[str] = typer.Option(None, "--date", help="Release date YYYY-MM-DD (default: today, UTC)."),
    hub_ready: bool = typer.Option(False, "--hub-ready", help="Refuse what the Hugging Face Hub would reject (licence "
                                   "id, card YAML, config names, file sizes); nothing is published then."),
    protocol: Optional[str] = typer.Option(None, "--protocol", help="The paper protocol release.json records, which "
                                           "`biaskit evaluate` follows on this release by default (docs/fidelity.md); "
                                           "default: the records' origin (IndiBias -> indibias, CrowS-Pairs -> "
                                           "crows, StereoSet -> stereoset)."),
) -> None:
    """Build a release folder: splits, Parquet/CSV/JSON exports, dataset card, statistics, checksums."""
    from .clitools import command_line
    from .errors import BiaskitError
    from .origin import PROTOCOL_NAMES
    from .release import BuildOptions, build_release

    if protocol is not None and protocol not in (*PROTOCOL_NAMES, "none"):
        raise BiaskitError(f"unknown protocol '{protocol}'. Fix: pass --protocol {' | '.join(PROTOCOL_NAMES)} | none")

    opts = BuildOptions(name=name, version=version, langs=_csv_list(lang), kinds=_csv_list(kinds),
                        split_policy=split_policy.value, dev_fraction=dev_fraction, seed=seed,
                        previous=str(previous) if previous else None, license=license, citation=citation,
                        pretty_name=pretty_name, card_text=str(card_text) if card_text else None,
                        history=list(history or []), discover_history=not no_discover, keep_flagged=keep_flagged,
                        skip_invalid=skip_invalid, keyness=not no_keyness, plots=not no_plots, created=date,
                        command=command_line(), hub_ready=hub_ready, protocol=protocol)
    s = build_release(records, out, opts)
    counts = "; ".join(f"{k} {c['records']} (dev {c['by_split'].get('dev', 0)}, test {c['by_split'].get('test', 0)}, "
                       f"{c['targets']} targets)" for k, c in s.counts.items())
    echo(f"release {s.name} {s.version} -> {s.out}: {counts}; {len(s.files)} files in {s.seconds:.1f} s")
    if s.warnings:
        echo(f"{len(s.warnings)} card section(s) are left to the maintainers (see `biaskit release verify {s.out}`).")
    if hub_ready:
        echo(f"ready for the Hub: hf upload USER/NAME {s.out} . --repo-type dataset")
    echo(f"check it: biaskit release verify {s.out}")


@app.command("verify")
def verify_command(
    path: Path = in_dir(..., arg="RELEASE", help="Release folder."),
    json_out: bool = typer.Option(False, "--json", help="Print the result as JSON."),
    hub_ready: bool = typer.Option(False, "--hub-ready", help="Also check what the Hugging Face Hub would reject "
                                   "(licence id, card YAML, config names, file sizes)."),
) -> None:
    """Check a release: checksums, every row's schema, split disjointness, card fields (exit 2 on problems)."""
    from .release import verify_release

    res = verify_release(path)
    if hub_ready:
        from .release.hub import hub_problems

        res.problems += hub_problems(path)
    if json_out:
        echo(json.dumps({"ok": res.ok, "problems": res.problems, "warnings": res.warnings, "checked": res.checked},
                        ensure_ascii=False, indent=2))
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
def export_command(
    path: Path = in_dir(..., arg="RELEASE", help="Release folder."),
    lm_eval: Path = out_dir(..., "--lm-eval", owns=("biaskit-lm-eval.json",),
                            help="Write lm-evaluation-harness tasks here (one per language and split, a group per "
                                 "split; run them with `lm_eval --include_path DIR`)."),
    prefix: Optional[str] = typer.Option(None, "--prefix", help="Task-name prefix (default: the release name, "
                                         "e.g. biaskit_demo)."),
    split: Optional[List[str]] = typer.Option(None, "--split", help="Only this split (dev or test). Repeatable."),
    lang: Optional[str] = typer.Option(None, "--lang", help="Only these languages, comma-separated."),
) -> None:
    """Export a release for other tools: lm-evaluation-harness tasks with biaskit's clm metrics."""
    from .clitools import command_line
    from .release.lmeval import export_lm_eval

    res = export_lm_eval(path, lm_eval, prefix=prefix, splits=split or None, langs=_csv_list(lang),
                         command=command_line())
    for group, tasks in res.groups.items():
        echo(f"{group}: " + ", ".join(f"{t} ({res.tasks[t]['docs']} pairs)" for t in tasks))
    first = next((g for g in res.groups if g.endswith("_test")), next(iter(res.groups)))
    echo(f"wrote {len(res.tasks)} task(s) and {len(res.groups)} group(s) to {res.out}; run them with:\n"
         f"  lm_eval --model hf --model_args pretrained=MODEL --tasks {first} --include_path {res.out} "
         "--log_samples --output_path OUT")


@app.command("diff")
def diff_command(
    old: Path = in_dir(..., arg="OLD", help="The earlier release folder."),
    new: Path = in_dir(..., arg="NEW", help="The later release folder."),
    markdown: Optional[Path] = out_file(None, "--markdown", help="Write the changelog (Markdown) here."),
    json_path: Optional[Path] = out_file(None, "--json", help="Write the full diff (JSON) here."),
) -> None:
    """Added, removed and changed records (by stable id) between two releases, as a changelog."""
    from .io import atomic_write_text, write_json
    from .release import diff_markdown, diff_releases

    d = diff_releases(old, new)
    md = diff_markdown(d)
    if markdown:
        atomic_write_text(markdown, md)
    if json_path:
        write_json(json_path, d)
    if markdown or json_path:
        summary = "; ".join(f"{k}: +{len(v['added'])} -{len(v['removed'])} ~{len(v['changed'])}"
                            for k, v in d["kinds"].items())
        echo(f"{old} -> {new}: {summary}" + "".join(f"; wrote {p}" for p in (markdown, json_path) if p))
    else:
        echo(md.rstrip())
