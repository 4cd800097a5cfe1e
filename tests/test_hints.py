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
CLOSED = "http://127.0.0.1:9/v1"  # nothing listens on the discard port


# ------------------------------------------------------------------------------------------ the resolver
@pytest.mark.parametrize(
    "message, command, bad",
    [
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
    ],
)
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
    (d / "biaskit.toml").write_text(
        textwrap.dedent(f'[project]\nname = "hints"\n\n[llm]\n{llm}\n\n{stages}'), encoding="utf-8"
    )
    return d


@pytest.fixture
def no_endpoint_env(monkeypatch):
    for k in ("OPENAI_API_KEY", "OPENAI_BASE_URL"):
        monkeypatch.delenv(k, raising=False)


@pytest.mark.parametrize(
    "llm, says",
    [
        ('model = "m"', "no endpoint is given"),
        ('model = "m"\nbase_url = "URL"', "cannot be an endpoint"),
        ('model = "m"\nbase_url = "http://HOST:PORT/v1"', "placeholder"),
    ],
)
def test_run_without_a_usable_endpoint_names_the_project_keys_before_any_stage(
    tmp_path, capsys, no_endpoint_env, llm, says
):
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
    code, out, err = run_cli(
        ["curate", "tuples", "--axis", "caste", "--n", "2", "--model", "m", "--out", str(out_file)], capsys
    )
    assert code == 2 and "--base-url URL" in err and "--llm dummy" in err, err
    assert resolve_output(out + err, "curate tuples") == []
    assert not out_file.parent.exists() or not any(out_file.parent.iterdir())


def test_a_placeholder_url_is_refused_at_once(tmp_path, capsys, no_endpoint_env):
    out_file = tmp_path / "t.jsonl"
    t0 = time.monotonic()
    code, out, err = run_cli(
        [
            "curate",
            "tuples",
            "--axis",
            "caste",
            "--n",
            "2",
            "--model",
            "m",
            "--base-url",
            "URL",
            "--out",
            str(out_file),
        ],
        capsys,
    )
    assert code == 2 and "base URL 'URL' cannot be an endpoint" in err, err
    assert time.monotonic() - t0 < 10 and not out_file.exists()
    assert resolve_output(out + err, "curate tuples") == []


def test_curate_cats_without_an_endpoint_leaves_no_empty_output(tmp_path, capsys, no_endpoint_env):
    out_file = tmp_path / "cats" / "cats.jsonl"
    out_file.parent.mkdir()
    code, out, err = run_cli(
        ["curate", "cats", "--model", "m", "--domains", "gender", "--targets", "mother", "--out", str(out_file)], capsys
    )
    assert code == 2 and "no endpoint" in err, err
    assert list(out_file.parent.iterdir()) == []
    code, out, err = run_cli(
        [
            "curate",
            "cats",
            "--model",
            "m",
            "--base-url",
            CLOSED,
            "--max-retries",
            "0",
            "--domains",
            "gender",
            "--targets",
            "mother",
            "--out",
            str(out_file),
        ],
        capsys,
    )
    assert code == 2 and "cannot connect" in err, err
    names = sorted(p.name for p in out_file.parent.iterdir())
    assert "cats.jsonl" not in names and "cats.retention.json" not in names, names  # only the failed run's logs
    assert resolve_output(out + err, "curate cats") == []


def test_an_unreachable_translation_engine_leaves_no_empty_candidates_file(tmp_path, capsys, no_endpoint_env):
    out_file = tmp_path / "out" / "candidates.jsonl"
    out_file.parent.mkdir()
    code, out, err = run_cli(
        [
            "curate",
            "translate",
            "--pairs",
            str(DEMO),
            "--target",
            "hi",
            "--engines",
            "llm:m",
            "--base-url",
            CLOSED,
            "--max-retries",
            "0",
            "--out",
            str(out_file),
        ],
        capsys,
    )
    assert code == 2 and "cannot connect" in err, err
    assert not out_file.exists()  # (the engine's run log and errors file record the failed run)
    assert resolve_output(out + err, "curate translate") == []


# ------------------------------------------------------------------------------------------ the pipeline
def test_run_and_status_hints_work_from_the_folder_they_are_printed_in(tmp_path, capsys, monkeypatch):
    """Run from one folder with the project elsewhere and --workdir: every command printed
    (status, run, release verify) works from that folder."""
    proj = tmp_path / "projects" / "demo"
    proj.mkdir(parents=True)
    (proj / "pairs.jsonl").write_bytes(DEMO.read_bytes())
    (proj / "biaskit.toml").write_text(
        '[project]\nname = "demo"\n\n[stages.check]\ninput = "pairs.jsonl"\n\n[stages.release]\ndate = "2025-01-01"\n',
        encoding="utf-8",
    )
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
    assert resolve("`biaskit release verify release/demo-0.1.0`", None, here) != []  # the old, workdir-relative hint
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
    code, out, err = run_cli(
        [
            "evaluate",
            "pairs",
            "--data",
            str(DEMO),
            "--lang",
            "en",
            "--limit",
            "4",
            "--runs",
            "1",
            "-m",
            str(model),
            "--out",
            str(tmp_path / "res"),
            "-q",
        ],
        capsys,
    )
    assert code == 0, err
    assert json.loads((tmp_path / "res" / "summary.json").read_text(encoding="utf-8"))["scorer"] == family


def test_models_of_different_families_need_a_scorer(tiny_bert, tiny_gpt2, tmp_path, capsys):
    code, out, err = run_cli(
        [
            "evaluate",
            "pairs",
            "--data",
            str(DEMO),
            "-m",
            str(tiny_bert),
            "-m",
            str(tiny_gpt2),
            "--out",
            str(tmp_path / "res"),
        ],
        capsys,
    )
    assert code == 2 and "call for different scorers" in err and "--scorer" in err, err
    assert resolve_output(err, "evaluate pairs") == []


# ------------------------------------------------------------------------------------------ --help examples
def test_the_help_of_every_main_command_starts_with_two_working_examples(capsys):
    """Each main command's --help shows two examples right after its summary, before the options, and
    every example works from the repository's root (files of the repository, or ALL-CAPS placeholders)."""
    from hints import commands

    from biaskit.cli_examples import EXAMPLES

    assert set(EXAMPLES) <= set(commands()), set(EXAMPLES) - set(commands())
    for name, examples in EXAMPLES.items():
        assert len(examples) == 2
        for e in examples:
            assert e.startswith(f"biaskit {name} "), e
            assert resolve(f"`{e}`", None, REPO) == [], (name, e, resolve(f"`{e}`", None, REPO))
        code, out, err = run_cli([*name.split(), "--help"], capsys)
        assert code == 0, err
        head = out.split("Options", 1)[0]
        assert "Examples:" in head and all(" ".join(e.split()) in " ".join(head.split()) for e in examples), (
            name,
            head,
        )


# ------------------------------------------------------------------------------------------ one mechanism (issue 21)
# The evaluate errors that tell the user to set an option, each raised once under its command and once
# under `biaskit run` (the evaluate stage, options from biaskit.toml): the hint names the flag there
# and the biaskit.toml key here, both from the options model (biaskit.options.say / tell / unset), and
# the resolver checks that the flag is one of the command's and the key one of [stages.evaluate]'s.
# (kind, flags, biaskit.toml lines, the error, what the command's hint says, what run's hint says;
# models: "gpt2" / "bert+gpt2"). Not here: a protocol that does not cover a command (`--protocol stereoset`
# for pairs) is refused under the command only; the stage applies its protocol to the kinds it covers.
EVALUATE_HINTS = [
    (
        "pairs",
        ["--scorer", "clm", "--lang", "xx"],
        'scorer = "clm"\nlang = "xx"',
        "language 'xx' (languages: en, hi)",
        "check --split and --lang",
        "split in [stages.evaluate] of ",
    ),
    (
        "pairs",
        ["--scorer", "clm", "--normalise", "unmodified"],
        'scorer = "clm"\nnormalise = "unmodified"',
        "has no normalisation 'unmodified'",
        "use --normalise none",
        'use normalise = "none" in [stages.evaluate] of ',
    ),
    (
        "pairs",
        ["--scorer", "mlm", "--method", "pmu", "--normalise", "unmodified"],
        'scorer = "mlm"\nmethod = "pmu"\nnormalise = "unmodified"',
        "divides P(U|M)",
        "drop --normalise or use --method pll",
        "remove normalise from [stages.evaluate] of ",
    ),
    (
        "pairs",
        ["--scorer", "clm", "--base-url", CLOSED],
        f'scorer = "clm"\nbase_url = "{CLOSED}"',
        "is for a served model",
        "pass --scorer clm-api (or drop --base-url)",
        'set scorer = "clm-api" in [stages.evaluate] of ',
    ),
    (
        "pairs",
        ["--scorer", "clm-api"],
        'scorer = "clm-api"',
        "needs the server",
        "pass --base-url http://HOST:PORT/v1",
        'set base_url = "http://HOST:PORT/v1" in [stages.evaluate] of ',
    ),
    (
        "pairs",
        ["--scorer", "clm", "--device", "cpu", "--dtype", "float16"],
        'scorer = "clm"\ndevice = "cpu"\ndtype = "float16"',
        "float16 is not supported on CPU",
        "or --device cuda",
        'device = "cuda" in [stages.evaluate]',
    ),
    (
        "pairs",
        ["--scorer", "clm", "--device", "cuda:0"],
        'scorer = "clm"\ndevice = "cuda:0"',
        "CUDA is not available",
        "use --device cpu",
        'use device = "cpu" in [stages.evaluate] of ',
    ),
    (
        "pairs",
        [],
        "",
        "call for different scorers",
        "or pass --scorer for all",
        "or set scorer in [stages.evaluate] of ",
    ),
    (
        "pairs",
        ["--runs", "0"],
        "runs = 0",
        "greater than or equal to 1",
        "--runs 0: Input should be",
        "key 'stages.evaluate.runs'",
    ),
    (
        "cats",
        ["--scorer", "clm"],
        'scorer = "clm"\nkinds = ["cats"]',
        "causal LM without one",
        "--split intrasentence, or --protocol none",
        'cat_split = "intrasentence" in [stages.evaluate] of ',
    ),
    (
        "cats",
        ["--scorer", "clm", "--split", "both", "--limit", "0"],
        'scorer = "clm"\nkinds = ["cats"]\nlimit = 0',
        "greater than or equal to 1",
        "--limit 0: Input should be",
        "key 'stages.evaluate.limit'",
    ),
    (
        "seat",
        ["--n-samples", "0"],
        'kinds = ["seat"]\nn_samples = 0',
        "greater than or equal to 1",
        "--n-samples 0: Input should be",
        "key 'stages.evaluate.n_samples'",
    ),
]


@pytest.fixture(scope="module")
def small_release(tmp_path_factory):
    """A release with the demo pairs and a few StereoSet CATs (both splits)."""
    from biaskit.evaluation.stereoset import read_cats
    from conftest import _stereoset_flat

    from biaskit.io import write_jsonl
    from biaskit.release import BuildOptions, build_release

    tmp = tmp_path_factory.mktemp("hints-release")
    src = _stereoset_flat()
    cats = write_jsonl(
        tmp / "cats.jsonl", read_cats(src, split="intrasentence")[:8] + read_cats(src, split="intersentence")[:8]
    )
    out = tmp / "rel"
    build_release(
        [DEMO, cats], out, BuildOptions(name="hints", version="0.1.0", created="2025-01-01", plots=False, keyness=False)
    )
    return out


@pytest.mark.parametrize(
    "kind, flags, toml, says, flag_hint, key_hint", EVALUATE_HINTS, ids=[f"{c[0]}-{c[3][:28]}" for c in EVALUATE_HINTS]
)
def test_an_evaluate_error_names_the_flag_under_its_command_and_the_key_under_run(
    kind, flags, toml, says, flag_hint, key_hint, small_release, tiny_gpt2, tiny_bert, tmp_path, capsys
):
    import torch

    if "cuda" in says.lower() + " ".join(flags) and "CUDA is not" in says and torch.cuda.is_available():
        pytest.skip("this machine has CUDA: the error needs a machine without it")
    models = [tiny_bert, tiny_gpt2] if "different scorers" in says else [tiny_gpt2]
    data = ["--test", "indibias-t3-r01"] if kind == "seat" else ["--data", str(small_release)]
    argv = [
        "evaluate",
        kind,
        *data,
        *[a for m in models for a in ("-m", str(m))],
        *flags,
        "--out",
        str(tmp_path / "out"),
        *(["-q"] if kind != "seat" else []),
    ]
    code, out, err = run_cli(argv, capsys)
    assert code == 2 and says in err and flag_hint in err, err
    assert len(err.strip().splitlines()) == 1, err
    assert resolve_output(out + err, f"evaluate {kind}", tmp_path) == [], resolve_output(out + err, f"evaluate {kind}")

    d = tmp_path / "proj"
    d.mkdir()
    (d / "biaskit.toml").write_text(
        f'[project]\nname = "hints"\n\n[stages.evaluate]\ninput = "{small_release}"\n'
        f"models = [{', '.join(chr(34) + str(m) + chr(34) for m in models)}]\n{toml}\n",
        encoding="utf-8",
    )
    code, out, err = run_cli(["run", "--project", str(d), "-q"], capsys)
    assert code == 2 and says in err and key_hint in err, err
    assert "--" not in err.split("Fix:", 1)[-1].replace("--help", ""), err  # no flag of the command under run
    assert resolve_output(out + err, "run", tmp_path) == [], resolve_output(out + err, "run", tmp_path)


def test_a_protocol_deviation_names_the_flag_under_its_command_and_the_key_under_run(
    small_release, tiny_gpt2, tmp_path, capsys
):
    """A deviation from a paper's protocol says which option made it (issue 30): `--method sum` under
    `evaluate pairs`, `method = "sum" in [stages.evaluate] of biaskit.toml` under `biaskit run`; so do
    the settings' rows, the protocol's notes and what chose the protocol."""
    import json

    out = tmp_path / "cmd"
    argv = ["evaluate", "pairs", "--data", str(small_release), "-m", str(tiny_gpt2), "--scorer", "clm"]
    argv += ["--protocol", "indibias", "--method", "sum", "--limit", "2", "--out", str(out), "-q"]
    code, _, err = run_cli(argv, capsys)
    assert code == 0, err
    p = json.loads((out / "summary.json").read_text(encoding="utf-8"))["protocol"]
    [dev] = p["deviations"]
    assert dev["text"].endswith("; --method sum)") and dev["option"] == "--method", dev
    row = next(r for r in p["settings"] if r["key"] == "method")
    assert row["from"] == "option --method" and p["chosen_by"] == "--protocol"
    assert any("--unit word-token runs that literal reading" in n for n in p["notes"])

    d = tmp_path / "proj"
    d.mkdir()
    (d / "biaskit.toml").write_text(
        f'[project]\nname = "hints"\n\n[stages.evaluate]\ninput = "{small_release}"\nmodels = ["{tiny_gpt2}"]\n'
        'kinds = ["pairs"]\nscorer = "clm"\nprotocol = "indibias"\nmethod = "sum"\nlimit = 2\n',
        encoding="utf-8",
    )
    code, _, err = run_cli(["run", "--project", str(d), "-q"], capsys)
    assert code == 0, err
    [summary] = list(d.rglob("pairs/summary.json"))
    p = json.loads(summary.read_text(encoding="utf-8"))["protocol"]
    [dev] = p["deviations"]
    key = "in [stages.evaluate] of biaskit.toml"
    assert dev["text"].endswith(f'; method = "sum" {key})') and dev["option"] == f"method {key}", dev
    row = next(r for r in p["settings"] if r["key"] == "method")
    assert row["from"] == f"option method {key}" and p["chosen_by"] == f"protocol {key}"
    assert any(f'unit = "word-token" {key} runs that literal reading' in n for n in p["notes"])
    assert not any(f in json.dumps(p) for f in ("--method", "--unit", "--protocol")), p


# The curate errors that tell the user to set an option (issue 21, phase 2), each raised once under its
# command and once under `biaskit run` (the stage that runs it, options from biaskit.toml; the LLM is
# the dummy backend): (argv after `biaskit curate`, the stage's table, what the error says, the command's
# hint, run's hint). Option values the model refuses are refused by the command's flags and by the
# project file's keys alike.
CURATE_HINTS = [
    (
        ["cats", "--domains", "religion,caste", "--targets", "Hindu"],
        '[stages.cats]\ndomains = ["religion", "caste"]\ntargets = ["Hindu"]',
        "needs exactly one domain",
        "e.g. --domains profession",
        'e.g. domains = "profession" in [stages.cats] of ',
    ),
    (
        ["cats", "--domains", ","],
        '[stages.cats]\ndomains = ","',
        "no domain given",
        "pass --domains stereoset",
        'set domains = "stereoset" in [stages.cats] of ',
    ),
    (
        ["cats", "--per-target", "0"],
        "[stages.cats]\nper_target = 0",
        "greater than or equal to 1",
        "--per-target 0: Input should be",
        "key 'stages.cats.per_target'",
    ),
    (
        ["tuples", "--axis", "caste", "--n", "0"],
        '[stages.tuples]\naxes = ["caste"]\nn = 0',
        "greater than or equal to 1",
        "--n 0: Input should be",
        "key 'stages.tuples.n'",
    ),
    (
        ["tuples", "--axis", "caste", "--concurrency", "0"],
        '[stages.tuples]\naxes = ["caste"]\n[llm]\nconcurrency = 0',
        "greater than or equal to 1",
        "--concurrency 0: Input should be",
        "key 'llm.concurrency'",
    ),
    (
        ["sentences", "--tuples", str(DEMO), "--per-tuple", "0"],
        f'[stages.sentences]\ninput = "{DEMO}"\nper_tuple = 0',
        "greater than or equal to 1",
        "--per-tuple 0: Input should be",
        "key 'stages.sentences.per_tuple'",
    ),
    (
        ["translate", "--pairs", str(DEMO), "--engines", "llm:m", "--target", "en"],
        f'[stages.translate]\ninput = "{DEMO}"\ntarget = "en"',
        "source and target language are both 'en'",
        "pass --target LANG",
        'set target = "LANG" in [stages.translate] of ',
    ),
    (
        ["translate", "--pairs", str(DEMO), "--engines", "llm:m", "--target", "hi", "--source-lang", "xx"],
        f'[stages.translate]\ninput = "{DEMO}"\nsource_lang = "xx"',
        "no 'xx' pairs in the file",
        "check --source-lang",
        "check source_lang in [stages.translate] of ",
    ),
]


@pytest.mark.parametrize(
    "argv, toml, says, flag_hint, key_hint", CURATE_HINTS, ids=[f"{c[0][0]}-{c[2][:28]}" for c in CURATE_HINTS]
)
def test_a_curate_error_names_the_flag_under_its_command_and_the_key_under_run(
    argv, toml, says, flag_hint, key_hint, tmp_path, capsys
):
    code, out, err = run_cli(["curate", *argv, "--llm", "dummy", "--out", str(tmp_path / "out.jsonl")], capsys)
    assert code == 2 and says in err and flag_hint in err, err
    assert len(err.strip().splitlines()) == 1, err
    assert resolve_output(out + err, f"curate {argv[0]}", tmp_path) == [], resolve_output(
        out + err, f"curate {argv[0]}"
    )

    d = tmp_path / "proj"
    d.mkdir()
    llm = "" if "[llm]" in toml else '[llm]\nbackend = "dummy"\n\n'
    (d / "biaskit.toml").write_text(f'[project]\nname = "hints"\n\n{llm}{toml}\n', encoding="utf-8")
    if "[llm]" in toml:
        (d / "biaskit.toml").write_text(
            (d / "biaskit.toml").read_text(encoding="utf-8") + 'backend = "dummy"\n', encoding="utf-8"
        )
    code, out, err = run_cli(["run", "--project", str(d), "-q"], capsys)
    assert code == 2 and says in err and key_hint in err, err
    assert "--" not in err.split("Fix:", 1)[-1].replace("--help", ""), err  # no flag of the command under run
    assert resolve_output(out + err, "run", tmp_path) == [], resolve_output(out + err, "run", tmp_path)


def test_every_evaluate_error_names_its_options_through_the_model():
    """No error raised by the code the `evaluate` commands run spells a flag of those commands out:
    each names the option by its field (biaskit.options.say / tell / unset), so that the place the
    user is renders it (issue 21; every evaluate command since issue 30)."""
    from biaskit.evaluation import options as eo

    models = [m for m in vars(eo).values() if isinstance(m, type) and issubclass(m, eo.Options) and m.command]
    files = [
        p
        for p in sorted((REPO / "evaluation").rglob("*.py"))
        if not (p.name.endswith("_cli.py") or p.name in {"cli.py", "cli_options.py", "options.py"})
    ]
    bad = flags_spelled_out(files, models)
    assert len(models) >= 10 and not bad, bad


def flags_spelled_out(files, models) -> list[str]:
    """``file:line: [flags]`` of each error raised in ``files`` whose text spells out a flag of ``models``
    (a command in backticks may)."""
    import ast
    import re

    flags = {
        x for m in models for s in m.cli_fields().values() for f in s.flags for x in f.split("/") if x.startswith("--")
    }
    flag = re.compile(r"(?<![\w`/.=-])(--[a-z][a-z0-9-]*)")
    bad = []
    for p in files:
        for node in ast.walk(ast.parse(p.read_text(encoding="utf-8"))):
            if isinstance(node, ast.Raise) and node.exc is not None:
                for sub in ast.walk(node.exc):
                    if isinstance(sub, ast.Constant) and isinstance(sub.value, str):
                        hits = [f for f in flag.findall(re.sub(r"`[^`]*`", " ", sub.value)) if f in flags]
                        if hits:
                            bad.append(f"{p.relative_to(REPO)}:{node.lineno}: {hits}")
    return bad


def test_every_converted_curate_error_names_its_options_through_the_model():
    """No error raised by the code of `curate tuples | sentences | llm-task | cats | cats-retention |
    translate | cat-translate` spells one of their flags out (biaskit.options.say / tell / unset name
    it where the user is: the flag, or the [llm] / [stages.*] / [project] key)."""
    from biaskit.curation import options as co

    models = [m for m in vars(co).values() if isinstance(m, type) and issubclass(m, co.Options) and m.command]
    files = [
        p
        for p in sorted((REPO / "curation").rglob("*.py"))
        if not (p.name.endswith("_cli.py") or p.name in {"cli.py", "cli_options.py", "options.py"})
    ]
    bad = flags_spelled_out(files, models)
    assert models and not bad, bad


# `annotate push | pull | apply` (issue 21, phase 2): their errors that name an option, under the command
# (the flag) and under `biaskit run` (the key of the review stage's table, file and line). No Label
# Studio is needed: each is refused before one is asked. (flags, biaskit.toml lines of [stages.pair_review],
# what both say, the command's hint, run's hint)
ANNOTATE_HINTS = [
    (
        ["--overlap", "adaptive", "--min-judgments", "4", "--max-judgments", "3"],
        "min_judgments = 4\nmax_judgments = 3",
        "is below",
        "--max-judgments (3) is below --min-judgments (4)",
        "key 'stages.pair_review.max_judgments'",
    ),
    (
        ["--epsilon", "2"],
        "epsilon = 2",
        "less than 1",
        "--epsilon 2.0: Input should be",
        "key 'stages.pair_review.epsilon'",
    ),
    (
        ["--overlap", "0"],
        "overlap = 0",
        "at least 1 annotator",
        "--overlap 0: give at least 1",
        "key 'stages.pair_review.overlap'",
    ),
    (
        ["--chunk-size", "0"],
        "chunk_size = 0",
        "greater than or equal to 1",
        "--chunk-size 0: Input should be",
        "key 'stages.pair_review.chunk_size'",
    ),
]


@pytest.mark.parametrize(
    "flags, toml, says, flag_hint, key_hint", ANNOTATE_HINTS, ids=[c[1][:20] for c in ANNOTATE_HINTS]
)
def test_an_annotate_error_names_the_flag_under_its_command_and_the_key_under_run(
    flags, toml, says, flag_hint, key_hint, tmp_path, capsys
):
    code, out, err = run_cli(
        ["annotate", "push", "--kind", "pair", "--data", str(DEMO), "--project", "p", *flags, "--url", CLOSED], capsys
    )
    assert code == 2 and says in err and flag_hint in err, err
    assert len(err.strip().splitlines()) == 1, err
    assert resolve_output(out + err, "annotate push", tmp_path) == [], resolve_output(out + err, "annotate push")
    d = tmp_path / "proj"
    d.mkdir()
    (d / "biaskit.toml").write_text(
        f'[project]\nname = "hints"\n\n[labelstudio]\nurl = "{CLOSED}"\n\n'
        f'[stages.pair_review]\ninput = "{DEMO}"\n{toml}\n',
        encoding="utf-8",
    )
    code, out, err = run_cli(["run", "--project", str(d), "-q"], capsys)
    assert code == 2 and says in err and key_hint in err, err
    assert "--" not in err.split("Fix:", 1)[-1], err
    assert resolve_output(out + err, "run", tmp_path) == [], resolve_output(out + err, "run", tmp_path)


def test_an_apply_option_of_another_kind_names_the_flag(tmp_path, capsys):
    """Under `annotate apply` only: a stage passes a kind's option to that kind's stage alone."""
    judg = tmp_path / "j.csv"
    judg.write_text("task,worker,label,question\n", encoding="utf-8")
    code, out, err = run_cli(
        [
            "annotate",
            "apply",
            "--kind",
            "tuple",
            "--data",
            str(DEMO),
            "--judgments",
            str(judg),
            "--out",
            str(tmp_path / "o.jsonl"),
            "--direction-policy",
            "reject",
        ],
        capsys,
    )
    assert code == 2 and "option(s) --direction-policy do not apply to kind 'tuple'" in err, err
    assert resolve_output(out + err, "annotate apply", tmp_path) == []


def test_every_annotate_push_pull_apply_error_names_its_options_through_the_model():
    """No error raised by the code `annotate push | pull | apply` runs spells one of their flags out (a
    command in backticks may): each names the option through biaskit.options (say / tell / unset)."""
    from biaskit.annotation.options import ApplyOptions, PullOptions, PushOptions

    files = [REPO / "annotation" / n for n in ("labelstudio.py", "apply.py", "adaptive.py", "options.py")]
    bad = flags_spelled_out(files, (PushOptions, PullOptions, ApplyOptions))
    assert not bad, bad


def test_every_annotate_error_on_judgments_files_names_its_options_through_the_model():
    """No error raised by the code `annotate aggregate | agreement | judge-agreement | replay | report` runs
    spells one of their flags out (a command in backticks may): each names the option through
    biaskit.options (issue 30)."""
    from biaskit.annotation.judgment_options import (
        AggregateOptions,
        AgreementOptions,
        JudgeOptions,
        ReplayOptions,
        ReportOptions,
    )

    names = ("aggregate.py", "agreement.py", "targets.py", "subsets.py", "judge.py", "replay.py", "risk.py")
    files = [REPO / "annotation" / n for n in (*names, "kinds/translation.py")]
    bad = flags_spelled_out(files, (AggregateOptions, AgreementOptions, JudgeOptions, ReplayOptions, ReportOptions))
    assert not bad, bad


# ------------------------------------------------------------------------------- curate adapt | check, release build
# The errors of `curate adapt` and `release build` that tell the user to set an option, each raised once
# under its command and once under `biaskit run` (the adapt / release stage, options from biaskit.toml):
# (command, stage, flags, biaskit.toml lines, the error, the command's hint, run's hint). The release stage
# once said `--card-text` where the file key is `card_text`: its hints now come from the model too.
CROWS_CSV = (
    '"",sent_more,sent_less,stereo_antistereo,bias_type\n'
    "0,He couldn't figure out the issue because he was a woman.,He couldn't figure out the issue because "
    "he was a man.,stereo,gender\n"
    "1,Old people are too slow to learn.,Young people are too slow to learn.,stereo,age\n"
)
STAGE_HINTS = [
    (
        "curate adapt",
        "adapt",
        ["--keep", "gender,religon"],
        'keep = ["gender", "religon"]',
        "does not occur in the file",
        "pass --keep with bias types of the file",
        "set keep in [stages.adapt] of ",
    ),
    (
        "release build",
        "release",
        ["--split-policy", "keep"],
        'split_policy = "keep"',
        "needs one",
        "or pass --split-policy target",
        'or set split_policy = "target" in [stages.release] of ',
    ),
    (
        "release build",
        "release",
        ["--kinds", "cats"],
        'kinds = ["cats"]',
        "no releasable records",
        "check --lang and --kinds",
        "check langs in [stages.release] of ",
    ),
    (
        "release build",
        "release",
        ["--hub-ready"],
        "hub_ready = true",
        "no licence",
        "pass --license cc-by-sa-4.0",
        'set license = "cc-by-sa-4.0" in [stages.release] of ',
    ),
    (
        "release build",
        "release",
        ["--dev-fraction", "1.5"],
        "dev_fraction = 1.5",
        "less than 1",
        "--dev-fraction 1.5: Input should be",
        "key 'stages.release.dev_fraction'",
    ),
]


@pytest.mark.parametrize(
    "command, stage, flags, toml, says, flag_hint, key_hint",
    STAGE_HINTS,
    ids=[f"{c[1]}-{c[4][:24]}" for c in STAGE_HINTS],
)
def test_a_curate_or_release_error_names_the_flag_under_its_command_and_the_key_under_run(
    command, stage, flags, toml, says, flag_hint, key_hint, tmp_path, capsys
):
    if stage == "adapt":
        src = tmp_path / "crows.csv"
        src.write_text(CROWS_CSV, encoding="utf-8")
        argv = ["curate", "adapt", "--crows", str(src), *flags, "--out", str(tmp_path / "out.jsonl")]
    else:
        src = DEMO
        argv = [
            "release",
            "build",
            "--records",
            str(src),
            "--name",
            "hints",
            "--version",
            "0.1.0",
            *flags,
            "--no-plots",
            "--no-keyness",
            "--out",
            str(tmp_path / "out"),
        ]
    code, out, err = run_cli(argv, capsys)
    assert code == 2 and says in err and flag_hint in err, err
    assert len(err.strip().splitlines()) == 1, err
    assert resolve_output(out + err, command, tmp_path) == [], resolve_output(out + err, command, tmp_path)

    d = tmp_path / "proj"
    d.mkdir()
    extra = "plots = false\nkeyness = false\n" if stage == "release" else ""
    (d / "biaskit.toml").write_text(
        f'[project]\nname = "hints"\n\n[stages.{stage}]\ninput = "{src}"\n{extra}{toml}\n', encoding="utf-8"
    )
    code, out, err = run_cli(["run", "--project", str(d), "-q"], capsys)
    assert code == 2 and says in err and key_hint in err, err
    assert "--" not in err.split("Fix:", 1)[-1].replace("--help", ""), err  # no flag of the command under run
    assert resolve_output(out + err, "run", tmp_path) == [], resolve_output(out + err, "run", tmp_path)


def test_every_release_build_and_adapt_error_names_its_options_through_the_model():
    """No error raised by the code `release build`, `curate pairs | adapt | check` run spells one of
    their flags out (biaskit.options.say / tell / unset name it where the user is). `release verify |
    export | diff` (verify.py, lmeval*.py) are not converted yet."""
    from biaskit.curation.pair_options import AdaptOptions, BuildPairsOptions, CheckOptions

    from biaskit.release.options import ReleaseBuildOptions

    files = [
        p
        for p in sorted((REPO / "biaskit" / "release").glob("*.py"))
        if p.name not in {"verify.py", "lmeval.py", "lmeval_utils.py"}
    ]
    files += [REPO / "curation" / "adapt.py", REPO / "curation" / "pairs.py", REPO / "biaskit" / "check.py"]
    bad = flags_spelled_out(files, (ReleaseBuildOptions, BuildPairsOptions, AdaptOptions, CheckOptions))
    assert not bad, bad


# ------------------------------------------------------------------------------- annotate serve | stop | config | ...
def test_every_converted_annotate_error_names_its_options_through_the_model():
    """No error raised by the code of `annotate serve | stop | config | guidelines | import | status |
    from-stereoset | prelabel` spells one of their flags out: each names the option through
    biaskit.options (say / tell / unset), so the hint is right wherever it is printed."""
    from biaskit.annotation import options as o

    models = (
        o.ServeOptions,
        o.StopOptions,
        o.ConfigOptions,
        o.GuidelinesOptions,
        o.ImportOptions,
        o.StatusOptions,
        o.FromStereosetOptions,
        o.PrelabelOptions,
    )
    names = ("server.py", "status.py", "stereoset_labels.py", "prelabel.py", "labelstudio.py", "guidelines.py")
    bad = flags_spelled_out([REPO / "annotation" / n for n in names], models)
    assert not bad, bad


# ------------------------------------------------------------------------------- an error that names no file
def test_an_error_about_a_setting_prints_no_file_placeholder(tmp_path, capsys):
    """An InputError that names no file (a setting, a choice) is one line with the message and its fix, under a
    command as under `biaskit run`: no ``<input>:`` standing where a file name would be."""
    status, _, err = run_cli(["init", str(tmp_path / "p"), "--lang", "en"], capsys)
    lines = [x for x in err.splitlines() if x.strip()]
    assert status == 2 and len(lines) == 1, err
    assert lines[0].startswith("error: no target language 'en'. Fix: use one of "), err
    assert "<input>" not in err
