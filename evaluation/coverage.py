"""Can a tokenizer represent the text it is given? (SEAT warns when it cannot.)

An English-only vocabulary (BERT uncased, all-MiniLM-L6-v2) turns Devanagari into ``[UNK]`` pieces
or strips its vowel signs, so a Hindi test encoded with it measures noise. :func:`tokenizer_coverage`
reports, over a list of texts:

- ``unknown_share``: the share of word pieces that are the tokenizer's unknown token;
- ``lost_char_share``: the share of the text's characters (case-folded, whitespace ignored) that do
  not come back when the pieces that are not unknown are decoded again (``difflib`` alignment of the
  input with the round trip): stripped accents and vowel signs, dropped characters, ``[UNK]``s.

:func:`coverage_warning` turns that into one sentence when either share passes its threshold.
"""

from __future__ import annotations

import difflib
from collections.abc import Sequence
from typing import Any

UNKNOWN_THRESHOLD = 0.05
LOST_THRESHOLD = 0.10


def _norm(text: str) -> str:
    return "".join(text.casefold().split())


def tokenizer_coverage(tokenizer: Any, texts: Sequence[str]) -> dict[str, Any]:
    """``{"n_texts", "n_pieces", "n_unknown", "unknown_share", "n_chars", "lost_char_share"}``."""
    unk = getattr(tokenizer, "unk_token_id", None)
    n_pieces = n_unknown = n_chars = n_kept = 0
    for text in texts:
        ids = list(tokenizer(text, add_special_tokens=False)["input_ids"])
        n_pieces += len(ids)
        known = [i for i in ids if unk is None or i != unk]
        n_unknown += len(ids) - len(known)
        back = tokenizer.decode(known, skip_special_tokens=True, clean_up_tokenization_spaces=False)
        a, b = _norm(text), _norm(back)
        n_chars += len(a)
        n_kept += sum(m.size for m in difflib.SequenceMatcher(a=a, b=b, autojunk=False).get_matching_blocks())
    return {
        "n_texts": len(texts),
        "n_pieces": n_pieces,
        "n_unknown": n_unknown,
        "unknown_share": n_unknown / n_pieces if n_pieces else 0.0,
        "n_chars": n_chars,
        "lost_char_share": 1.0 - n_kept / n_chars if n_chars else 0.0,
    }


def coverage_warning(cov: dict[str, Any], *, lang: str = "", what: str = "this test") -> str | None:
    """One sentence saying the numbers are noise, or None when the tokenizer covers the text."""
    if cov["unknown_share"] <= UNKNOWN_THRESHOLD and cov["lost_char_share"] <= LOST_THRESHOLD:
        return None
    from biaskit import languages as L

    lg = L.get(lang)
    language = lg.info.display_name if lg is not None else (lang or "its language")
    return (
        f"{what}: the encoder's tokenizer cannot represent {language} text: "
        f"{cov['unknown_share']:.0%} of {cov['n_pieces']} word pieces are unknown and "
        f"{cov['lost_char_share']:.0%} of the characters are lost (stripped or unknown); the effect size "
        "measures noise. Use an encoder whose vocabulary covers the language (a multilingual model)."
    )
