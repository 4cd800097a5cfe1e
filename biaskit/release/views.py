"""The language views of a release build, kept on disk while it is built (memory bounded by a constant).

``release build`` reads every pair view once, then merges the views of each pair (:mod:`.inputs`),
finds each pair's target term and split, and writes the release in one pass. Holding every view in
memory grows with the input (3.9x its size at 200 MB); here each validated view is appended to a
spill file (compact JSON) as it is read, and an SQLite index beside it (``seq``, its file, id,
``source_id``, language, direction, bias type, offset in the spill) answers what the build asks of
all of them at once:

- the numbering of identical content within a file (``p-…~2``, as :class:`biaskit.ids.Numbering`);
- the merge (:meth:`ViewStore.merge`): each view's anchor (the end of its ``source_id`` chain), one
  record per anchor in the order of its first view, the views of a record in language order, views
  repeated or disagreeing on direction / bias type, as :func:`.inputs.merge_views` documents them;
- the records, in release order, read back from the spill one at a time (:meth:`MergePlan.records`).

SQLite sorts and joins on disk with a small page cache; the build's memory does not grow with the
input but for a few bytes per pair (its target term and split, as integer codes).
"""

from __future__ import annotations

import os
import sqlite3
from collections.abc import Callable, Iterator, Sequence
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any

from ..errors import InputError
from ..ids import release_id
from ..schema import SentencePair

_COLUMNS = "seq, file, base, given, kept, sid, lang, direction, bias_type, off, len, target, how, own_split"
CACHE_KIB = 8 * 1024  # SQLite's page cache (and sorter memory) in KiB


class ViewStore:
    """Views appended as they are read (:meth:`add`), per input file (:meth:`begin_file`)."""

    BATCH = 4096

    def __init__(self, folder: str | Path, describe: Callable[[Any], tuple] | None = None):
        """``describe(view)``: ``(target, how, own split)`` of a view, kept in the index so that the
        records' targets and splits are known without reading the views back (:meth:`MergePlan.facts`)."""
        self.folder = Path(folder)
        self.describe = describe
        self.folder.mkdir(parents=True, exist_ok=True)
        self._spill = open(self.folder / "views.bin", "w+b")
        self.db = sqlite3.connect(self.folder / "views.sqlite")
        for pragma in (
            "journal_mode=OFF",
            "synchronous=OFF",
            "temp_store=FILE",
            f"cache_size=-{CACHE_KIB}",
            "locking_mode=EXCLUSIVE",
        ):
            self.db.execute(f"PRAGMA {pragma}")
        self.db.execute(
            "CREATE TABLE views (seq INTEGER PRIMARY KEY, file INTEGER, base TEXT, given INTEGER, kept INTEGER,"
            " sid TEXT, lang TEXT, direction TEXT, bias_type TEXT, off INTEGER, len INTEGER,"
            " target TEXT, how TEXT, own_split TEXT)"
        )
        self._rows: list[tuple] = []
        self._seq = 0
        self._file = -1
        self._file_start = (0, 0)
        self.n_kept = 0
        self.langs: set[str] = set()

    # ------------------------------------------------------------------------------------- writing
    def begin_file(self, index: int) -> None:
        self._flush()
        self._file = index
        self._file_start = (self._seq, self._spill.tell())

    def rollback_file(self) -> None:
        """Forget the current file's views (its reading is started again by another reader)."""
        self._rows = []
        self.db.execute("DELETE FROM views WHERE file = ?", (self._file,))
        self._seq, off = self._file_start
        self._spill.seek(off)
        self._spill.truncate()
        self.n_kept = self.db.execute("SELECT COUNT(*) FROM views WHERE kept = 1").fetchone()[0]

    def add(self, view: Any | None, base: str, given: bool, kept: bool) -> None:
        """One view read: ``base`` its id before numbering; ``given`` whether the file gave the id;
        ``view`` (an :class:`.inputs.View`) when it is released, else None (it still counts in the
        numbering of identical content)."""
        off = length = -1
        sid = lang = direction = bias_type = target = how = own_split = None
        if kept and view is not None:
            data = view.to_bytes()
            off, length = self._spill.tell(), len(data)
            self._spill.write(data)
            sid, lang, direction, bias_type = view.source_id, view.lang, view.direction, view.bias_type
            if self.describe is not None:
                target, how, own_split = self.describe(view)
            self.n_kept += 1
            self.langs.add(lang)
        self._rows.append(
            (self._seq, self._file, base, int(given), int(kept), sid, lang, direction, bias_type, off, length)
            + (target, how, own_split)
        )
        self._seq += 1
        if len(self._rows) >= self.BATCH:
            self._flush()

    def _flush(self) -> None:
        if self._rows:
            self.db.executemany(f"INSERT INTO views ({_COLUMNS}) VALUES (?,?,?,?,?,?,?,?,?,?,?,?,?,?)", self._rows)
            self._rows = []

    def repeated_given_id(self) -> bool:
        """The current file gives one id twice (the general reader refuses it, naming the rows)."""
        self._flush()
        q = "SELECT 1 FROM views WHERE file = ? AND given = 1 GROUP BY base HAVING COUNT(*) > 1 LIMIT 1"
        return self.db.execute(q, (self._file,)).fetchone() is not None

    def distinct_pairs(self) -> int:
        """Pairs the current file's released views belong to (a view's ``source_id``, else its numbered id:
        :func:`biaskit.check.pair_key`)."""
        self._flush()
        q = (
            "SELECT COUNT(DISTINCT CASE WHEN sid IS NOT NULL AND sid != '' THEN sid ELSE pid END) "
            "FROM (SELECT v.sid, CASE WHEN n.k = 1 THEN v.base ELSE v.base || '~' || n.k END AS pid FROM views v "
            "JOIN (SELECT seq, ROW_NUMBER() OVER (PARTITION BY base ORDER BY seq) AS k FROM views WHERE file = ?) n "
            "USING (seq) WHERE v.kept = 1)"
        )
        return int(self.db.execute(q, (self._file,)).fetchone()[0])

    # ------------------------------------------------------------------------------------- reading
    def read(self, off: int, length: int, k: int = 1, base: str | None = None):
        """The view stored at ``off``; ``k`` > 1: the k-th of identical content in its file (``id~k``)."""
        view = View.from_bytes(os.pread(self._spill.fileno(), length, off))
        if k > 1 and base is not None:
            view.renumber(f"{base}~{k}", base)
        return view

    def close(self) -> None:
        self._flush()
        self.db.close()
        self._spill.close()

    # ------------------------------------------------------------------------------------- merging
    def merge(self, preferred: Sequence[str] | None = None) -> MergePlan:
        """The release's records from the views (see :func:`.inputs.merge_views` for the rules)."""
        self._flush()
        self._spill.flush()  # the views are read back with os.pread
        db = self.db
        db.executescript(
            """
            CREATE TABLE kv AS
              SELECT v.seq, v.base, n.k,
                     CASE WHEN n.k = 1 THEN v.base ELSE v.base || '~' || n.k END AS pid,
                     v.sid, v.lang, v.direction, v.bias_type, v.off, v.len, v.target, v.how, v.own_split
              FROM views v JOIN (
                SELECT seq, ROW_NUMBER() OVER (PARTITION BY file, base ORDER BY seq) AS k FROM views
              ) n USING (seq)
              WHERE v.kept = 1;
            CREATE UNIQUE INDEX kv_seq ON kv (seq);
            CREATE TABLE firsts AS SELECT pid, MIN(seq) AS seq FROM kv GROUP BY pid;
            CREATE UNIQUE INDEX firsts_pid ON firsts (pid);
            CREATE TABLE walk (seq INTEGER PRIMARY KEY, cur INTEGER, hops INTEGER);
            INSERT INTO walk SELECT seq, seq, 0 FROM kv;
            """
        )
        # each view's anchor: follow source_id to the first view with that id, at most 8 steps (none to
        # take when no source_id is the id of a view: parallel views sharing a source_id, as IndiBias')
        linked = db.execute("SELECT 1 FROM kv v JOIN firsts f ON f.pid = v.sid LIMIT 1").fetchone() is not None
        for hop in range(8 if linked else 0):
            cur = db.execute(
                """
                UPDATE walk SET hops = hops + 1, cur = (
                  SELECT f.seq FROM kv v JOIN firsts f ON f.pid = v.sid WHERE v.seq = walk.cur
                )
                WHERE hops = ? AND EXISTS (
                  SELECT 1 FROM kv v JOIN firsts f ON f.pid = v.sid WHERE v.seq = walk.cur AND f.seq != walk.cur
                )
                """,
                (hop,),
            )
            if not cur.rowcount:
                break
        langs = lang_order({r[0] for r in db.execute("SELECT DISTINCT lang FROM kv")}, preferred)
        db.execute("CREATE TABLE lrank (lang TEXT PRIMARY KEY, rank INTEGER)")
        db.executemany("INSERT INTO lrank VALUES (?, ?)", [(lg, i) for i, lg in enumerate(langs)])
        db.executescript(
            """
            CREATE TABLE anc AS
              SELECT w.seq, CASE WHEN c.sid IS NOT NULL AND c.sid != '' THEN 's:' || c.sid ELSE 'p:' || c.pid END
                     AS anchor
              FROM walk w JOIN kv c ON c.seq = w.cur;
            CREATE INDEX anc_anchor ON anc (anchor, seq);
            CREATE TABLE slot AS
              SELECT a.anchor, v.lang, MIN(v.seq) AS owner, COUNT(*) AS n FROM anc a JOIN kv v USING (seq)
              GROUP BY a.anchor, v.lang;
            CREATE TABLE grp AS
              SELECT anchor, ROW_NUMBER() OVER (ORDER BY first) AS gid
              FROM (SELECT anchor, MIN(seq) AS first FROM anc GROUP BY anchor);
            CREATE UNIQUE INDEX grp_anchor ON grp (anchor);
            CREATE TABLE plan AS
              SELECT g.gid, r.rank, g.anchor, v.lang, v.direction, v.bias_type, v.off, v.len, v.k, v.base,
                     v.target, v.how, v.own_split
              FROM slot s JOIN grp g ON g.anchor = s.anchor JOIN kv v ON v.seq = s.owner
              JOIN lrank r ON r.lang = v.lang
              ORDER BY g.gid, r.rank;
            """
        )
        duplicates = self._duplicates()
        plan = MergePlan(self, counts={"duplicates": duplicates, "not_merged": 0}, langs=langs)
        plan.count()
        return plan

    def _duplicates(self) -> int:
        """Views of the same language of one pair after the first: the same view again (its id or both
        sentences), counted; a different one refused (:func:`.inputs.merge_views`)."""
        if self.db.execute("SELECT 1 FROM slot WHERE n > 1 LIMIT 1").fetchone() is None:
            return 0
        q = """
            SELECT v.seq, v.pid, v.off, v.len, v.k, v.base, o.pid, o.off, o.len, o.k, o.base, a.anchor, v.lang
            FROM anc a JOIN kv v USING (seq) JOIN slot s ON s.anchor = a.anchor AND s.lang = v.lang
            JOIN kv o ON o.seq = s.owner
            WHERE v.seq != s.owner ORDER BY v.seq
        """
        n = 0
        for _, pid, off, length, k, base, opid, ooff, olen, ok, obase, anchor, lang in self.db.execute(q):
            if pid == opid:
                n += 1
                continue
            p, old = self.read(off, length, k, base), self.read(ooff, olen, ok, obase)
            if old.sent_more == p.sent_more and old.sent_less == p.sent_less:
                n += 1
                continue
            sid = anchor.split(":", 1)[1]
            prov = p.provenance
            raise InputError(
                f"two different '{lang}' pairs belong to the same source '{sid}' ({old.pair_id} and {p.pair_id}).",
                path=prov.get("file") if isinstance(prov, dict) else None,
                fix="give each language view of a pair the same source_id and different pairs different "
                "ones, or release only one of the two records.",
            )
        return n


@dataclass
class MergePlan:
    """The release's pair records in order (:meth:`records`), their number and the merge counts."""

    store: ViewStore
    counts: dict[str, int]
    langs: list[str]
    n_records: int = 0
    present: set[str] = field(default_factory=set)

    def count(self) -> None:
        n = not_merged = 0
        for views, _anchor in self._groups(load=False):
            prim = views[0]
            kept = sum(1 for v in views if v[1] == prim[1] and v[2] == prim[2])
            n += 1 + (len(views) - kept)
            not_merged += len(views) - kept
        self.n_records, self.counts["not_merged"] = n, not_merged
        self.present = {r[0] for r in self.store.db.execute("SELECT DISTINCT lang FROM plan")}

    def __len__(self) -> int:
        return self.n_records

    def _groups(self, load: bool = True) -> Iterator[tuple[list, str]]:
        cur = self.store.db.execute(
            "SELECT gid, anchor, lang, direction, bias_type, off, len, k, base, target, how, own_split"
            " FROM plan ORDER BY rowid"
        )
        gid, anchor = None, ""
        views: list = []
        for row in cur:
            if row[0] != gid:
                if views:
                    yield views, anchor
                gid, anchor, views = row[0], row[1], []
            views.append(row[2:])
        if views:
            yield views, anchor

    def facts(self) -> Iterator[tuple]:
        """Per record in release order, without reading the views: ``(target, how, own split, bias type,
        direction)`` of its first view (what the store's ``describe`` said of it)."""
        for rows, _anchor in self._groups():
            dir0, bt0 = rows[0][1], rows[0][2]
            yield rows[0][7], rows[0][8], rows[0][9], bt0, dir0
            for r in rows:
                if not (r[1] == dir0 and r[2] == bt0):
                    yield r[7], r[8], r[9], r[2], r[1]

    def records(self, primary_only: bool = False) -> Iterator[Any]:
        """The merged pairs (:class:`.inputs.MergedPair`) in release order, read from the spill one at a
        time (``primary_only``: each record's first view only, enough for its id, target and stratum)."""
        store = self.store
        for rows, anchor in self._groups():
            lang0, dir0, bt0 = rows[0][0], rows[0][1], rows[0][2]
            keep = [r for r in rows if r[1] == dir0 and r[2] == bt0]
            apart = [r for r in rows if not (r[1] == dir0 and r[2] == bt0)]
            views = {}
            for r in keep[:1] if primary_only else keep:
                views[r[0]] = store.read(r[3], r[4], r[5], r[6])
            prim = views[lang0]
            yield MergedPair(id=record_id(prim, anchor), anchor=anchor, views=views, source_id=record_source_id(prim))
            for r in apart:
                v = store.read(r[3], r[4], r[5], r[6])
                yield MergedPair(
                    id=release_id(anchor, r[0]),
                    anchor=f"{anchor}|{r[0]}",
                    views={r[0]: v},
                    source_id=record_source_id(v),
                )


class View:
    """One validated language view of a pair, kept compact while a release is built: the fields the
    build works with as plain attributes, ``provenance`` and ``meta`` as their JSON bytes (decoded
    on access). A :class:`~biaskit.schema.SentencePair` holds every nested dict as Python objects; a
    200 MB input would take gigabytes that way."""

    _FIELDS = (
        "pair_id",
        "source_id",
        "lang",
        "status",
        "direction",
        "bias_type",
        "group_more",
        "group_less",
        "sent_more",
        "sent_less",
    )
    __slots__ = (*_FIELDS, "_rest", "_decoded")

    def __init__(self, p: SentencePair):
        from sys import intern

        from pydantic_core import to_json

        self.pair_id, self.source_id = p.pair_id, p.source_id
        self.lang, self.status = intern(p.lang), intern(str(getattr(p.status, "value", p.status)))
        self.direction, self.bias_type = intern(str(getattr(p.direction, "value", p.direction))), intern(p.bias_type)
        self.group_more, self.group_less = p.group_more, p.group_less
        self.sent_more, self.sent_less = p.sent_more, p.sent_less
        self._rest = to_json({"provenance": p.provenance, "meta": p.meta})
        self._decoded = None

    @property
    def extra_json(self) -> bytes:
        """``{"provenance": ..., "meta": ...}`` as the JSON bytes the view keeps."""
        return self._rest

    def to_bytes(self) -> bytes:
        """The view as one compact JSON array (what :class:`.views.ViewStore` keeps on disk)."""
        from pydantic_core import to_json

        return to_json([*(getattr(self, f) for f in self._FIELDS), self._rest.decode("utf-8")])

    @classmethod
    def from_bytes(cls, data: bytes) -> View:
        from sys import intern

        from pydantic_core import from_json

        values = from_json(data, cache_strings=False)
        v = cls.__new__(cls)
        for f, x in zip(cls._FIELDS, values, strict=False):
            setattr(v, f, x)
        v.lang, v.status, v.direction, v.bias_type = (intern(x) for x in (v.lang, v.status, v.direction, v.bias_type))
        v._rest = values[-1].encode("utf-8")
        v._decoded = None
        return v

    def renumber(self, pair_id: str, duplicate_of: str) -> None:
        """The k-th view of identical content in its file: ``id~k``, ``meta.duplicate_of`` the id."""
        import json

        from pydantic_core import to_json

        rest = json.loads(self._rest)
        rest["meta"]["duplicate_of"] = duplicate_of
        self.pair_id, self._rest, self._decoded = pair_id, to_json(rest), None

    def _fields(self) -> dict[str, Any]:
        """``provenance`` and ``meta``, decoded once (a view lives while it is read or written)."""
        decoded = self._decoded
        if decoded is None:
            import json

            decoded = self._decoded = json.loads(self._rest)
        return decoded

    @property
    def provenance(self) -> dict[str, Any]:
        return self._fields()["provenance"]

    @property
    def meta(self) -> dict[str, Any]:
        return self._fields()["meta"]


@dataclass
class MergedPair:
    id: str
    anchor: str
    views: dict[str, View]  # lang -> pair view, primary language first
    source_id: str | None

    @property
    def primary(self) -> View:
        return next(iter(self.views.values()))


def lang_order(langs: set[str], preferred: Sequence[str] | None) -> list[str]:
    """The languages of a release's pair views in record order: those asked for first, then English,
    then the others alphabetically."""
    order = [lg for lg in (preferred or []) if lg in langs]
    rest = sorted(langs - set(order), key=lambda lg: (lg != "en", lg))
    return order + rest


def record_id(p: View, anchor: str) -> str:
    """A released pair's id: an earlier release's (kept), else derived from its anchor."""
    prev = p.provenance.get("release_id") if isinstance(p.provenance, dict) else None
    if prev:  # an earlier release's record keeps its id
        return str(prev)
    return release_id(anchor)


def record_source_id(p: View) -> str | None:
    """A released pair's ``source_id``: an earlier release's, else its primary view's."""
    prov = p.provenance if isinstance(p.provenance, dict) else {}
    if prov.get("release_id"):
        return prov.get("release_source_id")
    return p.source_id
