"""Script-aware word handling in four scripts: Devanagari, Bengali, Tamil and Latin with diacritics.

Every step that splits, masks or counts words keeps a word whole with its combining marks (vowel
signs, viramas, nuktas, accents written as combining characters) and the joiners ZWJ/ZWNJ, and a
sentence terminal outside ASCII (the danda) is never part of a word. Expected values are worked out
by hand from the characters of each sentence (their lengths and names are spelt out beside them);
where Python's ``re`` ``\\w`` would cut a word, the test says so, so that the cases are not vacuous.
"""

from __future__ import annotations

import re
import unicodedata

import pytest

ZWJ, ZWNJ = "\u200d", "\u200c"
# one word each, with what makes it hard: Devanagari nukta + virama, Bengali ZWJ (the ra-phala of
# "র‍্যালি", a rally) and ZWNJ, Tamil pulli (virama), Latin with a combining grave accent (NFD)
DEVA = "ज़िंदगी"  # ज + nukta ़ + ि + ं + द + ग + ी: 7 characters
BENG = "র" + ZWJ + "্যালিতে"  # র ZWJ ্ য া ল ি ত ে: 9 characters
BENG_ZWNJ = "ক্" + ZWNJ + "ষমা"  # ক ্ ZWNJ ষ ম া: 6 characters
TAML = "மருத்துவர்"  # ம ர ு த ் த ு வ ர ்: 10 characters
LATN = "infirmie\u0300res"  # i n f i r m i e ` r e s: 12 characters (NFD)


def test_the_hard_words_are_what_the_comments_say():
    assert [len(w) for w in (DEVA, BENG, BENG_ZWNJ, TAML, LATN)] == [7, 9, 6, 10, 12]
    assert unicodedata.name(DEVA[1]) == "DEVANAGARI SIGN NUKTA" and unicodedata.name(TAML[-1]) == "TAMIL SIGN VIRAMA"
    # Python's re cuts every one of them
    for w in (DEVA, BENG, BENG_ZWNJ, TAML, LATN):
        assert re.findall(r"\w+", w) != [w], w


@pytest.mark.parametrize(
    "text,words",
    [
        # the danda ends a sentence even unspaced; nukta, anusvara and vowel signs stay in the word
        (f"{DEVA} अच्छी है।वह आया", [DEVA, "अच्छी", "है", "।", "वह", "आया"]),
        (f"শিক্ষক {BENG} গেলেন।", ["শিক্ষক", BENG, "গেলেন", "।"]),
        (f"{BENG_ZWNJ} করো", [BENG_ZWNJ, "করো"]),
        (f"அவன் {TAML}.", ["அவன்", TAML, "."]),
        (f"Les {LATN} sont là, à Lyon.", ["Les", LATN, "sont", "là", ",", "à", "Lyon", "."]),
    ],
)
def test_tokens_keep_marks_and_joiners_and_split_off_sentence_ends(text, words):
    from biaskit.cat_checks import words as cat_words
    from biaskit.mt_checks import tokens
    from biaskit.textutil import tokenize

    toks = tokenize(text)
    assert [t.text for t in toks] == words
    assert all(text[t.start : t.end] == t.text for t in toks)
    # the MT checks and the CAT checks count the same words (punctuation is not a word there)
    assert tokens(text) == [w for w in words if w not in ("।", ".", ",")]
    assert cat_words(text) == [w for w in words if w not in ("।", ".", ",")]


def test_a_combining_mark_counts_in_its_letters_script():
    from biaskit.mt_checks import script_share
    from biaskit.textutil import scripts

    assert scripts(LATN) == {"Latin": 12}  # the combining grave accent is Latin here, not "Other"
    assert scripts(BENG) == {"Bengali": 8}  # 9 characters, the ZWJ is no letter
    assert scripts(TAML) == {"Tamil": 10}
    assert scripts(DEVA) == {"Devanagari": 7}
    assert script_share(f"সে {LATN}", "Bengali") == (2 / 14, {"Bengali": 2, "Latin": 12})


def _char_tokenizer(texts):
    """A real fast tokenizer that cuts every word into single characters (SentencePiece-style "▁"
    before each word): every piece of a word is inside it, so word-level masking must gather them."""
    from tokenizers import Tokenizer, decoders, models, pre_tokenizers, processors
    from transformers import PreTrainedTokenizerFast

    chars = sorted({c for t in texts for c in t if not c.isspace()})
    vocab = {"<s>": 0, "</s>": 1, "<unk>": 2, "<mask>": 3, "<pad>": 4, "▁": 5}
    for c in chars:
        vocab.setdefault(c, len(vocab))
        vocab.setdefault("▁" + c, len(vocab))
    tk = Tokenizer(models.BPE(vocab=vocab, merges=[("▁", c) for c in chars], unk_token="<unk>"))
    tk.pre_tokenizer = pre_tokenizers.Metaspace()
    tk.decoder = decoders.Metaspace()
    tk.post_processor = processors.TemplateProcessing(single="<s> $A </s>", special_tokens=[("<s>", 0), ("</s>", 1)])
    return PreTrainedTokenizerFast(
        tokenizer_object=tk,
        bos_token="<s>",
        eos_token="</s>",
        unk_token="<unk>",
        mask_token="<mask>",
        pad_token="<pad>",
    )


@pytest.mark.parametrize(
    "more,less,lengths,changed",
    [
        (f"{DEVA} अच्छी है।", "जीवन अच्छी है।", [7, 5, 3], 0),  # अच्छी: अ च ् छ ी; है।: ह ै ।
        (f"শিক্ষক {BENG} গেলেন।", f"ছাত্রী {BENG} গেলেন।", [6, 9, 6], 0),  # শিক্ষক: শ ি ক ্ ষ ক; গেলেন।: 6
        (f"অনেক {BENG_ZWNJ} চাই", "অনেক দয়া চাই", [4, 6, 3], 1),  # অনেক: অ ন ে ক; চাই: চ া ই
        (f"அவன் {TAML}.", f"அவள் {TAML}.", [4, 11], 0),  # அவன்: அ வ ன ்; the last word ends with "."
        (f"Les {LATN} sont là.", "Les infirmiers sont là.", [3, 12, 4, 3], 1),  # là.: l à .
    ],
)
def test_word_level_masking_gathers_every_piece_of_a_word(more, less, lengths, changed):
    """U/M groups at word level (IndiBias §6.1): the changed word's pieces are one M group, every
    other word's pieces one U group; the positions follow from the word lengths (one piece per
    character, after <s>)."""
    from biaskit.evaluation.spans import pair_spans

    tok = _char_tokenizer([more, less])
    a, _ = pair_spans(tok, more, less, "word")
    starts = [1 + sum(lengths[:i]) for i in range(len(lengths))]
    groups = [tuple(range(s, s + n)) for s, n in zip(starts, lengths, strict=True)]
    assert a.m_groups == (groups[changed],)
    assert a.u_groups == tuple(g for i, g in enumerate(groups) if i != changed)
    words = more.split()
    assert tok.decode([a.ids[p] for p in a.m_groups[0]]) == words[changed]


def test_the_minimal_pair_checker_in_four_scripts():
    from biaskit.check import check_pair, word_diff

    def codes(more, less, lang, source=None):
        return sorted(
            f.code for f in check_pair({"sent_more": more, "sent_less": less, "lang": lang}, source_pair=source)
        )

    # Devanagari: one identity span (the inventory's Hindi forms)
    assert codes("दलित परिवार गाँव में रहता था।", "ब्राह्मण परिवार गाँव में रहता था।", "hi") == []
    # Bengali: the plural forms of data/languages/bn; a second change is caught; the script is checked
    assert codes("দলিতরা গ্রামে থাকে।", "ব্রাহ্মণরা গ্রামে থাকে।", "bn") == []
    assert word_diff("দলিতরা গ্রামে থাকে।", "ব্রাহ্মণরা গ্রামে থাকে।", "bn").as_dict()["spans"] == [
        ["দলিতরা", "ব্রাহ্মণরা", "identity"]
    ]
    assert codes("দলিতরা গ্রামে সুখে থাকে।", "ব্রাহ্মণরা গ্রামে দুঃখে থাকে।", "bn") == ["attribute_changed", "multi_span"]
    assert codes("মেয়েরা গাড়ি চালাতে পারে না।", "ছেলেরা গাড়ি চালাতে পারে না।", "bn") == []
    assert "mixed_scripts" in codes("মেয়েরা driving পারে না।", "ছেলেরা driving পারে না।", "bn")
    # a word with a joiner is one word: the pair differs in one place, not two
    d = word_diff(f"অনেক {BENG_ZWNJ} চাই", "অনেক দয়া চাই", "bn")
    assert [s.as_list()[:2] for s in d.spans] == [[BENG_ZWNJ, "দয়া"]] and d.n_changes == 1
    # Tamil (no folder: its script is known): one changed word with its pulli, a Latin word is foreign
    d = word_diff(f"அவன் {TAML}.", f"அவள் {TAML}.", "ta")
    assert [s.as_list()[:2] for s in d.spans] == [["அவன்", "அவள்"]] and d.unmodified == [TAML]
    assert "mixed_scripts" in codes(f"அவன் {TAML} doctor.", f"அவள் {TAML} doctor.", "ta")
    # Latin with diacritics: a combining accent is not another script, and NFC = NFD
    nfc = unicodedata.normalize("NFC", LATN)
    assert codes(f"Les {LATN} sont douces.", f"Les {LATN} sont fatiguées.", "fr") == ["span_not_identity"]
    d = word_diff(f"Le {LATN} est là.", f"Le {nfc} est ici.", "fr")
    assert [s.as_list()[:2] for s in d.spans] == [["là", "ici"]]


def test_a_collapsed_translation_suggests_the_languages_own_words():
    """He/she both become সে in Bengali: the checker says so with data/languages/bn's words."""
    from biaskit.check import check_pair
    from biaskit.languages import language

    bn = language("bn").info.grammar.pronouns
    flags = check_pair(
        {"sent_more": "সে একজন নার্স।", "sent_less": "সে একজন নার্স।", "lang": "bn"},
        source_pair={"sent_more": "He is a nurse.", "sent_less": "She is a nurse.", "lang": "en"},
    )
    (f,) = [f for f in flags if f.code == "translation_collapsed"]
    assert "সে / তার in Bengali" in f.suggestion and f"'{bn.explicit['m']}' / '{bn.explicit['f']}'" in f.suggestion


def test_mt_checks_see_latin_words_with_accents_and_joined_words():
    from biaskit.mt_checks import text_flags

    flags = text_flags("She went to the café.", "সে café-তে গেল।", "bn", "sent_more")
    (latin,) = [f for f in flags if f["code"] == "untranslated_latin"]
    assert latin["words"] == ["café"]  # the whole word, not "caf"
    assert not [
        f for f in text_flags("The rally went on.", f"{BENG} চলল।", "bn", "sent_more") if f["code"] == "wrong_script"
    ]


def test_seat_name_counting_keeps_joined_words_whole():
    from biaskit.evaluation.seat_names import words

    assert words(f"{BENG_ZWNJ}, {BENG}!") == [BENG_ZWNJ, BENG]
    assert words(LATN.upper()) == [unicodedata.normalize("NFC", LATN)]


def test_the_copy_check_compares_whole_words_in_every_script():
    """The check that a model copied its prompt (``copies_prompt``: a text of 4+ words found in it) counts
    words of every script whole: one hard word is one word, not a copy of a prompt that holds it."""
    from biaskit.curation.tasks.base import copies_prompt

    from biaskit.textutil import word_runs

    for w in (DEVA, BENG, BENG_ZWNJ, TAML, LATN):
        assert word_runs(f'"{w}", {w}।') == [w, w]
        assert not copies_prompt(w, f'example: {{"fill": "{w}"}}')
    # four words copied word for word are a copy, in any script; three are not
    four = f"{DEVA} {BENG} {TAML} {LATN}"
    assert copies_prompt(four, f"a. {four}. b") and not copies_prompt(f"{DEVA} {BENG} {TAML}", f"a {four}")


def test_joiners_are_text_not_control_characters():
    """ZWJ/ZWNJ (category Cf) are part of Bengali and Devanagari words: the readers' text check keeps
    them (it refuses C0 control characters only)."""
    from biaskit.textcheck import bad_text

    assert bad_text(f"{BENG} {BENG_ZWNJ}") is None
    assert bad_text("a\x00b") is not None
