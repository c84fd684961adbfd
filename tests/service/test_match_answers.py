"""The server's end of a match process's socket pair: frames split anyhow by the socket still
settle each request with its own answer, in order (see `match_processes.Answers`)."""

from __future__ import annotations

import asyncio
from collections import deque

import pytest

from errkb.core.errors import Unavailable
from errkb.service.read.match_link import HEAD, Answers, Worker


def _worker() -> Worker:
    worker = Worker.__new__(Worker)  # no process: only the answers it owes
    worker.pending = deque()
    worker.dead = False
    return worker


def test_answers_split_anywhere_settle_their_requests_in_order() -> None:
    async def run() -> None:
        loop = asyncio.get_running_loop()
        worker = _worker()
        answers = Answers(worker)
        payloads = [b"first", b"", b"x" * 70_000, b"last"]
        owed = [loop.create_future() for _ in payloads]
        worker.pending.extend(owed)
        owed[1].cancel()  # its client went away: its answer is read and dropped
        stream = b"".join(HEAD.pack(len(p)) + p for p in payloads)
        for size in (1, 3, 4096):
            for i in range(0, len(stream), size):  # headers and bodies cut anywhere
                answers.data_received(stream[i : i + size])
            assert [f.result() for f in owed if not f.cancelled()] == [
                payloads[0],
                payloads[2],
                payloads[3],
            ]
            assert not worker.pending
            owed = [loop.create_future() for _ in payloads]
            worker.pending.extend(owed)
            owed[1].cancel()

    asyncio.run(run())


def test_a_closed_socket_fails_what_the_process_owed_with_a_503() -> None:
    async def run() -> None:
        loop = asyncio.get_running_loop()
        worker = _worker()
        answers = Answers(worker)
        owed = [loop.create_future() for _ in range(2)]
        worker.pending.extend(owed)
        answers.data_received(HEAD.pack(2) + b"o")  # half an answer, then the process dies
        answers.connection_lost(None)
        assert worker.dead and not worker.pending
        for answer in owed:
            with pytest.raises(Unavailable):
                answer.result()

    asyncio.run(run())
