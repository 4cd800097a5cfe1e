"""Secrets never leave biaskit: one redaction pass for everything it prints or stores.

biaskit writes no secret itself, but servers echo them back (an OpenAI-style 401 body quoting the
key, a Label Studio error page quoting ``Authorization: Token ...``), and users paste tokens in the
wrong place. :func:`redact` replaces

- the values of the environment variables in :data:`SECRET_ENV` (and any ``*_API_KEY``,
  ``*_TOKEN``, ``*_SECRET``, ``*_PASSWORD`` variable), and values registered at run time with
  :func:`register_secret` (a ``--token`` flag, say), wherever they occur;
- anything that looks like a credential: ``sk-...`` keys, ``Authorization: Token|Bearer ...``
  headers, ``api_key=...`` / ``token=...`` assignments, ``hf_...`` tokens, the password of a
  ``scheme://user:password@host`` URL (``postgresql://...``);

by ``***``. Values shorter than 6 characters are not treated as secrets (they would mask ordinary
words). Call :func:`redact` on any text that came from outside before printing or writing it;
:func:`redact_obj` walks dicts and lists.
"""

from __future__ import annotations

import os
import re
from typing import Any

MASK = "***"
SECRET_ENV = (
    "OPENAI_API_KEY",
    "LABEL_STUDIO_API_KEY",
    "LABEL_STUDIO_TOKEN",
    "HF_TOKEN",
    "HUGGING_FACE_HUB_TOKEN",
    "ANTHROPIC_API_KEY",
    "POSTGRE_PASSWORD",
    "PGPASSWORD",
    "LABEL_STUDIO_PASSWORD",
)
_SECRET_ENV_SUFFIXES = ("_API_KEY", "_TOKEN", "_SECRET", "_PASSWORD")
_MIN_LEN = 6

_registered: set[str] = set()

_PATTERNS = [
    # Authorization headers (also as Python dict reprs: 'Authorization': 'Token abc')
    re.compile(r"(?i)(authorization['\"]?\s*[:=]\s*['\"]?(?:token|bearer|basic)\s+)[^\s'\",}]+"),
    re.compile(r"(?i)\b((?:token|bearer)\s+)([A-Za-z0-9._~+/=-]{16,})"),
    # OpenAI-style and Hugging Face keys
    re.compile(r"\bsk-[A-Za-z0-9_*.-]{6,}"),
    re.compile(r"\bhf_[A-Za-z0-9]{10,}"),
    # key=value / "key": "value" assignments of credential-named fields
    # (a value starting with $ is a shell expansion in a printed hint, `KEY=$(python -c ...)`, not a secret)
    re.compile(
        r"(?i)((?:api[_-]?key|access[_-]?token|auth[_-]?token|password|secret)['\"]?\s*[:=]\s*['\"]?)"
        r"(?!\$)[^\s'\",}&]+"
    ),
    # the password of a URL's user info: postgresql://user:password@host/db
    re.compile(r"(?i)(\b[a-z][a-z0-9+.-]*://[^:/@\s]*:)[^@\s/]+(?=@)"),
]


def register_secret(value: str | None) -> None:
    """Treat ``value`` as a secret for the rest of the process (a token given as a flag, say)."""
    if value and len(value) >= _MIN_LEN:
        _registered.add(value)


def known_secrets() -> list[str]:
    vals = set(_registered)
    for k, v in os.environ.items():
        if v and len(v) >= _MIN_LEN and (k in SECRET_ENV or k.endswith(_SECRET_ENV_SUFFIXES)):
            vals.add(v)
    return sorted(vals, key=len, reverse=True)  # longest first: a secret containing another


def redact(text: Any) -> Any:
    """``text`` with every known or credential-looking secret replaced by ``***`` (non-strings pass)."""
    if not isinstance(text, str) or not text:
        return text
    for s in known_secrets():
        if s in text:
            text = text.replace(s, MASK)
    for i, pat in enumerate(_PATTERNS):
        if i in (0, 4, 5):
            text = pat.sub(lambda m: m.group(1) + MASK, text)
        elif i == 1:
            text = pat.sub(lambda m: m.group(1) + MASK, text)
        else:
            text = pat.sub(MASK, text)
    return text


def redact_obj(obj: Any) -> Any:
    """:func:`redact` applied to every string in a JSON-like structure (a new object is returned)."""
    if isinstance(obj, str):
        return redact(obj)
    if isinstance(obj, dict):
        return {k: redact_obj(v) for k, v in obj.items()}
    if isinstance(obj, (list, tuple)):
        return type(obj)(redact_obj(v) for v in obj)
    return obj
