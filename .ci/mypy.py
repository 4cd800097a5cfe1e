"""Run mypy on the whole ``biaskit`` namespace, as setuptools installs it.

pyproject.toml's ``[tool.setuptools] package-dir`` maps ``curation/``, ``annotation/``, ``evaluation/``,
``prompts/`` and ``data/`` under ``biaskit.``; mypy can only find a module where its dotted name is a
folder path. So this links each mapped folder into ``build/mypy-path/biaskit/`` (the ``mypy_path`` of
``[tool.mypy]``; regenerated from package-dir on every run, so a fresh clone or a new mapping needs nothing
else), runs mypy with the arguments given (default: the ``packages`` of ``[tool.mypy]``), and prints its
report with the real file paths (``curation/x.py``, not ``build/mypy-path/biaskit/curation/x.py``).

    .venv/bin/python .ci/mypy.py            # what `make mypy` / `make lint` and pre-commit run
"""

from __future__ import annotations

import os
import shutil
import subprocess
import sys
import tomllib
from pathlib import Path

ROOT = Path(__file__).resolve().parent.parent
TREE = Path("build/mypy-path")


def link_tree() -> dict[str, str]:
    """Link every package-dir folder mapped under ``biaskit.`` into TREE; returns {tree prefix: real prefix}."""
    cfg = tomllib.loads((ROOT / "pyproject.toml").read_text(encoding="utf-8"))
    package_dir: dict[str, str] = cfg["tool"]["setuptools"]["package-dir"]
    tree = ROOT / TREE
    shutil.rmtree(tree, ignore_errors=True)
    prefixes = {}
    for name, folder in package_dir.items():
        if name == folder.replace("/", "."):
            continue  # found where it is (biaskit/ itself)
        link = tree / Path(*name.split("."))
        link.parent.mkdir(parents=True, exist_ok=True)
        link.symlink_to(os.path.relpath(ROOT / folder, link.parent), target_is_directory=True)
        prefixes[f"{TREE.as_posix()}/{name.replace('.', '/')}/"] = f"{folder}/"
    return prefixes


def main(argv: list[str]) -> int:
    prefixes = link_tree()
    run = subprocess.run([sys.executable, "-m", "mypy", *argv], cwd=ROOT, text=True, capture_output=True)
    for stream, text in ((sys.stdout, run.stdout), (sys.stderr, run.stderr)):
        for tree_prefix, real_prefix in prefixes.items():
            text = text.replace(tree_prefix, real_prefix)
        stream.write(text)
    return run.returncode


if __name__ == "__main__":
    sys.exit(main(sys.argv[1:]))
