"""Model loading: kinds, resolution errors, fingerprints, conversion bookkeeping, scorer errors."""

from __future__ import annotations

import shutil

import pytest
import torch
from biaskit.evaluation.models import (
    MODEL_ALIASES,
    LoadedLM,
    fingerprint_dir,
    is_complete_model_dir,
    load_lm,
    parse_dtype,
    pick_device,
    resolve_model,
)
from biaskit.evaluation.scorers import SCORERS, load_scorer

from biaskit.errors import BiaskitError, UnknownNameError


def test_kinds_are_detected(tiny_bert, tiny_xlmr, tiny_gpt2):
    assert load_lm(tiny_bert, device="cpu").kind == "mlm"
    assert load_lm(tiny_xlmr, device="cpu").kind == "mlm"
    lm = load_lm(tiny_gpt2, device="cpu")
    assert (lm.kind, lm.device, lm.dtype) == ("clm", "cpu", "float32")
    assert not lm.model.training
    assert load_lm(lm) is lm


def test_registry_names():
    assert {"clm", "clm-api", "mlm", "seq2seq"} <= set(SCORERS.names())
    from biaskit.evaluation.scorers import PairScorer

    for name in SCORERS.names():  # every registered scorer is a pair planner that names itself
        cls = SCORERS.get(name)
        assert issubclass(cls, PairScorer) and cls.name == name
    assert "gemma3-270m" in MODEL_ALIASES.names()
    with pytest.raises(UnknownNameError, match="Did you mean 'mlm'"):
        load_scorer("mln", "whatever")


def test_resolve_errors_name_the_problem_and_fix(tmp_path):
    with pytest.raises(BiaskitError, match="not found.*Fix:"):
        resolve_model(str(tmp_path / "nope"))
    (tmp_path / "empty").mkdir()
    with pytest.raises(BiaskitError, match="no config.json.*Fix:"):
        resolve_model(str(tmp_path / "empty"))
    with pytest.raises(BiaskitError, match="gemma3-270m"):  # lists the aliases
        resolve_model("gemma3-27m")


def test_fingerprint_is_stable_across_copies_and_tracks_weights(tmp_path, tiny_bert):
    copy = tmp_path / "copy"
    shutil.copytree(tiny_bert, copy)
    assert fingerprint_dir(copy) == fingerprint_dir(tiny_bert)
    assert load_lm(copy, device="cpu").fingerprint == load_lm(tiny_bert, device="cpu").fingerprint
    lm = load_lm(copy, device="cpu")
    with torch.no_grad():
        lm.model.bert.encoder.layer[0].output.dense.weight[0, 0] += 0.5
    changed = tmp_path / "changed"
    lm.model.save_pretrained(changed)
    lm.tokenizer.save_pretrained(changed)
    assert fingerprint_dir(changed) != fingerprint_dir(tiny_bert)
    # in-memory fingerprints follow parameter changes too
    m = load_lm(tiny_bert, device="cpu")
    f1 = LoadedLM.from_objects(m.model, m.tokenizer).fingerprint
    with torch.no_grad():
        m.model.bert.encoder.layer[1].output.dense.bias[3] += 1e-3
    assert LoadedLM.from_objects(m.model, m.tokenizer).fingerprint != f1


def test_incomplete_conversion_is_not_used(tmp_path, tiny_bert):
    half = tmp_path / "half"
    shutil.copytree(tiny_bert, half)
    assert not is_complete_model_dir(half)  # no completion marker: would be converted again
    (half / ".biaskit-complete.json").write_text("{}")
    assert is_complete_model_dir(half)


def test_device_and_dtype_errors():
    if not torch.cuda.is_available():
        with pytest.raises(BiaskitError, match="CUDA is not available.*Fix"):
            pick_device("cuda")
        with pytest.raises(BiaskitError, match="float16 is not supported on CPU"):
            parse_dtype("float16", "cpu")
    with pytest.raises(BiaskitError, match="unknown device"):
        pick_device("tpu")
    with pytest.raises(BiaskitError, match="unknown dtype"):
        parse_dtype("int3", "cpu")
    assert parse_dtype(None, "cpu") is torch.float32
    assert parse_dtype("bf16", "cpu") is torch.bfloat16


def test_scorer_and_model_kind_must_agree(tiny_bert, tiny_gpt2):
    with pytest.raises(BiaskitError, match="is a masked LM.*--scorer mlm"):
        load_scorer("clm", str(tiny_bert), device="cpu")
    with pytest.raises(BiaskitError, match="is a causal LM.*--scorer clm"):
        load_scorer("mlm", str(tiny_gpt2), device="cpu")


def test_option_errors(tiny_bert, tiny_gpt2):
    bert = load_lm(tiny_bert, device="cpu")
    with pytest.raises(BiaskitError, match="no method 'ppl'.*pll, pmu"):
        load_scorer("mlm", bert, method="ppl")
    with pytest.raises(BiaskitError, match="does not support unit 'word'"):
        load_scorer("clm", load_lm(tiny_gpt2, device="cpu"), unit="word")
    with pytest.raises(BiaskitError, match="batch size must be >= 1"):
        load_scorer("mlm", bert, batch_size=0)
    s = load_scorer("mlm", bert, cache=False, progress=False)
    with pytest.raises(BiaskitError, match="pair 2, second sentence: empty"):
        s.score_pairs([("a b c", "a b d"), ("x y", "  ")])
    with pytest.raises(BiaskitError, match="too long for the model"):
        s.score_pairs([("word " * 600, "other " + "word " * 599)])


def test_describe_has_the_contract_keys(tiny_bert):
    s = load_scorer("mlm", str(tiny_bert), unit="word", batch_size=7, device="cpu", progress=False)
    d = s.describe()
    for k in ("model", "fingerprint", "scorer", "unit", "method", "normalisation", "batch_size", "device", "dtype"):
        assert k in d
    assert (d["scorer"], d["unit"], d["method"], d["batch_size"], d["device"]) == ("mlm", "word", "pll", 7, "cpu")


def test_tokenizer_cache_reads_only_a_private_pickle(tiny_bert, tmp_path, monkeypatch):
    """The tokenizer cache is a pickle (code): read back only when this user owns the file and its
    folder and nobody else may write them; otherwise the tokenizer is built again from its folder."""
    import pickle

    import transformers
    from biaskit.evaluation.models import load_tokenizer

    monkeypatch.setenv("BIASKIT_CACHE_DIR", str(tmp_path / "cache"))
    tok = load_tokenizer(transformers, tiny_bert)
    [cached] = (tmp_path / "cache" / "tokenizers").glob("*.pkl")
    assert cached.stat().st_mode & 0o777 == 0o600
    assert load_tokenizer(transformers, tiny_bert).get_vocab() == tok.get_vocab()
    cached.write_bytes(pickle.dumps("planted"))  # stands in for a file someone else wrote there
    cached.chmod(0o600)
    assert load_tokenizer(transformers, tiny_bert) == "planted"  # a private cache file is used as is
    cached.write_bytes(pickle.dumps("planted"))
    cached.chmod(0o666)  # writable by others: never unpickled
    assert load_tokenizer(transformers, tiny_bert).get_vocab() == tok.get_vocab()
    cached.write_bytes(pickle.dumps("planted"))
    cached.chmod(0o600)
    cached.parent.chmod(0o777)  # a folder others may write to: never unpickled
    assert load_tokenizer(transformers, tiny_bert).get_vocab() == tok.get_vocab()
