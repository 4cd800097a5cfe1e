"""Read a release's input records (pairs, CATs, tuples) and merge the language views of each pair.

Pairs come from any file :func:`biaskit.readers.read_pairs` reads (biaskit JSONL/CSV from
``annotate apply``, translation review output, CrowS-Pairs and IndiBias CSV, an earlier release's
``pairs.jsonl``); CATs and tuples from biaskit JSONL. Every record is validated once, here.

Merging: the language views of one pair are linked by ``source_id``: IndiBias' English and Hindi
columns share ``source_id``; a reviewed translation's ``source_id`` is its English pair's
``pair_id``. Each pair's *anchor* is the end of that chain (the shared ``source_id``, or the pair's
own id); one released record per anchor, with a stable id derived from the anchor, so the same pair
keeps its id in every version built from the same sources.
"""

from __future__ import annotations

from collections import Counter
from collections.abc import Iterator, Sequence
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any

from ..errors import InputError
from ..ids import release_id
from ..options import say, tell
from ..schema import CAT, BiasTuple, SentencePair
from .views import MergedPair, View, ViewStore, lang_order, record_id, record_source_id

# statuses that never reach a release; `flagged` is dropped unless keep_flagged
EXCLUDED_STATUSES = ("rejected", "needs_review")


@dataclass
class InputFile:
    path: str
    kind: str  # pairs | cats | tuples
    format: str
    records: int
    sha256: str
    excluded: dict[str, int] = field(default_factory=dict)  # status -> count not released
    skipped_invalid: int = 0
    pairs: int | None = None  # pairs: how many pairs the records (language views) belong to

    def as_dict(self) -> dict[str, Any]:
        return {
            "file": Path(self.path).name,
            "kind": self.kind,
            "format": self.format,
            "records": self.records,
            **({"pairs": self.pairs} if self.pairs is not None else {}),
            "sha256": self.sha256,
            "excluded": self.excluded,
            "skipped_invalid": self.skipped_invalid,
        }


@dataclass
class Inputs:
    pairs: ViewStore | None = None  # every released pair view, on disk (:mod:`.views`)
    cats: list[CAT] = field(default_factory=list)
    tuples: list[BiasTuple] = field(default_factory=list)
    files: list[InputFile] = field(default_factory=list)
    #: flag codes of the pairs not released because the minimal-pair checker flagged them (None: no code)
    flags_dropped: Counter = field(default_factory=Counter)

    @property
    def n_pairs(self) -> int:
        return self.pairs.n_kept if self.pairs is not None else 0


def detect_kind(path: str | Path) -> str:
    """``pairs``, ``cats`` or ``tuples`` from a file's extension and first record."""
    path = Path(path)
    if not path.exists():
        raise InputError("file not found.", path=path, fix=f"check the {say('records')} path.")
    if path.is_dir():
        raise InputError(
            "is a directory, expected a records file.",
            path=path,
            fix="pass the .jsonl/.csv files (for an earlier release: DIR/pairs.jsonl).",
        )
    if path.suffix.lower() not in (".jsonl", ".ndjson"):
        return "pairs"
    from ..readers import first_record

    first = first_record(path)
    if "options" in first and "context" in first:
        return "cats"
    if "identity" in first and "attribute" in first:
        return "tuples"
    if "views" in first or "sent_more" in first:
        return "pairs"
    if not first:
        raise InputError("file is empty.", path=path, fix="pass a file with records.")
    raise InputError(
        f"cannot tell what records these are from the keys {sorted(first)[:8]}.",
        path=path,
        row=1,
        fix="pass pairs (sent_more, sent_less, ...), CATs (context, options) or tuples "
        "(identity, attribute) in the biaskit schema.",
    )


_ADAPTER = None
_BATCH = 512


def _iter_jsonl_pairs_fast(path: Path) -> Iterator[tuple[SentencePair, bool]]:
    """Validated pairs of a biaskit JSONL file, :data:`_BATCH` lines at a time (pydantic parses and
    validates each batch in Rust), each with whether the line gave its ``pair_id``. The numbering of
    identical content (``~2``) and the check that no given id comes twice are the store's
    (:class:`.views.ViewStore`: the file is read again by the general reader when an id repeats). Raises
    :class:`_NeedsReader` when the file needs the general reader (a release file, a value the text
    checks may refuse, an invalid line: the reader then names the row)."""
    global _ADAPTER
    from pydantic import TypeAdapter, ValidationError

    from ..textcheck import suspect_json_line

    if _ADAPTER is None:
        _ADAPTER = TypeAdapter(list[SentencePair])
    with open(path, "rb") as fh:
        first = True
        while True:
            lines = []
            for raw in fh:
                if first:
                    raw = raw.removeprefix(b"\xef\xbb\xbf")
                    if b'"views"' in raw:
                        raise _NeedsReader()
                    first = False
                if raw.strip():
                    lines.append(raw)
                if len(lines) >= _BATCH:
                    break
            if not lines:
                return
            if any(
                suspect_json_line(line.decode("utf-8", "replace"))
                for line in lines
                if b"\\" in line or len(line) > 100_000
            ):
                raise _NeedsReader()
            try:
                pairs = _ADAPTER.validate_json(b"[" + b",".join(lines) + b"]")
            except ValidationError:
                raise _NeedsReader() from None
            for line, p in zip(lines, pairs, strict=False):
                yield p, b'"pair_id"' in line


class _NeedsReader(Exception):
    """The fast path gives up: the general reader reads the file (and names what is wrong in it)."""


def load_inputs(
    paths: Sequence[str | Path],
    *,
    langs: Sequence[str] | None = None,
    kinds: Sequence[str] | None = None,
    keep_flagged: bool = False,
    skip_invalid: bool = False,
    work: str | Path | None = None,
    describe=None,
) -> Inputs:
    """Read and validate every input file as it is read (pair views appended to a :class:`ViewStore` in
    ``work``, a folder of the caller's, with ``describe``: what it notes of each view); keep the
    languages and kinds asked for."""
    import tempfile

    from ..io import sha256_file

    if not paths:
        raise InputError("no records given.", fix=f"{tell('records', 'FILE')}: validated pairs, CATs or tuples.")
    want_langs = {lg.strip().lower() for lg in langs} if langs else None
    inp = Inputs()
    for index, p in enumerate(paths):
        path = Path(p)
        kind = detect_kind(path)
        if kinds and kind not in kinds:
            continue
        info = InputFile(path=str(path), kind=kind, format="biaskit", records=0, sha256=sha256_file(path))
        if kind == "pairs":
            if inp.pairs is None:
                folder = work if work is not None else tempfile.mkdtemp(prefix="biaskit-views-")
                inp.pairs = ViewStore(folder, describe=describe)
            _read_pair_file(inp, info, index, want_langs, keep_flagged=keep_flagged, skip_invalid=skip_invalid)
        elif kind == "cats":
            _read_cat_file(inp, info, want_langs)
        else:
            _read_tuple_file(inp, info, want_langs)
        inp.files.append(info)
    if not (inp.n_pairs or inp.cats or inp.tuples):
        what = f" in language(s) {', '.join(sorted(want_langs))}" if want_langs else ""
        raise InputError(
            f"no releasable records{what} in {', '.join(str(p) for p in paths)}.",
            fix=f"check {say('langs')} and {say('kinds')}, and that the records are validated (not rejected/flagged).",
        )
    return inp


def _read_pair_file(
    inp: Inputs, info: InputFile, index: int, want_langs: set[str] | None, *, keep_flagged: bool, skip_invalid: bool
) -> None:
    """One pairs file's views into ``inp.pairs``: the fast JSONL path, else (another format, a value the
    text checks may refuse, a repeated id, an invalid line) the general reader, which names the row."""
    from ..readers import iter_valid_pairs
    from ..readers.pairs import detect_format

    path = Path(info.path)
    store = inp.pairs
    assert store is not None  # made by the caller
    store.begin_file(index)
    flags = Counter(inp.flags_dropped)
    try:
        if path.suffix.lower() not in (".jsonl", ".ndjson"):
            raise _NeedsReader()
        _add_pairs(inp, info, _iter_jsonl_pairs_fast(path), want_langs, keep_flagged)
        if store.repeated_given_id():
            raise _NeedsReader()  # the reader refuses it, naming the rows
    except _NeedsReader:
        store.rollback_file()
        inp.flags_dropped = flags
        info.records, info.excluded = 0, {}
        skipped: list[InputError] = []
        info.format = detect_format(path)
        pairs = iter_valid_pairs(path, info.format, skipped=skipped if skip_invalid else None)
        _add_pairs(inp, info, ((pr, False) for _, pr in pairs), want_langs, keep_flagged)
        info.skipped_invalid = len(skipped)
    info.pairs = store.distinct_pairs()


def _read_cat_file(inp: Inputs, info: InputFile, want_langs: set[str] | None) -> None:
    from ..readers import read_cats

    for c in read_cats(Path(info.path), format="biaskit"):
        if want_langs and c.lang not in want_langs:
            continue
        inp.cats.append(c)
        info.records += 1


def _read_tuple_file(inp: Inputs, info: InputFile, want_langs: set[str] | None) -> None:
    """The tuples of one file in the languages asked for; rejected or flagged ones counted, not kept."""
    from ..readers import read_tuples

    for t in read_tuples(Path(info.path)).records:
        if want_langs and t.lang not in want_langs:
            continue
        if t.status in EXCLUDED_STATUSES:
            info.excluded[t.status] = info.excluded.get(t.status, 0) + 1
            continue
        inp.tuples.append(t)
        info.records += 1


def _add_pairs(
    inp: Inputs, info: InputFile, pairs: Iterator[tuple[SentencePair, bool]], want_langs, keep_flagged: bool
) -> None:
    store = inp.pairs
    assert store is not None
    for pr, given in pairs:
        base = pr.pair_id
        kept = True
        if want_langs and pr.lang not in want_langs:
            kept = False
        else:
            st = pr.status
            if st in EXCLUDED_STATUSES or (st == "flagged" and not keep_flagged):
                info.excluded[st] = info.excluded.get(st, 0) + 1
                if st == "flagged":
                    flags = (pr.meta or {}).get("flags", [])
                    inp.flags_dropped.update(f.get("code") for f in flags if isinstance(f, dict))
                kept = False
        store.add(View(pr) if kept else None, base, given, kept)
        if kept:
            info.records += 1


# ------------------------------------------------------------------------------------------ merging
def merge_views(
    pairs: Sequence[View], *, preferred: Sequence[str] | None = None
) -> tuple[list[MergedPair], dict[str, int]]:
    """Group the language views of each pair (see the module docstring). Returns the merged pairs (in
    input order of their first view) and counts: ``duplicates`` (the same view twice, dropped),
    ``not_merged`` (views whose direction or bias type differs from their pair's primary view: kept
    as records of their own).

    The rules in memory, on a list of views: ``release build`` applies them on disk
    (:meth:`.views.ViewStore.merge`), with the same result (``tests/test_release_scale.py``)."""
    by_pid: dict[str, View] = {}
    for p in pairs:
        by_pid.setdefault(p.pair_id, p)

    def anchor(p: View) -> str:
        seen = 0
        while p.source_id and p.source_id in by_pid and by_pid[p.source_id] is not p and seen < 8:
            p = by_pid[p.source_id]
            seen += 1
        return f"s:{p.source_id}" if p.source_id else f"p:{p.pair_id}"

    groups: dict[str, dict[str, View]] = {}
    counts = {"duplicates": 0, "not_merged": 0}
    for p in pairs:
        a = anchor(p)
        g = groups.setdefault(a, {})
        old = g.get(p.lang)
        if old is None:
            g[p.lang] = p
        elif old.pair_id == p.pair_id or (old.sent_more == p.sent_more and old.sent_less == p.sent_less):
            counts["duplicates"] += 1
        else:
            sid = a.split(":", 1)[1]
            raise InputError(
                f"two different '{p.lang}' pairs belong to the same source '{sid}' ({old.pair_id} and {p.pair_id}).",
                path=p.provenance.get("file") if isinstance(p.provenance, dict) else None,
                fix="give each language view of a pair the same source_id and different pairs different "
                "ones, or release only one of the two records.",
            )
    all_langs = {p.lang for p in pairs}
    order = lang_order(all_langs, preferred)
    rank = {lg: i for i, lg in enumerate(order)}
    out: list[MergedPair] = []
    for a, g in groups.items():
        langs = sorted(g, key=lambda lg: rank[lg])
        views = {lg: g[lg] for lg in langs}
        prim = views[langs[0]]
        keep = {lg: v for lg, v in views.items() if v.direction == prim.direction and v.bias_type == prim.bias_type}
        rid = record_id(prim, a)
        out.append(MergedPair(id=rid, anchor=a, views=keep, source_id=record_source_id(prim)))
        for lg, v in views.items():
            if lg not in keep:
                counts["not_merged"] += 1
                out.append(
                    MergedPair(id=release_id(a, lg), anchor=f"{a}|{lg}", views={lg: v}, source_id=record_source_id(v))
                )
    return out, counts
