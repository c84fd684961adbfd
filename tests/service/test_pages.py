"""HTML pages through the ASGI app on both backends: content, escaping, caching, headers, a11y."""

from __future__ import annotations

import asyncio
from collections.abc import Iterator
from dataclasses import dataclass
from pathlib import Path

import httpx
import pytest
from html_check import heading_problems, page_facts
from knowledge_repo import MAMBA_MESSAGE, SWA_MESSAGE, literal_id
from pages_repo import XSS_MESSAGE, ingest_pages_repo
from sqlalchemy import select

from errkb.core.db import make_engine, session_factory
from errkb.core.models import Error
from errkb.core.settings import Settings
from errkb.service.app import create_app

SECTIONS = ["message", "meaning", "source", "solutions", "when", "flags", "timeline", "related"]


@dataclass
class Site:
    """A running app (lifespan entered) and a client on it."""

    url: str
    root: Path
    ids: dict[str, str]

    def get(self, *paths: str, **headers: str) -> list[httpx.Response]:
        return asyncio.run(_requests(self.url, [("GET", p, headers, None) for p in paths]))

    def post(self, path: str, data: dict[str, str]) -> httpx.Response:
        return asyncio.run(_requests(self.url, [("POST", path, {}, data)]))[0]


async def _requests(url: str, calls: list) -> list[httpx.Response]:  # type: ignore[type-arg]
    app = create_app(Settings(database_url=url, public_url="https://docs.example.org"))
    async with app.router.lifespan_context(app):
        transport = httpx.ASGITransport(app=app)
        async with httpx.AsyncClient(transport=transport, base_url="http://t") as client:
            out = []
            for method, path, headers, data in calls:
                out.append(await client.request(method, path, headers=headers, data=data))
            return out


@pytest.fixture
def site(db_url: str, tmp_path: Path) -> Iterator[Site]:
    ingest_pages_repo(db_url, tmp_path)
    engine = make_engine(db_url)
    with session_factory(engine)() as s:
        ids = {e.message: e.id for e in s.scalars(select(Error))}
    engine.dispose()
    yield Site(db_url, tmp_path, ids)


def test_entry_page_shows_every_section(site: Site) -> None:
    swa = literal_id(SWA_MESSAGE)
    (resp,) = site.get(f"/errors/{swa}")
    assert resp.status_code == 200
    assert resp.headers["content-type"].startswith("text/html")
    html = resp.text
    facts = page_facts(html)
    for section in [*SECTIONS, "example-fix", "provenance"]:
        assert section in facts.ids, section
    assert facts.title.startswith("ValueError: --enable-unified-memory with PD")
    assert facts.canonical == f"https://docs.example.org/errors/{swa}"
    assert facts.meta["og:type"] == "article"
    assert facts.meta["og:url"] == facts.canonical
    assert facts.meta["description"].startswith("ValueError: --enable-unified-memory")
    text = facts.text
    assert SWA_MESSAGE in text
    assert "Thrown at srv/pools.py:" in text and "Pools.init_pools" in text
    assert "Use one memory pool for every cache." in text  # the flag's help text
    assert "--disaggregation-mode" in text
    assert "The raise needs all of these:" in text and "--enable-unified-memory is on" in text
    assert "Who hits it: A flag you set: --enable-unified-memory is tested by the guard" in text
    assert "How we know" in text  # the evidence, the chain of names, under the sentence
    assert f"/api/errors/{swa}" in facts.links  # the JSON link
    assert "Derived from the code and version history of acme/srv@v1" in text
    assert "not raised" in text  # v2 no longer raises it
    related = [link for link in facts.links if link.startswith("/errors/")]
    assert f"/errors/{literal_id(MAMBA_MESSAGE)}" in related
    assert heading_problems(facts) == []
    assert {"banner", "main", "contentinfo", "navigation", "search"} <= facts.landmarks
    assert facts.lang == "en" and facts.images_without_alt == 0


def test_snapshot_switch_and_placeholders(site: Site) -> None:
    eid = next(i for m, i in site.ids.items() if m.startswith("tp_size {"))
    v1, v2 = site.get(f"/errors/{eid}?snapshot=v1", f"/errors/{eid}?snapshot=v2")
    assert v1.status_code == v2.status_code == 200
    assert v1.text.index('data-snapshot="v1"') < v1.text.index('data-snapshot="v2"')
    first_group = v2.text[v2.text.index('class="snap-group') :]
    assert first_group.startswith('class="snap-group selected" id="snap-v2"')
    assert "srv/checks.py" in first_group[:2000]  # v2 moved the check to another file
    assert '<var class="ph">{server_args.tp_size}</var>' in v1.text
    assert f'href="/errors/{eid}?snapshot=v1"' in v2.text
    (missing,) = site.get(f"/errors/{eid}?snapshot=v9")
    assert missing.status_code == 404 and "text/html" in missing.headers["content-type"]


def test_html_in_messages_is_text(site: Site) -> None:
    ids = [i for m, i in site.ids.items() if "<" in m]
    assert len(ids) == 2
    pages = site.get(*[f"/errors/{i}" for i in ids], "/?q=alert", "/?q=textarea")
    for page in pages:
        assert page.status_code == 200
        assert "<script>alert" not in page.text and "<img src=x" not in page.text
        facts = page_facts(page.text)
        assert facts.inline_scripts == 0 and facts.inline_handlers == []
    xss_page = pages[ids.index(site.ids[XSS_MESSAGE])]
    assert "&lt;script&gt;alert(1)&lt;/script&gt;" in xss_page.text
    assert XSS_MESSAGE in page_facts(xss_page.text).text
    assert XSS_MESSAGE in page_facts(pages[2].text).text  # listed by the search, as text


def test_index_search_filters_and_counts(site: Site) -> None:
    home, found, filtered, none = site.get(
        "/", "/?q=enable-unified-memory", "/?q=enable-unified-memory&snapshot=v2", "/?q=zzzz"
    )
    assert home.status_code == 200
    home_facts = page_facts(home.text)
    assert f"{len(site.ids)} errors" in home_facts.text
    assert "paste-text" in home_facts.ids and heading_problems(home_facts) == []
    assert "3 errors matching “enable-unified-memory”" in page_facts(found.text).text
    assert f"/errors/{literal_id(SWA_MESSAGE)}" in page_facts(found.text).links
    filtered_links = page_facts(filtered.text).links
    assert f"/errors/{literal_id(SWA_MESSAGE)}" not in filtered_links  # gone in v2
    assert f"/errors/{literal_id(MAMBA_MESSAGE)}" in filtered_links
    assert "0 errors" in page_facts(none.text).text


def test_module_and_flag_pages(site: Site) -> None:
    root, folder, file, missing, flags, flag, no_flag = site.get(
        "/modules/",
        "/modules/srv",
        "/modules/srv/pools.py",
        "/modules/srv/nope.py",
        "/flags/",
        "/flags/enable-unified-memory",
        "/flags/no-such-flag",
    )
    assert root.status_code == folder.status_code == file.status_code == 200
    assert "/modules/srv" in page_facts(root.text).links
    assert "/modules/srv/pools.py" in page_facts(folder.text).links
    assert f"/errors/{literal_id(SWA_MESSAGE)}" in page_facts(file.text).links
    assert missing.status_code == 404
    assert "/flags/enable-unified-memory" in page_facts(flags.text).links
    flag_text = page_facts(flag.text).text
    assert "Use one memory pool for every cache." in flag_text
    assert "3 errors involve it" in flag_text
    assert no_flag.status_code == 404
    for page in (root, folder, file, flags, flag):
        assert heading_problems(page_facts(page.text)) == []


def test_conditional_get_and_generation(site: Site, db_url: str) -> None:
    path = f"/errors/{literal_id(MAMBA_MESSAGE)}"
    (first,) = site.get(path)
    etag, modified = first.headers["etag"], first.headers["last-modified"]
    (by_tag,) = site.get(path, **{"If-None-Match": etag})
    (by_date,) = site.get(path, **{"If-Modified-Since": modified})
    (other,) = site.get(path, **{"If-None-Match": '"something-else"'})
    assert by_tag.status_code == by_date.status_code == 304 and by_tag.content == b""
    assert by_tag.headers["etag"] == etag
    assert other.status_code == 200
    ingest_pages_repo(db_url, site.root / "v3", versions=(3,))  # a new snapshot: new generation
    (after,) = site.get(path, **{"If-None-Match": etag})
    assert after.status_code == 200 and after.headers["etag"] != etag


def test_security_headers_and_no_inline_script(site: Site) -> None:
    pages = site.get("/", f"/errors/{literal_id(SWA_MESSAGE)}", "/modules/", "/flags/")
    for page in pages:
        csp = page.headers["content-security-policy"]
        assert "script-src 'self'" in csp and "unsafe-inline" not in csp
        assert page.headers["x-content-type-options"] == "nosniff"
        facts = page_facts(page.text)
        assert facts.inline_scripts == 0 and facts.srcs == ["/static/site.js"]
    css, js, pyg = site.get("/static/site.css", "/static/site.js", "/static/pygments.css")
    assert css.status_code == js.status_code == pyg.status_code == 200
    assert ".highlight .hll" in pyg.text and "prefers-color-scheme: dark" in pyg.text


def test_unknown_error_is_an_html_404(site: Site) -> None:
    (resp,) = site.get("/errors/0000000000000000")
    assert resp.status_code == 404
    assert "Not found" in page_facts(resp.text).title


def test_paste_box_form_post_renders_ranked_matches(site: Site) -> None:
    swa = literal_id(SWA_MESSAGE)
    traceback = (
        "Traceback (most recent call last):\n"
        '  File "/opt/app/srv/pools.py", line 7, in init_pools\n'
        "    raise ValueError(\n"
        f"ValueError: {SWA_MESSAGE}\n"
    )
    found = site.post("/match", {"text": traceback})
    assert found.status_code == 200
    facts = page_facts(found.text)
    first = next(link for link in facts.links if link.startswith("/errors/"))
    assert first == f"/errors/{swa}"
    assert "strong match" in facts.text and heading_problems(facts) == []
    assert SWA_MESSAGE in facts.text  # the pasted text is kept in the box
    hostile = site.post("/match", {"text": f"ValueError: {XSS_MESSAGE}"})
    assert "<script>alert" not in hostile.text
    assert f"/errors/{site.ids[XSS_MESSAGE]}" in page_facts(hostile.text).links
    nothing = site.post("/match", {"text": "all good here"})
    assert nothing.status_code == 200 and "0 matches" in page_facts(nothing.text).text


def _css_vars(block: str) -> dict[str, str]:
    out = {}
    for decl in block.split(";"):
        name, _, value = decl.partition(":")
        if name.strip().startswith("--") and value.strip().startswith("#"):
            out[name.strip()[2:]] = value.strip()
    return out


def _contrast(a: str, b: str) -> float:
    def lum(h: str) -> float:
        rgb = [int(h.lstrip("#")[i : i + 2], 16) / 255 for i in (0, 2, 4)]
        lin = [c / 12.92 if c <= 0.03928 else ((c + 0.055) / 1.055) ** 2.4 for c in rgb]
        return 0.2126 * lin[0] + 0.7152 * lin[1] + 0.0722 * lin[2]

    hi, lo = sorted((lum(a), lum(b)), reverse=True)
    return (hi + 0.05) / (lo + 0.05)


def test_text_colors_meet_wcag_aa_in_light_and_dark() -> None:
    css = (Path(__file__).resolve().parents[2] / "service/pages/static/site.css").read_text()
    blocks = [part.split("}", 1)[0] for part in css.split(":root {")[1:]]
    assert len(blocks) == 2  # light, then the prefers-color-scheme: dark override
    pairs = [
        ("fg", "bg"),
        ("muted", "bg"),
        ("muted", "panel"),
        ("link", "bg"),
        ("link", "panel"),
        ("accent", "bg"),
        ("ph-fg", "ph-bg"),
        ("ok", "bg"),
        ("bad", "bg"),
        ("fg", "hll"),
        ("bg", "link"),
    ]
    for block in blocks:
        colors = _css_vars(block)
        for fg, bg in pairs:
            assert _contrast(colors[fg], colors[bg]) >= 4.5, (fg, bg, colors[fg], colors[bg])


def test_live_sitemap_lists_every_error(site: Site) -> None:
    from xml.etree import ElementTree as ET

    (resp,) = site.get("/sitemap.xml")
    assert resp.status_code == 200 and resp.headers["content-type"].startswith("application/xml")
    ns = {"s": "http://www.sitemaps.org/schemas/sitemap/0.9"}
    locs = [e.text for e in ET.fromstring(resp.content).iterfind("s:url/s:loc", ns)]
    assert {f"https://docs.example.org/errors/{i}" for i in site.ids.values()} <= set(locs)
    assert "https://docs.example.org/" in locs


def test_a_server_compiles_its_templates_as_it_starts(tmp_path: Path) -> None:
    """Before it listens: the first page a process rendered took 100 ms more than the next."""
    from errkb.service.pages import highlight, render

    render.environment.cache_clear()
    highlight._highlighted.cache_clear()
    settings = Settings(database_url=f"sqlite:///{tmp_path / 'kb.sqlite3'}")

    async def start_and_stop() -> None:
        app = create_app(settings)
        async with app.router.lifespan_context(app):
            pass

    asyncio.run(start_and_stop())
    env = render.environment()
    compiled = {name for _, name in env.cache.keys()} if env.cache is not None else set()
    assert compiled == {p.name for p in render.TEMPLATES.glob("*.html")}
    assert highlight._highlighted.cache_info().currsize == 1  # Pygments' lexer used once
