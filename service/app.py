"""The app factory: `create_app(settings)` wires routers, the database and error handlers.

`uvicorn --factory errkb.service.app:create_app` builds it from the environment's settings, as
`errkb serve --workers N` does in each worker process.
"""

from __future__ import annotations

import logging
import sys
from collections.abc import AsyncIterator
from contextlib import AsyncExitStack, asynccontextmanager

from fastapi import FastAPI, Request
from fastapi.responses import Response

from errkb.core.db import engine_from_settings, prepare_schema, session_factory
from errkb.core.dictionaries import load_all
from errkb.core.memory import tune_allocator
from errkb.core.settings import Settings
from errkb.service.browse.trees import ModuleTrees
from errkb.service.entries.cache import EntryCache
from errkb.service.head import HeadAsGet
from errkb.service.http_cache import NotModified, not_modified_response
from errkb.service.openapi import install_openapi
from errkb.service.problems import install_error_handlers
from errkb.service.queries import VersionTracker
from errkb.service.validation import RefuseNul

log = logging.getLogger("uvicorn.error")  # uvicorn prints it with its own start-up lines


def create_app(settings: Settings | None = None) -> FastAPI:
    """Build the service; the engine lives for the app's lifespan."""
    settings = settings or Settings()

    @asynccontextmanager
    async def lifespan(app: FastAPI) -> AsyncIterator[None]:
        sys.setswitchinterval(settings.switch_interval_ms / 1000)
        tune_allocator()  # before the thread pool's threads: memory a request freed goes back
        engine = engine_from_settings(settings)
        try:
            prepare_schema(engine, settings)  # under the migration lock: workers may race
        except BaseException:
            engine.dispose()
            raise
        app.state.engine = engine
        app.state.sessions = session_factory(engine)
        app.state.versions = VersionTracker(engine)
        if app.state.versions.empty():  # a mistyped path serves nothing: say where it looked
            where = engine.url.render_as_string(hide_password=True)
            log.warning(
                "the knowledge base at %s is empty: run `errkb ingest` to fill it "
                "(`errkb serve --ingest` fills it while serving)",
                where,
            )
        with app.state.sessions() as session:  # so that a stored doc's first read on the
            load_all(session)  # event loop finds its dictionary (see read.entries)
        app.state.entries = EntryCache[bytes](settings.entry_cache_mb << 20)
        app.state.module_trees = ModuleTrees()
        for hook in app.state.startup_hooks:
            hook(app)
        try:
            async with AsyncExitStack() as stack:  # front ends that run tasks (MCP's sessions)
                for context in app.state.lifespan_contexts:
                    await stack.enter_async_context(context(app))
                yield
        finally:
            for hook in app.state.shutdown_hooks:
                hook(app)
            app.state.versions.close()
            engine.dispose()

    app = FastAPI(title="errkb", version="0.1.0", lifespan=lifespan)
    app.state.settings = settings
    app.state.startup_hooks = []
    app.state.shutdown_hooks = []
    app.state.lifespan_contexts = []

    install_error_handlers(app)
    install_openapi(app)
    app.add_middleware(RefuseNul)

    @app.exception_handler(NotModified)
    async def not_modified(_: Request, exc: NotModified) -> Response:
        return not_modified_response(exc.validators)

    from errkb.service.health import install_health

    install_health(app)
    from errkb.service.snapshots.routes import router as snapshots_router

    app.include_router(snapshots_router)
    from errkb.service.pages.routes import install_pages
    from errkb.service.search.routes import router as search_router

    app.include_router(search_router)
    from errkb.service.entries.routes import router as errors_router

    app.include_router(errors_router)
    install_pages(app)
    from errkb.service.match.routes import install_matcher

    install_matcher(app)
    from errkb.service.mcp.http import install_mcp

    install_mcp(app)
    _serve_hottest_ahead(app)
    app.add_middleware(HeadAsGet)
    return app


def _serve_hottest_ahead(app: FastAPI) -> None:
    """The routes most requests take, answered by plain routes (see `service.plain_routes`)."""
    from errkb.service.entries.routes import get_error
    from errkb.service.match.routes import match_by_hand
    from errkb.service.pages.routes import entry_page
    from errkb.service.plain_routes import serve_ahead
    from errkb.service.search.routes import search_by_hand

    serve_ahead(app, "/api/errors/{error_id}", get_error)
    serve_ahead(app, "/errors/{error_id}", entry_page)
    serve_ahead(app, "/api/match", match_by_hand, method="POST")
    serve_ahead(app, "/api/errors", search_by_hand)
