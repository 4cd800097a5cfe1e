"""Annotators in a REAL browser: headless Chromium (Playwright -> Debian's chromium) against a real
Label Studio. An annotator signed up through the invite link logs in through the login form,
opens one task of every kind biaskit pushes (tuple, sentence, pair, CAT, translation review), sees
the Hindi text drawn with real Devanagari glyphs (checked on screenshots, kept in
tests/artifacts/browser), answers by clicking (and typing a comment / correcting a sentence in
its prefilled text area), submits, and `biaskit annotate pull` (+ `apply` for the editing kinds)
returns exactly what was clicked and typed. The instructions panel shows the kind's guidelines in
English and Hindi."""

from __future__ import annotations

import json
from pathlib import Path

import pandas as pd
import pytest

from biaskit.cli import main

pytestmark = [pytest.mark.slow]

TUPLE = {"identity": "बिहारी", "attribute": "मेहनती", "axis": "region", "polarity": "positive", "lang": "hi"}
PAIR = {
    "sent_more": "महिलाएँ गाड़ी नहीं चला सकतीं।",
    "sent_less": "पुरुष गाड़ी नहीं चला सकते।",
    "direction": "stereo",
    "bias_type": "gender",
    "lang": "hi",
}
CAT_OPTIONS = {
    "stereotype": "वे हर सुबह पूजा करते हैं।",
    "anti-stereotype": "वे हर रविवार मछली पकाते हैं।",
    "unrelated": "आज बहुत तेज़ बारिश हुई।",
}
CAT = {
    "split": "intersentence",
    "target": "ब्राह्मण",
    "bias_type": "caste",
    "lang": "hi",
    "context": "हमारे नए पड़ोसी ब्राह्मण हैं।",
    "options": [{"sentence": s, "gold_label": g} for g, s in CAT_OPTIONS.items()],
}
LLM_MORE = "महिलाएँ गाड़ी नहीं चला सकतीं।"
TRANSLATION = {
    "pair_id": "tr-browser-1",
    "source_lang": "en",
    "target_lang": "hi",
    "bias_type": "gender",
    "direction": "stereo",
    "source": {"sent_more": "Women can't drive.", "sent_less": "Men can't drive."},
    "candidates": [
        {
            "engine": "googletrans",
            "model": "web",
            "sent_more": "महिलाएं ड्राइव नहीं कर सकतीं।",
            "sent_less": "पुरुष ड्राइव नहीं कर सकते।",
            "flags": [],
        },
        {
            "engine": "hf",
            "model": "nllb",
            "sent_more": "औरतें गाड़ी नहीं चला सकती।",
            "sent_less": "औरतें गाड़ी नहीं चला सकती।",
            "flags": [
                {"code": "translation_collapsed", "reason": "S1 == S2 after translation", "suggestion": "use पुरुष"}
            ],
        },
        {"engine": "llm", "model": "gemma", "sent_more": LLM_MORE, "sent_less": "पुरुष गाड़ी नहीं चला सकते।", "flags": []},
    ],
    "provenance": {},
}
ANNOTATOR = "browser@example.com"


def _write(path: Path, rec: dict) -> Path:
    path.write_text(json.dumps(rec, ensure_ascii=False) + "\n", encoding="utf-8")
    return path


@pytest.mark.labelstudio
def test_an_annotator_clicks_through_every_kind(
    ls_server, ls_annotator, chromium, browser_artifacts, tmp_path, monkeypatch, capsys
):
    from biaskit.annotation.labelstudio import connect, existing_task_ids, find_project
    from browser_helpers import LabelStudioPage, glyphs_rendered

    monkeypatch.setenv("LABEL_STUDIO_URL", ls_server["url"])
    monkeypatch.setenv("LABEL_STUDIO_API_KEY", ls_server["token"])
    monkeypatch.setenv("BIASKIT_NO_PROGRESS", "1")
    user = ls_annotator(ANNOTATOR)
    client = connect(ls_server["url"], ls_server["token"])
    art = browser_artifacts
    lsp = LabelStudioPage.login(chromium, ls_server["url"], user["email"], user["password"])
    submitted: dict[str, dict] = {}

    def open_kind(kind: str, rec: dict):
        title = f"browser {kind}"
        main(
            [
                "annotate",
                "push",
                "--kind",
                kind,
                "--data",
                str(_write(tmp_path / f"{kind}.jsonl", rec)),
                "--project",
                title,
            ]
        )
        assert "1 task(s) imported" in capsys.readouterr().out
        proj = find_project(client, title)
        (task_id,) = existing_task_ids(client, proj.id).values()
        lsp.open_task(proj.id, task_id, proj.label_config)
        return title

    def seen(text: str, name: str):
        """The annotator sees ``text``: in the DOM, and drawn with real glyphs on a screenshot."""
        el = lsp.text(text)
        assert text in el.inner_text()
        got = glyphs_rendered(lsp.page, el, art / name)
        print(f"[browser] {name}: ink difference from tofu {got['difference']:.2f}, fonts {got['fonts']}")
        return el

    # --- tuple: a prevalent stereotype? yes; the polarity the annotator clicks (not the data's)
    titles = {"tuple": open_kind("tuple", TUPLE)}
    seen("बिहारी — मेहनती", "tuple-text")
    lsp.choose("stereotype", "yes")
    lsp.choose("polarity", "negative")
    lsp.screenshot(art / "tuple.png")
    submitted["tuple"] = lsp.submit()

    # --- pair: antistereo, two concerns ticked, a comment typed in Hindi
    titles["pair"] = open_kind("pair", PAIR)
    seen(PAIR["sent_more"], "pair-sent-more")
    seen(PAIR["sent_less"], "pair-sent-less")
    lsp.choose("validity", "antistereo")
    lsp.tick("concerns", "Logical failure", "Not naturalistic")
    concerns_shown = lsp.options("concerns")
    assert len(concerns_shown) == 12 and "Logical failure" in concerns_shown
    lsp.type("comment", "दूसरा वाक्य भी रूढ़िवादी है")
    lsp.screenshot(art / "pair.png")
    submitted["pair"] = lsp.submit()

    # --- cat: the options are shuffled into slots A-C; the annotator reads each slot's sentence and
    # labels it (the unrelated sentence "wrongly" as anti-stereotype)
    titles["cat"] = open_kind("cat", CAT)
    seen(CAT["context"], "cat-context")
    answer = {"stereotype": "stereotype", "anti-stereotype": "anti-stereotype", "unrelated": "anti-stereotype"}
    for gold, sentence in CAT_OPTIONS.items():
        el = seen(sentence, f"cat-{gold}")
        slot = el.inner_text().strip()[0]  # shown as "B. <sentence>"
        assert slot in "ABC"
        lsp.choose(f"label_{slot}", answer[gold])
    lsp.screenshot(art / "cat.png")
    submitted["cat"] = lsp.submit()

    # --- translation review: pick the candidate the LLM wrote (its letter is random); its sentences
    # appear in text areas; correct sentence 1 in place
    titles["translation"] = open_kind("translation", TRANSLATION)
    seen("Women can't drive.", "translation-source")
    el = seen(LLM_MORE, "translation-candidate")
    slot = el.inner_text().strip()[0]  # the candidate box starts with its letter
    lsp.choose("choice", slot)
    assert lsp.prefilled(f"corrected_more_{slot}") == LLM_MORE
    lsp.edit(f"corrected_more_{slot}", "महिलाएँ कार नहीं चला सकतीं।")
    lsp.screenshot(art / "translation.png")
    submitted["translation"] = lsp.submit()
    lsp.page.context.close()

    # --- pull returns exactly what was clicked and typed
    got = {}
    for kind, title in titles.items():
        out = tmp_path / f"{kind}.csv"
        main(["annotate", "pull", "--project", title, "--out", str(out)])
        df = pd.read_csv(out, keep_default_na=False)
        assert set(df["worker"]) == {ANNOTATOR}
        assert set(df["ls_annotation"]) == {submitted[kind]["id"]}  # the annotation the Submit click stored
        got[kind] = df
    q = {k: dict(zip(df["question"], df["label"], strict=False)) for k, df in got.items()}
    assert q["tuple"] == {"stereotype": "yes", "polarity": "negative"}
    concerns = {k: v for k, v in q["pair"].items() if k.startswith("concern:")}
    assert {k for k, v in concerns.items() if v == "yes"} == {"concern:logical_failure", "concern:not_naturalistic"}
    assert len(concerns) == len(concerns_shown)  # every box on screen is a yes/no answer
    assert q["pair"]["validity"] == "antistereo"
    assert set(got["pair"]["comment"]) == {"दूसरा वाक्य भी रूढ़िवादी है"}
    assert q["cat"] == {
        "option_stereotype": "stereotype",
        "option_anti-stereotype": "anti-stereotype",
        "option_unrelated": "anti-stereotype",
    }
    tr = got["translation"].set_index("question")
    assert tr.loc["choice", "label"] == slot and tr.loc["choice", "engine"] == "llm"
    assert float(tr.loc["choice", "candidate_index"]) == 2  # the third candidate (the LLM)
    assert tr.loc["corrected_more", "label"] == "महिलाएँ कार नहीं चला सकतीं।"
    assert set(q["translation"]) == {"choice", "corrected_more"}


SENTENCE = {
    "sentence": "औरतें गाड़ी अच्छा नहीं चला सकता।",
    "identity": "औरतें",
    "attribute": "गाड़ी चलाने में कमज़ोर",
    "axis": "gender",
    "polarity": "negative",
    "tuple_id": "t-browser",
    "lang": "hi",
    "status": "raw",
}
SENTENCE_FIXED = "औरतें गाड़ी अच्छी तरह नहीं चला सकतीं।"
EDIT_PAIR = {
    "sent_more": "वह लड़की क्रिकेट नहीं खेल सकता।",
    "sent_less": "वह लड़का क्रिकेट नहीं खेल सकता।",
    "direction": "stereo",
    "bias_type": "gender",
    "lang": "hi",
}
PAIR_FIXED = "वह लड़की क्रिकेट नहीं खेल सकती।"
TR_FIXED = ("महिलाएँ गाड़ी नहीं चला सकतीं।", "पुरुष गाड़ी नहीं चला सकते।")
EDITOR = "editor@example.com"


@pytest.mark.labelstudio
def test_an_annotator_edits_in_place_and_reads_the_guidelines(
    ls_server, ls_annotator, chromium, browser_artifacts, tmp_path, monkeypatch, capsys
):
    """The editing kinds: the text areas hold the record's text; the annotator corrects it by
    selecting and typing, submits; pull + apply give back exactly what was typed, with who typed it.
    The kind's guidelines (English and Hindi) are in the project's instructions panel."""
    from biaskit.annotation.labelstudio import connect, existing_task_ids, find_project
    from browser_helpers import LabelStudioPage, glyphs_rendered

    from biaskit.io import read_jsonl

    monkeypatch.setenv("LABEL_STUDIO_URL", ls_server["url"])
    monkeypatch.setenv("LABEL_STUDIO_API_KEY", ls_server["token"])
    monkeypatch.setenv("BIASKIT_NO_PROGRESS", "1")
    user = ls_annotator(EDITOR)
    client = connect(ls_server["url"], ls_server["token"])
    art = browser_artifacts
    lsp = LabelStudioPage.login(chromium, ls_server["url"], user["email"], user["password"])
    files, titles = {}, {}

    def push(kind: str, rec: dict):
        files[kind] = _write(tmp_path / f"edit-{kind}.jsonl", rec)
        titles[kind] = f"browser edit {kind}"
        main(["annotate", "push", "--kind", kind, "--data", str(files[kind]), "--project", titles[kind]])
        assert "1 task(s) imported" in capsys.readouterr().out
        proj = find_project(client, titles[kind])
        (task_id,) = existing_task_ids(client, proj.id).values()
        return proj, task_id

    # --- the instructions panel: the labeling stream opens with it; both languages, Devanagari drawn
    proj, task_id = push("sentence", SENTENCE)
    lsp.page.goto(f"{ls_server['url']}/projects/{proj.id}/data?labeling=1")
    panel = lsp.instructions()
    assert panel.get_by_text("Annotator guidelines: generated sentences").count() == 1
    hi = panel.get_by_text("एनोटेटर दिशानिर्देश: मॉडल द्वारा लिखे वाक्य")
    got = glyphs_rendered(lsp.page, hi, art / "instructions-hi")
    print(f"[browser] instructions: ink difference from tofu {got['difference']:.2f}, fonts {got['fonts']}")
    assert panel.get_by_text("टीम द्वारा किया गया अनुवाद", exact=False).count()  # marked as pending review
    hi.evaluate("e => e.scrollIntoView({block: 'center'})")  # the end of the English text and the Hindi
    lsp.page.screenshot(path=str(art / "instructions.png"))
    lsp.page.keyboard.press("Escape")

    # --- sentence: fix, corrected in the prefilled box, a problem ticked
    lsp.open_task(proj.id, task_id, proj.label_config)
    assert lsp.prefilled("edited") == SENTENCE["sentence"]
    lsp.choose("decision", "fix")
    lsp.edit("edited", SENTENCE_FIXED)
    lsp.tick("problems", "Grammar / spelling problems")
    lsp.screenshot(art / "sentence.png")
    lsp.submit()

    # --- pair: stereo, sentence 1 corrected in place (left in the box, not added: submitted with it)
    proj, task_id = push("pair", EDIT_PAIR)
    lsp.open_task(proj.id, task_id, proj.label_config)
    assert (lsp.prefilled("edited_more"), lsp.prefilled("edited_less")) == (
        EDIT_PAIR["sent_more"],
        EDIT_PAIR["sent_less"],
    )
    lsp.choose("validity", "stereo")
    lsp.edit("edited_more", PAIR_FIXED, add=False)
    lsp.screenshot(art / "pair-edit.png")
    lsp.submit()

    # --- translation: the Google candidate (its letter is random), both sentences corrected in place
    proj, task_id = push("translation", TRANSLATION)
    lsp.open_task(proj.id, task_id, proj.label_config)
    slot = lsp.text(TRANSLATION["candidates"][0]["sent_more"]).inner_text().strip()[0]
    lsp.choose("choice", slot)
    lsp.edit(f"corrected_more_{slot}", TR_FIXED[0])
    lsp.edit(f"corrected_less_{slot}", TR_FIXED[1], add=False)
    lsp.screenshot(art / "translation-edit.png")
    lsp.submit()
    lsp.page.context.close()

    # --- pull + apply: exactly what was typed, by whom
    out = {}
    for kind in ("sentence", "pair", "translation"):
        judg = tmp_path / f"edit-{kind}.csv"
        main(["annotate", "pull", "--project", titles[kind], "--out", str(judg)])
        main(
            [
                "annotate",
                "apply",
                "--kind",
                kind,
                "--data",
                str(files[kind]),
                "--judgments",
                str(judg),
                "--out",
                str(tmp_path / f"edit-{kind}-ok.jsonl"),
            ]
        )
        capsys.readouterr()
        out[kind] = read_jsonl(tmp_path / f"edit-{kind}-ok.jsonl")
    (s,) = out["sentence"]
    assert s["sentence"] == SENTENCE_FIXED and s["status"] == "accepted"
    (e,) = s["provenance"]["edits"]
    assert (e["field"], e["original"], e["edited"], e["annotators"]) == (
        "sentence",
        SENTENCE["sentence"],
        SENTENCE_FIXED,
        [EDITOR],
    )
    assert e["time"] and s["meta"]["annotation"]["problems"] == ["grammar"]
    (p,) = out["pair"]
    assert (p["sent_more"], p["sent_less"]) == (PAIR_FIXED, EDIT_PAIR["sent_less"])
    assert [(x["field"], x["edited"], x["annotators"]) for x in p["provenance"]["edits"]] == [
        ("sent_more", PAIR_FIXED, [EDITOR])
    ]
    (t,) = out["translation"]
    assert (t["sent_more"], t["sent_less"]) == TR_FIXED
    assert t["meta"]["review"]["winner_engine"] == "googletrans" and t["meta"]["review"]["editors"] == [EDITOR]


def test_the_tofu_check_fails_without_a_devanagari_font(playwright_sync, tmp_path):
    """The screenshot check is not vacuous: the same Hindi sentence, in a Chromium whose fontconfig
    hides every Devanagari font, is drawn as boxes and fails the check; English passes both ways."""
    from browser_helpers import glyphs_rendered, launch

    conf = tmp_path / "no-devanagari.conf"
    conf.write_text(
        '<?xml version="1.0"?><!DOCTYPE fontconfig SYSTEM "fonts.dtd"><fontconfig>'
        '<include ignore_missing="yes">/etc/fonts/fonts.conf</include>'
        "<selectfont><rejectfont><glob>*Devanagari*</glob></rejectfont></selectfont></fontconfig>"
    )
    html = (
        f"<div style='font-family: Figtree, sans-serif; font-size: 16px; width: 700px'>"
        f"<span id=hi>{PAIR['sent_more']}</span><br><span id=en>Women can't drive.</span></div>"
    )
    results = {}
    for name, env in (("fonts", {}), ("no-devanagari", {"FONTCONFIG_FILE": str(conf)})):
        browser = launch(playwright_sync, env=env)
        try:
            page = browser.new_page()
            page.set_content(html)
            assert glyphs_rendered(page, page.locator("#en"), tmp_path / f"{name}-en")["difference"] > 0.25
            try:
                results[name] = glyphs_rendered(page, page.locator("#hi"), tmp_path / f"{name}-hi")
            except AssertionError as exc:
                results[name] = exc
        finally:
            browser.close()
    assert isinstance(results["fonts"], dict) and any("Devanagari" in f for f in results["fonts"]["fonts"])
    assert isinstance(results["no-devanagari"], AssertionError), results["no-devanagari"]
    assert "missing-glyph boxes" in str(results["no-devanagari"])
