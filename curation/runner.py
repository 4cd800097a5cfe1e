"""One job runner for every LLM call of curation (the step side of distilabel's task/step split).

A :class:`~biaskit.curation.tasks.base.Task` renders messages and parses replies; the runner
gives every task the same machinery:

- **Jobs and keys.** One job per input item; its key hashes the LLM request (model, endpoint,
  messages, params, schema) and the task's ``context(item)`` (what identifies the input).
- **Cache.** The LLM client's response cache answers every request it has seen: a re-run, or a
  run whose output file was deleted, costs zero requests.
- **Resume.** With an output file, each finished job appends its rows in one write (fsync'ed),
  each row carrying ``provenance.job`` (the key) and ``provenance.job_rows`` (how many rows the job
  wrote). A re-run skips jobs whose rows are there. A last job cut short by a kill (fewer rows than
  ``job_rows``) is dropped and asked again (from the cache); an unterminated last line is kept when
  it is a complete record and moved to ``<out>.broken-tail`` otherwise, and either is reported.
- **Errors.** A job that fails (``parse_error``, ``schema_error``, ``request_error``, ``unusable``)
  or comes back ``partial`` (a cut-off reply: fewer items than asked) goes to
  ``<out>.errors.jsonl`` with the raw reply, the recovered rows and the history; its rows do not go
  to the output, so the next run tries it again, and ``retry_failed`` asks the endpoint again
  instead of the cache. The errors file keeps one line per job still failing.
- **Run log.** Each run appends one line to ``<out>.runlog.jsonl``: the command line, task, prompt
  id/version/hash, params, jobs (total, already done, run, failed, partial), HTTP requests, cache
  hits, tokens, estimated cost, duration, and why it stopped early if it did.
- **Concurrency** (threads; rows are written by the calling thread only) and **progress**
  (:func:`biaskit.progress.progress`).
- **Stopping.** Ctrl-C keeps everything finished; an :class:`~biaskit.curation.llm.EndpointError`
  (refused connection, rejected key, failing request after request) stops the run at once, records
  it in the run log and reaches the user as one line.
- **Secrets.** Everything written to the error file and run log passes :func:`biaskit.redact.redact_obj`.

Use ``JobRunner(...).run(items)`` for a whole file, or ``with JobRunner(...) as r: r.run_batch(...)``
for callers that feed jobs in batches (the translation engine).
"""

from __future__ import annotations

import concurrent.futures as cf
import contextvars
import datetime as _dt
import time
from collections.abc import Iterable, Sequence
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any

from biaskit.cache import request_hash
from biaskit.errors import InputError
from biaskit.io import JsonlAppender, read_jsonl, write_jsonl
from biaskit.options import say, tell
from biaskit.redact import redact, redact_obj

from .llm.protocol import EndpointError, LLMClient, LLMResult
from .tasks.base import Task, TaskOutput


def _side_path(out: Path, suffix: str) -> Path:
    return out.with_name(out.name.removesuffix(".jsonl") + suffix)


def errors_path(out: str | Path) -> Path:
    """``x.jsonl`` -> ``x.errors.jsonl``: the jobs that failed, with their raw replies."""
    return _side_path(Path(out), ".errors.jsonl")


def runlog_path(out: str | Path) -> Path:
    """``x.jsonl`` -> ``x.runlog.jsonl``: one line per run."""
    return _side_path(Path(out), ".runlog.jsonl")


@dataclass
class JobOutcome:
    key: str
    item: dict[str, Any]
    output: TaskOutput
    resumed: bool = False  # the rows were read back from the output file
    result: LLMResult | None = None

    @property
    def ok(self) -> bool:
        return self.output.ok


@dataclass
class RunSummary:
    task: str = ""
    jobs: int = 0
    skipped_done: int = 0
    run: int = 0
    ok: int = 0
    rows: int = 0
    errors: int = 0
    partial: int = 0
    interrupted: bool = False
    aborted: str | None = None
    notes: list[str] = field(default_factory=list)
    stats: dict[str, Any] = field(default_factory=dict)
    out: str | None = None
    errors_file: str | None = None

    @property
    def all_failed(self) -> bool:
        """Nothing usable at all: every job of the run failed and none was done before."""
        return self.jobs > 0 and self.ok == 0 and self.skipped_done == 0

    def as_dict(self) -> dict[str, Any]:
        keys = (
            "task",
            "jobs",
            "skipped_done",
            "run",
            "ok",
            "rows",
            "errors",
            "partial",
            "interrupted",
            "aborted",
            "notes",
            "out",
            "errors_file",
        )
        return {k: getattr(self, k) for k in keys} | {"llm": self.stats}


class JobRunner:
    """Runs ``task`` over input items against ``llm`` (see the module docstring).

    ``out``: the JSONL the rows go to (resumable), or None to keep rows in memory only (the caller
    stores results itself, as ``curate translate`` does); ``logs``: where the error file and run log
    go when ``out`` is None (``<logs>.errors.jsonl``, ``<logs>.runlog.jsonl``; None: no files).
    ``params`` override the task's ``default_params`` (temperature, seed, max_tokens, ...).
    """

    def __init__(
        self,
        llm: LLMClient,
        task: Task,
        *,
        params: dict[str, Any] | None = None,
        out: str | Path | None = None,
        logs: str | Path | None = None,
        concurrency: int = 1,
        retry_failed: bool = False,
        progress: bool = True,
        command: str | None = None,
    ):
        if concurrency < 1:
            raise InputError(
                f"{say('concurrency')} must be >= 1, got {concurrency}.", fix=f"{tell('concurrency', 4)} (1 to 64)."
            )
        self.llm, self.task = llm, task
        self.params = {**task.default_params, **{k: v for k, v in (params or {}).items() if v is not None}}
        self.out = Path(out) if out is not None else None
        if self.out is not None and self.out.suffix.lower() not in (".jsonl", ".ndjson"):
            raise InputError("output must be a .jsonl file.", path=self.out, fix="name it *.jsonl, e.g. rows.jsonl.")
        if self.out is not None and self.out.is_dir():
            raise InputError("is a folder, expected a .jsonl file.", path=self.out, fix="name a file, e.g. rows.jsonl.")
        base = self.out if self.out is not None else (Path(logs) if logs is not None else None)
        self.errors_file = errors_path(base) if base is not None else None
        self.runlog_file = runlog_path(base) if base is not None else None
        self.concurrency = concurrency
        self.retry_failed = retry_failed
        self.progress = progress
        if command is None:
            from biaskit.clitools import command_line

            command = command_line()
        self.command = command
        self.summary = RunSummary(task=task.name, out=str(self.out) if self.out else None)
        self._started = time.time()
        self._opened = False
        self._closed = False
        self._sink: JsonlAppender | None = None
        self._errs: JsonlAppender | None = None
        self._done: dict[str, list[dict]] = {}
        self._failed_before: set[str | None] = set()  # job keys of the error rows (None: a row without one)
        self._told_slots = False

    # ------------------------------------------------------------------ opening: resume state
    def _open(self) -> None:
        self._opened = True
        if self.out is not None:
            self._check_owner()  # before the appender repairs a tail: a file not ours is left untouched
            self._out_was_there = self.out.exists()
            self._sink = JsonlAppender(self.out)
            if self._sink.tail_repair is not None:
                self.summary.notes.append(self._sink.tail_repair.message())
            self._done = self._read_done()
        if self.errors_file is not None:
            self._errs = JsonlAppender(self.errors_file)
            if self._errs.tail_repair is not None:
                self.summary.notes.append(self._errs.tail_repair.message())
            if self.retry_failed:
                self._failed_before = {r.get("job") for r in read_jsonl(self.errors_file)}

    def _check_owner(self) -> None:
        """``out`` is new, empty, or this task's own earlier output (every row has
        ``provenance.task`` = the task): a generator appends to and resumes only its own file; any
        other JSONL (a user's file, another step's) is refused before anything is changed."""
        assert self.out is not None
        if not self.out.is_file() or not self.out.stat().st_size:
            return
        from biaskit.io import iter_jsonl

        fix = (
            "choose another --out (a new file: it receives this step's rows and is resumed on re-runs), or move "
            "that file away."
        )
        try:
            for i, r in iter_jsonl(self.out, tolerate_truncated_tail=True, check_text=False):
                prov = r.get("provenance")
                if not isinstance(prov, dict):
                    prov = {}
                task = prov.get("task")
                if task != self.task.name:
                    what = (
                        f"rows of the '{task}' task" if task else "records biaskit did not write (no provenance.task)"
                    )
                    raise InputError(
                        f"holds {what}, not the '{self.task.name}' rows this step writes; biaskit appends "
                        "only to its own output.",
                        path=self.out,
                        row=i,
                        fix=fix,
                    )
        except InputError as exc:
            if exc.fix == fix:
                raise
            raise InputError(
                f"is not an output of this step ({exc.message.rstrip('.')}); biaskit appends only to its own output.",
                path=self.out,
                row=exc.row,
                fix=fix,
            ) from None

    def _read_done(self) -> dict[str, list[dict]]:
        assert self.out is not None and self._sink is not None
        rows = read_jsonl(self.out)
        tail = 0  # rows of the last job, at the end of the file (one job's rows are written in one go)
        last = (rows[-1].get("provenance") or {}).get("job") if rows else None
        while last and tail < len(rows) and (rows[-1 - tail].get("provenance") or {}).get("job") == last:
            tail += 1
        want = (rows[-1].get("provenance") or {}).get("job_rows") if last else None
        if isinstance(want, int) and tail < want:
            # the run that wrote this job was killed in the middle of its rows: ask it again
            rows = rows[:-tail]
            self._sink.close()
            write_jsonl(self.out, rows)
            self._sink = JsonlAppender(self.out)
            self.summary.notes.append(
                f"{self.out}: the last job had {tail} of its {want} rows (an interrupted "
                "run); removed them and asked that job again."
            )
        done: dict[str, list[dict]] = {}
        for r in rows:
            key = (r.get("provenance") or {}).get("job")
            if key:
                done.setdefault(key, []).append(r)
        return done

    # ------------------------------------------------------------------ running
    def job_key(self, item: dict[str, Any], messages: list[dict]) -> str:
        """A job is its request (model, endpoint, messages, params, schema) for its input: two inputs
        that render the same prompt (a tuple listed as positive and as negative) are two jobs, and
        the second is answered by the cache."""
        return request_hash(
            {
                "request": self.llm.job_hash(messages, self.task.schema_for(item), **self.params),
                "input": self.task.context(item),
            }
        )

    def _call(self, key: str, messages: list[dict], schema: dict | None = None) -> LLMResult:
        return self.llm.complete_json(
            messages, schema, refresh=self.retry_failed and key in self._failed_before, **self.params
        )

    def _record(self, key: str, item: dict, result: LLMResult) -> JobOutcome:
        output = self.task.outcome(item, result)
        s = self.summary
        s.run += 1
        if output.ok:
            for r in output.rows:
                prov = r.setdefault("provenance", {})
                prov["job"] = key
                prov["job_rows"] = len(output.rows)
            if self._sink is not None:
                self._sink.write_many(output.rows)
            self._done[key] = output.rows
            s.ok += 1
            s.rows += len(output.rows)
        else:
            s.errors += 1
            s.partial += output.status == "partial"
            if self._errs is not None:
                self._errs.write(
                    redact_obj(
                        {
                            "job": key,
                            "status": output.status,
                            "error": output.error,
                            "raw": result.raw,
                            "context": self.task.context(item),
                            "data": output.rows or None,
                            "history": result.history,
                            "provenance": {**result.provenance(), **self.task.provenance()},
                        }
                    )
                )
        return JobOutcome(key, item, output, result=result)

    def _record_failure(self, key: str, item: dict, error: str) -> None:
        """A job that ended the run (the endpoint cannot serve it): recorded like any failed job."""
        self.summary.run += 1
        self.summary.errors += 1
        if self._errs is not None:
            self._errs.write(
                redact_obj(
                    {
                        "job": key,
                        "status": "request_error",
                        "error": error,
                        "raw": None,
                        "context": self.task.context(item),
                        "provenance": {**self.llm.describe(), **self.task.provenance()},
                    }
                )
            )

    def run_batch(self, items: Sequence[dict[str, Any]]) -> list[JobOutcome]:
        """Run the jobs for ``items`` (resuming and caching as described); outcomes in input order."""
        if not self._opened:
            self._open()
        msgs = [self.task.render(it) for it in items]
        keys = [self.job_key(it, m) for it, m in zip(items, msgs, strict=False)]
        self.summary.jobs += len(set(keys))
        by_key: dict[str, JobOutcome] = {}
        for k, it in zip(keys, items, strict=False):
            if k in self._done and k not in by_key:
                by_key[k] = JobOutcome(k, it, TaskOutput(self._done[k]), resumed=True)
                self.summary.skipped_done += 1
        todo = {k: (it, m) for k, it, m in zip(keys, items, msgs, strict=False) if k not in by_key}
        from biaskit.progress import progress

        pool = cf.ThreadPoolExecutor(max_workers=self._workers() if todo else 1)
        wait = True
        try:
            with progress(len(todo), self.task.name, enabled=self.progress, unit="jobs") as bar:
                # each job runs in the caller's context (how hints name options: flags, or biaskit.toml keys)
                futures = {
                    pool.submit(contextvars.copy_context().run, self._call, k, m, self.task.schema_for(it)): k
                    for k, (it, m) in todo.items()
                }
                for fut in cf.as_completed(futures):
                    k = futures[fut]
                    try:
                        res = fut.result()
                    except EndpointError as exc:
                        self._record_failure(k, todo[k][0], f"request_error: {exc}")
                        raise
                    by_key[k] = self._record(k, todo[k][0], res)
                    bar.advance()
        except KeyboardInterrupt:
            self.summary.interrupted = True
            wait = False
            self._say_saved()
            raise
        except EndpointError as exc:
            self.summary.aborted = redact(str(exc))
            raise
        finally:
            pool.shutdown(wait=wait, cancel_futures=True)
        return [
            JobOutcome(k, it, by_key[k].output, by_key[k].resumed, by_key[k].result)
            for k, it in zip(keys, items, strict=False)
        ]

    def _say_saved(self) -> None:
        """What a Ctrl-C leaves (:func:`biaskit.clitools.saved_on_interrupt`): the finished jobs."""
        from biaskit.clitools import saved_on_interrupt

        s = self.summary
        where = f"in {self.out}" if self.out is not None else "in the LLM cache"
        saved_on_interrupt(f"{s.ok + s.skipped_done} of {s.jobs} {self.task.name} jobs are {where}")

    def _workers(self) -> int:
        """Threads for the jobs: the concurrency asked, but no more than the server takes at once
        (:meth:`~.llm.base.BaseLLM.server_slots`; requests queued at the server would spend their
        timeout waiting), said once."""
        slots = getattr(self.llm, "server_slots", None)
        if self.concurrency <= 1 or slots is None:
            return self.concurrency
        n, why = slots()
        if n is None or n >= self.concurrency:
            return self.concurrency
        if not self._told_slots:
            from biaskit.progress import note

            self._told_slots = True
            note(
                f"{self.llm.endpoint}: {why}: {n} request(s) in flight, not the {say('concurrency', self.concurrency)} "
                "asked for."
            )
        return n

    def run(self, items: Iterable[dict[str, Any]]) -> RunSummary:
        """Run every job, put the output in input order, then the task's whole-file pass, then write
        the run log."""
        with self:
            outcomes = self.run_batch(list(items))
            self._in_input_order([o.key for o in outcomes])
            self._finalize()
        return self.summary

    def _in_input_order(self, keys: Sequence[str]) -> None:
        """Rows are appended as jobs finish (so a kill loses nothing), in an order that depends on
        the concurrency and the endpoint's timing; a finished run rewrites the file (atomically) with
        each job's rows in the order of its input, rows of jobs this run did not ask for after them:
        the same inputs give the same bytes at any concurrency."""
        if self.out is None or self._sink is None:
            return
        order = list(dict.fromkeys(k for k in keys if k in self._done))
        order += [k for k in self._done if k not in set(order)]
        if list(self._done) == order:
            return
        self._sink.close()
        write_jsonl(self.out, (r for k in order for r in self._done[k]))
        self._sink = JsonlAppender(self.out)
        self._done = {k: self._done[k] for k in order}

    def _finalize(self) -> None:
        if self.out is None or type(self.task).finalize is Task.finalize:
            return
        assert self._sink is not None
        self._sink.close()
        rows = read_jsonl(self.out)
        new = self.task.finalize([dict(r) for r in rows])
        counts: dict[str, int] = {}
        for r in new:
            k = (r.get("provenance") or {}).get("job")
            if k:
                counts[k] = counts.get(k, 0) + 1
        for r in new:
            prov = r.get("provenance") or {}
            if prov.get("job") in counts:
                prov["job_rows"] = counts[prov["job"]]
        if new != rows:
            write_jsonl(self.out, new)

    # ------------------------------------------------------------------ closing
    def __enter__(self) -> JobRunner:
        if not self._opened:
            self._open()
        return self

    def __exit__(self, *exc: Any) -> None:
        self.close()

    def close(self) -> RunSummary:
        """Close the files, keep one error line per job still failing, append the run log."""
        if self._closed:
            return self.summary
        self._closed = True
        for f in (self._sink, self._errs):
            if f is not None:
                f.close()
        if (
            self._sink is not None
            and self.out is not None  # always, with a sink: narrows the type
            and not getattr(self, "_out_was_there", True)
            and self.out.is_file()
            and not self.out.stat().st_size
        ):
            self.out.unlink()  # a run that produced no row leaves no empty output behind
        self.summary.stats = self.llm.stats.snapshot()
        fit = getattr(self.llm, "fit_report", None)
        if fit is not None and fit():
            self.summary.stats["server"] = fit()  # what the client learnt about the server (slots, back-off)
        if self.errors_file is not None and self.errors_file.exists():
            latest: dict[str | None, dict] = {}
            for r in read_jsonl(self.errors_file):
                latest[r.get("job")] = r
            still = [r for k, r in latest.items() if k not in self._done]
            if still:
                write_jsonl(self.errors_file, still)
                self.summary.errors_file = str(self.errors_file)
            else:
                self.errors_file.unlink()
        if self.runlog_file is not None and self._opened:
            started = _dt.datetime.fromtimestamp(self._started, _dt.UTC).isoformat(timespec="seconds")
            rec = {
                "command": self.command,
                "started": started,
                "seconds": round(time.time() - self._started, 3),
                **self.llm.describe(),
                **self.task.provenance(),
                "params": self.params,
                **self.summary.as_dict(),
            }
            with JsonlAppender(self.runlog_file) as log:
                log.write(redact_obj(rec))
        return self.summary
