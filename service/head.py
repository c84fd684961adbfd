"""`HEAD` on every `GET` route: FastAPI's routes answer 405 to it unless listed one by one.

The request runs as the GET it stands for, so the status and headers (ETag, Content-Length,
Cache-Control) are exactly the GET's; only the body is dropped on the way out.
"""

from __future__ import annotations

from starlette.types import ASGIApp, Message, Receive, Scope, Send


class HeadAsGet:
    """ASGI middleware answering HEAD with the GET's status and headers and no body."""

    def __init__(self, app: ASGIApp) -> None:
        self.app = app

    async def __call__(self, scope: Scope, receive: Receive, send: Send) -> None:
        if scope["type"] != "http" or scope["method"] != "HEAD":
            await self.app(scope, receive, send)
            return

        async def send_headers_only(message: Message) -> None:
            if message["type"] == "http.response.body":
                if message.get("more_body", False):
                    return  # the rest of a streamed body: nothing of it goes out
                message = {"type": "http.response.body", "body": b"", "more_body": False}
            await send(message)

        await self.app({**scope, "method": "GET"}, receive, send_headers_only)
