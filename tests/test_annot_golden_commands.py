"""The offline `biaskit annotate` commands of issue 30's annotation work write the same bytes as the
recorded runs in tests/golden/annotation/ (their options models, the options object as their functions'
one entry shape, `annotate prelabel` moved under annotation/ and the step-sized `push`, `run_apply`,
`export_to_judgments`, `project_status`, `stereoset_judgments` changed no output).

Each case runs one command as a user types it, on small inputs made here (StereoSet's layout of
data/demo/stereoset_labels_demo.json, two tuples, a Label Studio export of them, the demo pairs), in a
folder of fixed names (the working directory during the run, so every path a file records is relative).
What the command prints is compared (output.txt), and every file it writes, after one normalisation:
times and durations (``created_at``, ``*_s`` seconds, ISO times) become ``<TIME>``; the run log of
`prelabel` (``*.runlog.jsonl``: the machine, versions and times of a run) is compared by presence.

The recorded copies were written by the code before the change (main at d723032, the same annotation code
as e422a19: ``BIASKIT_UPDATE_GOLDEN=1 pytest tests/test_annot_golden.py`` under that tree's interpreter);
rewrite them only for a change that means to change an output.
"""

from __future__ import annotations

import json
import os
import re
import shutil
from pathlib import Path

import pytest
from annot_helpers import ls_export
from goldens import outputs, run

GOLDEN = Path(__file__).parent / "golden" / "annotation"
REPO = Path(__file__).resolve().parent.parent
UPDATE = os.environ.get("BIASKIT_UPDATE_GOLDEN") == "1"

TUPLES = [
    {"identity": "women", "attribute": "bad at maths", "axis": "gender", "polarity": "negative"},
    {"identity": "old people", "attribute": "wise", "axis": "age", "polarity": "positive"},
]


def _export() -> list[dict]:
    """A Label Studio JSON export of the two tuples (the shape of a real 1.23 export): three annotators
    on the first (one with a comment-free second question), one cancelled and one answer on the second."""
    import tempfile

    from biaskit.annotation.kinds import get_kind

    with tempfile.TemporaryDirectory() as d:
        p = Path(d) / "t.jsonl"
        p.write_text("".join(json.dumps(r) + "\n" for r in TUPLES), encoding="utf-8")
        recs = get_kind("tuple").load(p)

    def ch(name: str, *values: str) -> dict:
        return {"from_name": name, "to_name": "tuple", "type": "choices", "value": {"choices": list(values)}}

    answers = {
        1: [
            (2, [ch("stereotype", "yes"), ch("polarity", "negative")], False),
            (3, [ch("stereotype", "yes")], False),
            (4, [ch("stereotype", "no"), ch("polarity", "positive")], False),
        ],
        2: [(2, [ch("stereotype", "no")], True), (3, [ch("stereotype", "no")], False)],
    }
    return ls_export("tuple", recs, answers)


@pytest.fixture(scope="module")
def work(tmp_path_factory):
    w = tmp_path_factory.mktemp("annot-golden")
    (w / "in").mkdir()
    shutil.copy(REPO / "data" / "demo" / "stereoset_labels_demo.json", w / "in" / "ss.json")
    (w / "in" / "tuples.jsonl").write_text("".join(json.dumps(r) + "\n" for r in TUPLES), encoding="utf-8")
    (w / "in" / "export.json").write_text(json.dumps(_export(), indent=1), encoding="utf-8")
    (w / "in" / "users.csv").write_text("id,email\n2,a@x.org\n3,b@x.org\n", encoding="utf-8")
    return w


# (case, the command line after `biaskit annotate`[, its exit code when not 0]); later cases read earlier outputs
CASES = [
    ("from-stereoset", "from-stereoset --data in/ss.json --out out/from-stereoset/j.csv"),
    (
        "from-stereoset-drop",
        "from-stereoset --data in/ss.json --other-labels drop --out out/from-stereoset-drop/j.jsonl",
    ),
    (
        "apply-cat",
        "apply --kind cat --data in/ss.json --judgments out/from-stereoset-drop/j.jsonl --out out/apply-cat/c.jsonl",
    ),
    # the kept 'related' labels are no option of the cat kind: one line, exit 2, nothing written
    ("apply-related", "apply --kind cat --data in/ss.json --judgments out/from-stereoset/j.csv --out out/x/c.jsonl", 2),
    (
        "apply-cat-json",
        "apply --kind cat --data in/ss.json --judgments out/from-stereoset-drop/j.jsonl --min-agree 2 "
        "--out out/apply-cat-json/c.jsonl --json",
    ),
    ("status-json", "status --judgments out/from-stereoset/j.csv --tasks 4 --overlap 5 --json"),
    ("status-md", "status --judgments out/from-stereoset/j.csv --tasks 6 --overlap 3 --question option_stereotype"),
    ("import", "import --export in/export.json --users in/users.csv --out out/import/j.csv"),
    (
        "apply-tuple",
        "apply --kind tuple --data in/tuples.jsonl --judgments out/import/j.csv --out out/apply-tuple/t.jsonl",
    ),
    ("status-import", "status --judgments out/import/j.csv --tasks 2 --overlap 2 --min-others 1"),
    ("guidelines", "guidelines --kind pair --lang en,hi --out out/guidelines/g.md"),
    ("config", "config --kind cat"),
    ("prelabel", "prelabel --kind tuple --data in/tuples.jsonl --llm dummy --out out/prelabel/llm.csv"),
    ("prelabel-dry-run", "prelabel --kind tuple --data in/tuples.jsonl --llm dummy --dry-run --show 1 --out out/x.csv"),
]

_TIME = re.compile(r'("(?:created_at|[a-z_]+_s|seconds|elapsed)": )("[^"]*"|[0-9.eE+-]+|null)')
_ISO = re.compile(r"\b\d{4}-\d\d-\d\dT\d\d:\d\d:\d\d(?:\.\d+)?(?:[+-]\d\d:\d\d|Z)?")


def normalise(text: str) -> str:
    return _ISO.sub("<TIME>", _TIME.sub(r'\1"<TIME>"', text))


@pytest.fixture(scope="module")
def runs(work):
    done = {}
    old, env = Path.cwd(), {k: os.environ.get(k) for k in ("COLUMNS", "BIASKIT_CACHE_DIR")}
    os.chdir(work)
    os.environ["COLUMNS"] = "120"
    os.environ["BIASKIT_CACHE_DIR"] = str(work / "cache")  # the dummy LLM's replies: none read from before
    try:
        for case, args, *_ in CASES:
            done[case] = run(["annotate", *args.split()])
    finally:
        os.chdir(old)
        for k, v in env.items():
            if v is None:
                os.environ.pop(k, None)
            else:
                os.environ[k] = v
    return done


def text_of(rel: str, p: Path) -> str:
    return "<present>\n" if rel.endswith(".runlog.jsonl") else normalise(p.read_text(encoding="utf-8"))


@pytest.mark.parametrize("case, exit_code", [(c[0], c[2] if len(c) > 2 else 0) for c in CASES])
def test_outputs_are_the_recorded_ones(work, runs, case, exit_code):
    code, said = runs[case]
    assert code == exit_code, (case, said[-3000:])
    got = outputs(work / "out" / case)
    want_dir = GOLDEN / case
    if UPDATE:
        shutil.rmtree(want_dir, ignore_errors=True)
        want_dir.mkdir(parents=True)
        (want_dir / "output.txt").write_text(normalise(said), encoding="utf-8")
        for rel, p in got.items():
            dest = want_dir / "files" / rel
            dest.parent.mkdir(parents=True, exist_ok=True)
            dest.write_text(text_of(rel, p), encoding="utf-8")
        return
    assert normalise(said) == (want_dir / "output.txt").read_text(encoding="utf-8"), "terminal output"
    want = outputs(want_dir / "files")
    assert sorted(got) == sorted(want), "the files written"
    for rel, p in got.items():
        assert text_of(rel, p) == want[rel].read_text(encoding="utf-8"), rel
