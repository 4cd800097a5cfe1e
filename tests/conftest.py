"""Shared pytest setup.

Fixture modules (one owner each, to keep them out of each other's way):
- ``fixtures_labelstudio``: a real Label Studio server (session scoped, cached initialised data dir)
- ``fixtures_llm``: a real llama.cpp OpenAI-compatible server serving a GGUF model from PyPI
- ``fixtures_models``: tiny random BERT / XLM-R / GPT-2 models built offline, real pretrained ones
- ``fixtures_postgres``: a real private PostgreSQL server (Label Studio on PostgreSQL)
- ``fixtures_browser``: a real headless Chromium driven by Playwright (annotators in Label Studio)
"""

from __future__ import annotations

import os
import re
from pathlib import Path

import pytest

os.environ.setdefault("HF_HUB_OFFLINE", "1")
os.environ.setdefault("TRANSFORMERS_OFFLINE", "1")
os.environ.setdefault("TOKENIZERS_PARALLELISM", "false")

# transformers' log handler keeps the sys.stderr of the moment it is first configured. Configured here, it
# writes to the session's capture; configured first inside a test that uses capsys, it would keep that
# test's stream, closed when the test ends, and every later transformers warning in the same worker would
# print a "--- Logging error ---" block (which the fuzz tests rightly read as a traceback).
from transformers.utils import logging as _hf_logging  # after the offline variables

_hf_logging.get_logger("transformers")

REPO = Path(__file__).resolve().parents[1]

pytest_plugins = ["fixtures_labelstudio", "fixtures_llm", "fixtures_models", "fixtures_postgres", "fixtures_browser"]


# ---------------------------------------------------------------------------------------------------
# Public datasets, fetched the way a user fetches them: biaskit's own downloader (`biaskit data
# download`, checksums from data/datasets.json) into a cache folder. A local mirror (../shared/data,
# or $BIASKIT_SHARED_DATA / $BIASKIT_DATA_MIRROR) is copied instead of the network when present, so
# CI stays offline. When a dataset can be neither copied nor downloaded, the tests that need it skip,
# the run ends with one line counting them and naming the command that fetches the data, and the
# session fails unless missing data was allowed (`make test-offline`, `--allow-missing-data`).

TEST_DATA = Path(os.environ.get("BIASKIT_TEST_DATA") or Path.home() / ".cache" / "biaskit" / "test-data")
MIRROR = Path(
    os.environ.get("BIASKIT_SHARED_DATA") or os.environ.get("BIASKIT_DATA_MIRROR") or REPO.parent / "shared" / "data"
)
FETCH_COMMAND = "make test-data"
MISSING_DATA_REASON = "public dataset not available"

_FETCHED: dict[str, object] = {}  # dataset name -> Path, or the reason it is unavailable (once per session)
_MISSING: dict[str, str] = {}  # test node id -> dataset it lacked
_ALLOW_MISSING = [False]


def pytest_addoption(parser):
    parser.addoption(
        "--allow-missing-data",
        action="store_true",
        default=False,
        help="biaskit: do not try the network for public datasets; skip the tests whose data is "
        "neither cached nor mirrored, and do not fail the run for it (make test-offline).",
    )


def pytest_configure(config):
    _ALLOW_MISSING[0] = bool(
        config.getoption("--allow-missing-data", default=False) or os.environ.get("BIASKIT_ALLOW_MISSING_DATA")
    )


def _fetch(name: str) -> object:
    """The dataset's path in TEST_DATA (cached, mirror-copied or downloaded), else why it is missing."""
    from biaskit.datasets import DownloadOptions, download, find_in_mirror, get_dataset
    from biaskit.errors import BiaskitError

    info = get_dataset(name)
    mirror = MIRROR if MIRROR.is_dir() else None
    present = (TEST_DATA / info.filename).exists()
    if not present and _ALLOW_MISSING[0] and not (mirror and find_in_mirror(info, mirror)):
        return "not in the cache or a mirror, and --allow-missing-data forbids the network"
    import fcntl

    TEST_DATA.mkdir(parents=True, exist_ok=True)
    # pytest-xdist workers may want the same dataset at once: one fetches, the others then find it cached
    with open(TEST_DATA / f".{name}.lock", "w") as lock:
        fcntl.flock(lock.fileno(), fcntl.LOCK_EX)
        try:
            return download(name, DownloadOptions.from_kwargs(out_dir=TEST_DATA, mirror=mirror, timeout=20)).path
        except BiaskitError as exc:
            return str(exc)
        finally:
            fcntl.flock(lock.fileno(), fcntl.LOCK_UN)


def public_dataset(name: str) -> Path:
    """The file (folder) of registry dataset ``name``, or skip the test saying why and how to fetch it."""
    if name not in _FETCHED:
        _FETCHED[name] = _fetch(name)
    got = _FETCHED[name]
    if isinstance(got, Path):
        return got
    return _skip_missing(name, str(got))


def _skip_missing(name: str, why: str):
    test = os.environ.get("PYTEST_CURRENT_TEST", "?").rsplit(" (", 1)[0]
    _MISSING[test] = name
    pytest.skip(
        f"{MISSING_DATA_REASON}: '{name}' ({why}). Fetch it: {FETCH_COMMAND} "
        f"(biaskit data download {name} --out {TEST_DATA}; offline, from a local copy: "
        f"{FETCH_COMMAND} BIASKIT_DATA_MIRROR=DIR)"
    )


def _stereoset_flat() -> Path:
    """StereoSet dev as the flat JSONL the tests read line by line: flattened once from the original
    dev.json that `biaskit data download stereoset-dev` fetches, or the mirror's flattened copy."""
    from biaskit.datasets import get_dataset

    dev = TEST_DATA / get_dataset("stereoset-dev").filename
    flat_mirror = MIRROR / "stereoset" / "stereoset_dev_flat.jsonl"
    if not dev.exists() and flat_mirror.is_file():
        return flat_mirror
    dev = public_dataset("stereoset-dev")
    flat = TEST_DATA / "stereoset_dev.flat.jsonl"
    if not flat.exists() or flat.stat().st_mtime < dev.stat().st_mtime:
        from biaskit.io import write_jsonl
        from biaskit.readers import cat_rows, read_cats

        rows = cat_rows(read_cats(dev, format="stereoset"))
        inter = [r for r in rows if r["type"] == "intersentence"]
        intra = [r for r in rows if r["type"] == "intrasentence"]
        # alternate the splits, as the mirror's flattened file does, so that the first lines hold both
        mixed = (
            [r for pair in zip(inter, intra, strict=False) for r in pair] + inter[len(intra) :] + intra[len(inter) :]
        )
        write_jsonl(flat, mixed)
    return flat


@pytest.hookimpl(hookwrapper=True, tryfirst=True)
def pytest_terminal_summary(terminalreporter, exitstatus, config):
    yield  # after pytest's own summary (the per-test skip reasons): our one line comes last
    missing = _missing(config)
    if missing:
        names = ", ".join(sorted(set(missing.values())))
        n = len(missing)
        line = (
            f"{n} test{'s' if n != 1 else ''} skipped because public data is missing ({names}): fetch it "
            f"with `{FETCH_COMMAND}` (biaskit data download NAME --out {TEST_DATA}), offline from a local copy "
            f"with `{FETCH_COMMAND} BIASKIT_DATA_MIRROR=DIR`"
        )
        if _ALLOW_MISSING[0]:
            terminalreporter.write_line(line + "; allowed by --allow-missing-data (make test-offline).", yellow=True)
        else:
            terminalreporter.write_line(
                line + "; the run fails (use make test-offline to allow it).", red=True, bold=True
            )


def _missing(config) -> dict[str, str]:
    """Tests skipped for missing public data: recorded here in one process, and read back from the skip
    reports (which pytest-xdist's workers send to the controller) when the run is distributed."""
    out = dict(_MISSING)
    tr = config.pluginmanager.get_plugin("terminalreporter")
    for rep in tr.stats.get("skipped", []) if tr else []:
        msg = rep.longrepr[2] if isinstance(rep.longrepr, tuple) and len(rep.longrepr) == 3 else str(rep.longrepr)
        m = re.search(re.escape(MISSING_DATA_REASON) + r": '([^']+)'", msg)
        if m:
            out.setdefault(rep.nodeid, m.group(1))
    return out


def pytest_sessionfinish(session, exitstatus):
    if hasattr(session.config, "workerinput"):
        return  # an xdist worker: the controller decides
    if _missing(session.config) and not _ALLOW_MISSING[0] and session.exitstatus == 0:
        session.exitstatus = pytest.ExitCode.TESTS_FAILED


@pytest.fixture
def crows_csv() -> Path:
    return public_dataset("crows-pairs")


@pytest.fixture
def indibias_csv() -> Path:
    return public_dataset("indibias-sample")


@pytest.fixture
def stereoset_jsonl() -> Path:
    return _stereoset_flat()


@pytest.fixture
def seat_dir() -> Path:
    return public_dataset("sent-bias-seat")


def run_cli(args: list[str], capsys) -> tuple[int, str, str]:
    """Run ``biaskit ARGS`` in-process as the console script does; return (exit code, stdout, stderr)."""
    from biaskit.cli import main

    try:
        main(args)
        code = 0
    except SystemExit as exc:
        code = exc.code if isinstance(exc.code, int) else 1
    cap = capsys.readouterr()
    return code, cap.out, cap.err


@pytest.fixture(autouse=True)
def _isolated_cache(tmp_path, monkeypatch):
    """Each test gets its own biaskit cache dir unless it asks for another."""
    monkeypatch.setenv("BIASKIT_CACHE_DIR", str(tmp_path / "biaskit-cache"))
