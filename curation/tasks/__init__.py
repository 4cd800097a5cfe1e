"""LLM tasks: one class per kind of request (tuples, sentences, pair rewrites, translations).

Every module of this package is imported when the package is, and registers its task classes in
:data:`TASKS` with ``@TASKS.register("name")``: adding a task is adding one file here (plus its
prompt template in ``prompts/``). The job runner (:mod:`biaskit.curation.runner`) runs any of
them; see :mod:`.base` for the interface and docs/curation.md for a worked example.
"""

from __future__ import annotations

import importlib
import pkgutil

from biaskit.registry import Registry

TASKS: Registry = Registry("LLM task")

from .base import Task, TaskError, TaskOutput  # noqa: E402 (after TASKS, which the task modules register into)

for _m in pkgutil.iter_modules(__path__):
    if _m.name != "base" and not _m.name.startswith("_"):
        importlib.import_module(f"{__name__}.{_m.name}")

__all__ = ["TASKS", "Task", "TaskError", "TaskOutput"]
