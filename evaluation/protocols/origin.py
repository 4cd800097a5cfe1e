"""The data's origin, per evaluate command: which paper's protocol a run follows by default."""

from __future__ import annotations

import re
from collections.abc import Sequence
from typing import Any

from biaskit.errors import BiaskitError
from biaskit.options import say
from biaskit.origin import FORMAT_PROTOCOL, protocol_of_provenance

from .base import Origin

# the sent-bias test files (May et al. 2019): weatN, weatNb, sent-weatN, the ABW and double-bind tests
_SENT_BIAS = re.compile(r"^(sent-)?(weat\d+b?|angry_black_woman_stereotype(_b)?|heilman_double_bind_[a-z0-9_+-]+)$")


def _release(info: dict | None) -> Origin | None:
    if not info:
        return None
    name = info.get("protocol")
    if name:
        return Origin(name, f"release {info.get('release')} {info.get('version')} (release.json protocol)")
    return None


def pairs_origin(fmt: str, pairs: Sequence[Any], release: dict | None = None) -> Origin:
    """The origin of minimal pairs read by :func:`biaskit.readers.read_pairs` or from a release."""
    rel = _release(release)
    if rel:
        return rel
    if fmt in ("crows", "indibias"):
        return Origin(FORMAT_PROTOCOL[fmt], {"crows": "a CrowS-Pairs CSV", "indibias": "an IndiBias CSV"}[fmt])
    name, what = protocol_of_provenance(getattr(p, "provenance", None) for p in pairs)
    where = f"release {release.get('release')} {release.get('version')}: " if release else ""
    return Origin(name, where + what)


def cats_origin(fmt: str, cats: Sequence[Any], release: dict | None = None) -> Origin:
    """The origin of CATs (StereoSet's dev.json or its flattened JSONL -> ``stereoset``)."""
    rel = _release(release)
    if rel:
        return rel
    if fmt in ("stereoset", "flat"):
        return Origin("stereoset", "StereoSet data")
    name, what = protocol_of_provenance(getattr(c, "provenance", None) for c in cats)
    where = f"release {release.get('release')} {release.get('version')}: " if release else ""
    return Origin(name if name == "stereoset" else None, where + what)


def seat_test_origin(test: Any) -> Origin:
    """One SEAT test: biaskit's shipped IndiBias tests -> ``indibias-seat``; sent-bias's tests ->
    ``seat-may2019``; anything else -> no protocol."""
    fam = (getattr(test, "meta", None) or {}).get("family")
    if fam in ("indibias-paper", "indibias-team"):
        return Origin("indibias-seat", f"biaskit's shipped {fam} tests")
    if fam == "indibias-release":  # biaskit.evaluation.seat_release: IndiBias's method on a release's groups
        return Origin("indibias-seat", "IndiBias-style tests from a release's groups")
    if _SENT_BIAS.match(getattr(test, "name", "")):
        return Origin("seat-may2019", "a sent-bias test (May et al. 2019)")
    return Origin(None, f"test {getattr(test, 'name', '?')} (not a shipped IndiBias or sent-bias test)")


def seat_origin(tests: Sequence[Any]) -> Origin:
    """The one origin of several SEAT tests; tests of two papers in one run need --protocol."""
    origins = [seat_test_origin(t) for t in tests]
    names = sorted({o.protocol or "none" for o in origins})
    if len(names) > 1:
        raise BiaskitError(
            f"these SEAT tests come from different sources ({', '.join(names)}), whose papers ran "
            f"SEAT differently. Fix: run each set on its own, or pass {say('protocol', 'NAME')} (or none) "
            "to use one setup for all"
        )
    return origins[0] if origins else Origin(None, "no test")
