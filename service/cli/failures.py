"""How the command line fails: one readable line on stderr and an exit code per kind of failure.

A person running `errkb` should learn what went wrong and what to do, not read a traceback; a
script should tell failures apart by exit code. The traceback is still there behind `--debug`.
"""

from __future__ import annotations

import signal
import sys
import traceback
from types import FrameType

import typer
from pydantic import ValidationError
from sqlalchemy.exc import DBAPIError, OperationalError

from errkb.core.errors import BadInput, ConfigError, ErrkbError, NotFound, SourceError

# Exit codes. 1 and 2 keep their usual meanings (nothing found / bad usage, as click uses it).
NOT_FOUND = 1
USAGE = 2
CONFIG = 3
SOURCE = 4
BAD_INPUT = 5
DATABASE = 6
FAILED = 7  # any other handled error
CRASH = 70  # a bug (BSD's EX_SOFTWARE)
INTERRUPTED = 130  # Ctrl-C
TERMINATED = 143  # SIGTERM

_BY_CLASS: tuple[tuple[type[ErrkbError], int], ...] = (
    (NotFound, NOT_FOUND),
    (ConfigError, CONFIG),
    (SourceError, SOURCE),
    (BadInput, BAD_INPUT),
)


class Terminated(BaseException):
    """SIGTERM, raised in the main thread so that `with` blocks (the worker pool) clean up."""


def raise_terminated(signum: int, frame: FrameType | None) -> None:
    """A SIGTERM handler: unwind the stack like Ctrl-C does."""
    raise Terminated


def install_signal_handlers() -> None:
    """Turn SIGTERM into `Terminated` (the default action would skip every cleanup)."""
    signal.signal(signal.SIGTERM, raise_terminated)


def exit_code(exc: BaseException) -> int:
    """The exit code for a failure."""
    if isinstance(exc, ErrkbError):
        return next((code for cls, code in _BY_CLASS if isinstance(exc, cls)), FAILED)
    if isinstance(exc, DBAPIError | OperationalError):
        return DATABASE
    if isinstance(exc, ValidationError) and exc.title == "Settings":
        return CONFIG
    if isinstance(exc, KeyboardInterrupt | typer.Abort):
        return INTERRUPTED
    if isinstance(exc, Terminated):
        return TERMINATED
    return CRASH


def one_line(exc: BaseException, database_url: str = "") -> str:
    """The message for a failure, on one line."""
    if isinstance(exc, ErrkbError):
        text = exc.message
    elif isinstance(exc, DBAPIError | OperationalError):
        cause = _first_line(str(exc.orig if isinstance(exc, DBAPIError) else exc))
        where = f" at {database_url}" if database_url else ""
        text = f"cannot use the database{where}: {cause} (check ERRKB_DATABASE_URL)"
    elif isinstance(exc, ValidationError) and exc.title == "Settings":
        text = _bad_setting(exc)
    elif isinstance(exc, KeyboardInterrupt | typer.Abort):
        text = "interrupted"
    elif isinstance(exc, Terminated):
        text = "terminated by SIGTERM"
    else:
        detail = _first_line(str(exc))
        text = (
            f"unexpected {type(exc).__name__}"
            + (f": {detail}" if detail else "")
            + " (a bug in errkb; run with --debug for the traceback)"
        )
    return "error: " + " ".join(text.split())


def report(exc: BaseException, *, debug: bool, database_url: str = "") -> int:
    """Print the failure (with its traceback when `debug`) and return its exit code."""
    if debug:
        traceback.print_exception(exc, file=sys.stderr)
    print(one_line(exc, database_url), file=sys.stderr)
    return exit_code(exc)


def _bad_setting(exc: ValidationError) -> str:
    """The first invalid setting, named as the environment spells it."""
    first = exc.errors()[0]
    name = "ERRKB_" + "_".join(str(part) for part in first["loc"]).upper()
    value = first.get("input")
    shown = f" ({value!r})" if isinstance(value, str | int | float) else ""
    return f"the setting {name}{shown} is not valid: {first['msg']}"


def _first_line(text: str) -> str:
    return next((line.strip() for line in text.splitlines() if line.strip()), "")[:300]
