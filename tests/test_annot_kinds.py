"""Task kinds (configs, tasks, shuffles), offline import of Label Studio exports, apply."""

from __future__ import annotations

import json

import pandas as pd
import pytest
from annot_helpers import ls_export
from biaskit.annotation.kinds import KINDS, ParsedConfig, get_kind
from biaskit.annotation.labelstudio import export_to_judgments, import_export
from biaskit.annotation.options import ImportOptions

from biaskit.errors import InputError

TUPLES = [
    {"identity": "women", "attribute": "bad at maths", "axis": "gender", "polarity": "negative"},
    {"identity": "old people", "attribute": "wise", "axis": "age", "polarity": "positive"},
]


def write_jsonl(path, rows):
    path.write_text("".join(json.dumps(r, ensure_ascii=False) + "\n" for r in rows), encoding="utf-8")
    return path


def translation_records():
    return [
        {
            "pair_id": "p-1",
            "source_lang": "en",
            "target_lang": "hi",
            "bias_type": "gender",
            "direction": "stereo",
            "source": {"sent_more": "She can't drive.", "sent_less": "He can't drive."},
            "candidates": [
                {
                    "engine": "googletrans",
                    "model": "web",
                    "sent_more": "वह गाड़ी नहीं चला सकती।",
                    "sent_less": "वह गाड़ी नहीं चला सकता।",
                    "flags": [],
                },
                {
                    "engine": "hf",
                    "model": "nllb",
                    "sent_more": "वह <b>गाड़ी</b> नहीं चला सकती।",
                    "sent_less": "वह गाड़ी नहीं चला सकती।",
                    "flags": [
                        {
                            "code": "translation_collapsed",
                            "reason": "S1 == S2 <after> translation",
                            "suggestion": "use एक पुरुष / एक महिला",
                        }
                    ],
                },
                {
                    "engine": "llm",
                    "model": "gemma",
                    "sent_more": "महिला गाड़ी नहीं चला सकती।",
                    "sent_less": "पुरुष गाड़ी नहीं चला सकता।",
                    "flags": [],
                },
            ],
            "provenance": {},
        },
        {
            "pair_id": "p-2",
            "source_lang": "en",
            "target_lang": "hi",
            "bias_type": "religion",
            "direction": "stereo",
            "source": {"sent_more": "A", "sent_less": "B"},
            "candidates": [
                {"engine": "googletrans", "model": "web", "sent_more": "क", "sent_less": "ख"},
                {"engine": "hf", "model": "nllb", "sent_more": "ग", "sent_less": "घ"},
            ],
            "provenance": {},
        },
    ]


@pytest.mark.parametrize("name", ["tuple", "sentence", "pair", "cat", "translation", "cat_translation"])
def test_configs_validate_offline(name):
    k = get_kind(name)
    pc = ParsedConfig.from_xml(k.config(None))
    for q in k.questions:
        assert q.control in pc.controls
        tag, labels, _ = pc.controls[q.control]
        if q.type in ("choice", "multi"):
            assert tag == "Choices"
            assert set(labels) <= set(q.labels)
        else:
            assert tag == "TextArea"
    assert "comment" in pc.controls
    assert KINDS.names() == ["cat", "cat_translation", "pair", "sentence", "translation", "tuple"]


def test_pair_tasks_from_indibias(indibias_csv):
    k = get_kind("pair")
    with pytest.raises(InputError, match="row 485: identical pair"):
        k.load(indibias_csv)  # one Hindi pair has two identical sentences
    recs = k.load(indibias_csv, skip_invalid=True)
    assert len(k.skipped) == 1 and k.skipped[0].row == 485
    assert {r.lang for r in recs} == {"en", "hi"}
    t = k.task(recs[0])["data"]
    assert t["biaskit_id"] == recs[0].pair_id and t["biaskit_kind"] == "pair"
    assert t["sent_more"] == recs[0].sent_more and t["bias_type"] == recs[0].bias_type
    li = ParsedConfig.from_xml(k.config(recs))
    assert li.controls["validity"][1] == ("stereo", "antistereo", "invalid")


def test_cat_shuffle_is_seeded_and_maps_back(stereoset_jsonl, tmp_path):
    k = get_kind("cat")
    src = tmp_path / "ss.jsonl"
    src.write_text("".join(stereoset_jsonl.read_text(encoding="utf-8").splitlines(keepends=True)[:30]))
    cats = k.load(src)
    assert len(cats) == 30
    orders = []
    for seed in (0, 0, 1):
        orders.append([[s["gold_label"] for s in k.task(c, seed)["data"]["biaskit_slots"]] for c in cats])
    assert orders[0] == orders[1]  # same seed -> same order
    assert orders[0] != orders[2]  # another seed -> another order
    assert len({tuple(o) for o in orders[0]}) > 1  # not the gold order every time
    data = k.task(cats[0], 0)["data"]
    for s in data["biaskit_slots"]:
        opt = cats[0].option(s["gold_label"])
        assert data[f"sentence_{s['slot']}"].endswith(opt.sentence)
    # an annotator labelled slot A with its gold label, B as unrelated, C not at all
    a, b = data["biaskit_slots"][0], data["biaskit_slots"][1]
    rows = k.judgments(data, {"label_A": [a["gold_label"]], "label_B": ["unrelated"]})
    assert rows == [
        {"question": f"option_{a['gold_label']}", "label": a["gold_label"], "qtype": "choice"},
        {"question": f"option_{b['gold_label']}", "label": "unrelated", "qtype": "choice"},
    ]
    res = k.prediction_result(data, "option_stereotype", "stereotype")
    slot = next(s["slot"] for s in data["biaskit_slots"] if s["gold_label"] == "stereotype")
    assert res[0]["from_name"] == f"label_{slot}" and res[0]["to_name"] == f"sentence_{slot}"


def test_translation_tasks_hide_engines_and_escape_html(tmp_path):
    k = get_kind("translation")
    recs = k.load(write_jsonl(tmp_path / "cands.jsonl", translation_records()))
    cfg = ParsedConfig.from_xml(k.config(recs))
    assert cfg.controls["choice"][1] == ("A", "B", "C", "none")  # as many slots as the largest task
    d0 = k.task(recs[0], seed=0)["data"]
    assert [s["index"] for s in d0["biaskit_slots"]] != [0, 1, 2] or [
        s["index"] for s in k.task(recs[0], seed=1)["data"]["biaskit_slots"]
    ] != [0, 1, 2]
    html = d0["candidates_html"]
    for eng in ("googletrans", "hf", "llm", "nllb", "gemma"):
        assert eng not in html  # engines are hidden from the labeling view
    assert "<b>गाड़ी</b>" not in html and "&lt;b&gt;गाड़ी&lt;/b&gt;" in html
    assert "translation_collapsed" in html and "&lt;after&gt;" in html
    assert "suggestion: use एक पुरुष / एक महिला" in html  # the checker's fix reaches the reviewer
    # the chosen slot maps back to its engine and candidate index
    slot_b = d0["biaskit_slots"][1]
    rows = k.judgments(d0, {"choice": ["B"], "corrected_more": ["  सुधार  "], "corrected_less": []})
    choice = next(r for r in rows if r["question"] == "choice")
    assert choice["engine"] == slot_b["engine"] and choice["candidate_index"] == slot_b["index"]
    assert {"question": "corrected_more", "label": "सुधार", "qtype": "text"} in rows
    d1 = k.task(recs[1], seed=0)["data"]
    assert k.check_task_values(d1, {"choice": ["C"]}) is not None  # p-2 shows only A and B
    assert k.check_task_values(d1, {"choice": ["none"]}) is None


def test_bad_translation_records(tmp_path):
    k = get_kind("translation")
    bad = translation_records()[:1]
    bad[0]["candidates"] = []
    with pytest.raises(InputError, match="row 1.*no candidate"):
        k.load(write_jsonl(tmp_path / "bad.jsonl", bad))


def ch(name, to, *values):
    return {"from_name": name, "to_name": to, "type": "choices", "value": {"choices": list(values)}}


def tx(name, to, text):
    return {"from_name": name, "to_name": to, "type": "textarea", "value": {"text": [text]}}


def test_export_to_judgments_pair(crows_csv, tmp_path):
    k = get_kind("pair")
    from biaskit.readers import read_pairs

    recs = read_pairs(crows_csv, limit=2).pairs
    tasks = ls_export(
        "pair",
        recs,
        {
            1: [
                (
                    2,
                    [
                        ch("validity", "sent_more", "stereo"),
                        ch("concerns", "sent_more", "Logical failure"),
                        tx("comment", "sent_more", "ok"),
                    ],
                    False,
                ),
                (3, [ch("validity", "sent_more", "antistereo")], False),
                (4, [], True),
            ],  # skipped
            2: [(2, [ch("validity", "sent_more", "invalid")], False)],
        },
    )
    df, rep = export_to_judgments(tasks, users={2: "ann1@x.org", 3: "ann2@x.org"})
    assert rep.kind == "pair" and rep.n_annotations == 3 and rep.n_skipped_cancelled == 1
    v = df[df["question"] == "validity"]
    assert list(zip(v["task"], v["worker"], v["label"], strict=False)) == [
        (recs[0].pair_id, "ann1@x.org", "stereo"),
        (recs[0].pair_id, "ann2@x.org", "antistereo"),
        (recs[1].pair_id, "ann1@x.org", "invalid"),
    ]
    c = df[(df["worker"] == "ann1@x.org") & df["question"].str.startswith("concern:") & (df["task"] == recs[0].pair_id)]
    assert len(c) == len(k.questions[1].labels)
    assert set(c.loc[c["label"] == "yes", "question"]) == {"concern:logical_failure"}
    assert (df.loc[(df["worker"] == "ann1@x.org") & (df["task"] == recs[0].pair_id), "comment"] == "ok").all()
    assert set(df["lead_time"]) == {2.5, 5.0}
    assert (df["bias_type"] == df["task"].map({r.pair_id: r.bias_type for r in recs})).all()
    from biaskit.schema import Judgment

    for row in df.to_dict(orient="records"):  # every row is a valid shared-schema Judgment
        j = Judgment.model_validate({k: v for k, v in row.items() if v == v and v is not None})
        assert j.task == row["task"] and j.worker == row["worker"]


def test_unknown_values_are_rejected_loudly(tmp_path):
    k = get_kind("tuple")
    src = write_jsonl(tmp_path / "tuples.jsonl", TUPLES)
    recs = k.load(src)
    tasks = ls_export(
        "tuple",
        recs,
        {
            1: [(2, [ch("stereotype", "tuple", "maybe")], False)],
            2: [(3, [ch("mood", "tuple", "happy")], False), (2, [ch("stereotype", "tuple", "yes", "no")], False)],
        },
    )
    with pytest.raises(InputError) as e:
        export_to_judgments(tasks, users={2: "ann1@x.org"}, source="export.json")
    msg = str(e.value)
    assert msg.startswith("export.json: 3 annotation value(s)")
    assert f"task {recs[0].tuple_id}" in msg and "annotator ann1@x.org" in msg and "'maybe'" in msg
    assert "unknown question 'mood'" in msg and "annotator user:3" in msg
    assert "2 values for single-choice question 'stereotype'" in msg
    assert "nothing was written" in msg


def test_import_cli_offline(tmp_path):
    from biaskit.cli import main

    recs = get_kind("tuple").load(write_jsonl(tmp_path / "t.jsonl", TUPLES))
    exp = tmp_path / "export.json"
    exp.write_text(
        json.dumps(
            ls_export(
                "tuple",
                recs,
                {
                    1: [
                        (2, [ch("stereotype", "tuple", "yes"), ch("polarity", "tuple", "negative")], False),
                        (3, [ch("stereotype", "tuple", "yes")], False),
                    ]
                },
            )
        )
    )
    users = tmp_path / "users.csv"
    users.write_text("id,email\n2,a@x.org\n3,b@x.org\n")
    out = tmp_path / "j.csv"
    main(["annotate", "import", "--export", str(exp), "--users", str(users), "--out", str(out)])
    df = pd.read_csv(out)
    assert sorted(zip(df["worker"], df["question"], df["label"], strict=False)) == [
        ("a@x.org", "polarity", "negative"),
        ("a@x.org", "stereotype", "yes"),
        ("b@x.org", "stereotype", "yes"),
    ]
    bad = tmp_path / "bad.json"
    bad.write_text("{not json")
    with pytest.raises(
        InputError, match=r"bad.json, row 1: invalid JSON.*Fix: export the project from Label Studio as JSON"
    ):
        import_export(ImportOptions(export=bad, out=tmp_path / "x.csv"))
    users.write_text("id,email\n2,a@x.org\nx,b@x.org\n")  # an id that is no number: its row and column named
    with pytest.raises(InputError, match=r"users.csv, row 2, column 'id': user id 'x' is not a whole number"):
        import_export(ImportOptions(export=exp, users=users, out=tmp_path / "y.csv"))


def test_apply_pairs(crows_csv, tmp_path):
    from biaskit.annotation.aggregate import aggregate
    from biaskit.annotation.apply import apply_annotations
    from biaskit.annotation.options import ApplyOptions

    from biaskit.readers import read_pairs, write_pairs

    recs = read_pairs(crows_csv, limit=4).pairs
    data = write_pairs(tmp_path / "pairs.jsonl", recs)
    ids = [r.pair_id for r in recs]
    opposite = "antistereo" if recs[1].direction == "stereo" else "stereo"
    rows = []
    for w in ("a", "b", "c"):
        rows.append((ids[0], w, "validity", recs[0].direction))  # accepted as is
        rows.append((ids[1], w, "validity", opposite))  # crowd flips direction
        rows.append((ids[2], w, "validity", "invalid" if w != "c" else "stereo"))  # crowd: not a valid pair
        rows.append((ids[0], w, "concern:not_naturalistic", "yes" if w != "a" else "no"))
    rows.append((ids[3], "a", "validity", "stereo"))  # one annotator only: below --min-agree 2
    agg, _ = aggregate(pd.DataFrame(rows, columns=["task", "worker", "question", "label"]), min_agree=2)
    out = tmp_path / "validated.jsonl"
    res = apply_annotations(ApplyOptions.from_kwargs(kind="pair", data=data, aggregated=agg, out=out))
    assert res == {**res, "records": 4, "accepted": 2, "rejected": 1, "needs_adjudication": 1, "not_annotated": 0}
    got = read_pairs(out).pairs
    assert [p.pair_id for p in got] == ids[:2] and {p.status for p in got} == {"accepted"}
    assert got[0].meta["annotation"]["validity"]["votes"] == 3
    assert got[0].meta["annotation"]["concerns"] == ["not_naturalistic"]
    assert got[0].provenance == recs[0].provenance  # provenance kept
    assert got[1].direction == opposite and got[1].meta["annotation"]["direction_before"] == recs[1].direction
    rejected = [json.loads(x) for x in (tmp_path / "validated.rejected.jsonl").read_text().splitlines()]
    assert {r["id"]: r["status"] for r in rejected} == {ids[2]: "rejected", ids[3]: "needs_adjudication"}
    res = apply_annotations(
        ApplyOptions.from_kwargs(
            kind="pair", data=data, aggregated=agg, out=tmp_path / "strict.jsonl", direction_policy="reject"
        )
    )
    assert res["accepted"] == 1 and res["rejected"] == 2


def test_apply_tuples_and_cats(stereoset_jsonl, tmp_path):
    from biaskit.annotation.aggregate import aggregate
    from biaskit.annotation.apply import apply_annotations
    from biaskit.annotation.options import ApplyOptions

    from biaskit.io import read_jsonl

    tk = get_kind("tuple")
    tpath = write_jsonl(tmp_path / "tuples.jsonl", TUPLES)
    t_ids = [tk.record_id(r) for r in tk.load(tpath)]
    rows = [(t_ids[0], w, "stereotype", "yes") for w in "ab"] + [(t_ids[0], "c", "stereotype", "no")]
    rows += [(t_ids[0], w, "polarity", "positive") for w in "abc"]
    rows += [(t_ids[1], w, "stereotype", "no") for w in "abc"]
    agg, _ = aggregate(pd.DataFrame(rows, columns=["task", "worker", "question", "label"]), min_agree=2)
    res = apply_annotations(
        ApplyOptions.from_kwargs(kind="tuple", data=tpath, aggregated=agg, out=tmp_path / "t_out.jsonl")
    )
    assert (res["accepted"], res["rejected"]) == (1, 1)
    out = read_jsonl(tmp_path / "t_out.jsonl")
    assert out[0]["tuple_id"] == t_ids[0] and out[0]["status"] == "accepted"
    assert out[0]["polarity"] == "positive" and out[0]["meta"]["annotation"]["polarity_before"] == "negative"

    ck = get_kind("cat")
    src = tmp_path / "ss.jsonl"
    src.write_text("".join(stereoset_jsonl.read_text(encoding="utf-8").splitlines(keepends=True)[:2]))
    cats = ck.load(src)
    rows = []
    for w in "abcde":  # 5 validators; CAT 1: 4/5 agree with gold everywhere; CAT 2: unrelated gets 2/5
        for lab in ("stereotype", "anti-stereotype", "unrelated"):
            rows.append((cats[0].cat_id, w, f"option_{lab}", lab if w != "e" else "unrelated"))
            rows.append(
                (cats[1].cat_id, w, f"option_{lab}", lab if (lab != "unrelated" or w in "ab") else "stereotype")
            )
    j = pd.DataFrame(rows, columns=["task", "worker", "question", "label"])
    agg, _ = aggregate(j, min_agree=3)
    res = apply_annotations(
        ApplyOptions.from_kwargs(kind="cat", data=src, aggregated=agg, out=tmp_path / "c_out.jsonl", judgments=j)
    )
    assert (res["accepted"], res["rejected"]) == (1, 1)
    out = read_jsonl(tmp_path / "c_out.jsonl")
    assert out[0]["cat_id"] == cats[0].cat_id
    st = next(o for o in out[0]["options"] if o["gold_label"] == "stereotype")
    # each validator's label with the validator's id (worker e said "unrelated" everywhere)
    assert st["human_labels"] == [{"label": "stereotype", "annotator": w} for w in "abcd"] + [
        {"label": "unrelated", "annotator": "e"}
    ]


def test_apply_rejects_foreign_ids(tmp_path):
    from biaskit.annotation.apply import apply_annotations
    from biaskit.annotation.options import ApplyOptions

    tpath = write_jsonl(tmp_path / "tuples.jsonl", TUPLES)
    agg = pd.DataFrame([{"task": "t-nope", "question": "stereotype", "label": "yes", "status": "accepted"}])
    with pytest.raises(InputError, match="not in the data"):
        apply_annotations(ApplyOptions.from_kwargs(kind="tuple", data=tpath, aggregated=agg, out=tmp_path / "o.jsonl"))
