"""The app factory: `create_app(settings)` wires routers, the database and error handlers."""

from __future__ import annotations

from collections.abc import AsyncIterator
from contextlib import asynccontextmanager

from fastapi import FastAPI, Request
from fastapi.responses import JSONResponse

from errkb.db import engine_from_settings, session_factory, upgrade
from errkb.errors import ErrkbError
from errkb.settings import Settings


def create_app(settings: Settings | None = None) -> FastAPI:
    """Build the service; the engine lives for the app's lifespan."""
    settings = settings or Settings()

    @asynccontextmanager
    async def lifespan(app: FastAPI) -> AsyncIterator[None]:
        engine = engine_from_settings(settings)
        upgrade(engine)
        app.state.engine = engine
        app.state.sessions = session_factory(engine)
        for hook in app.state.startup_hooks:
            hook(app)
        try:
            yield
        finally:
            engine.dispose()

    app = FastAPI(title="errkb", version="0.1.0", lifespan=lifespan)
    app.state.settings = settings
    app.state.startup_hooks = []

    @app.exception_handler(ErrkbError)
    async def handled(_: Request, exc: ErrkbError) -> JSONResponse:
        return JSONResponse({"detail": exc.message}, status_code=exc.status_code)

    from service.api import router as api_router

    app.include_router(api_router)
    from service.api_search import router as search_router
    from service.pages import install_pages

    app.include_router(search_router)
    from service.api_errors import router as errors_router

    app.include_router(errors_router)
    install_pages(app)
    from service.match_api import install_matcher

    install_matcher(app)
    return app
