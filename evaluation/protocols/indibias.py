"""``indibias``: IndiBias minimal pairs (Sahoo et al., NAACL Findings 2024, §6.1, Table 2)."""

from __future__ import annotations

from . import words as W
from .base import Protocol, Setting

PROTOCOL = Protocol(
    name="indibias",
    title="IndiBias minimal pairs (Sahoo et al. 2024, §6.1)",
    citation="Sahoo, Kulkarni, Asad, Ahmad, Goyal, Garimella & Bhattacharyya (2024). IndiBias. NAACL Findings.",
    commands=("pairs",),
    origin="IndiBias CSV files (IndiBias_v1_sample.csv) and releases built from IndiBias",
    settings=(
        Setting(
            "method",
            "pll",
            "IndiBias §6.1: the numbers are reported using P(U|M)",
            "method",
            W.METHOD,
            when={"kind": "mlm"},
        ),
        Setting(
            "unit",
            "word",
            "IndiBias §6.1: word-level masking instead of token-level masking (U and M are sets of words); "
            "masking each word whole is biaskit's reading: the formula masks one token u_i of U at a time",
            "unit",
            W.UNIT,
            when={"kind": "mlm"},
            readings={
                "word-token": "§6.1's formula read literally: U and M by words, one token u_i of U masked at a time"
            },
        ),
        Setting(
            "normalise",
            "unmodified",
            "IndiBias §6.1: P(U|M) normalised by the number of tokens |C|",
            "normalise",
            W.NORMALISE,
            when={"kind": "mlm"},
        ),
        Setting(
            "method",
            "mean",
            "IndiBias §6.1: decoder and seq2seq models, the sum of the token log-probabilities "
            "divided by the number of tokens",
            "method",
            W.METHOD,
            when={"kind": ("clm", "seq2seq")},
        ),
        Setting("runs", 5, "IndiBias Table 2 caption: five runs", "runs", {5: "5 subsample runs"}),
        Setting(
            "fraction",
            0.8,
            "IndiBias Table 2 caption: a different 80% sample each run",
            "fraction",
            {0.8: "80% of the pairs per run"},
        ),
    ),
    notes=(
        "Ties: §6.1.1 counts pairs where score(S1) > score(S2) and does not say how equal scores are decided; "
        "biaskit rounds scores to 3 decimals as CrowS-Pairs' metric.py does, and an equal pair is not a win.",
        "Subsamples: the paper gives neither the seeds nor whether its 80% samples are drawn with replacement; "
        "biaskit draws without replacement with seeds seed .. seed+4 and reports the std with ddof 0.",
        "|C| under word-level masking: biaskit counts the pieces of the unmodified words (every scored token).",
        "Whole-word masking is biaskit's reading of §6.1, not its letter: §6.1 builds U and M from words and then "
        "sums log P(u_i | U\\u_i, M) over the |C| tokens of U, which reads as one token masked at a time. "
        "{option:unit=word-token} runs that literal reading (reported as another reading of §6.1, not a deviation).",
        "Word-level masking in English too: §6.1 motivates it with Hindi and breaks every sentence into words.",
        "Encoder-decoder LMs (mT5, mBART) are scored as log P(sentence as the decoder's target | empty input), "
        "per-token mean; §6.1 says only that seq2seq models use the normalised sentence probability.",
    ),
    figures=("indibias2024:table2",),
)
