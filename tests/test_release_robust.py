"""Releases survive a crash and few targets (issues 9 and 12):

- ``kill -9`` during ``biaskit release build`` leaves the previous release folder as it was (the
  folder is built aside and swapped in whole), and the re-run gives a byte-identical ``SHA256SUMS``
  (slow: a 20,000-pair build, long enough to be killed in the middle);
- :func:`biaskit.io.atomic_dir` puts back a folder left aside by a process killed between its two
  renames, and removes the temporary folders of dead builds;
- a split is never empty when there are two targets or more, and an unavoidably empty split (one
  target) is left out of the files and the card, so that ``datasets.load_dataset`` loads the release
  (it refuses an empty split).
"""

from __future__ import annotations

import json
import os
import signal
import subprocess
from pathlib import Path

import pytest
from pipeline_helpers import biaskit_exe, clean_env, wait_for


def _pair(more: str, less: str, gm: str, gl: str, direction: str, i: int) -> dict:
    return {
        "sent_more": more,
        "sent_less": less,
        "group_more": gm,
        "group_less": gl,
        "direction": direction,
        "bias_type": "caste",
        "lang": "en",
        "status": "accepted",
        "source_id": f"x-{i}",
    }


def _write(path: Path, rows: list[dict]) -> Path:
    path.write_text("".join(json.dumps(r, ensure_ascii=False) + "\n" for r in rows), encoding="utf-8")
    return path


# ------------------------------------------------------------------------------------------ splits
def test_two_targets_in_separate_strata_give_two_non_empty_splits(tmp_path):
    """Dalit pairs are all stereo, Brahmin pairs all antistereo: each target is alone in its stratum, so
    the greedy assignment (dev goal 25% of each stratum) puts both in test (3 Dalit pairs: moving them to
    dev changes the squared shortfall by 2*3*0.75 - 9 = -4.5, to test by 2*3*2.25 - 9 = +4.5; likewise
    for the 2 Brahmin pairs), so the smaller target, Brahmin, moves to dev."""
    from biaskit.release import BuildOptions, build_release, verify_release

    rows = [
        _pair(f"Dalit people are poor {i}.", f"Brahmin people are poor {i}.", "Dalit", "Brahmin", "stereo", i)
        for i in range(3)
    ]
    rows += [
        _pair(f"Brahmin people are rich {i}.", f"Dalit people are rich {i}.", "Brahmin", "Dalit", "antistereo", 10 + i)
        for i in range(2)
    ]
    rec = _write(tmp_path / "p.jsonl", rows)
    s = build_release([rec], tmp_path / "rel", BuildOptions(name="t", version="1.0.0", created="2025-01-01"))
    assert s.counts["pairs"]["by_split"] == {"dev": 2, "test": 3}  # the smaller target (Brahmin, 2) in dev
    assert verify_release(tmp_path / "rel").ok

    import datasets

    ds = datasets.load_dataset(str(tmp_path / "rel"))
    assert (len(ds["dev"]), len(ds["test"])) == (2, 3)


def test_one_target_leaves_dev_out_and_still_loads(tmp_path):
    from biaskit.release import BuildOptions, build_release, verify_release
    from biaskit.release.verify import card_front_matter

    rows = [
        _pair(f"Dalit people are poor {i}.", f"Brahmin people are poor {i}.", "Dalit", "Brahmin", "stereo", i)
        for i in range(3)
    ]
    rel = tmp_path / "rel"
    s = build_release(
        [_write(tmp_path / "p.jsonl", rows)], rel, BuildOptions(name="t", version="1.0.0", created="2025-01-01")
    )
    assert s.counts["pairs"]["by_split"] == {"dev": 0, "test": 3}
    assert not (rel / "data" / "pairs-dev.parquet").exists()
    conf = card_front_matter((rel / "README.md").read_text(encoding="utf-8"))["configs"][0]
    assert [f["split"] for f in conf["data_files"]] == ["test"]
    assert verify_release(rel).ok

    import datasets

    ds = datasets.load_dataset(str(rel))
    assert list(ds) == ["test"] and len(ds["test"]) == 3


def test_verify_names_an_empty_split_file(tmp_path):
    """A release written before this fix (an empty dev Parquet file) is reported with the fix."""
    import pyarrow.parquet as pq

    from biaskit.release import BuildOptions, build_release, verify_release

    rows = [
        _pair(f"Dalit people are poor {i}.", f"Brahmin people are poor {i}.", "Dalit", "Brahmin", "stereo", i)
        for i in range(2)
    ]
    rel = tmp_path / "rel"
    build_release(
        [_write(tmp_path / "p.jsonl", rows)], rel, BuildOptions(name="t", version="1.0.0", created="2025-01-01")
    )
    test = pq.read_table(rel / "data" / "pairs-test.parquet")
    pq.write_table(test.slice(0, 0), rel / "data" / "pairs-dev.parquet")
    res = verify_release(rel)
    assert any("split 'dev' is empty" in p and "load_dataset" in p for p in res.problems), res.problems


# ------------------------------------------------------------------------------------------ atomic_dir
def test_atomic_dir_puts_back_a_folder_left_aside_and_cleans_dead_builds(tmp_path):
    from biaskit.io import atomic_dir

    out = tmp_path / "rel"
    aside = tmp_path / ".rel.old-999999-abc"  # killed between "old aside" and "new in place"
    aside.mkdir()
    (aside / "SHA256SUMS").write_text("previous\n")
    dead = tmp_path / ".rel.tmp-999999-xyz"  # a build whose process is gone
    dead.mkdir()
    alive = tmp_path / f".rel.tmp-{os.getppid()}-xyz"  # a build still running (our parent process)
    alive.mkdir()
    with pytest.raises(RuntimeError):
        with atomic_dir(out):
            # the previous folder is back in place before anything else happens
            assert (out / "SHA256SUMS").read_text() == "previous\n" and not aside.exists()
            raise RuntimeError("the build fails")
    assert (out / "SHA256SUMS").read_text() == "previous\n"
    assert not dead.exists() and alive.exists()
    with atomic_dir(out) as tmp:
        (tmp / "SHA256SUMS").write_text("new\n")
    assert (out / "SHA256SUMS").read_text() == "new\n"
    assert sorted(p.name for p in tmp_path.iterdir()) == sorted(["rel", alive.name])


# ------------------------------------------------------------------------------------------ kill -9
def _synthetic(path: Path, n: int) -> Path:
    """``n`` pairs with an English and a Hindi view (linked by source_id), 200 groups."""
    rows = []
    for i in range(n):
        g, h = i % 200, (i * 7 + 1) % 200
        h = h if h != g else (g + 1) % 200
        for lang, more, less, gm, gl in (
            (
                "en",
                f"The group{g} people are careless at work {i}.",
                f"The group{h} people are careless at work {i}.",
                f"group{g}",
                f"group{h}",
            ),
            (
                "hi",
                f"समूह{g} के लोग काम में लापरवाह होते हैं {i}।",
                f"समूह{h} के लोग काम में लापरवाह होते हैं {i}।",
                f"समूह{g}",
                f"समूह{h}",
            ),
        ):
            rows.append(
                {
                    "sent_more": more,
                    "sent_less": less,
                    "group_more": gm,
                    "group_less": gl,
                    "direction": "stereo" if i % 5 else "antistereo",
                    "bias_type": "caste",
                    "lang": lang,
                    "status": "accepted",
                    "source_id": f"syn-{i}",
                }
            )
    return _write(path, rows)


@pytest.mark.slow
def test_kill_9_during_release_build_keeps_the_previous_release(tmp_path):
    from biaskit.release import verify_release

    rec = _synthetic(tmp_path / "pairs.jsonl", 20000)
    out = tmp_path / "rel"
    cmd = [
        biaskit_exe(),
        "release",
        "build",
        "--records",
        str(rec),
        "--name",
        "syn",
        "--version",
        "1.0.0",
        "--date",
        "2025-01-01",
        "--out",
        str(out),
    ]
    env = clean_env()
    first = subprocess.run(cmd, env=env, capture_output=True, text=True, timeout=900)
    assert first.returncode == 0, first.stderr
    sums = (out / "SHA256SUMS").read_bytes()
    files = {p.relative_to(out).as_posix(): p.read_bytes() for p in out.rglob("*") if p.is_file()}

    proc = subprocess.Popen(cmd, env=env, stdout=subprocess.DEVNULL, stderr=subprocess.DEVNULL)
    tmp_glob = f".rel.tmp-{proc.pid}-*"
    # kill it once it writes the new folder (after reading, splitting and the statistics)
    started = wait_for(
        lambda: proc.poll() is not None or any(any(d.iterdir()) for d in tmp_path.glob(tmp_glob)),
        timeout=600,
        step=0.01,
    )
    assert started and proc.poll() is None, "the build finished before it could be killed"
    os.kill(proc.pid, signal.SIGKILL)
    proc.wait()
    leftovers = list(tmp_path.glob(tmp_glob))
    assert leftovers, "the kill should have left the half-built folder aside"
    # the previous release is intact, file for file
    assert {p.relative_to(out).as_posix(): p.read_bytes() for p in out.rglob("*") if p.is_file()} == files
    assert verify_release(out).ok
    assert subprocess.run(["sha256sum", "-c", "--quiet", "SHA256SUMS"], cwd=out).returncode == 0

    again = subprocess.run(cmd, env=env, capture_output=True, text=True, timeout=900)
    assert again.returncode == 0, again.stderr
    assert (out / "SHA256SUMS").read_bytes() == sums
    assert not any(p.exists() for p in leftovers)  # the dead build's folder is cleaned up
    assert [p.name for p in tmp_path.iterdir() if p.name.startswith(".rel.")] == []
