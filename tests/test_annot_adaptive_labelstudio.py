"""Adaptive overlap on a REAL Label Studio: rounds pushed, annotated through Label Studio's own label
stream (`/api/projects/<id>/next`, as each real annotator account: Label Studio itself decides which
task an annotator gets, and never gives one task twice to the same person), pulled, aggregated and
reported by `annotate status` without a duplicate or a lost judgment; a round killed with SIGKILL
half-way is finished by the next run without asking anyone twice; `biaskit run`'s review stage runs
the same rounds."""

from __future__ import annotations

import json
import os
import signal

import httpx
import pandas as pd
import pytest
from biaskit.annotation.adaptive import META_KEY
from conftest import run_cli
from fixtures_labelstudio import write_tuples
from pipeline_helpers import CountingProxy, clean_env, run_biaskit, start_biaskit, wait_for

pytestmark = [pytest.mark.slow, pytest.mark.labelstudio]


def _project(server, title):
    from biaskit.annotation.labelstudio import connect, find_project

    return find_project(connect(server["url"], server["token"]), title)


def _tasks(server, title):
    """biaskit id -> Label Studio task (id, overlap, meta, annotations count)."""
    from biaskit.annotation.labelstudio import connect, list_tasks

    p = _project(server, title)
    return {r.biaskit_id: r for r in list_tasks(connect(server["url"], server["token"]), p.id)}


def label_stream(server, annotators, project_id, plan, done):
    """Each annotator takes tasks from Label Studio's label stream until it has none for them; the k-th
    answer to a task is ``plan[biaskit_id][k]``. Returns [(biaskit id, annotator email)] in order."""
    got = []
    progress = True
    while progress:
        progress = False
        for a in annotators:
            r = httpx.get(
                f"{server['url']}/api/projects/{project_id}/next",
                headers={"Authorization": f"Token {a['token']}"},
                timeout=60,
            )
            if r.status_code == 404:
                continue
            r.raise_for_status()
            task = r.json()
            bid = task["data"]["biaskit_id"]
            k = done.setdefault(bid, 0)
            httpx.post(
                f"{server['url']}/api/tasks/{task['id']}/annotations/",
                headers={"Authorization": f"Token {a['token']}"},
                timeout=60,
                json={
                    "result": [
                        {
                            "from_name": "stereotype",
                            "to_name": "tuple",
                            "type": "choices",
                            "value": {"choices": [plan[bid][k]]},
                        }
                    ],
                    "lead_time": 2.0,
                },
            ).raise_for_status()
            done[bid] = k + 1
            got.append((bid, a["email"]))
            progress = True
    return got


def _ids(path):
    from biaskit.annotation.kinds import get_kind

    k = get_kind("tuple")
    return [k.record_id(r) for r in k.load(path)]


def test_adaptive_rounds_push_pull_aggregate(ls_env, ls_annotator, tmp_path, capsys):
    server = ls_env
    annotators = [ls_annotator(f"adapt{i}@example.com") for i in range(3)]
    data = write_tuples(tmp_path / "tuples.jsonl", 6)
    ids = _ids(data)
    # the k-th answer each tuple gets; rule: >= 2 of 3 (IndiBias), 2 judgments first, at most 3
    plan = dict(
        zip(
            ids,
            [
                ["yes", "yes", "no"],
                ["yes", "no", "yes"],
                ["no", "no", "yes"],
                ["yes", "no", "no"],
                ["yes", "yes", "yes"],
                ["no", "yes", "yes"],
            ],
            strict=False,
        )
    )
    title = "adaptive tuples"
    push = [
        "annotate",
        "push",
        "--kind",
        "tuple",
        "--data",
        str(data),
        "--project",
        title,
        "--overlap",
        "adaptive",
        "--min-judgments",
        "2",
        "--max-judgments",
        "3",
        "--min-agree",
        "2",
    ]
    code, out, err = run_cli(push, capsys)
    assert code == 0, err
    assert "6 task(s) imported" in out and "0 of 6 task(s) settled, 6 open (12 more judgment(s) asked for)" in out
    proj = _project(server, title)
    assert proj.maximum_annotations == 2
    done: dict = {}
    # round 1: Label Studio serves every task to 2 annotators, then nothing more
    r1 = label_stream(server, annotators, proj.id, plan, done)
    assert len(r1) == 12 and all(done[b] == 2 for b in ids)
    # the same push again: the round's decisions (settled: 2 of 2 agree; open: 1-1)
    code, out, err = run_cli(push, capsys)
    assert code == 0, err
    assert "0 task(s) imported, 6 already there" in out
    assert "3 of 6 task(s) settled, 3 open (3 more judgment(s) asked for)" in out
    tasks = _tasks(server, title)
    open_ids = {ids[1], ids[3], ids[5]}
    assert {b for b, t in tasks.items() if t.overlap == 3} == open_ids
    assert all(tasks[b].meta[META_KEY]["settled"] == (b not in open_ids) for b in ids)
    assert tasks[ids[0]].meta[META_KEY]["outcome"] == ["accepted", "yes"]
    assert tasks[ids[2]].meta[META_KEY]["outcome"] == ["accepted", "no"]
    # status (live): settled / open, judgments so far and saved
    code, out, err = run_cli(["annotate", "status", "--project", title, "--json"], capsys)
    st = json.loads(out)
    assert (st["adaptive"]["settled"], st["adaptive"]["open"], st["adaptive"]["judgments"]) == (3, 3, 12)
    assert st["adaptive"]["judgments_saved"] == 3 and st["done"] == 3
    # round 2: only the open tasks are served, each to the one annotator who has not answered it
    r2 = label_stream(server, annotators, proj.id, plan, done)
    assert sorted(b for b, _ in r2) == sorted(open_ids)
    firsts = {(b, e) for b, e in r1}
    assert not any((b, e) in firsts for b, e in r2)
    code, out, err = run_cli(push, capsys)
    assert "6 of 6 task(s) settled, 0 open" in out and "15 judgment(s) so far, 3 saved" in out
    # pull: 15 judgments, one per (task, annotator), each row with its task's recorded decision
    j = tmp_path / "judgments.csv"
    code, out, err = run_cli(["annotate", "pull", "--project", title, "--out", str(j)], capsys)
    assert code == 0, err
    df = pd.read_csv(j)
    assert len(df) == 15 and not df.duplicated(["task", "worker"]).any()
    assert df.groupby("task").size().to_dict() == {b: (3 if b in open_ids else 2) for b in ids}
    assert set(df["settled_by"]) == {"exact", "max"}
    # agreement on it says how the judgments were collected
    assert run_cli(["annotate", "agreement", "--judgments", str(j), "--out", str(tmp_path / "agr")], capsys)[0] == 0
    assert json.loads((tmp_path / "agr" / "agreement.json").read_text())["collection"]["overlap"] == "adaptive"
    assert "Adaptive overlap." in (tmp_path / "agr" / "agreement.md").read_text()
    # aggregate and apply work on the pulled file as on a fixed overlap
    agg = tmp_path / "agg.csv"
    assert (
        run_cli(
            ["annotate", "aggregate", "--judgments", str(j), "--kind", "tuple", "--min-agree", "2", "--out", str(agg)],
            capsys,
        )[0]
        == 0
    )
    a = pd.read_csv(agg).set_index("task")
    assert a["label"].to_dict() == dict(zip(ids, ["yes", "yes", "no", "no", "yes", "yes"], strict=False))
    assert set(a["status"]) == {"accepted"}
    ok = tmp_path / "ok.jsonl"
    code, out, err = run_cli(
        [
            "annotate",
            "apply",
            "--kind",
            "tuple",
            "--data",
            str(data),
            "--judgments",
            str(j),
            "--min-agree",
            "2",
            "--out",
            str(ok),
            "--json",
        ],
        capsys,
    )
    assert code == 0 and json.loads(out)["accepted"] == 4, out + err
    # nothing left for anyone
    for ann in annotators:
        r = httpx.get(
            f"{server['url']}/api/projects/{proj.id}/next", headers={"Authorization": f"Token {ann['token']}"}
        )
        assert r.status_code == 404


def test_a_round_killed_half_way_is_finished_by_the_next(ls_server, ls_annotator, tmp_path):
    """SIGKILL `annotate push --overlap adaptive` while its 4th task update is on its way (held by a proxy:
    it never reaches Label Studio); the re-run raises exactly the tasks that were not raised yet."""
    url, admin = ls_server["url"], ls_server["token"]
    proxy = CountingProxy(url)
    annotators = [ls_annotator(f"adaptk{i}@example.com") for i in range(2)]
    data = write_tuples(tmp_path / "tuples.jsonl", 10, start=100)
    ids = _ids(data)
    title = f"adaptive kill {os.getpid()}"
    env = clean_env(LABEL_STUDIO_URL=proxy.base_url, LABEL_STUDIO_API_KEY=admin)
    push = [
        "annotate",
        "push",
        "--kind",
        "tuple",
        "--data",
        str(data),
        "--project",
        title,
        "--overlap",
        "adaptive",
        "--min-judgments",
        "1",
        "--max-judgments",
        "3",
        "--min-agree",
        "2",
    ]
    try:
        code, out = run_biaskit(push, env, tmp_path / "push1.log")
        assert code == 0, out
        proj = _project(ls_server, title)
        done: dict = {}
        plan = {b: ["yes", "yes", "yes"] for b in ids}
        assert len(label_stream(ls_server, annotators[:1], proj.id, plan, done)) == 10
        # every task has 1 "yes": none can be settled before a second (>= 2 of 3 needed): 10 updates to make

        def is_update(c):
            return c.method == "PATCH" and "/api/tasks/" in c.path

        before = len([c for c in proxy.calls if is_update(c)])
        proxy.hold(lambda c: is_update(c) and len(proxy.finished(is_update)) >= before + 3)
        p = start_biaskit(push, env, tmp_path / "push2.log")
        assert wait_for(lambda: p.poll() is not None or proxy.held.is_set(), timeout=300) and p.poll() is None, (
            tmp_path / "push2.log"
        ).read_text()
        os.kill(p.pid, signal.SIGKILL)
        p.wait()
        proxy.release()
        raised = {b for b, t in _tasks(ls_server, title).items() if t.overlap == 2}
        assert len(raised) == 3, raised
        # the re-run finishes the round: the other 7 are raised, the 3 are not touched again
        t0 = proxy.calls[-1].started
        code, out = run_biaskit(push, env, tmp_path / "push3.log")
        assert code == 0, out
        assert "0 of 10 task(s) settled, 10 open" in out
        tasks = _tasks(ls_server, title)
        assert all(t.overlap == 2 for t in tasks.values())
        patched = {c.path.rstrip("/").rsplit("/", 1)[-1] for c in proxy.calls if is_update(c) and c.started > t0}
        assert len(patched) == 7 and not patched & {str(tasks[b].id) for b in raised}
        # round 2 through the label stream: the second annotator only; no duplicate, nothing lost
        assert len(label_stream(ls_server, annotators, proj.id, plan, done)) == 10
        code, out = run_biaskit(push, env, tmp_path / "push4.log")
        assert "10 of 10 task(s) settled, 0 open" in out and "20 judgment(s) so far, 10 saved" in out, out
        code, out = run_biaskit(
            ["annotate", "pull", "--project", title, "--out", str(tmp_path / "j.csv")], env, tmp_path / "pull.log"
        )
        assert code == 0, out
        df = pd.read_csv(tmp_path / "j.csv")
        assert (
            len(df) == 20
            and not df.duplicated(["task", "worker"]).any()
            and set(df["worker"]) == {a["email"] for a in annotators}
        )
    finally:
        proxy.close()


def test_biaskit_run_review_stage_with_adaptive_overlap(ls_env, ls_annotator, tmp_path, capsys):
    """`[stages.tuple_review] overlap = "adaptive"`: every `biaskit run` is a round; the stage waits
    (exit 3) until every task is settled, then applies the answers."""
    server = ls_env
    annotators = [ls_annotator(f"adaptrun{i}@example.com") for i in range(3)]
    data = write_tuples(tmp_path / "tuples.jsonl", 4, start=200)
    ids = _ids(data)
    plan = dict(zip(ids, [["yes", "yes"], ["yes", "no", "no"], ["no", "no"], ["no", "yes", "yes"]], strict=False))
    name = f"adaptrun{os.getpid()}"
    (tmp_path / "biaskit.toml").write_text(
        f"""
[project]
name = "{name}"

[stages.tuple_review]
input = "tuples.jsonl"
overlap = "adaptive"
min_judgments = 2
max_judgments = 3
min_agree = 2
""",
        encoding="utf-8",
    )
    run = ["run", "--project", str(tmp_path), "--quiet"]
    code, out, err = run_cli(run, capsys)
    assert code == 3 and "0 of 4 tasks settled (adaptive overlap, 2..3 judgments" in out + err, out + err
    proj = _project(server, f"{name} tuple review")
    done: dict = {}
    assert len(label_stream(server, annotators, proj.id, plan, done)) == 8
    code, out, err = run_cli(run, capsys)
    assert code == 3 and "2 of 4 tasks settled" in out + err, out + err
    assert len(label_stream(server, annotators, proj.id, plan, done)) == 2
    code, out, err = run_cli(run, capsys)
    assert code == 0, out + err
    kept = [json.loads(x) for x in (tmp_path / "work" / "tuple_review" / "tuples.jsonl").read_text().splitlines()]
    assert {t["tuple_id"] for t in kept} == {ids[0], ids[3]}
    j = pd.read_json(tmp_path / "work" / "tuple_review" / "judgments.jsonl", lines=True)
    assert len(j) == 10 and not j.duplicated(["task", "worker"]).any()
