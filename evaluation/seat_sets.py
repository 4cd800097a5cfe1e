"""The SEAT test sets biaskit ships (``data/seat``), built from their lexicons.

Two IndiBias intersectional sets, both in English and Hindi:

``indibias-paper``
    the tests IndiBias reports (Sahoo et al. 2024, Tables 3, 4 and 9), one per table row, from the
    paper's own resources (Appendix G: first names, non-violent/violent terms, caste terms) and the
    Caliskan et al. (2017) lists it uses (career/family, pleasant/unpleasant, male/female terms).
    Source: ``data/seat/indibias-paper/lexicon.json``. Shipped as **bleached sentences**, as the paper
    evaluates them (Appendix B, following May et al. 2019): every word is put into May et al.'s
    semantically bleached templates for its part of speech (:data:`MAY_TEMPLATES`); the Hindi files
    hold the Hindi rendering of the same sentences (:data:`HINDI_TEMPLATES`, aligned one to one with
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
LANGS = ("en", "hi")

# May et al. (2019)'s bleached templates, by part of speech (as in their sentence versions of the
# Caliskan tests). {s}/{p}: singular/plural form; {a}: "a"/"an"; a capital letter: capitalised form.
MAY_TEMPLATES: dict[str, list[str]] = {
    "name": [
        "This is {S}.",
        "That is {S}.",
        "There is {S}.",
        "Here is {S}.",
        "{S} is here.",
        "{S} is there.",
        "{S} is a person.",
        "The person's name is {S}.",
    ],
    "person": [
        "This is {a} {s}.",
        "That is {a} {s}.",
        "There is {a} {s}.",
        "Here is {a} {s}.",
        "The {s} is here.",
        "The {s} is there.",
        "{A} {s} is a person.",
        "These are {p}.",
        "Those are {p}.",
        "They are {p}.",
        "The {p} are here.",
        "The {p} are there.",
        "{P} are people.",
    ],
    "count": [
        "This is {a} {s}.",
        "That is {a} {s}.",
        "There is {a} {s}.",
        "Here is {a} {s}.",
        "The {s} is here.",
        "The {s} is there.",
        "{A} {s} is a thing.",
        "It is {a} {s}.",
        "These are {p}.",
        "Those are {p}.",
        "They are {p}.",
        "The {p} are here.",
        "The {p} are there.",
        "{P} are things.",
    ],
    "mass": ["This is {s}.", "That is {s}.", "There is {s}.", "It is {s}."],
    "adj": ["This is {s}.", "That is {s}.", "They are {s}."],
    "verb": [
        "This will {s}.",
        "This did {s}.",
        "This can {s}.",
        "This may {s}.",
        "That will {s}.",
        "That did {s}.",
        "That can {s}.",
        "That may {s}.",
    ],
}
# The same templates in Hindi (the biaskit team's rendering; position i translates MAY_TEMPLATES[kind][i]).
# Verbs use the entry's ``hi_verb`` forms: future, past (ergative subject), "can", "may".
HINDI_TEMPLATES: dict[str, list[str]] = {
    "name": [
        "यह {s} है।",
        "वह {s} है।",
        "वहाँ {s} है।",
        "यहाँ {s} है।",
        "{s} यहाँ है।",
        "{s} वहाँ है।",
        "{s} एक व्यक्ति है।",
        "इस व्यक्ति का नाम {s} है।",
    ],
    "person": [
        "यह एक {s} है।",
        "वह एक {s} है।",
        "वहाँ एक {s} है।",
        "यहाँ एक {s} है।",
        "{s} यहाँ है।",
        "{s} वहाँ है।",
        "{s} एक इंसान है।",
        "ये {p} हैं।",
        "वे {p} हैं।",
        "वे {p} हैं।",
        "{p} यहाँ हैं।",
        "{p} वहाँ हैं।",
        "{p} इंसान हैं।",
    ],
    "count": [
        "यह एक {s} है।",
        "वह एक {s} है।",
        "वहाँ एक {s} है।",
        "यहाँ एक {s} है।",
        "{s} यहाँ है।",
        "{s} वहाँ है।",
        "{s} एक चीज़ है।",
        "यह एक {s} है।",
        "ये {p} हैं।",
        "वे {p} हैं।",
        "वे {p} हैं।",
        "{p} यहाँ हैं।",
        "{p} वहाँ हैं।",
        "{p} चीज़ें हैं।",
    ],
    "mass": ["यह {s} है।", "वह {s} है।", "वहाँ {s} है।", "यह {s} है।"],
    "adj": ["यह {s} है।", "वह {s} है।", "वे {p} हैं।"],
    "verb": [
        "यह {fut}।",
        "इसने {past}।",
        "यह {can}।",
        "यह {may}।",
        "वह {fut}।",
        "उसने {past}।",
        "वह {can}।",
        "वह {may}।",
    ],
}
WORD_KINDS = tuple(MAY_TEMPLATES)


def _nfc(s: str) -> str:
    return unicodedata.normalize("NFC", s)


def _cap(s: str) -> str:
    return s[:1].upper() + s[1:]


def _article(entry: dict, form: str) -> str:
    return entry.get("article") or ("an" if form[:1].lower() in "aeiou" else "a")


def bleach_word(entry: dict, kind: str, lang: str) -> list[str]:
    """Every bleached sentence of one lexicon entry (``{"en", "hi", "kind", "pl", "hi_pl", ...}``)."""
    if lang == "en":
        s = entry.get("sg") or entry["en"]
        p = entry.get("pl") or s
        a = _article(entry, s)
        return [t.format(s=s, p=p, S=_cap(s), P=_cap(p), a=a, A=_cap(a)) for t in MAY_TEMPLATES[kind]]
    if lang == "hi":
        if kind == "verb":
            return [_nfc(t.format(**entry["hi_verb"])) for t in HINDI_TEMPLATES[kind]]
        s = entry["hi"]
        p = entry.get("hi_pl") or s
        return [_nfc(t.format(s=s, p=p)) for t in HINDI_TEMPLATES[kind]]
    raise ValueError(f"no bleached templates for language {lang!r}")


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
    """A modifier (caste or age word) + a gendered noun: "dalit boy" / "दलित लड़का"; Hindi modifiers
    agree with the noun's gender and number (``hi_f``, ``hi_pl``, ``hi_f_pl``; "बूढ़ा/बूढ़ी/बूढ़े")."""
    fem = noun.get("gender") == "f"
    hi_sg = mod.get("hi_f" if fem else "hi") or mod["hi"]
    hi_pl = mod.get("hi_f_pl" if fem else "hi_pl") or hi_sg
    return {
        "en": f"{mod['en']} {noun['en']}",
        "pl": f"{mod['en']} {noun.get('pl') or noun['en']}",
        "hi": _nfc(f"{hi_sg} {noun['hi']}"),
        "hi_pl": _nfc(f"{hi_pl} {noun.get('hi_pl') or noun['hi']}"),
        "kind": "person",
        "gender": noun.get("gender"),
    }


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
    return json.loads((Path(data_dir) / which / "lexicon.json").read_text(encoding="utf-8"))


def paper_tests(lex: dict) -> dict[str, tuple[dict, dict]]:
    """``{relative path: (sent-bias test document, index entry)}`` for every table row, en + hi."""
    out = {}
    for t in lex["tests"]:
        for lg in LANGS:
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
                + ("; Hindi: the biaskit team's rendering" if lg == "hi" else ""),
                # whose sentences these are when not the paper's (the NLLB translations were not published)
                **({"rendering": "biaskit's"} if lg == "hi" else {}),
            }
            out[f"{PAPER}/{lg}/{t['id']}.jsonl"] = (doc, entry)
    return out


def team_tests(lex: dict) -> dict[str, tuple[dict, dict]]:
    """The team's own tests (word lists, bleached when run), en + hi."""
    out = {}
    sets = lex["sets"]
    for t in lex["tests"]:
        for lg in LANGS:
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
