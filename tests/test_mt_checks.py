"""Checks on translated pairs: real IndiBias pairs (its English -> its own Hindi as a "candidate")
and hand-made cases for each MT flag."""
from __future__ import annotations

import pytest

from biaskit.readers import read_pairs
from biaskit.schema import SentencePair

from biaskit.curation.mt_checks import (diff_spans, entity_carried, mt_flags, named_entities,  # noqa: E402
                                        script_share, skeleton, spell_out, tokens)
from biaskit.curation.translate import check_candidate  # noqa: E402

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
    p, h = _cand(en, by_src, 1)   # vaishya/brahmin; Hindi also swaps मकान मालिक -> जमींदार
    flags = check_candidate(p, h.sent_more, h.sent_less, "hi")
    assert "translation_not_minimal" in _codes(flags)
    assert "जमींदार" in next(f for f in flags if f["code"] == "translation_not_minimal")["reason"]


def test_clean_real_pair_has_no_flags(indibias):
    en, by_src, _ = indibias
    p, h = _cand(en, by_src, 0)   # The brahmin / The OBC family lived in a luxurious mansion.
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


def test_flag_rates_on_the_whole_sample(indibias):
    """The MT checks are calibrated not to fire on IndiBias' human translations except where they
    are right: 1 entity (Rani -> अंजलि), 3 pairs keeping CEO/IQ in Latin letters, no length outlier."""
    en, by_src, _ = indibias
    import pandas as pd
    from conftest import public_dataset

    df = pd.read_csv(public_dataset("indibias-sample"))
    counts: dict[str, int] = {}
    for p, r in zip(en, df.itertuples()):
        for f in mt_flags(p.sent_more, p.sent_less, r.sent_more_hindi, r.sent_less_hindi, "hi"):
            counts[f["code"]] = counts.get(f["code"], 0) + 1
    assert counts == {"entity_missing": 1, "untranslated_latin": 5}


def test_tokens_keep_devanagari_words_whole():
    assert tokens("इंजीनियरिंग की छात्रा,अंजलि के लिए था। Muslim-owned |") == [
        "इंजीनियरिंग", "की", "छात्रा", "अंजलि", "के", "लिए", "था", "Muslim-owned"]
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
        "Priya", "Delhi"]
    assert named_entities("Waheeda was naive.", "Faisal was naive.") == ["Waheeda"]
    assert named_entities("He was naive.", "She was naive.") == []


def test_script_and_length_flags():
    en_m, en_l = "The man is a doctor.", "The woman is a doctor."
    share, counts = script_share("آدمی ڈاکٹر ہے", "Devanagari")
    assert share == 0 and counts.get("Arabic")
    f = mt_flags(en_m, en_l, "آدمی ڈاکٹر ہے", "عورت ڈاکٹر ہے", "hi")
    assert _codes(f) == ["wrong_script"]
    f = mt_flags(en_m, en_l, "आदमी", "औरत डॉक्टर है।", "hi")   # 4 characters for 20: truncated
    assert [(x["code"], x["sentence"], x["ratio"]) for x in f] == [("length_ratio", "sent_more", 0.2)]
    f = mt_flags(en_m, en_l, "", "औरत डॉक्टर है।", "hi")
    assert _codes(f) == ["empty_translation"]


def test_check_candidate_merges_checker_and_mt_flags():
    src = SentencePair(sent_more="He is a nurse.", sent_less="She is a nurse.", direction="antistereo",
                       bias_type="gender")
    flags = check_candidate(src, "वह एक नर्स है।", "वह एक नर्स है।", "hi")
    col = next(f for f in flags if f["code"] == "translation_collapsed")
    assert "एक पुरुष" in col["suggestion"] and "एक महिला" in col["suggestion"]
    # Latin words: the MT check names them; the checker's generic mixed_scripts is dropped
    flags = check_candidate(src, "वह एक nurse है।", "वह एक नर्स है।", "hi")
    assert "untranslated_latin" in _codes(flags) and "mixed_scripts" not in _codes(flags)
