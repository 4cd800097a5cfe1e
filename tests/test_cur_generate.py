"""Generation pipeline logic with the deterministic dummy backend: attribute normalisation and
dedup, junk replies, rejects with raw text, resume after an interrupt, zero-cost re-runs,
concurrency, run log, dry run. (The real llama.cpp server: test_cur_integration.py.)"""

from __future__ import annotations

import json
import re

import pytest
from biaskit.curation.generate import generate_sentences, generate_tuples
from biaskit.curation.llm import DummyLLM
from biaskit.curation.options import SentencesOptions, TuplesOptions
from biaskit.curation.prompts import get_prompt
from biaskit.curation.runner import errors_path, runlog_path
from biaskit.curation.tasks.tuples import (
    TupleTask,
    dedupe_attributes,
    lemma_key,
    normalize_attribute,
    not_an_attribute,
    pick_examples,
)

from biaskit.cache import DiskCache
from biaskit.cli import main
from biaskit.errors import InputError
from biaskit.io import read_jsonl


@pytest.mark.parametrize(
    "raw, norm",
    [
        ("Lazy", "lazy"),
        ("  1. Dirty.", "dirty"),
        ("- hard-working", "hard-working"),
        ('"Pious"', "pious"),
        ("Greedy - they love money", "greedy"),
        ("Orthodox (religious)", "orthodox"),
        ("OBC", "OBC"),
        ("word1", None),
        ("...", None),
        ("", None),
        ("!!", None),
    ],
)
def test_normalize_attribute(raw, norm):
    assert normalize_attribute(raw) == norm


@pytest.mark.parametrize(
    "a, b",
    [
        ("thieves", "thief"),
        ("laziness", "lazy"),
        ("Hard-working", "hardworking"),
        ("criminals", "criminal"),
        ("businesses", "business"),
        ("wives", "wife"),
    ],
)
def test_lemma_key_folds_near_duplicates(a, b):
    assert lemma_key(a) == lemma_key(b)


def test_lemma_key_keeps_distinct_words_apart():
    assert len({lemma_key(w) for w in ["poor", "pious", "proud", "rich", "glass", "bus", "analysis"]}) == 7


def test_dedupe_attributes_by_hand():
    kept, dropped = dedupe_attributes(
        ["Lazy", "lazy.", "LAZINESS", "hard-working", "Hardworking", "dirty", "dirtyy", "Dalit", "clean"],
        identity="Dalits",
    )
    # worked out by hand: case/punct (lazy.), lemma (laziness), hyphen (Hardworking), difflib ratio
    # 0.91 < 0.92 keeps 'dirtyy'? ratio('dirty','dirtyy') = 2*5/11 = 0.909 -> kept; identity echo dropped
    assert kept == ["lazy", "hard-working", "dirty", "dirtyy", "clean"]
    assert ("dalit", "<identity term>") in dropped and len(dropped) == 4


def _tuples_responder(junk_for=()):
    """Replies by identity + polarity, in a few recorded junk shapes."""

    def reply(messages, params, rf):
        user = next(m["content"] for m in messages if m["role"] == "user")  # the first ask, not a re-ask
        ident = re.search(r"hold about (.+?) \(", user).group(1)
        pol = "negative" if " negative " in user else "positive"
        if ident in junk_for:
            return "Sorry, I can't do that."
        words = {
            "negative": ["Dirty", "dirty.", "poor", "Poverty"],
            "positive": ["hard-working", "Hardworking", "humble"],
        }[pol]
        if pol == "negative":
            return "```json\n" + json.dumps({"attributes": words}) + "\n```"
        return json.dumps(words)  # a bare list: wrapped into {"attributes": [...]}

    return reply


def test_tuples_end_to_end_with_junk_and_rejects(tmp_path):
    out = tmp_path / "t.jsonl"
    llm = DummyLLM(
        responses=_tuples_responder(junk_for=("Brahmin",)), cache=DiskCache(tmp_path / "c.db", namespace="llm")
    )
    s = generate_tuples(
        llm,
        get_prompt("attributes"),
        TuplesOptions.from_kwargs(axis="Caste", identities=["Dalit", "Brahmin"], n=10, out=out),
        params={"temperature": 0.7, "seed": 3},
        progress=False,
    )
    assert s.jobs == 4 and s.run == 4 and s.errors == 2
    rows = read_jsonl(out)
    got = sorted((r["identity"], r["polarity"], r["attribute"]) for r in rows)
    assert got == [
        ("Dalit", "negative", "dirty"),
        ("Dalit", "negative", "poor"),
        ("Dalit", "negative", "poverty"),
        ("Dalit", "positive", "hard-working"),
        ("Dalit", "positive", "humble"),
    ]
    for r in rows:
        assert r["axis"] == "caste" and r["tuple_id"].startswith("t-")
        p = r["provenance"]
        assert p["prompt_id"] == "attributes" and p["temperature"] == 0.7 and p["seed"] == 3 and p["model"] == "dummy"
        assert len(p["request_hash"]) == 64 and len(p["job"]) == 64 and p["job_rows"] >= 1 and p["timestamp"]
    errs = read_jsonl(errors_path(out))
    assert len(errs) == 2 and all(e["raw"] == "Sorry, I can't do that." and e["status"] == "parse_error" for e in errs)
    assert {e["context"]["identity"] for e in errs} == {"Brahmin"}
    log = read_jsonl(runlog_path(out))
    assert log[-1]["llm"]["requests"] == 6 and log[-1]["errors"] == 2  # 2 good + 2 x (ask + re-ask)
    assert log[-1]["llm"]["estimated_cost_usd"] == 0.0 and log[-1]["prompt_hash"] == get_prompt("attributes").hash


def test_rerun_costs_zero_and_resume_after_interrupt(tmp_path):
    out = tmp_path / "t.jsonl"
    cache = DiskCache(tmp_path / "c.db", namespace="llm")
    calls = []

    def reply(messages, params, rf):
        calls.append(messages[-1]["content"])
        if len(calls) == 3:
            raise KeyboardInterrupt  # the user presses Ctrl-C during the third request
        return json.dumps({"attributes": [f"attr{len(calls)}x"]})

    llm = DummyLLM(responses=reply, cache=cache)
    idents = ["Dalit", "Brahmin", "OBC"]
    with pytest.raises(KeyboardInterrupt):
        generate_tuples(
            llm,
            get_prompt("attributes"),
            TuplesOptions.from_kwargs(axis="caste", identities=idents, polarity="negative", n=3, out=out),
            progress=False,
        )
    assert len(read_jsonl(out)) == 2  # finished work was kept
    assert read_jsonl(runlog_path(out))[-1]["interrupted"] is True
    llm2 = DummyLLM(responses=lambda m, p, rf: json.dumps({"attributes": ["late"]}), cache=cache)
    s = generate_tuples(
        llm2,
        get_prompt("attributes"),
        TuplesOptions.from_kwargs(axis="caste", identities=idents, polarity="negative", n=3, out=out),
        progress=False,
    )
    assert s.skipped_done == 2 and s.run == 1 and len(llm2.sent) == 1 and len(read_jsonl(out)) == 3
    llm3 = DummyLLM(responses=["never used"], cache=cache)
    s = generate_tuples(
        llm3,
        get_prompt("attributes"),
        TuplesOptions.from_kwargs(axis="caste", identities=idents, polarity="negative", n=3, out=out),
        progress=False,
    )
    assert s.run == 0 and llm3.sent == [] and llm3.stats.requests == 0


def test_retry_failed_asks_again(tmp_path):
    out = tmp_path / "t.jsonl"
    cache = DiskCache(tmp_path / "c.db", namespace="llm")
    bad = DummyLLM(responses=["junk"], cache=cache)
    generate_tuples(
        bad,
        get_prompt("attributes"),
        TuplesOptions.from_kwargs(axis="caste", identities=["Dalit"], polarity="negative", n=3, out=out),
        progress=False,
    )
    assert not out.exists() or read_jsonl(out) == []
    same = DummyLLM(responses=['{"attributes": ["x1y"]}'], cache=cache)
    generate_tuples(
        same,
        get_prompt("attributes"),
        TuplesOptions.from_kwargs(axis="caste", identities=["Dalit"], polarity="negative", n=3, out=out),
        progress=False,
    )
    assert same.sent == [] and errors_path(out).exists()  # cached junk: no new request without --retry-failed
    generate_tuples(
        same,
        get_prompt("attributes"),
        TuplesOptions.from_kwargs(
            axis="caste", identities=["Dalit"], polarity="negative", n=3, out=out, retry_failed=True
        ),
        progress=False,
    )
    assert len(same.sent) == 1 and [r["attribute"] for r in read_jsonl(out)] == ["x1y"]
    assert not errors_path(out).exists()  # the error line is gone once the job succeeded


def test_concurrency_gives_the_same_rows(tmp_path):
    idents = ["Dalit", "Brahmin", "OBC", "Kshatriya", "Baniya", "SC/ST"]

    def run(conc, d):
        llm = DummyLLM(cache=DiskCache(d / "c.db", namespace="llm"))  # schema-shaped deterministic replies
        generate_tuples(
            llm,
            get_prompt("attributes"),
            TuplesOptions.from_kwargs(axis="caste", identities=idents, n=3, out=d / "t.jsonl", concurrency=conc),
            progress=False,
        )
        return sorted((r["identity"], r["polarity"], r["attribute"]) for r in read_jsonl(d / "t.jsonl"))

    (tmp_path / "a").mkdir()
    (tmp_path / "b").mkdir()
    assert run(1, tmp_path / "a") == run(4, tmp_path / "b") != []


def test_cross_polarity_conflicts_are_marked(tmp_path):
    out = tmp_path / "t.jsonl"
    llm = DummyLLM(responses=lambda m, p, rf: '{"attributes": ["proud", "rich"]}', cache=False)
    generate_tuples(
        llm,
        get_prompt("attributes"),
        TuplesOptions.from_kwargs(axis="caste", identities=["Brahmin"], n=2, out=out),
        progress=False,
    )
    rows = read_jsonl(out)
    assert len(rows) == 4 and all(r["meta"]["conflict"] == "listed as both positive and negative" for r in rows)


def test_sentences_reject_rows_without_the_identity(tmp_path):
    t = tmp_path / "t.jsonl"
    llm = DummyLLM(responses=['{"attributes": ["poor"]}'], cache=False)
    generate_tuples(
        llm,
        get_prompt("attributes"),
        TuplesOptions.from_kwargs(axis="caste", identities=["Dalit"], polarity="negative", n=1, out=t),
        progress=False,
    )
    sl = DummyLLM(
        responses=[
            json.dumps(
                {
                    "sentences": [
                        "1. Dalit families are always poor.",
                        "Dalit families are always poor",
                        "Those people are always poor.",
                        "Poor.",
                    ]
                }
            )
        ],
        cache=False,
    )
    out = tmp_path / "s.jsonl"
    generate_sentences(
        sl, get_prompt("sentences"), SentencesOptions.from_kwargs(tuples=t, out=out, per_tuple=3), progress=False
    )
    rows = read_jsonl(out)
    assert [(r["sentence"], r["status"]) for r in rows] == [
        ("Dalit families are always poor.", "raw"),
        ("Those people are always poor.", "rejected"),
    ]
    assert rows[1]["meta"]["reason"] == "the sentence does not mention 'Dalit'"
    assert rows[0]["tuple_id"] == read_jsonl(t)[0]["tuple_id"] and rows[0]["polarity"] == "negative"


def test_bad_tuples_file_names_the_row(tmp_path):
    t = tmp_path / "t.jsonl"
    t.write_text(
        '{"identity": "Dalit", "attribute": "poor", "axis": "caste", "polarity": "negative"}\n'
        '{"identity": "Dalit", "attribute": "poor", "axis": "caste", "polarity": "sideways"}\n'
    )
    with pytest.raises(InputError, match=r"t.jsonl, row 2, column 'polarity'"):
        generate_sentences(
            DummyLLM(cache=False),
            get_prompt("sentences"),
            SentencesOptions.from_kwargs(tuples=t, out=tmp_path / "s.jsonl"),
        )


def test_cli_dry_run_needs_no_key_and_prints_prompts(tmp_path, monkeypatch, capsys):
    monkeypatch.delenv("OPENAI_API_KEY", raising=False)
    main(
        [
            "curate",
            "tuples",
            "--axis",
            "religion",
            "--polarity",
            "negative",
            "--n",
            "4",
            "--dry-run",
            "--show",
            "2",
            "--out",
            str(tmp_path / "t.jsonl"),
        ]
    )
    out = capsys.readouterr().out
    assert "dry run: 8 request(s)" in out and "attributes@3" in out and "Muslim" in out
    assert "Which negative stereotypes" in out and "Give the 4 most widespread ones" in out
    assert not (tmp_path / "t.jsonl").exists()


def test_cli_with_dummy_backend_and_missing_key_error(tmp_path, monkeypatch, capsys):
    monkeypatch.delenv("OPENAI_API_KEY", raising=False)
    monkeypatch.delenv("OPENAI_BASE_URL", raising=False)
    with pytest.raises(SystemExit) as e:
        main(["curate", "tuples", "--axis", "caste", "--model", "gpt-4o-mini", "--out", str(tmp_path / "t.jsonl")])
    assert e.value.code == 2 and "OPENAI_API_KEY" in capsys.readouterr().err
    main(
        [
            "curate",
            "tuples",
            "--axis",
            "caste",
            "--identities",
            "Dalit",
            "--llm",
            "dummy",
            "--n",
            "3",
            "--out",
            str(tmp_path / "t.jsonl"),
        ]
    )
    assert "tuples: " in capsys.readouterr().out and read_jsonl(tmp_path / "t.jsonl")


def test_anti_mode_as_documented(tmp_path, capsys, monkeypatch):
    """docs/curation.md's --mode anti block, run as written after the offline tuples step: every
    sentence goes to sent_less, its swap to sent_more, and the direction follows the identity's side
    (read here straight from identity_terms.json: disadvantaged -> antistereo, advantaged -> stereo)."""
    import shlex

    from conftest import REPO, run_cli

    monkeypatch.setenv("BIASKIT_NO_PROGRESS", "1")
    monkeypatch.chdir(tmp_path)
    doc = (REPO / "docs" / "curation.md").read_text(encoding="utf-8")
    tuples_line = re.search(r"<!-- offline-path -->\s*```bash\n(.*?)\n", doc).group(1)
    block = re.search(r"### Antistereotypical sentences.*?```bash\n(.*?)```", doc, re.S).group(1).strip().splitlines()
    for line in [tuples_line, *block]:
        code, _, err = run_cli(shlex.split(line)[1:], capsys)
        assert code == 0, (line, err)
    sents = {s["sentence"]: s for s in read_jsonl("sentences_anti.jsonl")}
    assert sents and all(
        s["mode"] == "anti" and s["provenance"]["prompt_id"] == "sentences_anti" for s in sents.values()
    )
    terms = json.loads((REPO / "data" / "inventories" / "identity_terms.json").read_text(encoding="utf-8"))
    side = {e["en"]["sg"]: e.get("side") for e in terms["axes"]["caste"]}
    pairs = read_jsonl("pairs_anti.jsonl")
    assert pairs
    for p in pairs:
        s = sents[p["sent_less"]]  # the generated sentence is the less stereotypical one
        assert p["group_less"] == s["identity"] and p["meta"]["mode"] == "anti"
        assert p["direction"] == {"disadvantaged": "antistereo", "advantaged": "stereo"}[side[s["identity"]]]
    assert {p["direction"] for p in pairs} == {"stereo", "antistereo"}


# ------------------------------------------------------------------ attributes@3: worked examples, echoes, categories
def test_attributes_v3_shows_three_examples_of_other_axes_in_the_reply_shape():
    task = TupleTask(get_prompt("attributes@3"))
    pool = {e["group"]: e["axis"] for e in task.prompt.examples}
    shown = {}
    for axis, ident in (
        ("caste", "Dalit"),
        ("religion", "Muslim"),
        ("gender", "woman"),
        ("age", "teenager"),
        ("region", "Bihari"),
    ):
        item = {"identity": ident, "axis": axis, "polarity": "negative", "n": 10}
        user = task.render(item)[1]["content"]
        replies = [json.loads(line) for line in user.splitlines() if line.startswith("{")]
        groups = [r["group"] for r in replies]
        assert len(replies) == 6 and len(set(groups)) == 3 and all(pool[g] != axis for g in groups)
        assert [r["stereotypes"] for r in replies] == ["negative", "positive"] * 3
        assert all(set(r) == {"group", "stereotypes", "attributes"} and r["attributes"] for r in replies)
        assert "Which negative stereotypes do people in India commonly hold about " + ident in user
        shown[axis] = tuple(groups)
        schema = task.schema_for(item)  # the group and the polarity are fixed to the request's
        assert schema["properties"]["group"]["enum"] == [ident]
        assert schema["properties"]["stereotypes"]["enum"] == ["negative"]
        assert task.schema["properties"]["group"] == {"type": "string", "minLength": 1}  # the template's is untouched
    assert len(set(shown.values())) >= 3  # the examples vary with the axis

    def groups(axis, ident):
        return [e["group"] for e in pick_examples(task.prompt.examples, axis=axis, identity=ident)]

    assert "lawyers" in groups("caste", "Dalit") and "lawyers" not in groups("caste", "Lawyer")  # never the group asked
    with pytest.raises(InputError, match="worked example 1 has no usable positive"):
        pick_examples([{"group": "x", "axis": "age", "negative": ["a"]}], axis="caste", identity="Dalit")


@pytest.mark.parametrize(
    "attr, why",
    [
        ("gender", "category"),
        ("Skin color", "category"),
        ("jaw shape", "category"),
        ("heights", "category"),
        ("age", "category"),
        ("uneducated", None),
        ("short-tempered", None),
        ("dark", None),
        ("tall", None),
    ],
)
def test_categories_are_no_attributes(attr, why):
    got = not_an_attribute(normalize_attribute(attr))
    assert (got is None) if why is None else (why in got)


def test_echoes_and_categories_are_dropped_and_a_reply_of_nothing_else_is_unusable(tmp_path):
    prompt = get_prompt("attributes@3")
    shown = pick_examples(prompt.examples, axis="caste", identity="Dalit")
    echo = shown[0]["negative"][0]  # an attribute of a worked example the request shows

    def reply(messages, params, rf):
        user = messages[-1]["content"]
        if "about Dalit" in user:  # a bare list: the group and polarity are filled in, as fixed
            return json.dumps([echo, "Uneducated", "gender", "skin color", "nouns", "negative", "Dalit"])
        return json.dumps({"group": "Brahmin", "stereotypes": "negative", "attributes": ["age", "height", echo]})

    out = tmp_path / "t.jsonl"
    s = generate_tuples(
        DummyLLM(responses=reply, cache=False),
        prompt,
        TuplesOptions.from_kwargs(axis="caste", identities=["Dalit", "Brahmin"], polarity="negative", n=5, out=out),
        progress=False,
    )
    rows = read_jsonl(out)
    assert [(r["identity"], r["attribute"]) for r in rows] == [("Dalit", "uneducated")]
    assert rows[0]["provenance"]["prompt_version"] == "3"
    errs = read_jsonl(errors_path(out))
    assert s.ok == 1 and len(errs) == 1 and errs[0]["status"] == "unusable"
    assert (
        "no attribute left" in errs[0]["error"]
        and "age (a category" in errs[0]["error"]
        and f"{echo} (an echo" in errs[0]["error"]
    )
