"""StereoSet test helpers: write rows of the flattened dev set in the original ``dev.json`` format.

The original format (Nadeem et al. 2021's release, what ``biaskit data download stereoset-dev``
fetches) is ``{"version", "data": {"intrasentence": [{id, target, bias_type, context, sentences:
[{id, sentence, gold_label, labels: [{human_id, label}]}]}], "intersentence": [...]}}``. The shared
mirror only has the flattened text; :func:`to_original` writes the same text in the original layout
(sentences in a shuffled order, upstream-style ids, five validator labels per sentence), so a test can
check that both formats give the same CATs.
"""

from __future__ import annotations

import hashlib
import json
import random
from pathlib import Path

LABELS = ("stereotype", "anti-stereotype", "unrelated")


def flat_rows(path: Path) -> list[dict]:
    return [json.loads(line) for line in path.read_text(encoding="utf-8").splitlines() if line.strip()]


def shared_context_rows(path: Path) -> list[tuple[int, dict]]:
    """(line, row) of every CAT whose split, target and context another CAT also has."""
    rows = flat_rows(path)
    groups: dict[tuple, list[int]] = {}
    for i, r in enumerate(rows, start=1):
        groups.setdefault((r["type"], r["target"], r["context"]), []).append(i)
    return [(i, rows[i - 1]) for g in groups.values() if len(g) > 1 for i in g]


def _hexid(*parts) -> str:
    return hashlib.md5("|".join(map(str, parts)).encode()).hexdigest()  # upstream ids look like this


def to_original(rows: list[dict], seed: int = 0) -> dict:
    """The original StereoSet document for flat ``rows`` (same text, same order within a split)."""
    rnd = random.Random(seed)
    data: dict[str, list] = {"intrasentence": [], "intersentence": []}
    for n, r in enumerate(rows):
        sents = []
        for lab in LABELS:
            sid = _hexid("s", n, lab)
            # validators: four agree with the gold label, the fifth says "related" (as in the release)
            labels = [{"human_id": _hexid("h", n, lab, k), "label": lab if k < 4 else "related"} for k in range(5)]
            sents.append({"id": sid, "sentence": r[lab], "gold_label": lab, "labels": labels})
        rnd.shuffle(sents)  # the release does not list the options in label order
        data[r["type"]].append(
            {
                "id": _hexid("ex", n),
                "target": r["target"],
                "bias_type": r["bias_type"],
                "context": r["context"],
                "sentences": sents,
            }
        )
    return {"version": "1.0-dev", "data": data}
