"""Message templates: every way a message is written becomes literal text plus placeholders."""

from __future__ import annotations

import textwrap

import pytest

from errkb.core.records import ExtractConfig, Segment, Site, Template
from errkb.ingest.extract import extract_file


def sites_of(source: str) -> list[Site]:
    result = extract_file(textwrap.dedent(source).encode(), "pkg/mod.py", ExtractConfig())
    assert result.status == "ok", result.detail
    return list(result.sites)


def template_of(source: str) -> Template:
    (site,) = sites_of(source)
    return site.template


def text(value: str) -> Segment:
    return Segment("text", value)


def ph(expr: str, conversion: str | None = None, spec: str | None = None) -> Segment:
    return Segment("placeholder", expr, conversion, spec)


def test_literal_and_implicit_concatenation() -> None:
    t = template_of('raise ValueError("a " "b" \'c\')')
    assert t == Template((text("a bc"),), "literal")


def test_fstring_keeps_expression_conversion_and_spec() -> None:
    t = template_of('raise ValueError(f"x={obj.attr!r} y={n:.2f} z={w:>{width}} {k=}")')
    assert t.form == "fstring"
    assert t.segments == (
        text("x="),
        ph("obj.attr", "r"),
        text(" y="),
        ph("n", None, ".2f"),
        text(" z="),
        ph("w", None, ">{width}"),
        text(" k="),
        ph("k", "r"),
    )
    assert t.display == "x={obj.attr!r} y={n:.2f} z={w:>{width}} k={k!r}"


def test_implicit_concatenation_of_literal_and_fstring() -> None:
    t = template_of('raise ValueError("the model " f"({cfg.arch}) " "is neither")')
    assert t.display == "the model ({cfg.arch}) is neither"
    assert t.form == "fstring"


def test_plus_concatenation_is_recursive() -> None:
    t = template_of('raise ValueError("a" + str(x) + f"b{y}" + ("c" + "d"))')
    assert t.form == "concat"
    assert t.segments == (text("a"), ph("str(x)"), text("b"), ph("y"), text("cd"))


def test_repeated_literal() -> None:
    assert template_of('raise ValueError("-" * 3 + "x")').display == "---x"


def test_format_positional_indexed_and_keyword() -> None:
    t = template_of('raise ValueError("{} and {1} then {name!r:>5} {0.attr}".format(a, b, name=c))')
    assert t.form == "format"
    assert t.segments == (
        ph("a"),
        text(" and "),
        ph("b"),
        text(" then "),
        ph("c", "r", ">5"),
        text(" "),
        ph("a.attr"),
    )


def test_format_escaped_braces() -> None:
    assert template_of('raise ValueError("{{x}} {}".format(v))').display == "{x} {v}"


@pytest.mark.parametrize(
    ("expr", "display"),
    [
        ('"bad %s" % x', "bad {x}"),
        ('"bad %s and %r" % (a, b)', "bad {a} and {b!r}"),
        ('"bad %(k)s %(j)d" % {"k": a, "j": b}', "bad {a} {b}"),
        ('"%d%% of %.2f" % (a, b)', "{a}% of {b:.2f}"),
        ('"%s-%s" % pair', "{pair[0]}-{pair[1]}"),
    ],
)
def test_percent_formatting(expr: str, display: str) -> None:
    t = template_of(f"raise ValueError({expr})")
    assert (t.display, t.form) == (display, "percent")


def test_name_bound_earlier_in_function() -> None:
    t = template_of(
        """
        def f(x):
            msg = f"bad {x}"
            msg += ", try again"
            raise ValueError(msg)
        """
    )
    assert (t.display, t.form) == ("bad {x}, try again", "name")


def test_name_rebound_uses_the_assignment_that_reaches_the_raise() -> None:
    t = template_of(
        """
        def f(x):
            msg = "first"
            msg = "second"
            raise ValueError(msg)
        """
    )
    assert t.display == "second"


def test_name_set_in_the_branch_of_the_raise() -> None:
    sites = sites_of(
        """
        def f(x):
            if x:
                msg = "x is set"
                raise ValueError(msg)
            msg = "x is empty"
            raise ValueError(msg)
        """
    )
    assert [s.template.display for s in sites] == ["x is set", "x is empty"]


def test_name_built_across_branches_keeps_common_start_and_end() -> None:
    t = template_of(
        """
        def f(kind, n):
            if kind == "a":
                msg = f"unsupported kind a for {n} items."
            elif kind == "b":
                msg = "unsupported kind b."
            else:
                msg = "unsupported kind c."
            raise ValueError(msg)
        """
    )
    assert t.segments == (text("unsupported kind "), ph("msg"), text("."))


def test_optional_suffix_added_in_a_branch() -> None:
    t = template_of(
        """
        def f(x):
            msg = "bad value"
            if x:
                msg += f" ({x})"
            raise ValueError(msg)
        """
    )
    assert t.segments == (text("bad value"), ph("msg"))


def test_branch_leaving_the_name_unbound_is_ignored() -> None:
    t = template_of(
        """
        def f(x):
            if x:
                msg = "only when x"
            raise ValueError(msg)
        """
    )
    assert t.display == "only when x"


def test_parameter_stays_a_placeholder() -> None:
    t = template_of("def f(msg):\n    raise ValueError(msg)\n")
    assert (t.segments, t.form, t.is_opaque) == ((ph("msg"),), "name", True)


def test_module_constant_and_format_of_a_constant() -> None:
    sites = sites_of(
        """
        ERR = "broken: "
        TEMPLATE = "need {} got {}"

        def f(a, b):
            raise ValueError(ERR + a)

        def g(a, b):
            raise ValueError(TEMPLATE.format(a, b))
        """
    )
    assert [(s.template.display, s.template.form) for s in sites] == [
        ("broken: {a}", "concat"),
        ("need {a} got {b}", "format"),
    ]


def test_bare_module_constant_has_form_constant() -> None:
    sites = sites_of('MSG = "no good"\n\ndef f():\n    raise ValueError(MSG)\n')
    assert sites[0].template == Template((text("no good"),), "constant")


def test_class_constant_through_self_and_cls() -> None:
    sites = sites_of(
        """
        class C:
            ERROR = "C failed"

            def m(self):
                raise ValueError(self.ERROR)

            @classmethod
            def k(cls):
                raise ValueError(f"{cls.ERROR}!")
        """
    )
    assert [s.template.display for s in sites] == ["C failed", "C failed!"]
    assert sites[0].template.form == "constant"


def test_closure_sees_enclosing_function_name() -> None:
    t = template_of(
        """
        def outer(x):
            prefix = "outer says"
            def inner():
                raise ValueError(prefix + f" {x}")
            return inner
        """
    )
    assert t.display == "outer says {x}"


def test_conditional_expression_merges_both_messages() -> None:
    t = template_of('raise ValueError("need a" if x else "need b")')
    assert t.segments == (text("need "), ph('"need a" if x else "need b"'.replace('"', "'")))


def test_extra_arguments_are_appended_as_placeholders() -> None:
    t = template_of('raise ValueError("bad thing", x, y)')
    assert t.display == "bad thing, {x}, {y}"
    assert t.form == "literal"


@pytest.mark.parametrize("source", ["raise ValueError", "raise ValueError()"])
def test_no_message(source: str) -> None:
    assert template_of(source) == Template((), "none")


def test_unresolvable_expression_is_one_placeholder_of_its_source() -> None:
    t = template_of("raise ValueError(str(err))")
    assert (t.segments, t.form, t.is_opaque) == ((ph("str(err)"),), "other", True)


def test_self_referencing_assignments_terminate() -> None:
    lines = ["def f(x):", '    msg = ""'] + ["    msg += x" for _ in range(300)]
    lines.append("    raise ValueError(msg)")
    t = template_of("\n".join(lines) + "\n")
    # Past the lookup depth cap the oldest part stays a placeholder; the rest is resolved.
    assert t.segments[0] == ph("msg")
    assert t.segments[1:] == (ph("x"),) * (len(t.segments) - 1)
    assert 50 < len(t.segments) < 300


def test_many_branches_do_not_explode() -> None:
    body = "".join(f"    if x == {i}:\n        msg += 'p{i}'\n" for i in range(60))
    t = template_of(f"def f(x):\n    msg = 'start '\n{body}    raise ValueError(msg)\n")
    assert t.segments == (text("start "), ph("msg"))


def test_shared_definition_is_not_altered_by_a_raise_with_extra_arguments() -> None:
    sites = sites_of(
        """
        def f(x):
            msg = f"bad {x}"
            if x:
                raise ValueError(msg, x)
            raise ValueError(msg)
        """
    )
    assert [s.template.display for s in sites] == ["bad {x}, {x}", "bad {x}"]


def test_form_is_other_when_a_format_cannot_be_resolved() -> None:
    t = template_of("def f(fmt, x):\n    raise ValueError(fmt % x)\n")
    assert (t.segments, t.form) == ((ph("fmt % x"),), "other")


def test_form_follows_the_argument_not_the_names_it_uses() -> None:
    t = template_of('P = "pre"\ndef f(x):\n    msg = f"{P}: {x}"\n    raise ValueError(msg)\n')
    assert (t.display, t.form) == ("pre: {x}", "name")
