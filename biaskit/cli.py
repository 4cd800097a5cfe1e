"""The ``biaskit`` command: a typer root with one sub-command group per stage.

Every command is a thin wrapper around a pure function in its stage's package. Errors that
biaskit raises on purpose (:class:`~biaskit.errors.BiaskitError`) are printed as one line
(file, row, fix) with exit code 2 instead of a traceback.
"""
from __future__ import annotations

import sys
from typing import Optional

import typer

from . import __version__
from .clitools import plain_flag_help
from .errors import BiaskitError

plain_flag_help()  # --help shows no "<bool>" after flags (see clitools.plain_flag_help)

app = typer.Typer(
    name="biaskit",
    help="Build, validate and use social-bias benchmarks for language models.",
    no_args_is_help=True,
    add_completion=False,
    context_settings={"help_option_names": ["-h", "--help"]},
)


def _version(value: bool) -> None:
    if value:
        typer.echo(f"biaskit {__version__}")
        raise typer.Exit()


@app.callback()
def _root(version: Optional[bool] = typer.Option(None, "--version", callback=_version, is_eager=True,
                                                 help="Print the version and exit.")) -> None:
    """biaskit: curation -> annotation -> evaluation of social-bias benchmarks."""


def _add_stage(module: str, name: str, help: str) -> None:
    import importlib

    sub = importlib.import_module(module).app
    app.add_typer(sub, name=name, help=help)


_add_stage("biaskit.evaluation.cli", "evaluate", "Score language models on bias benchmarks (pairs, CATs, SEAT).")
_add_stage("biaskit.curation.cli", "curate", "Generate, adapt, translate and check minimal pairs with LLMs/MT.")
_add_stage("biaskit.annotation.cli", "annotate", "Validate data with annotators in Label Studio; aggregate; agreement.")
_add_stage("biaskit.datasets_cli", "data", "List and download the public datasets biaskit knows (with checksums).")
_add_stage("biaskit.release_cli", "release", "Build, verify and compare dataset releases (splits, card, checksums).")

from .pipeline.cli import register as _register_pipeline  # noqa: E402  (init, run, status: the one path)

_register_pipeline(app)


def main(argv: Optional[list[str]] = None) -> None:
    from .clitools import mask_secret_args, remember_argv

    args = sys.argv[1:] if argv is None else list(argv)
    mask_secret_args(args)  # registers --token values for redaction
    remember_argv(args)  # for clitools.command_line(), also when main([...]) is called in-process
    try:
        rv = app(args=argv, prog_name="biaskit", standalone_mode=False)
        # with standalone_mode=False, click returns typer.Exit's code instead of exiting
        if isinstance(rv, int) and rv:
            sys.exit(rv)
    except BiaskitError as exc:
        from .clitools import echo_error

        echo_error(str(exc))  # literally: user text keeps its [brackets]; secrets masked
        sys.exit(2)
    except SystemExit:
        raise
    except KeyboardInterrupt:
        sys.stderr.write("interrupted; finished work is saved and the run can be resumed.\n")
        sys.exit(130)
    except Exception as exc:  # usage errors (unknown option, missing argument, bad choice)
        if _is_click_exception(exc, "ClickException"):
            import io

            from .redact import redact

            buf = io.StringIO()
            exc.show(file=buf)  # the usage error echoes arguments: mask any secret among them
            sys.stderr.write(redact(buf.getvalue()))
            sys.exit(exc.exit_code)
        if _is_click_exception(exc, "Abort"):
            sys.exit(1)
        raise


def _is_click_exception(exc: BaseException, name: str) -> bool:
    """True for click's exception ``name`` from click itself or the copy typer vendors (``typer._click``).

    typer >= 0.2x ships its own click, whose classes are not click's: match by class and module.
    """
    return any(c.__name__ == name and c.__module__.endswith("click.exceptions") for c in type(exc).__mro__)


if __name__ == "__main__":  # pragma: no cover
    main()
