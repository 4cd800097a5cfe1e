"""Push tasks to and pull judgments from a real Label Studio (label-studio-sdk 2.x).

- :func:`push`: create or reuse a project by title, import only the tasks whose biaskit id is not
  in the project yet (fetched first, so re-running an interrupted push resumes and pushing the same
  file twice creates no duplicates), in chunks of 1,000 with a progress bar; ``overlap`` sets
  ``maximum_annotations``; the kind's annotator guidelines go to the project's instructions panel
  (``expert_instruction``, shown before the first task); optional predictions (pre-annotations
  from a model or an LLM). A push
  killed while a chunk was on its way can leave that chunk to be committed by the server after
  the re-run listed the project: each push removes such duplicate copies (never one that has an
  annotation) when the project holds more tasks than it should.
- :func:`pull`: export every annotation of a project as judgment rows and validate every value
  against the project's labeling config (Label Studio itself stores values that are not in the
  config: such values are rejected loudly, naming the task and the annotator). Small projects
  use Label Studio's plain export, large ones (:data:`SNAPSHOT_MIN_TASKS`) an export snapshot,
  built on the server and downloaded as a file (the plain export builds the whole file inside one
  HTTP request, which proxies time out on).
- :func:`import_export`: the same from an exported Label Studio JSON file, offline.

URL and token come from the arguments or ``LABEL_STUDIO_URL`` / ``LABEL_STUDIO_API_KEY``. The
token is only handed to the SDK client: it is never printed, logged or written by biaskit.
"""

from __future__ import annotations

import functools
import json
import os
from collections.abc import Callable
from dataclasses import dataclass, field
from pathlib import Path
from typing import TYPE_CHECKING, Any

from biaskit.errors import BiaskitError, InputError, require
from biaskit.readers import annotation_values, annotator

from .adaptive import AdaptiveSettings
from .choices import EXPORT_MODES
from .kinds import CHOICE, KINDS, ParsedConfig, TaskKind, get_kind

if TYPE_CHECKING:
    from .options import ImportOptions, PullOptions, PushOptions

JUDGMENT_OUT_COLUMNS = [
    "task",
    "worker",
    "label",
    "question",
    "qtype",
    "comment",
    "lead_time",
    "created_at",
    "updated_at",
    "kind",
    "bias_type",
    "ls_task",
    "ls_annotation",
]


class LabelStudioError(BiaskitError):
    """Label Studio could not be reached, rejected the token, or refused a request."""


def connect(url: str | None = None, token: str | None = None):
    """An authenticated SDK client; checks the server and the token with one request."""
    require("label_studio_sdk", "annotation", "talking to Label Studio")
    from label_studio_sdk import LabelStudio

    url = (url or os.environ.get("LABEL_STUDIO_URL") or "").rstrip("/")
    token = token or os.environ.get("LABEL_STUDIO_API_KEY")
    if not url:
        from biaskit.options import tell

        raise LabelStudioError(
            f"no Label Studio URL. Fix: {tell('url')} or set LABEL_STUDIO_URL (`biaskit annotate serve` prints one)."
        )
    if not token:
        raise LabelStudioError(
            "no Label Studio API token. Fix: set LABEL_STUDIO_API_KEY "
            "(Label Studio > Account & Settings > Access Token)."
        )
    client = LabelStudio(base_url=url, api_key=token, timeout=120)
    _call(url, lambda: client.users.whoami())
    client._biaskit_url = url  # type: ignore[attr-defined]
    return client


def _call(url: str, fn: Callable[[], Any], what: str = "request") -> Any:
    """Run one SDK call, turning transport and HTTP errors into one-line messages (no token in them)."""
    import httpx
    from label_studio_sdk.core.api_error import ApiError

    try:
        return fn()
    except httpx.TimeoutException as exc:
        raise LabelStudioError(
            f"Label Studio at {url} did not answer the {what} in time ({type(exc).__name__}). "
            "Fix: check the server's load and log; large projects: `pull --export snapshot`, "
            "smaller `push --chunk-size`."
        ) from None
    except httpx.TransportError as exc:
        raise LabelStudioError(
            f"cannot reach Label Studio at {url} ({type(exc).__name__}). "
            "Fix: check the URL and that the server runs (`biaskit annotate serve`)."
        ) from None
    except ApiError as exc:
        if exc.status_code in (401, 403):
            raise LabelStudioError(
                f"Label Studio at {url} rejected the API token (HTTP {exc.status_code}). "
                "Fix: set LABEL_STUDIO_API_KEY to a valid (legacy) access token."
            ) from None
        body = exc.body if isinstance(exc.body, (str, dict, list)) else str(exc.body)
        raise LabelStudioError(
            f"Label Studio {what} failed (HTTP {exc.status_code}): "
            f"{json.dumps(body)[:500] if not isinstance(body, str) else body[:500]}"
        ) from None


def _url(client) -> str:
    return getattr(client, "_biaskit_url", "Label Studio")


def find_project(client, title: str):
    """The project with exactly this title (None if absent; an error if several share it)."""
    found = [p for p in _call(_url(client), lambda: list(client.projects.list(title=title))) if p.title == title]
    if len(found) > 1:
        raise LabelStudioError(
            f"{len(found)} Label Studio projects are titled '{title}' "
            f"(ids {', '.join(str(p.id) for p in found)}). Fix: rename all but one."
        )
    return found[0] if found else None


@dataclass
class TaskRow:
    """One Label Studio task as a push sees it."""

    id: int
    biaskit_id: str | None
    n_annotations: int  # submitted + skipped
    overlap: int = 1  # annotators the task is served to (adaptive overlap raises it per task)
    meta: dict | None = None  # the task's meta (adaptive overlap keeps its state there)


def list_tasks(client, project_id: int) -> list[TaskRow]:
    """Every task of the project: id, biaskit id, annotation count, overlap and meta (1,000 per request)."""

    def _list():
        out = []
        for t in client.tasks.list(
            project=project_id,
            fields="task_only",
            page_size=1000,
            include="id,data,total_annotations,cancelled_annotations,overlap,meta",
        ):
            bid = (t.data or {}).get("biaskit_id")
            out.append(
                TaskRow(
                    t.id,
                    None if bid is None else str(bid),
                    int(t.total_annotations or 0) + int(t.cancelled_annotations or 0),
                    int(getattr(t, "overlap", None) or 1),
                    dict(getattr(t, "meta", None) or {}),
                )
            )
        return out

    return _call(_url(client), _list, "task listing")


def existing_task_ids(client, project_id: int) -> dict[str, int]:
    """biaskit id -> Label Studio task id (the lowest, should there be copies) for every task of the project."""
    out: dict[str, int] = {}
    for t in sorted(list_tasks(client, project_id), key=lambda r: r.id):
        if t.biaskit_id is not None:
            out.setdefault(t.biaskit_id, t.id)
    return out


@dataclass
class DedupeReport:
    removed: int = 0  # unannotated copies deleted
    annotated_copies: list[str] = field(default_factory=list)  # biaskit ids with 2+ annotated copies (kept)


def remove_duplicate_tasks(client, project_id: int, rows: list[TaskRow]) -> tuple[DedupeReport, list[TaskRow]]:
    """Delete the unannotated copies of tasks that share a biaskit id; returns the report and the rows kept.

    One copy of each biaskit id is kept: the annotated one(s), else the lowest task id. Copies that
    have annotations are never deleted (listed in the report instead); the deletion itself is
    filtered on the server by "no annotation", so a copy annotated since the listing is kept too.
    """
    by_bid: dict[str, list[TaskRow]] = {}
    for r in rows:
        if r.biaskit_id is not None:
            by_bid.setdefault(r.biaskit_id, []).append(r)
    rep = DedupeReport()
    doomed: list[int] = []
    for bid, copies in by_bid.items():
        if len(copies) < 2:
            continue
        copies.sort(key=lambda r: r.id)
        annotated = [r for r in copies if r.n_annotations]
        keep = annotated or copies[:1]
        if len(annotated) > 1:
            rep.annotated_copies.append(bid)
        doomed += [r.id for r in copies if r not in keep]
    u = _url(client)
    # the server re-checks at deletion time: a copy annotated (or skipped) since the listing is kept
    unannotated = {
        "conjunction": "and",
        "items": [
            {"filter": "filter:tasks:total_annotations", "operator": "equal", "type": "Number", "value": 0},
            {"filter": "filter:tasks:cancelled_annotations", "operator": "equal", "type": "Number", "value": 0},
        ],
    }
    before = project_task_count(client, project_id) if doomed else 0
    for start in range(0, len(doomed), 1000):
        ids = doomed[start : start + 1000]
        _call(
            u,
            functools.partial(
                client.actions.create,
                id="delete_tasks",
                project=project_id,
                filters=unannotated,
                selected_items={"all": False, "included": ids},
            ),
            "task deletion",
        )
    confirmed = doomed
    if doomed and project_task_count(client, project_id) != before - len(doomed):  # some were kept
        left = {r.id for r in list_tasks(client, project_id)}
        confirmed = [t for t in doomed if t not in left]
    rep.removed = len(confirmed)
    gone = set(confirmed)
    return rep, [r for r in rows if r.id not in gone]


def project_task_count(client, project_id: int) -> int:
    return int(_call(_url(client), lambda: client.projects.get(project_id).task_number, "project read") or 0)


@dataclass
class PushReport:
    project_id: int
    project_title: str
    created_project: bool
    n_records: int
    n_existing: int
    n_imported: int
    n_predictions: int = 0
    config_updated: bool = False
    instructions_updated: bool = False
    duplicate_ids: int = 0
    skipped_invalid: int = 0
    url: str = ""
    duplicate_tasks_removed: int = 0  # copies left by an interrupted push, deleted
    duplicate_tasks_annotated: list[str] = field(default_factory=list)  # copies with annotations: kept
    predictions_shown: bool | None = None  # the project's "use predictions to pre-label" (None: untouched)
    adaptive: dict | None = None  # adaptive overlap: the round run after the import (advance's summary)

    def to_json(self) -> dict:
        return dict(self.__dict__)


def read_predictions(path: str | Path) -> dict[str, list[dict]]:
    """Pre-annotations in the judgment format: ``task, question, label`` [+ ``model``, ``score``]."""
    from biaskit.io import read_table

    df = read_table(path)
    missing = [c for c in ("task", "question", "label") if c not in df.columns]
    if missing:
        raise InputError(
            f"missing column(s) {', '.join(missing)}.",
            path=path,
            fix="predictions use the judgment format: task, question, label [, model, score].",
        )
    out: dict[str, list[dict]] = {}
    for i, rec in enumerate(df.to_dict(orient="records"), start=1):
        if rec["label"] is None or (isinstance(rec["label"], float) and rec["label"] != rec["label"]):
            raise InputError("empty label.", path=path, row=i, column="label", fix="give a label or drop the row.")
        out.setdefault(str(rec["task"]), []).append({**rec, "_row": i})
    return out


def _prediction_payload(
    kind: TaskKind, data: dict, rows: list[dict], allowed: ParsedConfig, path: str | None
) -> list[dict]:
    by_model: dict[str, dict] = {}
    for r in rows:
        res = kind.prediction_result(data, str(r["question"]), str(r["label"]))
        for item in res:
            tag, labels, _ = allowed.controls[item["from_name"]]
            for v in item["value"].get("choices", []):
                if labels and v not in labels:
                    raise InputError(
                        f"prediction label '{v}' is not an option of '{r['question']}' (options: {', '.join(labels)}).",
                        path=path,
                        row=r["_row"],
                        column="label",
                        fix="use one of the options of the labeling config.",
                    )
        model = str(r.get("model") or "biaskit-prediction")
        p = by_model.setdefault(model, {"model_version": model, "result": []})
        p["result"].extend(res)
        score = r.get("score")
        if score is not None and not (isinstance(score, float) and score != score):
            p["score"] = float(score)
    return list(by_model.values())


def _predictions_for_existing(
    client,
    project_id: int,
    k: TaskKind,
    records: list,
    seed: int,
    preds: dict[str, list[dict]],
    have: dict[str, int],
    allowed: ParsedConfig,
    source: str | None,
) -> int:
    """Predictions for tasks already in the project (a pre-label run after the push): imported for each
    task that has none of that ``model_version`` yet (a re-run adds nothing)."""
    from label_studio_sdk import PredictionRequest

    u = _url(client)
    todo = [(have[k.record_id(r)], r) for r in records if k.record_id(r) in preds and k.record_id(r) in have]
    if not todo:
        return 0
    there = {
        (int(p.task), str(p.model_version))
        for p in _call(u, lambda: client.predictions.list(project=project_id), "prediction listing")
        if p.task is not None
    }
    req = []
    for tid, rec in todo:
        for p in _prediction_payload(k, k.task(rec, seed)["data"], preds[k.record_id(rec)], allowed, source):
            if (tid, p["model_version"]) not in there:
                req.append(
                    PredictionRequest(
                        task=tid, result=p["result"], model_version=p["model_version"], score=p.get("score")
                    )
                )
    for start in range(0, len(req), 1000):
        chunk = req[start : start + 1000]
        _call(u, functools.partial(client.projects.import_predictions, project_id, request=chunk), "prediction import")
    return len(req)


def push(
    opts: PushOptions,
    *,
    token: str | None = None,
    description: str = "",
    progress: Callable[[int, int], None] | None = None,
    show_progress: bool = True,
    adaptive: AdaptiveSettings | None = None,
) -> PushReport:
    """Create or reuse project ``project`` and import the records of ``data`` not in it yet.

    ``opts``: the :class:`~biaskit.annotation.options.PushOptions` of ``biaskit annotate push`` (what
    the command and the pipeline's review stages build; in Python ``PushOptions(data=..., kind=...,
    project=..., overlap=3)``). Not options: ``token`` (default ``$LABEL_STUDIO_API_KEY``; never an option,
    never written), ``description`` (of a new project), ``progress``, ``show_progress`` and ``adaptive`` (an
    :class:`~.adaptive.AdaptiveSettings` object instead of ``overlap="adaptive"`` and its options).

    ``guidelines``: the languages of the kind's annotator guidelines shown in the project's
    instructions panel (``"en,hi"``, ``["hi"]``; default all; ``"none"``: the panel is left as it is).

    ``adaptive`` (instead of ``overlap``): adaptive overlap -- every task is served to
    ``min_judgments`` annotators first (the project's ``maximum_annotations``), the settings go to
    each new task's ``meta``, and after the import :func:`advance` runs one round (a re-run of the
    same push is how a round is started by hand; ``biaskit run`` does it on every run).

    ``show_predictions``: Label Studio's "use predictions to pre-label tasks" (the project's
    ``show_collab_predictions``). With ``predictions`` it defaults to False: pre-labels stay hidden
    from annotators (anchoring would bias a validity check); None without predictions leaves it.

    ``progress(done, total)`` is called after each chunk; ``show_progress`` draws
    :func:`biaskit.progress.progress`'s bar (only on a terminal).
    """
    plan = _push_plan(opts, adaptive)
    k, records, adaptive = plan.kind, plan.records, plan.adaptive
    client = connect(opts.url, token)
    u = _url(client)
    proj, changes = _push_project(client, u, plan, opts.project, description or f"biaskit {k.name} review")
    rows = list_tasks(client, proj.id)
    dedupe, rows = remove_duplicate_tasks(client, proj.id, rows)  # left by an earlier interrupted push
    have: dict[str, int] = {}
    for r in sorted(rows, key=lambda r: r.id):
        if r.biaskit_id is not None:
            have.setdefault(r.biaskit_id, r.id)
    todo, seen, dups = _tasks_to_import(plan, have)
    n_pred = (
        _predictions_for_existing(client, proj.id, k, records, opts.seed, plan.preds, have, plan.allowed, plan.source)
        if plan.preds
        else 0
    )
    n_pred += _import_tasks(client, u, proj.id, todo, opts, show_progress=show_progress, progress=progress)
    if todo and project_task_count(client, proj.id) != len(rows) + len(todo):
        # more tasks than this push knows of: a chunk of a killed push committed after our listing
        later, _ = remove_duplicate_tasks(client, proj.id, list_tasks(client, proj.id))
        dedupe.removed += later.removed
        dedupe.annotated_copies += later.annotated_copies
    rep = PushReport(
        project_id=proj.id,
        project_title=opts.project,
        created_project=changes["created"],
        n_records=len(records),
        n_existing=len(seen & set(have)),
        n_imported=len(todo),
        n_predictions=n_pred,
        config_updated=changes["config_updated"],
        instructions_updated=changes["instructions_updated"],
        duplicate_ids=dups,
        skipped_invalid=len(k.skipped),
        url=f"{u}/projects/{proj.id}",
        duplicate_tasks_removed=dedupe.removed,
        duplicate_tasks_annotated=sorted(set(dedupe.annotated_copies)),
        predictions_shown=plan.show_predictions,
    )
    if adaptive is not None:
        rep.adaptive = advance(opts.project, client=client, kind=k.name, settings=adaptive).summary
    return rep


@dataclass
class _PushPlan:
    """What :func:`push` sends, worked out and checked offline before the server is asked."""

    kind: TaskKind
    records: list
    seed: int
    overlap: int | None  # the project's maximum_annotations (adaptive: min_judgments)
    adaptive: AdaptiveSettings | None
    show_predictions: bool | None
    config: str
    allowed: Any  # the config's controls and their choices (ParsedConfig)
    instructions: str | None  # the guidelines as the instructions panel's HTML
    preds: dict[str, list[dict]]  # task id -> prediction rows
    source: str | None  # the predictions file, for errors


def _push_plan(o: PushOptions, adaptive: AdaptiveSettings | None) -> _PushPlan:
    """The records, the overlap, the labeling config and the guidelines of a push, and its predictions,
    each checked (a bad file stops the push before the server is asked)."""
    from biaskit.options import say, tell

    from .guidelines import guidelines_html, parse_langs, records_language

    overlap = o.fixed_overlap()
    if adaptive is None:
        adaptive = o.adaptive()
    elif o.overlap == "adaptive":
        overlap = None
    k = get_kind(o.kind)
    records = k.load(o.data, skip_invalid=o.skip_invalid)
    if adaptive is not None:
        if overlap is not None and overlap != adaptive.min_judgments:
            raise InputError(
                f"{say('overlap', overlap)} and adaptive overlap ({adaptive.describe()}) both given.",
                fix=f"{tell('overlap', 'adaptive')} with {say('min_judgments')} / {say('max_judgments')}, or a number.",
            )
        overlap = adaptive.min_judgments
    show_predictions = o.show_predictions
    if show_predictions is None and o.predictions:
        show_predictions = False
    config = k.config(records)
    allowed = ParsedConfig.from_xml(config)  # validated offline before anything is sent
    langs = parse_langs(o.guidelines, records_language(records))
    source = str(o.predictions) if o.predictions else None
    plan = _PushPlan(
        kind=k,
        records=records,
        seed=o.seed,
        overlap=overlap,
        adaptive=adaptive,
        show_predictions=show_predictions,
        config=config,
        allowed=allowed,
        instructions=guidelines_html(k, langs) if langs else None,
        preds=read_predictions(o.predictions) if o.predictions else {},
        source=source,
    )
    for rec in records:  # so are the predictions
        bid = k.record_id(rec)
        if bid in plan.preds:
            _prediction_payload(k, k.task(rec, o.seed)["data"], plan.preds[bid], allowed, source)
    return plan


def _push_project(client, u: str, plan: _PushPlan, title: str, description: str) -> tuple[Any, dict[str, bool]]:
    """The project ``title``, created with the plan's config, overlap, instructions and predictions
    setting, or updated where it differs; and what changed (``created``, ``config_updated``,
    ``instructions_updated``)."""
    from .guidelines import same_instructions

    changes = {"created": False, "config_updated": False, "instructions_updated": False}
    overlap, instructions, shown = plan.overlap, plan.instructions, plan.show_predictions
    proj = find_project(client, title)
    if proj is None:
        kwargs: dict[str, Any] = {"title": title, "label_config": plan.config, "description": description}
        if overlap:
            kwargs["maximum_annotations"] = overlap
        if instructions:
            kwargs.update(expert_instruction=instructions, show_instruction=True)
        if shown is not None:
            kwargs["show_collab_predictions"] = shown
        changes["created"] = True
        return _call(u, lambda: client.projects.create(**kwargs), "project creation"), changes
    upd: dict[str, Any] = {}
    if _norm_xml(proj.label_config) != _norm_xml(plan.config):
        upd["label_config"] = plan.config
    if overlap and proj.maximum_annotations != overlap:
        upd["maximum_annotations"] = overlap
    if instructions and (not same_instructions(proj.expert_instruction, instructions) or not proj.show_instruction):
        upd.update(expert_instruction=instructions, show_instruction=True)
    if shown is not None and bool(proj.show_collab_predictions) != shown:
        upd["show_collab_predictions"] = shown
    if upd:
        _call(u, lambda: client.projects.update(proj.id, **upd), "project update")
        changes.update(config_updated="label_config" in upd, instructions_updated="expert_instruction" in upd)
    return proj, changes


def _tasks_to_import(plan: _PushPlan, have: dict[str, int]) -> tuple[list[dict], set[str], int]:
    """``(tasks to import, the records' ids, duplicate ids in the data)``: the records not in the project
    yet (``have``: biaskit id -> task id) as tasks, with adaptive overlap's meta and their predictions."""
    from .adaptive import META_KEY

    k, preds, adaptive = plan.kind, plan.preds, plan.adaptive
    todo, seen, dups = [], set(), 0
    for rec in plan.records:
        bid = k.record_id(rec)
        if bid in seen:
            dups += 1
            continue
        seen.add(bid)
        if bid in have:
            continue
        task = k.task(rec, plan.seed)
        if adaptive is not None:
            task["meta"] = {META_KEY: {**adaptive.to_meta(), "settled": False}}
        if bid in preds:
            task["predictions"] = _prediction_payload(k, task["data"], preds[bid], plan.allowed, plan.source)
        todo.append(task)
    unknown = sorted(set(preds) - seen)
    if unknown:
        raise InputError(
            f"{len(unknown)} prediction(s) name tasks that are not in the data, e.g. '{unknown[0]}'.",
            path=plan.source,
            fix="the prediction 'task' column must hold the biaskit ids of the data.",
        )
    return todo, seen, dups


def _import_tasks(
    client,
    u: str,
    project_id: int,
    todo: list[dict],
    o: PushOptions,
    *,
    show_progress: bool,
    progress: Callable[[int, int], None] | None,
) -> int:
    """Import ``todo`` in chunks of ``o.chunk_size`` (each chunk one request, committed as it goes);
    returns the predictions sent with them."""
    from biaskit.progress import progress as progress_bar

    n_pred = 0
    with progress_bar(len(todo), f"push {o.project}", enabled=show_progress, unit="tasks") as bar:
        for start in range(0, len(todo), o.chunk_size):
            chunk = todo[start : start + o.chunk_size]
            _call(
                u,
                functools.partial(client.projects.import_tasks, project_id, request=chunk, return_task_ids=True),
                "task import",
            )
            n_pred += sum(len(t.get("predictions", [])) for t in chunk)
            bar.advance(len(chunk))
            if progress:
                progress(min(start + o.chunk_size, len(todo)), len(todo))
    return n_pred


# ---------------------------------------------------------------------------------------------
# adaptive overlap: one round
# ---------------------------------------------------------------------------------------------
@dataclass
class AdvanceReport:
    """What one round of :func:`advance` did: ``summary`` (:func:`.adaptive.summarize`), tasks whose
    overlap was raised (``raised``, ``asked``: further judgments asked for in all) or lowered (settled
    while more annotators were still wanted), settlements written to the tasks' meta."""

    summary: dict
    raised: int = 0
    asked: int = 0
    lowered: int = 0
    recorded: int = 0
    url: str = ""


def advance(
    project: str,
    *,
    client=None,
    url: str | None = None,
    token: str | None = None,
    kind: str | None = None,
    settings: AdaptiveSettings | None = None,
    show_progress: bool = False,
) -> AdvanceReport:
    """One round of adaptive overlap on a Label Studio project: pull its judgments, decide every task
    (:func:`.adaptive.decide`), and per task only what changed -- an open task that reached its
    overlap is served to ``more`` further annotators (its ``overlap`` raised, ``is_labeled`` cleared:
    Label Studio itself never gives a task twice to one annotator), a settled task gets its decision
    in ``meta`` (a risk decision stands from then on) and is no longer served. Idempotent: a round
    killed half-way is finished by the next (each task is one request, decided from the same judgments).
    ``settings``: default the ones recorded in the tasks' meta by ``push --overlap adaptive``."""
    from biaskit.progress import progress as progress_bar

    from .adaptive import decide, recorded_settlements, rule_spec, summarize, task_votes

    client = client or connect(url, token)
    u = _url(client)
    proj, rows, settings = _adaptive_project(client, u, project, settings)
    tasks = export_project(client, proj.id, mode="snapshot" if len(rows) >= SNAPSHOT_MIN_TASKS else "plain")
    df, pulled = export_to_judgments(
        tasks,
        config=proj.label_config,
        kind=kind,
        users=user_emails(client),
        source=f"{u}/projects/{proj.id} ('{project}')",
    )
    k = get_kind(kind or str(pulled.kind))
    spec = rule_spec(k.decision_rules(settings.min_agree))
    first: dict[str, TaskRow] = {}
    for r in rows:
        if r.biaskit_id is not None:
            first.setdefault(r.biaskit_id, r)
    rec = recorded_settlements((bid, r.meta) for bid, r in first.items())
    dec = decide(task_votes(df, k), k, settings, recorded=rec, ids=list(first))
    rep = AdvanceReport(summary=summarize(dec, settings), url=f"{u}/projects/{proj.id}")
    with progress_bar(len(first), f"round {project}", enabled=show_progress, unit="tasks") as bar:
        for bid, r in first.items():
            upd = _round_update(r, dec[bid], settings, spec, rep)
            if upd:
                _call(u, functools.partial(client.tasks.update, str(r.id), **upd), "task update")
            bar.advance()
    return rep


def _adaptive_project(client, u: str, project: str, settings: AdaptiveSettings | None):
    """``(project, its task rows by id, the adaptive settings)``: ``settings``, else the ones recorded in
    the tasks' meta; a project that does not exist or does not use adaptive overlap is an error."""
    from .adaptive import project_settings

    proj = find_project(client, project)
    if proj is None:
        raise LabelStudioError(
            f"no Label Studio project titled '{project}' at {u}. Fix: check the title (push creates it)."
        )
    rows = sorted(list_tasks(client, proj.id), key=lambda r: r.id)
    settings = settings or project_settings(r.meta for r in rows)
    if settings is None:
        raise InputError(
            f"project '{project}' does not use adaptive overlap.",
            path=f"{u}/projects/{proj.id}",
            fix="push it with `biaskit annotate push --overlap adaptive --min-judgments K --max-judgments N` first.",
        )
    return proj, rows, settings


def _round_update(r: TaskRow, d, settings: AdaptiveSettings, spec, rep: AdvanceReport) -> dict[str, Any]:
    """What one task needs this round (``d``: its decision; counted in ``rep``): a settled task gets its
    decision in ``meta`` and no more annotators; an open one is served to more, its meta kept current."""
    from .adaptive import META_KEY

    want_meta = settings.to_meta()
    old = dict((r.meta or {}).get(META_KEY) or {})
    upd: dict[str, Any] = {}
    if d.settled:
        new = d.to_meta(settings, spec)
        if (
            not old.get("settled")
            or any(old.get(x) != new.get(x) for x in ("by", "outcome", "rule"))
            or any(old.get(x) != want_meta.get(x) for x in want_meta)
        ):
            upd["meta"] = {**(r.meta or {}), META_KEY: new}
            rep.recorded += 1
        if r.overlap > max(d.judgments, 1):  # no more annotators for it
            upd.update(overlap=max(d.judgments, 1), is_labeled=True)
            rep.lowered += 1
        return upd
    target = min(settings.max_judgments, d.judgments + max(d.more, 0))
    if target > r.overlap:
        upd.update(overlap=target, is_labeled=False)
        rep.raised += 1
        rep.asked += target - max(r.overlap, d.judgments)
    if old.get("settled") or any(old.get(x) != want_meta.get(x) for x in want_meta):
        upd["meta"] = {**(r.meta or {}), META_KEY: {**want_meta, "settled": False}}
    return upd


def _norm_xml(x: str | None) -> str:
    import re

    return re.sub(r"\s+", " ", (x or "")).replace("> <", "><").strip()


# ---------------------------------------------------------------------------------------------
# export -> judgments
# ---------------------------------------------------------------------------------------------
@dataclass
class PullReport:
    n_tasks: int
    n_annotations: int
    n_judgments: int
    n_skipped_cancelled: int
    kind: str | None
    workers: list[str] = field(default_factory=list)
    export: str | None = None  # plain | snapshot (pull only)


def export_to_judgments(
    tasks: list[dict],
    *,
    config: str | None = None,
    kind: str | None = None,
    users: dict[int, str] | None = None,
    source: str = "Label Studio export",
):
    """Exported Label Studio tasks (JSON) -> (judgments DataFrame, PullReport).

    Every value is checked against ``config`` (the project's labeling config; for offline imports
    the kind's own config): unknown controls or choices raise :class:`InputError` listing each
    offending task (biaskit id and Label Studio id) and annotator. Cancelled (skipped) annotations
    give no judgments; they are counted in the report.
    """
    import pandas as pd

    users = users or {}
    kind = _export_kind(tasks, kind, source)
    k = get_kind(kind)
    allowed = ParsedConfig.from_xml(config if config is not None else k.config_for_tasks(tasks))
    rows: list[dict] = []
    errors: list[str] = []
    n_ann = n_cancel = 0
    for t in tasks:
        data = t.get("data") or {}
        bid = data.get("biaskit_id")
        if bid is None:
            errors.append(f"Label Studio task {t.get('id')} has no biaskit_id in its data")
            continue
        for ann in t.get("annotations") or []:
            worker = annotator(ann, users)
            if ann.get("was_cancelled"):
                n_cancel += 1
                continue
            n_ann += 1
            where = f"task {bid} (Label Studio task {t.get('id')}, annotation {ann.get('id')}), annotator {worker}"
            vals = annotation_values(ann.get("result"))
            bad = _value_errors(k, allowed, data, vals, where)
            errors += bad
            if not bad:
                rows += _annotation_rows(k, kind, t, ann, worker, vals)
    if errors:
        shown = "; ".join(errors[:10]) + (f"; ... and {len(errors) - 10} more" if len(errors) > 10 else "")
        raise InputError(
            f"{len(errors)} annotation value(s) do not match the labeling config: {shown}.",
            path=source,
            fix="correct these annotations in Label Studio (or the labeling config) "
            "and pull again; nothing was written.",
        )
    cols = JUDGMENT_OUT_COLUMNS + sorted({c for r in rows for c in r} - set(JUDGMENT_OUT_COLUMNS))
    df = pd.DataFrame(rows, columns=cols)
    report = PullReport(
        n_tasks=len(tasks),
        n_annotations=n_ann,
        n_judgments=len(df),
        n_skipped_cancelled=n_cancel,
        kind=kind,
        workers=sorted(df["worker"].unique().tolist()) if len(df) else [],
    )
    return df, report


def _export_kind(tasks: list[dict], kind: str | None, source: str) -> str:
    """The task kind of an export: ``kind``, else the one its tasks record (one kind per project)."""
    from biaskit.options import tell

    kinds = {str((t.get("data") or {}).get("biaskit_kind")) for t in tasks if (t.get("data") or {}).get("biaskit_kind")}
    if kind is None:
        if len(kinds) > 1:
            raise InputError(
                f"the project mixes task kinds ({', '.join(sorted(kinds))}).",
                path=source,
                fix=f"{tell('kind')}, or keep one kind per project.",
            )
        kind = next(iter(kinds), None)
    if kind is None:
        raise InputError(
            "the tasks carry no biaskit_kind (not pushed by biaskit?).",
            path=source,
            fix=f"{tell('kind', '|'.join(KINDS.names()))}.",
        )
    return kind


def _value_errors(k: TaskKind, allowed, data: dict, vals: dict[str, list[str]], where: str) -> list[str]:
    """What is wrong with one annotation's values (``where`` names it): a question the labeling config
    does not have, a value that is not an option, several values for a single-choice question, or what
    the kind refuses (:meth:`~.kinds.base.TaskKind.check_task_values`)."""
    errors = []
    for ctrl, got in vals.items():
        if ctrl not in allowed.controls:
            errors.append(f"{where}: unknown question '{ctrl}' (not in the labeling config)")
            continue
        tag, labels, _ = allowed.controls[ctrl]
        if tag != "Choices":
            continue
        extra = [v for v in got if v not in labels]
        if extra:
            errors.append(
                f"{where}: value {', '.join(repr(x) for x in extra)} for '{ctrl}' is not "
                f"an option (options: {', '.join(labels)})"
            )
        single = any(q.control == ctrl and q.type == CHOICE for q in k.questions)
        if single and len(got) > 1:
            errors.append(f"{where}: {len(got)} values for single-choice question '{ctrl}'")
    msg = k.check_task_values(data, vals)
    if msg:
        errors.append(f"{where}: {msg}")
    return errors


def _annotation_rows(k: TaskKind, kind: str, t: dict, ann: dict, worker: str, vals: dict[str, list[str]]) -> list[dict]:
    """The judgment rows of one valid annotation ``ann`` of task ``t`` (the kind's judgments, with the
    annotator's comment, times and the Label Studio ids; ``kind``: the kind's name as given)."""
    data = t.get("data") or {}
    comment = None
    if k.comment_control and vals.get(k.comment_control):
        comment = "\n".join(vals[k.comment_control]).strip() or None
    rows = []
    for j in k.judgments(data, vals):
        rows.append(
            {
                "task": str(data.get("biaskit_id")),
                "worker": worker,
                "label": j.pop("label"),
                "question": j.pop("question"),
                "qtype": j.pop("qtype"),
                "comment": comment,
                "lead_time": ann.get("lead_time"),
                "created_at": ann.get("created_at"),
                "updated_at": ann.get("updated_at"),
                "kind": kind,
                "bias_type": data.get("bias_type"),
                "ls_task": t.get("id"),
                "ls_annotation": ann.get("id"),
                **j,
            }
        )
    return rows


#: projects with at least this many tasks are pulled through an export snapshot (``export="auto"``)
SNAPSHOT_MIN_TASKS = 2000


def _read_export(chunks) -> list[dict]:
    """Spool a downloaded export to a temporary file (not memory) and parse it."""
    import tempfile

    with tempfile.TemporaryFile() as fh:
        for b in chunks:
            fh.write(b)
        fh.seek(0)
        return json.load(fh)


def export_project(
    client, project_id: int, *, mode: str = "plain", poll_s: float = 1.0, timeout_s: float = 3600
) -> list[dict]:
    """Every task of the project with its annotations (Label Studio's JSON export).

    ``plain``: one request that builds and returns the file. ``snapshot``: create an export
    snapshot on the server (in the background where Label Studio runs RQ workers, else inside the
    request), wait until it is completed, download it, delete it.
    """
    import time

    u = _url(client)
    # Label Studio builds the file inside the request (plain; a snapshot too when it runs no RQ
    # workers): 20,000 annotated tasks take minutes, well past the client's usual timeout
    slow = {"timeout": timeout_s}
    if mode == "plain":
        return _call(
            u,
            lambda: _read_export(
                client.projects.exports.download_sync(
                    project_id, export_type="JSON", download_all_tasks=True, request_options=slow
                )
            ),
            "export",
        )
    if mode != "snapshot":
        raise InputError(f"unknown export mode '{mode}'.", fix=f"use one of {', '.join(EXPORT_MODES)}.")
    snap = _call(
        u,
        lambda: client.projects.exports.create(project_id, title="biaskit pull", request_options=slow),
        "export snapshot",
    )
    try:
        deadline = time.monotonic() + timeout_s
        status = snap.status
        while status not in ("completed", "failed"):
            if time.monotonic() > deadline:
                raise LabelStudioError(
                    f"the export snapshot {snap.id} of project {project_id} was not ready after "
                    f"{timeout_s:.0f}s (status {status}). Fix: check Label Studio's workers."
                )
            time.sleep(poll_s)
            status = _call(u, lambda: client.projects.exports.get(project_id, snap.id), "export snapshot").status
        if status == "failed":
            raise LabelStudioError(
                f"Label Studio failed to build the export snapshot of project {project_id}. "
                "Fix: see the server log; `--export plain` uses the plain export instead."
            )
        return _call(
            u,
            lambda: _read_export(
                client.projects.exports.download(project_id, snap.id, export_type="JSON", request_options=slow)
            ),
            "export download",
        )
    finally:
        try:
            client.projects.exports.delete(project_id, snap.id)
        except Exception:  # a snapshot left on the server is harmless
            pass


def user_emails(client) -> dict[int, str]:
    return _call(_url(client), lambda: {u.id: u.email for u in client.users.list()}, "user listing")


@dataclass
class ProjectJudgments:
    """A project's judgments as :func:`pull` writes them, with what :func:`~.status.project_status` needs."""

    judgments: Any  # DataFrame
    report: PullReport
    tasks: list[dict]  # the raw export
    n_tasks: int
    overlap: int  # the project's maximum_annotations (annotators per task)
    title: str
    url: str
    adaptive: AdaptiveSettings | None = None  # adaptive overlap's settings (None: a fixed overlap)
    decisions: dict = field(default_factory=dict)  # adaptive: task -> Decision (as the rounds recorded it)


def project_judgments(
    project: str,
    *,
    url: str | None = None,
    token: str | None = None,
    kind: str | None = None,
    export: str = "auto",
) -> ProjectJudgments:
    """Export project ``project`` and turn it into validated judgment rows (nothing written).

    ``export``: ``auto`` (a snapshot from :data:`SNAPSHOT_MIN_TASKS` tasks on, else plain),
    ``plain`` or ``snapshot`` (see :func:`export_project`).
    """
    if export not in EXPORT_MODES:
        raise InputError(f"unknown export mode '{export}'.", fix=f"use one of {', '.join(EXPORT_MODES)}.")
    client = connect(url, token)
    proj = find_project(client, project)
    if proj is None:
        raise LabelStudioError(
            f"no Label Studio project titled '{project}' at {_url(client)}. Fix: check the title (push creates it)."
        )
    mode = export
    if mode == "auto":
        mode = "snapshot" if project_task_count(client, proj.id) >= SNAPSHOT_MIN_TASKS else "plain"
    tasks = export_project(client, proj.id, mode=mode)
    df, report = export_to_judgments(
        tasks,
        config=proj.label_config,
        kind=kind,
        users=user_emails(client),
        source=f"{_url(client)}/projects/{proj.id} ('{project}')",
    )
    report.export = mode
    from .adaptive import export_decisions, settlement_columns

    settings, decisions, spec = export_decisions(tasks, df, get_kind(report.kind)) if report.kind else (None, {}, "")
    if settings is not None and len(df):
        df = settlement_columns(df, decisions, spec)  # adaptive: each row carries its task's recorded decision
    return ProjectJudgments(
        df,
        report,
        tasks,
        n_tasks=len(tasks),
        overlap=int(proj.maximum_annotations or 1),
        title=project,
        url=f"{_url(client)}/projects/{proj.id}",
        adaptive=settings,
        decisions=decisions,
    )


def pull(opts: PullOptions, *, token: str | None = None) -> PullReport:
    """Export project ``project`` and write its judgments to ``out`` (CSV or JSONL by extension);
    ``raw_out``: also the raw export. See :func:`project_judgments`.

    ``opts``: the :class:`~biaskit.annotation.options.PullOptions` of ``biaskit annotate pull`` (in
    Python ``PullOptions(project=..., out=...)``). ``token``:
    default ``$LABEL_STUDIO_API_KEY`` (never an option, never written)."""
    from biaskit.io import write_json, write_table

    o = opts
    project, out, url, kind, raw_out, export = o.project, o.out, o.url, o.kind, o.raw, o.export
    got = project_judgments(project, url=url, token=token, kind=kind, export=export)
    if raw_out:
        write_json(raw_out, got.tasks)
    write_table(out, got.judgments)
    return got.report


def import_export(opts: ImportOptions) -> PullReport:
    """``biaskit annotate import``, offline: a Label Studio JSON export (``opts.export``) -> the judgments
    file ``opts.out`` (validated like :func:`pull`; ``config``: the project's labeling config, ``users``:
    ``id,email`` naming annotators)."""
    from biaskit.errors import BiaskitError
    from biaskit.io import write_table
    from biaskit.options import unset
    from biaskit.readers import read_export, read_text, read_users

    from .kinds import ParsedConfig

    export_path, config_path = opts.export, opts.config
    tasks = read_export(export_path)
    config = read_text(config_path) if config_path else None
    if config is not None:
        try:
            ParsedConfig.from_xml(config)
        except BiaskitError as exc:
            raise InputError(
                f"{exc}.",
                path=config_path,
                fix="pass the labeling config XML of the project (Settings > Labeling Interface > "
                f"Code), or {unset('config')} to use the kind's.",
            ) from None
    users = read_users(opts.users) if opts.users else None
    df, report = export_to_judgments(tasks, config=config, kind=opts.kind, users=users, source=str(export_path))
    write_table(opts.out, df)
    return report
