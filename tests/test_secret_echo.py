"""No configured secret reaches the disk (issue 28): a stand-in OpenAI-compatible server (a real HTTP
server, tests/llm_standin.py) echoes the API key it is sent in its normal, schema-valid replies -- in
the strings the tasks keep (sentences, attributes, CAT options, translations) and in an extra field --
and now and then in a junk reply that is no JSON at all (errors file, re-ask). After `annotate
prelabel` and a `biaskit run` through every LLM stage to a verified release, every file under the
cache, project and output folders is read: raw bytes (SQLite's main file and its WAL included) and
every row of every table of every SQLite database. None may hold the key.

The key is shaped like no credential pattern biaskit.redact knows (no ``sk-``, no ``Bearer``): only
its value in $OPENAI_API_KEY can mask it. The test also checks that the server did receive the key
and echoed it (so it cannot pass by the echo never happening) and that the echoed text reached the
outputs masked (``***``), i.e. the write paths were taken."""

from __future__ import annotations

import secrets

from conftest import run_cli
from echo_helpers import echoing_server, files_holding, sqlite_rows
from fixtures_labelstudio import write_tuples
from llm_standin import standin_server  # noqa: F401 (a fixture)

PROJECT = """
[project]
name = "echo"
version = "1.0.0"

[llm]
model = "m"
base_url = "{url}"

[stages.tuples]
axes = ["caste"]
identities = {{ caste = ["Dalit", "Brahmin"] }}
polarity = "negative"
n = 2

[stages.sentences]
per_tuple = 2

[stages.antistereo]
per_tuple = 1

[stages.pairs]
llm_fallback = true

[stages.check]

[stages.translate]
target = "hi"
engines = ["llm"]

[stages.cats]
domains = "religion"
targets = ["Muslim", "Hindu"]
per_target = 1

[stages.cat_translate]
target = "hi"
engines = ["llm"]

[stages.release]
date = "2025-01-01"
plots = false
"""


def test_an_echoed_api_key_reaches_no_file(tmp_path, capsys, monkeypatch, standin_server):  # noqa: F811 (the fixture imported from llm_standin)
    key = "zq" + secrets.token_hex(20)  # like no known credential pattern: only $OPENAI_API_KEY masks it
    monkeypatch.setenv("OPENAI_API_KEY", key)
    monkeypatch.setenv("BIASKIT_NO_PROGRESS", "1")
    cache = tmp_path / "cache"
    monkeypatch.setenv("BIASKIT_CACHE_DIR", str(cache))
    server = echoing_server(standin_server)

    # annotate prelabel: answers (and the reply's extra field) through the one job runner
    out = tmp_path / "prelabel"
    out.mkdir()
    data = write_tuples(out / "tuples.jsonl", 8)
    pre = ["annotate", "prelabel", "--kind", "tuple", "--data", str(data), "--out", str(out / "llm.csv")]
    code, so, err = run_cli([*pre, "--model", "m", "--base-url", server.base_url], capsys)
    assert code == 0, so + err
    assert (out / "llm.csv").stat().st_size > 0

    # biaskit run: every LLM stage (tuples, sentences, antistereo, the pairs' LLM rewrite, the llm MT
    # engine, CAT drafts and their translation) to a verified release
    proj = tmp_path / "proj"
    proj.mkdir()
    (proj / "biaskit.toml").write_text(PROJECT.format(url=server.base_url), encoding="utf-8")
    code, so, err = run_cli(["run", "--project", str(proj), "-q"], capsys)
    assert code == 0, so + err
    assert (proj / "release" / "echo-1.0.0" / "SHA256SUMS").is_file()

    # the key went out with every request, and came back in replies of every stage
    assert server.count > 20 and all(h["authorization"] == f"Bearer {key}" for h in server.headers)
    assert len(server.echoed) > 20
    assert sqlite_rows(cache) > 20  # the replies were cached (masked)
    # the echoed text was written, masked: generated sentences, the release's pairs
    sentences = (proj / "work" / "sentences" / "sentences.jsonl").read_text(encoding="utf-8")
    assert "***" in sentences
    assert "***" in (proj / "release" / "echo-1.0.0" / "pairs.jsonl").read_text(encoding="utf-8")

    # and no file anywhere holds the key
    assert files_holding(tmp_path, key) == []
    assert key not in so + err


def test_the_cache_layer_stores_and_returns_results_masked(tmp_path, monkeypatch):
    """What any batch of work stores through biaskit.cache (MT translations, scores) is masked, and the
    first run returns what a re-run reads back from the cache."""
    from biaskit.cache import DiskCache, cached_results
    from biaskit.redact import masked

    key = "zq" + secrets.token_hex(20)
    monkeypatch.setenv("OPENAI_API_KEY", key)
    cache = DiskCache(tmp_path / "c.sqlite3", namespace="mt")
    asked = []

    def run(todo):
        asked.extend(todo)
        yield todo, [{"text": f"translated, with key {key}"}, {"text": "plain", "score": -1.5}]

    first = cached_results(cache, ["a", "b"], run)
    assert first == [{"text": "translated, with key ***"}, {"text": "plain", "score": -1.5}]
    assert cached_results(cache, ["a", "b"], run) == first and asked == [0, 1]  # the re-run: from the cache
    cache.set("c", [f"Bearer {key}"])
    assert cache.get("c") == ["Bearer ***"]
    assert files_holding(tmp_path, key) == []
    plain = {"text": "no secret here", "scores": [0.25, 0.5]}
    assert masked(plain) is plain  # nothing to mask: the value itself, not a copy
