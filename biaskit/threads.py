"""How many CPU threads torch may use: one rule for every command that runs a model on the CPU.

torch starts one thread per physical core of the machine, whatever CPU quota the process runs under
(a container limited to 2 of a host's 64 cores still gets 32 threads) and however many other runs
share the cores. Threads that outnumber the cores spin while they wait for each other and make every
run several times slower (issue 12 reported 80 s instead of about 14 s for two `evaluate` runs at
once on 2 cores; not re-measured since, see docs/reliability.md). The rule, first match wins:

1. ``biaskit --threads N ...`` (the root option; it sets ``$BIASKIT_THREADS`` for the run);
2. ``$BIASKIT_THREADS``;
3. ``$OMP_NUM_THREADS`` (the variable every OpenMP program reads; ``torchrun`` sets it to 1);
4. otherwise torch's own default, never more than the CPUs this process may use (its affinity mask
   and cgroup quota): a run on a machine of its own keeps torch's default, a run under a quota gets
   the quota.

The count does not follow what else runs on the machine: the bits of a score depend on it (a
matrix product split over 2 threads can round differently from 1), and the same inputs must give
the same scores whatever runs beside them. Several runs at once on one machine: give each its share
(``biaskit --threads 1 ...`` for two runs on 2 cores).

:func:`apply` sets ``torch.set_num_threads`` (and the inter-op pool) once per process, on the CPU
only: :func:`biaskit.evaluation.models.pick_device` calls it for every evaluator's model (LMs, SEAT
encoders, the sentiment classifier, ...) and the ``hf`` MT engine when it loads its model.
"""

from __future__ import annotations

import os
from pathlib import Path

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


def choose(requested: int | None = None, *, default: int | None = None) -> tuple[int, str]:
    """``(threads, why)`` by the rule in the module docstring; ``default``: torch's own count."""
    if requested:
        return max(1, int(requested)), "--threads"
    for var in (ENV, "OMP_NUM_THREADS"):
        v = os.environ.get(var, "").strip()
        if v.isdigit() and int(v) > 0:
            return int(v), f"${var}"
    cpus = usable_cpus()
    if default and default <= cpus:
        return int(default), "torch's default"
    return cpus, f"the {cpus} CPU(s) this process may use"


def apply(requested: int | None = None) -> int:
    """Set torch's thread pools by :func:`choose` (once per process)."""
    if _applied:
        return _applied[0]
    import torch

    n, _ = choose(requested, default=torch.get_num_threads())
    if n != torch.get_num_threads():  # torch's default (a run alone, no quota): left as it is
        torch.set_num_threads(n)
        try:
            torch.set_num_interop_threads(max(1, min(n, 2)))
        except RuntimeError:  # already set, or parallel work already started
            pass
    _applied.append(n)
    return n
