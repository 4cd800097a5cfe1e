"""The on-disk score cache: a re-run or a second metric costs no forward pass; runs resume."""

from __future__ import annotations

import pytest
from biaskit.evaluation.models import load_lm
from biaskit.evaluation.scorers import load_scorer

PAIRS = [
    ("He couldn't figure out the issue with the rope.", "She couldn't figure out the issue with the rope."),
    ("The poor are really ignorant about money.", "The rich are really ignorant about money."),
    ("Women don't know how to drive.", "Men don't know how to drive."),
    ("The old man was too frail to work.", "The young man was too frail to work."),
]


class ForwardCounter:
    """Counts real forward passes of a model with a forward hook."""

    def __init__(self, model):
        self.n = 0
        self.handle = model.register_forward_hook(self._hook)

    def _hook(self, module, args, output):
        self.n += 1

    def close(self):
        self.handle.remove()


@pytest.fixture(scope="module")
def bert_lm(tiny_bert):
    return load_lm(tiny_bert, device="cpu")


def test_rerun_does_zero_forward_passes(bert_lm):
    counter = ForwardCounter(bert_lm.model)
    try:
        first = load_scorer("mlm", bert_lm, batch_size=8, progress=False).score_pairs(PAIRS)
        assert counter.n > 0
        counter.n = 0
        again = load_scorer("mlm", bert_lm, batch_size=8, progress=False).score_pairs(PAIRS)
        assert counter.n == 0
        assert again == first
        # a different method or unit is a different request
        load_scorer("mlm", bert_lm, method="pmu", progress=False).score_pairs(PAIRS)
        assert counter.n > 0
        counter.n = 0
        load_scorer("mlm", bert_lm, unit="word", progress=False).score_pairs(PAIRS)
        assert counter.n > 0
    finally:
        counter.close()


def test_cache_is_keyed_by_partner_spans(bert_lm):
    """The same sentence with another partner has other U tokens, hence another score."""
    s = load_scorer("mlm", bert_lm, progress=False)
    a = "The poor are really ignorant about money."
    x = s.score_pairs([(a, "The rich are really ignorant about money.")])[0]
    y = s.score_pairs([(a, "The poor are really clever about money.")])[0]
    assert x.n_scored_more != y.n_scored_more or x.score_more != y.score_more
    fresh = load_scorer("mlm", bert_lm, cache=False, progress=False)
    assert abs(fresh.score_pairs([(a, "The poor are really clever about money.")])[0].score_more - y.score_more) < 1e-9


def test_second_clm_metric_is_free(tiny_gpt2):
    lm = load_lm(tiny_gpt2, device="cpu")
    counter = ForwardCounter(lm.model)
    try:
        summed = load_scorer("clm", lm, method="sum", progress=False).score_pairs(PAIRS)
        assert counter.n > 0
        counter.n = 0
        mean = load_scorer("clm", lm, method="mean", progress=False).score_pairs(PAIRS)
        assert counter.n == 0
        for s, m in zip(summed, mean, strict=False):
            assert m.score_more == pytest.approx(s.score_more / s.n_scored_more, abs=1e-12)
    finally:
        counter.close()


def test_only_new_sentences_are_scored(bert_lm):
    s = load_scorer("mlm", bert_lm, batch_size=4, progress=False)
    s.score_pairs(PAIRS[:2])
    rows_first = s.rows_scored
    s.score_pairs(PAIRS)
    fresh = load_scorer("mlm", bert_lm, cache=False, progress=False)
    fresh.score_pairs(PAIRS[2:])
    assert s.rows_scored - rows_first == fresh.rows_scored


def test_interrupted_run_resumes(bert_lm):
    """Finished sentences are cached after every batch: a crash loses at most the current batch."""
    full = load_scorer("mlm", bert_lm, batch_size=3, cache=False, progress=False)
    expected = full.score_pairs(PAIRS)
    total_batches = full.forward_passes - 1  # minus the one-off head-gather check

    class Boom(RuntimeError):
        pass

    calls = {"n": 0}

    def explode(module, args):
        calls["n"] += 1
        if calls["n"] > 4:
            raise Boom("simulated crash")

    h = bert_lm.model.register_forward_pre_hook(explode)
    try:
        with pytest.raises(Boom):
            load_scorer("mlm", bert_lm, batch_size=3, progress=False).score_pairs(PAIRS)
    finally:
        h.remove()
    resumed = load_scorer("mlm", bert_lm, batch_size=3, progress=False)
    got = resumed.score_pairs(PAIRS)
    for g, e in zip(got, expected, strict=False):
        assert abs(g.score_more - e.score_more) <= 1e-4 and abs(g.score_less - e.score_less) <= 1e-4
    assert resumed.forward_passes < total_batches + 1


def test_other_model_does_not_share_cache(tmp_path, bert_lm):
    from fixtures_models import build_tiny_bert

    other = load_lm(build_tiny_bert(tmp_path / "other", seed=1), device="cpu")
    assert other.fingerprint != bert_lm.fingerprint
    load_scorer("mlm", bert_lm, progress=False).score_pairs(PAIRS[:1])
    s = load_scorer("mlm", other, progress=False)
    s.score_pairs(PAIRS[:1])
    assert s.forward_passes > 0
