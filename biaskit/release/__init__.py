"""Releases: validated records + stage reports -> a published, documented, checked dataset folder.

- :func:`build_release` (``biaskit release build``): pairs.jsonl, Parquet for Hugging Face
  ``datasets``, CrowS-Pairs/IndiBias CSV, StereoSet JSON, dev/test splits disjoint by target term,
  a dataset card that is also a datasheet and data statement, stats.json + plots, SHA256SUMS,
  release.json.
- :func:`verify_release` (``biaskit release verify``; ``ReleaseVerifyOptions(hub_ready=True)``: also what
  the Hugging Face Hub would reject), :func:`diff_releases` (``biaskit release diff``).
- :func:`biaskit.release.lmeval.export_lm_eval` (``biaskit release export``): lm-evaluation-harness tasks
  (``ReleaseExportOptions(lm_eval=DIR)``).
- :mod:`biaskit.release.read`: what the evaluators call to read a release.

The folder layout is in :mod:`biaskit.release.layout`. No stage package is imported here: stage
reports are read as data.
"""

from __future__ import annotations

from .build import BuildOptions, BuildSummary, build_release
from .diff import diff_markdown, diff_releases
from .options import ReleaseExportOptions, ReleaseVerifyOptions
from .verify import VerifyResult, verify_release

__all__ = [
    "BuildOptions",
    "BuildSummary",
    "build_release",
    "diff_releases",
    "diff_markdown",
    "ReleaseExportOptions",
    "ReleaseVerifyOptions",
    "VerifyResult",
    "verify_release",
]
