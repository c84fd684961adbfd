"""JSON API routes (`/api/...`, `/healthz`)."""

from __future__ import annotations

from fastapi import APIRouter
from sqlalchemy import text

from errkb.service.deps import SessionDep
from errkb.service.snapshots.routes import router as snapshots_router

router = APIRouter()
router.include_router(snapshots_router)


@router.get("/healthz")
def healthz(session: SessionDep) -> dict[str, str]:
    """Liveness plus a database round trip."""
    session.execute(text("SELECT 1"))
    return {"status": "ok"}
