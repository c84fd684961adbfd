"""Two tiny ASGI apps for the server-process tests: each answers every request with its own name
(`named`), and `held` does not finish starting until a file appears.

Both read their settings from the environment of the process that builds them: `START_NAME`,
and for `held`, `START_BEGUN` (a file it creates when its start-up begins) and `START_RELEASE`
(the file whose appearance lets it finish).
"""

from __future__ import annotations

import asyncio
import os
from collections.abc import Awaitable, Callable, MutableMapping
from pathlib import Path
from typing import Any

Scope = MutableMapping[str, Any]
Message = MutableMapping[str, Any]
Receive = Callable[[], Awaitable[Message]]
Send = Callable[[Message], Awaitable[None]]
App = Callable[[Scope, Receive, Send], Awaitable[None]]


def named() -> App:
    """An app that starts at once."""
    return _app(os.environ["START_NAME"].encode(), None)


def held() -> App:
    """An app whose start-up waits (up to a minute) for `START_RELEASE` to exist."""
    return _app(os.environ["START_NAME"].encode(), os.environ)


def _app(name: bytes, hold: os._Environ[str] | None) -> App:
    async def app(scope: Scope, receive: Receive, send: Send) -> None:
        if scope["type"] == "lifespan":
            await receive()  # lifespan.startup
            if hold is not None:
                Path(hold["START_BEGUN"]).touch()
                release = Path(hold["START_RELEASE"])
                for _ in range(600):
                    if release.exists():
                        break
                    await asyncio.sleep(0.1)
            await send({"type": "lifespan.startup.complete"})
            await receive()  # lifespan.shutdown
            await send({"type": "lifespan.shutdown.complete"})
            return
        await send({"type": "http.response.start", "status": 200, "headers": []})
        await send({"type": "http.response.body", "body": name})

    return app
