"""LLM pre-labels: annotation's tasks answered through curation's one LLM job runner.

The two stages never import each other (docs/architecture.md); this module sits above them like the
rest of the pipeline package and composes their pure functions, and the CLI root mounts
``biaskit annotate prelabel`` on it:

1. :func:`biaskit.annotation.prelabel.prelabel_items` -- each record as its Label Studio task reads,
   with the kind's questions and guidelines;
2. :class:`biaskit.curation.runner.JobRunner` with the ``prelabel`` task
   (:mod:`biaskit.curation.tasks.prelabel`) -- the response cache, resume from the answers file,
   ``<answers>.errors.jsonl`` for junk replies (raw text kept), the run log, concurrency, progress;
3. :func:`biaskit.annotation.prelabel.answers_to_judgments` -- the answers as judgment rows
   (``worker = llm:<model_version>``), written to ``out``: the ``--predictions`` file of ``annotate
   push`` and the LLM's side of ``annotate judge-agreement``;
4. with a Label Studio project, :func:`biaskit.annotation.labelstudio.push` -- predictions on every task
   (hidden from annotators unless ``show_predictions``).
"""

from __future__ import annotations

from dataclasses import dataclass, field
from pathlib import Path
from typing import Any


@dataclass
class PrelabelResult:
    out: Path
    answers: Path
    model_version: str
    tasks: int
    judgments: int
    run: Any  # the runner's RunSummary
    push: Any = None  # PushReport when a project was given
    items: list = field(default_factory=list, repr=False)


def answers_path(out: Path) -> Path:
    """The runner's resumable answers file next to ``out``: ``x.csv`` -> ``x.answers.jsonl``."""
    return out.with_name(f"{out.stem}.answers.jsonl")


def run_prelabel(
    kind: str,
    data: str | Path,
    out: str | Path,
    *,
    llm,
    params: dict | None = None,
    prompt=None,
    prompts_dir=None,
    concurrency: int = 1,
    retry_failed: bool = False,
    lang: str = "en",
    seed: int = 0,
    project: str | None = None,
    url: str | None = None,
    show_predictions: bool = False,
    progress: bool = True,
    command: str | None = None,
    dry_run: bool = False,
) -> PrelabelResult:
    """Pre-label the records of ``data`` (kind ``kind``) with ``llm`` (see the module docstring)."""
    from biaskit.annotation.kinds import get_kind
    from biaskit.annotation.prelabel import answers_to_judgments, model_version, prelabel_items
    from biaskit.curation.runner import JobRunner
    from biaskit.curation.tasks.prelabel import PrelabelTask
    from biaskit.errors import InputError
    from biaskit.io import read_jsonl, write_table

    k = get_kind(kind)
    records = k.load(data)
    if not records:
        raise InputError(f"no {k.records_name} in the file.", path=data, fix="pass the records to pre-label.")
    items = prelabel_items(k, records, lang=lang, seed=seed)
    task = PrelabelTask(prompt, prompts_dir=prompts_dir)
    out = Path(out)
    mv = model_version(getattr(llm, "model", None) or "llm", task.prompt)
    if dry_run:
        return PrelabelResult(out, answers_path(out), mv, len(items), 0, None, items=items)
    ans = answers_path(out)
    summary = JobRunner(
        llm,
        task,
        params=params,
        out=ans,
        concurrency=concurrency,
        retry_failed=retry_failed,
        progress=progress,
        command=command,
    ).run(items)
    rows = read_jsonl(ans) if ans.exists() else []
    df = answers_to_judgments(k, records, rows, model_version=mv, seed=seed)
    write_table(out, df)
    res = PrelabelResult(out, ans, mv, len(items), len(df), summary, items=items)
    if project and len(df):
        from biaskit.annotation.labelstudio import push
        from biaskit.annotation.options import PushOptions

        opts = PushOptions.from_kwargs(
            data=data,
            kind=k.name,
            project=project,
            url=url,
            seed=seed,
            predictions=out,
            show_predictions=show_predictions,
        )
        res.push = push(
            opts,
            show_progress=progress,
            description=f"biaskit {k.name} review; created by: {command or 'annotate prelabel'}",
        )
    return res
