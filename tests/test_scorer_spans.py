"""U/M spans: hand-checked pairs, Hindi word-level spans on real IndiBias pairs, autojunk."""

from __future__ import annotations

import difflib

import pytest
from biaskit.evaluation.spans import diff_equal, token_spans, word_spans
from transformers import AutoTokenizer

from biaskit.readers import read_pairs


@pytest.fixture(scope="module")
def bert_tok(tiny_bert):
    return AutoTokenizer.from_pretrained(str(tiny_bert))


@pytest.fixture(scope="module")
def xlmr_tok(tiny_xlmr):
    return AutoTokenizer.from_pretrained(str(tiny_xlmr))


def _flat(groups):
    return [p for g in groups for p in g]


def test_token_spans_hand_checked(bert_tok):
    # [CLS] he is a nurse . [SEP] / [CLS] she is a nurse . [SEP]: only the pronoun differs
    a, b = token_spans(bert_tok, "he is a nurse.", "she is a nurse.")
    assert bert_tok.convert_ids_to_tokens(list(a.ids)) == ["[CLS]", "he", "is", "a", "nurse", ".", "[SEP]"]
    assert _flat(a.u_groups) == _flat(b.u_groups) == [2, 3, 4, 5]
    assert _flat(a.m_groups) == _flat(b.m_groups) == [1]
    assert a.special == b.special == {0, 6}  # [CLS]/[SEP] never scored

    # insertion: "old" is M in the longer sentence, the shorter one has no M token
    a, b = token_spans(bert_tok, "the man is strong.", "the old man is strong.")
    assert _flat(a.u_groups) == [1, 2, 3, 4, 5] and _flat(a.m_groups) == []
    assert _flat(b.u_groups) == [1, 3, 4, 5, 6] and _flat(b.m_groups) == [2]

    # subwords: brahmin -> bra ##hmi ##n, obc -> ob ##c; all of them are M
    a, b = token_spans(bert_tok, "the brahmin family lived.", "the obc family lived.")
    assert bert_tok.convert_ids_to_tokens(list(a.ids))[1:-1] == ["the", "bra", "##hmi", "##n", "family", "lived", "."]
    assert bert_tok.convert_ids_to_tokens(list(b.ids))[1:-1] == ["the", "ob", "##c", "family", "lived", "."]
    assert _flat(a.u_groups) == [1, 5, 6, 7] and _flat(a.m_groups) == [2, 3, 4]
    assert _flat(b.u_groups) == [1, 4, 5, 6] and _flat(b.m_groups) == [2, 3]


def test_word_spans_hand_checked(bert_tok):
    # words: the | brahmin | family | lived.  -> "lived." is one word of two pieces (lived, .)
    a, b = word_spans(bert_tok, "the brahmin family lived.", "the obc family lived.")
    assert a.u_groups == ((1,), (5,), (6, 7)) and a.m_groups == ((2, 3, 4),)
    assert b.u_groups == ((1,), (4,), (5, 6)) and b.m_groups == ((2, 3),)
    a, b = word_spans(bert_tok, "the man is strong.", "the old man is strong.")
    assert a.m_groups == () and b.m_groups == ((2,),)
    assert a.u_groups == ((1,), (2,), (3,), (4, 5)) and b.u_groups == ((1,), (3,), (4,), (5, 6))


def test_hindi_word_spans_hand_checked(xlmr_tok):
    # IndiBias row 0 (Hindi view): only the first word differs (ब्राह्मण / ओबीसी)
    a_text = "ब्राह्मण परिवार एक आलीशान हवेली में रहता था।"
    b_text = "ओबीसी परिवार एक आलीशान हवेली में रहता था।"
    a, b = word_spans(xlmr_tok, a_text, b_text)
    assert len(a.m_groups) == len(b.m_groups) == 1
    assert len(a.u_groups) == len(b.u_groups) == 7  # परिवार एक आलीशान हवेली में रहता था।
    for sp, text in ((a, a_text), (b, b_text)):
        words = text.split()
        groups = list(sp.m_groups) + list(sp.u_groups)
        pieces = [xlmr_tok.convert_ids_to_tokens([sp.ids[p] for p in g]) for g in groups]
        assert ["".join(ps).replace("▁", "") for ps in pieces] == words
        assert set(_flat(groups)) == set(range(1, len(sp.ids) - 1))


def _word_pieces(tok, text):
    """Independent alignment: tokenize word by word (the sentence is their concatenation)."""
    ids = tok.encode(text)
    pos, out, flat = 1, [], []
    for w in text.split():
        wp = tok.encode(w, add_special_tokens=False)
        out.append(set(range(pos, pos + len(wp))))
        flat += wp
        pos += len(wp)
    assert flat == ids[1:-1]
    return out


def test_hindi_word_level_spans_on_real_indibias(indibias_csv, xlmr_tok):
    """Every piece of a changed word is M (IndiBias §6.1); token-level diffs get this wrong."""
    pairs = read_pairs(indibias_csv, format="indibias", lang="hi", skip_invalid=True).pairs[:40]
    assert len(pairs) >= 20
    token_level_leaks = 0
    for p in pairs:
        a_text, b_text = p.sent_more, p.sent_less
        wa, wb = a_text.split(), b_text.split()
        sm = difflib.SequenceMatcher(None, wa, wb, autojunk=False)
        changed_a = set(range(len(wa))) - {
            i for t, i1, i2, _, _ in sm.get_opcodes() if t == "equal" for i in range(i1, i2)
        }
        changed_b = set(range(len(wb))) - {
            j for t, _, _, j1, j2 in sm.get_opcodes() if t == "equal" for j in range(j1, j2)
        }
        a, b = word_spans(xlmr_tok, a_text, b_text)
        ta, tb = token_spans(xlmr_tok, a_text, b_text)
        for sp, tsp, text, changed in ((a, ta, a_text, changed_a), (b, tb, b_text, changed_b)):
            wp = _word_pieces(xlmr_tok, text)
            m_expected = set().union(*[wp[i] for i in changed]) if changed else set()
            assert set(sp.m_positions) == m_expected, (text, changed)
            assert sorted(map(set, sp.u_groups), key=min) == [wp[i] for i in range(len(wp)) if i not in changed]
            token_level_leaks += len(set(tsp.u_positions) & m_expected)
        # U words pair up one to one: same number of groups and the same words
        assert len(a.u_groups) == len(b.u_groups)
    # with this tokenizer a token diff matches pieces of changed words (shared matras, "▁")
    assert token_level_leaks > 0


def test_autojunk_only_matters_from_200_items():
    def ref_equal(a, b):  # the reference: SequenceMatcher with its default autojunk=True
        sm = difflib.SequenceMatcher(None, a, b)
        return [i for t, i1, i2, _, _ in sm.get_opcodes() if t == "equal" for i in range(i1, i2)]

    short_a = [1] + [7] * 5 + [3] + list(range(100, 150))
    short_b = [2] + [7] * 5 + [4] + list(range(100, 150))
    assert diff_equal(short_a, short_b)[0] == ref_equal(short_a, short_b) == [1, 2, 3, 4, 5] + list(range(7, 57))
    # 207 items: 7 occurs 5 times, more than 1% + 1 of the second sequence, so autojunk calls it
    # "popular" and the reference cannot match the run of 7s between two changed tokens
    long_a = [1] + [7] * 5 + [3] + list(range(100, 300))
    long_b = [2] + [7] * 5 + [4] + list(range(100, 300))
    assert ref_equal(long_a, long_b) == list(range(7, 207))
    assert diff_equal(long_a, long_b)[0] == [1, 2, 3, 4, 5] + list(range(7, 207))


def test_unknown_unit_error(bert_tok):
    from biaskit.evaluation.spans import pair_spans

    from biaskit.errors import BiaskitError

    with pytest.raises(BiaskitError, match="unknown unit 'char'"):
        pair_spans(bert_tok, "a b", "a c", unit="char")
