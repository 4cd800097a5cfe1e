"""The `biaskit annotate` reports write the same bytes as the recorded runs in tests/golden/annot/
(issue 30: the options models of aggregate / agreement / judge-agreement / replay / report and the
step-sized functions behind them changed no output).

Each case runs one command, as a user types it, on small inputs made here (StereoSet's demo labels
shipped in data/demo, the blind translation review of tests/test_mt_review.py, people and an LLM
judging tuples drawn from a fixed seed), in a folder of fixed names (the working directory during
the run, so every path a file records is relative). Every file a case writes is recorded whole, with
what the command printed (output.txt), after one normalisation: times (``created_at``, durations)
become ``<TIME>``.

The recorded copies were written by the code before the change (``BIASKIT_UPDATE_GOLDEN=1 pytest
tests/test_annot_golden.py`` rewrites them: only for a change that means to change an output).
"""

from __future__ import annotations

import os
import random
import shutil
from pathlib import Path

import pytest
from goldens import outputs, run
from test_eval_golden import normalise
from test_mt_review import JUDGMENTS, RECS

from biaskit.io import write_jsonl

GOLDEN = Path(__file__).parent / "golden" / "annot"
REPO = Path(__file__).resolve().parent.parent
UPDATE = os.environ.get("BIASKIT_UPDATE_GOLDEN") == "1"


def _people_and_llm() -> tuple[list[dict], list[dict]]:
    """40 tuples, 3 to 5 people each and two LLMs, on two questions and three axes (seeded draws: a
    person is right 80% of the time, one LLM 85%, the other 60%)."""
    rng = random.Random(7)
    people, llm = [], []
    for t in range(40):
        axis = ("caste", "gender", "religion")[t % 3]
        for q in ("stereotype", "offensive"):
            truth = rng.random() < 0.5
            for w in range(3 + t % 3):
                said = truth if rng.random() < 0.8 else not truth
                people.append(
                    {"task": f"t{t:02d}", "worker": f"p{w}", "question": q, "label": "yes" if said else "no"}
                    | {"kind": "tuple", "bias_type": axis}
                )
            for model, right in (("good", 0.85), ("weak", 0.6)):
                said = truth if rng.random() < right else not truth
                llm.append(
                    {"task": f"t{t:02d}", "worker": f"llm:{model}", "question": q, "label": "yes" if said else "no"}
                    | {"kind": "tuple"}
                )
    return people, llm


@pytest.fixture(scope="module")
def work(tmp_path_factory):
    root = tmp_path_factory.mktemp("annot-golden")
    inp = root / "in"
    inp.mkdir()
    shutil.copy(REPO / "data" / "demo" / "stereoset_labels_demo.json", inp / "dev.json")
    shutil.copy(REPO / "data" / "demo" / "demo_pairs.jsonl", inp / "pairs.jsonl")
    write_jsonl(inp / "cands.jsonl", RECS)
    write_jsonl(inp / "review.jsonl", JUDGMENTS)
    people, llm = _people_and_llm()
    write_jsonl(inp / "people.jsonl", people)
    write_jsonl(inp / "llm.jsonl", llm)
    return root


# (case, arguments after `biaskit annotate`, what it writes under out/): run in order (later cases read earlier
# outputs); `{out}` is the case's output path
CASES = [
    ("from-stereoset", "from-stereoset --data in/dev.json --other-labels drop --out {out}/j.csv", "j.csv"),
    ("aggregate", "aggregate --judgments out/from-stereoset/j.csv --kind cat --out {out}/agg.csv", "agg.csv"),
    (
        "aggregate-ds",
        "aggregate --judgments out/from-stereoset/j.csv --method dawid-skene --ties drop --labels "
        "stereotype,anti-stereotype,unrelated,related --out {out}/agg.jsonl",
        "agg.jsonl",
    ),
    ("agreement", "agreement --judgments out/from-stereoset/j.csv --data in/dev.json --out {out}", None),
    (
        "agreement-people",
        "agreement --judgments in/people.jsonl --duplicates last --min-overlap 3 --min-agree 2 --out {out}",
        None,
    ),
    (
        "replay-exact",
        "replay --judgments out/from-stereoset/j.csv --kind cat --unit item --out {out}/replay.json",
        "replay.json",
    ),
    (
        "replay-risk",
        "replay --judgments in/people.jsonl --policy risk --epsilon 0.05 --min-judgments 2 --max-judgments 5 "
        "--out {out}/replay.json",
        "replay.json",
    ),
    ("judge", "judge-agreement --judgments in/people.jsonl --llm in/llm.jsonl --out {out}", None),
    (
        "judge-strict",
        "judge-agreement --judgments in/people.jsonl --llm in/llm.jsonl --min-agree 3 "
        "--tolerance 0.05 --kind tuple --out {out}",
        None,
    ),
    (
        "apply-translation",
        "apply --kind translation --data in/cands.jsonl --judgments in/review.jsonl --out {out}/hi.jsonl "
        "--report-dir {out}/report",
        "hi.jsonl",
    ),
    (
        "report-translation",
        "report --kind translation --data in/cands.jsonl --applied out/apply-translation/hi.jsonl --out {out}",
        None,
    ),
]


@pytest.fixture(scope="module")
def runs(work):
    done = {}
    old, env = Path.cwd(), os.environ.get("COLUMNS")
    os.chdir(work)
    os.environ["COLUMNS"] = "120"
    try:
        for case, args, file_out in CASES:
            out = Path("out") / case
            if file_out:
                out.mkdir(parents=True, exist_ok=True)
            done[case] = run(["annotate", *args.format(out=out).split()])
    finally:
        os.chdir(old)
        if env is None:
            os.environ.pop("COLUMNS", None)
        else:
            os.environ["COLUMNS"] = env
    return done


@pytest.mark.parametrize("case", [c for c, _, _ in CASES])
def test_outputs_are_the_recorded_ones(work, runs, case):
    code, said = runs[case]
    assert code == 0, (case, said[-3000:])
    got = outputs(work / "out" / case)
    want_dir = GOLDEN / case
    if UPDATE:
        shutil.rmtree(want_dir, ignore_errors=True)
        want_dir.mkdir(parents=True)
        (want_dir / "output.txt").write_text(normalise("<output>", said), encoding="utf-8")
        for rel, p in got.items():
            dest = want_dir / "files" / rel
            dest.parent.mkdir(parents=True, exist_ok=True)
            dest.write_text(normalise(rel, p.read_text(encoding="utf-8")), encoding="utf-8")
        return
    assert normalise("<output>", said) == (want_dir / "output.txt").read_text(encoding="utf-8"), "terminal output"
    want = outputs(want_dir / "files")
    assert sorted(got) == sorted(want)
    for rel, p in got.items():
        assert normalise(rel, p.read_text(encoding="utf-8")) == want[rel].read_text(encoding="utf-8"), rel
