"""Speed of the ``seq2seq`` scorer (batched engine) vs the straightforward loop, in one run.

The straightforward implementation scores one sentence per forward pass: the empty-text encoder
input, the decoder input shifted from the target, full logits at every decoder position,
``log_softmax``, the target ids gathered. The engine groups sentences of equal decoder length into
unpadded batches and applies the output head only at the scored positions. Both run on the same
sentences (the first ``--n`` pairs of the demo sample or a CrowS-Pairs / IndiBias file), from the same
model, with the cache off; the script prints sentences per second for each, the ratio and the largest
score difference.

Model: an mT5-shaped encoder-decoder with seeded random weights (``--d-model``, ``--layers``; the
Unigram vocabulary of the tests' tiny models, so the head is small) built offline, or ``--model DIR``.

    python benchmarks/score_seq2seq.py [--n 64] [--d-model 256] [--layers 4] [--batch-size 64] [--threads 1]
"""

from __future__ import annotations

import argparse
import os
import sys
import tempfile
import time
from pathlib import Path

os.environ.setdefault("HF_HUB_OFFLINE", "1")
os.environ.setdefault("TOKENIZERS_PARALLELISM", "false")
REPO = Path(__file__).resolve().parents[1]
sys.path.insert(0, str(REPO / "tests"))


def loop_scores(lm, texts):
    import torch

    tok, model = lm.tokenizer, lm.model
    enc = torch.tensor([tok("")["input_ids"]])
    out = []
    for t in texts:
        labels = torch.tensor([tok(text_target=t)["input_ids"]])
        dec = model.prepare_decoder_input_ids_from_labels(labels=labels)
        with torch.inference_mode():
            lp = torch.log_softmax(model(input_ids=enc, decoder_input_ids=dec).logits[0].float(), -1)
        out.append(float(lp.gather(-1, labels[0][:, None]).sum()))
    return out


def main(argv=None) -> dict:
    ap = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    ap.add_argument("--model")
    ap.add_argument("--data", default=str(REPO / "data" / "demo" / "demo_pairs.jsonl"))
    ap.add_argument("--n", type=int, default=64, help="pairs (2 sentences each)")
    ap.add_argument("--d-model", type=int, default=256)
    ap.add_argument("--layers", type=int, default=4)
    ap.add_argument("--batch-size", type=int, default=64)
    ap.add_argument("--threads", type=int, default=1)
    a = ap.parse_args(argv)
    import torch

    torch.set_num_threads(a.threads)
    from biaskit.evaluation.scorers import load_scorer
    from biaskit.evaluation.seq2seq import load_seq2seq

    from biaskit.readers import read_pairs

    pairs = read_pairs(a.data).pairs[: a.n]
    texts = [s for p in pairs for s in (p.sent_more, p.sent_less)]
    with tempfile.TemporaryDirectory() as tmp:
        path = a.model
        if path is None:
            from fixtures_models import build_tiny_mt5

            path = str(
                build_tiny_mt5(
                    Path(tmp),
                    d_model=a.d_model,
                    d_ff=4 * a.d_model,
                    d_kv=64,
                    num_heads=max(1, a.d_model // 64),
                    num_layers=a.layers,
                    num_decoder_layers=a.layers,
                )
            )
        lm = load_seq2seq(path, device="cpu")
        sc = load_scorer("seq2seq", lm=lm, method="sum", cache=False, progress=False, batch_size=a.batch_size)
        t0 = time.process_time()
        ref = loop_scores(lm, texts)
        t_loop = time.process_time() - t0
        t0 = time.process_time()
        got = [s for s, _ in sc.score_texts(texts)]
        t_eng = time.process_time() - t0
    res = {
        "sentences": len(texts),
        "loop_sent_per_cpu_s": len(texts) / t_loop,
        "engine_sent_per_cpu_s": len(texts) / t_eng,
        "ratio": t_loop / t_eng,
        "max_abs_diff": max(abs(x - y) for x, y in zip(ref, got, strict=False)),
        "max_rel_diff": max(abs(x - y) / max(abs(x), 1e-30) for x, y in zip(ref, got, strict=False)),
        "mean_abs_score": sum(abs(x) for x in ref) / len(ref),
        "forward_passes": sc.forward_passes,
    }
    for k, v in res.items():
        print(f"{k:>24}: {v:.4g}" if isinstance(v, float) else f"{k:>24}: {v}")
    return res


if __name__ == "__main__":
    main()
