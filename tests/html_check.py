"""Structural checks of rendered HTML with the standard library's parser (no browser needed).

Collects what accessibility and safety checks need: heading levels in order, landmarks, ids,
links, scripts (inline or not), images without alt, and the visible text.
"""

from __future__ import annotations

from dataclasses import dataclass, field
from html.parser import HTMLParser


@dataclass
class PageFacts:
    """What one HTML page contains."""

    lang: str | None = None
    title: str = ""
    headings: list[tuple[int, str]] = field(default_factory=list)
    ids: list[str] = field(default_factory=list)
    links: list[str] = field(default_factory=list)
    srcs: list[str] = field(default_factory=list)
    inline_scripts: int = 0
    inline_handlers: list[str] = field(default_factory=list)
    images_without_alt: int = 0
    landmarks: set[str] = field(default_factory=set)
    meta: dict[str, str] = field(default_factory=dict)
    canonical: str | None = None
    text: str = ""


class _Parser(HTMLParser):
    LANDMARK_TAGS = {
        "header": "banner",
        "main": "main",
        "footer": "contentinfo",
        "nav": "navigation",
    }

    def __init__(self) -> None:
        super().__init__(convert_charrefs=True)
        self.facts = PageFacts()
        self._heading: int | None = None
        self._heading_text: list[str] = []
        self._in_title = False
        self._in_script = False
        self._text: list[str] = []

    def handle_starttag(self, tag: str, attrs: list[tuple[str, str | None]]) -> None:
        a = {k: v or "" for k, v in attrs}
        f = self.facts
        for name in a:
            if name.startswith("on"):
                f.inline_handlers.append(f"{tag}[{name}]")
        if tag == "html":
            f.lang = a.get("lang")
        if "id" in a:
            f.ids.append(a["id"])
        if tag == "a" and "href" in a:
            f.links.append(a["href"])
        if tag == "link" and a.get("rel") == "stylesheet":
            f.links.append(a["href"])
        if tag == "link" and a.get("rel") == "canonical":
            f.canonical = a.get("href")
        if tag == "meta":
            key = a.get("name") or a.get("property")
            if key:
                f.meta[key] = a.get("content", "")
        if tag == "script":
            if "src" in a:
                f.srcs.append(a["src"])
            else:
                f.inline_scripts += 1
            self._in_script = True
        if tag == "img" and not a.get("alt"):
            f.images_without_alt += 1
        if tag in self.LANDMARK_TAGS:
            f.landmarks.add(self.LANDMARK_TAGS[tag])
        if a.get("role"):
            f.landmarks.add(a["role"])
        if len(tag) == 2 and tag[0] == "h" and tag[1] in "123456":
            self._heading = int(tag[1])
            self._heading_text = []
        if tag == "title":
            self._in_title = True

    def handle_endtag(self, tag: str) -> None:
        if self._heading is not None and tag == f"h{self._heading}":
            self.facts.headings.append(
                (self._heading, " ".join("".join(self._heading_text).split()))
            )
            self._heading = None
        if tag == "title":
            self._in_title = False
        if tag == "script":
            self._in_script = False

    def handle_data(self, data: str) -> None:
        if self._in_script:
            return
        if self._in_title:
            self.facts.title += data
        if self._heading is not None:
            self._heading_text.append(data)
        self._text.append(data)

    def close(self) -> None:
        super().close()
        self.facts.text = " ".join("".join(self._text).split())


def page_facts(html: str) -> PageFacts:
    """Parse one page."""
    parser = _Parser()
    parser.feed(html)
    parser.close()
    return parser.facts


def heading_problems(facts: PageFacts) -> list[str]:
    """Violations of: exactly one h1, first; no level skipped on the way down."""
    problems = []
    levels = [level for level, _ in facts.headings]
    if levels.count(1) != 1 or (levels and levels[0] != 1):
        problems.append(f"expected one h1 first, got {levels[:5]}")
    for prev, cur in zip(levels, levels[1:], strict=False):
        if cur > prev + 1:
            problems.append(f"h{prev} followed by h{cur}")
    return problems
