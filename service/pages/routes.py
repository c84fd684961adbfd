"""HTML routes: entry pages, the index and search, the paste box, module and flag browsing.

Every page is rendered on the server and is complete without JavaScript; `static/site.js` only
enhances (the paste box answers in place, the version switch swaps the source section). Pages
call the same read side as the JSON API (`errkb.service.read`), so the two never disagree.
"""

from __future__ import annotations

import hashlib
from typing import Annotated, Any
from urllib.parse import parse_qs

from fastapi import APIRouter, FastAPI, Query, Request
from fastapi.responses import HTMLResponse, Response
from fastapi.staticfiles import StaticFiles
from starlette.concurrency import run_in_threadpool

from errkb.core.errors import NotFound
from errkb.core.settings import Settings
from errkb.service.deps import SessionDep, SettingsDep
from errkb.service.entries.cache import EntryCache
from errkb.service.http_body import read_capped
from errkb.service.http_cache import Fresh, fresh_validators
from errkb.service.pages import contexts
from errkb.service.pages.highlight import pygments_css
from errkb.service.pages.page_files import PageFiles
from errkb.service.pages.render import (
    STATIC,
    PageMeta,
    render,
    render_entry,
    warm_rendering,
)
from errkb.service.pages.urls import ServerLinks
from errkb.service.read import entries
from errkb.service.read.browse import (
    ModuleTrees,
    class_counts,
    error_ids,
    flag_definitions,
    flag_summaries,
    labels_by_id,
    module_tree,
)
from errkb.service.read.search import SearchResults, normalize_flag, search
from errkb.service.read.status import kb_status
from errkb.service.security import add_security_headers

router = APIRouter(include_in_schema=False)
PAGE_SIZE = 20


def _links(request: Request) -> ServerLinks:
    empty = request.app.state.versions.empty()
    return ServerLinks(request.scope.get("root_path", ""), empty=empty)


def _canonical(request: Request, public_url: str, path: str) -> str:
    """The page's canonical URL: absolute under ERRKB_PUBLIC_URL, else root-relative. Never
    built from the Host header, which the client chooses: a forged Host would otherwise end up
    in the page, and a shared cache (the ETag ignores the host) would serve it to everyone."""
    base = public_url.rstrip("/") if public_url else request.scope.get("root_path", "")
    return base.rstrip("/") + path


def _html(body: str, headers: dict[str, str] | None = None, status: int = 200) -> HTMLResponse:
    return HTMLResponse(body, status_code=status, headers=headers)


@router.get("/errors/{error_id}", response_class=HTMLResponse)
async def entry_page(request: Request, error_id: str) -> Response:
    """The documentation page of one error, optionally showing `snapshot`'s occurrence first
    (read by hand, as the JSON entry's: see `errkb.service.plain_routes`)."""
    snapshot = request.query_params.get("snapshot")
    v = fresh_validators(request)  # not a dependency: the hottest page
    settings: Settings = request.app.state.settings
    canonical_base = _canonical(request, settings.public_url, "")
    item = ("page", error_id, snapshot or None, request.scope.get("root_path", ""), canonical_base)
    cache: EntryCache[bytes] = request.app.state.entries
    body = cache.get(v.version.key, item)
    if body is None and snapshot is None:
        body = _shared_page_on_loop(request, v.version.key, item)
    if body is None:  # built off the event loop, like the JSON entry
        body = await run_in_threadpool(_entry_html, request, v.version.key, item)
    return Response(body, media_type="text/html; charset=utf-8", headers=v.headers())


def _entry_html(request: Request, version_key: str, item: tuple[str | None, ...]) -> bytes:
    _, error_id, snapshot, _, canonical_base = item
    assert error_id is not None and canonical_base is not None
    settings: Settings = request.app.state.settings

    def build() -> bytes:
        if snapshot is None:  # the default view: its stored doc, in one read when it can be
            engine = request.app.state.engine
            stored = entries.stored_json_now(engine, error_id, version_key, settings)
            if stored is None:  # its dictionary is new to this process, or the doc is missing
                with request.app.state.sessions() as session:
                    stored = entries.entry_json(
                        session, error_id, key=version_key, settings=settings
                    )
            page = _shared_page(request, version_key, item, stored)
            if page is not None:
                return page
        with request.app.state.sessions() as session:  # the same entry as the JSON route's
            entry = entries.entry(
                session, error_id, key=version_key, snapshot=snapshot, settings=settings
            )
        html = render_entry(entry, links=_links(request), canonical=_entry_url(item, entry))
        return html.encode()

    cache: EntryCache[bytes] = request.app.state.entries
    return cache.get_or_build(version_key, item, build)


def _entry_url(item: tuple[str | None, ...], entry: entries.Entry) -> str:
    return f"{item[-1]}/errors/{entry.id}"


def _shared_page_on_loop(
    request: Request, version_key: str, item: tuple[str | None, ...]
) -> bytes | None:
    """The default view's page when another process of the server has rendered it already,
    read on the event loop on SQLite only (a local row and a small file, like the JSON entry's
    first read); None sends the request to a worker thread, which renders it."""
    assert item[1] is not None
    settings = request.app.state.settings
    stored = entries.stored_json_on_loop(request.app.state.engine, item[1], version_key, settings)
    if stored is None:
        return None
    files: PageFiles = request.app.state.page_files
    page = files.get(version_key, (*item, hashlib.sha256(stored).hexdigest()))
    if page is not None:
        cache: EntryCache[bytes] = request.app.state.entries
        cache.put(version_key, item, page)
    return page


def _shared_page(
    request: Request, version_key: str, item: tuple[str | None, ...], stored: bytes
) -> bytes | None:
    """The page of a stored doc, rendered by whichever process of the server asked first.

    Named by a hash of the doc's bytes, so a page is only ever served for the exact entry it
    shows (the content key is a counter, which a new database starts again)."""
    files: PageFiles = request.app.state.page_files
    shared = (*item, hashlib.sha256(stored).hexdigest())
    page = files.get(version_key, shared)
    if page is None:
        entry = entries.stored_entry(stored)
        if entry is None:  # a doc of an older shape: the caller builds the entry instead
            return None
        page = render_entry(
            entry, links=_links(request), canonical=_entry_url(item, entry)
        ).encode()
        files.put(version_key, shared, page)
    return page


def _stats(session: SessionDep) -> dict[str, Any]:
    status = kb_status(session)
    return {
        "errors": status.errors,
        "snapshots": status.snapshots,
        "classes": class_counts(session),
    }


def _pager(links: ServerLinks, results: SearchResults, start: int) -> dict[str, Any]:
    query = {
        "q": results.q,
        "snapshot": results.snapshot or "",
        "path": results.path or "",
        "flag": results.flag or "",
        "exception": results.exception or "",
    }
    next_url = None
    if results.next_cursor:
        next_url = links.home(**query, cursor=results.next_cursor, n=str(start + results.limit))
    return {"next_url": next_url, "first_url": links.home(**query), "start": start}


@router.get("/", response_class=HTMLResponse)
def index_page(
    request: Request,
    session: SessionDep,
    settings: SettingsDep,
    v: Fresh,
    q: str = "",
    snapshot: str = "",
    path: str = "",
    flag: str = "",
    exception: Annotated[str, Query(max_length=200)] = "",
    cursor: str = "",
    n: Annotated[int, Query(ge=0)] = 0,
) -> Response:
    """The index: search with filters, counts and pagination, the paste box and browse links."""
    links = _links(request)
    results = search(
        session,
        q=q,
        snapshot=snapshot,
        path=path,
        flag=flag,
        limit=PAGE_SIZE,
        cursor=cursor or None,
        exception=exception,
    )
    searching = bool(q or snapshot or path or flag or exception)
    page = contexts.index_page(
        _stats(session),
        results=results,
        q=q,
        searching=searching,
        pager=_pager(links, results, n),
        canonical=_canonical(request, settings.public_url, "/"),
    )
    return _html(page.render(links), v.headers())


async def _form_text(request: Request, limit: int) -> str:
    """The `text` field of a urlencoded form body, within the body size cap."""
    body = await read_capped(request, limit)
    fields = parse_qs(body.decode("utf-8", errors="replace"), keep_blank_values=True)
    return (fields.get("text") or [""])[0]


@router.post("/match", response_class=HTMLResponse)
async def match_page(request: Request, settings: SettingsDep) -> Response:
    """The paste box without JavaScript: run the matcher and list the ranked matches."""
    links = _links(request)
    text = await _form_text(request, settings.max_body_bytes)
    matches = await request.app.state.matcher.match(
        text.encode(), "text/plain", limit=10, public_url=""
    )
    page = PageMeta(title="Errors in your pasted text", description="Matches for a pasted error")
    body = render("match.html", links=links, page=page, matches=matches, pasted=text)
    return _html(body, {"Cache-Control": "no-store"})


@router.get("/modules/", response_class=HTMLResponse)
@router.get("/modules/{path:path}", response_class=HTMLResponse)
def module_page(
    request: Request,
    session: SessionDep,
    v: Fresh,
    path: str = "",
    snapshot: str = "",
    cursor: str = "",
) -> Response:
    """A folder (its children with error counts) or a file (the errors it raises)."""
    links = _links(request)
    path = path.strip("/")
    trees: ModuleTrees = request.app.state.module_trees
    tree = trees.get_or_build(
        v.version.key, snapshot or None, lambda: module_tree(session, snapshot or None)
    )
    is_file = path in tree.files and not tree.is_folder(path)
    if path and not (is_file or tree.is_folder(path)):
        raise NotFound(f"no error is raised under {path}")
    results = None
    next_url = None
    if is_file:
        results = search(
            session, path=path, snapshot=snapshot, limit=PAGE_SIZE, cursor=cursor or None
        )
        if results.next_cursor:
            next_url = f"{links.modules(path)}?cursor={results.next_cursor}" + (
                f"&snapshot={snapshot}" if snapshot else ""
            )
    page = contexts.module_page(tree, path, results=results, next_url=next_url, snapshot=snapshot)
    return _html(page.render(links), v.headers())


@router.get("/flags/", response_class=HTMLResponse)
def flags_page(request: Request, session: SessionDep, v: Fresh, snapshot: str = "") -> Response:
    """Every flag that errors name or check, with counts."""
    page = contexts.flags_page(flag_summaries(session, snapshot or None))
    return _html(page.render(_links(request)), v.headers())


@router.get("/flags/{slug}", response_class=HTMLResponse)
def flag_page(
    request: Request, session: SessionDep, v: Fresh, slug: str, cursor: str = ""
) -> Response:
    """One flag: its definition and the errors that involve it."""
    links = _links(request)
    flag = normalize_flag(slug)
    results = search(session, flag=flag, limit=PAGE_SIZE, cursor=cursor or None)
    defs = flag_definitions(session, [flag]).get(flag, [])
    if not defs and not results.total:
        raise NotFound(f"no flag {flag} is known")
    labels = labels_by_id(session)
    next_url = f"{links.flag(flag)}?cursor={results.next_cursor}" if results.next_cursor else None
    defined_in = [labels[i] for i in sorted({d.snapshot_id for d in defs}) if i in labels]
    page = contexts.flag_page(flag, defs, results, defined_in, next_url=next_url)
    return _html(page.render(links), v.headers())


@router.get("/sitemap.xml")
def sitemap(request: Request, session: SessionDep, settings: SettingsDep, v: Fresh) -> Response:
    """Every error page, plus the index and browse pages, for search engines."""
    from errkb.service.pages.export import sitemap_xml

    if not settings.public_url:  # a sitemap needs absolute URLs, and the Host is not trusted
        raise NotFound("there is no sitemap: set ERRKB_PUBLIC_URL, the site's address, to have one")
    paths = ["/", "/modules/", "/flags/"]
    paths += [f"/errors/{i}" for i in error_ids(session)]
    body = sitemap_xml([_canonical(request, settings.public_url, p) for p in paths])
    return Response(body, media_type="application/xml", headers=v.headers())


@router.get("/static/pygments.css")
def pygments_stylesheet() -> Response:
    """Token colors for highlighted snippets (generated from Pygments' styles)."""
    return Response(
        pygments_css(), media_type="text/css", headers={"Cache-Control": "public, max-age=3600"}
    )


def install_pages(app: FastAPI) -> None:
    """Add the HTML routes, the static files and the security headers to the app."""
    app.include_router(router)
    settings: Settings = app.state.settings

    def start(app: FastAPI) -> None:
        app.state.page_files = PageFiles(settings.resolved_database_url)
        warm_rendering()

    app.state.startup_hooks.append(start)
    app.mount("/static", StaticFiles(directory=STATIC), name="static")
    add_security_headers(app)
