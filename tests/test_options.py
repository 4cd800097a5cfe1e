"""Each command's options declared once (issue 21): the CLI and the biaskit.toml table are derived from
one options model (biaskit/options.py), and nothing is present in one and missing from the other.

The tests find the commands themselves (a command made by ``@Model.cli()`` carries its model) and
the stages that run them (``StageRunner.commands``). Every command must be on its model except those
listed in :data:`NOT_YET`, so converting a command means removing its name from that list and nothing
else here; a command added later is on a model from the start.
"""

from __future__ import annotations

import types
import typing
from pathlib import Path
from typing import Any

import pytest

from biaskit.options import Options, option, plain, spec_of

# The commands whose options do not come from an options model (issue 30 converted them all). Every
# other command must be on its model (the tests below check each one), and a command listed here that
# is converted fails a test until its line goes: this list only shrinks, and it is empty.
NOT_YET: tuple[str, ...] = ()


def all_commands() -> dict[str, Any]:
    """Every leaf command of the CLI: name -> click command."""
    from hints import commands

    return commands()


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
def test_every_command_takes_its_options_from_a_model_except_the_listed_ones():
    """Every command is on its options model but those of :data:`NOT_YET`; a listed command that has
    a model since (or no longer exists) must leave the list."""
    everything = all_commands()
    have = converted()
    assert set(NOT_YET) <= set(everything), f"not commands: {sorted(set(NOT_YET) - set(everything))}"
    done = sorted(set(NOT_YET) & set(have))
    assert not done, f"on a model now, remove from NOT_YET: {done}"
    assert set(everything) - set(NOT_YET) == set(have), (
        f"no options model: {sorted(set(everything) - set(have) - set(NOT_YET))}"
    )
    for name, (_, model) in have.items():
        assert model.command == name, (name, model.command)


def _on_a_model() -> list[str]:
    return sorted(set(all_commands()) - set(NOT_YET))


def model_mismatches(cmd: Any, model: type[Options]) -> list[str]:
    """How the click command ``cmd`` differs from its options model: an option the model lacks, a
    field the command lacks, or a field whose flags, default, choices, path checks or help differ (a
    positional argument, such as `curate llm-task TASK`, is the command's own)."""
    from biaskit.paths import path_arg_of

    params = {p.name: p for p in cmd.params if p.name != "help" and p.param_type_name != "argument"}
    fields = model.cli_fields()
    out = [f"option {params[n].opts[0]} is not in {model.__name__}" for n in params if n not in fields]
    out += [f"field {n} of {model.__name__} is not an option" for n in fields if n not in params]
    for n, spec in fields.items():
        if n not in params:
            continue
        p = params[n]
        flags = {x for f in spec.flags for x in f.split("/")}
        if p.opts[0] != model.flag(n) or set(p.opts + p.secondary_opts) != flags:
            out.append(f"{n}: flags {p.opts + p.secondary_opts}")
        f = model.model_fields[n]
        if p.required != f.is_required():
            out.append(f"{n}: required {p.required}")
        default = model.default(n)
        if spec.sep and isinstance(default, list):  # a list the command line takes as one string
            default = spec.sep.join(default)
        if not f.is_required() and plain(p.default) != default:
            out.append(f"{n}: default {p.default!r}, the model's {default!r}")
        names = spec.names()
        if names is not None and not spec.sep and [plain(c) for c in p.type_descriptor.choices] != names:
            out.append(f"{n}: choices {p.type_descriptor.choices}")
        pa = path_arg_of(p)
        if (pa is not None) != (spec.path is not None):
            out.append(f"{n}: path check {pa}, the model's {spec.path}")
        elif pa is not None and f"{pa.role}_{pa.kind}".replace("in_any", "in_path") != spec.path:
            out.append(f"{n}: path check {pa}, the model's {spec.path}")
        if p.help != spec.help:
            out.append(f"{n}: help {p.help!r}")
    return out


@pytest.mark.parametrize("name", _on_a_model())
def test_the_cli_is_the_model(name):
    """Every CLI field is an option of the command with the model's flags, default, choices, path
    checks and help, and the command has no option the model lacks."""
    cmd, model = converted()[name]
    assert model_mismatches(cmd, model) == []


class DemoOptions(Options):
    """A model of no command (``command`` unset: not registered), for the test below."""

    runs: int = option(1, "--runs", ge=1, help="How many runs.")


def test_an_option_declared_beside_the_model_is_caught():
    """A command that takes an option by hand next to its model (the second style issue 30 removes)
    fails the test above, and so does one whose flag or default drifted from the model."""
    import typer
    from typer.main import get_command

    app = typer.Typer()

    @app.command()
    @DemoOptions.cli()
    def demo(opts: DemoOptions, seed: int = typer.Option(0, "--seed", help="A seed.")) -> None:
        pass

    @app.command()
    def other(runs: int = typer.Option(2, "--runs", help="How many runs.")) -> None:
        pass

    group = get_command(app)
    assert model_mismatches(group.commands["demo"], DemoOptions) == ["option --seed is not in DemoOptions"]
    assert model_mismatches(group.commands["other"], DemoOptions) == ["runs: default 2, the model's 1"]


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
