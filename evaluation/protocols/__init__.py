"""Paper protocols by name: every setting of a paper's setup that changes a number, with its section.

One module per protocol (``crows``, ``indibias``, ``indibias_seat``, ``seat_may2019``, ``stereoset``,
``cao2022``), registered lazily in :data:`PROTOCOLS`; the ``--protocol`` choices follow the registry.
``none`` means biaskit's own defaults (reported as "not comparable with a paper"); ``auto`` (the
default) takes the protocol of the data's origin (:mod:`.origin`). See docs/fidelity.md.
"""

from __future__ import annotations

from biaskit.errors import BiaskitError
from biaskit.options import say
from biaskit.registry import Registry

from .base import (  # noqa: F401 (re-exported: the protocol modules and callers import them from here)
    AUTO,
    NONE,
    Applied,
    Difference,
    Origin,
    Protocol,
    Setting,
    apply_protocol,
    mark_not_comparable,
    verdict,
)

PROTOCOLS: Registry = Registry("protocol")
PROTOCOLS.register(
    "crows",
    "biaskit.evaluation.protocols.crows:PROTOCOL",
    help="CrowS-Pairs (Nangia et al. 2020): masked-LM PLL, token masking, sum",
)
PROTOCOLS.register(
    "indibias",
    "biaskit.evaluation.protocols.indibias:PROTOCOL",
    help="IndiBias pairs (Sahoo et al. 2024 §6.1): word masking, |C| / per-token mean, 5 x 80%",
)
PROTOCOLS.register(
    "indibias-seat",
    "biaskit.evaluation.protocols.indibias_seat:PROTOCOL",
    help="IndiBias SEAT (Appendix B): [CLS] embedding, p = 0.01",
)
PROTOCOLS.register(
    "seat-may2019",
    "biaskit.evaluation.protocols.seat_may2019:PROTOCOL",
    help="SEAT as sent-bias runs it (May et al. 2019): pooling per model family, Holm-Bonferroni",
)
PROTOCOLS.register(
    "stereoset",
    "biaskit.evaluation.protocols.stereoset:PROTOCOL",
    help="StereoSet (Nadeem et al. 2021): likelihood scoring, NSP heads for intersentence",
)
PROTOCOLS.register(
    "cao2022",
    "biaskit.evaluation.protocols.cao2022:PROTOCOL",
    help="Cao et al. 2022: CEAT, ILPS, StereoSet intrasentence PLL; Pearson over group variances",
)

CHOICES = (AUTO, NONE, *PROTOCOLS.names())  # the --protocol choices


def get_protocol(name: str | None) -> Protocol | None:
    """The protocol called ``name`` (None for ``none``)."""
    if name is None or name.lower() == NONE:
        return None
    return PROTOCOLS.get(name)


def choose(command: str, requested: str | None, origin: Origin | None) -> tuple[Protocol | None, str]:
    """The protocol a run of ``evaluate <command>`` follows and why: ``requested`` (a name, ``none`` or
    ``auto``/None = the data's origin). A protocol that does not cover the command is refused."""
    if requested and requested.lower() != AUTO:
        p = get_protocol(requested)
        if p is not None and command not in p.commands:
            fits = [n for n in PROTOCOLS.names() if command in PROTOCOLS.get(n).commands]
            raise BiaskitError(
                f"protocol '{p.name}' does not cover `evaluate {command}` (it covers "
                f"{', '.join(p.commands)}). Fix: pass {' or '.join(say('protocol', n) for n in fits + [NONE])}"
            )
        return p, say("protocol")
    if origin is None or origin.protocol is None:
        return None, f"data of no known origin ({origin.what})" if origin else f"no {say('protocol')}"
    p = get_protocol(origin.protocol)
    if p is not None and command not in p.commands:
        return None, f"{origin.what}; protocol {p.name} does not cover evaluate {command}"
    return p, f"the data's origin: {origin.what}"
