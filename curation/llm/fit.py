"""Fitting the client to the server: how many requests it takes at once, and how long one takes.

A local server often answers one request at a time: llama-cpp-python's server (the one ``biaskit llm
serve`` runs) holds one lock around every completion, and llama.cpp's own ``llama-server`` has a fixed
number of slots. Requests sent beyond that wait in the server's queue, and their timeout runs while
they wait: with 4 in flight and 30-50 s per request, the last one times out at 120 s although the
server is up and working. So the client

- **asks what the server can take** (:func:`probe_slots`, once per client): llama.cpp's server reports
  ``total_slots`` at ``GET /props``; llama-cpp-python's names itself in its OpenAPI document
  (``GET /openapi.json``: "llama.cpp Python API", one request at a time). The job runner then keeps at
  most that many requests in flight, and says so when it asked for more (:class:`InFlight`);
- **backs off on timeouts** (:class:`Backoff`): a request that times out halves the requests in flight
  (down to 1), then doubles the timeout (up to :data:`MAX_TIMEOUT_FACTOR` times the one set), and is asked
  again; each step prints one line saying what happened and which setting starts there next time;
- **reports a timeout as a timeout**: when the longest timeout is reached with one request at a time
  and requests still time out, the run stops with "answered none of N requests within T s: it is up but
  slow", distinct from a server that is down (a refused connection: "cannot connect").

:class:`~.base.BaseLLM` uses these through three named methods (``server_slots``, ``_in_flight``,
``_backed_off``), so the retry loop itself keeps its shape.
"""

from __future__ import annotations

import json
import threading
import urllib.request
from dataclasses import dataclass, field

MAX_TIMEOUT_FACTOR = 4  # the longest timeout the back-off reaches, as a multiple of the one set
ONE_AT_A_TIME_SERVERS = ("llama.cpp python",)  # OpenAPI titles of servers that answer one request at a time


def _get_json(url: str, timeout: float) -> dict | None:
    try:
        with urllib.request.urlopen(url, timeout=timeout) as r:  # an http(s) endpoint URL
            if r.status != 200:
                return None
            data = json.loads(r.read(2_000_000).decode("utf-8", "replace"))
    except (OSError, ValueError):
        return None
    return data if isinstance(data, dict) else None


def probe_slots(base_url: str, timeout: float = 3.0) -> tuple[int | None, str]:
    """``(requests the server takes at once, how that is known)`` for an OpenAI-compatible API root
    (``http://host:port/v1``); ``(None, "")`` when the server does not say."""
    root = base_url.rstrip("/")
    root = root[: -len("/v1")] if root.endswith("/v1") else root
    props = _get_json(root + "/props", timeout)
    if props is not None:
        n = props.get("total_slots")
        if isinstance(n, int) and n >= 1:
            return n, f"llama.cpp's server reports {n} slot(s)"
    api = _get_json(root + "/openapi.json", timeout)
    title = str(((api or {}).get("info") or {}).get("title") or "")
    if any(t in title.lower() for t in ONE_AT_A_TIME_SERVERS):
        return 1, f"{title.strip()} answers one request at a time"
    return None, ""


class InFlight:
    """At most ``limit`` requests at once (None: no limit); the limit can be lowered while requests run."""

    def __init__(self, limit: int | None = None):
        self.limit = limit
        self.now = 0
        self.peak = 0  # the most requests seen in flight at once
        self._cv = threading.Condition()

    def __enter__(self) -> InFlight:
        with self._cv:
            while self.limit is not None and self.now >= self.limit:
                self._cv.wait()
            self.now += 1
            self.peak = max(self.peak, self.now)
        return self

    def __exit__(self, *exc: object) -> None:
        with self._cv:
            self.now -= 1
            self._cv.notify_all()

    def lower(self, limit: int) -> None:
        with self._cv:
            self.limit = max(1, limit)


@dataclass
class Backoff:
    """The timeout back-off of one client: the settings in force and the timeouts since the last answer."""

    timeout: float  # the timeout set (--timeout / timeout = ...)
    current: float = 0.0  # the timeout in force
    in_a_row: int = 0  # requests that timed out since the last answer
    steps: list[str] = field(default_factory=list)  # what the back-off did, for the run log

    def __post_init__(self) -> None:
        self.current = self.current or self.timeout

    @property
    def longest(self) -> float:
        return self.timeout * MAX_TIMEOUT_FACTOR

    def settings(self, flight: InFlight) -> tuple[float, int | None]:
        """What a request is sent with (compared after a timeout: did another request back off already?)."""
        return self.current, flight.limit

    def step(self, flight: InFlight, sent: tuple[float, int | None]) -> str | None:
        """After a timeout of a request sent with ``sent``: back off one step and return what was done
        (``"retry"`` alone when another request backed off meanwhile), or None when nothing is left to
        try (one request at a time, the longest timeout)."""
        self.in_a_row += 1
        if sent != self.settings(flight):
            return "retry"
        in_flight = flight.limit if flight.limit is not None else flight.peak
        if in_flight > 1:
            flight.lower(in_flight // 2)
            done = f"{flight.limit} request(s) at a time"
        elif self.current < self.longest:
            self.current = min(self.longest, self.current * 2)
            done = f"a {self.current:g} s timeout"
        else:
            return None
        self.steps.append(done)
        return done

    def answered(self) -> None:
        self.in_a_row = 0
