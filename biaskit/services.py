"""Local servers a command starts and stops (``annotate serve``: Label Studio; ``llm serve``: llama.cpp).

What both need, below the stages: a free loopback port, whether a recorded process still lives (and
runs what it should: a pid file restored from a backup may name someone else's process), waiting for
a port to close, and stopping a server's whole process group (SIGTERM, then SIGKILL). A server is
started in its own session (``start_new_session=True``), so its pid is its process group.
"""

from __future__ import annotations

import os
import signal
import socket
import time
from collections.abc import Iterable
from pathlib import Path


def free_port() -> int:
    """A TCP port on 127.0.0.1 that nothing listens on right now."""
    with socket.socket() as s:
        s.bind(("127.0.0.1", 0))
        return s.getsockname()[1]


def alive(pid: int) -> bool:
    """Whether process ``pid`` runs (a zombie does not, unless another of its threads still runs)."""
    try:
        os.kill(pid, 0)
    except ProcessLookupError:
        return False
    except PermissionError:  # pragma: no cover - someone else's process
        return True
    # a zombie counts as dead -- but a multi-threaded process whose main thread has exited shows
    # its leader as a zombie while other threads still run (and hold its sockets): look at every thread
    try:
        tasks = os.listdir(f"/proc/{pid}/task")
    except OSError:
        return True
    for t in tasks:
        try:
            with open(f"/proc/{pid}/task/{t}/stat") as fh:
                if fh.read().rsplit(")", 1)[-1].split()[0] not in ("Z", "X"):
                    return True
        except OSError:
            continue
    return False


def runs(pid: int, needles: Iterable[bytes]) -> bool:
    """Whether ``pid``'s command line holds one of ``needles`` (no ``/proc``: trust the pid)."""
    try:
        cmd = Path(f"/proc/{pid}/cmdline").read_bytes().replace(b"\0", b" ")
    except OSError:
        return True
    return any(k in cmd for k in needles)


def port_closed(port: int, timeout: float) -> bool:
    """Wait until nothing accepts connections on 127.0.0.1:``port`` (False: still open after ``timeout``)."""
    deadline = time.monotonic() + timeout
    while time.monotonic() < deadline:
        with socket.socket() as s:
            s.settimeout(0.5)
            if s.connect_ex(("127.0.0.1", port)) != 0:
                return True
        time.sleep(0.1)
    return False


def signal_group(pid: int, sig: int) -> None:
    """Send ``sig`` to the server's whole process group (it runs in its own session: pgid == pid), so
    that any worker it forked goes too; otherwise to the process alone."""
    try:
        if os.getpgid(pid) == pid:
            os.killpg(pid, sig)
            return
    except ProcessLookupError:
        raise
    except OSError:  # pragma: no cover
        pass
    os.kill(pid, sig)


def terminate(pid: int, timeout: float = 30) -> bool:
    """SIGTERM the server's group, wait up to ``timeout`` s, then SIGKILL; False: it was not running."""
    try:
        signal_group(pid, signal.SIGTERM)
    except ProcessLookupError:
        return False
    deadline = time.monotonic() + timeout
    while time.monotonic() < deadline:
        try:  # reap it when it is our child
            done, _ = os.waitpid(pid, os.WNOHANG)
            if done:
                return True
        except ChildProcessError:
            pass
        if not alive(pid):
            return True
        time.sleep(0.2)
    try:
        signal_group(pid, signal.SIGKILL)
    except ProcessLookupError:
        return True
    try:
        os.waitpid(pid, 0)
    except ChildProcessError:
        pass
    return True
