"""LLM client: parsing/repair of recorded junk replies, schema coercion, cache keys, reask, cost;
retries, Retry-After, rate-limit pauses and response_format fallback through the real openai client
against a local stand-in HTTP server (hosted APIs need the internet; the real llama.cpp server is
exercised in test_cur_integration.py)."""

from __future__ import annotations

import time

import pytest
from biaskit.curation import llm as llm_mod
from biaskit.curation.llm import (
    DummyLLM,
    Usage,
    coerce_to_schema,
    estimate_cost,
    get_llm,
    load_prices,
    parse_json_lenient,
    validate_schema,
)
from biaskit.curation.llm import base as llm_base
from llm_standin import Reply, chat, standin_server  # noqa: F401 (a fixture)

from biaskit.cache import DiskCache
from biaskit.errors import InputError

SCHEMA = {
    "type": "object",
    "required": ["attributes"],
    "properties": {"attributes": {"type": "array", "minItems": 1, "items": {"type": "string"}}},
}


# ------------------------------------------------------------------ parsing and repair (recorded junk)
@pytest.mark.parametrize(
    "raw, expected, repair",
    [
        ('{"attributes": ["lazy", "dirty"]}', {"attributes": ["lazy", "dirty"]}, None),
        ('```json\n{"attributes": ["lazy", "dirty"]}\n```', {"attributes": ["lazy", "dirty"]}, "code_fence"),
        ('{"attributes": ["lazy", "dirty",]}', {"attributes": ["lazy", "dirty"]}, "json_repair"),
        ("{'attributes': ['lazy', 'dirty']}", {"attributes": ["lazy", "dirty"]}, "json_repair"),
        # cut off by max_tokens: the fragment "lou" (of "loud") is not an attribute and is dropped
        ('{"attributes": ["lazy", "dirty", "lou', {"attributes": ["lazy", "dirty"]}, "cut_off"),
        ('{"attributes": ["lazy", "dirty"', {"attributes": ["lazy", "dirty"]}, "cut_off"),
        ('{"attributes": ["say \\"hi\\" then', {"attributes": []}, "cut_off"),
        ('Sure! Here you go: {"attributes": ["lazy"]} Hope this helps.', {"attributes": ["lazy"]}, "json_repair"),
        ("{attributes: [lazy, dirty]}", {"attributes": ["lazy", "dirty"]}, "json_repair"),
        ('["lazy", "dirty"]', ["lazy", "dirty"], None),
    ],
)
def test_parse_and_repair_recorded_junk(raw, expected, repair):
    data, repairs, err = parse_json_lenient(raw)
    assert err is None and data == expected
    assert (repair in repairs) if repair else repairs == []


@pytest.mark.parametrize("raw", ["", "   ", "I cannot help with that.", None])
def test_unrecoverable_replies_give_an_error_not_an_exception(raw):
    data, _, err = parse_json_lenient(raw)
    assert data is None and err


@pytest.mark.parametrize(
    "data, expected, fix",
    [
        (["a", "b"], {"attributes": ["a", "b"]}, "wrapped_bare_list"),
        ({"words": ["a", "b"]}, {"attributes": ["a", "b"]}, "renamed_key:words->attributes"),
        ({"attributes": "a, b; c"}, {"attributes": ["a", "b", "c"]}, "split_string"),
        ({"attributes": [{"word": "a"}, {"attribute": "b"}]}, {"attributes": ["a", "b"]}, "flattened_objects"),
    ],
)
def test_shape_coercion(data, expected, fix):
    out, fixes = coerce_to_schema(data, SCHEMA)
    assert out == expected and fixes == [fix] and validate_schema(out, SCHEMA) is None


FIXED = {
    "type": "object",
    "required": ["group", "stereotypes", "attributes"],
    "properties": {
        "group": {"type": "string", "enum": ["Dalit"]},
        "stereotypes": {"const": "negative"},
        "attributes": {"type": "array", "minItems": 1, "items": {"type": "string"}},
    },
}


@pytest.mark.parametrize(
    "data, expected, fixes",
    [
        (
            {"attributes": ["a"]},
            {"group": "Dalit", "stereotypes": "negative", "attributes": ["a"]},
            ["filled_fixed:group,stereotypes"],
        ),
        (
            ["a"],
            {"group": "Dalit", "stereotypes": "negative", "attributes": ["a"]},
            ["wrapped_bare_list", "filled_fixed:group,stereotypes"],
        ),
        (
            {"group": "Dalit", "words": ["a"]},
            {"group": "Dalit", "stereotypes": "negative", "attributes": ["a"]},
            ["renamed_key:words->attributes", "filled_fixed:stereotypes"],
        ),
    ],
)
def test_properties_with_one_allowed_value_are_filled_in(data, expected, fixes):
    out, done = coerce_to_schema(data, FIXED)
    assert out == expected and done == fixes and validate_schema(out, FIXED) is None


def test_a_reply_about_another_group_is_not_repaired():
    out, done = coerce_to_schema({"group": "farmers", "attributes": ["a"]}, FIXED)
    assert out["group"] == "farmers" and "group" in validate_schema(out, FIXED)


def test_schema_validation_reports_the_path():
    assert "attributes/1" in validate_schema({"attributes": ["a", 3]}, SCHEMA)
    assert validate_schema({"other": 1}, SCHEMA)


# ------------------------------------------------------------------ dummy backend: pipeline logic
def _msgs(text="List attributes"):
    return [{"role": "user", "content": text}]


def test_cache_makes_the_second_call_free_and_keys_on_the_full_request(tmp_path):
    llm = DummyLLM(responses=['{"attributes": ["a"]}'], cache=DiskCache(tmp_path / "c.db", namespace="llm"))
    r1 = llm.complete_json(_msgs(), SCHEMA, temperature=0.7, seed=1)
    r2 = llm.complete_json(_msgs(), SCHEMA, temperature=0.7, seed=1)
    assert not r1.cached and r2.cached and r1.request_hash == r2.request_hash and len(llm.sent) == 1
    assert r2.created_at == r1.created_at  # provenance timestamp is the generation time
    for variant in (
        dict(temperature=0.2, seed=1),
        dict(temperature=0.7, seed=2),
        dict(temperature=0.7, seed=1, max_tokens=9),
    ):
        assert not llm.complete_json(_msgs(), SCHEMA, **variant).cached
    assert not llm.complete_json(_msgs("other"), SCHEMA, temperature=0.7, seed=1).cached
    assert not llm.complete_json(_msgs(), {**SCHEMA, "title": "x"}, temperature=0.7, seed=1).cached
    assert len(llm.sent) == 6
    # same request, new client object, other model name -> different key
    other = DummyLLM("dummy-2", responses=['{"attributes": ["a"]}'], cache=llm.cache)
    assert not other.complete_json(_msgs(), SCHEMA, temperature=0.7, seed=1).cached
    s = llm.stats.snapshot()
    assert s["cache_hits"] == 1 and s["calls"] == 7 and s["requests"] == 6


def test_reask_once_then_keep_the_raw_reply(tmp_path):
    llm = DummyLLM(responses=["no json here", '{"attributes": ["ok"]}'], cache=DiskCache(tmp_path / "c.db"))
    r = llm.complete_json(_msgs(), SCHEMA)
    assert r.ok and r.data == {"attributes": ["ok"]} and r.attempts == 2 and len(r.history) == 2
    reask = llm.sent[1]["messages"]
    assert reask[-2] == {"role": "assistant", "content": "no json here"} and "not usable" in reask[-1]["content"]
    bad = DummyLLM(responses=["still junk"], cache=DiskCache(tmp_path / "d.db"))
    r = bad.complete_json(_msgs(), SCHEMA)
    assert not r.ok and r.error.startswith("parse_error") and r.raw == "still junk" and r.data is None
    assert bad.stats.snapshot()["errors"] == 1
    # junk is cached too: asking again costs nothing and gives the same verdict
    r2 = bad.complete_json(_msgs(), SCHEMA)
    assert r2.cached and r2.error == r.error and len(bad.sent) == 2
    # refresh bypasses the cache
    bad.complete_json(_msgs(), SCHEMA, refresh=True)
    assert len(bad.sent) == 4


def test_schema_errors_are_reported_and_truncation_is_explained(tmp_path):
    llm = DummyLLM(responses=['{"attributes": []}'], cache=False, parse_retries=0)
    r = llm.complete_json(_msgs(), SCHEMA)
    assert r.error.startswith("schema_error") and "attributes" in r.error


def test_cost_estimates_and_price_overrides(tmp_path):
    prices = load_prices()
    u = Usage(prompt_tokens=1_000_000, completion_tokens=1_000_000)
    assert estimate_cost("gpt-4o-mini", u, prices) == pytest.approx(0.15 + 0.60)
    assert estimate_cost("gpt-4o-mini-2024-07-18", u, prices) == pytest.approx(0.75)  # longest prefix
    assert estimate_cost("my-model", u, prices, "http://127.0.0.1:8080/v1") == 0.0
    assert estimate_cost("my-model", u, prices, "https://api.example.com/v1") is None
    f = tmp_path / "prices.toml"
    f.write_text('"my-model" = [1.0, 2.0]\n')
    assert estimate_cost("my-model", u, load_prices(str(f))) == pytest.approx(3.0)
    f.write_text('"my-model" = "cheap"\n')
    with pytest.raises(InputError, match="my-model"):
        load_prices(str(f))


def test_missing_api_key_is_a_clear_error(monkeypatch):
    monkeypatch.delenv("OPENAI_API_KEY", raising=False)
    monkeypatch.delenv("OPENAI_BASE_URL", raising=False)
    with pytest.raises(llm_mod.LLMError, match="OPENAI_API_KEY"):
        get_llm("openai", model="gpt-4o-mini")
    assert get_llm("openai", model="m", base_url="http://localhost:1/v1").endpoint == "http://localhost:1/v1"


# ------------------------------------------------------------------ a local stand-in server
class Scripted:
    """A script of replies, one per request (the last one repeats); ``script`` may be replaced."""

    def __init__(self, script):
        self.script = list(script)

    def __call__(self, body, n):
        step = self.script.pop(0) if len(self.script) > 1 else self.script[0]
        status, headers, payload = step(body) if callable(step) else step
        return Reply(status, payload, headers)


def ok(content='{"attributes": ["a", "b"]}', prompt=10, completion=5):
    r = chat(content, prompt_tokens=prompt, completion_tokens=completion)
    return r.status, r.headers, r.payload


@pytest.fixture
def standin(standin_server):  # noqa: F811 (the fixture imported from llm_standin)
    def make(script):
        scripted = Scripted(script)
        s = standin_server(scripted)
        s.scripted = scripted
        return s

    return make


@pytest.fixture(autouse=True)
def _fresh_format_memory(monkeypatch):
    monkeypatch.setattr(llm_base, "_FORMAT_MEMORY", {})


def _client(server, tmp_path, **kw):
    sleeps = []

    def sleep(s):
        sleeps.append(s)
        time.sleep(min(s, 0.05))

    kw.setdefault("cache", DiskCache(tmp_path / "c.db", namespace="llm"))
    c = get_llm("openai", model="m", base_url=server.base_url, sleep=sleep, backoff=0.01, **kw)
    return c, sleeps


def test_json_schema_rejected_like_llama_cpp_falls_back_and_is_remembered(standin, tmp_path):
    def llama_like(body):
        rf = body.get("response_format") or {}
        if rf.get("type") == "json_schema":
            return (
                500,
                {},
                {
                    "error": {
                        "message": "1 validation error: body.response_format.type Input should be 'text' or "
                        "'json_object'"
                    }
                },
            )
        assert rf == {"type": "json_object", "schema": SCHEMA}
        return ok()

    s = standin([llama_like])
    c, _ = _client(s, tmp_path)
    r = c.complete_json(_msgs(), SCHEMA, seed=1)
    assert r.ok and r.response_format == "json_object_schema" and len(s.requests) == 2
    r = c.complete_json(_msgs("again"), SCHEMA, seed=1)
    assert len(s.requests) == 3  # no second probe
    llm_base._FORMAT_MEMORY.clear()  # a new process: remembered in the disk cache
    c2, _ = _client(s, tmp_path)
    c2.complete_json(_msgs("third"), SCHEMA, seed=1)
    assert len(s.requests) == 4
    assert s.requests[0]["seed"] == 1 and s.requests[0]["model"] == "m"


def test_openai_style_server_gets_json_schema(standin, tmp_path):
    s = standin([ok()])
    c, _ = _client(s, tmp_path)
    assert c.complete_json(_msgs(), SCHEMA).response_format == "json_schema"
    assert s.requests[0]["response_format"]["json_schema"]["schema"] == SCHEMA


def test_429_honours_retry_after_then_succeeds(standin, tmp_path):
    s = standin(
        [
            (429, {"Retry-After": "0.2"}, {"error": {"message": "rate limited"}}),
            (429, {"retry-after-ms": "50"}, {"error": {"message": "rate limited"}}),
            ok(),
        ]
    )
    c, sleeps = _client(s, tmp_path)
    r = c.complete_json(_msgs(), SCHEMA)
    assert r.ok and len(s.requests) == 3 and c.stats.retries == 2
    assert sleeps[0] == pytest.approx(0.2) and sleeps.count(0.05) >= 1


def test_5xx_backs_off_exponentially_then_gives_up_without_crashing(standin, tmp_path):
    s = standin([(503, {}, {"error": {"message": "overloaded"}})])
    c, sleeps = _client(s, tmp_path, max_retries=3)
    r = c.complete_json(_msgs(), SCHEMA)
    assert not r.ok and r.error.startswith("request_error") and "503" in r.error
    assert len(s.requests) == 4 and len(sleeps) >= 3
    backoffs = sleeps[:3]
    assert all(0.005 <= b <= 0.01 * 2**i for i, b in enumerate(backoffs))  # 0.01 * 2^i * [0.5, 1]
    # failures are not cached: the next run asks again
    s.scripted.script = [ok()]
    assert c.complete_json(_msgs(), SCHEMA).ok and len(s.requests) == 5


def test_auth_errors_stop_the_run_without_retrying(standin, tmp_path):
    s = standin([(401, {}, {"error": {"message": "bad key"}})])
    c, _ = _client(s, tmp_path)
    with pytest.raises(llm_mod.EndpointError, match=r"refused the API key \(HTTP 401"):
        c.complete_json(_msgs(), SCHEMA)
    assert len(s.requests) == 1


def test_unknown_model_stops_the_run_and_no_further_request_is_sent(standin, tmp_path):
    s = standin([(404, {}, {"error": {"message": "The model 'm' does not exist"}})])
    c, _ = _client(s, tmp_path)
    with pytest.raises(llm_mod.EndpointError, match=r"has no model 'm'.*HTTP 404"):
        c.complete_json(_msgs(), SCHEMA)
    with pytest.raises(llm_mod.EndpointError):  # other jobs of the run stop without a request
        c.complete_json(_msgs("another"), SCHEMA)
    assert len(s.requests) == 1


def test_concurrent_calls_share_the_cache_and_count_tokens(standin, tmp_path):
    s = standin([ok(prompt=7, completion=3)])
    c, _ = _client(s, tmp_path)
    import concurrent.futures as cf

    with cf.ThreadPoolExecutor(4) as pool:
        results = list(pool.map(lambda i: c.complete_json(_msgs(f"q{i % 5}"), SCHEMA), range(20)))
    assert all(r.ok for r in results)
    st = c.stats.snapshot()
    assert st["calls"] == 20 and st["responses"] + st["cache_hits"] == 20
    assert st["prompt_tokens"] == 7 * st["responses"] and st["completion_tokens"] == 3 * st["responses"]
    assert 5 <= len(s.requests) <= 20  # racing threads may both miss the cache for the same request


def test_free_text_completion(standin, tmp_path):
    s = standin([ok(content="नमस्ते")])
    c, _ = _client(s, tmp_path)
    r = c.complete(_msgs("translate hello"), temperature=0)
    assert r.data == "नमस्ते" and "response_format" not in s.requests[0]
    assert c.complete(_msgs("translate hello"), temperature=0).cached
