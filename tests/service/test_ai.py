"""AI enrichment against a real HTTP server in the test speaking the chat-completions protocol."""

from __future__ import annotations

import json
import threading
from collections.abc import Iterator
from http.server import BaseHTTPRequestHandler, ThreadingHTTPServer
from pathlib import Path
from typing import Any

import pytest
from knowledge_repo import SWA_MESSAGE, ingest_small_repo, literal_id
from sqlalchemy import Engine, func, select
from sqlalchemy.orm import Session
from typer.testing import CliRunner

from errkb.core.db import session_factory
from errkb.core.models import AiExplanation
from errkb.core.settings import Settings
from errkb.service.cli import failures
from errkb.service.cli.main import app as cli
from errkb.service.entries.ai import AiError, enrich
from errkb.service.entries.build import build_entry

PROSE = {
    "what_it_means": "Unified memory cannot be combined with PD on SWA models.",
    "trigger": "Launching with both options on an SWA model.",
    "common_situations": ["Trying unified memory in a PD deployment."],
    "solutions": ["Drop --enable-unified-memory.", "Upgrade to v2."],
}


class ChatServer:
    """A chat-completions endpoint whose next reply the test chooses; it records requests."""

    def __init__(self) -> None:
        self.requests: list[dict[str, Any]] = []
        self.status = 200
        self.content: str = json.dumps(PROSE)
        outer = self

        class Handler(BaseHTTPRequestHandler):
            def do_POST(self) -> None:  # noqa: N802 - http.server's naming
                length = int(self.headers["Content-Length"])
                body = json.loads(self.rfile.read(length))
                outer.requests.append(
                    {"path": self.path, "body": body, "auth": self.headers.get("Authorization")}
                )
                reply = {
                    "id": "c1",
                    "object": "chat.completion",
                    "model": body["model"],
                    "choices": [
                        {"index": 0, "message": {"role": "assistant", "content": outer.content}}
                    ],
                }
                data = json.dumps(reply).encode()
                self.send_response(outer.status)
                self.send_header("Content-Type", "application/json")
                self.send_header("Content-Length", str(len(data)))
                self.end_headers()
                self.wfile.write(data)

            def log_message(self, *args: object) -> None:
                pass

        self.httpd = ThreadingHTTPServer(("127.0.0.1", 0), Handler)
        self.url = f"http://127.0.0.1:{self.httpd.server_address[1]}/v1"
        # shutdown() waits for the next poll: 0.5 s by default, paid by every test that uses it
        self.thread = threading.Thread(target=self.httpd.serve_forever, args=(0.02,), daemon=True)

    def __enter__(self) -> ChatServer:
        self.thread.start()
        return self

    def __exit__(self, *exc: object) -> None:
        self.httpd.shutdown()
        self.httpd.server_close()
        self.thread.join()


@pytest.fixture
def chat() -> Iterator[ChatServer]:
    with ChatServer() as server:
        yield server


@pytest.fixture
def session(engine: Engine, db_url: str, tmp_path: Path) -> Iterator[Session]:
    ingest_small_repo(db_url, tmp_path)
    with session_factory(engine)() as s:
        yield s


def _settings(chat: ChatServer, **extra: Any) -> Settings:
    return Settings(llm_url=chat.url, llm_model="tiny-test-model", llm_api_key="k-1", **extra)


def test_prose_is_stored_with_ai_provenance_and_cached(session: Session, chat: ChatServer) -> None:
    settings = _settings(chat)
    error_id = literal_id(SWA_MESSAGE)
    before = build_entry(session, error_id, settings=settings)
    assert before.ai is None
    out = enrich(session, before, settings)
    assert (out.provenance, out.model) == ("ai", "tiny-test-model")
    assert out.what_it_means == PROSE["what_it_means"] and out.solutions == PROSE["solutions"]
    (req,) = chat.requests
    assert req["path"] == "/v1/chat/completions" and req["auth"] == "Bearer k-1"
    assert req["body"]["model"] == "tiny-test-model"
    facts = json.loads(req["body"]["messages"][1]["content"])
    assert facts["message"] == SWA_MESSAGE and facts["solutions"]
    assert facts["example_fix"]["before"].endswith("--disaggregation-mode prefill")

    after = build_entry(session, error_id, settings=settings)
    assert after.ai is not None and after.ai.provenance == "ai"
    assert after.ai.what_it_means == PROSE["what_it_means"]
    assert after.explanation == before.explanation  # derived fields untouched

    enrich(session, after, settings)
    assert len(chat.requests) == 1  # cached per (error, template hash, model)
    chat.content = json.dumps({**PROSE, "what_it_means": "Rewritten."})
    assert enrich(session, after, settings, refresh=True).what_it_means == "Rewritten."
    assert len(chat.requests) == 2
    count = session.execute(select(func.count()).select_from(AiExplanation)).scalar_one()
    assert count == 1


@pytest.mark.parametrize(
    ("status", "content", "reported"),
    [
        (200, "Sure! Here is what it means: ...", "not the expected JSON"),
        (200, json.dumps({"trigger": "no what_it_means"}), "what_it_means"),
        (200, "", "empty"),
        (500, json.dumps(PROSE), "HTTP 500"),
    ],
)
def test_bad_replies_are_reported_and_change_nothing(
    session: Session, chat: ChatServer, status: int, content: str, reported: str
) -> None:
    settings = _settings(chat)
    error_id = literal_id(SWA_MESSAGE)
    entry = build_entry(session, error_id, settings=settings)
    chat.status, chat.content = status, content
    with pytest.raises(AiError, match=reported):
        enrich(session, entry, settings)
    again = build_entry(session, error_id, settings=settings)
    assert again.ai is None and again.explanation == entry.explanation
    assert session.execute(select(func.count()).select_from(AiExplanation)).scalar_one() == 0


def test_fenced_json_reply_is_accepted(session: Session, chat: ChatServer) -> None:
    settings = _settings(chat)
    chat.content = "```json\n" + json.dumps(PROSE) + "\n```"
    entry = build_entry(session, literal_id(SWA_MESSAGE), settings=settings)
    assert enrich(session, entry, settings).trigger == PROSE["trigger"]


def test_off_by_default_and_unreachable(session: Session) -> None:
    entry = build_entry(session, literal_id(SWA_MESSAGE))
    with pytest.raises(AiError, match="off"):
        enrich(session, entry, Settings(llm_url="", llm_model=""))
    dead = Settings(llm_url="http://127.0.0.1:9/v1", llm_model="m")
    with pytest.raises(AiError, match="endpoint failed"):
        enrich(session, entry, dead)


def test_cli_explain(db_url: str, tmp_path: Path, chat: ChatServer) -> None:
    ingest_small_repo(db_url, tmp_path)
    env = {
        "ERRKB_DATABASE_URL": db_url,
        "ERRKB_DATA_DIR": str(tmp_path),
        "ERRKB_LLM_URL": chat.url,
        "ERRKB_LLM_MODEL": "tiny-test-model",
    }
    runner = CliRunner()
    ok = runner.invoke(cli, ["explain", literal_id(SWA_MESSAGE)], env=env)
    assert ok.exit_code == 0, ok.output
    assert json.loads(ok.stdout)["provenance"] == "ai"
    chat.content = "not json"
    bad = runner.invoke(cli, ["explain", literal_id(SWA_MESSAGE), "--refresh"], env=env)
    assert bad.exit_code == failures.FAILED and "derived fields unchanged" in bad.output
