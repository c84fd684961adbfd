"""What a model reads about the MCP server: its instructions, each tool's description, and the
plain sentences that refuse a bad argument.

A model picks a tool from its description alone, so each says what the tool does, when to use
it, and what comes back.
"""

from __future__ import annotations

import re

from errkb.core.errors import BadInput

INSTRUCTIONS = (
    "errkb knows every error that sglang's source code can raise, per released version, with "
    "what it means, who is meant to fix it and how. When the user shows an error message, a log "
    "or a traceback from sglang, call match_error with the text first, then get_error with the "
    "best match's id for the full explanation. Use search_errors when you only have words or a "
    "flag, not the error text."
)

MATCH_ERROR = (
    "Find which known sglang errors a pasted text shows. Use this when the user shows an error, "
    "a log or a traceback from sglang (pass it unchanged: prefixes, wrapping and truncation are "
    "handled). Returns up to `limit` errors, best first, each with its id, exception class, "
    "message, a score from 0 to 1 (0.8 or more: the message itself is in the text) and its "
    "confidence (a match from 0.5, else a weak guess, dropped when a match exists), whether only "
    "sglang's own tests raise it, the raise site the traceback's lines point to and the versions "
    "whose lines agree, who usually hits it, the first thing to try and a link to its page. Pass "
    "`version` when the user says which sglang version they run: only errors that version raises "
    "are kept. Then call get_error with an id for the full entry."
)

GET_ERROR = (
    "Get the full entry of one sglang error by its id (from match_error or search_errors). Use "
    "this to explain an error to the user and to choose a fix. Returns compact Markdown: what "
    "it means, when it is raised, who hits it, the solutions in the order to try them with an "
    "example fix, the versions that raise it, related errors, and links to the source line "
    "pinned to a version and to the full page. Pass `version` to see the code of that version."
)

SEARCH_ERRORS = (
    "Search the known sglang errors by words of their message or source path, optionally only "
    "of one exception class or only those involving one command-line flag. Use this when you "
    "have no error text to match, e.g. 'which errors can --tp-size cause?'. Returns the hits "
    "ranked as errkb's search ranks them (the words as a phrase in the message first), each "
    "with its id, class, message and versions; call get_error for one of them."
)

PROMPT = (
    "Explain a traceback or error log from sglang: matches it against the knowledge base and "
    "hands the model the best match's entry, so the explanation rests on the code's facts."
)

ERROR_ID = re.compile(r"[0-9a-f]{16}")


def check_text(text: str, max_bytes: int) -> None:
    """Refuse a text with nothing to match, or one longer than the server matches."""
    if not text.strip():
        raise BadInput("The text is empty: pass the error message, log or traceback to match.")
    size = len(text.encode("utf-8", errors="replace"))
    if size > max_bytes:
        raise BadInput(
            f"The text is {size} bytes, more than the {max_bytes} bytes this server matches "
            "(ERRKB_MAX_BODY_BYTES). Pass the end of the log: the traceback and the lines "
            "just before it."
        )


def check_id(error_id: str) -> str:
    """The id in its stored form, or a refusal that says what an id looks like."""
    normal = error_id.strip().lower()
    if ERROR_ID.fullmatch(normal) is None:
        raise BadInput(
            f"{error_id[:40]!r} is not an error id: an id is 16 hexadecimal digits, as "
            "match_error and search_errors return them."
        )
    return normal


def cut(text: str, limit: int) -> str:
    """`text`, cut to `limit` characters with an ellipsis."""
    return text if len(text) <= limit else text[: limit - 1].rstrip() + "…"
