"""The hottest routes, served by plain Starlette routes placed ahead of FastAPI's.

FastAPI (0.165) finds a route by asking each included router in turn, and solves every
endpoint's parameters as dependencies, even a lone `Request`. Measured in-process on a cached
entry (`GET /api/errors/{id}`, 500 ids, 40 interleaved rounds), that machinery was half of the
app's time: 167 us a request through FastAPI's route, 84 us through a Starlette route calling the
same endpoint. The entry JSON, the entry page, the search and the match read their query
parameters by hand (`query_model` for a model of them); each stays declared to FastAPI, which
documents it in the OpenAPI schema, and is served by a Starlette route placed first.
Middlewares, exception handlers (a 404, a 304, a 422) and HEAD are the app's, as for every
other route.
"""

from __future__ import annotations

from collections.abc import Awaitable, Callable
from functools import cache
from typing import TypeVar

from fastapi import FastAPI, Request, Response
from fastapi.exceptions import RequestValidationError
from pydantic import BaseModel, ValidationError
from starlette.routing import Route

Endpoint = Callable[..., Awaitable[Response]]
M = TypeVar("M", bound=BaseModel)


@cache
def _defaults(model: type[M]) -> M | None:
    """`model` with every field at its default, None when a field has none; shared, so never
    to be changed by a caller."""
    try:
        return model.model_validate({})
    except ValidationError:
        return None


def serve_ahead(app: FastAPI, path: str, endpoint: Endpoint, method: str = "GET") -> None:
    """Serve `method path` by `endpoint(request, **path parameters)` before FastAPI's routes."""

    async def plain(request: Request) -> Response:
        return await endpoint(request, **request.path_params)

    plain.__name__ = plain.__qualname__ = f"{endpoint.__name__}_plain"
    app.router.routes.insert(0, Route(path, plain, methods=[method]))


def query_model(model: type[M], request: Request) -> M:
    """The request's query parameters as `model`, validated as FastAPI validates a query model
    (the last of repeated values counts; the same 422 errors, each located in the query).
    Without a query string, the model's defaults, validated once (most requests have none)."""
    if not request.scope.get("query_string") and (defaults := _defaults(model)) is not None:
        return defaults
    try:
        return model.model_validate(dict(request.query_params))
    except ValidationError as exc:
        errors = exc.errors(include_url=False)
        raise RequestValidationError([{**e, "loc": ("query", *e["loc"])} for e in errors]) from None
