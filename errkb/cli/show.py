"""`errkb show ID`: print one error's entry as JSON.

The full entry comes from `service.entries.build_entry` when the service provides it; otherwise
the stored error and its occurrences are printed straight from the database.
"""

from __future__ import annotations

import importlib
import inspect
import json
from typing import Any

import typer
from sqlalchemy import select
from sqlalchemy.orm import Session

from errkb.cli.failures import exit_code
from errkb.core.builtin_classes import builtin_chain
from errkb.core.db import engine_from_settings, session_factory, upgrade
from errkb.core.errors import ErrkbError, NotFound
from errkb.core.models import Error, Occurrence, Repo, Snapshot
from errkb.core.settings import Settings


def show(error_id: str = typer.Argument(..., metavar="ID", help="16-hex error id")) -> None:
    """Print the entry of one error as JSON."""
    settings = Settings()
    engine = engine_from_settings(settings)
    upgrade(engine)
    try:
        with session_factory(engine)() as session:
            entry = _entry(session, error_id.strip().lower(), settings)
    except ErrkbError as exc:
        typer.echo(f"error: {exc.message}", err=True)
        raise typer.Exit(exit_code(exc)) from exc
    finally:
        engine.dispose()
    typer.echo(json.dumps(entry, indent=2, ensure_ascii=False, default=str))


def _entry(session: Session, error_id: str, settings: Settings) -> dict[str, Any]:
    try:
        build_entry = importlib.import_module("errkb.service.entries.build").build_entry
    except (ImportError, AttributeError):
        return stored_entry(session, error_id)
    params = inspect.signature(build_entry).parameters
    kwargs: dict[str, Any] = {"settings": settings} if "settings" in params else {}
    entry = build_entry(session, error_id, **kwargs)
    if entry is None:
        raise NotFound(f"no error with id {error_id}")
    return entry.model_dump(mode="json") if hasattr(entry, "model_dump") else dict(entry)


def stored_entry(session: Session, error_id: str) -> dict[str, Any]:
    """The error row and its occurrences, as stored by the ingester."""
    error = session.get(Error, error_id)
    if error is None:
        raise NotFound(f"no error with id {error_id}")
    repo = session.get(Repo, error.repo_id)
    rows = session.execute(
        select(Occurrence, Snapshot)
        .join(Snapshot, Snapshot.id == Occurrence.snapshot_id)
        .where(Occurrence.error_id == error_id)
        .order_by(Snapshot.sort_key, Occurrence.path, Occurrence.line)
    ).all()
    return {
        "id": error.id,
        "repo": repo.name if repo else None,
        "exception": error.exception,
        "exception_chain": error.chain or list(builtin_chain(error.exception)),
        "kind": error.kind,
        "check": error.check_text,
        "message": error.message,
        "title": error.title,
        "form": error.form,
        "template": error.template,
        "occurrences": [
            {
                "snapshot": snap.label,
                "kind": snap.kind,
                "commit": snap.commit,
                "path": occ.path,
                "line": occ.line,
                "end_line": occ.end_line,
                "function": occ.qualname,
                "url": f"{snap.link_base}{occ.path}#L{occ.line}" if snap.link_base else None,
                "conditions": occ.conditions,
                "flags": occ.flags,
                "snippet": occ.snippet,
            }
            for occ, snap in rows
        ],
    }
