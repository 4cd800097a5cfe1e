"""`biaskit release build | verify | diff` on real data (IndiBias sample, CrowS-Pairs) and hand-made records.

Expected values are worked out independently of the builder: splits and strata are recounted from the
written files with pandas, the CSVs are read by a transcription of the reference reader, keyness is
checked against hand-computed log-likelihood values, the Parquet files are loaded with the real
Hugging Face `datasets` library and checksums with the real `sha256sum -c`.
"""

from __future__ import annotations

import csv
import hashlib
import json
import math
import shutil
import subprocess
from collections import Counter
from pathlib import Path

import pandas as pd
import pytest
from conftest import run_cli

from biaskit.errors import InputError
from biaskit.release import BuildOptions, build_release, diff_releases, verify_release
from biaskit.release.split import assign_splits, find_leaks
from biaskit.release.stats import compute_stats, keyness_ll, log_likelihood, simple_maths, stop_words

DATE = "2025-01-01"


def _opts(**kw) -> BuildOptions:
    base = dict(name="test-release", version="1.0.0", created=DATE, plots=False)
    base.update(kw)
    return BuildOptions(**base)


def _jsonl(path: Path) -> list[dict]:
    return [json.loads(line) for line in path.read_text(encoding="utf-8").splitlines() if line.strip()]


def _write_jsonl(path: Path, rows: list[dict]) -> Path:
    path.write_text("".join(json.dumps(r, ensure_ascii=False) + "\n" for r in rows), encoding="utf-8")
    return path


def _resum(folder: Path) -> None:
    """Rewrite SHA256SUMS after a deliberate edit (so that only the edit's own problem shows)."""
    from biaskit.release.build import write_sums

    write_sums(folder)


@pytest.fixture(scope="module")
def indibias_release(tmp_path_factory):
    from conftest import public_dataset  # the cache, a mirror ($BIASKIT_DATA_MIRROR) or the download

    src = public_dataset("indibias-sample")
    out = tmp_path_factory.mktemp("rel") / "indibias"
    s = build_release([src], out, _opts(name="indibias-sample", skip_invalid=True, license="other", plots=True))
    return src, out, s


# ------------------------------------------------------------------------------------------ build on real data
def test_indibias_views_merged_into_one_record_and_read_back(indibias_release):
    src, out, s = indibias_release
    raw = pd.read_csv(src, keep_default_na=False)
    recs = _jsonl(out / "pairs.jsonl")
    assert len(recs) == len(raw) == 561
    assert all(r["status"] == "released" for r in recs)
    # row 1 of the CSV (IndiBias index 649): English and Hindi in one record, target = the group (Brahmin)
    first = next(r for r in recs if r["views"]["en"]["sent_more"] == raw.loc[0, "modified_eng_sent_more"])
    assert first["views"]["hi"]["sent_more"] == raw.loc[0, "sent_more_hindi"]
    assert first["views"]["hi"]["sent_less"] == raw.loc[0, "sent_less_hindi"]
    assert first["target"] == "brahmin" and first["bias_type"] == "caste" and first["direction"] == "stereo"
    assert first["source_id"] == "indibias-649"
    # the one pair whose two Hindi sentences are identical keeps only its English view
    identical = raw[raw["sent_more_hindi"].str.strip() == raw["sent_less_hindi"].str.strip()]
    assert len(identical) == 1
    lonely = [r for r in recs if "hi" not in r["views"]]
    assert [r["views"]["en"]["sent_more"] for r in lonely] == list(identical["modified_eng_sent_more"])
    # biaskit.readers reads a release's pairs.jsonl back: one SentencePair per language view
    from biaskit.readers import read_pairs

    back = read_pairs(out / "pairs.jsonl")
    assert len(back) == 561 + 560
    by = {}
    for p in back:
        by.setdefault(p.source_id, {})[p.lang] = p
    assert by[first["id"]]["hi"].sent_more == raw.loc[0, "sent_more_hindi"]
    assert by[first["id"]]["en"].meta["split"] == first["split"]
    assert read_pairs(out / "pairs.jsonl", lang="hi").pairs[0].lang == "hi"
    v = verify_release(out)
    assert v.ok, v.problems


def test_release_json_and_sha256sum_c(indibias_release):
    _, out, s = indibias_release
    rel = json.loads((out / "release.json").read_text(encoding="utf-8"))
    for k in ("name", "version", "created", "schema_version", "biaskit_version", "counts", "build", "split"):
        assert k in rel, k
    assert (rel["name"], rel["version"], rel["created"]) == ("indibias-sample", "1.0.0", DATE)
    assert rel["counts"]["pairs"]["records"] == 561
    assert rel["data_files"]["pairs.jsonl"] == hashlib.sha256((out / "pairs.jsonl").read_bytes()).hexdigest()
    listed = [line.split("  ", 1)[1] for line in (out / "SHA256SUMS").read_text().splitlines()]
    on_disk = sorted(p.relative_to(out).as_posix() for p in out.rglob("*") if p.is_file() and p.name != "SHA256SUMS")
    assert listed == on_disk and "plots/counts.png" in listed
    if shutil.which("sha256sum") is None:
        pytest.skip("sha256sum (coreutils) is not installed")
    r = subprocess.run(["sha256sum", "-c", "SHA256SUMS"], cwd=out, capture_output=True, text=True)
    assert r.returncode == 0, r.stdout + r.stderr
    assert r.stdout.count(": OK") == len(listed)


def test_crows_and_indibias_csv_match_the_originals_and_their_readers(indibias_release, crows_csv):
    src, out, _ = indibias_release
    with open(crows_csv, encoding="utf-8") as fh:
        crows_header = next(csv.reader(fh))
    with open(src, encoding="utf-8") as fh:
        indibias_header = next(csv.reader(fh))
    recs = _jsonl(out / "pairs.jsonl")
    for sp in ("dev", "test"):
        for lg in ("en", "hi"):
            f = out / "csv" / f"crows-{lg}-{sp}.csv"
            with open(f, encoding="utf-8") as fh:
                assert next(csv.reader(fh)) == crows_header
            # a transcription of read_data() in nyu-mll/crows-pairs metric.py
            rows = []
            with open(f) as fh:
                for row in csv.DictReader(fh):
                    direction = row["stereo_antistereo"]
                    if direction == "stereo":
                        sent1, sent2 = row["sent_more"], row["sent_less"]
                    else:
                        sent1, sent2 = row["sent_less"], row["sent_more"]
                    rows.append((sent1, sent2, direction, row["bias_type"]))
            want = []
            for r in recs:
                v = r["views"].get(lg)
                if r["split"] == sp and v:
                    st = r["direction"] == "stereo"
                    want.append(
                        (
                            v["sent_more"] if st else v["sent_less"],
                            v["sent_less"] if st else v["sent_more"],
                            r["direction"],
                            r["bias_type"],
                        )
                    )
            assert rows == want and rows
        f = out / "csv" / f"indibias-{sp}.csv"
        with open(f, encoding="utf-8") as fh:
            assert next(csv.reader(fh)) == indibias_header
        from biaskit.readers import read_pairs

        res = read_pairs(f, format="indibias")
        n_both = sum(1 for r in recs if r["split"] == sp and {"en", "hi"} <= set(r["views"]))
        assert len(res) == 2 * n_both
        # `index` is the pair's row in pairs.jsonl; IndiBias' columns are S1/S2, so an antistereo pair's
        # sent_more (S2) is back in the *_less* columns
        df = pd.read_csv(f, keep_default_na=False)
        assert (df["stereo_antistereo"] == "antistereo").any()
        for row in df.to_dict("records"):
            v = recs[int(row["index"])]["views"]
            s1, s2 = (
                ("sent_less", "sent_more") if row["stereo_antistereo"] == "antistereo" else ("sent_more", "sent_less")
            )
            assert (row["modified_eng_sent_more"], row["modified_eng_sent_less"]) == (v["en"][s1], v["en"][s2])
            assert (row["sent_more_hindi"], row["sent_less_hindi"]) == (v["hi"][s1], v["hi"][s2])


def test_indibias_csv_export_round_trips_to_the_original_columns(indibias_release):
    """Read the IndiBias sample, release it, export IndiBias-style CSV: every exported row has the
    original file's four sentence columns (S1/S2 in both languages) for the same source id."""
    src, out, _ = indibias_release
    raw = pd.read_csv(src, keep_default_na=False)
    recs = _jsonl(out / "pairs.jsonl")
    exported = pd.concat(
        [pd.read_csv(out / "csv" / f"indibias-{sp}.csv", keep_default_na=False) for sp in ("dev", "test")]
    )
    # every row with two valid views (the one with identical Hindi sentences has only English)
    assert len(exported) == len(raw) - 1
    orig = {f"indibias-{r['index']}": r for r in raw.to_dict("records")}
    cols = ["modified_eng_sent_more", "modified_eng_sent_less", "sent_more_hindi", "sent_less_hindi"]
    import unicodedata

    def nfc(t: str) -> str:
        return unicodedata.normalize("NFC", t)

    n_anti = n_nfc = 0
    for row in exported.to_dict("records"):
        o = orig[recs[int(row["index"])]["source_id"]]
        # biaskit stores sentences NFC-normalised (16 of the sample's sentences are not NFC; none has
        # blanks to strip): equal after NFC, and byte-equal otherwise
        assert [row[c] for c in cols] == [nfc(o[c]) for c in cols], o["index"]
        n_nfc += sum(row[c] != o[c] for c in cols)
        assert row["stereo_antistereo"] == o["stereo_antistereo"]
        n_anti += o["stereo_antistereo"] == "antistereo"
    assert n_anti == (raw["stereo_antistereo"] == "antistereo").sum() == 107
    assert n_nfc == sum(nfc(x) != x for c in cols for x in raw[c]) == 16
    # the exported file reads back as the pairs biaskit read from the original
    from biaskit.readers import read_pairs

    by_src = {(p.source_id, p.lang): p for p in read_pairs(src, skip_invalid=True)}
    back = [p for sp in ("dev", "test") for p in read_pairs(out / "csv" / f"indibias-{sp}.csv")]
    assert len(back) == 2 * len(exported)
    for p in back:
        rec = recs[int(p.source_id.removeprefix("indibias-"))]
        q = by_src[(rec["source_id"], p.lang)]
        assert (p.sent_more, p.sent_less, p.direction) == (q.sent_more, q.sent_less, q.direction)


def test_load_dataset_offline_gives_splits_rows_and_features(indibias_release, tmp_path, monkeypatch):
    datasets = pytest.importorskip("datasets", reason="pip install 'biaskit[release]'")
    _, out, _ = indibias_release
    monkeypatch.setenv("HF_DATASETS_OFFLINE", "1")
    monkeypatch.setenv("HF_HUB_OFFLINE", "1")
    monkeypatch.setenv("HF_HOME", str(tmp_path / "hf"))
    monkeypatch.setenv("HF_DATASETS_CACHE", str(tmp_path / "hf" / "datasets"))
    d = datasets.load_dataset(str(out))
    recs = _jsonl(out / "pairs.jsonl")
    assert set(d) == {"dev", "test"}
    for sp in ("dev", "test"):
        assert d[sp].num_rows == sum(1 for r in recs if r["split"] == sp)
    expected = ["id", "bias_type", "direction", "target", "source_id"] + [
        f"{c}_{lg}" for lg in ("en", "hi") for c in ("sent_more", "sent_less", "group_more", "group_less", "pair_id")
    ]
    assert list(d["test"].features) == expected
    assert all(str(f.dtype) == "string" for f in d["test"].features.values())
    row = d["test"][0]
    rec = next(r for r in recs if r["id"] == row["id"])
    assert (
        row["sent_less_hi"] == rec["views"]["hi"]["sent_less"] and row["split" if False else "target"] == rec["target"]
    )


# ------------------------------------------------------------------------------------------ splits
def test_crows_split_disjoint_stratified_and_deterministic(crows_csv, tmp_path):
    a = build_release([crows_csv], tmp_path / "a", _opts(keyness=False, seed=7))
    build_release([crows_csv], tmp_path / "b", _opts(keyness=False, seed=7))
    build_release([crows_csv], tmp_path / "c", _opts(keyness=False, seed=8))
    assert (tmp_path / "a" / "SHA256SUMS").read_bytes() == (tmp_path / "b" / "SHA256SUMS").read_bytes()
    df = pd.DataFrame(_jsonl(tmp_path / "a" / "pairs.jsonl"))
    dc = pd.DataFrame(_jsonl(tmp_path / "c" / "pairs.jsonl"))
    assert len(df) == 1508 and a.counts["pairs"]["records"] == 1508
    assert (df.set_index("id")["split"] != dc.set_index("id")["split"]).any(), "another seed, another split"
    # disjoint by target, recounted from the file
    dev_t, test_t = set(df.loc[df.split == "dev", "target"]), set(df.loc[df.split == "test", "target"])
    assert dev_t and test_t and not dev_t & test_t
    # 25/75 overall and in every sizeable bias type x direction stratum
    assert 0.22 <= (df.split == "dev").mean() <= 0.28
    share = df.groupby(["bias_type", "direction"])["split"].agg(lambda s: (s == "dev").mean())
    size = df.groupby(["bias_type", "direction"]).size()
    for key in size[size >= 60].index:
        assert 0.15 <= share[key] <= 0.35, (key, share[key], size[key])
    rel = json.loads((tmp_path / "a" / "release.json").read_text())
    for (bt, d), v in share.items():
        assert rel["split"]["dev_share_by_stratum"][f"pairs|{bt}|{d}"] == pytest.approx(v, abs=1e-4)


def test_assign_splits_by_hand():
    # one stratum: targets of 30, 10, 10, 10, 10, 10, 10, 5, 5 records (100); 25 % dev
    sizes = {"a": 30, "b": 10, "c": 10, "d": 10, "e": 10, "f": 10, "g": 10, "h": 5, "i": 5}
    targets = [t for t, n in sizes.items() for _ in range(n)]
    m = assign_splits(targets, ["s"] * len(targets), dev_fraction=0.25, seed=0)
    dev = sum(sizes[t] for t, sp in m.items() if sp == "dev")
    assert dev == 25 and m["a"] == "test"  # 30 alone would overshoot 25
    assert m == assign_splits(targets, ["s"] * len(targets), dev_fraction=0.25, seed=0)
    # a fixed target keeps its split and counts towards the goal
    f = assign_splits(targets, ["s"] * len(targets), dev_fraction=0.25, seed=0, fixed={"a": "dev"})
    assert f["a"] == "dev" and all(sp == "test" for t, sp in f.items() if t != "a")
    assert find_leaks(["x", "x", "y"], ["dev", "test", "dev"]) == {"x": ["dev", "test"]}
    with pytest.raises(InputError, match="between 0 and 1"):
        assign_splits(["a"], ["s"], dev_fraction=1.5)


def _pair(i: int, group: str, other: str, *, lang: str = "en", split: str | None = None, **kw) -> dict:
    r = {
        "sent_more": f"The {group} person number {i} is lazy.",
        "sent_less": f"The {other} person number {i} is lazy.",
        "direction": "stereo",
        "bias_type": "religion",
        "lang": lang,
        "group_more": group,
        "group_less": other,
        "status": "accepted",
        "source_id": f"src-{i}",
    }
    if split:
        r["meta"] = {"split": split}
    r.update(kw)
    return r


def test_keep_policy_refuses_a_target_leak(tmp_path):
    recs = _write_jsonl(
        tmp_path / "v.jsonl",
        [
            _pair(1, "Hindu", "Muslim", split="dev"),
            _pair(2, "Hindus", "Sikhs", split="test"),
            _pair(3, "Sikh", "Hindu", split="test"),
        ],
    )
    with pytest.raises(InputError, match="target term 'hindu' is in both splits") as exc:
        build_release([recs], tmp_path / "out", _opts(split_policy="keep"))
    assert "pass --split-policy target" in str(exc.value)
    # under `biaskit run` the fix names the [stages.release] key, not a flag
    from biaskit.options import Key, Keys, speaking

    with speaking(Keys("biaskit.toml", {"split_policy": Key("stages.release", "split_policy")})):
        with pytest.raises(InputError, match="target term 'hindu' is in both splits") as exc:
            build_release([recs], tmp_path / "out", _opts(split_policy="keep"))
    assert 'set split_policy = "target" in [stages.release] of biaskit.toml' in str(exc.value)
    assert "--split-policy" not in str(exc.value)
    assert not (tmp_path / "out").exists(), "nothing is published when the build is refused"
    ok = _write_jsonl(
        tmp_path / "ok.jsonl", [_pair(1, "Hindu", "Muslim", split="dev"), _pair(2, "Sikh", "Hindu", split="test")]
    )
    s = build_release([ok], tmp_path / "out", _opts(split_policy="keep"))
    assert s.counts["pairs"]["by_split"] == {"dev": 1, "test": 1}


def test_previous_release_keeps_target_splits(tmp_path):
    v1 = _write_jsonl(
        tmp_path / "v1.jsonl",
        [_pair(i, g, "Muslim") for i, g in enumerate(["Hindu", "Sikh", "Jain", "Christian", "Buddhist", "Parsi"])],
    )
    build_release([v1], tmp_path / "r1", _opts())
    r1 = {r["target"]: r["split"] for r in _jsonl(tmp_path / "r1" / "pairs.jsonl")}
    more = [_pair(10 + i, g, "Muslim") for i, g in enumerate(["Hindu", "Sikh", "Jain", "Christian"])]
    v2 = _write_jsonl(
        tmp_path / "v2.jsonl",
        [_pair(i, g, "Muslim") for i, g in enumerate(["Hindu", "Sikh", "Jain", "Christian", "Buddhist", "Parsi"])]
        + more
        + [_pair(20, "Jew", "Muslim")],
    )
    build_release([v2], tmp_path / "r2", _opts(version="1.1.0", previous=str(tmp_path / "r1"), seed=99))
    for r in _jsonl(tmp_path / "r2" / "pairs.jsonl"):
        if r["target"] in r1:
            assert r["split"] == r1[r["target"]], r["target"]


# ------------------------------------------------------------------------------------------ verify
@pytest.fixture
def small_release(tmp_path):
    rows = []
    groups = ["Hindu", "Muslim", "Sikh", "Jain", "Christian", "Buddhist", "Parsi", "Jew"]
    for i, g in enumerate(groups):
        rows.append(_pair(i, g, groups[(i + 1) % len(groups)]))
        rows.append(
            _pair(
                i,
                g,
                groups[(i + 1) % len(groups)],
                lang="hi",
                sent_more=f"{g} व्यक्ति {i} आलसी है।",
                sent_less=f"{groups[(i + 1) % len(groups)]} व्यक्ति {i} आलसी है।",
            )
        )
    recs = _write_jsonl(tmp_path / "validated.jsonl", rows)
    out = tmp_path / "rel"
    build_release([recs], out, _opts(license="cc-by-4.0"))
    return out


def test_verify_clean_release_exit_0_with_warnings(small_release, capsys):
    code, stdout, stderr = run_cli(["release", "verify", str(small_release)], capsys)
    assert code == 0, stderr
    assert "OK (test-release 1.0.0)" in stdout and "8 pairs valid" in stdout
    assert "warning:" in stderr and "section 'Motivation' is still to be written by the maintainers" in stderr


def test_verify_catches_a_tampered_file(small_release, capsys):
    f = small_release / "csv" / "crows-en-test.csv"
    f.write_text(f.read_text(encoding="utf-8").replace("lazy", "hardworking", 1), encoding="utf-8")
    code, _, stderr = run_cli(["release", "verify", str(small_release)], capsys)
    assert code == 2
    errors = [line for line in stderr.splitlines() if line.startswith("error:")]
    assert errors == [
        f"error: {f}: checksum does not match SHA256SUMS (the file was changed). Fix: restore the "
        "file from the published release, or rebuild it (any edit needs a rebuild)."
    ]


def test_verify_catches_a_bad_row_and_a_leak(small_release):
    f = small_release / "pairs.jsonl"
    recs = _jsonl(f)
    recs[2]["direction"] = "sideways"
    other = next(r for i, r in enumerate(recs) if r["split"] != recs[0]["split"] and i != 2)
    other["target"] = recs[0]["target"]
    _write_jsonl(f, recs)
    _resum(small_release)
    res = verify_release(small_release)
    assert any(p.startswith(f"{f}, row 3: not a valid released pair: direction") for p in res.problems), res.problems
    assert any(f"target term '{recs[0]['target']}' is in both dev and test" in p for p in res.problems)


def test_verify_catches_a_missing_card_field_and_section(small_release):
    card = small_release / "README.md"
    text = card.read_text(encoding="utf-8")
    text = "\n".join(line for line in text.splitlines() if not line.startswith("license:"))
    text = text.replace("### Maintenance", "### Upkeep")
    card.write_text(text, encoding="utf-8")
    _resum(small_release)
    res = verify_release(small_release)
    assert any("card field 'license' is missing" in p for p in res.problems), res.problems
    assert any("card section 'Maintenance' is missing" in p for p in res.problems)
    assert all(p.startswith(str(card)) for p in res.problems)


def test_card_text_fills_the_human_sections(tmp_path, small_release):
    before = len(verify_release(small_release).warnings)
    human = tmp_path / "card.md"
    human.write_text(
        "## Motivation\n\nWe measure caste and religion bias in Hindi LMs.\n\n"
        "## Maintenance\n\nMail the maintainers.\n",
        encoding="utf-8",
    )
    out = tmp_path / "rel2"
    build_release([tmp_path / "validated.jsonl"], out, _opts(license="cc-by-4.0", card_text=str(human)))
    card = (out / "README.md").read_text(encoding="utf-8")
    assert "We measure caste and religion bias in Hindi LMs." in card
    assert len(verify_release(out).warnings) == before - 2


# ------------------------------------------------------------------------------------------ diff
def test_diff_two_hand_made_versions(tmp_path, capsys):
    a = [_pair(1, "Hindu", "Muslim"), _pair(2, "Sikh", "Jain"), _pair(3, "Parsi", "Jew")]
    hi2 = _pair(2, "Sikh", "Jain", lang="hi", sent_more="सिख व्यक्ति 2 आलसी है।", sent_less="जैन व्यक्ति 2 आलसी है।")
    build_release([_write_jsonl(tmp_path / "a.jsonl", a + [hi2])], tmp_path / "v1", _opts())
    hi2b = {**hi2, "sent_less": "जैन आदमी 2 आलसी है।"}
    b = [_pair(1, "Hindu", "Muslim"), _pair(2, "Sikh", "Jain"), _pair(4, "Christian", "Hindu")]
    # --previous keeps the targets' splits (otherwise a new record may move an old target to the other split)
    build_release(
        [_write_jsonl(tmp_path / "b.jsonl", b + [hi2b])],
        tmp_path / "v2",
        _opts(version="1.1.0", previous=str(tmp_path / "v1")),
    )
    ids1 = {r["source_id"]: r["id"] for r in _jsonl(tmp_path / "v1" / "pairs.jsonl")}
    ids2 = {r["source_id"]: r["id"] for r in _jsonl(tmp_path / "v2" / "pairs.jsonl")}
    assert ids1["src-1"] == ids2["src-1"] and ids1["src-2"] == ids2["src-2"], "stable ids"
    d = diff_releases(tmp_path / "v1", tmp_path / "v2")
    k = d["kinds"]["pairs"]
    assert k["added"] == [ids2["src-4"]] and k["removed"] == [ids1["src-3"]]
    assert [c["id"] for c in k["changed"]] == [ids1["src-2"]]
    assert k["changed"][0]["fields"] == ["views.hi.pair_id", "views.hi.sent_less"]
    assert k["changed"][0]["after"]["views.hi.sent_less"] == "जैन आदमी 2 आलसी है।"
    assert k["unchanged"] == 1
    md = tmp_path / "CHANGES.md"
    code, stdout, _ = run_cli(
        [
            "release",
            "diff",
            str(tmp_path / "v1"),
            str(tmp_path / "v2"),
            "--markdown",
            str(md),
            "--json",
            str(tmp_path / "diff.json"),
        ],
        capsys,
    )
    assert code == 0 and "pairs: +1 -1 ~1" in stdout
    text = md.read_text(encoding="utf-8")
    assert "# Changes from test-release 1.0.0 to test-release 1.1.0" in text and "- added: 1" in text
    assert json.loads((tmp_path / "diff.json").read_text())["kinds"]["pairs"]["added"] == [ids2["src-4"]]


# ------------------------------------------------------------------------------------------ stats
def test_log_likelihood_and_simple_maths_by_hand():
    # a=10, b=2 in two corpora of 1000 tokens: E1 = E2 = 6; LL = 2(10 ln(10/6) + 2 ln(2/6))
    #   = 2(5.1082562 - 2.1972246) = 5.8220632
    assert log_likelihood(10, 2, 1000, 1000) == pytest.approx(5.8220632, abs=1e-6)
    # a=50 of 10,000, b=10 of 20,000: E1 = 20, E2 = 40; LL = 2(50 ln 2.5 + 10 ln 0.25) = 2(45.8145366 - 13.8629436)
    assert log_likelihood(50, 10, 10_000, 20_000) == pytest.approx(63.9031860, abs=1e-6)
    # a word absent from one corpus: only its own term counts (0 ln 0 = 0): a=5, b=0, c=d=100: E1=2.5
    assert log_likelihood(5, 0, 100, 100) == pytest.approx(2 * 5 * math.log(2), abs=1e-9)
    # Kilgarriff simple maths, N = 1: 100 per million vs 10 per million -> 101 / 11
    assert float(simple_maths(100, 10)) == pytest.approx(101 / 11)
    top = keyness_ll(Counter({"lazy": 10, "the": 50, "cat": 2}), Counter({"lazy": 2, "the": 50, "dog": 2}))
    # corpora of 62 and 54 tokens: E1 = 62 * 12 / 116 = 6.41379, E2 = 54 * 12 / 116 = 5.58621,
    # LL = 2 (10 ln(10 / 6.41379) + 2 ln(2 / 5.58621)) = 2 (4.44134 - 2.05430) = 4.77407
    assert top[0]["word"] == "lazy" and top[0]["ll"] == pytest.approx(4.77407, abs=1e-3)
    # "cat": a=2, b=0: E1 = 62 * 2 / 116 = 1.06897, LL = 2 * 2 ln(2 / 1.06897) = 2.50553; "the" is
    # relatively rarer in the first corpus (50/62 < 50/54) and "dog" has no count there: not listed
    assert [x["word"] for x in top] == ["lazy", "cat"] and top[1]["ll"] == pytest.approx(2.50553, abs=1e-3)


def test_stats_counts_lengths_and_keyness_of_hand_made_pairs():
    recs = [
        {
            "id": "r1",
            "split": "dev",
            "bias_type": "gender",
            "direction": "stereo",
            "target": "woman",
            "views": {
                "en": {
                    "sent_more": "Women are bad drivers",
                    "sent_less": "Men are bad drivers",
                    "group_more": None,
                    "group_less": None,
                },
                "hi": {
                    "sent_more": "महिलाएं खराब चालक होती हैं",
                    "sent_less": "पुरुष खराब चालक होते हैं",
                    "group_more": None,
                    "group_less": None,
                },
            },
        },
        {
            "id": "r2",
            "split": "test",
            "bias_type": "gender",
            "direction": "antistereo",
            "target": "woman",
            "views": {
                "en": {
                    "sent_more": "The woman fixed the car",
                    "sent_less": "The man fixed the car",
                    "group_more": None,
                    "group_less": None,
                }
            },
        },
    ]
    s = compute_stats(recs)["pairs"]
    counts = {(c["bias_type"], c["direction"], c["lang"], c["split"]): c["n"] for c in s["counts"]}
    assert counts == {
        ("gender", "stereo", "en", "dev"): 1,
        ("gender", "stereo", "hi", "dev"): 1,
        ("gender", "antistereo", "en", "test"): 1,
    }
    # English sentences: 4, 4, 5, 5 words -> mean 4.5; Hindi: 5, 5
    assert s["sentence_words"]["en"]["mean"] == 4.5 and s["sentence_words"]["hi"]["mean"] == 5.0
    # English vocabulary: women are bad drivers men the woman fixed car man = 10 types, 18 tokens
    assert s["vocabulary"]["en"] == {"types": 10, "tokens": 18, "by_split": {"dev": 5, "test": 5}}
    # stereotypical sentences: "Women are bad drivers", "The man fixed the car" (antistereo: sent_less);
    # only "the" reaches the minimum count of 2, and it is as frequent on both sides: no keyword
    assert s["keyness"]["en"]["stereotype_vs_anti"] == [] and s["keyness"]["en"]["anti_vs_stereotype"] == []
    gen = [x["word"] for x in s["keyness"]["en"]["vs_general"]["top"]]
    # words with a count >= 2 in the English sentences (the target "woman" would be removed, StereoSet Table 3),
    # without the stop words "the" and "are" (wordfreq's 100 most frequent English words)
    assert {"the", "are"} <= stop_words("en") and not {"bad", "drivers", "fixed", "car"} & stop_words("en")
    assert set(gen) == {"bad", "drivers", "fixed", "car"}
    assert gen[0] == "drivers"  # the rarest in general English (wordfreq 3.6e-05): the highest score


# ------------------------------------------------------------------------------------------ history and card
def test_card_is_filled_from_stage_reports_without_annotator_names(tmp_path):
    from biaskit.annotation.agreement import agreement_report
    from biaskit.annotation.judgment_options import AgreementOptions

    rows = [_pair(i, g, "Muslim") for i, g in enumerate(["Hindu", "Sikh", "Jain", "Christian"])]
    recs = _write_jsonl(tmp_path / "validated.jsonl", rows)
    # what `annotate apply` writes next to its output
    (tmp_path / "validated.summary.json").write_text(
        json.dumps({"records": 6, "accepted": 4, "rejected": 1, "needs_adjudication": 1, "not_annotated": 0})
    )
    _write_jsonl(
        tmp_path / "validated.rejected.jsonl",
        [
            {"id": "p-x", "status": "rejected", "reason": "annotators: not a valid pair"},
            {"id": "p-y", "status": "needs_adjudication", "reason": "tie"},
        ],
    )
    judg = pd.DataFrame(
        {
            "task": [f"t{i}" for i in range(6) for _ in range(3)],
            "worker": ["alice@example.org", "bob@example.org", "carol@example.org"] * 6,
            "question": "validity",
            "label": ["stereo", "stereo", "stereo", "stereo", "stereo", "invalid"] * 3,
        }
    )
    judg.to_csv(tmp_path / "judgments.csv", index=False)
    rep = agreement_report(AgreementOptions(judgments=tmp_path / "judgments.csv", out=tmp_path / "agree"))
    _write_jsonl(
        tmp_path / "gen.runlog.jsonl",
        [
            {
                "command": "biaskit curate sentences ...",
                "started": "2025-01-01T00:00:00",
                "jobs": 10,
                "rows": 40,
                "errors": 0,
                "model": "smollm2",
                "prompt_id": "sentences",
                "prompt_version": "2",
                "llm": {"requests": 10},
            }
        ],
    )
    out = tmp_path / "rel"
    build_release(
        [recs],
        out,
        _opts(
            history=[str(tmp_path / "agree" / "agreement.json"), f"sentence generation={tmp_path / 'gen.runlog.jsonl'}"]
        ),
    )
    card = (out / "README.md").read_text(encoding="utf-8")
    assert "| pair validation | 3 | 6 | 18 |" in card
    assert f"{rep['krippendorff_alpha']:.3f}" in card and f"{rep['fleiss_kappa']:.3f}" in card
    # per-annotator figures under the release's keyed pseudonyms (HMAC-SHA256 of "<release name> NUL <login>"
    # with the key kept beside the release folder), all 6 items each: ordered by pseudonym
    import hashlib
    import hmac

    key = bytes.fromhex((tmp_path / ".biaskit" / "release.key").read_text().strip())
    names = sorted(
        "ann-" + hmac.new(key, b"test-release\0" + w.encode(), hashlib.sha256).hexdigest()[:10]
        for w in ("alice@example.org", "bob@example.org", "carol@example.org")
    )
    assert ", ".join(f"{n} 6" for n in names) in card
    assert "example.org" not in card and "alice" not in (out / "release.json").read_text()
    assert "| validated | 4 | records 6, rejected 1, needs adjudication 1, not annotated 0 |" in card
    assert "smollm2" in card and "sentences@2" in card and "| generated (sentence generation) | 40 |" in card
    rel = json.loads((out / "release.json").read_text())
    assert rel["build"]["stage_commands"] == ["biaskit curate sentences ..."]
    assert "not recorded" in card  # the checker output was not given


# ------------------------------------------------------------------------------------------ CLI errors
def test_cli_errors_are_one_line_exit_2(tmp_path, capsys):
    recs = _write_jsonl(tmp_path / "v.jsonl", [_pair(1, "Hindu", "Muslim")])
    cases = [
        (
            [
                "release",
                "build",
                "--records",
                str(recs),
                "--name",
                "x",
                "--version",
                "1.0",
                "--out",
                str(tmp_path / "o"),
            ],
            "invalid version '1.0'",
        ),
        (
            [
                "release",
                "build",
                "--records",
                str(tmp_path / "nope.jsonl"),
                "--name",
                "x",
                "--version",
                "1.0.0",
                "--out",
                str(tmp_path / "o"),
            ],
            "nope.jsonl: file not found.",
        ),
        (
            [
                "release",
                "build",
                "--records",
                str(recs),
                "--name",
                "x",
                "--version",
                "1.0.0",
                "--out",
                str(tmp_path / "o"),
                "--history",
                str(recs.with_name("missing.json")),
            ],
            "history file not found",
        ),
        (["release", "verify", str(tmp_path)], "not a biaskit release: no release.json."),
        (["release", "diff", str(tmp_path), str(tmp_path)], "not a biaskit release"),
    ]
    for args, msg in cases:
        code, _, stderr = run_cli(args, capsys)
        assert code == 2, (args, stderr)
        assert msg in stderr, (msg, stderr)
        if args[1] != "verify":
            assert len(stderr.strip().splitlines()) == 1, stderr
        assert "Traceback" not in stderr


def test_tuples_share_the_target_split_and_flagged_pairs_are_dropped(tmp_path):
    pairs = [_pair(i, g, "Hindu") for i, g in enumerate(["Muslim", "Sikh", "Jain", "Christian", "Buddhist", "Parsi"])]
    pairs.append(
        _pair(
            9, "Jew", "Hindu", status="flagged", meta={"flags": [{"code": "multi_span", "reason": "2 changed spans"}]}
        )
    )
    tuples = [
        {"identity": ident, "attribute": attr, "axis": "religion", "polarity": "negative", "status": "accepted"}
        for ident, attr in (("Muslims", "violent"), ("Sikhs", "aggressive"), ("Parsis", "stingy"))
    ]
    p = _write_jsonl(tmp_path / "pairs.jsonl", pairs)
    t = _write_jsonl(tmp_path / "tuples.jsonl", tuples)
    s = build_release([p, t], tmp_path / "rel", _opts())
    assert s.counts["pairs"]["records"] == 6 and s.counts["tuples"]["records"] == 3
    split_of = {r["target"]: r["split"] for r in _jsonl(tmp_path / "rel" / "pairs.jsonl")}
    for r in _jsonl(tmp_path / "rel" / "tuples.jsonl"):
        # "Muslims" (tuple identity) and "Muslim" (pair group) are one target term: one split
        assert r["status"] == "released" and r["meta"]["split"] == split_of[r["identity"].lower().rstrip("s")]
    card = (tmp_path / "rel" / "README.md").read_text(encoding="utf-8")
    assert "Flags of the pairs dropped as `flagged`: multi_span 1." in card
    assert "| read for release (pairs) | 6 | not released: flagged 1 |" in card
    assert verify_release(tmp_path / "rel").ok
    kept = build_release([p], tmp_path / "rel2", _opts(keep_flagged=True))
    assert kept.counts["pairs"]["records"] == 7


def test_a_card_without_front_matter_names_the_card_text_flag_and_key(tmp_path):
    """`release verify` runs under `biaskit run` too (the release stage): its fix names both the flag and the
    [stages.release] key."""
    from biaskit.release.build import write_sums

    recs = _write_jsonl(tmp_path / "v.jsonl", [_pair(1, "Hindu", "Muslim"), _pair(2, "Sikh", "Jain")])
    out = tmp_path / "out"
    build_release([recs], out, _opts())
    card = out / "README.md"
    text = card.read_text(encoding="utf-8")
    card.write_text(text.split("\n---\n", 1)[1], encoding="utf-8")  # the YAML header cut off
    write_sums(out)
    res = verify_release(out)
    (line,) = [p for p in res.problems if "no YAML front matter" in p]
    assert "`--card-text FILE`, card_text in [stages.release] under `biaskit run`" in line
