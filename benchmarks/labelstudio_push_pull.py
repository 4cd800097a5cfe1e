"""Push and pull speed against a real Label Studio, on SQLite and on PostgreSQL.

For each database this starts its own Label Studio (SQLite: a copy of the cached initialised
test template; PostgreSQL: a private server from Debian's `postgresql` package, durable settings,
Label Studio initialised on it), then measures

- push: `biaskit annotate push`'s function on N tuple tasks (chunks of 1,000, the existing-task
  listing included), against the straightforward push, one `tasks.create` request per task, on
  a sample (its rate does not depend on N);
- pull: `biaskit annotate pull` (export, validation, judgments file) of N tasks with one
  annotation each, through the plain export and through an export snapshot.

    python benchmarks/labelstudio_push_pull.py [--n 20000] [--baseline-n 100] [--db sqlite,postgresql]

Needs Label Studio (`make services`) and, for PostgreSQL, Debian's `postgresql` package. Timings on
a shared machine are noisy: re-run on a quiet one before quoting them.
"""

from __future__ import annotations

import argparse
import os
import shutil
import sys
import tempfile
import time
from pathlib import Path

REPO = Path(__file__).resolve().parents[1]
sys.path.insert(0, str(REPO / "tests"))
os.environ.setdefault("BIASKIT_NO_PROGRESS", "1")

TOKEN = "0123456789abcdef0123456789abcdef01234567"


def start_ls(db: str, work: Path):
    """(server info, cleanup) for a Label Studio on ``db``."""
    from biaskit.annotation.server import start_server, stop_server
    from fixtures_labelstudio import ADMIN_EMAIL, ADMIN_PASSWORD, ADMIN_TOKEN, build_template, template_dir

    assert ADMIN_TOKEN == TOKEN
    data = work / f"ls-{db}"
    if db == "sqlite":
        shutil.copytree(build_template(template_dir()), data)
        (data / "biaskit-ls.json").unlink(missing_ok=True)
        info = start_server(data, timeout=300)
        return info, lambda: stop_server(data)
    from pg_helpers import PgCluster

    pg = PgCluster(durable=True).start()
    pg.createdb("ls_bench")
    t0 = time.monotonic()
    info = start_server(
        data, email=ADMIN_EMAIL, password=ADMIN_PASSWORD, token=ADMIN_TOKEN, database=pg.url("ls_bench"), timeout=900
    )
    print(f"  (Label Studio initialised on PostgreSQL in {time.monotonic() - t0:.0f}s)", flush=True)

    def cleanup():
        stop_server(data)
        pg.stop()

    return info, cleanup


def bench_db(db: str, n: int, baseline_n: int, work: Path) -> dict:
    from biaskit.annotation.kinds import get_kind
    from biaskit.annotation.labelstudio import find_project, project_task_count, pull, push
    from biaskit.annotation.options import PullOptions, PushOptions
    from fixtures_labelstudio import write_tuples
    from label_studio_sdk import LabelStudio

    info, cleanup = start_ls(db, work)
    url = info.url
    try:
        client = LabelStudio(base_url=url, api_key=TOKEN, timeout=1200)
        k = get_kind("tuple")
        data = write_tuples(work / f"push-{db}.jsonl", n)

        t0 = time.monotonic()
        rep = push(
            PushOptions.from_kwargs(data=data, kind="tuple", project="bench push", url=url),
            token=TOKEN,
            show_progress=False,
        )
        push_s = time.monotonic() - t0
        assert rep.n_imported == n

        # the straightforward push: one request per task
        base = write_tuples(work / f"base-{db}.jsonl", baseline_n, start=n)
        pid = client.projects.create(title="bench baseline", label_config=k.config([])).id
        t0 = time.monotonic()
        for rec in k.load(base):
            client.tasks.create(project=pid, data=k.task(rec)["data"])
        base_s = time.monotonic() - t0
        assert project_task_count(client, pid) == baseline_n

        # pull: N tasks with one annotation each (imported inline: annotations.create_bulk is Enterprise-only)
        ppid = client.projects.create(title="bench pull", label_config=k.config([])).id
        tasks = []
        for i, rec in enumerate(k.load(data)):
            t = k.task(rec)
            t["annotations"] = [
                {
                    "result": [
                        {
                            "from_name": "stereotype",
                            "to_name": "tuple",
                            "type": "choices",
                            "value": {"choices": ["yes" if i % 3 else "no"]},
                        }
                    ]
                }
            ]
            tasks.append(t)
        for s in range(0, n, 1000):
            client.projects.import_tasks(ppid, request=tasks[s : s + 1000])
        assert find_project(client, "bench pull").id == ppid
        pulls = {}
        for mode in ("plain", "snapshot"):
            t0 = time.monotonic()
            prep = pull(
                PullOptions.from_kwargs(project="bench pull", out=work / f"j-{db}-{mode}.csv", url=url, export=mode),
                token=TOKEN,
            )
            pulls[mode] = time.monotonic() - t0
            assert prep.n_annotations == n, prep
        return {
            "db": db,
            "push_s": push_s,
            "push_tps": n / push_s,
            "baseline_tps": baseline_n / base_s,
            "pull_plain_tps": n / pulls["plain"],
            "pull_snapshot_tps": n / pulls["snapshot"],
        }
    finally:
        cleanup()


def main(argv=None) -> int:
    ap = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    ap.add_argument("--n", type=int, default=20_000, help="tasks pushed and pulled (default 20000)")
    ap.add_argument("--baseline-n", type=int, default=100, help="tasks pushed one request each (default 100)")
    ap.add_argument("--db", default="sqlite,postgresql", help="databases, comma-separated")
    args = ap.parse_args(argv)
    rows = []
    with tempfile.TemporaryDirectory(prefix="biaskit-bench-ls-") as tmp:
        for db in args.db.split(","):
            print(f"== {db}: {args.n} tasks", flush=True)
            rows.append(r := bench_db(db.strip(), args.n, args.baseline_n, Path(tmp)))
            print(
                f"  push {r['push_tps']:.0f} tasks/s ({r['push_s']:.1f}s; one request per task: "
                f"{r['baseline_tps']:.1f} tasks/s -> {r['push_tps'] / r['baseline_tps']:.0f}x); "
                f"pull {r['pull_plain_tps']:.0f} tasks/s plain, {r['pull_snapshot_tps']:.0f} tasks/s snapshot",
                flush=True,
            )
    print(
        "\n| database | push (tasks/s) | one task per request (tasks/s) | ratio | pull, plain export (tasks/s) "
        "| pull, snapshot (tasks/s) |"
    )
    print("|---|---|---|---|---|---|")
    for r in rows:
        print(
            f"| {r['db']} | {r['push_tps']:.0f} | {r['baseline_tps']:.1f} | {r['push_tps'] / r['baseline_tps']:.0f}x "
            f"| {r['pull_plain_tps']:.0f} | {r['pull_snapshot_tps']:.0f} |"
        )
    return 0


if __name__ == "__main__":
    sys.exit(main())
