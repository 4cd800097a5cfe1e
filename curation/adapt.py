"""Adapt CrowS-Pairs to the Indian context (IndiBias sec. 3.3's recipe, rule-based).

1. Keep the bias types asked for (IndiBias kept gender, age, disability, physical appearance and
   socioeconomic status from CrowS-Pairs; race-color, nationality, religion and sexual orientation
   were rebuilt for India).
2. Replace US first names (``data/languages/en/names.json``) with Indian names of the same gender. IndiBias
   §4.2.1 replaced them "with the most common Indian male and female names" of its §5.1 lists: with
   ``names="indibias"`` (default) the first US name of a gender in a pair becomes the most common name
   of that gender in IndiBias Table 10, the second the second most common, and so on. The religion
   (Hindu or Muslim, Table 10's groups) is **held fixed within a pair**, drawn from ``--seed`` and the
   pair's source id, so a gender pair ("Mary ..." / "John ...") differs in gender only, never in a
   religion cue as well. ``indibias-hindu`` / ``indibias-muslim`` fix the religion for every pair; the
   ``india*`` sets draw at random from the name lists of the target language (``lang``; default: the
   default target language: ``data/languages/<code>/names.json``), again one religion per pair. The same
   US name gets the same Indian name in both sentences of a pair, different names get different names.
3. Apply the curator-editable substitution lexicon (``data/lexicons/us_to_india.csv``: whole words,
   longest entry first, case preserved; ``match=exact`` entries are case-sensitive).
4. Record every change in ``meta.changes`` (``meta.adapted`` true/false) and keep the original
   sentences in ``meta.original``; run the minimal-pair checker on the result (``meta.flags``,
   status ``flagged``), and with ``drop_flagged`` drop pairs that are not minimal (IndiBias dropped
   them after manual review).
"""

from __future__ import annotations

import csv
import random
import re
from collections.abc import Sequence
from dataclasses import dataclass, field
from pathlib import Path
from typing import TYPE_CHECKING, Any

from biaskit.check import _FUNCTION_WORDS
from biaskit.errors import InputError
from biaskit.inventory import Inventory, load_inventory
from biaskit.options import say, tell
from biaskit.schema import SentencePair, normalize_bias_type
from biaskit.textutil import tokenize

from .choices import DEFAULT_KEEP, NAME_SETS  # re-exported: callers import them from here

if TYPE_CHECKING:
    from .pair_options import AdaptOptions

# IndiBias Table 10 (ranked by frequency, most common first), kept once in the SEAT lexicon
RANKED_LISTS = {
    ("hindu", "m"): "HinduMaleNames",
    ("hindu", "f"): "HinduFemaleNames",
    ("muslim", "m"): "MuslimMaleNames",
    ("muslim", "f"): "MuslimFemaleNames",
}
NOT_MINIMAL = {"identical", "trivial_diff", "multi_span", "attribute_changed"}


def default_lexicon_path() -> Path:
    from biaskit import data as _pkg

    return Path(_pkg.__file__).resolve().parent / "lexicons" / "us_to_india.csv"


@dataclass
class LexEntry:
    source: str
    target: str
    exact: bool
    pattern: re.Pattern


def load_lexicon(path: str | Path | None = None) -> list[LexEntry]:
    """Read a ``source,target[,match,note]`` CSV; longest sources first."""
    p = Path(path) if path else default_lexicon_path()
    try:
        text = p.read_text(encoding="utf-8-sig")
    except FileNotFoundError:
        raise InputError(
            "lexicon file not found.", path=p, fix="pass a CSV with columns source,target[,match,note]."
        ) from None
    reader = csv.DictReader(text.splitlines())
    if not reader.fieldnames or not {"source", "target"} <= set(reader.fieldnames):
        raise InputError(
            f"lexicon needs the columns source,target (found: {', '.join(reader.fieldnames or [])}).",
            path=p,
            fix="add a header line: source,target,match,note",
        )
    out = []
    for i, row in enumerate(reader, start=1):
        src, tgt = (row.get("source") or "").strip(), (row.get("target") or "").strip()
        if not src or not tgt:
            raise InputError("empty source or target.", path=p, row=i, fix="fill both cells or delete the row.")
        match = (row.get("match") or "word").strip().lower()
        if match not in ("word", "exact"):
            raise InputError(
                f"match must be 'word' or 'exact', got '{match}'.",
                path=p,
                row=i,
                column="match",
                fix="word = whole word, any case; exact = whole word, same case.",
            )
        exact = match == "exact"
        pat = re.compile(r"(?<![\w'’-])" + re.escape(src).replace(r"\ ", r"\s+") + r"(?![\w-])", 0 if exact else re.I)
        out.append(LexEntry(src, tgt, exact, pat))
    out.sort(key=lambda e: len(e.source), reverse=True)
    return out


def _case_like(found: str, source: str, target: str) -> str:
    if found == source:
        return target
    if found.isupper() and len(found) > 1:
        return target.upper()
    if found[:1].isupper() and not source[:1].isupper():
        return target[:1].upper() + target[1:]
    if found[:1].islower() and source[:1].isupper():
        return target[:1].lower() + target[1:]
    return target


def apply_lexicon(text: str, lexicon: Sequence[LexEntry]) -> tuple[str, list[tuple[str, str]]]:
    """Whole-word, longest-first, non-overlapping substitution with case preserved."""
    taken: list[tuple[int, int, str, str]] = []
    for e in lexicon:
        for m in e.pattern.finditer(text):
            s, t = m.span()
            if any(s < b and a < t for a, b, _, _ in taken):
                continue
            taken.append((s, t, m.group(), _case_like(m.group(), e.source, e.target)))
    out = text
    changes: list[tuple[str, str]] = []
    for s, t, _old, new in sorted(taken, reverse=True):
        out = out[:s] + new + out[t:]
    for _s, _t, old, new in sorted(taken):
        changes.append((old, new))
    return out, changes


def ranked_names(religion: str, gender: str) -> list[str]:
    """IndiBias Table 10's names of a religion and gender, most common first (capitalised)."""
    import json

    from biaskit import data as _pkg

    lex = Path(_pkg.__file__).resolve().parent / "seat" / "indibias-paper" / "lexicon.json"
    words = json.loads(lex.read_text(encoding="utf-8"))["lists"][RANKED_LISTS[(religion, gender)]]["words"]
    return [w["en"][:1].upper() + w["en"][1:] for w in words]


def pair_religion(
    inv: Inventory, names: str, genders: Sequence[str], rng: random.Random, lang: str | None = None
) -> str:
    """The one religion every name of a pair is taken from: fixed by the name set, else drawn (from the
    religions of ``lang``'s name lists; default: the default target language's)."""
    if "-" in names:
        return names.split("-", 1)[1]
    if names == "indibias":
        return rng.choice(sorted({r for r, _ in RANKED_LISTS}))
    from biaskit.languages import default_target

    lists = inv.names_by_lang.get(lang or default_target()) or {}
    have = sorted(r for r in lists if all(inv.indian_names(g, r, names_of=lang) for g in set(genders)))
    return rng.choice(have)


def _name_pool(inv: Inventory, names: str, gender: str, religion: str, lang: str | None = None) -> list[str]:
    if names.startswith("indibias"):
        return ranked_names(religion, gender)
    return inv.indian_names(gender, religion, names_of=lang)


def replace_names(
    more: str, less: str, *, inventory: Inventory, names: str, rng: random.Random, lang: str | None = None
) -> tuple[str, str, list[tuple[str, str]], list[str]]:
    """Replace US first names in both sentences consistently. Returns the new sentences, the
    (US, Indian) mapping used, and capitalised words that were kept (possible names not in the list)."""
    found: list[tuple[str, str]] = []  # (name, gender) in order of first appearance
    unknown: list[str] = []
    for text in (more, less):
        toks = [t for t in tokenize(text) if not t.is_punct]
        for i, t in enumerate(toks):
            w = re.sub(r"['’]s$", "", t.text)
            if w in inventory.us_names:
                if w not in [n for n, _ in found]:
                    found.append((w, inventory.us_names[w]))
            elif (
                i > 0
                and w[:1].isupper()
                and w.isalpha()
                and not inventory.lookup(w)
                and w not in unknown
                and w.lower() not in _FUNCTION_WORDS
                and w.lower() not in inventory.en_gender
            ):
                unknown.append(w)
    if not found or names == "none":
        return more, less, [], unknown
    mapping: dict[str, str] = {}
    used: set[str] = set()
    religion = pair_religion(inventory, names, [g for _, g in found], rng, lang)
    for name, gender in found:
        pool = [n for n in _name_pool(inventory, names, gender, religion, lang) if n not in used]
        if not pool:
            raise InputError(
                f"no unused Indian {gender} names left for {say('names', names)}.",
                fix="add names to data/languages/<code>/names.json"
                + ("." if names == "india" else f" or use {say('names', 'india')}."),  # never the names in use
            )
        # the most common unused name (IndiBias §4.2.1), or a seeded draw from the inventory's pool
        choice = pool[0] if names.startswith("indibias") else pool[rng.randrange(len(pool))]
        mapping[name] = choice
        used.add(choice)

    def sub(text: str) -> str:
        for us, ind in mapping.items():
            text = re.sub(r"(?<![\w-])" + re.escape(us) + r"(?=(['’]s)?(?![\w-]))", ind, text)
        return text

    return sub(more), sub(less), list(mapping.items()), unknown


@dataclass
class AdaptReport:
    read: int = 0
    kept: int = 0
    by_type: dict[str, int] = field(default_factory=dict)
    changed: int = 0
    names_replaced: int = 0
    lexicon_hits: int = 0
    flagged: int = 0
    dropped: int = 0
    unknown_capitalised: dict[str, int] = field(default_factory=dict)
    limit: int | None = None  # the adaptation stopped at this many pairs (--limit)

    def as_dict(self) -> dict[str, Any]:
        top = dict(sorted(self.unknown_capitalised.items(), key=lambda kv: -kv[1])[:25])
        return {
            "read": self.read,
            "kept": self.kept,
            "by_type": self.by_type,
            "changed": self.changed,
            "names_replaced": self.names_replaced,
            "lexicon_hits": self.lexicon_hits,
            "flagged": self.flagged,
            "dropped": self.dropped,
            "capitalised_words_kept": top,
            **({"limit": self.limit} if self.limit is not None else {}),
        }


def adapt_crows(
    path: str | Path,
    *,
    keep: Sequence[str] = DEFAULT_KEEP,
    names: str = "indibias",
    seed: int = 0,
    lexicon: str | Path | None = None,
    inventory: Inventory | None = None,
    drop_flagged: bool = False,
    check: bool = True,
    limit: int | None = None,
    lang: str | None = None,
) -> tuple[list[SentencePair], AdaptReport]:
    """Filter, rename, localise and check CrowS-Pairs (see the module docstring); ``limit``: stop after
    that many adapted pairs (a trial)."""
    from biaskit.readers import read_pairs

    _check_name_set(names)
    inv = inventory or load_inventory()
    lex = load_lexicon(lexicon)
    res = read_pairs(path, format="auto")
    keep_n = _kept_types(keep, res.pairs, path)
    report = AdaptReport(read=len(res.pairs))
    how = {
        "adapted_by": "biaskit curate adapt",
        "names": names,
        "seed": seed,
        "lexicon": str(lexicon or "builtin:us_to_india.csv"),
        # the language whose name lists were drawn from: only the india* sets draw from one (indibias*: Table 10)
        **({"names_lang": lang} if lang and not names.startswith("indibias") else {}),
    }
    out: list[SentencePair] = []
    for p in res.pairs:
        if limit is not None and len(out) >= limit:
            report.limit = limit
            break
        if p.bias_type not in keep_n:
            continue
        rng = random.Random(f"{seed}:{p.source_id or p.pair_id}")
        q = _adapt_pair(p, inv, lex, names, rng, lang, how, report)
        if q is None or (check and not _checked(q, inv, drop_flagged, report)):
            continue
        out.append(q)
        report.by_type[q.bias_type] = report.by_type.get(q.bias_type, 0) + 1
    report.kept = len(out)
    return out, report


def _check_name_set(names: str) -> None:
    if names not in NAME_SETS:
        import difflib

        close = difflib.get_close_matches(names, NAME_SETS, n=1)
        raise InputError(
            f"unknown name set '{names}'." + (f" Did you mean '{close[0]}'?" if close else ""),
            fix=f"use one of {', '.join(NAME_SETS)}.",
        )


def _kept_types(keep: Sequence[str], pairs: Sequence[SentencePair], path: str | Path) -> list[str]:
    """The bias types to keep, normalised; each must occur in the file."""
    types_in_file = sorted({p.bias_type for p in pairs})
    keep_n = [normalize_bias_type(k) for k in keep if k.strip()]
    for k in keep_n:
        if k not in types_in_file:
            import difflib

            close = difflib.get_close_matches(k, types_in_file, n=1)
            raise InputError(
                f"bias type '{k}' does not occur in the file." + (f" Did you mean '{close[0]}'?" if close else ""),
                path=path,
                fix=f"{tell('keep')} with bias types of the file: {', '.join(types_in_file)}.",
            )
    return keep_n


def _adapt_pair(
    p: SentencePair,
    inv: Inventory,
    lex: Sequence[LexEntry],
    names: str,
    rng: random.Random,
    lang: str | None,
    how: dict[str, Any],
    report: AdaptReport,
) -> SentencePair | None:
    """The pair with its names replaced and the lexicon applied, each change in ``meta.changes`` and
    the adaptation (``how``) in its provenance, counted in ``report``; None when the adaptation made
    the two sentences identical (counted flagged and dropped)."""
    more, less, mapping, unknown = replace_names(
        p.sent_more, p.sent_less, inventory=inv, names=names, rng=rng, lang=lang
    )
    more2, ch_m = apply_lexicon(more, lex)
    less2, ch_l = apply_lexicon(less, lex)
    replaced = {w for a, _ in ch_m + ch_l for w in a.split()}
    for w in unknown:
        if w not in replaced:
            report.unknown_capitalised[w] = report.unknown_capitalised.get(w, 0) + 1
    changes = [{"type": "name", "from": a, "to": b} for a, b in mapping]
    for where, chs in (("sent_more", ch_m), ("sent_less", ch_l)):
        changes += [{"type": "lexicon", "from": a, "to": b, "where": where} for a, b in chs]
    report.names_replaced += len(mapping)
    report.lexicon_hits += len(ch_m) + len(ch_l)
    meta = {**p.meta, "adapted": bool(changes), "changes": changes}
    if changes:
        meta["original"] = {"sent_more": p.sent_more, "sent_less": p.sent_less}
        report.changed += 1
    rec = p.model_dump(mode="json")
    rec.update(sent_more=more2, sent_less=less2, meta=meta, provenance={**p.provenance, **how}, pair_id="")
    try:
        return SentencePair.model_validate(rec)
    except Exception:  # the adaptation made the two sentences identical
        report.flagged += 1
        report.dropped += 1
        return None


def _checked(q: SentencePair, inv: Inventory, drop_flagged: bool, report: AdaptReport) -> bool:
    """The checker's flags into ``q.meta.flags`` (a flagged pair gets status ``flagged``); False when
    ``drop_flagged`` drops it (a flag saying the pair is not minimal)."""
    from biaskit.check import check_pair

    flags = check_pair(q, inventory=inv)
    q.meta["flags"] = [f.as_dict() for f in flags]
    if flags:
        # the plain value, as validation leaves the field (use_enum_values), not PairStatus.flagged
        q.status = "flagged"  # type: ignore[assignment]
        report.flagged += 1
        if drop_flagged and {f.code for f in flags} & NOT_MINIMAL:
            report.dropped += 1
            return False
    return True


def adapt_to_file(
    o: AdaptOptions, *, inventory: Inventory | None = None, check: bool = True
) -> tuple[list[SentencePair], AdaptReport, Path]:
    """``biaskit curate adapt``: :func:`adapt_crows`, the pairs written to ``out`` (.jsonl or .csv) and
    the report to ``<out stem>.report.json`` (which ``biaskit release build`` reads). ``o``: the
    command's :class:`~biaskit.curation.pair_options.AdaptOptions`; ``inventory``: a loaded inventory
    (default: the one of ``o.inventory``)."""
    from biaskit.io import write_json
    from biaskit.readers import write_pairs

    inv = inventory if inventory is not None else load_inventory(o.inventory)
    pairs, report = adapt_crows(
        o.crows,
        keep=o.keep,
        names=o.names,
        seed=o.seed,
        lexicon=o.lexicon,
        inventory=inv,
        drop_flagged=o.drop_flagged,
        check=check,
        limit=o.limit,
        lang=o.lang,
    )
    out = Path(o.out)
    write_pairs(out, pairs)
    rep_path = out.with_name(out.stem + ".report.json")
    write_json(rep_path, report.as_dict())
    return pairs, report, rep_path
