"""Scale (issue 31): `annotate aggregate | agreement` on codes and `release build | verify` in bounded memory
give the results the straightforward code gives.

- Judgments: outputs on a generated 100,000-item slice (``benchmarks/aggregate.py``'s generator; the
  1M-item run is the benchmark's) are byte-identical to those of the code before the change
  (SHA-256 recorded from biaskit at 968cc6c, the commit this work started from); majority votes and
  pooled agreement equal the benchmark's straightforward loops; the columnar reader gives the general
  reader's values or steps aside; Krippendorff's alpha equals the ``krippendorff`` package's.
- Releases: the on-disk merge equals the in-memory rules (``inputs.merge_views``); the statistics
  spilled in parts equal those kept in memory; a generated release's files are byte-identical to the
  previous code's; its Python-heap peak does not grow with the input.
- DuckDB: the documented majority-vote query (docs/annotation.md) equals `annotate aggregate`; a
  release's Parquet files read as they are.
"""

from __future__ import annotations

import hashlib
import io
import json
import re
import sys
import tracemalloc
from pathlib import Path

import numpy as np
import pandas as pd
import pytest

REPO = Path(__file__).resolve().parents[1]
sys.path.insert(0, str(REPO / "benchmarks"))

from aggregate import make_judgments, naive_aggregate, naive_agreement, write_judgments  # noqa: E402 (after sys.path names benchmarks/)
from biaskit.annotation.aggregate import aggregate_file, prepare  # noqa: E402 (after sys.path names benchmarks/)
from biaskit.annotation.agreement import agreement_report, alpha_from_counts  # noqa: E402 (after sys.path names benchmarks/)
from biaskit.annotation.judgment_options import AggregateOptions, AgreementOptions  # noqa: E402 (after sys.path names benchmarks/)

from biaskit.errors import InputError  # noqa: E402 (after sys.path names benchmarks/)


def _sha(path: Path) -> str:
    return hashlib.sha256(path.read_bytes()).hexdigest()


# ----------------------------------------------------------------------------------------- judgments
# SHA-256 of the outputs of biaskit at 968cc6c (before issue 31) on make_judgments(100_000, dup_rate=0.002)
# written as CSV: `aggregate_file(AggregateOptions(..., duplicates=...))` and `agreement_report(...)` (no command line)
PREVIOUS = {
    "last.csv": "9d8346cc99cb4240394926a14f723ea1ac823ee2b257d91392df7ead5d84ffbe",
    "first_drop.jsonl": "d3f889daf59e912a8381d892b33841de9cf97a32c8e129019164a5f77d2b9e87",
    "agreement/agreement.json": "2fd1c4271cb616712e3ab5eb00a472f5cff433747da0d3277116f9004e2a7e15",
    "agreement/agreement.md": "b19e05a0b6041b4cc7800e0d47da90c6f4b8f9223b48228ac4dcb68d12b97ab9",
    "agreement/agreement_items.csv": "2c75a2bf659c09fe4f6359840ec75225b8d5e1a8d716ccc2da043e888a93e29d",
    "agreement/agreement_targets.csv": "2297e2af6e968bbb90e068d3578c2575a2d1acdf4aa379604e2a3381b06ae15e",
}
PREVIOUS_ERROR = (
    "row 921: annotator 'w027' answered question 'validity' of task 'p-0000170' more than once (974 such "
    "case(s)). Fix: remove the extra answers, or pass --duplicates last|first to keep one of them."
)


def test_a_100k_item_slice_gives_the_previous_codes_bytes(tmp_path):
    src = write_judgments(make_judgments(100_000, dup_rate=0.002), tmp_path / "judgments.csv")
    with pytest.raises(InputError) as e:
        aggregate_file(AggregateOptions(judgments=src, out=tmp_path / "error.csv"))
    assert str(e.value) == f"{src}, {PREVIOUS_ERROR}"
    rep = aggregate_file(AggregateOptions(judgments=src, out=tmp_path / "last.csv", duplicates="last", min_agree=3))
    assert (rep.n_items, rep.n_duplicates_removed, rep.n_missing_labels, rep.n_text_skipped) == (
        110081,
        974,
        2482,
        1990,
    )
    aggregate_file(AggregateOptions(judgments=src, out=tmp_path / "first_drop.jsonl", duplicates="first", ties="drop"))
    agreement_report(AgreementOptions(judgments=src, out=tmp_path / "agreement", duplicates="last"))
    assert {name: _sha(tmp_path / name) for name in PREVIOUS} == PREVIOUS


def _loops(path: Path):
    from aggregate import _items

    items = _items(path)
    return naive_aggregate(items), naive_agreement(items)


def test_majority_and_agreement_equal_the_straightforward_loops(tmp_path):
    src = write_judgments(make_judgments(3_000), tmp_path / "j.csv")
    want_votes, want = _loops(src)
    aggregate_file(AggregateOptions(judgments=src, out=tmp_path / "agg.csv"))
    table = pd.read_csv(tmp_path / "agg.csv", keep_default_na=False, na_values=[""])
    got = {
        (t, q): (lab if isinstance(lab, str) else None, v, n, s)
        for t, q, lab, v, n, s in table[["task", "question", "label", "votes", "n_annotators", "status"]].itertuples(
            index=False
        )
    }
    assert got == want_votes
    rep = agreement_report(AgreementOptions(judgments=src, out=tmp_path / "agr"))
    for k, v in want.items():
        assert rep[k] == pytest.approx(v, abs=1e-6), k


TRICKY_CSV = (
    "\ufefftask,worker,label,question,qtype,bias_type\r\n"
    'p1,w1,stereo,validity,choice,"religion, caste"\r\n'
    'p1, w2 ,"stereo",validity,choice,religion\r\n'
    "p1,w3,,validity,choice,religion\r\n"
    "p1,w3,  ,concern,choice,\r\n"
    '"p2","w1","a ""quoted"" label","",text,gender\r\n'
    "\r\n"
    'p2,w2,"multi\nline",validity,choice,gender\r\n'
    "p3,w1,12,validity,choice,age\r\n"
)


@pytest.mark.parametrize("suffix", [".csv", ".jsonl"])
def test_the_columnar_reader_gives_the_general_readers_judgments(tmp_path, suffix):
    from biaskit.io import read_table
    from biaskit.readers.columnar import read_columns

    path = tmp_path / f"j{suffix}"
    if suffix == ".csv":
        path.write_text(TRICKY_CSV, encoding="utf-8", newline="")
    else:
        rows = pd.read_csv(io.StringIO(TRICKY_CSV.lstrip("\ufeff")), dtype=str, keep_default_na=False)
        lines = [json.dumps({k: v for k, v in r.items() if v != "" or k == "label"}) for r in rows.to_dict("records")]
        path.write_text("\ufeff" + "\n\n".join(lines) + "\n", encoding="utf-8")
    cols = ("task", "worker", "label", "question", "qtype", "bias_type", "settled_by")
    fast = read_columns(path, cols)
    assert fast is not None and "settled_by" not in fast.columns  # a column no line has is no column
    general = read_table(path)
    a, b = prepare(fast, keep=("bias_type",)), prepare(general, keep=("bias_type",))
    assert a.df.astype(object).equals(b.df.astype(object))
    assert (a.n_input, a.n_missing, a.n_text) == (b.n_input, b.n_missing, b.n_text) == (7, 2, 1)


@pytest.mark.parametrize(
    "text",
    [
        "task,worker,label\np1,w1,01\n",  # pandas reads 01 as the number 1
        "task,worker,label\np1,w1,1.0\n",
        "task,worker,label\np1,w1,TRUE\n",
        "task,worker,label\np1,w1,a\x00b\n",  # a control character: the general reader names it
        "task,task,label\np1,w1,a\n",  # a repeated column name
        "task,worker,label\rp1,w1,a\r",  # old Mac line ends
        '{"task": "p1", "worker": "w1", "label": 1}\n',  # a number where text is read
        '{"task": "p1", "worker": "w1", "label": "a\\u0000"}\n',
        '{"task": "p1", "task": "p2", "worker": "w1", "label": "a"}\n',
    ],
)
def test_the_columnar_reader_steps_aside_where_the_general_reader_reads_differently(tmp_path, text):
    from biaskit.readers.columnar import read_columns

    path = tmp_path / ("j.jsonl" if text.startswith("{") else "j.csv")
    path.write_bytes(text.encode("utf-8"))
    assert read_columns(path, ("task", "worker", "label")) is None


def test_alpha_equals_the_krippendorff_package_at_every_level():
    krippendorff = pytest.importorskip("krippendorff")
    rng = np.random.default_rng(7)
    for _ in range(40):
        n, v = int(rng.integers(2, 200)), int(rng.integers(2, 7))
        counts = rng.integers(0, 4, (n, v))
        counts[0, :2] = 1  # at least one pairable unit with two values
        domain = np.sort(rng.choice(np.arange(-5, 20), v, replace=False)).astype(float)
        for level in ("nominal", "ordinal", "interval", "ratio"):
            dom = domain if level != "nominal" else None
            want = krippendorff.alpha(value_counts=counts, value_domain=dom, level_of_measurement=level)
            got = alpha_from_counts(counts, domain if dom is not None else np.arange(v, dtype=float), level)
            assert got == pytest.approx(want, abs=1e-12, nan_ok=True), (level, n, v)


def test_large_tables_are_written_as_pandas_writes_them():
    from biaskit.csvtext import csv_blocks

    rng = np.random.default_rng(0)
    n = 60_000
    df = pd.DataFrame(
        {
            "task": [f"t{i}" for i in range(n)],
            "text": rng.choice(np.array(["a", "b,c", 'q"x', "l\nm", "r\rs", " sp", "", None, "é", "t\tu"], object), n),
            "share": np.where(rng.random(n) < 0.1, np.nan, np.round(rng.random(n), 6)),
            "odd": rng.choice([0.1, 1e-05, 1e16, -0.0, 0.0, 2.5, 1 / 3, np.inf], n),
            "votes": rng.integers(-5, 10**12, n),
            "tie": rng.random(n) < 0.5,
            "s": pd.array(rng.choice(["x", "y", None], n), dtype="str"),
            "mixed": rng.choice(np.array([1, 2.0, True, None, "z", np.nan], dtype=object), n),
            "c": pd.Categorical(rng.choice(["p", "q,r", None], n)),
        }
    )
    for sep in (",", "\t"):
        want = io.StringIO()
        df.to_csv(want, index=False, sep=sep)
        assert b"".join(csv_blocks(df, sep)) == want.getvalue().encode("utf-8")


# ----------------------------------------------------------------------------------------- DuckDB
def _documented_query() -> str:
    text = (REPO / "docs" / "annotation.md").read_text(encoding="utf-8")
    m = re.search(r"<!-- duckdb-majority -->\s*```sql\n(.*?)```", text, re.S)
    assert m, "docs/annotation.md has no DuckDB majority-vote query"
    return m.group(1)


def test_the_documented_duckdb_query_gives_aggregates_majority_vote(tmp_path, monkeypatch):
    duckdb = pytest.importorskip("duckdb")  # the dev extra installs it
    monkeypatch.chdir(tmp_path)
    write_judgments(make_judgments(20_000), tmp_path / "judgments.csv")
    aggregate_file(AggregateOptions(judgments=tmp_path / "judgments.csv", out=tmp_path / "aggregated.csv"))
    ours = pd.read_csv(tmp_path / "aggregated.csv", keep_default_na=False, na_values=[""])
    theirs = duckdb.sql(_documented_query()).df()
    m = ours.merge(theirs, on=["task", "question"], how="outer", suffixes=("", "_db"), indicator=True)
    assert (m["_merge"] == "both").all() and len(m) == len(ours) > 20_000
    for col in ("label", "votes", "n_annotators", "status", "tie"):
        same = (m[col] == m[f"{col}_db"]) | (m[col].isna() & m[f"{col}_db"].isna())
        assert same.all(), col
    assert np.allclose(m["agreement"], m["agreement_db"], rtol=0, atol=1e-12)


def test_a_releases_parquet_reads_in_duckdb_as_it_is(tmp_path):
    duckdb = pytest.importorskip("duckdb")
    from release import make_records

    from biaskit.release import BuildOptions, build_release

    src = tmp_path / "pairs.jsonl"
    make_records(src, 500)
    out = tmp_path / "rel"
    build_release([src], out, BuildOptions(name="r", version="1.0.0", created="2025-01-01", plots=False))
    meta = json.loads((out / "release.json").read_text())
    for split, n in meta["counts"]["pairs"]["by_split"].items():
        rows = duckdb.sql(f"SELECT count(*), count(DISTINCT id) FROM read_parquet('{out}/data/pairs-{split}.parquet')")
        assert rows.fetchall() == [(n, n)]
    lines = duckdb.sql(f"SELECT count(*) FROM read_json('{out}/pairs.jsonl', format = 'newline_delimited')").fetchall()
    assert lines == [(meta["counts"]["pairs"]["records"],)]


# ----------------------------------------------------------------------------------------- releases
def _views(tmp_path: Path):
    """Pair views that exercise every merge rule: translations chained by source_id, a shared source_id,
    identical content (numbered ~2), a repeated view, views whose direction differs (not merged)."""
    from biaskit.readers import read_pairs

    en = []
    for i in range(40):
        r = {
            "sent_more": f"The group{i % 7} are loud number {i % 9}.",
            "sent_less": f"The group{(i + 3) % 7} are loud number {i % 9}.",
            "lang": "en",
            "direction": "stereo" if i % 4 else "antistereo",
            "bias_type": ["religion", "gender"][i % 2],
            "status": "accepted",
        }
        if i % 5 == 0:
            r["source_id"] = f"src-{i}"  # the English view names its source: the Hindi one gets the same
        en.append(r)
    en.append(dict(en[3]))  # identical content: p-...~2
    path = tmp_path / "en.jsonl"
    path.write_text("".join(json.dumps(r) + "\n" for r in en), encoding="utf-8")
    hi = []
    for k, p in enumerate(read_pairs(path)):
        if k % 2 == 0:
            hi.append(
                {
                    "sent_more": f"हिंदी {p.sent_more}",
                    "sent_less": f"हिंदी {p.sent_less}",
                    "lang": "hi",
                    "direction": p.direction if k % 6 else ("stereo" if p.direction == "antistereo" else "antistereo"),
                    "bias_type": p.bias_type,
                    "status": "accepted",
                    "source_id": p.source_id or p.pair_id,
                }
            )
    hi.append(dict(hi[1]))  # the same view twice
    hpath = tmp_path / "hi.jsonl"
    hpath.write_text("".join(json.dumps(r, ensure_ascii=False) + "\n" for r in hi), encoding="utf-8")
    return [path, hpath]


def test_the_merge_on_disk_equals_the_merge_in_memory(tmp_path):
    from biaskit.readers import read_pairs
    from biaskit.release.inputs import View, load_inputs, merge_views

    files = _views(tmp_path)
    for preferred in (None, ["hi", "en"]):
        inp = load_inputs(files, work=tmp_path / f"views-{preferred}")
        plan = inp.pairs.merge(preferred)
        on_disk = [
            (m.id, m.anchor, m.source_id, {lg: v.to_bytes() for lg, v in m.views.items()}) for m in plan.records()
        ]
        views = [View(p) for f in files for p in read_pairs(f)]
        want, counts = merge_views(views, preferred=preferred)
        assert on_disk == [(m.id, m.anchor, m.source_id, {lg: v.to_bytes() for lg, v in m.views.items()}) for m in want]
        assert plan.counts == counts and counts["duplicates"] == 1 and counts["not_merged"] > 0
        inp.pairs.close()
    # two different views of one language for one source: both refuse, with the same message
    clash = tmp_path / "clash.jsonl"
    first = json.loads(files[1].read_text(encoding="utf-8").splitlines()[0])
    clash.write_text(json.dumps(dict(first, sent_more="अलग " + first["sent_more"]), ensure_ascii=False) + "\n")
    with pytest.raises(InputError) as on_disk_error:
        load_inputs([*files, clash], work=tmp_path / "views-clash").pairs.merge(None)
    with pytest.raises(InputError) as in_memory_error:
        merge_views([View(p) for f in (*files, clash) for p in read_pairs(f)])
    assert str(on_disk_error.value) == str(in_memory_error.value)


def test_statistics_spilled_in_parts_equal_the_statistics_in_memory(tmp_path, monkeypatch):
    from release import make_records

    from biaskit.readers import read_pairs
    from biaskit.release import stats

    src = tmp_path / "p.jsonl"
    make_records(src, 1200)
    records = [
        {
            "direction": p.direction,
            "split": ["dev", "test"][i % 2],
            "bias_type": p.bias_type,
            "target": p.group_more,
            "views": {p.lang: {"sent_more": p.sent_more, "sent_less": p.sent_less, "group_more": p.group_more}},
        }
        for i, p in enumerate(read_pairs(src))
    ]
    in_memory = stats.PairStats()
    for r in records:
        in_memory.add(r)
    want = in_memory.result(keyness=True)
    monkeypatch.setattr(stats.PairStats, "BATCH", 300)
    monkeypatch.setattr(stats._Vocabulary, "LIMIT", 500)
    spilled = stats.PairStats(tmp_path / "parts")
    for r in records:
        spilled.add(r)
    assert spilled.result(keyness=True) == want
    assert len(list((tmp_path / "parts").glob("vocab-*.arrow"))) > 4


def test_sentence_lengths_from_a_histogram_equal_them_from_the_lengths():
    from collections import Counter

    from biaskit.release.stats import _length_stats, _length_stats_hist

    rng = np.random.default_rng(3)
    for n, top in ((1, 5), (2, 5), (57, 12), (1000, 61), (4001, 140)):
        lengths = rng.integers(1, top, n)
        want, got = _length_stats(lengths), _length_stats_hist(Counter(lengths.tolist()))
        assert got == want


# SHA-256 of a release built by biaskit at 968cc6c from benchmarks/release.py's make_records(path, 3000)
PREVIOUS_RELEASE = {
    "csv/crows-en-dev.csv": "793b2925646237964323b63fa15090a6f7917de6258f000c02b1be56a05340f1",
    "csv/crows-en-test.csv": "9c4f32fa62b344404e9d6c996907b0ad18667536c6ef38729708152f10f73b92",
    "csv/crows-hi-dev.csv": "3a3a0b6bb38959e78c65e7576218c54d9df827e59470c0f57be84b6e108372fe",
    "csv/crows-hi-test.csv": "de928826e48ba33f7925a4b7896b7c9de68fc7b0ba694b900ea31795f39f0d86",
    "csv/indibias-dev.csv": "6d3f8903c28a59eeb50e7550a57325720c6b9df9ee245c4e6f3f17c1b128f1ff",
    "csv/indibias-test.csv": "ff5d6cc4b37445c09ffe50c74b411fa1ad278ea67a0d714149fe8899b042d5d6",
    "data/pairs-dev.parquet": "6158739ecac783aa2297995e6b62dc1d4c10368a187760cc15f41c47fdf95ae6",
    "data/pairs-test.parquet": "56257770c2865a43818515ba30b45be9b58d2ca8393ece72585427578dc9389a",
    "pairs.jsonl": "f4f53c600e1cac6f6ebb9f339091ae2085305cf71813f8a04ab6c6d133f81d47",
    "stats.json": "b8e9d3389a25eceb3af15fcbadff6aa4d0a9e7097846119bff4a042067e57816",
}


def test_a_generated_release_is_the_previous_codes_byte_for_byte(tmp_path, monkeypatch):
    from release import make_records

    from biaskit.release import BuildOptions, build_release, stats, verify_release, views

    src = tmp_path / "pairs.jsonl"
    make_records(src, 3000)
    monkeypatch.setattr(stats._Vocabulary, "LIMIT", 2_000)  # the vocabulary spilled in parts, as at 800 MB
    monkeypatch.setattr(views.ViewStore, "BATCH", 100)
    out = tmp_path / "rel"
    build_release([src], out, BuildOptions(name="scale", version="1.0.0", created="2025-01-01", plots=False))
    assert {name: _sha(out / name) for name in PREVIOUS_RELEASE} == PREVIOUS_RELEASE
    assert verify_release(out).ok
    assert not [p for p in tmp_path.iterdir() if ".tmp-" in p.name]  # the working folder is gone


def _build_peak(tmp_path: Path, n: int) -> int:
    from release import make_records

    from biaskit.release import BuildOptions, build_release

    src = tmp_path / f"p{n}.jsonl"
    make_records(src, n)
    opts = BuildOptions(name="m", version="1.0.0", created="2025-01-01", plots=False, keyness=False)
    tracemalloc.start()
    try:
        build_release([src], tmp_path / f"rel{n}", opts)
        return tracemalloc.get_traced_memory()[1]
    finally:
        tracemalloc.stop()


def test_release_build_memory_does_not_grow_with_the_input(tmp_path, monkeypatch):
    from biaskit.release import build, export, stats, views

    # the buffers of a few hundred rows each (what the constant is made of) filled at both sizes
    for cls, name, value in (
        (export.PairParquetWriter, "BATCH", 200),
        (build._RecordWriter, "BLOCK", 200),
        (stats.PairStats, "BATCH", 400),
        (stats._Vocabulary, "LIMIT", 2_000),
        (views.ViewStore, "BATCH", 200),
    ):
        monkeypatch.setattr(cls, name, value)
    _build_peak(tmp_path, 300)  # the libraries' first-use imports and caches
    small, large = _build_peak(tmp_path, 2_500), _build_peak(tmp_path, 10_000)
    # 7,500 more pairs (15,000 views) may add a few bytes each (a target and a split code per pair, and
    # pydantic's bounded cache of strings filling up), far from the ~1,400 bytes a pair took when every
    # view was kept in memory (+10 MB here)
    assert (large - small) / 7_500 < 250, (small, large)


def test_verify_names_every_repeated_id_and_runs_the_record_checks(tmp_path, monkeypatch):
    from release import make_records

    from biaskit.release import BuildOptions, build_release, verify
    from biaskit.release.build import write_sums

    src = tmp_path / "pairs.jsonl"
    make_records(src, 50)
    out = tmp_path / "rel"
    build_release([src], out, BuildOptions(name="v", version="1.0.0", created="2025-01-01", plots=False))
    lines = (out / "pairs.jsonl").read_text(encoding="utf-8").splitlines()
    lines.insert(10, lines[3])  # row 11 repeats row 4's id
    (out / "pairs.jsonl").write_text("\n".join(lines) + "\n", encoding="utf-8")
    write_sums(out)
    seen: list[tuple[str, int]] = []
    monkeypatch.setattr(verify, "record_checks", lambda: [lambda kind, path, row, rec, res: seen.append((kind, row))])
    res = verify.verify_release(out)
    rid = json.loads(lines[3])["id"]
    assert any(f"pairs.jsonl, row 11: duplicate id {rid}." in p for p in res.problems), res.problems
    assert [r for k, r in seen if k == "pairs"] == list(range(1, len(lines) + 1))
