"""End to end on a REAL Label Studio: push every kind, annotate as 3 real users (each with their own
token, signed up through the invite link), pull, aggregate, agreement, apply; idempotent and
resumable pushes; loud rejection of values Label Studio stored but the config does not allow;
serve/stop and data surviving a restart."""

from __future__ import annotations

import json
import re
import socket

import numpy as np
import pandas as pd
import pytest

from biaskit.cli import main

pytestmark = [pytest.mark.slow, pytest.mark.labelstudio]

ANNOTATORS = ("ann1@example.com", "ann2@example.com", "ann3@example.com")


@pytest.fixture
def ls_env(ls_server, monkeypatch):
    monkeypatch.setenv("LABEL_STUDIO_URL", ls_server["url"])
    monkeypatch.setenv("LABEL_STUDIO_API_KEY", ls_server["token"])
    return ls_server


@pytest.fixture
def annotators(ls_annotator):
    return [ls_annotator(e) for e in ANNOTATORS]


def admin(server):
    from label_studio_sdk import LabelStudio

    return LabelStudio(base_url=server["url"], api_key=server["token"])


def tasks_by_id(server, title):
    from biaskit.annotation.labelstudio import connect, existing_task_ids, find_project

    c = connect(server["url"], server["token"])
    p = find_project(c, title)
    return p, existing_task_ids(c, p.id)


def annotate(server, user, task_id, result, lead_time=3.0):
    from label_studio_sdk import LabelStudio

    LabelStudio(base_url=server["url"], api_key=user["token"]).annotations.create(
        id=task_id, result=result, lead_time=lead_time
    )


def ch(name, to, *values):
    return {"from_name": name, "to_name": to, "type": "choices", "value": {"choices": list(values)}}


def tx(name, to, text):
    return {"from_name": name, "to_name": to, "type": "textarea", "value": {"text": [text]}}


def no_token_anywhere(token, *texts):
    for t in texts:
        assert token not in t


# validity labels of annotators 1..3 per pair (None: did not annotate)
PLAN = [
    ("stereo", "stereo", "stereo"),  # accepted 3/3
    ("stereo", "stereo", "antistereo"),  # accepted 2/3
    ("invalid", "invalid", "stereo"),  # majority says not a valid pair
    ("stereo", "antistereo", "invalid"),  # three-way tie -> needs adjudication
    ("antistereo", "antistereo", "antistereo"),
    ("stereo", "antistereo", None),
]  # two annotators, tie


def test_pair_round_trip(ls_env, annotators, crows_csv, tmp_path, capsys):
    import krippendorff
    from biaskit.annotation.labelstudio import push
    from biaskit.annotation.options import PushOptions

    from biaskit.readers import read_pairs, write_pairs

    server = ls_env
    pairs = read_pairs(crows_csv, limit=6).pairs
    data = write_pairs(tmp_path / "pairs.jsonl", pairs)
    title = "biaskit pairs e2e"

    # an interrupted push (stopped after its first chunk of 2) ...
    def stop_after_first(done, total):
        raise KeyboardInterrupt

    with pytest.raises(KeyboardInterrupt):
        push(
            PushOptions.from_kwargs(data=data, kind="pair", project=title, overlap=3, chunk_size=2),
            progress=stop_after_first,
        )
    proj, have = tasks_by_id(server, title)
    assert len(have) == 2 and proj.maximum_annotations == 3
    # ... resumes: only the missing tasks are imported
    main(["annotate", "push", "--kind", "pair", "--data", str(data), "--project", title, "--overlap", "3"])
    out1 = capsys.readouterr().out
    assert "reused project" in out1 and "4 task(s) imported, 2 already there" in out1
    # pushing the same file again creates no duplicates
    main(["annotate", "push", "--kind", "pair", "--data", str(data), "--project", title, "--overlap", "3"])
    out2 = capsys.readouterr().out
    assert "0 task(s) imported, 6 already there" in out2 and "config updated" not in out1 + out2
    proj, have = tasks_by_id(server, title)
    assert sorted(have) == sorted(p.pair_id for p in pairs)
    assert sum(1 for _ in admin(server).tasks.list(project=proj.id)) == 6

    for p, plan in zip(pairs, PLAN, strict=False):
        for user, lab in zip(annotators, plan, strict=False):
            if lab is None:
                continue
            result = [ch("validity", "sent_more", lab)]
            if user["email"] == ANNOTATORS[0] and p is pairs[0]:
                result.append(ch("concerns", "sent_more", "Logical failure", "Not naturalistic"))
            if user["email"] == ANNOTATORS[1] and p is pairs[1]:
                result.append(tx("comment", "sent_more", "fine by me"))
            annotate(server, user, have[p.pair_id], result, lead_time=1.5)

    j = tmp_path / "judgments.csv"
    raw = tmp_path / "export.json"
    main(["annotate", "pull", "--project", title, "--out", str(j), "--raw", str(raw)])
    pull_out = capsys.readouterr()
    df = pd.read_csv(j)
    v = df[df["question"] == "validity"]
    assert len(v) == 17 and set(v["worker"]) == set(ANNOTATORS)
    got = {(t, w): lab for t, w, lab in zip(v["task"], v["worker"], v["label"], strict=False)}
    for p, plan in zip(pairs, PLAN, strict=False):
        for e, lab in zip(ANNOTATORS, plan, strict=False):
            assert got.get((p.pair_id, e)) == lab
    concerns = df[
        (df["worker"] == ANNOTATORS[0]) & (df["task"] == pairs[0].pair_id) & df["question"].str.startswith("concern:")
    ]
    assert set(concerns.loc[concerns["label"] == "yes", "question"]) == {
        "concern:logical_failure",
        "concern:not_naturalistic",
    }
    assert df.loc[(df["worker"] == ANNOTATORS[1]) & (df["task"] == pairs[1].pair_id), "comment"].eq("fine by me").all()
    assert (v["lead_time"] == 1.5).all() and v["created_at"].notna().all()

    agg = tmp_path / "agg.csv"
    main(["annotate", "aggregate", "--judgments", str(j), "--min-agree", "2", "--kind", "pair", "--out", str(agg)])
    a = pd.read_csv(agg, keep_default_na=False)
    va = {r["task"]: r for r in a[a["question"] == "validity"].to_dict(orient="records")}
    ids = [p.pair_id for p in pairs]
    assert [va[i]["status"] for i in ids] == [
        "accepted",
        "accepted",
        "accepted",
        "needs_adjudication",
        "accepted",
        "needs_adjudication",
    ]
    assert [va[i]["label"] for i in ids] == ["stereo", "stereo", "invalid", "", "antistereo", ""]
    assert [va[i]["votes"] for i in ids] == [3, 2, 2, 1, 3, 1]

    rep_dir = tmp_path / "agreement"
    main(["annotate", "agreement", "--judgments", str(j), "--out", str(rep_dir)])
    rep = json.loads((rep_dir / "agreement.json").read_text())
    codes = {"stereo": 0, "antistereo": 1, "invalid": 2}
    matrix = [[codes[plan[u]] if plan[u] else np.nan for plan in PLAN] for u in range(3)]
    expected = krippendorff.alpha(reliability_data=matrix, level_of_measurement="nominal")
    assert rep["per_question"]["validity"]["krippendorff_alpha"] == pytest.approx(expected, abs=1e-6)
    assert "krippendorff_alpha" in rep and rep["per_question"]["validity"]["n_items"] == 6

    out = tmp_path / "validated.jsonl"
    main(
        [
            "annotate",
            "apply",
            "--kind",
            "pair",
            "--data",
            str(data),
            "--aggregated",
            str(agg),
            "--out",
            str(out),
            "--json",
        ]
    )
    res = json.loads(capsys.readouterr().out.strip().splitlines()[-1])
    assert (res["accepted"], res["rejected"], res["needs_adjudication"]) == (3, 1, 2)
    valid = read_pairs(out).pairs
    assert [p.pair_id for p in valid] == [ids[0], ids[1], ids[4]]
    assert valid[2].direction == "antistereo" and all(p.status == "accepted" for p in valid)

    # the token never reaches the terminal or a file biaskit wrote
    no_token_anywhere(
        server["token"],
        out1,
        out2,
        pull_out.out,
        pull_out.err,
        j.read_text(),
        raw.read_text(),
        agg.read_text(),
        out.read_text(),
    )


def test_pull_rejects_values_not_in_config(ls_env, annotators, tmp_path):
    from biaskit.annotation.labelstudio import pull, push
    from biaskit.annotation.options import PullOptions, PushOptions

    from biaskit.errors import InputError

    server = ls_env
    tuples = tmp_path / "t.jsonl"
    tuples.write_text(
        json.dumps({"identity": "nurses", "attribute": "caring", "axis": "gender", "polarity": "positive"}) + "\n"
    )
    push(PushOptions.from_kwargs(data=tuples, kind="tuple", project="biaskit bogus values"))
    _, have = tasks_by_id(server, "biaskit bogus values")
    (tid,) = have.values()
    annotate(server, annotators[0], tid, [ch("stereotype", "tuple", "yes")])
    annotate(server, annotators[2], tid, [ch("stereotype", "tuple", "definitely")])  # Label Studio stores it
    with pytest.raises(InputError) as e:
        pull(PullOptions.from_kwargs(project="biaskit bogus values", out=tmp_path / "j.csv"))
    msg = str(e.value)
    assert "'definitely'" in msg and ANNOTATORS[2] in msg and f"task {next(iter(have))}" in msg
    assert not (tmp_path / "j.csv").exists()  # nothing written


def test_tuple_cat_translation_kinds(ls_env, annotators, stereoset_jsonl, tmp_path, capsys):
    from biaskit.annotation.aggregate import aggregate
    from biaskit.annotation.kinds import get_kind
    from biaskit.annotation.labelstudio import pull, push
    from biaskit.annotation.options import PullOptions, PushOptions

    server = ls_env
    # --- tuple, with LLM pre-annotations as predictions
    tuples = tmp_path / "tuples.jsonl"
    tuples.write_text(
        "".join(
            json.dumps(t) + "\n"
            for t in [
                {"identity": "women", "attribute": "bad drivers", "axis": "gender", "polarity": "negative"},
                {"identity": "Brahmins", "attribute": "vegetarian", "axis": "caste", "polarity": "positive"},
            ]
        )
    )
    tk = get_kind("tuple")
    t_ids = [tk.record_id(r) for r in tk.load(tuples)]
    preds = tmp_path / "preds.csv"
    pd.DataFrame(
        [{"task": t_ids[0], "question": "stereotype", "label": "yes", "model": "smollm2", "score": 0.8}]
    ).to_csv(preds, index=False)
    rep = push(
        PushOptions.from_kwargs(data=tuples, kind="tuple", project="biaskit tuples e2e", overlap=3, predictions=preds)
    )
    assert rep.n_imported == 2 and rep.n_predictions == 1
    _, have = tasks_by_id(server, "biaskit tuples e2e")
    task0 = admin(server).tasks.get(have[t_ids[0]])
    assert task0.predictions and task0.predictions[0].model_version == "smollm2"
    for user, (s0, s1) in zip(annotators, [("yes", "yes"), ("yes", "no"), ("no", "yes")], strict=False):
        annotate(server, user, have[t_ids[0]], [ch("stereotype", "tuple", s0), ch("polarity", "tuple", "negative")])
        annotate(server, user, have[t_ids[1]], [ch("stereotype", "tuple", s1)])
    pull(PullOptions.from_kwargs(project="biaskit tuples e2e", out=tmp_path / "tj.jsonl"))
    tj = pd.read_json(tmp_path / "tj.jsonl", lines=True)
    agg, _ = aggregate(tj, min_agree=2)  # IndiBias: keep a tuple when >= 2 of 3 say stereotypical
    st = agg[agg["question"] == "stereotype"].set_index("task")
    assert st.loc[t_ids[0], "votes"] == 2 and st.loc[t_ids[1], "votes"] == 2
    assert (st["status"] == "accepted").all() and (st["label"] == "yes").all()
    assert set(tj["bias_type"]) == {"gender", "caste"}

    # --- cat: options shown in a seeded order; labels come back keyed by the gold label
    src = tmp_path / "ss.jsonl"
    src.write_text("".join(stereoset_jsonl.read_text(encoding="utf-8").splitlines(keepends=True)[:3]))
    ck = get_kind("cat")
    cats = ck.load(src)
    push(PushOptions.from_kwargs(data=src, kind="cat", project="biaskit cats e2e", overlap=3, seed=5))
    _, have = tasks_by_id(server, "biaskit cats e2e")
    for c in cats:
        data = ck.task(c, 5)["data"]
        for n, user in enumerate(annotators):
            res = []
            for s in data["biaskit_slots"]:
                lab = s["gold_label"] if n < 2 else "unrelated"  # annotator 3 says "unrelated" everywhere
                res.append(ch(f"label_{s['slot']}", f"sentence_{s['slot']}", lab))
            annotate(server, user, have[c.cat_id], res)
    pull(PullOptions.from_kwargs(project="biaskit cats e2e", out=tmp_path / "cj.csv"))
    cj = pd.read_csv(tmp_path / "cj.csv")
    assert len(cj) == 3 * 3 * 3
    mine = cj[cj["worker"] != ANNOTATORS[2]]
    assert (mine["question"] == "option_" + mine["label"]).all()  # slots mapped back to gold labels
    agg, _ = aggregate(cj, min_agree=2)
    assert (agg["status"] == "accepted").all() and (agg["question"] == "option_" + agg["label"]).all()

    # --- translation: blind review; the choice maps back to the engine
    from test_annot_kinds import translation_records

    cands = tmp_path / "cands.jsonl"
    cands.write_text("".join(json.dumps(r, ensure_ascii=False) + "\n" for r in translation_records()))
    tr = get_kind("translation")
    recs = tr.load(cands)
    push(PushOptions.from_kwargs(data=cands, kind="translation", project="biaskit translation e2e", overlap=3, seed=11))
    proj, have = tasks_by_id(server, "biaskit translation e2e")
    assert proj.label_config.count("<Choice ") == 4  # A, B, C, none
    for r in recs:
        data = admin(server).tasks.get(have[r.pair_id]).data
        assert data["biaskit_slots"] == tr.task(r, 11)["data"]["biaskit_slots"]
        llm_slot = next((s["slot"] for s in data["biaskit_slots"] if s["engine"] == "llm"), "A")
        for n, user in enumerate(annotators):
            res = [ch("choice", "src_more", llm_slot if n < 2 else "none")]
            if n == 1:
                res.append(tx("corrected_more", "src_more", "महिला गाड़ी नहीं चला सकती।"))
            annotate(server, user, have[r.pair_id], res)
    pull(PullOptions.from_kwargs(project="biaskit translation e2e", out=tmp_path / "trj.csv"))
    trj = pd.read_csv(tmp_path / "trj.csv")
    choice = trj[(trj["question"] == "choice") & (trj["task"] == "p-1") & (trj["label"] != "none")]
    assert len(choice) == 2 and set(choice["engine"]) == {"llm"} and set(choice["candidate_index"]) == {2}
    assert (trj.loc[trj["question"] == "corrected_more", "qtype"] == "text").all()
    # apply: the translation kind's own apply (votes through the shared aggregator)
    out = tmp_path / "hi_pairs.jsonl"
    capsys.readouterr()
    main(
        [
            "annotate",
            "apply",
            "--kind",
            "translation",
            "--data",
            str(cands),
            "--judgments",
            str(tmp_path / "trj.csv"),
            "--out",
            str(out),
            "--min-agree",
            "2",
            "--json",
        ]
    )
    res = json.loads(capsys.readouterr().out.strip().splitlines()[-1])
    assert (res["accepted"], res["needs_review"], res["rejected"], res["not_reviewed"]) == (2, 0, 0, 0)
    released = {r["source_id"]: r for r in map(json.loads, out.read_text(encoding="utf-8").splitlines())}
    assert released["p-1"]["meta"]["review"]["winner_engine"] == "llm"
    assert released["p-1"]["lang"] == "hi" and released["p-1"]["status"] == "accepted"


def _port_open(url: str) -> bool:
    host, port = re.match(r"http://([^:]+):(\d+)", url).groups()
    with socket.socket() as s:
        s.settimeout(1)
        return s.connect_ex((host, int(port))) == 0


def test_serve_stop_restart_keeps_data(ls_template, tmp_path, monkeypatch, capsys):
    import shutil

    from biaskit.annotation.labelstudio import pull, push
    from biaskit.annotation.options import PullOptions, PushOptions
    from biaskit.annotation.server import running
    from fixtures_labelstudio import ADMIN_TOKEN, create_annotator

    d = tmp_path / "ls"
    shutil.copytree(ls_template, d)
    monkeypatch.delenv("LABEL_STUDIO_API_KEY", raising=False)  # an initialised folder needs no token
    try:
        main(["annotate", "serve", "--data-dir", str(d)])
        out = capsys.readouterr().out
        url = re.search(r"(http://127\.0\.0\.1:\d+)", out).group(1)
        info = running(d)
        assert info is not None and info.url == url and _port_open(url)
        main(["annotate", "serve", "--data-dir", str(d)])  # idempotent
        assert "already runs" in capsys.readouterr().out
        assert ADMIN_TOKEN not in (d / "biaskit-ls.json").read_text()

        server = {"url": url, "token": ADMIN_TOKEN}
        tuples = tmp_path / "t.jsonl"
        tuples.write_text(
            json.dumps({"identity": "Sikhs", "attribute": "brave", "axis": "religion", "polarity": "positive"}) + "\n"
        )
        push(PushOptions.from_kwargs(data=tuples, kind="tuple", project="restart", url=url), token=ADMIN_TOKEN)
        user = create_annotator(server, "restart@example.com")
        _, have = tasks_by_id(server, "restart")
        annotate(server, user, next(iter(have.values())), [ch("stereotype", "tuple", "yes")])
        pull(PullOptions.from_kwargs(project="restart", out=tmp_path / "before.csv", url=url), token=ADMIN_TOKEN)

        main(["annotate", "stop", "--data-dir", str(d)])
        assert "stopped" in capsys.readouterr().out
        assert running(d) is None and not _port_open(url) and not (d / "biaskit-ls.json").exists()
        main(["annotate", "stop", "--data-dir", str(d)])
        assert "no Label Studio was running" in capsys.readouterr().out

        main(["annotate", "serve", "--data-dir", str(d)])
        url2 = re.search(r"(http://127\.0\.0\.1:\d+)", capsys.readouterr().out).group(1)
        pull(PullOptions.from_kwargs(project="restart", out=tmp_path / "after.csv", url=url2), token=ADMIN_TOKEN)
        before, after = pd.read_csv(tmp_path / "before.csv"), pd.read_csv(tmp_path / "after.csv")
        assert len(after) == 1 and after["worker"].tolist() == ["restart@example.com"]
        pd.testing.assert_frame_equal(before, after)
        # the second push after the restart is still idempotent
        assert (
            push(
                PushOptions.from_kwargs(data=tuples, kind="tuple", project="restart", url=url2), token=ADMIN_TOKEN
            ).n_imported
            == 0
        )
    finally:
        main(["annotate", "stop", "--data-dir", str(d)])


def test_connection_errors_are_one_line(tmp_path, capsys, monkeypatch):
    with socket.socket() as s:
        s.bind(("127.0.0.1", 0))
        port = s.getsockname()[1]
    monkeypatch.setenv("LABEL_STUDIO_API_KEY", "not-a-real-token")
    with pytest.raises(SystemExit) as e:
        main(
            [
                "annotate",
                "pull",
                "--project",
                "x",
                "--out",
                str(tmp_path / "j.csv"),
                "--url",
                f"http://127.0.0.1:{port}",
            ]
        )
    assert e.value.code == 2
    err = capsys.readouterr().err
    assert "cannot reach Label Studio" in err and "Traceback" not in err and "not-a-real-token" not in err


def test_bad_token_is_rejected_without_echo(ls_server, tmp_path, capsys, monkeypatch):
    monkeypatch.setenv("LABEL_STUDIO_API_KEY", "wrong-token-123")
    with pytest.raises(SystemExit) as e:
        main(["annotate", "pull", "--project", "x", "--out", str(tmp_path / "j.csv"), "--url", ls_server["url"]])
    assert e.value.code == 2
    err = capsys.readouterr().err
    assert "rejected the API token" in err and "wrong-token-123" not in err


def test_serve_initialises_a_new_folder(tmp_path, monkeypatch, capsys):
    """A team without Label Studio: `serve` on an empty folder creates the admin and its token."""
    import secrets

    from biaskit.annotation.labelstudio import connect
    from fixtures_labelstudio import _ls_bin

    _ls_bin()  # skip when Label Studio is not installed
    token = secrets.token_hex(20)
    monkeypatch.setenv("LABEL_STUDIO_API_KEY", token)
    monkeypatch.setenv("LABEL_STUDIO_PASSWORD", "a-long-admin-password")
    d = tmp_path / "fresh"
    try:
        main(["annotate", "serve", "--data-dir", str(d), "--email", "lead@example.org"])
        out = capsys.readouterr().out
        assert "initialising" in out and token not in out
        url = re.search(r"(http://127\.0\.0\.1:\d+)", out).group(1)
        me = connect(url, token).users.whoami()
        assert me.email == "lead@example.org"
        for f in ("biaskit-ls.json", "init.log", "server.log"):
            assert token not in (d / f).read_text(errors="replace")
    finally:
        main(["annotate", "stop", "--data-dir", str(d)])
