"""Each command's options declared once (issue 21): the CLI and the biaskit.toml table are derived from
one options model (biaskit/options.py), and nothing is present in one and missing from the other.

The tests find the converted commands themselves (a command made by ``@Model.cli()`` carries its
model) and the stages that run them (``StageRunner.commands``), so converting a command means adding
its name to :data:`CONVERTED` and nothing else here.
"""

from __future__ import annotations

import types
import typing
from pathlib import Path
from typing import Any

import pytest

from biaskit.options import Options, plain, spec_of

# The commands whose options must come from an options model. Phase 2 of issue 21 adds its commands
# here (curate *, annotate push | pull | apply, release build); the tests below then cover them.
CONVERTED = (
    "evaluate pairs",
    "evaluate cats",
    "evaluate seat",
    "annotate push",
    "annotate pull",
    "annotate apply",
    "curate pairs",
    "curate adapt",
    "curate check",
    "release build",
    "curate tuples",
    "curate sentences",
    "curate llm-task",
    "curate cats",
    "curate cats-retention",
    "curate translate",
    "curate cat-translate",
    "data check-language",
    "evaluate ceat",
    "evaluate ilps",
    "evaluate correlate",
    "evaluate seat-names",
    "evaluate seat-tests",
    "evaluate extrinsic classifier",
    "evaluate extrinsic generations",
)

# issue 30, annotation (i30a): the annotate commands converted here
CONVERTED += (
    "annotate config",
    "annotate from-stereoset",
    "annotate guidelines",
    "annotate import",
    "annotate serve",
    "annotate stop",
    "annotate status",
    "annotate prelabel",
)


def converted() -> dict[str, tuple[Any, type[Options]]]:
    """Every command whose options come from a model: name -> (click command, model)."""
    from hints import commands

    return {
        n: (c, c.callback.__biaskit_options__)
        for n, c in commands().items()
        if getattr(c.callback, "__biaskit_options__", None) is not None
    }


def stage_commands() -> list[tuple[str, Any]]:
    """(stage name, Command) for every command a pipeline stage runs through its options model."""
    from biaskit.pipeline.stages import STAGES

    return [(n, c) for n, cls in STAGES.items() for c in cls.commands]


STAGE_IDS = [f"{s}: {c.options.command}" for s, c in stage_commands()]


# ------------------------------------------------------------------------------------------ the CLI
def test_the_listed_commands_take_their_options_from_a_model():
    have = converted()
    assert set(CONVERTED) <= set(have), sorted(set(CONVERTED) - set(have))
    for name, (_, model) in have.items():
        assert model.command == name, (name, model.command)


@pytest.mark.parametrize("name", CONVERTED)
def test_the_cli_is_the_model(name):
    """Every CLI field is an option of the command with the model's flags, default, choices, path
    checks and help, and the command has no option the model lacks (a positional argument, such as
    `curate llm-task TASK`, is the command's own)."""
    from biaskit.paths import path_arg_of

    cmd, model = converted()[name]
    params = {p.name: p for p in cmd.params if p.name != "help" and p.param_type_name != "argument"}
    fields = model.cli_fields()
    assert set(params) == set(fields), set(params) ^ set(fields)
    for n, spec in fields.items():
        p = params[n]
        assert p.opts[0] == model.flag(n) and set(p.opts + p.secondary_opts) == {
            x for f in spec.flags for x in f.split("/")
        }, (n, p.opts)
        f = model.model_fields[n]
        assert p.required == f.is_required(), n
        default = model.default(n)
        if spec.sep and isinstance(default, list):  # a list the command line takes as one string
            default = spec.sep.join(default)
        if not f.is_required():
            assert plain(p.default) == default, (n, p.default, default)
        names = spec.names()
        if names is not None and not spec.sep:
            assert [plain(c) for c in p.type_descriptor.choices] == names, (n, p.type_descriptor.choices)
        pa = path_arg_of(p)
        assert (pa is not None) == (spec.path is not None), n
        if pa is not None:
            assert f"{pa.role}_{pa.kind}".replace("in_any", "in_path") == spec.path, (n, pa)
        assert p.help == spec.help, n


# ------------------------------------------------------------------------------------------ the stages
@pytest.mark.parametrize("stage, command", stage_commands(), ids=STAGE_IDS)
def test_every_option_of_a_command_is_a_key_of_its_stage_or_supplied_by_it(stage, command):
    """An option of the command is a key of the stage's table (same type, default, choices, checks),
    or the stage supplies it, with the reason written down; only ``--quiet``-like flags (not in any
    biaskit.toml: ``biaskit run`` has its own) are neither."""
    from biaskit.pipeline.stages import STAGES

    table = STAGES[stage].table
    model = command.options
    assert set(command.supplied) <= set(model.specs()) and set(command.keys) <= set(model.specs())
    assert all(isinstance(r, str) and len(r) > 10 for r in command.supplied.values()), command.supplied
    for n, spec in model.specs().items():
        key = command.key(n)
        if key is None:
            assert n in command.supplied or not spec.toml, (
                f"{model.command} {model.flag(n)}: neither a key of [stages.{stage}] nor supplied by the stage"
            )
            continue
        assert key in table.model_fields, f"{model.command} {model.flag(n)}: no key {key} in [stages.{stage}]"
        tf = table.model_fields[key]
        tspec = spec_of(tf)
        assert tspec is not None and tspec.names() == spec.names(), (key, n)
        if key in table.stage_defaults:
            continue  # the stage's own default, declared (and documented in docs/pipeline.md)
        assert tf.is_required() == model.model_fields[n].is_required(), key
        if not tf.is_required():
            assert (tf.default_factory() if tf.default_factory else tf.default) == model.default(n), (key, n)
        assert [str(m) for m in tf.metadata] == [str(m) for m in model.model_fields[n].metadata], (key, n)


@pytest.mark.parametrize("stage", sorted({s for s, _ in stage_commands()}))
def test_every_key_of_a_derived_table_comes_from_a_command_or_the_stage(stage):
    from biaskit.pipeline.stages import STAGES
    from biaskit.pipeline.tables import StageTable

    cls = STAGES[stage]
    keys = set(cls.table.model_fields) - set(StageTable.model_fields) - set(cls.table.own_keys)
    from_commands = {k for c in cls.commands for k in c.mapping().values()}
    assert keys == from_commands, keys ^ from_commands
    assert set(cls.table.stage_defaults) <= set(cls.table.model_fields)
    ops = {k for c in cls.commands for n, k in c.mapping().items() if c.options.spec(n).operational}
    assert ops <= set(cls.operational)
    assert not (
        {k for c in cls.commands for n, k in c.mapping().items() if not c.options.spec(n).operational}
        & set(cls.operational)
    ), "an option that changes results must stay in the fingerprint"


# options whose valid values the generic rule below cannot guess (a string of a given form)
SAMPLES = {("annotate push", "overlap"): "2", ("annotate push", "guidelines"): "en"}


def _sample(model: type[Options], name: str, tmp: Path) -> Any:
    """A valid value of option ``name`` other than its default."""
    if (model.command, name) in SAMPLES:
        return SAMPLES[model.command, name]
    spec = model.spec(name)
    f = model.model_fields[name]
    ann = spec.user_type or f.annotation
    args = (
        [a for a in typing.get_args(ann) if a is not type(None)]
        if typing.get_origin(ann) in (typing.Union, types.UnionType)
        else [ann]
    )
    base = args[0]
    listed = typing.get_origin(base) is list
    names = spec.names()
    default = model.default(name)
    if names is not None:
        v = next(x for x in reversed(names) if x != default)
    elif spec.metavar == "YYYY-MM-DD":
        v = "2025-01-31"
    elif spec.path in ("in_dir", "out_dir", "out_file"):  # a folder to read, or a place to write
        p = tmp / name
        if spec.path == "in_dir":
            p.mkdir(exist_ok=True)
            (p / "x.txt").write_text("x\n", encoding="utf-8")
        v = str(p)
    elif spec.path is not None:
        p = tmp / f"{name}.txt"
        p.write_text("x\n", encoding="utf-8")
        v = str(p)
    elif base is bool:
        v = not default
    elif base is int or "int" in str(base):
        v = 2
    elif base is float or "float" in str(base):
        v = 0.5
    else:
        v = "x"
    return [v, "y"] if listed and names is None and spec.path is None else [v] if listed else v


@pytest.mark.parametrize("stage, command", stage_commands(), ids=STAGE_IDS)
def test_the_cli_and_the_project_file_give_the_same_options(stage, command, tmp_path):
    """Every option set to a value other than its default, once as flags and once as biaskit.toml keys:
    the options object the command gets equals the one the stage builds (so a key reaches the
    function exactly as its flag does)."""
    from biaskit.pipeline.stages import STAGES

    cmd, model = converted()[command.options.command]
    values = {n: _sample(model, n, tmp_path) for n in command.mapping()}
    argv = []
    for n, v in values.items():
        flag = model.flag(n)
        if isinstance(v, bool):
            off = [x for f in model.spec(n).flags for x in f.split("/") if x.startswith("--no-")]  # --no-align
            argv += [flag] if v else off[:1] if off and flag not in off else []
        elif model.spec(n).sep and isinstance(v, list):
            argv += [flag, model.spec(n).sep.join(str(x) for x in v)]
        else:
            for x in v if isinstance(v, list) else [v]:
                argv += [flag, str(x)]
    supplied = {}
    for n in model.specs():
        if n not in values and model.model_fields[n].is_required():  # e.g. --data, --out
            supplied[n] = _sample(model, n, tmp_path) if model.spec(n).path != "out_dir" else str(tmp_path / "out")
            for x in supplied[n] if isinstance(supplied[n], list) else [supplied[n]]:
                argv += [model.flag(n), str(x)]
    ctx = cmd.make_context(command.options.command, argv)
    from_cli = model.model_validate({n: plain(v) for n, v in ctx.params.items() if n in model.model_fields})

    from biaskit.options import toml_value
    from biaskit.pipeline.project import load_project
    from biaskit.pipeline.stages import Context, RunOptions
    from biaskit.pipeline.state import State

    cls = STAGES[stage]
    table = {command.key(n): v for n, v in values.items()}
    for k, f in cls.table.model_fields.items():
        if f.is_required() and k not in table:
            table[k] = ["m"]
    (tmp_path / "in").mkdir()
    (tmp_path / "biaskit.toml").write_text(
        f'[project]\nname = "x"\n\n[llm]\nbackend = "dummy"\n\n'  # LLM stages
        f'[stages.{stage}]\ninput = "in"\n' + "".join(f"{k} = {toml_value(v)}\n" for k, v in table.items()),
        encoding="utf-8",
    )
    project = load_project(tmp_path, check_inputs=False)
    runner = cls(Context(project, State(project.workdir), RunOptions()))
    from_toml = runner.command_options(model, **supplied)
    for n in values:
        assert getattr(from_toml, n) == getattr(from_cli, n), (n, getattr(from_toml, n), getattr(from_cli, n))


# ------------------------------------------------------------------------------------------ the drifts fixed
def test_the_evaluate_stage_takes_every_evaluate_pairs_option_with_its_default():
    """The drifts issue 21 names: the stage lacked normalise, base_url and device_map, and its batch
    size was 32 where `evaluate pairs` (the engine) uses 64."""
    from biaskit.evaluation.engine import DEFAULT_BATCH_SIZE
    from biaskit.evaluation.options import PairsOptions

    from biaskit.pipeline.stages import EvaluateStage

    t = EvaluateStage.table(models=["m"])
    for key in ("normalise", "base_url", "device_map", "dtype", "skip_invalid", "limit", "format", "concurrency"):
        assert key in EvaluateStage.table.model_fields, key
    assert t.batch_size == DEFAULT_BATCH_SIZE == PairsOptions.default("batch_size") == 64
    assert EvaluateStage.table.stage_defaults == {"split": "test", "seat_models": None}
    with pytest.raises(Exception, match="unknown normalisation 'unmodifed' \\(did you mean 'unmodified'\\?\\)"):
        EvaluateStage.table(models=["m"], normalise="unmodifed")


def test_no_class_name_is_used_twice_in_the_pipeline():
    import ast

    root = Path(__file__).resolve().parents[1] / "biaskit" / "pipeline"
    seen: dict[str, str] = {}
    for p in sorted(root.rglob("*.py")):
        for node in ast.walk(ast.parse(p.read_text(encoding="utf-8"))):
            if isinstance(node, ast.ClassDef):
                assert node.name not in seen, f"class {node.name} in {seen.get(node.name)} and {p.name}"
                seen[node.name] = p.name


def test_stage_order_and_io_are_the_classes():
    from biaskit.pipeline.project import ProjectFile
    from biaskit.pipeline.stages import HUMAN_STAGES, STAGE_IO, STAGE_ORDER, STAGES

    assert STAGE_ORDER == tuple(STAGES) and set(STAGE_IO) == set(STAGES)
    stages_table = ProjectFile.model_fields["stages"].annotation
    assert tuple(stages_table.model_fields) == STAGE_ORDER
    for n, cls in STAGES.items():
        assert cls.name == n and cls.output and STAGE_IO[n][1] == cls.output
        assert typing.get_args(stages_table.model_fields[n].annotation)[0] is cls.table
    assert HUMAN_STAGES == tuple(n for n, c in STAGES.items() if c.human) and "pair_review" in HUMAN_STAGES


def test_an_option_error_names_the_flag_the_key_or_the_keyword(tmp_path, capsys):
    """One validation, three places: `--runs 0` under the command, `runs = 0` in biaskit.toml, `runs=0`
    in Python."""
    from conftest import run_cli

    import biaskit
    from biaskit.options import OptionError

    demo = Path(__file__).resolve().parents[1] / "data" / "demo" / "demo_pairs.jsonl"
    code, _, err = run_cli(
        ["evaluate", "pairs", "--data", str(demo), "-m", "m", "--runs", "0", "--out", str(tmp_path / "o")], capsys
    )
    assert code == 2 and "--runs 0: Input should be greater than or equal to 1" in err and "give a valid --runs" in err
    with pytest.raises(OptionError, match="runs=0: Input should be greater"):
        biaskit.evaluate_pairs(demo, model="m", scorer="clm", runs=0)
    d = tmp_path / "proj"
    d.mkdir()
    (d / "biaskit.toml").write_text(
        '[project]\nname = "x"\n\n[stages.evaluate]\ninput = "rel"\nmodels = ["m"]\nruns = 0\n', encoding="utf-8"
    )
    (d / "rel").mkdir()
    code, _, err = run_cli(["run", "--project", str(d)], capsys)
    assert code == 2 and "key 'stages.evaluate.runs' (line 7)" in err, err
