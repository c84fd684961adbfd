"""One match process: its own index of the database, answering requests over a socket pair.

The server sends each request as one frame (a 4-byte big-endian length, then a pickle, the
framing of `multiprocessing.Connection`) and reads the answers in the order it sent them. The
process answers one request at a time; it builds its index before it says it is ready, and keeps
it fresh in a background thread (`LiveIndex`). It ends with the server however the server dies
(`core.lifeline`), and hands back response models, never the index's objects.
"""

from __future__ import annotations

import pickle
from multiprocessing.connection import Connection
from typing import Any

from errkb.core.db import make_engine
from errkb.core.errors import BadInput
from errkb.core.lifeline import exit_with
from errkb.core.priority import lower_priority
from errkb.service.match.matcher.live import LiveIndex
from errkb.service.read.matches import MatchOut, live_index, matches_in, text_of

READY = b"ready"


def serve(
    conn: Connection, database_url: str, refresh_seconds: float, nice: int, parent: int
) -> None:
    """The process's whole life: build the index, say so, then answer until the server goes."""
    exit_with(parent)
    lower_priority(nice)
    live = live_index(make_engine(database_url), refresh_seconds=refresh_seconds)
    conn.send_bytes(READY)
    while True:
        try:
            request = conn.recv_bytes()
        except (EOFError, OSError):  # the server closed its end
            return
        conn.send_bytes(pickle.dumps(_answer(live, pickle.loads(request)), protocol=5))


def _answer(live: LiveIndex, request: tuple[Any, ...]) -> Any:
    """The answer to one request, or the exception it raised (the server raises it again)."""
    op, *args = request
    try:
        if op == "match":
            return _match(live, *args)
        live.current()  # "wait": notice a new generation now, whatever the refresh period
        live.wait(args[0])
        return None
    except Exception as exc:  # noqa: BLE001 - handed to the server, which raises it again
        return exc if _picklable(exc) else RuntimeError(f"{type(exc).__name__}: {exc}")


def _match(
    live: LiveIndex, body: bytes, content_type: str, limit: int, public_url: str
) -> list[MatchOut] | BadInput:
    try:
        text = text_of(body, content_type)
    except BadInput as exc:  # returned, not raised: its `loc` would not survive pickling
        return exc
    return matches_in(live.current(), text, limit=limit, public_url=public_url)


def _picklable(exc: Exception) -> bool:
    try:
        pickle.loads(pickle.dumps(exc))
    except Exception:  # noqa: BLE001 - any failure means: send a plain one instead
        return False
    return True
