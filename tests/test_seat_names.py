"""Picking names by corpus frequency (IndiBias Appendix G recipe) on a hand-made corpus, counted by hand."""

from __future__ import annotations

import gzip
import json
import unicodedata

import pytest
from biaskit.evaluation.seat_names import count_names, read_candidates, top_names, words
from conftest import run_cli

from biaskit.errors import InputError

# Every occurrence is marked in the comments; counts below are from these comments.
CORPUS_EN = """Rahul met Ram at the station. RAHUL's brother, rahul-kumar, was late.
Ramesh and Raman are not Ram. Ali, Ali and ALI! Alina is not Ali.
Imran waited; imran left. Fatima called Farah. Sania: "Farah?"
Salman Khan is here; salman khan again. Salmanabad is a place.
"""
# Rahul: "Rahul", "RAHUL's", "rahul-kumar" = 3. Ram: "Ram", "Ram." = 2 (Ramesh, Raman don't count).
# Ali: "Ali,", "Ali", "ALI!", "Ali." = 4 (Alina doesn't). Imran: 2. Fatima: 1. Farah: 2. Sania: 1.
# "salman khan" (two words): 2 (Salmanabad doesn't); Salman alone: 2.
NFD_NAZIA = unicodedata.normalize("NFD", "नाज़िया")  # ज + nukta as two code points
CORPUS_HI = f"""राहुल ने राम को देखा। रामायण पुरानी है। राम-राम!
{NFD_NAZIA} और नाज़िया आईं। अली आया॥ अलीगढ़ दूर है।
"""
# राहुल 1; राम: "राम", "राम-राम" = 3 (रामायण doesn't); नाज़िया: one NFD + one NFC = 2; अली 1 (अलीगढ़ doesn't).


def test_words_and_counts_by_hand(tmp_path):
    assert words("RAHUL's rahul-kumar; दिल्ली।") == ["rahul", "s", "rahul", "kumar", "दिल्ली"]
    assert words("डॉक्टर") == ["डॉक्टर"]  # vowel signs and virama stay inside the word
    f = tmp_path / "en.txt"
    f.write_text(CORPUS_EN, encoding="utf-8")
    c = count_names([f], ["Rahul", "ram", "ali", "Imran", "fatima", "farah", "sania", "salman khan", "Salman", "Zoya"])
    assert dict(c) == {
        "Rahul": 3,
        "ram": 2,
        "ali": 4,
        "Imran": 2,
        "fatima": 1,
        "farah": 2,
        "sania": 1,
        "salman khan": 2,
        "Salman": 2,
        "Zoya": 0,
    }
    g = tmp_path / "hi.txt.gz"
    with gzip.open(g, "wt", encoding="utf-8") as fh:
        fh.write(CORPUS_HI)
    c = count_names([g], ["राहुल", "राम", "नाज़िया", "अली"])
    assert dict(c) == {"राहुल": 1, "राम": 3, "नाज़िया": 2, "अली": 1}


def test_top_k_per_group_ranked_with_ties_in_candidate_order(tmp_path):
    (tmp_path / "corpus").mkdir()
    (tmp_path / "corpus" / "a.txt").write_text(CORPUS_EN, encoding="utf-8")
    (tmp_path / "corpus" / "b.txt").write_text("Ram Ram Ram. Sania.\n", encoding="utf-8")  # Ram +3, Sania +1
    cands = {
        "HinduMaleNames": ["ram", "rahul", "suresh"],
        "MuslimMaleNames": ["imran", "ali", "salman"],
        "MuslimFemaleNames": ["sania", "farah", "fatima", "zoya"],
    }
    res = top_names([tmp_path / "corpus"], cands, k=2)
    # ram 2 + 3 = 5 > rahul 3; suresh 0
    assert res["lists"]["HinduMaleNames"]["words"] == [{"en": "ram", "count": 5}, {"en": "rahul", "count": 3}]
    # ali 4 > imran 2 = salman 2: the tie keeps the candidates' order (imran before salman)
    assert [w["en"] for w in res["lists"]["MuslimMaleNames"]["words"]] == ["ali", "imran"]
    # sania 1 + 1 = 2 = farah 2 (tie, candidates' order), fatima 1, zoya 0
    assert [w["en"] for w in res["lists"]["MuslimFemaleNames"]["words"]] == ["sania", "farah"]
    assert res["lists"]["MuslimFemaleNames"]["kind"] == "name"
    res = top_names([tmp_path / "corpus"], cands, k=4)
    assert [w["en"] for w in res["lists"]["HinduMaleNames"]["words"]] == ["ram", "rahul"]  # suresh never occurs
    assert "HinduMaleNames: only 2 of the 3 candidates occur" in res["notes"][0]


def test_candidate_formats(tmp_path):
    csv = tmp_path / "c.csv"
    csv.write_text("group,name\nA,rahul\nA,ram\nB,ali\n", encoding="utf-8")
    assert read_candidates(csv) == {"A": ["rahul", "ram"], "B": ["ali"]}
    js = tmp_path / "c.json"
    js.write_text(json.dumps({"A": ["rahul"], "B": ["ali", "imran"]}), encoding="utf-8")
    assert read_candidates(js) == {"A": ["rahul"], "B": ["ali", "imran"]}
    from biaskit.evaluation.seat_sets import DATA_DIR

    lex = read_candidates(DATA_DIR / "indibias-paper" / "lexicon.json", lang="hi")
    assert set(lex) == {"HinduMaleNames", "MuslimMaleNames", "HinduFemaleNames", "MuslimFemaleNames"}
    assert lex["HinduMaleNames"][0] == "राहुल"
    bad = tmp_path / "bad.csv"
    bad.write_text("grp,name\nA,rahul\n", encoding="utf-8")
    with pytest.raises(InputError, match="missing column"):
        read_candidates(bad)
    with pytest.raises(InputError, match="corpus file not found"):
        top_names([tmp_path / "nope.txt"], {"A": ["rahul"]})


def test_cli_writes_shipped_list_format(tmp_path, capsys):
    corpus = tmp_path / "c.txt"
    corpus.write_text(CORPUS_EN + CORPUS_HI, encoding="utf-8")
    cands = tmp_path / "c.csv"
    cands.write_text(
        "group,name\nHinduMale,rahul\nHinduMale,ram\nHinduMale,राम\nMuslimMale,ali\nMuslimMale,imran\n",
        encoding="utf-8",
    )
    out, counts = tmp_path / "names.json", tmp_path / "counts.csv"
    code, stdout, err = run_cli(
        [
            "evaluate",
            "seat-names",
            "--corpus",
            str(corpus),
            "--candidates",
            str(cands),
            "--top-k",
            "2",
            "--out",
            str(out),
            "--counts",
            str(counts),
        ],
        capsys,
    )
    assert code == 0, err
    doc = json.loads(out.read_text(encoding="utf-8"))
    # राम 3 > rahul 3? a tie: candidates' order keeps rahul (listed first) before राम; ram 2 is third
    assert doc["lists"]["HinduMale"]["words"] == [{"en": "rahul", "count": 3}, {"hi": "राम", "count": 3}]
    assert doc["lists"]["MuslimMale"]["words"] == [{"en": "ali", "count": 4}, {"en": "imran", "count": 2}]
    assert doc["corpus"][0]["path"] == str(corpus) and len(doc["corpus"][0]["sha256"]) == 64
    import pandas as pd

    c = pd.read_csv(counts)
    assert c.set_index("name")["count"].to_dict() == {"rahul": 3, "ram": 2, "राम": 3, "ali": 4, "imran": 2}
    assert c.set_index("name")["kept"].to_dict()["ram"] == False  # noqa: E712 (a numpy bool: `is False` would not match)
    code, _, err = run_cli(
        [
            "evaluate",
            "seat-names",
            "--corpus",
            str(tmp_path / "none.txt"),
            "--candidates",
            str(cands),
            "--out",
            str(out),
        ],
        capsys,
    )
    assert code == 2 and "--corpus" in err and "file not found" in err and "Traceback" not in err
