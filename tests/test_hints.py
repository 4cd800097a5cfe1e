"""Every hint works where it is printed (issue 20): the resolver of tests/hints.py, and the messages of
the paths the fuzz suite does not reach -- no endpoint, a placeholder URL, an unreachable server,
under a command and under `biaskit run` (which takes its options from biaskit.toml), and the
pipeline's status and next steps printed from another folder. The fuzz suite
(tests/test_fuzz_cli.py) resolves the hints of every message of every fuzzed run."""
from __future__ import annotations

import os
import textwrap
import time
from pathlib import Path

import pytest

from conftest import run_cli
from hints import resolve, resolve_output

REPO = Path(__file__).resolve().parents[1]
DEMO = REPO / "data" / "demo" / "demo_pairs.jsonl"
CLOSED = "http://127.0.0.1:9/v1"     # nothing listens on the discard port


# ------------------------------------------------------------------------------------------ the resolver
@pytest.mark.parametrize("message, command, bad", [
    ("Fix: run `biaskit release verify rel`.", None, "rel does not exist"),
    ("Fix: run `biaskit release verifyy DIR`.", None, "no such command"),
    ("Fix: `biaskit evaluate pairs --data FILE --modle M`.", None, "has no option --modle"),
    ("Fix: pass --base-url URL.", "run", "--base-url: `biaskit run` has no such option"),
    ('Fix: set base_url = "URL" in [llm].', "run", None),
    ('Fix: set base_url = "URL" in [lm].', "run", "no such table"),
    ("Fix: set card_txt in [stages.release].", "run", "has no key card_txt"),
    ("Fix: pass --skip-invalid.", "evaluate pairs", None),
    ("Fix: pass --skip-invalid.", "curate translate", "no such option"),
    ("Fix: fetch it with `make test-data`.", None, None),
    ("Fix: fetch it with `make test-dat`.", None, "no such target"),
    ("Fix: `biaskit release build ... --card-text FILE`.", None, None),
    ("Fix: see `biaskit curate --help`.", None, None),
])
def test_the_resolver_tells_working_hints_from_broken_ones(message, command, bad, tmp_path):
    got = resolve(message, command, tmp_path)
    if bad is None:
        assert got == [], got
    else:
        assert len(got) == 1 and bad in got[0], got


def test_a_path_in_a_hint_must_exist_from_where_it_is_printed(tmp_path):
    (tmp_path / "rel").mkdir()
    msg = "Fix: `biaskit release verify rel`."
    assert resolve(msg, None, tmp_path) == []
    assert resolve(msg, None, tmp_path / "elsewhere") != []


# ------------------------------------------------------------------------------------------ LLM endpoints
def _project(d: Path, llm: str, stages: str = '[stages.tuples]\naxes = ["caste"]\nn = 2\n') -> Path:
    d.mkdir(parents=True, exist_ok=True)
    (d / "biaskit.toml").write_text(textwrap.dedent(f'[project]\nname = "hints"\n\n[llm]\n{llm}\n\n{stages}'),
                                    encoding="utf-8")
    return d


@pytest.fixture
def no_endpoint_env(monkeypatch):
    for k in ("OPENAI_API_KEY", "OPENAI_BASE_URL"):
        monkeypatch.delenv(k, raising=False)


@pytest.mark.parametrize("llm, says", [
    ('model = "m"', "no endpoint is given"),
    (f'model = "m"\nbase_url = "URL"', "cannot be an endpoint"),
    (f'model = "m"\nbase_url = "http://HOST:PORT/v1"', "placeholder"),
])
def test_run_without_a_usable_endpoint_names_the_project_keys_before_any_stage(tmp_path, capsys, no_endpoint_env,
                                                                               llm, says):
    d = _project(tmp_path / "proj", llm)
    code, out, err = run_cli(["run", "--project", str(d)], capsys)
    assert code == 2 and says in err and "key 'llm.base_url'" in err, err
    assert 'base_url = "URL" in [llm]' in err and 'backend = "dummy"' in err or "in [llm]" in err
    assert resolve_output(out + err, "run") == []
    assert not (d / "work").exists()


def test_an_unreachable_server_under_run_names_the_key_and_leaves_no_empty_output(tmp_path, capsys, no_endpoint_env):
    d = _project(tmp_path / "proj", f'model = "m"\nbase_url = "{CLOSED}"\nmax_retries = 0')
    code, out, err = run_cli(["run", "--project", str(d), "-q"], capsys)
    assert code == 2 and "cannot connect" in err and "base_url in [llm] of " in err, err
    assert resolve_output(out + err, "run") == []
    assert not (d / "work" / "tuples" / "tuples.jsonl").exists()


def test_a_command_without_an_endpoint_names_its_flags_and_leaves_nothing(tmp_path, capsys, no_endpoint_env):
    out_file = tmp_path / "out" / "t.jsonl"
    code, out, err = run_cli(["curate", "tuples", "--axis", "caste", "--n", "2", "--model", "m",
                              "--out", str(out_file)], capsys)
    assert code == 2 and "--base-url URL" in err and "--llm dummy" in err, err
    assert resolve_output(out + err, "curate tuples") == []
    assert not out_file.parent.exists() or not any(out_file.parent.iterdir())


def test_a_placeholder_url_is_refused_at_once(tmp_path, capsys, no_endpoint_env):
    out_file = tmp_path / "t.jsonl"
    t0 = time.monotonic()
    code, out, err = run_cli(["curate", "tuples", "--axis", "caste", "--n", "2", "--model", "m", "--base-url", "URL",
                              "--out", str(out_file)], capsys)
    assert code == 2 and "base URL 'URL' cannot be an endpoint" in err, err
    assert time.monotonic() - t0 < 10 and not out_file.exists()
    assert resolve_output(out + err, "curate tuples") == []


def test_curate_cats_without_an_endpoint_leaves_no_empty_output(tmp_path, capsys, no_endpoint_env):
    out_file = tmp_path / "cats" / "cats.jsonl"
    out_file.parent.mkdir()
    code, out, err = run_cli(["curate", "cats", "--model", "m", "--domains", "gender", "--targets", "mother",
                              "--out", str(out_file)], capsys)
    assert code == 2 and "no endpoint" in err, err
    assert list(out_file.parent.iterdir()) == []
    code, out, err = run_cli(["curate", "cats", "--model", "m", "--base-url", CLOSED, "--max-retries", "0",
                              "--domains", "gender", "--targets", "mother", "--out", str(out_file)], capsys)
    assert code == 2 and "cannot connect" in err, err
    names = sorted(p.name for p in out_file.parent.iterdir())
    assert "cats.jsonl" not in names and "cats.retention.json" not in names, names   # only the failed run's logs
    assert resolve_output(out + err, "curate cats") == []


def test_an_unreachable_translation_engine_leaves_no_empty_candidates_file(tmp_path, capsys, no_endpoint_env):
    out_file = tmp_path / "out" / "candidates.jsonl"
    out_file.parent.mkdir()
    code, out, err = run_cli(["curate", "translate", "--pairs", str(DEMO), "--target", "hi", "--engines", "llm:m",
                              "--base-url", CLOSED, "--max-retries", "0", "--out", str(out_file)], capsys)
    assert code == 2 and "cannot connect" in err, err
    assert not out_file.exists()    # (the engine's run log and errors file record the failed run)
    assert resolve_output(out + err, "curate translate") == []


# ------------------------------------------------------------------------------------------ the pipeline
def test_run_and_status_hints_work_from_the_folder_they_are_printed_in(tmp_path, capsys, monkeypatch):
    """Run from one folder with the project elsewhere and --workdir: every command printed
    (status, run, release verify) works from that folder."""
    proj = tmp_path / "projects" / "demo"
    proj.mkdir(parents=True)
    (proj / "pairs.jsonl").write_bytes(DEMO.read_bytes())
    (proj / "biaskit.toml").write_text('[project]\nname = "demo"\n\n[stages.check]\ninput = "pairs.jsonl"\n\n'
                                       '[stages.release]\ndate = "2025-01-01"\n', encoding="utf-8")
    here = tmp_path / "here"
    here.mkdir()
    monkeypatch.chdir(here)
    code, out, err = run_cli(["run", "--project", str(proj), "--workdir", "out", "--until", "check"], capsys)
    assert code == 0 and f"`biaskit status --project {proj} --workdir out`" in out, out + err
    assert resolve_output(out + err, "run", here) == []
    code, out, err = run_cli(["status", "--workdir", "out"], capsys)
    assert code == 0 and f"`biaskit run --project {proj} --workdir out` will run: release" in out, out
    assert resolve_output(out + err, "status", here) == []
    code, out, err = run_cli(["run", "--project", str(proj), "--workdir", "out"], capsys)
    assert code == 0 and "`biaskit release verify out/release/demo-0.1.0` lists them" in out + err, out + err
    assert resolve_output(out + err, "run", here) == []
    for h in ("`biaskit release verify out/release/demo-0.1.0`",):
        assert resolve(h, None, here) == []
    assert resolve("`biaskit release verify release/demo-0.1.0`", None, here) != []   # the old, workdir-relative hint
    code, out, err = run_cli(["release", "verify", "out/release/demo-0.1.0"], capsys)
    assert code == 0 and "complete, with" in out + err
    assert resolve_output(out + err, "release verify", here) == []


def test_the_makefile_hints_work_from_the_repository_root():
    """`make demo-release` prints where the release is and how to see the status; `make test-data`
    names the mirror variable when it fails."""
    text = (REPO / "Makefile").read_text(encoding="utf-8")
    assert "BIASKIT_DATA_MIRROR" in text.split("test-data:", 1)[1].split("\n\n", 1)[0]
    assert "--workdir demo-release-out" in text.split("demo-release:", 1)[1].split("\n\n", 1)[0]


def test_every_make_target_a_hint_names_exists():
    from hints import make_targets

    assert {"demo", "demo-release", "test", "test-data", "test-offline", "bench"} <= make_targets()
    assert os.path.exists(REPO / "Makefile")


# ------------------------------------------------------------------------------------------ --scorer
@pytest.mark.parametrize("fixture, family", [("tiny_bert", "mlm"), ("tiny_gpt2", "clm"), ("tiny_mt5", "seq2seq")])
def test_the_scorer_comes_from_the_model_architecture(fixture, family, request, tmp_path, capsys):
    """Without --scorer, `evaluate pairs` scores a causal model as a causal model (no 13 s of loading
    it as a masked LM before being told to switch): the family is read from config.json."""
    import json

    from biaskit.evaluation.models import model_family

    model = request.getfixturevalue(fixture)
    assert model_family(model) == family
    code, out, err = run_cli(["evaluate", "pairs", "--data", str(DEMO), "--lang", "en", "--limit", "4", "--runs", "1",
                              "-m", str(model), "--out", str(tmp_path / "res"), "-q"], capsys)
    assert code == 0, err
    assert json.loads((tmp_path / "res" / "summary.json").read_text(encoding="utf-8"))["scorer"] == family


def test_models_of_different_families_need_a_scorer(tiny_bert, tiny_gpt2, tmp_path, capsys):
    code, out, err = run_cli(["evaluate", "pairs", "--data", str(DEMO), "-m", str(tiny_bert), "-m", str(tiny_gpt2),
                              "--out", str(tmp_path / "res")], capsys)
    assert code == 2 and "call for different scorers" in err and "--scorer" in err, err
    assert resolve_output(err, "evaluate pairs") == []


# ------------------------------------------------------------------------------------------ --help examples
def test_the_help_of_every_main_command_starts_with_two_working_examples(capsys):
    """Each main command's --help shows two examples right after its summary, before the options, and
    every example works from the repository's root (files of the repository, or ALL-CAPS placeholders)."""
    from biaskit.cli_examples import EXAMPLES
    from hints import commands

    assert set(EXAMPLES) <= set(commands()), set(EXAMPLES) - set(commands())
    for name, examples in EXAMPLES.items():
        assert len(examples) == 2
        for e in examples:
            assert e.startswith(f"biaskit {name} "), e
            assert resolve(f"`{e}`", None, REPO) == [], (name, e, resolve(f"`{e}`", None, REPO))
        code, out, err = run_cli([*name.split(), "--help"], capsys)
        assert code == 0, err
        head = out.split("Options", 1)[0]
        assert "Examples:" in head and all(" ".join(e.split()) in " ".join(head.split()) for e in examples), \
            (name, head)
