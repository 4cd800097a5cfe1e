"""The shipped IndiBias intersectional SEAT tests: files match the lexicon, sets are well formed."""
from __future__ import annotations

import json
import re
import unicodedata

from biaskit.evaluation.seat import (DATA_DIR, SETS, builtin_tests, indibias_tests, prepare_sentences, read_seat_test,
                                     resolve_tests)

DEVANAGARI_WORD = re.compile(r"^[\u0900-\u097F]+(?:[ -][\u0900-\u097F]+)*$")


def _lexicon() -> dict:
    return json.loads((DATA_DIR / "indibias" / "lexicon.json").read_text(encoding="utf-8"))


def test_shipped_files_equal_the_lexicon():
    built = indibias_tests(_lexicon())
    index = json.loads((DATA_DIR / "index.json").read_text(encoding="utf-8"))["tests"]
    assert set(index) == set(built) and len(built) == 24
    for rel, (doc, entry) in built.items():
        assert json.loads((DATA_DIR / rel).read_text(encoding="utf-8")) == doc, rel
        assert index[rel] == entry, rel
    on_disk = {p.relative_to(DATA_DIR).as_posix() for p in (DATA_DIR / "indibias").rglob("*.jsonl")}
    assert on_disk == set(built)


def test_sets_are_balanced_distinct_and_in_the_right_script():
    lex = _lexicon()
    for name, s in lex["sets"].items():
        assert len(s["en"]) == len(s["hi"]) and len(set(s["en"])) == len(s["en"]) and len(set(s["hi"])) == len(s["hi"])
        for w in s["en"]:
            assert re.fullmatch(r"[A-Za-z][A-Za-z' -]*", w), (name, w)
        for w in s["hi"]:
            assert DEVANAGARI_WORD.match(w) and unicodedata.normalize("NFC", w) == w, (name, w)
    for t in lex["tests"]:
        assert len(lex["sets"][t["targ1"]]["en"]) == len(lex["sets"][t["targ2"]]["en"])
        assert len(lex["sets"][t["attr1"]]["en"]) == len(lex["sets"][t["attr2"]]["en"])
    # the four name groups do not share a name
    names = [w for k in ("HinduMaleNames", "HinduFemaleNames", "MuslimMaleNames", "MuslimFemaleNames")
             for w in lex["sets"][k]["en"]]
    assert len(names) == len(set(names)) == 32


def test_every_shipped_test_reads_and_bleaches():
    shipped = builtin_tests()
    assert len(resolve_tests(["indibias"])) == 24 and len(resolve_tests(["indibias/hi"])) == 12
    for name, path in shipped.items():
        t = read_seat_test(path)
        lang = name.split("/")[1]
        assert t.lang == lang and t.is_word_list
        assert all(t.sets[k].template for k in SETS)
        sents = prepare_sentences(t)
        end = "।" if lang == "hi" else "."
        assert all(s.endswith(end) for v in sents.values() for s in v), name
        assert len(sents["targ1"]) == len(sents["targ2"]), name
