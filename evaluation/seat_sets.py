"""The SEAT test sets biaskit ships (``data/seat``), built from their lexicons.

Two IndiBias intersectional sets, in English and in every language whose folder renders their words
(``data/languages/<code>/seat.json``: Hindi):

``indibias-paper``
    the tests IndiBias reports (Sahoo et al. 2024, Tables 3, 4 and 9), one per table row, from the
    paper's own resources (Appendix G: first names, non-violent/violent terms, caste terms) and the
    Caliskan et al. (2017) lists it uses (career/family, pleasant/unpleasant, male/female terms).
    Source: ``data/seat/indibias-paper/lexicon.json``. Shipped as **bleached sentences**, as the paper
    evaluates them (Appendix B, following May et al. 2019): every word is put into May et al.'s
    semantically bleached templates for its part of speech (:func:`templates`); the Hindi files
    hold the Hindi rendering of the same sentences (Hindi's templates, aligned one to one with
    the English templates; sentences that come out identical in Hindi are kept once).
``indibias-team``
    the biaskit team's own 12 extra tests (written before the paper's lists were available; not in
    the paper). Source: ``data/seat/indibias-team/lexicon.json``; shipped as word lists that
    :func:`biaskit.evaluation.seat.prepare_sentences` bleaches when a test runs.

Both are written with :func:`write_shipped_tests` (maintainers only); ``tests/test_seat_data.py``
checks that the shipped files equal what the lexicons give.
"""

from __future__ import annotations

import json
import unicodedata
from pathlib import Path

from .seat import DATA_DIR, SETS

PAPER = "indibias-paper"
TEAM = "indibias-team"


def _seat(lang: str):
    """A language's SEAT data (``data/languages/<code>/seat.json``), or the refusal."""
    from biaskit import languages as L

    lg = L.get(lang)
    if lg is None or not lg.seat.templates:
        raise ValueError(f"no bleached templates for language {lang!r}")
    return lg.seat


def templates(lang: str) -> dict[str, list[str]]:
    """A language's bleached templates by part of speech (English: May et al. (2019)'s; another
    language: its rendering of them, position i translating the English template i). {s}/{p}:
    singular/plural form; {a}: "a"/"an"; a capital letter: the capitalised form; a verb's forms
    by name ({fut}, {past}, {can}, {may}: the entry's ``<code>_verb``)."""
    return _seat(lang).templates


def __getattr__(name: str):  # May et al.'s templates (the source language's) under their former names
    from biaskit import languages as L

    if name == "MAY_TEMPLATES":
        return templates(L.source_code())
    if name == "WORD_KINDS":
        return tuple(templates(L.source_code()))
    raise AttributeError(name)


def _nfc(s: str) -> str:
    return unicodedata.normalize("NFC", s)


def _cap(s: str) -> str:
    return s[:1].upper() + s[1:]


def _article(entry: dict, form: str) -> str:
    return entry.get("article") or ("an" if form[:1].lower() in "aeiou" else "a")


def bleach_word(entry: dict, kind: str, lang: str) -> list[str]:
    """Every bleached sentence of one lexicon entry (``{"en", "kind", "pl", "<code>", "<code>_pl",
    "<code>_verb", ...}``) in ``lang``'s templates (:func:`templates`)."""
    from biaskit import languages as L

    temps = templates(lang)[kind]
    if lang == L.source_code():
        s = entry.get("sg") or entry["en"]
        p = entry.get("pl") or s
        a = _article(entry, s)
        return [t.format(s=s, p=p, S=_cap(s), P=_cap(p), a=a, A=_cap(a)) for t in temps]
    if kind == "verb" and f"{lang}_verb" in entry:
        return [_nfc(t.format(**entry[f"{lang}_verb"])) for t in temps]
    s = entry[lang]
    p = entry.get(f"{lang}_pl") or s
    return [_nfc(t.format(s=s, p=p)) for t in temps]


def _entries(lex: dict, name: str) -> tuple[list[dict], str]:
    """The entries of a list or derived set, and its part of speech when it has one for all entries."""
    if name in lex["lists"]:
        lst = lex["lists"][name]
        return [dict(e, kind=e.get("kind") or lst.get("kind")) for e in lst["words"]], lst.get("kind", "")
    spec = lex["derived"][name]
    if "union" in spec:
        out: list[dict] = []
        for part in spec["union"]:
            out += _entries(lex, part)[0]
        return out, "union"
    mods, _ = _entries(lex, spec["compound"][0])
    nouns, _ = _entries(lex, spec["compound"][1])
    return [compound(m, n) for m in mods for n in nouns], "person"


def compound(mod: dict, noun: dict) -> dict:
    """A modifier (caste or age word) + a gendered noun: "dalit boy" / "दलित लड़का", in every language
    both have; a modifier may agree with the noun's gender and number (``<code>_f``, ``<code>_pl``,
    ``<code>_f_pl``; Hindi "बूढ़ा/बूढ़ी/बूढ़े")."""
    fem = noun.get("gender") == "f"
    out = {
        "en": f"{mod['en']} {noun['en']}",
        "pl": f"{mod['en']} {noun.get('pl') or noun['en']}",
    }
    for lg in [k for k in mod if _is_code(k) and k != "en" and k in noun]:
        sg = mod.get(f"{lg}_f" if fem else lg) or mod[lg]
        pl = mod.get(f"{lg}_f_pl" if fem else f"{lg}_pl") or sg
        out[lg] = _nfc(f"{sg} {noun[lg]}")
        out[f"{lg}_pl"] = _nfc(f"{pl} {noun.get(f'{lg}_pl') or noun[lg]}")
    return {**out, "kind": "person", "gender": noun.get("gender")}


def _is_code(key: str) -> bool:
    from biaskit import languages as L

    return L.get(key) is not None


def set_words(lex: dict, name: str, lang: str = "en") -> list[str]:
    """The words (terms) of a list or derived set in one language."""
    return [e[lang] for e in _entries(lex, name)[0]]


def set_sentences(lex: dict, name: str, lang: str) -> list[str]:
    """The bleached sentences of a list or derived set (word-major order, duplicates kept once)."""
    out: list[str] = []
    for e in _entries(lex, name)[0]:
        out += bleach_word(e, e["kind"], lang)
    return list(dict.fromkeys(out))


def load_lexicon(which: str = PAPER, data_dir: str | Path = DATA_DIR) -> dict:
    """A SEAT lexicon (``data/seat/<which>/lexicon.json``) with every language's forms of its words
    (``data/languages/<code>/seat.json``, ``lexicons.<which>``) merged in as ``<code>``,
    ``<code>_pl``, ``<code>_f``, ``<code>_f_pl``, ``<code>_verb`` (and a list's ``<code>_source``)."""
    lex = json.loads((Path(data_dir) / which / "lexicon.json").read_text(encoding="utf-8"))
    return with_renderings(lex, which)


_FORM_KEYS = {"sg": "", "pl": "_pl", "f": "_f", "f_pl": "_f_pl", "verb": "_verb"}


def with_renderings(lex: dict, which: str) -> dict:
    """``lex`` with the language folders' forms of its words merged in (see :func:`load_lexicon`)."""
    from biaskit import languages as L

    for code in L.codes():
        renders = L.language(code).seat.lexicons.get(which)
        if not renders:
            continue
        for name, r in renders.items():
            if "lists" in lex and name in lex["lists"]:
                lst = lex["lists"][name]
                if r.get("source"):
                    lst[f"{code}_source"] = r["source"]
                words = r.get("words") or {}
                for e in lst["words"]:
                    w = words.get(e["en"])
                    if w is None:
                        continue
                    for form, value in ({"sg": w} if isinstance(w, str) else w).items():
                        e[code + _FORM_KEYS[form]] = value
            elif "sets" in lex and name in lex["sets"]:
                lex["sets"][name][code] = list(r)
    return lex


def paper_tests(lex: dict) -> dict[str, tuple[dict, dict]]:
    """``{relative path: (sent-bias test document, index entry)}`` for every table row, in every
    language the paper reports it in (its ``paper_effect_sizes``)."""
    from biaskit import languages as L

    out = {}
    for t in lex["tests"]:
        for lg in [c for c in L.codes() if c in t["paper_effect_sizes"]]:
            doc = {k: {"category": t[k], "examples": set_sentences(lex, t[k], lg)} for k in SETS}
            entry = {
                "lang": lg,
                "axis": t["axis"],
                "family": PAPER,
                "table": t["table"],
                "row": t["row"],
                "label": t["label"],
                "bleached": True,
                "paper_effect_sizes": t["paper_effect_sizes"][lg],
                "source": f"Sahoo et al. (2024) IndiBias, Table {t['table']} row {t['row']}; "
                f"data/seat/{PAPER}/lexicon.json (see CARD.md)"
                + (f"; {L.name_of(lg)}: the biaskit team's rendering" if lg != L.source_code() else ""),
                # whose sentences these are when not the paper's (the NLLB translations were not published)
                **({"rendering": "biaskit's"} if lg != L.source_code() else {}),
            }
            out[f"{PAPER}/{lg}/{t['id']}.jsonl"] = (doc, entry)
    return out


def team_tests(lex: dict) -> dict[str, tuple[dict, dict]]:
    """The team's own tests (word lists, bleached when run), in every language with all four lists."""
    from biaskit import languages as L

    out = {}
    sets = lex["sets"]
    for t in lex["tests"]:
        for lg in [c for c in L.codes() if all(c in sets[t[k]] for k in SETS)]:
            doc = {k: {"category": t[k], "examples": list(sets[t[k]][lg])} for k in SETS}
            entry = {
                "lang": lg,
                "axis": t["axis"],
                "family": TEAM,
                "templates": {k: sets[t[k]]["template"] for k in SETS},
                "source": f"the biaskit team's own lists, not in the IndiBias paper: data/seat/{TEAM}/lexicon.json "
                "(see CARD.md)",
            }
            out[f"{TEAM}/{lg}/team-{t['id']}.jsonl"] = (doc, entry)
    return out


INDEX_SETS = {
    PAPER: "IndiBias intersectional SEAT tests as published (Sahoo et al. 2024, Tables 3, 4, 9), bleached sentences",
    TEAM: "the biaskit team's own extra IndiBias-style intersectional tests (word lists; not in the paper)",
}
# names that stand for several sets (``--test indibias`` or ``--test indibias/hi``)
INDEX_ALIASES = {"indibias": [PAPER, TEAM]}


def shipped_tests(data_dir: str | Path = DATA_DIR) -> dict[str, tuple[dict, dict]]:
    data_dir = Path(data_dir)
    built = paper_tests(load_lexicon(PAPER, data_dir))
    built.update(team_tests(load_lexicon(TEAM, data_dir)))
    return built


def build_index(built: dict[str, tuple[dict, dict]]) -> dict:
    return {
        "version": 2,
        "sets": INDEX_SETS,
        "aliases": INDEX_ALIASES,
        "tests": {rel: entry for rel, (_, entry) in built.items()},
    }


def write_shipped_tests(data_dir: str | Path = DATA_DIR) -> list[Path]:
    """(Re)generate every shipped test file and ``index.json`` from the lexicons (maintainers only)."""
    from biaskit.io import atomic_write_text

    data_dir = Path(data_dir)
    built = shipped_tests(data_dir)
    paths = []
    for rel, (doc, _) in built.items():
        paths.append(atomic_write_text(data_dir / rel, json.dumps(doc, ensure_ascii=False, indent=1) + "\n"))
    atomic_write_text(data_dir / "index.json", json.dumps(build_index(built), ensure_ascii=False, indent=1) + "\n")
    return paths
