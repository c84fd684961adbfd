"""Conditional GETs for pages and the JSON API: answers change only when the content key does.

Every ingest commits a new `meta.generation` with its snapshot (and `errkb explain` bumps the AI
counter), so (content key, URL) identifies a response exactly; the newest snapshot's ingest time
is its Last-Modified. `Fresh` is the one dependency every cacheable GET route takes: it answers
`304 Not Modified` before the route runs when the client's copy is current, and otherwise hands
the route the validators to send. Shared caches (a CDN) may store the answers but revalidate
each use, so nothing is served stale after an ingest; `ERRKB_HTTP_MAX_AGE` trades that for fewer
round trips.
"""

from __future__ import annotations

import hashlib
from dataclasses import dataclass
from datetime import UTC, datetime
from email.utils import format_datetime, parsedate_to_datetime
from functools import lru_cache
from typing import Annotated, Any

from fastapi import Depends, Request, Response

from errkb.service.queries import KbVersion, VersionTracker


@dataclass(frozen=True)
class Validators:
    """The ETag and Last-Modified of one response, and the version they were computed at."""

    etag: str
    last_modified: datetime | None
    version: KbVersion
    cache_control: str = "public, no-cache"

    def headers(self) -> dict[str, str]:
        """Response headers: the validators and the caching policy."""
        out = {"ETag": self.etag, "Cache-Control": self.cache_control}
        if self.last_modified is not None:
            out["Last-Modified"] = http_date(self.last_modified)
        return out


@lru_cache(maxsize=64)
def http_date(moment: datetime) -> str:
    """An HTTP date (the same few values on every request: formatted once each)."""
    return format_datetime(moment, usegmt=True)


class NotModified(Exception):
    """Raised by `Fresh` when the client's copy is current; the app answers 304."""

    def __init__(self, validators: Validators) -> None:
        super().__init__("not modified")
        self.validators = validators


def cache_control(max_age: int) -> str:
    """The Cache-Control of cacheable answers: revalidate always, or allow `max_age` seconds."""
    if max_age <= 0:
        return "public, no-cache"
    return f"public, max-age={max_age}, stale-while-revalidate={max_age}"


def validators_for(request: Request, version: KbVersion) -> Validators:
    """Validators for this request's URL (path + query) under `version`."""
    scope = request.scope  # not `request.url`, which builds a whole URL object
    key = b"\x1f".join((version.key.encode(), scope["path"].encode(), scope["query_string"]))
    digest = hashlib.sha256(key).hexdigest()[:20]
    max_age: int = request.app.state.settings.http_max_age
    return Validators(f'"{digest}"', version.last_modified, version, cache_control(max_age))


def not_modified(request: Request, v: Validators) -> bool:
    """True when the client's cached copy is current (If-None-Match wins over If-Modified-Since)."""
    inm = request.headers.get("if-none-match")
    if inm is not None:
        tags = [t.strip().removeprefix("W/") for t in inm.split(",")]
        return "*" in tags or v.etag in tags
    ims = request.headers.get("if-modified-since")
    if ims and v.last_modified is not None:
        try:
            since = parsedate_to_datetime(ims)
        except (TypeError, ValueError):
            return False
        if since.tzinfo is None:
            since = since.replace(tzinfo=UTC)
        return v.last_modified <= since
    return False


def fresh_validators(request: Request) -> Validators:
    """The request's validators; raises NotModified when the client's copy is current.

    The version check (see `KeyWatch`) runs on the event loop: a hop to the thread pool would
    cost more than the check itself. The hottest routes call this directly rather than through
    `Fresh`, which saves them FastAPI's dependency resolution.
    """
    tracker: VersionTracker = request.app.state.versions
    v = validators_for(request, tracker.current())
    if not_modified(request, v):
        raise NotModified(v)
    return v


async def fresh(request: Request) -> Validators:
    """`fresh_validators` as a dependency (async, so it runs on the event loop)."""
    return fresh_validators(request)


def not_modified_response(v: Validators) -> Response:
    """An empty 304 carrying the validators."""
    return Response(status_code=304, headers=v.headers())


Fresh = Annotated[Validators, Depends(fresh)]

# What a route that checks the validators declares in the OpenAPI document.
NOT_MODIFIED: dict[int | str, dict[str, Any]] = {
    304: {"description": "The copy the client holds (If-None-Match / If-Modified-Since) is current"}
}
