"""After `errkb ingest`: build the entry docs whose inputs changed, so a first read is one row."""

from __future__ import annotations

from rich.console import Console

from errkb.core.settings import Settings
from errkb.service.cli.progress_view import counting
from errkb.service.entries.docs import Materialized, materialize_entries


def materialize_with_progress(
    settings: Settings, console: Console, *, force: bool = False, defer: bool = False
) -> Materialized:
    """Build the entry docs under a progress bar, then say what it cost in one sentence
    (`defer`: leave those out of date only by versions and lines, see `materialize_entries`)."""
    with counting(console, "entry documents") as advance:
        done = materialize_entries(
            settings, processes=settings.workers, force=force, defer=defer, progress=advance
        )
    console.print(sentence(done), soft_wrap=True, highlight=False)
    return done


def materialize_entries_quietly(settings: Settings, *, defer: bool = False) -> dict[str, object]:
    """Build the entry docs without output; their figures, for `errkb ingest --json`."""
    done = materialize_entries(settings, processes=settings.workers, defer=defer)
    return {
        "entries": done.entries,
        "seconds": round(done.seconds, 3),
        "stored_bytes": done.compressed_bytes,
        "json_bytes": done.json_bytes,
        "already_built": done.skipped,
        "kept": done.kept,
        "deferred": done.deferred,
        "batches_left_out": done.abandoned,
    }


def sentence(done: Materialized) -> str:
    """What the materialization did, for a person."""
    if done.skipped:
        return f"Entry documents are current: none changed ({_entries(done.kept)} kept)."
    text = (
        f"Built {_entries(done.entries)} for fast reads in {done.seconds:.1f} s "
        f"({done.compressed_bytes / 1e6:.1f} MB stored, {done.json_bytes / 1e6:.1f} MB of JSON); "
        f"{_entries(done.kept)} unchanged."
    )
    if done.deferred:
        text += (
            f" {_entries(done.deferred)} changed only by the new release in their version lists"
            " and line numbers:"
            " each is built when first read, or by `errkb docs` (which `errkb serve` starts in"
            " the background)."
        )
    if done.abandoned:
        text += (
            f" {done.abandoned} batches were left out because another ingest finished meanwhile;"
            " those entries are built when first read."
        )
    return text


def _entries(n: int) -> str:
    return f"{n} entry" if n == 1 else f"{n:,} entries"
