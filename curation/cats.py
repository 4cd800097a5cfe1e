"""StereoSet Context Association Tests (CATs) built the way the paper built them (Nadeem et al., 2021,
sec. 4), with an LLM as the writer and annotators as the validators.

1. **Target terms per domain** (sec. 4.1): :func:`cat_targets` takes them from the inventory.
   StereoSet's four domains map onto it as :data:`DOMAIN_SOURCES` says (``race`` = the race-color and
   nationality axes, ``profession`` = the terms marked ``"kind": "occupation"``); any other domain is
   the inventory axis of that name, e.g. IndiBias's caste, region, age, physical-appearance and
   socioeconomic axes (:data:`DOMAIN_PRESETS`).
2. **Drafting** (sec. 4.2): the ``cat_intrasentence`` and ``cat_intersentence`` tasks
   (``curation/tasks/``) ask for contexts with a stereotype, an anti-stereotype and an unrelated
   option; :func:`draft_rows` turns a reply into draft rows, one per item the model wrote, with light
   repairs (``[BLANK]``/``____`` -> ``BLANK``, punctuation around one-word fills) recorded in ``repairs``.
3. **Structural checks** (:func:`check_draft`, codes in :data:`PROBLEMS`): what can be checked without
   understanding the text -- one ``BLANK``, the target in the context, word-sized fills for
   intrasentence and sentences for intersentence, three distinct options, no duplicate CAT.
   :func:`build_cats` turns the drafts that pass into :class:`biaskit.schema.CAT` records (an
   intrasentence option's ``sentence`` is the context with ``BLANK`` filled, as in StereoSet's data)
   and keeps every other draft with its problems; nothing is dropped silently.
4. **Validation** (sec. 4.3) is annotation's ``cat`` kind: five validators label each option, and a
   CAT is kept when, for each option, at least three give the writer's label
   (``annotate apply --kind cat``). :func:`cat_retention` counts, per split and domain, what was
   drafted, what passed the structural checks and what the validators kept, as the paper reports
   (Table 1 and the 83 % retention of sec. 4.3).
"""

from __future__ import annotations

import re
import unicodedata
from collections import Counter
from collections.abc import Iterable, Sequence
from pathlib import Path
from typing import Any

from biaskit import ids
from biaskit.cat_checks import (
    OPTION_KEYS,
    PROBLEMS,
    check_cat,
)
from biaskit.cat_checks import (
    fill as _fill,
)
from biaskit.errors import InputError
from biaskit.inventory import Inventory
from biaskit.options import say, tell
from biaskit.schema import normalize_bias_type
from biaskit.textutil import strip_edges

SPLITS = ("intrasentence", "intersentence")
DOMAIN_PRESETS = {
    "stereoset": ("gender", "profession", "race", "religion"),  # Nadeem et al., sec. 4
    "indibias": ("gender", "religion", "caste", "age", "region", "physical-appearance", "socioeconomic"),
}
#: StereoSet domains that are not a single inventory axis: where their target terms come from
DOMAIN_SOURCES: dict[str, dict[str, Any]] = {
    "race": {"axes": ("race-color", "nationality")},
    "profession": {"kind": "occupation"},
}


# ------------------------------------------------------------------------------------------ targets
def parse_domains(spec: str | Sequence[str]) -> list[str]:
    """``"stereoset"``, ``"indibias"`` or a comma-separated list (presets may be mixed in)."""
    parts = [p.strip() for p in spec.split(",")] if isinstance(spec, str) else [str(p).strip() for p in spec]
    out: list[str] = []
    for p in parts:
        if not p:
            continue
        for d in DOMAIN_PRESETS.get(p.lower(), (p,)):
            d = normalize_bias_type(d)
            if d not in out:
                out.append(d)
    if not out:
        raise InputError(
            "no domain given.",
            fix=f"{tell('domains', 'stereoset')}, {say('domains', 'indibias')} or {say('domains', 'gender,caste')}.",
        )
    return out


def domain_terms(domain: str, inventory: Inventory, lang: str = "en") -> list[str]:
    """The inventory's target terms for one domain (see :data:`DOMAIN_SOURCES`)."""
    d = normalize_bias_type(domain)
    src = DOMAIN_SOURCES.get(d)
    if src and "kind" in src:
        terms = [s for t in inventory.terms.values() if t.kind == src["kind"] and (s := t.surface(lang))]
        if not terms:
            raise InputError(
                f'no inventory terms are marked "kind": "{src["kind"]}" for domain \'{d}\'.',
                fix=f"mark them in identity_terms.json, or {tell('targets')}.",
            )
        return terms
    out: list[str] = []
    for ax in (src or {}).get("axes", (d,)):
        try:
            out += [t for t in inventory.identities(ax, lang) if t not in out]
        except InputError:
            if not src:
                raise InputError(
                    f"unknown domain '{d}': no such axis in the inventory.",
                    fix=f"use one of {', '.join(sorted({*inventory.axes(), *DOMAIN_SOURCES}))}, a "
                    f"preset ({', '.join(DOMAIN_PRESETS)}), or {tell('targets')}.",
                ) from None
    return out


def cat_targets(
    domains: str | Sequence[str], *, inventory: Inventory, lang: str = "en", targets: Sequence[str] | None = None
) -> list[tuple[str, str]]:
    """``(domain, target)`` for every target term of every domain; ``targets`` replaces the
    inventory's terms (then exactly one domain must be given: the one they belong to)."""
    doms = parse_domains(domains)
    if targets:
        if len(doms) != 1:
            raise InputError(
                f"{say('targets')} needs exactly one domain, got {', '.join(doms)}.",
                fix=f"name only the domain the targets belong to, e.g. {say('domains', 'profession')}.",
            )
        return [(doms[0], t.strip()) for t in targets if t.strip()]
    return [(d, t) for d in doms for t in domain_terms(d, inventory, lang)]


def cat_items(
    targets: Iterable[tuple[str, str]], *, per_target: int = 5, society: str = "India", lang: str = "en"
) -> list[dict]:
    """The drafting jobs: one per target term (and split: each split runs its own task); ``lang``:
    the language the CATs are written in (the prompt's ``{language}``; English items carry no
    ``lang`` key, so their job keys are those of earlier versions)."""
    if per_target < 1:
        raise InputError(f"{say('per_target')} must be >= 1, got {per_target}.", fix=f"{tell('per_target', 5)}.")
    extra = {"lang": lang} if lang != "en" else {}
    return [{"target": t, "domain": d, "society": society, "n": per_target, **extra} for d, t in targets]


# ------------------------------------------------------------------------------------------ drafts
_BLANK_MARKS = re.compile(r"\[\s*blank\s*\]|<\s*blank\s*>|\{\s*blank\s*\}|\(\s*blank\s*\)|_{3,}", re.I)
_QUOTES = "\"'`“”‘’"


def _clean(text: Any, repairs: list[str], name: str) -> str:
    """Whitespace, NFC, wrapping quotes; markdown emphasis and leading ellipses (recorded in ``repairs``)."""
    s = unicodedata.normalize("NFC", "" if text is None else str(text))
    s = re.sub(r"\s+", " ", s).strip()
    t = re.sub(r"^(?:\.{3}|…)\s*", "", re.sub(r"\*{1,3}|`+", "", s)).strip()
    if t != s:
        repairs.append(f"markdown:{name}")
        s = t
    if len(s) >= 2 and s[0] in _QUOTES and s[-1] in _QUOTES:
        s = s[1:-1].strip()
    return s


def blank_marker(ctx: str, repairs: list[str]) -> str:
    """``[BLANK]``, ``<blank>``, ``____`` ... -> ``BLANK`` (recorded in ``repairs``)."""
    fixed = re.sub(r"[\[<{(]\s*BLANK\s*[\]>})]", "BLANK", ctx)  # [BLANK] -> BLANK
    if "BLANK" not in fixed:
        fixed = _BLANK_MARKS.sub("BLANK", fixed)  # [blank], ____ -> BLANK
    if fixed != ctx:
        repairs.append("blank_marker")
    return fixed


def fill_word(v: str, repairs: list[str], key: str) -> str:
    """An intrasentence fill without the punctuation and quotes around it (recorded in ``repairs``)."""
    w = strip_edges(v, " .,;:!?" + _QUOTES)
    if w != v:
        repairs.append(f"fill_punctuation:{key}")
    return w


def draft_rows(
    item: dict[str, Any], data: Any, split: str, provenance: dict[str, Any], prompt_text: str | None = None
) -> list[dict]:
    """One draft row per item of a ``cat_*`` reply (``{"items": [{context, stereotype,
    anti_stereotype, unrelated}, ...]}``), cleaned but not judged (:func:`check_draft` judges).
    ``prompt_text`` (the rendered prompt, case-folded): a draft with parts that are the prompt's own (a
    worked example copied; :func:`~.tasks.base.copied_fields` says which) gets ``copies_prompt`` (a
    structural problem)."""
    rows: list[dict] = []
    elements = data.get("items") if isinstance(data, dict) else None
    for el in elements or []:
        el = el if isinstance(el, dict) else {"context": el}
        repairs: list[str] = []
        ctx = _clean(el.get("context"), repairs, "context")
        if split == "intrasentence":
            ctx = blank_marker(ctx, repairs)
        opts: dict[str, str] = {}
        for key in OPTION_KEYS:
            v = _clean(el.get(key), repairs, key)
            if split == "intrasentence":
                v = fill_word(v, repairs, key)
            opts[key] = v
        copied = []
        if prompt_text:
            from .tasks.base import copied_fields

            copied = copied_fields({"context": ctx, **opts}, prompt_text)
        row = {
            "draft_id": ids.cat_draft_id(split, item["target"], ctx, *opts.values()),
            "split": split,
            "target": item["target"],
            "domain": normalize_bias_type(item["domain"]),
            "society": item.get("society"),
            "lang": item.get("lang", "en"),
            "context": ctx,
            **opts,
            "repairs": repairs,
            "provenance": dict(provenance),
        }
        if copied:
            row["copies_prompt"] = copied
        rows.append(row)
    return rows


def check_draft(row: dict[str, Any], inventory: Inventory) -> list[dict[str, str]]:
    """The structural problems of one draft (empty list: it can become a CAT); each ``{"code",
    "reason"}`` with a code of :data:`PROBLEMS` (:func:`biaskit.cat_checks.check_cat`)."""
    return check_cat(row, inventory)


def build_cats(drafts: Iterable[dict[str, Any]], inventory: Inventory) -> tuple[list[Any], list[dict]]:
    """``(cats, invalid)``: a :class:`~biaskit.schema.CAT` for every draft that passes
    :func:`check_draft` (the first of any duplicates), and every other draft with its ``problems``."""
    from pydantic import ValidationError

    from biaskit.schema import CAT

    cats: list[CAT] = []
    invalid: list[dict] = []
    seen: dict[str, str] = {}
    for row in drafts:
        probs = check_draft(row, inventory)
        cat = None
        if not probs:
            split, ctx = row["split"], row["context"]
            options = [
                {"sentence": _fill(ctx, row[k]) if split == "intrasentence" else row[k], "gold_label": lab}
                for k, lab in OPTION_KEYS.items()
            ]
            meta: dict[str, Any] = {"draft_id": row.get("draft_id"), "society": row.get("society")}
            if split == "intrasentence":
                meta["fills"] = {lab: row[k] for k, lab in OPTION_KEYS.items()}
            if row.get("repairs"):
                meta["repairs"] = list(row["repairs"])
            try:
                cat = CAT(
                    split=split,
                    target=row["target"],
                    bias_type=row["domain"],
                    context=ctx,
                    options=options,
                    lang=row.get("lang") or "en",
                    meta=meta,
                    provenance=dict(row.get("provenance") or {}),
                )
            except ValidationError as exc:  # pragma: no cover - the checks above make this unreachable
                probs = [{"code": "empty", "reason": str(exc.errors()[0].get("msg"))}]
            else:
                if cat.cat_id in seen:
                    probs = [{"code": "duplicate", "reason": PROBLEMS["duplicate"] + f": draft {seen[cat.cat_id]}"}]
                    cat = None
                else:
                    seen[cat.cat_id] = str(row.get("draft_id"))
        if cat is not None:
            cats.append(cat)
        else:
            invalid.append(
                {
                    **{k: v for k, v in row.items() if k != "provenance"},
                    "problems": probs,
                    "provenance": row.get("provenance") or {},
                }
            )
    return cats, invalid


# ------------------------------------------------------------------------------------------ files
def drafts_path(out: str | Path, split: str) -> Path:
    """``cats.jsonl`` -> ``cats.intrasentence.drafts.jsonl``: every draft the model wrote (resumable)."""
    out = Path(out)
    return out.with_name(f"{out.name.removesuffix('.jsonl')}.{split}.drafts.jsonl")


def invalid_path(out: str | Path) -> Path:
    out = Path(out)
    return out.with_name(f"{out.name.removesuffix('.jsonl')}.invalid.jsonl")


def retention_path(out: str | Path) -> Path:
    out = Path(out)
    return out.with_name(f"{out.name.removesuffix('.jsonl')}.retention.json")


def write_cats(out: str | Path, inventory: Inventory) -> dict[str, Any]:
    """Rebuild ``out`` (CATs), ``<out>.invalid.jsonl`` and ``<out>.retention.json`` from every drafts
    file of ``out`` (both splits); returns the retention report."""
    from biaskit.io import read_jsonl, write_json, write_jsonl

    drafts: list[dict] = []
    for split in SPLITS:
        p = drafts_path(out, split)
        if p.exists():
            drafts += read_jsonl(p)
    cats, invalid = build_cats(drafts, inventory)
    write_jsonl(out, cats)
    inv_file = invalid_path(out)
    if invalid:
        write_jsonl(inv_file, invalid)
    elif inv_file.exists():
        inv_file.unlink()
    report = cat_retention(out)
    write_json(retention_path(out), report)
    return report


# ------------------------------------------------------------------------------------------ retention
def _pct(a: int, b: int) -> float | None:
    return round(100.0 * a / b, 1) if b else None


#: a retention count's key: split, domain, target, as the rows give them (an invalid or error row may lack one: None)
_Key = tuple[str | None, str | None, str | None]


def cat_retention(cats: str | Path, validated: str | Path | None = None) -> dict[str, Any]:
    """Per split and domain (and in total): target terms, drafting jobs (and how many failed), CATs
    drafted, structurally valid, and -- with ``validated``, the output of ``annotate apply --kind
    cat`` -- validated, rejected by the validators, waiting for adjudication, not (yet) annotated.
    ``valid_pct`` = valid / drafted; ``validated_pct`` = validated / valid (StereoSet's "83 % of the
    CATs", sec. 4.3); ``overall_pct`` = validated / drafted. ``by_target``: the same figures per
    domain and target term (both splits together), the terms that lose the most CATs first."""
    cats = Path(cats)
    if not cats.is_file():
        raise InputError("file not found.", path=cats, fix="give the output file of `biaskit curate cats`.")
    counts: dict[_Key, Counter] = {}
    key_of = _count_valid(cats, counts)
    problems = _count_invalid(cats, counts)
    _count_jobs(cats, counts)
    if validated is not None:
        validated = Path(validated)
        _count_validated(validated, key_of, counts)
    report = _retention_tables(counts, with_val=validated is not None)
    return {
        "cats": str(cats),
        "validated": str(validated) if validated is not None else None,
        **report,
        "problems": dict(problems.most_common()),
    }


def _bump(counts: dict[_Key, Counter], k: _Key, field: str, n: int = 1) -> None:
    counts.setdefault(k, Counter())[field] += n


def _count_valid(cats: Path, counts: dict[_Key, Counter]) -> dict[str, _Key]:
    """Count the structurally valid CATs of ``cats``; returns each one's key by its id."""
    key_of: dict[str, _Key] = {}
    for c in _read_cat_file(cats, "pass the --out of `biaskit curate cats`."):
        k = (c.split, c.bias_type, c.target)
        key_of[c.cat_id] = k
        _bump(counts, k, "valid")
    return key_of


def _count_invalid(cats: Path, counts: dict[_Key, Counter]) -> Counter:
    """Count the invalid drafts (``<cats>.invalid.jsonl``); returns how often each problem occurs."""
    from biaskit.io import read_jsonl

    problems: Counter = Counter()
    inv = invalid_path(cats)
    for r in read_jsonl(inv) if inv.exists() else []:
        _bump(counts, (r.get("split"), r.get("domain"), r.get("target")), "invalid")
        problems.update(p.get("code") for p in r.get("problems") or [])
    return problems


def _count_jobs(cats: Path, counts: dict[_Key, Counter]) -> None:
    """Count the drafting jobs of each split's drafts (distinct ``provenance.job``) and the failed ones
    (the drafts' errors file)."""
    from biaskit.io import read_jsonl

    from .runner import errors_path

    jobs: dict[_Key, set[str | None]] = {}
    for split in SPLITS:
        d = drafts_path(cats, split)
        for r in read_jsonl(d) if d.exists() else []:
            jobs.setdefault((split, r.get("domain"), r.get("target")), set()).add(
                (r.get("provenance") or {}).get("job")
            )
        e = errors_path(d)
        for r in read_jsonl(e) if e.exists() else []:
            ctx = r.get("context") or {}
            _bump(counts, (split, normalize_bias_type(ctx.get("domain") or ""), ctx.get("target")), "failed_jobs")
    for k, js in jobs.items():
        _bump(counts, k, "jobs", len(js))


def _count_validated(validated: Path, key_of: dict[str, _Key], counts: dict[_Key, Counter]) -> None:
    """Count each valid CAT's annotation outcome: validated (in ``validated``), rejected or waiting for
    adjudication (its ``.rejected.jsonl``)."""
    from biaskit.io import read_jsonl

    if not validated.is_file():
        raise InputError(
            "file not found.", path=validated, fix="give the output file of `biaskit annotate apply --kind cat`."
        )
    status_of: dict[str, str] = {}
    for c in _read_cat_file(validated, "pass the --out of `biaskit annotate apply --kind cat`."):
        status_of[c.cat_id] = "validated"
    rej = validated.with_name(f"{validated.stem}.rejected.jsonl")
    for r in read_jsonl(rej) if rej.exists() else []:
        if str(r.get("id")) in key_of and r.get("status") in ("rejected", "needs_adjudication"):
            status_of.setdefault(str(r["id"]), str(r["status"]))
    for cid, st in status_of.items():
        if cid in key_of:
            _bump(counts, key_of[cid], st)


def _retention_tables(counts: dict[_Key, Counter], with_val: bool) -> dict[str, Any]:
    """The report's rows (per split and domain), totals (per split), overall figures and
    ``by_target`` (per domain and target term, the terms that lose the most CATs first)."""

    def row(split: str | None, domain: str | None, keys: list[_Key]) -> dict[str, Any]:
        return _retention_row(split, domain, sum((counts[k] for k in keys), Counter()), {k[2] for k in keys}, with_val)

    def order(x: str | None) -> int:
        return SPLITS.index(x) if x in SPLITS else 9

    groups: dict[tuple[str | None, str | None], list[_Key]] = {}
    for k in counts:
        groups.setdefault((k[0], k[1]), []).append(k)
    rows = [row(sp, dom, ks) for (sp, dom), ks in sorted(groups.items(), key=lambda g: (order(g[0][0]), str(g[0][1])))]
    totals = [row(sp, "total", [k for k in counts if k[0] == sp]) for sp in SPLITS if any(k[0] == sp for k in counts)]
    overall = row("all", "total", list(counts))
    per_term: dict[tuple[str, str], list[_Key]] = {}
    for k in counts:
        per_term.setdefault((str(k[1]), str(k[2])), []).append(k)
    by_target = []
    for (dom, tgt), ks in per_term.items():
        r = row("all", dom, ks)
        r["target"] = tgt
        by_target.append(r)
    kept = "validated" if with_val else "valid"
    by_target.sort(key=lambda r: (-(r["drafted"] - r[kept]), r["domain"], r["target"]))
    return {"rows": rows, "totals": totals, "overall": overall, "by_target": by_target}


def _read_cat_file(path: Path, fix: str) -> list:
    """The CAT records of a biaskit CAT file (an empty file has none), read by the shared reader."""
    from biaskit.readers import first_record, read_cats

    if not first_record(path):
        return []
    first = first_record(path)
    if not all(f in first for f in ("cat_id", "split", "bias_type", "target")):
        raise InputError("not a CAT record.", path=path, row=1, fix=fix)
    return read_cats(path, format="biaskit")


def _retention_row(
    split: str | None, domain: str | None, c: Counter, targets: set, with_validation: bool
) -> dict[str, Any]:
    drafted = c["valid"] + c["invalid"]
    row: dict[str, Any] = {
        "split": split,
        "domain": domain,
        "targets": len({t for t in targets if t}),
        "jobs": c["jobs"] + c["failed_jobs"],
        "failed_jobs": c["failed_jobs"],
        "drafted": drafted,
        "valid": c["valid"],
        "valid_pct": _pct(c["valid"], drafted),
    }
    if with_validation:
        done = c["validated"] + c["rejected"] + c["needs_adjudication"]
        row.update(
            {
                "validated": c["validated"],
                "rejected": c["rejected"],
                "needs_adjudication": c["needs_adjudication"],
                "not_annotated": c["valid"] - done,
                "validated_pct": _pct(c["validated"], c["valid"]),
                "overall_pct": _pct(c["validated"], drafted),
            }
        )
    return row
