"""What an agent is handed by match_error, get_error and explain_traceback, through the SDK's
client on SQLite and PostgreSQL: the code a server runs before the project's own tests, matches
told from weak guesses, and a version that filters on the releases raising the error."""

from __future__ import annotations

from pathlib import Path
from typing import Any

import anyio
from mcp.client import Client
from ranking_repo import MOVED, ONLY_V2, WEAK, ingest_ranking_repo, raise_line
from test_mcp import connected


def _run(url: str, tmp_path: Path, check: Any) -> None:
    async def main() -> None:
        async with connected(url, tmp_path) as client:
            await check(client)

    anyio.run(main)


def _traceback(path: str, line: int, function: str, last: str) -> str:
    return (
        "Traceback (most recent call last):\n"
        '  File "/srv/app/launch.py", line 12, in <module>\n'
        "    main()\n"
        f'  File "/opt/venv/lib/python3.11/site-packages/{path}", line {line}, in {function}\n'
        "    raise it\n"
        f"{last}\n"
    )


def test_match_error_ranks_server_code_first_and_marks_test_code(
    db_url: str, tmp_path: Path
) -> None:
    ingest_ranking_repo(db_url, tmp_path / "repo")
    oom = "RuntimeError: CUDA out of memory. Tried to allocate 2 GiB on device 0"

    async def check(client: Client) -> None:
        found = await client.call_tool("match_error", {"text": oom})
        matches = found.structured_content["matches"]
        assert [m["test_code"] for m in matches] == [False, True]
        assert matches[0]["message"].endswith("Tried to allocate {size}")
        test_id = matches[1]["id"]
        text = found.content[0].text
        assert "Test code: raised only in sglang's own tests" in text
        assert text.index(matches[0]["id"]) < text.index(test_id)

        got = await client.call_tool("get_error", {"id": test_id})
        d = got.structured_content
        assert d["test_code"] and d["who_hits_it"]["kind"] == "test"
        assert "## Who hits it (test)" in got.content[0].text

        # Run under a test, the same line is the test's fake: ranked as usual, first.
        in_test = _traceback("tests/test_alloc.py", 3, "alloc", oom)
        assert in_test.count("tests/") == 1
        ran = await client.call_tool("match_error", {"text": in_test})
        assert ran.structured_content["matches"][0]["id"] == test_id

    _run(db_url, tmp_path, check)


def test_weak_guesses_are_told_apart_and_never_explained_as_the_cause(
    db_url: str, tmp_path: Path
) -> None:
    ingest_ranking_repo(db_url, tmp_path / "repo")

    async def check(client: Client) -> None:
        guess = await client.call_tool("match_error", {"text": "server_args was not set here"})
        (only,) = guess.structured_content["matches"]
        assert only["confidence"] == "weak guess" and only["message"] == WEAK
        assert guess.content[0].text.startswith("1 weak guess, no confident match")

        both = f"ValueError: {MOVED}\nserver_args was not set here"
        sure = await client.call_tool("match_error", {"text": both})
        assert [m["message"] for m in sure.structured_content["matches"]] == [MOVED]
        assert sure.content[0].text.startswith("1 match, best first:")

        prompt = await client.get_prompt(
            "explain_traceback", {"traceback": "server_args was not set here"}
        )
        text = prompt.messages[0].content.text
        assert "no confident match" in text and "## What it means" not in text
        prompt = await client.get_prompt("explain_traceback", {"traceback": both})
        assert "The entry of the best match:" in prompt.messages[0].content.text

    _run(db_url, tmp_path, check)


def test_a_version_keeps_the_errors_it_raises_and_says_where_the_lines_point(
    db_url: str, tmp_path: Path
) -> None:
    root = tmp_path / "repo"
    ingest_ranking_repo(db_url, root)
    v2_line = raise_line(root, 2, "srv/pool.py", "raise ValueError")
    assert v2_line != raise_line(root, 1, "srv/pool.py", "raise ValueError")
    text = _traceback("srv/pool.py", v2_line, "reserve", f"ValueError: {MOVED}")

    async def check(client: Client) -> None:
        plain = await client.call_tool("match_error", {"text": text})
        (top,) = plain.structured_content["matches"]
        assert top["site"]["lines_match"] == ["v2"] and top["site"]["line"] == v2_line
        assert "The lines of this traceback match v2." in plain.content[0].text

        # v1 raises it too, on another line: kept, and the answer says whose lines these are.
        for version in ("v1", "1"):
            old = await client.call_tool("match_error", {"text": text, "version": version})
            assert not old.is_error, old.content
            assert [m["id"] for m in old.structured_content["matches"]] == [top["id"]]
            assert "The lines of this traceback match v2 (not v1)" in old.content[0].text

        spec = f"ValueError: {ONLY_V2}"
        gone = await client.call_tool("match_error", {"text": spec, "version": "v1"})
        assert gone.structured_content["matches"] == []
        assert "1 error(s) that v1 does not raise were left out." in gone.content[0].text
        kept = await client.call_tool("match_error", {"text": spec, "version": "v2"})
        assert len(kept.structured_content["matches"]) == 1

    _run(db_url, tmp_path, check)
