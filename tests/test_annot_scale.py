"""Large projects on a REAL Label Studio: 20,000 tasks pushed in chunks, the push killed with
SIGKILL half-way and re-run: every task exactly once (counted in Label Studio); copies that a
killed push's last chunk leaves behind are removed (never an annotated one); pull through an
export snapshot gives the same judgments as the plain export."""

from __future__ import annotations

import os
import re
import signal
import subprocess
import sys
import time
from pathlib import Path

import pandas as pd
import pytest
from fixtures_labelstudio import write_tuples

from biaskit.cli import main

pytestmark = [pytest.mark.slow, pytest.mark.labelstudio]

# ls_env (the server with LABEL_STUDIO_URL / LABEL_STUDIO_API_KEY set): tests/fixtures_labelstudio.py


def _client(server):
    from biaskit.annotation.labelstudio import connect

    return connect(server["url"], server["token"])


def test_push_20k_killed_and_resumed_has_no_duplicates(ls_env, tmp_path, capsys):
    from biaskit.annotation.kinds import get_kind
    from biaskit.annotation.labelstudio import find_project, list_tasks, project_task_count

    n = 20_000
    data = write_tuples(tmp_path / "tuples.jsonl", n)
    want = {get_kind("tuple").record_id(r) for r in get_kind("tuple").load(data)}
    assert len(want) == n
    title = "scale kill -9"
    biaskit = Path(sys.executable).with_name("biaskit")
    proc = subprocess.Popen(
        [
            str(biaskit),
            "annotate",
            "push",
            "--kind",
            "tuple",
            "--data",
            str(data),
            "--project",
            title,
            "--chunk-size",
            "500",
        ],
        stdout=subprocess.PIPE,
        stderr=subprocess.STDOUT,
        env=dict(os.environ),
    )
    client = _client(ls_env)
    # kill it for good (SIGKILL: no cleanup of any kind) once a few chunks are in
    deadline = time.monotonic() + 300
    pid = None
    while time.monotonic() < deadline and proc.poll() is None:
        p = find_project(client, title)
        if p is not None and project_task_count(client, p.id) >= 2_000:
            pid = p.id
            break
        time.sleep(0.1)
    proc.send_signal(signal.SIGKILL)
    proc.wait(30)
    assert proc.returncode == -signal.SIGKILL, proc.stdout.read().decode()
    assert pid is not None
    at_kill = project_task_count(client, pid)
    assert 2_000 <= at_kill < n

    main(["annotate", "push", "--kind", "tuple", "--data", str(data), "--project", title, "--chunk-size", "500"])
    out = capsys.readouterr().out
    imported, already = map(int, re.search(r"(\d+) task\(s\) imported, (\d+) already there", out).groups())
    assert imported + already == n and imported > 0 and already >= at_kill
    # counted in Label Studio: every record exactly once
    assert project_task_count(client, pid) == n
    rows = list_tasks(client, pid)
    assert len(rows) == n and {r.biaskit_id for r in rows} == want

    # large project -> the pull goes through an export snapshot
    j = tmp_path / "j.csv"
    main(["annotate", "pull", "--project", title, "--out", str(j)])
    out = capsys.readouterr().out
    assert f"0 judgment(s) from 0 annotation(s) on {n} task(s)" in out and "(snapshot export)" in out


def test_copies_from_a_killed_push_are_removed_but_annotated_ones_kept(ls_env, ls_annotator, tmp_path):
    """Deterministic version of the race a SIGKILL can leave: the killed push's last chunk is
    committed by the server *after* the re-run listed the project (simulated by importing the
    same records from the progress callback), and an older copy that an annotator has answered."""
    from biaskit.annotation.kinds import get_kind
    from biaskit.annotation.labelstudio import find_project, list_tasks, project_task_count, push
    from biaskit.annotation.options import PushOptions
    from label_studio_sdk import LabelStudio

    k = get_kind("tuple")
    data = write_tuples(tmp_path / "t.jsonl", 30)
    recs = k.load(data)
    title = "scale late chunk"
    client = _client(ls_env)

    # a first, interrupted push left records 0-9, and a copy of record 0 that got annotated
    push(
        PushOptions.from_kwargs(data=write_tuples(tmp_path / "first.jsonl", 10), kind="tuple", project=title),
        show_progress=False,
    )
    pid = find_project(client, title).id
    client.projects.import_tasks(pid, request=[k.task(recs[0])], return_task_ids=True)
    copies0 = sorted(r.id for r in list_tasks(client, pid) if r.biaskit_id == k.record_id(recs[0]))
    assert len(copies0) == 2
    user = ls_annotator("scale@example.com")
    LabelStudio(base_url=ls_env["url"], api_key=user["token"]).annotations.create(
        id=copies0[1],
        result=[{"from_name": "stereotype", "to_name": "tuple", "type": "choices", "value": {"choices": ["yes"]}}],
    )

    late = [k.task(r) for r in recs[20:30]]  # the chunk "still on its way" from the killed push

    def late_commit(done, total):
        if done == 10:  # after the re-run's first chunk: the server commits the old request's chunk
            client.projects.import_tasks(pid, request=late, return_task_ids=True)

    rep = push(
        PushOptions.from_kwargs(data=data, kind="tuple", project=title, chunk_size=10),
        progress=late_commit,
        show_progress=False,
    )
    assert rep.n_existing == 10 and rep.n_imported == 20
    # 1 unannotated copy of record 0 (the old one) + 10 late copies removed; the annotated copy stays
    assert rep.duplicate_tasks_removed == 11 and rep.duplicate_tasks_annotated == []
    rows = list_tasks(client, pid)
    assert project_task_count(client, pid) == 30 and len(rows) == 30
    assert sorted(r.biaskit_id for r in rows) == sorted(k.record_id(r) for r in recs)
    kept0 = [r for r in rows if r.biaskit_id == k.record_id(recs[0])]
    assert [r.id for r in kept0] == [copies0[1]] and kept0[0].n_annotations == 1


def test_snapshot_and_plain_exports_give_the_same_judgments(ls_env, ls_annotator, tmp_path, capsys):
    from biaskit.annotation.labelstudio import existing_task_ids, find_project, push
    from biaskit.annotation.options import PushOptions
    from label_studio_sdk import LabelStudio

    data = write_tuples(tmp_path / "t.jsonl", 12)
    title = "scale export modes"
    push(PushOptions.from_kwargs(data=data, kind="tuple", project=title, overlap=2), show_progress=False)
    client = _client(ls_env)
    have = existing_task_ids(client, find_project(client, title).id)
    users = [ls_annotator(e) for e in ("exp1@example.com", "exp2@example.com")]
    expected = {}
    for n, tid in enumerate(sorted(have.values())):
        for u, user in enumerate(users):
            lab = "yes" if (n + u) % 3 else "no"
            LabelStudio(base_url=ls_env["url"], api_key=user["token"]).annotations.create(
                id=tid,
                result=[
                    {"from_name": "stereotype", "to_name": "tuple", "type": "choices", "value": {"choices": [lab]}}
                ],
            )
            expected[(tid, user["email"])] = lab
    outs = {}
    for mode in ("plain", "snapshot", "auto"):
        outs[mode] = tmp_path / f"{mode}.csv"
        main(["annotate", "pull", "--project", title, "--out", str(outs[mode]), "--export", mode])
        assert f"({'plain' if mode == 'auto' else mode} export)" in capsys.readouterr().out  # 12 tasks: small
    plain, snap = pd.read_csv(outs["plain"]), pd.read_csv(outs["snapshot"])
    pd.testing.assert_frame_equal(plain, snap)
    got = {(t, w): lab for t, w, lab in zip(snap["ls_task"], snap["worker"], snap["label"], strict=False)}
    assert got == expected
    # the snapshot is not left behind on the server
    assert list(client.projects.exports.list(find_project(client, title).id)) == []
