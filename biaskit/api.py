"""The Python API for notebooks (docs/python-api.md): ``import biaskit`` then

- ``biaskit.load_release(DIR)`` -> :class:`~biaskit.release.frames.Release` (pandas DataFrames per
  config and split);
- ``biaskit.evaluate_pairs(release_or_frame, model=..., protocol=...)`` ->
  :class:`~biaskit.evaluation.api.PairsResult` (the per-pair frame, the summary, the plots).

Like the CLI root, this module sits above the stages (docs/architecture.md): it only re-exports
their functions. ``biaskit/__init__.py`` imports it on first use of one of these names, so
``import biaskit`` stays light.
"""

from __future__ import annotations

from .evaluation.api import PairsResult, evaluate_pairs
from .release.frames import Release, load_release

__all__ = ["PairsResult", "Release", "evaluate_pairs", "load_release"]
