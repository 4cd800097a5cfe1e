"""How a setting's values read in a report (shared by the protocols and by biaskit's defaults)."""

from __future__ import annotations

METHOD = {
    "pll": "the pseudo-log-likelihood of the unmodified tokens, P(U|M)",
    "pmu": "the probability of the modified tokens, P(M|U)",
    "sum": "the sum of the token log-probabilities",
    "mean": "the per-token mean of the log-probabilities",
}
UNIT = {
    "token": "token-level masking",
    "word": "word-level U and M, each word masked whole",
    "word-token": "word-level U and M, one token of U masked at a time",
}
NORMALISE = {"none": "the sum over the unmodified tokens", "unmodified": "the mean over the |C| unmodified tokens"}
POOLING = {
    "mean": "the mean of the last layer over the tokens",
    "cls": "the first position of the tokenizer's encoding ([CLS], <s>, ...)",
    "first": "the first word piece, fed without special tokens (sent-bias's BERT encoder)",
    "last": "the last position of the encoding (sent-bias's GPT encodings)",
}
BLEACH = {
    "auto": "word lists bleached into templates, sentences as written",
    "always": "every example put into bleached templates",
    "never": "every example encoded as written",
}
CORRECTION = {"none": "no multiple-testing correction", "holm-bonferroni": "Holm-Bonferroni across the table"}
CAT_MODE = {"likelihood": "likelihood-based scoring", "pll": "pseudo-likelihood scoring"}
PIECE_AGG = {
    "mean-prob": "the mean of the word-piece probabilities",
    "mean-logprob": "the mean of their log-probabilities",
}
TIES = {"reference": "a tie counts as anti-stereotype / not related", "half": "a tie counts one half for each side"}
INTER = {"nsp": "a next-sentence-prediction head", "likelihood": "log P(option | context) under the LM"}
CORRELATION = {"pearson": "Pearson's r", "spearman": "Spearman's rho"}
GROUPS = {"all": "every group of each side", "aligned": "only the groups both sides have"}
SPLIT = {"intrasentence": "intrasentence CATs only", "intersentence": "intersentence CATs only", "both": "both splits"}
PREDICT = {
    "target": "the target word's probability (Kurita et al. 2019)",
    "attribute": "the attribute word's probability given the group (Cao et al. 2022 §2)",
}


def number(v) -> str:
    return f"{v:,}" if isinstance(v, int) and not isinstance(v, bool) else str(v)
