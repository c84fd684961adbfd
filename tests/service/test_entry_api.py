"""GET /api/errors/{id} through the app factory and its lifespan (SQLite and PostgreSQL)."""

from __future__ import annotations

import asyncio
from pathlib import Path

import httpx
from knowledge_repo import SWA_MESSAGE, ingest_small_repo, literal_id

from errkb.core.settings import Settings
from errkb.service.app import create_app


async def _get(
    url: str, data_dir: Path, *requests: tuple[str, dict[str, str]]
) -> list[httpx.Response]:
    app = create_app(Settings(database_url=url, data_dir=data_dir))
    async with app.router.lifespan_context(app):
        transport = httpx.ASGITransport(app=app)
        async with httpx.AsyncClient(transport=transport, base_url="http://t") as client:
            return [await client.get(path, params=params) for path, params in requests]


def test_entry_json_404_and_openapi(db_url: str, tmp_path: Path) -> None:
    ingest_small_repo(db_url, tmp_path)
    error_id = literal_id(SWA_MESSAGE)
    ok, wrong_snapshot, unknown, spec_response, shown, too_long = asyncio.run(
        _get(
            db_url,
            tmp_path,
            (f"/api/errors/{error_id}", {}),
            (f"/api/errors/{error_id}", {"snapshot": "v9"}),
            ("/api/errors/ffffffffffffffff", {}),
            ("/openapi.json", {}),
            (f"/api/errors/{error_id}?snapshot=v9&snapshot=v1", {}),  # the last one counts
            (f"/api/errors/{error_id}", {"snapshot": "v" * 201}),
        )
    )
    assert ok.status_code == 200, ok.text
    body = ok.json()
    assert body["id"] == error_id and body["message"] == SWA_MESSAGE
    assert body["exception"] == "ValueError" and body["repo"]["name"] == "acme/srv"
    ex = body["explanation"]
    for key in ("what_it_means", "trigger"):
        assert ex[key]["text"] and ex[key]["provenance"]
    assert ex["common_situations"]["items"] and ex["solutions"]
    assert ex["example_fix"]["before"] != ex["example_fix"]["after"]
    assert {f["flag"] for f in body["flags"]} == {
        "--enable-unified-memory",
        "--disaggregation-mode",
    }
    assert body["timeline"]["gone_in"] == "v2"
    assert body["related"] and body["provenance"][0]["snapshot"] == "v1"
    assert body["json_url"] == f"/api/errors/{error_id}"

    assert wrong_snapshot.status_code == 404
    assert "not raised in snapshot 'v9'" in wrong_snapshot.json()["detail"]
    assert unknown.status_code == 404
    assert unknown.json() == {"detail": "no error with id 'ffffffffffffffff'"}
    assert shown.status_code == 200 and shown.json()["occurrences"][0]["snapshot"] == "v1"
    # The snapshot is read by hand (the hottest route), with FastAPI's check and its 422.
    assert too_long.status_code == 422
    assert too_long.json() == {
        "detail": [
            {
                "loc": ["query", "snapshot"],
                "msg": "String should have at most 200 characters",
                "type": "string_too_long",
            }
        ]
    }
    spec = spec_response.json()
    op = spec["paths"]["/api/errors/{error_id}"]["get"]
    (declared,) = [p for p in op["parameters"] if p["name"] == "snapshot"]
    assert declared["in"] == "query" and declared["schema"]["anyOf"][0]["maxLength"] == 200
    schema = op["responses"]["200"]["content"]["application/json"]["schema"]
    assert schema["$ref"].endswith("/Entry")
    assert "explanation" in spec["components"]["schemas"]["Entry"]["properties"]
