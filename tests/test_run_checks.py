"""`biaskit run` checks every enabled stage's settings before the first stage runs (issue 28): prompt
names, languages, models, the names the project's name becomes (a release folder, Label Studio
titles), each problem on a line of its own with its biaskit.toml key and line; `biaskit init` refuses a
name its template's stages would refuse; and a hint never suggests a setting that is already set."""

from __future__ import annotations

import json
import textwrap

import pytest
from conftest import run_cli
from hints import resolve, resolve_output
from llm_standin import chat, standin_server  # noqa: F401 (a fixture)

# every line of this file is counted below: keep the line numbers in EXPECTED in step
BROKEN = """\
[project]
name = "a-name-long-enough-for-a-release-but-not-for-titles"

[llm]
backend = "dummy"

[stages.tuples]
axes = ["caste"]
lang = "en"
prompt = "attributes@9"

[stages.tuple_review]

[stages.sentences]
prompt = "sentence"

[stages.pairs]
llm_fallback = true
prompt = "pair_rewrit"

[stages.cats]
domains = "religion"
inter_prompt = "cat_intersentence@7"

[stages.release]
hub_ready = true
license = "cc-by-4.0"

[stages.seat_tests]
langs = ["en", "xx"]
attributes = ["Pleasant/Unpleasent"]

[stages.evaluate]
models = ["gemma3-270m"]
seat_models = ["no-such-encoder"]
"""

# key -> (its line in BROKEN, counted by hand; what the message says)
EXPECTED = {
    "project.name": (2, "the name is 51 characters, too long for the Label Studio project title 'NAME tuple review'"),
    "stages.tuples.prompt": (10, "unknown prompt template 'attributes@9'"),
    "stages.sentences.prompt": (15, "unknown prompt template 'sentence'"),
    "stages.pairs.prompt": (19, "unknown prompt template 'pair_rewrit'"),
    "stages.cats.inter_prompt": (23, "unknown prompt template 'cat_intersentence@7'"),
    "stages.seat_tests.langs": (30, "no bleached templates for language(s) xx"),
    "stages.seat_tests.attributes": (31, "unknown attribute pair 'Pleasant/Unpleasent'"),
    "stages.evaluate.seat_models": (35, "model 'no-such-encoder' not found"),
}


def test_every_stage_is_checked_before_the_first_runs(tmp_path, capsys):
    d = tmp_path / "proj"
    d.mkdir()
    f = d / "biaskit.toml"
    f.write_text(BROKEN, encoding="utf-8")
    code, out, err = run_cli(["run", "--project", str(d)], capsys)
    assert code == 2, out + err
    lines = err.strip().splitlines()
    for key, (line, says) in EXPECTED.items():
        hit = [x for x in lines if f"key '{key}' (line {line}): {says}" in x]
        assert len(hit) == 1, (key, err)
        assert hit[0].startswith(f"error: --project {f}: ") and " Fix: " in hit[0]
    assert len(lines) == len(EXPECTED) and "<input>" not in err, err
    # the name's fix: 50 (Label Studio's longest title) - len(" tuple review") = 37, or the stage's own title
    name_line = next(x for x in lines if "key 'project.name'" in x)
    assert 'at most 37 characters, or set project = "TITLE" in [stages.tuple_review]' in name_line
    assert not (d / "work").exists() and not (d / ".biaskit").exists()  # nothing ran
    assert resolve_output(err, "run", argv=["run", "--project", str(d)]) == []


def test_the_fixed_project_passes_the_checks(tmp_path):
    from biaskit.pipeline.project import load_project

    fixed = (
        BROKEN.replace("a-name-long-enough-for-a-release-but-not-for-titles", "short-name")
        .replace("attributes@9", "attributes@2")
        .replace('"sentence"', '"sentences"')
        .replace("pair_rewrit", "pair_rewrite")
        .replace("cat_intersentence@7", "cat_intersentence@1")
        .replace('["en", "xx"]', '["en"]')
        .replace("Unpleasent", "Unpleasant")
        .replace('"no-such-encoder"', '"all-minilm-l6-v2"')
    )
    (tmp_path / "biaskit.toml").write_text(fixed, encoding="utf-8")
    p = load_project(tmp_path)
    assert p.enabled()[:2] == ["tuples", "tuple_review"]


@pytest.mark.parametrize(
    "key, value, says",
    [
        # checked by the option itself (annotate push --guidelines, --project): the flag and the key alike
        ("guidelines", '"en,xx"', "no guidelines in language 'xx'"),
        ("project", '"' + "t" * 51 + '"', "String should have at most 50 characters"),
    ],
)
def test_a_review_key_is_checked_as_its_flag_is(tmp_path, capsys, key, value, says):
    (tmp_path / "t.jsonl").write_text("", encoding="utf-8")
    (tmp_path / "biaskit.toml").write_text(
        f'[project]\nname = "x"\n\n[stages.tuple_review]\ninput = "t.jsonl"\n{key} = {value}\n', encoding="utf-8"
    )
    code, out, err = run_cli(["run", "--project", str(tmp_path)], capsys)
    assert code == 2 and f"key 'stages.tuple_review.{key}' (line 6): {says}" in err, err
    flag = ["--guidelines", "en,xx"] if key == "guidelines" else ["--project", "t" * 51, "--guidelines", "en"]
    args = ["annotate", "push", "--kind", "tuple", "--data", str(tmp_path / "t.jsonl"), "--project", "abc", *flag]
    code, out, err = run_cli(args, capsys)
    assert code == 2 and f"--{key} " in err and says in err, err


def test_a_name_too_long_for_the_release_folder_is_refused_before_any_stage(tmp_path, capsys):
    """300 characters failed at the release stage with "File name too long" (after the others ran)."""
    d = tmp_path / "proj"
    d.mkdir()
    (d / "pairs.jsonl").write_text("", encoding="utf-8")
    name = "n" * 300
    (d / "biaskit.toml").write_text(
        f'[project]\nname = "{name}"\n\n[stages.check]\ninput = "pairs.jsonl"\n\n[stages.release]\n', encoding="utf-8"
    )
    code, out, err = run_cli(["run", "--project", str(d)], capsys)
    assert code == 2 and err.count("error:") == 1, err
    assert "key 'project.name' (line 2): the name is 300 characters, too long for a release name" in err
    assert 'at most 64 characters, or set name = "NAME" in [stages.release]' in err
    assert not (d / "work").exists()
    # the release's own name is checked as --name is, with its key
    (d / "biaskit.toml").write_text(
        f'[project]\nname = "{name}"\n\n[stages.check]\ninput = "pairs.jsonl"\n\n[stages.release]\nname = "{name}"\n',
        encoding="utf-8",
    )
    code, out, err = run_cli(["run", "--project", str(d)], capsys)
    assert code == 2 and "key 'stages.release.name' (line 8)" in err and "at most 64" in err, err


@pytest.mark.parametrize(
    "args, limit, why",
    [
        # 50 (Label Studio's longest title) - len(" sentence review"), the longest title of the template
        ([], 34, "'NAME sentence review'"),
        # adapt: pair review, then release (64)
        (["--template", "adapt", "--no-hindi"], 38, "'NAME pair review'"),
    ],
)
def test_init_refuses_a_name_its_stages_would_refuse(tmp_path, capsys, args, limit, why):
    from biaskit.pipeline.project import load_project

    d = tmp_path / "p"
    for n in (300, limit + 1):
        code, out, err = run_cli(["init", str(d), "--name", "x" * n, *args], capsys)
        assert code == 2 and err.count("error:") == 1, err
        assert "--name 'xxxx" in err and f"is {n} characters, too long for the Label Studio project title {why}" in err
        assert f"Fix: pass --name with at most {limit} characters" in err
        assert not d.exists()
    code, out, err = run_cli(["init", str(d), "--name", "x" * limit, *args], capsys)
    assert code == 0, err
    if not args:  # the file it wrote passes the run's name check (its other keys name files not made yet)
        p = load_project(d, check_inputs=False)
        from biaskit.pipeline.stages import STAGES

        assert all(not [e for e in STAGES[s].check(p) if "project.name" in str(e)] for s in p.enabled())


# ------------------------------------------------------------------------------------------ hints in force
SENTENCES = [  # sentences that name no identity term: the swap cannot pair them
    {"sentence": "The weather was fine all week.", "identity": "Dalit", "axis": "caste", "tuple_id": "t-1"},
    {"sentence": "Nobody came to the meeting on time.", "identity": "Brahmin", "axis": "caste", "tuple_id": "t-2"},
]


def _pairs_project(d, url: str, fallback: bool):
    d.mkdir(exist_ok=True)
    (d / "sentences.jsonl").write_text("".join(json.dumps(r) + "\n" for r in SENTENCES), encoding="utf-8")
    (d / "biaskit.toml").write_text(
        textwrap.dedent(
            f"""\
            [project]
            name = "hints"

            [llm]
            model = "m"
            base_url = "{url}"
            max_retries = 0

            [stages.pairs]
            input = "sentences.jsonl"
            llm_fallback = {"true" if fallback else "false"}
            """
        ),
        encoding="utf-8",
    )


def test_no_pair_made_never_suggests_the_fallback_that_is_on(tmp_path, capsys, monkeypatch, standin_server):  # noqa: F811 (the fixture imported from llm_standin)
    """The message of test_pipeline_e2e's failure: 'set llm_fallback = true' when it was set."""
    monkeypatch.setenv("BIASKIT_NO_PROGRESS", "1")
    server = standin_server(lambda body, n: chat("I cannot rewrite that."))  # a model that rewrites nothing
    on, off = tmp_path / "on", tmp_path / "off"
    _pairs_project(on, server.base_url, True)
    code, out, err = run_cli(["run", "--project", str(on), "-q"], capsys)
    assert code == 1 and "no sentence could be made into a pair" in err, err
    assert server.count >= 2  # the rewrite was asked for each sentence
    assert "llm_fallback" not in err.split("Fix:", 1)[1] and "model in [llm] of" in err
    assert resolve_output(err, "run") == []
    # off: the same sentences, and the fix offers the fallback
    _pairs_project(off, server.base_url, False)
    code, out, err = run_cli(["run", "--project", str(off), "-q"], capsys)
    assert code == 1 and "set llm_fallback = true in [stages.pairs] of " in err, err
    assert resolve_output(err, "run") == []


def test_the_resolver_refuses_a_fix_that_suggests_what_is_set(tmp_path):
    (tmp_path / "biaskit.toml").write_text(
        '[project]\nname = "x"\n\n[stages.pairs]\nllm_fallback = true\n\n[stages.check]\n', encoding="utf-8"
    )
    set_already = "Fix: check the sentences, or set llm_fallback = true in [stages.pairs] of biaskit.toml."
    assert "sets it already" in resolve(set_already, "run", tmp_path)[0]
    # a default in force counts too (drop_flagged is false unless set)
    default = "Fix: set drop_flagged = false in [stages.check] of biaskit.toml."
    assert "sets it already" in resolve(default, "run", tmp_path)[0]
    assert resolve(default.replace("false", "true"), "run", tmp_path) == []
    # a message may say what is set; only its fix must not suggest it
    assert (
        resolve(
            "llm_fallback = true in [stages.pairs] of biaskit.toml made none. Fix: see the rejects.", "run", tmp_path
        )
        == []
    )
    # a flag: the command line has it already
    argv = ["curate", "translate", "--target", "hi"]
    assert "has it already" in resolve("Fix: pass --target hi.", "curate translate", tmp_path, argv)[0]
    assert resolve("Fix: pass --target bn.", "curate translate", tmp_path, argv) == []


def test_hints_know_the_values_in_force():
    from biaskit.curation.pair_options import BuildPairsOptions

    from biaskit.options import Flags, Key, Keys, in_force, speaking, tell

    with speaking(Flags(BuildPairsOptions).knowing({"llm_fallback": True})):
        assert in_force("llm_fallback", True) and not in_force("llm_fallback", False)
        assert tell("llm_fallback", True) == "pass --llm-fallback"  # a switch takes no value
    with speaking(Keys("biaskit.toml", {"llm_fallback": Key("stages.pairs", "llm_fallback")}, values={})):
        assert not in_force("llm_fallback", True)  # not known: never taken as set
    assert not in_force("llm_fallback", True)  # outside any command or stage


def test_an_error_a_stage_finds_in_its_data_names_no_input_placeholder(tmp_path, capsys):
    """What only the data can tell (no record in the release's languages) stops the stage; the line names
    the stage and the keys, not InputError's ``<input>`` placeholder."""
    from conftest import REPO

    (tmp_path / "biaskit.toml").write_text(
        f'[project]\nname = "x"\n\n[stages.release]\ninput = "{REPO / "data/demo/demo_pairs.jsonl"}"\nlangs = ["xx"]\n',
        encoding="utf-8",
    )
    code, out, err = run_cli(["run", "--project", str(tmp_path), "-q"], capsys)
    assert code == 2 and "error: stage 'release': no releasable records in language(s) xx" in err, err
    assert "<input>" not in err and "check langs in [stages.release] of " in err
