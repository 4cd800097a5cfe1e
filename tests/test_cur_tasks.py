"""LLM tasks and the job runner: the registry, the dummy backend's schema-valid replies (issue 13),
the documented offline path run as written, `curate llm-task`, pair rewrites through the runner,
the documented "add a task in one file" example, CLI choices from the registries."""

from __future__ import annotations

import json
import re
import shlex
import subprocess
import sys
import types
from pathlib import Path

import jsonschema
import pytest
from biaskit.curation.llm import LLMS, DummyLLM, get_llm
from biaskit.curation.llm.dummy import from_schema, prompt_phrases
from biaskit.curation.prompts import load_prompts
from biaskit.curation.tasks import TASKS
from conftest import REPO, run_cli

from biaskit.io import read_jsonl

DOC = REPO / "docs" / "curation.md"


@pytest.fixture(autouse=True)
def _quiet(monkeypatch):
    monkeypatch.setenv("BIASKIT_NO_PROGRESS", "1")
    monkeypatch.delenv("OPENAI_API_KEY", raising=False)
    monkeypatch.delenv("OPENAI_BASE_URL", raising=False)


def test_every_backend_implements_the_client_protocol():
    from biaskit.curation.llm import LLMClient

    for name in LLMS.names():
        client = get_llm(name, model="m", base_url="http://127.0.0.1:1/v1", cache=False)
        assert isinstance(client, LLMClient), name
        assert client.describe() == {"backend": name, "model": "m", "endpoint": client.endpoint}


def test_every_task_is_registered_with_its_prompt():
    assert TASKS.names() == [
        "cat_intersentence",
        "cat_intrasentence",
        "pair_rewrite",
        "prelabel",
        "sentences",
        "translate_cat_intersentence",
        "translate_cat_intrasentence",
        "translate_pair",
        "translate_sentence",
        "tuples",
    ]
    prompts = {p.id for p in load_prompts().values()}
    for name in TASKS.names():
        cls = TASKS.get(name)
        assert cls.name == name and cls.prompt_id in prompts
        assert cls().schema is not None  # every task's template declares its reply


# ------------------------------------------------------------------ the dummy backend (issue 13)
SAMPLE_VALUES = {
    "identity": "Dalit",
    "axis": "caste",
    "polarity": "negative",
    "n": 5,
    "attribute": "poor",
    "k": 3,
    "sentence": "Dalits are poor.",
    "source_group": "Dalit",
    "target_group": "Brahmin",
    "source_language": "English",
    "target_language": "Hindi",
    "sent_more": "The man is a doctor.",
    "sent_less": "The woman is a doctor.",
    "text": "The man is a doctor.",
    "target": "Muslim",
    "domain": "religion",
    "society": "India",
    "language": "English",
    "context": "The farmer was too BLANK to read.",
    "stereotype": "poor",
    "anti_stereotype": "rich",
    "unrelated": "purple",
    "guidelines": "Answer as a careful annotator.",
    "item": "Dalit -- poor",
    "questions": "- stereotype: Is this a stereotype? Options: yes | no",
    "examples": '{"group": "lawyers", "stereotypes": "negative", "attributes": ["argumentative"]}',
    "advice": "When the difference would be lost in translation, make it explicit.",
}


@pytest.mark.parametrize("ref", sorted(load_prompts()))
def test_dummy_reply_is_schema_valid_for_every_shipped_prompt(ref):
    p = load_prompts()[ref]
    msgs = p.render(**{k: SAMPLE_VALUES[k] for k in p.variables})
    llm = DummyLLM(cache=False)
    res = llm.complete_json(msgs, p.schema, temperature=0.7, seed=0)
    assert res.ok and res.attempts == 1 and res.repairs == [], res.error  # valid at once: no re-ask, no repair
    jsonschema.Draft202012Validator(p.schema).validate(json.loads(res.raw))
    again = DummyLLM(cache=False).complete_json(msgs, p.schema, temperature=0.7, seed=0)
    assert again.raw == res.raw  # deterministic


def test_dummy_values_follow_the_schema_keywords():
    schema = {
        "type": "object",
        "required": ["a", "b", "c", "d", "e"],
        "properties": {
            "a": {
                "type": "array",
                "minItems": 4,
                "maxItems": 6,
                "uniqueItems": True,
                "items": {"type": "string", "minLength": 30, "maxLength": 60},
            },
            "b": {"type": "integer", "minimum": 3, "maximum": 5},
            "c": {"enum": ["stereo", "antistereo"]},
            "d": {"type": "object", "properties": {"x": {"type": "boolean"}, "y": {"type": ["null", "number"]}}},
            "e": {"type": "array", "maxItems": 1, "items": {"type": "string"}},
        },
    }
    for seed in ("s1", "s2", "s3"):
        v = from_schema(schema, seed, ["Muslim"])
        jsonschema.Draft202012Validator(schema).validate(v)
        assert all(s.startswith("Muslim people are ") for s in v["a"])
    assert prompt_phrases(
        [{"role": "user", "content": 'Use the words "Dalit" as written. Reply: {"sentences": ["..."]}'}]
    ) == ["Dalit"]


def _doc_block(marker: str) -> list[str]:
    text = DOC.read_text(encoding="utf-8")
    block = re.search(re.escape(marker) + r"\s*```bash\n(.*?)```", text, re.S)
    assert block, f"no ```bash block after {marker} in {DOC}"
    return [ln for ln in block.group(1).splitlines() if ln.strip() and not ln.startswith("#")]


def test_offline_curation_path_as_documented(tmp_path, capsys, monkeypatch):
    """tuples -> sentences -> pairs -> check -> translate (llm engine on dummy), exactly as
    docs/curation.md shows it."""
    monkeypatch.chdir(tmp_path)
    lines = _doc_block("<!-- offline-path -->")
    assert [shlex.split(x)[2] for x in lines] == ["tuples", "sentences", "pairs", "check", "translate"]
    for line in lines:
        argv = shlex.split(line)
        assert argv[0] == "biaskit"
        code, out, err = run_cli(argv[1:], capsys)
        assert code == 0, (line, err)
    tuples, sents = read_jsonl("tuples.jsonl"), read_jsonl("sentences.jsonl")
    assert len(tuples) == 7 * 2 * 3  # 7 caste identities x 2 polarities x 3 dummy attributes
    assert not Path("tuples.errors.jsonl").exists() and not Path("sentences.errors.jsonl").exists()
    assert len({s["tuple_id"] for s in sents}) == len(tuples)  # every sentence job gave rows
    assert all(s["status"] == "raw" and s["identity"] in s["sentence"] for s in sents)  # they name the identity
    pairs = read_jsonl("pairs.jsonl")
    rejects = read_jsonl("pairs.errors.jsonl")
    # a tuple listed as both positive and negative gets the same prompt, so the same dummy sentences:
    # their second pair is a duplicate; every other sentence became a pair
    assert len(pairs) + len(rejects) == len(sents) and {r["reason"] for r in rejects} == {"duplicate pair"}
    assert all(p["sent_more"] != p["sent_less"] and p["group_less"].lower() in p["sent_less"].lower() for p in pairs)
    assert len(read_jsonl("checked.jsonl")) == len(pairs)
    cands = read_jsonl("candidates.jsonl")
    assert [c["pair_id"] for c in cands] == [p["pair_id"] for p in pairs]
    assert all(c["candidates"][0]["engine"] == "llm" and c["candidates"][0]["sent_more"] for c in cands)
    log = read_jsonl("candidates.llm.runlog.jsonl")[-1]
    assert log["task"] == "translate_pair" and log["ok"] == len(pairs) and log["backend"] == "dummy"


# ------------------------------------------------------------------ the runner for every task
def test_pair_rewrites_go_through_the_runner(tmp_path, capsys):
    s = tmp_path / "s.jsonl"
    s.write_text(
        json.dumps(
            {
                "sentence_id": "s1",
                "sentence": "The Dalit-born are dirty.",
                "identity": "Dalit",
                "axis": "caste",
                "polarity": "negative",
            }
        )
        + "\n"
    )
    args = [
        "curate",
        "pairs",
        "--sentences",
        str(s),
        "--out",
        str(tmp_path / "p.jsonl"),
        "--llm-fallback",
        "--llm",
        "dummy",
    ]
    code, out, _ = run_cli(args, capsys)
    assert code == 0 and "LLM rewrites in" in out
    (rw,) = read_jsonl(tmp_path / "p.rewrites.jsonl")
    (pair,) = read_jsonl(tmp_path / "p.jsonl")
    assert pair["meta"]["swap_method"] == "llm" and pair["sent_less"] == rw["rewrite"]
    assert rw["provenance"]["task"] == "pair_rewrite" and rw["provenance"]["temperature"] == 0.0
    log = read_jsonl(tmp_path / "p.rewrites.runlog.jsonl")
    assert log[-1]["llm"]["requests"] == 1
    assert run_cli(args, capsys)[0] == 0
    log = read_jsonl(tmp_path / "p.rewrites.runlog.jsonl")
    assert log[-1]["skipped_done"] == 1 and log[-1]["llm"]["requests"] == 0  # resumed, nothing asked again


def test_llm_task_runs_any_registered_task(tmp_path, capsys):
    items = tmp_path / "items.jsonl"
    items.write_text(
        "".join(
            json.dumps({"text": t, "source_language": "English", "target_language": "Hindi"}) + "\n"
            for t in ("The man is a doctor.", "Dalits are poor.")
        )
    )
    out = tmp_path / "o.jsonl"
    code, stdout, err = run_cli(
        ["curate", "llm-task", "translate_sentence", "--input", str(items), "--out", str(out), "--llm", "dummy"], capsys
    )
    assert code == 0, err
    rows = read_jsonl(out)
    assert len(rows) == 2 and all(r["translation"] and r["provenance"]["task"] == "translate_sentence" for r in rows)
    code, _, err = run_cli(["curate", "llm-task", "no_such_task", "--input", str(items), "--out", str(out)], capsys)
    assert code == 2 and "pair_rewrite" in err and "tuples" in err  # the choices come from TASKS
    bad = tmp_path / "bad.jsonl"
    bad.write_text(json.dumps({"text": "x"}) + "\n")
    code, _, err = run_cli(
        [
            "curate",
            "llm-task",
            "translate_sentence",
            "--input",
            str(bad),
            "--out",
            str(tmp_path / "b.jsonl"),
            "--llm",
            "dummy",
        ],
        capsys,
    )
    assert code == 2 and f"{bad}, row 1" in err and "source_language" in err


def test_the_documented_one_file_task_runs(tmp_path):
    """docs/curation.md's AntonymTask, executed as a module of the tasks package, with its template."""
    from biaskit.curation.prompts import get_prompt
    from biaskit.curation.runner import JobRunner

    code = re.search(r"```python\n(from \. import TASKS.*?)```", DOC.read_text(encoding="utf-8"), re.S).group(1)
    mod = types.ModuleType("biaskit.curation.tasks._doc_example")
    mod.__package__ = "biaskit.curation.tasks"
    try:
        exec(compile(code, "docs/curation.md", "exec"), mod.__dict__)
        (tmp_path / "antonyms.toml").write_text(
            'id = "antonyms"\nversion = "1"\n[variables]\nword = "a word"\n[template]\n'
            "user = '''Three antonyms of {word}. JSON: {\"antonyms\": [...]}'''\n"
            '[schema]\ntype = "object"\nrequired = ["antonyms"]\n'
            '[schema.properties.antonyms]\ntype = "array"\nitems = {type = "string"}\n'
        )
        task = TASKS.get("antonyms")(get_prompt("antonyms", tmp_path))
        out = tmp_path / "a.jsonl"
        s = JobRunner(DummyLLM(cache=False), task, out=out, command="test").run([{"word": "hot"}, {"word": "tall"}])
        assert s.ok == 2 and s.errors == 0
        rows = read_jsonl(out)
        assert {r["word"] for r in rows} == {"hot", "tall"} and all(r["provenance"]["task"] == "antonyms" for r in rows)
    finally:
        TASKS._entries.pop("antonyms", None)


# ------------------------------------------------------------------ the CLI's shape
def test_llm_choices_come_from_the_registry(tmp_path, capsys):
    from biaskit.curation.cli_options import LLMBackend

    assert sorted(m.value for m in LLMBackend) == LLMS.names()
    code, _, err = run_cli(
        ["curate", "tuples", "--axis", "caste", "--llm", "nosuch", "--out", str(tmp_path / "t.jsonl")], capsys
    )
    assert code == 2 and "dummy" in err and "openai" in err


def test_curate_sub_apps_do_not_import_their_parent():
    code = (
        "import sys, biaskit.curation.gen_cli, biaskit.curation.translate_cli; "
        "print('biaskit.curation.cli' in sys.modules)"
    )
    out = subprocess.run([sys.executable, "-c", code], capture_output=True, text=True, check=True).stdout
    assert out.strip() == "False"


def test_run_log_records_the_command_line(tmp_path):
    exe = Path(sys.executable).with_name("biaskit")
    if not exe.exists():
        pytest.skip(f"no biaskit console script next to {sys.executable} (install the package)")
    out = tmp_path / "t.jsonl"
    env = {"BIASKIT_CACHE_DIR": str(tmp_path / "c"), "BIASKIT_NO_PROGRESS": "1", "PATH": "/usr/bin:/bin"}
    subprocess.run(
        [str(exe), "curate", "tuples", "--axis", "caste", "--identities", "Dalit", "--llm", "dummy", "--out", str(out)],
        check=True,
        capture_output=True,
        env=env,
    )
    assert (
        read_jsonl(tmp_path / "t.runlog.jsonl")[-1]["command"]
        == f"biaskit curate tuples --axis caste --identities Dalit --llm dummy --out {out}"
    )


# ------------------------------------------------------------------ issue 11: the right message
def test_missing_endpoint_is_named_as_such(tmp_path, capsys):
    with pytest.raises(Exception, match=r"no endpoint to send requests to. Fix: set --base-url URL"):
        get_llm("openai", model="m")
    t = tmp_path / "t.jsonl"
    t.write_text(json.dumps({"identity": "Dalit", "attribute": "poor", "axis": "caste", "polarity": "negative"}) + "\n")
    code, _, err = run_cli(
        ["curate", "sentences", "--tuples", str(t), "--model", "m", "--out", str(tmp_path / "s.jsonl")], capsys
    )
    assert code == 2 and "no endpoint" in err and "OPENAI_BASE_URL" in err and "no API key" not in err


# ------------------------------------------------------------------ what small models copy (issue 22)
def _reply(data):
    from biaskit.curation.llm.protocol import LLMResult, Usage

    return LLMResult(data=data, raw=json.dumps(data), usage=Usage(), request_hash="h", cached=False)


def test_the_repair_layer_drops_what_a_small_model_echoes():
    """Replies seen from SmolLM2-135M and gemma3-270m here: list placeholders and the request's own
    words as attributes, a worked example copied as a sentence or a CAT."""
    from biaskit.curation.tasks.cat_intrasentence import CatIntrasentenceTask
    from biaskit.curation.tasks.sentences import SentenceTask
    from biaskit.curation.tasks.tuples import TupleTask

    from biaskit.schema import BiasTuple

    rows = TupleTask().parse(
        {"identity": "Dalit", "axis": "caste", "polarity": "negative", "n": 5},
        _reply({"attributes": ["A", "B", "caste", "Negative", "model", "lazy"]}),
    )
    assert [r["attribute"] for r in rows] == ["lazy"]
    t = BiasTuple(identity="Dalit", axis="caste", attribute="poor", polarity="negative").model_dump(mode="json")
    copied = "Before every harvest the farmer borrows money from the moneylender."  # sentences@3's example
    own = "The Dalit family next door could not afford a doctor for their son."
    rows = SentenceTask(per_tuple=3).parse(
        {"tuple": t},
        _reply({"sentences": [copied, copied.replace("the farmer", "the Dalit farmer") + " He never repays it.", own]}),
    )
    status = {r["sentence"]: (r["status"], r["meta"].get("reason")) for r in rows}
    assert status[own] == ("raw", None)
    assert status[copied][0] == "rejected" and "copies the prompt" in status[copied][1]
    assert [s for s, (st, _) in status.items() if st == "rejected"] == [copied, rows[1]["sentence"]]
    item = {"target": "Muslim", "domain": "religion", "society": "India", "n": 2}
    rows = CatIntrasentenceTask().parse(
        item,
        _reply(
            {
                "items": [
                    {
                        "context": "The librarian was very BLANK with the children.",
                        "stereotype": "strict",
                        "anti_stereotype": "playful",
                        "unrelated": "orbit",
                    },
                    {
                        "context": "The Muslim in the room is very BLANK.",
                        "stereotype": "strict",
                        "anti_stereotype": "playful",
                        "unrelated": "moon",
                    },
                    {
                        "context": "My Muslim neighbour is BLANK.",
                        "stereotype": "pious",
                        "anti_stereotype": "secular",
                        "unrelated": "square",
                    },
                ]
            }
        ),
    )
    assert [r.get("copies_prompt") for r in rows] == [
        ["context", "stereotype", "anti_stereotype", "unrelated"],
        ["stereotype", "anti_stereotype"],
        None,
    ]
    from biaskit.curation.cats import check_draft

    from biaskit.inventory import load_inventory

    assert [[p["code"] for p in check_draft(r, load_inventory())] for r in rows] == [
        ["copies_prompt", "target_missing"],
        ["copies_prompt"],
        [],
    ]
