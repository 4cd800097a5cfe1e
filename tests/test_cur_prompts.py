"""Prompt templates: loading, validation errors that name the file, hashing, user folders, CLI list."""
from __future__ import annotations

import hashlib
import json

import pytest

from biaskit.cli import main
from biaskit.curation.prompts import get_prompt, load_prompts
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
    assert '{"attributes": [...]}' in msgs[1]["content"]          # JSON braces are left alone
    assert ps["attributes@1"].schema["required"] == ["attributes"]


def test_hash_is_sha256_of_templates_and_schema(tmp_path):
    (tmp_path / "mine.toml").write_text(GOOD)
    p = get_prompt("mine", tmp_path)
    payload = json.dumps({"system": p.system, "user": p.user, "schema": {"type": "object"}}, sort_keys=True, ensure_ascii=False)
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


@pytest.mark.parametrize("text, message", [
    (GOOD.replace('who = "a group"', 'whom = "x"'), "undeclared variable"),
    (GOOD.replace('[variables]\nwho = "a group"', '[variables]\nwho = "a group"\nextra = "unused"'), "not used"),
    (GOOD.replace('id = "mine"\n', ''), "missing key 'id'"),
    (GOOD.replace('version = "1"\n', ''), "missing key 'version'"),
    (GOOD.replace('[schema]\ntype = "object"', '').replace('[variables]', 'schema = "{not json"\n[variables]'),
     "not valid JSON"),
    (GOOD.replace('type = "object"', 'type = "objekt"'), "not a valid JSON Schema"),
    (GOOD.replace('user = """', 'user = """\n'), None),
    ('id = "x"\nversion = "1"\n[template]\nuser = "unterminated', "invalid TOML"),
])
def test_bad_templates_name_the_file(tmp_path, text, message):
    f = tmp_path / "bad.toml"
    f.write_text(text)
    if message is None:
        assert "mine@1" in load_prompts(tmp_path)
        return
    with pytest.raises(InputError) as e:
        load_prompts(tmp_path)
    assert message in str(e.value) and str(f) in str(e.value) and "Fix:" in str(e.value)


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
