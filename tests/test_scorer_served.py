"""``clm-api``: scoring through an OpenAI-compatible ``/v1/completions`` server.

The error shapes, retries, the cache and the API-key handling are tested against a small real HTTP
server (``http.server`` in a thread) that answers with hand-written completions; the parity of
``clm-api`` with the in-process ``clm`` scorer runs the real llama-cpp-python server on the SmolLM2
GGUF and loads the same GGUF with transformers (slow): on the Q4_1 file as shipped (quantised
arithmetic in llama.cpp) and on its exact float32 conversion (tests/gguf_f32.py, float32 noise).
"""

from __future__ import annotations

import json
import math
import threading
from http.server import BaseHTTPRequestHandler, ThreadingHTTPServer

import pytest
from biaskit.evaluation.scorers import SCORERS, load_scorer
from biaskit.evaluation.served import ServedCLMScorer

from biaskit.errors import InputError


class StandIn:
    """A real HTTP server: ``GET /v1/models`` lists ``models``; ``POST /v1/completions`` answers
    ``reply(body) -> (status, json)``; every request body is recorded."""

    def __init__(self, reply, models=("tiny",)):
        self.reply, self.models, self.bodies, self.headers = reply, models, [], []
        outer = self

        class H(BaseHTTPRequestHandler):
            def log_message(self, *a):
                pass

            def _send(self, status, obj):
                data = json.dumps(obj).encode()
                self.send_response(status)
                self.send_header("Content-Type", "application/json")
                self.send_header("Content-Length", str(len(data)))
                self.end_headers()
                self.wfile.write(data)

            def do_GET(self):
                self._send(200, {"object": "list", "data": [{"id": m, "object": "model"} for m in outer.models]})

            def do_POST(self):
                body = json.loads(self.rfile.read(int(self.headers["Content-Length"])))
                outer.bodies.append(body)
                outer.headers.append(dict(self.headers))
                self._send(*outer.reply(body))

        self.httpd = ThreadingHTTPServer(("127.0.0.1", 0), H)
        self.url = f"http://127.0.0.1:{self.httpd.server_address[1]}/v1"
        threading.Thread(target=self.httpd.serve_forever, daemon=True).start()

    def close(self):
        self.httpd.shutdown()
        self.httpd.server_close()


# hand-written log-probabilities of each word-token of a prompt (the server's "tokenizer" splits at spaces)
LP = {"The": -1.0, " doctor": -2.5, " nurse": -3.25, " was": -0.5, " late.": -4.0}


def lp_of(token: str) -> float:
    """The stand-in's log-probability of a token: LP's value, else -0.5 per character."""
    return LP.get(token, -0.5 * len(token.strip()))


def completion(prompt: str, *, logprobs=True, aligned=True, gen=" He", gen_lp=-0.75):
    """An OpenAI /v1/completions answer with echo: prompt tokens (first null) + the generated token."""
    words = prompt.split(" ")
    toks = [words[0]] + [" " + w for w in words[1:]]
    offs, o = [], 0
    for t in toks:
        offs.append(o)
        o += len(t)
    vals = [None] + [lp_of(t) for t in toks[1:]]
    if aligned:
        toks, offs, vals = toks + [gen], offs + [len(prompt)], vals + [gen_lp]
    lp = {"tokens": toks, "text_offset": offs, "token_logprobs": vals, "top_logprobs": None} if logprobs else None
    return {
        "object": "text_completion",
        "model": "tiny",
        "choices": [{"text": prompt + gen, "index": 0, "logprobs": lp, "finish_reason": "length"}],
        "usage": {"prompt_tokens": len(words), "completion_tokens": 1},
    }


@pytest.fixture
def standin():
    servers = []

    def make(reply, models=("tiny",)):
        s = StandIn(reply, models)
        servers.append(s)
        return s

    yield make
    for s in servers:
        s.close()


def test_registry_offers_clm_api():
    assert "clm-api" in SCORERS
    assert SCORERS.get("clm-api") is ServedCLMScorer


def test_scores_are_the_prompt_logprobs_after_the_first_token(standin, tmp_path):
    srv = standin(lambda b: (200, completion(b["prompt"])))
    sc = load_scorer("clm-api", "tiny", base_url=srv.url, cache=tmp_path / "c", progress=False)
    [p] = sc.score_pairs([("The doctor was late.", "The nurse was late.")])
    # by hand from LP: the first token has no log-probability; the generated " He" is not scored
    assert p.score_more == pytest.approx(-2.5 - 0.5 - 4.0)
    assert p.score_less == pytest.approx(-3.25 - 0.5 - 4.0)
    assert (p.n_scored_more, p.n_scored_less) == (3, 3)
    assert {b["prompt"] for b in srv.bodies} == {"The doctor was late.", "The nurse was late."}
    b = srv.bodies[0]
    assert b["echo"] is True and b["logprobs"] >= 1 and b["max_tokens"] == 1 and b["model"] == "tiny"
    mean = load_scorer("clm-api", "tiny", method="mean", base_url=srv.url, cache=tmp_path / "c", progress=False)
    [m] = mean.score_pairs([("The doctor was late.", "The nurse was late.")])
    assert m.score_more == pytest.approx(-7.0 / 3)
    assert len(srv.bodies) == 2, "the mean re-uses the cached sentences: no request"
    assert mean.forward_passes == 0


def test_cache_is_keyed_by_model_and_text(standin, tmp_path):
    srv = standin(lambda b: (200, completion(b["prompt"])), models=("tiny", "other"))
    for model in ("tiny", "tiny", "other"):
        load_scorer("clm-api", model, base_url=srv.url, cache=tmp_path / "c", progress=False).score_texts(
            ["The doctor was late."]
        )
    assert [b["model"] for b in srv.bodies] == ["tiny", "other"]


@pytest.mark.parametrize(
    "bad,needle",
    [
        (lambda p: completion(p, logprobs=False), "no log-probabilities for the prompt"),
        (
            lambda p: {
                **completion(p),
                "choices": [
                    {**completion(p)["choices"][0], "logprobs": {"tokens": [], "token_logprobs": [], "text_offset": []}}
                ],
            },
            "no log-probabilities for the prompt",
        ),
        (
            lambda p: {
                **completion(p),
                "choices": [
                    {
                        **completion(p)["choices"][0],
                        "logprobs": {
                            "tokens": ["The", " doctor"],
                            "token_logprobs": [None, None],
                            "text_offset": [0, 3],
                        },
                    }
                ],
            },
            "no log-probabilities for the prompt",
        ),
        (lambda p: completion(p, aligned=False), "misaligned"),
    ],
)
def test_a_server_without_prompt_logprobs_is_a_clear_error(standin, bad, needle):
    srv = standin(lambda b: (200, bad(b["prompt"])))
    sc = load_scorer("clm-api", "tiny", base_url=srv.url, cache=False, progress=False)
    with pytest.raises(InputError) as e:
        sc.score_texts(["The doctor was late."])
    msg = str(e.value)
    assert needle in msg and "Fix:" in msg and "\n" not in msg


def test_wrong_model_unreachable_server_and_cli_exit_2(standin, tmp_path, capsys):
    from conftest import run_cli

    srv = standin(lambda b: (200, completion(b["prompt"])))
    with pytest.raises(InputError, match=r"does not serve a model named 'nope' \(it lists 'tiny'\).*--model tiny"):
        load_scorer("clm-api", "nope", base_url=srv.url, cache=False, progress=False)
    with pytest.raises(InputError, match="cannot reach the server"):
        ServedCLMScorer("tiny", base_url="http://127.0.0.1:1/v1", retries=1, cache=False, progress=False)
    data = tmp_path / "p.jsonl"
    data.write_text(
        json.dumps(
            {
                "sent_more": "The doctor was late.",
                "sent_less": "The nurse was late.",
                "direction": "stereo",
                "bias_type": "gender",
            }
        )
        + "\n"
    )
    base = ["evaluate", "pairs", "--data", str(data), "--out", str(tmp_path / "o"), "--scorer", "clm-api", "-q"]
    code, out, err = run_cli(base + ["--base-url", srv.url, "--model", "nope"], capsys)
    assert code == 2 and "does not serve a model named 'nope'" in err and len(err.strip().splitlines()) == 1
    code, out, err = run_cli(base + ["--model", "tiny"], capsys)
    assert code == 2 and "--base-url" in err
    code, out, err = run_cli(base + ["--base-url", srv.url, "--model", "tiny"], capsys)
    assert code == 0, err
    summary = json.loads((tmp_path / "o" / "summary.json").read_text())
    assert summary["scorer"] == "clm-api" and summary["metric_score"] == 100.0  # -7.0 > -7.75 by hand


def test_retries_transient_errors_and_sends_the_key_without_storing_it(standin, tmp_path, monkeypatch):
    key = "sk-served-test-1234567890"
    monkeypatch.setenv("OPENAI_API_KEY", key)
    seen = {"n": 0}

    def reply(b):
        seen["n"] += 1
        if seen["n"] <= 2:
            return 503, {"error": f"overloaded, key {key}"}
        return 200, completion(b["prompt"])

    srv = standin(reply)
    sc = ServedCLMScorer("tiny", base_url=srv.url, backoff=0.0, cache=tmp_path / "c", progress=False, concurrency=1)
    [(s, n)] = sc.score_texts(["The doctor was late."])
    assert (s, n) == (pytest.approx(-7.0), 3)
    assert seen["n"] == 3
    assert all(h.get("Authorization") == f"Bearer {key}" for h in srv.headers)
    assert key not in json.dumps(sc.describe())
    db = (tmp_path / "c" / "cache.sqlite3").read_bytes()
    assert key.encode() not in db

    srv2 = standin(lambda b: (401, {"error": f"bad key {key}"}))
    with pytest.raises(InputError) as e:
        ServedCLMScorer("tiny", base_url=srv2.url, cache=False, progress=False).score_texts(["The doctor was late."])
    assert "HTTP 401" in str(e.value) and key not in str(e.value)


def test_evaluate_cats_with_clm_api(standin, tmp_path, capsys):
    from biaskit.evaluation.served import load_served_lm
    from biaskit.evaluation.stereoset import score_cats
    from conftest import run_cli

    from biaskit.schema import CAT

    srv = standin(lambda b: (200, completion(b["prompt"])))
    opts = [
        {"sentence": "The nurse was late.", "gold_label": "stereotype"},
        {"sentence": "The nurse was kind.", "gold_label": "anti-stereotype"},
        {"sentence": "The nurse was blue.", "gold_label": "unrelated"},
    ]
    intra = CAT(split="intrasentence", target="nurse", bias_type="gender", context="The nurse was BLANK.", options=opts)
    inter = CAT(
        split="intersentence",
        target="nurse",
        bias_type="gender",
        context="The nurse was late",
        options=[
            {"sentence": "She ran.", "gold_label": "stereotype"},
            {"sentence": "He ran.", "gold_label": "anti-stereotype"},
            {"sentence": "Sky fish.", "gold_label": "unrelated"},
        ],
    )
    sm = load_served_lm("tiny", base_url=srv.url, cache=False, progress=False)
    got = {s.sentence_id: s for s in score_cats([intra, inter], sm)}
    # by hand: exp(mean log p) over the scored tokens; " kind." = -0.5 * 5 characters, " blue." the same
    want = {
        "The nurse was late.": [-3.25, -0.5, -4.0],
        "The nurse was kind.": [-3.25, -0.5, -2.5],
        "The nurse was blue.": [-3.25, -0.5, -2.5],
        # intersentence "The nurse was late. She ran.": only the tokens after the context
        "She ran.": [-1.5, -2.0],
        "He ran.": [-1.0, -2.0],
        "Sky fish.": [-1.5, -2.5],
    }
    for c in (intra, inter):
        for o in c.options:
            s = got[o.sentence_id]
            assert s.logprobs == pytest.approx(want[o.sentence]), o.sentence
            assert s.score == pytest.approx(math.exp(sum(want[o.sentence]) / len(want[o.sentence])))
    assert {b["prompt"] for b in srv.bodies} >= {"The nurse was late. She ran.", "The nurse was late. Sky fish."}
    from biaskit.errors import BiaskitError

    with pytest.raises(BiaskitError, match="likelihood only"):
        score_cats([intra], sm, mode="pll")

    data = tmp_path / "cats.jsonl"
    data.write_text("".join(json.dumps(c.model_dump(mode="json")) + "\n" for c in (intra, inter)))
    code, out, err = run_cli(
        [
            "evaluate",
            "cats",
            "--data",
            str(data),
            "--out",
            str(tmp_path / "o"),
            "--scorer",
            "clm-api",
            "--base-url",
            srv.url,
            "--model",
            "tiny",
            "-q",
        ],
        capsys,
    )
    assert code == 0, err
    summary = json.loads((tmp_path / "o" / "summary.json").read_text())
    assert summary["scorer"] == "clm-api"


def test_prompt_logprobs_drops_the_generated_tokens_by_count():
    from biaskit.evaluation.served import prompt_logprobs

    p = "The doctor was late."
    assert prompt_logprobs(completion(p), p) == [-2.5, -0.5, -4.0]
    # a vLLM-style answer: a BOS entry first (null), token strings that are not the text, offsets
    # that drift from it, two generated tokens
    vllm = {
        "choices": [
            {
                "text": p + " He is",
                "logprobs": {
                    "tokens": [
                        "<s>",
                        "\u2581The",
                        "\u2581doctor",
                        "\u2581was",
                        "\u2581late",
                        ".",
                        "\u2581He",
                        "\u2581is",
                    ],
                    "text_offset": [0, 3, 7, 14, 18, 23, 24, 27],
                    "token_logprobs": [None, -3.0, -2.5, -0.5, -1.0, -3.0, -0.75, -0.25],
                },
            }
        ],
        "usage": {"prompt_tokens": 6, "completion_tokens": 2},
    }
    assert prompt_logprobs(vllm, p) == [-3.0, -2.5, -0.5, -1.0, -3.0]
    # the C++ llama-server shape: only the generated token comes back
    only_gen = {
        "choices": [
            {"text": p + " He", "logprobs": {"tokens": [" He"], "text_offset": [20], "token_logprobs": [-0.75]}}
        ],
        "usage": {"prompt_tokens": 5, "completion_tokens": 1},
    }
    with pytest.raises(InputError, match="no log-probabilities for the prompt"):
        prompt_logprobs(only_gen, p)


# ---- parity with the in-process clm scorer on the same GGUF (slow: real llama.cpp server) ----------
#
# Measured on 20 CrowS-Pairs pairs (40 sentences, 575 scored tokens), SmolLM2-135M-Instruct Q4_1:
# llama.cpp computes with the 4-bit weights (its CPU kernels also quantise the activations to 8 bits
# for the dot products) while transformers de-quantises the same weights to float32, so the two
# disagree by |Δ log p| median 0.054, 90th percentile 0.17, max 0.50 per token and at most 1.16 per
# sentence; 18 of 20 pair decisions agree, the two that differ have margins of 0.09 and 0.14
# (below the sentence-level difference). Tolerances below: ~1.5x the measured values.
# This is the quantised case; the float32 case below removes the weight and activation quantisation.
# The tokenizations agree token for token (same count, same text). llama-cpp-python 0.3.36 never
# returns the first prompt token's log-probability (it sets it to null even after a BOS), so the
# in-process side is compared on tokens 2..n; the server is started with the model's BOS switched
# on (``--kv_overrides tokenizer.ggml.add_bos_token=bool:true``), as transformers' clm prepends it.
PER_TOKEN_MAX, PER_TOKEN_MEDIAN, PER_SENTENCE_MAX = 0.75, 0.08, 1.75


@pytest.fixture(scope="module")
def bos_server(tmp_path_factory):
    from fixtures_llm import serve_llama

    with serve_llama(
        tmp_path_factory.mktemp("llm-bos"), ("--kv_overrides", "tokenizer.ggml.add_bos_token=bool:true")
    ) as srv:
        yield srv


@pytest.mark.slow
@pytest.mark.llm
@pytest.mark.model
def test_parity_with_in_process_clm_on_the_same_gguf(tmp_path_factory, crows_csv, bos_server):
    import statistics

    from biaskit.evaluation.clm import CLMScorer
    from biaskit.evaluation.engine import LocalEngine
    from biaskit.evaluation.models import load_lm
    from fixtures_llm import llm_venv_and_gguf

    from biaskit.readers import read_pairs

    _, gguf = llm_venv_and_gguf()
    pairs = read_pairs(crows_csv).pairs[:20]
    texts = [t for p in pairs for t in (p.sent_more, p.sent_less)]
    lm = load_lm(str(gguf), device="cpu")  # the same file, de-quantised by transformers
    clm = CLMScorer(lm, cache=False, progress=False)
    local = LocalEngine(lm, progress=False).loglikelihood([clm._requests(clm._plan_text(t))[0] for t in texts])
    srv = bos_server
    api = load_scorer(
        "clm-api", srv.model, base_url=srv.base_url, cache=tmp_path_factory.mktemp("c"), progress=False, concurrency=2
    )
    served = api.score_texts(texts)
    assert api.forward_passes == len(set(texts))
    served_lp = api.engine.loglikelihood([api._requests(api._plan_text(t))[0] for t in texts])
    assert api.forward_passes == len(set(texts)), "the per-token lists came from the cache"
    diffs = []
    for t, a, b, (s, n) in zip(texts, local, served_lp, served, strict=False):
        assert len(a) - 1 == len(b) == n, t  # same tokenization; the server has no log-prob for token 1
        diffs += [abs(u - v) for u, v in zip(a[1:], b, strict=False)]
        assert abs(sum(a[1:]) - s) <= PER_SENTENCE_MAX, t
    assert max(diffs) <= PER_TOKEN_MAX and statistics.median(diffs) <= PER_TOKEN_MEDIAN
    agree = 0
    for i in range(len(pairs)):
        loc = sum(local[2 * i][1:]) - sum(local[2 * i + 1][1:])
        srv_ds = served[2 * i][0] - served[2 * i + 1][0]
        if abs(loc) > 2 * PER_SENTENCE_MAX:  # a margin the numerics cannot flip
            assert (loc > 0) == (srv_ds > 0), pairs[i]
        agree += (loc > 0) == (srv_ds > 0)
    assert agree >= 0.85 * len(pairs)


# ---- parity on exactly the same float32 weights --------------------------------------------------
#
# ``smollm2_f32_gguf`` is the Q4_1 file with every tensor de-quantised to F32 by gguf's reference
# de-quantisation (tests/gguf_f32.py); transformers loads it with weights bit-identical to those it
# loads from the Q4_1 file (asserted below), and llama.cpp computes in float32 on them. The server
# also keeps its KV cache in F32 (``--type_k 0 --type_v 0``; llama.cpp's default is F16). Measured
# on the first 50 pairs (the Q4_1 test's 20 and 30 more; 100 sentences, 1382 scored tokens):
# |Δ log p| per token median 7.6e-6, 90th percentile 1.5e-5, max 3.9e-5; per sentence max 2.7e-4;
# 50 of 50 pair decisions agree (the smallest margin is 0.043, over 150x the sentence-level
# difference). That is float32 noise: different summation orders in llama.cpp's and PyTorch's
# kernels. With the default F16 KV cache, the first 20 pairs measured median 6.6e-4, max 8.3e-3 per
# token and 0.024 per sentence (decisions still 20/20): the rounding of keys and values to 16 bits.
# Tolerances below: ~3x the F32-cache figures.
F32_PER_TOKEN_MAX, F32_PER_TOKEN_MEDIAN, F32_PER_SENTENCE_MAX = 1.2e-4, 2.5e-5, 8e-4


@pytest.mark.slow
@pytest.mark.llm
def test_f32_gguf_copies_every_field_and_tensor(smollm2_f32_gguf):
    """tests/gguf_f32.py: the same metadata (but the file type and the BOS switch), the same tensors
    in the same order and shape, all F32; a Q4_1 block de-quantised by hand from its bytes (fp16
    scale d, fp16 minimum m, 32 4-bit codes: low nibbles are values 0-15, high nibbles 16-31;
    value = d * code + m) equals the converted numbers."""
    import numpy as np
    from fixtures_llm import llm_venv_and_gguf
    from gguf import GGUFReader

    _, q4 = llm_venv_and_gguf()
    a, b = GGUFReader(q4), GGUFReader(smollm2_f32_gguf)
    changed = {"general.file_type": 0, "tokenizer.ggml.add_bos_token": True}
    assert a.fields.keys() == b.fields.keys()
    for k, f in a.fields.items():
        if not k.startswith("GGUF."):
            assert b.fields[k].types == f.types, k
            assert b.fields[k].contents() == changed.get(k, f.contents()), k
    assert [(t.name, list(t.shape)) for t in a.tensors] == [(t.name, list(t.shape)) for t in b.tensors]
    assert {t.tensor_type.name for t in b.tensors} == {"F32"}
    src = next(t for t in a.tensors if t.tensor_type.name == "Q4_1")
    dst = next(t for t in b.tensors if t.name == src.name)
    raw = bytes(src.data[0, :20])  # the first block of the first row
    d, m = np.frombuffer(raw[:4], dtype=np.float16).astype(np.float32)
    codes = [c & 0x0F for c in raw[4:]] + [c >> 4 for c in raw[4:]]
    assert dst.data[0, :32].tolist() == [float(np.float32(d) * np.float32(c) + np.float32(m)) for c in codes]
    f32 = next(t for t in a.tensors if t.tensor_type.name == "F32")
    assert np.array_equal(next(t for t in b.tensors if t.name == f32.name).data, f32.data)


@pytest.fixture(scope="module")
def f32_server(tmp_path_factory, smollm2_f32_gguf):
    from fixtures_llm import serve_llama

    with serve_llama(
        tmp_path_factory.mktemp("llm-f32"),
        ("--type_k", "0", "--type_v", "0"),  # F32 KV cache
        gguf=smollm2_f32_gguf,
    ) as srv:
        yield srv


@pytest.mark.slow
@pytest.mark.llm
@pytest.mark.model
def test_parity_with_in_process_clm_on_the_same_float32_weights(
    tmp_path_factory, crows_csv, smollm2_f32_gguf, f32_server
):
    import statistics

    import torch
    from biaskit.evaluation.clm import CLMScorer
    from biaskit.evaluation.engine import LocalEngine
    from biaskit.evaluation.models import load_lm
    from fixtures_llm import llm_venv_and_gguf

    from biaskit.readers import read_pairs

    _, q4 = llm_venv_and_gguf()
    lm = load_lm(str(smollm2_f32_gguf), device="cpu")
    ref = load_lm(str(q4), device="cpu").model.state_dict()
    got = lm.model.state_dict()
    assert got.keys() == ref.keys()
    assert all(torch.equal(got[k], ref[k]) for k in ref), "the F32 file holds the Q4_1 file's weights exactly"
    pairs = read_pairs(crows_csv).pairs[:50]
    texts = [t for p in pairs for t in (p.sent_more, p.sent_less)]
    clm = CLMScorer(lm, cache=False, progress=False)
    local = LocalEngine(lm, progress=False).loglikelihood([clm._requests(clm._plan_text(t))[0] for t in texts])
    api = load_scorer(
        "clm-api",
        f32_server.model,
        base_url=f32_server.base_url,
        cache=tmp_path_factory.mktemp("c32"),
        progress=False,
        concurrency=2,
    )
    served = api.score_texts(texts)
    served_lp = api.engine.loglikelihood([api._requests(api._plan_text(t))[0] for t in texts])
    assert api.forward_passes == len(set(texts)), "the per-token lists came from the cache"
    diffs, sent = [], []
    for t, a, b, (s, n) in zip(texts, local, served_lp, served, strict=False):
        assert len(a) - 1 == len(b) == n, t  # same tokenization; the server has no log-prob for token 1
        diffs += [abs(u - v) for u, v in zip(a[1:], b, strict=False)]
        sent.append(abs(sum(a[1:]) - s))
    margins = [sum(local[2 * i][1:]) - sum(local[2 * i + 1][1:]) for i in range(len(pairs))]
    decisions = [(m > 0) == (served[2 * i][0] - served[2 * i + 1][0] > 0) for i, m in enumerate(margins)]
    print(
        f"F32 parity: {len(diffs)} tokens, per-token median {statistics.median(diffs):.3g} "
        f"p90 {sorted(diffs)[int(0.9 * len(diffs))]:.3g} max {max(diffs):.3g}; per-sentence max {max(sent):.3g}; "
        f"decisions agree {sum(decisions)}/{len(pairs)}; smallest |margin| {min(abs(m) for m in margins):.3g}"
    )
    assert max(diffs) <= F32_PER_TOKEN_MAX and statistics.median(diffs) <= F32_PER_TOKEN_MEDIAN
    assert max(sent) <= F32_PER_SENTENCE_MAX
    assert all(decisions), [p for p, d in zip(pairs, decisions, strict=False) if not d]


@pytest.mark.slow
@pytest.mark.llm
@pytest.mark.model
def test_stereoset_through_the_server_matches_in_process(bos_server, tmp_path):
    """StereoSet intra- and intersentence options scored by clm-api on the real server: the same
    tokens as the in-process clm planning (intersentence: the continuation after the context, found
    by the context's own token count), log-probabilities within the parity tolerance."""
    from biaskit.evaluation.models import load_lm
    from biaskit.evaluation.served import load_served_lm
    from biaskit.evaluation.stereoset import read_cats, score_cats
    from conftest import MIRROR
    from fixtures_llm import llm_venv_and_gguf

    _, gguf = llm_venv_and_gguf()
    flat = MIRROR / "stereoset" / "stereoset_dev_flat.jsonl"
    if not flat.exists():
        pytest.skip(f"{flat} not mirrored here")
    cats = read_cats(flat, split="intrasentence", limit=2) + read_cats(flat, split="intersentence", limit=2)
    lm = load_lm(str(gguf), device="cpu")
    local = {s.sentence_id: s for s in score_cats(cats, lm)}
    sm = load_served_lm(bos_server.model, base_url=bos_server.base_url, cache=False, progress=False, concurrency=2)
    for s in score_cats(cats, sm):
        ref = local[s.sentence_id].logprobs
        if s.split == "intrasentence":
            ref = ref[1:]  # llama-cpp-python gives the first real token no log-probability
        assert len(s.logprobs) == len(ref), s.sentence_id
        assert max(abs(a - b) for a, b in zip(s.logprobs, ref, strict=False)) <= PER_TOKEN_MAX
