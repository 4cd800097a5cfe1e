"""Every record id biaskit computes, in one place.

Ids are stable content hashes (:func:`stable_id`): the same content gives the same id on every
machine, in every stage and from every file format that holds it (a StereoSet CAT read from the
original ``dev.json`` and from the flattened JSONL gets the same ``cat_id`` and sentence ids).
Upstream ids (StereoSet's example and sentence ids, CrowS-Pairs' row index) are kept next to them
as ``source_id``, never used as biaskit ids.

=================  ==========================================================================
record             id = hash of
=================  ==========================================================================
pair ``p-``        language, sent_more, sent_less
tuple ``t-``       language, axis, identity, attribute (case-folded), polarity
sentence ``s-``    the tuple id and the generated sentence (``curate sentences``; + the mode for ``anti``)
CAT ``c-``         language, split, target, context and the three options (stereotype,
                   anti-stereotype, unrelated): two CATs that share a context stay distinct
CAT option ``s-``  the CAT id, the gold label and the sentence
CAT draft ``d-``   split, target, context and the three options as the LLM wrote them (``curate cats``)
release ``r-``     the released pair's anchor (the source id its language views share) [+ the
                   language, for a view kept as a record of its own]
=================  ==========================================================================

Records whose content is identical (the same pair twice in one file) are told apart by
:class:`Numbering`: the first keeps its id, the next ones get ``<id>~2``, ``<id>~3``, ...
"""

from __future__ import annotations

import hashlib
import unicodedata
from typing import Any

CAT_LABEL_ORDER = ("stereotype", "anti-stereotype", "unrelated")


def normalize_text(text: str) -> str:
    """NFC-normalise and collapse internal whitespace (used for ids and comparisons)."""
    return " ".join(unicodedata.normalize("NFC", str(text)).split())  # str.split: the whitespace re's \s matches


def stable_id(prefix: str, *parts: Any, length: int = 16) -> str:
    """A stable content hash id, e.g. ``p-3f2a...``: same content -> same id on every machine."""
    h = hashlib.sha256(
        "\x1f".join(normalize_text(p) if isinstance(p, str) else str(p) for p in parts).encode("utf-8")
    ).hexdigest()
    return f"{prefix}-{h[:length]}"


def pair_id(sent_more: str, sent_less: str, lang: str = "en") -> str:
    return stable_id("p", lang, sent_more, sent_less)


def tuple_id(lang: str, axis: str, identity: str, attribute: str, polarity: str) -> str:
    return stable_id("t", lang, axis, identity.lower(), attribute.lower(), polarity)


def sentence_id(tuple_id: str, sentence: str, mode: str = "stereo") -> str:
    """A generated sentence (``curate sentences``) of one tuple; ``mode`` ``anti`` (a sentence that
    goes against the stereotype) is part of the id, so the same text in both modes gets two ids."""
    return stable_id("s", tuple_id, sentence) if mode == "stereo" else stable_id("s", tuple_id, mode, sentence)


def cat_id(lang: str, split: str, target: str, context: str, options: dict[str, str]) -> str:
    """``options``: gold label -> sentence. The options are part of the id (in the fixed label order,
    whatever order a file lists them in): StereoSet's dev set has CATs that share their context."""
    return stable_id("c", lang, split, target, context, *(options[lab] for lab in CAT_LABEL_ORDER))


def cat_draft_id(split: str, target: str, context: str, *options: str) -> str:
    """A CAT as an LLM drafted it (``curate cats``), before the structural checks: split, target,
    context and the three options as written (stereotype, anti-stereotype, unrelated)."""
    return stable_id("d", split, target, context, *options)


def cat_sentence_id(cat_id: str, gold_label: str, sentence: str) -> str:
    return stable_id("s", cat_id, gold_label, sentence)


def release_id(anchor: str, lang: str | None = None) -> str:
    """A released pair (``biaskit release build``): stable across versions built from the same sources."""
    return stable_id("r", anchor) if lang is None else stable_id("r", anchor, lang)


class Numbering:
    """Distinct ids for records of identical content: ``Numbering()(id)`` returns ``id`` the first
    time, then ``id~2``, ``id~3``, ... (in file order, so the same file always numbers the same way)."""

    def __init__(self) -> None:
        self._seen: dict[str, int] = {}

    def __call__(self, base: str) -> str:
        n = self._seen.get(base, 0) + 1
        self._seen[base] = n
        return base if n == 1 else f"{base}~{n}"
