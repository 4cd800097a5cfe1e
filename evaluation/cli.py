"""`biaskit evaluate` commands (thin typer wrappers around pure functions).

The commands live in one module per family and know nothing of this one: ``pairs_cli``
(CrowS-Pairs / IndiBias pairs), ``cats_cli`` (StereoSet CATs, SEAT, correlation), ``intrinsic_cli``
(CEAT, ILPS), ``extrinsic_cli``
(group-level extrinsic scores for correlation, a sub-group) and ``seat_names_cli`` (SEAT name lists
by corpus frequency, SEAT tests from a release) define the commands (each from its options model,
:mod:`.options`) or sub-apps, what they print alike comes from ``cli_options``, and this module puts
them on ``app``.
"""

from __future__ import annotations

import typer

from . import cats_cli, extrinsic_cli, intrinsic_cli, pairs_cli, seat_names_cli

app = typer.Typer(no_args_is_help=True, add_completion=False)
app.command("pairs")(pairs_cli.pairs_command)
app.command("cats")(cats_cli.cats_command)
app.command("seat")(cats_cli.seat_command)
app.command("seat-names")(seat_names_cli.seat_names_command)
app.command("seat-tests")(seat_names_cli.seat_tests_command)
app.command("correlate")(cats_cli.correlate_command)
app.command("ceat")(intrinsic_cli.ceat_command)
app.command("ilps")(intrinsic_cli.ilps_command)
app.add_typer(extrinsic_cli.ext_app, name="extrinsic")
