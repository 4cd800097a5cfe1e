"""Benchmark: CEAT's N sampled effect sizes (Guo & Caliskan 2021) for one protected group.

Compares biaskit's batched sampling (``biaskit.evaluation.ceat.sample_effects``: unit vectors, batched
matrix products, ``chunk`` samples at a time) with the straightforward loop of the reference code
(``weiguowilliam/CEAT`` ``code/ceat.py``: per sample, per word, scipy's cosine distance), on random
768-dimensional "contextual embeddings" (1 group word, 25 + 25 attribute words, 200 contexts each).
Both use the same draws, so they must give the same combined effect size; prints seconds and the ratio.
Run: ``python benchmarks/ceat.py [--samples N]``.
"""

from __future__ import annotations

import argparse
import time

import numpy as np


def straightforward(embs, sets, idx):
    from scipy.spatial import distance

    es, var = [], []
    for i in range(len(idx[0])):
        (g,), a, b = (
            [embs[w][ix[i]] for w, ix in zip(s, ixs.T, strict=False)] for s, ixs in zip(sets, idx, strict=False)
        )
        ca = [1 - distance.cosine(g, x) for x in a]
        cb = [1 - distance.cosine(g, x) for x in b]
        sd = np.std(ca + cb, ddof=1)
        es.append((np.mean(ca) - np.mean(cb)) / sd)
        var.append(sd**2)
    return np.array(es), np.array(var)


def main() -> None:
    from biaskit.evaluation.ceat import draws, random_effects, sample_effects

    ap = argparse.ArgumentParser()
    ap.add_argument("--samples", type=int, default=2000)
    args = ap.parse_args()
    rng = np.random.default_rng(0)
    A, B = [f"a{i}" for i in range(25)], [f"b{i}" for i in range(25)]
    embs = {w: rng.normal(size=(200, 768)) for w in ["g"] + A + B}
    sets = [["g"], A, B]
    idx = draws([[len(embs[w]) for w in s] for s in sets], args.samples, seed=1)
    t0 = time.perf_counter()
    es1, v1 = sample_effects(embs, sets, idx)
    fast = time.perf_counter() - t0
    t0 = time.perf_counter()
    es2, v2 = straightforward(embs, sets, idx)
    slow = time.perf_counter() - t0
    assert np.allclose(es1, es2, atol=1e-9) and np.allclose(v1, v2, atol=1e-12)
    r1, r2 = random_effects(es1, v1), random_effects(es2, v2)
    assert abs(r1["ces"] - r2["ces"]) < 1e-9
    print(f"CEAT, {args.samples} samples, 1 group word x (25 + 25) attribute words, 768 dims")
    print(f"  biaskit (batched)       {fast:8.2f} s")
    print(f"  straightforward loop    {slow:8.2f} s   ({slow / fast:.1f}x slower); CES {r1['ces']:.6f} both")


if __name__ == "__main__":
    main()
