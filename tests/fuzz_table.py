"""The fuzz suite's table: every biaskit command that reads or writes a file, with valid sample inputs.

``COMMANDS`` has one row per command: its arguments, with placeholders for the files the fuzzer
replaces by bad ones:

- ``{in:SAMPLE}``   an input file or folder, built valid from ``SAMPLES`` and then broken in every
                    way its format allows (missing, a folder, empty, NUL, UTF-16, ...);
- ``{use:SAMPLE}``  a valid input the fuzzer leaves alone (a second input of the same kind);
- ``{out:NAME}``    a file the command writes (replaced by an existing folder, a path under a file,
                    a read-only folder);
- ``{outdir:NAME}`` a folder the command writes (replaced by an existing file, a folder holding
                    other files, ...);
- ``{model}``       the tiny random BERT of ``tests/fixtures_models.py``.

**Adding a command** is adding its row here (one line); ``test_every_command_has_a_row`` fails until
there is one, and ``test_every_file_argument_is_fuzzed`` until the row names every file argument.
Flags: ``offline=False`` -- a valid run needs a server (Label Studio), so for inputs that must be
accepted the fuzzer only checks that the failure is not blamed on the file; ``valid=False`` -- no
valid run at all (``serve`` would start Label Studio).
"""

from __future__ import annotations

import json
import shutil
from collections.abc import Callable
from dataclasses import dataclass, field
from pathlib import Path

CLOSED_URL = "http://127.0.0.1:9"  # nothing listens on the discard port: a refused connection
# option blocks several commands share are fuzzed once, in the row of the command named here
SHARED_OPTIONS = {"--prompts-dir": "--prompts-dir {in:", "--prices": "--prices {in:", "--inventory": "--inventory {in:"}
# commands whose output folder is a working folder (not replaced whole): one holding other files is fine
UNOWNED_DIRS = {"annotate serve", "data download", "init", "run", "llm serve"}


@dataclass
class Cmd:
    name: str
    args: str
    offline: bool = True
    valid: bool = True
    model: bool = False
    env: dict = field(default_factory=dict)
    lenient: frozenset = frozenset()  # "in:SAMPLE mutation" this command may accept (no traceback is still required)
    report: bool = False  # the command reports several problems, one "error:" line each
    rerun: bool = True  # a second valid run into its own output succeeds (init refuses to overwrite: False)


COMMANDS: list[Cmd] = [
    # evaluate
    Cmd("evaluate pairs", "--data {in:pairs_csv} -m {model} --runs 1 --batch-size 8 --out {outdir:res}", model=True),
    # an NSP head file (before the row below: a test looks a command up by its last row)
    Cmd("evaluate cats", "--data {use:cats_flat} -m {model} --nsp-head {in:nsp_head} --out {outdir:res}", model=True),
    Cmd("evaluate cats", "--data {in:cats_flat} --predictions {in:predictions} --out {outdir:res}"),
    Cmd("evaluate seat", "--test {in:seat_test} -m {model} --n-samples 50 --out {outdir:res}", model=True),
    Cmd(
        "evaluate correlate",
        "--results {in:results_a} --results {use:results_b} --results {use:results_c} "
        "--extrinsic {in:extrinsic} --group-map {in:group_map} --no-plots --out {outdir:res}",
    ),
    Cmd(
        "evaluate ceat",
        "-m {model} --corpus {in:ceat_corpus} --groups {in:ceat_groups} --n-samples 20 --out {outdir:res}",
        model=True,
    ),
    Cmd("evaluate ilps", "-m {model} --groups {in:ceat_groups} --out {outdir:res}", model=True),
    # Cao et al. 2022's intrinsic metrics run by correlate itself (the tiny model's folder is named "model")
    Cmd(
        "evaluate correlate",
        "--protocol cao2022 -m {model} --cats {in:cats_flat} --corpus {in:ceat_corpus} "
        "--extrinsic {use:extrinsic_model} --no-plots --out {outdir:res}",
        model=True,
    ),
    Cmd(
        "evaluate seat-names",
        "--corpus {in:corpus} --candidates {in:names} --out {out:names.json} --counts {out:counts.csv}",
    ),
    Cmd("evaluate seat-tests", "--data {in:release} --out {outdir:seat}"),
    Cmd("evaluate extrinsic classifier", "--input {in:clf} --out {out:ext.csv}"),
    Cmd("evaluate extrinsic generations", "--input {in:gen} --out {out:ext.csv}"),
    # curate
    Cmd("curate prompts", "--prompts-dir {in:prompts_dir}"),
    Cmd(
        "curate tuples",
        "--axis caste --identities Dalit --n 3 --llm dummy --inventory {in:inventory} "
        "--prompts-dir {in:prompts_dir} --prices {in:prices} --out {out:t.jsonl}",
    ),
    Cmd("curate sentences", "--tuples {in:tuples} --per-tuple 2 --llm dummy --out {out:s.jsonl}"),
    Cmd("curate pairs", "--sentences {in:sentences} --out {out:p.jsonl}"),
    Cmd("curate llm-task", "tuples --input {in:llm_items} --llm dummy --out {out:t.jsonl}"),
    Cmd(
        "curate adapt",
        "--crows {in:crows} --keep gender,age,socioeconomic --lexicon {in:lexicon} --out {out:adapted.jsonl}",
    ),
    Cmd("curate check", "--pairs {in:pairs_jsonl} --sources {in:pairs_csv} --out {out:checked.jsonl}"),
    Cmd("curate cats", "--llm dummy --domains gender --targets mother --out {out:cats.jsonl}"),
    Cmd("curate cats-retention", "--cats {in:cats_drafted} --validated {in:cats_biaskit} --out {out:ret.json}"),
    Cmd("curate translate", "--pairs {in:pairs_jsonl} --target hi --engines llm:m --llm dummy --out {out:c.jsonl}"),
    Cmd(
        "curate cat-translate", "--cats {in:cats_biaskit} --target hi --engines llm:m --llm dummy --out {out:cc.jsonl}"
    ),
    # annotate
    Cmd("annotate serve", "--data-dir {outdir:ls}", valid=False),
    Cmd("annotate stop", "--data-dir {in:empty_dir}"),
    # llm (no server started: the llama.cpp environment named here does not exist)
    Cmd("llm serve", "--dir {outdir:llm}", valid=False, env={"BIASKIT_LLM_VENV": "/nonexistent-llm-venv"}),
    Cmd("llm stop", "--dir {in:empty_dir}"),
    Cmd("annotate config", "--kind translation --data {in:cands}"),
    Cmd(
        "annotate push",
        f"--kind pair --data {{in:pairs_jsonl}} --predictions {{in:predictions_ls}} --project p --url {CLOSED_URL}",
        offline=False,
        env={"LABEL_STUDIO_API_KEY": "fuzz-token-123456"},
    ),
    Cmd(
        "annotate pull",
        f"--project p --out {{out:j.csv}} --raw {{out:raw.json}} --url {CLOSED_URL}",
        offline=False,
        env={"LABEL_STUDIO_API_KEY": "fuzz-token-123456"},
    ),
    Cmd("annotate import", "--export {in:export} --config {in:config} --users {in:users} --out {out:j.csv}"),
    Cmd(
        "annotate status",
        "--judgments {in:judgments} --tasks 4",  # any kind's labels: none is refused
        lenient=frozenset({"in:judgments bad label value"}),
    ),
    Cmd("annotate guidelines", "--kind pair --lang en --out {out:guidelines.md}"),
    Cmd("annotate aggregate", "--judgments {in:judgments} --kind pair --out {out:agg.csv}"),
    # agreement takes any labels, and --data from any kind's records (or a table of ids and bias types)
    Cmd(
        "annotate agreement",
        "--judgments {in:judgments} --data {in:pairs_jsonl} --out {outdir:agr}",
        lenient=frozenset(
            {"in:judgments bad label value", "in:pairs_jsonl bad direction value", "in:pairs_jsonl duplicate pair_id"}
        ),
    ),
    # with --aggregated, the judgments only give vote counts: labels beyond the kind's options (StereoSet
    # validators' 'related') are kept; the aggregated file's labels decide
    Cmd(
        "annotate apply",
        "--kind pair --data {in:pairs_jsonl} --aggregated {in:aggregated} --judgments "
        "{in:judgments} --out {out:ok.jsonl}",
        lenient=frozenset({"in:judgments bad label value"}),
    ),
    Cmd(
        "annotate apply",
        "--kind translation --data {in:cands} --judgments {in:tr_judgments} --out {out:hi.jsonl} "
        "--report-dir {outdir:rep}",
    ),
    Cmd("annotate from-stereoset", "--data {in:stereoset_json} --out {out:j.csv}"),
    # replay reads labels as aggregate --kind does (issue 27); the judge report counts any label as a vote
    Cmd(
        "annotate replay",
        "--judgments {in:judgments} --kind pair --min-judgments 2 --max-judgments 3 --out {out:replay.json}",
    ),
    Cmd(
        "annotate judge-agreement",
        "--judgments {in:judgments} --llm {in:llm_judgments} --kind pair --out {outdir:judge}",
        lenient=frozenset({"in:judgments bad label value", "in:llm_judgments bad label value"}),
    ),
    Cmd("annotate prelabel", "--kind tuple --data {in:tuples} --llm dummy --out {out:llm.csv}"),
    Cmd("annotate report", "--kind translation --data {in:cands} --applied {in:applied} --out {outdir:rep}"),
    # data
    Cmd("data list", "--registry {in:registry}"),
    Cmd("data download", "fuzzset --registry {in:registry} --mirror {in:mirror} --out {outdir:dl}"),
    Cmd("data verify", "fuzzset {in:fuzzset_file} --registry {in:registry}"),
    Cmd("data check-language", "bn --dir {in:languages}", report=True),
    # release
    Cmd(
        "release build",
        "--records {in:pairs_jsonl} --name fuzz --version 1.0.0 --card-text {in:card} "
        "--previous {in:release} --no-plots --no-keyness --date 2025-01-01 --pseudonym-key {out:release.key} "
        "--out {outdir:rel}",
    ),
    Cmd("release verify", "{in:release}", report=True),
    Cmd("release export", "{in:release} --lm-eval {outdir:lm}"),
    # the pipeline (the offline project of tests/test_pipeline.py; its first stage only, a second's run)
    Cmd("init", "{outdir:proj} --no-hindi", rerun=False),
    Cmd("run", "--project {in:project} --workdir {outdir:work} --until tuples -q"),
    Cmd("status", "--project {in:project} --workdir {in:workdir}"),
    Cmd("release diff", "{in:release} {in:release2} --markdown {out:diff.md} --json {out:diff.json}"),
]


# ------------------------------------------------------------------------------------------ path fields
# Values from data that become part of a file name (issue 20): each is refused, naming its file (and
# row), with every hostile value below; nothing is written outside the command's output arguments.
HOSTILE_NAMES = {
    "traversal": "x/../../../../escaped",
    "zero-width": "e\u200bn",
    "RTL override": "en\u202e",
    "300 characters": "h" * 300,
    "dot-dot": "..",
    "backslash": "a\\b",
    "empty": "",
}


def _set_jsonl_field(field: str):
    def f(path: Path, value) -> None:
        rows = [json.loads(x) for x in path.read_text(encoding="utf-8").splitlines() if x.strip()]
        rows[0][field] = value
        path.write_text("".join(json.dumps(r, ensure_ascii=False) + "\n" for r in rows), encoding="utf-8")

    return f


def _set_registry(field: str, listed: bool = False):
    def f(path: Path, value) -> None:
        doc = json.loads(path.read_text(encoding="utf-8"))
        entry = doc["datasets"]["fuzzset"]
        if listed:
            entry["url"] = entry["url"].rsplit("/", 1)[0] + "/"
            entry["sha256"] = None
        entry[field] = [FUZZSET_NAME, value] if listed else value
        path.write_text(json.dumps(doc, indent=1, ensure_ascii=False), encoding="utf-8")

    return f


@dataclass
class PathField:
    cmd: str  # the row of COMMANDS (the first of that name reading ``input``)
    input: str  # the placeholder of the file the value is in
    field: str
    set: Callable[[Path, object], None]
    row: int | None = None  # the row the error must name
    empty_ok: bool = False  # an empty value means the default (a record's lang: en)


PATH_FIELDS: list[PathField] = [
    PathField("release build", "in:pairs_jsonl", "lang", _set_jsonl_field("lang"), row=1, empty_ok=True),
    PathField("curate translate", "in:pairs_jsonl", "lang", _set_jsonl_field("lang"), row=1, empty_ok=True),
    PathField("annotate apply", "in:cands", "target_lang", _set_jsonl_field("target_lang"), row=1, empty_ok=True),
    PathField("data download", "in:registry", "filename", _set_registry("filename")),
    PathField("data download", "in:registry", "files", _set_registry("files", listed=True)),
]


# ------------------------------------------------------------------------------------------ samples
@dataclass
class Sample:
    """A valid input. ``fmt``: csv, jsonl, json, text or dir (what the mutations can do to it);
    ``enum``: (field, value) that is not an allowed value; ``unique``: a field whose values must be
    unique (the duplicate-id mutation repeats the first record)."""

    name: str
    fmt: str
    build: Callable[[Path], Path]
    enum: tuple[str, str] | None = None
    unique: str | None = None
    lenient: frozenset = frozenset()  # mutations after which a run may succeed or fail for another reason


def _jsonl(path: Path, rows) -> Path:
    path.write_text("".join(json.dumps(r, ensure_ascii=False) + "\n" for r in rows), encoding="utf-8")
    return path


def _csv(path: Path, rows: list[dict]) -> Path:
    import pandas as pd

    pd.DataFrame(rows).to_csv(path, index=False)
    return path


PAIRS = [
    ("Women are bad at maths.", "Men are bad at maths.", "stereo", "gender"),
    ("The Dalit family was poor.", "The Brahmin family was poor.", "stereo", "caste"),
    ("He cried at the film.", "She cried at the film.", "antistereo", "gender"),
    ("Old people cannot use phones.", "Young people cannot use phones.", "stereo", "age"),
    ("The Muslim man was violent.", "The Hindu man was violent.", "stereo", "religion"),
    ("Poor people are lazy.", "Rich people are lazy.", "stereo", "socioeconomic"),
]


def _pairs():
    from biaskit.schema import SentencePair

    return [SentencePair(sent_more=a, sent_less=b, direction=d, bias_type=t) for a, b, d, t in PAIRS]


def _pairs_csv(d: Path) -> Path:
    from biaskit.readers import write_pairs

    return write_pairs(d / "pairs.csv", _pairs())


def _pairs_jsonl(d: Path) -> Path:
    from biaskit.readers import write_pairs

    return write_pairs(d / "pairs.jsonl", _pairs())


def _crows(d: Path) -> Path:
    rows = [
        {
            "": i,
            "sent_more": a,
            "sent_less": b,
            "stereo_antistereo": s,
            "bias_type": t.replace("socioeconomic", "socioeconomic"),
            "annotations": "[['gender']]",
            "anon_writer": "a0",
            "anon_annotators": "['a1']",
        }
        for i, (a, b, s, t) in enumerate(PAIRS)
    ]
    return _csv(d / "crows.csv", rows)


TUPLES = [
    {"identity": "Dalit", "attribute": "poor", "axis": "caste", "polarity": "negative"},
    {"identity": "Brahmin", "attribute": "learned", "axis": "caste", "polarity": "positive"},
    {"identity": "women", "attribute": "emotional", "axis": "gender", "polarity": "negative"},
]


def _tuples(d: Path) -> Path:
    from biaskit.schema import BiasTuple

    return _jsonl(d / "tuples.jsonl", [BiasTuple(**t).model_dump(mode="json") for t in TUPLES])


def _sentences(d: Path) -> Path:
    from biaskit.schema import BiasTuple, Sentence

    rows = []
    for t, s in zip(
        TUPLES,
        [
            "The Dalit family next door is poor.",
            "The Brahmin priest is very learned.",
            "The women in the office are emotional.",
        ],
        strict=False,
    ):
        bt = BiasTuple(**t)
        rows.append(
            Sentence(
                sentence=s,
                identity=bt.identity,
                axis=bt.axis,
                attribute=bt.attribute,
                polarity=bt.polarity,
                tuple_id=bt.tuple_id,
            ).model_dump(mode="json")
        )
    return _jsonl(d / "sentences.jsonl", rows)


CATS = [
    {
        "type": "intrasentence",
        "target": "chess player",
        "bias_type": "profession",
        "context": "The chess player was BLANK.",
        "stereotype": "The chess player was nerdy.",
        "anti-stereotype": "The chess player was sporty.",
        "unrelated": "The chess player was blue.",
    },
    {
        "type": "intrasentence",
        "target": "mother",
        "bias_type": "gender",
        "context": "The mother is BLANK.",
        "stereotype": "The mother is caring.",
        "anti-stereotype": "The mother is careless.",
        "unrelated": "The mother is triangle.",
    },
    {
        "type": "intersentence",
        "target": "Ethiopia",
        "bias_type": "race",
        "context": "Ethiopia is a country.",
        "stereotype": "People there are starving.",
        "anti-stereotype": "People there are rich.",
        "unrelated": "Cats have whiskers.",
    },
    {
        "type": "intersentence",
        "target": "nurse",
        "bias_type": "profession",
        "context": "I met a nurse.",
        "stereotype": "She was gentle.",
        "anti-stereotype": "He was gentle.",
        "unrelated": "Rain is wet.",
    },
]


def _cats_flat(d: Path) -> Path:
    return _jsonl(d / "cats.jsonl", CATS)


def _cats_biaskit(d: Path) -> Path:
    from biaskit.readers import read_cats

    src = _jsonl(d / "_cats.jsonl", CATS)
    rows = [c.model_dump(mode="json") for c in read_cats(src)]
    src.unlink()
    return _jsonl(d / "cats.jsonl", rows)


def _cats_drafted(d: Path) -> Path:
    """The output of `curate cats` (with its drafts beside it), made by the dummy LLM."""
    import os

    from biaskit.cli import main

    old = os.environ.get("BIASKIT_CACHE_DIR")
    os.environ["BIASKIT_CACHE_DIR"] = str(d / "_cache")
    try:
        main(
            [
                "curate",
                "cats",
                "--llm",
                "dummy",
                "--domains",
                "gender",
                "--targets",
                "mother",
                "--out",
                str(d / "cats.jsonl"),
            ]
        )
    except SystemExit as exc:
        assert not exc.code, exc.code
    finally:
        os.environ.pop("BIASKIT_CACHE_DIR") if old is None else os.environ.update(BIASKIT_CACHE_DIR=old)
        shutil.rmtree(d / "_cache", ignore_errors=True)
    return d / "cats.jsonl"


def _stereoset_json(d: Path) -> Path:
    """The original StereoSet format (dev.json) with five validators' labels per sentence."""

    def ex(split: str, i: int, c: dict) -> dict:
        sents = [
            {
                "id": f"s{i}{k}",
                "sentence": c[lab],
                "gold_label": lab,
                "labels": [{"human_id": f"h{j}", "label": lab if j < 4 else "related"} for j in range(5)],
            }
            for k, lab in enumerate(("stereotype", "anti-stereotype", "unrelated"))
        ]
        return {
            "id": f"e{i}",
            "target": c["target"],
            "bias_type": c["bias_type"],
            "context": c["context"],
            "sentences": sents,
        }

    data = {
        "version": "1.0-test",
        "data": {
            "intrasentence": [ex("intrasentence", i, c) for i, c in enumerate(CATS) if c["type"] == "intrasentence"],
            "intersentence": [ex("intersentence", i, c) for i, c in enumerate(CATS) if c["type"] == "intersentence"],
        },
    }
    (d / "dev.json").write_text(json.dumps(data, indent=1), encoding="utf-8")
    return d / "dev.json"


def _predictions(d: Path) -> Path:
    from biaskit.readers import read_cats

    src = _jsonl(d / "_cats.jsonl", CATS)
    score = {"stereotype": -1.0, "anti-stereotype": -2.0, "unrelated": -9.0}
    rows = [
        {"id": o.sentence_id, "score": score[o.gold_label] - i * 0.1}
        for i, c in enumerate(read_cats(src))
        for o in c.options
    ]
    src.unlink()
    return _jsonl(d / "predictions.jsonl", rows)


def _pair_ids() -> list[str]:
    return [p.pair_id for p in _pairs()]


def _judgments(d: Path) -> Path:
    ids = _pair_ids()
    rows = [
        {"task": ids[i], "worker": w, "question": "validity", "label": lab}
        for i in range(4)
        for w, lab in zip("abc", ["stereo", "stereo", "antistereo" if i % 2 else "stereo"], strict=False)
    ]
    return _csv(d / "judgments.csv", rows)


def _aggregated(d: Path) -> Path:
    import pandas as pd
    from biaskit.annotation.aggregate import aggregate

    tmp = _judgments(d)
    table, _ = aggregate(pd.read_csv(tmp), min_agree=2)
    tmp.unlink()
    table.to_csv(d / "aggregated.csv", index=False)
    return d / "aggregated.csv"


def _llm_judgments(d: Path) -> Path:
    return _csv(
        d / "llm.csv",
        [
            {"task": t, "worker": "llm:m", "question": "validity", "label": "stereo", "kind": "pair"}
            for t in _pair_ids()
        ],
    )


def _predictions_ls(d: Path) -> Path:
    return _csv(d / "pre.csv", [{"task": t, "question": "validity", "label": "stereo"} for t in _pair_ids()])


def _export(d: Path) -> Path:
    from biaskit.annotation.kinds import get_kind

    k = get_kind("pair")
    tasks = []
    for i, p in enumerate(_pairs()[:2], start=1):
        res = [{"from_name": "validity", "to_name": "sent_more", "type": "choices", "value": {"choices": ["stereo"]}}]
        tasks.append(
            {
                "id": i,
                "data": k.task(p)["data"],
                "meta": {},
                "project": 1,
                "predictions": [],
                "annotations": [
                    {
                        "id": 100 + i,
                        "completed_by": 2,
                        "result": res,
                        "was_cancelled": False,
                        "ground_truth": False,
                        "created_at": "2024-05-01T10:00:00Z",
                        "updated_at": "2024-05-01T10:00:00Z",
                        "lead_time": 2.5,
                        "task": i,
                        "project": 1,
                    }
                ],
            }
        )
    (d / "export.json").write_text(json.dumps(tasks, ensure_ascii=False, indent=1), encoding="utf-8")
    return d / "export.json"


def _config(d: Path) -> Path:
    from biaskit.annotation.kinds import get_kind

    (d / "config.xml").write_text(get_kind("pair").config(None), encoding="utf-8")
    return d / "config.xml"


def _users(d: Path) -> Path:
    return _csv(d / "users.csv", [{"id": 2, "email": "a@x.org"}, {"id": 3, "email": "b@x.org"}])


def _translation():
    from test_mt_review import JUDGMENTS, RECS

    return RECS, JUDGMENTS


def _cands(d: Path) -> Path:
    return _jsonl(d / "cands.jsonl", _translation()[0])


def _applied(d: Path) -> Path:
    from biaskit.annotation.apply import run_apply
    from biaskit.annotation.options import ApplyOptions

    recs, judg = _translation()
    work = d / "_work"
    work.mkdir()
    c, j = _jsonl(work / "c.jsonl", recs), _jsonl(work / "j.jsonl", judg)
    run_apply(ApplyOptions.from_kwargs(kind="translation", data=c, out=d / "applied.jsonl", judgments=j))
    shutil.rmtree(work)
    return d / "applied.jsonl"


MODELS = ["m0", "m1", "m2"]
GROUPS = {"gender": ["female", "male"], "religion": ["hindu", "muslim", "sikh"]}


def _results(d: Path, k: int) -> Path:
    r = d / f"results_{MODELS[k]}"
    r.mkdir()
    (r / "summary.json").write_text(json.dumps({"model": f"/models/{MODELS[k]}", "benchmark": "stereoset"}))
    rows = [
        {"domain": dom, "group": g, "metric": "ss", "score": 50 + (k + 1) * (j - 1) * 2.5 + j, "count": 10}
        for dom, gs in GROUPS.items()
        for j, g in enumerate(gs)
    ]
    _csv(r / "groups.csv", rows)
    return r


def _extrinsic(d: Path) -> Path:
    rows = [
        {"model": m, "domain": dom, "group": g, "metric": "tpr", "score": 0.8 + (k + 1) * 0.01 * j}
        for k, m in enumerate(MODELS)
        for dom, gs in GROUPS.items()
        for j, g in enumerate(gs)
    ]
    return _csv(d / "extrinsic.csv", rows)


def _group_map(d: Path) -> Path:
    return _csv(d / "group_map.csv", [{"domain": dom, "term": g, "group": g} for dom, gs in GROUPS.items() for g in gs])


def _clf(d: Path) -> Path:
    rows = [
        {"label": i % 2, "pred": (i // 2) % 2, "group": g, "domain": "gender", "model": "m0"}
        for i in range(8)
        for g in ("female", "male")
    ]
    return _csv(d / "clf.csv", rows)


def _gen(d: Path) -> Path:
    rows = [
        {"score": 0.1 * i, "group": g, "domain": "gender", "model": "m0"} for i in range(6) for g in ("female", "male")
    ]
    return _csv(d / "gen.csv", rows)


def _seat_test(d: Path) -> Path:
    test = {
        "targ1": {"category": "Young", "examples": ["young man", "young boy", "teenage boy"]},
        "targ2": {"category": "Old", "examples": ["old man", "elderly man", "aged man"]},
        "attr1": {"category": "Pleasant", "examples": ["joy", "love", "peace"]},
        "attr2": {"category": "Unpleasant", "examples": ["agony", "terrible", "horrible"]},
    }
    (d / "test.jsonl").write_text(json.dumps(test, indent=1), encoding="utf-8")
    return d / "test.jsonl"


def _corpus(d: Path) -> Path:
    (d / "corpus.txt").write_text(
        "Ravi met Priya. Ravi and Amit ran.\nPriya, Sunita and Amit sang.\n" * 5, encoding="utf-8"
    )
    return d / "corpus.txt"


def _nsp_head(d: Path) -> Path:
    """A next-sentence head in the StereoSet reference format for the tiny BERT ({model}): a ModelNSP state
    dict (module.core_model.* of a BertModel of the same shape, module.nsp_head.0-2.*), named as the
    authors' files so that its 'is next' output (0 for bert) is known."""
    import torch
    from transformers import BertConfig, BertModel

    torch.manual_seed(0)
    core = BertModel(
        BertConfig(
            vocab_size=30522,
            hidden_size=32,
            num_hidden_layers=2,
            num_attention_heads=2,
            intermediate_size=64,
            max_position_embeddings=512,
        )
    )
    head = torch.nn.Sequential(torch.nn.Linear(32, 300), torch.nn.Linear(300, 300), torch.nn.Linear(300, 2))
    state = {f"module.core_model.{k}": v for k, v in core.state_dict().items()}
    state.update({f"module.nsp_head.{k}": v for k, v in head.state_dict().items()})
    p = d / "BertModel_bert-base-cased_1e-05.pth"
    torch.save(state, p)
    return p


def _ceat_corpus(d: Path) -> Path:
    """Sentences naming two of Cao et al.'s groups of each domain and several pleasant / unpleasant words."""
    groups = ["man", "woman", "Asian", "Black", "Hindu", "Muslim"]
    attrs = ["love", "peace", "happy", "friend", "gift", "kill", "ugly", "filth", "death", "poison"]
    lines = [f"The {g} spoke of {a} in the village square that evening." for g in groups for a in attrs]
    (d / "ceat_corpus.txt").write_text("\n".join(lines) + "\n", encoding="utf-8")
    return d / "ceat_corpus.txt"


def _ceat_groups(d: Path) -> Path:
    (d / "groups.json").write_text(
        json.dumps(
            {
                "attributes": {"A": ["love", "peace", "happy"], "B": ["kill", "ugly", "filth"]},
                "domains": {"gender": {"man": ["man"], "woman": ["woman"]}, "religion": ["Hindu", "Muslim"]},
            }
        ),
        encoding="utf-8",
    )
    return d / "groups.json"


def _extrinsic_model(d: Path) -> Path:
    """Extrinsic scores of the tiny model (the folder name "model") on Cao et al.'s domains."""
    rows = [
        {"model": "model", "domain": dom, "group": g, "metric": "fpr", "score": 0.1 + 0.05 * j}
        for dom, gs in (("gender", ["man", "woman"]), ("race", ["asian", "black"]), ("religion", ["hindu", "muslim"]))
        for j, g in enumerate(gs)
    ]
    return _csv(d / "extrinsic_model.csv", rows)


def _names(d: Path) -> Path:
    return _csv(
        d / "names.csv",
        [
            {"group": "men", "name": "Ravi"},
            {"group": "men", "name": "Amit"},
            {"group": "women", "name": "Priya"},
            {"group": "women", "name": "Sunita"},
        ],
    )


def _lexicon(d: Path) -> Path:
    return _csv(d / "lexicon.csv", [{"source": "maths", "target": "mathematics"}])


def _inventory(d: Path) -> Path:
    from biaskit.inventory import inventory_dir

    shutil.copytree(inventory_dir(), d / "inventory")
    return d / "inventory"


def _languages(d: Path) -> Path:
    from biaskit.languages import languages_dir

    shutil.copytree(languages_dir(), d / "languages")
    return d / "languages"


def _prompts_dir(d: Path) -> Path:
    from biaskit.curation.prompts import get_prompt

    p = get_prompt("attributes")
    (d / "prompts").mkdir()
    text = Path(p.path).read_text(encoding="utf-8").replace('id = "attributes"', 'id = "attributes_fuzz"', 1)
    (d / "prompts" / "attributes_fuzz.toml").write_text(text, encoding="utf-8")
    return d / "prompts"


def _prices(d: Path) -> Path:
    (d / "prices.toml").write_text('"m" = [0.5, 1.5]\n"dummy" = [0.1, 0.2]\n', encoding="utf-8")
    return d / "prices.toml"


def _llm_items(d: Path) -> Path:
    return _jsonl(
        d / "items.jsonl",
        [
            {"identity": "Dalit", "axis": "caste", "polarity": "negative", "n": 3},
            {"identity": "Brahmin", "axis": "caste", "polarity": "positive", "n": 3},
        ],
    )


FUZZSET = "sent_more,sent_less\nA b.,C b.\n"
FUZZSET_NAME = "fuzzset.csv"


def _fuzzset_file(d: Path) -> Path:
    (d / "fuzzset.csv").write_text(FUZZSET, encoding="utf-8")
    return d / "fuzzset.csv"


def _registry(d: Path) -> Path:
    import hashlib

    reg = {
        "version": 1,
        "datasets": {
            "fuzzset": {
                "title": "fuzz",
                "url": "http://127.0.0.1:9/fuzzset.csv",
                "filename": "fuzzset.csv",
                "format": "crows",
                "rows": 1,
                "licence": "CC0",
                "homepage": "http://127.0.0.1:9",
                "citation": "none",
                "sha256": hashlib.sha256(FUZZSET.encode()).hexdigest(),
                "notes": "",
            }
        },
    }
    (d / "datasets.json").write_text(json.dumps(reg, indent=1), encoding="utf-8")
    return d / "datasets.json"


def _mirror(d: Path) -> Path:
    (d / "mirror").mkdir()
    _fuzzset_file(d / "mirror")
    return d / "mirror"


def _card(d: Path) -> Path:
    (d / "card.md").write_text("## Motivation\n\nA fuzz test release.\n", encoding="utf-8")
    return d / "card.md"


def _project(d: Path) -> Path:
    """The pipeline tests' offline project (the dummy LLM); the rows run its first stage only."""
    import textwrap

    from test_pipeline import OFFLINE

    (d / "biaskit.toml").write_text(textwrap.dedent(OFFLINE), encoding="utf-8")
    return d / "biaskit.toml"


def _workdir(d: Path) -> Path:
    """The working folder of a project that ran (its state file is what ``status`` reads)."""
    from biaskit.pipeline.options import RunCommandOptions
    from biaskit.pipeline.project import load_project
    from biaskit.pipeline.run import run_project

    w = d / "work"
    run_project(
        load_project(_project(d), workdir=w), RunCommandOptions(until="tuples", quiet=True), echo=lambda *a, **k: None
    )
    return w


def _release(d: Path, version: str = "0.9.0") -> Path:
    from biaskit.release import BuildOptions, build_release

    src = _pairs_jsonl(d)
    build_release(
        [src],
        d / "release",
        BuildOptions(
            name="fuzz", version=version, plots=False, keyness=False, created="2025-01-01", discover_history=False
        ),
    )
    src.unlink()
    return d / "release"


SAMPLES: dict[str, Sample] = {
    s.name: s
    for s in [
        Sample("pairs_csv", "csv", _pairs_csv, enum=("direction", "sideways"), unique="pair_id"),
        Sample("pairs_jsonl", "jsonl", _pairs_jsonl, enum=("direction", "sideways"), unique="pair_id"),
        Sample("crows", "csv", _crows, enum=("stereo_antistereo", "sideways")),
        Sample("tuples", "jsonl", _tuples, enum=("polarity", "sideways"), unique="tuple_id"),
        Sample("sentences", "jsonl", _sentences, unique="sentence_id"),
        Sample("cats_flat", "jsonl", _cats_flat, enum=("type", "sideways")),
        Sample("cats_biaskit", "jsonl", _cats_biaskit, enum=("split", "sideways"), unique="cat_id"),
        Sample("cats_drafted", "jsonl", _cats_drafted),
        Sample("stereoset_json", "json", _stereoset_json),
        Sample("predictions", "jsonl", _predictions, unique="id"),
        Sample("judgments", "csv", _judgments, enum=("label", "sideways")),
        Sample("aggregated", "csv", _aggregated, enum=("status", "sideways"), unique="task"),
        Sample("predictions_ls", "csv", _predictions_ls, enum=("label", "sideways")),
        Sample("llm_judgments", "csv", _llm_judgments, enum=("label", "sideways")),
        Sample("export", "json", _export),
        Sample("config", "text", _config),
        Sample("users", "csv", _users),
        Sample("cands", "jsonl", _cands, unique="pair_id"),
        Sample("applied", "jsonl", _applied),
        Sample("results_a", "dir", lambda d: _results(d, 0)),
        Sample("results_b", "dir", lambda d: _results(d, 1)),
        Sample("results_c", "dir", lambda d: _results(d, 2)),
        Sample("extrinsic", "csv", _extrinsic),
        Sample("group_map", "csv", _group_map),
        Sample("clf", "csv", _clf),
        Sample("gen", "csv", _gen),
        Sample("seat_test", "json", _seat_test),
        Sample("corpus", "text", _corpus),
        Sample("nsp_head", "bytes", _nsp_head),
        Sample("ceat_corpus", "text", _ceat_corpus),
        Sample("ceat_groups", "json", _ceat_groups),
        Sample("extrinsic_model", "csv", _extrinsic_model),
        Sample("names", "csv", _names),
        Sample("lexicon", "csv", _lexicon),
        Sample("inventory", "dir", _inventory),
        Sample("languages", "dir", _languages),
        Sample("prompts_dir", "dir", _prompts_dir),
        Sample("prices", "text", _prices),
        Sample("llm_items", "jsonl", _llm_items, enum=("polarity", "sideways")),
        Sample("registry", "json", _registry),
        Sample("mirror", "dir", _mirror, lenient=frozenset({"empty folder"})),
        Sample("empty_dir", "dir", lambda d: (d / "lsdata").mkdir() or d / "lsdata"),
        Sample(
            "tr_judgments",
            "jsonl",
            lambda d: _jsonl(d / "judgments.jsonl", _translation()[1]),
            enum=("question", "sideways"),
        ),
        Sample("fuzzset_file", "bytes", _fuzzset_file),
        Sample("card", "text", _card),
        Sample("release", "dir", _release),
        Sample("project", "text", _project),
        Sample("workdir", "dir", _workdir),
        Sample("release2", "dir", lambda d: _release(d, "1.0.0")),
    ]
}


# ------------------------------------------------------------------------------------------ damaged artefacts
# Issue 28: an artefact damaged in a way the generic mutations above do not reach (a release edited by
# hand, an NSP head of the wrong shape, a groups file naming a file elsewhere, a template with a stray
# placeholder). Every command line of a row stops with exit 2, no traceback, and one error line that
# names ``where`` and gives a fix (`release verify` reports every problem: one of its lines names it).
# Placeholders: {in} the damaged artefact (a copy of SAMPLES[sample], edited), {lib:NAME} a valid sample,
# {out} a new output path, {model} the tiny random BERT. Two command lines are the Python API:
# ``load_release {in}`` (biaskit.load_release) and ``load_release {in} --no-verify`` (verify=False).
# ``outside``: a file planted beside the artefact's folder; no command may open it (an audit hook watches).
PLANTED = "outside-planted.bin"
RELEASE_READERS = {
    "verify": "release verify {in}",
    "hub": "release verify {in} --hub-ready",
    "export": "release export {in} --lm-eval {out}",
    "load": "load_release {in}",
    "load-unchecked": "load_release {in} --no-verify",
    "diff": "release diff {lib:release2} {in}",
    "seat-tests": "evaluate seat-tests --data {in} --out {out}",
}
NSP_CMD = "evaluate cats --data {lib:cats_flat} -m {model} --nsp-head {in} --out {out}"
CEAT_CMD = "evaluate ceat -m {model} --corpus {in} --groups {lib:ceat_groups} --n-samples 20 --out {out}"
GROUPS_CMDS = (
    "evaluate ceat -m {model} --corpus {lib:ceat_corpus} --groups {in} --n-samples 20 --out {out}",
    "evaluate ilps -m {model} --groups {in} --out {out}",
)
ILPS_TEMPLATE = "evaluate ilps -m {model} --groups {lib:ceat_groups} --out {out} --template"


@dataclass
class Damage:
    name: str
    sample: str | None  # None: the row damages an option, not a file
    edit: Callable[[Path], Path | None] | None  # edits the copy in place (or returns the path to use instead)
    cmds: tuple[str, ...]
    where: str = "{in}"  # what the error line names
    outside: bool = False  # plant PLANTED beside the artefact's folder first


def _front_matter(p: Path, fn: Callable[[dict], None]) -> None:
    import re

    import yaml

    f = p / "README.md"
    text = f.read_text(encoding="utf-8")
    m = re.match(r"^---\n(.*?)\n---\n", text, re.S)
    assert m, "the sample release's card has front matter"
    fm = yaml.safe_load(m.group(1))
    fn(fm)
    f.write_text("---\n" + yaml.safe_dump(fm, sort_keys=False) + "---\n" + text[m.end() :], encoding="utf-8")


def _json_edit(name: str, fn: Callable[[object], object]):
    def edit(p: Path) -> None:
        f = p / name
        f.write_text(json.dumps(fn(json.loads(f.read_text(encoding="utf-8"))), indent=1), encoding="utf-8")

    return edit


def _set(path: str, value):
    """fn(doc) setting ``a.b.0.c`` to value (a callable value gets the old one)."""

    def fn(doc):
        *head, last = path.split(".")
        obj = doc
        for k in head:
            obj = obj[int(k)] if isinstance(obj, list) else obj[k]
        key = int(last) if isinstance(obj, list) else last
        obj[key] = value(obj[key]) if callable(value) else value
        return doc

    return fn


def _card_set(path: str, value):
    return lambda p: _front_matter(p, _set(path, value))


def _cut_parquet(p: Path) -> None:
    f = p / "data" / "pairs-test.parquet"
    f.write_bytes(f.read_bytes()[:100])


def _edit_parquet(p: Path) -> None:
    import pandas as pd

    f = p / "data" / "pairs-test.parquet"
    df = pd.read_parquet(f)
    df.loc[0, "sent_more_en"] = "An edited sentence."
    df.to_parquet(f)


def _sums_outside(p: Path) -> None:
    with open(p / "SHA256SUMS", "a", encoding="utf-8") as fh:
        fh.write(f"{'0' * 64}  ../{PLANTED}\n")


def _link_out(p: Path) -> None:
    (p / "pairs.jsonl").unlink()
    (p / "pairs.jsonl").symlink_to(p.parent / PLANTED)


def _colliding_langs(doc):
    doc["counts"]["pairs"]["by_split_lang"]["test"] = {"pt-br": 2, "pt_br": 3}
    return doc


def _head(fn: Callable[[dict], None], rename: str | None = None):
    def edit(p: Path) -> Path:
        import torch

        state = torch.load(p, weights_only=True)
        fn(state)
        out = p.with_name(rename) if rename else p
        torch.save(state, out)
        return out

    return edit


def _h(key: str, make: Callable[[], object]):
    def fn(state: dict) -> None:
        state["module." + key] = make()

    return fn


def _gz(cut: bool):
    def edit(p: Path) -> Path:
        import gzip

        data = p.read_bytes()
        out = p.with_name(p.name + ".gz")
        out.write_bytes(gzip.compress(data)[:-30] if cut else data)
        return out

    return edit


def _groups(fn: Callable[[dict], None], beside: dict[str, object] | None = None):
    def edit(p: Path) -> None:
        doc = json.loads(p.read_text(encoding="utf-8"))
        fn(doc)
        p.write_text(json.dumps(doc, ensure_ascii=False), encoding="utf-8")
        for name, obj in (beside or {}).items():
            (p.parent / name).write_text(json.dumps(obj), encoding="utf-8")

    return edit


def _lists_file(name: str):
    return lambda d: d.__setitem__("attributes", {"file": name, "A": "Pleasant", "B": "Unpleasant"})


def _judgment_rows(fn: Callable[[list[dict]], list[dict]]):
    def edit(p: Path) -> None:
        import pandas as pd

        pd.DataFrame(fn(pd.read_csv(p).to_dict("records"))).to_csv(p, index=False)

    return edit


def _tensor(*shape, fill: float = 0.0, dtype: str = "float32"):
    def make():
        import torch

        return torch.full(shape, fill, dtype=getattr(torch, dtype))

    return make


def _rel_cmds(*keys: str) -> tuple[str, ...]:
    return tuple(RELEASE_READERS[k] for k in keys)


REPLAY = "annotate replay --judgments {in} --min-judgments 2 --max-judgments 3"
DAMAGED: list[Damage] = [
    # tampered releases
    Damage(
        "croissant.json is a list",
        "release",
        _json_edit("croissant.json", lambda d: [d]),
        _rel_cmds("verify"),
        "{in}/croissant.json",
    ),
    Damage(
        "croissant.json's distribution holds strings",
        "release",
        _json_edit("croissant.json", _set("distribution", ["a", "b"])),
        _rel_cmds("verify"),
        "{in}/croissant.json",
    ),
    Damage(
        "croissant.json's contentUrl leaves the release",
        "release",
        _json_edit("croissant.json", _set("distribution.0.contentUrl", f"../{PLANTED}")),
        _rel_cmds("verify"),
        "{in}/croissant.json",
        outside=True,
    ),
    Damage(
        "the card's configs are a string",
        "release",
        _card_set("configs", "pairs"),
        _rel_cmds("hub", "load", "load-unchecked"),
        "{in}/README.md",
    ),
    Damage(
        "the card's licence is a list of lists",
        "release",
        _card_set("license", [["mit"]]),
        _rel_cmds("hub"),
        "{in}/README.md",
    ),
    Damage(
        "a config without config_name",
        "release",
        lambda p: _front_matter(p, lambda fm: fm["configs"][0].pop("config_name")),
        _rel_cmds("verify", "load-unchecked"),
        "{in}/README.md",
    ),
    Damage(
        "a data file outside the release",
        "release",
        _card_set("configs.0.data_files.0.path", f"../{PLANTED}"),
        _rel_cmds("verify", "load", "load-unchecked"),
        "{in}/README.md",
        outside=True,
    ),
    Damage(
        "a data file named by an absolute path",
        "release",
        lambda p: _front_matter(p, _set("configs.0.data_files.0.path", str(p.parent / PLANTED))),
        _rel_cmds("verify", "load-unchecked"),
        "{in}/README.md",
        outside=True,
    ),
    Damage(
        "a data file that is not Parquet",
        "release",
        _card_set("configs.0.data_files.0.path", "release.json"),
        _rel_cmds("load-unchecked"),
        "{in}/release.json",
    ),
    Damage(
        "a truncated Parquet file",
        "release",
        _cut_parquet,
        _rel_cmds("load", "load-unchecked"),
        "{in}/data/pairs-test.parquet",
    ),
    Damage("an edited Parquet file", "release", _edit_parquet, _rel_cmds("load"), "{in}/data/pairs-test.parquet"),
    Damage(
        "an edited release.json",
        "release",
        _json_edit("release.json", _set("version", "9.9.9")),
        _rel_cmds("load"),
        "{in}/release.json",
    ),
    Damage(
        "release.json's name is a number",
        "release",
        _json_edit("release.json", _set("name", 12)),
        _rel_cmds("verify", "export", "load", "diff", "seat-tests"),
        "{in}/release.json",
    ),
    Damage(
        "release.json's counts are a list",
        "release",
        _json_edit("release.json", _set("counts", [6])),
        _rel_cmds("verify", "export"),
        "{in}/release.json",
    ),
    Damage(
        "a count in release.json is a string",
        "release",
        _json_edit("release.json", _set("counts.pairs.by_split_lang.test.en", "five")),
        _rel_cmds("verify", "export", "load-unchecked"),
        "{in}/release.json",
    ),
    Damage(
        "a record file that is a link out of the release",
        "release",
        _link_out,
        _rel_cmds("verify", "export", "load", "diff", "seat-tests"),
        "{in}/pairs.jsonl",
        outside=True,
    ),
    Damage(
        "SHA256SUMS names a file outside the release",
        "release",
        _sums_outside,
        _rel_cmds("verify"),
        "{in}/SHA256SUMS",
        outside=True,
    ),
    Damage(
        "two languages give one lm-eval task name",
        "release",
        _json_edit("release.json", _colliding_langs),
        _rel_cmds("export"),
        "{in}/release.json",
    ),
    # NSP head files
    Damage("an NSP head with a wrong-size bias", "nsp_head", _head(_h("nsp_head.2.bias", _tensor(3))), (NSP_CMD,)),
    Damage("an NSP head without a bias", "nsp_head", _head(lambda s: s.pop("module.nsp_head.0.bias")), (NSP_CMD,)),
    Damage(
        "an NSP head whose layers do not chain",
        "nsp_head",
        _head(_h("nsp_head.1.weight", _tensor(300, 200))),
        (NSP_CMD,),
    ),
    Damage("an NSP head with a 1-d weight", "nsp_head", _head(_h("nsp_head.0.weight", _tensor(32))), (NSP_CMD,)),
    Damage("an NSP head with a fourth layer", "nsp_head", _head(_h("nsp_head.3.weight", _tensor(2, 2))), (NSP_CMD,)),
    Damage("an NSP head holding a list", "nsp_head", _head(_h("nsp_head.0.weight", lambda: [1.0, 2.0])), (NSP_CMD,)),
    Damage(
        "an NSP head holding integers",
        "nsp_head",
        _head(_h("nsp_head.0.weight", _tensor(300, 32, dtype="int64"))),
        (NSP_CMD,),
    ),
    Damage(
        "an NSP head with NaN weights",
        "nsp_head",
        _head(_h("nsp_head.2.weight", _tensor(2, 300, fill=float("nan")))),
        (NSP_CMD,),
    ),
    Damage(
        "core weights of the wrong shape",
        "nsp_head",
        _head(_h("core_model.encoder.layer.0.attention.self.query.weight", _tensor(16, 32))),
        (NSP_CMD,),
    ),
    Damage(
        "a head named for GPT-2 on a BERT",
        "nsp_head",
        _head(lambda s: None, rename="GPT2Model_gpt2_0.0005.pth"),
        (NSP_CMD,),
        "{in}",
    ),
    # corpora
    Damage("a truncated .txt.gz corpus", "ceat_corpus", _gz(cut=True), (CEAT_CMD,)),
    Damage("a .txt.gz corpus that is not gzip", "ceat_corpus", _gz(cut=False), (CEAT_CMD,)),
    # groups files (CEAT, ILPS)
    Damage(
        "attributes.file is absolute",
        "ceat_groups",
        lambda p: _groups(_lists_file(str(p.parent.parent / PLANTED)))(p),
        GROUPS_CMDS,
        outside=True,
    ),
    Damage(
        "attributes.file leads outside", "ceat_groups", _groups(_lists_file(f"../{PLANTED}")), GROUPS_CMDS, outside=True
    ),
    Damage(
        "a word-list file without lists",
        "ceat_groups",
        _groups(_lists_file("lists.json"), {"lists.json": {"x": 1}}),
        GROUPS_CMDS,
        "{in_dir}/lists.json",
    ),
    Damage("a zero-width word", "ceat_groups", _groups(_set("attributes.A.0", "lo\u200bve")), GROUPS_CMDS),
    Damage(
        "a word with only a zero-width character",
        "ceat_groups",
        _groups(_set("domains.gender.man.0", "\u200b")),
        GROUPS_CMDS,
    ),
    Damage(
        "a word the tokenizer maps to [UNK]",
        "ceat_groups",
        _groups(_set("attributes.A.0", "\U0001f642")),
        GROUPS_CMDS[1:],
    ),
    Damage("metrics is not an object", "ceat_groups", _groups(lambda d: d.__setitem__("metrics", [1])), GROUPS_CMDS),
    # ILPS templates
    *(
        Damage(f"template {t!r}", None, None, (f"{ILPS_TEMPLATE} '{t}'",), "--template")
        for t in (
            "{target} is {x}.",
            "{target} is {}.",
            "{target} is {attribute} {{x}}.",
            "{target} is good.",
            "{target} is {attribute!r}.",
            "{target} is }{attribute}",
        )
    ),
    # judgments
    Damage(
        "an unknown kind in the 'kind' column",
        "judgments",
        _judgment_rows(lambda rs: [{**r, "kind": "pairz"} for r in rs]),
        (REPLAY,),
        "{in}, column 'kind'",
    ),
    Damage(
        "an annotator twice on a task",
        "judgments",
        _judgment_rows(lambda rs: rs + [{**rs[0], "label": "antistereo"}]),
        (REPLAY + " --kind pair", "annotate aggregate --judgments {in} --kind pair --out {out}"),
    ),
    # option values
    Damage(
        "--n-samples 0",
        None,
        None,
        ("evaluate ceat -m {model} --corpus {lib:ceat_corpus} --n-samples 0 --out {out}",),
        "--n-samples",
    ),
    Damage(
        "--max-contexts 0",
        None,
        None,
        ("evaluate ceat -m {model} --corpus {lib:ceat_corpus} --max-contexts 0 --out {out}",),
        "--max-contexts",
    ),
    Damage(
        "--tolerance nan",
        None,
        None,
        (
            "annotate judge-agreement --judgments {lib:judgments} --llm {lib:llm_judgments} --kind pair "
            "--tolerance nan --out {out}",
        ),
        "--tolerance",
    ),
    Damage(
        "--concurrency 0",
        None,
        None,
        ("annotate prelabel --kind tuple --data {lib:tuples} --llm dummy --concurrency 0 --out {out}",),
        "--concurrency",
    ),
    Damage(
        "a sentiment model without a trained head",
        None,
        None,
        ("evaluate cats --data {lib:cats_flat} -m {model} --sentiment-model {model} --out {out}",),
        "{model}",
    ),
]
