"""Extraction by function units (ingest.extract.incremental): the same records as a whole-file
extraction, with unchanged functions reused from the cache instead of parsed again."""

from __future__ import annotations

import ast
import textwrap

import pytest
from unit_cache import CONFIG, UnitCache, one_in, release_files, release_pair, same

import errkb.ingest.extract.incremental as incremental
from errkb.ingest.extract import extract_file
from errkb.ingest.extract.units import aligned, masked, split_units

PAD = "\n".join(f"# padding line {i} to pass the small-file threshold" for i in range(90)) + "\n"


def module(body: str) -> bytes:
    return (PAD + textwrap.dedent(body)).encode()


V1 = module(
    '''
    import os
    LIMIT = "at most 4"

    def check(n):
        if n > 4:
            raise ValueError(f"n={n} is over the limit: " + LIMIT)

    class Server:
        KIND = "tp"

        @staticmethod
        @decorated(
            "x",
        )
        def validate(
            self,
            size,
        ) -> None:
            """Doc."""
            if size < 0 and self.mode:
                raise ValueError(self.KIND + " size must be >= 0")

        async def other(self):
            total = 0
            for step in range(10):
                total += step
                if total > 20:
                    break
            else:
                total = -1
            # a function without sites, long enough to be cached as parsed
            return total

        def untouched(self):
            return 2
    '''
)


def test_split_finds_functions_and_methods_with_decorators() -> None:
    text = V1.decode()
    units = split_units(text, text.split("\n"))
    assert [(u.owner, u.name) for u in units] == [
        ("", "check"),
        ("Server", "validate"),
        ("Server", "other"),
        ("Server", "untouched"),
    ]
    validate = units[1]
    lines = text.split("\n")
    assert lines[validate.start - 1].strip() == "@staticmethod"
    assert lines[validate.def_line - 1].strip() == "def validate("
    assert lines[validate.end - 1].strip() == 'raise ValueError(self.KIND + " size must be >= 0")'
    tree = ast.parse(text)
    assert aligned(tree, units, set())
    hidden = set(range(len(units)))
    assert aligned(ast.parse(masked(lines, units, hidden)), units, hidden)


def test_a_column_0_line_inside_a_string_makes_the_split_disagree_and_falls_back() -> None:
    data = module(
        '''
        def render():
            text = """
        def fake():
            raise ValueError("inside a string")
        """
            raise ValueError("real " + text)
        '''
    )
    cache = UnitCache()
    result, by_units, _ = cache.extract(data, "m.py")
    assert not by_units
    assert same(result, extract_file(data, "m.py", CONFIG))
    assert [s.template.display[:5] for s in result.sites] == ["real "]  # one site, not two


def edits() -> list[tuple[str, bytes]]:
    """Versions of V1, each changing something a cached unit's sites depend on."""
    return [
        ("lines shifted", V1.replace(b"import os\n", b"import os\nimport sys\n\n\n")),
        ("constant changed", V1.replace(b'"at most 4"', b'"at most 8"')),
        ("class constant changed", V1.replace(b'KIND = "tp"', b'KIND = "dp"')),
        ("class renamed", V1.replace(b"class Server:", b"class Engine:")),
        ("name rebound by an import", V1.replace(b'LIMIT = "at most 4"', b"from x import LIMIT")),
        ("other method edited", V1.replace(b"return 2", b"return 3")),
        ("guard edited", V1.replace(b"if n > 4:", b"if n > 5:")),
        ("moved to the top", module("def first():\n    raise ValueError('a')\n") + V1),
        ("cut at the end", V1[: V1.index(b"    async def other")]),
        ("snippet context edited", V1.replace(b"    class Server:", b"    # note\nclass Server:")),
        (
            "syntax error in a function without sites",
            V1.replace(b"return 2", b"return 2 +"),
        ),
    ]


@pytest.mark.parametrize("label,data", edits(), ids=[label for label, _ in edits()])
def test_a_changed_file_extracted_by_units_equals_a_whole_file_extraction(
    label: str, data: bytes
) -> None:
    cache = UnitCache()
    first, by_units, _ = cache.extract(V1, "pkg/m.py")
    assert by_units and same(first, extract_file(V1, "pkg/m.py", CONFIG))
    assert len(first.sites) == 2
    result, _, _ = cache.extract(data, "pkg/moved.py")
    expected = extract_file(data, "pkg/moved.py", CONFIG)
    assert same(result, expected), label


def test_unchanged_functions_are_reused_not_parsed(monkeypatch: pytest.MonkeyPatch) -> None:
    cache = UnitCache()
    cache.extract(V1, "m.py")
    parsed: list[str] = []
    compiled: list[set[int]] = []
    real_parse, real_compiles = incremental._parse, incremental._compiles

    def parse(plan, units, hide):  # type: ignore[no-untyped-def]
        tree, text = real_parse(plan, units, hide)
        parsed.append(text)
        return tree, text

    def compiles(plan, units, check, path):  # type: ignore[no-untyped-def]
        compiled.append({units[k].name for k in check})
        return real_compiles(plan, units, check, path)

    monkeypatch.setattr(incremental, "_parse", parse)
    monkeypatch.setattr(incremental, "_compiles", compiles)
    edited = V1.replace(b"return 2", b"return 3")
    result, by_units, reused = cache.extract(edited, "m.py")
    assert by_units and reused == 2
    assert same(result, extract_file(edited, "m.py", CONFIG))
    assert len(parsed) == 1
    assert "LIMIT = " in parsed[0]  # the module around the functions is parsed ...
    assert "raise ValueError" not in parsed[0]  # ... the two functions with sites are reused
    assert "async def other" not in parsed[0]  # ... the unchanged one without is known to parse
    assert "return 3" not in parsed[0]  # ... and the edited one without sites is only compiled
    assert compiled == [{"untouched"}]


def test_a_syntax_error_in_a_reused_file_is_still_reported() -> None:
    cache = UnitCache()
    cache.extract(V1, "m.py")
    broken = V1.replace(b"return 2", b"return 2 +")
    result, _, _ = cache.extract(broken, "m.py")
    assert result.status == "syntax_error"
    assert result.sites == ()


@pytest.mark.sglang
def test_sglang_release_pair_by_units_equals_whole_file_extraction() -> None:
    """0.5.23 cold, then the files 0.5.22 changed, reusing 0.5.23's units: every record equal.

    One path in 8 of both releases (the same paths: a file and its next version together);
    bench/extract_units.py runs every file of the pair and times it."""
    sample = one_in(8)
    count = release_pair(release_files("0.5.23", sample), release_files("0.5.22", sample))
    print(f"\n{count}")
    assert not count.differs
    assert count.newer_files > 500 and count.by_units > 300
    assert count.changed_files > 120 and count.reused > 300  # most functions did not change


def test_a_method_reuses_its_sites_only_while_its_class_assigns_the_same_attributes() -> None:
    cache = UnitCache()
    source = """
        class Runner:
            def __init__(self, server_args):
                self.tp_size = server_args.tp_size

            def check(self):
                if self.tp_size > 8:
                    raise ValueError("too many GPUs")
        """
    first = module(source)
    result, by_units, _ = cache.extract(first, "pkg/runner.py")
    assert by_units and same(result, extract_file(first, "pkg/runner.py", CONFIG))
    (site,) = result.sites
    assert site.conditions[0].resolved == (("self.tp_size", "server_args.tp_size"),)
    changed = module(source.replace("server_args.tp_size", "server_args.dp_size"))
    result, by_units, _ = cache.extract(changed, "pkg/runner.py")
    assert by_units and same(result, extract_file(changed, "pkg/runner.py", CONFIG))
    (site,) = result.sites
    assert site.conditions[0].resolved == (("self.tp_size", "server_args.dp_size"),)


def test_a_function_reuses_its_sites_only_while_its_callers_pass_the_same_arguments() -> None:
    cache = UnitCache()
    source = """
        def check_tp(tp):
            if tp > 8:
                raise ValueError("too many GPUs")

        def launch(server_args):
            check_tp(server_args.tp_size)
        """
    first = module(source)
    result, by_units, _ = cache.extract(first, "pkg/launch.py")
    assert by_units and same(result, extract_file(first, "pkg/launch.py", CONFIG))
    (site,) = result.sites
    assert site.conditions[0].resolved == (("tp", "server_args.tp_size"),)
    changed = module(source.replace("check_tp(server_args.tp_size)", "check_tp(tp=args.dp)"))
    result, by_units, _ = cache.extract(changed, "pkg/launch.py")
    assert by_units and same(result, extract_file(changed, "pkg/launch.py", CONFIG))
    (site,) = result.sites
    assert site.conditions[0].resolved == (("tp", "args.dp"),)


def test_a_function_reuses_its_sites_only_while_the_constants_its_callers_pass_are_the_same() -> (
    None
):
    """0.5.22's model_overlay.py: a parameter traced to a caller's module constant, whose
    value the site's notes quote; the constant changed, the function did not."""
    cache = UnitCache()
    source = """
        REGISTRY = {"a/b": "x"}

        def check(payload):
            for name in payload:
                if not name:
                    raise ValueError(f"bad entry {name}")

        def load():
            check(REGISTRY)
        """
    first = module(source)
    result, by_units, _ = cache.extract(first, "pkg/overlay.py")
    assert by_units and same(result, extract_file(first, "pkg/overlay.py", CONFIG))
    (site,) = result.sites
    assert site.notes.constants == (("REGISTRY", "('a/b',)"),)
    changed = module(source.replace('{"a/b": "x"}', '{"a/b": "x", "c/d": "y"}'))
    result, by_units, _ = cache.extract(changed, "pkg/overlay.py")
    assert by_units and same(result, extract_file(changed, "pkg/overlay.py", CONFIG))
    (site,) = result.sites
    assert site.notes.constants == (("REGISTRY", "('a/b', 'c/d')"),)


def test_a_call_in_a_docstring_or_a_comment_is_not_what_a_parameter_holds() -> None:
    source = module(
        '''
        def check_tp(tp):
            """Check the size, e.g. `check_tp(4)` or check_tp(8)."""
            if tp > 8:
                raise ValueError("too many GPUs")

        # check_tp(16) would fail
        def launch(server_args):
            check_tp(server_args.tp_size)
        '''
    )
    (site,) = extract_file(source, "pkg/launch.py", CONFIG).sites
    assert site.conditions[0].resolved == (("tp", "server_args.tp_size"),)
