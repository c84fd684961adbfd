"""Guard chains: which tests must hold, or fail, for control to reach a raise."""

from __future__ import annotations

import textwrap

from errkb.core.records import Condition, ExtractConfig, Site
from errkb.ingest.extract import extract_file


def sites_of(source: str) -> list[Site]:
    result = extract_file(textwrap.dedent(source).encode(), "pkg/mod.py", ExtractConfig())
    assert result.status == "ok", result.detail
    return list(result.sites)


def chain(site: Site) -> list[tuple[str, str, bool]]:
    return [(c.kind, c.expr, c.holds) for c in site.conditions]


def test_if_elif_else_carry_the_negation_of_earlier_tests() -> None:
    sites = sites_of(
        """
        def f(a, b):
            if a > 1:
                raise ValueError("one")
            elif b:
                raise ValueError("two")
            else:
                raise ValueError("three")
        """
    )
    assert [chain(s) for s in sites] == [
        [("if", "a > 1", True)],
        [("if", "a > 1", False), ("elif", "b", True)],
        [("if", "a > 1", False), ("elif", "b", False)],
    ]
    assert [c.line for c in sites[1].conditions] == [3, 5]


def test_else_containing_an_if_is_not_an_elif() -> None:
    (site,) = sites_of(
        """
        def f(a, b):
            if a:
                pass
            else:
                if b:
                    raise ValueError("x")
        """
    )
    assert chain(site) == [("if", "a", False), ("if", "b", True)]


def test_loops_with_try_except_and_match() -> None:
    (loop, handler, with_site, case) = sites_of(
        """
        def f(items, path, cmd):
            for i, item in enumerate(items):
                while item.busy:
                    raise ValueError("busy")
            try:
                g()
            except (KeyError, IndexError) as e:
                raise ValueError("lookup") from e
            with open(path) as fh, lock:
                try:
                    raise ValueError("inside")
                finally:
                    pass
            match cmd:
                case ["go", direction] if direction:
                    pass
                case {"stop": _}:
                    raise ValueError("stop")
        """
    )
    assert chain(loop) == [
        ("for", "(i, item) in enumerate(items)", True),
        ("while", "item.busy", True),
    ]
    assert chain(handler) == [("except", "(KeyError, IndexError)", True)]
    assert chain(with_site) == [("with", "open(path) as fh, lock", True), ("try", "try", True)]
    assert chain(case) == [
        ("case", "cmd matches ['go', direction] if direction", False),
        ("case", "cmd matches {'stop': _}", True),
    ]


def test_loop_else_and_try_else() -> None:
    (loop_else, try_else) = sites_of(
        """
        def f(xs):
            for x in xs:
                break
            else:
                raise ValueError("empty")
            try:
                g()
            except OSError:
                pass
            else:
                raise ValueError("fine?")
        """
    )
    assert chain(loop_else) == [("for", "x in xs", False)]
    assert chain(try_else) == [("try", "no exception raised", True)]


def test_early_exits_in_enclosing_blocks_are_guards() -> None:
    (site,) = sites_of(
        """
        def f(x, y):
            if x is None:
                return None
            if y:
                raise KeyError("not a ValueError guard")
            for item in x:
                if not item:
                    continue
                if item.ok:
                    raise ValueError("bad item")
        """
    )
    assert chain(site) == [
        ("if", "x is None", False),
        ("for", "item in x", True),
        ("if", "not item", False),
        ("if", "item.ok", True),
    ]


def test_guards_stop_at_the_enclosing_function() -> None:
    (site,) = sites_of(
        """
        if TYPE_CHECKING:
            def f(a):
                def g():
                    raise ValueError("inner")
                if a:
                    return g
        """
    )
    assert site.conditions == ()
    assert site.qualname == "f.g"


def test_local_names_resolve_to_the_assignment_that_reaches_the_test() -> None:
    (site,) = sites_of(
        """
        def f(self, pool):
            enabled = get_disagg().disaggregation_mode != "null"
            enabled = cfg.mode != "off"
            limit: int = self.limit * 2
            if enabled and pool is None and len(pool) > limit:
                raise ValueError("x")
        """
    )
    (cond,) = site.conditions
    assert cond == Condition(
        kind="if",
        expr="enabled and pool is None and (len(pool) > limit)",
        holds=True,
        line=6,
        resolved=(("enabled", "cfg.mode != 'off'"), ("limit", "self.limit * 2")),
    )


def test_names_bound_differently_on_branches_are_not_resolved() -> None:
    (site,) = sites_of(
        """
        def f(a):
            flag = a > 1
            if a:
                flag = False
            if flag:
                raise ValueError("x")
        """
    )
    assert site.conditions[-1].resolved == ()
