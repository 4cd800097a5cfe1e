"""SEAT tests from a release's groups, in the IndiBias style (Sahoo et al. 2024, sec. 5 and Appendix B).

IndiBias measures the association of Indian groups with attribute concepts with SEAT (May et al.
2019): each group is put into *semantically bleached* sentences ("This is a Dalit person.",
"These are Dalit people."), and so are the attribute words ("This is freedom."); the effect size says
whether the first group's sentences sit closer to the first attribute's than the second group's do.
:func:`release_seat_tests` does this for the groups a release tests:

1. **The group pairs**: every pair record's ``group_more`` / ``group_less`` (a pair without them, such as
   an adapted CrowS-Pairs pair: the first changed span naming an inventory term on both sides, as the
   minimal-pair checker finds it) and every CAT's target
   (with its comparable group from ``data/inventories/comparable_groups.json``), looked up in the
   inventory; a pair of comparable groups is kept when at least ``min_records`` released records
   name it. ``X`` (``targ1``) is the historically disadvantaged side when the inventory marks one.
2. **The sentences**: each group's singular and plural forms in the shipped bleached templates of
   :mod:`biaskit.evaluation.seat_sets` for persons (May et al.'s, and the biaskit team's Hindi
   rendering of them). Gender terms and intersectional groups ("Dalit woman") are nouns; any other
   group is a modifier of "person" / "people" (Hindi व्यक्ति / लोग): "an old person", "बूढ़े लोग".
3. **The attributes**: the paper's lists (``data/seat/indibias-paper/lexicon.json``, Caliskan et
   al.'s and the paper's own), bleached the same way: Pleasant/Unpleasant for every axis (the
   paper's gender-caste and gender-age tests), also NonViolent/Violent for religion and
   Career/Family for gender (its gender-religion tests) -- or the pairs named in ``attributes``.

Tests are written as sent-bias JSON files, ``OUT/<lang>/release-<axis>-<x>-vs-<y>-<attr>.jsonl``,
with an ``index.json`` (language, axis, groups, records) that :func:`biaskit.evaluation.seat.read_seat_test`
reads (family ``indibias-release``: ``evaluate seat`` follows the ``indibias-seat`` protocol for them
by default); ``biaskit evaluate seat --test OUT/hi`` runs them. Unlike the paper's published tests
(``indibias-paper``: first names and gender-crossed terms), these use the group terms of the release
itself, so a new release gets its own tests; the published ones stay available by name.
"""

from __future__ import annotations

import json
import re
from collections import Counter
from collections.abc import Sequence
from pathlib import Path
from typing import TYPE_CHECKING, Any

from biaskit import languages as L
from biaskit.errors import InputError
from biaskit.options import say

from .seat_sets import PAPER, bleach_word, load_lexicon, set_sentences

if TYPE_CHECKING:
    from .options import SeatTestsOptions

#: attribute pairs of the paper's lexicon by axis (IndiBias Tables 3, 4 and 9)
DEFAULT_ATTRIBUTES = {
    "religion": ["Pleasant/Unpleasant", "NonViolent/Violent"],
    "gender": ["Pleasant/Unpleasant", "Career/Family"],
}
FALLBACK_ATTRIBUTES = ["Pleasant/Unpleasant"]


def person_words(lang: str) -> tuple[str, str] | None:
    """A language's words for "person" / "people" (``data/languages/<code>/seat.json``: ``person``)."""
    from biaskit import languages as L

    lg = L.get(lang)
    return tuple(lg.seat.person) if lg is not None and lg.seat.person and lg.seat.templates else None  # type: ignore[return-value]


def default_seat_langs() -> tuple[str, ...]:
    """The languages SEAT tests are made in by default: the source and the default target language."""
    from biaskit import languages as L

    return (L.source_code(), L.default_target())


def _slug(text: str) -> str:
    return re.sub(r"[^a-z0-9]+", "-", text.lower()).strip("-") or "x"


def group_entry(term, inventory, langs: Sequence[str] | None = None) -> dict[str, str] | None:
    """The lexicon entry (``en``, ``pl``, and ``<code>``, ``<code>_pl`` for each other language of
    ``langs``; default: the source and the default target) of a group for the person templates."""
    langs = [lg for lg in (langs or default_seat_langs()) if lg != "en"]
    en = term.surface("en", "sg")
    if not en or term.kind == "place" or any(not term.surface(lg, "sg") for lg in langs):
        return None  # a place ("Bihar", "slum") is not a person: no person template fits it
    noun = term.axis == "gender" or "gender" in (term.components or {})
    g = inventory.terms.get((term.components or {}).get("gender", ""))
    en_pl = term.forms.get("en", {}).get("pl")
    if noun:
        if g is not None and not en_pl:  # intersectional: "Dalit woman" -> "Dalit women"
            en_pl = en.rsplit(" ", 1)[0] + " " + g.surface("en", "pl") if " " in en else g.surface("en", "pl")
        out = {"en": en, "pl": en_pl or en}
    else:
        person, people = person_words("en") or ("person", "people")
        out = {"en": f"{en} {person}", "pl": en_pl if (en_pl or "").endswith(" people") else f"{en} {people}"}
    for lg in langs:
        sg = term.surface(lg, "sg")
        pl = term.forms.get(lg, {}).get("pl")
        if noun:
            if g is not None and not pl:
                pl = sg.rsplit(" ", 1)[0] + " " + g.surface(lg, "pl") if " " in sg else g.surface(lg, "pl")
            out[lg], out[f"{lg}_pl"] = sg, pl or sg
        else:
            words = person_words(lg)
            if words is None:
                return None
            modifier = (pl or sg) if L.language(lg).seat.plural_modifier == "pl" else sg
            out[lg], out[f"{lg}_pl"] = f"{sg} {words[0]}", f"{modifier} {words[1]}"
    return out


def _diff_groups(view: dict, lang: str, inventory, pair_of):
    """The groups of a pair that does not name them (adapted CrowS-Pairs): the first changed span the
    minimal-pair checker finds to name an inventory term on both sides, both of one axis."""
    from biaskit.check import word_diff

    more, less = str(view.get("sent_more") or ""), str(view.get("sent_less") or "")
    if not more or not less or more == less:
        return None
    for span in word_diff(more, less, lang, inventory).spans:
        if span.kind != "identity" or not span.more or not span.less:
            continue
        a, b = inventory.lookup(" ".join(span.more), lang), inventory.lookup(" ".join(span.less), lang)
        if a is not None and b is not None and a.axis == b.axis:
            return pair_of(a, b)
    return None


def _release_groups(release: Path, split: str | None, inventory) -> Counter:
    """``(axis, x id, y id) -> released records`` naming that pair of comparable groups."""
    from biaskit.io import iter_jsonl
    from biaskit.release import layout as L
    from biaskit.release.read import release_meta

    release_meta(release)
    found: Counter = Counter()

    def pair_of(a, b) -> tuple[str, str, str] | None:
        if a is None or b is None or a.id == b.id:
            return None
        comp = inventory.comparable_of(a)
        side = comp[1] if comp is not None and comp[0].id == b.id else None
        x, y = (b, a) if side == "advantaged" else (a, b)
        return x.axis, x.id, y.id

    pf, cf = release / L.RECORD_FILES["pairs"], release / L.RECORD_FILES["cats"]
    for _, rec in iter_jsonl(pf) if pf.exists() else []:
        if split and rec.get("split") != split:
            continue
        for lang, v in (rec.get("views") or {}).items():
            a = inventory.lookup(str(v.get("group_more") or ""), lang)
            b = inventory.lookup(str(v.get("group_less") or ""), lang)
            k = pair_of(a, b)
            if k is None and not (v.get("group_more") or v.get("group_less")):
                k = _diff_groups(v, lang, inventory, pair_of)
            if k is not None:
                found[k] += 1
                break
    for _, rec in iter_jsonl(cf) if cf.exists() else []:
        if split and (rec.get("meta") or {}).get("split") != split:
            continue
        if rec.get("source_id"):
            continue  # a translation of another released CAT: counted once, with its source
        a = inventory.lookup(str(rec.get("target") or ""), rec.get("lang") or "en")
        comp = inventory.comparable_of(a) if a is not None else None
        k = pair_of(a, comp[0]) if comp is not None else None
        if k is not None:
            found[k] += 1
    return found


def langs_problem(langs: Sequence[str]) -> InputError | None:
    """Why :func:`release_seat_tests` cannot write tests in ``langs`` (a language without bleached
    templates in its ``data/languages/<code>/seat.json``), or None; ``biaskit run`` asks it before any
    stage runs."""
    have = [lg for lg in L.seat_languages() if person_words(lg)]
    bad = [lg for lg in langs if lg not in have]
    if not bad:
        return None
    return InputError(
        f"no bleached templates for language(s) {', '.join(bad)}.",
        fix=f"use {' and '.join(have)} ({say('lang')}), or write data/languages/{bad[0]}/seat.json "
        "(docs/languages.md).",
    )


def attributes_problem(attributes: Sequence[str] | None) -> InputError | None:
    """Why ``attributes`` are not attribute pairs of the IndiBias lexicon, or None."""
    lists = load_lexicon(PAPER)["lists"]
    for a in attributes or []:
        parts = a.split("/")
        if len(parts) != 2 or any(p not in lists for p in parts):
            return InputError(
                f"unknown attribute pair '{a}'.",
                fix="use two lists of the IndiBias lexicon joined by "
                "'/': " + ", ".join(sorted(lists)) + ' (e.g. "Pleasant/Unpleasant").',
            )
    return None


def release_seat_tests(opts: SeatTestsOptions, *, inventory=None) -> dict[str, Any]:
    """Write the SEAT tests of the release ``opts.data``'s groups to ``opts.out`` (see the module
    docstring); returns ``{"tests": [relative paths], "groups": [{axis, targ1, targ2, records}],
    "langs", "why" (no test: why), "attributes"}``. The folder is written whole (a crash leaves the
    previous one). ``inventory``: the groups' inventory (default: the shipped one)."""
    from biaskit.inventory import load_inventory
    from biaskit.io import atomic_dir

    release, out = Path(opts.data), Path(opts.out)
    inv = inventory or load_inventory()
    lex = load_lexicon(PAPER)
    langs = list(opts.lang or default_seat_langs())
    for problem in (langs_problem(langs), attributes_problem(opts.attributes)):
        if problem is not None:
            raise problem
    wanted = list(opts.attributes) if opts.attributes else None
    groups = _release_groups(release, opts.split, inv)
    kept = sorted(((k, n) for k, n in groups.items() if n >= opts.min_records), key=lambda kn: (-kn[1], kn[0]))
    index: dict[str, Any] = {
        "version": 2,
        "sets": {"indibias-release": f"SEAT tests from the groups of {release.name}"},
        "tests": {},
    }
    group_rows, written = [], []
    with atomic_dir(out, owns=("index.json",)) as tmp:
        for (axis, xid, yid), n in kept:
            x, y = inv.terms[xid], inv.terms[yid]
            ex, ey = group_entry(x, inv, langs), group_entry(y, inv, langs)
            if ex is None or ey is None:
                continue
            group_rows.append({"axis": axis, "targ1": x.label("en"), "targ2": y.label("en"), "records": n})
            for attr in wanted or DEFAULT_ATTRIBUTES.get(axis, FALLBACK_ATTRIBUTES):
                for lg in langs:
                    rel = f"{lg}/{_test_name(axis, x, y, attr)}.jsonl"
                    (tmp / lg).mkdir(parents=True, exist_ok=True)
                    doc = _test_doc(x, y, ex, ey, attr, lg, lex)
                    (tmp / rel).write_text(json.dumps(doc, ensure_ascii=False, indent=1) + "\n", encoding="utf-8")
                    index["tests"][rel] = _index_entry(release, lg, axis, x, y, n, attr)
                    written.append(rel)
        (tmp / "index.json").write_text(json.dumps(index, ensure_ascii=False, indent=1) + "\n", encoding="utf-8")
    return {
        "tests": written,
        "groups": group_rows,
        "langs": list(langs),
        "why": None if written else _why_none(groups, opts.min_records),
        "attributes": wanted or {"default": FALLBACK_ATTRIBUTES, **DEFAULT_ATTRIBUTES},
    }


def _test_name(axis: str, x, y, attr: str) -> str:
    a1, a2 = attr.split("/")
    return f"release-{_slug(axis)}-{_slug(x.label('en'))}-vs-{_slug(y.label('en'))}-{_slug(a1)}-{_slug(a2)}"


def _test_doc(x, y, ex: dict, ey: dict, attr: str, lg: str, lex: dict) -> dict:
    """One test in sent-bias's format: the two groups in the bleached person templates, the two
    attribute lists bleached the same way, in language ``lg``."""
    a1, a2 = attr.split("/")
    return {
        "targ1": {"category": x.label(lg), "examples": list(dict.fromkeys(bleach_word(ex, "person", lg)))},
        "targ2": {"category": y.label(lg), "examples": list(dict.fromkeys(bleach_word(ey, "person", lg)))},
        "attr1": {"category": a1, "examples": set_sentences(lex, a1, lg)},
        "attr2": {"category": a2, "examples": set_sentences(lex, a2, lg)},
    }


def _index_entry(release: Path, lg: str, axis: str, x, y, n: int, attr: str) -> dict:
    """A test's entry in index.json (what :func:`biaskit.evaluation.seat.read_seat_test` reads)."""
    return {
        "lang": lg,
        "axis": axis,
        "family": "indibias-release",
        "bleached": True,
        "groups": [x.id, y.id],
        "records": n,
        "attributes": attr,
        "source": f"{release.name}: groups of the release in the bleached person "
        "templates (biaskit.evaluation.seat_release); attributes from "
        f"data/seat/{PAPER}/lexicon.json",
    }


def _why_none(groups: Counter, min_records: int) -> str:
    if groups:
        return (
            f"{sum(groups.values())} records name a pair of comparable inventory groups, none in {min_records} or more"
        )
    return "no released record names a pair of comparable inventory groups"
