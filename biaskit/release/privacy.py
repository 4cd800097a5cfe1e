"""A release names no person and no path of the machine that built it (docs/release.md, *Privacy*).

Annotators are known to biaskit by their Label Studio login (an e-mail address, or ``user:<id>``);
the working files keep it (adjudication needs to know who typed what). What :func:`build_release`
writes goes through :func:`scrub_record` first:

- **pseudonyms**: every field that names a person becomes ``ann-`` + 10 hex digits of
  HMAC-SHA256(key, ``<release name> NUL <identity>``) (:class:`Pseudonyms`). The same person has the
  same pseudonym in every file of a release (records, StereoSet JSON, the card's per-annotator
  figures) and in every version of it built with the same key, so per-annotator statistics still
  work; without the key nobody can test a guess (``is alice@example.org ann-3f...?``). The key is 32
  random bytes in a file that never ships (:func:`load_key`: created once, then reused, so a rebuild
  gives the same bytes): ``biaskit run`` keeps it in the project's state folder
  (``.biaskit/release.key``), ``biaskit release build`` next to the release folder unless
  ``--pseudonym-key FILE`` names one;
- **paths**: every string of a record's ``provenance`` and ``meta`` goes through
  :func:`biaskit.public.public_text` (``provenance.candidates_file`` ``/home/alice/proj/work/...`` ->
  ``work/...`` or its file name); an e-mail address in their free text (a reviewer's comment)
  becomes that person's pseudonym.

The person fields are known by the schema, not guessed from the text (:data:`PERSON_KEYS`, wherever
they are nested: a translation's ``provenance.source_provenance`` carries its source's edits):

=====================================  =================================================================
field                                  written by
=====================================  =================================================================
``options[].human_labels[].annotator``  ``annotate apply --kind cat`` (each validator's label)
``meta.review.reviewers[].worker``     translation / CAT translation review (each reviewer's answer)
``meta.review.editors[]``              the reviewers whose correction was applied
``provenance.edits[].annotators[]``    sentence / pair / tuple edits (``annotation/kinds/edits.py``)
``...candidates[].annotators[]``       an adjudication's proposals (``meta.returned.fields``)
``model`` beside ``engine: review``    a reviewer's own text as a candidate (``annotation/kinds/translation.py``)
``winner_model`` beside ``winner_engine: review``  the same, as the review's winner
``provenance.editors[]``               the same, on a proposal
``worker``, ``annotator``, ``human_id``  any judgment-shaped row
=====================================  =================================================================

A value that is already a pseudonym (``ann-`` + 10 hex digits, e.g. a record of an earlier release)
or names a model (``llm:...``, LLM pre-labels) is kept. :mod:`biaskit.release.scan` (``release
verify``) checks the written files for whatever would still name someone.
"""

from __future__ import annotations

import hashlib
import hmac
import os
import re
import secrets
from pathlib import Path
from typing import Any

from ..errors import InputError

KEY_FILE = "release.key"
PSEUDONYM = re.compile(r"^ann-[0-9a-f]{10}$")
# keys whose value (a string or a list of strings) names a person, wherever they are nested
PERSON_KEYS = frozenset(("annotator", "annotators", "worker", "workers", "editors", "reviewer", "human_id"))
# `key` names a person when the sibling `engine_key` says a reviewer wrote the text
REVIEWER_TEXT = (("model", "engine"), ("winner_model", "winner_engine"))
REVIEW_ENGINE = "review"  # annotation/kinds/translation.py REVIEW_ENGINE (a stage: not imported from the floor)
NOT_PEOPLE = ("llm:",)  # LLM pre-labels' workers name a model


def load_key(path: str | os.PathLike) -> bytes:
    """The pseudonym key in ``path`` (64 hex digits), created with 32 random bytes (mode 0600) when the
    file does not exist yet. Two builds racing to create it read the same key."""
    p = Path(path)
    if not p.exists():
        p.parent.mkdir(parents=True, exist_ok=True)
        try:
            fd = os.open(p, os.O_WRONLY | os.O_CREAT | os.O_EXCL, 0o600)
        except FileExistsError:
            pass
        else:
            with os.fdopen(fd, "w", encoding="ascii") as fh:
                fh.write(secrets.token_hex(32) + "\n")
    try:
        text = p.read_text(encoding="ascii").strip()
        key = bytes.fromhex(text)
    except (OSError, UnicodeDecodeError, ValueError):
        key = b""
    if len(key) < 16:
        raise InputError(
            "not a pseudonym key (64 hex digits written by biaskit).",
            path=p,
            fix="restore the key file from a backup (the release's pseudonyms depend on it), or delete it "
            "to make a new key (every annotator then gets a new pseudonym).",
        )
    return key


class Pseudonyms:
    """``identity -> ann-<10 hex>``, keyed and scoped to one release name (see the module docstring).
    ``key``: the key, or the key file, read (and created) only when the first person is named: a
    release without annotators, or a build refused for its input, leaves no key file behind."""

    def __init__(self, key: bytes | str | os.PathLike, scope: str):
        self._key_or_file, self._scope = key, scope.encode("utf-8")
        self._key: bytes | None = key if isinstance(key, bytes) else None
        self._memo: dict[str, str] = {}

    @property
    def key(self) -> bytes:
        if self._key is None:
            self._key = load_key(self._key_or_file)  # type: ignore[arg-type]  # a path when not bytes
        return self._key

    def __call__(self, identity: Any) -> Any:
        if not isinstance(identity, str) or not identity or PSEUDONYM.match(identity):
            return identity
        if identity.startswith(NOT_PEOPLE):
            return identity
        hit = self._memo.get(identity)
        if hit is None:
            mac = hmac.new(self.key, self._scope + b"\0" + identity.encode("utf-8"), hashlib.sha256)
            hit = self._memo[identity] = "ann-" + mac.hexdigest()[:10]
        return hit

    def many(self, values: Any) -> Any:
        """A person field's value: one identity, or a list of them (a count, e.g. ``editors: 2``, is kept)."""
        if isinstance(values, list):
            return [self(v) for v in values]
        return self(values)


# what the JSON of a record's provenance and meta holds when :func:`scrub` may change it: a person key, a
# reviewer's text as a candidate (engine "review"), an e-mail address, a string that is ~ or starts with ~/,
# a Windows path, and a slash where biaskit.public.POSIX_PATH may start a path: after any byte but a letter,
# digit or . _ - : / ('file=/home/a', '(/home/a)', a non-ASCII space), or after a JSON escape ("\t/home/a")
_SCRUB_HINTS = re.compile(
    b'"(?:'
    + b"|".join(re.escape(k.encode()) for k in sorted(PERSON_KEYS))
    + rb'|review)"|@|"~[/"]|:\\|\\\\\\\\|(?<![A-Za-z0-9._:/-])/|\\(?:[nrtfb]|u[0-9a-fA-F]{4})/'
)


def needs_scrub(raw: bytes) -> bool:
    """Can :func:`scrub` change the provenance and meta serialised as ``raw`` (JSON bytes)? A cheap test
    that lets a release of many records without annotators skip the walk."""
    return _SCRUB_HINTS.search(raw) is not None


def scrub(obj: Any, pz: Pseudonyms, base: str | os.PathLike | None = None) -> Any:
    """A copy of ``obj`` (a record's ``provenance`` or ``meta``, or a record) with every person field
    pseudonymised and every path made public."""
    from ..public import EMAIL, public_text

    if isinstance(obj, dict):
        out = {}
        for k, v in obj.items():
            if k in PERSON_KEYS and not isinstance(v, (dict, int, float, bool)):
                out[k] = pz.many(v)
            else:
                out[k] = scrub(v, pz, base)
        for key, engine in REVIEWER_TEXT:
            if out.get(engine) == REVIEW_ENGINE and isinstance(out.get(key), str):
                out[key] = ",".join(pz(x) for x in out[key].split(","))  # several editors: "a,b"
        return out
    if isinstance(obj, list):
        return [scrub(v, pz, base) for v in obj]
    if isinstance(obj, str):
        if "@" in obj:  # an address in free text (a reviewer's comment): the person's pseudonym
            obj = EMAIL.sub(lambda m: pz(m.group(0)), obj)
        return public_text(obj, base)
    return obj


def scrub_record(d: dict[str, Any], pz: Pseudonyms, base: str | os.PathLike | None = None) -> dict[str, Any]:
    """A CAT or tuple record (a dict in the schema's JSON form) as a release publishes it: its
    ``provenance`` and ``meta`` scrubbed, each option's ``human_labels`` pseudonymised. The text
    fields (context, sentences, target) are data and are left as they are."""
    d = dict(d)
    for k in ("provenance", "meta"):
        if isinstance(d.get(k), dict):
            d[k] = scrub(d[k], pz, base)
    if isinstance(d.get("options"), list):
        d["options"] = [
            {**o, "human_labels": scrub(o.get("human_labels") or [], pz, base)} if isinstance(o, dict) else o
            for o in d["options"]
        ]
    return d
