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
    bad = {
        f"{p.relative_to(REPO)} -> {m}"
        for p in _modules(stage)
        for m in _imported(p, f"biaskit.{stage}")
        if any(m == o or m.startswith(o + ".") for o in others)
    }
    assert not bad, sorted(bad)


# Above the stages: the CLI root, the notebook API (biaskit.load_release, biaskit.evaluate_pairs) and the
# pipeline package (biaskit init | run | status). Nothing else.
ABOVE = (REPO / "biaskit" / "cli.py", REPO / "biaskit" / "pipeline", REPO / "biaskit" / "api.py")


def _above(p: Path) -> bool:
    return p in (ABOVE[0], ABOVE[2]) or ABOVE[1] in p.parents


def test_the_shared_floor_imports_no_stage():
    stages = [f"biaskit.{s}" for s in STAGES]
    bad = {
        f"{p.relative_to(REPO)} -> {m}"
        for p in _modules("biaskit")
        if not _above(p)
        for m in _imported(p, "biaskit")
        if any(m == s or m.startswith(s + ".") for s in stages)
    }
    assert not bad, sorted(bad)


def test_only_the_cli_root_imports_the_pipeline():
    files = [(p, "biaskit") for p in _modules("biaskit") if not _above(p)]
    files += [(p, f"biaskit.{s}") for s in STAGES for p in _modules(s)]
    bad = {
        f"{p.relative_to(REPO)} -> {m}"
        for p, pkg in files
        for m in _imported(p, pkg)
        if m == "biaskit.pipeline" or m.startswith("biaskit.pipeline.")
    }
    assert not bad, sorted(bad)
    assert any(m.startswith("biaskit.pipeline") for m in _imported(ABOVE[0], "biaskit"))


def test_the_pipeline_calls_functions_not_commands():
    """`biaskit run` calls the stages' pure functions: no stage CLI module, no typer outside its own
    cli.py, no subprocess."""
    cli_modules = {"biaskit.cli", "biaskit.release_cli", "biaskit.datasets_cli"} | {
        f"biaskit.{s}.{p.stem}" for s in STAGES for p in _modules(s) if p.stem == "cli" or p.stem.endswith("_cli")
    }
    bad = set()
    for p in _modules("biaskit/pipeline"):
        mods = _imported(p, "biaskit")
        bad |= {
            f"{p.relative_to(REPO)} -> {m}"
            for m in mods
            if m in cli_modules or m == "subprocess" or (m == "typer" and p.name != "cli.py")
        }
    assert not bad, sorted(bad)


def test_annotation_does_not_switch_on_kind_names():
    from biaskit.annotation.kinds import KINDS

    names = "|".join(map(re.escape, KINDS.names()))
    pattern = re.compile(rf"""(==|!=|\bin)\s*[(\[{{]?\s*["']({names})["']""")
    bad = [
        f"{p.relative_to(REPO)}:{i}"
        for p in _modules("annotation")
        if "kinds" not in p.parts
        for i, line in enumerate(p.read_text(encoding="utf-8").splitlines(), start=1)
        if pattern.search(line)
    ]
    assert not bad, bad


def test_annotate_cli_choices_come_from_the_registries(capsys, tmp_path):
    from biaskit.annotation.aggregate import AGGREGATORS
    from biaskit.annotation.kinds import KINDS
    from conftest import run_cli

    j = tmp_path / "j.csv"
    j.write_text("task,worker,label\n", encoding="utf-8")
    for argv, names in (
        (["annotate", "config", "--kind", "nope"], KINDS.names()),
        (
            ["annotate", "aggregate", "--judgments", str(j), "--out", str(tmp_path / "a.csv"), "--method", "nope"],
            AGGREGATORS.names(),
        ),
    ):
        code, _, err = run_cli(argv, capsys)
        listed = re.findall(r"'([^']+)'", err.split("is not one of", 1)[1])
        assert code == 2 and listed == names, err


# ------------------------------------------------------------------ import cycles
def _module_names() -> dict[str, Path]:
    """Every module of the installed package: ``biaskit.x.y`` -> its file."""
    out = {}
    for folder, pkg in (("biaskit", "biaskit"), *((s, f"biaskit.{s}") for s in STAGES)):
        for p in _modules(folder):
            parts = list(p.relative_to(REPO / folder).with_suffix("").parts)
            out[".".join([pkg] + (parts[:-1] if parts[-1] == "__init__" else parts))] = p
    return out


def _import_graph() -> dict[str, set[str]]:
    """module -> the biaskit modules it imports, at the top or inside a function (a lazy import is an
    edge too: it runs whenever the function does), not under ``if TYPE_CHECKING:``."""
    mods = _module_names()

    def known(name: str) -> str:
        while name and name not in mods:
            name = name.rpartition(".")[0]
        return name

    graph: dict[str, set[str]] = {}
    for name, path in mods.items():
        pkg = name if path.name == "__init__.py" else name.rpartition(".")[0]
        tree = ast.parse(path.read_text(encoding="utf-8"))
        skip = {
            id(n)
            for node in ast.walk(tree)
            if isinstance(node, ast.If) and "TYPE_CHECKING" in ast.unparse(node.test)
            for stmt in node.body
            for n in ast.walk(stmt)
        }
        deps: set[str] = set()
        for node in ast.walk(tree):
            if id(node) in skip:
                continue
            if isinstance(node, ast.Import):
                deps |= {known(a.name) for a in node.names}
            elif isinstance(node, ast.ImportFrom):
                base = pkg.split(".")[: len(pkg.split(".")) - node.level + 1] if node.level else []
                mod = ".".join(base + ([node.module] if node.module else []))
                deps |= {known(f"{mod}.{a.name}") for a in node.names}  # a submodule, else the module itself
        graph[name] = {d for d in deps if d and d != name}
    return graph


def _cycles(graph: dict[str, set[str]]) -> list[frozenset[str]]:
    """The strongly connected components with more than one module (Tarjan)."""
    index: dict[str, int] = {}
    low: dict[str, int] = {}
    stack: list[str] = []
    out: list[frozenset[str]] = []

    def visit(v: str) -> None:
        index[v] = low[v] = len(index)
        stack.append(v)
        for w in sorted(graph[v]):
            if w not in index:
                visit(w)
                low[v] = min(low[v], low[w])
            elif w in stack:
                low[v] = min(low[v], index[w])
        if low[v] == index[v]:
            comp = set()
            while True:
                w = stack.pop()
                comp.add(w)
                if w == v:
                    break
            if len(comp) > 1:
                out.append(frozenset(comp))

    for v in sorted(graph):
        if v not in index:
            visit(v)
    return out


# Cycles the code still has, all through lazy imports (none at module level), and why each stays for
# now. The list may only shrink: a new cycle fails the test; so does one that is gone (delete it here).
KNOWN_CYCLES: dict[frozenset[str], str] = {}  # issue 30 broke the last three


def test_import_graph_has_no_new_cycle():
    found = set(_cycles(_import_graph()))
    new = [sorted(c) for c in found - set(KNOWN_CYCLES)]
    gone = [sorted(c) for c in set(KNOWN_CYCLES) - found]
    assert not new, f"import cycle(s) (lazy imports count): {new}; move what both modules need down a level"
    assert not gone, f"cycle(s) broken: {gone}; delete them from KNOWN_CYCLES"


@pytest.mark.parametrize(
    "a,b",
    [
        ("biaskit.annotation.guidelines", "biaskit.annotation.kinds"),  # issue 21: guidelines <-> kinds
        ("biaskit.annotation.guidelines", "biaskit.annotation.kinds.base"),
        ("biaskit.evaluation.cat_modes", "biaskit.evaluation.stereoset"),  # issue 21: _plan / _inter_text
        ("biaskit.evaluation.sentiment", "biaskit.evaluation.stereoset"),
        ("biaskit.evaluation.ceat", "biaskit.evaluation.correlate"),  # issue 30: result_folder.py below both
        ("biaskit.evaluation.ilps", "biaskit.evaluation.correlate"),
        ("biaskit.evaluation.options", "biaskit.evaluation.pairs"),  # the models never import the code taking them
        ("biaskit.evaluation.options", "biaskit.evaluation.correlate"),
        ("biaskit.evaluation.pairs", "biaskit"),  # issue 30: the version from biaskit/version.py
        ("biaskit.annotation.agreement", "biaskit.annotation.status"),  # issue 30: the note in adaptive.py
        ("biaskit.annotation.settle", "biaskit.annotation.aggregate"),  # issue 30: majority_status in settle.py
        ("biaskit.annotation.aggregate", "biaskit.annotation.adaptive"),  # issue 30: recorded settlements in settle
    ],
)
def test_broken_cycles_stay_broken(a, b):
    """Each pair: the lower module never imports the higher one (not even inside a function)."""
    graph = _import_graph()
    reach, todo = set(), [a]
    while todo:
        for m in graph[todo.pop()] - reach:
            reach.add(m)
            todo.append(m)
    assert b not in reach, f"{a} imports {b} (directly or through another module): an import cycle is back"


def test_the_cycle_check_sees_lazy_imports():
    """The graph counts an import inside a function, and skips one under ``if TYPE_CHECKING:``."""
    graph = _import_graph()
    assert "biaskit.annotation.kinds.base" not in graph["biaskit.annotation.guidelines"]  # TYPE_CHECKING only
    assert "biaskit.evaluation.cat_plan" in graph["biaskit.evaluation.cat_modes"]
    assert "biaskit.evaluation.cat_modes" in graph["biaskit.evaluation.stereoset"]
    assert "biaskit.evaluation.sentiment" in graph["biaskit.evaluation.stereoset"]  # lazy, inside run_cats


# ------------------------------------------------------------------ one helper for each job
def _sources():
    for folder in ("biaskit", *STAGES):
        for p in _modules(folder):
            yield p, p.read_text(encoding="utf-8")


def test_markdown_tables_come_from_one_helper():
    """Reports build their tables with biaskit.tables.md_table (escaping, alignment, empty cells), not by
    joining "|" rows by hand."""
    sep = re.compile(r"""["'][|]?-{3}[|:]|["']-{3}[|]|["'][|]:?-{3}""")
    bad = [
        f"{p.relative_to(REPO)}:{i}"
        for p, src in _sources()
        if p != REPO / "biaskit" / "tables.py"
        for i, line in enumerate(src.splitlines(), start=1)
        if sep.search(line)
    ]
    assert not bad, bad


def test_batch_results_go_through_one_cache_wrapper():
    """A batch of work meets the cache through biaskit.cache.cached_results only (no second
    get_many -> compute -> set_many loop)."""
    bad = [
        str(p.relative_to(REPO))
        for p, src in _sources()
        if p != REPO / "biaskit" / "cache.py" and re.search(r"\.(get_many|set_many)\(", src)
    ]
    assert not bad, bad


def test_pair_metrics_computes_and_does_not_draw():
    graph = _import_graph()
    src = (REPO / "evaluation" / "pair_metrics.py").read_text(encoding="utf-8")
    assert "matplotlib" not in src and "biaskit.evaluation.report" not in graph["biaskit.evaluation.pair_metrics"]
    assert "biaskit.evaluation.pair_metrics" in graph["biaskit.evaluation.report"]
