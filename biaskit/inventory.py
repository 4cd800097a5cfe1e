"""Identity-term inventories (``data/inventories``): lookup, comparable groups, names, gendered words.

``load_inventory()`` reads the packaged JSON files (or a curator's edited copy with ``path=DIR``)
and every language's forms (``data/languages/<code>/inventory.json``, :mod:`biaskit.languages`), and
builds surface-form indexes per language, so that the pair builder can find and swap
identity spans and the checker can tell whether a changed span names a group.
"""

from __future__ import annotations

import functools
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any

from biaskit.errors import InputError
from biaskit.schema import normalize_bias_type

from .textutil import Token, norm_word, strip_possessive, tokenize

SIDES = ("disadvantaged", "advantaged", "neutral")


@dataclass
class Term:
    id: str
    axis: str
    forms: dict[str, dict[str, str]]  # lang -> {form name: surface}
    variants: dict[str, list[str]] = field(default_factory=dict)
    side: str = "neutral"
    gender: str | None = None  # "m" / "f" when the term itself is gendered
    components: dict[str, str] = field(default_factory=dict)  # intersectional: axis -> term id
    kind: str | None = None  # "place": recognised in pairs, never offered as an identity

    def surface(self, lang: str, form: str = "sg") -> str | None:
        f = self.forms.get(lang) or {}
        return f.get(form) or f.get("sg")

    def label(self, lang: str = "en") -> str:
        return self.surface(lang) or self.surface("en") or self.id


@dataclass
class Match:
    start: int  # token index
    end: int  # token index (exclusive)
    term: Term
    form: str  # sg / pl / obl_pl / variant
    text: str


def _source() -> str:
    from biaskit import languages as L

    return L.source_code()


def inventory_dir() -> Path:
    from biaskit import data as _pkg

    return Path(_pkg.__file__).resolve().parent / "inventories"


def _read(path: Path) -> dict:
    from biaskit.io import read_json

    return read_json(path, missing_fix="copy data/inventories from biaskit and edit it, or drop --inventory.")


class Inventory:
    """The identity-term inventory: the terms' structure (``root``: axes, ids, sides, kinds, comparable
    and intersectional groups, English forms) and every language's forms, names and gendered words
    (``data/languages/<code>/``; an inventory folder's ``identity_terms.json`` may still write a
    language's forms inline under its code, as ``"hi": {"sg": ...}`` / ``"hi_variants"``: they win)."""

    def __init__(self, root: Path):
        from biaskit import languages as L

        self.root = root
        self.languages = L.codes()
        langs = {code: L.language(code) for code in self.languages}
        self.terms: dict[str, Term] = {}
        self._read_terms(_read(root / "identity_terms.json"), langs)
        self._read_groups(_read(root / "intersectional_groups.json"), langs)
        self.comparable = self._read_comparable(_read(root / "comparable_groups.json"))
        self._index: dict[str, dict[tuple[str, ...], tuple[str, str]]] = {lang: {} for lang in self.languages}
        for t in self.terms.values():
            for lang in self.languages:
                for form, surface in (t.forms.get(lang) or {}).items():
                    self._add(lang, surface, t.id, form)
                for v in t.variants.get(lang) or []:
                    self._add(lang, v, t.id, "variant")
        self._max_n = max((len(k) for idx in self._index.values() for k in idx), default=1)
        self._read_gendered(langs)
        self._read_names(langs)

    def _read_terms(self, ident: dict, langs: dict[str, Any]) -> None:
        """The terms of ``identity_terms.json``, each with its forms in every language (the language
        folder's, unless the entry writes them inline)."""
        path = self.root / "identity_terms.json"
        for axis, entries in (ident.get("axes") or {}).items():
            ax = normalize_bias_type(axis)
            for i, e in enumerate(entries):
                if "id" not in e or "en" not in e:
                    raise InputError(
                        f"axis '{axis}' entry {i + 1} needs 'id' and 'en'.",
                        path=path,
                        fix='e.g. {"id": "dalit", "en": {"sg": "Dalit", "pl": "Dalits"}, "side": "disadvantaged"}.',
                    )
                side = e.get("side", "neutral")
                if side not in SIDES:
                    raise InputError(
                        f"term '{e['id']}' has side '{side}'.", path=path, fix=f"use one of {', '.join(SIDES)}."
                    )
                forms: dict[str, dict[str, str]] = {}
                variants: dict[str, list[str]] = {}
                for lang in self.languages:
                    li = langs[lang].inventory
                    f = e[lang] if isinstance(e.get(lang), dict) else li.forms.get(e["id"])
                    if f:
                        forms[lang] = dict(f)
                    variants[lang] = list(e.get(f"{lang}_variants") or li.variants.get(e["id"]) or [])
                self.terms[e["id"]] = Term(e["id"], ax, forms, variants, side, e.get("gender"), kind=e.get("kind"))

    def _read_groups(self, inter: dict, langs: dict[str, Any]) -> None:
        """The intersectional groups (terms made of components, named in each language)."""
        for g in inter.get("groups") or []:
            comps = dict(g.get("components") or {})
            gender = self.terms[comps["gender"]].gender if comps.get("gender") in self.terms else None
            ax = "-".join(normalize_bias_type(a) for a in g.get("axes") or [])
            names = {lang: g.get(lang) or langs[lang].inventory.groups.get(g["id"]) for lang in self.languages}
            self.terms[g["id"]] = Term(
                g["id"],
                ax,
                {lang: {"sg": name} for lang, name in names.items() if name},
                {},
                "neutral",
                gender,
                comps,
            )

    def _read_comparable(self, comp: dict) -> dict[str, list[tuple[str, str]]]:
        """axis -> the pairs of comparable term ids (every id a term)."""
        out: dict[str, list[tuple[str, str]]] = {}
        for axis, pairs in (comp.get("axes") or {}).items():
            ax = normalize_bias_type(axis)
            for a, b in pairs:
                for x in (a, b):
                    if x not in self.terms:
                        raise InputError(
                            f"comparable pair [{a}, {b}] names unknown term id '{x}'.",
                            path=self.root / "comparable_groups.json",
                            fix="use ids from identity_terms.json.",
                        )
                out.setdefault(ax, []).append((a, b))
        return out

    def _read_gendered(self, langs: dict[str, Any]) -> None:
        """Gendered words per language: surface -> (masculine, feminine) for swaps; the words that name
        a person."""
        self._gender: dict[str, dict[str, tuple[str, str]]] = {}
        self._gender_identity: dict[str, set[str]] = {}
        for lang in self.languages:
            gw = langs[lang].inventory.gendered
            by_word: dict[str, tuple[str, str]] = {}
            for m, f in [*gw.identity, *gw.agreement]:
                by_word.setdefault(m, (m, f))
                by_word.setdefault(f, (m, f))
            self._gender[lang] = by_word
            self._gender_identity[lang] = {w for p in gw.identity for w in p}

    def _read_names(self, langs: dict[str, Any]) -> None:
        """First names: a language's names of origin "india" first (the default target's first), the
        names to replace ("us") last; the first entry of a spelling wins."""
        from biaskit import languages as L

        self.first_names: dict[str, dict[str, str]] = {}  # lower-case name -> {"origin", "gender", ...}
        self.names_by_lang: dict[str, dict[str, dict[str, list[dict[str, str]]]]] = {}
        self.us_names: dict[str, str] = {}  # a first name to replace (as written) -> gender
        named = [c for c in [L.default_target(), *self.languages] if langs[c].names is not None]
        for lang in dict.fromkeys(sorted(named, key=lambda c: langs[c].names.origin == "us")):
            ln = langs[lang].names
            assert ln is not None
            if ln.origin == "us":
                for g, lst in (ln.names.get("all") or {}).items():
                    for n in lst:
                        name = n if isinstance(n, str) else n["en"]
                        self.first_names.setdefault(norm_word(name), {"origin": ln.origin, "gender": g})
                        self.us_names.setdefault(name, g)
                continue
            entries = {
                rel: {g: [n if isinstance(n, dict) else {lang: n} for n in lst] for g, lst in by_g.items()}
                for rel, by_g in ln.names.items()
            }
            self.names_by_lang[lang] = entries
            for religion, by_g in entries.items():
                for g, lst in by_g.items():
                    for n in lst:
                        for key in ("en", lang):
                            if n.get(key):
                                self.first_names.setdefault(
                                    norm_word(n[key]), {"origin": ln.origin, "religion": religion, "gender": g}
                                )

    def gender_words(self, lang: str) -> dict[str, tuple[str, str]]:
        """``surface -> (masculine, feminine)`` of a language's gendered words (the source language's
        for a language without a folder)."""
        from biaskit import languages as L

        return self._gender.get(lang) or self._gender.get(L.source_code()) or {}

    @property
    def en_gender(self) -> dict[str, tuple[str, str]]:
        """The source language's gendered words (kept under its old name)."""
        from biaskit import languages as L

        return self._gender.get(L.source_code()) or {}

    @property
    def names(self) -> dict[str, dict[str, dict[str, list[dict[str, str]]]]]:
        """The default target language's first names by religion and gender (``{"en", code}`` each)."""
        from biaskit import languages as L

        return {"india": self.names_by_lang.get(L.default_target()) or {}}

    def _add(self, lang: str, surface: str, term_id: str, form: str) -> None:
        key = tuple(norm_word(strip_possessive(t.text)) for t in tokenize(surface) if not t.is_punct)
        if key:
            self._index[lang].setdefault(key, (term_id, form))

    # ------------------------------------------------------------------ lookups
    def axes(self) -> list[str]:
        return sorted({t.axis for t in self.terms.values() if not t.components})

    def identities(self, axis: str, lang: str = "en") -> list[str]:
        ax = normalize_bias_type(axis)
        out = [s for t in self.terms.values() if t.axis == ax and (s := t.surface(lang)) and t.kind != "place"]
        if not out:
            from .options import say

            raise InputError(
                f"no identity terms for axis '{axis}' in '{lang}' in the inventory.",
                fix=f"use one of {', '.join(self.axes())}, or give the groups ({say('identities')}).",
            )
        return out

    def find(self, tokens: list[Token], lang: str) -> list[Match]:
        """Longest non-overlapping inventory matches in ``tokens`` (possessive 's ignored)."""
        idx = self._index.get(lang) or {}
        keys = [norm_word(strip_possessive(t.text)) for t in tokens]
        out: list[Match] = []
        i = 0
        while i < len(tokens):
            hit = None
            if not tokens[i].is_punct:
                for n in range(min(self._max_n, len(tokens) - i), 0, -1):
                    k = tuple(keys[i : i + n])
                    if k in idx:
                        hit = (n, idx[k])
                        break
            if hit:
                n, (tid, form) = hit
                out.append(Match(i, i + n, self.terms[tid], form, " ".join(t.text for t in tokens[i : i + n])))
                i += n
            else:
                i += 1
        return out

    def lookup(self, phrase: str, lang: str = "en") -> Term | None:
        key = tuple(norm_word(strip_possessive(t.text)) for t in tokenize(phrase) if not t.is_punct)
        hit = (self._index.get(lang) or {}).get(key)
        src = _source()
        if hit is None and lang != src:
            hit = self._index[src].get(key)
        return self.terms[hit[0]] if hit else None

    def mentions(self, sentence: str, identity: str, lang: str = "en") -> bool:
        """Does ``sentence`` name the group ``identity``: one of the inventory forms of its term (or
        of an intersectional group built on it), or else the literal identity text?"""
        term = self.lookup(identity, lang) or self.lookup(identity, "en")
        if term is not None:
            for m in self.find(tokenize(sentence), lang):
                if m.term.id == term.id or term.id in m.term.components.values():
                    return True
        return norm_word(identity) in norm_word(sentence)

    def comparable_of(self, term: Term) -> tuple[Term, str | None] | None:
        """The comparable group for ``term`` and which side ``term`` is on in that mapping
        (``"disadvantaged"``, ``"advantaged"`` or ``None`` when the mapping is symmetric)."""
        if term.components:
            return self._comparable_intersectional(term)
        for a, b in self.comparable.get(term.axis, []):
            if term.id in (a, b):
                other = self.terms[b if term.id == a else a]
                ta, tb = self.terms[a], self.terms[b]
                marked = ta.side == "disadvantaged" and tb.side == "advantaged"
                if not marked:
                    return other, None
                return other, ("disadvantaged" if term.id == a else "advantaged")
        return None

    def _comparable_intersectional(self, term: Term) -> tuple[Term, str | None] | None:
        # swap the non-gender component (IndiBias compares e.g. Dalit women with Brahmin women)
        for ax, cid in term.components.items():
            if ax == "gender":
                continue
            comp = self.comparable_of(self.terms[cid])
            if not comp:
                continue
            other_c, side = comp
            want = {**term.components, ax: other_c.id}
            for t in self.terms.values():
                if t.components == want:
                    return t, side
        return None

    def is_identity_word(self, word: str, lang: str) -> bool:
        from biaskit import languages as L

        w = norm_word(strip_possessive(word))
        src = L.source_code()
        if (w,) in (self._index.get(lang) or {}) or (w,) in self._index[src]:
            return True
        if w in self.first_names:
            return True
        nouns = self._gender_identity.get(lang, self._gender_identity[src])
        # a script with letter case compares case-folded words; any other compares them as written
        return (w if L.grammar(lang).case else word) in nouns

    def gendered_nouns(self, lang: str) -> set[str]:
        """The gendered words of a language that name a person (man/woman; Hindi लड़का/लड़की)."""
        from biaskit import languages as L

        return self._gender_identity.get(lang) or self._gender_identity.get(L.source_code()) or set()

    def name_info(self, word: str) -> dict[str, str] | None:
        return self.first_names.get(norm_word(strip_possessive(word)))

    def indian_names(
        self, gender: str, religion: str | None = None, lang: str = "en", names_of: str | None = None
    ) -> list[str]:
        """The first names of a religion (all: None) and gender in the name lists of ``names_of``
        (default: the default target language), written as in ``lang`` (``en``: the Latin spelling)."""
        from biaskit import languages as L

        out = []
        for rel, by_g in (self.names_by_lang.get(names_of or L.default_target()) or {}).items():
            if religion and rel != religion:
                continue
            out += [n[lang] for n in by_g.get(gender, []) if n.get(lang)]
        return out


@functools.lru_cache(maxsize=8)
def _load(root: str) -> Inventory:
    return Inventory(Path(root))


def load_inventory(path: str | Path | None = None) -> Inventory:
    """The packaged inventory, or a curator's folder with the same file names."""
    root = Path(path) if path else inventory_dir()
    if not root.is_dir():
        raise InputError(
            "inventory folder not found.",
            path=root,
            fix="point --inventory at a folder like biaskit's data/inventories.",
        )
    return _load(str(root.resolve()))
