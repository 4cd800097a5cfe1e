"""Shared pytest setup.

Fixture modules (one owner each, to keep them out of each other's way):
- ``fixtures_labelstudio``: a real Label Studio server (session scoped, cached initialised data dir)
- ``fixtures_llm``: a real llama.cpp OpenAI-compatible server serving a GGUF model from PyPI
- ``fixtures_models``: tiny random BERT / XLM-R / GPT-2 models built offline, real pretrained ones
"""
from __future__ import annotations

import os
from pathlib import Path

import pytest

os.environ.setdefault("HF_HUB_OFFLINE", "1")
os.environ.setdefault("TRANSFORMERS_OFFLINE", "1")
os.environ.setdefault("TOKENIZERS_PARALLELISM", "false")

REPO = Path(__file__).resolve().parents[1]
SHARED_DATA = Path(os.environ.get("BIASKIT_SHARED_DATA", REPO.parent / "shared" / "data"))

pytest_plugins = ["fixtures_labelstudio", "fixtures_llm", "fixtures_models"]


def shared_file(rel: str) -> Path:
    """A file from ../shared/data, or skip the test with a clear reason when it is absent."""
    p = SHARED_DATA / rel
    if not p.exists():
        pytest.skip(f"shared dataset {rel} not found under {SHARED_DATA} (set BIASKIT_SHARED_DATA)")
    return p


@pytest.fixture
def crows_csv() -> Path:
    return shared_file("crows_pairs/crows_pairs_anonymized.csv")


@pytest.fixture
def indibias_csv() -> Path:
    return shared_file("indibias/IndiBias_v1_sample.csv")


@pytest.fixture
def stereoset_jsonl() -> Path:
    return shared_file("stereoset/stereoset_dev_flat.jsonl")


@pytest.fixture
def seat_dir() -> Path:
    p = SHARED_DATA / "seat"
    if not p.exists():
        pytest.skip(f"shared SEAT tests not found under {SHARED_DATA}")
    return p


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
