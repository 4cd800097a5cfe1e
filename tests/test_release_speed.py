"""The shortcuts taken to make `biaskit release build | verify` fast (benchmarks/release.py) give the
same results as the straightforward path they replace. The release files themselves are held to
their contract by tests/test_release*.py, unchanged."""

from __future__ import annotations

import gc
import json
from pathlib import Path

import pytest

from biaskit.errors import InputError
from biaskit.readers.pairs import indibias_columns
from biaskit.release import BuildOptions, build_release, verify_release
from biaskit.release.export import _indibias_cells
from biaskit.schema import Direction, normalize_direction


def _records(path: Path) -> Path:
    rows = [
        {
            "sent_more": f"The {g} people are {w}.",
            "sent_less": f"The {h} people are {w}.",
            "direction": "stereo",
            "bias_type": "religion",
            "lang": "en",
            "group_more": g,
            "group_less": h,
            "status": "accepted",
        }
        for g, h, w in (
            ("Hindu", "Muslim", "loud"),
            ("Muslim", "Hindu", "quiet"),
            ("Sikh", "Jain", "rich"),
            ("Jain", "Sikh", "poor"),
        )
    ]
    path.write_text("".join(json.dumps(r) + "\n" for r in rows), encoding="utf-8")
    return path


@pytest.mark.parametrize("enabled", [True, False])
def test_build_and_verify_leave_the_garbage_collector_as_they_found_it(tmp_path, enabled):
    recs = _records(tmp_path / "v.jsonl")
    opts = dict(version="1.0.0", created="2025-01-01", plots=False, keyness=False)
    was = gc.isenabled()
    try:
        gc.enable() if enabled else gc.disable()
        build_release([recs], tmp_path / "rel", BuildOptions(name="r", **opts))
        assert gc.isenabled() is enabled
        assert verify_release(tmp_path / "rel").ok
        assert gc.isenabled() is enabled
        with pytest.raises(InputError):  # a failed build switches it back on too
            build_release([recs], tmp_path / "rel2", BuildOptions(name="bad name!", **opts))
        assert gc.isenabled() is enabled
    finally:
        gc.enable() if was else gc.disable()


def test_normalize_direction_shortcut_for_canonical_values():
    # canonical strings take the shortcut; everything else the general path (expected values by hand)
    cases = {
        "stereo": "stereo",
        "antistereo": "antistereo",
        "Stereo": "stereo",
        " antistereo ": "antistereo",
        "Anti-Stereo": "antistereo",
        "anti_stereotype": "antistereo",
        "Stereotype": "stereo",
        "neutral": "neutral",
        Direction.antistereo: "antistereo",
        None: None,
        3: 3,
    }
    for given, want in cases.items():
        got = normalize_direction(given)
        assert got == want and type(got) is type(want), (given, got)


@pytest.mark.parametrize("direction", ["stereo", "antistereo"])
def test_indibias_layout_per_direction_equals_the_per_row_mapping(direction):
    views = {
        "en": {"sent_more": "EN-more", "sent_less": "EN-less"},
        "hi": {"sent_more": "HI-more", "sent_less": "HI-less"},
    }
    # straightforward: ask indibias_columns for every view of the row
    cells = {}
    for lg, v in views.items():
        col_more, col_less = indibias_columns(lg, direction)
        cells[col_more], cells[col_less] = v["sent_more"], v["sent_less"]
    straight = [
        cells[c] for c in ("modified_eng_sent_more", "modified_eng_sent_less", "sent_more_hindi", "sent_less_hindi")
    ]
    fast = [views[lg][k] for lg, k in _indibias_cells(direction, indibias_columns)]
    assert fast == straight
    # IndiBias is positional (S1, S2): an antistereo pair's sent_more sits in the *_less* columns
    want = (
        ["EN-more", "EN-less", "HI-more", "HI-less"]
        if direction == "stereo"
        else ["EN-less", "EN-more", "HI-less", "HI-more"]
    )
    assert fast == want


def test_record_file_hash_taken_while_writing_equals_the_file_hash(tmp_path):
    import hashlib

    from biaskit.release.build import _write_records

    recs = [{"id": f"r{i}", "text": "नमस्ते" * (i % 5), "n": i, "views": {"en": {"x": None}}} for i in range(10)]
    for block in (1, 3, 4096):  # hashing block by block: any block size, the same bytes
        f = tmp_path / f"r{block}.jsonl"
        sha = _write_records(f, recs, block=block)
        data = f.read_bytes()
        assert sha == hashlib.sha256(data).hexdigest()
        # the bytes: one compact JSON object per line, non-ASCII kept as UTF-8 (as the writer did before)
        assert data.decode("utf-8").splitlines() == [
            json.dumps(r, ensure_ascii=False, separators=(",", ":")) for r in recs
        ]


def test_without_copies_in_order_and_drops_only_the_named_keys():
    from biaskit.release.build import _STRIP_PROV, _without

    prov = {"source": "x", "release_id": "r-1", "model": "m", "release_split": "dev"}
    for d in (prov, {"source": "x", "model": "m"}, {}, None):
        straight = {k: v for k, v in (d or {}).items() if k not in ("release_id", "release_split", "release_source_id")}
        got = _without(d, _STRIP_PROV)
        assert got == straight and list(got) == list(straight)
        assert got is not d  # a copy: the record never shares the input's dict
    assert list(_without(prov, _STRIP_PROV)) == ["source", "model"]


def test_csv_cells_written_as_given_equal_the_cells_converted_to_text_first(tmp_path):
    # write_pair_csvs hands meta values to the csv writer as they are; the writer must turn them into the
    # same text as converting them first (None -> empty cell, anything else -> str())
    from biaskit.release.export import _csv

    def _s(x):  # the straightforward conversion the writer used to do
        return "" if x is None else x if isinstance(x, str) else str(x)

    rows = [[0, "a, b", 'say "hi"', None, 1.5, True, {"k": [1, 2]}, ["x", None], "नमस्ते\n"], [1, None, 2, 0.1, "", 3]]
    _csv(tmp_path / "given.csv", ["h"], rows)
    _csv(tmp_path / "text.csv", ["h"], [[_s(x) for x in r] for r in rows])
    assert (tmp_path / "given.csv").read_bytes() == (tmp_path / "text.csv").read_bytes()


def test_release_pair_identical_views_compared_by_words_as_normalize_text_does():
    import unicodedata

    from pydantic import ValidationError

    from biaskit.schema import ReleasePair, normalize_text

    base = {"id": "r-1", "split": "test", "bias_type": "caste", "direction": "stereo", "target": "dalit"}
    nfc, nfd = "Café  people.", unicodedata.normalize("NFD", "Café people. ")
    assert normalize_text(nfc) == normalize_text(nfd)  # the same words once normalised (by hand: yes)
    with pytest.raises(ValidationError, match="identical"):
        ReleasePair.model_validate({**base, "views": {"en": {"sent_more": nfc, "sent_less": nfd, "pair_id": "p"}}})
    ok = ReleasePair.model_validate(
        {**base, "views": {"en": {"sent_more": nfc, "sent_less": "Cafe people.", "pair_id": "p"}}}
    )
    assert ok.views["en"].sent_less == "Cafe people."
