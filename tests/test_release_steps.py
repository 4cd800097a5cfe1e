"""The named steps of the release build, the card and the history (issue 30), each on hand-made input.

tests/test_release_golden.py pins what the steps write together; these check single steps against
values worked out by hand from their definitions (docs/release.md), and the options models of
`release verify | export | diff` from the Python side.
"""

from __future__ import annotations

import json

import pytest

from biaskit.release import history as H
from biaskit.release.build import _retention
from biaskit.release.card import _Sections


def _file(kind: str, data, label: str = "x") -> H.HistoryFile:
    return H.HistoryFile(path=f"/somewhere/{kind}.jsonl", kind=kind, label=label, data=data)


def test_every_history_kind_has_a_summary():
    kinds = {"runlog", "check", "agreement", "apply", "apply_dropped", "translation", "translation_dropped"}
    kinds |= {"adapt", "cat_retention", "errors", "records"}
    assert set(H._SUMMARIES) == kinds
    empty = H.summarize_history([])
    assert list(empty) == ["files"] + [key for key, _ in H._SUMMARIES.values()]
    assert all(v == [] for v in empty.values())


def test_history_summaries_by_hand():
    runs = [
        {"command": "c", "jobs": 3, "rows": 10, "errors": 2, "started": "2025-01-02", "model": "m1"},
        {"command": "c", "jobs": 5, "rows": 7, "errors": 1, "started": "2025-01-01", "backend": "dummy"},
    ]
    # two language views of pair s1 (one flagged), a clean pair s2, a pair known only by its row
    check = [
        {"source_id": "s1", "lang": "en", "flags": [{"code": "multi_span"}]},
        {"source_id": "s1", "lang": "hi", "flags": []},
        {"source_id": "s2", "lang": "en", "flags": []},
        {"row": 7, "flags": [{"code": "multi_span"}, {"code": "no_identity"}]},
    ]
    dropped = [
        {"id": "a", "status": "rejected", "reason": "annotators: invalid"},
        {"id": "b", "status": "rejected", "reason": "annotators: invalid pair"},
        {"id": "c", "status": "needs_adjudication", "reason": None},
    ]
    s = H.summarize_history([_file("runlog", runs, "gen"), _file("check", check), _file("apply_dropped", dropped)])
    g = s["generation"][0]
    assert (g["label"], g["file"], g["runs"], g["rows"], g["jobs"], g["errors_last_run"]) == (
        "gen",
        "runlog.jsonl",
        2,
        17,
        5,
        1,
    )
    assert g["models"] == ["dummy backend: placeholder text, no model called", "m1"]
    assert (g["first_run"], g["last_run"], g["requests"]) == ("2025-01-01", "2025-01-02", 0)
    c = s["check"][0]
    assert (c["pairs"], c["views"], c["flagged"], c["passed"]) == (3, 4, 2, 1)
    assert c["by_lang"] == {"en": 3, "hi": 1} and c["flags"] == {"multi_span": 2, "no_identity": 1}
    d = s["apply_dropped"][0]
    assert d["by_status"] == {"rejected": 2, "needs_adjudication": 1}
    assert d["by_reason"] == {"annotators": 2, "(none)": 1}


class _Input:
    def __init__(self, **kw):
        self.__dict__.update(kw)


def test_retention_rows_in_pipeline_order_with_what_was_not_given():
    hist = H.summarize_history(
        [_file("apply", {"records": 9, "accepted": 6, "rejected": 3, "not_annotated": 0}, "validation (apply)")]
    )
    f = _Input(kind="pairs", path="/x/pairs.jsonl", records=12, pairs=6, excluded={"flagged": 1}, skipped_invalid=2)
    counts = {"pairs": {"records": 6, "by_split": {"dev": 2, "test": 4}}}
    rows = _retention(_Input(files=[f]), hist, counts, {"duplicates": 3})
    assert [(r["stage"], r["records"], r["detail"], r["source"]) for r in rows] == [
        ("generated", None, "no generation run log given", "not recorded"),
        ("validated", 6, "records 9, rejected 3, not annotated 0", "apply.jsonl"),
        ("checked", None, "no checker output given", "not recorded"),
        (
            "read for release (pairs)",
            6,
            "12 language views; not released (views): flagged 1; 2 invalid skipped",
            "pairs.jsonl",
        ),
        ("released (pairs)", 6, "dev 2, test 4; 3 duplicate language views dropped", "this release"),
    ]


def test_a_card_section_is_what_people_wrote_else_a_placeholder():
    sec = _Sections({"motivation": "We measure bias."})
    assert sec("Motivation", "Computed.", "why?") == "### Motivation\n\nComputed.\n\nWe measure bias.\n"
    assert sec("Uses", "", "what for?", 2) == "## Uses\n\n[TO BE WRITTEN BY THE MAINTAINERS: what for?]\n"
    assert sec("Statistics", " Counts. ", None) == "### Statistics\n\nCounts.\n"


def test_the_release_command_options_from_python():
    from biaskit.errors import InputError
    from biaskit.release.options import ReleaseDiffOptions, ReleaseExportOptions, ReleaseVerifyOptions

    o = ReleaseExportOptions.from_kwargs(lm_eval="out/lm", langs="en, hi", splits=["test"])
    assert (o.langs, o.splits, o.prefix) == (["en", "hi"], ["test"], None)
    with pytest.raises(InputError, match=r"splits=\['train'\]: unknown split 'train'; use one of dev, test"):
        ReleaseExportOptions.from_kwargs(lm_eval="out/lm", splits=["train"])
    assert ReleaseVerifyOptions().hub_ready is False and ReleaseVerifyOptions.operational() == ("json_out",)
    assert ReleaseDiffOptions().markdown is None


def test_a_stage_report_of_another_shape_is_one_line_naming_the_file(tmp_path):
    """`pairs` as a number (not the {candidates, released, ...} object `annotate apply --kind translation`
    writes), an agreement report's questions as a number, a CAT retention report's rows as an object: each
    used to stop the build with a traceback."""
    from biaskit.errors import InputError

    bad = tmp_path / "report.json"
    bad.write_text('{"pairs": 4, "engines": {"google:nmt": {"final_wins": 3}}, "edit_rate": 0.25}')
    with pytest.raises(InputError) as exc:
        H.load_history([f"hi-review={bad}"], auto=False)
    assert str(exc.value) == (
        f"{bad}: not a translation review report as biaskit writes it: 'pairs' is int, not an object. "
        "Fix: pass the file the stage wrote, or leave this one out."
    )
    for name, report, why in (
        ("agreement.json", {"krippendorff_alpha": 0.1, "per_annotator": [], "questions": 7}, "'questions' is int"),
        ("agreement.json", {"krippendorff_alpha": 0.1, "per_annotator": ["alice"]}, "an item of 'per_annotator'"),
        ("retention.json", {"rows": {}, "totals": [], "overall": {}, "problems": {}}, "'rows' is dict, not a list"),
    ):
        (tmp_path / name).write_text(json.dumps(report))
        with pytest.raises(InputError, match=f"not an? .* report as biaskit writes it: {why}"):
            H.load_history([str(tmp_path / name)], auto=False)
    log = tmp_path / "gen.runlog.jsonl"
    log.write_text('{"command": "c", "jobs": 2, "rows": 4}\n{"command": "c", "jobs": 2, "rows": "four"}\n')
    with pytest.raises(InputError) as exc:
        H.load_history([str(log)], auto=False)
    assert str(exc.value) == (
        f"{log}, row 2: not a run log as biaskit writes it: 'rows' is 'four', not a count. "
        "Fix: pass the file the stage wrote, or leave this one out."
    )
