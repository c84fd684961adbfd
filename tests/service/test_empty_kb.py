"""A server on an empty knowledge base says so: at start-up with its path, on every page, in its
404s and in /healthz; once something is ingested, none of them does (SQLite and PostgreSQL).
"""

from __future__ import annotations

import asyncio
import logging
from pathlib import Path
from typing import Any

import httpx
import pytest
from pages_repo import ingest_pages_repo

from errkb.core.settings import Settings
from errkb.service.app import create_app
from errkb.service.read.status import EMPTY_KB

PAGES = ("/", "/modules/", "/flags/", "/errors/0123456789abcdef")
NOTICE = "This knowledge base is empty"


def _answers(settings: Settings) -> dict[str, Any]:
    """What the app answers on its pages, an unknown id and /healthz."""

    async def main() -> dict[str, Any]:
        app = create_app(settings)
        async with app.router.lifespan_context(app):
            transport = httpx.ASGITransport(app=app)
            async with httpx.AsyncClient(transport=transport, base_url="http://t") as client:
                html = {"accept": "text/html"}
                pages = {p: (await client.get(p, headers=html)).text for p in PAGES}
                missing = (await client.get("/api/errors/0123456789abcdef")).json()
                health = (await client.get("/healthz")).json()
        return {"pages": pages, "missing": missing, "health": health}

    return asyncio.run(main())


def test_an_empty_knowledge_base_says_so_everywhere(
    db_url: str, tmp_path: Path, caplog: pytest.LogCaptureFixture
) -> None:
    with caplog.at_level(logging.WARNING, logger="uvicorn.error"):
        seen = _answers(Settings(database_url=db_url, data_dir=tmp_path))
    shown = db_url.split("@")[-1]  # the path or host, without any password
    assert any(
        "is empty: run `errkb ingest`" in r.getMessage() and shown in r.getMessage()
        for r in caplog.records
    ), caplog.text
    for path, body in seen["pages"].items():
        assert NOTICE in body or EMPTY_KB in body, path
    assert seen["missing"]["detail"] == f"no error with id '0123456789abcdef'; {EMPTY_KB}"
    assert {k: seen["health"][k] for k in ("status", "empty", "detail")} == {
        "status": "ok",
        "empty": True,
        "detail": EMPTY_KB,
    }


def test_an_ingested_knowledge_base_says_nothing_of_the_kind(
    db_url: str, tmp_path: Path, caplog: pytest.LogCaptureFixture
) -> None:
    ingest_pages_repo(db_url, tmp_path)
    with caplog.at_level(logging.WARNING, logger="uvicorn.error"):
        seen = _answers(Settings(database_url=db_url, data_dir=tmp_path))
    assert "is empty" not in caplog.text
    for path, body in seen["pages"].items():
        assert NOTICE not in body and "is empty" not in body, path
    assert seen["missing"]["detail"] == "no error with id '0123456789abcdef'"
    assert {k: seen["health"][k] for k in ("status", "empty", "detail")} == {
        "status": "ok",
        "empty": False,
        "detail": None,
    }
