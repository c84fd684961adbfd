"""`POST /api/match` says each match's confidence and whether only the project's tests raise
it, and ranks the code a server runs first, on SQLite and PostgreSQL."""

from __future__ import annotations

import asyncio
from pathlib import Path
from typing import Any

import httpx
from ranking_repo import ingest_ranking_repo

from errkb.core.settings import Settings
from errkb.service.app import create_app


def _match(url: str, text: str) -> list[dict[str, Any]]:
    async def post() -> list[dict[str, Any]]:
        app = create_app(Settings(database_url=url))
        async with app.router.lifespan_context(app):
            transport = httpx.ASGITransport(app=app)
            async with httpx.AsyncClient(transport=transport, base_url="http://t") as client:
                response = await client.post("/api/match", json={"text": text})
                assert response.status_code == 200
                matches: list[dict[str, Any]] = response.json()["matches"]
                return matches

    return asyncio.run(post())


def test_matches_carry_confidence_and_test_code(db_url: str, tmp_path: Path) -> None:
    ingest_ranking_repo(db_url, tmp_path / "repo")
    oom = _match(db_url, "RuntimeError: CUDA out of memory. Tried to allocate 2 GiB on device 0")
    assert [(m["test_code"], m["confidence"]) for m in oom] == [(False, "match"), (True, "match")]
    guess = _match(db_url, "server_args was not set here")
    assert [(m["title"], m["confidence"]) for m in guess] == [
        ("server_args must be set", "weak guess")
    ]
