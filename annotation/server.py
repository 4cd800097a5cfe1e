"""Run a local Label Studio server for a team that has none (``biaskit annotate serve`` / ``stop``).

The server is the real Label Studio OSS (``pip install label-studio``, best in its own virtual
environment because it pins many packages). The executable is found, in this order:

1. ``$BIASKIT_LABEL_STUDIO`` (path of the ``label-studio`` executable),
2. ``label-studio`` on ``PATH``,
3. ``<repository>/.venv-ls/bin/label-studio`` (the layout of a biaskit checkout),
4. next to the running Python (``label-studio`` installed into the same environment).

Everything is passed through the environment, never on the command line (so the password and token
do not show up in ``ps``) and nothing is written by biaskit except ``biaskit-ls.json`` (pid, port,
url: no secrets) and, for PostgreSQL, ``biaskit-ls-db.json`` (engine, host, port, database, user:
never the password) in the data directory. The server listens on 127.0.0.1 only, telemetry, Sentry and
the PyPI version check are off, sign-up works only through an invite link.

The database is Label Studio's SQLite file in the data directory, or a PostgreSQL database
(:class:`Database`, ``serve --database postgresql://user:password@host:port/db``), passed to Label
Studio as its own ``DJANGO_DB=default`` + ``POSTGRE_NAME/USER/PASSWORD/HOST/PORT`` settings. The
password comes from the URL or, when the URL has none, from libpq's own ``$PGPASSWORD`` /
``~/.pgpass``; it is handed to the Label Studio process only (its environment) and registered with
:mod:`biaskit.redact` so that no message shows it.

A fresh data directory is initialised with ``label-studio init`` (database migrations, the admin
user and its API token; ~35-100 s); later starts of the same directory take a few seconds and keep
every project, task and annotation.
"""

from __future__ import annotations

import json
import os
import shutil
import subprocess
import sys
import time
import urllib.parse
import urllib.request
from collections.abc import Callable
from dataclasses import dataclass, field
from pathlib import Path
from typing import TYPE_CHECKING

from biaskit.errors import BiaskitError, InputError
from biaskit.options import say
from biaskit.services import alive as _alive
from biaskit.services import free_port
from biaskit.services import port_closed as _port_closed
from biaskit.services import terminate as _terminate

if TYPE_CHECKING:
    from .options import ServeOptions

PID_FILE = "biaskit-ls.json"
DB_INFO_FILE = "biaskit-ls-db.json"
LOG_FILE = "server.log"
DB_FILE = "label_studio.sqlite3"

# LS's get_env() falls back to these *bare* names too: a shell with USERNAME/PORT set would
# silently change the admin user or the port, so they are removed from the child's environment.
_SCRUB = ("HOST", "PORT", "USERNAME", "PASSWORD", "USER_TOKEN", "DEBUG", "LOG_LEVEL")
# database settings LS reads (bare, LABEL_STUDIO_ or HEARTEX_ prefixed): only biaskit's own reach it
_DB_SETTINGS = (
    "DJANGO_DB",
    "DATABASE_NAME",
    "POSTGRE_NAME",
    "POSTGRE_USER",
    "POSTGRE_PASSWORD",
    "POSTGRE_HOST",
    "POSTGRE_PORT",
    "MYSQL_NAME",
    "MYSQL_USER",
    "MYSQL_PASSWORD",
    "MYSQL_HOST",
    "MYSQL_PORT",
)
_SCRUB_ALL = frozenset(_SCRUB) | frozenset(f"{p}{n}" for p in ("", "LABEL_STUDIO_", "HEARTEX_") for n in _DB_SETTINGS)


def default_data_dir() -> Path:
    """``$BIASKIT_LS_DATA_DIR`` or ``~/.local/share/biaskit/label-studio``: ``annotate serve``'s default folder."""
    return Path(os.environ.get("BIASKIT_LS_DATA_DIR", "~/.local/share/biaskit/label-studio")).expanduser()


def served_url() -> str | None:
    """The URL of the Label Studio ``biaskit annotate serve`` runs in its default folder, or None."""
    live = running(default_data_dir())
    return live.url if live is not None else None


class ServerError(BiaskitError):
    """Label Studio could not be found, initialised, started or stopped."""


def find_label_studio() -> str:
    """Path of the ``label-studio`` executable (see the module docstring for the search order)."""
    env = os.environ.get("BIASKIT_LABEL_STUDIO")
    if env:
        if not Path(env).exists():
            raise ServerError(
                f"BIASKIT_LABEL_STUDIO points at {env}, which does not exist. "
                "Fix: set it to the path of the `label-studio` executable."
            )
        return env
    on_path = shutil.which("label-studio")
    if on_path:
        return on_path
    repo = Path(__file__).resolve().parents[1]
    for cand in (repo / ".venv-ls" / "bin" / "label-studio", Path(sys.executable).with_name("label-studio")):
        if cand.exists():
            return str(cand)
    raise ServerError(
        "the `label-studio` executable was not found. Fix: install it in its own environment "
        "(`python -m venv .venv-ls && .venv-ls/bin/pip install label-studio`) and set "
        "BIASKIT_LABEL_STUDIO=.venv-ls/bin/label-studio, or put it on PATH."
    )


@dataclass(frozen=True)
class Database:
    """Where Label Studio keeps its data: ``sqlite`` (a file in the data folder) or ``postgresql``."""

    engine: str = "sqlite"
    host: str = ""
    port: int = 5432
    name: str = ""
    user: str = ""
    password: str | None = field(default=None, repr=False, compare=False)
    sslmode: str | None = None

    @classmethod
    def parse(cls, url: str | None) -> Database:
        """``None``/``sqlite`` -> SQLite; ``postgresql://[user[:password]@]host[:port]/db[?sslmode=M]``."""
        from biaskit.redact import register_secret

        if not url or url == "sqlite":
            return cls()
        fix = "write it as postgresql://USER[:PASSWORD]@HOST[:PORT]/DATABASE (password also from $PGPASSWORD)."
        try:
            u = urllib.parse.urlsplit(url)
            port = u.port or 5432
        except ValueError as exc:
            raise InputError(f"{say('database')} is not a valid URL ({exc}).", fix=fix) from None
        if u.password:
            register_secret(urllib.parse.unquote(u.password))
        if u.scheme not in ("postgresql", "postgres"):
            raise InputError(
                f"{say('database')}: unsupported database '{u.scheme or url}' (SQLite is the default; "
                "PostgreSQL is the other database biaskit runs Label Studio on).",
                fix=fix,
            )
        name = urllib.parse.unquote(u.path.lstrip("/"))
        if not u.hostname or not name or "/" in name:
            raise InputError(f"{say('database')} needs a host and a database name.", fix=fix)
        query = urllib.parse.parse_qs(u.query)
        unknown = sorted(set(query) - {"sslmode"})
        if unknown:
            raise InputError(
                f"{say('database')}: unsupported parameter(s) {', '.join(unknown)}.",
                fix="only ?sslmode=... is passed on (to libpq).",
            )
        return cls(
            engine="postgresql",
            host=u.hostname,
            port=port,
            name=name,
            user=urllib.parse.unquote(u.username or "") or "postgres",
            password=urllib.parse.unquote(u.password) if u.password else None,
            sslmode=query["sslmode"][0] if query.get("sslmode") else None,
        )

    @property
    def is_postgres(self) -> bool:
        return self.engine == "postgresql"

    def public(self) -> dict:
        """What may be written to disk and printed: everything but the password."""
        if not self.is_postgres:
            return {"engine": "sqlite"}
        out = {"engine": self.engine, "host": self.host, "port": self.port, "name": self.name, "user": self.user}
        if self.sslmode:
            out["sslmode"] = self.sslmode
        return out

    def public_url(self) -> str:
        if not self.is_postgres:
            return "sqlite"
        host = f"[{self.host}]" if ":" in self.host else self.host
        q = f"?sslmode={self.sslmode}" if self.sslmode else ""
        return f"postgresql://{urllib.parse.quote(self.user)}@{host}:{self.port}/{urllib.parse.quote(self.name)}{q}"

    @classmethod
    def from_public(cls, info: dict) -> Database:
        if info.get("engine") != "postgresql":
            return cls()
        return cls(
            engine="postgresql",
            host=info["host"],
            port=int(info["port"]),
            name=info["name"],
            user=info["user"],
            sslmode=info.get("sslmode"),
        )

    def same_target(self, other: Database) -> bool:
        return self.public() == other.public()

    def env(self) -> dict[str, str]:
        """Label Studio's own settings for this database (the only place the password goes)."""
        if not self.is_postgres:
            return {"DJANGO_DB": "sqlite"}
        env = {
            "DJANGO_DB": "default",
            "POSTGRE_NAME": self.name,
            "POSTGRE_USER": self.user,
            "POSTGRE_HOST": self.host,
            "POSTGRE_PORT": str(self.port),
            # empty: Django passes no password and libpq falls back to $PGPASSWORD / ~/.pgpass
            "POSTGRE_PASSWORD": self.password or "",
        }
        if self.sslmode:
            env["PGSSLMODE"] = self.sslmode
        return env


def recorded_database(data_dir: str | Path) -> Database | None:
    """The database a data folder was initialised with (None: not initialised)."""
    from biaskit.io import read_json

    data_dir = Path(data_dir)
    info = data_dir / DB_INFO_FILE
    if info.exists():
        return Database.from_public(read_json(info, fix=f"delete {info} only if the folder's database is SQLite."))
    if (data_dir / DB_FILE).exists():
        return Database()
    return None


def resolve_database(data_dir: str | Path, url: str | Database | None) -> Database:
    """The database to start ``data_dir`` on: ``url`` (checked against the folder's) or the folder's own.

    A folder keeps its database: SQLite folders cannot be pointed at PostgreSQL (that is a data
    migration, not a setting) and a PostgreSQL folder only at the same server, database and user.
    """
    want = url if isinstance(url, Database) else Database.parse(url) if url else None
    have = recorded_database(data_dir)
    if have is None:
        return want or Database()
    if want is None:
        return have
    if not want.same_target(have):
        raise InputError(
            f"this data folder's Label Studio database is {have.public_url()}, not {want.public_url()}.",
            path=data_dir,
            fix=f"use the folder's own database, or a new {say('data_dir')} for another one. "
            f"If this database was restored on another server, put its host and "
            f"port in {Path(data_dir) / DB_INFO_FILE} (no secret in it).",
        )
    return want


def ls_env(
    data_dir: Path,
    *,
    email: str | None = None,
    password: str | None = None,
    token: str | None = None,
    database: Database | None = None,
) -> dict:
    env = {k: v for k, v in os.environ.items() if k not in _SCRUB_ALL}
    env.update(
        {
            "LABEL_STUDIO_BASE_DATA_DIR": str(data_dir),
            "LABEL_STUDIO_DISABLE_SIGNUP_WITHOUT_LINK": "true",
            "LABEL_STUDIO_COLLECT_ANALYTICS": "false",
            "LABEL_STUDIO_LATEST_VERSION_CHECK": "false",
            "SENTRY_DSN": "",
            "FRONTEND_SENTRY_DSN": "",
            "LABEL_STUDIO_LOG_LEVEL": env.get("LABEL_STUDIO_LOG_LEVEL", "WARNING"),
        }
    )
    env.update((database or Database()).env())
    if email:
        env["LABEL_STUDIO_USERNAME"] = email
    if password:
        env["LABEL_STUDIO_PASSWORD"] = password
    if token:
        env["LABEL_STUDIO_USER_TOKEN"] = token
        # legacy (DRF) tokens are what `Authorization: Token ...` and the SDK's api_key use
        env["LABEL_STUDIO_ENABLE_LEGACY_API_TOKEN"] = "true"
    return env


def is_initialised(data_dir: str | Path) -> bool:
    return recorded_database(data_dir) is not None


def _log_tail(path: Path, n: int = 3) -> str:
    """The last lines of a Label Studio log, redacted, for an error message."""
    from biaskit.redact import redact

    try:
        lines = [ln.strip() for ln in path.read_text(errors="replace").splitlines() if ln.strip()]
    except OSError:
        return ""
    return redact(" | ".join(lines[-n:]))[-600:]


def init_data_dir(
    data_dir: str | Path,
    *,
    email: str | None,
    password: str | None,
    token: str | None,
    timeout: float = 900,
    database: Database | None = None,
    migrate_only: bool = False,
) -> float:
    """Create the database, the admin user and its API token in ``data_dir``; returns seconds taken.

    On PostgreSQL the tables are created in the given (existing, possibly empty) database; a
    database that already holds Label Studio's tables is migrated and keeps its users.
    ``migrate_only``: an initialised folder, brought up to date (no user is created).
    """
    from biaskit.io import atomic_write_text

    database = database or Database()
    data_dir = Path(data_dir)
    data_dir.mkdir(parents=True, exist_ok=True)
    if not migrate_only and (not token or len(token) > 40):
        raise ServerError(
            "the admin API token must be 1-40 characters. Fix: "
            "export LABEL_STUDIO_API_KEY=$(python -c 'import secrets; print(secrets.token_hex(20))')"
        )
    t0 = time.monotonic()
    log = data_dir / ("migrate.log" if migrate_only else "init.log")
    with open(log, "w") as fh:
        proc = subprocess.run(
            [find_label_studio(), "init", "--quiet", "--no-browser"],
            env=ls_env(data_dir, email=email, password=password, token=token, database=database),
            stdin=subprocess.DEVNULL,
            stdout=fh,
            stderr=subprocess.STDOUT,
            timeout=timeout,
        )
    if proc.returncode == 0 and database.is_postgres:
        # which Label Studio last migrated the database: `--workers` skips migrating when unchanged
        info = {**database.public(), "migrated_by_label_studio": ls_version()}
        atomic_write_text(data_dir / DB_INFO_FILE, json.dumps(info, indent=1) + "\n")
    if proc.returncode != 0 or not is_initialised(data_dir):
        raise ServerError(f"`label-studio init` failed (exit {proc.returncode}): {_log_tail(log)} (see {log}).")
    return time.monotonic() - t0


@dataclass
class ServerInfo:
    pid: int
    port: int
    url: str
    data_dir: str
    started_in_s: float | None = None
    database: str = "sqlite"
    workers: int = 1

    def to_json(self) -> dict:
        return {
            "pid": self.pid,
            "port": self.port,
            "url": self.url,
            "data_dir": self.data_dir,
            "database": self.database,
            "workers": self.workers,
        }


def _healthy(url: str) -> bool:
    try:
        with urllib.request.urlopen(url + "/health", timeout=2) as r:
            return r.status == 200
    except OSError:
        return False


def running(data_dir: str | Path) -> ServerInfo | None:
    """The server recorded in ``data_dir``'s pid file if its process is still alive, else None."""
    pf = Path(data_dir) / PID_FILE
    if not pf.exists():
        return None
    try:
        info = json.loads(pf.read_text())
        srv = ServerInfo(
            pid=int(info["pid"]),
            port=int(info["port"]),
            url=info["url"],
            data_dir=str(data_dir),
            database=str(info.get("database", "sqlite")),
            workers=int(info.get("workers", 1)),
        )
    except (ValueError, KeyError, TypeError):
        return None
    return srv if _alive(srv.pid) and _is_label_studio(srv.pid) else None


def _is_label_studio(pid: int) -> bool:
    """Whether ``pid`` runs Label Studio (a pid file restored from a backup may name someone else's)."""
    from biaskit.services import runs

    return runs(pid, (b"label-studio", b"label_studio", b"gunicorn"))


def ls_version() -> str | None:
    """The installed Label Studio's version (from its package metadata folder), None if unknown."""
    import glob

    try:
        exe = Path(find_label_studio()).resolve()
    except ServerError:
        return None
    found = glob.glob(str(exe.parent.parent / "lib" / "python*" / "site-packages" / "label_studio-*.dist-info"))
    return Path(found[0]).name[len("label_studio-") : -len(".dist-info")] if len(found) == 1 else None


def _migrated_by(data_dir: Path) -> str | None:
    try:
        return json.loads((data_dir / DB_INFO_FILE).read_text()).get("migrated_by_label_studio")
    except (OSError, ValueError, AttributeError):
        return None


def _ls_python() -> Path:
    """The Python of Label Studio's environment (next to its ``label-studio`` executable)."""
    exe = Path(find_label_studio())
    for name in ("python", "python3"):
        if (exe.parent / name).exists():
            return exe.parent / name
    raise ServerError(f"no Python next to {exe}. Fix: install Label Studio in a virtual environment.")


def _gunicorn_command(port: int, workers: int) -> list[str]:
    """Label Studio's WSGI application (the one its Docker image runs under uWSGI) under gunicorn."""
    py = _ls_python()
    probe = subprocess.run(
        [str(py), "-c", "import gunicorn, label_studio, os; print(os.path.dirname(label_studio.__file__))"],
        capture_output=True,
        text=True,
        timeout=120,
    )
    if probe.returncode != 0:
        raise ServerError(
            f"{say('workers')} above 1 needs gunicorn in Label Studio's environment ({py.parent.parent}). Fix: "
            f"{py.parent / 'pip'} install gunicorn (`make services` does)."
        )
    return [
        str(py),
        "-m",
        "gunicorn",
        "--workers",
        str(workers),
        "--bind",
        f"127.0.0.1:{port}",
        "--chdir",
        probe.stdout.strip(),
        "--timeout",
        "600",
        "--graceful-timeout",
        "20",
        "core.wsgi:application",
    ]


def start_server(
    data_dir: str | Path,
    *,
    port: int | None = None,
    email: str | None = None,
    password: str | None = None,
    token: str | None = None,
    timeout: float = 300,
    database: str | Database | None = None,
    workers: int = 1,
) -> ServerInfo:
    """Start Label Studio on 127.0.0.1 for ``data_dir`` (initialising it first if needed).

    ``database``: ``None`` (the folder's own; SQLite for a new folder), a :class:`Database` or a
    ``postgresql://`` URL. ``workers``: 1 runs ``label-studio start`` (one process); more run
    Label Studio's WSGI application under gunicorn with that many worker processes (PostgreSQL
    only: SQLite takes one writer at a time; migrations are applied first, as ``start`` does).
    Returns once ``/health`` answers. The process runs in its own session so that it outlives the
    command that started it; stop it with :func:`stop_server`. Idempotent: a live server already
    recorded for ``data_dir`` is returned as is.
    """
    from biaskit.io import atomic_write_text

    data_dir = Path(data_dir).resolve()
    live = running(data_dir)
    if live is not None:
        return live
    db = resolve_database(data_dir, database)
    _check_workers(data_dir, db, workers)
    _ready_data_dir(data_dir, db, workers, email=email, password=password, token=token)
    port = port or free_port()
    url = f"http://127.0.0.1:{port}"
    cmd, env = _server_command(data_dir, db, port, workers, email=email, password=password, token=token)
    t0 = time.monotonic()
    proc = _launch(cmd, env, data_dir)
    info = ServerInfo(
        pid=proc.pid, port=port, url=url, data_dir=str(data_dir), database=db.public_url(), workers=workers
    )
    atomic_write_text(data_dir / PID_FILE, json.dumps(info.to_json()) + "\n")
    _wait_healthy(proc, data_dir, db, url, timeout)
    info.started_in_s = round(time.monotonic() - t0, 2)
    return info


def _check_workers(data_dir: Path, db: Database, workers: int) -> None:
    """More than one web worker needs PostgreSQL."""
    if workers < 1:
        raise InputError(
            f"{say('workers')} must be at least 1, got {workers}.", fix="give the number of web processes."
        )
    if workers > 1 and not db.is_postgres:
        raise InputError(
            "several web workers need PostgreSQL: SQLite lets one process write at a time.",
            path=data_dir,
            fix=f"run this folder with {say('workers', 1)}, or a new {say('data_dir')} with "
            f"{say('database', 'postgresql://...')}",
        )


def _ready_data_dir(
    data_dir: Path, db: Database, workers: int, *, email: str | None, password: str | None, token: str | None
) -> None:
    """Initialise a new data folder (admin credentials needed); before gunicorn, migrate one that the
    running Label Studio version has not migrated (``label-studio start`` migrates, gunicorn does not)."""
    if not is_initialised(data_dir):
        if not (email and password and token):
            raise ServerError(
                f"{data_dir} is not an initialised Label Studio data directory and no admin credentials were "
                "given. Fix: set LABEL_STUDIO_API_KEY (the admin token to create) and LABEL_STUDIO_PASSWORD "
                "(`biaskit annotate serve` reads them)."
            )
        init_data_dir(data_dir, email=email, password=password, token=token, database=db)
    elif workers > 1 and (ls_version() is None or _migrated_by(data_dir) != ls_version()):
        init_data_dir(data_dir, email=None, password=None, token=None, database=db, migrate_only=True)


def _server_command(
    data_dir: Path,
    db: Database,
    port: int,
    workers: int,
    *,
    email: str | None,
    password: str | None,
    token: str | None,
) -> tuple[list[str], dict[str, str]]:
    """The command line and environment of the server process: ``label-studio start``, or gunicorn."""
    env = ls_env(data_dir, email=email, password=password, token=token, database=db)
    if workers > 1:
        env["DJANGO_SETTINGS_MODULE"] = "core.settings.label_studio"
        return _gunicorn_command(port, workers), env
    return [find_label_studio(), "start", "--no-browser", "--internal-host", "127.0.0.1", "--port", str(port)], env


def _launch(cmd: list[str], env: dict[str, str], data_dir: Path) -> subprocess.Popen:
    """The server process, in its own session (it outlives the command), logging to the folder's log."""
    log = open(data_dir / LOG_FILE, "ab")
    try:
        return subprocess.Popen(
            cmd,
            env=env,
            cwd=str(data_dir),
            stdin=subprocess.DEVNULL,
            stdout=log,
            stderr=subprocess.STDOUT,
            start_new_session=True,
        )
    finally:
        log.close()


def _wait_healthy(proc: subprocess.Popen, data_dir: Path, db: Database, url: str, timeout: float) -> None:
    """Return once ``/health`` answers; a process that exits, or does not answer within ``timeout``
    seconds, is an error (its pid file removed)."""
    deadline = time.monotonic() + timeout
    while time.monotonic() < deadline:
        if proc.poll() is not None:
            (data_dir / PID_FILE).unlink(missing_ok=True)
            port = urllib.parse.urlsplit(url).port
            fix = (
                "check that the PostgreSQL server runs and accepts this user and password"
                if db.is_postgres
                else f"check that port {port} is free"
            )
            raise ServerError(
                f"label-studio exited with code {proc.returncode} while starting: "
                f"{_log_tail(data_dir / LOG_FILE)} (see {data_dir / LOG_FILE}). Fix: {fix}."
            )
        if _healthy(url):
            return
        time.sleep(0.25)
    _terminate(proc.pid)
    (data_dir / PID_FILE).unlink(missing_ok=True)
    raise ServerError(f"label-studio did not answer on {url}/health within {timeout:.0f}s; see {data_dir / LOG_FILE}.")


def serve(
    opts: ServeOptions, *, ask_password: Callable[[], str], note: Callable[[str], None]
) -> tuple[ServerInfo, bool]:
    """``biaskit annotate serve``: ``(the server, whether it was running already)``. The first start of a
    data folder takes the admin token from ``$LABEL_STUDIO_API_KEY`` and the password from
    ``$LABEL_STUDIO_PASSWORD``, else from ``ask_password()``; ``note`` tells that it is initialising."""
    data_dir = opts.data_dir
    db = resolve_database(data_dir, opts.database)  # parses (and registers the password as a secret) first
    live = running(data_dir)
    if live is not None:
        return live, True
    token = password = None
    if not is_initialised(data_dir):
        token = os.environ.get("LABEL_STUDIO_API_KEY")
        if not token:
            raise BiaskitError(
                "first start of a new data folder needs the admin API token to create. Fix: "
                "export LABEL_STUDIO_API_KEY=$(python -c 'import secrets; print(secrets.token_hex(20))')"
            )
        password = os.environ.get("LABEL_STUDIO_PASSWORD") or ask_password()
        note(f"initialising {data_dir} on {db.public_url()} (database migrations; about a minute) ...")
    info = start_server(
        data_dir, port=opts.port, email=opts.email, password=password, token=token, database=db, workers=opts.workers
    )
    return info, False


def stop_server(data_dir: str | Path, timeout: float = 30) -> ServerInfo | None:
    """Stop the server recorded in ``data_dir`` (SIGTERM, then SIGKILL after ``timeout``).

    Returns the stopped server, or None when none was running (a stale pid file is removed).
    """
    data_dir = Path(data_dir).resolve()
    if not data_dir.exists():
        raise InputError("no such directory.", path=data_dir, fix=f"pass the {say('data_dir')} used with `serve`.")
    info = running(data_dir)
    pf = data_dir / PID_FILE
    if info is None:
        pf.unlink(missing_ok=True)
        return None
    _terminate(info.pid, timeout)
    _port_closed(info.port, 10)  # the socket goes with the last thread
    pf.unlink(missing_ok=True)
    return info
