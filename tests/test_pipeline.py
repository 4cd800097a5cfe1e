"""`biaskit init | run | status` offline: the project file's checks (file, key, line, fix; secrets
refused), skip / re-run / resume rules on the `dummy` LLM backend, exit codes, the status, and the
progress line of human stages. The real path (llama.cpp, Label Studio, kill -9) is in
test_pipeline_e2e.py; the shipped example project in test_pipeline_demo.py."""

from __future__ import annotations

import json
import textwrap
from pathlib import Path

import pytest
from conftest import run_cli

REPO = Path(__file__).resolve().parents[1]
DEMO = REPO / "data" / "demo" / "demo_pairs.jsonl"

OFFLINE = """
[project]
name = "offline"

[llm]
backend = "dummy"

[stages.tuples]
axes = ["caste"]
identities = { caste = ["Dalit", "Brahmin"] }
polarity = "negative"
n = 3

[stages.sentences]
per_tuple = 2

[stages.pairs]

[stages.check]

[stages.release]
date = "2025-01-01"
"""


def _project(tmp_path, text=OFFLINE, name="proj"):
    d = tmp_path / name
    d.mkdir(exist_ok=True)
    (d / "biaskit.toml").write_text(textwrap.dedent(text), encoding="utf-8")
    return d


def _state(d):
    return json.loads((d / ".biaskit" / "state.json").read_text(encoding="utf-8"))


def _lines(p):
    return [json.loads(x) for x in Path(p).read_text(encoding="utf-8").splitlines() if x.strip()]


# ------------------------------------------------------------------------------------------ init
@pytest.mark.parametrize(
    "template, hindi, stages",
    [
        (
            "generate",
            True,
            [
                "tuples",
                "tuple_review",
                "sentences",
                "antistereo",
                "sentence_review",
                "pairs",
                "check",
                "pair_review",
                "translate",
                "translation_review",
                "release",
                "seat_tests",
                "evaluate",
            ],
        ),
        (
            "generate",
            False,
            [
                "tuples",
                "tuple_review",
                "sentences",
                "antistereo",
                "sentence_review",
                "pairs",
                "check",
                "pair_review",
                "release",
                "seat_tests",
                "evaluate",
            ],
        ),
        (
            "adapt",
            True,
            ["adapt", "check", "pair_review", "translate", "translation_review", "release", "seat_tests", "evaluate"],
        ),
        ("adapt", False, ["adapt", "check", "pair_review", "release", "seat_tests", "evaluate"]),
        (
            "stereoset",
            True,
            ["cats", "cat_review", "cat_translate", "cat_translation_review", "release", "seat_tests", "evaluate"],
        ),
        ("stereoset", False, ["cats", "cat_review", "release", "seat_tests", "evaluate"]),
    ],
)
def test_init_writes_a_commented_project_that_loads(tmp_path, capsys, template, hindi, stages):
    from biaskit.pipeline import load_project

    d = tmp_path / "my-bench"
    code, out, err = run_cli(["init", str(d), "--template", template, "--hindi" if hindi else "--no-hindi"], capsys)
    assert code == 0, err
    text = (d / "biaskit.toml").read_text(encoding="utf-8")
    assert 'name = "my-bench"' in text and "OPENAI_API_KEY" in text and text.count("#") > 20
    p = load_project(d, check_inputs=False)
    assert p.enabled() == stages
    # never over an existing file
    code, out, err = run_cli(["init", str(d), "--template", template], capsys)
    assert code == 2 and "never overwrites" in err
    assert (d / "biaskit.toml").read_text(encoding="utf-8") == text


def test_adapt_template_says_where_the_crows_file_comes_from(tmp_path, capsys):
    d = tmp_path / "crows-in"
    assert run_cli(["init", str(d), "--template", "adapt", "--no-hindi"], capsys)[0] == 0
    code, out, err = run_cli(["run", "--project", str(d)], capsys)
    assert code == 2
    assert "key 'stages.adapt.input'" in err and "crows_pairs_anonymized.csv" in err and "does not exist" in err


# ------------------------------------------------------------------------------------------ file errors
BASE = '[project]\nname = "x"\n[llm]\nbackend = "dummy"\n'


@pytest.mark.parametrize(
    "body, expected",
    [
        # an unknown key: its line, the table, a suggestion
        (
            BASE + '[stages.tuples]\naxes = ["caste"]\nper_tupel = 3\n',
            [
                "key 'stages.tuples.per_tupel' (line 7)",
                "unknown setting in [stages.tuples]",
                "Fix: [stages.tuples] takes: enabled, input, llm, prompt, axes, identities, polarity, n, lang.",
            ],
        ),
        (
            BASE + '[stages.sentences]\ninput = "t.jsonl"\nper_tupel = 3\n',
            ["key 'stages.sentences.per_tupel' (line 7)", "did you mean 'per_tuple'?"],
        ),
        (
            BASE + '[stages.tupels]\naxes = ["caste"]\n',
            ["key 'stages.tupels' (line 5)", "did you mean 'tuples'?", "the stages are: tuples, tuple_review"],
        ),
        (
            BASE + '[stages.tuples]\naxes = ["caste"]\nn = "ten"\n',
            ["key 'stages.tuples.n' (line 7)", "valid integer", "give a whole number (no quotes)"],
        ),
        (
            BASE + '[stages.tuples]\npolarity = "both"\n',
            ["key 'stages.tuples.axes' (line 5)", "Field required", "add axes = ... to [stages.tuples]"],
        ),
        (
            BASE + '[stages.tuples]\naxes = ["caste"]\npolarity = "negativ"\n',
            ["key 'stages.tuples.polarity' (line 7)", "'positive', 'negative' or 'both'"],
        ),
        (
            '[project]\nname = "x"\n[llm]\nbackend = "opneai"\n[stages.check]\ninput = "p.jsonl"\n',
            ["key 'llm.backend' (line 4)", "did you mean 'openai'?"],
        ),
        ('[project]\nname = "bad name"\n[stages.check]\n', ["key 'project.name' (line 2)", "letters, digits"]),
        ('[project\nname = "x"\n', ["not valid TOML", "line 1", "Fix: fix the syntax"]),
        ('[project]\nname = "x"\n', ["no stage is enabled", "[stages.NAME]"]),
        (
            BASE + "[stages.sentences]\nper_tuple = 2\n",
            [
                "key 'stages.sentences' (line 5)",
                "nothing gives this stage its tuples",
                "[stages.tuples], [stages.tuple_review]",
                'input = "FILE"',
            ],
        ),
        (
            BASE + '[stages.pairs]\ninput = "s.jsonl"\n[stages.adapt]\ninput = "c.csv"\n',
            ["key 'stages.adapt' (line 7)", "both [stages.pairs] and [stages.adapt]"],
        ),
        (
            '[project]\nname = "x"\n[llm]\nbase_url = "http://127.0.0.1:8000/v1"\n[stages.tuples]\naxes = ["caste"]\n',
            ["key 'llm'", "no model is named", 'backend = "dummy"'],
        ),
        (
            BASE + '[stages.tuples]\naxes = ["caste"]\nidentities = { religion = ["Hindu"] }\n',
            ["key 'stages.tuples.identities' (line 7)", "religion, which is not in axes (caste)"],
        ),
        (
            BASE + '[stages.tuples]\naxes = ["caste"]\nllm = { backend = "dumy" }\n',
            ["key 'stages.tuples.llm.backend' (line 7)", "did you mean 'dummy'?"],
        ),
        (
            BASE + '[stages.check]\ninput = "missing.jsonl"\n',
            ["key 'stages.check.input' (line 6)", "'missing.jsonl' does not exist", "relative to the project file"],
        ),
    ],
)
def test_project_file_errors_name_the_file_key_and_fix(tmp_path, capsys, body, expected):
    d = _project(tmp_path, body)
    for name in ("s.jsonl", "c.csv"):  # inputs that exist: each case has exactly one problem
        (d / name).write_text("", encoding="utf-8")
    code, out, err = run_cli(["run", "--project", str(d)], capsys)
    assert code == 2, out + err
    assert (
        err.startswith(f"error: --project {d / 'biaskit.toml'}")
        and "Fix:" in err
        and len(err.strip().splitlines()) == 1
    )
    for e in expected:
        assert e in err, err
    assert "Traceback" not in err and not (d / "work").exists()


@pytest.mark.parametrize(
    "line, key, env",
    [
        ('api_key = "abc"', "llm.api_key", "OPENAI_API_KEY"),
        ('model = "sk-proj-abcdefghijklmnopqrstuv"', "llm.model", "OPENAI_API_KEY"),
        ('base_url = "https://me:hunter2@example.org/v1"', "llm.base_url", "OPENAI_API_KEY"),
    ],
)
def test_secrets_are_refused_and_never_echoed(tmp_path, capsys, line, key, env):
    d = _project(tmp_path, f'[project]\nname = "x"\n[llm]\n{line}\n[stages.check]\ninput = "p.jsonl"\n')
    code, out, err = run_cli(["run", "--project", str(d)], capsys)
    assert code == 2 and f"key '{key}' (line 4) holds a secret" in err and env in err
    for secret in ('abc"', "sk-proj-abcdefghijklmnopqrstuv", "hunter2"):
        assert secret not in err
    d2 = _project(
        tmp_path, '[project]\nname = "x"\n[labelstudio]\ntoken = "0123"\n[stages.check]\ninput = "p.jsonl"\n', name="p2"
    )
    code, out, err = run_cli(["status", "--project", str(d2)], capsys)
    assert code == 2 and "key 'labelstudio.token' (line 4) holds a secret" in err and "LABEL_STUDIO_API_KEY" in err


def test_setting_names_that_contain_token_are_not_secrets(tmp_path):
    from biaskit.pipeline.project import find_secrets

    assert find_secrets({"llm": {"max_tokens": 48}, "stages": {"tuples": {"llm": {"max_tokens": 5}}}}) == []
    assert [k for k, _ in find_secrets({"a": {"auth_token": "x"}, "b": {"password": "y"}})] == [
        "a.auth_token",
        "b.password",
    ]


# ------------------------------------------------------------------------------------------ run / skip / re-run
def test_run_then_skip_then_rerun_what_changed(tmp_path, capsys):
    d = _project(tmp_path)
    code, out, err = run_cli(["run", "--project", str(d)], capsys)
    assert code == 0, out + err
    for s in ("tuples", "sentences", "pairs", "check", "release"):
        assert f"{s}: done:" in out
    st = _state(d)["stages"]
    assert {s["status"] for s in st.values()} == {"done"}
    tuples = _lines(d / "work" / "tuples" / "tuples.jsonl")
    jobs = {r["provenance"]["job"] for r in tuples}
    assert len(jobs) == 2 and {r["identity"] for r in tuples} == {"Dalit", "Brahmin"}  # 2 identities x 1 polarity
    sents = _lines(d / "work" / "sentences" / "sentences.jsonl")
    assert len({r["provenance"]["job"] for r in sents}) == len(tuples)  # one job per tuple
    rel = d / "release" / "offline-0.1.0"
    assert (rel / "SHA256SUMS").exists()
    assert st["release"]["produces"]["path"] == "release/offline-0.1.0"  # paths relative to the working folder
    sums = (rel / "SHA256SUMS").read_bytes()

    # nothing changed: nothing runs
    code, out, err = run_cli(["run", "--project", str(d)], capsys)
    assert code == 0 and out.count("unchanged, skipped") == 5 and "done:" not in out.replace("done: 0 stage", "")

    # a downstream option changes: only that stage runs again
    text = (d / "biaskit.toml").read_text(encoding="utf-8")
    (d / "biaskit.toml").write_text(text.replace('date = "2025-01-01"', 'date = "2025-02-02"'), encoding="utf-8")
    code, out, err = run_cli(["run", "--project", str(d)], capsys)
    assert code == 0 and out.count("unchanged, skipped") == 4 and "release: done:" in out
    assert json.loads((rel / "release.json").read_text(encoding="utf-8"))["created"] == "2025-02-02"

    # an upstream option changes: that stage and the ones whose input changed run again; the LLM
    # stage starts afresh (no row of the old options is left) and the cache answers what was asked before
    (d / "biaskit.toml").write_text(text.replace("per_tuple = 2", "per_tuple = 3"), encoding="utf-8")
    code, out, err = run_cli(["run", "--project", str(d)], capsys)
    assert code == 0, err
    assert "tuples: unchanged, skipped" in out
    for s in ("sentences", "pairs", "check", "release"):
        assert f"{s}: done:" in out
    sents3 = _lines(d / "work" / "sentences" / "sentences.jsonl")
    assert {r["provenance"]["job"] for r in sents3}.isdisjoint({r["provenance"]["job"] for r in sents})
    assert (rel / "SHA256SUMS").read_bytes() != sums


def test_an_edited_or_deleted_output_is_made_again(tmp_path, capsys):
    d = _project(tmp_path)
    assert run_cli(["run", "--project", str(d)], capsys)[0] == 0
    pairs = d / "work" / "check" / "pairs.jsonl"
    good = pairs.read_bytes()
    pairs.write_bytes(good[: len(good) // 2])
    code, out, err = run_cli(["run", "--project", str(d)], capsys)
    assert code == 0 and "check: done:" in out and "release: unchanged, skipped" in out
    assert pairs.read_bytes() == good
    import shutil

    shutil.rmtree(d / "release")
    code, out, err = run_cli(["run", "--project", str(d)], capsys)
    assert code == 0 and "release: done:" in out and out.count("unchanged, skipped") == 4


def test_an_interrupted_llm_stage_resumes_from_its_rows_and_the_cache(tmp_path, capsys, monkeypatch):
    """The state a kill leaves (the stage 'running', the rows of the finished jobs in its file): the
    next run resumes on those rows and asks only for the rest -- answered by the response cache here,
    so no request at all. (The real kill -9 against a real server: test_pipeline_e2e.py.)"""
    d = _project(tmp_path)
    monkeypatch.chdir(d)  # from the project's folder the hints are the short commands
    assert run_cli(["run", "--project", str(d)], capsys)[0] == 0
    sfile = d / "work" / "sentences" / "sentences.jsonl"
    rows = _lines(sfile)
    jobs = list(dict.fromkeys(r["provenance"]["job"] for r in rows))
    keep = [r for r in rows if r["provenance"]["job"] in jobs[:3]]
    sfile.write_text("".join(json.dumps(r, ensure_ascii=False) + "\n" for r in keep), encoding="utf-8")
    st = _state(d)
    st["stages"]["sentences"]["status"] = "running"
    (d / ".biaskit" / "state.json").write_text(json.dumps(st), encoding="utf-8")
    code, out, err = run_cli(["status", "--project", str(d), "--json"], capsys)
    got = {r["name"]: r["status"] for r in json.loads(out)["stages"]}
    assert got["sentences"] == "interrupted" and got["tuples"] == "done"
    assert "`biaskit run` resumes it" in json.loads(out)["next"]

    code, out, err = run_cli(["run", "--project", str(d)], capsys)
    assert code == 0, err
    assert "sentences: resuming" in out and "tuples: unchanged, skipped" in out
    s = _state(d)["stages"]["sentences"]["summary"]
    assert (s["resumed"], s["jobs"]) == (3, len(jobs))
    assert s["llm"]["requests"] == 0 and s["llm"]["cache_hits"] == len(jobs) - 3
    again = _lines(sfile)
    assert sorted(r["sentence_id"] for r in again) == sorted(r["sentence_id"] for r in rows)
    assert all(r in again for r in keep)  # the kept rows as they were
    assert all(r["provenance"]["cached"] for r in again if r not in keep)  # the others from the cache


def test_from_runs_a_stage_again(tmp_path, capsys):
    d = _project(tmp_path)
    assert run_cli(["run", "--project", str(d)], capsys)[0] == 0
    code, out, err = run_cli(["run", "--project", str(d), "--from", "check"], capsys)
    assert code == 0 and out.count("unchanged, skipped") == 3 and "check: done:" in out and "release: done:" in out
    code, out, err = run_cli(["run", "--project", str(d), "--from", "translate"], capsys)
    assert code == 2 and "--from translate: that stage is not enabled" in err


def test_a_stage_that_makes_nothing_fails_with_exit_1_and_is_shown(tmp_path, capsys):
    sents = tmp_path / "sents.jsonl"
    sents.write_text(
        json.dumps(
            {
                "sentence_id": "s-1",
                "sentence": "The weather is nice today.",
                "tuple_id": "t-1",
                "identity": "Dalit",
                "attribute": "x",
                "axis": "caste",
                "polarity": "negative",
                "lang": "en",
                "status": "raw",
            }
        )
        + "\n",
        encoding="utf-8",
    )
    d = _project(tmp_path, f'[project]\nname = "x"\n[stages.pairs]\ninput = "{sents}"\n[stages.check]\n')
    code, out, err = run_cli(["run", "--project", str(d)], capsys)
    assert code == 1
    assert err.startswith("error: stage 'pairs': no sentence could be made into a pair") and "Fix:" in err
    code, out, err = run_cli(["status", "--project", str(d), "--json"], capsys)
    rows = {r["name"]: r for r in json.loads(out)["stages"]}
    assert rows["pairs"]["status"] == "failed" and "no sentence could be made" in rows["pairs"]["detail"]
    assert rows["check"]["status"] == "pending" and "stage 'pairs' failed" in json.loads(out)["next"]


def test_a_human_stage_without_label_studio_says_how_to_give_one(tmp_path, capsys, monkeypatch):
    monkeypatch.delenv("LABEL_STUDIO_URL", raising=False)
    d = _project(tmp_path, f'[project]\nname = "x"\n[stages.pair_review]\ninput = "{DEMO}"\n')
    code, out, err = run_cli(["run", "--project", str(d)], capsys)
    assert code == 2 and "stage 'pair_review'" in err and "key 'labelstudio.url'" in err
    assert "LABEL_STUDIO_URL" in err and "LABEL_STUDIO_API_KEY" in err


def test_one_run_at_a_time(tmp_path, capsys):
    from biaskit.pipeline.state import lock

    d = _project(tmp_path)
    with lock(d):
        code, out, err = run_cli(["run", "--project", str(d)], capsys)
        assert code == 2 and "another `biaskit run` is working" in err
        code, out, err = run_cli(["status", "--project", str(d), "--json"], capsys)
        assert code == 0 and json.loads(out)["running"] is True


def test_workdir_keeps_outputs_apart_and_status_finds_the_project(tmp_path, capsys):
    d = _project(
        tmp_path, f'[project]\nname = "x"\n[stages.check]\ninput = "{DEMO}"\n[stages.release]\ndate = "2025-01-01"\n'
    )
    w = tmp_path / "out"
    code, out, err = run_cli(["run", "--project", str(d), "--workdir", str(w)], capsys)
    assert code == 0, err
    assert not (d / "work").exists() and (w / "release" / "x-0.1.0" / "SHA256SUMS").exists()
    code, out, err = run_cli(["status", "--workdir", str(w), "--json"], capsys)
    st = json.loads(out)
    assert code == 0 and [s["status"] for s in st["stages"]] == ["done", "done"]
    assert st["stages"][1]["outputs"]["release"] == "release/x-0.1.0"
    assert st["stages"][0]["detail"].startswith("32 pairs (64 language views) checked, 0 flagged")
    code, out, err = run_cli(["status", "--workdir", str(w)], capsys)  # the table wraps at the terminal's width
    assert code == 0 and "every stage is done" in out


def test_first_run_with_workdir_alone_finds_the_project_of_the_current_folder(tmp_path, capsys, monkeypatch):
    d = _project(tmp_path, f'[project]\nname = "x"\n[stages.check]\ninput = "{DEMO}"\n')
    monkeypatch.chdir(d)
    code, out, err = run_cli(["run", "--workdir", "out"], capsys)
    assert code == 0, err
    assert (d / "out" / "work" / "check" / "pairs.jsonl").is_file() and not (d / "work").exists()


def test_status_before_any_run(tmp_path, capsys, monkeypatch):
    d = _project(tmp_path)
    monkeypatch.chdir(d)  # from the project's folder the hint is the short command
    code, out, err = run_cli(["status", "--project", str(d), "--json"], capsys)
    st = json.loads(out)
    assert code == 0 and [r["status"] for r in st["stages"]] == ["pending"] * 5
    assert st["next"] == "`biaskit run` will run: tuples, sentences, pairs, check, release."


# ------------------------------------------------------------------------------------------ human progress
def test_review_progress_counts_distinct_annotators_per_task():
    import pandas as pd

    from biaskit.pipeline.stages import progress_line, review_progress

    df = pd.DataFrame(
        [  # t1: a, b, c (c twice, two questions); t2: a, b; t3: a; t4: none; x: not pushed
            ("t1", "a", "choice"),
            ("t1", "b", "choice"),
            ("t1", "c", "choice"),
            ("t1", "c", "corrected_more"),
            ("t2", "a", "choice"),
            ("t2", "b", "choice"),
            ("t3", "a", "choice"),
            ("x", "d", "choice"),
        ],
        columns=["task", "worker", "question"],
    )
    p = review_progress(df, {"t1", "t2", "t3", "t4"}, 3)
    assert p == {"tasks": 4, "complete": 1, "started": 3, "target": 3, "judgments": 7, "annotators": 3}
    assert progress_line("hi review", p) == "hi review: 1 of 4 tasks have 3 judgments"
    assert review_progress(df, {"t1", "t2", "t3", "t4"}, 2)["complete"] == 2
    assert review_progress(pd.DataFrame(), {"t1"}, 1) == {
        "tasks": 1,
        "complete": 0,
        "started": 0,
        "target": 1,
        "judgments": 0,
        "annotators": 0,
    }


def test_init_keeps_the_pseudonym_key_and_the_work_folder_out_of_git(tmp_path, capsys):
    """The release's pseudonym key (.biaskit/release.key) and the pulled judgments (work/, annotators by
    login) are never to be published: `biaskit init` lists both in the project's .gitignore, and adds
    only what an existing one lacks."""
    import subprocess

    fresh = tmp_path / "fresh"
    assert run_cli(["init", str(fresh)], capsys)[0] == 0
    assert (fresh / ".gitignore").read_text(encoding="utf-8").splitlines()[1:] == [".biaskit/", "work/"]
    own = tmp_path / "own"
    own.mkdir()
    (own / ".gitignore").write_text("*.tmp\n.biaskit/", encoding="utf-8")  # no newline at the end
    assert run_cli(["init", str(own)], capsys)[0] == 0
    lines = (own / ".gitignore").read_text(encoding="utf-8").splitlines()
    assert lines[:2] == ["*.tmp", ".biaskit/"] and lines[3:] == ["work/"]
    # git itself ignores them (a key and judgments written where a run writes them)
    subprocess.run(["git", "init", "-q", str(fresh)], check=True)
    for rel in (".biaskit/release.key", "work/pair_review/judgments.csv"):
        (fresh / rel).parent.mkdir(parents=True, exist_ok=True)
        (fresh / rel).write_text("x", encoding="utf-8")
    status = subprocess.run(
        ["git", "-C", str(fresh), "status", "--porcelain", "--untracked-files=all"], capture_output=True, text=True
    ).stdout
    assert ".biaskit" not in status and "work/" not in status and "biaskit.toml" in status
