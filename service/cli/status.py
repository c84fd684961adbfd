"""`errkb status`: per pinned project, the releases held and the newest on the index; the last
ingest, its duration and the entries it changed; whether the entry documents are current."""

from __future__ import annotations

import json
from typing import TYPE_CHECKING, Annotated

import httpx
import typer
from rich.console import Console
from rich.markup import escape

from errkb.core.db import engine_from_settings, session_factory, upgrade
from errkb.core.errors import ErrkbError
from errkb.core.settings import Settings
from errkb.ingest.follow import newest_listed
from errkb.ingest.pins import load_pins
from errkb.ingest.sources.index import client
from errkb.ingest.sources.simple import pip_index_url, simple_releases
from errkb.service.cli.failures import exit_code

if TYPE_CHECKING:  # the module imports the entry builders: a second every command would pay
    from errkb.service.status.state import DocsStatus, KbStatus, RepoStatus

out = Console(soft_wrap=True, highlight=False)


def status(
    offline: Annotated[
        bool, typer.Option("--offline", help="do not ask the package index for its newest")
    ] = False,
    as_json: Annotated[bool, typer.Option("--json", help="print the state as JSON")] = False,
) -> None:
    """Show what the knowledge base holds, how fresh it is, and whether its entries are built."""
    settings = Settings()
    try:
        pins = load_pins(settings.resolved_pins_file)
        engine = engine_from_settings(settings)
        upgrade(engine)
        with session_factory(engine)() as session:
            from errkb.service.status.state import kb_status

            state = kb_status(session)
        engine.dispose()
    except ErrkbError as exc:
        typer.echo(f"error: {exc.message}", err=True)
        raise typer.Exit(exit_code(exc)) from exc
    names = {p.name: p.pypi_name for p in pins.repos}
    names.update({r.name: r.pypi_name for r in state.repos if r.name not in names})
    newest = {} if offline else _newest_on_index(settings, [n for n in names.values() if n])
    if as_json:
        typer.echo(json.dumps(_as_json(state, names, newest), indent=2, default=str))
        return
    for name, pypi in names.items():
        repo = next((r for r in state.repos if r.name == name), None)
        out.print(f"[bold]{escape(name)}[/bold]")
        for line in _repo_lines(repo, newest.get(pypi or "")):
            out.print(f"  {escape(line)}")
    out.print(escape(_docs_line(state.docs)))


def _newest_on_index(settings: Settings, names: list[str]) -> dict[str, str]:
    """The newest final release of each project on the simple index (or why it is unknown)."""
    index = pip_index_url(settings.simple_index_url)
    found: dict[str, str] = {}
    with client(settings.index_timeout_seconds) as http:
        for name in names:
            try:
                found[name] = newest_listed(simple_releases(http, index, name)) or "none"
            except (ErrkbError, httpx.HTTPError) as exc:
                message = exc.message if isinstance(exc, ErrkbError) else str(exc)
                found[name] = f"unknown ({message})"
    return found


def _repo_lines(repo: RepoStatus | None, newest: str | None) -> list[str]:
    index = f"; newest on the index: {newest}" if newest else ""
    if repo is None:
        return [f"nothing ingested yet{index}"]
    held = f"{repo.releases} release{'s' if repo.releases != 1 else ''} held"
    lines = [f"{held}, newest {repo.newest_release or 'none'}{index}"]
    if repo.snapshots > repo.releases:
        lines.append(f"{repo.snapshots - repo.releases} other snapshots (commits, folders)")
    if repo.last_ingested_at is not None:
        when = repo.last_ingested_at.strftime("%Y-%m-%d %H:%M UTC")
        lines.append(f"last ingest: {repo.last_label} at {when}, took {repo.last_seconds:.1f} s")
    return lines


def _docs_line(docs: DocsStatus) -> str:
    state = "all current" if docs.all_current else f"{docs.current:,} of {docs.entries:,} current"
    line = f"Entry documents: {state} ({docs.entries:,} entries)"
    if docs.last_rebuilt is not None:
        line += (
            f"; the last build changed {docs.last_rebuilt:,} and kept {docs.last_kept or 0:,}"
            f" in {docs.last_seconds or 0:.1f} s"
        )
    if not docs.all_current:
        line += (
            "; the others are built when first read, or by `errkb docs`, which `errkb serve`"
            " starts in the background"
        )
    return line + "."


def _as_json(state: KbStatus, names: dict[str, str | None], newest: dict[str, str]) -> object:
    repos = {r.name: r for r in state.repos}
    return {
        "projects": [
            {
                "name": name,
                "newest_on_index": newest.get(pypi or ""),
                **(repos[name].__dict__ if name in repos else {}),
            }
            for name, pypi in names.items()
        ],
        "docs": {**state.docs.__dict__, "all_current": state.docs.all_current},
    }
