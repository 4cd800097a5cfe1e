"""``seat-may2019``: SEAT as May et al. (NAACL 2019) ran it, from their code (W4ngatang/sent-bias)."""

from __future__ import annotations

from . import words as W
from .base import Protocol, Setting

_SB = "sent-bias"
PROTOCOL = Protocol(
    name="seat-may2019",
    title="SEAT (May et al. 2019), as the sent-bias code runs it",
    citation="May, Wang, Bordia, Bowman & Rudinger (2019). On Measuring Social Biases in Sentence Encoders. NAACL. "
    "Code: github.com/W4ngatang/sent-bias.",
    commands=("seat",),
    origin="the sent-bias SEAT/WEAT tests (biaskit data download sent-bias-seat)",
    settings=(
        Setting(
            "pooling",
            "first",
            f"{_SB} sentbias/encoders/bert.py: the word pieces without [CLS]/[SEP], last layer at position 0",
            "pooling",
            W.POOLING,
            when={"family": "encoder"},
        ),
        Setting(
            "pooling",
            "last",
            f"{_SB} README (GPT): jiant extract_repr.py with combine_method = last",
            "pooling",
            W.POOLING,
            when={"family": "decoder"},
        ),
        Setting(
            "bleach",
            "never",
            f"{_SB} sentbias/main.py: every test's examples are encoded as written (the "
            "sent-* tests are the bleached versions)",
            "bleach",
            W.BLEACH,
        ),
        Setting(
            "n_samples",
            100_000,
            f"{_SB} sentbias/main.py: --n_samples 100000 (exact test below that)",
            "n_samples",
            {100_000: "100,000 permutations"},
        ),
        Setting("seed", 1111, f"{_SB} sentbias/main.py: --seed 1111", "seed", {1111: "seed 1111"}),
        Setting(
            "alpha",
            0.01,
            f"{_SB} scripts/print_table.py: STAR_THRESHOLD = 0.01 (p ≤ 0.01 starred)",
            "alpha",
            {0.01: "significance at p ≤ 0.01"},
        ),
        Setting(
            "correction",
            "holm-bonferroni",
            f"{_SB} scripts/print_table.py: holm_bonferroni (** after the correction)",
            "",
            W.CORRECTION,
        ),
        Setting(
            "marks",
            "star",
            f"{_SB} scripts/print_table.py: * for p ≤ 0.01, ** after the correction",
            "",
            {"star": "* and ** marks"},
        ),
    ),
    scope={
        "family": (
            ("encoder", "decoder"),
            "an encoder-decoder model: sent-bias has no encoder-decoder family, so its pooling has no counterpart",
        )
    },
    notes=(
        "Sampled permutations: sent-bias shuffles with numpy's global RNG; biaskit draws from "
        "numpy.random.default_rng(seed): the same test with different draws (the exact test is identical).",
        "GPT: sent-bias took OpenAI GPT encodings from jiant; biaskit's `last` pooling takes the last position of "
        "the tokenizer's own encoding, without the tokens jiant adds.",
        "May et al.'s published effect sizes are not shipped: the paper's text is not among the papers biaskit "
        "transcribes from.",
    ),
)
