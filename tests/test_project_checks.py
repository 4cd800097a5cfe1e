"""biaskit.toml is validated whole before any stage runs (issue 20): the files and folders it names, the
models of the last stage, the tuple axes and the card text, every problem on a line of its own with
the file, the key (table.key) and its line -- so a typo in the last stage does not wait for the LLM
and human stages to run first."""

from __future__ import annotations

import textwrap

from conftest import run_cli

BROKEN = """
[project]
name = "checks"
inventory = "my-inventory"

[llm]
backend = "dummy"
prices = "prices.toml"

[stages.tuples]
axes = ["caste", "castes"]

[stages.sentences]

[stages.pairs]

[stages.check]

[stages.release]
card_text = "card.md"
citation = "cite.bib"

[stages.evaluate]
models = ["gemma3-270n", "models/tiny"]
"""


def test_every_problem_of_the_project_file_is_one_line_before_anything_runs(tmp_path, capsys):
    d = tmp_path / "proj"
    (d / "models" / "tiny").mkdir(parents=True)  # a folder without config.json
    (d / "biaskit.toml").write_text(textwrap.dedent(BROKEN), encoding="utf-8")
    code, out, err = run_cli(["run", "--project", str(d)], capsys)
    assert code == 2, out + err
    lines = err.strip().splitlines()
    f = d / "biaskit.toml"
    expected = {
        "project.inventory' (line 4)": "'my-inventory' is not a folder",
        "llm.prices' (line 8)": "'prices.toml' does not exist",
        "stages.release.card_text' (line 20)": "'card.md' does not exist",
        "stages.release.citation' (line 21)": "'cite.bib' does not exist",
        "stages.evaluate.models' (line 24)": "model 'gemma3-270n' not found",
    }
    for key, what in expected.items():
        line = next((x for x in lines if key in x), None)
        assert line is not None, (key, err)
        assert line.startswith(f"error: --project {f}: key '") and what in line and "Fix:" in line, line
    assert any("models/tiny" in x and "no config.json" in x for x in lines), err
    assert all(x.startswith("error: ") for x in lines) and len(lines) == 6, err
    assert not (d / "work").exists() and not (d / ".biaskit").exists()  # nothing ran
    # status still shows a project whose inputs are missing
    assert run_cli(["status", "--project", str(d)], capsys)[0] == 0


def test_an_axis_the_inventory_lacks_needs_its_identities(tmp_path, capsys):
    d = tmp_path / "proj"
    d.mkdir()
    body = '[project]\nname = "x"\n[llm]\nbackend = "dummy"\n[stages.tuples]\naxes = ["caste", "castes"]\n'
    (d / "biaskit.toml").write_text(body, encoding="utf-8")
    code, out, err = run_cli(["run", "--project", str(d)], capsys)
    assert code == 2 and "key 'stages.tuples.axes' (line 6): axis 'castes' has no identity terms" in err, err
    assert "use one of" in err and "caste" in err
    (d / "biaskit.toml").write_text(body + 'identities = { castes = ["Dalit", "Brahmin"] }\nn = 2\n', encoding="utf-8")
    code, out, err = run_cli(["run", "--project", str(d), "-q"], capsys)
    assert code == 0, err


def test_card_text_must_hold_card_sections(tmp_path, capsys):
    d = tmp_path / "proj"
    d.mkdir()
    (d / "pairs.jsonl").write_text("", encoding="utf-8")
    (d / "card.md").write_text("Just a line, no section.\n", encoding="utf-8")
    (d / "biaskit.toml").write_text(
        '[project]\nname = "x"\n[stages.release]\ninput = "pairs.jsonl"\ncard_text = "card.md"\n', encoding="utf-8"
    )
    code, out, err = run_cli(["run", "--project", str(d)], capsys)
    assert code == 2 and "key 'stages.release.card_text' (line 5)" in err and "no '## Heading' sections" in err, err
