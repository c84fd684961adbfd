"""The README's command and route tables, checked against the real CLI and the real app."""

from __future__ import annotations

import re
from collections.abc import Iterable, Iterator
from importlib.metadata import entry_points
from pathlib import Path

import typer
from starlette.routing import BaseRoute

from errkb.core.settings import Settings

README = Path(__file__).resolve().parents[2] / "README.md"
# Routes that serve files or FastAPI's own helpers, not answers a reader looks up.
NOT_LISTED = {"/static", "/static/pygments.css", "/docs/oauth2-redirect"}


def _table(marker: str) -> list[str]:
    """The first cell of every row of the table that follows `<!-- marker: ... -->`."""
    text = README.read_text()
    start = text.index(f"<!-- {marker}:")
    rows = []
    for line in text[start:].splitlines()[1:]:
        if not line.startswith("|"):
            if rows:
                break
            continue
        rows.append(line.split("|")[1].strip())
    return rows[2:]  # the header and its rule


def _cli_app() -> typer.Typer:
    (script,) = [e for e in entry_points(group="console_scripts") if e.name == "errkb"]
    module = script.load().__module__
    return vars(__import__(module, fromlist=["app"]))["app"]


def test_the_command_table_lists_exactly_the_commands_of_errkb_help() -> None:
    listed = {re.fullmatch(r"`errkb ([a-z-]+)`", cell).group(1) for cell in _table("commands")}  # type: ignore[union-attr]
    commands = set(typer.main.get_command(_cli_app()).commands)  # type: ignore[attr-defined]
    assert listed == commands, (
        f"README lists {sorted(listed - commands)} that errkb --help lacks; "
        f"lacks {sorted(commands - listed)}"
    )


def _walk(routes: Iterable[BaseRoute]) -> Iterator[tuple[str, str]]:
    for route in routes:
        inner = getattr(route, "original_router", None)
        if inner is not None:
            yield from _walk(inner.routes)
            continue
        path = getattr(route, "path", None)
        if path is None:
            continue
        methods = getattr(route, "methods", None) or {"MOUNT"}
        for method in sorted(set(methods) - {"HEAD"}):
            yield method, path


def test_the_route_table_lists_exactly_the_apps_routes(tmp_path: Path) -> None:
    from errkb.service.app import create_app

    app = create_app(Settings(database_url=f"sqlite:///{tmp_path / 'kb.sqlite3'}"))
    listed = set()
    for cell in _table("routes"):
        listed |= {(m, p) for m, p in re.findall(r"`([A-Z]+) (/[^`]*)`", cell)}
    assert listed, "no route rows found"
    served = {(m, p) for m, p in _walk(app.routes) if p not in NOT_LISTED}
    assert listed == served, (
        f"README lists {sorted(listed - served)} the app lacks; lacks {sorted(served - listed)}"
    )
