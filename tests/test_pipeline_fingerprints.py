"""Fingerprints that mean what docs/pipeline.md says (issue 20): a release folder by all its files, a
model by its files' content, inputs by content under paths relative to the working folder."""

from __future__ import annotations

import json
import shutil
import textwrap
from pathlib import Path

import pytest
from conftest import run_cli

REPO = Path(__file__).resolve().parents[1]
DEMO = REPO / "data" / "demo" / "demo_pairs.jsonl"

PROJECT = """
[project]
name = "fp"

[stages.check]
input = "pairs.jsonl"

[stages.release]
date = "2025-01-01"
"""


def _project(root: Path) -> Path:
    d = root / "proj"
    d.mkdir(parents=True)
    shutil.copy(DEMO, d / "pairs.jsonl")
    (d / "biaskit.toml").write_text(textwrap.dedent(PROJECT), encoding="utf-8")
    return d


def _status(d: Path, capsys) -> dict:
    code, out, err = run_cli(["status", "--project", str(d), "--json"], capsys)
    assert code == 0, err
    return {s["name"]: s["status"] for s in json.loads(out)["stages"]}


def test_an_edited_release_card_is_stale_and_built_again(tmp_path, capsys):
    d = _project(tmp_path)
    assert run_cli(["run", "--project", str(d)], capsys)[0] == 0
    card = d / "release" / "fp-0.1.0" / "README.md"
    card.write_text(card.read_text(encoding="utf-8") + "\nAn edit by hand.\n", encoding="utf-8")
    assert _status(d, capsys)["release"] == "stale"
    code, out, err = run_cli(["run", "--project", str(d)], capsys)
    assert code == 0 and "release: done:" in out and "check: unchanged, skipped" in out, out + err
    assert "An edit by hand" not in card.read_text(encoding="utf-8")
    assert run_cli(["release", "verify", str(card.parent)], capsys)[0] == 0
    assert _status(d, capsys) == {"check": "done", "release": "done"}


def test_a_moved_project_runs_nothing_again(tmp_path, capsys):
    d = _project(tmp_path / "a")
    assert run_cli(["run", "--project", str(d)], capsys)[0] == 0
    moved = tmp_path / "b" / "elsewhere"
    moved.parent.mkdir()
    shutil.move(str(d), moved)
    code, out, err = run_cli(["run", "--project", str(moved)], capsys)
    assert code == 0 and out.count("unchanged, skipped") == 2 and "done: 0 stage(s) run" in out, out + err


def test_new_weights_in_the_same_model_folder_change_the_evaluate_fingerprint(tmp_path):
    """The evaluate stage fingerprints each model by its files' content, not its path: weights saved
    into the same folder (same size, same name) change it; an untouched model keeps it, and the
    content hash is cached by size and modification time."""
    import os

    from biaskit.pipeline.project import load_project
    from biaskit.pipeline.stages import STAGES, Context, RunOptions
    from biaskit.pipeline.state import State

    d = tmp_path / "proj"
    (d / "rel").mkdir(parents=True)
    model = d / "model"
    model.mkdir()
    (model / "config.json").write_text('{"model_type": "gpt2"}', encoding="utf-8")
    weights = model / "model.safetensors"
    weights.write_bytes(b"\0" * (2 << 20))
    (d / "biaskit.toml").write_text(
        '[project]\nname = "fp"\n\n[stages.evaluate]\ninput = "rel"\nmodels = ["model"]\nscorer = "clm"\n',
        encoding="utf-8",
    )

    def fp() -> str:
        p = load_project(d)
        return STAGES["evaluate"](Context(p, State(p.workdir), RunOptions())).fingerprint()

    first = fp()
    assert fp() == first
    st = weights.stat()
    with open(weights, "r+b") as fh:  # new weights: same name, same size, same modification time
        fh.seek(1 << 20)
        fh.write(b"\1")
    os.utime(weights, ns=(st.st_atime_ns, st.st_mtime_ns + 1))  # (a save always moves the mtime)
    assert fp() != first


def test_edited_worked_examples_of_the_target_language_make_the_translate_stage_stale(tmp_path, monkeypatch):
    """The ``llm`` engine's prompts show the target language's worked examples
    (``data/languages/<code>/prompts.json``): an edit there changes the translate stage's fingerprint,
    as it changes ``curate translate``'s MT cache key; the same files give the same fingerprint."""
    from biaskit import languages as L
    from biaskit.pipeline.project import load_project
    from biaskit.pipeline.stages import STAGES, Context, RunOptions
    from biaskit.pipeline.state import State

    shipped = L.languages_dir()
    same, edited = tmp_path / "same", tmp_path / "edited"
    shutil.copytree(shipped, same)
    shutil.copytree(shipped, edited)
    target = L.default_target()
    f = edited / target / L.PROMPTS_FILE
    doc = json.loads(f.read_text(encoding="utf-8"))
    translation = doc["tasks"]["translate_pair"]["examples"][0]["translation"]  # the first pair example
    translation["sent_more"] += " (edited)"
    f.write_text(json.dumps(doc, ensure_ascii=False), encoding="utf-8")

    d = tmp_path / "proj"
    d.mkdir()
    shutil.copy(DEMO, d / "pairs.jsonl")
    (d / "biaskit.toml").write_text(
        '[project]\nname = "fp"\n\n[llm]\nbackend = "dummy"\n\n[stages.translate]\ninput = "pairs.jsonl"\n'
        'engines = ["llm"]\n',
        encoding="utf-8",
    )

    def fp(folder: Path) -> str:
        monkeypatch.setattr(L, "languages_dir", lambda: folder)
        p = load_project(d)
        return STAGES["translate"](Context(p, State(p.workdir), RunOptions())).fingerprint()

    first = fp(shipped)
    assert fp(same) == first
    assert fp(edited) != first


def test_from_or_until_a_stage_the_project_does_not_enable_names_the_flag(tmp_path, capsys):
    """`biaskit run --from X` / `--until X` for a stage the project lacks: one line naming the flag as
    typed and the stages it has (check, release), exit 2, nothing run; the Python call names it too."""
    from biaskit.errors import BiaskitError
    from biaskit.pipeline.options import RunCommandOptions
    from biaskit.pipeline.project import load_project
    from biaskit.pipeline.run import run_project

    d = _project(tmp_path)
    for flag in ("--from", "--until"):
        code, out, err = run_cli(["run", "--project", str(d), flag, "evaluate"], capsys)
        assert code == 2, out + err
        assert f"{flag} evaluate: that stage is not enabled in " in err and "Fix: use one of check, release." in err
        assert "Traceback" not in err and not (d / "release").exists()
    with pytest.raises(BiaskitError, match="^--until pairs: that stage is not enabled"):
        run_project(load_project(d), RunCommandOptions(until="pairs"))
