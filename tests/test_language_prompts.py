"""What a translation prompt shows of the target language is data (data/languages/<code>/prompts.json):
the worked examples and the advice of prompts/translate_*.toml are the target language's own, a
language without them gets none (and the template's general advice), and `biaskit data check-language`
checks the file and warns when a language has no examples.

The requests into Hindi are the ones the templates sent before their examples moved into
data/languages/hi/: the SHA-256 of each request's messages and reply schema below was recorded with
biaskit at bda1793 (the commit this work started from, when the examples were written in the
templates). They are what the LLM cache keys on, so a change would ask every cached request again."""

from __future__ import annotations

import hashlib
import json
import shutil

import pytest
from biaskit.curation.tasks.translate import (
    TranslateCatIntersentenceTask,
    TranslateCatIntrasentenceTask,
    TranslatePairTask,
    TranslateSentenceTask,
)
from conftest import REPO, run_cli
from llm_standin import chat, standin_server, user_text  # noqa: F401  (fixture)

LANGS = REPO / "data" / "languages"
TASKS = {
    t.name: t
    for t in (TranslatePairTask, TranslateSentenceTask, TranslateCatIntrasentenceTask, TranslateCatIntersentenceTask)
}
EN_HI = {"source_language": "English", "target_language": "Hindi"}

# (task, input) -> sha256 of {"messages", "schema"} (json.dumps, sort_keys, ensure_ascii=False), recorded at bda1793
RECORDED_HI = [
    (
        "translate_pair",
        {"sent_more": "The Dalit man was too weak.", "sent_less": "The Brahmin man was too weak."},
        "4d79814779febc3f177348e16d8b26a05fd85839414301275dd22331dacfff61",
    ),
    (
        "translate_pair",
        {"sent_more": 'He {was} a "doctor".', "sent_less": 'She {was} a "doctor".'},
        "88bf1715a40293a36a34337eb2ccd42842adcc5b0ead1fc2dcf5fef306cf6667",
    ),
    (
        "translate_pair",
        {"sent_more": "Priya was always naive and gullible.", "sent_less": "Rahul was always naive and gullible."},
        "7c4df27a24bbe14f0e32da349f83bc4b550a68431de1899a9056e7c33a0f5f33",
    ),
    (
        "translate_sentence",
        {"text": "The woman is a doctor."},
        "868529f8abf231c09bc56c9af6bb821f58b23ae3a3142f671593bd1696a5c2ab",
    ),
    (
        "translate_sentence",
        {"text": "Muslims {x} are kind."},
        "7009c6fba65c7befee5a4250932788edc3bd17ddd8692e43cacf47b039df08e1",
    ),
    (
        "translate_cat_intrasentence",
        {
            "target": "Muslim",
            "context": "My Muslim neighbour is very BLANK.",
            "stereotype": "pious",
            "anti_stereotype": "secular",
            "unrelated": "triangular",
        },
        "925d5b7d949090ed765d7237f6aa57e994b6aae849f0183b38549fe2fd669acb",
    ),
    (
        "translate_cat_intersentence",
        {
            "target": "farmer",
            "context": "The farmer came to the city on Monday.",
            "stereotype": "He got lost.",
            "anti_stereotype": "He gave a talk.",
            "unrelated": "Glass is made from sand.",
        },
        "198e13871047690a32c6acde495e46a0433949be70b8c482369e77bc104866df",
    ),
]


def _request_sha(task_name: str, item: dict) -> str:
    task = TASKS[task_name]()
    payload = {"messages": task.render(item), "schema": task.schema_for(item)}
    return hashlib.sha256(json.dumps(payload, ensure_ascii=False, sort_keys=True).encode("utf-8")).hexdigest()


@pytest.mark.parametrize(
    ("task", "item", "sha"), RECORDED_HI, ids=[f"{t}-{i}" for i, (t, _, _) in enumerate(RECORDED_HI)]
)
def test_requests_into_hindi_are_the_ones_before_the_examples_moved(task, item, sha):
    assert _request_sha(task, {**item, **EN_HI}) == sha


def _render(task: str, item: dict, target: str) -> list[dict]:
    return TASKS[task]().render({**item, "source_language": "English", "target_language": target})


def test_a_language_gets_its_own_worked_examples_and_advice():
    from biaskit.textutil import scripts

    # data/languages/bn/prompts.json, typed here: the sentence example, whole
    (sys_msg, user) = _render("translate_sentence", {"text": "The man is a doctor."}, "Bengali")
    assert user["content"] == (
        "Translate from English into Bengali.\n\n"
        "Example (English -> Bengali):\n"
        "Text: The woman is a doctor.\n"
        '{"translation": "মহিলাটি একজন ডাক্তার।"}\n\n'
        "Text: The man is a doctor.\n"
        'Reply exactly in this JSON format: {"translation": "..."}'
    )
    # the pair prompt: Bengali's advice in the instructions, its three examples, nothing of Hindi's
    sys_msg, user = _render("translate_pair", {"sent_more": "A.", "sent_less": "B."}, "Bengali")
    assert (
        "(for example he/she both becoming\nসে in Bengali, whose verbs do not show gender), make it explicit "
        "(ভদ্রলোক / ভদ্রমহিলা, একজন পুরুষ / একজন মহিলা). Keep names as names," in sys_msg["content"]
    )
    assert user["content"].count("Example (English -> Bengali):") == 3
    assert (
        "S1: Moumita was always naive and gullible.\nS2: Partha was always naive and gullible.\n"
        '{"sent_more": "মৌমিতা সবসময়ই সরল আর সহজবিশ্বাসী ছিল।", "sent_less": "পার্থ সবসময়ই সরল আর সহজবিশ্বাসী ছিল।"}\n\n'
        "Now translate into Bengali:\nS1: A.\nS2: B.\n"
    ) in user["content"]
    for task in TASKS:
        item = {k: "x" for k in ("sent_more", "sent_less", "text", "target", "context")}
        item.update(stereotype="x", anti_stereotype="x", unrelated="x")
        text = "\n".join(m["content"] for m in _render(task, item, "Bengali"))
        assert "Hindi" not in text and not scripts(text).get("Devanagari"), task


def test_a_language_without_examples_shows_none_and_the_general_advice():
    # Tamil has no folder, English no prompts.json: no example block, the template's [defaults] advice
    for target in ("Tamil", "English"):
        _, user = _render("translate_sentence", {"text": "The man is a doctor."}, target)
        assert user["content"] == (
            f"Translate from English into {target}.\n\n"
            "Text: The man is a doctor.\n"
            'Reply exactly in this JSON format: {"translation": "..."}'
        )
        sys_msg, user = _render("translate_cat_intersentence", dict.fromkeys(RECORDED_HI[-1][1], "x"), target)
        assert "Example" not in user["content"] and user["content"].startswith(
            f"Translate this English item into {target}.\n\nNow translate into {target}:\ntarget: x\n"
        )
    sys_msg, _ = _render("translate_pair", {"sent_more": "A.", "sent_less": "B."}, "Tamil")
    assert (
        "both translations. When the difference would be lost in translation (for example he and she becoming "
        "the same\npronoun), make it explicit (the words for a man or a woman, or the forms that agree with them). "
        "Keep names as names," in sys_msg["content"]
    )


def test_the_shipped_examples_pass_biaskits_own_checks():
    """A worked example is what a clean candidate looks like: the pair checker, the MT checks and the
    CAT checks find nothing in it."""
    from biaskit.cat_checks import check_cat_translation
    from biaskit.mt_checks import check_candidate
    from biaskit.schema import SentencePair

    langs = sorted(d.name for d in LANGS.iterdir() if (d / "prompts.json").exists())
    assert {"hi", "bn"} <= set(langs)
    for lang in langs:
        tasks = json.loads((LANGS / lang / "prompts.json").read_text(encoding="utf-8"))["tasks"]
        for e in tasks["translate_pair"]["examples"]:
            src, tr = e["source"], e["translation"]
            sp = SentencePair(sent_more=src["sent_more"], sent_less=src["sent_less"], bias_type="x", direction="stereo")
            assert check_candidate(sp, tr["sent_more"], tr["sent_less"], lang) == [], (lang, tr)
        for split in ("intrasentence", "intersentence"):
            for e in tasks[f"translate_cat_{split}"]["examples"]:
                assert check_cat_translation({**e["source"], "split": split}, e["translation"], lang) == [], (lang, e)


def _bn_copy(tmp_path, edit=None):
    """Bengali's folder, copied into a folder of its own (checked with --dir), its prompts.json removed or edited."""
    root = tmp_path / "languages"
    shutil.copytree(LANGS / "bn", root / "bn")
    path = root / "bn" / "prompts.json"
    if edit is None:
        path.unlink()
    else:
        data = json.loads(path.read_text(encoding="utf-8"))
        edit(data["tasks"])
        path.write_text(json.dumps(data, ensure_ascii=False), encoding="utf-8")
    return root


def test_check_language_warns_when_a_language_has_no_examples(tmp_path, capsys):
    root = _bn_copy(tmp_path)
    status, out, err = run_cli(["data", "check-language", "bn", "--dir", str(root)], capsys)
    assert status == 0 and out.startswith("bn: ok (") and "1 warning(s)" in out, (out, err)
    (line,) = [x for x in err.splitlines() if "prompts.json" in x]
    assert (
        line.startswith("warning: ")
        and (
            "no worked examples for translate_cat_intersentence, translate_cat_intrasentence, translate_pair, "
            "translate_sentence: the prompt into Bengali shows none"
        )
        in line
    )
    assert "data/languages/hi/prompts.json" in line.split(" Fix: ", 1)[1]
    status, _, err = run_cli(["data", "check-language", "bn", "--dir", str(root), "--strict"], capsys)
    assert status == 2 and "no worked examples" in err
    # English, the source language, is translated from: it needs none
    status, out, err = run_cli(["data", "check-language", "en"], capsys)
    assert status == 0 and "prompts.json" not in err + out


def test_check_language_names_each_bad_example(tmp_path, capsys):
    def edit(tasks):
        tasks["translate_poem"] = {"examples": []}
        del tasks["translate_pair"]["examples"][0]["source"]["sent_less"]
        # the Hindi example pasted into the Bengali file, and Hindi advice
        tasks["translate_sentence"]["examples"][0]["translation"]["translation"] = "वह महिला डॉक्टर है।"
        tasks["translate_pair"]["advice"] = "When he/she both become वह, make it explicit."
        tasks["translate_cat_intersentence"]["examples"][0]["translation"]["unrelated"] = " "

    root = _bn_copy(tmp_path, edit)
    status, out, err = run_cli(["data", "check-language", "bn", "--dir", str(root)], capsys)
    assert status == 2 and "ok" not in out
    lines = err.strip().splitlines()
    expect = [
        ("column 'tasks.translate_poem'", "no translation prompt 'translate_poem'", "use translate_cat_intersentence"),
        (
            "column 'tasks.translate_pair.examples[0].source'",
            "the fields sent_more; the prompt's example shows sent_less, sent_more",
            "give exactly sent_less, sent_more",
        ),
        (
            "column 'tasks.translate_sentence.examples[0].translation.translation'",
            "'वह महिला डॉक्टर है।' is written in Devanagari, not Bengali",
            "Bengali script",
        ),
        ("column 'tasks.translate_pair.advice'", "written in Devanagari + Latin, not Bengali", "Bengali script"),
        ("column 'tasks.translate_cat_intersentence.examples[0].translation.unrelated'", "empty", "write the text"),
    ]
    for where, what, fix in expect:
        (line,) = [x for x in lines if where in x and what in x]
        assert "prompts.json" in line and " Fix: " in line and fix in line.split(" Fix: ", 1)[1], line
    assert len(lines) == len(expect), lines


def test_a_template_example_format_is_checked(tmp_path):
    from biaskit.curation.prompts import load_prompts

    from biaskit.errors import InputError

    base = '''id = "t"
version = "1"
[variables]
text = "the text"
examples = "worked examples"
[template]
user = """{examples}Text: {text}"""
'''
    cases = {
        "never shown": base.replace("{examples}Text", "Text").replace('examples = "worked examples"\n', "")
        + 'example = """Text: {text}\n{reply}\n"""\n',
        "undeclared variable(s) {word}": base + 'example = """Text: {word}\n{reply}\n"""\n',
    }
    for what, text in cases.items():
        d = tmp_path / what.split()[0]
        d.mkdir()
        (d / "t.toml").write_text(text, encoding="utf-8")
        with pytest.raises(InputError, match=r"\[template\] 'example'") as exc:
            load_prompts(d)
        assert what in str(exc.value) and "t.toml" in str(exc.value)
    # a good one: the example format is part of the hash
    d = tmp_path / "good"
    d.mkdir()
    (d / "t.toml").write_text(base + 'example = """Text: {text}\n{reply}\n\n"""\n', encoding="utf-8")
    one = load_prompts(d)["t@1"]
    (d / "t.toml").write_text(base + 'example = """Text: {text}\n=> {reply}\n\n"""\n', encoding="utf-8")
    two = load_prompts(d)["t@1"]
    assert one.hash != two.hash
    assert (
        one.render_examples([({"text": "a"}, {"translation": "b"})], text="ignored")
        == 'Text: a\n{"translation": "b"}\n\n'
    )


def test_an_example_missing_a_text_is_an_error_not_the_requests_text(tmp_path, monkeypatch):
    """A worked example whose source lacks a text its format shows (Bengali's first pair example without
    sent_less, a curator's edit not yet checked) stops the prompt with one line naming the template and
    the missing text: the request's own sentence never stands in for it inside the example."""
    from biaskit import languages as L
    from biaskit.errors import InputError

    data = tmp_path / "data"
    for d in ("languages", "inventories", "guidelines"):
        shutil.copytree(REPO / "data" / d, data / d)
    path = data / "languages" / "bn" / "prompts.json"
    bn = json.loads(path.read_text(encoding="utf-8"))
    del bn["tasks"]["translate_pair"]["examples"][0]["source"]["sent_less"]
    path.write_text(json.dumps(bn, ensure_ascii=False), encoding="utf-8")
    monkeypatch.setattr(L, "languages_dir", lambda: data / "languages")
    L._all.cache_clear()
    try:
        with pytest.raises(InputError, match=r"a worked example for prompt 'translate_pair@2' has no sent_less"):
            _render("translate_pair", {"sent_more": "My own S1.", "sent_less": "My own S2."}, "Bengali")
    finally:
        L._all.cache_clear()  # the next test reads the packaged folders again


def test_the_mt_cache_asks_again_into_a_language_whose_examples_changed(
    standin_server,  # noqa: F811 (the fixture imported from llm_standin)
    tmp_path,
    monkeypatch,
):
    """`curate translate`'s mt cache keys an `llm` translation on the target's prompts.json: after
    Bengali's examples change, a pair into Bengali is asked again (with the new example), a pair into
    Hindi is not."""
    from biaskit.curation.mt_base import create_engine
    from biaskit.curation.translate import translate_pairs

    from biaskit import languages as L
    from biaskit.cache import DiskCache
    from biaskit.schema import SentencePair

    data = tmp_path / "data"  # biaskit's language data, in a folder this test may edit
    for d in ("languages", "inventories", "guidelines"):
        shutil.copytree(REPO / "data" / d, data / d)
    monkeypatch.setattr(L, "languages_dir", lambda: data / "languages")
    reply = {"sent_more": "মুসলিম প্রতিবেশী খুবই ধার্মিক।", "sent_less": "হিন্দু প্রতিবেশী খুবই ধার্মিক।"}
    srv = standin_server(lambda body, n: chat(json.dumps(reply, ensure_ascii=False)))
    pair = SentencePair(
        sent_more="My Muslim neighbour is very pious.",
        sent_less="My Hindu neighbour is very pious.",
        bias_type="religion",
        direction="stereo",
    )
    cache = DiskCache(tmp_path / "mt.db", namespace="mt")

    def translate(lang: str, run: int) -> None:
        eng = create_engine("llm:m", base_url=srv.base_url, client_options={"api_key": "x", "max_retries": 0})
        try:
            translate_pairs([pair], lang, [eng], tmp_path / f"{lang}{run}.jsonl", cache=cache)
        finally:
            eng.close()

    translate("bn", 1), translate("hi", 1)
    assert srv.count == 2
    path = data / "languages" / "bn" / "prompts.json"
    bn = json.loads(path.read_text(encoding="utf-8"))
    bn["tasks"]["translate_pair"]["examples"][1]["translation"]["sent_more"] = "ব্রাহ্মণ পরিবারটি একটি প্রাসাদে থাকত।"
    path.write_text(json.dumps(bn, ensure_ascii=False), encoding="utf-8")
    L._all.cache_clear()  # a new process reads the folder again
    translate("bn", 2), translate("hi", 2)
    assert srv.count == 3 and "ব্রাহ্মণ পরিবারটি একটি প্রাসাদে থাকত।" in user_text(srv.requests[-1])
