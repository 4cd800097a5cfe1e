"""``crows``: CrowS-Pairs (Nangia et al., EMNLP 2020) and its reference ``metric.py``."""

from __future__ import annotations

from . import words as W
from .base import Protocol, Setting

_REF = "CrowS-Pairs reference metric.py"
PROTOCOL = Protocol(
    name="crows",
    title="CrowS-Pairs (Nangia et al. 2020): masked-LM pseudo-log-likelihood",
    citation="Nangia, Vania, Bhalerao & Bowman (2020), EMNLP; reference code github.com/nyu-mll/crows-pairs "
    "(metric.py).",
    commands=("pairs",),
    origin="the CrowS-Pairs CSV (crows_pairs_anonymized.csv) and releases built from it",
    settings=(
        Setting(
            "method",
            "pll",
            f"{_REF}, mask_unigram: P(U|M), one unmodified token masked at a time",
            "method",
            W.METHOD,
            when={"kind": "mlm"},
        ),
        Setting("unit", "token", f"{_REF}, mask_unigram: token-level masking", "unit", W.UNIT, when={"kind": "mlm"}),
        Setting(
            "normalise",
            "none",
            f"{_REF}, mask_unigram: score(S) is the sum",
            "normalise",
            W.NORMALISE,
            when={"kind": "mlm"},
        ),
        Setting(
            "decimals",
            3,
            f"{_REF}, evaluate: scores rounded to 3 decimals, equal scores are neutral",
            "",
            {3: "scores rounded to 3 decimals before comparison", "unrounded": "scores compared unrounded"},
        ),
    ),
    scope={
        "kind": (
            ("mlm",),
            "a causal or encoder-decoder LM: CrowS-Pairs scores masked LMs only (the reference "
            "metric.py loads bert, roberta, albert); biaskit's clm/seq2seq score is not the "
            "paper's metric",
        )
    },
    notes=(
        "The reference lower-cases both sentences for uncased models and scores with the model's special tokens; "
        "biaskit does the same (tests/test_scorer_parity.py).",
        "The CrowS-Pairs paper's figures are not shipped: its text is not among the papers biaskit transcribes "
        "from, so no published number is printed beside a run.",
    ),
)
