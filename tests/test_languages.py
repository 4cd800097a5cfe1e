"""A language is data: data/languages/<code>/ read through biaskit.languages, checked by
`biaskit data check-language CODE`, and used by every step (inventory, names, MT codes, SEAT,
guidelines, script detection) without the code naming the language."""

from __future__ import annotations

import json
import random
import shutil

import pytest
from conftest import REPO, run_cli

LANGS = REPO / "data" / "languages"


@pytest.mark.parametrize("code", ["en", "hi", "bn"])
def test_the_shipped_languages_pass_their_check(code, capsys):
    from biaskit.languages import check_language

    rep = check_language(code)
    assert rep.ok, [str(p) for p in rep.problems]
    assert rep.counts["terms"] == 129 and rep.counts["guideline files"] == 6
    status, out, err = run_cli(["data", "check-language", code], capsys)
    assert status == 0, err
    assert out.startswith(f"{code}: ok (129 terms")


def test_a_broken_language_gets_one_line_per_problem_with_file_field_and_fix(tmp_path, capsys):
    root = tmp_path / "languages"
    shutil.copytree(LANGS / "bn", root / "xx")
    info = json.loads((root / "xx" / "language.json").read_text(encoding="utf-8"))
    info.update(code="xy", script="Klingon")
    (root / "xx" / "language.json").write_text(json.dumps(info, ensure_ascii=False), encoding="utf-8")
    inv = json.loads((root / "xx" / "inventory.json").read_text(encoding="utf-8"))
    inv["forms"]["no_such_term"] = {"sg": "কিছু"}
    inv["forms"]["woman"] = {"sg": "woman"}  # Latin in a Bengali-script language
    (root / "xx" / "inventory.json").write_text(json.dumps(inv, ensure_ascii=False), encoding="utf-8")
    seat = json.loads((root / "xx" / "seat.json").read_text(encoding="utf-8"))
    seat["templates"]["adj"] = seat["templates"]["adj"][:2]
    seat["lexicons"]["../../languages/hi"] = {}  # a key names a folder of data/seat, never a path out of it
    (root / "xx" / "seat.json").write_text(json.dumps(seat, ensure_ascii=False), encoding="utf-8")
    status, out, err = run_cli(["data", "check-language", "xx", "--dir", str(root)], capsys)
    assert status == 2 and "ok" not in out
    lines = err.strip().splitlines()
    expect = [
        ("language.json, column 'code'", "code 'xy' is not the folder's name", 'write "code": "xx"'),
        ("language.json, column 'script'", "'Klingon' is not a Unicode script name", "e.g. Latin"),
        ("inventory.json, column 'forms.no_such_term'", "unknown term id 'no_such_term'", "identity_terms.json"),
        ("inventory.json, column 'forms.woman.sg'", "'woman' is written in Latin, not Klingon", "script"),
        ("seat.json, column 'templates.adj'", "2 templates, the English list has 3", "position i"),
        ("seat.json, column 'lexicons.../../languages/hi'", "starts with '.'", "a folder name of data/seat"),
    ]
    for where, what, fix in expect:
        (line,) = [x for x in lines if where in x and what in x]
        assert " Fix: " in line and fix in line.split(" Fix: ", 1)[1], line
    assert all("Traceback" not in x for x in lines)


def test_a_missing_language_and_a_bad_code(tmp_path, capsys):
    status, _, err = run_cli(["data", "check-language", "zz"], capsys)
    assert status == 2 and "no language.json" in err and "docs/languages.md" in err
    # under --dir the line names that folder's file, and the fix no other
    status, _, err = run_cli(["data", "check-language", "zz", "--dir", str(tmp_path)], capsys)
    assert status == 2 and f"{tmp_path / 'zz' / 'language.json'}: no language.json" in err
    assert "data/languages" not in err.split(" Fix: ", 1)[1]
    status, _, err = run_cli(["data", "check-language", "../en"], capsys)
    assert status == 2 and "not a language code" in err


def test_the_inventory_reads_every_languages_forms():
    from biaskit.inventory import load_inventory
    from biaskit.textutil import tokenize

    inv = load_inventory()
    # data/languages/bn/inventory.json: দলিত (sg), দলিতদের (oblique plural), মহিলার (genitive variant)
    found = [(m.term.id, m.form) for m in inv.find(tokenize("দলিতদের কথা মহিলার মুখে শুনলাম।"), "bn")]
    assert found == [("dalit", "obl_pl"), ("woman", "variant")]
    assert inv.lookup("ব্রাহ্মণ", "bn").id == "brahmin" and inv.lookup("ब्राह्मण", "hi").id == "brahmin"
    assert inv.terms["dalit_woman"].surface("bn") == "দলিত মহিলা"
    assert inv.name_info("সৌরভ") == {"origin": "india", "religion": "hindu", "gender": "m"}
    assert inv.name_info("Sourav") == {"origin": "india", "religion": "hindu", "gender": "m"}


def test_adapt_draws_the_target_languages_first_names():
    from biaskit.curation.adapt import replace_names

    from biaskit.inventory import load_inventory

    inv = load_inventory()
    bn = json.loads((LANGS / "bn" / "names.json").read_text(encoding="utf-8"))["names"]
    hi = json.loads((LANGS / "hi" / "names.json").read_text(encoding="utf-8"))["names"]
    for lang, lists in (("bn", bn), ("hi", hi), (None, hi)):  # None: the default target language's
        more, less, mapping, _ = replace_names(
            "Mary went home.", "John went home.", inventory=inv, names="india", rng=random.Random(1), lang=lang
        )
        (f_us, f_new), (m_us, m_new) = mapping
        assert (f_us, m_us) == ("Mary", "John")
        assert f_new in {n["en"] for by_g in lists.values() for n in by_g["f"]}
        assert m_new in {n["en"] for by_g in lists.values() for n in by_g["m"]}
        assert (more, less) == (f"{f_new} went home.", f"{m_new} went home.")


def test_adapt_records_the_names_language_only_when_its_names_were_drawn(tmp_path):
    """``names_lang`` in a pair's provenance says whose name lists gave its names: the india* sets draw
    from the language's names.json; the indibias* sets take IndiBias Table 10's whatever --lang says."""
    from biaskit.curation.adapt import adapt_crows

    crows = tmp_path / "crows.csv"
    crows.write_text(
        ",sent_more,sent_less,stereo_antistereo,bias_type,annotations,anon_writer,anon_annotators\n"
        "0,Mary was sad.,John was sad.,stereo,gender,[],a0,[]\n",
        encoding="utf-8",
    )
    bn = json.loads((LANGS / "bn" / "names.json").read_text(encoding="utf-8"))["names"]
    latin = {n["en"] for by_g in bn.values() for lst in by_g.values() for n in lst}
    (drawn,), _ = adapt_crows(crows, keep=["gender"], names="india", lang="bn")
    assert drawn.provenance["names_lang"] == "bn"
    assert {c["to"] for c in drawn.meta["changes"]} <= latin
    (ranked,), _ = adapt_crows(crows, keep=["gender"], names="indibias", lang="bn")
    assert "names_lang" not in ranked.provenance and ranked.provenance["names"] == "indibias"


def test_language_facts_come_from_the_folders():
    from biaskit.curation.mt_base import flores_code, iso639_3, language_name, mbart_code

    from biaskit import languages as L

    # FLORES-200, mBART-50 and ISO 639-3 codes of Bengali (the models' own code lists)
    assert (flores_code("bn"), mbart_code("bn"), iso639_3("bn"), language_name("bn")) == (
        "ben_Beng",
        "bn_IN",
        "ben",
        "Bengali",
    )
    assert flores_code("ta") == "tam_Taml"  # a language without a folder: the code table
    assert (L.source_code(), L.default_target()) == ("en", "hi")
    assert L.by_script("রাহুল") == "bn" and L.by_script("राहुल") == "hi" and L.by_script("Rahul") == "en"
    assert L.indibias_languages() == ["en", "hi"]  # IndiBias has English and Hindi columns only
    assert L.language("bn").info.display_name == "Bengali (Bengali)"


def test_guidelines_follow_the_records_language():
    from biaskit.annotation.guidelines import default_langs, guidelines_html, parse_langs

    assert default_langs() == ("en", "hi")  # English records: English and the default target
    assert default_langs("bn") == ("en", "bn") and parse_langs(None, "bn") == ("en", "bn")
    h = guidelines_html("translation", "en,bn")
    assert '<div lang="bn"><h1>অ্যানোটেটরদের নির্দেশিকা: অনুবাদ পর্যালোচনা' in h


def test_seat_in_bengali_from_its_data():
    """The release tests' person entries and bleached sentences, worked out from seat.json by hand:
    a group modifies ব্যক্তি / মানুষ in its singular (Bengali adjectives do not agree)."""
    from biaskit.evaluation.seat_release import group_entry
    from biaskit.evaluation.seat_sets import bleach_word, load_lexicon, set_sentences

    from biaskit.inventory import load_inventory

    inv = load_inventory()
    e = group_entry(inv.terms["dalit"], inv, ["en", "bn"])
    assert e == {"en": "Dalit person", "pl": "Dalit people", "bn": "দলিত ব্যক্তি", "bn_pl": "দলিত মানুষ"}
    w = group_entry(inv.terms["woman"], inv, ["en", "bn"])
    assert (w["bn"], w["bn_pl"]) == ("মহিলা", "মহিলারা")
    sents = bleach_word(e, "person", "bn")
    assert sents[0] == "এ একজন দলিত ব্যক্তি।" and sents[10] == "দলিত মানুষ এখানে আছে।" and len(sents) == 13
    lex = load_lexicon()
    kill = set_sentences(
        {"lists": {"x": {"words": [w for w in lex["lists"]["Unpleasant"]["words"] if w["en"] == "kill"]}}}, "x", "bn"
    )
    assert kill[:2] == ["এটা মেরে ফেলবে।", "এটা মেরে ফেলেছে।"]
    assert all("bn" not in t for t in load_lexicon("indibias-team")["tests"])  # no Bengali team lists


def test_init_lang_writes_the_languages_keys_and_leaves_the_default_alone(tmp_path, capsys):
    from biaskit.pipeline.templates import project_template

    status, _, err = run_cli(["init", str(tmp_path / "p"), "--template", "adapt", "--lang", "bn"], capsys)
    assert status == 0, err
    toml = (tmp_path / "p" / "biaskit.toml").read_text(encoding="utf-8")
    for line in ('target = "bn"', 'lang = "bn"', 'guidelines = "en,bn"', 'langs = ["en", "bn"]'):
        assert line in toml
    default = project_template("p", template="adapt")
    assert 'target = "hi"' in default and "guidelines =" not in default and "langs =" not in default
    status, _, err = run_cli(["init", str(tmp_path / "q"), "--lang", "en"], capsys)
    assert status == 2 and "no target language 'en'" in err
