"""Choices of evaluate options whose code lives in modules that also read the options models
(:mod:`.options` imports these, and so do :mod:`.seat`, :mod:`.stereoset`, :mod:`.correlate`,
:mod:`.ilps` and :mod:`.extrinsic`: one level below both, so the models never import the code that
takes them)."""

from __future__ import annotations

# SEAT: put word-list tests into bleached templates (auto: when every example is a word)
BLEACH_MODES = ("auto", "always", "never")

# The sentence vector, from the last layer (words: biaskit.evaluation.protocols.words.POOLING):
#   mean  - the mean over the tokens of the tokenizer's encoding (special tokens included)
#   cls   - the first position of that encoding ([CLS], <s>, ...; IndiBias Appendix B)
#   first - the first word piece, the text fed without special tokens (sent-bias's BERT encoder)
#   last  - the last position of the encoding (sent-bias's GPT encodings, combine_method = last)
POOLINGS = ("mean", "cls", "first", "last")

# StereoSet intrasentence, masked LMs: how the pieces of a fill combine (the reference: mean of probabilities)
PIECE_AGGS = ("mean-prob", "mean-logprob")

# evaluate correlate: the groups whose scores a variance is taken over (aligned: those on both sides)
GROUP_MODES = ("all", "aligned")

# ILPS: the word predicted (Kurita et al. 2019: the target; Cao et al. 2022 §2: the attribute)
PREDICT = ("target", "attribute")

# evaluate extrinsic classifier: the per-group rates and their gaps to the overall rate
CLASSIFIER_METRICS = ("fpr", "fpr_gap", "fnr", "fnr_gap")
