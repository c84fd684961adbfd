"""Site finding: every raise of a configured exception, wherever it is, with its location."""

from __future__ import annotations

import ast
import textwrap

from errkb.core.records import ExtractConfig, Site
from errkb.ingest.extract import extract_file
from errkb.ingest.extract.snippet import MAX_ABOVE

SOURCE = textwrap.dedent(
    """\
    import errors

    if DEBUG:
        raise ValueError("module level")


    class Config:
        if not OK:
            raise ValueError("class body")

        def check(self, x):
            def helper():
                raise errors.ValueError(f"nested {x}")

            try:
                helper()
            except KeyError as e:
                raise ValueError("chained") from e
            raise ValueError


    async def run(x):
        lam = lambda: x
        raise TypeError("other exception")
        raise  # bare re-raise: no exception named
    """
)


def sites_of(source: str, **config: object) -> list[Site]:
    result = extract_file(source.encode(), "pkg/mod.py", ExtractConfig(**config))  # type: ignore[arg-type]
    assert result.status == "ok", result.detail
    return list(result.sites)


def test_every_raise_form_and_place_is_found() -> None:
    sites = sites_of(SOURCE)
    assert [(s.line, s.qualname, s.exception, s.template.display) for s in sites] == [
        (4, "<module>", "ValueError", "module level"),
        (9, "Config", "ValueError", "class body"),
        (13, "Config.check.helper", "ValueError", "nested {x}"),
        (18, "Config.check", "ValueError", "chained"),
        (19, "Config.check", "ValueError", ""),
    ]
    assert all(s.path == "pkg/mod.py" for s in sites)


def test_configured_exceptions_are_all_found() -> None:
    sites = sites_of(SOURCE, exceptions=("ValueError", "TypeError"))
    assert [s.exception for s in sites][-1] == "TypeError"
    assert len(sites) == 6


def test_matches_an_independent_ast_walk() -> None:
    tree = ast.parse(SOURCE)
    expected = sorted(
        n.lineno
        for n in ast.walk(tree)
        if isinstance(n, ast.Raise)
        and n.exc is not None
        and "ValueError" in ast.unparse(n.exc.func if isinstance(n.exc, ast.Call) else n.exc)
    )
    assert [s.line for s in sites_of(SOURCE)] == expected


def test_span_and_raise_source_of_a_multiline_raise() -> None:
    source = (
        'def f(x):\n    raise ValueError(\n        "a "\n        f"é{x}",  # note\n'
        "        x,\n    )\n"
    )
    (site,) = sites_of(source)
    assert (site.line, site.end_line) == (2, 6)
    assert site.raise_source == '"a "\n        f"é{x}",  # note\n        x'


def test_snippet_runs_from_above_the_outermost_guard_to_after_the_raise() -> None:
    lines = [f"# line {i}" for i in range(1, 11)]
    lines += ["def f(a, b):", "    if a:", "        x = 1", "        if b:"]
    lines += ["            raise ValueError('x')", "    return 1", "", "", "# end"]
    (site,) = sites_of("\n".join(lines) + "\n")
    snippet = site.snippet
    assert (snippet.raise_start, snippet.raise_end) == (15, 15)
    assert snippet.start == 10  # two lines above `if a:` on line 12
    assert snippet.lines[0] == "# line 10"
    assert snippet.lines[-1] == "", "three lines after the raise"
    assert len(snippet.lines) == 15 + 3 - 10 + 1


def test_snippet_is_capped_above_the_raise() -> None:
    body = "".join(f"        x{i} = {i}\n" for i in range(100))
    (site,) = sites_of(f"def f(a):\n    if a:\n{body}        raise ValueError('x')\n")
    assert site.snippet.raise_start == 103
    assert site.snippet.start == 103 - MAX_ABOVE
    assert site.snippet.lines[-1] == "        raise ValueError('x')"


def test_unguarded_raise_snippet_has_a_little_context() -> None:
    (site,) = sites_of("import os\n\n\ndef f():\n    raise ValueError('x')\n")
    assert site.snippet.start == 2
    assert site.snippet.lines == ("", "", "def f():", "    raise ValueError('x')")
