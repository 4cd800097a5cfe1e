"""Prompt templates: loading, validation errors that name the file, hashing, user folders, CLI list."""

from __future__ import annotations

import hashlib
import json
from pathlib import Path

import pytest
from biaskit.curation.prompts import get_prompt, load_prompts

from biaskit.cli import main
from biaskit.errors import InputError

GOOD = '''id = "mine"
version = "1"
description = "test"
[variables]
who = "a group"
[template]
system = "Be brief."
user = """Describe {who} as JSON like {"x": [1]} and {{literal}}."""
[schema]
type = "object"
'''


def test_packaged_templates_load_and_render():
    ps = load_prompts()
    assert {"attributes@1", "sentences@1", "pair_rewrite@1"} <= set(ps)
    msgs = ps["attributes@1"].render(identity="Dalit", axis="caste", polarity="negative", n=10)
    assert [m["role"] for m in msgs] == ["system", "user"]
    assert "10 negative" in msgs[1]["content"] and "Dalit" in msgs[1]["content"]
    assert '{"attributes": [...]}' in msgs[1]["content"]  # JSON braces are left alone
    assert ps["attributes@1"].schema["required"] == ["attributes"]


def test_hash_is_sha256_of_templates_and_schema(tmp_path):
    (tmp_path / "mine.toml").write_text(GOOD)
    p = get_prompt("mine", tmp_path)
    payload = json.dumps(
        {"system": p.system, "user": p.user, "schema": {"type": "object"}}, sort_keys=True, ensure_ascii=False
    )
    assert p.hash == hashlib.sha256(payload.encode()).hexdigest()[:12]
    assert p.provenance() == {"prompt_id": "mine", "prompt_version": "1", "prompt_hash": p.hash}
    assert p.render(who="Sikhs")[1]["content"] == 'Describe Sikhs as JSON like {"x": [1]} and {literal}.'
    with pytest.raises(InputError, match="needs variable"):
        p.render()
    # an edit without a version bump still changes the hash
    (tmp_path / "mine.toml").write_text(GOOD.replace("Be brief.", "Be very brief."))
    assert get_prompt("mine", tmp_path).hash != p.hash


def test_user_folder_adds_versions_and_env_var(tmp_path, monkeypatch):
    (tmp_path / "a.toml").write_text(GOOD)
    (tmp_path / "b.toml").write_text(GOOD.replace('version = "1"', 'version = "2"'))
    monkeypatch.setenv("BIASKIT_PROMPTS_DIR", str(tmp_path))
    assert get_prompt("mine").version == "2" and get_prompt("mine@1").version == "1"
    with pytest.raises(InputError, match="Did you mean"):
        get_prompt("mnie")


@pytest.mark.parametrize(
    "text, message",
    [
        (GOOD.replace('who = "a group"', 'whom = "x"'), "undeclared variable"),
        (GOOD.replace('[variables]\nwho = "a group"', '[variables]\nwho = "a group"\nextra = "unused"'), "not used"),
        (GOOD.replace('id = "mine"\n', ""), "missing key 'id'"),
        (GOOD.replace('version = "1"\n', ""), "missing key 'version'"),
        (
            GOOD.replace('[schema]\ntype = "object"', "").replace("[variables]", 'schema = "{not json"\n[variables]'),
            "not valid JSON",
        ),
        (GOOD.replace('type = "object"', 'type = "objekt"'), "not a valid JSON Schema"),
        (GOOD.replace('user = """', 'user = """\n'), None),
        (GOOD.replace("[variables]", 'examples = "three"\n[variables]'), "'examples' must be an array of tables"),
        ('id = "x"\nversion = "1"\n[template]\nuser = "unterminated', "invalid TOML"),
    ],
)
def test_bad_templates_name_the_file(tmp_path, text, message):
    f = tmp_path / "bad.toml"
    f.write_text(text)
    if message is None:
        assert "mine@1" in load_prompts(tmp_path)
        return
    with pytest.raises(InputError) as e:
        load_prompts(tmp_path)
    assert message in str(e.value) and str(f) in str(e.value) and "Fix:" in str(e.value)


def test_worked_examples_are_kept_and_part_of_the_hash(tmp_path):
    (tmp_path / "a.toml").write_text(GOOD)
    plain = load_prompts(tmp_path)["mine@1"]
    (tmp_path / "a.toml").write_text(GOOD + '\n[[examples]]\ngroup = "lawyers"\nnegative = ["argumentative"]\n')
    one = load_prompts(tmp_path)["mine@1"]
    (tmp_path / "a.toml").write_text(GOOD + '\n[[examples]]\ngroup = "lawyers"\nnegative = ["cunning"]\n')
    other = load_prompts(tmp_path)["mine@1"]
    assert plain.examples == [] and one.examples == [{"group": "lawyers", "negative": ["argumentative"]}]
    assert len({plain.hash, one.hash, other.hash}) == 3  # an edited example is a different template
    assert get_prompt("attributes@2").examples == []  # templates without examples keep their hash


def test_duplicate_id_and_version_is_refused(tmp_path):
    (tmp_path / "a.toml").write_text(GOOD)
    (tmp_path / "b.toml").write_text(GOOD)
    with pytest.raises(InputError, match="defined twice"):
        load_prompts(tmp_path)


def test_cli_lists_templates(tmp_path, capsys):
    (tmp_path / "mine.toml").write_text(GOOD)
    main(["curate", "prompts", "--prompts-dir", str(tmp_path)])
    out = capsys.readouterr().out
    assert "attributes" in out and "mine" in out
    main(["curate", "prompts", "--show", "sentences"])
    assert "sentences@1" in capsys.readouterr().out


# ------------------------------------------------------------------ the papers' recipes (issue 13)
PAPERS = Path("/work/shared/papers")


def test_new_versions_are_the_default_and_old_ones_stay_loadable():
    assert get_prompt("attributes").ref == "attributes@3" and get_prompt("sentences").ref == "sentences@3"
    assert (
        get_prompt("sentences_anti").ref == "sentences_anti@2"
        and get_prompt("cat_intrasentence").ref == "cat_intrasentence@2"
    )
    v1 = get_prompt("attributes@1")
    assert (
        "List 10 negative one-word attributes"
        in v1.render(identity="Dalit", axis="caste", polarity="negative", n=10)[1]["content"]
    )
    assert get_prompt("sentences@1").hash != get_prompt("sentences@2").hash
    assert get_prompt("sentences@2").hash != get_prompt("sentences@3").hash
    for ref, where in [
        ("attributes@2", "sec. 4.1"),
        ("sentences@2", "sec. 4.2.2"),
        ("sentences_anti@1", "sec. 4.2.2"),
        ("sentences@3", "sec. 4.2.2"),
        ("sentences_anti@2", "sec. 4.2.2"),
        ("cat_intrasentence@1", "sec. 2.1 and 4.2"),
        ("cat_intersentence@1", "sec. 2.2 and 4.2"),
        ("cat_intrasentence@2", "sec. 2.1 and 4.2"),
        ("cat_intersentence@2", "sec. 2.2 and 4.2"),
    ]:
        assert where in get_prompt(ref).description, ref  # each template says which paper step it implements


def test_defaults_follow_the_papers(tmp_path, capsys):
    """IndiBias: 10 positive and 10 negative attributes per identity term; 5 sentences per tuple."""
    main(
        [
            "curate",
            "tuples",
            "--axis",
            "caste",
            "--identities",
            "Dalit",
            "--dry-run",
            "--out",
            str(tmp_path / "t.jsonl"),
        ]
    )
    out = capsys.readouterr().out
    assert "dry run: 2 request(s)" in out  # positive and negative
    assert out.count("Give the 10 most widespread ones") == 2
    assert "Which positive stereotypes" in out and "Which negative stereotypes" in out
    t = tmp_path / "t.jsonl"
    t.write_text(json.dumps({"identity": "Dalit", "attribute": "poor", "axis": "caste", "polarity": "negative"}) + "\n")
    for mode, phrase in (
        ("stereo", "links the Dalit person or people with being poor"),
        ("anti", "must go against this stereotype"),
    ):
        main(
            ["curate", "sentences", "--tuples", str(t), "--mode", mode, "--dry-run", "--out", str(tmp_path / "s.jsonl")]
        )
        out = " ".join(capsys.readouterr().out.split())
        assert "write 5 different sentences" in out and phrase in out, mode
        assert ("sentences_anti@2" if mode == "anti" else "sentences@3") in out


def _shingles(text: str, n: int = 8) -> set[tuple[str, ...]]:
    import re

    words = re.findall(r"[a-z]+", text.lower())
    return {tuple(words[i : i + n]) for i in range(len(words) - n + 1)}


@pytest.mark.skipif(not PAPERS.is_dir(), reason="the papers' text (../shared/papers) is not on this machine")
def test_templates_are_not_copied_from_the_papers():
    """The prompts are the project's own words: no run of 8 words in a shipped template (other than
    the JSON examples) occurs in the IndiBias or StereoSet paper."""
    paper = set()
    for f in ("indibias_naacl2024.txt", "stereoset_arxiv2020.txt", "stereoset_acl2021_b.txt"):
        paper |= _shingles((PAPERS / f).read_text(encoding="utf-8", errors="replace"))
    for ref in (
        "attributes@2",
        "sentences@2",
        "sentences@3",
        "sentences_anti@1",
        "sentences_anti@2",
        "cat_intrasentence@1",
        "cat_intersentence@1",
        "cat_intrasentence@2",
        "cat_intersentence@2",
        "translate_cat_intrasentence@2",
        "translate_cat_intersentence@2",
    ):
        p = get_prompt(ref)
        common = _shingles(p.system + "\n" + p.user) & paper
        assert not common, (ref, sorted(common)[:3])
