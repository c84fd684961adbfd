"""The OpenAPI document declares every status each route can answer, with its body.

Some answers are made outside the routes, so FastAPI cannot know of them: the NUL guard answers
422 (a query parameter, declared or not) and 404 (a path parameter) before routing, the error
handlers answer 500 on a crash. A client built from the document, or Schemathesis checking
answers against it, would meet statuses it was never told of. They are added here, in one
place, to every operation; the routes that answer 304 to a conditional GET declare it
themselves (`http_cache.NOT_MODIFIED`).
"""

from __future__ import annotations

from typing import Any

from fastapi import FastAPI
from fastapi.openapi.utils import get_openapi

# The body of every error but a 422: one sentence for a person.
PROBLEM_SCHEMA = {
    "title": "Problem",
    "type": "object",
    "properties": {"detail": {"type": "string", "title": "Detail"}},
    "required": ["detail"],
}
# FastAPI's own validation-error schemas, which every 422 follows (see `service.problems`).
VALIDATION_SCHEMAS = {
    "ValidationError": {
        "title": "ValidationError",
        "type": "object",
        "properties": {
            "loc": {
                "title": "Location",
                "type": "array",
                "items": {"anyOf": [{"type": "string"}, {"type": "integer"}]},
            },
            "msg": {"title": "Message", "type": "string"},
            "type": {"title": "Error Type", "type": "string"},
        },
        "required": ["loc", "msg", "type"],
    },
    "HTTPValidationError": {
        "title": "HTTPValidationError",
        "type": "object",
        "properties": {
            "detail": {
                "title": "Detail",
                "type": "array",
                "items": {"$ref": "#/components/schemas/ValidationError"},
            }
        },
    },
}


def _json(description: str, ref: str) -> dict[str, Any]:
    schema = {"$ref": f"#/components/schemas/{ref}"}
    return {"description": description, "content": {"application/json": {"schema": schema}}}


def added_responses(method: str, path: str) -> dict[str, dict[str, Any]]:
    """The statuses an operation can answer beyond those its route declares."""
    out = {
        "422": _json(
            "A parameter is not valid (any query parameter holding a NUL character included)",
            "HTTPValidationError",
        ),
        "500": _json("The server failed to answer; the cause is in its log", "Problem"),
    }
    if "{" in path:
        out["404"] = _json("Nothing has this address (a NUL character in it included)", "Problem")
    return out


def complete_document(document: dict[str, Any]) -> dict[str, Any]:
    """The document with every operation's added responses (those it declares are kept)."""
    schemas = document.setdefault("components", {}).setdefault("schemas", {})
    schemas.setdefault("Problem", PROBLEM_SCHEMA)
    for name, schema in VALIDATION_SCHEMAS.items():
        schemas.setdefault(name, schema)
    for path, operations in document.get("paths", {}).items():
        for method, operation in operations.items():
            responses = operation.setdefault("responses", {})
            for status, response in added_responses(method, path).items():
                responses.setdefault(status, response)
            for status, response in responses.items():
                if status[0] in "45" and not _has_schema(response):
                    # Declared by its route with a description only: every error has this body.
                    body = "HTTPValidationError" if status == "422" else "Problem"
                    response["content"] = _json("", body)["content"]
    return document


def _has_schema(response: dict[str, Any]) -> bool:
    return bool(response.get("content", {}).get("application/json", {}).get("schema"))


def install_openapi(app: FastAPI) -> None:
    """Serve the completed document at /openapi.json (built once, on first request)."""

    def openapi() -> dict[str, Any]:
        if app.openapi_schema is None:
            document = get_openapi(
                title=app.title, version=app.version, routes=app.routes, description=None
            )
            app.openapi_schema = complete_document(document)
        return app.openapi_schema

    app.openapi = openapi  # type: ignore[method-assign]
