"""The baseline of bench/serve.py: a minimal FastAPI app answering the same bodies from a dict.

It reads `BASELINE_BODIES` (a JSON file: path -> [media type, body]) at start-up and answers
every GET, and `POST /api/match`, with the stored body: the web framework's own cost, which is
what errkb's reads are measured against. Run with `uvicorn --factory bench.serve_baseline:app`.
"""

from __future__ import annotations

import json
import os

from fastapi import FastAPI, Request, Response


def app() -> FastAPI:
    """The baseline app, its bodies loaded from the file named by BASELINE_BODIES."""
    with open(os.environ["BASELINE_BODIES"], encoding="utf-8") as f:
        bodies = {path: (media, body.encode()) for path, (media, body) in json.load(f).items()}
    service = FastAPI()

    @service.get("/{path:path}")
    async def get(request: Request, path: str) -> Response:
        key = request.url.path + (f"?{request.url.query}" if request.url.query else "")
        media, body = bodies.get(key, ("text/plain", b"unknown"))
        return Response(body, media_type=media)

    @service.post("/api/match")
    async def match(request: Request) -> Response:
        await request.body()
        media, body = bodies["POST /api/match"]
        return Response(body, media_type=media)

    return service
