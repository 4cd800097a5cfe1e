"""``stereoset``: StereoSet (Nadeem et al. arXiv 2020 / ACL 2021) and its reference code."""

from __future__ import annotations

from . import words as W
from .base import Difference, Protocol, Setting

_REF = "StereoSet reference code"
PROTOCOL = Protocol(
    name="stereoset",
    title="StereoSet (Nadeem, Bethke & Reddy 2021), likelihood-based scoring",
    citation="Nadeem, Bethke & Reddy (2021). StereoSet. ACL-IJCNLP (arXiv 2004.09456, 2020). Code: "
    "github.com/moinnadeem/StereoSet.",
    commands=("cats",),
    origin="StereoSet's dev.json, the flattened StereoSet JSONL and releases built from them",
    settings=(
        Setting(
            "mode",
            "likelihood",
            "StereoSet ACL 2021 §6.1 and Table 4 (the arXiv 2020 paper scores only so)",
            "cat_mode",
            W.CAT_MODE,
        ),
        Setting(
            "piece_agg",
            "mean-prob",
            "StereoSet ACL 2021 §6.1: the average per-subword probability; "
            f"{_REF} eval_discriminative_models.py: np.mean of the probabilities",
            "piece_agg",
            W.PIECE_AGG,
            when={"kind": "mlm"},
        ),
        Setting(
            "tie_policy",
            "reference",
            f"{_REF} code/evaluation.py: stereotype > anti-stereotype else anti",
            "ties",
            W.TIES,
        ),
        Setting(
            "intersentence",
            "nsp",
            "StereoSet arXiv 2020 §7.1-7.4 and A.4, ACL 2021 §6.1-6.2: a next-sentence-"
            f"prediction head for every model ({_REF} code/models/models.py ModelNSP)",
            "nsp_head",
            W.INTER,
        ),
    ),
    differences=(
        Difference(
            "two-blanks",
            "scoring: {two_blank_cats_n} intrasentence CAT(s) with two BLANKs get the word in both places and every "
            "piece of both scored; the reference mis-aligns them, so their scores differ from the paper's",
            when={"kind": "mlm", "two_blank_cats": True},
            section="docs/evaluation-cats-seat.md, deliberate difference 4",
        ),
        Difference(
            "leading-space",
            "scoring: a byte-level BPE vocabulary: biaskit scores the pieces of the word inside the sentence (with "
            "its leading space), the reference the bare word's pieces, so intrasentence scores differ from the paper's",
            when={"kind": "mlm", "byte_level": True},
            section="docs/evaluation-cats-seat.md, deliberate difference 1",
        ),
        Difference(
            "inner-punctuation",
            "scoring: {inner_punct_fills_n} intrasentence fill(s) with punctuation or a space inside (middle-aged): "
            "biaskit scores the fill as written, the reference the space-split word without punctuation (middleaged)",
            when={"kind": "mlm", "inner_punct_fills": True},
            section="docs/evaluation-cats-seat.md, deliberate difference 2",
        ),
    ),
    notes=(
        "Intrasentence masked-LM scoring scores the pieces the filled sentence is actually tokenized into (found by "
        "character offsets), not tokenizer.encode(word) of the bare word, which loses the leading space of "
        "byte-level BPE models (RoBERTa, GPT-2 vocabularies); see evaluation/stereoset.py.",
        "StereoSet's test set is not public; runs on dev.json are compared with the paper's development-set "
        "figures (arXiv 2020 Tables 4 and 7).",
        "The authors' NSP heads are whole ModelNSP state dicts (the fine-tuned core model and the 3-layer head); "
        "biaskit loads the core weights from the head file too, as the reference does.",
    ),
    figures=("stereoset2020:table4", "stereoset2020:table7"),
)
