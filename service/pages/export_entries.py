"""Writing the export's entry pages, spread over processes: one page costs an entry build and a
render (tens of milliseconds), and a large project has thousands.

Each worker opens its own engine on the same database URL and writes a chunk of ids; the files
it writes depend only on the id, so the chunks can run in any order. An entry whose doc is
stored and current (built by `errkb ingest` with no public URL) is read, not built: reading and
rendering it costs a fifth of building it.
"""

from __future__ import annotations

import multiprocessing
import os
from collections.abc import Callable
from concurrent.futures import ProcessPoolExecutor, as_completed
from pathlib import Path

from errkb.service.read import DbSession
from errkb.service.read.status import content_key

CHUNK = 100


def write_entry_pages(
    session: DbSession,
    ids: list[str],
    outdir: Path,
    base: str,
    *,
    workers: int = 0,
    progress: Callable[[int, int], None] | None = None,
) -> None:
    """Write `errors/{id}.html` and `errors/{id}.json` for every id; `workers` 0 = all cores."""
    (outdir / "errors").mkdir(parents=True, exist_ok=True)
    workers = workers or os.cpu_count() or 1
    url = session.get_bind().engine.url
    key = content_key(session)  # the stored docs read are those current when the export began
    if workers == 1 or len(ids) <= CHUNK or url.database in (None, "", ":memory:"):
        _write(session, ids, outdir, base, key, progress)
        return
    chunks = [ids[i : i + CHUNK] for i in range(0, len(ids), CHUNK)]
    context = multiprocessing.get_context("spawn")  # no engine or session crosses a fork
    done = 0
    with ProcessPoolExecutor(max_workers=workers, mp_context=context) as pool:
        dsn = url.render_as_string(hide_password=False)
        futures = [
            pool.submit(_write_chunk, dsn, chunk, str(outdir), base, key) for chunk in chunks
        ]
        for future in as_completed(futures):
            done += future.result()
            if progress:
                progress(done, len(ids))


def _write_chunk(url: str, ids: list[str], outdir: str, base: str, key: str) -> int:
    from errkb.core.db import make_engine, session_factory

    engine = make_engine(url)
    try:
        with session_factory(engine)() as session:
            _write(session, ids, Path(outdir), base, key, None)
    finally:
        engine.dispose()
    return len(ids)


def _write(
    session: DbSession,
    ids: list[str],
    outdir: Path,
    base: str,
    key: str,
    progress: Callable[[int, int], None] | None,
) -> None:
    from errkb.service.pages.render import render_entry
    from errkb.service.pages.urls import ExportLinks
    from errkb.service.read.entries import relative_entry

    for n, error_id in enumerate(ids, 1):
        entry = relative_entry(session, error_id, key=key)
        rel = f"errors/{error_id}.html"
        canonical = f"{base}/{rel}" if base else None
        html = render_entry(entry, links=ExportLinks(1), canonical=canonical)
        (outdir / rel).write_text(html, encoding="utf-8")
        (outdir / f"errors/{error_id}.json").write_text(
            entry.model_dump_json(indent=1), encoding="utf-8"
        )
        if progress:
            progress(n, len(ids))
