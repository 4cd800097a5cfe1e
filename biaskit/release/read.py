"""Read a release folder: its metadata, its pairs (one SentencePair per language view), its CATs.

The evaluators call these (``biaskit evaluate pairs --data DIR --split test --lang hi``); no stage
code is needed to read a release::

    from biaskit.release.read import read_release_pairs
    res = read_release_pairs("releases/indibias-1.0.0", split="test", lang="hi")
    res.pairs            # SentencePair per view; source_id = the release id shared by its views
    res.info             # {"name", "version", "split", "file", "sha256", ...}
"""

from __future__ import annotations

import re
from collections.abc import Sequence
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any

from ..errors import InputError
from ..options import say
from . import layout as L


def release_meta(path: str | Path) -> dict[str, Any]:
    """``release.json`` of a release folder, checked (:func:`.meta.read_release_json`), with clear errors
    for a folder that is not one."""
    from .meta import check_links, read_release_json

    p = Path(path)
    if not p.exists():
        raise InputError("folder not found.", path=p, fix="check the release path.")
    if not p.is_dir():
        raise InputError("not a folder.", path=p, fix="pass a release folder (written by `biaskit release build`).")
    if not (p / L.RELEASE_JSON).exists():
        raise InputError(
            f"not a biaskit release: no {L.RELEASE_JSON}.",
            path=p,
            fix="pass a folder written by `biaskit release build`, or a data file.",
        )
    check_links(p)
    return read_release_json(p)


def _check_split(split: str | None, path: Path) -> None:
    if split is not None and split not in L.SPLITS:
        raise InputError(
            f"unknown split '{split}'.", path=path, fix=f"use {' or '.join(say('release_split', s) for s in L.SPLITS)}."
        )


def _info(path: Path, meta: dict, fn: str, split: str | None, lang: str | None) -> dict[str, Any]:
    from ..io import sha256_file

    f = path / fn
    sha = sha256_file(f)
    recorded = (meta.get("data_files") or {}).get(fn)
    return {
        "release": meta["name"],
        "version": meta["version"],
        "created": meta.get("created"),
        "protocol": meta.get("protocol"),
        "split": split or "all",
        "lang": lang,
        "file": fn,
        "sha256": sha,
        "sha256_matches_release": (recorded == sha) if recorded else None,
    }


def _records_file(path: str | Path, kind: str, split: str | None, fix: str) -> tuple[Path, dict, str]:
    """The release folder, its metadata and the name of its ``kind`` records file (checked to exist)."""
    p = Path(path)
    meta = release_meta(p)
    _check_split(split, p)
    fn = L.RECORD_FILES[kind]
    if not (p / fn).exists():
        raise InputError(f"this release has no {kind} ({fn} is missing).", path=p, fix=fix)
    return p, meta, fn


def _validated(model, obj: dict, what: str, path: Path, row: int):
    from pydantic import ValidationError

    from ..readers import validation_error

    try:
        return model.model_validate(obj)
    except ValidationError as exc:
        raise validation_error(
            path, row, exc, what, "run `biaskit release verify DIR`, then rebuild the release."
        ) from None


@dataclass
class ReleasePairs:
    pairs: list
    info: dict[str, Any]
    skipped: list = field(default_factory=list)
    format: str = "release"

    def __len__(self) -> int:
        return len(self.pairs)


def read_release_pairs(path: str | Path, *, split: str | None = None, lang: str | None = None) -> ReleasePairs:
    """The pairs of a release as SentencePairs (one per language view), optionally one split/language."""
    from ..io import iter_jsonl
    from ..schema import SentencePair, release_views

    p, meta, fn = _records_file(
        path, "pairs", split, "score its CATs with `biaskit evaluate cats --data DIR`, or rebuild it with pairs."
    )
    lang = lang.strip().lower() if lang else None
    pairs, found = [], set()
    for row, obj in iter_jsonl(p / fn):
        if split and obj.get("split") != split:
            continue
        for v in release_views(obj):
            found.add(v["lang"])
            if lang and v["lang"] != lang:
                continue
            pairs.append(_validated(SentencePair, v, "pair", p / fn, row))
    if not pairs:
        what = " ".join(x for x in (f"split '{split}'" if split else "", f"language '{lang}'" if lang else "") if x)
        raise InputError(
            f"no pairs for {what or 'this release'} (languages: {', '.join(sorted(found)) or 'none'}).",
            path=p / fn,
            fix=f"check {say('release_split')} and {say('lang')}.",
        )
    return ReleasePairs(pairs=pairs, info=_info(p, meta, fn, split, lang))


def read_release_cats(path: str | Path, *, split: str | None = None) -> tuple[list, dict[str, Any]]:
    """The CATs of a release (biaskit :class:`~biaskit.schema.CAT`), optionally one split."""
    from ..io import iter_jsonl
    from ..schema import CAT

    p, meta, fn = _records_file(path, "cats", split, "score its pairs with `biaskit evaluate pairs --data DIR`.")
    cats = []
    for row, obj in iter_jsonl(p / fn):
        if split and (obj.get("meta") or {}).get("split") != split:
            continue
        cats.append(_validated(CAT, obj, "CAT", p / fn, row))
    if not cats:
        raise InputError(f"no CATs in split '{split}'.", path=p / fn, fix=f"check {say('release_split')}.")
    return cats, _info(p, meta, fn, split, None)


def release_target_splits(path: str | Path) -> dict[str, str]:
    """``{target: split}`` of every record of a release (used to keep splits stable across versions)."""
    from ..io import iter_jsonl
    from .split import norm_target

    p = Path(path)
    release_meta(p)
    out: dict[str, str] = {}
    for kind, fn in L.RECORD_FILES.items():
        f = p / fn
        if not f.exists():
            continue
        for _, obj in iter_jsonl(f):
            if kind == "pairs":
                t, sp = obj.get("target"), obj.get("split")
            elif kind == "cats":
                t, sp = obj.get("target"), (obj.get("meta") or {}).get("split")
            else:
                t, sp = obj.get("identity"), (obj.get("meta") or {}).get("split")
            if t and sp in L.SPLITS:
                out.setdefault(norm_target(t), sp)
    return out


def read_sums(path: str | Path) -> dict[str, str]:
    """``{relative path: sha256}`` from a release's ``SHA256SUMS``; a path that leaves the release
    folder is refused (:func:`biaskit.paths.inside`), so nothing outside it is ever hashed."""
    from ..paths import inside
    from ..readers import read_text

    p = Path(path) / L.SUMS
    fix = "rebuild the release (SHA256SUMS is written by `biaskit release build`)."
    out = {}
    for i, line in enumerate(read_text(p).splitlines(), start=1):
        if not line.strip():
            continue
        parts = line.split(None, 1)
        if len(parts) != 2 or not re.fullmatch(r"[0-9A-Fa-f]{64}", parts[0]):
            raise InputError("not a 'HEX  PATH' line.", path=p, row=i, fix=fix)
        rel = parts[1].lstrip("*").strip()
        inside(path, rel, what="listed file", path=p, row=i, fix=fix)
        out[rel] = parts[0].lower()
    return out


def check_sums(path: str | Path, files: Sequence[Path]) -> None:
    """Each of ``files`` (inside the release folder ``path``) is listed in ``SHA256SUMS`` with the
    checksum it has: an edited or unlisted file is refused, naming it (``load_release``)."""
    from ..io import sha256_file

    p = Path(path)
    fix = (
        "restore the release from its published copy (`biaskit release verify DIR` lists every change), or "
        "load it unchecked with biaskit.load_release(DIR, verify=False)."
    )
    if not (p / L.SUMS).is_file():
        raise InputError(f"no {L.SUMS}: the files cannot be checked against the build.", path=p, fix=fix)
    sums = read_sums(p)
    for f in files:
        rel = f.relative_to(p).as_posix()
        if not f.is_file():
            raise InputError("missing (the release names it).", path=f, fix=fix)
        if rel not in sums:
            raise InputError(f"not listed in {L.SUMS}.", path=f, fix=fix)
        if sha256_file(f) != sums[rel]:
            raise InputError(
                f"checksum does not match {L.SUMS} (the file was changed after the build).", path=f, fix=fix
            )
