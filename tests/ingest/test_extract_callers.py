"""Finding a function's callers in a module's text: the calls, and the strings and comments that
hold examples rather than calls, checked against Python's own tokenizer."""

from __future__ import annotations

import io
import tokenize

import pytest

from errkb.ingest.extract.callers import call_texts, code_calls, string_spans

TRICKY = '''\
"""Module doc: check(1) here is an example."""
import re  # a comment with a 'quote and a "double
x = 'it''s' + "a \\"quoted\\" word" + r'\\d+' + b"bytes" + rb'raw' + Rb"R" + f"{y!r}"
z = f'{x}' f"""multi
line {x} "nested" quote""" + u'unicode'
w = x or"glued"  # `or` is a keyword, not a prefix of the string
v = \'\'\'one ' two '' three\'\'\' # after
s = "a # not a comment"
t = 'escaped \\\\' + "back\\
slash"
'''


def _tokenizer_spans(text: str) -> list[tuple[int, int]]:
    starts = [0]
    for line in text.splitlines(keepends=True):
        starts.append(starts[-1] + len(line))
    out = []
    for tok in tokenize.generate_tokens(io.StringIO(text).readline):
        if tok.type in (tokenize.STRING, tokenize.COMMENT):
            (r0, c0), (r1, c1) = tok.start, tok.end
            out.append((starts[r0 - 1] + c0, starts[r1 - 1] + c1))
    return sorted(out)


def test_string_spans_are_the_tokenizers_strings_and_comments() -> None:
    spans = string_spans(TRICKY)
    assert spans == _tokenizer_spans(TRICKY)
    shown = [TRICKY[a:b] for a, b in spans]
    assert "r'\\d+'" in shown and 'Rb"R"' in shown and '"glued"' in shown  # prefixes kept
    assert '"a # not a comment"' in shown and "# after" in shown


@pytest.mark.parametrize(
    ("text", "name", "owner", "calls"),
    [
        ("check(a)\nrecheck(b)\nx.check(c)\ncheck (d)\n", "check", "", ["check(a)"]),
        (
            "self.go(1)\ncls.go(2)\ngo(3)\nother.go(4)\nmyself.go(5)\n",
            "go",
            "C",
            ["self.go(1)", "cls.go(2)"],
        ),
        (
            "class C:\n    def __init__(self, a): ...\nC(1)\nBC(2)\nx.C(3)\nC(f(2), [3])\n",
            "__init__",
            "C",
            ["C(1)", "C(f(2), [3])"],
        ),
        ("f(')')\nf(g(')'), 2)  # f(9)\n", "f", "", ["f(')')", "f(g(')'), 2)", "f(9)"]),
    ],
)
def test_calls_are_found_by_callee_and_closed_at_their_bracket(
    text: str, name: str, owner: str, calls: list[str]
) -> None:
    assert call_texts(text, name, owner) == calls


def test_calls_in_strings_and_comments_are_examples_not_calls() -> None:
    text = '"""Use check(example)."""\ncheck(real)  # check(commented)\ns = "check(quoted)"\n'
    assert call_texts(text, "check", "") == [
        "check(example)",
        "check(real)",
        "check(commented)",
        "check(quoted)",
    ]
    assert code_calls(text, "check", "", string_spans(text)) == ["check(real)"]
