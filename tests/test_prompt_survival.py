"""The shipped prompts yield usable items from a model that runs here (slow, llm): gemma3-270m behind
llama.cpp names attributes for identity terms (tuples), writes sentences for accepted tuples
(stereotype and anti-stereotype) and CATs (both types) with the default templates, and some of each
survive parsing, the checkers and the simulated review of tests/prompt_survival.py. The full figures
for both models, before and after the worked examples, are in
docs/curation.md ("Paper-recipe prompts on small models")."""

from __future__ import annotations

import pytest
from prompt_survival import TUPLES, measure, render

from biaskit.io import read_jsonl

pytestmark = [pytest.mark.slow, pytest.mark.llm]


def test_the_shipped_prompt_yields_usable_tuples(gemma_llm_server, tmp_path, monkeypatch):
    """attributes@3 (worked examples about other groups, the group and polarity fixed in the reply):
    before it, gemma3-270m listed categories or letters and no tuple survived (docs/curation.md)."""
    from biaskit.curation.prompts import get_prompt
    from biaskit.curation.tasks.tuples import is_category, pick_examples

    monkeypatch.setenv("BIASKIT_CACHE_DIR", str(tmp_path / "cache"))
    res = measure(
        gemma_llm_server.base_url,
        gemma_llm_server.model,
        tmp_path / "work",
        stages=("tuples",),
        identities={"caste": ["Brahmin"], "religion": ["Muslim"]},
        temperature=0,  # greedy (the tasks' default is 0.7): the same replies every run
    )
    print(render([res]))
    t = res["stages"]["tuples"]
    assert res["prompts"]["tuples"] == "attributes@3" and t["jobs"] == 4
    # greedy gemma3-270m: one job names 3 attributes that pass the review (Muslim, negative); in the other
    # three it copies the attributes of a worked example, which the echo filter refuses: the documented
    # failure path (the job in the errors file with its reply), asserted rather than hoped away
    assert t["reviewed"] >= 3 and t["jobs_with_usable"] >= 1
    written = {r["provenance"]["job"] for r in read_jsonl(tmp_path / "work" / "tuples.jsonl")}
    errors = read_jsonl(tmp_path / "work" / "tuples.errors.jsonl")
    assert len(written) + len(errors) == t["jobs"]
    for e in errors:
        assert e["status"] == "unusable" and "an echo of the request or of a worked example" in e["error"], e
        assert e["raw"]
    pool = get_prompt("attributes@3").examples
    for row in t["kept"]:  # nothing a request showed comes back as an attribute of the group asked
        ident, attr = row.split(" (", 1)[0], row.split(": ", 1)[1]
        shown = pick_examples(pool, axis={"Brahmin": "caste", "Muslim": "religion"}[ident], identity=ident)
        assert attr not in {w for e in shown for w in e["positive"] + e["negative"]}
        assert not is_category(attr) and attr not in ("positive", "negative")


def test_the_shipped_prompts_yield_usable_sentences_and_cats(gemma_llm_server, tmp_path, monkeypatch):
    monkeypatch.setenv("BIASKIT_CACHE_DIR", str(tmp_path / "cache"))
    res = measure(
        gemma_llm_server.base_url,
        gemma_llm_server.model,
        tmp_path / "work",
        per_tuple=3,
        per_target=2,
        stages=("sentences", "cats"),
        tuples=TUPLES[:3],
        cat_targets={"religion": ["Muslim", "Hindu"]},
        temperature=0,
    )
    print(render([res]))
    st = res["stages"]
    assert res["prompts"]["stereo"] == "sentences@3" and res["prompts"]["intrasentence"] == "cat_intrasentence@2"
    assert st["sentences (stereo)"]["reviewed"] >= 1 and st["sentences (stereo)"]["pairs_unflagged"] >= 1
    assert st["sentences (anti)"]["reviewed"] >= 1
    assert st["CATs (intrasentence)"]["reviewed"] + st["CATs (intersentence)"]["reviewed"] >= 2
    for c in st["CATs (intrasentence)"]["examples"]:
        assert c["context"].count("BLANK") == 1
