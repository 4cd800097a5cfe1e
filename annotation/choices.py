"""Choices of annotate options whose code lives in modules that also read the options models
(:mod:`.options` imports these, and so does :mod:`.labelstudio`: one level below both, so the models
never import the code that takes them)."""

from __future__ import annotations

# annotate pull --export: how annotations leave Label Studio (auto: an export snapshot for a large
# project, labelstudio.SNAPSHOT_MIN_TASKS tasks on, else the plain task list)
EXPORT_MODES = ("auto", "plain", "snapshot")
