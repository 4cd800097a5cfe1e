"""End to end against a real llama.cpp server (SmolLM2-135M from PyPI) with the real openai client:
tuples -> sentences -> pairs -> check, then the same run again makes zero requests (counted in the
server's access log)."""

from __future__ import annotations

import pytest
from biaskit.curation.prompts import get_prompt

from biaskit.cli import main
from biaskit.io import read_jsonl

pytestmark = [pytest.mark.slow, pytest.mark.llm]


def _run(argv):
    try:
        main(argv)
    except SystemExit as exc:
        return exc.code
    return 0


def test_pipeline_end_to_end_then_rerun_costs_zero_requests(llm_server, tmp_path, monkeypatch, capsys):
    monkeypatch.delenv("OPENAI_API_KEY", raising=False)
    # greedy decoding (the tasks' default is 0.7), seed 0: the same replies every run on this build of llama.cpp
    llm = ["--model", llm_server.model, "--base-url", llm_server.base_url, "--temperature", "0", "--seed", "0"]
    tuples, sents, pairs, checked = (
        tmp_path / n for n in ("tuples.jsonl", "sentences.jsonl", "pairs.jsonl", "checked.jsonl")
    )

    def pipeline():
        assert (
            _run(
                [
                    "curate",
                    "tuples",
                    "--axis",
                    "caste",
                    "--identities",
                    "Dalit,Kshatriya",
                    "--polarity",
                    "negative",
                    "--n",
                    "3",
                    "--max-tokens",
                    "48",
                    "--concurrency",
                    "2",
                    "--out",
                    str(tuples),
                    *llm,
                ]
            )
            == 0
        )
        assert (
            _run(
                [
                    "curate",
                    "sentences",
                    "--tuples",
                    str(tuples),
                    "--per-tuple",
                    "2",
                    "--max-tokens",
                    "120",
                    "--out",
                    str(sents),
                    *llm,
                ]
            )
            == 0
        )
        assert _run(["curate", "pairs", "--sentences", str(sents), "--out", str(pairs)]) == 0
        assert _run(["curate", "check", "--pairs", str(pairs), "--out", str(checked)]) == 0

    before = llm_server.requests()
    pipeline()
    llm_server.wait_idle()
    first = llm_server.requests() - before
    # 2 tuple jobs (+1 rejected json_schema probe unless an earlier test remembered the format),
    # then one job per tuple written; greedy SmolLM2 names an attribute for both groups (for Brahmin it
    # writes JSON the schema refuses: hence Kshatriya, Dalit's other comparable group)
    t_rows = read_jsonl(tuples)
    assert t_rows, "the model produced no usable attributes"
    n_tuple_jobs = 2
    errors = tmp_path / "tuples.errors.jsonl"
    t_err = read_jsonl(errors) if errors.exists() else []
    assert len({r["provenance"]["job"] for r in t_rows}) + len(t_err) == n_tuple_jobs
    s_err = read_jsonl(tmp_path / "sentences.errors.jsonl") if (tmp_path / "sentences.errors.jsonl").exists() else []
    s_rows = read_jsonl(sents)
    assert len({r["provenance"]["job"] for r in s_rows}) + len(s_err) == len(t_rows)
    # a parse failure may re-ask once, so between 1 and 2 requests per job (+ format probes)
    jobs = n_tuple_jobs + len(t_rows)
    assert jobs <= first <= 2 * jobs + 2  # two threads may both probe json_schema once
    # provenance on every generated row: the default templates (attributes@3, sentences@3)
    defaults = {k: get_prompt(k) for k in ("attributes", "sentences")}
    for r in t_rows + s_rows:
        p = r["provenance"]
        assert p["model"] == "smollm2" and p["endpoint"] == llm_server.base_url
        assert p["prompt_id"] in ("attributes", "sentences") and len(p["prompt_hash"]) == 12
        assert (p["prompt_version"], p["prompt_hash"]) == (
            defaults[p["prompt_id"]].version,
            defaults[p["prompt_id"]].hash,
        )
        assert p["temperature"] == 0 and p["seed"] == 0 and len(p["request_hash"]) == 64 and p["timestamp"]
        assert p["response_format"] == "json_object_schema"  # llama.cpp rejects json_schema
    # pairs: every usable sentence became a pair or a reject with a reason
    p_rows = read_jsonl(pairs) if pairs.exists() else []
    rejects = read_jsonl(tmp_path / "pairs.errors.jsonl") if (tmp_path / "pairs.errors.jsonl").exists() else []
    assert len(p_rows) + len(rejects) == len(s_rows)
    comparable = {"Dalit": "Brahmin", "Kshatriya": "Dalit"}  # each group's first comparable group (the inventory's)
    for p in p_rows:
        assert p["group_more"] in comparable and p["group_less"] == comparable[p["group_more"]]
        assert p["direction"] == ("stereo" if p["group_more"] == "Dalit" else "antistereo")  # Kshatriya: advantaged
    c_rows = read_jsonl(checked) if checked.exists() else []
    assert len(c_rows) == len(p_rows) and all("flags" in r for r in c_rows)
    runlog = read_jsonl(tmp_path / "tuples.runlog.jsonl")
    assert runlog[-1]["llm"]["requests"] >= n_tuple_jobs and runlog[-1]["llm"]["estimated_cost_usd"] == 0.0

    # the same run again: everything is answered from the outputs and the cache
    snapshot = {p: p.read_text() for p in (tuples, sents)}
    before = llm_server.requests()
    pipeline()
    llm_server.wait_idle()
    assert llm_server.requests() - before == 0
    assert {p: p.read_text() for p in (tuples, sents)} == snapshot
    last = read_jsonl(tmp_path / "sentences.runlog.jsonl")[-1]
    assert last["llm"]["requests"] == 0 and last["skipped_done"] + last["run"] == last["jobs"]

    # deleting the outputs (not the cache) still costs nothing: the cache answers
    tuples.unlink()
    before = llm_server.requests()
    assert (
        _run(
            [
                "curate",
                "tuples",
                "--axis",
                "caste",
                "--identities",
                "Dalit,Kshatriya",
                "--polarity",
                "negative",
                "--n",
                "3",
                "--max-tokens",
                "48",
                "--out",
                str(tuples),
                *llm,
            ]
        )
        == 0
    )
    llm_server.wait_idle()
    assert llm_server.requests() - before == 0
    key = lambda r: (r["identity"], r["attribute"])  # noqa: E731 (the first run used 2 threads: order may differ)
    assert sorted(map(key, read_jsonl(tuples))) == sorted(map(key, t_rows))
    assert all(r["provenance"]["cached"] for r in read_jsonl(tuples))


def test_format_fallback_against_llama_cpp(llm_server, tmp_path, monkeypatch):
    """The real server rejects json_schema (HTTP 500); the client falls back to json_object+schema,
    remembers it in the disk cache, and a new client does not probe again."""
    from biaskit.curation import llm as llm_mod
    from biaskit.curation.llm import base as llm_base

    from biaskit.cache import DiskCache

    monkeypatch.setattr(llm_base, "_FORMAT_MEMORY", {})
    schema = {
        "type": "object",
        "required": ["words"],
        "properties": {"words": {"type": "array", "items": {"type": "string"}, "minItems": 1, "maxItems": 2}},
    }
    msgs = [{"role": "user", "content": 'Name two colours. Reply as JSON {"words": [...]}'}]
    cache = DiskCache(tmp_path / "c.sqlite3", namespace="llm")
    client = llm_mod.get_llm("openai", model=llm_server.model, base_url=llm_server.base_url, cache=cache)
    before = llm_server.requests()
    res = client.complete_json(msgs, schema, temperature=0, seed=1, max_tokens=24)
    llm_server.wait_idle()
    assert res.response_format == "json_object_schema"
    assert llm_server.requests() - before == client.stats.requests >= 2  # the rejected probe + the answer(s)
    if res.ok:
        assert isinstance(res.data["words"], list) and 1 <= len(res.data["words"]) <= 2
    else:
        assert res.raw is not None and res.error
    monkeypatch.setattr(llm_base, "_FORMAT_MEMORY", {})
    fresh = llm_mod.get_llm("openai", model=llm_server.model, base_url=llm_server.base_url, cache=cache)
    before = llm_server.requests()
    res2 = fresh.complete_json(msgs, schema, temperature=0, seed=2, max_tokens=24)
    llm_server.wait_idle()
    assert res2.response_format == "json_object_schema" and fresh.stats.requests == llm_server.requests() - before
    assert fresh.stats.requests in (1, 2)  # no probe; at most one re-ask
