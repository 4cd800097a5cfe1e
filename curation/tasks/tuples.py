"""``tuples``: one-word attributes per identity term and polarity (IndiBias step 1) -> BiasTuple rows.

Attributes are normalised (numbering, bullets, quotes, explanations, case) and de-duplicated per
identity and polarity (case, punctuation, a rule-based lemma key, difflib ratio on the keys);
:meth:`TupleTask.finalize` repeats the de-duplication across the whole file (rows from separate
runs) and marks attributes listed under both polarities.

What a small model writes instead of attributes is dropped before that (:func:`not_an_attribute`):
the request's own words and any word the prompt quotes (a worked example's attribute or group),
and demographic categories ("gender", "age", "skin color": what gemma3-270m lists when asked for
stereotypes). A template with worked examples (``attributes@3``: a ``{examples}`` placeholder and
``[[examples]]`` tables) gets three of them per request, none of the asked axis
(:func:`pick_examples`), rendered in the reply's JSON shape; when the reply's schema names the group
and the polarity (``group``, ``stereotypes``), :meth:`TupleTask.schema_for` fixes them to the
request's, so a model that continues the pattern writes about the group asked.
"""

from __future__ import annotations

import copy
import json
import re
import unicodedata
import zlib
from collections.abc import Iterable, Sequence
from difflib import SequenceMatcher
from typing import Any

from biaskit.errors import InputError
from biaskit.options import say, tell
from biaskit.schema import BiasTuple, normalize_bias_type

from . import TASKS
from .base import Task, TaskError

POLARITIES = ("positive", "negative")
_NESS_WORDS = {"business", "witness", "harness", "wilderness", "fitness"}
#: the reply's properties that name the group and the polarity (``attributes@3``), fixed per request
GROUP_KEY, POLARITY_KEY = "group", "stereotypes"
#: worked examples shown per request (sentences@3 and the CAT templates also show three)
N_EXAMPLES = 3
#: demographic categories and the dimensions people are described along: asked for stereotypes, a
#: pretrained model lists these ("Hindu: gender, age, height, weight, sex"); they name no attribute
CATEGORY_WORDS = frozenset(
    {
        "gender",
        "sex",
        "age",
        "religion",
        "caste",
        "region",
        "class",
        "race",
        "ethnicity",
        "nationality",
        "occupation",
        "profession",
        "job",
        "income",
        "wealth",
        "education",
        "language",
        "culture",
        "community",
        "tribe",
        "appearance",
        "physical-appearance",
        "socioeconomic",
        "disability",
        "orientation",
        "identity",
        "height",
        "weight",
        "size",
        "shape",
        "colour",
        "color",
        "complexion",
        "skin",
        "hair",
        "face",
        "body",
        "type",
        "status",
        "level",
        "tone",
        "length",
        "group",
        "people",
        "person",
        "stereotype",
        "attribute",
    }
)


def normalize_attribute(text: str) -> str | None:
    """Clean one generated attribute: numbering, bullets, quotes, trailing punctuation,
    explanations after a dash/colon/parenthesis; lower case (acronyms kept). None if nothing is left."""
    s = unicodedata.normalize("NFKC", str(text)).strip()
    s = re.sub(r"^\s*(?:\d+[.)]|[-*•·]|[a-z][.)])\s+", "", s)
    s = re.split(r"\s+[-–—:]\s+|\s*\(|:\s", s)[0]
    s = s.strip(" \t\"'`“”‘’.,;:!?")
    s = re.sub(r"\s+", " ", s)
    if not s or not re.search(r"\w", s) or re.fullmatch(r"(?i)(word|attribute|adjective|noun|item)s?\s*\d*|\.\.\.", s):
        return None  # empty, or the format example echoed back
    if re.fullmatch(r"[A-Za-z]\d*", s):
        return None  # a bare letter ("A", "B", ...): a list placeholder, not an attribute
    if not (s.isupper() and len(s) <= 5):
        s = s.lower()
    return s


def lemma_key(attr: str) -> str:
    """A rule-based lemma for near-duplicate detection: plural and -ness/-ity nouns folded,
    hyphens/spaces removed (``Hard-working`` = ``hardworking``, ``thieves`` = ``thief``,
    ``laziness`` = ``lazy``)."""
    w = re.sub(r"[\s\-_'’]+", "", attr.lower())
    for suf, rep in (
        ("ieves", "ief"),
        ("ives", "ife"),
        ("ies", "y"),
        ("sses", "ss"),
        ("shes", "sh"),
        ("ches", "ch"),
        ("xes", "x"),
    ):
        if w.endswith(suf) and len(w) > len(suf):
            w = w[: -len(suf)] + rep
            break
    else:
        if w.endswith("s") and not w.endswith(("ss", "us", "is")) and len(w) > 3:
            w = w[:-1]
    if w not in _NESS_WORDS:
        for suf, rep in (("iness", "y"), ("ness", "")):
            if w.endswith(suf) and len(w) - len(suf) >= 3:
                return w[: -len(suf)] + rep
    return w


def _near(keys: Iterable[str], k: str, ratio: float) -> str | None:
    return next((kk for kk in keys if kk == k or SequenceMatcher(None, kk, k).ratio() >= ratio), None)


def dedupe_attributes(
    attrs: Iterable[str], *, existing: Iterable[str] = (), ratio: float = 0.92, identity: str | None = None
) -> tuple[list[str], list[tuple[str, str]]]:
    """Normalised, de-duplicated attributes (case, punctuation, lemma, and difflib ratio >= ``ratio``
    on the lemma keys), plus ``(dropped, kept_as)`` for every dropped duplicate."""
    kept: list[str] = []
    keys: list[str] = [lemma_key(e) for e in existing]
    dropped: list[tuple[str, str]] = []
    ident_key = lemma_key(identity) if identity else None
    for a in attrs:
        n = normalize_attribute(a) if isinstance(a, str) else None
        if not n:
            continue
        k = lemma_key(n)
        if ident_key and k == ident_key:
            dropped.append((n, "<identity term>"))
            continue
        dup = _near(keys, k, ratio)
        if dup is not None:
            dropped.append((n, dup))
            continue
        keys.append(k)
        kept.append(n)
    return kept, dropped


def is_category(attr: str) -> bool:
    """``attr`` names a demographic category or a dimension ("age", "skin color", "jaw shape"),
    not an attribute: it is, or ends in, one of :data:`CATEGORY_WORDS` (plural folded)."""
    ws = re.findall(r"[\w-]+", attr.casefold())
    return bool(ws) and (ws[-1] in CATEGORY_WORDS or lemma_key(ws[-1]) in CATEGORY_WORDS)


def not_an_attribute(attr: str, *, echo: Iterable[str] = ()) -> str | None:
    """Why the normalised ``attr`` is no attribute (None: it may be one): an echo of the request or
    of the prompt (``echo``: case-folded words), or a category (:func:`is_category`)."""
    if attr.casefold() in echo:
        return "an echo of the request or of a worked example"
    if is_category(attr):
        return "a category, not an attribute"
    return None


def pick_examples(
    pool: Sequence[dict], *, axis: str, identity: str, k: int = N_EXAMPLES, path: str | None = None
) -> list[dict]:
    """``k`` worked examples from a template's ``[[examples]]`` for one request: none of the asked
    axis or about the asked group; which ``k`` depends on the axis (a stable rotation), so each
    axis sees its own set."""
    for i, e in enumerate(pool, 1):
        bad = [f for f in ("group", "axis") if not isinstance(e.get(f), str) or not e[f].strip()]
        bad += [
            p
            for p in POLARITIES
            if not isinstance(e.get(p), list) or not e[p] or not all(isinstance(a, str) for a in e[p])
        ]
        if bad:
            raise InputError(
                f"worked example {i} has no usable {', '.join(bad)}.",
                path=path,
                fix='write group = "...", axis = "...", positive = ["..."], negative = ["..."].',
            )
    ax, ident = normalize_bias_type(axis), lemma_key(identity)
    others = [e for e in pool if normalize_bias_type(e["axis"]) != ax and lemma_key(e["group"]) != ident]
    if not others:
        return []
    start = zlib.crc32(ax.encode("utf-8")) % len(others)
    return [others[(start + i) % len(others)] for i in range(min(k, len(others)))]


def tuple_items(*, axis: str, identities: Sequence[str], polarity: str = "both", n: int = 10) -> list[dict]:
    """The jobs of ``curate tuples``: one per identity and polarity."""
    pols = POLARITIES if polarity == "both" else (polarity,)
    for p in pols:
        if p not in POLARITIES:
            raise InputError(f"unknown polarity '{p}'.", fix="use positive, negative or both.")
    if n < 1:
        raise InputError(
            f"{say('n')} must be >= 1, got {n}.", fix=f"{tell('n', 10)} (attributes per identity and polarity)."
        )
    ax = normalize_bias_type(axis)
    return [{"identity": ident, "axis": ax, "polarity": p, "n": n} for ident in identities for p in pols]


@TASKS.register("tuples")
class TupleTask(Task):
    """Attributes per (identity, polarity) -> BiasTuple rows."""

    name = "tuples"
    prompt_id = "attributes"
    default_params = {"temperature": 0.7, "seed": 0, "max_tokens": 256}

    def __init__(self, prompt=None, *, prompts_dir: Any = None, lang: str = "en"):
        super().__init__(prompt, prompts_dir=prompts_dir)
        self.lang = lang

    def _reply_props(self) -> dict:
        return (self.schema or {}).get("properties") or {}

    def variables(self, item: dict) -> dict:
        if "examples" not in self.prompt.placeholders():
            return item
        props = self._reply_props()
        lines = []
        for e in pick_examples(
            self.prompt.examples, axis=item["axis"], identity=item["identity"], path=self.prompt.path
        ):
            # with the polarity in the reply's shape both lists are shown (the contrast helps), else the one asked
            for pol in POLARITIES[::-1] if POLARITY_KEY in props else (item["polarity"],):
                reply = {GROUP_KEY: e["group"]} if GROUP_KEY in props else {}
                if POLARITY_KEY in props:
                    reply[POLARITY_KEY] = pol
                lines.append(json.dumps({**reply, "attributes": e[pol]}, ensure_ascii=False))
        return {**item, "examples": "\n".join(lines)}

    def schema_for(self, item: dict) -> dict | None:
        """The template's schema, with the group and the polarity (where the reply names them) fixed
        to the request's: a grammar-constrained model then writes them first and continues with the
        attributes of that group; another model's reply about another group fails validation."""
        base = self.schema
        props = self._reply_props()
        if base is None or (GROUP_KEY not in props and POLARITY_KEY not in props):
            return base  # (no schema: no reply properties either)
        schema = copy.deepcopy(base)
        for key, value in ((GROUP_KEY, item["identity"]), (POLARITY_KEY, item["polarity"])):
            if key in props:
                schema["properties"][key] = {"type": "string", "enum": [value]}
        return schema

    def expected(self, item: dict) -> int | None:
        return int(item["n"])

    def check_item(self, item: dict) -> None:
        if item.get("polarity") not in POLARITIES:
            raise InputError(f"unknown polarity {item.get('polarity')!r}.", fix="use positive or negative.")
        if not isinstance(item.get("n"), int) or item["n"] < 1:
            raise InputError(f"n must be a whole number >= 1, got {item.get('n')!r}.", fix='e.g. "n": 10.')

    def parse(self, item: dict, result) -> list[dict]:
        # the request's own words (the axis, the polarity) and whatever the prompt quotes (the worked
        # examples' words and groups) echoed back, and categories, are no attributes
        echo = (
            {str(item.get(k, "")).casefold() for k in ("axis", "polarity")}
            | {"model"}
            | set(re.findall(r'"([^"\n]{1,60})"', self.prompt_text(item)))
        )
        raw = [a for a in result.data.get("attributes") or [] if isinstance(a, str)]
        usable, not_attrs = [], []
        for a in raw:
            n = normalize_attribute(a)
            why = not_an_attribute(n, echo=echo) if n else None
            if why:
                not_attrs.append(f"{n} ({why})")
            else:
                usable.append(a)
        if raw and not usable and not_attrs:
            raise TaskError("no attribute left: " + "; ".join(not_attrs[:8]))
        kept, dropped = dedupe_attributes(usable, identity=item["identity"])
        prov = {**result.provenance(), **self.provenance()}
        rows = []
        for a in kept[: item["n"] * 2]:
            dups = [d for d, k in dropped if lemma_key(d) == lemma_key(a) or k == lemma_key(a)]
            t = BiasTuple(
                identity=item["identity"],
                attribute=a,
                axis=item["axis"],
                polarity=item["polarity"],
                lang=self.lang,
                provenance=dict(prov),
                meta={"duplicates_dropped": dups} if dropped else {},
            )
            rows.append(t.model_dump(mode="json"))
        return rows

    def finalize(self, rows: list[dict]) -> list[dict]:
        """Across the whole file: drop near-duplicates within (identity, polarity) that separate runs
        produced, and mark attributes listed under both polarities (``meta.conflict``)."""
        out: list[dict] = []
        keys: dict[tuple[str, str, str], list[str]] = {}
        pol_of: dict[tuple[str, str], set[str]] = {}
        for r in rows:
            ident, pol = str(r.get("identity", "")).lower(), str(r.get("polarity", ""))
            kk = keys.setdefault((r.get("axis", ""), ident, pol), [])
            k = lemma_key(str(r.get("attribute", "")))
            if _near(kk, k, 0.92) is not None:
                continue
            kk.append(k)
            pol_of.setdefault((ident, k), set()).add(pol)
            out.append(r)
        for r in out:
            pols = pol_of.get((str(r.get("identity", "")).lower(), lemma_key(str(r.get("attribute", "")))), set())
            meta = dict(r.get("meta") or {})
            if len(pols) > 1:
                meta["conflict"] = "listed as both positive and negative"
            else:
                meta.pop("conflict", None)
            r["meta"] = meta
        return out
