"""The ``hf`` engine and the translate pipeline with a tiny random NLLB-style model (offline).

The model's outputs are gibberish: these tests check the plumbing (language codes, forced BOS,
batching, determinism, cache, resume, output contract), not translation quality.
"""

from __future__ import annotations

import json

import pytest

from biaskit.cache import DiskCache
from biaskit.errors import BiaskitError, InputError, UnknownNameError
from biaskit.schema import SentencePair

torch = pytest.importorskip("torch")
pytest.importorskip("transformers")

from biaskit.curation.mt_base import MT_ENGINES, create_engine, flores_code, mbart_code, parse_engine_list  # noqa: E402 (after the importorskip of torch and transformers)
from biaskit.curation.mt_hf import HFEngine  # noqa: E402 (after the importorskip of torch and transformers)
from biaskit.curation.translate import translate_pairs  # noqa: E402 (after the importorskip of torch and transformers)
from mt_helpers import EN_PAIRS, build_tiny_nllb  # noqa: E402 (after the importorskip of torch and transformers)

torch.set_num_threads(1)


@pytest.fixture(scope="module")
def nllb_dir(tmp_path_factory):
    return build_tiny_nllb(tmp_path_factory.mktemp("nllb-tiny") / "model")


@pytest.fixture(scope="module")
def engine(nllb_dir):
    return HFEngine(str(nllb_dir), device="cpu", batch_size=4, max_new_tokens=6)


PAIRS = [
    *EN_PAIRS,
    SentencePair(
        sent_more="The Brahmin family lived in a mansion.",
        sent_less="The Dalit family lived in a mansion.",
        direction="stereo",
        bias_type="caste",
    ),
    SentencePair(
        sent_more="Rahul went to Mumbai.", sent_less="Priya went to Mumbai.", direction="antistereo", bias_type="gender"
    ),
]


def test_language_code_tables():
    assert flores_code("en") == "eng_Latn" and flores_code("hi") == "hin_Deva"
    assert flores_code("hin_Deva") == "hin_Deva"  # FLORES codes pass through
    assert mbart_code("en") == "en_XX" and mbart_code("hi") == "hi_IN"
    with pytest.raises(BiaskitError, match="FLORES-200"):
        flores_code("xx")


def test_engine_specs_and_registry():
    specs = parse_engine_list("googletrans, hf:/models/nllb-200 ,llm:gemma3")
    assert [(s.name, s.arg) for s in specs] == [("googletrans", None), ("hf", "/models/nllb-200"), ("llm", "gemma3")]
    assert MT_ENGINES.names() == ["googletrans", "hf", "llm"]
    with pytest.raises(UnknownNameError, match="Did you mean 'googletrans'"):
        parse_engine_list("googletrams")
    with pytest.raises(InputError, match="listed twice"):
        parse_engine_list("hf:a,hf:a")
    with pytest.raises(InputError, match="engine 'hf' needs a model: write hf:MODEL"):
        create_engine("hf")


def test_family_detection_and_codes(engine, nllb_dir):
    engine._load()
    assert engine.family == "nllb"
    tok = engine._tok
    texts, gen = engine._prepare(["The man is a doctor."], "en", "hi")
    assert gen == {"forced_bos_token_id": tok.convert_tokens_to_ids("hin_Deva")}
    # NLLB (non-legacy) puts the source language code first: [eng_Latn] tokens </s>
    ids = tok(texts).input_ids[0]
    assert ids[0] == tok.convert_tokens_to_ids("eng_Latn") and ids[-1] == tok.eos_token_id


def test_forced_bos_is_the_target_code(engine):
    tok = engine._tok if engine._tok is not None else (engine._load() or engine._tok)
    for tgt, code in (("hi", "hin_Deva"), ("bn", "ben_Beng")):
        rows = engine.generate_ids(["The man is a doctor.", "Priya went to Delhi."], "en", tgt)
        # decoder start (</s>) then the forced target-language token
        assert all(r[0] == tok.eos_token_id and r[1] == tok.convert_tokens_to_ids(code) for r in rows)


def test_missing_language_token_is_a_clear_error(engine):
    with pytest.raises(BiaskitError, match="no language token 'tam_Taml'"):
        engine.translate(["x"], "en", "ta")


def test_batching_and_determinism(nllb_dir):
    texts = [s for p in PAIRS for s in (p.sent_more, p.sent_less)]
    one = HFEngine(str(nllb_dir), device="cpu", batch_size=1, max_new_tokens=6)
    many = HFEngine(str(nllb_dir), device="cpu", batch_size=16, max_new_tokens=6)
    a = one.translate(texts, "en", "hi")
    b = many.translate(texts, "en", "hi")
    assert one.generate_calls == len(texts) and many.generate_calls == 1
    assert a == b  # padding in a batch does not change greedy output
    assert a == one.translate(texts, "en", "hi")  # deterministic
    assert len(a) == len(texts) and all(isinstance(x, str) for x in a)


def test_bad_model_path_is_a_clear_error(tmp_path):
    e = HFEngine(str(tmp_path / "nope"))
    with pytest.raises(BiaskitError, match="cannot load a seq2seq translation model"):
        e.translate(["x"], "en", "hi")


def test_translate_pairs_contract_cache_and_rerun(nllb_dir, tmp_path):
    out = tmp_path / "cands.jsonl"
    cache = DiskCache(tmp_path / "c.sqlite3", namespace="mt")
    e1 = create_engine(f"hf:{nllb_dir}", device="cpu", batch_size=8, max_new_tokens=6, concurrency=3)
    r1 = translate_pairs(PAIRS, "hi", [e1], out, cache=cache, batch_pairs=2, align=False)
    recs = [json.loads(x) for x in out.read_text(encoding="utf-8").splitlines()]
    assert [r["pair_id"] for r in recs] == [p.pair_id for p in PAIRS]
    r = recs[0]
    assert set(r) >= {
        "pair_id",
        "source_lang",
        "target_lang",
        "bias_type",
        "direction",
        "source",
        "candidates",
        "provenance",
    }
    assert (r["source_lang"], r["target_lang"], r["bias_type"], r["direction"]) == ("en", "hi", "gender", "stereo")
    assert r["source"] == {"sent_more": PAIRS[0].sent_more, "sent_less": PAIRS[0].sent_less}
    (c,) = r["candidates"]
    assert c["engine"] == "hf" and c["model"] == str(nllb_dir)
    assert isinstance(c["flags"], list) and all({"code", "reason"} <= set(f) for f in c["flags"])
    assert c["provenance"]["fingerprint"].startswith("files-") and c["provenance"]["device"] == "cpu"
    # random weights emit no Devanagari: every candidate is flagged wrong_script
    assert all(any(f["code"] == "wrong_script" for f in rr["candidates"][0]["flags"]) for rr in recs)
    # 5 pairs in batches of 2 pairs -> 4 + 4 + 2 texts -> 3 generate calls (batch_size 8)
    assert r1.engine_stats[f"hf:{nllb_dir}"]["requested"] == 10 and e1.generate_calls == 3
    first = out.read_text(encoding="utf-8")

    # a fresh engine on the same cache: zero model calls, same output
    e2 = create_engine(f"hf:{nllb_dir}", device="cpu", batch_size=8, max_new_tokens=6)
    out2 = tmp_path / "again.jsonl"
    r2 = translate_pairs(PAIRS, "hi", [e2], out2, cache=cache, align=False)
    assert e2.generate_calls == 0 and r2.engine_stats[f"hf:{nllb_dir}"]["cache_hits"] == 10
    assert e2._model is None  # the fingerprint comes from the files: the weights were never loaded

    def strip(s):
        return [{**json.loads(x), "provenance": None} for x in s.splitlines()]

    assert strip(out2.read_text(encoding="utf-8")) == strip(first)

    # a different decoding setting is a different cache entry
    e3 = create_engine(f"hf:{nllb_dir}", device="cpu", max_new_tokens=3)
    translate_pairs(PAIRS[:1], "hi", [e3], tmp_path / "short.jsonl", cache=cache, align=False)
    assert e3.generate_calls == 1


class Interrupt(Exception):
    pass


def test_interrupted_run_resumes(nllb_dir, tmp_path):
    out = tmp_path / "cands.jsonl"
    cache = DiskCache(tmp_path / "c.sqlite3", namespace="mt")
    e = HFEngine(str(nllb_dir), device="cpu", max_new_tokens=4)
    real = e.translate
    calls = {"n": 0}

    def dying(texts, src, tgt):  # the machine "dies" during the third batch
        calls["n"] += 1
        if calls["n"] == 3:
            raise Interrupt()
        return real(texts, src, tgt)

    e.translate = dying
    with pytest.raises(Interrupt):
        translate_pairs(PAIRS, "hi", [e], out, cache=cache, batch_pairs=2, align=False)
    partial = [json.loads(x) for x in out.read_text(encoding="utf-8").splitlines()]
    assert [p["pair_id"] for p in partial] == [p.pair_id for p in PAIRS[:4]]  # two finished batches kept

    e.translate = real
    before = e.generate_calls
    res = translate_pairs(PAIRS, "hi", [e], out, cache=cache, batch_pairs=2, align=False)
    assert res.n_resumed == 4 and res.n_pairs == 5
    assert e.generate_calls - before == 1  # only the last pair was translated
    recs = [json.loads(x) for x in out.read_text(encoding="utf-8").splitlines()]
    assert [p["pair_id"] for p in recs] == [p.pair_id for p in PAIRS]

    # another engine list is another run: old records are not reused for it
    import shutil

    other_dir = shutil.copytree(nllb_dir, tmp_path / "other-model")
    e_other = HFEngine(str(other_dir), device="cpu", max_new_tokens=5)
    res2 = translate_pairs(PAIRS, "hi", [e, e_other], out, cache=cache, align=False)
    assert res2.n_resumed == 0
    assert all(len(json.loads(x)["candidates"]) == 2 for x in out.read_text(encoding="utf-8").splitlines())


def test_input_errors(engine, tmp_path):
    from biaskit.io import write_jsonl

    precious = tmp_path / "pairs.jsonl"
    write_jsonl(precious, PAIRS)
    with pytest.raises(InputError, match="not a translation-candidates file"):
        translate_pairs(PAIRS, "hi", [engine], precious)
    assert len(precious.read_text().splitlines()) == len(PAIRS)
    with pytest.raises(InputError, match="same engine and model"):
        translate_pairs(PAIRS, "hi", [engine, engine], tmp_path / "x.jsonl")
    with pytest.raises(InputError, match="both 'en'"):
        translate_pairs(PAIRS, "en", [engine], tmp_path / "x.jsonl")
    with pytest.raises(InputError, match="no translation engine"):
        translate_pairs(PAIRS, "hi", [], tmp_path / "x.jsonl")


def test_fingerprint_changes_when_the_folder_is_overwritten(tmp_path):
    d = build_tiny_nllb(tmp_path / "m", seed=0)
    before = HFEngine(str(d)).cache_params()["fingerprint"]
    assert HFEngine(str(d)).cache_params()["fingerprint"] == before
    build_tiny_nllb(tmp_path / "m", seed=1)  # new weights under the same path
    assert HFEngine(str(d)).cache_params()["fingerprint"] != before
