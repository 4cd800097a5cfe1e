"""pytest fixtures for a REAL PostgreSQL server (Debian's ``postgresql`` package; see ``pg_helpers``).

* ``pg_cluster`` (session): a private server on a free 127.0.0.1 port in a temporary folder, with a
  password-protected superuser (SCRAM over TCP); ``pg_cluster.createdb(name)``,
  ``pg_cluster.url(db)`` (``postgresql://user:password@127.0.0.1:PORT/db``), ``pg_cluster.psql(sql, db)``.
  Skips with the reason when PostgreSQL cannot run on this machine (``make services`` installs it).
"""

from __future__ import annotations

import pytest


@pytest.fixture(scope="session")
def pg_cluster():
    from pg_helpers import PgCluster, PgUnavailable

    try:
        pg = PgCluster(durable=False).start()
    except PgUnavailable as exc:
        pytest.skip(f"PostgreSQL unavailable: {exc}")
    try:
        yield pg
    finally:
        pg.stop()
