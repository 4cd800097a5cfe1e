"""``build_release``: validated records + stage reports -> a release folder (see :mod:`.layout`).

A pure function with plain inputs (paths and a :class:`BuildOptions`) that returns a
:class:`BuildSummary`; the CLI (``biaskit release build``) and a pipeline runner call it alike. The
folder is written whole with :func:`biaskit.io.atomic_dir`: a crash never leaves half a release.
Records are validated once, when read; the writers work column-wise on plain dicts.
"""

from __future__ import annotations

import datetime as _dt
import re
import time
from collections import Counter
from collections.abc import Sequence
from dataclasses import asdict, dataclass, field
from pathlib import Path
from typing import Any

import numpy as np

from .. import __version__
from ..errors import InputError
from ..languages import indibias_languages, name_of
from ..options import say, tell
from ..schema import SCHEMA_VERSION
from . import layout as L
from .gcpause import without_gc
from .options import SPLIT_POLICIES, BuildOptions
from .targets import SplitPlan, pair_target, plan_split

_VERSION_RE = re.compile(r"^\d+\.\d+\.\d+(?:[-+][0-9A-Za-z.-]+)?$")
_NAME_RE = re.compile(r"^[A-Za-z0-9][A-Za-z0-9._-]*$")


@dataclass
class BuildSummary:
    out: str
    name: str
    version: str
    counts: dict[str, Any]
    split: dict[str, Any]
    files: list[str]
    warnings: list[str]
    seconds: float
    timings: dict[str, float] = field(default_factory=dict)

    def as_dict(self) -> dict[str, Any]:
        return asdict(self)


def _check_options(o: BuildOptions) -> None:
    if not _NAME_RE.match(o.name or ""):
        raise InputError(
            f"invalid release name '{o.name}'.",
            fix=f"use letters, digits, '.', '_' and '-', e.g. {say('name', 'indibias-release')}.",
        )
    if not _VERSION_RE.match(o.version or ""):
        raise InputError(
            f"invalid version '{o.version}'.", fix=f"use X.Y.Z (semantic versioning), e.g. {say('version', '1.0.0')}."
        )
    if o.split_policy not in SPLIT_POLICIES:
        raise InputError(f"unknown split policy '{o.split_policy}'.", fix=f"use one of {', '.join(SPLIT_POLICIES)}.")
    if not 0 < o.dev_fraction < 1:
        raise InputError(
            f"{say('dev_fraction')} must be between 0 and 1, got {o.dev_fraction}.",
            fix=f"{tell('dev_fraction', 0.25)} (StereoSet: 25% dev, 75% test).",
        )
    for k in o.kinds or []:
        if k not in L.KINDS:
            raise InputError(f"unknown kind '{k}'.", fix=f"use {', '.join(L.KINDS)}.")
    if o.created:
        from .verify import valid_date

        if not valid_date(o.created):
            raise InputError(
                f"invalid date '{o.created}': not a day of the calendar.",
                fix=f"use YYYY-MM-DD, e.g. {say('created', '2025-01-31')}.",
            )


def _citation(c: str | None) -> str | None:
    if not c:
        return None
    p = Path(c)
    if len(c) < 400 and "\n" not in c and p.suffix.lower() in (".bib", ".txt", ".bibtex"):
        if not p.exists():
            raise InputError(
                "file not found.", path=p, fix=f"check the {say('citation')} path (or give the BibTeX text)."
            )
        return p.read_text(encoding="utf-8").strip()
    return c.strip()


# ------------------------------------------------------------------------------------------ build
@without_gc
def build_release(
    records: Sequence[str | Path],
    out: str | Path,
    options: BuildOptions,
    *,
    command: str | None = None,
    base: str | Path | None = None,
) -> BuildSummary:
    """Build the release folder ``out`` from validated record files (see the module docstring);
    ``command``: the command line that ran the build (recorded in release.json); ``base``: the folder
    the paths it records are shown relative to (default: the current folder; a path outside it is
    shown by its name: :mod:`biaskit.public`). Annotators are pseudonymised (:mod:`.privacy`).

    The pair views are kept on disk while the release is built (:mod:`.views`), in a working folder
    beside ``out`` named as :func:`biaskit.io.atomic_dir` names its own (removed at the end; the next
    build removes one a killed build left)."""
    import shutil

    work = _work_folder(Path(out))
    try:
        return _build_release(records, out, options, command=command, work=work, base=base)
    finally:
        shutil.rmtree(work, ignore_errors=True)


def _work_folder(out: Path) -> Path:
    import os
    import tempfile

    if out.parent.is_dir():
        return Path(tempfile.mkdtemp(prefix=f".{out.name}.tmp-{os.getpid()}-work-", dir=out.parent))
    return Path(tempfile.mkdtemp(prefix="biaskit-release-work-"))


def _build_release(
    records: Sequence[str | Path],
    out: str | Path,
    options: BuildOptions,
    *,
    command: str | None,
    work: Path,
    base: str | Path | None,
) -> BuildSummary:
    """The build in named steps: read, history, split, records, then the folder (:func:`_write_folder`)."""
    from ..inventory import load_inventory
    from .card import read_card_text
    from .history import load_history, summarize_history

    t0 = time.perf_counter()
    o = options
    _check_options(o)
    if o.hub_ready:
        from .hub import check_license

        check_license(o.license)
    out = Path(out)
    pz = _pseudonyms(o, out)
    human, citation = read_card_text(o.card_text), _citation(o.citation)
    lap = _Laps()
    inventory = load_inventory()
    inp = _read_records(records, o, work, inventory)
    lap("read")
    hist_files = load_history(o.history, records=records, auto=o.discover_history)
    hist = summarize_history(hist_files, pseudonyms=pz)
    merged = inp.pairs.merge(o.langs) if inp.pairs is not None else None
    lap("history+merge")
    plan = plan_split(o, inp, merged, inventory)
    lap("targets+split")
    cat_recs, tuple_recs = _other_records(inp, plan, pz, base)
    langs, pair_langs = _release_langs(o, merged, cat_recs, tuple_recs)
    lap("records")
    facts = _Facts(
        o=o,
        created=o.created or _dt.datetime.now(_dt.UTC).date().isoformat(),
        command=command,
        citation=citation,
        human=human,
        inp=inp,
        hist_files=hist_files,
        hist=hist,
        merge_counts=merged.counts if merged is not None else {"duplicates": 0, "not_merged": 0},
        plan=plan,
        langs=langs,
        pair_langs=pair_langs,
        cat_recs=cat_recs,
        tuple_recs=tuple_recs,
    )
    w = _Written()
    warnings, files = _write_folder(out, facts, merged, w, pz=pz, base=base, work=work, lap=lap)
    return BuildSummary(
        out=str(out),
        name=o.name,
        version=o.version,
        counts=w.counts,
        split={k: v for k, v in plan.report.items()},
        files=files,
        warnings=warnings,
        seconds=round(time.perf_counter() - t0, 3),
        timings=lap.times,
    )


class _Laps:
    """Seconds per step of the build (:attr:`BuildSummary.timings`): ``lap(name)`` ends a step."""

    def __init__(self) -> None:
        self.times: dict[str, float] = {}
        self._t = time.perf_counter()

    def __call__(self, name: str) -> None:
        now = time.perf_counter()
        self.times[name] = round(now - self._t, 3)
        self._t = now


def _read_records(records: Sequence[str | Path], o: BuildOptions, work: Path, inventory) -> Any:
    """Every input file read and validated (:func:`.inputs.load_inputs`); each pair's first view
    noted as it is read: its target, where the target came from, and its own split."""
    from .inputs import load_inputs

    def describe(view) -> tuple:
        """What the build needs of a pair's first view, noted as the view is read (not read back)."""
        prov = view.provenance if isinstance(view.provenance, dict) else {}
        return (*pair_target(view, inventory), (view.meta or {}).get("split") or prov.get("release_split"))

    return load_inputs(
        records,
        langs=o.langs,
        kinds=o.kinds,
        keep_flagged=o.keep_flagged,
        skip_invalid=o.skip_invalid,
        work=work / "views",
        describe=describe,
    )


def _other_records(inp, plan: SplitPlan, pz, base: str | Path | None) -> tuple[list[dict], list[dict]]:
    """The released CATs and tuples (plain dicts in the schema's JSON form, annotators pseudonymised,
    paths public), each with its split in ``meta.split``."""
    from .privacy import scrub_record

    cat_recs = []
    for c, sp in zip(inp.cats, plan.cat_splits, strict=False):
        d = scrub_record(c.model_dump(mode="json"), pz, base)
        d["meta"] = {**d.get("meta", {}), "split": sp}
        cat_recs.append(d)
    tuple_recs = []
    for tup, sp in zip(inp.tuples, plan.tuple_splits, strict=False):
        d = scrub_record(tup.model_dump(mode="json"), pz, base)
        d["status"] = "released"
        d["meta"] = {**d.get("meta", {}), "split": sp}
        tuple_recs.append(d)
    return cat_recs, tuple_recs


def _release_langs(
    o: BuildOptions, merged, cat_recs: list[dict], tuple_recs: list[dict]
) -> tuple[list[str], list[str]]:
    """``(the release's languages, those of its pairs)``: English first, else ``--lang``'s order."""
    present = merged.present if merged is not None else set()
    langs = sorted(
        present | {c["lang"] for c in cat_recs} | {t["lang"] for t in tuple_recs},
        key=lambda lg: (lg != "en", lg),
    )
    if o.langs:
        langs = [lg for lg in o.langs if lg in langs] + [lg for lg in langs if lg not in o.langs]
    return langs, [lg for lg in langs if lg in present]


@dataclass
class _Facts:
    """What the steps before the folder found: the inputs of release.json and the card."""

    o: BuildOptions
    created: str
    command: str | None
    citation: str | None
    human: dict[str, str]
    inp: Any
    hist_files: list
    hist: dict[str, Any]
    merge_counts: dict[str, Any]
    plan: SplitPlan
    langs: list[str]
    pair_langs: list[str]
    cat_recs: list[dict]
    tuple_recs: list[dict]


@dataclass
class _Written:
    """What the folder's writers report: rows per file, the record files' SHA-256 (hashed as written),
    the Hub configs and ``release.json``'s ``counts``."""

    rows: dict[str, int] = field(default_factory=dict)
    sha: dict[str, str] = field(default_factory=dict)
    configs: list[dict] = field(default_factory=list)
    counts: dict[str, Any] = field(default_factory=dict)


@dataclass
class _PairFacts:
    """What the pairs' writer notes as they stream past (for the card and the protocol)."""

    stats: Any = None  # .stats.PairStats
    missing_lang: Counter = field(default_factory=Counter)  # records without a view in a language
    origin_keys: Counter = field(default_factory=Counter)  # :func:`_origin_key` per view
    n_both: int = 0  # records with a view in each of the IndiBias CSV's languages


def _write_folder(
    out: Path, f: _Facts, merged, w: _Written, *, pz, base: str | Path | None, work: Path, lap: _Laps
) -> tuple[list[str], list[str]]:
    """Write the release folder whole (:func:`biaskit.io.atomic_dir`); ``(card warnings, files)``."""
    from ..io import atomic_dir
    from ..io import write_json as _wj
    from ..public import public_obj
    from ..redact import redact, redact_obj
    from .card import render_card
    from .export import cat_rows, tuple_rows
    from .history import ProvenanceCounter
    from .stats import compute_stats, write_plots

    o = f.o
    with atomic_dir(out, owns=(L.RELEASE_JSON,)) as tmp:
        prov_acc = ProvenanceCounter()
        pf = _write_pairs(tmp, merged, f, w, prov_acc, pz=pz, base=base, work=work) if merged else _PairFacts()
        for kind, recs in (("cats", f.cat_recs), ("tuples", f.tuple_recs)):
            for r in recs:
                prov_acc.add(r["lang"], r.get("provenance"), r.get("meta"), kind)
        crow, trow = cat_rows(f.cat_recs), tuple_rows(f.tuple_recs)
        for kind, recs, rows, tg in (
            ("cats", f.cat_recs, crow, f.plan.c_targets),
            ("tuples", f.tuple_recs, trow, f.plan.t_targets),
        ):
            if recs:
                _write_kind(tmp, kind, recs, rows, tg, w, default=kind == "cats" and not merged)
        pairs = pf.stats.result(o.keyness) if pf.stats is not None else None
        stats = compute_stats((), crow, trow, keyness=o.keyness, pairs=pairs)
        lap("records+stats")
        notes = _file_notes(bool(merged), f, pf.n_both)
        _write_stereoset(tmp, f.cat_recs, o, w.rows)
        lap("csv+json")
        _wj(tmp / L.STATS, stats)
        plots = [f"{L.PLOTS_DIR}/{p}" for p in write_plots(stats, tmp / L.PLOTS_DIR)] if o.plots else []
        lap("plots")
        notes.update(_FOLDER_NOTES)
        prov = prov_acc.result()
        release = _release_json(f, w, pf, prov)
        # user text (card options, commands) masked; paths (commands, --previous) relative or names
        _wj(tmp / L.RELEASE_JSON, redact_obj(public_obj(release, base)))
        limitations = _limitations(
            len(f.plan.p_target), pf.missing_lang, f.pair_langs, f.plan.how, f.merge_counts, prov, o
        )
        ctx = _card_context(f, release, w, stats=stats, notes=notes, plots=plots, limitations=limitations)
        # a key pasted into --pretty-name/--citation/--card-text: masked; no path of this machine
        card = redact(render_card(public_obj(ctx, base), f.human))
        (tmp / L.README).write_text(card, encoding="utf-8")
        warnings = [f"{L.README}: {line.strip()[:100]}" for line in card.splitlines() if L.TODO_MARK in line]
        lap("card")
        from .croissant import write_croissant

        write_croissant(tmp, known_sha=w.sha)
        if o.hub_ready:
            _refuse_hub_problems(tmp, out)
        lap("croissant")
        files = write_sums(tmp, known=w.sha)
        lap("sums")
    return warnings, files


def _write_pairs(tmp: Path, merged, f: _Facts, w: _Written, prov_acc, *, pz, base, work: Path) -> _PairFacts:
    """The pairs, made one at a time while they are written (pairs.jsonl, Parquet, CSV, statistics,
    provenance in one pass): the release of a large input is written as a stream."""
    from . import export as X
    from .stats import PairStats

    plan, pair_langs = f.plan, f.pair_langs
    pf = _PairFacts(stats=PairStats(work / "stats"))
    indi = indibias_languages()
    fn = L.RECORD_FILES["pairs"]
    by_split = Counter({L.SPLITS[k]: int(n) for k, n in enumerate(np.bincount(plan.p_split, minlength=2))})
    parquet = {
        sp: X.PairParquetWriter(tmp / L.parquet_path("pairs", sp), pair_langs) for sp in L.SPLITS if by_split.get(sp)
    }
    csvs = X.PairCsvWriter(tmp, pair_langs)
    by_split_lang: dict[str, Counter] = {sp: Counter() for sp in L.SPLITS}
    t_names = plan.codes.t_names
    with _RecordWriter(tmp / fn) as jsonl:
        for pos, mp in enumerate(merged.records()):
            sp = L.SPLITS[plan.p_split[pos]]
            r = _pair_record(mp, t_names[plan.p_target[pos]], sp, pz, base)
            jsonl.write(r)
            parquet[sp].add(r)
            csvs.add(pos, r)
            pf.stats.add(r)
            by_split_lang[sp].update(r["views"].keys())
            pf.missing_lang.update(lg for lg in pair_langs if lg not in mp.views)
            pf.n_both += all(lg in mp.views for lg in indi)
            for lg, v in r["views"].items():
                prov_acc.add(lg, v.get("provenance"), v.get("meta"), "pairs")
                pf.origin_keys[_origin_key(v.get("provenance"))] += 1
    w.sha[fn] = jsonl.sha256
    w.rows[fn] = len(plan.p_target)
    conf: dict[str, Any] = {
        "name": "pairs",
        "default": True,
        "data_files": {},
        "splits": {},
        "features": L.pair_columns(pair_langs),
    }
    for sp, writer in parquet.items():  # `datasets` cannot load an empty split: it gets no file and no entry
        rel = L.parquet_path("pairs", sp)
        conf["data_files"][sp] = rel
        conf["splits"][sp] = {"num_examples": by_split[sp], "num_bytes": writer.close()}
        w.rows[rel] = by_split[sp]
    w.configs.append(conf)
    w.rows.update(csvs.close())
    w.counts["pairs"] = plan.pair_counts(by_split, by_split_lang)
    return pf


def _write_kind(
    tmp: Path, kind: str, recs: list[dict], rows: list, targets: list[str], w: _Written, *, default: bool
) -> None:
    """The CATs' or tuples' record file and Parquet files (one per split that has records)."""
    from . import export as X

    fn = L.RECORD_FILES[kind]
    w.sha[fn] = _write_records(tmp / fn, recs)
    w.rows[fn] = len(recs)
    write, features = (
        (X.write_cat_parquet, L.CAT_COLUMNS) if kind == "cats" else (X.write_tuple_parquet, L.TUPLE_COLUMNS)
    )
    conf: dict[str, Any] = {"name": kind, "default": default, "data_files": {}, "splits": {}, "features": None}
    by_split = {sp: [i for i, r in enumerate(recs) if r["meta"]["split"] == sp] for sp in L.SPLITS}
    for sp, idx in by_split.items():
        if not idx:
            continue  # `datasets` cannot load an empty split: it gets no file and no config entry
        rel = L.parquet_path(kind, sp)
        conf["features"] = features
        conf["data_files"][sp] = rel
        conf["splits"][sp] = {"num_examples": len(idx), "num_bytes": write(tmp / rel, [rows[i] for i in idx])}
        w.rows[rel] = len(idx)
    w.configs.append(conf)
    w.counts[kind] = {
        "records": len(recs),
        "by_split": {sp: len(ix) for sp, ix in by_split.items()},
        "targets": len(set(targets)),
        "targets_by_split": {sp: len({targets[i] for i in ix}) for sp, ix in by_split.items()},
        "by_split_lang": {sp: dict(Counter(recs[i]["lang"] for i in ix)) for sp, ix in by_split.items()},
    }


def _cat_langs(cat_recs: list[dict]) -> list[str]:
    return sorted({c["lang"] for c in cat_recs}, key=lambda lg: (lg != "en", lg))


def _write_stereoset(tmp: Path, cat_recs: list[dict], o: BuildOptions, rows: dict[str, int]) -> None:
    """The CATs in StereoSet's JSON layout, per language and split (the first language unsuffixed)."""
    from . import export as X

    cat_langs = _cat_langs(cat_recs)
    for lg in cat_langs:
        for sp in L.SPLITS:
            rel = L.stereoset_path(sp, None if lg == cat_langs[0] else lg)
            rows[rel] = X.write_stereoset_json(
                tmp / rel,
                [c for c in cat_recs if c["meta"]["split"] == sp and c["lang"] == lg],
                f"{o.name}-{o.version}" + ("" if lg == cat_langs[0] else f"-{lg}"),
            )


def _file_notes(has_pairs: bool, f: _Facts, n_both: int) -> dict[str, str]:
    """The card's notes on the record files and their exports (what each holds)."""
    notes: dict[str, str] = {}
    if has_pairs:
        notes[L.RECORD_FILES["pairs"]] = (
            "biaskit ReleasePair records, one per pair: id, split, bias_type, "
            "direction, target, source_id, status, views {lang: sent_more, "
            "sent_less, pair_id, group_more, group_less, provenance, meta}"
        )
        notes["data/pairs-{dev,test}.parquet"] = "config `pairs`: " + ", ".join(L.pair_columns(f.pair_langs))
        notes["csv/crows-<lang>-<split>.csv"] = (
            "CrowS-Pairs columns " + ",".join(L.CROWS_COLUMNS) + " (first column: the pair's row in pairs.jsonl)"
        )
        indi = indibias_languages()
        if all(lg in f.pair_langs for lg in indi):  # the IndiBias CSV's languages are all released
            views = " and ".join(("an " if name_of(lg)[:1] in "AEIOU" else "a ") + name_of(lg) for lg in indi)
            notes["csv/indibias-<split>.csv"] = (
                "IndiBias columns " + ",".join(L.INDIBIAS_COLUMNS) + f" ({n_both} pairs with both {views} "
                "view; index = the pair's row in pairs.jsonl; as in IndiBias, the *_more* columns "
                "hold S1 and the *_less* columns S2, so an antistereo pair's sent_less is in the *_more* columns)"
            )
    if f.cat_recs:
        notes[L.RECORD_FILES["cats"]] = "biaskit CAT records (meta.split = dev|test)"
        notes["data/cats-{dev,test}.parquet"] = "config `cats`: " + ", ".join(L.CAT_COLUMNS)
        cat_langs = _cat_langs(f.cat_recs)
        notes["stereoset/{dev,test}.json"] = (
            f"StereoSet's original JSON layout (version, data.intrasentence, data.intersentence), the "
            f"'{cat_langs[0]}' CATs: `evaluation.py` of the StereoSet repository reads it"
        )
        for lg in cat_langs[1:]:
            notes[f"stereoset/{{dev,test}}.{lg}.json"] = (
                f"the same layout for the '{lg}' CATs (each CAT's `source_id` in cats.jsonl is its source CAT)"
            )
    if f.tuple_recs:
        notes[L.RECORD_FILES["tuples"]] = "biaskit BiasTuple records (meta.split = dev|test)"
        notes["data/tuples-{dev,test}.parquet"] = "config `tuples`: " + ", ".join(L.TUPLE_COLUMNS)
    return notes


_FOLDER_NOTES = {
    L.STATS: "statistics (counts, sentence lengths, vocabulary, keyness) with their definitions",
    L.RELEASE_JSON: "name, version, date, counts, versions, the build command, inputs",
    L.SUMS: "SHA-256 of every other file (`sha256sum -c SHA256SUMS`)",
    L.CROISSANT: "Croissant 1.1 metadata (MLCommons) with the datasheet's RAI fields: record sets "
    "per config, splits, checksums, licence, citation",
}


def _release_json(f: _Facts, w: _Written, pf: _PairFacts, prov: dict[str, Any]) -> dict[str, Any]:
    """``release.json`` (before its text is made public)."""
    o, plan = f.o, f.plan
    protocol, protocol_from = _protocol(o, pf.origin_keys, f.cat_recs)
    return {
        "name": o.name,
        "version": o.version,
        "created": f.created,
        "format_version": L.FORMAT_VERSION,
        # the paper protocol `biaskit evaluate` follows by default on this release (docs/fidelity.md)
        "protocol": protocol,
        "protocol_from": protocol_from,
        "schema_version": SCHEMA_VERSION,
        "biaskit_version": __version__,
        "license": o.license,
        "langs": f.langs,
        "counts": w.counts,
        "split": {
            "policy": o.split_policy,
            "dev_fraction": o.dev_fraction,
            "seed": o.seed,
            "previous": str(o.previous) if o.previous else None,
            "unit": "target term",
            "targets_from": dict(plan.how),
            **plan.report,
        },
        "data_files": {fn: w.sha[fn] for fn in L.RECORD_FILES.values() if fn in w.sha},
        "rows": w.rows,
        "build": {
            "command": f.command,
            "stage_commands": [
                r.get("command") for h in f.hist_files if h.kind == "runlog" for r in h.data if r.get("command")
            ],
        },
        "inputs": [x.as_dict() for x in f.inp.files],
        "history": f.hist,
        "provenance": prov,
        "merge": f.merge_counts,
        "retention": _retention(f.inp, f.hist, w.counts, f.merge_counts),
        "flags_dropped": dict(f.inp.flags_dropped),  # a flag without a code counts under None
        # e-mail addresses the maintainers wrote into the card themselves (contacts): `release verify`
        # allows these in the card, croissant.json and here, nowhere else
        "public_addresses": _public_addresses(f.human, f.citation, o),
    }


def _card_context(
    f: _Facts,
    release: dict[str, Any],
    w: _Written,
    *,
    stats: dict,
    notes: dict[str, str],
    plots: list[str],
    limitations: list[str],
) -> dict[str, Any]:
    """What :func:`.card.render_card` reads (before its text is made public)."""
    return {
        "options": {
            **f.o.model_dump(),
            "command": f.command,
            "created": f.created,
            "citation": f.citation,
            "protocol": release["protocol"],
        },
        "langs": f.langs,
        "counts": w.counts,
        "stats": stats,
        "history": f.hist,
        "provenance": release["provenance"],
        "configs": w.configs,
        "file_notes": notes,
        "data_sha256": release["data_files"],
        "retention": release["retention"],
        "flags_dropped": release["flags_dropped"],
        "limitations": limitations,
        "plots": plots,
        "biaskit_version": __version__,
        "split_report": f.plan.report,
        "n_targets": len(set(f.plan.codes.t_names)),
        "targets_from": ", ".join(f"{v} from {k}" for k, v in f.plan.how.most_common()) or "CAT/tuple targets",
    }


def _refuse_hub_problems(tmp: Path, out: Path) -> None:
    """``--hub-ready``: stop before the release is published when the Hub would reject it."""
    from .hub import hub_problems

    problems = [p.replace(str(tmp), str(out)) for p in hub_problems(tmp)]
    if problems:
        more = f" (and {len(problems) - 1} more)" if len(problems) > 1 else ""
        raise InputError(
            f"not ready for the Hugging Face Hub{more}: {problems[0]}",
            fix="fix it and build again; nothing was published (the previous release is unchanged).",
        )


def write_sums(folder: Path, known: dict[str, str] | None = None) -> list[str]:
    """Write ``SHA256SUMS`` (``<hex>  <path>`` lines, sorted, ``sha256sum -c`` format) over every
    other file of ``folder``; return the relative paths. ``known``: ``{relative path: sha256}`` of
    files hashed as they were written (not read again)."""
    from ..io import sha256_file

    known = known or {}
    rels = sorted(p.relative_to(folder).as_posix() for p in folder.rglob("*") if p.is_file() and p.name != L.SUMS)
    (folder / L.SUMS).write_text(
        "".join(f"{known.get(r) or sha256_file(folder / r)}  {r}\n" for r in rels), encoding="utf-8"
    )
    return rels + [L.SUMS]


class _RecordWriter:
    """A record file written one record at a time (pydantic_core's Rust JSON encoder, compact UTF-8),
    hashed from the bytes as they are written (``sha256`` once closed)."""

    BLOCK = 4096  # records per write

    def __init__(self, path: Path, block: int | None = None):
        import hashlib

        self.path, self.block = path, block or self.BLOCK
        self._h = hashlib.sha256()
        self._buf: list[bytes] = []
        self.sha256 = ""

    def __enter__(self) -> _RecordWriter:
        self._fh = open(self.path, "wb")
        return self

    def write(self, rec: dict) -> None:
        from pydantic_core import to_json

        self._buf.append(to_json(rec) + b"\n")
        if len(self._buf) >= self.block:
            self._flush()

    def _flush(self) -> None:
        data = b"".join(self._buf)
        self._h.update(data)
        self._fh.write(data)
        self._buf = []

    def __exit__(self, *exc) -> None:
        self._flush()
        self._fh.close()
        self.sha256 = self._h.hexdigest()


def _write_records(path: Path, recs: Sequence[dict], block: int = 4096) -> str:
    """Write record dicts as JSON lines (pydantic_core's Rust JSON encoder: compact UTF-8) and return
    the file's SHA-256, hashed from the bytes as they are written."""
    import hashlib

    from pydantic_core import to_json

    h = hashlib.sha256()
    with open(path, "wb") as fh:
        for i in range(0, len(recs), block):
            data = b"".join([to_json(r) + b"\n" for r in recs[i : i + block]])
            h.update(data)
            fh.write(data)
    return h.hexdigest()


_STRIP_PROV = frozenset(("release_id", "release_split", "release_source_id"))
_STRIP_META = frozenset(("target", "split"))


def _without(d: dict | None, keys: frozenset) -> dict:
    """A copy of ``d`` without ``keys``, in ``d``'s order (when none of them is there, the common case: a
    plain copy)."""
    if not d:
        return {}
    if keys.isdisjoint(d):
        return dict(d)
    return {k: v for k, v in d.items() if k not in keys}


def _public_addresses(human: dict[str, str], citation: str | None, o: BuildOptions) -> list[str]:
    from ..public import EMAIL

    texts = [*human.values(), citation or "", o.pretty_name or "", o.license or ""]
    return sorted({m.group(0) for t in texts for m in EMAIL.finditer(t)})


def _pseudonyms(o: BuildOptions, out: Path):
    """The annotators' pseudonyms of this release (:mod:`.privacy`): keyed by the key file given, else
    ``.biaskit/release.key`` beside the release folder; never a key inside the folder (it would ship)."""
    from .privacy import KEY_FILE, Pseudonyms

    key_file = Path(o.pseudonym_key) if o.pseudonym_key else out.parent / ".biaskit" / KEY_FILE
    try:
        inside = key_file.resolve().is_relative_to(out.resolve())
    except OSError:
        inside = False
    if inside:
        raise InputError(
            "the pseudonym key would be published with the release (it is inside the release folder).",
            path=key_file,
            fix=f"keep it outside the release: {say('pseudonym_key', '.biaskit/release.key')}.",
        )
    return Pseudonyms(key_file, o.name)  # the key file is read or created when the first person is named


def _pair_record(mp, target: str, split: str, pz=None, base: str | Path | None = None) -> dict[str, Any]:
    from .privacy import needs_scrub, scrub

    prim = mp.primary
    views = {}
    for lg, p in mp.views.items():
        prov = _without(p.provenance, _STRIP_PROV)
        meta = _without(p.meta, _STRIP_META)
        if pz is not None and needs_scrub(p.extra_json):  # annotators or paths: pseudonyms, public paths
            prov, meta = scrub(prov, pz, base), scrub(meta, pz, base)
        views[lg] = {
            "sent_more": p.sent_more,
            "sent_less": p.sent_less,
            "pair_id": p.pair_id,
            "group_more": p.group_more,
            "group_less": p.group_less,
            "provenance": prov,
            "meta": meta,
        }
    return {
        "id": mp.id,
        "split": split,
        "bias_type": prim.bias_type,
        "direction": prim.direction,
        "target": target,
        "source_id": mp.source_id,
        "status": "released",
        "views": views,
        "provenance": {},
        "meta": {},
    }


def _retention(inp, hist: dict, counts: dict, merge_counts: dict) -> list[dict]:
    """The card's retention table: what each stage kept, from the stage reports (generation, earlier
    records, adaptation, check, validation and what it dropped), the input files read, and the release."""
    rows = _stage_rows(hist)
    if not any(r["stage"].startswith("generated") for r in rows):
        rows.insert(0, _row("generated", None, "no generation run log given", L.NOT_RECORDED))
    if not hist["check"]:
        rows.append(_row("checked", None, "no checker output given", L.NOT_RECORDED))
    if not hist["apply"]:
        rows.append(_row("validated", None, "no `annotate apply` summary given", L.NOT_RECORDED))
    rows += [_input_row(f) for f in inp.files]
    for kind, c in counts.items():
        dup = merge_counts.get("duplicates") if kind == "pairs" else 0
        detail = ", ".join(f"{sp} {n}" for sp, n in c["by_split"].items())
        rows.append(
            _row(
                f"released ({kind})",
                c["records"],
                detail + (f"; {dup} duplicate language views dropped" if dup else ""),
                "this release",
            )
        )
    return rows


def _row(stage: str, records: Any, detail: str, source: str) -> dict[str, Any]:
    return {"stage": stage, "records": records, "detail": detail, "source": source}


def _statuses(by_status: dict) -> str:
    return ", ".join(f"{k} {v}" for k, v in by_status.items())


_APPLY_DETAIL = ("records", "rejected", "needs_adjudication", "not_annotated", "needs_review", "not_reviewed")


def _stage_rows(hist: dict) -> list[dict]:
    """One retention row per stage report, in the pipeline's order."""
    rows = [
        _row(f"generated ({g['label']})", g["rows"], f"{g['jobs']} LLM jobs, {g['runs']} run(s)", g["file"])
        for g in hist["generation"]
    ]
    rows += [_row(r["label"], r["records"], _statuses(r["by_status"]), r["file"]) for r in hist["records"]]
    rows += [
        _row(
            "CrowS-Pairs adaptation",
            a.get("kept"),
            f"read {a.get('read')}, flagged {a.get('flagged')}, dropped {a.get('dropped')}",
            a["file"],
        )
        for a in hist["adapt"]
    ]
    for c in hist["check"]:
        views = f" ({c['views']} language views)" if c.get("views", c["pairs"]) != c["pairs"] else ""
        rows.append(_row("checked", c["pairs"], f"{c['passed']} passed, {c['flagged']} flagged{views}", c["file"]))
    for a in hist["apply"]:
        detail = ", ".join(f"{k.replace('_', ' ')} {a[k]}" for k in _APPLY_DETAIL if a.get(k) is not None)
        rows.append(_row("validated", a.get("accepted"), detail, a["file"]))
    rows += [
        _row(f"not validated ({d['label']})", d["records"], _statuses(d["by_status"]), d["file"])
        for d in hist["apply_dropped"] + hist["translation_dropped"]
    ]
    return rows


def _input_row(f) -> dict[str, Any]:
    """The retention row of one input file: what was read and what was not released."""
    ex = ", ".join(f"{k} {v}" for k, v in f.excluded.items())
    views = f"{f.records} language views; " if f.kind == "pairs" and f.pairs != f.records else ""
    return _row(
        f"read for release ({f.kind})",
        f.pairs if f.kind == "pairs" and f.pairs is not None else f.records,
        views
        + (f"not released (views): {ex}" if ex and views else f"not released: {ex}" if ex else "all kept")
        + (f"; {f.skipped_invalid} invalid skipped" if f.skipped_invalid else ""),
        Path(f.path).name,
    )


def _limitations(n_pairs: int, missing: Counter, langs, how: Counter, merge_counts, prov, o: BuildOptions) -> list[str]:
    """``missing``: per language, the pair records without a view in it."""
    out = []
    if len(langs) > 1:
        for lg in langs:
            miss = missing.get(lg, 0)
            if miss:
                out.append(f"{miss} of {n_pairs} pairs have no '{lg}' view.")
    derived = how.get("checker", 0) + how.get("changed words", 0)
    if derived:
        out.append(
            f"The target term of {derived} pairs was derived from the word diff (no group_more was "
            "recorded); a target can be a pronoun or name rather than a group label."
        )
    if how.get("none"):
        out.append(f"{how['none']} pairs have no identifiable target term (grouped under '(none)').")
    if merge_counts.get("not_merged"):
        out.append(
            f"{merge_counts['not_merged']} language views disagree with their pair's direction or bias type "
            "and are released as separate records."
        )
    if prov.get("direction_changed_by_annotators"):
        out.append(
            f"Annotators changed the direction of {prov['direction_changed_by_annotators']} views "
            "(`meta.annotation.direction_before`)."
        )
    if o.keep_flagged:
        out.append("Pairs flagged by the minimal-pair checker were kept (--keep-flagged).")
    return out


def _origin_key(prov: Any) -> tuple:
    """What :func:`biaskit.origin.protocol_of_provenance` reads of a view's provenance (counted while
    the pairs stream past, instead of keeping every provenance)."""
    prov = prov if isinstance(prov, dict) else {}
    return (prov.get("release_source"), prov.get("source"), prov.get("format"), bool(prov.get("adapted_by")))


def _protocol(o: BuildOptions, origin_keys: Counter, cat_recs: list) -> tuple[str | None, str]:
    """The protocol release.json records: the one asked for, else the records' origin (or None).
    ``origin_keys``: :func:`_origin_key` of every released pair view, counted."""
    if o.protocol:
        return (None if o.protocol == "none" else o.protocol), "build option"
    import itertools

    from ..origin import protocol_of_provenance

    views = (
        {"release_source": a, "source": b, "format": c, "adapted_by": d or None}
        for (a, b, c, d), n in origin_keys.items()
        for _ in range(n)
    )
    provs = itertools.chain(views, (c.get("provenance") for c in cat_recs))
    name, what = protocol_of_provenance(provs)
    return name, what
