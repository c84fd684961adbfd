"""Timelines as ranges: an entry's JSON no longer grows by a timeline item per release, the
runs of releases are exact, and the page and the MCP answer read them."""

from __future__ import annotations

import asyncio
from pathlib import Path

import httpx
from history_repo import MESSAGE, ingest_history, served_entry

from errkb.core.settings import Settings
from errkb.service.app import create_app


def test_an_entry_grows_by_a_label_per_release_not_by_a_timeline_item(tmp_path: Path) -> None:
    url = f"sqlite:///{tmp_path / 'kb.sqlite3'}"
    ingest_history(url, tmp_path / "repo", range(10))
    short, entry = served_entry(url)
    assert entry.message == MESSAGE
    ingest_history(url, tmp_path / "repo", range(10, 60))
    long, entry = served_entry(url, entry.id)
    tl = entry.timeline
    assert len(tl.present_in) == 60
    assert [(r.from_snapshot, r.to_snapshot, r.snapshots, r.present) for r in tl.ranges] == [
        ("1.0.0", "1.0.59", 60, True)
    ]
    assert tl.ranges[0].site_count == 1 and tl.ranges[0].sites[0].startswith("srv/pool.py:")
    # 50 more releases add their labels to present_in (about 10 bytes each), and nothing per
    # release besides: a point per release was 100 bytes and more.
    assert long - short <= 50 * 16, (short, long)


def test_the_page_shows_runs_with_an_anchor_per_release(tmp_path: Path) -> None:
    url = f"sqlite:///{tmp_path / 'kb.sqlite3'}"
    ingest_history(url, tmp_path / "repo", range(12))
    _, entry = served_entry(url)

    async def page() -> str:
        app = create_app(Settings(database_url=url, data_dir=tmp_path))
        async with app.router.lifespan_context(app):
            transport = httpx.ASGITransport(app=app)
            async with httpx.AsyncClient(transport=transport, base_url="http://t") as client:
                return (await client.get(f"/errors/{entry.id}")).text

    html = asyncio.run(page())
    table = html[html.index('<table class="timeline">') :]
    table = table[: table.index("</table>")]
    assert table.count("<tr class=") == 1 and "1.0.0 to 1.0.11</a> (12 versions)" in table
    assert table.count('<span id="tl-') == 12  # a version's link lands on its run
