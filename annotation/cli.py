"""`biaskit annotate` commands (thin typer wrappers around pure functions).

serve / stop (a local Label Studio), push / pull / import (tasks and judgments), prelabel (LLM
pre-labels through curation's job runner, :mod:`.prelabel`), status (a project's
progress and quality), aggregate, agreement, from-stereoset (StereoSet's released labels ->
judgments), apply, report (a kind's report on applied annotations), config (print a kind's
labeling config), guidelines (a kind's annotator guidelines). See docs/annotation.md.

Choices come from the registries (``--kind``: :data:`~biaskit.annotation.kinds.KINDS`, ``--method``:
:data:`~biaskit.annotation.aggregate.AGGREGATORS`); options that several commands share are declared
once below (``KindOpt``, ``UrlOpt``, ``ProjectOpt``). Every command takes its options from one
model: ``serve``, ``stop``, ``config``, ``push``, ``prelabel``, ``pull``, ``status``, ``guidelines``, ``import``,
``from-stereoset`` and ``apply`` (:mod:`.options`: the flags, the review stages' biaskit.toml keys and the
functions' argument), ``aggregate``, ``agreement``, ``judge-agreement``, ``replay`` and ``report``
(:mod:`.judgment_options`).
"""

from __future__ import annotations

import getpass
import json
from enum import Enum
from typing import TYPE_CHECKING, Annotated

import typer

from biaskit.clitools import choice_enum, command_line, echo

from .judgment_options import AggregateOptions, AgreementOptions, JudgeOptions, ReplayOptions, ReportOptions
from .kinds import KINDS
from .options import (
    KIND_HELP,
    ApplyOptions,
    ConfigOptions,
    FromStereosetOptions,
    GuidelinesOptions,
    ImportOptions,
    PrelabelOptions,
    PullOptions,
    PushOptions,
    ServeOptions,
    StatusOptions,
    StopOptions,
)

app = typer.Typer(no_args_is_help=True, add_completion=False)

TOKEN_HELP = "The API token is read from $LABEL_STUDIO_API_KEY (never from the command line, never printed)."

if TYPE_CHECKING:  # built from the choices at run time: an Enum to a type checker
    Kind = Enum
else:
    Kind = choice_enum("Kind", KINDS)

KindOpt = Annotated[Kind, typer.Option("--kind", help=KIND_HELP)]
OptionalKindOpt = Annotated[Kind | None, typer.Option("--kind", help="Task kind (default: recorded in the tasks).")]
UrlOpt = Annotated[str | None, typer.Option("--url", help="Label Studio URL (default: $LABEL_STUDIO_URL).")]
ProjectOpt = Annotated[str, typer.Option("--project", help="Project title (push creates it when missing).")]


@app.command("serve")
@ServeOptions.cli()
def serve_command(opts: ServeOptions) -> None:
    """Start a local Label Studio on 127.0.0.1 (telemetry off) and print its URL.

    First start of a data folder: the admin token is taken from $LABEL_STUDIO_API_KEY and the
    password from $LABEL_STUDIO_PASSWORD (asked for when unset).
    """
    from .server import serve

    data_dir = opts.data_dir
    info, already = serve(opts, ask_password=lambda: getpass.getpass("admin password to create: "), note=echo)
    if already:
        echo(f"Label Studio already runs for {data_dir} (pid {info.pid}, database {info.database}): {info.url}")
        return
    echo(
        f"Label Studio is running (pid {info.pid}, data {info.data_dir}, database {info.database}"
        + (f", {info.workers} web workers" if info.workers > 1 else "")
        + f"): {info.url}"
    )
    echo(f"  export LABEL_STUDIO_URL={info.url}")
    echo(f"  stop it with: biaskit annotate stop --data-dir {data_dir}")


@app.command("stop")
@StopOptions.cli()
def stop_command(opts: StopOptions) -> None:
    """Stop the Label Studio started by `serve` for this data folder (data is kept)."""
    from .server import stop_server

    info = stop_server(opts.data_dir)
    echo(
        f"stopped Label Studio pid {info.pid} ({info.url})"
        if info
        else f"no Label Studio was running for {opts.data_dir}"
    )


@app.command("config")
@ConfigOptions.cli()
def config_command(opts: ConfigOptions) -> None:
    """Print the Label Studio labeling config of a kind (validated offline)."""
    from .kinds import ParsedConfig, get_kind

    k = get_kind(opts.kind)
    xml = k.config(k.load(opts.data) if opts.data else None)
    ParsedConfig.from_xml(xml)
    echo(xml)


@app.command(
    "push",
    help=f"Create or reuse a project and import tasks (idempotent, resumable; with --overlap "
    f"adaptive a re-run also starts the next round). {TOKEN_HELP}",
)
@PushOptions.cli()
def push_command(opts: PushOptions) -> None:
    from .labelstudio import push

    data = opts.data
    rep = push(opts, description=f"biaskit {opts.kind} review; created by: {command_line()}")
    echo(
        f"{'created' if rep.created_project else 'reused'} project '{rep.project_title}' ({rep.url}): "
        f"{rep.n_imported} task(s) imported, {rep.n_existing} already there, {rep.n_records} record(s) in "
        f"{data}"
        + (f", {rep.n_predictions} prediction(s)" if rep.n_predictions else "")
        + (f", {rep.duplicate_ids} duplicate id(s) skipped" if rep.duplicate_ids else "")
        + (f", {rep.skipped_invalid} invalid row(s) skipped" if rep.skipped_invalid else "")
        + ("; labeling config updated" if rep.config_updated else "")
        + ("; instructions updated" if rep.instructions_updated else "")
        + (
            f"; {rep.duplicate_tasks_removed} duplicate task(s) left by an interrupted push removed"
            if rep.duplicate_tasks_removed
            else ""
        )
    )
    if rep.predictions_shown is not None and rep.n_predictions:
        echo(
            "predictions are "
            + (
                "shown to annotators (pre-filled answers)"
                if rep.predictions_shown
                else "hidden from annotators (--show-predictions pre-fills them)"
            )
        )
    if rep.duplicate_tasks_annotated:
        echo(
            f"warning: {len(rep.duplicate_tasks_annotated)} task(s) exist twice with annotations on both copies "
            f"(e.g. {rep.duplicate_tasks_annotated[0]}); biaskit kept them. Fix: delete one copy in Label Studio."
        )
    if rep.adaptive is not None:
        echo(adaptive_line(rep.adaptive))


def adaptive_line(a: dict) -> str:
    """One line on an adaptive project's round (push, biaskit run)."""
    pol = a["policy"] + (f", epsilon {a['epsilon']:g}" if a.get("epsilon") else "")
    return (
        f"adaptive overlap ({pol}; {a['min_judgments']}..{a['max_judgments']} judgments): {a['settled']} of "
        f"{a['tasks']} task(s) settled, {a['open']} open ({a['asked_for']} more judgment(s) asked for); "
        f"{a['judgments']} judgment(s) so far, {a['judgments_saved']} saved"
    )


@app.command(
    "prelabel",
    help="LLM pre-labels: the LLM answers each task's questions from the kind's own "
    "guidelines (one job runner: cache, resume, errors file); the answers are "
    "written as judgments (the LLM as one more rater for `judge-agreement`) and, "
    "with --project, sent to Label Studio as predictions, hidden from annotators "
    "unless --show-predictions. The Label Studio token is read from "
    "$LABEL_STUDIO_API_KEY.",
)
@PrelabelOptions.cli()
def prelabel_command(opts: PrelabelOptions) -> None:
    from biaskit.llm_options import llm_jobs

    from .prelabel import run_prelabel

    res = run_prelabel(opts, command=command_line())
    jobs = llm_jobs()
    if opts.dry_run:
        jobs.print_dry_run(res.task, res.items, opts.params(), opts.show)
        return
    jobs.report_run(res.run, "prelabel", exit_when_all_failed=False)
    echo(f"{res.judgments} LLM judgment(s) on {res.tasks} task(s) -> {opts.out} (model_version '{res.model_version}')")
    if res.push is not None:
        p = res.push
        echo(
            f"{p.n_predictions} prediction(s) sent to Label Studio project '{p.project_title}' ({p.url}); "
            + (
                "shown to annotators"
                if p.predictions_shown
                else "hidden from annotators (--show-predictions shows them)"
            )
        )
    if res.run.all_failed:
        raise SystemExit(1)


@app.command("pull", help=f"Export a project's annotations as validated judgment rows. {TOKEN_HELP}")
@PullOptions.cli()
def pull_command(opts: PullOptions) -> None:
    from .labelstudio import pull

    out = opts.out
    rep = pull(opts)
    echo(
        f"{rep.n_judgments} judgment(s) from {rep.n_annotations} annotation(s) on {rep.n_tasks} task(s) by "
        f"{len(rep.workers)} annotator(s) -> {out} ({rep.export} export)"
        + (f" ({rep.n_skipped_cancelled} skipped annotation(s) ignored)" if rep.n_skipped_cancelled else "")
    )


@app.command(
    "status",
    help=f"A project's progress and quality: tasks done / pending per annotator, overlap "
    f"reached, agreement so far, time per task, disagreement with the others' majority. "
    f"{TOKEN_HELP}",
)
@StatusOptions.cli()
def status_command(opts: StatusOptions) -> None:
    from .status import status_markdown, status_of

    st, title = status_of(opts)
    echo(json.dumps(st, ensure_ascii=False, indent=2) if opts.as_json else status_markdown(st, title).rstrip("\n"))


@app.command("guidelines")
@GuidelinesOptions.cli()
def guidelines_command(opts: GuidelinesOptions) -> None:
    """A kind's annotator guidelines as Markdown (what Label Studio's instructions panel shows), to
    hand to annotators or a vendor. Who wrote each language's text, and whether a native speaker
    reviewed it, is in data/languages/<code>/language.json (guidelines)."""
    from biaskit.io import atomic_write_text

    from .guidelines import guidelines_markdown, parse_langs

    md = guidelines_markdown(opts.kind, opts.lang)
    if opts.out is None:
        echo(md.rstrip("\n"))
    else:
        atomic_write_text(opts.out, md)
        echo(f"guidelines ({opts.lang or ','.join(parse_langs(None))}) for kind '{opts.kind}' -> {opts.out}")


@app.command("import")
@ImportOptions.cli()
def import_command(opts: ImportOptions) -> None:
    """Turn an exported Label Studio JSON file into validated judgment rows, offline."""
    from .labelstudio import import_export

    rep = import_export(opts)
    echo(f"{rep.n_judgments} judgment(s) from {rep.n_annotations} annotation(s) on {rep.n_tasks} task(s) -> {opts.out}")


@app.command("aggregate")
@AggregateOptions.cli()
def aggregate_command(opts: AggregateOptions) -> None:
    """Aggregate judgments by majority vote or crowd-kit models; ties are never resolved silently."""
    from .aggregate import aggregate_file

    judgments, out = opts.judgments, opts.out
    rep = aggregate_file(opts)
    if rep.n_items == 0 and rep.n_judgments_in == 0:
        echo(f"warning: no judgments in {judgments}; wrote an empty table to {out}")
    sc = rep.status_counts
    echo(
        f"{rep.n_items} item(s) -> {out}: {sc['accepted']} accepted, {sc['rejected']} rejected, "
        f"{sc['needs_adjudication']} need adjudication"
        + (f"; {rep.n_ties} tie(s)" + (" dropped" if rep.n_dropped_ties else "") if rep.n_ties else "")
        + (f"; {rep.n_missing_labels} empty label(s) ignored" if rep.n_missing_labels else "")
        + (f"; {rep.n_text_skipped} text answer(s) not voted on" if rep.n_text_skipped else "")
        + (f"; {rep.n_duplicates_removed} duplicate answer(s) removed" if rep.n_duplicates_removed else "")
    )


@app.command("agreement")
@AgreementOptions.cli()
def agreement_command(opts: AgreementOptions) -> None:
    """Inter-annotator agreement report (Krippendorff, Fleiss, Cohen, % agreement, retention; per target term and
    bias type as StereoSet reports it)."""
    from biaskit.tables import num

    from .agreement import agreement_report

    out = opts.out
    rep = agreement_report(opts, command=command_line())

    def f(x):
        return num(x, 3)

    echo(
        f"Krippendorff's alpha {f(rep['krippendorff_alpha'])}, Fleiss' kappa {f(rep['fleiss_kappa'])}, "
        f"mean pairwise Cohen's kappa {f(rep['mean_pairwise_cohen_kappa'])}, "
        f"percent agreement {f(rep['percent_agreement'])} on {rep['n_items']} item(s) -> {out}/agreement.json, "
        f"{out}/agreement.md"
    )
    if rep.get("reference_agreement") is not None:
        echo(
            f"Agreement with the reference label {f(rep['reference_agreement'])} per example; retained (>= "
            f"{rep['min_agree']} votes for it) {rep['retained']} of {rep['n_tasks']} ({f(rep['retention_rate'])})"
        )
    if rep.get("per_target"):
        echo(f"{len(rep['per_target'])} target term(s) -> {out}/agreement_targets.csv")


@app.command("from-stereoset")
@FromStereosetOptions.cli()
def from_stereoset_command(opts: FromStereosetOptions) -> None:
    """StereoSet's released validator labels -> judgments for agreement, aggregate and apply (kind cat)."""
    from .stereoset_labels import from_stereoset

    s = from_stereoset(opts, command=command_line())
    r = s["retention"]
    echo(
        f"{s['n_judgments']} judgments from {s['n_cats']} CATs ({s['n_sentences']} sentences, {s['n_annotators']} "
        f"validators; {s['n_other_labels']} other label(s), {opts.other_labels}) -> {s['out']}"
    )
    echo(
        f"Retained (>= {opts.min_agree} validators gave the writer's label on each sentence): {r['retained']} of "
        f"{r['n_tasks']} CATs ({r['retention_rate']:.3f}); agreement with the writer's label "
        f"{r['reference_agreement']:.3f} -> {s['summary_file']}"
    )
    if s["n_duplicate_answers"]:
        echo(
            f"{s['n_duplicate_answers']} validator(s) appear twice on a sentence: pass --duplicates first|last to "
            f"aggregate and agreement."
        )


@app.command("replay")
@ReplayOptions.cli()
def replay_command(opts: ReplayOptions) -> None:
    """What adaptive overlap would have saved on recorded judgments: judgments used and saved, decisions that
    differ from full overlap, retention (docs/annotation.md, "Adaptive overlap")."""
    from .replay import replay_markdown, run_replay

    rep = run_replay(opts, command=command_line())
    echo(replay_markdown(rep))
    if opts.out is not None:
        echo(f"report -> {opts.out}")


@app.command("judge-agreement")
@JudgeOptions.cli()
def judge_agreement_command(opts: JudgeOptions) -> None:
    """The LLM as a measured judge: Cohen's kappa with the people's majority, alpha with and without the LLM,
    confusion table, and the precision / coverage of "accept when the LLM and the first k people agree", per
    question and axis; ends with a plain verdict (docs/annotation.md, "Reading the judge report")."""
    from .judge import judge_agreement

    rep = judge_agreement(opts)
    for model, m in rep["models"].items():
        for q, s in m["questions"].items():
            echo(
                f"{model} / {q}: {s['items']} item(s), agreement with the people's majority "
                f"{s['agreement_with_majority'] if s['agreement_with_majority'] is not None else 'n/a'}, Cohen's "
                f"kappa {s['cohen_kappa_vs_majority'] if s['cohen_kappa_vs_majority'] is not None else 'n/a'}, "
                f"alpha {s['alpha_people']} -> {s['alpha_people_and_llm']} with the LLM"
            )
        echo(m["verdict"])
    echo(f"report: {opts.out / 'judge.md'}, {opts.out / 'judge.json'}")


@app.command("apply")
@ApplyOptions.cli()
def apply_command(opts: ApplyOptions) -> None:
    """Write the validated dataset: accepted items only, labels and agreement attached, provenance kept."""
    from .apply import apply_annotations

    cmd = command_line()
    out, as_json = opts.out, opts.as_json
    res = apply_annotations(opts, command=cmd)
    for w in res.get("warnings", []):
        echo(f"warning: {w}", err=True)
    if as_json:
        echo(json.dumps({**res, "command": cmd}, ensure_ascii=False))
        return
    counts = {k: v for k, v in res.items() if isinstance(v, int) and k not in ("records", "accepted") and v}
    files = [f"{k.removesuffix('_file').replace('_', ' ')}: {v}" for k, v in res.items() if k.endswith("_file")]
    echo(
        f"{res.get('accepted', 0)} of {res.get('records', 0)} record(s) accepted -> {res.get('out', out)}"
        + (f"; {', '.join(f'{k.replace(chr(95), chr(32))} {v}' for k, v in counts.items())}" if counts else "")
        + (f". Also written: {'; '.join(files)}" if files else "")
        + "."
    )


@app.command("report")
@ReportOptions.cli()
def report_command(opts: ReportOptions) -> None:
    """Rebuild a kind's report on applied annotations from the files (translation: engine win rates,
    edits, checker flags before and after review)."""
    from .kinds import report_applied

    report_applied(opts)
    echo(f"report: {opts.out / 'report.md'}, {opts.out / 'report.json'}")
