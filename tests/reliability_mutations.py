"""Do the reliability tests catch the bugs of issue 12? Undo each fix in turn and run its test.

Each entry below puts one of issue 12's bugs back (a one-line edit of the fix), runs the test that
guards it, and expects that test to FAIL; the source file is restored afterwards, whatever happens.
Prints one line per bug: ``caught`` (the test failed with the bug back) or ``MISSED``. Exit 1 when
any is missed. Run from the repository root::

    .venv/bin/python tests/reliability_mutations.py            # all (a few minutes)
    .venv/bin/python tests/reliability_mutations.py partial    # the ones whose name contains 'partial'

Not collected by pytest (no ``test_`` prefix) and not under ``benchmarks/`` (``make bench`` runs
every script there): it edits source files while it runs, so run it on a tree nobody else is using.
"""

from __future__ import annotations

import os
import subprocess
import sys
import time
from pathlib import Path

ROOT = Path(__file__).resolve().parents[1]
FUZZ = "tests/test_fuzz_cli.py::test_bad_files_give_one_line_exit_2_and_leave_nothing"

# (name, file, the fix's text, the bug put back, pytest node ids or -k expression)
MUTATIONS = [
    (
        "resume keeps an unterminated but complete last record",
        "biaskit/io.py",
        'kept = isinstance(json.loads(tail.decode("utf-8-sig")), dict)',
        "kept = False",
        ["tests/test_cur_reliability.py::test_existing_output_whose_last_record_has_no_newline_is_kept"],
    ),
    (
        "a truncated input JSONL is reported, not read one row short",
        "biaskit/io.py",
        '            if last:\n                raise InputError(f"the last line is cut off',
        '            if last:\n                return\n                raise InputError(f"the last line is cut off',
        ["tests/test_cur_reliability.py::test_truncated_input_files_are_reported_not_read_short"],
    ),
    (
        "a cut-off LLM reply is partial (and retried), not a cached success",
        "curation/tasks/base.py",
        "if result.truncated and want is not None",
        "if False and result.truncated and want is not None",
        ["tests/test_cur_reliability.py::test_a_cut_off_reply_is_partial_not_a_cached_success"],
    ),
    (
        "engine_failed translation candidates are asked again on resume",
        "curation/translate.py",
        "failed = [k for k, r in done.items() if _engine_failed(r)]",
        "failed = []",
        ["tests/test_cur_reliability.py::test_translate_engine_failures_are_stored_then_retried_on_resume"],
    ),
    (
        "a duplicated task in an aggregated file is refused",
        "annotation/apply.py",
        "seen = UniqueIds(",
        "seen = _NoCheck(",
        ["-k", "annotate and apply"],
    ),
    (
        "a NUL byte (any control character) in a cell is refused",
        "biaskit/textcheck.py",
        'CONTROL_CHARS = re.compile("[\\x00-\\x08\\x0b\\x0c\\x0e-\\x1f]")',
        'CONTROL_CHARS = re.compile("(?!x)x")',
        ["-k", "annotate and aggregate"],
    ),
    (
        "an OSError names the argument whose file it is (not the input)",
        "biaskit/paths.py",
        "def argument_for(filename: str | os.PathLike, argv: Sequence[str]) -> Optional[str]:\n",
        "def argument_for(filename: str | os.PathLike, argv: Sequence[str]) -> Optional[str]:\n    return None\n",
        [
            "tests/test_reliability.py::test_an_os_error_becomes_one_line_naming_the_argument_and_debug_shows_the_traceback",
            "tests/test_reliability.py::test_argument_for_maps_files_and_temporary_siblings_to_their_option",
        ],
    ),
    (
        "an output folder is published whole (a failed re-run leaves the earlier one)",
        "evaluation/pairs.py",
        "with atomic_dir(out_dir, owns=OUTPUT_FILES) as stage:",
        "with _nullstage(out_dir) as stage:",
        ["tests/test_reliability.py::test_a_rerun_that_fails_while_writing_leaves_the_earlier_folder_whole"],
    ),
    (
        "two processes share one score cache (no 'database is locked')",
        "biaskit/cache.py",
        "conn = sqlite3.connect(self.path, timeout=60)",
        "conn = sqlite3.connect(self.path, timeout=0)",
        [
            "tests/test_reliability.py::test_two_evaluate_runs_sharing_one_score_cache_at_once",
            "tests/test_cur_reliability.py::test_disk_cache_opened_and_written_by_many_processes_at_once",
        ],
    ),
    (
        "secrets echoed by servers are redacted",
        "biaskit/redact.py",
        "    if not isinstance(text, str) or not text:\n        return text\n",
        "    return text\n",
        [
            "tests/test_reliability.py::test_secrets_echoed_by_servers_are_never_written_or_printed",
            "tests/test_cur_reliability.py::test_an_echoed_api_key_is_never_written_or_printed",
        ],
    ),
]

NO_CHECK = """


class _NoCheck:  # the bug put back: ids are not checked
    def __init__(self, *a, **k):
        pass

    def add(self, *a, **k):
        pass
"""

NULLSTAGE = """

import contextlib as _contextlib


@_contextlib.contextmanager
def _nullstage(path):  # the bug put back: files written in place, one by one
    Path(path).mkdir(parents=True, exist_ok=True)
    yield Path(path)
"""


def run(name: str, file: str, fix: str, bug: str, tests: list[str]) -> tuple[bool, float]:
    path = ROOT / file
    original = path.read_text(encoding="utf-8")
    assert original.count(fix) == 1, f"{file}: the fix's text is not there once: {fix!r}"
    mutated = original.replace(fix, bug)
    if "_nullstage" in bug:
        mutated += NULLSTAGE
    if "_NoCheck" in bug:
        mutated += NO_CHECK
    t0 = time.perf_counter()
    try:
        path.write_text(mutated, encoding="utf-8")
        args = list(tests)
        if args and args[0] == "-k":
            args = [FUZZ, *args]
        proc = subprocess.run(
            [sys.executable, "-m", "pytest", "-q", "-x", "-p", "no:cacheprovider", "-m", "", *args],
            cwd=ROOT,
            capture_output=True,
            text=True,
            env={**os.environ, "BIASKIT_NO_PROGRESS": "1"},
        )
    finally:
        path.write_text(original, encoding="utf-8")
    if proc.returncode == 5:  # no test collected
        raise SystemExit(f"{name}: no test selected by {tests}")
    last = proc.stdout.strip().splitlines()[-1] if proc.stdout.strip() else ""
    # caught: a test failed (not a collection error, not a crash of the mutated module at import)
    caught = proc.returncode == 1 and " failed" in last and " error" not in last
    return caught, time.perf_counter() - t0


def main() -> None:
    only = sys.argv[1] if len(sys.argv) > 1 else ""
    missed = 0
    for name, file, fix, bug, tests in MUTATIONS:
        if only not in name:
            continue
        caught, secs = run(name, file, fix, bug, tests)
        missed += not caught
        print(f"{'caught' if caught else 'MISSED'}  {name}  ({secs:.0f} s)", flush=True)
    sys.exit(1 if missed else 0)


if __name__ == "__main__":
    main()
