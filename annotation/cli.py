"""`biaskit annotate` commands (thin typer wrappers around pure functions).

serve / stop (a local Label Studio), push / pull / import (tasks and judgments), aggregate,
agreement, apply, config (print a kind's labeling config). See docs/annotation.md.
"""
from __future__ import annotations

import getpass
import json
import os
from enum import Enum
from pathlib import Path
from typing import Optional

import typer

from biaskit.clitools import choice_enum

from .labelstudio import EXPORT_MODES

app = typer.Typer(no_args_is_help=True, add_completion=False)

DEFAULT_DATA_DIR = Path(os.environ.get("BIASKIT_LS_DATA_DIR", "~/.local/share/biaskit/label-studio")).expanduser()


class _Kind(str, Enum):
    tuple = "tuple"
    pair = "pair"
    cat = "cat"
    translation = "translation"


_Export = choice_enum("_Export", EXPORT_MODES)


class _Ties(str, Enum):
    flag = "flag"
    drop = "drop"
    random = "random"


class _Dups(str, Enum):
    error = "error"
    last = "last"
    first = "first"


class _Method(str, Enum):
    majority = "majority"
    dawid_skene = "dawid-skene"
    one_coin_dawid_skene = "one-coin-dawid-skene"
    glad = "glad"
    mace = "mace"


class _Level(str, Enum):
    nominal = "nominal"
    ordinal = "ordinal"
    interval = "interval"
    ratio = "ratio"


def _echo(msg: str) -> None:
    typer.echo(msg)


URL_OPT = typer.Option(None, "--url", help="Label Studio URL (default: $LABEL_STUDIO_URL).")
TOKEN_HELP = "The API token is read from $LABEL_STUDIO_API_KEY (never from the command line, never printed)."


@app.command("serve")
def serve_command(
    data_dir: Path = typer.Option(DEFAULT_DATA_DIR, "--data-dir",
                                  help="Label Studio data folder (database, uploads); created if missing."),
    port: Optional[int] = typer.Option(None, "--port", help="Port on 127.0.0.1 (default: a free one)."),
    email: str = typer.Option("admin@biaskit.local", "--email", help="Admin account created on first start."),
    database: Optional[str] = typer.Option(
        None, "--database", metavar="URL",
        help="postgresql://USER[:PASSWORD]@HOST[:PORT]/DB to run Label Studio on PostgreSQL (default: SQLite in "
             "the data folder; a folder keeps the database it was created with). Without a password in the URL, "
             "libpq's $PGPASSWORD or ~/.pgpass is used. The password is never printed or stored."),
    workers: int = typer.Option(1, "--workers", min=1,
                                help="Web worker processes (more than 1: Label Studio under gunicorn, PostgreSQL only)."),
) -> None:
    """Start a local Label Studio on 127.0.0.1 (telemetry off) and print its URL.

    First start of a data folder: the admin token is taken from $LABEL_STUDIO_API_KEY and the
    password from $LABEL_STUDIO_PASSWORD (asked for when unset).
    """
    from .server import is_initialised, resolve_database, running, start_server

    db = resolve_database(data_dir, database)  # parses (and registers the password as a secret) first
    live = running(data_dir)
    if live is not None:
        _echo(f"Label Studio already runs for {data_dir} (pid {live.pid}, database {live.database}): {live.url}")
        return
    token = password = None
    if not is_initialised(data_dir):
        token = os.environ.get("LABEL_STUDIO_API_KEY")
        if not token:
            from biaskit.errors import BiaskitError

            raise BiaskitError("first start of a new data folder needs the admin API token to create. Fix: "
                               "export LABEL_STUDIO_API_KEY=$(python -c 'import secrets; print(secrets.token_hex(20))')")
        password = os.environ.get("LABEL_STUDIO_PASSWORD") or getpass.getpass("admin password to create: ")
        _echo(f"initialising {data_dir} on {db.public_url()} (database migrations; about a minute) ...")
    info = start_server(data_dir, port=port, email=email, password=password, token=token, database=db,
                        workers=workers)
    _echo(f"Label Studio is running (pid {info.pid}, data {info.data_dir}, database {info.database}"
          + (f", {info.workers} web workers" if info.workers > 1 else "") + f"): {info.url}")
    _echo(f"  export LABEL_STUDIO_URL={info.url}")
    _echo(f"  stop it with: biaskit annotate stop --data-dir {data_dir}")


@app.command("stop")
def stop_command(
    data_dir: Path = typer.Option(DEFAULT_DATA_DIR, "--data-dir", help="The data folder given to `serve`."),
) -> None:
    """Stop the Label Studio started by `serve` for this data folder (data is kept)."""
    from .server import stop_server

    info = stop_server(data_dir)
    _echo(f"stopped Label Studio pid {info.pid} ({info.url})" if info else f"no Label Studio was running for {data_dir}")


@app.command("config")
def config_command(
    kind: _Kind = typer.Option(..., "--kind", help="Task kind."),
    data: Optional[Path] = typer.Option(None, "--data", help="Records (translation: sets the number of slots)."),
) -> None:
    """Print the Label Studio labeling config of a kind (validated offline)."""
    from .kinds import ParsedConfig, get_kind

    k = get_kind(kind.value)
    xml = k.config(k.load(data) if data else None)
    ParsedConfig.from_xml(xml)
    typer.echo(xml)


@app.command("push", help=f"Create or reuse a project and import tasks (idempotent, resumable). {TOKEN_HELP}")
def push_command(
    kind: _Kind = typer.Option(..., "--kind", help="tuple | pair | cat | translation."),
    data: Path = typer.Option(..., "--data", help="Records to annotate (pairs: CrowS/IndiBias/biaskit; others JSONL/CSV)."),
    project: str = typer.Option(..., "--project", help="Project title (reused when it exists)."),
    overlap: Optional[int] = typer.Option(None, "--overlap", help="Annotators per task (maximum_annotations)."),
    predictions: Optional[Path] = typer.Option(None, "--predictions",
                                               help="Pre-annotations: task, question, label [, model, score]."),
    seed: int = typer.Option(0, "--seed", help="Seed of the per-task shuffle (cat options, translation candidates)."),
    chunk_size: int = typer.Option(1000, "--chunk-size", help="Tasks per import request."),
    skip_invalid: bool = typer.Option(False, "--skip-invalid", help="pair: skip rows that are not valid pairs."),
    url: Optional[str] = URL_OPT,
) -> None:
    from .labelstudio import push

    rep = push(data, kind.value, project, url=url, overlap=overlap, seed=seed, chunk_size=chunk_size,
               predictions=predictions, skip_invalid=skip_invalid)
    _echo(f"{'created' if rep.created_project else 'reused'} project '{rep.project_title}' ({rep.url}): "
          f"{rep.n_imported} task(s) imported, {rep.n_existing} already there, {rep.n_records} record(s) in "
          f"{data}" + (f", {rep.n_predictions} prediction(s)" if rep.n_predictions else "")
          + (f", {rep.duplicate_ids} duplicate id(s) skipped" if rep.duplicate_ids else "")
          + (f", {rep.skipped_invalid} invalid row(s) skipped" if rep.skipped_invalid else "")
          + ("; labeling config updated" if rep.config_updated else "")
          + (f"; {rep.duplicate_tasks_removed} duplicate task(s) left by an interrupted push removed"
             if rep.duplicate_tasks_removed else ""))
    if rep.duplicate_tasks_annotated:
        _echo(f"warning: {len(rep.duplicate_tasks_annotated)} task(s) exist twice with annotations on both copies "
              f"(e.g. {rep.duplicate_tasks_annotated[0]}); biaskit kept them. Fix: delete one copy in Label Studio.")


@app.command("pull", help=f"Export a project's annotations as validated judgment rows. {TOKEN_HELP}")
def pull_command(
    project: str = typer.Option(..., "--project", help="Project title."),
    out: Path = typer.Option(..., "--out", help="Judgments file (.csv or .jsonl)."),
    kind: Optional[_Kind] = typer.Option(None, "--kind", help="Override the kind recorded in the tasks."),
    raw: Optional[Path] = typer.Option(None, "--raw", help="Also save the raw Label Studio JSON export here."),
    export: _Export = typer.Option("auto", "--export",
                                   help="plain: one request builds the file; snapshot: built on the server, then "
                                        "downloaded (large projects); auto: snapshot from 2,000 tasks."),
    url: Optional[str] = URL_OPT,
) -> None:
    from .labelstudio import pull

    rep = pull(project, out, url=url, kind=kind.value if kind else None, raw_out=raw, export=export.value)
    _echo(f"{rep.n_judgments} judgment(s) from {rep.n_annotations} annotation(s) on {rep.n_tasks} task(s) by "
          f"{len(rep.workers)} annotator(s) -> {out} ({rep.export} export)"
          + (f" ({rep.n_skipped_cancelled} skipped annotation(s) ignored)" if rep.n_skipped_cancelled else ""))


@app.command("import")
def import_command(
    export: Path = typer.Option(..., "--export", help="A Label Studio JSON export (offline)."),
    out: Path = typer.Option(..., "--out", help="Judgments file (.csv or .jsonl)."),
    kind: Optional[_Kind] = typer.Option(None, "--kind", help="Kind (default: recorded in the tasks)."),
    config: Optional[Path] = typer.Option(None, "--config", help="The project's labeling config XML (default: the kind's)."),
    users: Optional[Path] = typer.Option(None, "--users", help="CSV id,email to name annotators (else user:<id>)."),
) -> None:
    """Turn an exported Label Studio JSON file into validated judgment rows, offline."""
    from .labelstudio import import_export

    rep = import_export(export, out, kind=kind.value if kind else None, config_path=config, users_path=users)
    _echo(f"{rep.n_judgments} judgment(s) from {rep.n_annotations} annotation(s) on {rep.n_tasks} task(s) -> {out}")


def _allowed(kind: Optional[_Kind], labels: Optional[str]):
    if labels:
        return [x.strip() for x in labels.split(",") if x.strip()]
    if kind:
        from .kinds import get_kind

        k = get_kind(kind.value)
        allowed = k.allowed_labels()
        for q in k.questions:
            if q.type == "multi":
                for lab in q.labels:
                    allowed[f"{q.name}:{k.code(q, lab)}"] = {"yes", "no"}
        return allowed
    return None


@app.command("aggregate")
def aggregate_command(
    judgments: Path = typer.Option(..., "--judgments", help="task, worker, label [, question] (.csv/.jsonl)."),
    out: Path = typer.Option(..., "--out", help="One row per task and question (.csv/.jsonl)."),
    min_agree: Optional[int] = typer.Option(None, "--min-agree",
                                            help="Votes needed to accept (default: a strict majority)."),
    method: _Method = typer.Option(_Method.majority, "--method", help="majority, or a crowd-kit model."),
    ties: _Ties = typer.Option(_Ties.flag, "--ties", help="flag (needs_adjudication) | drop | random (seeded)."),
    seed: int = typer.Option(0, "--seed", help="Seed for --ties random."),
    duplicates: _Dups = typer.Option(_Dups.error, "--duplicates",
                                     help="An annotator who answered an item twice: error | last | first."),
    kind: Optional[_Kind] = typer.Option(None, "--kind", help="Reject labels that are not options of this kind."),
    labels: Optional[str] = typer.Option(None, "--labels", help="Comma-separated allowed labels (all questions)."),
) -> None:
    """Aggregate judgments by majority vote or crowd-kit models; ties are never resolved silently."""
    from .aggregate import aggregate_file

    rep = aggregate_file(judgments, out, method=method.value, min_agree=min_agree, ties=ties.value, seed=seed,
                         duplicates=duplicates.value, allowed=_allowed(kind, labels))
    if rep.n_items == 0 and rep.n_judgments_in == 0:
        _echo(f"warning: no judgments in {judgments}; wrote an empty table to {out}")
    sc = rep.status_counts
    _echo(f"{rep.n_items} item(s) -> {out}: {sc['accepted']} accepted, {sc['rejected']} rejected, "
          f"{sc['needs_adjudication']} need adjudication"
          + (f"; {rep.n_ties} tie(s)" + (" dropped" if rep.n_dropped_ties else "") if rep.n_ties else "")
          + (f"; {rep.n_missing_labels} empty label(s) ignored" if rep.n_missing_labels else "")
          + (f"; {rep.n_text_skipped} text answer(s) not voted on" if rep.n_text_skipped else "")
          + (f"; {rep.n_duplicates_removed} duplicate answer(s) removed" if rep.n_duplicates_removed else ""))


@app.command("agreement")
def agreement_command(
    judgments: Path = typer.Option(..., "--judgments", help="task, worker, label [, question, bias_type]."),
    out: Path = typer.Option(..., "--out", help="Folder for agreement.json, agreement.md, agreement_items.csv."),
    data: Optional[Path] = typer.Option(None, "--data", help="Records giving each task's bias_type (per-bias-type figures)."),
    level: _Level = typer.Option(_Level.nominal, "--level", help="Krippendorff level of measurement."),
    min_overlap: int = typer.Option(2, "--min-overlap", help="Shared items a pair of annotators needs for Cohen's kappa."),
    duplicates: _Dups = typer.Option(_Dups.error, "--duplicates", help="error | last | first."),
) -> None:
    """Inter-annotator agreement report (Krippendorff, Fleiss, Cohen, % agreement, retention)."""
    from .agreement import agreement_report

    rep = agreement_report(judgments, out, level=level.value, min_overlap=min_overlap, duplicates=duplicates.value,
                           data_path=data)

    def f(x):
        return "n/a" if x is None else f"{x:.3f}"

    _echo(f"Krippendorff's alpha {f(rep['krippendorff_alpha'])}, Fleiss' kappa {f(rep['fleiss_kappa'])}, "
          f"mean pairwise Cohen's kappa {f(rep['mean_pairwise_cohen_kappa'])}, "
          f"percent agreement {f(rep['percent_agreement'])} on {rep['n_items']} item(s) -> {out}/agreement.json, "
          f"{out}/agreement.md")


@app.command("apply")
def apply_command(
    kind: _Kind = typer.Option(..., "--kind", help="tuple | pair | cat | translation."),
    data: Path = typer.Option(..., "--data", help="The records that were pushed (translation: the candidates file)."),
    out: Path = typer.Option(..., "--out", help="Validated records (.jsonl; pairs also .csv)."),
    aggregated: Optional[Path] = typer.Option(None, "--aggregated", help="Output of `aggregate` (not for translation)."),
    judgments: Optional[Path] = typer.Option(None, "--judgments",
                                             help="Pulled judgments (translation: required; cat: fills human_labels)."),
    direction_policy: str = typer.Option("annotators", "--direction-policy",
                                         help="pair: when the crowd's direction differs: annotators | reject."),
    min_agree: Optional[int] = typer.Option(None, "--min-agree", help="translation: votes the winning choice needs."),
    report_dir: Optional[Path] = typer.Option(None, "--report-dir", help="translation: folder for the review report."),
) -> None:
    """Write the validated dataset: accepted items only, labels and agreement attached, provenance kept."""
    from biaskit.errors import InputError

    from .apply import apply_annotations

    if kind != _Kind.translation and aggregated is None:
        raise InputError("--aggregated is required for this kind.", fix="run `biaskit annotate aggregate` first.")
    res = apply_annotations(kind.value, data, aggregated, out, judgments=judgments, direction_policy=direction_policy,
                            min_agree=min_agree, report_dir=report_dir)
    _echo(json.dumps(res, ensure_ascii=False))
