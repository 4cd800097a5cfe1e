"""A stand-in OpenAI-compatible server that echoes the API key it is sent, and a scan of a folder for a
secret (issue 28): tests/test_secret_echo.py runs `annotate prelabel` and `biaskit run` against it,
tests/test_fuzz_cli.py every LLM command of its table.

:func:`echoing_server` answers every request with a schema-valid reply (built from the request's JSON
Schema like the dummy backend's, with the phrases of the prompt) whose sentence-length strings end
with the key of the request's ``Authorization`` header and which has an extra ``note`` field quoting
it; every seventh reply is junk text quoting it (a parse error: the re-ask and the errors file).
:func:`files_holding` lists the files under a folder whose bytes, or whose SQLite rows, hold a string.
"""

from __future__ import annotations

import json
import sqlite3
from pathlib import Path

from biaskit.curation.llm.dummy import from_schema, prompt_phrases
from llm_standin import Reply, chat

from biaskit.cache import request_hash


def _echo(value, key: str, schema: dict | None):
    """``value`` (built from ``schema``) with the key in every free string and an extra ``note``."""
    if isinstance(value, dict):
        props = (schema or {}).get("properties") or {}
        out = {k: _echo(v, key, props.get(k)) for k, v in value.items()}
        return {**out, "note": f"request received with key {key}"}
    if isinstance(value, list):
        items = (schema or {}).get("items")
        return [_echo(v, key, items) for v in value]
    s = schema or {}
    if isinstance(value, str) and len(value) >= 12 and not s.get("enum"):  # sentence-length strings carry it
        echoed = f"{value} {key}"
        return echoed if len(echoed) <= s.get("maxLength", len(echoed)) else value
    return value


def echoing_server(make):
    """A stand-in whose every reply quotes the key of the request's Authorization header."""
    echoed: list[int] = []

    def respond(body: dict, n: int) -> Reply:
        key = server.headers[n]["authorization"].split(" ", 1)[1]
        if n % 7 == 6:  # junk that quotes the key: parse error, re-ask, errors file
            echoed.append(n)
            return chat(f"Sorry, I cannot answer that (your key {key} has no quota).")
        rf = body.get("response_format") or {}
        schema = rf.get("schema") or (rf.get("json_schema") or {}).get("schema")
        msgs = body["messages"]
        value = _echo(from_schema(schema, request_hash(msgs), prompt_phrases(msgs)), key, schema)
        text = json.dumps(value, ensure_ascii=False)
        if key in text:
            echoed.append(n)
        return chat(text)

    server = make(respond)
    server.echoed = echoed
    return server


def files_holding(root: Path, needle: str) -> list[str]:
    """Every file under ``root`` whose bytes, or (an SQLite database) any row of any table, hold ``needle``."""
    raw = needle.encode("utf-8")
    hits = []
    files = [p for p in sorted(root.rglob("*")) if p.is_file()]
    for p in files:  # raw bytes first (before an SQLite connection could checkpoint its WAL)
        if raw in p.read_bytes():
            hits.append(str(p))
    for p in files:
        if p.read_bytes()[:16] != b"SQLite format 3\x00":
            continue
        con = sqlite3.connect(f"file:{p}?mode=ro", uri=True)
        try:
            tables = [r[0] for r in con.execute("SELECT name FROM sqlite_master WHERE type = 'table'")]
            for t in tables:
                for row in con.execute(f'SELECT * FROM "{t}"'):
                    if any(needle in (v.decode("utf-8", "replace") if isinstance(v, bytes) else str(v)) for v in row):
                        hits.append(f"{p} (table {t})")
                        break
        finally:
            con.close()
    return hits


def sqlite_rows(root: Path) -> int:
    """Rows of the caches (``*.sqlite3``, table kv) under ``root``."""
    n = 0
    for p in root.rglob("*.sqlite3"):
        con = sqlite3.connect(f"file:{p}?mode=ro", uri=True)
        n += con.execute("SELECT COUNT(*) FROM kv").fetchone()[0]
        con.close()
    return n
