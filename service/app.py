"""The app factory: `create_app(settings)` wires routers, the database and error handlers."""

from __future__ import annotations

from collections.abc import AsyncIterator
from contextlib import asynccontextmanager

from fastapi import FastAPI

from errkb.core.db import engine_from_settings, session_factory, upgrade
from errkb.core.settings import Settings
from errkb.service.problems import install_error_handlers
from errkb.service.validation import RefuseNul


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
            for hook in app.state.shutdown_hooks:
                hook(app)
            engine.dispose()

    app = FastAPI(title="errkb", version="0.1.0", lifespan=lifespan)
    app.state.settings = settings
    app.state.startup_hooks = []
    app.state.shutdown_hooks = []

    install_error_handlers(app)
    app.add_middleware(RefuseNul)

    from errkb.service.health import router as api_router

    app.include_router(api_router)
    from errkb.service.pages.routes import install_pages
    from errkb.service.search.routes import router as search_router

    app.include_router(search_router)
    from errkb.service.entries.routes import router as errors_router

    app.include_router(errors_router)
    install_pages(app)
    from errkb.service.match.routes import install_matcher

    install_matcher(app)
    return app
