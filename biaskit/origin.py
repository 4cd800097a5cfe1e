"""Where records came from, as a paper protocol name (``crows``, ``indibias``, ``stereoset``, ...).

The evaluators default to the protocol of the data's origin (docs/fidelity.md) and ``biaskit release
build`` records it in ``release.json``; both ask :func:`protocol_of_provenance`. This module knows
the protocol *names* only (the protocols themselves are ``biaskit.evaluation.protocols``).
"""

from __future__ import annotations

from collections import Counter
from collections.abc import Iterable
from typing import Any

# the protocols' names (biaskit.evaluation.protocols.PROTOCOLS; tests/test_protocols.py keeps them equal)
PROTOCOL_NAMES = ("cao2022", "crows", "indibias", "indibias-seat", "seat-may2019", "stereoset")
# provenance["source"] written by the readers -> the protocol of that dataset's paper
SOURCE_PROTOCOL = {"crows-pairs": "crows", "indibias": "indibias"}
FORMAT_PROTOCOL = {"crows": "crows", "indibias": "indibias", "stereoset": "stereoset", "flat": "stereoset"}
# provenance["task"] of the LLM tasks that draft StereoSet-style CATs (curation/tasks/cat_*.py): a CAT the
# pipeline drafted is scored as StereoSet scored its CATs
CAT_TASKS = ("cat_intrasentence", "cat_intersentence")


def protocol_of_provenance(provenances: Iterable[Any]) -> tuple[str | None, str]:
    """``(protocol or None, what)`` for records with these ``provenance`` dicts: CrowS-Pairs rows ->
    ``crows`` (adapted to India by ``curate adapt`` -> ``indibias``, IndiBias §4.2.1), IndiBias rows ->
    ``indibias``, StereoSet CATs and CATs drafted by ``curate cats`` (StereoSet's design, sec. 4) ->
    ``stereoset``; a mixture or anything else -> None."""
    found: Counter = Counter()
    other: Counter = Counter()
    for prov in provenances:
        prov = prov if isinstance(prov, dict) else {}
        src = str(prov.get("release_source") or prov.get("source") or "")
        if prov.get("format") in ("stereoset", "flat"):
            found["stereoset"] += 1
        elif prov.get("task") in CAT_TASKS:
            found["drafted"] += 1
        elif src == "crows-pairs" and prov.get("adapted_by"):
            found["indibias"] += 1
        elif src in SOURCE_PROTOCOL:
            found[SOURCE_PROTOCOL[src]] += 1
        elif src in ("translation-review", "cat-translation-review"):
            continue  # a translated view (or CAT) inherits its source's origin
        else:
            found[None] += 1
            other[src or "no source"] += 1
    known = {k: n for k, n in found.items() if k}
    if set(known) == {"drafted"} and None not in found:
        return "stereoset", "StereoSet-style CATs drafted by `biaskit curate cats`"
    if set(known) == {"stereoset", "drafted"} and None not in found:
        return "stereoset", "StereoSet CATs and StereoSet-style CATs drafted by `biaskit curate cats`"
    if len(known) == 1 and None not in found:
        name = next(iter(known))
        return name, {"crows": "CrowS-Pairs records", "indibias": "IndiBias records", "stereoset": "StereoSet CATs"}[
            name
        ]
    if not found:
        return None, "no provenance"
    parts = [f"{k}: {n}" for k, n in sorted(known.items())] + [f"source {k}: {n}" for k, n in sorted(other.items())]
    return None, "records of " + ("mixed" if len(parts) > 1 else "unknown") + " origin (" + ", ".join(parts) + ")"
