"""Source snippets as highlighted HTML: Pygments, real line numbers, the raise lines marked.

Snippets are untrusted source text; Pygments escapes every token, so the returned markup is safe
to insert into a page. Colors come from CSS classes (no inline styles, which the page's
Content-Security-Policy would block), so one stylesheet serves light and dark mode.
"""

from __future__ import annotations

from functools import cache, lru_cache

from markupsafe import Markup
from pygments import highlight
from pygments.formatters import HtmlFormatter
from pygments.lexers import PythonLexer

from errkb.service.entries.schemas import SnippetOut

LIGHT_STYLE = "xcode"  # every token color >= 4.5:1 on white and on the raise-line yellow
DARK_STYLE = "github-dark"


def highlight_snippet(snippet: SnippetOut) -> Markup:
    """The snippet as a `<div class="highlight">` block numbered from `snippet.start`."""
    return _highlighted(snippet.start, tuple(snippet.lines), snippet.raise_start, snippet.raise_end)


@lru_cache(maxsize=4096)  # the same site is usually unchanged across a repo's snapshots
def _highlighted(start: int, lines: tuple[str, ...], raise_start: int, raise_end: int) -> Markup:
    first = raise_start - start + 1  # hl_lines count from the snippet's first line
    last = raise_end - start + 1
    formatter = HtmlFormatter(
        linenos="inline",
        linenostart=start,
        hl_lines=list(range(max(first, 1), max(last, first) + 1)),
        cssclass="highlight",
        wrapcode=True,
    )
    code = "\n".join(lines) + "\n"
    return Markup(highlight(code, PythonLexer(stripnl=False, ensurenl=True), formatter))


@cache
def pygments_css() -> str:
    """Token colors for light mode, overridden for `prefers-color-scheme: dark`."""
    light = HtmlFormatter(style=LIGHT_STYLE).get_style_defs(".highlight")
    dark = HtmlFormatter(style=DARK_STYLE).get_style_defs(".highlight")
    return f"{light}\n@media (prefers-color-scheme: dark) {{\n{dark}\n}}\n"
