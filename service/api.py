"""JSON API routes (`/api/...`, `/healthz`)."""

from __future__ import annotations

from fastapi import APIRouter
from sqlalchemy import text

from service.deps import SessionDep

router = APIRouter()


@router.get("/healthz")
def healthz(session: SessionDep) -> dict[str, str]:
    """Liveness plus a database round trip."""
    session.execute(text("SELECT 1"))
    return {"status": "ok"}
