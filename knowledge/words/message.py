"""What a message says about itself: its sentences, its own advice, the rule it states.

Messages often carry the best fix ("Drop --enable-unified-memory or run without PD."); this
module finds such sentences by their leading verb or advice phrases, and classifies what kind of
problem a message reports from its words. Plain string operations only.
"""

from __future__ import annotations

import re

from errkb.core.records import Template

_ABBREVIATIONS = ("e.g", "i.e", "etc", "vs", "approx", "no", "resp", "cf")
_IMPERATIVES = frozenset(
    "drop use set pass remove disable enable specify provide install upgrade downgrade update "
    "increase decrease reduce lower choose select add change switch run try consider make "
    "ensure check avoid unset turn rename configure call define register give supply restart "
    "reinstall export move replace fix convert refer see point launch start load download".split()
)
_ADVICE_PHRASES = (
    "please ",
    "you can ",
    "you may ",
    "you should ",
    "you need ",
    "you must ",
    "consider ",
    "instead",
    "try ",
    "to fix",
    "to avoid",
    "to resolve",
    "to disable",
    "to enable",
    "run with",
    "run without",
    "recommended",
    "rerun",
    "re-run",
)
_RULE_PHRASES = (
    "must ",
    "should ",
    "needs to",
    "need to",
    "has to",
    "have to",
    "is required",
    "are required",
    "expected",
    "expects",
    "requires",
    "require ",
    "only support",
    "only supported",
    "not supported",
    "does not support",
    "do not support",
    "cannot",
    "can't",
    "can not",
    "not allowed",
    "not compatible",
    "incompatible",
    "only be",
    "only works",
)
# Words that say a combination (of options, model, hardware) is not supported.
UNSUPPORTED_WORDS = (
    "not supported",
    "does not support",
    "do not support",
    "only support",
    "unsupported",
    "not yet",
    "not compatible",
    "incompatible",
    "cannot be used with",
    "cannot be combined",
    "mutually exclusive",
    "only works",
)
# (words that signal it, situation sentence); first match wins.
CATEGORIES: tuple[tuple[tuple[str, ...], str], ...] = (
    (
        UNSUPPORTED_WORDS,
        "a combination of options, model or hardware that this code does not support",
    ),
    (("divisible", "multiple of"), "a size that does not divide evenly as required"),
    (
        ("mismatch", "does not match", "must match", "must be the same", "inconsistent", "differ"),
        "two values that must agree but do not",
    ),
    (
        (
            "out of range",
            "greater than",
            "less than",
            "at least",
            "at most",
            "exceeds",
            "too large",
            "too small",
            "positive",
            "negative",
            "non-negative",
            "between",
            "must be >",
            "must be <",
        ),
        "a value outside the accepted range",
    ),
    (
        (
            "unknown",
            "unrecognized",
            "invalid",
            "not a valid",
            "unexpected",
            "choose from",
            "must be one of",
            "should be one of",
            " not in ",
        ),
        "a value that is not one of the accepted ones",
    ),
    (
        ("not found", "does not exist", "missing", "no such", "cannot find", "could not find"),
        "something required that cannot be found",
    ),
    (
        ("required", "must be set", "must be specified", "must be provided", "is none", "empty"),
        "a required value that was not given",
    ),
    (("deprecated", "removed", "no longer"), "an option or usage that is no longer accepted"),
)


def sentences(text: str) -> list[str]:
    """Sentences of a message, split after `.`/`!`/`?`/`;` followed by a space (not `e.g.`)."""
    out: list[str] = []
    start = 0
    i = 0
    while i < len(text):
        ch = text[i]
        at_break = ch in ".!?;" and (i + 1 == len(text) or text[i + 1] in " \n")
        if at_break and ch == ".":
            word = text[start:i].rsplit(None, 1)[-1].lower() if text[start:i].split() else ""
            if word.rstrip(".") in _ABBREVIATIONS:
                at_break = False
        if at_break:
            piece = text[start : i + 1].strip()
            if piece:
                out.append(piece)
            start = i + 1
        i += 1
    tail = text[start:].strip()
    if tail:
        out.append(tail)
    return out


def _first_word(sentence: str) -> str:
    words = sentence.lstrip("([\"'`").split()
    return words[0].strip(",:;").lower() if words else ""


# Words that, right after an imperative-looking verb and its object, show the sentence reports
# what happened to the object: "set x={frac} rejected by server", "update of y failed".
_REPORTED = frozenset(
    "rejected failed failing returned refused denied succeeded timed errored aborted was were is "
    "are has had did".split()
)


def _reports(sentence: str) -> bool:
    """True when the sentence's first word is a noun or a log label, not a verb: it is followed
    by "of", or its object by what happened to it."""
    words = [w.strip(",:;").lower() for w in sentence.lstrip("([\"'`").split()]
    if len(words) < 3:
        return False
    return words[1] == "of" or words[1] in _REPORTED or words[2] in _REPORTED  # "use of x"


# "Try to allocate {n} tokens": what the code tried, not what the reader should try
_TRIED = re.compile(
    r"^\s*try(?:ing)? to (?:allocate|load|fetch|read|open|connect|find|access|get)\b", re.I
)


def is_advice(sentence: str) -> bool:
    """True when a sentence tells the reader what to do."""
    if _TRIED.match(sentence):
        return False
    low = " " + " ".join(sentence.lower().split()) + " "
    if any(" " + p in low for p in _ADVICE_PHRASES):
        return True
    return _first_word(sentence) in _IMPERATIVES and not _reports(sentence)


def is_rule(sentence: str) -> bool:
    """True when a sentence states a requirement or a limitation."""
    low = " " + " ".join(sentence.lower().split()) + " "
    return any(" " + p in low for p in _RULE_PHRASES)  # phrases start at a word boundary


def display(template: Template) -> str:
    """The whole message on one line, placeholders as `{expr}`."""
    return " ".join(template.display.split())


def advice(template: Template) -> list[str]:
    """The message's own advice sentences, in order."""
    return [s for s in sentences(display(template)) if is_advice(s)]


def rules(template: Template) -> list[str]:
    """The message's sentences stating a requirement or limitation (not advice)."""
    return [s for s in sentences(display(template)) if is_rule(s) and not is_advice(s)]


def category(template: Template) -> str | None:
    """What kind of problem the message reports, from its words; None when it says nothing."""
    low = " " + " ".join(template.literal_text.lower().split()) + " "
    for words, situation in CATEGORIES:
        if any(w in low for w in words):
            return situation
    return None


def placeholders(template: Template) -> list[str]:
    """The expressions the message prints, in order, without duplicates."""
    out: list[str] = []
    for seg in template.segments:
        if seg.kind == "placeholder" and seg.text not in out:
            out.append(seg.text)
    return out


_REASON_MARKERS = (" because ", " since ", " as there is ", " due to ")


# a parenthesis that states why (a limit, a need, a refusal), not one that spells out a name
# ("(DeepSeek Sparse Attention)") or adds an exception ("(unified-memory MLA also allows ...)")
_GIVES_REASON = re.compile(
    r"\b(?:not|no|cannot|can't|only|requires?|needs?|must|because|since|unsupported|"
    r"incompatible|missing|too)\b",
    re.I,
)


def reason(template: Template) -> str | None:
    """Why the message says it fails, in its own words: a parenthesis, a "because" clause, a
    "no … scheme", or what the code "only supports"."""
    text = display(template)
    masked = _masked(template)
    low = masked.lower()
    for marker in _REASON_MARKERS:
        at = low.find(marker)
        if at >= 0:
            return _clause(text[at + len(marker) :])
    start = masked.find("(")
    end = masked.find(")", start + 1)
    if start >= 0 and end > start + 8:
        inner = text[start + 1 : end].strip()
        words = [w for w in inner.split() if w.isalpha()]
        if not inner.lower().startswith(("e.g", "i.e", "got", "default", "see")):
            plain = "{" not in inner and len(words) >= 3 and not any(c in inner for c in "=*[]")
            if plain and _GIVES_REASON.search(inner):  # not "(DeepSeek Sparse Attention)"
                return inner
    for s in sentences(text):
        sl = s.lower()
        if " only support" in " " + sl or sl.startswith("no ") or " is not implemented" in sl:
            if not is_advice(s) and s != sentences(text)[0]:
                return _clause(s)
    return None


def _masked(template: Template) -> str:
    """`display(template)` with the source inside each placeholder blanked, offsets kept: words
    in the code (`{failure_reason or 'Failed due to an unknown reason'}`) are not the
    message's own."""
    shown = []
    for seg in template.segments:
        if seg.kind == "text":
            shown.append(seg.text)
            continue
        inner = Template((seg,), template.form).display[1:-1]
        shown.append("{" + "".join(c if c.isspace() else "\0" for c in inner) + "}")
    return " ".join("".join(shown).split())


def _clause(text: str) -> str:
    first = sentences(text)[0] if sentences(text) else text
    return first.rstrip(".;:, ")
