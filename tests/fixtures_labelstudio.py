"""pytest fixtures that run a REAL Label Studio (OSS) on loopback, shared by the annotation and
translation-review tests.

* ``ls_template`` (session): an initialised data folder (migrated SQLite DB, admin user, known
  legacy API token), built once with ``label-studio init`` (~35-100 s on 2 cores) and cached across
  runs in ``$LS_TEMPLATE_DIR`` or ``~/.cache/biaskit/ls-template`` (built in a temporary folder and
  renamed into place under a file lock, so concurrent test runs never see half a template).
* ``ls_server`` (session): a copy of the template (with its hidden ``.env``) started through
  :func:`biaskit.annotation.server.start_server` on a free 127.0.0.1 port (~4-14 s); yields
  ``{"url", "token", "pid", "data_dir", "email", "password"}``; stopped at the end of the session.
* ``ls_env`` (function): ``ls_server`` with ``LABEL_STUDIO_URL`` / ``LABEL_STUDIO_API_KEY`` set for the test.
* ``ls_fresh_server`` (function): a server of its own (for tests that stop and restart it).
* ``ls_annotator`` (session): a factory ``ls_annotator(email) -> {"email", "password", "token", "id"}``
  creating a *real* annotator account through the invite link + sign-up form (the only way an OSS
  user gets a usable token), or logging in when the account exists. Plain function:
  :func:`create_annotator`.

Everything skips with a clear reason when the ``label-studio`` executable is not installed.
"""

from __future__ import annotations

import fcntl
import os
import shutil
import time
from pathlib import Path

import pytest

ADMIN_EMAIL = "admin@example.com"
ADMIN_PASSWORD = "admin-pass-123"
ADMIN_TOKEN = "0123456789abcdef0123456789abcdef01234567"  # 40 chars like a DRF token


def _ls_bin() -> str:
    from biaskit.annotation.server import ServerError, find_label_studio

    try:
        return find_label_studio()
    except ServerError as exc:
        pytest.skip(f"Label Studio not installed: {exc}")


def template_dir() -> Path:
    return Path(os.environ.get("LS_TEMPLATE_DIR") or Path.home() / ".cache" / "biaskit" / "ls-template")


def build_template(tpl: Path) -> Path:
    """Build (once) the initialised template folder ``tpl``; safe under concurrent test runs."""
    from biaskit.annotation.server import init_data_dir

    if (tpl / ".ready").exists():
        return tpl
    tpl.parent.mkdir(parents=True, exist_ok=True)
    with open(tpl.parent / f".{tpl.name}.lock", "w") as lock:
        fcntl.flock(lock, fcntl.LOCK_EX)
        if (tpl / ".ready").exists():
            return tpl
        tmp = tpl.parent / f".{tpl.name}.building-{os.getpid()}"
        shutil.rmtree(tmp, ignore_errors=True)
        secs = init_data_dir(tmp, email=ADMIN_EMAIL, password=ADMIN_PASSWORD, token=ADMIN_TOKEN)
        (tmp / ".ready").write_text(f"{secs:.1f}\n")
        shutil.rmtree(tpl, ignore_errors=True)
        os.replace(tmp, tpl)
        print(f"\n[ls] template built in {secs:.1f}s at {tpl}")
    return tpl


@pytest.fixture(scope="session")
def ls_template() -> Path:
    _ls_bin()
    return build_template(template_dir())


def start_copy(template: Path, dest: Path) -> dict:
    """Copy the template to ``dest`` and start a server on it; returns the ``ls_server`` dict."""
    from biaskit.annotation.server import start_server

    shutil.copytree(template, dest, dirs_exist_ok=True)  # keeps .env (SECRET_KEY) and the DB
    (dest / "biaskit-ls.json").unlink(missing_ok=True)
    info = start_server(dest, timeout=240)
    print(f"\n[ls] server pid={info.pid} up on {info.url} in {info.started_in_s}s")
    return {
        "url": info.url,
        "token": ADMIN_TOKEN,
        "pid": info.pid,
        "data_dir": dest,
        "email": ADMIN_EMAIL,
        "password": ADMIN_PASSWORD,
    }


@pytest.fixture(scope="session")
def ls_server(ls_template, tmp_path_factory):
    from biaskit.annotation.server import stop_server

    data = tmp_path_factory.mktemp("ls_data")
    srv = start_copy(ls_template, data)
    try:
        yield srv
    finally:
        stop_server(data)


@pytest.fixture
def ls_env(ls_server, monkeypatch):
    """``ls_server`` with ``LABEL_STUDIO_URL`` / ``LABEL_STUDIO_API_KEY`` set and progress bars off."""
    monkeypatch.setenv("LABEL_STUDIO_URL", ls_server["url"])
    monkeypatch.setenv("LABEL_STUDIO_API_KEY", ls_server["token"])
    monkeypatch.setenv("BIASKIT_NO_PROGRESS", "1")
    return ls_server


@pytest.fixture
def ls_fresh_server(ls_template, tmp_path):
    from biaskit.annotation.server import stop_server

    data = tmp_path / "ls_data"
    srv = start_copy(ls_template, data)
    try:
        yield srv
    finally:
        stop_server(data)


def create_annotator(server: dict, email: str, password: str | None = None) -> dict:
    """A real annotator account with its own API token (invite link + sign-up, or log-in if it exists)."""
    import httpx
    from label_studio_sdk import LabelStudio

    password = password or f"pw-{email.split('@')[0]}-123456"
    admin = LabelStudio(base_url=server["url"], api_key=server["token"])
    with httpx.Client(base_url=server["url"], follow_redirects=True, timeout=60) as c:
        existing = {u.email: u.id for u in admin.users.list()}
        if email in existing:
            page = c.get("/user/login/")
            r = c.post(
                str(page.url),
                data={"email": email, "password": password, "csrfmiddlewaretoken": c.cookies.get("csrftoken")},
                headers={"Referer": str(page.url)},
            )
        else:
            invite = admin.organizations.invites.get_invite_link().invite_url
            page = c.get(invite)  # sets the CSRF cookie
            r = c.post(
                str(page.url),
                data={"email": email, "password": password, "csrfmiddlewaretoken": c.cookies.get("csrftoken")},
                headers={"Referer": str(page.url)},
            )
        r.raise_for_status()
        t = c.get("/api/current-user/token")
        t.raise_for_status()
        token = t.json()["token"]
    me = LabelStudio(base_url=server["url"], api_key=token).users.whoami()
    assert me.email == email, f"signed in as {me.email}, expected {email}"
    return {"email": email, "password": password, "token": token, "id": me.id}


@pytest.fixture(scope="session")
def ls_annotator(ls_server):
    cache: dict[str, dict] = {}

    def make(email: str, password: str | None = None) -> dict:
        if email not in cache:
            cache[email] = create_annotator(ls_server, email, password)
        return cache[email]

    return make


def write_tuples(path: Path, n: int, start: int = 0) -> Path:
    """``n`` distinct synthetic tuples (JSONL) for load tests: group i / trait i, axes and polarities cycling."""
    import json

    axes = ("gender", "caste", "religion", "region")
    with open(path, "w", encoding="utf-8") as fh:
        for i in range(start, start + n):
            fh.write(
                json.dumps(
                    {
                        "identity": f"group {i}",
                        "attribute": f"trait {i}",
                        "axis": axes[i % 4],
                        "polarity": "negative" if i % 2 else "positive",
                    }
                )
                + "\n"
            )
    return path


def wait_until(pred, timeout: float = 30.0, step: float = 0.2):
    """Poll ``pred`` until it returns a truthy value (for eventually consistent server state)."""
    deadline = time.monotonic() + timeout
    while True:
        v = pred()
        if v or time.monotonic() > deadline:
            return v
        time.sleep(step)
