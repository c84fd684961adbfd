"""Tool arguments checked strictly, each refusal one plain sentence.

The SDK ignores an argument a tool does not take (`verison: "0.5.18"` gave unfiltered answers),
turns strings into numbers (`limit: "3"`) and booleans into numbers (`limit: true` was 1), and
reports a wrong type as pydantic's multi-line dump with a link. Before the SDK sees a call, the
arguments are checked here against the tool's own model in strict mode: an unknown name, a
value of the wrong type or out of range is refused with a sentence that names the argument.
"""

from __future__ import annotations

from typing import Any

from mcp.server.mcpserver.exceptions import ToolError
from mcp.server.mcpserver.tools import Tool
from pydantic import ValidationError

_TYPES = {
    "int_type": "a whole number",
    "int_parsing": "a whole number",
    "string_type": "a string",
    "bool_type": "true or false",
    "float_type": "a number",
}


def check_arguments(tool: Tool, arguments: dict[str, Any]) -> None:
    """Refuse arguments the tool does not take, or of the wrong type or range (`ToolError`)."""
    known = list(tool.parameters.get("properties", {}))
    unknown = sorted(name for name in arguments if name not in known)
    if unknown:
        raise ToolError(
            f"The tool {tool.name} takes no argument {unknown[0]!r}; its arguments are "
            f"{', '.join(known)}."
        )
    try:
        tool.fn_metadata.arg_model.model_validate(arguments, strict=True)
    except ValidationError as exc:
        raise ToolError(_sentence(exc.errors()[0])) from None


def _sentence(error: Any) -> str:
    """One validation error as a sentence naming the argument."""
    name = ".".join(str(part) for part in error["loc"][:1]) or "the arguments"
    kind = error["type"]
    ctx = error.get("ctx") or {}
    if kind == "missing":
        return f"The argument {name!r} is required."
    if kind in _TYPES:
        return f"The argument {name!r} must be {_TYPES[kind]}, not {_shown(error['input'])}."
    if kind in ("greater_than_equal", "greater_than"):
        return f"The argument {name!r} must be at least {ctx.get('ge', ctx.get('gt'))}."
    if kind in ("less_than_equal", "less_than"):
        return f"The argument {name!r} must be at most {ctx.get('le', ctx.get('lt'))}."
    if kind == "string_too_long":
        return f"The argument {name!r} must be at most {ctx.get('max_length')} characters."
    message = str(error["msg"]).rstrip(".")
    return f"The argument {name!r} is not valid: {message[:1].lower()}{message[1:]}."


def _shown(value: Any) -> str:
    """The rejected value as JSON would write it, short."""
    if isinstance(value, bool):
        return "true" if value else "false"
    if value is None:
        return "null"
    if isinstance(value, str):
        return f"the string {value[:40]!r}"
    if isinstance(value, (int, float)):
        return str(value)
    return (
        f"a {type(value).__name__}"
        if not isinstance(value, (list, dict))
        else ("a list" if isinstance(value, list) else "an object")
    )
