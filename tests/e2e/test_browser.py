"""The pages in a real browser: Debian's Chromium driven by Playwright against a real uvicorn.

The server serves a private copy of the sglang knowledge base (the real pipeline's output) with
a small hostile project ingested beside it, whose messages carry `<script>alert(1)</script>`.
Every page listens for dialogs: none may open. Screenshots go to test-artifacts/ (gitignored).
"""

from __future__ import annotations

import functools
import http.server
import os
import socket
import sqlite3
import subprocess
import sys
import threading
import time
from collections.abc import Iterator
from pathlib import Path

import httpx
import pytest
from pages_repo import XSS_MESSAGE, ingest_pages_repo
from playwright.sync_api import Browser, Page, expect, sync_playwright
from sqlalchemy import select

from errkb.core.db import make_engine, session_factory
from errkb.core.models import Error, Occurrence, Snapshot
from errkb.service.pages.export import export_site

pytestmark = [pytest.mark.browser, pytest.mark.sglang]

ROOT = Path(__file__).resolve().parents[2]
ARTIFACTS = ROOT / "test-artifacts"
CHROMIUM = "/usr/bin/chromium"
CHROMIUM_ARGS = [
    "--no-sandbox",
    "--disable-gpu",
    "--disable-background-networking",
    "--disable-component-update",
    "--disable-sync",
    "--no-first-run",
]
REF_PATH = "python/sglang/srt/mem_cache/kv_cache_configurator.py"
REF_MESSAGE = (
    "--enable-unified-memory with PD disaggregation does not support hybrid-SWA models yet (no "
    "whole-envelope transfer scheme for the SWA sub-pool). Drop --enable-unified-memory or run "
    "without PD."
)
REF_TRACEBACK = f"""[2026-08-30 10:01:02 TP0] Scheduler hit an exception: Traceback (most recent call last):
  File "/usr/local/lib/python3.11/dist-packages/sglang/srt/managers/scheduler.py", line 2811, in run_scheduler_process
    scheduler = Scheduler(server_args, port_args, gpu_id, tp_rank, moe_ep_rank, pp_rank, dp_rank)
  File "/usr/local/lib/python3.11/dist-packages/sglang/srt/mem_cache/kv_cache_configurator.py", line 406, in _init_pools
    raise ValueError(
ValueError: {REF_MESSAGE}
"""  # noqa: E501


def _free_port() -> int:
    with socket.socket() as s:
        s.bind(("127.0.0.1", 0))
        return int(s.getsockname()[1])


@pytest.fixture(scope="module")
def kb(sglang_kb_url: str, tmp_path_factory: pytest.TempPathFactory) -> str:
    """A private copy of the sglang KB with the hostile project ingested by the real pipeline."""
    folder = tmp_path_factory.mktemp("browser-kb")
    src = sqlite3.connect(sglang_kb_url.removeprefix("sqlite:///"))
    dest = sqlite3.connect(folder / "kb.sqlite3")
    src.backup(dest)  # consistent even if the source has a WAL
    src.close()
    dest.close()
    url = f"sqlite:///{folder / 'kb.sqlite3'}"
    ingest_pages_repo(url, folder / "hostile")
    return url


@pytest.fixture(scope="module")
def ids(kb: str) -> dict[str, str]:
    """The reference error (0.5.18, kv_cache_configurator.py:406) and the hostile ones."""
    engine = make_engine(kb)
    with session_factory(engine)() as s:
        ref = s.scalars(
            select(Occurrence.error_id)
            .join(Snapshot, Snapshot.id == Occurrence.snapshot_id)
            .where(Snapshot.label == "0.5.18", Occurrence.path == REF_PATH, Occurrence.line == 406)
        ).one()
        xss = s.scalars(select(Error.id).where(Error.message == XSS_MESSAGE)).one()
        img = s.scalars(select(Error.id).where(Error.message.contains("<img src=x"))).one()
    engine.dispose()
    return {"ref": ref, "xss": xss, "img": img}


@pytest.fixture(scope="module")
def server(kb: str, tmp_path_factory: pytest.TempPathFactory) -> Iterator[str]:
    """`uvicorn` in a subprocess on a free port, serving `kb`."""
    port = _free_port()
    log = (tmp_path_factory.mktemp("uvicorn") / "server.log").open("w+")
    env = {**os.environ, "ERRKB_DATABASE_URL": kb, "ERRKB_PUBLIC_URL": ""}
    cmd = [sys.executable, "-m", "uvicorn", "--factory", "errkb.service.app:create_app"]
    proc = subprocess.Popen(
        [*cmd, "--host", "127.0.0.1", "--port", str(port)],
        cwd=ROOT,
        env=env,
        stdout=log,
        stderr=subprocess.STDOUT,
    )
    base = f"http://127.0.0.1:{port}"
    try:
        for _ in range(600):  # readiness, not a timing assertion: the matcher index builds first
            if proc.poll() is not None:
                log.seek(0)
                pytest.fail(f"uvicorn exited: {log.read()[-3000:]}")
            try:
                if httpx.get(f"{base}/healthz", timeout=2).status_code == 200:
                    break
            except httpx.TransportError:
                pass
            time.sleep(0.5)
        else:
            pytest.fail("uvicorn did not become ready")
        yield base
    finally:
        proc.terminate()
        proc.wait(timeout=30)
        log.close()


@pytest.fixture(scope="module")
def browser() -> Iterator[Browser]:
    if not Path(CHROMIUM).exists():
        pytest.fail("Debian's chromium is missing: run `make browser` (apt-get install chromium)")
    with sync_playwright() as p:
        b = p.chromium.launch(executable_path=CHROMIUM, headless=True, args=CHROMIUM_ARGS)
        yield b
        b.close()


def _debian_chromium_version() -> str:
    return subprocess.run([CHROMIUM, "--version"], capture_output=True, text=True).stdout


@pytest.fixture
def dialogs() -> list[str]:
    return []


def _page(browser: Browser, dialogs: list[str], **options: object) -> Page:
    page = browser.new_page(**options)  # type: ignore[arg-type]

    def on_dialog(dialog) -> None:  # type: ignore[no-untyped-def]
        dialogs.append(dialog.message)
        dialog.dismiss()

    page.on("dialog", on_dialog)
    return page


def test_reference_entry_shows_every_section(
    browser: Browser, server: str, ids: dict[str, str], dialogs: list[str]
) -> None:
    assert browser.version.split(".")[0] in _debian_chromium_version()
    ref = ids["ref"]
    page = _page(browser, dialogs)
    page.goto(f"{server}/errors/{ref}?snapshot=0.5.18")
    expect(page).to_have_title(f"ValueError: {page.locator('h1').inner_text()} · errkb")
    assert (
        page.locator("h1")
        .inner_text()
        .startswith(
            "--enable-unified-memory with PD disaggregation does not support hybrid-SWA models yet"
        )
    )
    message = " ".join(page.locator("#message pre").inner_text().split())
    assert message == f"ValueError: {REF_MESSAGE}"
    meaning = page.locator("#meaning").inner_text()
    # prose in the user's terms, not code (issue 44)
    assert "You started sglang with --disaggregation-mode and --enable-unified-memory" in meaning
    assert "Who hits it: A flag you set" in meaning

    source = page.locator("#source .snap-group.selected")
    assert source.get_attribute("data-snapshot") == "0.5.18"
    assert f"Thrown at {REF_PATH}:406 in KVCacheConfigurator._init_pools" in source.inner_text()
    conditions = source.locator(".conditions").inner_text()
    assert "get_memory().enable_unified_memory and req_to_token_pool is None" in conditions
    assert "get_disagg().disaggregation_mode != 'null'" in conditions.replace('"', "'")
    marked = source.locator(".highlight .hll")
    assert marked.count() >= 2 and "raise ValueError(" in marked.first.inner_text()
    assert marked.first.locator(".linenos").inner_text().strip() == "406"
    pinned = source.locator("a.pinned").get_attribute("href") or ""
    assert "/blob/v0.5.18/" + REF_PATH + "#L406" in pinned

    solutions = page.locator("#solutions").inner_text()
    assert "--enable-unified-memory" in solutions and "0.5.20" in solutions
    before, after = page.locator("#example-fix pre").all_inner_texts()
    assert "--enable-unified-memory" in before and "--disaggregation-mode" in before
    assert "--enable-unified-memory" not in after
    assert page.locator("#when h3").all_inner_texts() == ["Trigger", "Common situations"]
    assert page.locator("#when p").first.inner_text().strip()
    flags = page.locator("#flags").inner_text()
    assert "--enable-unified-memory" in flags and "--disaggregation-mode" in flags
    assert "Default" in flags and "Help" in flags
    timeline = page.locator("#timeline").inner_text()
    assert "0.5.18" in timeline and "0.5.19" in timeline and "not raised" in timeline
    assert "0.5.20" in page.locator("#timeline tr.absent").first.inner_text()
    related = page.locator("#related a").all_inner_texts()
    assert any(t.startswith("--enable-unified-memory only supports hybrid Mamba") for t in related)
    provenance = page.locator("#provenance").inner_text()
    assert "sgl-project/sglang@0.5.18" in provenance
    json_href = page.locator("#provenance a.json-link").get_attribute("href")
    assert json_href == f"/api/errors/{ref}"
    assert httpx.get(server + json_href).json()["id"] == ref
    assert page.locator("link[rel=canonical]").get_attribute("href", timeout=1000)
    assert page.locator("meta[property='og:title']").count() == 1
    assert dialogs == []


def test_snapshot_switch_swaps_the_source(
    browser: Browser, server: str, ids: dict[str, str], dialogs: list[str]
) -> None:
    page = _page(browser, dialogs)
    page.goto(f"{server}/errors/{ids['ref']}")
    default = page.locator("#source .snap-group.selected").get_attribute("data-snapshot")
    assert default == "0.5.19"
    assert f"{REF_PATH}:451" in page.locator("#source .thrown").first.inner_text()
    page.locator(".snap-switch a[data-snapshot='0.5.18']").click()
    page.wait_for_url("**snapshot=0.5.18")
    expect(page.locator("#source .snap-group.selected")).to_have_attribute(
        "data-snapshot", "0.5.18"
    )
    assert f"{REF_PATH}:406" in page.locator("#source .thrown").first.inner_text()
    assert dialogs == []


def test_clicking_a_related_error_opens_its_page(
    browser: Browser, server: str, ids: dict[str, str], dialogs: list[str]
) -> None:
    page = _page(browser, dialogs)
    page.goto(f"{server}/errors/{ids['ref']}")
    link = page.locator("#related a").first
    title, href = link.inner_text(), link.get_attribute("href")
    assert href and href.startswith("/errors/") and href != f"/errors/{ids['ref']}"
    link.click()
    page.wait_for_url(f"**{href}")
    assert page.locator("h1").inner_text() == title
    assert page.locator("#message").is_visible()


def test_pasting_the_reference_traceback_finds_it_first(
    browser: Browser, server: str, ids: dict[str, str], dialogs: list[str]
) -> None:
    page = _page(browser, dialogs)
    page.goto(server + "/")
    page.fill("#paste-text", REF_TRACEBACK)
    page.click("#paste-form button[type=submit]")
    first = page.locator("#match-list li a").first
    expect(first).to_have_attribute("href", f"/errors/{ids['ref']}")
    assert "0.5.18" in page.locator("#match-list li").first.inner_text()
    assert page.url == server + "/"  # answered in place by the script

    no_js = _page(browser, dialogs, java_script_enabled=False)
    no_js.goto(server + "/")
    no_js.fill("#paste-text", REF_TRACEBACK)
    no_js.click("#paste-form button[type=submit]")
    no_js.wait_for_url("**/match")
    expect(no_js.locator("#matches .hits a").first).to_have_attribute(
        "href", f"/errors/{ids['ref']}"
    )
    assert dialogs == []


def test_search_lists_the_reference(
    browser: Browser, server: str, ids: dict[str, str], dialogs: list[str]
) -> None:
    page = _page(browser, dialogs)
    page.goto(server + "/")
    # With every class and assert, 73 errors name --enable-unified-memory: search the words of
    # the reference's own reason instead.
    page.fill("#q", "whole-envelope")
    page.press("#q", "Enter")
    page.wait_for_url("**q=whole-envelope**")
    expect(page.locator(f"#results a[href='/errors/{ids['ref']}']")).to_be_visible()
    assert "matching “whole-envelope”" in page.locator("#h-results").inner_text()


# The elements that end beyond the viewport's right edge, deepest first: what to fix.
WIDEST = """(() => {
  const w = document.documentElement.clientWidth, out = [];
  const clipped = el => {
    for (let a = el.parentElement; a && a !== document.body; a = a.parentElement)
      if (getComputedStyle(a).overflowX !== "visible") return true;
    return false;
  };
  for (const el of document.querySelectorAll("body *")) {
    const r = el.getBoundingClientRect();
    if (r.right > w + 1 && !clipped(el)
        && ![...el.children].some(c => c.getBoundingClientRect().right > w + 1))
      out.push(`${el.tagName.toLowerCase()}${el.id ? "#" + el.id : ""}.${el.className} `
        + `(${Math.round(r.right)}px): ${el.textContent.slice(0, 60)}`);
  }
  return out.slice(0, 8).join(" | ");
})()"""


@pytest.mark.parametrize(
    "name,viewport",
    [("desktop", (1280, 900)), ("phone", (390, 844))],
)
def test_screenshots_and_no_sideways_scroll(
    browser: Browser,
    server: str,
    ids: dict[str, str],
    dialogs: list[str],
    name: str,
    viewport: tuple[int, int],
) -> None:
    ARTIFACTS.mkdir(exist_ok=True)
    width, height = viewport
    for scheme in ("light", "dark"):
        page = _page(
            browser, dialogs, viewport={"width": width, "height": height}, color_scheme=scheme
        )
        page.goto(f"{server}/errors/{ids['ref']}?snapshot=0.5.18")
        target = ARTIFACTS / f"reference-entry-{name}-{scheme}.png"
        page.screenshot(path=str(target), full_page=True)
        assert target.stat().st_size > 10_000
        scroll, client = page.evaluate(
            "[document.documentElement.scrollWidth, document.documentElement.clientWidth]"
        )
        assert scroll <= client, (
            f"{name}: page is {scroll}px wide in a {client}px viewport; too wide: "
            + page.evaluate(WIDEST)
        )
    assert dialogs == []


def test_hostile_messages_render_as_text_live(
    browser: Browser, server: str, ids: dict[str, str], dialogs: list[str]
) -> None:
    page = _page(browser, dialogs)
    page.goto(f"{server}/errors/{ids['xss']}")
    assert XSS_MESSAGE in page.locator("#message pre").inner_text()
    assert page.locator("h1").inner_text().startswith("Invalid value <script>")
    page.goto(f"{server}/errors/{ids['img']}")
    assert "<img src=x onerror=alert(2)>" in page.locator("#message pre").inner_text()
    assert page.locator("main img").count() == 0
    page.goto(f"{server}/?q=alert")
    assert XSS_MESSAGE in page.locator("#results").inner_text()
    page.goto(server + "/")
    page.fill("#paste-text", f"ValueError: {XSS_MESSAGE}")
    page.click("#paste-form button[type=submit]")
    expect(page.locator("#match-list li a").first).to_have_text(XSS_MESSAGE)
    page.wait_for_timeout(300)  # give any injected handler a chance to fire
    assert dialogs == []


@pytest.fixture(scope="module")
def exported(tmp_path_factory: pytest.TempPathFactory) -> Iterator[tuple[str, dict[str, str]]]:
    """The hostile project exported and served by a plain static file server (no CSP there)."""
    folder = tmp_path_factory.mktemp("export")
    url = f"sqlite:///{folder / 'kb.sqlite3'}"
    ingest_pages_repo(url, folder / "src")
    engine = make_engine(url)
    with session_factory(engine)() as s:
        export_site(s, folder / "site")
        found = {
            "xss": s.scalars(select(Error.id).where(Error.message == XSS_MESSAGE)).one(),
            "img": s.scalars(select(Error.id).where(Error.message.contains("<img"))).one(),
        }
    engine.dispose()
    handler = functools.partial(_QuietHandler, directory=str(folder / "site"))
    httpd = http.server.ThreadingHTTPServer(("127.0.0.1", 0), handler)
    thread = threading.Thread(target=httpd.serve_forever, daemon=True)
    thread.start()
    try:
        yield f"http://127.0.0.1:{httpd.server_address[1]}", found
    finally:
        httpd.shutdown()
        httpd.server_close()
        thread.join()


class _QuietHandler(http.server.SimpleHTTPRequestHandler):
    def log_message(self, format: str, *args: object) -> None:  # noqa: A002
        pass


def test_hostile_messages_render_as_text_in_the_export(
    browser: Browser, exported: tuple[str, dict[str, str]], dialogs: list[str]
) -> None:
    base, found = exported
    page = _page(browser, dialogs)
    page.goto(f"{base}/errors/{found['xss']}.html")
    assert XSS_MESSAGE in page.locator("#message pre").inner_text()
    page.goto(f"{base}/errors/{found['img']}.html")
    assert "<img src=x onerror=alert(2)>" in page.locator("#message pre").inner_text()
    page.goto(f"{base}/index.html?q=alert")  # the in-browser search over search-index.json
    hit = page.locator("#results-list li a", has_text="<script>alert(1)</script>")
    expect(hit).to_have_attribute("href", f"errors/{found['xss']}.html")
    hit.click()
    page.wait_for_url(f"**/errors/{found['xss']}.html")
    page.goto(f"{base}/modules/srv/evil.py.html")
    assert XSS_MESSAGE in page.locator("main").inner_text()
    page.wait_for_timeout(300)
    assert dialogs == []


AXE_TAGS = ["wcag2a", "wcag2aa", "wcag21a", "wcag21aa", "best-practice"]


def test_pages_pass_axe_accessibility_checks(
    browser: Browser, server: str, ids: dict[str, str], dialogs: list[str]
) -> None:
    """axe-core (WCAG 2.1 A/AA and best practices) finds no violation, in light and dark mode."""
    from axe_playwright_python.sync_playwright import Axe

    axe = Axe()
    paths = [
        f"/errors/{ids['ref']}?snapshot=0.5.18",
        f"/errors/{ids['xss']}",
        "/",
        "/?q=enable-unified-memory",
        "/modules/python/sglang/srt/mem_cache",
        "/flags/",
        "/flags/enable-unified-memory",
    ]
    found = {}
    for scheme in ("light", "dark"):
        page = _page(browser, dialogs, color_scheme=scheme)
        for path in paths:
            page.goto(server + path)
            result = axe.run(page, options={"runOnly": {"type": "tag", "values": AXE_TAGS}})
            for v in result.response["violations"]:
                found[(scheme, path, v["id"])] = [n["target"] for n in v["nodes"][:3]]
    assert found == {}
