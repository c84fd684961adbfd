"""`errkb export-site`: a page per error, a valid sitemap, no broken links, no live HTML."""

from __future__ import annotations

import json
import os
import re
import subprocess
import sys
import zipfile
from pathlib import Path
from xml.etree import ElementTree as ET

import pytest
from html_check import heading_problems
from linkcheck import check_site, site_facts
from pages_repo import XSS_MESSAGE, ingest_pages_repo
from sqlalchemy import func, select
from wheels import sglang_wheel

from errkb.core.cache_models import EntryDoc
from errkb.core.db import make_engine, session_factory
from errkb.core.models import Error
from errkb.service.entries.build import build_entry
from errkb.service.pages import export_entries
from errkb.service.pages.export import export_site

NS = {"s": "http://www.sitemaps.org/schemas/sitemap/0.9"}
ROOT = Path(__file__).resolve().parents[2]


def _error_ids(url: str) -> set[str]:
    engine = make_engine(url)
    with session_factory(engine)() as s:
        ids = set(s.scalars(select(Error.id)))
    engine.dispose()
    return ids


def _sitemap_locs(site: Path) -> list[str]:
    tree = ET.parse(site / "sitemap.xml")
    assert tree.getroot().tag == "{http://www.sitemaps.org/schemas/sitemap/0.9}urlset"
    return [loc.text or "" for loc in tree.getroot().iterfind("s:url/s:loc", NS)]


def test_small_export_is_complete_linked_and_escaped(
    db_url: str, tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:

    monkeypatch.setattr(export_entries, "CHUNK", 3)  # several chunks in two processes
    ingest_pages_repo(db_url, tmp_path / "src")
    ids = _error_ids(db_url)
    site = tmp_path / "site"
    engine = make_engine(db_url)
    with session_factory(engine)() as s:
        stats = export_site(s, site, base_url="https://docs.example.org/kb/", workers=2)
    engine.dispose()

    assert stats.errors == len(ids)
    assert {p.stem for p in (site / "errors").glob("*.html")} == ids
    assert {p.stem for p in (site / "errors").glob("*.json")} == ids
    report, links = check_site(site)
    assert report.broken == []
    assert report.internal > 10 * len(ids)
    locs = _sitemap_locs(site)
    assert all(loc.startswith("https://docs.example.org/kb/") for loc in locs)
    assert {f"https://docs.example.org/kb/errors/{i}.html" for i in ids} <= set(locs)
    facts = site_facts(site)
    assert len(locs) == len(facts) == report.pages  # every page is in the sitemap, nothing else
    for rel, page in facts.items():
        assert page.inline_scripts == 0 and page.inline_handlers == [], rel
        assert heading_problems(page) == [], rel
        # The link check's fast reading sees every link the standard parser sees, and its ids.
        assert set(page.links + page.srcs) <= set(links[rel].links), rel
        assert links[rel].ids == page.ids, rel

    xss_id = next(i for i in ids if XSS_MESSAGE in (site / "errors" / f"{i}.json").read_text())
    html = (site / "errors" / f"{xss_id}.html").read_text()
    assert "<script>alert" not in html and "&lt;script&gt;alert(1)&lt;/script&gt;" in html
    assert XSS_MESSAGE in facts[f"errors/{xss_id}.html"].text
    for page in site.rglob("*.html"):
        text = page.read_text()
        assert "<script>alert" not in text and "<img src=x" not in text, page
    index = json.loads((site / "search-index.json").read_text())
    assert {e["id"] for e in index["errors"]} == ids
    assert XSS_MESSAGE in {e["message"] for e in index["errors"]}  # data; the JS sets textContent
    assert facts["errors/" + xss_id + ".html"].canonical == (
        f"https://docs.example.org/kb/errors/{xss_id}.html"
    )


def test_link_check_finds_what_is_broken(tmp_path: Path) -> None:
    (tmp_path / "a").mkdir()
    (tmp_path / "a" / "x.html").write_text('<p id="top"><a href="../b.html#here">b</a></p>')
    (tmp_path / "b.html").write_text(
        '<h1 id="here">b</h1><!-- <a href="gone.html"> -->'
        "<a href=\"a/x.html#top\">ok</a> <a href='a/x.html#nope'>no such id</a>"
        '<img alt="" src=missing.png><a href="../outside.html">outside</a><a href="/b.html">'
        '<a title=\'href="gone.html"\' href="https://example.org/">external</a>'
        '<a href="a/x.html?q=1&amp;r=2">ok</a><script>let s = "<a href=\'gone.html\'>";</script>'
    )
    report, links = check_site(tmp_path)
    assert sorted(report.broken) == [
        ("b.html", "../outside.html"),
        ("b.html", "/b.html"),
        ("b.html", "a/x.html#nope"),
        ("b.html", "missing.png"),
    ]
    assert (report.pages, report.internal, report.external) == (2, 7, 1)
    assert links["b.html"].links[-1] == "a/x.html?q=1&r=2"


# A real part of a real release: the KV cache modules (the reference error's folder, without its
# storage backends) and the fields of the server's arguments (the flags their errors link to).
# The export of the four pins (about 20,000 pages) proves nothing more than this part, at 40
# times the cost: it is bench/export.py's.
EXPORT_PART = re.compile(r"sglang/srt/(mem_cache/[^/]+|arg_groups/fields/[^/]+)\.py")


def _release_part(wheel: Path, dest: Path) -> int:
    """The files of EXPORT_PART unpacked from `wheel` into `dest`; returns how many."""
    with zipfile.ZipFile(wheel) as archive:
        names = [n for n in archive.namelist() if EXPORT_PART.fullmatch(n)]
        archive.extractall(dest, members=names)
    return len(names)


@pytest.mark.sglang
def test_sglang_export_via_cli(tmp_path: Path) -> None:
    """The real commands on part of a real release: `errkb ingest --dir`, `errkb docs`, then
    `errkb export-site` reads the stored docs: every error gets a page, each as built now, and
    every link resolves."""
    part = tmp_path / "sglang-0.5.23-part"
    assert _release_part(sglang_wheel("0.5.23"), part) > 20
    url = f"sqlite:///{tmp_path / 'kb.sqlite3'}"
    env = {**os.environ, "ERRKB_DATABASE_URL": url, "ERRKB_PUBLIC_URL": ""}
    env["ERRKB_CACHE_DIR"] = str(tmp_path / "cache")
    errkb = str(Path(sys.executable).parent / "errkb")
    site = tmp_path / "site"
    for args in (
        ["ingest", "--dir", str(part), "--label", "0.5.23-part", "--repo", "sgl-project/sglang"],
        ["docs"],
        ["export-site", str(site), "--base-url", "https://errors.example.org"],
    ):
        done = subprocess.run(
            [errkb, *args], cwd=tmp_path, env=env, capture_output=True, text=True, check=False
        )
        assert done.returncode == 0, f"errkb {args[0]}: {done.stderr[-2000:]}"
        print(done.stdout.strip())
    ids = _error_ids(url)
    assert len(ids) > 200
    assert any((site / "flags").glob("*.html"))
    assert {p.stem for p in (site / "errors").glob("*.html")} == ids
    locs = _sitemap_locs(site)
    assert {f"https://errors.example.org/errors/{i}.html" for i in ids} <= set(locs)
    report, _ = check_site(site)
    print(
        f"link check: {report.pages} pages, {report.internal} internal links, "
        f"{report.external} external, {len(report.broken)} broken"
    )
    assert report.broken == []
    assert report.internal > 10 * len(ids)
    assert len(locs) == report.pages
    engine = make_engine(url)
    with session_factory(engine)() as s:
        stored = s.execute(select(func.count()).select_from(EntryDoc)).scalar_one()
        assert stored == len(ids)  # the export read docs that `errkb docs` stored
        for error_id in sorted(ids)[:: len(ids) // 40]:  # stored docs are the entries built now
            built = build_entry(s, error_id).model_dump_json(indent=1)
            assert (site / "errors" / f"{error_id}.json").read_text() == built, error_id
    engine.dispose()
