"""How `errkb serve` writes its answers (`service.server`): a fixed-length answer leaves in one
write, and no answer is held back: not a HEAD's, not a streamed one, not a pipelined pair's.

The holding is checked on the transport wrapper with a recording transport; the server-level
tests talk raw HTTP/1.1 to a real `errkb serve`, where a held head would hang the client.
"""

from __future__ import annotations

import json
import socket
import subprocess
from collections.abc import Iterator
from concurrent.futures import ThreadPoolExecutor

import httpx
import pytest
from serving import free_port, serve, stop, wait_healthy

from errkb.service.server import OneSendPerAnswer

HEAD = b"HTTP/1.1 200 OK\r\ncontent-type: application/json\r\ncontent-length: 2\r\n\r\n"
CHUNKED = b"HTTP/1.1 200 OK\r\ncontent-type: text/plain\r\ntransfer-encoding: chunked\r\n\r\n"


class Recording:
    """A transport that records what reaches it."""

    def __init__(self) -> None:
        self.writes: list[bytes] = []
        self.closed = False

    def write(self, data: bytes) -> None:
        assert not self.closed, "written after close"
        self.writes.append(data)

    def close(self) -> None:
        self.closed = True

    def is_closing(self) -> bool:
        return self.closed

    def get_extra_info(self, name: str) -> str:
        return f"info {name}"


def wrapped() -> tuple[OneSendPerAnswer, Recording]:
    recording = Recording()
    return OneSendPerAnswer(recording), recording  # type: ignore[arg-type]


def test_a_fixed_length_answer_leaves_in_one_write() -> None:
    transport, recording = wrapped()
    transport.write(HEAD)
    assert recording.writes == []
    transport.write(b"{}")
    transport.answered()
    assert recording.writes == [HEAD + b"{}"]
    transport.write(HEAD)  # the next answer on the connection is held again
    transport.write(b"[]")
    assert recording.writes == [HEAD + b"{}", HEAD + b"[]"]


def test_a_head_without_body_leaves_when_its_answer_ends() -> None:
    transport, recording = wrapped()
    transport.write(HEAD)  # a HEAD request: uvicorn writes no body
    transport.answered()
    assert recording.writes == [HEAD]


def test_streamed_and_interim_answers_are_never_held() -> None:
    transport, recording = wrapped()
    transport.write(CHUNKED)
    assert recording.writes == [CHUNKED]
    transport.write(b"2\r\nok\r\n")
    transport.write(b"0\r\n\r\n")
    transport.answered()
    continue_ = b"HTTP/1.1 100 Continue\r\n\r\n"
    transport.write(continue_)
    assert recording.writes[-1] == continue_
    transport.write(HEAD)  # the final answer after a 100 is still its first write
    transport.write(b"{}")
    assert recording.writes[-1] == HEAD + b"{}"
    assert len(recording.writes) == 5


def test_a_body_chunk_that_looks_like_a_head_is_not_held() -> None:
    transport, recording = wrapped()
    transport.write(HEAD)
    transport.write(b"{")
    transport.write(HEAD)  # later bytes of the same answer, whatever they hold
    assert recording.writes == [HEAD + b"{", HEAD]


def test_close_sends_what_is_held_first() -> None:
    transport, recording = wrapped()
    transport.write(HEAD)
    transport.close()
    assert recording.writes == [HEAD] and recording.closed
    assert transport.get_extra_info("peername") == "info peername"


@pytest.fixture(scope="module")
def base(tmp_path_factory: pytest.TempPathFactory) -> Iterator[tuple[str, int]]:
    """A real `errkb serve` on an empty knowledge base: (host, port)."""
    data = tmp_path_factory.mktemp("server")
    port = free_port()
    proc: subprocess.Popen[str] = serve(f"sqlite:///{data / 'kb.sqlite3'}", port, data)
    try:
        wait_healthy(f"http://127.0.0.1:{port}", proc)
        yield "127.0.0.1", port
    finally:
        stop(proc)


def read_answer(
    sock: socket.socket, buffered: bytes, head_only: bool = False
) -> tuple[bytes, bytes]:
    """One HTTP answer from `sock` (after `buffered`): (its head and body, what follows it)."""
    data = buffered
    while b"\r\n\r\n" not in data:
        chunk = sock.recv(65536)
        assert chunk, f"the server closed the connection after {data!r}"
        data += chunk
    head, rest = data.split(b"\r\n\r\n", 1)
    length = 0
    for line in head.split(b"\r\n")[1:]:
        name, _, value = line.partition(b":")
        if name.strip().lower() == b"content-length":
            length = int(value)
    if head_only:
        return head, rest
    while len(rest) < length:
        chunk = sock.recv(65536)
        assert chunk, "the server closed the connection mid-body"
        rest += chunk
    return head + b"\r\n\r\n" + rest[:length], rest[length:]


def connect(base: tuple[str, int]) -> socket.socket:
    return socket.create_connection(base, timeout=10)  # a held answer fails on this timeout


def test_get_head_and_pipelined_answers_all_arrive(base: tuple[str, int]) -> None:
    with connect(base) as sock:  # each answer after one of each kind: none is left held
        sock.sendall(b"HEAD /healthz HTTP/1.1\r\nHost: t\r\n\r\n")
        head, rest = read_answer(sock, b"", head_only=True)
        assert head.startswith(b"HTTP/1.1 200 ") and b"content-length" in head.lower()
        assert rest == b""
        sock.sendall(b"GET /healthz HTTP/1.1\r\nHost: t\r\n\r\n")
        answer, rest = read_answer(sock, rest)
        assert answer.startswith(b"HTTP/1.1 200 ") and json.loads(answer.split(b"\r\n\r\n")[1])
        sock.sendall(b"HEAD /healthz HTTP/1.1\r\nHost: t\r\n\r\n")
        head, rest = read_answer(sock, rest, head_only=True)
        assert head.startswith(b"HTTP/1.1 200 ") and rest == b""
        sock.sendall(b"GET /healthz HTTP/1.1\r\nHost: t\r\n\r\n" * 2)  # pipelined
        first, rest = read_answer(sock, rest)
        second, rest = read_answer(sock, rest)
        assert first.startswith(b"HTTP/1.1 200 ") and second.startswith(b"HTTP/1.1 200 ")
        assert rest == b""


def test_an_expected_continue_comes_before_the_body_is_sent(base: tuple[str, int]) -> None:
    body = json.dumps({"text": "ValueError: nothing matches this"}).encode()
    with connect(base) as sock:
        sock.sendall(
            b"POST /api/match HTTP/1.1\r\nHost: t\r\nContent-Type: application/json\r\n"
            b"Expect: 100-continue\r\nContent-Length: %d\r\n\r\n" % len(body)
        )
        interim, rest = read_answer(sock, b"", head_only=True)
        assert interim.startswith(b"HTTP/1.1 100 ")
        sock.sendall(body)
        answer, rest = read_answer(sock, rest)
        assert answer.startswith(b"HTTP/1.1 200 ") and rest == b""


def test_a_closing_answer_is_sent_whole(base: tuple[str, int]) -> None:
    with connect(base) as sock:
        sock.sendall(b"GET /healthz HTTP/1.1\r\nHost: t\r\nConnection: close\r\n\r\n")
        answer, rest = read_answer(sock, b"")
        assert answer.startswith(b"HTTP/1.1 200 ") and rest == b""
        assert sock.recv(1) == b""  # and the connection is closed after it


def test_the_server_runs_the_c_parser_and_loop() -> None:
    from uvicorn.protocols.http.httptools_impl import HttpToolsProtocol

    from errkb.core.settings import Settings
    from errkb.service.server import server_options

    options = server_options(Settings())
    assert issubclass(options["http"], HttpToolsProtocol) and options["loop"] == "uvloop"


def test_large_matches_at_once_all_get_their_answer(base: tuple[str, int]) -> None:
    """Eight bodies near the 1 MiB cap at once: more than the match process's socket holds, so
    the server's writes to it wait for room (`match_link.Answers`), and every one is answered."""
    host, port = base
    filler = "INFO step done\n" * (900 * 1024 // 15)

    def post(n: int) -> tuple[int, object]:
        text = f"{filler}ValueError: body {n} ends here\n"
        r = httpx.post(f"http://{host}:{port}/api/match", json={"text": text}, timeout=60)
        return r.status_code, r.json()

    with ThreadPoolExecutor(8) as pool:
        answers = list(pool.map(post, range(8)))
    assert answers == [(200, {"matches": [], "raised_by": None})] * 8
