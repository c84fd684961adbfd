"""Internal link check over an exported static site: every relative href/src must resolve.

A link resolves when its file exists under the site root and, for `#fragment` links, the target
page has an element with that id. External links (`http:`, `https:`, `mailto:`) are counted, not
fetched: the tests have no network.
"""

from __future__ import annotations

from dataclasses import dataclass, field
from pathlib import Path
from urllib.parse import unquote, urlsplit

from html_check import PageFacts, page_facts


@dataclass
class LinkReport:
    """What the check saw and what was broken."""

    pages: int = 0
    internal: int = 0
    external: int = 0
    broken: list[tuple[str, str]] = field(default_factory=list)  # (page, link)


def check_site(root: Path) -> tuple[LinkReport, dict[str, PageFacts]]:
    """Check every `.html` page under `root`; returns the report and each page's facts."""
    facts = {
        p.relative_to(root).as_posix(): page_facts(p.read_text("utf-8"))
        for p in root.rglob("*.html")
    }
    ids = {rel: set(f.ids) for rel, f in facts.items()}
    report = LinkReport(pages=len(facts))
    for rel, page in facts.items():
        for link in [*page.links, *page.srcs]:
            parts = urlsplit(link)
            if parts.scheme or parts.netloc:
                report.external += 1
                continue
            report.internal += 1
            if not parts.path:  # same-page fragment
                target_rel = rel
            else:
                target = (root / rel).parent / unquote(parts.path)
                try:
                    target_rel = target.resolve().relative_to(root.resolve()).as_posix()
                except ValueError:
                    report.broken.append((rel, link))  # escapes the site
                    continue
                if not target.is_file():
                    report.broken.append((rel, link))
                    continue
            if parts.fragment and target_rel.endswith(".html"):
                if unquote(parts.fragment) not in ids.get(target_rel, set()):
                    report.broken.append((rel, link))
    return report, facts
