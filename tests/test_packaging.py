"""The built wheel ships one import namespace, ``biaskit``, with every data and prompt file."""

from __future__ import annotations

import subprocess
import sys
import zipfile
from pathlib import Path

import pytest

REPO = Path(__file__).resolve().parents[1]


@pytest.fixture(scope="module")
def wheel(tmp_path_factory) -> Path:
    out = tmp_path_factory.mktemp("wheel")
    proc = subprocess.run(
        [sys.executable, "-m", "pip", "wheel", "--no-deps", "--no-build-isolation", "-q", str(REPO), "-w", str(out)],
        capture_output=True,
        text=True,
    )
    if proc.returncode != 0 and "setuptools" in proc.stderr and "No module named" in proc.stderr:
        pytest.skip("setuptools is not installed in this environment")
    assert proc.returncode == 0, proc.stderr[-2000:]
    (whl,) = out.glob("biaskit-*.whl")
    return whl


def test_wheel_has_only_the_biaskit_namespace(wheel):
    names = zipfile.ZipFile(wheel).namelist()
    tops = {n.split("/")[0] for n in names}
    assert tops == {"biaskit", f"{wheel.name.split('-')[0]}-{wheel.name.split('-')[1]}.dist-info"}
    for pkg in ("curation", "annotation", "evaluation", "prompts", "data"):
        assert f"biaskit/{pkg}/__init__.py" in names


def test_wheel_ships_every_data_and_prompt_file(wheel):
    names = set(zipfile.ZipFile(wheel).namelist())
    for folder in ("data", "prompts"):
        for f in (REPO / folder).rglob("*"):
            if f.is_file() and "__pycache__" not in f.parts and f.suffix != ".pyc":
                assert f"biaskit/{f.relative_to(REPO).as_posix()}" in names, f"{f} is not in the wheel"
