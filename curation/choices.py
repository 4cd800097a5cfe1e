"""Choices of curate options whose code lives in modules that also read the options models
(:mod:`.pair_options` imports these, and so does :mod:`.adapt`: one level below both, so the models
never import the code that takes them)."""

from __future__ import annotations

# curate adapt --keep: the CrowS-Pairs bias types kept by default, the five IndiBias §4.2.1 filters
# CrowS-Pairs to (race, religion, nationality and sexual orientation are dropped there)
DEFAULT_KEEP = ("gender", "age", "disability", "physical-appearance", "socioeconomic")
# curate adapt --names: the name sets that replace Western first names
NAME_SETS = (
    "indibias",
    "indibias-hindu",
    "indibias-muslim",
    "india",
    "india-hindu",
    "india-muslim",
    "india-christian",
    "india-sikh",
    "none",
)
