"""Minimal pairs from generated sentences: swap the identity span for its comparable group.

``swap_sentence`` finds every mention of the identity term (all its inventory forms: singular,
plural, Hindi oblique plural, variants; possessive ``'s`` kept), replaces each with the comparable
group's *same* form, fixes ``a``/``an`` before it, and, when the two groups differ in gender,
swaps the words that agree with it:

- English: pronouns and gendered nouns from ``data/languages/en/inventory.json`` (he/she, him/her, his/her,
  himself/herself, man/woman, Mr/Mrs, ...). ``her`` becomes ``his`` before a word and ``him``
  otherwise (a heuristic).
- Hindi: the listed auxiliaries, participles and adjectives (था/थी, रहा/रही, करता/करती,
  अच्छा/अच्छी ...) and any imperfective participle in -ता/-ते/-ती directly before a form of होना,
  in the plural when the identity was plural (महिलाएं ... होती हैं -> पुरुष ... होते हैं). Other
  gendered nouns (माँ, पति) are left alone. The genitive का/की/के agrees with the possessed noun and
  is never changed, and an identity noun before a postposition is not put in the oblique case
  (लड़की की -> लड़का की, not लड़के की): the checker's review catches these.

Limits: every gendered word in the sentence is swapped, also when it refers to another person;
agreement is rule-based, not parsed. The checker (``biaskit/check.py``) runs on every built pair,
so the pairs it flags can be reviewed.

Direction and sides follow CrowS-Pairs (Nangia et al., 2020; the dataset README): ``sent_more`` is
always the *more stereotypical* sentence; ``stereo`` = ``sent_more`` demonstrates a stereotype about
a historically disadvantaged group; ``antistereo`` = ``sent_less`` violates a stereotype about a
historically disadvantaged group, and ``sent_more`` is the same sentence about the contrasting
advantaged group (CrowS-Pairs: "The man was highly skilled in CAD engineering." is ``sent_more`` of
an antistereo pair whose ``sent_less`` is the woman's sentence). The metric counts a pair when the
model prefers ``sent_more``, whatever the direction, so this layout is what makes a preference
for ``sent_more`` a stereotypical one.

A generated sentence is about its tuple's identity X. Whether X counts as the targeted
(disadvantaged) side comes from the comparable-group mapping, and for a symmetric mapping from the
tuple's polarity (a negative stereotype marks X as the targeted group, a positive one as the
favoured group). The sentence's ``mode`` says whether it demonstrates the stereotype (``stereo``,
the default) or violates it (``anti``, ``curate sentences --mode anti``):

====================  ==============  ==============================  ===============================
X's side              polarity        mode ``stereo``                 mode ``anti``
====================  ==============  ==============================  ===============================
disadvantaged         any             generated = more -> stereo      swap = more -> antistereo
advantaged            any             generated = more -> antistereo  swap = more -> stereo
unmarked (symmetric)  negative        generated = more -> stereo      swap = more -> antistereo
unmarked (symmetric)  positive        generated = more -> antistereo  swap = more -> stereo
====================  ==============  ==============================  ===============================

(A sentence that violates X's stereotype is the *less* stereotypical of the two, so it is
``sent_less`` and its swap, the same sentence about the comparable group, is ``sent_more``.)
"""

from __future__ import annotations

import re
from collections.abc import Iterable
from dataclasses import dataclass, field
from pathlib import Path
from typing import TYPE_CHECKING, Any

from biaskit import languages as L
from biaskit.inventory import Inventory, Term, load_inventory
from biaskit.schema import SentencePair
from biaskit.textutil import match_case, norm_word, tokenize

if TYPE_CHECKING:
    from .pair_options import BuildPairsOptions

_AN_EXCEPTIONS_A = ("uni", "use", "usu", "one", "euro", "eu", "ewe", "u.s", "ur")
_AN_EXCEPTIONS_AN = ("hour", "honest", "honou", "heir", "obc", "sc/", "mba", "fbi", "nri")


class SwapError(Exception):
    """The sentence cannot be swapped (reason in the message)."""


@dataclass
class SwapResult:
    text: str
    source: Term
    target: Term
    side: str | None
    changes: list[tuple[str, str]] = field(default_factory=list)


def article_for(word: str) -> str:
    w = word.lower()
    if w.startswith(_AN_EXCEPTIONS_AN):
        return "an"
    if w.startswith(_AN_EXCEPTIONS_A):
        return "a"
    return "an" if w[:1] in "aeiou" else "a"


def _target_form(match_form: str, matched: str, target: Term, lang: str) -> str:
    forms = target.forms.get(lang) or target.forms.get("en") or {}
    if match_form in forms:
        return forms[match_form]
    if match_form == "variant":
        oblique = L.grammar(lang).oblique_plural if L.get(lang) is not None else None
        is_oblique = bool(oblique) and matched.endswith(oblique)  # type: ignore[arg-type]
        plural = (lang == "en" and re.search(r"(s|men|people|ren)$", matched.lower())) or is_oblique
        if plural:
            return forms.get("obl_pl" if is_oblique else "pl") or forms.get("pl") or forms["sg"]
    return forms.get("sg") or target.label(lang)


def _en_gender_word(word: str, to: str, next_word: str | None, inv: Inventory) -> str | None:
    w = norm_word(word)
    pair = inv.en_gender.get(w)
    if not pair:
        return None
    m, f = pair
    if to == "m" and w == "her":
        nxt = norm_word(next_word) if next_word else ""
        new = "his" if nxt and nxt[:1].isalpha() and nxt not in _NOT_NOUN_START else "him"
    elif to == "m":
        if w != f:
            return None
        new = m
    else:
        if w != m:
            return None
        new = f
    return match_case(word, new)


_NOT_NOUN_START = set(
    """to and or but the a an that this in on at for with from by of as than then because if when
so up out down off over into about after before while is was are were be been""".split()
)


def _agreement_word(
    word: str, to: str, next_word: str | None, inv: Inventory, lang: str, plural: bool = False
) -> str | None:
    """The word agreeing with the other gender in a language other than English, by its data
    (``data/languages/<code>``: the listed gendered words, ``grammar.swap_other_nouns``,
    ``grammar.plural_masculine``, ``grammar.participles``); None: leave it."""
    g = L.grammar(lang)
    words = inv.gender_words(lang)
    if not g.swap_other_nouns and word in inv.gendered_nouns(lang):
        return None  # other people's gendered nouns (Hindi माँ, पति ...) are left alone
    pm = g.plural_masculine
    if (
        pm is not None
        and plural
        and to == "m"
        and word.endswith(pm.feminine)
        and word[: -len(pm.feminine)] + pm.masculine in words
    ):
        return word[: -len(pm.feminine)] + pm.plural  # महिलाएं ... रहती -> पुरुष ... रहते
    pair = words.get(word)
    if pair:
        m, f = pair
        if to == "f" and word == m:
            return f
        if to == "m" and word == f:
            return m
        return None
    pp = g.participles
    if pp is not None and next_word in pp.before:
        # a participle before an auxiliary agrees with the subject (करता है -> करती है)
        if to == "f":
            for end, fem in pp.feminine.items():
                if word.endswith(end) and len(word) > len(end):
                    return word[: -len(end)] + fem
        else:
            for end, (sg, pl) in pp.masculine.items():
                if word.endswith(end) and len(word) > len(end):
                    return word[: -len(end)] + (pl if plural else sg)
    return None


def swap_sentence(
    sentence: str,
    identity: str,
    *,
    lang: str = "en",
    inventory: Inventory | None = None,
    target: str | None = None,
) -> SwapResult:
    """Swap every mention of ``identity`` in ``sentence`` for its comparable group (or ``target``)."""
    inv = inventory or load_inventory()
    term = inv.lookup(identity, lang) or inv.lookup(identity, "en")
    if term is None:
        raise SwapError(f"identity '{identity}' is not in the inventory")
    tgt, side = _swap_target(term, identity, target, lang, inv)
    tokens = tokenize(sentence)
    matches = _mentions(tokens, term, tgt, lang, inv)
    if not matches:
        raise SwapError(f"identity '{identity}' not found in the sentence")
    edits, changes, covered = _mention_edits(sentence, tokens, matches, lang)
    if term.gender and tgt.gender and term.gender != tgt.gender:
        plural = _is_plural(matches, lang)
        more_edits, more_changes = _agreement_edits(tokens, covered, tgt.gender, inv, lang, plural)
        edits += more_edits
        changes += more_changes
    out = sentence
    for s, e, new in sorted(edits, key=lambda x: x[0], reverse=True):
        out = out[:s] + new + out[e:]
    return SwapResult(out, term, tgt, side, changes)


def _swap_target(term: Term, identity: str, target: str | None, lang: str, inv: Inventory) -> tuple[Term, str | None]:
    """The group to swap ``term`` for (``target``, else its comparable group) and the side of the
    comparison ``term`` is on (None for a given ``target``)."""
    side: str | None
    if target:
        tgt = inv.lookup(target, lang) or inv.lookup(target, "en")
        if tgt is None:
            raise SwapError(f"target group '{target}' is not in the inventory")
        side = None
    else:
        comp = inv.comparable_of(term)
        if comp is None:
            raise SwapError(f"no comparable group for '{identity}' (add a mapping to comparable_groups.json)")
        tgt, side = comp
    if not (tgt.forms.get(lang) or {}).get("sg"):
        raise SwapError(f"comparable group '{tgt.id}' has no {lang} form in the inventory")
    return tgt, side


def _mentions(tokens: list, term: Term, tgt: Term, lang: str, inv: Inventory) -> list[tuple[Any, Term]]:
    """Each mention of ``term`` with the term it becomes: ``tgt``, or for the identity inside an
    intersectional mention ("old" in "an old man") the intersectional term with that component swapped."""
    found = inv.find(tokens, lang)
    matches = [(m, tgt) for m in found if m.term.id == term.id]
    if matches or term.components:
        return matches
    for m in found:
        comps = m.term.components
        ax = next((a for a, c in comps.items() if c == term.id), None)
        if ax:
            want = {**comps, ax: tgt.id}
            inter = next((t for t in inv.terms.values() if t.components == want), None)
            if inter is not None and (inter.forms.get(lang) or {}).get("sg"):
                matches.append((m, inter))
    return matches


def _mention_edits(
    sentence: str, tokens: list, matches: list[tuple[Any, Term]], lang: str
) -> tuple[list[tuple[int, int, str]], list[tuple[str, str]], set[int]]:
    """The edits replacing each mention by its new term's form (casing and a possessive kept; English
    "a"/"an" before it agreeing): (edits as (start, end, text), changes as (old, new), tokens covered)."""
    edits: list[tuple[int, int, str]] = []
    changes: list[tuple[str, str]] = []
    covered: set[int] = set()
    for m, m_tgt in matches:
        first, last = tokens[m.start], tokens[m.end - 1]
        old = sentence[first.start : last.end]
        new = _target_form(m.form, old, m_tgt, lang)
        if lang == "en":
            src_forms = set((m.term.forms.get("en") or {}).values()) | set(m.term.variants.get("en") or [])
            if re.sub(r"['’]s$", "", old) in src_forms:  # written as in the inventory: keep the target's own casing
                if old[:1].isupper() and (m.start == 0 or tokens[m.start - 1].text in ".!?"):
                    new = new[:1].upper() + new[1:]
            else:
                new = match_case(first.text, new)
        poss = re.search(r"['’]s$", last.text)
        if poss:
            new += poss.group()
        edits.append((first.start, last.end, new))
        changes.append((old, new))
        covered.update(range(m.start, m.end))
        if lang == "en" and m.start > 0 and norm_word(tokens[m.start - 1].text) in ("a", "an"):
            art = tokens[m.start - 1]
            article = match_case(art.text, article_for(new))
            if article != art.text:
                edits.append((art.start, art.end, article))
                changes.append((art.text, article))
                covered.add(m.start - 1)
    return edits, changes, covered


def _is_plural(matches: list[tuple[Any, Term]], lang: str) -> bool:
    """Whether a mention is plural (agreement in languages whose words agree in number)."""
    return any(
        m.form in ("pl", "obl_pl")
        or (
            m.form == "variant"
            and _target_form("variant", m.text, m_tgt, lang) != (m_tgt.forms.get(lang) or {}).get("sg")
        )
        for m, m_tgt in matches
    )


def _agreement_edits(
    tokens: list, covered: set[int], to: str, inv: Inventory, lang: str, plural: bool
) -> tuple[list[tuple[int, int, str]], list[tuple[str, str]]]:
    """The other words that change with the gender (``to``): English pronouns and gendered words,
    another language's agreeing words (:func:`_agreement_word`)."""
    edits: list[tuple[int, int, str]] = []
    changes: list[tuple[str, str]] = []
    words_idx = [i for i, t in enumerate(tokens) if not t.is_punct]
    for k, i in enumerate(words_idx):
        if i in covered:
            continue
        tok = tokens[i]
        nxt = tokens[words_idx[k + 1]].text if k + 1 < len(words_idx) and words_idx[k + 1] == i + 1 else None
        if lang == "en":
            word = _en_gender_word(tok.text, to, nxt, inv)
        else:
            word = _agreement_word(tok.text, to, nxt, inv, lang, plural)
        if word and word != tok.text:
            edits.append((tok.start, tok.end, word))
            changes.append((tok.text, word))
    return edits, changes


MODES = ("stereo", "anti")


def direction_for(side: str | None, polarity: str | None, mode: str = "stereo") -> tuple[str, str]:
    """(direction, basis) per the table in the module docstring; the generated sentence is
    ``sent_more`` in mode ``stereo`` and ``sent_less`` in mode ``anti``."""
    if mode not in MODES:
        raise SwapError(f"unknown sentence mode '{mode}' (use stereo or anti)")
    if side == "disadvantaged":
        targeted, basis = True, "identity is the disadvantaged group"
    elif side == "advantaged":
        targeted, basis = False, "identity is the advantaged group"
    elif (polarity or "negative") == "negative":
        targeted, basis = True, "symmetric groups, negative attribute"
    else:
        targeted, basis = False, "symmetric groups, positive attribute"
    if mode == "anti":
        basis += "; the sentence violates the stereotype (sent_less)"
    return ("stereo" if targeted == (mode == "stereo") else "antistereo"), basis


def _rewrite_item(row: dict[str, Any], inv: Inventory) -> dict[str, Any] | None:
    """The ``pair_rewrite`` job for a row whose identity span the rule-based swap cannot find
    (None when the row cannot be rewritten either: unknown identity, no comparable group)."""
    text = str(row.get("sentence") or "").strip()
    identity = str(row.get("identity") or "").strip()
    lang = str(row.get("lang") or "en")
    src = inv.lookup(identity, lang) or inv.lookup(identity, "en")
    comp = inv.comparable_of(src) if src else None
    if comp is None:
        return None
    return {
        "sentence": text,
        "source_group": identity,
        "target_group": comp[0].label(lang),
        "sentence_id": row.get("sentence_id"),
    }


def build_pair(
    row: dict[str, Any], *, inventory: Inventory | None = None, rewrite: dict[str, Any] | None = None
) -> SentencePair:
    """One sentence row (from ``curate sentences``) -> a SentencePair, or :class:`SwapError`.

    ``rewrite``: a row of the ``pair_rewrite`` task (``{"rewrite", "provenance"}``) to use as the
    swapped sentence when the rule-based swap cannot find the identity span."""
    inv = inventory or load_inventory()
    text = str(row.get("sentence") or "").strip()
    identity = str(row.get("identity") or "").strip()
    lang = str(row.get("lang") or "en")
    if not text or not identity:
        raise SwapError("row needs 'sentence' and 'identity'")
    method = "rule"
    extra_prov: dict[str, Any] = {}
    try:
        res = swap_sentence(text, identity, lang=lang, inventory=inv)
        less, src, tgt, side, changes = res.text, res.source, res.target, res.side, res.changes
    except SwapError as exc:
        if rewrite is None or "not found in the sentence" not in str(exc):
            raise
        term = inv.lookup(identity, lang) or inv.lookup(identity, "en")
        # swap_sentence says "not found in the sentence" only after it found the identity and its comparable group
        assert term is not None
        comp = inv.comparable_of(term)
        assert comp is not None
        src, (tgt, side) = term, comp
        less, changes, method = rewrite["rewrite"], [], "llm"
        extra_prov = {"rewrite": rewrite.get("provenance") or {}}
    if less.strip() == text.strip():
        raise SwapError("the swap left the sentence unchanged")
    mode = str(row.get("mode") or "stereo")
    direction, basis = direction_for(side, row.get("polarity"), mode)
    prov = {
        "source": "biaskit-curate",
        "sentence_id": row.get("sentence_id"),
        "tuple_id": row.get("tuple_id"),
        "generation": row.get("provenance") or {},
        **extra_prov,
    }
    meta = {
        "attribute": row.get("attribute"),
        "polarity": row.get("polarity"),
        "mode": mode,
        "swap_method": method,
        "swaps": [list(c) for c in changes],
        "direction_basis": basis,
    }
    (more, g_more), (less_, g_less) = (text, src), (less, tgt)
    if mode == "anti":  # the generated sentence violates the stereotype: the less stereotypical one
        (more, g_more), (less_, g_less) = (less_, g_less), (more, g_more)
    return SentencePair(
        sent_more=more,
        sent_less=less_,
        direction=direction,
        bias_type=row.get("axis") or src.axis,
        lang=lang,
        group_more=g_more.label(lang),
        group_less=g_less.label(lang),
        provenance=prov,
        meta=meta,
        source_id=row.get("sentence_id"),
    )


def build_pairs(
    rows: Iterable[tuple[int, dict]],
    *,
    inventory: Inventory | None = None,
    llm: Any = None,
    prompt: Any = None,
    llm_params: dict | None = None,
    check: bool = True,
    rewrites_out: str | Path | None = None,
    concurrency: int = 1,
    retry_failed: bool = False,
    progress: bool = False,
    command: str | None = None,
) -> tuple[list[SentencePair], list[dict]]:
    """Pairs for every usable sentence row, plus rejects ``{row, reason, ...}``. With ``check``,
    each pair's checker flags go to ``meta.flags`` and flagged pairs get status ``flagged``.

    With ``llm``, rows whose identity span is not found are rewritten by the ``pair_rewrite`` task
    (``prompt``: its template) through the job runner: ``rewrites_out`` keeps the rewrites
    (resumable, with ``.errors.jsonl`` and ``.runlog.jsonl`` beside it)."""
    inv = inventory or load_inventory()
    built = [(i, row, _rule_pair(row, inv, rewrite=llm is not None)) for i, row in rows]
    if any(isinstance(b[2], dict) for b in built):
        from .runner import JobRunner
        from .tasks.pair_rewrite import PairRewriteTask

        runner = JobRunner(
            llm,
            PairRewriteTask(prompt),
            params=llm_params,
            out=rewrites_out,
            concurrency=concurrency,
            retry_failed=retry_failed,
            progress=progress,
            command=command,
        )
        _rewrite_pairs(built, runner, inv)
    return _pairs_and_rejects(built, inv, check)


def _rule_pair(row: dict, inv: Inventory, *, rewrite: bool) -> Any:
    """The row's pair by the rule-based swap, else its :class:`SwapError`, or (``rewrite``) the
    ``pair_rewrite`` job for a row whose identity span the swap cannot find."""
    status = row.get("status") or "raw"
    if status in ("rejected", "parse_error", "request_error"):
        return SwapError(f"sentence status is {status}")
    try:
        return build_pair(row, inventory=inv)
    except SwapError as exc:
        item = _rewrite_item(row, inv) if rewrite and "not found in the sentence" in str(exc) else None
        return item if item is not None else exc


def _rewrite_pairs(built: list[tuple[int, dict, Any]], runner: Any, inv: Inventory) -> None:
    """Replace each rewrite job of ``built`` by the pair built from the LLM's rewrite (or its error)."""
    todo = [(n, b[2]) for n, b in enumerate(built) if isinstance(b[2], dict)]
    with runner:
        outcomes = runner.run_batch([item for _, item in todo])
    for (n, _), oc in zip(todo, outcomes, strict=False):
        i, row, _ = built[n]
        try:
            if not oc.ok:
                raise SwapError(f"identity not found and the LLM rewrite failed ({oc.output.error})")
            built[n] = (i, row, build_pair(row, inventory=inv, rewrite=oc.output.rows[0]))
        except SwapError as exc:
            built[n] = (i, row, exc)


def _pairs_and_rejects(
    built: list[tuple[int, dict, Any]], inv: Inventory, check: bool
) -> tuple[list[SentencePair], list[dict]]:
    """The pairs (a duplicate dropped; with ``check``, the checker's flags) and the rejected rows."""
    from biaskit.check import check_pair

    pairs: list[SentencePair] = []
    rejects: list[dict] = []
    seen: set[str] = set()
    for i, row, pair in built:
        if isinstance(pair, SwapError):
            rej = {"row": i, "sentence_id": row.get("sentence_id"), "reason": str(pair)}
            if not str(pair).startswith("sentence status"):
                rej = {
                    "row": i,
                    "sentence_id": row.get("sentence_id"),
                    "sentence": row.get("sentence"),
                    "identity": row.get("identity"),
                    "reason": str(pair),
                }
            rejects.append(rej)
            continue
        if pair.pair_id in seen:
            rejects.append({"row": i, "sentence_id": row.get("sentence_id"), "reason": "duplicate pair"})
            continue
        seen.add(pair.pair_id)
        if check:
            flags = check_pair(pair, inventory=inv)
            pair.meta["flags"] = [f.as_dict() for f in flags]
            if flags:
                pair.status = "flagged"
        pairs.append(pair)
    return pairs, rejects


@dataclass
class PairsFileResult:
    """What :func:`build_pairs_file` wrote: the pairs, the sentences it could not use, and the files."""

    pairs: list[SentencePair]
    rejects: list[dict]
    out: Path
    rejects_file: Path | None = None
    rewrites_file: Path | None = None

    @property
    def flagged(self) -> int:
        return sum(1 for p in self.pairs if p.status == "flagged")


def build_pairs_file(
    o: BuildPairsOptions,
    *,
    inventory: Inventory | None = None,
    llm: Any = None,
    prompt: Any = None,
    llm_params: dict | None = None,
    concurrency: int = 1,
    retry_failed: bool = False,
    progress: bool = True,
    command: str | None = None,
) -> PairsFileResult:
    """``biaskit curate pairs``: the sentences file -> the pairs file ``out`` (.jsonl or .csv), the
    unusable sentences to ``<out>.errors.jsonl`` (``<out stem>.rejects.jsonl`` beside a CSV), and with
    ``llm`` the rewrites of the ``pair_rewrite`` task to ``<out stem>.rewrites.jsonl``. ``o``: the
    command's :class:`~biaskit.curation.pair_options.BuildPairsOptions`; ``inventory``: a loaded inventory
    (default: ``o.inventory``'s);
    ``llm``, ``prompt``, ``llm_params``, ``concurrency``, ``retry_failed``: the LLM fallback's client and
    settings (the LLM option block)."""
    from biaskit.io import write_jsonl
    from biaskit.readers import read_sentence_rows, write_pairs

    from .runner import errors_path

    sentences = o.sentences
    if inventory is None and o.inventory is not None:
        inventory = load_inventory(o.inventory)
    out = Path(o.out)
    rewrites = out.with_name(out.stem + ".rewrites.jsonl")
    pairs, rejects = build_pairs(
        read_sentence_rows(sentences),
        inventory=inventory,
        llm=llm,
        prompt=prompt,
        llm_params=llm_params,
        rewrites_out=rewrites,
        concurrency=concurrency,
        retry_failed=retry_failed,
        progress=progress,
        command=command,
    )
    write_pairs(out, pairs)
    rej = errors_path(out) if out.suffix == ".jsonl" else out.with_suffix(".rejects.jsonl")
    if rejects:
        write_jsonl(rej, rejects)
    elif rej.exists():
        rej.unlink()  # from an earlier run: every sentence is usable now
    return PairsFileResult(
        pairs, rejects, out, rej if rejects else None, rewrites if llm is not None and rewrites.exists() else None
    )
