"""`--flag` words in page prose become <code>: the one-pass version says exactly what the
word-by-word rule says (the rule, spelled out here), on every kind of text."""

from __future__ import annotations

import random

from markupsafe import Markup, escape

from errkb.service.pages.view import code_spans


def _by_words(text: str) -> str:
    """The rule: split on spaces; a word whose part before `.,;:)` starts with `--` and is
    longer than `--` is a flag."""
    words = []
    for word in text.split(" "):
        core = word.rstrip(".,;:)")
        if core.startswith("--") and len(core) > 2:
            tail = word[len(core) :]
            words.append(Markup('<code class="flag">') + escape(core) + Markup("</code>") + tail)
        else:
            words.append(escape(word))
    return str(Markup(" ").join(words))


def test_flags_become_code_as_the_rule_says() -> None:
    assert str(code_spans("Set --tp-size, then --dp-size. Or -- not a flag; <b>--x&y</b>")) == (
        'Set <code class="flag">--tp-size</code>, then <code class="flag">--dp-size</code>. '
        "Or -- not a flag; &lt;b&gt;--x&amp;y&lt;/b&gt;"
    )
    rng = random.Random(27)
    pieces = ["--", "-", " ", "  ", ".", ",", ";", ":", ")", "a", "<", "&", "'", "\n", "--tp-size"]
    for _ in range(20_000):
        text = "".join(rng.choice(pieces) for _ in range(rng.randint(0, 14))).replace("`", "")
        assert str(code_spans(text)) == _by_words(text), repr(text)
