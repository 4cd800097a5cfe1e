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

What is stored is masked where it enters biaskit, once, whatever the write path after it (issue 28):
an LLM reply in the client (:class:`biaskit.curation.llm.base.BaseLLM`, before it is cached, parsed
into records, logged or released), and every value the cache stores (:class:`biaskit.cache.DiskCache`,
:func:`biaskit.cache.cached_results`: MT translations, scores) with :func:`masked`, which returns the
value itself, untouched, when it holds no secret (the common case costs one scan of its strings).
"""

from __future__ import annotations

import os
import re
from collections.abc import Iterator
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


def redact(text: Any, secrets: list[str] | None = None) -> Any:
    """``text`` with every known or credential-looking secret replaced by ``***`` (non-strings pass);
    ``secrets``: :func:`known_secrets`, when the caller has them already."""
    if not isinstance(text, str) or not text:
        return text
    for s in known_secrets() if secrets is None else secrets:
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


def redact_obj(obj: Any, secrets: list[str] | None = None) -> Any:
    """:func:`redact` applied to every string in a JSON-like structure, keys included (a new object is
    returned)."""
    secrets = known_secrets() if secrets is None else secrets
    if isinstance(obj, str):
        return redact(obj, secrets)
    if isinstance(obj, dict):
        return {redact(k, secrets): redact_obj(v, secrets) for k, v in obj.items()}
    if isinstance(obj, (list, tuple)):
        return type(obj)(redact_obj(v, secrets) for v in obj)
    return obj


# every credential pattern above needs one of these (lower-cased) in the text: the fast test of holds_secret
_TRIGGERS = ("authorization", "token", "bearer", "sk-", "hf_", "api", "password", "secret", "://")


def _strings(obj: Any) -> Iterator[str]:
    """Every string of a JSON-like structure, keys included (numbers are passed over without a call)."""
    if isinstance(obj, str):
        yield obj
        return
    if isinstance(obj, dict):
        items: Any = (x for kv in obj.items() for x in kv)
    elif isinstance(obj, (list, tuple)):
        items = obj
    else:
        return
    for v in items:
        if isinstance(v, str):
            yield v
        elif isinstance(v, (dict, list, tuple)):
            yield from _strings(v)


def holds_secret(obj: Any, secrets: list[str] | None = None) -> bool:
    """Whether :func:`redact_obj` would change ``obj`` (a string or a JSON-like structure)."""
    secrets = known_secrets() if secrets is None else secrets
    for text in _strings(obj):
        if any(s in text for s in secrets):
            return True
        low = text.lower()
        if any(t in low for t in _TRIGGERS) and redact(text, []) != text:
            return True
    return False


def masked(obj: Any, secrets: list[str] | None = None) -> Any:
    """``obj`` with every secret masked (:func:`redact_obj`); ``obj`` itself when it holds none."""
    secrets = known_secrets() if secrets is None else secrets
    return redact_obj(obj, secrets) if holds_secret(obj, secrets) else obj
