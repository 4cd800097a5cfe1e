"""The whole method in `biaskit run`, offline (the `dummy` LLM, tiny random models): anti-stereotype
sentences paired as antistereo rows, CATs drafted into a release with its StereoSet layout, SEAT tests
from the release's groups, and the evaluate stage over pairs, CATs and SEAT; the project file's checks
for the new stages and their rows in `biaskit status`. With people and real services (llama.cpp, Label
Studio, kill -9 during a CAT stage): test_pipeline_e2e_cats.py."""

from __future__ import annotations

import json

import pytest
from conftest import run_cli
from test_pipeline import OFFLINE, _lines, _project

# test_pipeline.py's offline project (dummy LLM: tuples, sentences, pairs, check, release) with the
# anti-stereotype sentences between the sentences and the pairs
GENERATE = (
    OFFLINE.replace('name = "offline"', 'name = "anti"').replace(
        "[stages.pairs]", "[stages.antistereo]\nper_tuple = 2\n\n[stages.pairs]"
    )
    + "plots = false\nkeyness = false\n"
)


def test_anti_stereotype_sentences_become_antistereo_pairs(tmp_path, capsys):
    assert GENERATE.count("[stages.") == 6
    d = _project(tmp_path, GENERATE)
    code, out, err = run_cli(["run", "--project", str(d)], capsys)
    assert code == 0, out + err
    assert "antistereo: done:" in out
    stereo = _lines(d / "work" / "sentences" / "sentences.jsonl")
    anti = _lines(d / "work" / "antistereo" / "sentences_anti.jsonl")
    merged = _lines(d / "work" / "antistereo" / "sentences.jsonl")
    assert anti and all(r["mode"] == "anti" for r in anti)
    assert merged == stereo + anti  # the one sentences file the next stages read
    assert all(r["provenance"]["prompt_id"] == "sentences_anti" for r in anti)
    pairs = _lines(d / "work" / "pairs" / "pairs.jsonl")
    by_sentence = {r["sentence"]: r for r in anti}
    from_anti = [p for p in pairs if p["meta"].get("mode") == "anti"]
    assert from_anti and len(from_anti) + sum(p["meta"].get("mode") != "anti" for p in pairs) == len(pairs)
    for p in from_anti:
        # the generated sentence goes against the tuple's stereotype: it is the less stereotypical side,
        # about the tuple's group; its swap (about the comparable group) is the more stereotypical one
        assert p["sent_less"] in by_sentence and p["group_less"] == by_sentence[p["sent_less"]]["identity"]
    # Dalit is the disadvantaged side: a sentence going against a Dalit stereotype makes an antistereo pair
    dalit = [p for p in from_anti if by_sentence[p["sent_less"]]["identity"] == "Dalit"]
    assert dalit and all(p["direction"] == "antistereo" for p in dalit)
    checked = _lines(d / "work" / "check" / "pairs.jsonl")
    released = _lines(d / "release" / "anti-0.1.0" / "pairs.jsonl")
    assert len(released) == sum(not p["meta"]["flags"] for p in checked)  # flagged pairs are not released
    assert {r["direction"] for r in released} == {"stereo", "antistereo"}


STEREOSET = """
[project]
name = "cats-offline"

[llm]
backend = "dummy"
model = "gpt-4o-mini"  # as `biaskit init` writes it: the dummy backend sends nothing to it

[stages.cats]
domains = "religion"
targets = ["Muslim", "Hindu", "Sikh", "Christian"]
per_target = 2

[stages.cat_translate]
target = "hi"

[stages.release]
date = "2025-01-01"
plots = false
keyness = false

[stages.seat_tests]

[stages.evaluate]
models = ["{gpt2}"]
scorer = "clm"
split = "test"
seat_models = ["{bert}"]
n_samples = 200
batch_size = 8
cat_split = "intrasentence"
"""


def test_cats_go_into_the_release_its_seat_tests_and_the_scores(tmp_path, capsys, tiny_gpt2, tiny_bert, monkeypatch):
    monkeypatch.setenv("BIASKIT_CACHE_DIR", str(tmp_path / "cache"))
    d = _project(tmp_path, STEREOSET.replace("{gpt2}", str(tiny_gpt2)).replace("{bert}", str(tiny_bert)))
    code, out, err = run_cli(["run", "--project", str(d)], capsys)
    assert code == 0, out + err
    cats = _lines(d / "work" / "cats" / "cats.jsonl")
    assert cats and {c["lang"] for c in cats} == {"en"}
    # the candidates for the blind review: every CAT once, the English parts as the source
    cands = _lines(d / "work" / "cat_translate" / "cat_candidates.jsonl")
    assert sorted(c["cat_id"] for c in cands) == sorted(c["cat_id"] for c in cats)
    assert all(c["target_lang"] == "hi" and c["candidates"][0]["engine"] == "llm" for c in cands)
    # the release: the cats config, StereoSet's own layout, retention in the card
    rel = d / "release" / "cats-offline-0.1.0"
    info = json.loads((rel / "release.json").read_text(encoding="utf-8"))
    assert info["counts"]["cats"]["records"] == len(cats) and "pairs" not in info["counts"]
    dev = json.loads((rel / "stereoset" / "dev.json").read_text(encoding="utf-8"))
    test = json.loads((rel / "stereoset" / "test.json").read_text(encoding="utf-8"))
    n = sum(len(x["data"][s]) for x in (dev, test) for s in ("intrasentence", "intersentence"))
    assert n == len(cats)
    t_dev = {e["target"] for s in dev["data"].values() for e in s}
    t_test = {e["target"] for s in test["data"].values() for e in s}
    assert t_dev and t_test and not t_dev & t_test  # disjoint by target term
    card = (rel / "README.md").read_text(encoding="utf-8")
    assert "CAT retention (cats.retention.json" in card and "structurally valid" in card
    # the dummy backend called no model: the card does not credit the model name [llm] would send
    # (gpt-4o-mini by default), and says what wrote the CATs; the English source is the pipeline's drafts
    assert "gpt-4o-mini" not in card
    assert "| en | biaskit-curate | LLM draft (dummy backend: placeholder text, no model called) |" in card
    # CATs the pipeline drafted are StereoSet's design: release.json and the evaluation say `stereoset`
    assert info["protocol"] == "stereoset"
    # SEAT tests from the release's groups: Muslim, Sikh, Christian each against Hindu, in English and Hindi
    index = json.loads((d / "work" / "seat_tests" / "tests" / "index.json").read_text(encoding="utf-8"))
    names = sorted(index["tests"])
    assert "en/release-religion-muslim-vs-hindu-pleasant-unpleasant.jsonl" in names
    assert "hi/release-religion-muslim-vs-hindu-nonviolent-violent.jsonl" in names
    doc = json.loads(
        (
            d / "work" / "seat_tests" / "tests" / "hi" / "release-religion-muslim-vs-hindu-pleasant-unpleasant.jsonl"
        ).read_text(encoding="utf-8")
    )
    assert "यह एक मुसलमान व्यक्ति है।" in doc["targ1"]["examples"] and "ये हिंदू लोग हैं।" in doc["targ2"]["examples"]
    # scores: the CATs of the test split, SEAT in both languages
    ev = d / "eval" / "cats-offline-0.1.0"
    cat_dirs = list((ev / "cats" / "en").iterdir())
    assert len(cat_dirs) == 1
    s = json.loads((cat_dirs[0] / "summary.json").read_text(encoding="utf-8"))
    intra = sum(1 for c in test["data"]["intrasentence"])
    assert s["data"]["release"]["split"] == "test" and s["count"] == intra
    assert s["protocol"]["name"] == "stereoset" and "release.json protocol" in s["protocol"]["chosen_by"]
    # no path of this machine in what evaluate published (the models are folders under tmp_path)
    for f in ev.rglob("*"):
        if f.suffix in (".json", ".md", ".csv", ".jsonl"):
            text = f.read_text(encoding="utf-8")
            assert not any(str(p) in text for p in (tmp_path, tiny_gpt2, tiny_bert)), f
    for lg in ("en", "hi"):
        (seat,) = list((ev / "seat" / lg).iterdir())
        ss = json.loads((seat / "summary.json").read_text(encoding="utf-8"))
        assert {t["test"] for t in ss["tests"]} == {n.split("/")[1][:-6] for n in names if n.startswith(lg)}
    # nothing changed: nothing runs
    code, out, err = run_cli(["run", "--project", str(d)], capsys)
    assert code == 0 and out.count("unchanged, skipped") == 5, out


@pytest.mark.parametrize(
    "body, expected",
    [
        (
            '[project]\nname = "x"\n[stages.release]\n',
            ["key 'stages.release'", "nothing gives this stage its pairs or CATs", "[stages.pairs]", "[stages.cats]"],
        ),
        ('[project]\nname = "x"\n[stages.seat_tests]\n', ["key 'stages.seat_tests'", "a release folder"]),
        ('[project]\nname = "x"\n[stages.cats]\n', ["key 'llm'", "the cats stage calls an LLM but no model is named"]),
        (
            '[project]\nname = "x"\n[llm]\nbackend = "dummy"\n[stages.cats]\nsplit = "both"\nper_targte = 3\n',
            ["key 'stages.cats.per_targte' (line 7)", "did you mean 'per_target'?"],
        ),
        (
            '[project]\nname = "x"\n[llm]\nbackend = "dummy"\n[stages.cat_review]\ninput = "c.jsonl"\n',
            ["key 'stages.cat_review.input'", "'c.jsonl' does not exist"],
        ),
        (
            '[project]\nname = "x"\n[llm]\nbackend = "dummy"\n[stages.cats]\n[stages.cat_translate]\nengines = '
            '["lmm"]\n',
            ["key 'stages.cat_translate.engines'", "did you mean 'llm'?"],
        ),
    ],
)
def test_the_new_stages_are_checked_with_file_key_and_fix(tmp_path, capsys, body, expected):
    d = _project(tmp_path, body)
    code, out, err = run_cli(["run", "--project", str(d)], capsys)
    assert code == 2, out + err
    for e in expected:
        assert e in err, err


def test_status_lists_the_new_stages_and_their_people(tmp_path, capsys):
    d = tmp_path / "p"
    assert run_cli(["init", str(d), "--template", "stereoset"], capsys)[0] == 0
    code, out, err = run_cli(["status", "--project", str(d), "--json"], capsys)
    assert code == 0, err
    rows = {r["name"]: r for r in json.loads(out)["stages"]}
    assert list(rows) == [
        "cats",
        "cat_review",
        "cat_translate",
        "cat_translation_review",
        "release",
        "seat_tests",
        "evaluate",
    ]
    assert rows["cat_review"]["human"] and rows["cat_translation_review"]["human"] and not rows["cats"]["human"]
    assert rows["cats"]["title"] == "draft CATs" and {r["status"] for r in rows.values()} == {"pending"}
    code, out, err = run_cli(["status", "--project", str(d)], capsys)
    assert "cat_translation_review" in out and "[people]" in out
