"""How a StereoSet CAT option becomes scoring-engine requests: what both scoring modes share.

Where an intrasentence option's fill sits in the text (:func:`locate_fill`), the masked inputs of its
word pieces (:func:`mlm_piece_requests`), a causal LM's token ids and the first token scored
(:func:`clm_requests`), an intersentence option joined to its context (:func:`inter_text`), and the
likelihood plan of an option (:func:`likelihood_plan`). :mod:`.stereoset` (likelihood scoring and
the runs) and :mod:`.cat_modes` (pseudo-likelihood) both build on these; the module docstring of
:mod:`.stereoset` says what is scored, and how biaskit differs from the reference code on purpose.
"""

from __future__ import annotations

import re
import string
from dataclasses import dataclass

from biaskit.errors import BiaskitError
from biaskit.options import say
from biaskit.schema import CAT
from biaskit.textutil import is_sentence_end, strip_edges

from .engine import Request


@dataclass
class Fill:
    """Where an intrasentence option's filled-in word sits in the text that is scored."""

    text: str  # the context with BLANK replaced by the fill
    fill: str
    spans: list[tuple[int, int]]  # character spans of every occurrence of the fill in ``text``
    exact: bool  # True when the option matched the context around BLANK


_EDGE_PUNCT = string.punctuation + "\u2019\u2018\u201c\u201d"  # and every script's sentence terminals


def locate_fill(context: str, sentence: str) -> Fill:
    """Find the word(s) an option puts in place of ``BLANK``.

    The context's text around each ``BLANK`` is matched against the option case-insensitively
    (StereoSet dev options are often lower-cased copies of the context); the fill's edge punctuation
    is dropped ("... is BLANK" vs "... is lazy." fills "lazy"). When the option does not match the
    context, the longest common prefix/suffix (case-insensitive) gives the differing span and the
    option sentence itself is scored (``exact=False``).
    """
    ctx = re.sub(r"\s+", " ", context).strip()
    sent = re.sub(r"\s+", " ", sentence).strip()
    parts = ctx.split("BLANK")
    pattern = (
        "^"
        + re.escape(parts[0])
        + r"(.+?)"
        + "".join(re.escape(p) + r"\1" for p in parts[1:-1])
        + re.escape(parts[-1])
        + "$"
    )
    m = re.match(pattern, sent, flags=re.IGNORECASE | re.DOTALL) if len(parts) > 1 else None
    if m:
        fill = strip_edges(m.group(1).strip(), _EDGE_PUNCT).strip() or m.group(1).strip()
        if fill:
            text, spans = "", []
            for k, part in enumerate(parts):
                text += part
                if k < len(parts) - 1:
                    spans.append((len(text), len(text) + len(fill)))
                    text += fill
            return Fill(text=text, fill=fill, spans=spans, exact=True)
    # fallback: the differing middle of the option
    lo_s, before, after = sent.lower(), parts[0].lower(), parts[-1].lower()
    p = 0
    while p < min(len(before), len(lo_s)) and before[p] == lo_s[p]:
        p += 1
    q = 0
    while q < min(len(after), len(lo_s) - p) and after[len(after) - 1 - q] == lo_s[len(lo_s) - 1 - q]:
        q += 1
    a, b = p, len(sent) - q
    while a < b and (sent[a] in _EDGE_PUNCT or sent[a].isspace()):
        a += 1
    while b > a and (sent[b - 1] in _EDGE_PUNCT or sent[b - 1].isspace()):
        b -= 1
    if a >= b:
        # nothing differs: score the whole option
        a, b = 0, len(sent)
    return Fill(text=sent, fill=sent[a:b], spans=[(a, b)], exact=False)


def mlm_piece_requests(tok, fill: Fill) -> tuple[list[list[int]], list[int], list[int]]:
    """The masked inputs for every piece of the fill: (input ids, mask position, target id)."""
    if not getattr(tok, "is_fast", False):
        raise BiaskitError(
            "StereoSet intrasentence scoring needs a fast tokenizer (character offsets). "
            "Fix: save the model with its tokenizer.json, or install `tokenizers`."
        )
    if tok.mask_token_id is None:
        raise BiaskitError(f"the tokenizer has no mask token: use {say('scorer', 'clm')} for this model.")
    enc = tok(fill.text, return_offsets_mapping=True, add_special_tokens=True)
    ids, offs = enc["input_ids"], enc["offset_mapping"]
    seqs, positions, targets = [], [], []
    for a, b in fill.spans:
        occ = [i for i, (s, e) in enumerate(offs) if e > s and s < b and e > a]
        if not occ:
            continue
        end = occ[-1] + 1
        for i in occ:
            seqs.append(ids[:i] + [tok.mask_token_id] + ids[end:])
            positions.append(i)
            targets.append(ids[i])
    if not seqs:
        raise BiaskitError(f"the fill {fill.fill!r} maps to no token in {fill.text!r}.")
    return seqs, positions, targets


def _start_id(tok) -> int | None:
    return tok.bos_token_id if tok.bos_token_id is not None else tok.eos_token_id


def clm_requests(tok, text: str, score_from_char: int = 0) -> tuple[list[int], int]:
    """Token ids ``[start] + ids(text)`` and the index of the first token to score.

    Tokens whose character span ends after ``score_from_char`` are scored (for intersentence the
    context's characters come first and are not scored).
    """
    start = _start_id(tok)
    if score_from_char and getattr(tok, "is_fast", False):
        enc = tok(text, return_offsets_mapping=True, add_special_tokens=False)
        ids, offs = enc["input_ids"], enc["offset_mapping"]
        first = next((i for i, (s, e) in enumerate(offs) if e > score_from_char), len(ids))
    elif score_from_char:
        ctx_ids = tok(text[:score_from_char], add_special_tokens=False)["input_ids"]
        ids = tok(text, add_special_tokens=False)["input_ids"]
        first = len(ctx_ids)
    else:
        ids = tok(text, add_special_tokens=False)["input_ids"]
        first = 0
    if start is not None:
        return [start] + list(ids), first + 1
    # no start token: the first token cannot be scored
    return list(ids), max(first, 1)


def inter_text(context: str, sentence: str) -> tuple[str, int]:
    """An intersentence option after its context (a full stop added to a context without end
    punctuation), and where the option starts: ``(text, len(context part))``."""
    ctx = context.strip()
    if ctx and not is_sentence_end(ctx[-1]):
        ctx += "."
    return f"{ctx} {sentence.strip()}", len(ctx)


def likelihood_plan(c: CAT, o, sm) -> tuple[str, list, dict]:
    """How one option is scored by likelihood (``mode="likelihood"``, ACL 2021 Table 4): its method, its
    engine requests (none for NSP) and metadata."""
    tok = sm.tokenizer
    if c.split == "intrasentence" and sm.kind == "mlm":
        fill = locate_fill(c.context, o.sentence)
        seqs, pos, tgt = mlm_piece_requests(tok, fill)
        reqs = [
            Request(ids=tuple(s), positions=(p,), targets=(t,), text=fill.text)
            for s, p, t in zip(seqs, pos, tgt, strict=False)
        ]
        return "mlm-piece-l2r", reqs, {"fill": fill.fill, "fill_exact": fill.exact}
    if c.split == "intersentence" and sm.meta.get("nsp_head") is not None:  # --nsp-head: the reference's method
        return "nsp", [], {}
    if getattr(sm, "served", False):  # clm-api: text requests, the server tokenizes (see served.py)
        text, start = (o.sentence, 0) if c.split == "intrasentence" else inter_text(c.context, o.sentence)
        return ("clm-sentence" if c.split == "intrasentence" else "clm-conditional"), [sm.text_request(text, start)], {}
    if sm.kind == "clm":
        if c.split == "intrasentence":
            method, text, (ids, first) = "clm-sentence", o.sentence, clm_requests(tok, o.sentence)
        else:
            text, ctx_len = inter_text(c.context, o.sentence)
            method, (ids, first) = "clm-conditional", clm_requests(tok, text, ctx_len)
        return (
            method,
            [
                Request(
                    ids=tuple(ids),
                    positions=tuple(range(first - 1, len(ids) - 1)),
                    targets=tuple(ids[first:]),
                    text=text,
                )
            ],
            {},
        )
    return "nsp", [], {}
