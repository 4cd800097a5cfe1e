"""`biaskit evaluate` commands (thin typer wrappers around pure functions).

Commands live in one module per family, each registering itself on ``app``:
``pairs_cli`` (CrowS-Pairs / IndiBias pairs), ``cats_cli`` (StereoSet CATs, SEAT, correlation),
``extrinsic_cli`` (group-level extrinsic scores for correlation) and ``seat_names_cli`` (SEAT name lists
by corpus frequency).
"""
from __future__ import annotations

import typer

app = typer.Typer(no_args_is_help=True, add_completion=False)

from . import pairs_cli  # noqa: E402,F401
from . import cats_cli  # noqa: E402,F401
from . import extrinsic_cli  # noqa: E402,F401
from . import seat_names_cli  # noqa: E402,F401
