"""A private, throw-away PostgreSQL server for tests and benchmarks (Debian's ``postgresql`` package).

:class:`PgCluster` runs ``initdb`` in a fresh temporary folder and ``pg_ctl start`` on a free
127.0.0.1 port, with a password-protected superuser (SCRAM over TCP, as a team's server would
have) and a private Unix socket folder. ``initdb`` refuses to run as root, so when the tests run as
root the server runs as the ``postgres`` system user that Debian's package creates. Nothing is
shared with a system cluster: stop it and the folder is gone.

``pg_binaries()`` says why PostgreSQL cannot run here (not installed, no unprivileged user) so
that tests skip with that reason.
"""

from __future__ import annotations

import glob
import os
import pwd
import secrets
import shutil
import socket
import subprocess
import tempfile
from pathlib import Path


class PgUnavailable(RuntimeError):
    """PostgreSQL cannot be run on this machine (the message says why)."""


def pg_bindir() -> Path:
    """The folder of ``initdb``/``pg_ctl``: ``$PG_BINDIR``, ``pg_config --bindir`` or Debian's newest."""
    cands = []
    if os.environ.get("PG_BINDIR"):
        cands.append(Path(os.environ["PG_BINDIR"]))
    if shutil.which("pg_config"):
        try:
            cands.append(
                Path(
                    subprocess.run(["pg_config", "--bindir"], capture_output=True, text=True, check=True).stdout.strip()
                )
            )
        except (OSError, subprocess.CalledProcessError):
            pass
    cands += [
        Path(p)
        for p in sorted(
            glob.glob("/usr/lib/postgresql/*/bin"),
            key=lambda p: int(Path(p).parent.name) if Path(p).parent.name.isdigit() else 0,
            reverse=True,
        )
    ]
    if shutil.which("initdb"):
        cands.append(Path(shutil.which("initdb")).resolve().parent)
    for c in cands:
        if (c / "initdb").exists() and (c / "pg_ctl").exists():
            return c
    raise PgUnavailable(
        "PostgreSQL server binaries (initdb, pg_ctl) not found: install Debian's `postgresql` "
        "package (`make services` does) or set PG_BINDIR"
    )


def _run_as() -> str | None:
    """The user to run the server as: None (ourselves) unless we are root."""
    if os.geteuid() != 0:
        return None
    try:
        pwd.getpwnam("postgres")
    except KeyError:
        raise PgUnavailable("running as root and there is no `postgres` system user for initdb") from None
    return "postgres"


def free_port() -> int:
    with socket.socket() as s:
        s.bind(("127.0.0.1", 0))
        return s.getsockname()[1]


class PgCluster:
    """One private PostgreSQL server: ``start()``, ``createdb(name)``, ``url(db)``, ``stop()``."""

    def __init__(self, *, durable: bool = True, user: str = "biaskit", password: str | None = None):
        self.bindir = pg_bindir()
        self.run_as = _run_as()
        self.user = user
        self.password = password or "pw-" + secrets.token_hex(12)
        self.durable = durable
        self.root: Path | None = None
        self.port: int | None = None
        self.host = "127.0.0.1"

    # --- paths ------------------------------------------------------------------------------
    @property
    def data(self) -> Path:
        assert self.root is not None
        return self.root / "data"

    @property
    def sockdir(self) -> Path:
        assert self.root is not None
        return self.root / "sock"

    def _cmd(self, args: list[str], **kw) -> subprocess.CompletedProcess:
        kw.setdefault("capture_output", True)
        kw.setdefault("text", True)
        env = {k: v for k, v in os.environ.items() if not k.startswith("PG")}
        env["LC_ALL"] = "C.UTF-8"
        return subprocess.run(args, user=self.run_as, env=env, cwd=self.root, **kw)

    # --- life cycle -------------------------------------------------------------------------
    def start(self, timeout: float = 120) -> PgCluster:
        self.root = Path(tempfile.mkdtemp(prefix="biaskit-pg-"))
        self.sockdir.mkdir()
        pwfile = self.root / "pw"
        pwfile.write_text(self.password + "\n")
        if self.run_as:
            ent = pwd.getpwnam(self.run_as)
            for p in (self.root, self.sockdir, pwfile):
                os.chown(p, ent.pw_uid, ent.pw_gid)
        r = self._cmd(
            [
                str(self.bindir / "initdb"),
                "-D",
                str(self.data),
                "-U",
                self.user,
                f"--pwfile={pwfile}",
                "--auth-local=trust",
                "--auth-host=scram-sha-256",
                "-E",
                "UTF8",
                "--no-instructions",
            ],
            timeout=timeout,
        )
        pwfile.unlink()
        if r.returncode != 0:
            raise PgUnavailable(f"initdb failed: {r.stderr.strip()[-500:]}")
        self.port = free_port()
        opts = [
            f"-p {self.port}",
            f"-k {self.sockdir}",
            f"-c listen_addresses={self.host}",
            "-c max_connections=60",
            "-c shared_buffers=64MB",
        ]
        if not self.durable:  # tests: a crash of the test machine loses nothing we need
            opts += ["-c fsync=off", "-c synchronous_commit=off", "-c full_page_writes=off"]
        r = self._cmd(
            [
                str(self.bindir / "pg_ctl"),
                "-D",
                str(self.data),
                "-l",
                str(self.root / "server.log"),
                "-o",
                " ".join(opts),
                "-w",
                "-t",
                str(int(timeout)),
                "start",
            ],
            timeout=timeout + 10,
        )
        if r.returncode != 0:
            log = (
                (self.root / "server.log").read_text(errors="replace")[-800:]
                if (self.root / "server.log").exists()
                else ""
            )
            raise PgUnavailable(f"pg_ctl start failed: {r.stderr.strip()[-300:]} {log}")
        return self

    def stop(self) -> None:
        if self.root is None:
            return
        if self.data.exists():
            self._cmd([str(self.bindir / "pg_ctl"), "-D", str(self.data), "-m", "fast", "-w", "stop"], timeout=120)
        shutil.rmtree(self.root, ignore_errors=True)
        self.root = None

    def __enter__(self) -> PgCluster:
        return self.start()

    def __exit__(self, *exc) -> None:
        self.stop()

    # --- use --------------------------------------------------------------------------------
    def psql(self, sql: str, db: str = "postgres") -> str:
        """Run ``sql`` through the private socket (trust auth); returns unaligned output."""
        r = self._cmd(
            [
                str(self.bindir / "psql"),
                "-h",
                str(self.sockdir),
                "-p",
                str(self.port),
                "-U",
                self.user,
                "-d",
                db,
                "-v",
                "ON_ERROR_STOP=1",
                "-At",
                "-c",
                sql,
            ],
            timeout=120,
        )
        if r.returncode != 0:
            raise RuntimeError(f"psql failed: {r.stderr.strip()}")
        return r.stdout.strip()

    def createdb(self, name: str) -> str:
        self.psql(f'CREATE DATABASE "{name}"')
        return name

    def url(self, db: str, *, with_password: bool = True) -> str:
        cred = f"{self.user}:{self.password}" if with_password else self.user
        return f"postgresql://{cred}@{self.host}:{self.port}/{db}"
