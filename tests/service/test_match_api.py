"""POST /api/match through the app factory and its lifespan, on SQLite and PostgreSQL."""

from __future__ import annotations

import asyncio
from collections.abc import AsyncIterator, Awaitable, Callable
from pathlib import Path
from typing import Any

import httpx
from match_project import PATH, SWA, ingest_version, swa_id, swa_line, traceback

from errkb.core.settings import Settings
from errkb.service.app import create_app
from errkb.service.read.matches import MatchResponse

Client = Callable[[httpx.AsyncClient, Any], Awaitable[Any]]


def _run(settings: Settings, scenario: Callable[[httpx.AsyncClient, Any], Awaitable[Any]]) -> Any:
    async def main() -> Any:
        app = create_app(settings)
        async with app.router.lifespan_context(app):
            transport = httpx.ASGITransport(app=app)
            async with httpx.AsyncClient(transport=transport, base_url="http://t") as client:
                return await scenario(client, app)

    return asyncio.run(main())


def _settings(url: str, tmp_path: Path, **extra: Any) -> Settings:
    return Settings(database_url=url, data_dir=tmp_path, **extra)


def test_match_answers_with_site_snapshots_values_and_span(db_url: str, tmp_path: Path) -> None:
    ingest_version(db_url, tmp_path, 1)
    ingest_version(db_url, tmp_path, 2)
    fstring = "[2025-01-01 10:00:00 TP0] ValueError: tp_size 16 is too large for 12 heads\n"

    async def scenario(client: httpx.AsyncClient, app: Any) -> list[Any]:
        return [
            await client.post("/api/match", content=traceback(swa_line(1))),
            await client.post("/api/match", json={"text": traceback(swa_line(2))}),
            await client.post("/api/match", content=f"ValueError: {SWA}"),
            await client.post("/api/match", content=fstring),
            await client.post("/api/match", content="INFO all good, nothing to see"),
            await client.post("/api/match", content=b"\xff\xfe" + fstring.encode() + b"\xc3"),
            await client.get("/openapi.json"),
            # what the pages and the MCP server read: the same matches, as models
            await app.state.matcher.match(fstring.encode(), "", limit=10, public_url=""),
        ]

    v1, v2, plain, values, nothing, bad_utf8, spec, models = _run(
        _settings(db_url, tmp_path), scenario
    )
    # The API's JSON is serialized in the match process: the same document, key for key.
    assert values.json() == MatchResponse(matches=models).model_dump(mode="json")
    assert values.headers["content-type"] == "application/json"
    for response in (v1, v2, plain, values, nothing, bad_utf8):
        assert response.status_code == 200, response.text

    top = v1.json()["matches"][0]
    assert top["id"] == swa_id() and top["score"] >= 0.9
    assert top["site"] == {"path": PATH, "line": swa_line(1), "function": "Pools.init_pools"}
    assert top["snapshots"] == ["v1"] and top["url"] == f"/errors/{swa_id()}"
    text = traceback(swa_line(1))
    assert text[top["span"]["start"] : top["span"]["end"]] == SWA

    top = v2.json()["matches"][0]
    assert top["id"] == swa_id() and top["snapshots"] == ["v2"]
    assert top["site"]["line"] == swa_line(2) != swa_line(1)

    top = plain.json()["matches"][0]
    assert top["id"] == swa_id() and top["site"] is None and top["snapshots"] == ["v1", "v2"]

    top = values.json()["matches"][0]
    assert top["title"].startswith("tp_size")
    assert top["params"] == {"model.tp": "16", "model.heads": "12"}
    assert (
        fstring[top["span"]["start"] : top["span"]["end"]] == "tp_size 16 is too large for 12 heads"
    )

    assert nothing.json() == {"matches": [], "raised_by": None}
    assert bad_utf8.json()["matches"][0]["params"] == {"model.tp": "16", "model.heads": "12"}

    op = spec.json()["paths"]["/api/match"]["post"]
    assert set(op["requestBody"]["content"]) == {"text/plain", "application/json"}
    assert "MatchResponse" in str(op["responses"]["200"])


def test_bad_bodies_get_clear_errors(db_url: str, tmp_path: Path) -> None:
    ingest_version(db_url, tmp_path, 1)

    async def chunks() -> AsyncIterator[bytes]:
        for _ in range(10):
            yield b"x" * 1000

    async def scenario(client: httpx.AsyncClient, _: Any) -> list[httpx.Response]:
        json_type = {"content-type": "application/json"}
        return [
            await client.post("/api/match", content=b"y" * 5000),
            await client.post("/api/match", content=chunks()),  # no content-length: streamed
            await client.post("/api/match", content=b"x" * 4096),
            await client.post("/api/match", content=b'{"txt": "a"}', headers=json_type),
            await client.post("/api/match", content=b"not json", headers=json_type),
            await client.post("/api/match", content=b"[" * 4000, headers=json_type),
            await client.post("/api/match?limit=0", content=b"x"),
        ]

    settings = _settings(db_url, tmp_path, max_body_bytes=4096)
    declared, streamed, at_cap, wrong_field, not_json, deep, bad_limit = _run(settings, scenario)
    for response in (declared, streamed):
        assert response.status_code == 413
        assert response.json()["detail"].startswith("request body is larger than 4096 bytes")
    assert at_cap.status_code == 200
    for response in (wrong_field, not_json, deep, bad_limit):
        assert response.status_code == 422, response.text
    # Application 422s use FastAPI's list form, as the OpenAPI document declares.
    assert wrong_field.json()["detail"][0]["loc"] == ["body"]
    assert 'string field "text"' in wrong_field.json()["detail"][0]["msg"]
    assert not_json.json()["detail"][0]["msg"].startswith("invalid JSON body")


def test_default_cap_refuses_5_mib(db_url: str, tmp_path: Path) -> None:
    async def scenario(client: httpx.AsyncClient, _: Any) -> httpx.Response:
        return await client.post("/api/match", content=b"a" * (5 << 20))

    response = _run(_settings(db_url, tmp_path), scenario)
    assert response.status_code == 413
    assert str(1 << 20) in response.json()["detail"]


def test_index_is_rebuilt_after_an_ingest_without_dropping_requests(
    db_url: str, tmp_path: Path
) -> None:
    ingest_version(db_url, tmp_path, 1)
    layout = "ValueError: Unsupported layout 'nhd' for the paged KV cache"

    async def scenario(client: httpx.AsyncClient, app: Any) -> list[list[str]]:
        async def titles() -> list[str]:
            response = await client.post("/api/match", content=layout)
            assert response.status_code == 200
            return [m["title"] for m in response.json()["matches"] if m["score"] >= 0.8]

        before = await titles()
        await asyncio.to_thread(ingest_version, db_url, tmp_path, 2)
        first = await titles()  # the first match after the commit: never the old index's
        after = await titles()
        return [before, first, after]

    # The periodic check is far off: the commit is seen because every match looks first.
    settings = _settings(db_url, tmp_path, match_refresh_seconds=3600)
    before, first, after = _run(settings, scenario)
    assert before == []
    assert first == after == ["Unsupported layout {layout!r} for the paged KV cache"]


def test_a_full_match_queue_answers_503_with_retry_after(db_url: str, tmp_path: Path) -> None:
    """With `match_queue` matches under way, one more is refused at once, and later accepted."""
    ingest_version(db_url, tmp_path, 1)
    more = asyncio.Event()

    async def slow_body() -> AsyncIterator[bytes]:
        yield f"ValueError: {SWA}\n".encode()
        await more.wait()  # the first match holds its place while its body arrives
        yield b"INFO done\n"

    async def scenario(client: httpx.AsyncClient, app: Any) -> list[httpx.Response]:
        first = asyncio.create_task(client.post("/api/match", content=slow_body()))
        while app.state.matcher.held < 2:
            await asyncio.sleep(0.01)
        refused = await client.post("/api/match", content=f"ValueError: {SWA}")
        refused_page = await client.post("/api/match", content="x", headers={"accept": "text/html"})
        more.set()
        answered = await first
        again = await client.post("/api/match", content=f"ValueError: {SWA}")
        spec = (await client.get("/openapi.json")).json()
        return [refused, refused_page, answered, again, spec]

    async def both(client: httpx.AsyncClient, app: Any) -> list[Any]:
        second = asyncio.create_task(client.post("/api/match", content=slow_body()))
        try:
            return await scenario(client, app)
        finally:
            more.set()
            await second

    settings = _settings(db_url, tmp_path, match_queue=2)
    refused, refused_page, answered, again, spec = _run(settings, both)
    assert refused.status_code == 503
    assert int(refused.headers["retry-after"]) >= 1
    detail = refused.json()["detail"]
    assert detail.startswith("the server is already matching 2 texts")
    assert f"in about {refused.headers['retry-after']} seconds" in detail
    assert refused_page.status_code == 503  # the API answers JSON to a browser too
    assert refused_page.headers["content-type"] == "application/json"
    for response in (answered, again):
        assert response.status_code == 200
        assert response.json()["matches"][0]["id"] == swa_id()
    declared = spec["paths"]["/api/match"]["post"]["responses"]["503"]
    assert "integer" in str(declared["headers"]["Retry-After"])


def test_concurrent_matches_each_get_their_own_answer(db_url: str, tmp_path: Path) -> None:
    """Answers come back over one socket in the order asked: 40 texts at once, two processes,
    each answered with its own match (or none)."""
    ingest_version(db_url, tmp_path, 1)
    texts = [f"ValueError: {SWA}\n" if n % 2 else f"INFO line {n}, all good\n" for n in range(40)]

    async def scenario(client: httpx.AsyncClient, _: Any) -> list[httpx.Response]:
        return list(await asyncio.gather(*(client.post("/api/match", content=t) for t in texts)))

    answers = _run(_settings(db_url, tmp_path, match_processes=2, match_queue=64), scenario)
    for n, response in enumerate(answers):
        assert response.status_code == 200, response.text
        ids = [m["id"] for m in response.json()["matches"] if m["score"] >= 0.8]
        assert ids == ([swa_id()] if n % 2 else []), (n, ids)


def test_long_and_short_texts_sent_together_each_get_their_own_answer(
    db_url: str, tmp_path: Path
) -> None:
    """Texts that reach the match process together are answered as a batch, and a long one
    (over 64 KiB, read in several pieces) in a batch of its own: each still gets its own
    answer, in order."""
    ingest_version(db_url, tmp_path, 1)
    long = "INFO all good\n" * 30_000 + f"ValueError: {SWA}\n"
    texts = [f"ValueError: {SWA}\n", "INFO nothing\n", long, "INFO nothing\n", long, "x\n"]

    async def scenario(client: httpx.AsyncClient, _: Any) -> list[httpx.Response]:
        return list(await asyncio.gather(*(client.post("/api/match", content=t) for t in texts)))

    answers = _run(_settings(db_url, tmp_path, match_queue=64), scenario)
    found = [[m["id"] for m in r.json()["matches"] if m["score"] >= 0.8] for r in answers]
    assert found == [[swa_id()], [], [swa_id()], [], [swa_id()], []]
    assert answers[2].json()["matches"][0]["span"]["start"] == len(long) - len(SWA) - 1


def test_a_match_process_that_dies_fails_one_request_then_is_started_again(
    db_url: str, tmp_path: Path
) -> None:
    ingest_version(db_url, tmp_path, 1)

    async def scenario(client: httpx.AsyncClient, app: Any) -> list[Any]:
        before = await client.post("/api/match", content=f"ValueError: {SWA}")
        (worker,) = app.state.matcher._workers
        first_pid = worker.process.pid
        worker.process.kill()
        await asyncio.to_thread(worker.process.join, 10)
        lost = await client.post("/api/match", content=f"ValueError: {SWA}")
        after = await client.post("/api/match", content=f"ValueError: {SWA}")
        (fresh,) = app.state.matcher._workers
        return [before, lost, after, first_pid, fresh.process.pid]

    before, lost, after, first_pid, fresh_pid = _run(_settings(db_url, tmp_path), scenario)
    assert before.status_code == 200
    # The dead process is noticed either when the request is sent (503) or at once (restarted).
    assert lost.status_code in (200, 503), lost.text
    if lost.status_code == 503:
        assert lost.json()["detail"] == "the matcher stopped while it held this text; send it again"
        assert int(lost.headers["retry-after"]) >= 1
    assert after.status_code == 200 and after.json()["matches"][0]["id"] == swa_id()
    assert fresh_pid != first_pid


def test_after_an_ingest_a_fresh_match_process_takes_over_and_the_old_one_ends(
    db_url: str, tmp_path: Path
) -> None:
    """Matches sent together right after an ingest all wait for the fresh process's index (none
    is answered from the old one), and the old process ends (its memory with it)."""
    ingest_version(db_url, tmp_path, 1)
    layout = "ValueError: Unsupported layout 'nhd' for the paged KV cache"

    async def scenario(client: httpx.AsyncClient, app: Any) -> list[Any]:
        (old,) = app.state.matcher._workers
        await asyncio.to_thread(ingest_version, db_url, tmp_path, 2)
        asked = (client.post("/api/match", content=layout) for _ in range(8))
        answers = list(await asyncio.gather(*asked))
        (current,) = app.state.matcher._workers
        await asyncio.to_thread(old.process.join, 10)
        return [answers, old, current, old.process.is_alive(), current.process.is_alive()]

    settings = _settings(db_url, tmp_path, match_refresh_seconds=3600, match_queue=64)
    answers, old, current, old_alive, current_alive = _run(settings, scenario)
    assert current is not old and current_alive
    assert not old_alive  # retired once it had answered what it held
    for answer in answers:
        assert answer.status_code == 200, answer.text
        assert [m["title"] for m in answer.json()["matches"] if m["score"] >= 0.8] == [
            "Unsupported layout {layout!r} for the paged KV cache"
        ]
