"""``indibias-seat``: the IndiBias intersectional SEAT tests (Sahoo et al. 2024, §5, Appendix B, Tables 3/4/9)."""

from __future__ import annotations

from . import words as W
from .base import Difference, Protocol, Setting

PROTOCOL = Protocol(
    name="indibias-seat",
    title="IndiBias intersectional SEAT (Sahoo et al. 2024, Appendix B)",
    citation="Sahoo et al. (2024), IndiBias, NAACL Findings: §5, Appendix B, Tables 3, 4 and 9; SEAT after May et "
    "al. (2019).",
    commands=("seat",),
    origin="biaskit's shipped IndiBias tests (indibias-paper, indibias-team)",
    settings=(
        Setting(
            "pooling",
            "cls",
            "IndiBias Appendix B: the sentence encoding is the embedding of the [CLS] token",
            "pooling",
            W.POOLING,
            when={"family": ("encoder", "encoder-decoder")},
        ),
        Setting(
            "bleach",
            "auto",
            "IndiBias §5 and Appendix B: semantically bleached sentence templates (May et al. 2019)",
            "bleach",
            W.BLEACH,
        ),
        Setting(
            "alpha",
            0.01,
            "IndiBias Tables 3, 4, 9: underlined values are significant at p = 0.01",
            "alpha",
            {0.01: "significance at p ≤ 0.01"},
        ),
        Setting(
            "correction",
            "none",
            "IndiBias Tables 3, 4, 9: no multiple-testing correction is mentioned",
            "",
            W.CORRECTION,
        ),
        Setting(
            "marks",
            "underline",
            "IndiBias Tables 3, 4, 9: significant values are underlined",
            "",
            {"underline": "significant effect sizes underlined"},
        ),
    ),
    scope={
        "family": (
            ("encoder", "encoder-decoder"),
            "a decoder (causal LM): IndiBias Appendix B encodes a sentence as its [CLS] embedding, and a decoder has "
            "no [CLS] (its first position is the start token or the first word, the same for most sentences); "
            "biaskit pools the last position instead by default, as sent-bias does for GPT",
        )
    },
    differences=(
        Difference(
            "rendered-tests",
            "data: {rendered_tests_n} test(s) in a language whose sentences are biaskit's rendering (the paper's "
            "NLLB translations were not published), not the paper's sentences",
            when={"rendered_tests": True},
            section="docs/fidelity.md; data/seat/CARD.md",
        ),
        Difference(
            "other-tests",
            "data: {other_tests_n} test(s) are not the paper's Tables 3, 4, 9 tests (biaskit's own or another "
            "source's): no published figure exists for them",
            when={"other_tests": True},
            section="data/seat/CARD.md",
        ),
    ),
    notes=(
        "Layer: Appendix B says 'contextual representations'; biaskit uses the last layer.",
        "Encoder-decoder models (mT5, mBART; Tables 3/4/9): biaskit encodes with the encoder only (its last layer), "
        "because the decoder's states depend on a target sequence and are not an encoding of the input sentence.",
        "Permutations: Appendix B gives no count; biaskit uses sent-bias's default of 100,000 (the exact test when "
        "there are fewer equal-size partitions).",
        "p-value: Appendix B writes Pr[s(Xi, Yi) > s(X, Y)]; biaskit counts ≥ as the sent-bias code it follows "
        "(the conservative test), which differs only for ties.",
        "Hindi tests: the paper's NLLB-translated sentences were not published; the shipped Hindi is biaskit's own "
        "rendering (data/seat/CARD.md), so Hindi effect sizes are not the paper's setup even under this protocol.",
    ),
    figures=("indibias2024:seat",),
)
