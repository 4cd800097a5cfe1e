"""``verify_release``: is a release folder intact and complete?

Checks, each problem one line naming the file (and row) and the fix:

- ``SHA256SUMS``: every listed file exists with that checksum, and no file is unlisted;
- the schema of every row of ``pairs.jsonl`` / ``cats.jsonl`` / ``tuples.jsonl`` (ids unique, split
  ``dev``/``test``), and the Parquet files' row counts per split against the records;
- split disjointness: no target term in both splits (StereoSet §6.1);
- ``release.json`` against the files: its date is a real date, each record file's SHA-256 in
  ``data_files``, the records per kind, split and language in ``counts``, and the rows of every
  file in ``rows`` (JSONL, Parquet, CSV, StereoSet JSON) are what the files hold -- so an edit of a
  file and ``SHA256SUMS`` together is still caught;
- the card: YAML front matter with the required keys, configs whose files exist, the datasheet and
  data-statement headings;
- privacy (:mod:`.scan`): no e-mail address, absolute path, user name of this machine or secret in
  any file, row or Parquet column.

Card sections still marked ``[TO BE WRITTEN BY THE MAINTAINERS: ...]`` and an ``unknown`` licence
are *warnings*, not problems.
"""

from __future__ import annotations

import re
from collections.abc import Callable
from dataclasses import dataclass, field
from pathlib import Path
from typing import TYPE_CHECKING, Any

from ..errors import InputError
from . import layout as L
from .gcpause import without_gc
from .meta import card_front_matter  # re-exported (the card's front matter is read in .meta)

if TYPE_CHECKING:
    from .options import ReleaseVerifyOptions

MAX_ROW_PROBLEMS = 20  # per file: the first ones, then a count

#: a check each record of ``pairs.jsonl``, ``cats.jsonl`` and ``tuples.jsonl`` goes through in verify's one
#: pass over the file: ``check(kind, path, row, record, res)`` (``record``: the validated model; a problem
#: is ``res.add(...)``). A new per-record check is one more entry in :func:`record_checks`.
RecordCheck = Callable[[str, Path, int, Any, "VerifyResult"], None]


def record_checks() -> list[RecordCheck]:
    """The per-record checks beyond the schema, ids, status and splits, in the order they run."""
    return []


@dataclass
class VerifyResult:
    path: str
    problems: list[str] = field(default_factory=list)
    warnings: list[str] = field(default_factory=list)
    checked: dict[str, Any] = field(default_factory=dict)

    @property
    def ok(self) -> bool:
        return not self.problems

    def add(
        self, message: str, *, path: str | Path | None = None, row: int | None = None, fix: str | None = None
    ) -> None:
        self.problems.append(str(InputError(message, path=path, row=row, fix=fix)))

    def summary(self) -> str:
        c = self.checked
        recs = ", ".join(f"{n} {k}" for k, n in c.get("records", {}).items())
        return (
            f"{self.path}: OK ({c.get('name')} {c.get('version')}): {c.get('files', 0)} files match SHA256SUMS; "
            f"{recs or 'no records'} valid; splits disjoint by target ({c.get('targets', 0)} targets); no "
            "e-mail address, machine path or secret; card "
            + (
                f"complete, with {len(self.warnings)} warning{'s' if len(self.warnings) != 1 else ''} (above)"
                if self.warnings
                else "complete"
            )
        )


def verify_release(path: str | Path, options: ReleaseVerifyOptions | None = None) -> VerifyResult:
    """Check the release folder ``path`` (the module docstring); ``options.hub_ready``: also what the
    Hugging Face Hub would reject (:func:`.hub.hub_problems`)."""
    res = _verify_release(path)
    if options is not None and options.hub_ready:
        from .hub import hub_problems

        res.problems += [x for x in hub_problems(path) if x not in res.problems]  # a damaged card: said once
    return res


@without_gc
def _verify_release(path: str | Path) -> VerifyResult:
    p = Path(path)
    res = VerifyResult(path=str(p))
    _SHA.clear()
    if not p.is_dir():
        res.add("not a folder.", path=p, fix="pass the release folder written by `biaskit release build`.")
        return res
    if not (p / L.RELEASE_JSON).exists() and not (p / L.SUMS).exists():  # not a damaged release: no release at all
        raise InputError(
            f"not a biaskit release: no {L.RELEASE_JSON}.",
            path=p,
            fix="pass a folder written by `biaskit release build`.",
        )
    from .meta import check_links

    check_links(p)  # nothing below reads through a link out of the release
    meta = _release_json(p, res)
    _sums(p, res)
    targets: dict[str, set[str]] = {}
    split_counts: dict[str, dict[str, int]] = {}
    _pairs(p, res, targets, split_counts)
    _others(p, res, targets, split_counts)
    leaks = {t: s for t, s in targets.items() if len(s) > 1}
    if leaks:
        t = sorted(leaks)[0]
        res.add(
            f"target term '{t}' is in both dev and test ({len(leaks)} target(s) leak).",
            path=p,
            fix="rebuild with `biaskit release build` (splits by target term), without --split-policy keep.",
        )
    res.checked["targets"] = len(targets)
    _parquet(p, res, split_counts)
    if meta:
        _cross_check(p, res, meta, split_counts)
    _card(p, res)
    _croissant(p, res)
    from .scan import scan_release  # no person, machine path or secret in any file (docs/release.md, Privacy)

    res.problems += scan_release(p)
    if meta:
        res.checked["name"], res.checked["version"] = meta.get("name"), meta.get("version")
    return res


def _release_json(p: Path, res: VerifyResult) -> dict | None:
    from .meta import read_release_json

    f = p / L.RELEASE_JSON
    if not f.exists():
        res.add("missing.", path=f, fix="rebuild the release with `biaskit release build`.")
        return None
    try:
        meta = read_release_json(p)  # structure and types (a damaged file is one problem, not a crash)
    except InputError as exc:
        res.problems.append(str(exc))
        return None
    for k in ("name", "version", "created", "schema_version", "biaskit_version", "counts"):
        if k not in meta:
            res.add(f"lacks '{k}'.", path=f, fix="rebuild the release with `biaskit release build`.")
    return meta


def _sums(p: Path, res: VerifyResult) -> None:
    from .read import read_sums

    f = p / L.SUMS
    if not f.exists():
        res.add("missing.", path=f, fix="rebuild the release with `biaskit release build`.")
        return
    try:
        sums = read_sums(p)
    except InputError as exc:
        res.problems.append(str(exc))
        return
    fix = "restore the file from the published release, or rebuild it (any edit needs a rebuild)."
    for rel, want in sums.items():
        fp = p / rel
        if not fp.is_file():
            res.add("listed in SHA256SUMS but missing.", path=fp, fix=fix)
        elif _sha256(fp) != want:
            res.add("checksum does not match SHA256SUMS (the file was changed).", path=fp, fix=fix)
    present = {x.relative_to(p).as_posix() for x in p.rglob("*") if x.is_file() and x.name != L.SUMS}
    for rel in sorted(present - set(sums)):
        res.add("not listed in SHA256SUMS.", path=p / rel, fix="remove it, or rebuild the release to include it.")
    res.checked["files"] = len(sums)


_SHA: dict[tuple, str] = {}  # (path, size, mtime) -> SHA-256, for one verify_release (files read once)


def _sha256(path: Path) -> str:
    """A file's SHA-256, computed once per verification (SHA256SUMS, release.json and croissant.json
    all name the record files: a release of 800 MB is read once, not three times)."""
    from ..io import sha256_file

    st = path.stat()
    key = (str(path), st.st_size, st.st_mtime_ns)
    hit = _SHA.get(key)
    if hit is None:
        hit = _SHA[key] = sha256_file(path)
    return hit


_NORM_TARGET: dict[str, str] = {}


def _note_target(targets: dict, t: Any, sp: Any) -> None:
    from .split import norm_target

    if t:
        t = str(t)
        key = _NORM_TARGET.get(t)
        if key is None:  # a release has far fewer targets than records: normalise each spelling once
            if len(_NORM_TARGET) > 100_000:
                _NORM_TARGET.clear()
            key = _NORM_TARGET[t] = norm_target(t)
        targets.setdefault(key, set()).add(str(sp))


def _pairs(p: Path, res: VerifyResult, targets: dict, split_counts: dict) -> None:
    from pydantic import ValidationError

    from ..schema import ReleasePair

    f = p / L.RECORD_FILES["pairs"]
    if not f.exists():
        return
    fix = "rebuild the release from the validated records (`biaskit release build`)."
    bad = 0
    seen = SeenIds()
    counts = {sp: 0 for sp in L.SPLITS}
    by_lang: dict[tuple[str, str], int] = {}
    n = 0
    validate = ReleasePair.model_validate_json
    checks = record_checks()
    with open(f, "rb") as fh:
        for row, line in enumerate(fh, start=1):
            if not line.strip():
                continue
            n += 1
            try:
                rec = validate(line)
            except ValidationError as exc:
                bad += 1
                if bad <= MAX_ROW_PROBLEMS:
                    e = exc.errors()[0]
                    loc = ".".join(str(x) for x in e.get("loc", ()))
                    res.add(
                        f"not a valid released pair: {loc + ': ' if loc else ''}{e.get('msg')}.",
                        path=f,
                        row=row,
                        fix=fix,
                    )
                continue
            seen.add(rec.id, row)
            if rec.status != "released":
                res.add(f"status is '{rec.status}', expected 'released'.", path=f, row=row, fix=fix)
            counts[rec.split] += 1
            for lg in rec.views:
                key = (rec.split, lg)
                by_lang[key] = by_lang.get(key, 0) + 1
            _note_target(targets, rec.target, rec.split)
            for check in checks:
                check("pairs", f, row, rec, res)
    if bad > MAX_ROW_PROBLEMS:
        res.add(f"{bad - MAX_ROW_PROBLEMS} more invalid rows.", path=f, fix=fix)
    for row, rid in seen.repeats(lambda: _pair_ids(f)):
        res.add(f"duplicate id {rid}.", path=f, row=row, fix=fix)
    split_counts["pairs"] = counts
    split_counts["pairs_by_lang"] = by_lang
    res.checked.setdefault("records", {})["pairs"] = n


def _pair_ids(f: Path):
    """``(row, id)`` of every released pair of ``pairs.jsonl`` that parses (read again for repeated ids)."""
    from pydantic import ValidationError

    from ..schema import ReleasePair

    with open(f, "rb") as fh:
        for row, line in enumerate(fh, start=1):
            if line.strip():
                try:
                    yield row, ReleasePair.model_validate_json(line).id
                except ValidationError:
                    continue


class SeenIds:
    """Ids of a file's records, checked for repeats in memory of 8 bytes per record: a 64-bit digest of
    each, sorted at the end; only a digest that comes back sends the file to be read again, where the
    ids themselves are compared (a shared digest is no repeat). ``repeats`` gives ``(row, id)`` of every
    record whose id an earlier record has, in file order."""

    def __init__(self) -> None:
        from array import array

        self._digests = array("Q")

    def add(self, rid: str, row: int) -> None:
        import hashlib

        self._digests.append(int.from_bytes(hashlib.blake2b(rid.encode(), digest_size=8).digest(), "little"))

    def repeats(self, rescan) -> list[tuple[int, str]]:
        import hashlib

        import numpy as np

        d = np.frombuffer(self._digests, dtype=np.uint64) if len(self._digests) else np.zeros(0, np.uint64)
        srt = np.sort(d)
        twice = set(srt[1:][srt[1:] == srt[:-1]].tolist())
        if not twice:
            return []
        out, first = [], set()
        for row, rid in rescan():
            if int.from_bytes(hashlib.blake2b(rid.encode(), digest_size=8).digest(), "little") not in twice:
                continue
            if rid in first:
                out.append((row, rid))
            first.add(rid)
        return out


def _others(p: Path, res: VerifyResult, targets: dict, split_counts: dict) -> None:
    from pydantic import ValidationError

    from ..io import iter_jsonl
    from ..schema import CAT, BiasTuple

    for kind, model, tkey, idkey in (("cats", CAT, "target", "cat_id"), ("tuples", BiasTuple, "identity", "tuple_id")):
        f = p / L.RECORD_FILES[kind]
        if not f.exists():
            continue
        fix = "rebuild the release from the validated records (`biaskit release build`)."
        counts = {sp: 0 for sp in L.SPLITS}
        seen = SeenIds()
        checks = record_checks()
        n = 0
        try:
            for row, obj in iter_jsonl(f):
                n += 1
                try:
                    rec = model.model_validate(obj)
                except ValidationError as exc:
                    e = exc.errors()[0]
                    res.add(
                        f"not a valid {kind[:-1]}: {'.'.join(str(x) for x in e.get('loc', ()))}: {e.get('msg')}.",
                        path=f,
                        row=row,
                        fix=fix,
                    )
                    continue
                sp = (rec.meta or {}).get("split")
                if sp not in L.SPLITS:
                    res.add(f"meta.split is {sp!r}, expected dev or test.", path=f, row=row, fix=fix)
                    continue
                seen.add(getattr(rec, idkey), row)
                counts[sp] += 1
                _note_target(targets, getattr(rec, tkey), sp)
                for check in checks:
                    check(kind, f, row, rec, res)
        except InputError as exc:
            res.problems.append(str(exc))
        for row, rid in seen.repeats(lambda f=f, model=model, idkey=idkey: _record_ids(f, model, idkey)):
            res.add(f"duplicate id {rid}.", path=f, row=row, fix=fix)
        split_counts[kind] = counts
        res.checked.setdefault("records", {})[kind] = n


def _record_ids(f: Path, model, idkey: str):
    """``(row, id)`` of every valid record of a CAT or tuple file with a split (read again for repeated ids)."""
    from pydantic import ValidationError

    from ..io import iter_jsonl

    try:
        for row, obj in iter_jsonl(f):
            try:
                rec = model.model_validate(obj)
            except ValidationError:
                continue
            if (rec.meta or {}).get("split") in L.SPLITS:
                yield row, getattr(rec, idkey)
    except InputError:
        return


def _parquet(p: Path, res: VerifyResult, split_counts: dict) -> None:
    for kind, counts in split_counts.items():
        if kind not in L.KINDS:
            continue
        for sp, n in counts.items():
            f = p / L.parquet_path(kind, sp)
            if not f.exists():
                if n:  # an empty split has no file (Hugging Face `datasets` cannot load one)
                    res.add("missing.", path=f, fix="rebuild the release with `biaskit release build`.")
                continue
            try:
                import pyarrow.parquet as pq

                rows = pq.read_metadata(f).num_rows
            except Exception as exc:  # a corrupt file
                res.add(f"not a readable Parquet file ({type(exc).__name__}).", path=f, fix="rebuild the release.")
                continue
            if rows == 0:
                res.add(
                    f"split '{sp}' is empty: Hugging Face `datasets.load_dataset` fails on an empty split.",
                    path=f,
                    fix="rebuild the release with this biaskit (`biaskit release build`): it leaves "
                    "empty splits out and never makes one when there are two targets or more.",
                )
            elif rows != n:
                res.add(
                    f"{rows} rows, but {L.RECORD_FILES[kind]} has {n} {kind} in split '{sp}'.",
                    path=f,
                    fix="rebuild the release with `biaskit release build`.",
                )


def valid_date(value: Any) -> bool:
    """``YYYY-MM-DD`` naming a day that exists (``2025-13-45`` does not)."""
    import datetime as _dt

    if not isinstance(value, str) or not re.fullmatch(r"\d{4}-\d{2}-\d{2}", value):
        return False
    try:
        _dt.date.fromisoformat(value)
    except ValueError:
        return False
    return True


def _file_rows(f: Path) -> int | None:
    """Data rows of a release file (JSONL lines, Parquet rows, CSV rows without the header, StereoSet
    examples), or None when the file cannot be read."""
    try:
        if f.suffix == ".parquet":
            import pyarrow.parquet as pq

            return pq.read_metadata(f).num_rows
        if f.suffix == ".jsonl":
            with open(f, "rb") as fh:
                return sum(1 for line in fh if line.strip())
        if f.suffix == ".csv":
            import csv

            with open(f, encoding="utf-8", newline="") as fh:
                return max(0, sum(1 for _ in csv.reader(fh)) - 1)
        if f.suffix == ".json":
            import json

            with open(f, encoding="utf-8") as fh:
                data = json.load(fh).get("data") or {}
            return sum(len(v) for v in data.values())
    except Exception:  # a damaged file: the checks above name it
        return None
    return None


def _cross_check(p: Path, res: VerifyResult, meta: dict, split_counts: dict) -> None:
    """``release.json`` against the files (see the module docstring)."""
    from ..paths import inside

    f = p / L.RELEASE_JSON
    fix = "rebuild the release with `biaskit release build` (release.json is written by the build, never by hand)."
    created = meta.get("created")
    if "created" in meta and not valid_date(created):
        res.add(f"'created' is {created!r}, not a date (YYYY-MM-DD).", path=f, fix=fix)
    data_files = meta["data_files"] if isinstance(meta.get("data_files"), dict) else {}
    counts = meta["counts"] if isinstance(meta.get("counts"), dict) else {}
    for kind, fn in L.RECORD_FILES.items():
        rf = p / fn
        if not rf.is_file():
            if fn in data_files or kind in counts:
                res.add(f"names {fn}, which the release does not hold.", path=f, fix=fix)
            continue
        if fn not in data_files:
            res.add(f"'data_files' does not list {fn}.", path=f, fix=fix)
        elif _sha256(rf) != data_files[fn]:
            res.add(
                f"'data_files' gives another SHA-256 for {fn} than the file has (the file or release.json was "
                "changed).",
                path=f,
                fix=fix,
            )
        c = counts.get(kind)
        if not isinstance(c, dict):
            res.add(f"'counts' has no entry for {kind} ({fn} is there).", path=f, fix=fix)
            continue
        have = split_counts.get(kind) or {}
        total = sum(have.values())
        if c.get("records") != total:
            res.add(f"'counts.{kind}.records' is {c.get('records')}, but {fn} holds {total}.", path=f, fix=fix)
        for sp in L.SPLITS:
            want = (c.get("by_split") or {}).get(sp, 0)
            if want != have.get(sp, 0):
                res.add(
                    f"'counts.{kind}.by_split.{sp}' is {want}, but {fn} holds {have.get(sp, 0)} {kind} in split "
                    f"'{sp}'.",
                    path=f,
                    fix=fix,
                )
        if kind == "pairs":
            by_lang = split_counts.get("pairs_by_lang") or {}
            given = {
                (sp, lg): n for sp, d in (c.get("by_split_lang") or {}).items() for lg, n in (d or {}).items() if n
            }
            for key in sorted(set(given) | set(by_lang)):
                if given.get(key, 0) != by_lang.get(key, 0):
                    res.add(
                        f"'counts.pairs.by_split_lang.{key[0]}.{key[1]}' is {given.get(key, 0)}, but {fn} holds "
                        f"{by_lang.get(key, 0)} '{key[1]}' views in split '{key[0]}'.",
                        path=f,
                        fix=fix,
                    )
    rows = meta["rows"] if isinstance(meta.get("rows"), dict) else {}
    for rel, n in sorted(rows.items()):
        try:
            rf = inside(p, rel, what="file", path=f, column=f"rows.{rel}", fix=fix)
        except InputError as exc:
            res.problems.append(str(exc))
            continue
        if not rf.is_file():
            res.add(f"'rows' names {rel}, which the release does not hold.", path=f, fix=fix)
            continue
        got = _file_rows(rf)
        if got is not None and got != n:
            res.add(f"'rows' gives {rel} {n} rows; the file has {got}.", path=f, fix=fix)


def _card(p: Path, res: VerifyResult) -> None:
    f = p / L.README
    if not f.exists():
        res.add("missing: the dataset card.", path=f, fix="rebuild the release with `biaskit release build`.")
        return
    from ..readers import read_text
    from .meta import card_files, check_card

    try:
        text = read_text(f)
    except InputError as exc:
        res.problems.append(str(exc))
        return
    fm = card_front_matter(text)
    fix = (
        "rebuild the release (the card is generated; write your own sections in the card text file: "
        "`--card-text FILE`, card_text in [stages.release] under `biaskit run`)."
    )
    if fm is None:
        res.add("no YAML front matter (--- ... ---) a Hugging Face dataset card needs.", path=f, fix=fix)
    else:
        for k in L.CARD_YAML_KEYS:
            if k not in fm or fm[k] in (None, "", []):
                res.add(f"card field '{k}' is missing from the YAML front matter.", path=f, fix=fix)
        try:  # structure and types, then every data file inside the release (never followed outside it)
            files = card_files(p, check_card(fm, f))
        except InputError as exc:
            res.problems.append(str(exc))
            files = []
        for config, _, fp in files:
            if not fp.exists():
                res.add(f"config '{config}' names a missing file {fp.relative_to(p).as_posix()}.", path=f, fix=fix)
        if str(fm.get("license", "")).lower() in ("unknown", "other", ""):
            res.warnings.append(
                f"{f}: licence is '{fm.get('license')}'. Fix: rebuild with a licence "
                "(`biaskit release build ... --license cc-by-sa-4.0`, license in [stages.release] "
                "under `biaskit run`; required when CrowS-Pairs or StereoSet text is included)."
            )
    heads = {h.strip().lower() for h in re.findall(r"(?m)^#{1,4}\s+(.+?)\s*$", text)}
    for s in L.CARD_SECTIONS:
        if s.lower() not in heads:
            res.add(f"card section '{s}' is missing.", path=f, fix=fix)
    for i, line in enumerate(text.splitlines(), start=1):
        if L.TODO_MARK in line:
            m = re.search(re.escape(L.TODO_MARK) + r":?\s*(.*?)\]", line)
            what = m.group(1) if m else line.strip()
            section = _section_of(text, i)
            res.warnings.append(
                f"{f}, row {i}: section '{section}' is still to be written by the maintainers "
                f"({what[:80]}). Fix: write '## {section}' in the card text file and rebuild "
                "(`biaskit release build ... --card-text FILE`; card_text in [stages.release] under "
                "`biaskit run`)."
            )


def _section_of(text: str, line_no: int) -> str:
    title = "?"
    for line in text.splitlines()[:line_no]:
        m = re.match(r"^#{1,4}\s+(.+?)\s*$", line)
        if m:
            title = m.group(1)
    return title


def _croissant(p: Path, res: VerifyResult) -> None:
    """``croissant.json``: present (a warning for releases built before it), and its files' checksums match."""
    from .meta import croissant_files, read_croissant

    f = p / L.CROISSANT
    if not f.exists():
        res.warnings.append(
            f"{f}: missing (releases built before biaskit wrote Croissant metadata). Fix: rebuild "
            "the release with `biaskit release build`."
        )
        return
    fix = "rebuild the release with `biaskit release build` (croissant.json is generated)."
    try:  # structure and types, then every file it names inside the release (never hashed outside it)
        files = croissant_files(p, read_croissant(p))
    except InputError as exc:
        res.problems.append(str(exc))
        return
    for url, sha, fp in files:
        if not fp.is_file():
            res.add(f"names a missing file {url}.", path=f, fix=fix)
        elif sha != _sha256(fp):
            res.add(f"the sha256 of {url} does not match the file.", path=f, fix=fix)
