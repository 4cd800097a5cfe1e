"""The scoring engine: requests in, log-probabilities out, whichever planner made them.

Expected values come from plain forward passes written here (one input at a time, full logits,
``torch.log_softmax``), FLOP counts from ``torch.utils.flop_counter.FlopCounterMode``.
"""

from __future__ import annotations

import importlib.util
import json
import subprocess
import sys
from collections import Counter

import pytest
import torch
from biaskit.evaluation.engine import CachingEngine, LocalEngine, Request, even_chunks, length_batches, make_engine
from biaskit.evaluation.models import LoadedLM, load_lm
from conftest import REPO, run_cli

from biaskit.cache import DiskCache

torch.set_num_threads(1)


def plain_logprobs(model, ids, positions, targets):
    with torch.no_grad():
        logits = model(input_ids=torch.tensor([list(ids)])).logits[0]
    return [torch.log_softmax(logits[p], -1)[t].item() for p, t in zip(positions, targets, strict=False)]


def mlm_requests(lm, texts):
    """Every non-special position of every text masked in turn (sentence PLL), built by hand."""
    tok = lm.tokenizer
    out = []
    for t in texts:
        ids = tok(t)["input_ids"]
        for p in range(1, len(ids) - 1):
            x = list(ids)
            x[p] = tok.mask_token_id
            out.append(Request(ids=tuple(x), positions=(p,), targets=(ids[p],)))
    return out


TEXTS = [
    "The doctor was late.",
    "My neighbour works as an engineer in Mumbai.",
    "She is kind.",
    "The old man walked to the market.",
    "He is kind.",
]


@pytest.fixture(scope="module")
def bert(tiny_bert):
    return load_lm(tiny_bert, device="cpu")


def test_masked_and_causal_requests_match_plain_forward_passes(bert, tiny_gpt2):
    reqs = mlm_requests(bert, TEXTS)
    eng = LocalEngine(bert, batch_size=4, progress=False)
    got = eng.loglikelihood(reqs)
    for r, lp in zip(reqs, got, strict=False):
        assert lp == pytest.approx(plain_logprobs(bert.model, r.ids, r.positions, r.targets), abs=1e-5)
    gpt = load_lm(tiny_gpt2, device="cpu")
    tok = gpt.tokenizer
    creqs = []
    for t in TEXTS:
        ids = [tok.bos_token_id] + tok(t)["input_ids"]
        creqs.append(Request(ids=tuple(ids), positions=tuple(range(len(ids) - 1)), targets=tuple(ids[1:])))
    for r, lp in zip(creqs, LocalEngine(gpt, batch_size=3, progress=False).loglikelihood(creqs), strict=False):
        assert lp == pytest.approx(plain_logprobs(gpt.model, r.ids, r.positions, r.targets), abs=1e-5)


def test_batches_are_unpadded_even_and_bounded(bert):
    reqs = mlm_requests(bert, TEXTS * 3)
    eng = LocalEngine(bert, batch_size=5, progress=False)
    batches = list(eng.batches(reqs))
    assert Counter(r for b in batches for r in b) == Counter(reqs)
    for b in batches:
        assert len({len(r.ids) for r in b}) == 1 and len(b) <= 5  # one length: no padding, no mask
    # a group of n rows is cut into ceil(n / 5) batches whose sizes differ by at most one
    by_len: dict[int, list[int]] = {}
    for b in batches:
        by_len.setdefault(len(b[0].ids), []).append(len(b))
    for n, sizes in by_len.items():
        total = sum(sizes)
        assert len(sizes) == -(-total // 5) and max(sizes) - min(sizes) <= 1, (n, sizes)
    assert [len(c) for c in even_chunks(list(range(45)), 32)] == [23, 22]
    assert [len(c) for c in even_chunks(list(range(7)), 7)] == [7]
    assert list(length_batches([3, 1, 3, 2, 3], 2)) == [[1], [3], [0, 2], [4]]
    # the logit bound cuts a batch too: with room for 2 vocabulary rows, at most 2 rows per batch
    small = LocalEngine(bert, batch_size=64, max_logit_elements=2 * bert.model.config.vocab_size, progress=False)
    assert max(len(b) for b in small.batches(reqs)) == 2


def test_no_attention_mask_and_one_call_per_batch(bert):
    seen = []
    h = bert.model.register_forward_pre_hook(
        lambda m, args, kwargs: seen.append(kwargs.get("attention_mask")), with_kwargs=True
    )
    try:
        eng = LocalEngine(bert, batch_size=8, progress=False)
        reqs = mlm_requests(bert, TEXTS)
        eng.loglikelihood(reqs)
    finally:
        h.remove()
    assert seen and all(m is None for m in seen)
    # one forward pass per batch, plus the one-off check of the head gather
    assert eng.forward_passes == len(list(eng.batches(reqs))) + 1 == len(seen)


def test_identical_requests_are_computed_once(bert):
    reqs = mlm_requests(bert, TEXTS[:2])
    eng = LocalEngine(bert, batch_size=8, progress=False)
    got = eng.loglikelihood(reqs + reqs[::-1])
    assert eng.rows_scored == len(reqs)
    assert got[: len(reqs)] == got[len(reqs) :][::-1]


def test_empty_requests_cost_no_forward_pass(bert):
    eng = LocalEngine(bert, progress=False)
    assert eng.loglikelihood([Request(ids=(1, 2, 3), positions=(), targets=())]) == [[]]
    assert eng.forward_passes == 0


def _flop_module():
    spec = importlib.util.spec_from_file_location("bench_score_pairs", REPO / "benchmarks" / "score_pairs.py")
    mod = importlib.util.module_from_spec(spec)
    spec.loader.exec_module(mod)
    return mod


def test_benchmark_flop_formula_equals_torch_flop_counter(tmp_path):
    """The FLOPs the benchmark counts per model input are what torch counts on the real forward
    (eager attention, whose score and weighted-sum matmuls FlopCounterMode sees; SDPA's CPU kernel
    does the same arithmetic), with the head applied at the gathered positions only."""
    from fixtures_models import minilm_tokenizer_dir
    from torch.utils.flop_counter import FlopCounterMode
    from transformers import AutoTokenizer, BertConfig, BertForMaskedLM

    bench = _flop_module()
    tok = AutoTokenizer.from_pretrained(str(minilm_tokenizer_dir(tmp_path / "tok")))
    cfg = BertConfig(
        vocab_size=tok.vocab_size, hidden_size=64, num_hidden_layers=3, num_attention_heads=4, intermediate_size=192
    )
    cfg._attn_implementation = "eager"
    torch.manual_seed(0)
    lm = LoadedLM.from_objects(BertForMaskedLM(cfg).eval(), tok, kind="mlm", name="eager-bert")
    reqs = mlm_requests(lm, TEXTS)
    eng = LocalEngine(lm, batch_size=4, progress=False)
    eng.loglikelihood(reqs[:2])  # the one-off gather check happens here
    with FlopCounterMode(display=False) as fc:
        eng.loglikelihood(reqs)
    assert fc.get_total_flops() == bench.scoring_flops(cfg, [(len(r.ids), len(r.positions)) for r in reqs])
    # and the reference's count: the same encoder, the head at every position
    with FlopCounterMode(display=False) as fc:
        with torch.no_grad():
            lm.model(input_ids=torch.tensor([list(reqs[0].ids)]))
    assert fc.get_total_flops() == bench.reference_flops(cfg, [(len(reqs[0].ids), 1)])


def test_cache_is_shared_across_planners_and_keyed_by_dtype(bert, tmp_path):
    cache = DiskCache(tmp_path / "c.sqlite3", namespace="lm-scores")
    reqs = mlm_requests(bert, TEXTS[:2])
    first = make_engine(bert, cache=cache, progress=False)
    assert isinstance(first, CachingEngine)
    a = first.loglikelihood(reqs)
    again = make_engine(bert, cache=cache, progress=False)
    assert again.loglikelihood(reqs) == a and again.forward_passes == 0
    # a sentence PLL request is the same model input as a pair's masked variant: one cache entry
    from biaskit.evaluation.scorers import load_scorer

    sc = load_scorer("mlm", bert, cache=cache, progress=False)
    ((score, n),) = sc.score_texts([TEXTS[0]])
    assert sc.forward_passes == 0 and score == pytest.approx(sum(x for lp in a[:n] for x in lp), abs=1e-12)
    # other numerics, other entries
    bf = LoadedLM(
        model=bert.model,
        tokenizer=bert.tokenizer,
        kind="mlm",
        name=bert.name,
        fingerprint=bert.fingerprint,
        device="cpu",
        dtype="bfloat16",
    )
    other = make_engine(bf, cache=cache, progress=False)
    other.loglikelihood(reqs[:1])
    assert other.forward_passes > 0


def test_too_long_request_names_the_text(bert):
    eng = LocalEngine(bert, progress=False)
    with pytest.raises(Exception, match="too long for the model.*'a very long one'"):
        eng.loglikelihood([Request(ids=(1,) * 600, positions=(1,), targets=(1,), text="a very long one")])


def test_nsp_probabilities_go_through_the_cache(tmp_path):
    from biaskit.evaluation.stereoset import _nsp_probs
    from fixtures_models import minilm_tokenizer_dir
    from transformers import AutoTokenizer, BertConfig, BertForPreTraining

    tok = AutoTokenizer.from_pretrained(str(minilm_tokenizer_dir(tmp_path / "tok")))
    torch.manual_seed(1)
    BertForPreTraining(
        BertConfig(
            vocab_size=tok.vocab_size, hidden_size=32, num_hidden_layers=2, num_attention_heads=2, intermediate_size=64
        )
    ).eval().save_pretrained(tmp_path / "m")
    tok.save_pretrained(tmp_path / "m")
    lm = load_lm(tmp_path / "m", kind="mlm", device="cpu")
    pairs = [
        ("My professor is a man.", "He is tall."),
        ("The girl walks.", "She sings a song today."),
        ("The girl walks.", "It rains."),
    ]
    cache = DiskCache(tmp_path / "c.sqlite3", namespace="lm-scores")
    probs = _nsp_probs(lm, pairs, 2, cache, False)
    nsp = lm.meta["nsp_model"]
    for (a, b), p in zip(pairs, probs, strict=False):
        with torch.no_grad():
            want = torch.softmax(nsp(**tok(a, b, return_tensors="pt")).logits[0], -1)[0].item()
        assert p == pytest.approx(want, abs=1e-6)
    calls = []
    h = nsp.register_forward_hook(lambda *a: calls.append(1))
    try:
        assert _nsp_probs(lm, pairs, 2, cache, False) == probs and calls == []
    finally:
        h.remove()


# ---- CLI ----------------------------------------------------------------------------------------------


def test_evaluate_subcommands_do_not_import_their_parent():
    code = (
        "import sys, biaskit.evaluation.pairs_cli, biaskit.evaluation.cats_cli\n"
        "print('biaskit.evaluation.cli' in sys.modules)"
    )
    r = subprocess.run([sys.executable, "-c", code], capture_output=True, text=True, check=True)
    assert r.stdout.strip() == "False"


def test_cli_choices_come_from_the_registries(capsys):
    from biaskit.evaluation.scorers import SCORERS

    # --scorer first: options are checked in the order given, and the missing --data file would be named first
    code, _, err = run_cli(
        ["evaluate", "pairs", "--scorer", "nope", "--data", "x", "--model", "m", "--out", "o"], capsys
    )
    assert code == 2
    for name in SCORERS.names():
        assert name in err


def test_recorded_command_line_is_the_one_given(tiny_gpt2, stereoset_jsonl, tmp_path, capsys):
    args = [
        "evaluate",
        "cats",
        "--data",
        str(stereoset_jsonl),
        "--model",
        str(tiny_gpt2),
        "--scorer",
        "clm",
        "--limit",
        "2",
        "--out",
        str(tmp_path / "o"),
        "-q",
        "--protocol",
        "none",
    ]
    code, _, err = run_cli(args, capsys)
    assert code == 0, err
    import shlex

    # the command as given, with this machine's paths made public (docs/release.md, "Privacy"): the files
    # lie outside the current folder, so each path is its last component
    public = [
        a if i not in (3, 5, 11) else {3: stereoset_jsonl.name, 5: tiny_gpt2.name, 11: "o"}[i]
        for i, a in enumerate(args)
    ]
    assert json.loads((tmp_path / "o" / "summary.json").read_text())["command"] == shlex.join(["biaskit", *public])


def test_model_aliases_are_one_registry():
    from biaskit.evaluation.models import MODEL_ALIASES

    assert {"gemma3-270m", "all-minilm-l6-v2", "minilm"} <= set(MODEL_ALIASES.names())
    assert MODEL_ALIASES.get("minilm") is MODEL_ALIASES.get("all-minilm-l6-v2")
