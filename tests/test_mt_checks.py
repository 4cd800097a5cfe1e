"""Checks on translated pairs: real IndiBias pairs (its English -> its own Hindi as a "candidate")
and hand-made cases for each MT flag."""

from __future__ import annotations

import pytest

from biaskit.mt_checks import (
    check_candidate,
    diff_spans,
    entity_carried,
    mt_flags,
    named_entities,
    script_share,
    skeleton,
    spell_out,
    tokens,
)
from biaskit.readers import read_pairs
from biaskit.schema import SentencePair

pytest.importorskip("anyascii")


@pytest.fixture(scope="module")
def indibias(request):
    from conftest import public_dataset

    path = public_dataset("indibias-sample")
    en = read_pairs(path, lang="en").pairs
    hi = read_pairs(path, lang="hi", skip_invalid=True)
    by_src = {p.source_id: p for p in hi.pairs}
    return en, by_src, hi


def _codes(flags):
    return sorted({f["code"] for f in flags})


def _cand(en, by_src, row):
    """IndiBias data row (0-based) -> (English pair, its Hindi sentences)."""
    p = en[row]
    assert p.provenance["row"] == row + 1
    h = by_src.get(p.source_id)
    return p, h


def test_identical_hindi_is_collapsed_with_suggestion(indibias):
    en, by_src, hi = indibias
    # IndiBias row 484: "constable" / "gambler" both became the same Hindi sentence
    (bad,) = [e for e in hi.skipped if e.row == 485]
    assert "identical" in str(bad)
    p = en[484]
    import pandas as pd
    from conftest import public_dataset

    row = pd.read_csv(public_dataset("indibias-sample")).iloc[484]
    flags = check_candidate(p, row.sent_more_hindi, row.sent_less_hindi, "hi")
    assert {"identical", "translation_collapsed"} <= set(_codes(flags))
    col = next(f for f in flags if f["code"] == "translation_collapsed")
    assert "constable" in col["reason"] and "gambler" in col["reason"]


def test_hindi_not_minimal_while_english_is(indibias):
    en, by_src, _ = indibias
    p, h = _cand(en, by_src, 1)  # vaishya/brahmin; Hindi also swaps मकान मालिक -> जमींदार
    flags = check_candidate(p, h.sent_more, h.sent_less, "hi")
    assert "translation_not_minimal" in _codes(flags)
    assert "जमींदार" in next(f for f in flags if f["code"] == "translation_not_minimal")["reason"]


def test_clean_real_pair_has_no_flags(indibias):
    en, by_src, _ = indibias
    p, h = _cand(en, by_src, 0)  # The brahmin / The OBC family lived in a luxurious mansion.
    assert check_candidate(p, h.sent_more, h.sent_less, "hi") == []


def test_entity_not_carried_over_on_real_pair(indibias):
    en, by_src, _ = indibias
    p, h = _cand(en, by_src, 248)  # English "Rani", Hindi has अंजलि instead
    flags = mt_flags(p.sent_more, p.sent_less, h.sent_more, h.sent_less, "hi")
    assert [(f["code"], f["sentence"], f["entities"]) for f in flags] == [("entity_missing", "sent_more", ["Rani"])]


def test_untranslated_latin_on_real_pair(indibias):
    en, by_src, _ = indibias
    p, h = _cand(en, by_src, 376)  # "CEO" left in Latin letters by the translators
    flags = mt_flags(p.sent_more, p.sent_less, h.sent_more, h.sent_less, "hi")
    assert {(f["code"], tuple(f["words"])) for f in flags} == {("untranslated_latin", ("CEO",))}


# Hand-written Devanagari spellings (variants the IndiBias translators used) of every given name that
# occurs in the English side of the IndiBias sample: an independent check of ``entity_missing``.
NAMES_HI = {
    "Aamir": "आमिर",
    "Abdul": "अब्दुल",
    "Abhishek": "अभिषेक",
    "Aditi": "अदिति",
    "Ahmad": "अहमद",
    "Akhtar": "अख्तर|अख़्तर",
    "Ali": "अली",
    "Anand": "आनंद|आनन्द",
    "Anjali": "अंजलि|अंजली",
    "Arun": "अरुण",
    "Dilip": "दिलीप",
    "Durga": "दुर्गा",
    "Faisal": "फैसल|फ़ैसल",
    "Farah": "फराह|फ़राह|फरह|फ़रह",
    "Farida": "फरीदा|फ़रीदा",
    "Ibrahim": "इब्राहिम|इब्राहीम",
    "Imran": "इमरान",
    "Junaid": "जुनैद",
    "Kabir": "कबीर",
    "Kajal": "काजल",
    "Mamata": "ममता",
    "Manisha": "मनीषा",
    "Najma": "नजमा|नज़मा",
    "Nazia": "नाज़िया|नाजिया",
    "Omar": "उमर|ओमर",
    "Pankaj": "पंकज",
    "Poonam": "पूनम",
    "Prakash": "प्रकाश",
    "Preeti": "प्रीती|प्रीति",
    "Rahul": "राहुल",
    "Raj": "राज",
    "Rajendra": "राजेंद्र|राजेन्द्र",
    "Ram": "राम",
    "Rani": "रानी",
    "Ravindra": "रविंद्र|रवींद्र|रविन्द्र",
    "Rohit": "रोहित",
    "Ruhi": "रूही|रुही",
    "Sabina": "सबीना",
    "Saeed": "सईद",
    "Saif": "सैफ",
    "Saira": "सायरा|सैरा",
    "Sajid": "साजिद",
    "Salim": "सलीम",
    "Sania": "सानिया",
    "Shabana": "शबाना",
    "Shabnam": "शबनम",
    "Smriti": "स्मृति",
    "Sonali": "सोनाली",
    "Sudhir": "सुधीर",
    "Sultana": "सुल्ताना|सुलताना",
    "Sunil": "सुनील|सुनिल",
    "Sunita": "सुनीता|सुनिता",
    "Suresh": "सुरेश",
    "Sushma": "सुषमा",
    "Swati": "स्वाति|स्वाती",
}


def _columns(direction: str) -> list[tuple[str, str, str]]:
    """(English column, Hindi column, biaskit name) of a raw IndiBias row. The file is positional:
    ``*_more*`` = the paper's S1, ``*_less*`` = S2; for antistereo rows S2 is the more stereotypical
    sentence (IndiBias §6.1.1, Eq. 4, Fig. 9), i.e. biaskit's ``sent_more``."""
    s1 = ("modified_eng_sent_more", "sent_more_hindi")
    s2 = ("modified_eng_sent_less", "sent_less_hindi")
    more, less = (s2, s1) if direction == "antistereo" else (s1, s2)
    return [(*more, "sent_more"), (*less, "sent_less")]


def _names_missing(df) -> set[tuple[int, str, str]]:
    """(0-based row, sentence, name) where an English given name has none of its Devanagari spellings
    among the words of the Hindi sentence (NFC, nukta ignored)."""
    import re
    import unicodedata

    def nf(t: str) -> str:
        return unicodedata.normalize("NFC", t).replace("\u093c", "")

    out = set()
    for i, r in df.iterrows():
        for en, hi, which in _columns(r["stereo_antistereo"]):
            words = set(re.split(r"[\s,।.!?;:'\"()|-]+", nf(str(r[hi]))))
            for name, forms in NAMES_HI.items():
                if re.search(rf"\b{name}\b", str(r[en])) and not any(nf(f) in words for f in forms.split("|")):
                    out.add((i, which, name))
    return out


def test_flag_rates_on_the_whole_sample(indibias):
    """The MT checks on IndiBias' own (human) translations, against counts derived independently
    from the raw file with pandas: Latin-letter words, length ratios, script shares, and given names
    checked against a hand-written table of their Devanagari spellings."""
    en, by_src, _ = indibias
    import re
    import unicodedata

    import pandas as pd
    from conftest import public_dataset

    df = pd.read_csv(public_dataset("indibias-sample"))
    flags: dict[str, set] = {}
    latin_words = {}
    assert len(en) == len(df)
    for i, (p, r) in enumerate(zip(en, df.to_dict("records"), strict=False)):
        # the reader's English pair and the raw row's Hindi sentences in the same roles (S1/S2 by direction)
        (en_more, hi_more, _), (en_less, hi_less, _) = _columns(r["stereo_antistereo"])
        assert (p.provenance["row"], p.sent_more, p.sent_less) == (i + 1, r[en_more], r[en_less])
        for f in mt_flags(p.sent_more, p.sent_less, r[hi_more], r[hi_less], "hi"):
            flags.setdefault(f["code"], set()).add((i, f["sentence"]))
            if f["code"] == "untranslated_latin":
                latin_words[(i, f["sentence"])] = f["words"]
    sents = [
        (i, which, str(df.iloc[i][col]), str(df.iloc[i][src]))
        for i in range(len(df))
        for src, col, which in _columns(df.iloc[i]["stereo_antistereo"])
    ]
    latin = {(i, w): re.findall(r"[A-Za-z]{2,}", hi) for i, w, hi, _ in sents if re.search(r"[A-Za-z]{2,}", hi)}
    assert sorted(w for ws in latin.values() for w in ws) == ["CEO"] * 4 + ["IQ", "average"]  # read off the file
    # row 207 is antistereo: its Latin words are in sent_more_hindi = S1 = biaskit's sent_less
    assert latin[(207, "sent_less")] == ["average", "IQ"]
    assert flags.get("untranslated_latin", set()) == set(latin)
    assert latin_words == latin
    long_short = {(i, w) for i, w, hi, src in sents if not 0.5 <= len(hi.strip()) / len(src.strip()) <= 2.0}
    assert flags.get("length_ratio", set()) == long_short == set()

    def deva_share(t: str) -> float:
        letters = [c for c in t if unicodedata.category(c)[0] in "LM"]
        return sum("DEVANAGARI" in unicodedata.name(c, "") for c in letters) / max(1, len(letters))

    assert flags.get("wrong_script", set()) == {(i, w) for i, w, hi, _ in sents if deva_share(hi) < 0.5} == set()
    # names: the rule must find every missing name it reports (precision); rows 248 (Rani -> अंजलि)
    # and 454 (Swati -> अंजलि in both sentences) are the only real misses in the file
    missing = _names_missing(df)
    assert {(i, w, n) for i, w, n in missing} == {
        (248, "sent_more", "Rani"),
        (454, "sent_more", "Swati"),
        (454, "sent_less", "Swati"),
    }
    assert flags.get("entity_missing", set()) <= {(i, w) for i, w, _ in missing}
    assert {(248, "sent_more"), (454, "sent_more"), (454, "sent_less")} <= flags["entity_missing"]
    assert set(flags) == {"untranslated_latin", "entity_missing"}


def test_sentence_initial_unchanged_name_is_checked(indibias):
    # IndiBias row 454: "Swati" starts both English sentences; both Hindi sentences say अंजलि
    en, by_src, _ = indibias
    p, h = _cand(en, by_src, 454)
    flags = mt_flags(p.sent_more, p.sent_less, h.sent_more, h.sent_less, "hi")
    assert [(f["code"], f["sentence"], f["entities"]) for f in flags] == [
        ("entity_missing", "sent_more", ["Swati"]),
        ("entity_missing", "sent_less", ["Swati"]),
    ]


def test_sentence_initial_given_name_hand_made():
    # the same sentence-initial name in both sentences is an entity when it is a known given name
    # (Priya and Kabir are in data/languages/hi/names.json; "Despite" and "Numerous" are not names)
    assert named_entities(
        "Priya went to the market because she is poor.", "Priya went to the market because she is rich."
    ) == ["Priya"]
    assert named_entities("Despite the rain, the poor man went out.", "Despite the rain, the rich man went out.") == []
    assert named_entities("Numerous Dalits live here.", "Numerous Brahmins live here.") == ["Dalits"]
    carried = mt_flags("Kabir is poor.", "Kabir is rich.", "कबीर गरीब है।", "कबीर अमीर है।", "hi")
    assert carried == []
    replaced = mt_flags("Kabir is poor.", "Kabir is rich.", "राहुल गरीब है।", "कबीर अमीर है।", "hi")
    assert [(f["code"], f["sentence"], f["entities"]) for f in replaced] == [("entity_missing", "sent_more", ["Kabir"])]


def test_tokens_keep_devanagari_words_whole():
    assert tokens("इंजीनियरिंग की छात्रा,अंजलि के लिए था। Muslim-owned |") == [
        "इंजीनियरिंग",
        "की",
        "छात्रा",
        "अंजलि",
        "के",
        "लिए",
        "था",
        "Muslim-owned",
    ]
    assert diff_spans(tokens("वह डॉक्टर था"), tokens("वह डॉक्टर थी")) == [(["था"], ["थी"])]


def test_skeleton_matches_transliterations():
    # worked out by hand from the documented rule
    assert skeleton("Priya") == skeleton("प्रिया") == "pr"
    assert skeleton("Delhi") == skeleton("दिल्ली") == "dl"
    assert skeleton("Sharma") == skeleton("शर्मा") == "srn"
    assert spell_out("OBC") == "obisi" and skeleton("ओबीसी") == skeleton("obisi")
    assert entity_carried("Mumbai", tokens("वह मुंबई गया"), "वह मुंबई गया")
    assert not entity_carried("Rani", tokens("अंजलि के पास"), "अंजलि के पास")
    assert entity_carried("Christian", tokens("ईसाई परिवार"), "ईसाई परिवार")  # exonym table


def test_named_entity_rule():
    # sentence-initial capitalised common words are not entities; the changed span is
    assert named_entities("Despite the rain, Priya went to Delhi.", "Despite the rain, Rahul went to Delhi.") == [
        "Priya",
        "Delhi",
    ]
    assert named_entities("Waheeda was naive.", "Faisal was naive.") == ["Waheeda"]
    assert named_entities("He was naive.", "She was naive.") == []


def test_script_and_length_flags():
    en_m, en_l = "The man is a doctor.", "The woman is a doctor."
    share, counts = script_share("آدمی ڈاکٹر ہے", "Devanagari")
    assert share == 0 and counts.get("Arabic")
    f = mt_flags(en_m, en_l, "آدمی ڈاکٹر ہے", "عورت ڈاکٹر ہے", "hi")
    assert _codes(f) == ["wrong_script"]
    f = mt_flags(en_m, en_l, "आदमी", "औरत डॉक्टर है।", "hi")  # 4 characters for 20: truncated
    assert [(x["code"], x["sentence"], x["ratio"]) for x in f] == [("length_ratio", "sent_more", 0.2)]
    f = mt_flags(en_m, en_l, "", "औरत डॉक्टर है।", "hi")
    assert _codes(f) == ["empty_translation"]


def test_check_candidate_merges_checker_and_mt_flags():
    src = SentencePair(
        sent_more="He is a nurse.", sent_less="She is a nurse.", direction="antistereo", bias_type="gender"
    )
    flags = check_candidate(src, "वह एक नर्स है।", "वह एक नर्स है।", "hi")
    col = next(f for f in flags if f["code"] == "translation_collapsed")
    assert "एक पुरुष" in col["suggestion"] and "एक महिला" in col["suggestion"]
    # Latin words: the MT check names them; the checker's generic mixed_scripts is dropped
    flags = check_candidate(src, "वह एक nurse है।", "वह एक नर्स है।", "hi")
    assert "untranslated_latin" in _codes(flags) and "mixed_scripts" not in _codes(flags)
