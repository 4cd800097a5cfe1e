"""The shipped prompts yield usable items from a model that runs here (slow, llm): gemma3-270m behind
llama.cpp writes sentences for accepted tuples (stereotype and anti-stereotype) and CATs (both types)
with the default templates, and some of each survive parsing, the checkers and the simulated review
of tests/prompt_survival.py. The full figures for both models, before and after the worked
examples, are in docs/curation.md ("Paper-recipe prompts on small models")."""
from __future__ import annotations

import pytest

from prompt_survival import TUPLES, measure, render

pytestmark = [pytest.mark.slow, pytest.mark.llm]


def test_the_shipped_prompts_yield_usable_sentences_and_cats(gemma_llm_server, tmp_path, monkeypatch):
    monkeypatch.setenv("BIASKIT_CACHE_DIR", str(tmp_path / "cache"))
    res = measure(gemma_llm_server.base_url, gemma_llm_server.model, tmp_path / "work", per_tuple=3, per_target=2,
                  stages=("sentences", "cats"), tuples=TUPLES[:3], cat_targets={"religion": ["Muslim", "Hindu"]})
    print(render([res]))
    st = res["stages"]
    assert res["prompts"]["stereo"] == "sentences@3" and res["prompts"]["intrasentence"] == "cat_intrasentence@2"
    assert st["sentences (stereo)"]["reviewed"] >= 1 and st["sentences (stereo)"]["pairs_unflagged"] >= 1
    assert st["sentences (anti)"]["reviewed"] >= 1
    assert st["CATs (intrasentence)"]["reviewed"] + st["CATs (intersentence)"]["reviewed"] >= 2
    for c in st["CATs (intrasentence)"]["examples"]:
        assert c["context"].count("BLANK") == 1
