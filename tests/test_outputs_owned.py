"""What biaskit writes from user text is masked, and a generator appends only to its own file (issue 20)."""

from __future__ import annotations

from pathlib import Path

from conftest import run_cli

REPO = Path(__file__).resolve().parents[1]
DEMO = REPO / "data" / "demo" / "demo_pairs.jsonl"
KEY = "sk-proj-" + "Q7x" * 12


def test_secrets_typed_into_card_text_are_masked(tmp_path, capsys, monkeypatch):
    monkeypatch.setenv("LABEL_STUDIO_API_KEY", "ls-token-4f9a8b7c6d5e")
    card = tmp_path / "card.md"
    card.write_text("## Motivation\n\nAsk the maintainers (token: ls-token-4f9a8b7c6d5e).\n", encoding="utf-8")
    out = tmp_path / "rel"
    code, so, se = run_cli(
        [
            "release",
            "build",
            "--records",
            str(DEMO),
            "--name",
            "demo",
            "--version",
            "1.0.0",
            "--pretty-name",
            f"Demo {KEY}",
            "--citation",
            f"@misc{{x, note={{api_key={KEY}}}}}",
            "--card-text",
            str(card),
            "--date",
            "2025-01-01",
            "--no-plots",
            "--out",
            str(out),
        ],
        capsys,
    )
    assert code == 0, so + se
    for f in ("README.md", "release.json"):
        text = (out / f).read_text(encoding="utf-8")
        assert KEY not in text and "ls-token-4f9a8b7c6d5e" not in text, f
    readme = (out / "README.md").read_text(encoding="utf-8")
    assert "pretty_name: Demo ***" in readme or 'pretty_name: "Demo ***"' in readme, readme[:400]
    assert "(token: ***)" in readme
    assert run_cli(["release", "verify", str(out)], capsys)[0] == 0


def test_a_generator_refuses_to_take_over_a_file_it_did_not_write(tmp_path, capsys):
    """A JSONL without biaskit's provenance.task (a user's file), or another step's rows, given as --out:
    refused with the file, the row and a fix, before anything is changed (no line moved aside, no record
    rewritten, no side file)."""
    theirs = tmp_path / "out" / "mine.jsonl"
    theirs.parent.mkdir()
    theirs.write_bytes(DEMO.read_bytes() + b'{"cut": ')  # and an unterminated last line
    before = theirs.read_bytes()
    args = ["curate", "tuples", "--axis", "caste", "--identities", "Dalit", "--n", "2", "--llm", "dummy"]
    code, so, se = run_cli(args + ["--out", str(theirs)], capsys)
    assert code == 2, so + se
    assert f"--out {theirs}, row 1: holds records biaskit did not write (no provenance.task)" in se, se
    assert "Fix: choose another --out" in se
    assert theirs.read_bytes() == before and sorted(p.name for p in theirs.parent.iterdir()) == ["mine.jsonl"]

    ours = tmp_path / "t.jsonl"
    assert run_cli(args + ["--out", str(ours)], capsys)[0] == 0
    assert run_cli(args + ["--out", str(ours)], capsys)[0] == 0  # its own file: resumed
    code, so, se = run_cli(
        ["curate", "sentences", "--tuples", str(ours), "--per-tuple", "1", "--llm", "dummy", "--out", str(ours)], capsys
    )
    assert code == 2 and "holds rows of the 'tuples' task, not the 'sentences' rows" in se, se


def test_the_first_start_hint_of_annotate_serve_is_printed_whole():
    """The masking of secrets leaves a shell expansion alone: `KEY=$(python -c ...)` is a command to run."""
    from biaskit.redact import redact

    hint = "export LABEL_STUDIO_API_KEY=$(python -c 'import secrets; print(secrets.token_hex(20))')"
    assert redact(hint) == hint
    assert redact("LABEL_STUDIO_API_KEY=0123456789abcdef") == "LABEL_STUDIO_API_KEY=***"
