"""`/healthz` and the JSON routers that have no domain folder of their own."""

from __future__ import annotations

from fastapi import APIRouter

from errkb.service.deps import SessionDep
from errkb.service.queries import ping
from errkb.service.snapshots.routes import router as snapshots_router

router = APIRouter()
router.include_router(snapshots_router)


@router.get("/healthz")
def healthz(session: SessionDep) -> dict[str, str]:
    """Liveness plus a database round trip."""
    ping(session)
    return {"status": "ok"}
