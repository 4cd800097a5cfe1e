"""Annotator guidelines: every kind has English and Hindi instructions with examples of good and
bad answers, exported as Markdown by `biaskit annotate guidelines` and rendered for Label
Studio's instructions panel."""

from __future__ import annotations

import re

import pytest
from biaskit.annotation.guidelines import (
    guideline_langs,
    guidelines_dir,
    guidelines_html,
    guidelines_markdown,
    same_instructions,
)
from biaskit.annotation.kinds import KINDS, get_kind
from conftest import run_cli

DEVANAGARI = re.compile(r"[\u0900-\u097F]")


def _structure(md: str) -> tuple:
    """What a translation must keep: the headings' levels, the example tables' rows, the option codes."""
    heads = tuple(len(m) for m in re.findall(r"^(#+) ", md, re.M))
    table_rows = sum(1 for line in md.splitlines() if line.startswith("|") and not line.startswith("|---"))
    codes = sorted(re.findall(r"`([a-z-]+)`", md))
    return heads, table_rows, codes


@pytest.mark.parametrize("kind", KINDS.names())
def test_every_kind_has_both_languages_with_the_same_structure(kind):
    g = get_kind(kind).guidelines
    assert set(g) == set(guideline_langs()), f"write data/guidelines/{kind}.<lang>.md"
    en, hi = g["en"], g["hi"]
    assert re.search(r"good (answer|label)", en) and re.search(r"bad (answer|label)", en)  # good and bad examples
    assert "सही उत्तर" in hi or "सही लेबल" in hi
    assert len(DEVANAGARI.findall(hi)) > 0.5 * len(re.sub(r"[\s\W\d_]", "", hi))  # mostly Hindi
    assert "टीम द्वारा किया गया अनुवाद" in hi and "मूल" in hi  # marked: pending a native speaker's review
    # the Hindi file is a translation of the English one: same headings, example rows, option codes
    assert _structure(hi) == _structure(en)
    # every other language's file too, written mostly in its script (data/languages/<code>/language.json)
    from biaskit.languages import language
    from biaskit.textutil import scripts

    for lang, md in g.items():
        assert _structure(md) == _structure(en), (kind, lang)
        script = language(lang).info.script
        counts = scripts(md)
        assert counts.get(script, 0) > 0.5 * sum(counts.values()), (kind, lang, counts)
    bn = g["bn"]
    assert "ভালো উত্তর" in bn or "ভালো চিহ্ন" in bn  # good answers, as in English
    assert "বায়াসকিট দল" in bn and "যাচাই করেননি" in bn  # marked: written by the team, not yet reviewed
    # every option annotators can click is explained
    k = get_kind(kind)
    for q in k.questions:
        if q.type == "choice" and kind not in ("translation", "cat_translation"):  # slot letters A, B, ...
            for lab in q.labels:
                assert f"`{lab}`" in en, (kind, lab)


def test_cli_exports_markdown(tmp_path, capsys):
    code, out, err = run_cli(["annotate", "guidelines", "--kind", "pair", "--lang", "hi"], capsys)
    assert code == 0, err
    assert out.strip() == (guidelines_dir() / "pair.hi.md").read_text(encoding="utf-8").strip()
    code, out, _ = run_cli(["annotate", "guidelines", "--kind", "sentence"], capsys)
    assert code == 0 and out.index("Annotator guidelines") < out.index("एनोटेटर दिशानिर्देश")  # both, English first
    f = tmp_path / "vendor" / "pair.md"
    code, _, _ = run_cli(["annotate", "guidelines", "--kind", "pair", "--lang", "en", "--out", str(f)], capsys)
    assert code == 0 and f.read_text(encoding="utf-8") == guidelines_markdown("pair", "en")
    code, _, err = run_cli(["annotate", "guidelines", "--kind", "pair", "--lang", "fr"], capsys)
    assert code == 2 and "no guidelines in language 'fr'" in err
    # the one line names the flag that was wrong (not '<input>'), before anything is read or written
    assert len(err.strip().splitlines()) == 1 and err.startswith("error: --lang fr:"), err


def test_html_for_the_instructions_panel():
    h = guidelines_html("translation")
    assert h.startswith('<div lang="en"><h1') and '<div lang="hi"><h1' in h and "<table" in h
    assert "एक पुरुष" in h
    assert guidelines_html("pair", "none") == ""
    assert '<div lang="hi">' not in guidelines_html("pair", "en")
    # list markers as text (Label Studio's CSS hides them): the tuple guidelines' numbered questions
    t = guidelines_html("tuple", "en")
    assert "<li>1. <strong>Is this a prevalent stereotype" in t and "<li>2. <strong>Polarity" in t
    assert "<li>• <strong>Stereotype</strong>" in t
    # what Label Studio stores differs in markup only: the same instructions
    assert same_instructions(t, t.replace("<hr>", "<hr/>").replace("<h1>", '<h1 class="x">'))
    assert not same_instructions(t, t.replace("Polarity", "Polarity!"))
