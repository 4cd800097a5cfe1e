"""Editing tasks (issue 14): annotators correct sentences in place (sentence, pair and translation
kinds); `annotate apply` takes the majority of identical edits, queues disagreements for
adjudication, re-checks edited pairs and records who changed what.

Expected values are worked out by hand from the rules in docs/annotation.md ("Editing"): ids from
biaskit.ids' content-hash formulas on the edited text, majorities counted by hand."""

from __future__ import annotations

import json
import unicodedata

import pandas as pd
import pytest
from annot_helpers import ls_export
from biaskit.annotation.apply import run_apply
from biaskit.annotation.kinds import get_kind
from biaskit.annotation.kinds.edits import decide_edit
from biaskit.annotation.labelstudio import export_to_judgments
from biaskit.annotation.options import ApplyOptions
from test_annot_kinds import ch, tx

from biaskit import ids
from biaskit.io import read_jsonl, write_jsonl

T1, T2 = "2025-03-01T10:00:00Z", "2025-03-02T10:00:00Z"


# ------------------------------------------------------------------------------------------ the rule
def test_decide_edit_majority_of_identical_edits():
    orig = "Women are bad drivers."
    # one editor: their edit wins
    e = decide_edit("sent_more", orig, {"a": ("Women are bad at driving.", T1)})
    assert (e.text, e.annotators, e.time, e.n_editors) == ("Women are bad at driving.", ["a"], T1, 1)
    # identical after whitespace collapsing and NFC: ज़ precomposed (U+095B) vs ज + nukta
    pre, dec = "\u095b", "\u091c\u093c"
    assert pre != dec and unicodedata.normalize("NFC", pre) == unicodedata.normalize("NFC", dec)
    e = decide_edit("sentence", "वह ज़रूर आएगा।", {"a": (f"वह {pre}रूर  आएगी।", T1), "b": (f" वह {dec}रूर आएगी। ", T2)})
    assert e.edited and e.annotators == ["a", "b"] and e.time == T2 and e.n_editors == 2
    assert e.text == unicodedata.normalize("NFC", f"वह {pre}रूर आएगी।")
    # two editors who disagree: no majority -> conflict, both candidates listed
    e = decide_edit("sent_less", orig, {"a": ("Men are bad drivers!", T1), "b": ("Men drive badly.", T2)})
    assert not e.edited and e.conflict and len(e.candidates) == 2 and e.n_editors == 2
    # 2 of 3 editors agree: a strict majority
    e = decide_edit("x", orig, {"a": ("X.", T1), "b": ("X.", T1), "c": ("Y.", T2)})
    assert (e.text, e.annotators, e.n_editors) == ("X.", ["a", "b"], 3)
    assert e.candidates[1] == {"text": "Y.", "annotators": ["c"], "time": T2}
    # 2 of 4: not a strict majority
    assert decide_edit("x", orig, {"a": ("X.", T1), "b": ("X.", T1), "c": ("Y.", T1), "d": ("Z.", T1)}).conflict
    # an "edit" equal to the original (spacing aside) is no edit
    e = decide_edit("x", orig, {"a": ("  Women are   bad drivers. ", T1)})
    assert not e.edited and not e.conflict and e.n_editors == 0


# ------------------------------------------------------------------------------------------ pull
def test_untouched_prefilled_areas_are_not_edits(tmp_path):
    """Label Studio submits a prefilled text area even when nobody touched it: pull keeps a text
    answer only when it differs from the prefill."""
    from biaskit.readers import read_pairs

    pairs = tmp_path / "pairs.jsonl"
    write_jsonl(
        pairs,
        [
            {
                "sent_more": "महिलाएँ गाड़ी नहीं चला सकतीं।",
                "sent_less": "पुरुष गाड़ी नहीं चला सकते।",
                "direction": "stereo",
                "bias_type": "gender",
                "lang": "hi",
            }
        ],
    )
    recs = read_pairs(pairs).pairs
    tasks = ls_export(
        "pair",
        recs,
        {
            1: [
                (
                    2,
                    [
                        ch("validity", "sent_more", "stereo"),
                        tx("edited_more", "sent_more", "महिलाएँ  गाड़ी नहीं चला सकतीं। "),
                        tx("edited_less", "sent_less", "पुरुष कार नहीं चला सकते।"),
                    ],
                    False,
                )
            ]
        },
    )
    df, _ = export_to_judgments(tasks, users={2: "a@x"})
    text = df[df["qtype"] == "text"]
    assert list(zip(text["question"], text["label"], strict=False)) == [("edited_less", "पुरुष कार नहीं चला सकते।")]


def test_translation_slot_areas_give_the_chosen_candidates_corrections():
    k = get_kind("translation")
    data = {
        "biaskit_slots": [
            {"slot": "A", "index": 1, "engine": "hf", "model": "nllb"},
            {"slot": "B", "index": 0, "engine": "googletrans", "model": "web"},
        ],
        "slot_A_more": "वह एक नर्स है।",
        "slot_A_less": "वह एक नर्स है।",
        "slot_B_more": "वह नर्स है।",
        "slot_B_less": "वह नर्स है।",
    }
    rows = k.judgments(
        data,
        {
            "choice": ["A"],
            "corrected_more_A": ["एक पुरुष नर्स है।"],
            "corrected_less_A": ["वह एक नर्स है।"],  # untouched
            "corrected_more_B": ["B's text, typed before switching to A"],
        },
    )
    got = {(r["question"], r["label"]) for r in rows}
    assert got == {("choice", "A"), ("corrected_more", "एक पुरुष नर्स है।")}
    assert next(r for r in rows if r["question"] == "choice")["engine"] == "hf"


# ------------------------------------------------------------------------------------------ sentence kind
TUPLE_ID = "t-0000000000000001"


def _sentence(text: str) -> dict:
    return {
        "sentence": text,
        "identity": "women",
        "attribute": "bad at driving",
        "axis": "gender",
        "polarity": "negative",
        "tuple_id": TUPLE_ID,
        "lang": "en",
        "status": "raw",
        "provenance": {"model": "llm-x"},
    }


SENTENCES = [
    _sentence("My aunt took three attempts to park, typical woman driver."),  # 0 keep x3
    _sentence("Woman are not good in driving car."),  # 1 fix: a, b agree (spacing)
    _sentence("Women cant drive in traffic."),  # 2 fix: a, b disagree
    _sentence("She parked the car."),  # 3 drop x2, keep x1
    _sentence("Women are always late for driving class."),  # 4 fix removes the group
    _sentence("Women drivers cause jams."),  # 5 a: fix then keep (latest)
    _sentence("Women should not drive buses."),  # 6 fix, nothing typed
]
SID = [ids.sentence_id(TUPLE_ID, s["sentence"]) for s in SENTENCES]


def _j(i, worker, question, label, at=T1, ann=None, qtype="choice"):
    return {
        "task": SID[i],
        "worker": worker,
        "question": question,
        "label": label,
        "qtype": qtype,
        "created_at": at,
        "updated_at": at,
        "ls_annotation": ann or f"{worker}-{i}-{at}",
    }


def _edit(i, worker, text, at=T1, ann=None, question="edited"):
    return _j(i, worker, question, text, at, ann, qtype="text")


def test_sentence_kind_keep_fix_drop(tmp_path):
    fixed = "Women are not good at driving cars."
    rows = [_j(0, w, "decision", "keep") for w in "abc"]
    rows += [
        _j(1, "a", "decision", "fix"),
        _edit(1, "a", fixed),
        _j(1, "b", "decision", "fix", T2),
        _edit(1, "b", "  Women are not good at  driving cars. ", T2),
        _j(1, "c", "decision", "keep"),
    ]
    rows += [
        _j(2, "a", "decision", "fix"),
        _edit(2, "a", "Women can't drive in traffic."),
        _j(2, "b", "decision", "fix"),
        _edit(2, "b", "Women cannot drive in heavy traffic."),
        _j(2, "c", "decision", "drop"),
    ]
    rows += [_j(3, "a", "decision", "drop"), _j(3, "b", "decision", "drop"), _j(3, "c", "decision", "keep")]
    rows += [_j(4, w, "decision", "fix") for w in "ab"] + [
        _edit(4, w, "They are always late for driving class.") for w in "ab"
    ]
    # a first fixed sentence 5, then answered again (a later annotation) with keep: the fix is gone
    rows += [
        _j(5, "a", "decision", "fix", T1, "a5-old"),
        _edit(5, "a", "Women drivers block roads.", T1, "a5-old"),
        _j(5, "a", "decision", "keep", T2, "a5-new"),
        _j(5, "b", "decision", "keep"),
    ]
    rows += [_j(6, w, "decision", "fix") for w in "ab"]
    data = write_jsonl(tmp_path / "sentences.jsonl", SENTENCES)
    judg = write_jsonl(tmp_path / "judgments.jsonl", rows)
    out = tmp_path / "sentences_ok.jsonl"
    res = run_apply(ApplyOptions.from_kwargs(kind="sentence", data=data, out=out, judgments=judg))

    s = res.summary()
    assert (s["records"], s["accepted"], s["rejected"], s["adjudicate"], s["needs_review"]) == (7, 3, 1, 2, 1)
    got = {r["sentence_id"]: r for r in read_jsonl(out)}
    # 0: kept unchanged, same id, provenance untouched
    assert got[SID[0]]["sentence"] == SENTENCES[0]["sentence"] and got[SID[0]]["provenance"] == {"model": "llm-x"}
    assert got[SID[0]]["status"] == "accepted" and got[SID[0]]["meta"]["annotation"]["decision"]["votes"] == 3
    # 1: the fixers' identical edit, a new content id, who changed what
    new_id = ids.sentence_id(TUPLE_ID, fixed)
    assert new_id in got and got[new_id]["sentence"] == fixed
    assert got[new_id]["provenance"] == {
        "model": "llm-x",
        "edits": [
            {
                "field": "sentence",
                "original": SENTENCES[1]["sentence"],
                "edited": fixed,
                "annotators": ["a", "b"],
                "time": T2,
                "editors": 2,
                "record_id": SID[1],
            }
        ],
    }
    # 5: a's latest answer is keep -> 2 keeps, the old fix is not applied
    assert got[SID[5]]["sentence"] == SENTENCES[5]["sentence"]
    assert set(got) == {SID[0], new_id, SID[5]}
    # 3: dropped
    assert read_jsonl(res.paths["rejected"]) == [{"id": SID[3], "status": "rejected", "reason": "annotators: drop"}]
    # 2 and 6: the adjudication queue, as sentence records push takes again
    adj = {r["sentence_id"]: r for r in read_jsonl(res.paths["adjudicate"])}
    assert set(adj) == {SID[2], SID[6]} and {r["status"] for r in adj.values()} == {"needs_review"}
    cands = adj[SID[2]]["meta"]["returned"]["fields"][0]["candidates"]
    assert sorted(c["text"] for c in cands) == ["Women can't drive in traffic.", "Women cannot drive in heavy traffic."]
    assert "different corrections" in adj[SID[2]]["meta"]["returned"]["reason"]
    assert "typed no correction" in adj[SID[6]]["meta"]["returned"]["reason"]
    # 4: the edit no longer names the group -> back to review, with the edit applied
    (back,) = read_jsonl(res.paths["needs_review"])
    assert (
        back["sentence"] == "They are always late for driving class."
        and "no longer names" in back["meta"]["returned"]["reason"]
    )
    # the queued files are valid input for the next round, and the reason is shown in the task
    k = get_kind("sentence")
    again = k.load(res.paths["adjudicate"])
    assert [r.sentence_id for r in again] == [SID[2], SID[6]]
    assert "[returned: the annotators typed different corrections" in k.task(again[0])["data"]["tuple_display"]


# ------------------------------------------------------------------------------------------ pair kind
PAIRS = [
    {
        "sent_more": "Women are bad drivers.",
        "sent_less": "Men are bad drivers.",
        "direction": "stereo",
        "bias_type": "gender",
        "lang": "en",
        "source_id": "src-0",
        "provenance": {"source": "crows"},
    },
    {
        "sent_more": "Poor people are lazy.",
        "sent_less": "Rich people are lazy.",
        "direction": "stereo",
        "bias_type": "socioeconomic",
        "lang": "en",
        "provenance": {"source": "crows"},
    },
    {
        "sent_more": "Old people can't use phones.",
        "sent_less": "Young people can't use phones.",
        "direction": "stereo",
        "bias_type": "age",
        "lang": "en",
        "provenance": {},
    },
    {
        "sent_more": "The Dalit boy topped the exam.",
        "sent_less": "The Brahmin boy topped the exam.",
        "direction": "antistereo",
        "bias_type": "caste",
        "lang": "en",
        "provenance": {},
    },
    {
        "sent_more": "Women cry a lot.",
        "sent_less": "Men cry a lot.",
        "direction": "stereo",
        "bias_type": "gender",
        "lang": "en",
        "provenance": {},
    },
]


def test_pair_edits(tmp_path):
    from biaskit.readers import read_pairs, write_pairs

    recs = read_pairs(write_jsonl(tmp_path / "in.jsonl", PAIRS)).pairs
    pid = [r.pair_id for r in recs]
    data = write_pairs(tmp_path / "pairs.jsonl", recs)

    def v(i, w, label, at=T1):
        return {
            "task": pid[i],
            "worker": w,
            "question": "validity",
            "label": label,
            "qtype": "choice",
            "created_at": at,
            "ls_annotation": f"{w}-{i}",
        }

    def e(i, w, side, text, at=T1):
        return {
            "task": pid[i],
            "worker": w,
            "question": f"edited_{side}",
            "label": text,
            "qtype": "text",
            "created_at": at,
            "ls_annotation": f"{w}-{i}",
        }

    # (all rows of one annotation share its time, as pull writes them: b answered on day 2)
    rows = [v(0, "a", "stereo"), v(0, "b", "stereo", T2), v(0, "c", "stereo")]
    rows += [
        e(0, "a", "more", "Women are bad at driving.", T1),
        e(0, "a", "less", "Men are bad at driving.", T1),
        e(0, "b", "more", "Women are bad at driving.", T2),
        e(0, "b", "less", "Men are bad at  driving.", T2),
    ]
    # 1: the edit swaps the attribute too -> not minimal any more -> back to review
    rows += [v(1, w, "stereo") for w in "ab"] + [e(1, "a", "less", "Rich people are hard-working.")]
    # 2: two backers, two different corrections of sentence 2 -> adjudication
    rows += [v(2, w, "stereo") for w in "ab"] + [
        e(2, "a", "less", "Young people can't use their phones."),
        e(2, "b", "less", "Young people cannot use phones."),
    ]
    # 3: the one who voted against the winning label edited: not counted
    rows += [
        v(3, "a", "antistereo"),
        v(3, "b", "antistereo"),
        v(3, "c", "invalid"),
        e(3, "c", "more", "The Dalit girl topped the exam."),
    ]
    # 4: the edit makes the sentences identical
    rows += [v(4, "a", "stereo"), e(4, "a", "less", "Women cry a lot.")]
    judg = write_jsonl(tmp_path / "j.jsonl", rows)
    out = tmp_path / "pairs_ok.jsonl"
    res = run_apply(ApplyOptions.from_kwargs(kind="pair", data=data, out=out, judgments=judg)).summary()
    assert (res["accepted"], res["needs_review"], res["adjudicate"]) == (2, 2, 1)

    got = read_pairs(out).pairs
    new0 = ids.pair_id("Women are bad at driving.", "Men are bad at driving.", "en")
    assert [p.pair_id for p in got] == [new0, pid[3]]
    p0 = got[0]
    assert (p0.sent_more, p0.sent_less, p0.source_id, p0.status) == (
        "Women are bad at driving.",
        "Men are bad at driving.",
        "src-0",
        "accepted",
    )
    assert p0.provenance["source"] == "crows"
    assert p0.provenance["edits"] == [
        {
            "field": "sent_more",
            "original": "Women are bad drivers.",
            "edited": "Women are bad at driving.",
            "annotators": ["a", "b"],
            "time": T2,
            "editors": 2,
            "record_id": pid[0],
        },
        {
            "field": "sent_less",
            "original": "Men are bad drivers.",
            "edited": "Men are bad at driving.",
            "annotators": ["a", "b"],
            "time": T2,
            "editors": 2,
            "record_id": pid[0],
        },
    ]
    assert p0.meta["annotation"]["edited"] == ["sent_more", "sent_less"] and "flags" in p0.meta
    assert got[1].sent_more == PAIRS[3]["sent_more"] and "edits" not in got[1].provenance  # c's edit not counted

    back = {r["meta"]["returned"]["reason"]: r for r in read_jsonl(tmp_path / "pairs_ok.needs_review.jsonl")}
    (not_minimal,) = [r for k, r in back.items() if "minimal-pair checker" in k]
    assert not_minimal["sent_less"] == "Rich people are hard-working." and not_minimal["status"] == "needs_review"
    assert "attribute_changed" in not_minimal["meta"]["returned"]["reason"]
    (identical,) = [r for k, r in back.items() if "identical" in k]
    assert identical["pair_id"] == pid[4] and identical["sent_less"] == "Men cry a lot."  # the original, with the edit
    assert identical["meta"]["returned"]["edits"][0]["edited"] == "Women cry a lot."
    (adj,) = read_jsonl(tmp_path / "pairs_ok.adjudicate.jsonl")
    assert adj["pair_id"] == pid[2] and [f["field"] for f in adj["meta"]["returned"]["fields"]] == ["sent_less"]
    # both queues are pair files push takes again
    assert len(read_pairs(tmp_path / "pairs_ok.needs_review.jsonl").pairs) == 2
    assert read_pairs(tmp_path / "pairs_ok.adjudicate.jsonl").pairs[0].status == "needs_review"


# ------------------------------------------------------------------------------------------ translation kind
def test_translation_corrections_majority_and_adjudication(tmp_path):
    def rec(pid, en_more, en_less, cands):
        return {
            "pair_id": pid,
            "source_lang": "en",
            "target_lang": "hi",
            "bias_type": "gender",
            "direction": "stereo",
            "source": {"sent_more": en_more, "sent_less": en_less},
            "candidates": [
                {"engine": e, "model": "m", "sent_more": a, "sent_less": b, "flags": []} for e, a, b in cands
            ],
            "provenance": {},
        }

    recs = [
        rec(
            "tr-1",
            "The man is a doctor.",
            "The woman is a doctor.",
            [("g", "आदमी एक डॉक्टर है।", "औरत एक डॉक्टर है।"), ("h", "आदमी डाक्टर है।", "औरत डाक्टर है।")],
        ),
        rec(
            "tr-2",
            "The old man is slow.",
            "The young man is slow.",
            [("g", "बूढ़ा आदमी धीमा है।", "जवान आदमी धीमा है।"), ("h", "बूढ़ा धीमा।", "युवा धीमा।")],
        ),
    ]
    cands = write_jsonl(tmp_path / "cands.jsonl", recs)

    def choice(pid, w, idx):
        return {
            "task": pid,
            "worker": w,
            "question": "choice",
            "label": "AB"[idx],
            "qtype": "choice",
            "candidate_index": idx,
            "engine": "gh"[idx],
            "model": "m",
            "created_at": T1,
            "ls_annotation": w + pid,
        }

    def corr(pid, w, side, text):
        return {
            "task": pid,
            "worker": w,
            "question": f"corrected_{side}",
            "label": text,
            "qtype": "text",
            "created_at": T1,
            "ls_annotation": w + pid,
        }

    rows = [choice("tr-1", w, 0) for w in "abc"] + [
        corr("tr-1", "a", "less", "महिला एक डॉक्टर है।"),
        corr("tr-1", "b", "less", "महिला एक डॉक्टर है।"),
        corr("tr-1", "c", "less", "स्त्री एक डॉक्टर है।"),
    ]
    rows += [choice("tr-2", w, 0) for w in "ab"] + [
        corr("tr-2", "a", "more", "बूढ़ा व्यक्ति धीमा है।"),
        corr("tr-2", "b", "more", "वृद्ध आदमी धीमा है।"),
    ]
    judg = write_jsonl(tmp_path / "j.jsonl", rows)
    res = run_apply(ApplyOptions.from_kwargs(kind="translation", data=cands, out=tmp_path / "hi.jsonl", judgments=judg))
    (p,) = res.accepted
    assert (p.sent_more, p.sent_less) == ("आदमी एक डॉक्टर है।", "महिला एक डॉक्टर है।")  # 2 of 3 editors agree
    assert p.meta["review"]["editors"] == ["a", "b"] and p.meta["review"]["edited"]
    (adj,) = read_jsonl(tmp_path / "hi.adjudicate.jsonl")
    assert adj["pair_id"] == "tr-2" and adj["status"] == "needs_review"
    assert "different corrections" in adj["review"]["reason"]
    extra = adj["candidates"][2:]  # each reviewer's corrected pair, for the adjudication round
    assert [(c["engine"], c["model"], c["sent_more"], c["sent_less"]) for c in extra] == [
        ("review", "a", "बूढ़ा व्यक्ति धीमा है।", "जवान आदमी धीमा है।"),
        ("review", "b", "वृद्ध आदमी धीमा है।", "जवान आदमी धीमा है।"),
    ]
    assert get_kind("translation").load(tmp_path / "hi.adjudicate.jsonl")[0].pair_id == "tr-2"
    rep = get_kind("translation").report(get_kind("translation").load(cands), tmp_path / "hi.jsonl", tmp_path / "r")
    assert rep["pairs"]["to_adjudicate"] == 1 and rep["pairs"]["reviewed"] == 2


def test_apply_summary_lists_the_queues(tmp_path, capsys):
    """The CLI prints the counts and the queue files."""
    from biaskit.cli import main

    data = write_jsonl(tmp_path / "s.jsonl", SENTENCES[:1])
    judg = write_jsonl(tmp_path / "j.jsonl", [_j(0, "a", "decision", "fix"), _edit(0, "a", "My aunt parked badly.")])
    args = [
        "annotate",
        "apply",
        "--kind",
        "sentence",
        "--data",
        str(data),
        "--judgments",
        str(judg),
        "--out",
        str(tmp_path / "ok.jsonl"),
    ]
    main(args)
    line = capsys.readouterr().out.strip()
    # one readable line (issue 20): the counts and the files, no raw JSON
    assert line.startswith("0 of 1 record(s) accepted -> ") and "needs review 1" in line, line
    assert f"needs review: {tmp_path / 'ok.needs_review.jsonl'}" in line and not line.startswith("{"), line
    main(args + ["--json"])
    out = json.loads(capsys.readouterr().out)
    # the edit drops the group word "woman": needs review
    assert out["needs_review"] == 1 and out["needs_review_file"].endswith("ok.needs_review.jsonl")
    assert pd.read_json(out["needs_review_file"], lines=True)["sentence"].tolist() == ["My aunt parked badly."]


@pytest.mark.parametrize("kind", ["sentence", "pair", "translation"])
def test_editing_kinds_prefill_their_text_areas(kind):
    """The configs prefill the edit areas with the task's own text (Label Studio's TextArea value="$field")."""
    import xml.etree.ElementTree as ET

    k = get_kind(kind)
    areas = {el.get("name"): el.get("value") for el in ET.fromstring(k.config(None)).iter("TextArea")}
    want = {
        "sentence": {"edited": "$sentence"},
        "pair": {"edited_more": "$sent_more", "edited_less": "$sent_less"},
        "translation": {"corrected_more_A": "$slot_A_more", "corrected_less_B": "$slot_B_less"},
    }[kind]
    assert {n: areas.get(n) for n in want} == want
    assert areas.get("comment") is None


def test_translation_tasks_name_every_slot_the_config_names(tmp_path):
    """Label Studio refuses a task without a key its config names ($slot_C_more: found on a real
    server): a pair with 2 candidates in a file whose largest has 3 gets empty texts for slot C."""
    import re

    def rec(pid, n):
        return {
            "pair_id": pid,
            "source_lang": "en",
            "target_lang": "hi",
            "source": {"sent_more": "a", "sent_less": "b"},
            "candidates": [{"engine": f"e{i}", "sent_more": f"क{i}", "sent_less": f"ख{i}"} for i in range(n)],
        }

    k = get_kind("translation")
    recs = k.load(write_jsonl(tmp_path / "c.jsonl", [rec("x3", 3), rec("x2", 2)]))
    names = set(re.findall(r'value="\$([a-z_A-Z]+)"', k.config(recs)))
    for r in recs:
        data = k.task(r)["data"]
        assert names <= set(data), names - set(data)
    d1 = k.task(recs[1])["data"]
    assert d1["slot_C_more"] == "" and d1["slot_B_more"] in ("क0", "क1")
    assert d1["candidates_html"].count("<div") == 2 and "क0" in d1["candidates_html"]  # the boxes are unchanged


def test_apply_without_judgments_warns_that_corrections_were_not_read(tmp_path, capsys):
    from conftest import run_cli

    data = write_jsonl(tmp_path / "pairs.jsonl", PAIRS[:1])
    pid = get_kind("pair").load(data)[0].pair_id
    agg = tmp_path / "agg.csv"
    pd.DataFrame(
        [{"task": pid, "question": "validity", "label": "stereo", "status": "accepted", "votes": 3, "n_annotators": 3}]
    ).to_csv(agg, index=False)
    code, out, err = run_cli(
        [
            "annotate",
            "apply",
            "--json",
            "--kind",
            "pair",
            "--data",
            str(data),
            "--aggregated",
            str(agg),
            "--out",
            str(tmp_path / "ok.jsonl"),
        ],
        capsys,
    )
    assert code == 0 and "warning: the corrections annotators typed were not read" in err and "--judgments" in err
    assert json.loads(out)["accepted"] == 1
    # kinds without text answers: nothing to warn about
    tdata = write_jsonl(
        tmp_path / "t.jsonl", [{"identity": "a", "attribute": "b", "axis": "gender", "polarity": "positive"}]
    )
    tid = get_kind("tuple").load(tdata)[0].tuple_id
    pd.DataFrame([{"task": tid, "question": "stereotype", "label": "yes", "status": "accepted"}]).to_csv(
        agg, index=False
    )
    code, out, err = run_cli(
        [
            "annotate",
            "apply",
            "--json",
            "--kind",
            "tuple",
            "--data",
            str(tdata),
            "--aggregated",
            str(agg),
            "--out",
            str(tmp_path / "t_ok.jsonl"),
        ],
        capsys,
    )
    assert code == 0 and json.loads(out)["accepted"] == 1 and "warning" not in err
