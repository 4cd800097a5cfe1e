"""LLM-assisted generation of bias tuples and sentences (IndiBias steps 1 and 3).

The pure functions behind ``curate tuples`` and ``curate sentences``: they build the task's input
items and hand them to the job runner (:mod:`biaskit.curation.runner`: resume, cache, errors
file, run log). The tasks themselves are in :mod:`biaskit.curation.tasks`.
"""

from __future__ import annotations

from collections.abc import Callable, Sequence
from pathlib import Path
from typing import TYPE_CHECKING, Any

from biaskit.errors import InputError
from biaskit.inventory import Inventory, load_inventory
from biaskit.options import say
from biaskit.schema import BiasTuple

from .llm.protocol import LLMClient
from .prompts import Prompt
from .runner import JobRunner, RunSummary
from .tasks.sentences import SentenceTask
from .tasks.tuples import TupleTask, tuple_items

if TYPE_CHECKING:
    from .options import CatsOptions, SentencesOptions, TuplesOptions


def generate_tuples(
    llm: LLMClient,
    prompt: Prompt | None,
    o: TuplesOptions,
    /,
    *,
    params: dict | None = None,
    inventory: Inventory | None = None,
    progress: bool = True,
    command: str | None = None,
) -> RunSummary:
    """``biaskit curate tuples``: attributes per identity x polarity -> BiasTuple rows. ``o``: the
    command's :class:`~biaskit.curation.options.TuplesOptions`; ``llm``, ``prompt``: the client and
    template (None: the task's own); ``params``: the decoding parameters (default: ``o.params()``);
    ``inventory``: a loaded inventory (default: ``o.inventory``'s)."""
    if params is None:
        params = o.params()
    idents = (
        list(o.identities) if o.identities else (inventory or load_inventory(o.inventory)).identities(o.axis, o.lang)
    )
    items = tuple_items(axis=o.axis, identities=idents, polarity=o.polarity, n=o.n)
    runner = JobRunner(
        llm,
        TupleTask(prompt, lang=o.lang),
        params=params,
        out=o.out,
        concurrency=o.concurrency,
        retry_failed=o.retry_failed,
        progress=progress,
        command=command,
    )
    return runner.run(items)


def usable_tuples(path: str | Path, *, statuses: Sequence[str] | None = None) -> list[BiasTuple]:
    """The tuples to write sentences for (``statuses``: only these; default: all but rejected)."""
    from biaskit.readers import read_tuples

    tuples = read_tuples(path, statuses=statuses).records
    out = tuples if statuses else [t for t in tuples if t.status != "rejected"]
    if not out:
        raise InputError(
            "no usable tuples in the file" + (f" with status {', '.join(statuses)}" if statuses else "") + ".",
            path=path,
            fix=f"check {say('statuses')}, or run `biaskit curate tuples` first.",
        )
    return out


def sentence_items(tuples: Sequence[BiasTuple]) -> list[dict[str, Any]]:
    return [{"tuple": t.model_dump(mode="json")} for t in tuples]


def generate_sentences(
    llm: LLMClient,
    prompt: Prompt | None,
    o: SentencesOptions,
    /,
    *,
    params: dict | None = None,
    inventory: Inventory | None = None,
    progress: bool = True,
    command: str | None = None,
) -> RunSummary:
    """``biaskit curate sentences``: ``per_tuple`` sentences per tuple that express its stereotype
    (``mode="stereo"``) or go against it (``mode="anti"``; default template ``sentences_anti``).
    ``o``: the command's :class:`~biaskit.curation.options.SentencesOptions`; ``prompt``, ``params``,
    ``inventory``: as :func:`generate_tuples`."""
    if params is None:
        params = o.params()
    if inventory is None and o.inventory is not None:
        inventory = load_inventory(o.inventory)
    items = sentence_items(usable_tuples(o.tuples, statuses=o.statuses))
    task = SentenceTask(prompt, per_tuple=o.per_tuple, inventory=inventory, mode=o.mode)
    runner = JobRunner(
        llm,
        task,
        params=params,
        out=o.out,
        concurrency=o.concurrency,
        retry_failed=o.retry_failed,
        progress=progress,
        command=command,
    )
    return runner.run(items)


def generate_cats(
    llm: LLMClient | Callable[[], LLMClient],
    o: CatsOptions,
    /,
    *,
    splits: Sequence[str] | None = None,
    prompts: dict[str, Prompt] | None = None,
    params: dict | None = None,
    inventory: Inventory | None = None,
    progress: bool = True,
    command: str | None = None,
) -> tuple[dict[str, RunSummary], dict[str, Any]]:
    """``biaskit curate cats``: draft StereoSet CATs per target term and split into
    ``<out>.<split>.drafts.jsonl`` (resumable), then rebuild ``out`` (the structurally valid CATs),
    ``<out>.invalid.jsonl`` and ``<out>.retention.json`` from every draft so far (also when the run
    stops early). Returns the run summaries per split and the retention report.

    ``o``: the command's :class:`~biaskit.curation.options.CatsOptions`. ``llm``: a client, or a function
    that makes one; with a function each split gets its own client, so each run log counts only its own
    requests (one shared client counts both). ``splits``: the splits to draft (default: ``o.split``); ``prompts``:
    a template per split (default: ``o.intra_prompt`` / ``o.inter_prompt``); ``params``, ``inventory``: as
    :func:`generate_tuples`. ``lang``: the language the
    CATs are written in (target terms are the inventory's terms in that language)."""
    from .cats import SPLITS, cat_items, cat_targets, drafts_path, write_cats
    from .prompts import get_prompt
    from .tasks import TASKS

    if params is None:
        params = o.params()
    if prompts is None:
        prompts = {
            "intrasentence": get_prompt(o.intra_prompt, o.prompts_dir),
            "intersentence": get_prompt(o.inter_prompt, o.prompts_dir),
        }
    if splits is None:
        splits = list(SPLITS) if o.split == "both" else [o.split]
    domains, targets, lang = o.domains, o.targets, o.lang
    out = Path(o.out)
    if out.suffix.lower() != ".jsonl":
        raise InputError("output must be a .jsonl file.", path=out, fix="name it *.jsonl, e.g. cats.jsonl.")
    bad = [s for s in splits if s not in SPLITS]
    if bad or not splits:
        raise InputError(
            f"unknown split(s) {', '.join(bad) or '(none)'}.", fix="use intrasentence, intersentence or both."
        )
    inv = inventory or load_inventory(o.inventory)
    items = cat_items(
        cat_targets(domains, inventory=inv, targets=targets, lang=lang),
        per_target=o.per_target,
        society=o.society,
        lang=lang,
    )
    summaries: dict[str, RunSummary] = {}
    report: dict[str, Any] = {}
    try:
        for split in splits:
            task = TASKS.get(f"cat_{split}")((prompts or {}).get(split))
            client = llm() if callable(llm) and not isinstance(llm, LLMClient) else llm
            runner = JobRunner(
                client,
                task,
                params=params,
                out=drafts_path(out, split),
                concurrency=o.concurrency,
                retry_failed=o.retry_failed,
                progress=progress,
                command=command,
            )
            summaries[split] = runner.run(items)
    finally:
        # rebuilt from every draft so far (also when the run stops early); nothing drafted yet (no
        # endpoint, every job failed): no empty output is left behind
        if out.exists() or any(drafts_path(out, s).is_file() for s in SPLITS):
            report = write_cats(out, inv)
    return summaries, report
