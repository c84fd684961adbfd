"""Source snippets as highlighted HTML: Pygments, real line numbers, the raise lines marked.

Snippets are untrusted source text; Pygments escapes every token, so the returned markup is safe
to insert into a page. Colors come from CSS classes (no inline styles, which the page's
Content-Security-Policy would block), so one stylesheet serves light and dark mode.
"""

from __future__ import annotations

from functools import cache

from markupsafe import Markup
from pygments import highlight
from pygments.formatters import HtmlFormatter
from pygments.lexers import PythonLexer

from service.schemas import SnippetOut

LIGHT_STYLE = "default"
DARK_STYLE = "github-dark"


def highlight_snippet(snippet: SnippetOut) -> Markup:
    """The snippet as a `<div class="highlight">` block numbered from `snippet.start`."""
    first = snippet.raise_start - snippet.start + 1  # hl_lines count from the snippet's first line
    last = snippet.raise_end - snippet.start + 1
    formatter = HtmlFormatter(
        linenos="inline",
        linenostart=snippet.start,
        hl_lines=list(range(max(first, 1), max(last, first) + 1)),
        cssclass="highlight",
        wrapcode=True,
    )
    code = "\n".join(snippet.lines) + "\n"
    return Markup(highlight(code, PythonLexer(stripnl=False, ensurenl=True), formatter))


@cache
def pygments_css() -> str:
    """Token colors for light mode, overridden for `prefers-color-scheme: dark`."""
    light = HtmlFormatter(style=LIGHT_STYLE).get_style_defs(".highlight")
    dark = HtmlFormatter(style=DARK_STYLE).get_style_defs(".highlight")
    return f"{light}\n@media (prefers-color-scheme: dark) {{\n{dark}\n}}\n"
