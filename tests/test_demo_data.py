"""The shipped demo passes biaskit's own minimal-pair checker, with inventories that know its groups
in both languages (kinship, ages, Indian regions and places in Hindi, class, disability)."""

from __future__ import annotations

import json
from pathlib import Path

import pytest
from conftest import run_cli

REPO = Path(__file__).resolve().parents[1]
DEMO = REPO / "data" / "demo" / "demo_pairs.jsonl"


def test_demo_passes_check_strict(tmp_path, capsys):
    code, out, err = run_cli(
        ["curate", "check", "--pairs", str(DEMO), "--out", str(tmp_path / "c.jsonl"), "--strict"], capsys
    )
    assert code == 0, out + err
    assert "32 pairs (64 language views: en 32, hi 32), 0 flagged" in out
    rows = [json.loads(x) for x in (tmp_path / "c.jsonl").read_text(encoding="utf-8").splitlines()]
    assert len(rows) == 64 and not any(r["flags"] for r in rows)
    # every changed span names a group (none is classified "other")
    assert all(kind != "other" for r in rows for *_, kind in r["diff"]["spans"])


@pytest.mark.parametrize(
    "en, hi, term",
    [
        ("daughter-in-law", "बहू", "daughter_in_law"),
        ("son-in-law", "दामाद", "son_in_law"),
        ("twenty-year-old", "बीस साल की", "age_20"),
        ("seventy-year-old", "सत्तर साल का", "age_70"),
        ("South Indians", "दक्षिण भारतीयों", "south_indian"),
        ("North Indians", "उत्तर भारतीयों", "north_indian"),
        ("North-East", "पूर्वोत्तर", "northeast"),
        ("Bihar", "बिहार", "place_bihar"),
        ("Delhi", "दिल्ली", "place_delhi"),
        ("Gujarat", "गुजरात", "place_gujarat"),
        ("slum", "झुग्गी", "slum"),
        ("housing society", "सोसाइटी", "housing_society"),
        ("paralysed", "लकवाग्रस्त", "disabled"),
        ("healthy", "तंदुरुस्त", "able_bodied"),
        ("schizophrenia", "सिज़ोफ़्रेनिया", "mental_illness"),
        ("diabetes", "मधुमेह", "physical_illness"),
    ],
)
def test_the_same_concept_in_both_languages(en, hi, term):
    from biaskit.inventory import load_inventory

    inv = load_inventory()
    assert inv.lookup(en, "en").id == term
    assert inv.lookup(hi, "hi").id == term


def test_every_term_has_both_languages_and_places_are_not_offered_as_identities():
    from biaskit.inventory import load_inventory

    raw = json.loads((REPO / "data" / "inventories" / "identity_terms.json").read_text(encoding="utf-8"))
    hindi = json.loads((REPO / "data" / "languages" / "hi" / "inventory.json").read_text(encoding="utf-8"))["forms"]
    for axis, entries in raw["axes"].items():
        for e in entries:
            assert e["en"].get("sg") and hindi[e["id"]].get("sg"), (axis, e["id"])
    inv = load_inventory()
    en = inv.identities("region", "en")
    assert "Bihari" in en and "Bihar" not in en and "Delhi" not in en
    assert "बिहारी" in inv.identities("region", "hi") and "बिहार" not in inv.identities("region", "hi")
    # comparable groups name known terms in both directions
    other, side = inv.comparable_of(inv.terms["daughter_in_law"])
    assert other.id == "son_in_law" and side == "disadvantaged"
