"""The small hierarchy of handled errors; `service.app` maps them to HTTP in one place."""

from __future__ import annotations


class ErrkbError(Exception):
    """A handled error with a user-facing message and an HTTP status."""

    status_code = 400

    def __init__(self, message: str) -> None:
        super().__init__(message)
        self.message = message


class NotFound(ErrkbError):
    status_code = 404


class BodyTooLarge(ErrkbError):
    status_code = 413


class BadInput(ErrkbError):
    status_code = 422

    def __init__(self, message: str, loc: tuple[str | int, ...] = ()) -> None:
        super().__init__(message)
        self.loc = loc  # where the bad value was, as in FastAPI's errors: ("query", "cursor")


class SourceError(ErrkbError):
    """A snapshot source could not be read (bad ref, unreachable URL, missing release)."""

    status_code = 502


class ConfigError(ErrkbError):
    """pins.toml or settings are invalid."""


class Unavailable(ErrkbError):
    """The service cannot answer now (a database that does not answer, a full queue)."""

    status_code = 503

    def __init__(self, message: str, retry_after: int | None = None) -> None:
        super().__init__(message)
        self.retry_after = retry_after  # seconds, for the Retry-After header


class SchemaBehind(ErrkbError):
    """The database schema is older than the code, and auto-migration is off."""

    status_code = 503
