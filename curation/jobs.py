"""Curation's LLM job runner as the other stages reach it: :data:`JOBS` implements
:class:`biaskit.llm_options.LLMJobs` and is the ``runner`` entry of :data:`biaskit.llm_options.LLM_JOBS`
(registered lazily by ``curation/__init__.py``, so nothing here is imported before it is used).

``annotate prelabel`` (``annotation/prelabel.py``) runs curation's ``prelabel`` task through it: the
price table of ``--prices``, the prompt template, the task from :data:`~.tasks.TASKS`, one
:class:`~.runner.JobRunner` run (cache, resume, errors file, run log, progress) and the lines curation's
commands print about a run or a dry run.
"""

from __future__ import annotations

from pathlib import Path
from typing import Any


class CurationJobs:
    """The job runner's entry points (see the module docstring and :class:`~biaskit.llm_options.LLMJobs`)."""

    def load_prices(self, path: Path | None) -> Any:
        from .llm import load_prices

        return load_prices(path)

    def prompt(self, ref: str, prompts_dir: Any = None) -> Any:
        from .prompts import get_prompt

        return get_prompt(ref, prompts_dir)

    def task(self, name: str, prompt: Any = None, prompts_dir: Any = None) -> Any:
        from .tasks import TASKS

        return TASKS.get(name)(prompt, prompts_dir=prompts_dir)

    def run(self, llm: Any, task: Any, items: list[dict], **runner: Any) -> Any:
        """``JobRunner(llm, task, **runner).run(items)``: the run's summary."""
        from .runner import JobRunner

        return JobRunner(llm, task, **runner).run(items)

    def print_dry_run(self, task: Any, items: list[dict], params: dict, show: int) -> None:
        from .gen_cli import _print_dry_run

        _print_dry_run(task, items, params, show)

    def report_run(self, summary: Any, what: str, *, exit_when_all_failed: bool = True) -> None:
        from .gen_cli import report_run

        report_run(summary, what, exit_when_all_failed=exit_when_all_failed)


JOBS = CurationJobs()
