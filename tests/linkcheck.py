"""Internal link check over an exported static site: every relative href/src must resolve.

A link resolves when its file exists under the site root and, for `#fragment` links, the target
page has an element with that id. External links (`http:`, `https:`, `mailto:`) are counted, not
fetched: the tests have no network.

The whole sglang site is about 33,000 pages (500 MB of HTML). Reading each with the standard
library's `html.parser` (`html_check.page_facts`) and resolving each link on the file system
took about 20 minutes, so the check reads each page's start tags with one regular expression and
resolves links against one listing of the site's files. It is no weaker: every `href` and `src`
of every tag is checked (the parser's facts keep only those of `a`, stylesheets and scripts), and
`tests/service/test_export.py` checks the two readings agree on every page of a small export.
"""

from __future__ import annotations

import html
import os
import posixpath
import re
from dataclasses import dataclass, field
from pathlib import Path
from urllib.parse import unquote, urlsplit

from html_check import PageFacts, page_facts

# A comment (no links), a raw-text element whose content is not markup (only its start tag's
# attributes count), or any other start tag; a quoted attribute value may hold a `>`.
_ATTRS = r"""((?:"[^"]*"|'[^']*'|[^'">])*)"""
_MARKUP = re.compile(
    r"<!--.*?-->"
    rf"|<(script|style|textarea|title)\b{_ATTRS}>.*?</\1\s*>"
    rf"|<[a-zA-Z][^\s/>]*{_ATTRS}>",
    re.S | re.I,
)
# One attribute, its value consumed whole (so a value's text is never read as an attribute).
_ATTR = re.compile(r"""([^\s"'>/=]+)(?:\s*=\s*(?:"([^"]*)"|'([^']*)'|([^\s"'=<>`]+)))?""")
_WANTED = {"href": False, "src": False, "id": True}  # name -> is an id


@dataclass
class PageLinks:
    """The links (every `href` and `src`) and element ids of one page, in document order."""

    links: list[str] = field(default_factory=list)
    ids: list[str] = field(default_factory=list)


def page_links(text: str) -> PageLinks:
    """Every `href`/`src` value and every `id` in the page's start tags, entities decoded."""
    found = PageLinks()
    for tag in _MARKUP.finditer(text):
        attrs = tag.group(2) or tag.group(3)
        if not attrs:
            continue
        for name, double, single, bare in _ATTR.findall(attrs):
            is_id = _WANTED.get(name.lower())
            if is_id is None:
                continue
            value = double or single or bare
            value = html.unescape(value) if "&" in value else value
            (found.ids if is_id else found.links).append(value)
    return found


@dataclass
class LinkReport:
    """What the check saw and what was broken."""

    pages: int = 0
    internal: int = 0
    external: int = 0
    broken: list[tuple[str, str]] = field(default_factory=list)  # (page, link)


def _site_files(root: Path) -> set[str]:
    """Every file under `root`, as a path relative to it."""
    files = set()
    for folder, _, names in os.walk(root):
        rel = Path(folder).relative_to(root).as_posix()
        prefix = "" if rel == "." else f"{rel}/"
        files.update(prefix + name for name in names)
    return files


def check_site(root: Path) -> tuple[LinkReport, dict[str, PageLinks]]:
    """Check every `.html` page under `root`; returns the report and each page's links and ids."""
    files = _site_files(root)
    pages = {
        rel: page_links((root / rel).read_text("utf-8")) for rel in files if rel.endswith(".html")
    }
    ids = {rel: set(p.ids) for rel, p in pages.items()}
    report = LinkReport(pages=len(pages))
    targets: dict[tuple[str, str], str | None] = {}  # (folder, path) -> target, None if missing
    for rel, page in pages.items():
        folder = posixpath.dirname(rel)
        for link in page.links:
            parts = urlsplit(link)
            if parts.scheme or parts.netloc:
                report.external += 1
                continue
            report.internal += 1
            target_rel: str | None = rel  # a same-page fragment
            if parts.path:
                key = (folder, parts.path)
                if key not in targets:
                    targets[key] = _target(folder, unquote(parts.path), files)
                target_rel = targets[key]
            if target_rel is None:
                report.broken.append((rel, link))  # missing, or outside the site
            elif parts.fragment and target_rel.endswith(".html"):
                if unquote(parts.fragment) not in ids[target_rel]:
                    report.broken.append((rel, link))
    return report, pages


def _target(folder: str, path: str, files: set[str]) -> str | None:
    """The site file a relative path from `folder` names; None when it is missing or outside."""
    if path.startswith("/"):
        return None
    target = posixpath.normpath(posixpath.join(folder, path))
    return target if target in files else None


def site_facts(root: Path) -> dict[str, PageFacts]:
    """Every `.html` page under `root` read by the standard parser (headings, scripts, text)."""
    return {
        p.relative_to(root).as_posix(): page_facts(p.read_text("utf-8"))
        for p in root.rglob("*.html")
    }
