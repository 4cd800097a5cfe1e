"""Applying the blind translation review (the ``translation`` kind's apply) and the report (judgments in
`biaskit annotate pull`'s format for the translation kind: task = pair_id, question choice /
corrected_more / corrected_less, and on choice rows the candidate_index / engine that the slot letter
stood for). The choices are aggregated by the same prepare() + aggregator as every other judgment."""

from __future__ import annotations

import functools
import json
import random

import pytest
from biaskit.annotation.apply import run_apply
from biaskit.annotation.kinds.translation import levenshtein, translation_report
from biaskit.annotation.options import ApplyOptions

from biaskit.errors import InputError
from biaskit.io import read_jsonl, write_jsonl
from biaskit.schema import SentencePair, make_pair_id


def apply_translation_review(candidates, judgments, out, *, min_votes=None, report_dir=None):
    """``annotate apply --kind translation`` without --aggregated: the judgments are aggregated there."""
    return run_apply(
        ApplyOptions.from_kwargs(
            kind="translation",
            data=candidates,
            aggregated=None,
            out=out,
            judgments=judgments,
            min_agree=min_votes,
            report_dir=report_dir,
        )
    )


# ------------------------------------------------------------------------------ Levenshtein
@functools.cache
def _lev_ref(a: str, b: str) -> int:
    """The textbook recursive definition (exponential without the cache; tiny strings only)."""
    if not a:
        return len(b)
    if not b:
        return len(a)
    return min(_lev_ref(a[1:], b) + 1, _lev_ref(a, b[1:]) + 1, _lev_ref(a[1:], b[1:]) + (a[0] != b[0]))


def test_levenshtein_known_values():
    assert levenshtein("kitten", "sitting") == 3
    assert levenshtein("", "abc") == 3 and levenshtein("abc", "abc") == 0
    assert levenshtein("flaw", "lawn") == 2
    # Devanagari: था -> थी is one code point (the vowel sign ा -> ी)
    assert levenshtein("वह डॉक्टर था", "वह डॉक्टर थी") == 1


def test_levenshtein_matches_the_recursive_definition():
    rnd = random.Random(0)
    alphabet = "abक्ा "
    for _ in range(300):
        a = "".join(rnd.choice(alphabet) for _ in range(rnd.randrange(7)))
        b = "".join(rnd.choice(alphabet) for _ in range(rnd.randrange(7)))
        a2, b2 = " ".join(a.split()), " ".join(b.split())  # levenshtein normalises whitespace
        assert levenshtein(a, b) == _lev_ref(a2, b2), (a, b)


# ------------------------------------------------------------------------------ fixtures
def _rec(en_more, en_less, cands, bias_type="gender"):
    return {
        "pair_id": make_pair_id(en_more, en_less, "en"),
        "source_lang": "en",
        "target_lang": "hi",
        "bias_type": bias_type,
        "direction": "stereo",
        "source": {"sent_more": en_more, "sent_less": en_less},
        "candidates": [
            {
                "engine": e,
                "model": m,
                "sent_more": a,
                "sent_less": b,
                "flags": f,
                "strategy": "independent",
                "provenance": {},
            }
            for e, m, a, b, f in cands
        ],
        "provenance": {"run_signature": "x"},
    }


G, H = ("googletrans", "google-translate"), ("hf", "nllb")
COLLAPSE = [{"code": "translation_collapsed", "reason": "..."}]
RECS = [
    # 0: both reviewers pick the hf candidate (clean)
    _rec(
        "The man is a doctor.",
        "The woman is a doctor.",
        [
            (*G, "आदमी एक डॉक्टर है।", "औरत एक चिकित्सक है।", [{"code": "translation_not_minimal", "reason": "..."}]),
            (*H, "आदमी डॉक्टर है।", "औरत डॉक्टर है।", []),
        ],
    ),
    # 1: one reviewer picks google and corrects S2
    _rec(
        "The Brahmin family lived in a mansion.",
        "The Dalit family lived in a mansion.",
        [
            (*G, "ब्राह्मण परिवार एक हवेली में रहता था।", "दलित परिवार एक महल में रहता था।", []),
            (*H, "ब्राह्मण परिवार हवेली में रहता है।", "दलित परिवार हवेली में रहता है।", []),
        ],
        "caste",
    ),
    # 2: reviewer accepts a collapsed candidate unchanged -> still blocked
    _rec(
        "He is a nurse.",
        "She is a nurse.",
        [(*G, "वह एक नर्स है।", "वह एक नर्स है।", COLLAPSE), (*H, "वह नर्स है।", "वह नर्स है।", COLLAPSE)],
    ),
    # 3: reviewer "fixes" a collapsed pair but the edit is still not minimal -> returned with the edit
    _rec(
        "He was weak.",
        "She was weak.",
        [(*G, "वह कमज़ोर था।", "वह कमज़ोर था।", COLLAPSE), (*H, "वह कमजोर था।", "वह कमजोर था।", COLLAPSE)],
    ),
    # 4: tie between two reviewers
    _rec(
        "Priya went to Delhi.",
        "Rahul went to Delhi.",
        [(*G, "प्रिया दिल्ली गई।", "राहुल दिल्ली गया।", []), (*H, "प्रिया दिल्ली गयी।", "राहुल दिल्ली गया।", [])],
    ),
    # 5: none, no correction -> rejected
    _rec(
        "The old man is slow.",
        "The young man is slow.",
        [(*G, "बूढ़ा आदमी धीमा है।", "जवान आदमी धीमा है।", []), (*H, "बूढ़ा धीमा।", "युवा धीमा।", [])],
        "age",
    ),
    # 6: none, full correction -> released as the reviewers' text
    _rec(
        "She was too weak to lift the box.",
        "He was too weak to lift the box.",
        [
            (*G, "वह डिब्बा उठाने के लिए बहुत कमज़ोर थी।", "वह डिब्बा उठाने के लिए बहुत कमज़ोर था।", []),
            (*H, "वह कमजोर थी।", "वह कमजोर था।", []),
        ],
    ),
    # 7: not reviewed yet
    _rec(
        "The poor man is lazy.",
        "The rich man is lazy.",
        [(*G, "गरीब आदमी आलसी है।", "अमीर आदमी आलसी है।", []), (*H, "गरीब आलसी है।", "अमीर आलसी है।", [])],
        "socioeconomic",
    ),
]


def _choice(task, worker, slot, idx, at="2025-01-01T10:00:00"):
    cands = RECS[task]["candidates"]
    eng = cands[idx] if idx is not None else {}
    return {
        "task": RECS[task]["pair_id"],
        "worker": worker,
        "label": slot,
        "question": "choice",
        "qtype": "choice",
        "engine": eng.get("engine"),
        "model": eng.get("model"),
        "candidate_index": idx,
        "created_at": at,
        "ls_annotation": f"{worker}-{at}",
    }


def _text(task, worker, q, text, at="2025-01-01T10:00:00"):
    return {
        "task": RECS[task]["pair_id"],
        "worker": worker,
        "label": text,
        "question": q,
        "qtype": "text",
        "created_at": at,
        "ls_annotation": f"{worker}-{at}",
    }


JUDGMENTS = [
    _choice(0, "a@x", "B", 1),
    _choice(0, "b@x", "A", 1),  # slot letters differ per reviewer order
    _choice(1, "a@x", "A", 0),
    _text(1, "a@x", "corrected_less", "दलित परिवार एक हवेली में रहता था।"),
    _choice(2, "a@x", "A", 0),
    _choice(3, "a@x", "B", 1),
    _text(3, "a@x", "corrected_more", "आज वह आदमी कमजोर था।"),
    _text(3, "a@x", "corrected_less", "वह औरत कमजोर थी।"),
    _choice(4, "a@x", "A", 0),
    _choice(4, "b@x", "B", 1),
    # b@x first chose none for pair 5, then changed to A: the earlier annotation is superseded
    _choice(5, "b@x", "A", 0, at="2025-01-01T09:00:00"),
    _choice(5, "b@x", "none", None, at="2025-01-02T09:00:00"),
    _choice(6, "a@x", "none", None),
    _text(6, "a@x", "corrected_more", "वह महिला डिब्बा उठाने के लिए बहुत कमज़ोर थी।"),
    _text(6, "a@x", "corrected_less", "वह पुरुष डिब्बा उठाने के लिए बहुत कमज़ोर था।"),
]


@pytest.fixture
def reviewed(tmp_path):
    cands = tmp_path / "cands.jsonl"
    write_jsonl(cands, RECS)
    judg = tmp_path / "judgments.jsonl"
    write_jsonl(judg, JUDGMENTS)
    res = apply_translation_review(cands, judg, tmp_path / "hi_pairs.jsonl", report_dir=tmp_path / "report")
    return res, cands, tmp_path


def test_outcomes(reviewed):
    res, _, _ = reviewed
    by_src = {p.source_id: p for p in res.accepted}
    assert set(by_src) == {RECS[0]["pair_id"], RECS[1]["pair_id"], RECS[6]["pair_id"]}
    assert {r["pair_id"] for r in res.files["needs_review"]} == {RECS[i]["pair_id"] for i in (2, 3, 4)}
    assert [r["pair_id"] for r in res.files["rejected"]] == [RECS[5]["pair_id"]]
    assert res.counts["not_reviewed"] == 1

    p0 = by_src[RECS[0]["pair_id"]]
    assert isinstance(p0, SentencePair) and p0.lang == "hi" and p0.status == "accepted"
    assert (p0.sent_more, p0.sent_less) == ("आदमी डॉक्टर है।", "औरत डॉक्टर है।")
    rv = p0.meta["review"]
    assert (rv["winner_engine"], rv["winner_model"], rv["edited"], rv["agreement"]) == ("hf", "nllb", False, 1.0)
    assert [(r["worker"], r["choice"]) for r in rv["reviewers"]] == [("a@x", "B"), ("b@x", "A")]
    assert rv["flags_after"] == []

    p1 = by_src[RECS[1]["pair_id"]].meta["review"]
    assert p1["winner_engine"] == "googletrans" and p1["edited"] and p1["editors"] == ["a@x"]
    # महल -> हवेली: म ह ल vs ह व े ल ी ... worked out by the reference definition
    assert p1["edit_distance"] == {
        "sent_more": 0,
        "sent_less": _lev_ref("दलित परिवार एक महल में रहता था।", "दलित परिवार एक हवेली में रहता था।"),
    }
    assert by_src[RECS[1]["pair_id"]].sent_less == "दलित परिवार एक हवेली में रहता था।"

    p6 = by_src[RECS[6]["pair_id"]]
    assert p6.meta["review"]["winner_engine"] == "review" and p6.meta["review"]["edited"]
    assert p6.sent_more.startswith("वह महिला")


def test_returned_to_review_with_reasons(reviewed):
    res, _, _ = reviewed
    back = {r["pair_id"]: r for r in res.files["needs_review"]}
    assert "identical" in back[RECS[2]["pair_id"]]["review"]["reason"]
    r3 = back[RECS[3]["pair_id"]]
    assert "edited pair still fails the checker: translation_not_minimal" in r3["review"]["reason"]
    # the reviewer's edit travels with the pair as a new candidate for the next round
    assert r3["candidates"][-1]["engine"] == "review" and r3["candidates"][-1]["sent_more"] == "आज वह आदमी कमजोर था।"
    assert "tie" in back[RECS[4]["pair_id"]]["review"]["reason"]
    assert all(r["status"] == "needs_review" for r in res.files["needs_review"])


def test_files_and_report(reviewed):
    res, cands, tmp = reviewed
    released = read_jsonl(tmp / "hi_pairs.jsonl")
    assert len(released) == 3 and all(r["lang"] == "hi" for r in released)
    assert len(read_jsonl(res.paths["needs_review"])) == 3 and len(read_jsonl(res.paths["rejected"])) == 1
    rep = json.loads((tmp / "report" / "report.json").read_text(encoding="utf-8"))
    assert rep["pairs"] == {
        "candidates": 8,
        "reviewed": 7,
        "released": 3,
        "returned_to_review": 3,
        "to_adjudicate": 0,
        "rejected": 1,
    }
    # final wins among the 3 released: hf 1, googletrans 1 (edited), the reviewers' own text 1
    assert rep["engines"]["hf:nllb"]["final_wins"] == 1 and rep["engines"]["hf:nllb"]["final_win_rate"] == 0.3333
    assert rep["engines"]["googletrans:google-translate"]["final_wins"] == 1
    # individual choices over reviewed pairs: pair0 hf x2, pair1 g, pair2 g, pair3 hf, pair4 g + hf,
    # pair5 none (latest), pair6 none -> 10 choices: hf 4, google 3, none 2 ... counted by hand:
    assert rep["engines"]["hf:nllb"]["reviewer_choices"] == 4
    assert rep["engines"]["googletrans:google-translate"]["reviewer_choices"] == 3
    assert rep["none_choices"] == 2
    assert rep["edit_rate"] == round(2 / 3, 4) and rep["edited_pairs"] == 2
    # edit distances exist for pairs with a chosen MT: pair0 (0, 0), pair1 (0, d)
    d = _lev_ref("दलित परिवार एक महल में रहता था।", "दलित परिवार एक हवेली में रहता था।")
    assert rep["char_edit_distance"]["all_sentences"]["n"] == 4
    assert rep["char_edit_distance"]["edited_sentences"]["max"] == d
    # chosen candidates' flags before review: pairs 2 and 3 (collapsed); after: pair 2 unchanged
    # (identical + collapsed), pair 3's edit (multi_span, attribute_changed, translation_not_minimal)
    assert rep["flags"]["chosen_before"] == {"translation_collapsed": 2}
    assert rep["flags"]["final_after"] == {
        "attribute_changed": 1,
        "identical": 1,
        "multi_span": 1,
        "translation_collapsed": 1,
        "translation_not_minimal": 1,
    }
    md = (tmp / "report" / "report.md").read_text(encoding="utf-8")
    assert "# Translation review report" in md
    # distances in characters (0, 0, 0, d released; 0, d edited), not percentages
    assert f"| all released sentences | 4 | {d / 4:.1f} | 0.0 | {d} |" in md
    assert f"| edited sentences | 2 | {d / 2:.1f} | {d / 2:.1f} | {d} |" in md
    # the report can be rebuilt from the files alone
    again = translation_report(cands, tmp / "hi_pairs.jsonl")
    assert again == rep


def test_min_votes_and_errors(tmp_path):
    cands = tmp_path / "c.jsonl"
    write_jsonl(cands, RECS)
    res = apply_translation_review(cands, JUDGMENTS, tmp_path / "o.jsonl", min_votes=2)
    # only pair 0 had two reviewers agreeing
    assert [p.source_id for p in res.accepted] == [RECS[0]["pair_id"]]
    with pytest.raises(InputError, match="not in the data"):
        apply_translation_review(
            cands,
            [{"task": "p-nope", "worker": "a", "question": "choice", "label": "A", "candidate_index": 0}],
            tmp_path / "o.jsonl",
        )
    with pytest.raises(InputError, match="cannot be mapped to an engine"):
        apply_translation_review(
            cands,
            [{"task": RECS[0]["pair_id"], "worker": "a", "question": "choice", "label": "A"}],
            tmp_path / "o.jsonl",
        )
    with pytest.raises(InputError, match=r"missing column\(s\) worker"):
        apply_translation_review(
            cands, [{"task": RECS[0]["pair_id"], "question": "choice", "label": "A"}], tmp_path / "o.jsonl"
        )


def test_cli_apply_and_report(reviewed, tmp_path):
    from biaskit.cli import main

    _, cands, tmp = reviewed
    judg = tmp / "judgments.jsonl"
    main(
        [
            "annotate",
            "apply",
            "--kind",
            "translation",
            "--data",
            str(cands),
            "--judgments",
            str(judg),
            "--out",
            str(tmp_path / "cli_pairs.jsonl"),
            "--report-dir",
            str(tmp_path / "rep"),
        ]
    )
    assert len(read_jsonl(tmp_path / "cli_pairs.jsonl")) == 3
    main(
        [
            "annotate",
            "report",
            "--kind",
            "translation",
            "--data",
            str(cands),
            "--applied",
            str(tmp_path / "cli_pairs.jsonl"),
            "--out",
            str(tmp_path / "rep2"),
        ]
    )
    assert (
        json.loads((tmp_path / "rep" / "report.json").read_text())
        == json.loads((tmp_path / "rep2" / "report.json").read_text())
        == translation_report(cands, tmp_path / "cli_pairs.jsonl")
    )
    # released pairs read back as biaskit pairs (ready for `biaskit evaluate pairs`)
    from biaskit.readers import read_pairs

    assert {p.lang for p in read_pairs(tmp_path / "cli_pairs.jsonl").pairs} == {"hi"}


def test_judgments_as_csv_give_the_same_result(tmp_path):
    import pandas as pd

    cands = tmp_path / "c.jsonl"
    write_jsonl(cands, RECS)
    csv = tmp_path / "j.csv"
    pd.DataFrame(JUDGMENTS).to_csv(csv, index=False)  # candidate_index becomes float / empty
    a = apply_translation_review(cands, csv, tmp_path / "a.jsonl")
    b = apply_translation_review(cands, JUDGMENTS, tmp_path / "b.jsonl")
    assert [(p.source_id, p.sent_more, p.sent_less) for p in a.accepted] == [
        (p.source_id, p.sent_more, p.sent_less) for p in b.accepted
    ]
    assert [r["pair_id"] for r in a.files["needs_review"]] == [r["pair_id"] for r in b.files["needs_review"]]


def test_aggregate_then_apply_gives_the_same_review(tmp_path, capsys):
    """`annotate aggregate --kind translation` (slots -> candidates, CSV round trip) then `annotate apply
    --aggregated` decides like apply's own aggregation."""
    import pandas as pd

    from biaskit.cli import main

    cands = tmp_path / "c.jsonl"
    write_jsonl(cands, RECS)
    judg = tmp_path / "j.csv"
    pd.DataFrame(JUDGMENTS).to_csv(judg, index=False)
    agg = tmp_path / "agg.csv"
    main(
        [
            "annotate",
            "aggregate",
            "--kind",
            "translation",
            "--judgments",
            str(judg),
            "--out",
            str(agg),
            "--duplicates",
            "last",
        ]
    )
    table = pd.read_csv(agg, keep_default_na=False, dtype=str)
    choice = table[table["question"] == "choice"].set_index("task")
    # pair 0: two reviewers saw the hf candidate under different letters: one candidate, two votes
    assert (choice.loc[RECS[0]["pair_id"], "label"], choice.loc[RECS[0]["pair_id"], "votes"]) == ("1", "2")
    assert choice.loc[RECS[4]["pair_id"], "status"] == "needs_adjudication"  # a tie is never broken
    via_table = run_apply(
        ApplyOptions.from_kwargs(
            kind="translation", data=cands, aggregated=agg, out=tmp_path / "a.jsonl", judgments=judg
        )
    )
    direct = apply_translation_review(cands, judg, tmp_path / "b.jsonl")
    assert [(p.source_id, p.sent_more, p.sent_less) for p in via_table.accepted] == [
        (p.source_id, p.sent_more, p.sent_less) for p in direct.accepted
    ]
    assert via_table.counts == direct.counts


def test_translation_apply_needs_the_judgments(tmp_path):
    import pandas as pd

    cands = tmp_path / "c.jsonl"
    write_jsonl(cands, RECS)
    agg = pd.DataFrame([{"task": RECS[0]["pair_id"], "question": "choice", "label": "1", "status": "accepted"}])
    with pytest.raises(InputError, match="needs the pulled judgments.*--judgments"):
        run_apply(ApplyOptions.from_kwargs(kind="translation", data=cands, aggregated=agg, out=tmp_path / "o.jsonl"))
