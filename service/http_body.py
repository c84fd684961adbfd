"""Reading a request body within a size cap, for every route that takes pasted text.

The body is read as a stream and refused (413) as soon as it is known to pass the cap, so a
client cannot make the server hold more than `ERRKB_MAX_BODY_BYTES` of it.
"""

from __future__ import annotations

from fastapi import Request

from errkb.core.errors import BodyTooLarge


async def read_capped(request: Request, cap: int) -> bytes:
    """The request body, refused with 413 as soon as it is known to exceed `cap` bytes."""
    declared = request.headers.get("content-length", "")
    if declared.isdigit() and int(declared) > cap:
        raise BodyTooLarge(_too_large(cap))
    chunks: list[bytes] = []
    size = 0
    async for chunk in request.stream():
        size += len(chunk)
        if size > cap:
            raise BodyTooLarge(_too_large(cap))
        chunks.append(chunk)
    return b"".join(chunks)


def _too_large(cap: int) -> str:
    return f"request body is larger than {cap} bytes (ERRKB_MAX_BODY_BYTES); send less text"
