"""How many CPU threads torch may use: one rule for every command that runs a model on the CPU.

torch starts with one thread per core. Two biaskit runs on a 2-core machine then run four busy
threads on two cores, and OpenMP threads that spin while they wait for each other make each run
several times slower than running them one after the other (issue 12 reported 80 s instead of about
14 s for two `evaluate` runs on 2 cores; not re-measured since, see docs/reliability.md). The rule,
first match wins:

1. ``biaskit --threads N ...`` (sets ``$BIASKIT_THREADS`` for the run);
2. ``$BIASKIT_THREADS``;
3. ``$OMP_NUM_THREADS`` (the variable every OpenMP program reads);
4. otherwise the CPUs this process may use (its affinity mask and cgroup quota, not the machine's
   count), never more than torch's own default (its physical cores), divided by the biaskit model
   runs already running on this machine (each registers itself in ``$XDG_RUNTIME_DIR`` or the temp
   folder while it holds a model), at least 1. A single run on a machine of its own thus keeps
   torch's default; a run under a CPU quota, or beside other runs, gets its share.

:func:`apply` sets ``torch.set_num_threads`` (and the inter-op pool) once per process, on the CPU
only: :func:`biaskit.evaluation.models.pick_device` calls it for every evaluator's model (LMs, SEAT
encoders, the sentiment classifier, ...) and the ``hf`` MT engine when it loads its model.
"""
from __future__ import annotations

import atexit
import os
import tempfile
from pathlib import Path
from typing import Optional

from .io import pid_alive

ENV = "BIASKIT_THREADS"
_applied: list[int] = []


def usable_cpus() -> int:
    """CPUs this process may run on: the affinity mask, capped by a cgroup v2 CPU quota."""
    try:
        n = len(os.sched_getaffinity(0))
    except (AttributeError, OSError):
        n = os.cpu_count() or 1
    try:
        quota, period = Path("/sys/fs/cgroup/cpu.max").read_text().split()[:2]
        if quota != "max":
            n = min(n, max(1, int(int(quota) // int(period))))
    except (OSError, ValueError):
        pass
    return max(1, n)


def _registry() -> Path:
    base = os.environ.get("XDG_RUNTIME_DIR") or tempfile.gettempdir()
    return Path(base) / f"biaskit-runs-{os.getuid() if hasattr(os, 'getuid') else 'user'}"


def other_runs() -> int:
    """biaskit model runs of this user alive on this machine, besides this process."""
    d = _registry()
    n = 0
    try:
        entries = list(d.iterdir())
    except OSError:
        return 0
    for f in entries:
        try:
            pid = int(f.name)
        except ValueError:
            continue
        if pid == os.getpid():
            continue
        if pid_alive(pid):
            n += 1
        else:
            f.unlink(missing_ok=True)
    return n


def _register() -> None:
    d = _registry()
    try:
        d.mkdir(mode=0o700, exist_ok=True)
        me = d / str(os.getpid())
        me.touch()
        atexit.register(lambda: me.unlink(missing_ok=True))
    except OSError:
        pass


def choose(requested: Optional[int] = None, *, ceiling: Optional[int] = None) -> tuple[int, str]:
    """``(threads, why)`` by the rule in the module docstring; ``ceiling``: torch's own default."""
    if requested:
        return max(1, int(requested)), "--threads"
    for var in (ENV, "OMP_NUM_THREADS"):
        v = os.environ.get(var, "").strip()
        if v.isdigit() and int(v) > 0:
            return int(v), f"${var}"
    cpus = usable_cpus() if not ceiling else min(usable_cpus(), max(1, int(ceiling)))
    runs = 1 + other_runs()
    return max(1, cpus // runs), f"{cpus} CPU(s) shared by {runs} biaskit model run(s)"


def apply(requested: Optional[int] = None) -> int:
    """Set torch's thread pools by :func:`choose` (once per process) and register this run."""
    if _applied:
        return _applied[0]
    import torch

    n, _ = choose(requested, ceiling=torch.get_num_threads())
    _register()
    torch.set_num_threads(n)
    try:
        torch.set_num_interop_threads(max(1, min(n, 2)))
    except RuntimeError:  # already set, or parallel work already started
        pass
    _applied.append(n)
    return n
