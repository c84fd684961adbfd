"""One match process: its own index of the database, answering requests over a socket pair.

The server sends each request as one frame (a 4-byte big-endian length, then a pickle, the
framing of `multiprocessing.Connection`) and reads the answers in the order it sent them. The
process answers them in that order, with the index it built (or read from the cache folder,
`match.index_file`, when an earlier process kept that of the same content) before it said it
was ready. It never rebuilds that index. Before each batch of requests it reads the ingest
generation (one row): once an ingest has committed since the index was built, it answers no
match from it, but `StaleIndex` for each, and the server asks a fresh process instead and
retires this one, whose
memory goes back to the system whole (an index rebuilt in place left about 20 MiB per process
behind at each ingest). A match never comes from an index older than the last committed ingest
(it once answered `{"matches": []}` for 2-7 s after each release of `make run` was stored). It
ends with the server however the server dies (`core.lifeline`), and hands back response models
(or, for the API, their JSON), never the index's objects.
"""

from __future__ import annotations

import gc
import logging
import os
import pickle
import signal
import socket
import struct
import time
from collections.abc import Callable
from multiprocessing.connection import Connection
from pathlib import Path
from typing import TypeVar

from errkb.core.db import make_engine
from errkb.core.errors import BadInput
from errkb.core.lifeline import exit_with
from errkb.core.memory import tune_allocator
from errkb.core.priority import lower_priority
from errkb.service.match.index_file import IndexFile, kept_index
from errkb.service.match.queries import DbEngine, generation_now
from errkb.service.read.matches import (
    MatchIndex,
    MatchOut,
    matches_in,
    matches_json_in,
    text_of,
)

READY = b"ready"
HEAD = struct.Struct("!i")  # multiprocessing.Connection's frame header
_READ_SIZE = 1 << 20
_BATCH_SECONDS = 0.002  # a batch of answers is written once this long has gone into it
_LONG_TEXT = 1 << 16  # a request this large is answered in a batch of its own
_Answer = TypeVar("_Answer", list[MatchOut], bytes)
log = logging.getLogger(__name__)


class StaleIndex(Exception):
    """The answer instead of a match when an ingest committed after the index was built."""


class _Freshness:
    """Whether the database has moved on since the index was built: checked before each batch
    of requests, and on a "check" request (at most every `refresh_seconds` otherwise)."""

    def __init__(self, engine: DbEngine, index: MatchIndex, refresh_seconds: float) -> None:
        self._engine = engine
        self._generation = index.generation
        self._period = refresh_seconds
        self._checked = time.monotonic()
        self.stale = False

    def check(self, *, now: bool = False) -> bool:
        moment = time.monotonic()
        if not self.stale and (now or moment - self._checked >= self._period):
            self._checked = moment
            try:
                self.stale = generation_now(self._engine) != self._generation
            except Exception:  # noqa: BLE001 - a database that does not answer: ask again later
                log.warning("the match process could not read the ingest generation")
        return self.stale


def serve(
    conn: Connection,
    database_url: str,
    refresh_seconds: float,
    nice: int,
    cache_dir: str | None,
    parent: int,
) -> None:
    """The process's whole life: read or build the index (kept in `cache_dir`, when given), say
    so, then answer until the server goes."""
    # Ctrl-C in a terminal reaches every process of its group: the server stops this one, which
    # would otherwise print a KeyboardInterrupt traceback from wherever it waited.
    signal.signal(signal.SIGINT, signal.SIG_IGN)
    exit_with(parent)
    lower_priority(nice)
    tune_allocator()  # each 1 MiB body it is sent is handed back once matched
    engine = make_engine(database_url)
    kept = IndexFile(Path(cache_dir), database_url) if cache_dir is not None else None
    # The index is about a million objects that live as long as the process: the collector,
    # run over and over while they are made, took half the build's time (2.1 s against 4.0 s,
    # one sglang release), and each later full collection would walk them all again.
    gc.disable()
    try:
        index = kept_index(engine, kept)
    finally:
        gc.freeze()
        gc.enable()
    freshness = _Freshness(engine, index, refresh_seconds)
    conn.send_bytes(READY)
    _answer_frames(conn, index, freshness)


def _answer_frames(conn: Connection, index: MatchIndex, freshness: _Freshness) -> None:
    """Answer every request the server sent, in order, until it closes its end. The requests
    that arrived together are answered together, in one write: the server then wakes once for
    them, not once each (at 4 server processes under load, about 3 arrive together). A batch
    ends after 2 ms, and before a long text, so that short answers are not held behind one."""
    sock = socket.socket(fileno=os.dup(conn.fileno()))
    sock.setblocking(True)
    buffer = bytearray()
    out = bytearray()
    try:
        while True:
            if not _complete(buffer):
                data = sock.recv(_READ_SIZE)
                if not data:  # the server closed its end
                    return
                buffer += data
                continue
            started = time.monotonic()
            freshness.check(now=True)  # every request of the batch arrived before this read
            while _complete(buffer):
                (size,) = HEAD.unpack_from(buffer)
                if out and (size > _LONG_TEXT or time.monotonic() - started > _BATCH_SECONDS):
                    break
                request = bytes(buffer[HEAD.size : HEAD.size + size])
                del buffer[: HEAD.size + size]
                payload = pickle.dumps(_answer(index, freshness, request), protocol=5)
                out += HEAD.pack(len(payload))
                out += payload
            sock.sendall(out)
            out.clear()
    except OSError:  # the server went away
        return


def _complete(buffer: bytearray) -> bool:
    """True when the buffer starts with a whole frame."""
    if len(buffer) < HEAD.size:
        return False
    (size,) = HEAD.unpack_from(buffer)
    return len(buffer) >= HEAD.size + size


def _answer(index: MatchIndex, freshness: _Freshness, request: bytes) -> tuple[bool, object]:
    """(whether the database moved on, the answer) for one request."""
    op, *args = pickle.loads(request)
    answer: list[MatchOut] | bytes | Exception | None = None
    if freshness.stale and op in ("match", "match_json"):
        answer = StaleIndex()
    elif op == "match":
        answer = _match(index, matches_in, *args)
    elif op == "match_json":  # the API's body, serialized here
        answer = _match(index, matches_json_in, *args)
    stale = freshness.check(now=op == "check")
    return stale, answer


def _match(
    index: MatchIndex,
    render: Callable[..., _Answer],
    body: bytes,
    content_type: str,
    limit: int,
    public_url: str,
) -> _Answer | Exception:
    """The matches as `render` gives them (the models, or the API's JSON body), or the
    exception to raise in the server (a bad body is a 422 there)."""
    try:
        text = text_of(body, content_type)
        return render(index, text, limit=limit, public_url=public_url)
    except BadInput as exc:  # returned, not raised: its `loc` would not survive pickling
        return exc
    except Exception as exc:  # noqa: BLE001 - handed to the server, which raises it again
        return exc if _picklable(exc) else RuntimeError(f"{type(exc).__name__}: {exc}")


def _picklable(exc: Exception) -> bool:
    try:
        pickle.loads(pickle.dumps(exc))
    except Exception:  # noqa: BLE001 - any failure means: send a plain one instead
        return False
    return True
