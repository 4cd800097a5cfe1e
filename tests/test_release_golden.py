"""`biaskit release build | verify | export | diff` write the same bytes as the recorded runs in
tests/golden/release (issue 30: the options models and the step-sized functions changed no output).

Each case runs one command, as a user types it, on inputs made here: the demo pairs (English and
Hindi views) with hand-made records beside them (LLM drafts edited by annotators, a reviewed machine
translation, a CrowS-Pairs adaptation, a flagged pair), CATs (an English one validated by three
people, a Hindi translation written by reviewers), tuples, and one stage report of every kind the
history reads (run log, checker output, agreement, apply summary and dropped rows, translation
report and dropped rows, adapt report, CAT retention, generation errors, earlier records). The
pseudonym key is a fixed file, so the annotators' pseudonyms are the same on every run. The cases run
in a folder of fixed names (the working directory), so every path a file records is relative.

Each file a command writes is compared with its recorded copy: text after one normalisation (times
and durations such as ``created_at`` or ``*_s`` become ``<TIME>``), other files (Parquet) by their
bytes, plots (PNG) by presence; what the command prints is compared too (output.txt). The card, the
release.json and the diff of each case are recorded whole (a failure shows the difference); the other
files by the SHA-256 of their normalised text or bytes (MANIFEST).

The recorded copies were written by the code before the change (``BIASKIT_UPDATE_GOLDEN=1 pytest
tests/test_release_golden.py`` rewrites them: only for a change that means to change an output).
"""

from __future__ import annotations

import hashlib
import json
import os
import re
import shlex
from pathlib import Path

import pytest
from goldens import compare, outputs, run

GOLDEN = Path(__file__).parent / "golden" / "release"
REPO = Path(__file__).resolve().parent.parent
UPDATE = os.environ.get("BIASKIT_UPDATE_GOLDEN") == "1"

ALICE, BOB, CAROL = "alice@example.org", "bob@example.org", "carol@example.org"
GEN = {
    "model": "gemma3-270m",
    "endpoint": "http://127.0.0.1:9/v1",
    "request_hash": "0" * 64,
    "timestamp": "2025-01-01T00:00:00+00:00",
    "prompt_version": "2",
}
KEY = "0123456789abcdef" * 4  # the pseudonym key (64 hex digits)


def _jsonl(path: Path, rows: list[dict]) -> None:
    path.write_text("".join(json.dumps(r, ensure_ascii=False) + "\n" for r in rows), encoding="utf-8")


def _pair(i: int, group: str, other: str, *, lang: str = "en", **kw) -> dict:
    r = {
        "sent_more": f"{group} people number {i} are lazy.",
        "sent_less": f"{other} people number {i} are lazy.",
        "direction": "stereo",
        "bias_type": "religion",
        "lang": lang,
        "group_more": group,
        "group_less": other,
        "status": "accepted",
        "source_id": f"hand-{i}",
    }
    r.update(kw)
    return r


def _hand_pairs() -> list[dict]:
    """Pairs whose provenance covers each way a text is written and validated."""
    drafted = {
        "source": "biaskit-curate",
        "generation": {**GEN, "task": "sentences", "prompt_id": "sentences"},
        "edits": [{"field": "sent_more", "original": "x", "edited": "y", "annotators": [ALICE], "editors": 1}],
    }
    validated = {"annotation": {"validity": {"label": "stereo", "n_annotators": 3}, "direction_before": "anti"}}
    rows = [
        _pair(i, g, h, provenance=drafted, meta=validated)
        for i, (g, h) in enumerate([("Parsi", "Jain"), ("Jew", "Buddhist"), ("Jain", "Parsi")])
    ]
    rows.append(
        _pair(
            0,
            "पारसी",
            "जैन",
            lang="hi",
            sent_more="पारसी लोग नंबर 0 आलसी हैं।",
            sent_less="जैन लोग नंबर 0 आलसी हैं।",
            provenance={"source": "translation-review", "engine": "google", "model": "nmt"},
            meta={"review": {"reviewers": [{"worker": BOB}, {"worker": CAROL}], "n_reviewers": 2, "edited": True}},
        )
    )
    rows.append(
        _pair(
            5,
            "atheist",
            "believer",
            direction="antistereo",
            provenance={"source": "crows-pairs", "adapted_by": "biaskit curate adapt"},
            meta={"anon_writer": "w17"},
        )
    )
    rows.append(
        _pair(9, "Jew", "Hindu", status="flagged", meta={"flags": [{"code": "multi_span", "reason": "2 spans"}]})
    )
    return rows


def _cats() -> list[dict]:
    from biaskit.schema import CAT

    fills = {"stereotype": "strict", "anti-stereotype": "relaxed", "unrelated": "triangular"}
    labels = [{"label": "stereotype", "annotator": w} for w in (ALICE, BOB, CAROL)]
    en = [
        CAT(
            split=split,
            target=t,
            bias_type="religion",
            context=f"The {t} neighbour was very BLANK." if split == "intrasentence" else f"I met a {t} neighbour.",
            options=[
                {
                    "sentence": f"The {t} neighbour was very {w}." if split == "intrasentence" else f"They were {w}.",
                    "gold_label": g,
                    "human_labels": [{**lab, "label": g} for lab in labels],
                }
                for g, w in fills.items()
            ],
            provenance={**GEN, "task": "cat_intrasentence", "prompt_id": "cat_intrasentence"},
            meta={"annotation": {g: {"validators": 3, "agree": 3, "min_agree": 2} for g in fills}},
        )
        for t, split in (("Muslim", "intrasentence"), ("Hindu", "intersentence"), ("Sikh", "intrasentence"))
    ]
    src = en[0]
    hi = CAT(
        split="intrasentence",
        target="मुस्लिम",
        bias_type="religion",
        context="मुस्लिम पड़ोसी बहुत BLANK था।",
        options=[
            {"sentence": f"मुस्लिम पड़ोसी बहुत {w} था।", "gold_label": g}
            for g, w in (("stereotype", "सख़्त"), ("anti-stereotype", "सहज"), ("unrelated", "तिकोना"))
        ],
        lang="hi",
        source_id=src.cat_id,
        provenance={
            "source": "cat-translation-review",
            "source_cat_id": src.cat_id,
            "engine": "review",
            "model": None,
            "source_provenance": dict(src.provenance),
        },
        meta={
            "review": {
                "reviewers": [{"worker": BOB, "choice": "none"}, {"worker": CAROL, "choice": "none"}],
                "editors": [BOB, CAROL],
                "winner_engine": "review",
                "edited": True,
                "n_reviewers": 2,
            }
        },
    )
    return [c.model_dump(mode="json") for c in [*en, hi]]


TUPLES = [
    {"identity": ident, "attribute": attr, "axis": "religion", "polarity": pol, "status": "accepted"}
    for ident, attr, pol in (
        ("Muslims", "violent", "negative"),
        ("Sikhs", "brave", "positive"),
        ("Parsis", "stingy", "negative"),
        ("Christians", "kind", "positive"),
    )
]


def _history(inp: Path) -> list[str]:
    """One report of every kind the release's history reads; returns the --history arguments."""
    import pandas as pd
    from biaskit.annotation.agreement import agreement_report
    from biaskit.annotation.judgment_options import AgreementOptions

    # discovered beside pairs.jsonl: STEM.summary.json, STEM.rejected.jsonl, STEM.runlog.jsonl
    (inp / "pairs.summary.json").write_text(
        json.dumps({"records": 9, "accepted": 6, "rejected": 2, "needs_adjudication": 1, "not_annotated": 0})
    )
    _jsonl(
        inp / "pairs.rejected.jsonl",
        [
            {"id": "p-x", "status": "rejected", "reason": "annotators: not a valid pair"},
            {"id": "p-y", "status": "rejected", "reason": "annotators: not a valid pair"},
            {"id": "p-z", "status": "needs_adjudication", "reason": "tie"},
        ],
    )
    _jsonl(
        inp / "pairs.runlog.jsonl",
        [
            {
                "command": "biaskit curate sentences --n 4",
                "started": f"2025-01-0{d}T00:00:00",
                "jobs": 4,
                "rows": 12,
                "errors": d - 1,
                "model": "smollm2",
                "prompt_id": "sentences",
                "prompt_version": "2",
                "params": {"temperature": 0.7},
                "llm": {"requests": 4},
            }
            for d in (1, 2)
        ],
    )
    judg = pd.DataFrame(
        {
            "task": [f"t{i}" for i in range(6) for _ in range(3)],
            "worker": [ALICE, BOB, CAROL] * 6,
            "question": "validity",
            "label": ["stereo", "stereo", "stereo", "stereo", "anti", "invalid"] * 3,
        }
    )
    judg.to_csv(inp / "judgments.csv", index=False)
    agreement_report(
        AgreementOptions(judgments=inp / "judgments.csv", out=inp / "agree"), command="biaskit annotate agreement"
    )
    _jsonl(
        inp / "check.jsonl",
        [
            {"sent_more": "a b", "sent_less": "c b", "lang": "en", "row": 1, "flags": []},
            {"sent_more": "a d", "sent_less": "c e", "lang": "en", "row": 2, "flags": [{"code": "multi_span"}]},
            {"sent_more": "x", "sent_less": "y", "lang": "hi", "row": 3, "flags": [{"code": "no_identity"}]},
        ],
    )
    (inp / "translation.json").write_text(
        json.dumps(
            {
                "pairs": {"candidates": 5, "reviewed": 5, "released": 4, "returned_to_review": 1},
                "engines": {
                    "google:nmt": {
                        "candidates_shown": 5,
                        "final_wins": 3,
                        "final_win_rate": 0.75,
                        "reviewer_choices": 6,
                        "reviewer_choice_rate": 0.6,
                    },
                    "indictrans2:1b": {
                        "candidates_shown": 5,
                        "final_wins": 1,
                        "final_win_rate": 0.25,
                        "reviewer_choices": 4,
                        "reviewer_choice_rate": 0.4,
                    },
                },
                "edit_rate": 0.25,
                "none_choices": 1,
                "returned_reasons": {"meaning changed": 1},
            }
        )
    )
    _jsonl(
        inp / "translation.rejected.jsonl",
        [{"candidates": ["a", "b"], "review": {}, "status": "rejected"}],
    )
    (inp / "adapt.json").write_text(
        json.dumps(
            {
                "read": 10,
                "kept": 7,
                "by_type": {"religion": 4, "gender": 3},
                "changed": 5,
                "names_replaced": 2,
                "lexicon_hits": 4,
                "flagged": 1,
                "dropped": 3,
            }
        )
    )
    (inp / "retention.json").write_text(
        json.dumps(
            {
                "rows": [{"split": "intrasentence", "domain": "religion", "drafted": 5, "valid": 4, "valid_pct": 80.0}],
                "totals": [{"split": "all", "domain": "religion", "drafted": 5, "valid": 4}],
                "overall": {"split": "all", "domain": "total", "drafted": 5, "valid": 4, "validated": 3},
                "problems": {"no_blank": 1},
                "validated": 3,
                "by_target": [{"target": "Muslim", "drafted": 2, "valid": 2}],
            }
        )
    )
    _jsonl(inp / "gen.errors.jsonl", [{"status": "parse_error", "job": 1}, {"status": "timeout", "job": 2}])
    _jsonl(inp / "drafts.jsonl", [{"sent_more": "a", "sent_less": "b", "status": "raw"}, {"text": "c"}])
    return [
        "agree/agreement.json",
        "check.jsonl",
        "hi-review=translation.json",
        "translation.rejected.jsonl",
        "adapt.json",
        "CAT retention=retention.json",
        "gen.errors.jsonl",
        "drafts.jsonl",
    ]


@pytest.fixture(scope="module")
def work(tmp_path_factory):
    """The inputs, in a folder of fixed names (``in/pairs.jsonl`` ...)."""
    root = tmp_path_factory.mktemp("golden-release")
    inp = root / "in"
    inp.mkdir()
    demo = [json.loads(line) for line in (REPO / "data" / "demo" / "demo_pairs.jsonl").read_text().splitlines()]
    _jsonl(inp / "pairs.jsonl", demo + _hand_pairs())
    _jsonl(inp / "cats.jsonl", _cats())
    _jsonl(inp / "tuples.jsonl", TUPLES)
    # the next version: one demo pair edited, one removed, one hand pair added
    v2 = [dict(r) for r in demo[2:]] + _hand_pairs() + [_pair(7, "Buddhist", "Jew")]
    v2[0]["sent_less"] = v2[0]["sent_less"].replace("son-in-law", "nephew")
    _jsonl(inp / "pairs2.jsonl", v2)
    _jsonl(
        inp / "kept.jsonl",
        [
            _pair(1, "Hindu", "Muslim", meta={"split": "dev"}),
            _pair(2, "Sikh", "Hindu", meta={"split": "test"}),
            _pair(3, "Jain", "Sikh", meta={"split": "test"}),
        ],
    )
    (inp / "ref.bib").write_text("@misc{golden2025,\n  title = {A golden release},\n  year = {2025}\n}\n")
    (inp / "card.md").write_text(
        "## Motivation\n\nTo measure religion bias in English and Hindi models.\n\n"
        "## Maintenance\n\nWrite to the maintainers at team@example.com.\n",
        encoding="utf-8",
    )
    (inp / "release.key").write_text(KEY + "\n")
    history = _history(inp)
    return root, [f"in/{h}" if "=" not in h else h.replace("=", "=in/", 1) for h in history]


def _cases(history: list[str]) -> list[tuple[str, str]]:
    """(case, arguments after `biaskit release`): each writes into out/<case>."""
    hist = " ".join(f"--history {shlex.quote(h)}" for h in history)
    common = "--date 2025-01-01 --pseudonym-key in/release.key --no-plots"
    return [
        (
            "build-v1",
            "build -r in/pairs.jsonl -r in/cats.jsonl -r in/tuples.jsonl --name golden --version 1.0.0 "
            f"{common} --license cc-by-4.0 --citation in/ref.bib --pretty-name 'Golden set' "
            f"--card-text in/card.md {hist} --out out/build-v1",
        ),
        (
            "build-v2",
            "build -r in/pairs2.jsonl -r in/cats.jsonl --name golden --version 1.1.0 --date 2025-02-01 "
            "--pseudonym-key in/release.key --plots --previous out/build-v1 --lang hi,en --dev-fraction 0.3 "
            "--seed 7 --no-discover --out out/build-v2",
        ),
        (
            "build-keep",
            f"build -r in/kept.jsonl --name kept --version 0.1.0 {common} --split-policy keep --no-keyness "
            "--kinds pairs --protocol crows --out out/build-keep",
        ),
        ("verify-v1", "verify out/build-v1"),
        ("verify-v2-json", "verify out/build-v2 --json"),
        ("verify-hub", "verify out/build-keep --hub-ready"),
        ("export-v1", "export out/build-v1 --lm-eval out/export-v1"),
        ("export-some", "export out/build-v2 --lm-eval out/export-some --prefix gold --split test --lang en,hi"),
        ("diff-print", "diff out/build-v1 out/build-v2"),
        (
            "diff-files",
            "diff out/build-v1 out/build-v2 --markdown out/diff-files/CHANGES.md --json out/diff-files/diff.json",
        ),
    ]


_TIME = re.compile(r'("(?:created_at|[a-z_]+_s|seconds|elapsed)": )("[^"]*"|[0-9.eE+-]+|null)')


def normalise(name: str, text: str, root: Path | None = None) -> str:
    """Times and durations as ``<TIME>`` (they differ on every run), the work folder as ``<WORK>`` (the
    lm-eval tasks name the release's Parquet files by their absolute path); nothing else."""
    if root is not None:
        text = text.replace(str(root), "<WORK>")
    text = _TIME.sub(r'\1"<TIME>"', text)
    text = re.sub(r"in \d+\.\d s\b", "in <TIME> s", text)  # `release build`'s "N files in 1.2 s"
    if name.endswith(".md"):
        text = re.sub(r"\b\d{4}-\d\d-\d\dT\d\d:\d\d:\d\d(?:\.\d+)?(?:[+-]\d\d:\d\d|Z)?", "<TIME>", text)
    return text


@pytest.fixture(scope="module")
def runs(work):
    """Every case, run once in order (later cases read earlier outputs), in the work folder."""
    root, history = work
    done = {}
    old, env = Path.cwd(), {k: os.environ.get(k) for k in ("COLUMNS",)}
    os.chdir(root)
    os.environ["COLUMNS"] = "120"
    try:
        for case, args in _cases(history):
            Path("out", case).parent.mkdir(parents=True, exist_ok=True)
            if case.startswith("diff-files"):
                Path("out", case).mkdir(parents=True, exist_ok=True)
            done[case] = run(["release", *shlex.split(args)])
    finally:
        os.chdir(old)
        for k, v in env.items():
            if v is None:
                os.environ.pop(k, None)
            else:
                os.environ[k] = v
    return done


WHOLE = ("README.md", "release.json", "CHANGES.md", "diff.json", "biaskit-lm-eval.json")


def kept_whole(rel: str) -> bool:
    """The files recorded in full (a failure shows the difference): the card, release.json, the diff."""
    return rel in WHOLE


def digest(rel: str, p: Path, root: Path) -> str:
    if p.suffix == ".png":
        return "png"
    data = p.read_bytes()
    try:
        text = data.decode("utf-8")
    except UnicodeDecodeError:  # Parquet: the bytes
        return hashlib.sha256(data).hexdigest()
    return hashlib.sha256(normalise(rel, text, root).encode("utf-8")).hexdigest()


CASE_NAMES = [c for c, _ in _cases([])]
FAILS = {"verify-hub"}  # a release without a licence is not ready for the Hub: exit 2


@pytest.mark.parametrize("case", CASE_NAMES)
def test_outputs_are_the_recorded_ones(work, runs, case):
    root, _ = work
    code, said = runs[case]
    assert code == (2 if case in FAILS else 0), (case, said[-3000:])
    folder = root / "out" / case
    got = outputs(folder)
    compare(
        GOLDEN / case,
        said,
        got,
        normalise=lambda rel, text: normalise(rel, text, root),
        kept_whole=kept_whole,
        digest=lambda rel, p: digest(rel, p, root),
        update=UPDATE,
    )
