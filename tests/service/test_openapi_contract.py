"""The OpenAPI document declares what each route really answers, and every 422 has one shape.

Answers made outside the routes (the NUL guard's 422 and 404, a crash's 500, a conditional GET's
304) are declared on every operation that can give them, with their body; the answers are
checked against those declarations with jsonschema-rs (Schemathesis, in test_schemathesis.py,
does the same at random).
"""

from __future__ import annotations

import asyncio
from pathlib import Path
from typing import Any

import httpx
import jsonschema_rs
import pytest

from errkb.core.settings import Settings
from errkb.service.app import create_app


def _exchange(settings: Settings, requests: list[tuple[str, str]]) -> tuple[dict[str, Any], list]:
    """The OpenAPI document and the answers to (method, url) requests."""

    async def main() -> tuple[dict[str, Any], list]:
        app = create_app(settings)
        async with app.router.lifespan_context(app):
            transport = httpx.ASGITransport(app=app)
            async with httpx.AsyncClient(transport=transport, base_url="http://t") as client:
                document = (await client.get("/openapi.json")).json()
                answers = [await client.request(m, u) for m, u in requests]
        return document, answers

    return asyncio.run(main())


def _schema_of(document: dict[str, Any], path: str, method: str, status: int) -> dict[str, Any]:
    """The declared JSON body of one answer, with the document's components to resolve $refs."""
    response = document["paths"][path][method]["responses"][str(status)]
    schema = response["content"]["application/json"]["schema"]
    return {**schema, "components": document["components"]}


def test_every_operation_declares_the_answers_made_outside_its_route(tmp_path: Path) -> None:
    document, _ = _exchange(Settings(database_url=f"sqlite:///{tmp_path / 'kb.sqlite3'}"), [])
    assert len(document["paths"]) >= 6
    for path, operations in document["paths"].items():
        for method, operation in operations.items():
            declared = operation["responses"]
            assert {"422", "500"} <= set(declared), (method, path)
            if "{" in path:
                assert "404" in declared, (method, path)
            cached = path in ("/api/errors", "/api/errors/{error_id}", "/api/snapshots")
            assert ("304" in declared) == cached, (method, path)  # those check the validators
            for status, response in declared.items():
                if status[0] in "45":  # every error says what its body is
                    assert response["content"]["application/json"]["schema"], (path, status)


@pytest.mark.parametrize(
    ("url", "path", "status"),
    [
        ("/healthz?x=%00", "/healthz", 422),  # a parameter the route does not even have
        ("/api/snapshots?%00=1", "/api/snapshots", 422),
        ("/api/errors?q=a%00b", "/api/errors", 422),
        ("/api/errors?limit=many", "/api/errors", 422),  # FastAPI's own validation
        ("/api/errors?limit=0&snapshot=x", "/api/errors", 422),
        ("/api/errors/ab%00cd", "/api/errors/{error_id}", 404),
        ("/api/errors/0123456789abcdef", "/api/errors/{error_id}", 404),
        ("/api/errors/0123456789abcdef/occurrences?cursor=zz", None, 422),
    ],
)
def test_answers_follow_their_declaration(
    tmp_path: Path, url: str, path: str | None, status: int
) -> None:
    document, (answer,) = _exchange(
        Settings(database_url=f"sqlite:///{tmp_path / 'kb.sqlite3'}"), [("GET", url)]
    )
    assert answer.status_code == status, answer.text
    path = path or "/api/errors/{error_id}/occurrences"
    jsonschema_rs.validate(_schema_of(document, path, "get", status), answer.json())
    if status == 422:  # one shape, whoever refused the request
        assert answer.headers["content-type"] == "application/json"
        for item in answer.json()["detail"]:
            assert set(item) == {"loc", "msg", "type"}, item
        assert answer.headers["content-security-policy"], "the security headers are missing"


def test_a_page_refused_by_validation_is_a_page(tmp_path: Path) -> None:
    _, (answer,) = _exchange(
        Settings(database_url=f"sqlite:///{tmp_path / 'kb.sqlite3'}"),
        [("GET", "/?n=x")],  # the index page's result offset
    )
    assert answer.status_code == 422
    assert answer.headers["content-type"].startswith("text/html")
    assert "query parameter n: Input should be a valid integer" in answer.text
