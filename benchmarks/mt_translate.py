"""Benchmark: the `hf` translation engine batched vs one sentence at a time, and a cached re-run.

A random NLLB-architecture model (d_model 256, 3+3 layers; no real en->hi model ships on PyPI) on
IndiBias-length English sentences. Prints seconds and ratios; no assertions.

    .venv/bin/python benchmarks/mt_translate.py [--n 32] [--batch 32]
"""

from __future__ import annotations

import argparse
import sys
import tempfile
import time
from pathlib import Path

sys.path.insert(0, str(Path(__file__).resolve().parents[1] / "tests"))


def main() -> None:
    ap = argparse.ArgumentParser()
    ap.add_argument("--n", type=int, default=32, help="sentences")
    ap.add_argument("--batch", type=int, default=32)
    ap.add_argument("--max-new-tokens", type=int, default=16)
    args = ap.parse_args()

    import torch

    torch.set_num_threads(max(1, min(2, torch.get_num_threads())))
    from biaskit.curation.mt_hf import HFEngine
    from biaskit.curation.translate import translate_pairs
    from mt_helpers import build_tiny_nllb
    from transformers import M2M100Config, M2M100ForConditionalGeneration

    from biaskit.cache import DiskCache
    from biaskit.schema import SentencePair

    tmp = Path(tempfile.mkdtemp(prefix="biaskit-mt-bench-"))
    d = build_tiny_nllb(tmp / "model")
    # widen the tiny model to a size where batching matters
    cfg = M2M100Config.from_pretrained(d)
    cfg.update(
        {
            "d_model": 256,
            "encoder_layers": 3,
            "decoder_layers": 3,
            "encoder_attention_heads": 4,
            "decoder_attention_heads": 4,
            "encoder_ffn_dim": 1024,
            "decoder_ffn_dim": 1024,
        }
    )
    torch.manual_seed(0)
    M2M100ForConditionalGeneration(cfg).save_pretrained(d)

    base = [
        "The man is a doctor and works in a big hospital in Delhi.",
        "Priya went to the market with her friends on Sunday morning.",
        "The Brahmin family lived in a luxurious mansion near the temple.",
        "He is a nurse who takes care of old people in the village.",
    ]
    texts = [f"{base[i % len(base)]} ({i})" for i in range(args.n)]

    def run(bs: int) -> float:
        e = HFEngine(str(d), device="cpu", batch_size=bs, max_new_tokens=args.max_new_tokens)
        e._load()
        t = time.perf_counter()
        e.translate(texts, "en", "hi")
        return time.perf_counter() - t

    one = run(1)
    many = run(args.batch)
    print(f"hf engine, {args.n} sentences, {args.max_new_tokens} new tokens max, {torch.get_num_threads()} threads")
    print(f"  one at a time : {one:7.2f} s")
    print(f"  batch {args.batch:<7}: {many:7.2f} s   -> {one / many:.1f}x faster")

    pairs = [
        SentencePair(sent_more=texts[i], sent_less=texts[i + 1], direction="stereo", bias_type="gender")
        for i in range(0, len(texts) - 1, 2)
    ]
    cache = DiskCache(tmp / "c.db", namespace="mt")
    e = HFEngine(str(d), device="cpu", batch_size=args.batch, max_new_tokens=args.max_new_tokens)
    t = time.perf_counter()
    translate_pairs(pairs, "hi", [e], tmp / "c1.jsonl", cache=cache, align=False, batch_pairs=args.batch)
    cold = time.perf_counter() - t
    e2 = HFEngine(str(d), device="cpu", batch_size=args.batch, max_new_tokens=args.max_new_tokens)
    t = time.perf_counter()
    translate_pairs(pairs, "hi", [e2], tmp / "c2.jsonl", cache=cache, align=False, batch_pairs=args.batch)
    warm = time.perf_counter() - t
    print(
        f"translate_pairs, {len(pairs)} pairs: cold {cold:.2f} s, re-run from the mt cache {warm:.2f} s "
        f"(incl. model load for the fingerprint) -> {cold / warm:.1f}x; generate calls on re-run: {e2.generate_calls}"
    )


if __name__ == "__main__":
    main()
