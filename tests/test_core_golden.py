"""The minimal-pair checker and the pair readers give the same results as the recorded ones in
tests/golden/core/ (issue 30: ``check_pair`` and ``_pair_rows`` were split into named steps; their
output must not change).

Every input is made here from the shipped demo pairs (data/demo/demo_pairs.jsonl: English and Hindi
views of the same pairs): each pair checked alone and, for a Hindi view, against its English source,
then four variants of it that each raise a flag (identical, punctuation only, a second changed word,
a collapsed translation); and the demo pairs written in each layout the readers take (CrowS-Pairs,
IndiBias, biaskit CSV and JSONL), read back as records.

The recorded copies were written by the code before the change (``BIASKIT_UPDATE_GOLDEN=1 pytest
tests/test_core_golden.py`` rewrites them: only for a change that means to change an output).
"""

from __future__ import annotations

import csv
import json
import os
from pathlib import Path

GOLDEN = Path(__file__).parent / "golden" / "core"
REPO = Path(__file__).resolve().parent.parent
DEMO = REPO / "data" / "demo" / "demo_pairs.jsonl"
UPDATE = os.environ.get("BIASKIT_UPDATE_GOLDEN") == "1"


def _demo() -> list[dict]:
    return [json.loads(line) for line in DEMO.read_text(encoding="utf-8").splitlines() if line.strip()]


def _compare(name: str, got: object) -> None:
    path = GOLDEN / name
    text = json.dumps(got, ensure_ascii=False, indent=1, sort_keys=True) + "\n"
    if UPDATE:
        path.parent.mkdir(parents=True, exist_ok=True)
        path.write_text(text, encoding="utf-8")
    want = json.loads(path.read_text(encoding="utf-8"))
    assert json.loads(text) == want, f"{name} differs from the recorded copy"


def _variants(p: dict) -> dict[str, dict]:
    """The pair and four variants of it, each made to raise one of the checker's flags."""
    more, less = p["sent_more"], p["sent_less"]
    words = less.split()
    return {
        "as is": p,
        "identical": {**p, "sent_less": more},
        "punctuation only": {**p, "sent_less": more.rstrip("।.") + " !"},
        "a second word changed": {**p, "sent_less": " ".join([*words[:-1], "XYZ" + words[-1]])},
    }


def test_check_pair_flags_are_the_recorded_ones():
    from biaskit.check import check_pair
    from biaskit.inventory import load_inventory

    inv = load_inventory()
    pairs = _demo()
    english = {p["source_id"]: p for p in pairs if p["lang"] == "en"}
    got = []
    for p in pairs:
        source = english.get(p["source_id"]) if p["lang"] != "en" else None
        for variant, q in _variants(p).items():
            flags = check_pair(q, source_pair=source, inventory=inv)
            got.append([p["pair_id"], variant, [f.as_dict() for f in flags]])
    codes = {f["code"] for _, _, fl in got for f in fl}
    # the variants reach every flag of one pair (duplicates need the whole file: check_pairs)
    assert {"identical", "trivial_diff", "multi_span", "translation_collapsed"} <= codes, codes
    _compare("check_pair.json", got)


def _write_csv(path: Path, header: list[str], rows: list[list]) -> Path:
    with path.open("w", encoding="utf-8", newline="") as f:
        w = csv.writer(f)
        w.writerow(header)
        w.writerows(rows)
    return path


def test_the_readers_give_the_recorded_records(tmp_path):
    from biaskit.readers import read_pairs

    pairs = _demo()
    en = [p for p in pairs if p["lang"] == "en"]
    hi = {p["source_id"]: p for p in pairs if p["lang"] == "hi"}
    files = {
        "crows": _write_csv(
            tmp_path / "crows.csv",
            ["", "sent_more", "sent_less", "stereo_antistereo", "bias_type", "annotations"],
            [
                [i, p["sent_more"], p["sent_less"], p["direction"], p["bias_type"], "[['gender']]"]
                for i, p in enumerate(en)
            ],
        ),
        "indibias": _write_csv(
            tmp_path / "indibias.csv",
            ["", "index", "modified_eng_sent_more", "modified_eng_sent_less", "sent_more_hindi", "sent_less_hindi"]
            + ["bias_type", "stereo_antistereo"],
            [
                [i, 100 + i]
                # IndiBias is positional: an antistereo row holds S1 = sent_less, S2 = sent_more
                + (
                    [p["sent_less"], p["sent_more"], hi[p["source_id"]]["sent_less"], hi[p["source_id"]]["sent_more"]]
                    if p["direction"] == "antistereo"
                    else [
                        p["sent_more"],
                        p["sent_less"],
                        hi[p["source_id"]]["sent_more"],
                        hi[p["source_id"]]["sent_less"],
                    ]
                )
                + [p["bias_type"], p["direction"]]
                for i, p in enumerate(en)
                if p["source_id"] in hi
            ],
        ),
        "biaskit csv": _write_csv(
            tmp_path / "pairs.csv",
            ["pair_id", "sent_more", "sent_less", "direction", "bias_type", "lang", "provenance", "meta"],
            [
                [p["pair_id"], p["sent_more"], p["sent_less"], p["direction"], p["bias_type"], p["lang"]]
                + [json.dumps(p.get("provenance") or {}, ensure_ascii=False), ""]
                for p in pairs
            ],
        ),
        "biaskit jsonl": DEMO,
    }
    got = {}
    for name, path in files.items():
        for lang in (None, "hi") if name == "indibias" else (None,):
            res = read_pairs(path, lang=lang)
            records = [p.model_dump(mode="json") for p in res.pairs]
            got[f"{name} {lang or 'all'}"] = [res.format, len(res.skipped), records]
    assert len(got["indibias all"][2]) == 2 * len(got["indibias hi"][2]) > 0
    _compare("readers.json", got)
