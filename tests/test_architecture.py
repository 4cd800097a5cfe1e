"""The layering of docs/architecture.md, checked on the source: stages never import each other,
the shared floor imports no stage, only the CLI root and the pipeline sit above the stages (and nothing
imports the pipeline but the CLI root), the pipeline calls functions and not commands, annotation does
not switch on kind names, and the annotate CLI's choices are the registries'."""
from __future__ import annotations

import ast
import re
from pathlib import Path

import pytest

REPO = Path(__file__).resolve().parents[1]
STAGES = ("curation", "annotation", "evaluation")


def _modules(folder: str):
    return sorted(p for p in (REPO / folder).rglob("*.py") if "__pycache__" not in p.parts)


def _imported(path: Path, package: str) -> set[str]:
    """Absolute names of the modules ``path`` imports (relative imports resolved within ``package``),
    plus ``"module:attr"``-style strings naming biaskit modules (lazy registry entries, importlib)."""
    tree = ast.parse(path.read_text(encoding="utf-8"))
    rel = path.relative_to(REPO / package.split(".")[-1])  # biaskit.annotation -> annotation/
    here = [package] + list(rel.parent.parts)
    out: set[str] = set()
    for node in ast.walk(tree):
        if isinstance(node, ast.Import):
            out.update(a.name for a in node.names)
        elif isinstance(node, ast.ImportFrom):
            if node.level:
                base = here[: len(here) - node.level + 1]
                out.add(".".join(base + ([node.module] if node.module else [])))
            else:
                out.add(node.module or "")
        elif isinstance(node, ast.Constant) and isinstance(node.value, str) and node.value.startswith("biaskit."):
            out.add(node.value.split(":")[0])
    return out


@pytest.mark.parametrize("stage", STAGES)
def test_no_stage_imports_another(stage):
    others = [f"biaskit.{s}" for s in STAGES if s != stage]
    bad = {f"{p.relative_to(REPO)} -> {m}" for p in _modules(stage) for m in _imported(p, f"biaskit.{stage}")
           if any(m == o or m.startswith(o + ".") for o in others)}
    assert not bad, sorted(bad)


# Above the stages: the CLI root, the notebook API (biaskit.load_release, biaskit.evaluate_pairs) and the
# pipeline package (biaskit init | run | status). Nothing else.
ABOVE = (REPO / "biaskit" / "cli.py", REPO / "biaskit" / "pipeline", REPO / "biaskit" / "api.py")


def _above(p: Path) -> bool:
    return p in (ABOVE[0], ABOVE[2]) or ABOVE[1] in p.parents


def test_the_shared_floor_imports_no_stage():
    stages = [f"biaskit.{s}" for s in STAGES]
    bad = {f"{p.relative_to(REPO)} -> {m}" for p in _modules("biaskit") if not _above(p)
           for m in _imported(p, "biaskit") if any(m == s or m.startswith(s + ".") for s in stages)}
    assert not bad, sorted(bad)


def test_only_the_cli_root_imports_the_pipeline():
    files = [(p, "biaskit") for p in _modules("biaskit") if not _above(p)]
    files += [(p, f"biaskit.{s}") for s in STAGES for p in _modules(s)]
    bad = {f"{p.relative_to(REPO)} -> {m}" for p, pkg in files for m in _imported(p, pkg)
           if m == "biaskit.pipeline" or m.startswith("biaskit.pipeline.")}
    assert not bad, sorted(bad)
    assert any(m.startswith("biaskit.pipeline") for m in _imported(ABOVE[0], "biaskit"))


def test_the_pipeline_calls_functions_not_commands():
    """`biaskit run` calls the stages' pure functions: no stage CLI module, no typer outside its own
    cli.py, no subprocess."""
    cli_modules = {"biaskit.cli", "biaskit.release_cli", "biaskit.datasets_cli"} | {
        f"biaskit.{s}.{p.stem}" for s in STAGES for p in _modules(s) if p.stem == "cli" or p.stem.endswith("_cli")}
    bad = set()
    for p in _modules("biaskit/pipeline"):
        mods = _imported(p, "biaskit")
        bad |= {f"{p.relative_to(REPO)} -> {m}" for m in mods if m in cli_modules or m == "subprocess"
                or (m == "typer" and p.name != "cli.py")}
    assert not bad, sorted(bad)


def test_annotation_does_not_switch_on_kind_names():
    from biaskit.annotation.kinds import KINDS

    names = "|".join(map(re.escape, KINDS.names()))
    pattern = re.compile(rf"""(==|!=|\bin)\s*[(\[{{]?\s*["']({names})["']""")
    bad = [f"{p.relative_to(REPO)}:{i}" for p in _modules("annotation") if "kinds" not in p.parts
           for i, line in enumerate(p.read_text(encoding="utf-8").splitlines(), start=1) if pattern.search(line)]
    assert not bad, bad


def test_annotate_cli_choices_come_from_the_registries(capsys, tmp_path):
    from conftest import run_cli

    from biaskit.annotation.aggregate import AGGREGATORS
    from biaskit.annotation.kinds import KINDS

    j = tmp_path / "j.csv"
    j.write_text("task,worker,label\n", encoding="utf-8")
    for argv, names in ((["annotate", "config", "--kind", "nope"], KINDS.names()),
                        (["annotate", "aggregate", "--judgments", str(j), "--out", str(tmp_path / "a.csv"),
                          "--method", "nope"], AGGREGATORS.names())):
        code, _, err = run_cli(argv, capsys)
        listed = re.findall(r"'([^']+)'", err.split("is not one of", 1)[1])
        assert code == 2 and listed == names, err
