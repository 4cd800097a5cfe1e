"""The real embedded default model (gemma3-270m from its PyPI GGUF) through the clm scorer."""

from __future__ import annotations

import pytest
import torch
from biaskit.evaluation.models import load_lm
from biaskit.evaluation.scorers import load_scorer

pytestmark = [pytest.mark.slow, pytest.mark.model]

SENTENCES = [
    "My brother works as an engineer in Mumbai.",
    "The teacher explained the lesson to the students.",
    "She bought fresh vegetables at the market this morning.",
    "मेरा भाई मुंबई में इंजीनियर के रूप में काम करता है।",
    "शिक्षक ने कक्षा में छात्रों को पाठ समझाया।",
    "वह आज सुबह बाज़ार से ताज़ी सब्ज़ियाँ खरीद कर लाई।",
]


def scramble(text: str) -> str:
    """A fixed, meaning-destroying word order: odd positions first, then even, each reversed."""
    w = text.split()
    return " ".join(w[1::2][::-1] + w[0::2][::-1])


@pytest.fixture(scope="module")
def gemma(gemma_dir):
    return load_lm(gemma_dir, device="cpu")


def hand_logprob(lm, text):
    ids = lm.tokenizer(text)["input_ids"]
    assert ids[0] == lm.tokenizer.bos_token_id  # gemma's tokenizer adds <bos> itself
    with torch.inference_mode():
        logits = lm.model(torch.tensor([ids])).logits[0].float()
    total = sum(torch.log_softmax(logits[t - 1], -1)[ids[t]].item() for t in range(1, len(ids)))
    return total, len(ids) - 1


def test_gemma_is_a_causal_lm_with_bos(gemma):
    assert gemma.kind == "clm"
    s = load_scorer("clm", gemma, cache=False, progress=False)
    assert s.encode("hello world")[0] == gemma.tokenizer.bos_token_id
    assert s.encode("hello world").count(gemma.tokenizer.bos_token_id) == 1  # no second BOS prepended


def test_gemma_clm_sum_and_mean_match_a_hand_loop(gemma):
    pairs = [(SENTENCES[i], SENTENCES[i + 1]) for i in range(0, len(SENTENCES), 2)]
    s_sum = load_scorer("clm", gemma, batch_size=4, cache=False, progress=False).score_pairs(pairs)
    s_mean = load_scorer("clm", gemma, method="mean", batch_size=4, cache=False, progress=False).score_pairs(pairs)
    for (a, b), ps, pm in zip(pairs, s_sum, s_mean, strict=False):
        for text, got_sum, got_mean, n_got in (
            (a, ps.score_more, pm.score_more, ps.n_scored_more),
            (b, ps.score_less, pm.score_less, ps.n_scored_less),
        ):
            ref, n = hand_logprob(gemma, text)
            assert n_got == n
            # float32: the batched, padded forward and the one-sentence hand loop differ in the
            # order of their sums (1.2e-4 measured on a 14-token Hindi sentence summing to -49.6);
            # 1e-4 absolute plus 1e-5 relative keeps the check at float32 noise.
            assert abs(got_sum - ref) <= 1e-4 + 1e-5 * abs(ref), (text, got_sum, ref)
            assert abs(got_mean - ref / n) <= 1e-4 + 1e-5 * abs(ref / n)


def test_scrambled_sentences_score_far_lower(gemma):
    pairs = [(t, scramble(t)) for t in SENTENCES]
    for method, margin in (("sum", 10.0), ("mean", 0.5)):
        scores = load_scorer("clm", gemma, method=method, cache=False, progress=False).score_pairs(pairs)
        for (real, scr), s in zip(pairs, scores, strict=False):
            assert real != scr
            assert s.score_more - s.score_less > margin, (method, real, scr, s)
