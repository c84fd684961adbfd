"""Optional AI prose: an OpenAI-compatible chat endpoint rewrites an entry's derived facts.

Off unless `ERRKB_LLM_URL` and `ERRKB_LLM_MODEL` are set. It runs only on request (`errkb
explain ID`), never while a page or the JSON is built, so serving stays fast and deterministic.
The reply must be a JSON object that `AiProse` validates; it is stored in `ai_explanations`
keyed by (error id, template hash, model) and shown as a separate `ai` block with provenance
"ai" and the model name. It never replaces a derived field. A failing or malformed reply stores
nothing and is reported as `AiError`.
"""

from __future__ import annotations

import hashlib
import json
from datetime import UTC, datetime
from typing import Any

import httpx
from pydantic import BaseModel, Field, ValidationError

from errkb.core.errors import ErrkbError
from errkb.core.models import AiExplanation, Error
from errkb.core.settings import Settings
from errkb.service.entries.queries import (
    ai_explanations,
    delete_ai_explanation,
    has_ai_explanations,
    rekey_docs,
)
from errkb.service.entries.schemas import AiExplanationOut, Entry
from errkb.service.queries import DbSession as Session
from errkb.service.queries import bump_ai_generation, session_kb_key

TIMEOUT = 120.0
MAX_REPLY_CHARS = 20_000

SYSTEM_PROMPT = (
    "You explain one error of a software project to its users. You get facts derived from the "
    "project's source code and version history. Rewrite them as clear prose for a user who hit "
    "the error. Use only the given facts: never invent flags, versions or fixes. Answer with one "
    "JSON object and nothing else, with keys: what_it_means (string), trigger (string), "
    "common_situations (list of strings), solutions (list of strings, best first)."
)


class AiError(ErrkbError):
    """The language model could not be reached or gave an unusable reply."""

    status_code = 502


class AiProse(BaseModel):
    """The reply the model must give."""

    what_it_means: str = Field(min_length=1, max_length=4000)
    trigger: str | None = Field(default=None, max_length=4000)
    common_situations: list[str] = Field(default=[], max_length=12)
    solutions: list[str] = Field(default=[], max_length=12)


def template_hash(error: Error) -> str:
    """A hash of the error's template: cached prose is reused only for the same message."""
    raw = json.dumps(error.template, sort_keys=True, ensure_ascii=False)
    return hashlib.sha256(raw.encode()).hexdigest()


def cached_explanation(
    session: Session, error: Error, settings: Settings | None
) -> AiExplanationOut | None:
    """The stored AI prose for this error and template, the configured model's first."""
    if not has_ai_explanations(session):
        return None
    rows = ai_explanations(session, error.id, template_hash(error))
    if not rows:
        return None
    model = settings.llm_model if settings else ""
    row = next((r for r in rows if r.model == model), rows[0])
    return _out(row)


def _out(row: AiExplanation) -> AiExplanationOut:
    return AiExplanationOut(model=row.model, created_at=row.created_at, **row.content)


def facts(entry: Entry) -> dict[str, Any]:
    """The derived facts the model may use (no AI output, no URLs)."""
    ex = entry.explanation
    occ = entry.occurrences[0]
    return {
        "project": entry.repo.name,
        "exception": entry.exception,
        "message": entry.message,
        "raised_in": f"{occ.path}:{occ.line} in {occ.function} ({occ.snapshot})",
        "guard_conditions": [c.text for c in occ.conditions],
        "flags": [
            {
                k: v
                for k, v in f.model_dump().items()
                if k in ("flag", "sides", "polarity", "value", "default", "help") and v
            }
            for f in entry.flags
        ],
        "what_it_means": ex.what_it_means.text,
        "trigger": ex.trigger.text,
        "common_situations": ex.common_situations.items,
        "solutions": [s.text for s in ex.solutions],
        "example_fix": ex.example_fix.model_dump(include={"before", "after"})
        if ex.example_fix
        else None,
        "timeline": entry.timeline.summary,
    }


def _endpoint(url: str) -> str:
    url = url.rstrip("/")
    if url.endswith("/chat/completions"):
        return url
    return url + ("/chat/completions" if url.endswith("/v1") else "/v1/chat/completions")


def parse_reply(body: Any) -> AiProse:
    """The validated prose from a chat-completions response body; AiError when unusable."""
    try:
        content = body["choices"][0]["message"]["content"]
    except (KeyError, IndexError, TypeError) as exc:
        raise AiError("the model's reply has no choices[0].message.content") from exc
    if not isinstance(content, str) or not content.strip():
        raise AiError("the model's reply is empty")
    text = content.strip()[:MAX_REPLY_CHARS]
    if text.startswith("```"):  # a fenced block: keep what is inside the fence
        text = text.split("\n", 1)[-1].rsplit("```", 1)[0]
    try:
        return AiProse.model_validate_json(text)
    except ValidationError as exc:
        first = exc.errors()[0]
        where = ".".join(str(p) for p in first["loc"]) or "reply"
        raise AiError(
            f"the model's reply is not the expected JSON ({where}: {first['msg']})"
        ) from exc


def ask_model(entry: Entry, settings: Settings, client: httpx.Client | None = None) -> AiProse:
    """One chat-completions request for this entry's facts; AiError on any failure."""
    if not settings.llm_url or not settings.llm_model:
        raise AiError("AI enrichment is off: set ERRKB_LLM_URL and ERRKB_LLM_MODEL")
    payload = {
        "model": settings.llm_model,
        "temperature": 0,
        "messages": [
            {"role": "system", "content": SYSTEM_PROMPT},
            {"role": "user", "content": json.dumps(facts(entry), ensure_ascii=False)},
        ],
    }
    headers = {"Authorization": f"Bearer {settings.llm_api_key}"} if settings.llm_api_key else {}
    own = client is None
    client = client or httpx.Client(timeout=TIMEOUT)
    try:
        response = client.post(_endpoint(settings.llm_url), json=payload, headers=headers)
    except httpx.HTTPError as exc:
        raise AiError(f"the model endpoint failed: {type(exc).__name__}: {exc}") from exc
    finally:
        if own:
            client.close()
    if response.status_code != 200:
        raise AiError(f"the model endpoint answered HTTP {response.status_code}")
    try:
        body = response.json()
    except ValueError as exc:
        raise AiError("the model endpoint did not answer JSON") from exc
    return parse_reply(body)


def enrich(
    session: Session,
    entry: Entry,
    settings: Settings,
    *,
    refresh: bool = False,
    client: httpx.Client | None = None,
) -> AiExplanationOut:
    """The AI prose of an entry: cached per (error, template hash, model), else asked and stored."""
    error = session.get(Error, entry.id)
    if error is None:
        raise AiError(f"no error with id {entry.id}")
    key = (error.id, template_hash(error), settings.llm_model)
    row = session.get(AiExplanation, key)
    if row is not None and not refresh:
        return _out(row)
    prose = ask_model(entry, settings, client)
    delete_ai_explanation(session, *key)
    row = AiExplanation(
        error_id=key[0],
        template_hash=key[1],
        model=key[2],
        content=prose.model_dump(),
        created_at=datetime.now(UTC),
    )
    session.add(row)
    session.info.pop("has_ai_explanations", None)  # an entry built next in this session shows it
    before = session_kb_key(session)
    bump_ai_generation(session)  # cached entries show the new prose from the next request on
    rekey_docs(session, before, session_kb_key(session), error.id)  # the others are unchanged
    session.commit()
    return _out(row)
