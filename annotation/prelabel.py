"""LLM pre-labels (``annotate prelabel``): a kind's tasks as self-contained questions for an LLM, the
LLM's answers back as judgment rows, and :func:`run_prelabel`, which runs them through curation's
``prelabel`` task and the one job runner -- reached through the floor's registry entry
(:func:`biaskit.llm_options.llm_jobs`), since stages never import each other.

:func:`prelabel_items` renders every record the way Label Studio shows it to an annotator, read off the
kind's own labeling config (headers and texts in order, with the task's data filled in), with the
kind's single-choice questions (the config's ``Choices``, their options and the header above them)
and the kind's annotator guidelines (``data/guidelines/<kind>.<lang>.md``, what the project's
instructions panel shows). :func:`answers_to_judgments` turns the LLM's answers, which are values of
the config's controls exactly like an annotation's, into judgment rows through the kind's own
:meth:`~biaskit.annotation.kinds.base.TaskKind.judgments` (a CAT's slots become ``option_<gold>``
questions as for people), with ``worker = llm:<model>`` and ``model`` = the model and prompt version
(Label Studio's ``model_version`` when they are pushed as predictions).
"""

from __future__ import annotations

import re
import xml.etree.ElementTree as ET
from collections.abc import Iterable
from dataclasses import dataclass, field
from pathlib import Path
from typing import TYPE_CHECKING, Any

from .kinds import CHOICE

if TYPE_CHECKING:
    from .options import PrelabelOptions

_VAR = re.compile(r"\$([A-Za-z_][A-Za-z0-9_]*)")


def _fill(text: str, data: dict) -> str:
    return _VAR.sub(lambda m: str(data.get(m.group(1), "")), text or "")


def task_view(kind, data: dict, config: str | None = None) -> tuple[str, list[dict]]:
    """``(item text, questions)`` of one task as an annotator sees it (see the module docstring)."""
    root = ET.fromstring(config or kind.config(None))
    single = {q.control for q in kind.questions if q.type == CHOICE}
    lines: list[str] = []
    questions: list[dict] = []
    header: str | None = None
    for el in root.iter():
        if el.tag == "Header":
            header = _fill(el.get("value", ""), data).strip()
            lines.append(header)
        elif el.tag == "Text":
            val = _fill(el.get("value", ""), data).strip()
            if val:
                lines.append(f"[{el.get('name')}] {val}")
        elif el.tag == "Choices" and el.get("name") in single and el.get("choice") != "multiple":
            opts = [c.get("value") for c in el.findall("Choice")]
            hints = [c.get("hint") for c in el.findall("Choice")]
            about = el.get("toName")
            text = header or f"Label [{about}]"
            if about and f"[{about}]" not in text:
                text = f"{text} (about [{about}])"
            q: dict[str, Any] = {"id": el.get("name"), "question": text, "options": opts}
            if any(hints):
                q["hints"] = {o: h for o, h in zip(opts, hints, strict=False) if h}
                text += " -- " + "; ".join(f"{o}: {h}" for o, h in q["hints"].items())
                q["question"] = text
            questions.append(q)
            header = None
    return "\n".join(x for x in lines if x), questions


def prelabel_items(kind, records: Iterable[Any], *, lang: str = "en", seed: int = 0) -> list[dict]:
    """One input item of curation's ``prelabel`` task per record (``seed``: the same per-task shuffle as
    ``push --seed``, so slots and options are where annotators see them)."""
    from biaskit.errors import InputError
    from biaskit.options import say

    guide = kind.guidelines.get(lang)
    if guide is None:
        raise InputError(
            f"kind '{kind.name}' has no '{lang}' guidelines.",
            fix=f"use one of {', '.join(sorted(kind.guidelines))} ({say('guidelines_lang')}).",
        )
    config = kind.config(list(records) if not isinstance(records, list) else records)
    items = []
    for rec in records:
        data = kind.task(rec, seed)["data"]
        text, questions = task_view(kind, data, config)
        items.append(
            {"task": kind.record_id(rec), "kind": kind.name, "guidelines": guide, "item": text, "questions": questions}
        )
    return items


def answers_to_judgments(kind, records: Iterable[Any], rows: Iterable[dict], *, model_version: str, seed: int = 0):
    """The LLM's answer rows (``task, control, label``: the ``prelabel`` task's output) -> judgment rows
    (``task, worker, question, label, qtype, kind, bias_type, model``) through ``kind.judgments``."""
    import pandas as pd

    by_task: dict[str, dict[str, list[str]]] = {}
    for r in rows:
        by_task.setdefault(str(r["task"]), {})[str(r["control"])] = [str(r["label"])]
    out = []
    for rec in records:
        bid = kind.record_id(rec)
        values = by_task.get(bid)
        if not values:
            continue
        data = kind.task(rec, seed)["data"]
        for j in kind.judgments(data, values):
            if j["qtype"] != CHOICE:
                continue
            out.append(
                {
                    "task": bid,
                    "worker": f"llm:{model_version}",
                    "question": j["question"],
                    "label": j["label"],
                    "qtype": j["qtype"],
                    "kind": kind.name,
                    "bias_type": data.get("bias_type"),
                    "model": model_version,
                }
            )
    cols = ["task", "worker", "question", "label", "qtype", "kind", "bias_type", "model"]
    return pd.DataFrame(out, columns=cols)


def model_version(model: str, prompt) -> str:
    """Label Studio's ``model_version`` of a pre-label: the model and the prompt's id, version and hash."""
    return f"{model} {prompt.id}@{prompt.version} ({prompt.hash})"


# ------------------------------------------------------------------------------------------ the command
@dataclass
class PrelabelResult:
    """What :func:`run_prelabel` did (``run``: the job runner's summary; ``push``: the
    :class:`~.labelstudio.PushReport` when a project was given; ``task``, ``items``: for a dry run)."""

    out: Path
    answers: Path
    model_version: str
    tasks: int
    judgments: int
    run: Any
    push: Any = None
    task: Any = field(default=None, repr=False)
    items: list = field(default_factory=list, repr=False)


def answers_path(out: Path) -> Path:
    """The runner's resumable answers file next to ``out``: ``x.csv`` -> ``x.answers.jsonl``."""
    return out.with_name(f"{out.stem}.answers.jsonl")


def run_prelabel(opts: PrelabelOptions, *, command: str | None = None, progress: bool = True) -> PrelabelResult:
    """``biaskit annotate prelabel``: pre-label the records of ``opts.data`` with the LLM of ``opts``.

    1. :func:`prelabel_items` -- each record as its Label Studio task reads, with the kind's questions
       and guidelines;
    2. curation's ``prelabel`` task run by the one job runner (:func:`biaskit.llm_options.llm_jobs`):
       the response cache, resume from the answers file, ``<answers>.errors.jsonl`` for junk replies
       (raw text kept), the run log, concurrency, progress; ``opts.dry_run``: nothing is sent;
    3. :func:`answers_to_judgments` -- the answers as judgment rows (``worker = llm:<model_version>``),
       written to ``opts.out``: the ``--predictions`` file of ``annotate push`` and the LLM's side of
       ``annotate judge-agreement``;
    4. with ``opts.project``, :func:`~.labelstudio.push` -- predictions on every task (hidden from
       annotators unless ``opts.show_predictions``).
    """
    from biaskit.errors import InputError
    from biaskit.io import read_jsonl, write_table
    from biaskit.llm_options import llm_jobs

    from .kinds import get_kind

    jobs = llm_jobs()
    prompt = opts.template("prelabel")
    client = None if opts.dry_run else opts.client()
    k = get_kind(opts.kind)
    records = k.load(opts.data)
    if not records:
        raise InputError(f"no {k.records_name} in the file.", path=opts.data, fix="pass the records to pre-label.")
    items = prelabel_items(k, records, lang=opts.guidelines_lang, seed=opts.shuffle_seed)
    task = jobs.task("prelabel", prompt, opts.prompts_dir)
    out = Path(opts.out)
    ans = answers_path(out)
    mv = model_version((client.model if client is not None else opts.model) or "llm", task.prompt)
    if client is None:
        return PrelabelResult(out, ans, mv, len(items), 0, None, task=task, items=items)
    summary = jobs.run(
        client,
        task,
        items,
        params=opts.params(),
        out=ans,
        concurrency=opts.concurrency,
        retry_failed=opts.retry_failed,
        progress=progress,
        command=command,
    )
    df = answers_to_judgments(
        k, records, read_jsonl(ans) if ans.exists() else [], model_version=mv, seed=opts.shuffle_seed
    )
    write_table(out, df)
    res = PrelabelResult(out, ans, mv, len(items), len(df), summary, task=task, items=items)
    if opts.project and len(df):
        res.push = _push_predictions(opts, k.name, command, progress)
    return res


def _push_predictions(opts: PrelabelOptions, kind: str, command: str | None, progress: bool):
    """Send the answers file to ``opts.project`` as predictions (:func:`~.labelstudio.push`)."""
    from .labelstudio import push
    from .options import PushOptions

    push_opts = PushOptions.from_kwargs(
        data=opts.data,
        kind=kind,
        project=opts.project,
        url=opts.url,
        seed=opts.shuffle_seed,
        predictions=opts.out,
        show_predictions=opts.show_predictions,
    )
    return push(
        push_opts,
        show_progress=progress,
        description=f"biaskit {kind} review; created by: {command or 'annotate prelabel'}",
    )
