"""The shared CLI helpers: literal output, masked secrets, registry-driven choices."""

from __future__ import annotations

import subprocess
import sys

from biaskit.clitools import choice_enum, command_line, mask_secret_args
from biaskit.redact import redact, register_secret
from biaskit.registry import Registry


def test_error_text_keeps_square_brackets(capsys):
    from biaskit.clitools import echo_error

    echo_error("Fix: pip install 'biaskit[annotation]'")
    assert "pip install 'biaskit[annotation]'" in capsys.readouterr().err


def test_redact_env_secret_and_credential_shapes(monkeypatch):
    monkeypatch.setenv("OPENAI_API_KEY", "abcdef123456secret")
    body = '{"error": "Incorrect API key provided: abcdef123456secret"}'
    assert "abcdef123456secret" not in redact(body)
    assert redact("Authorization: Token 0123456789abcdef0123") == "Authorization: Token ***"
    assert "sk-proj-XYZ123456" not in redact("key sk-proj-XYZ123456 was rejected")
    assert redact("ordinary text, no secret") == "ordinary text, no secret"


def test_command_line_masks_token_flags():
    argv = ["annotate", "pull", "--token", "tok-1234567890", "--project", "p", "--api-key=sk-zzzzzzzz"]
    assert mask_secret_args(argv) == ["annotate", "pull", "--token", "***", "--project", "p", "--api-key=***"]
    line = command_line(argv)
    assert "tok-1234567890" not in line and "sk-zzzzzzzz" not in line
    assert line.startswith("biaskit annotate pull --token '***'")
    register_secret("tok-1234567890")
    assert redact("echo tok-1234567890 back") == "echo *** back"


def test_choice_enum_follows_the_registry():
    reg = Registry("thing")
    reg.register("alpha", "x:y")
    reg.register("beta", "x:z")
    E = choice_enum("ThingName", reg)
    assert [e.value for e in E] == ["alpha", "beta"]
    assert E("beta").value == "beta"


def test_usage_error_does_not_echo_a_secret(tmp_path):
    env = {"PATH": "/usr/bin:/bin", "LABEL_STUDIO_API_KEY": "ls-secret-value-0123456789", "HOME": str(tmp_path)}
    r = subprocess.run(
        [sys.executable, "-m", "biaskit.cli", "data", "list", "ls-secret-value-0123456789"],
        capture_output=True,
        text=True,
        env=env,
    )
    assert r.returncode == 2, r.stderr
    assert "ls-secret-value-0123456789" not in r.stdout + r.stderr
    assert "Traceback" not in r.stderr
