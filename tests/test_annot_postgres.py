"""Label Studio on a REAL PostgreSQL server (`biaskit annotate serve --database postgresql://...`):
initialise, push (Hindi pairs), annotate as real users, stop, start again, pull, and lose nothing;
the data lives in PostgreSQL, not in a SQLite file; the password is never printed or written.
Plus fast checks of the URL parsing, the folder <-> database binding and the redaction."""

from __future__ import annotations

import json
import re

import pandas as pd
import pytest

from biaskit.cli import main

# --------------------------------------------------------------------------------------------
# fast: no server
# --------------------------------------------------------------------------------------------


def test_database_url_parsing_and_env():
    from biaskit.annotation.server import Database

    db = Database.parse("postgresql://ann%40team:p%40ss-w0rd!@db.example.org:6543/label_studio?sslmode=require")
    assert (db.engine, db.host, db.port, db.name, db.user, db.password, db.sslmode) == (
        "postgresql",
        "db.example.org",
        6543,
        "label_studio",
        "ann@team",
        "p@ss-w0rd!",
        "require",
    )
    env = db.env()
    assert env == {
        "DJANGO_DB": "default",
        "POSTGRE_NAME": "label_studio",
        "POSTGRE_USER": "ann@team",
        "POSTGRE_HOST": "db.example.org",
        "POSTGRE_PORT": "6543",
        "POSTGRE_PASSWORD": "p@ss-w0rd!",
        "PGSSLMODE": "require",
    }
    # what may be printed or stored has no password
    assert db.public_url() == "postgresql://ann%40team@db.example.org:6543/label_studio?sslmode=require"
    assert "p@ss" not in json.dumps(db.public()) and "p@ss" not in repr(db)
    # defaults: port 5432, user postgres; no password -> empty (libpq falls back to $PGPASSWORD / ~/.pgpass)
    d2 = Database.parse("postgres://db.local/ls")
    assert (d2.port, d2.user, d2.env()["POSTGRE_PASSWORD"]) == (5432, "postgres", "")
    assert Database.parse(None).env() == {"DJANGO_DB": "sqlite"}


@pytest.mark.parametrize(
    "url, msg",
    [
        ("mysql://u:p@h/db", "unsupported database 'mysql'"),
        ("postgresql://u:secret-pw-1@h", "needs a host and a database name"),
        ("postgresql://u:secret-pw-1@h:99999/db", "not a valid URL"),
        ("postgresql://u:secret-pw-1@h/db?connect_timeout=3", "unsupported parameter(s) connect_timeout"),
    ],
)
def test_bad_database_urls_are_one_line_errors(url, msg, tmp_path, capsys):
    with pytest.raises(SystemExit) as e:
        main(["annotate", "serve", "--data-dir", str(tmp_path / "d"), "--database", url])
    assert e.value.code == 2
    err = capsys.readouterr().err
    assert msg in err and "Traceback" not in err and "secret-pw-1" not in err
    assert not (tmp_path / "d").exists()  # nothing started, nothing written


def test_a_data_folder_keeps_its_database(tmp_path, capsys):
    from biaskit.annotation.server import DB_INFO_FILE, Database, resolve_database

    pg = tmp_path / "pg"
    pg.mkdir()
    (pg / DB_INFO_FILE).write_text(json.dumps(Database.parse("postgresql://u@h:5433/a").public()))
    # the recorded database is used when --database is not given; the same one (any password) is fine
    assert resolve_database(pg, None).public_url() == "postgresql://u@h:5433/a"
    assert resolve_database(pg, "postgresql://u:pw-123456@h:5433/a").password == "pw-123456"
    with pytest.raises(SystemExit) as e:
        main(["annotate", "serve", "--data-dir", str(pg), "--database", "postgresql://u:pw-123456@h:5433/b"])
    assert e.value.code == 2
    err = capsys.readouterr().err
    assert "postgresql://u@h:5433/a, not postgresql://u@h:5433/b" in err and "pw-123456" not in err

    assert _serve_sqlite_folder(tmp_path, capsys, "--database", "postgresql://u@h/a") == 2
    assert "database is sqlite" in capsys.readouterr().err


def test_several_workers_need_postgres(tmp_path, capsys):
    assert _serve_sqlite_folder(tmp_path, capsys, "--workers", "3") == 2
    assert "several web workers need PostgreSQL" in capsys.readouterr().err


def _serve_sqlite_folder(tmp_path, capsys, *args) -> int:
    """`serve ARGS` on a folder initialised with SQLite; its exit code."""
    sq = tmp_path / "sq"
    sq.mkdir()
    (sq / "label_studio.sqlite3").write_bytes(b"")
    with pytest.raises(SystemExit) as e:
        main(["annotate", "serve", "--data-dir", str(sq), *args])
    return e.value.code


def test_url_passwords_are_redacted():
    from biaskit.redact import redact

    assert (
        redact("FATAL: postgresql://bob:hunter2-x@db:5432/ls refused")
        == "FATAL: postgresql://bob:***@db:5432/ls refused"
    )
    assert redact("see http://127.0.0.1:8080/projects/3") == "see http://127.0.0.1:8080/projects/3"


# --------------------------------------------------------------------------------------------
# slow: a real PostgreSQL and a real Label Studio
# --------------------------------------------------------------------------------------------
ADMIN_TOKEN = "fedcba9876543210fedcba9876543210fedcba98"
PLAN = {  # pair index -> (annotator 1, annotator 2) validity labels
    0: ("stereo", "stereo"),
    1: ("antistereo", "invalid"),
    2: ("invalid", "invalid"),
    3: ("stereo", None),
}


def _hindi_pairs(tmp_path):
    rows = [
        ("महिलाएँ गाड़ी नहीं चला सकतीं।", "पुरुष गाड़ी नहीं चला सकते।", "gender"),
        ("ब्राह्मण हमेशा शाकाहारी होते हैं।", "दलित हमेशा शाकाहारी होते हैं।", "caste"),
        ("बिहारी लोग मेहनती होते हैं।", "पंजाबी लोग मेहनती होते हैं।", "region"),
        ("मुसलमान पढ़ाई में कमजोर होते हैं।", "हिंदू पढ़ाई में कमजोर होते हैं।", "religion"),
    ]
    p = tmp_path / "hi_pairs.jsonl"
    p.write_text(
        "".join(
            json.dumps(
                {"sent_more": a, "sent_less": b, "direction": "stereo", "bias_type": t, "lang": "hi"},
                ensure_ascii=False,
            )
            + "\n"
            for a, b, t in rows
        ),
        encoding="utf-8",
    )
    return p


def _files_text(folder):
    out = []
    for f in folder.rglob("*"):
        if f.is_file() and f.stat().st_size < 5_000_000:
            out.append(f.read_bytes().decode("utf-8", errors="replace"))
    return "\n".join(out)


@pytest.mark.slow
@pytest.mark.labelstudio
def test_label_studio_on_postgres_survives_restart(pg_cluster, tmp_path, monkeypatch, capsys):
    from biaskit.annotation.labelstudio import connect, existing_task_ids, find_project, pull
    from biaskit.annotation.options import PullOptions
    from biaskit.annotation.server import DB_FILE, DB_INFO_FILE, ls_version, running
    from fixtures_labelstudio import _ls_bin, create_annotator
    from label_studio_sdk import LabelStudio

    from biaskit.readers import read_pairs

    _ls_bin()
    pg = pg_cluster
    pg.createdb("ls_team")
    url_with_pw = pg.url("ls_team")
    d = tmp_path / "ls"
    monkeypatch.setenv("LABEL_STUDIO_API_KEY", ADMIN_TOKEN)
    monkeypatch.setenv("LABEL_STUDIO_PASSWORD", "team-admin-pass-1")
    monkeypatch.delenv("PGPASSWORD", raising=False)
    printed = []
    try:
        main(["annotate", "serve", "--data-dir", str(d), "--database", url_with_pw, "--email", "lead@example.org"])
        out = capsys.readouterr()
        printed += [out.out, out.err]
        assert f"database postgresql://{pg.user}@127.0.0.1:{pg.port}/ls_team" in out.out
        url = re.search(r"(http://127\.0\.0\.1:\d+)", out.out).group(1)
        # the data is in PostgreSQL: no SQLite file; the folder records where (without the password)
        assert not (d / DB_FILE).exists()
        recorded = json.loads((d / DB_INFO_FILE).read_text())
        assert recorded == {
            "engine": "postgresql",
            "host": "127.0.0.1",
            "port": pg.port,
            "name": "ls_team",
            "user": pg.user,
            "migrated_by_label_studio": ls_version(),
        }
        assert pg.psql("SELECT email FROM htx_user", "ls_team") == "lead@example.org"

        data = _hindi_pairs(tmp_path)
        pairs = read_pairs(data).pairs
        main(
            [
                "annotate",
                "push",
                "--kind",
                "pair",
                "--data",
                str(data),
                "--project",
                "hi pg",
                "--overlap",
                "2",
                "--url",
                url,
            ]
        )
        printed.append(capsys.readouterr().out)
        assert "4 task(s) imported" in printed[-1]
        client = connect(url, ADMIN_TOKEN)
        have = existing_task_ids(client, find_project(client, "hi pg").id)
        server = {"url": url, "token": ADMIN_TOKEN}
        users = [create_annotator(server, e) for e in ("a1@example.org", "a2@example.org")]
        for i, labels in PLAN.items():
            for user, lab in zip(users, labels, strict=False):
                if lab:
                    LabelStudio(base_url=url, api_key=user["token"]).annotations.create(
                        id=have[pairs[i].pair_id],
                        lead_time=2.0,
                        result=[
                            {
                                "from_name": "validity",
                                "to_name": "sent_more",
                                "type": "choices",
                                "value": {"choices": [lab]},
                            }
                        ],
                    )
        # the annotations are rows of PostgreSQL's task_completion table, Hindi text intact in task data
        assert pg.psql("SELECT count(*) FROM task_completion", "ls_team") == "7"
        assert (
            pg.psql("SELECT count(*) FROM task WHERE data->>'sent_more' = 'महिलाएँ गाड़ी नहीं चला सकतीं।'", "ls_team")
            == "1"
        )
        before = tmp_path / "before.csv"
        pull(PullOptions.from_kwargs(project="hi pg", out=before, url=url), token=ADMIN_TOKEN)

        main(["annotate", "stop", "--data-dir", str(d)])
        printed.append(capsys.readouterr().out)
        assert running(d) is None
        # start again from the folder alone (the recorded database, the password from libpq's
        # $PGPASSWORD), now with 2 web worker processes (gunicorn)
        monkeypatch.setenv("PGPASSWORD", pg.password)
        main(["annotate", "serve", "--data-dir", str(d), "--workers", "2"])
        out = capsys.readouterr().out
        printed.append(out)
        assert "2 web workers" in out
        url2 = re.search(r"(http://127\.0\.0\.1:\d+)", out).group(1)
        monkeypatch.delenv("PGPASSWORD")
        info = running(d)
        assert info is not None and info.workers == 2
        # the gunicorn master's own children are its 2 workers (a worker may run short-lived
        # subprocesses of its own in the same process group: those are not counted)
        assert len(_children(info.pid)) == 2, _children(info.pid)
        after = tmp_path / "after.csv"
        main(["annotate", "pull", "--project", "hi pg", "--out", str(after), "--url", url2])
        printed.append(capsys.readouterr().out)

        a, b = pd.read_csv(before), pd.read_csv(after)
        pd.testing.assert_frame_equal(a, b)
        v = a[a["question"] == "validity"]
        got = {(t, w): lab for t, w, lab in zip(v["task"], v["worker"], v["label"], strict=False)}
        want = {
            (pairs[i].pair_id, e): lab
            for i, labels in PLAN.items()
            for e, lab in zip(("a1@example.org", "a2@example.org"), labels, strict=False)
            if lab
        }
        assert got == want
        assert main_push_again(data, url2, capsys) == "0 task(s) imported, 4 already there"
    finally:
        main(["annotate", "stop", "--data-dir", str(d)])
    # the password is nowhere: not printed, not in any file of the data folder (logs, pid/db files)
    everything = "\n".join(printed) + capsys.readouterr().out + _files_text(d)
    assert pg.password not in everything


def _children(pid: int) -> list[int]:
    """Live (not zombie) processes whose parent is ``pid``, from /proc/<pid>/stat."""
    import os

    out = []
    for d in os.listdir("/proc"):
        if d.isdigit():
            try:
                stat = open(f"/proc/{d}/stat").read()
            except OSError:
                continue
            state, ppid = stat.rsplit(")", 1)[1].split()[:2]
            if int(ppid) == pid and state != "Z":
                out.append(int(d))
    return out


def main_push_again(data, url, capsys) -> str:
    main(["annotate", "push", "--kind", "pair", "--data", str(data), "--project", "hi pg", "--url", url])
    return re.search(r"\d+ task\(s\) imported, \d+ already there", capsys.readouterr().out).group(0)


@pytest.mark.slow
@pytest.mark.labelstudio
def test_wrong_postgres_password_is_one_line_and_not_echoed(pg_cluster, tmp_path, monkeypatch, capsys):
    from fixtures_labelstudio import _ls_bin

    _ls_bin()
    pg_cluster.createdb("ls_wrong")
    monkeypatch.setenv("LABEL_STUDIO_API_KEY", ADMIN_TOKEN)
    monkeypatch.setenv("LABEL_STUDIO_PASSWORD", "team-admin-pass-1")
    bad = f"postgresql://{pg_cluster.user}:not-the-password-42@127.0.0.1:{pg_cluster.port}/ls_wrong"
    with pytest.raises(SystemExit) as e:
        main(["annotate", "serve", "--data-dir", str(tmp_path / "d"), "--database", bad])
    assert e.value.code == 2
    err = capsys.readouterr().err
    assert "label-studio init` failed" in err and "password authentication failed" in err
    assert "not-the-password-42" not in err and "Traceback" not in err and len(err.strip().splitlines()) == 1
    assert "not-the-password-42" not in _files_text(tmp_path / "d")
