"""A release means what its files say (issue 20): ``release verify`` checks ``release.json`` against the
files, so an edit of a record file together with ``SHA256SUMS`` (and even ``release.json``'s hash)
is caught; dates are days of the calendar."""

from __future__ import annotations

import hashlib
import json
from pathlib import Path

import pytest

from biaskit.errors import InputError
from biaskit.release import BuildOptions, build_release, verify_release

GROUPS = [
    ("Women", "Men"),
    ("Muslims", "Hindus"),
    ("Dalits", "Brahmins"),
    ("old people", "young people"),
    ("poor people", "rich people"),
    ("Sikhs", "Christians"),
    ("disabled people", "able-bodied people"),
    ("fat people", "thin people"),
]


def _records(path: Path) -> Path:
    rows = []
    for k, (a, b) in enumerate(GROUPS):
        for i, verb in enumerate(("cannot drive", "are lazy", "are loud")):
            rows.append(
                {
                    "sent_more": f"{a} {verb} in town {i}.",
                    "sent_less": f"{b} {verb} in town {i}.",
                    "direction": "stereo" if i else "antistereo",
                    "bias_type": "gender" if k < 4 else "religion",
                    "group_more": a,
                    "group_less": b,
                    "status": "accepted",
                }
            )
    path.write_text("".join(json.dumps(r) + "\n" for r in rows), encoding="utf-8")
    return path


@pytest.fixture
def release(tmp_path) -> Path:
    src = _records(tmp_path / "pairs.jsonl")
    out = tmp_path / "rel"
    build_release(
        [src],
        out,
        BuildOptions(
            name="integrity", version="1.0.0", plots=False, keyness=False, created="2025-01-31", discover_history=False
        ),
    )
    assert verify_release(out).ok
    return out


def _resum(folder: Path) -> None:
    """What someone covering an edit does: rewrite SHA256SUMS for the files as they are now."""
    from biaskit.release.build import write_sums

    write_sums(folder)


def _drop_last_pair(folder: Path) -> None:
    f = folder / "pairs.jsonl"
    lines = f.read_text(encoding="utf-8").splitlines(keepends=True)
    f.write_text("".join(lines[:-1]), encoding="utf-8")


def test_an_edited_record_file_with_new_sums_is_caught(release):
    _drop_last_pair(release)
    _resum(release)
    problems = verify_release(release).problems
    assert any("release.json" in p and "data_files" in p and "pairs.jsonl" in p for p in problems), problems
    assert any("'counts.pairs.records'" in p for p in problems), problems


def test_a_consistent_edit_of_release_json_and_sums_is_still_caught(release):
    """The record file, release.json's hash and records count, and SHA256SUMS all edited to agree:
    the per-split counts, the language views and the exports' rows still disagree."""
    _drop_last_pair(release)
    meta = json.loads((release / "release.json").read_text(encoding="utf-8"))
    meta["data_files"]["pairs.jsonl"] = hashlib.sha256((release / "pairs.jsonl").read_bytes()).hexdigest()
    meta["counts"]["pairs"]["records"] -= 1
    meta["rows"]["pairs.jsonl"] -= 1
    (release / "release.json").write_text(json.dumps(meta, indent=2), encoding="utf-8")
    _resum(release)
    res = verify_release(release)
    assert not res.ok
    assert any("'counts.pairs.by_split." in p for p in res.problems), res.problems
    assert any("'counts.pairs.by_split_lang." in p for p in res.problems), res.problems
    assert any(".parquet" in p and "rows" in p for p in res.problems), res.problems


def test_an_impossible_date_is_refused_at_build_and_caught_by_verify(release, tmp_path):
    with pytest.raises(InputError, match="2025-13-45"):
        build_release(
            [_records(tmp_path / "again.jsonl")],
            tmp_path / "rel2",
            BuildOptions(name="x", version="1.0.0", created="2025-13-45", plots=False),
        )
    assert not (tmp_path / "rel2").exists()
    meta = json.loads((release / "release.json").read_text(encoding="utf-8"))
    meta["created"] = "2025-13-45"
    (release / "release.json").write_text(json.dumps(meta, indent=2), encoding="utf-8")
    _resum(release)
    problems = verify_release(release).problems
    assert problems and all("release.json" in p for p in problems), problems
    assert any("'created' is '2025-13-45', not a date" in p for p in problems), problems


def test_rows_of_every_export_are_checked(release):
    meta = json.loads((release / "release.json").read_text(encoding="utf-8"))
    csv_name = next(k for k in meta["rows"] if k.startswith("csv/"))
    f = release / csv_name
    f.write_text("".join(f.read_text(encoding="utf-8").splitlines(keepends=True)[:-1]), encoding="utf-8")
    _resum(release)
    problems = verify_release(release).problems
    assert any(f"'rows' gives {csv_name}" in p for p in problems), problems


def test_a_project_date_must_exist(tmp_path):
    from biaskit.pipeline.project import load_project

    (tmp_path / "pairs.jsonl").write_text("", encoding="utf-8")
    (tmp_path / "biaskit.toml").write_text(
        '[project]\nname = "x"\n\n[stages.release]\ninput = "pairs.jsonl"\ndate = "2025-02-30"\n', encoding="utf-8"
    )
    with pytest.raises(InputError) as e:
        load_project(tmp_path)
    assert "stages.release.date' (line 6)" in str(e.value) and "2025-02-30" in str(e.value)


# ------------------------------------------------------------------------------------------ determinism
def _det_project(concurrency: int) -> str:
    """The pipeline tests' offline project (test_pipeline.OFFLINE) with more jobs than threads: two
    axes, both polarities, dropping flagged pairs, at ``concurrency`` requests in flight."""
    from test_pipeline import OFFLINE

    text = OFFLINE.replace('name = "offline"', 'name = "det"')
    text = text.replace('backend = "dummy"\n', f'backend = "dummy"\nconcurrency = {concurrency}\n')
    text = text.replace(
        'axes = ["caste"]\nidentities = { caste = ["Dalit", "Brahmin"] }\npolarity = "negative"\nn = 3',
        'axes = ["caste", "religion"]\npolarity = "both"\nn = 4',
    )
    text = text.replace("per_tuple = 2", "per_tuple = 3").replace(
        "[stages.check]\n", "[stages.check]\ndrop_flagged = true\n"
    )
    assert "religion" in text and "drop_flagged" in text and "concurrency" in text, text
    return text


def test_the_same_inputs_and_cache_give_the_same_release_at_concurrency_1_and_4(tmp_path, capsys):
    """LLM rows are appended as jobs finish (in an order that follows the threads), then put in input
    order when the run ends: the checker keeps the same copy of a duplicate, the splits and every
    data file are byte-identical. release.json, the card and croissant.json differ only in the records
    of the runs themselves (their times and command lines)."""
    from conftest import run_cli

    files = {}
    metas = {}
    for c in (1, 4, 1):
        d = tmp_path / f"c{c}"
        shutil_rm(d)
        d.mkdir()
        (d / "biaskit.toml").write_text(_det_project(c), encoding="utf-8")
        code, out, err = run_cli(["run", "--project", str(d), "-q"], capsys)
        assert code == 0, out + err
        rel = d / "release" / "det-0.1.0"
        # the card and croissant.json (which carries the card's collection text) list the runs with their times
        files[c] = {
            p.relative_to(rel).as_posix(): p.read_bytes()
            for p in sorted(rel.rglob("*"))
            if p.is_file() and p.name not in ("release.json", "README.md", "SHA256SUMS", "croissant.json")
        }
        meta = json.loads((rel / "release.json").read_text(encoding="utf-8"))
        metas[c] = {k: v for k, v in meta.items() if k not in ("history", "build")}
    assert set(files[1]) == set(files[4]) and "pairs.jsonl" in files[1]
    different = [f for f in files[1] if files[1][f] != files[4][f]]
    assert not different, different
    assert metas[1] == metas[4]


def shutil_rm(d: Path) -> None:
    import shutil

    shutil.rmtree(d, ignore_errors=True)
