"""Solutions that change a flag the guard tests or the message names.

A flag the guard requires gets the change that escapes the guard (with its default and help);
one that is only an alternative says so; one whose needed value cannot be derived quotes the part
of the guard that reads it, and the local it goes through, so the quote always shows the read.
"""

from __future__ import annotations

import ast
import re

from errkb.knowledge.facts import Fix, Involvement, Provenance
from errkb.knowledge.fixes.commands import escape
from errkb.knowledge.words.wording import MAX_CODE, code, default_words, flag_name

MAX_HELP = 220


def short_help(inv: Involvement) -> str | None:
    """The flag's help, cut at a sentence end near MAX_HELP characters."""
    d = inv.definition
    if d is None or not d.help:
        return None
    text = " ".join(d.help.split())
    if len(text) <= MAX_HELP:
        return text
    cut = text.rfind(". ", 0, MAX_HELP)
    return text[: cut + 1] if cut > 40 else text[:MAX_HELP].rstrip() + "…"


def _with_help(text: str, inv: Involvement) -> str:
    help_ = short_help(inv)
    return f"{text}. {inv.flag}: {help_}" if help_ else text + "."


def _tested_part(f: Involvement, resolved: dict[str, str]) -> str:
    """The part of the guard that reads the flag, and the local it goes through: `tp > 1`,
    where `tp` is `server_args.tp_size`."""
    text = f.condition or ""
    try:
        node = ast.parse(text, mode="eval").body
    except (SyntaxError, ValueError, RecursionError):
        node = None
    names = [n for n in (f.dest, f.via) if n]
    if isinstance(node, ast.BoolOp):
        parts = [ast.unparse(v) for v in node.values]
        picked = [p for p in parts if any(re.search(rf"\b{re.escape(n)}\b", p) for n in names)]
        text = " and ".join(picked) if picked else text
    shown = _around(text, names)
    if f.via and f.via in resolved:
        shown += f", where {code(f.via)} is {_around(resolved[f.via], [f.dest])}"
    return shown


def _around(text: str, names: list[str], width: int = 50) -> str:
    """Code in backticks; when long, the part around the first of `names` it reads."""
    text = " ".join(text.split())
    at, name = min(((i, n) for n in names if (i := text.find(n)) >= 0), default=(-1, ""))
    if len(text) <= MAX_CODE or at < 0:
        return code(text)
    # the whole name is kept, however long (`remote_instance_..._service_port` is 56 letters)
    start, end = max(0, at - width), min(len(text), at + len(name) + width)
    return f"`{'… ' if start else ''}{text[start:end]}{' …' if end < len(text) else ''}`"


# "do not set `enable_x`", "Drop --x", "without --x": the message tells the reader to leave
# the flag out (the words just before it).
_LEAVE_OUT = re.compile(
    r"(?:do not|don't|never) (?:set|use|pass|enable)|\b(?:drop|remove|without)\b"
)


def _says_leave_out(message: str, inv: Involvement) -> bool:
    names = [inv.flag, inv.dest]
    for name in (n for n in names if n):
        at = message.find(name)
        if at >= 0 and _LEAVE_OUT.search(message[max(0, at - 30) : at].lower()):
            return True
    return False


# "--x requires --y", "please specify --y", "--y must be set": the message asks for the flag (the
# words before it in its sentence, or after it); "--y=1", "--y set to 1": the value it asks for
_NEEDS_BEFORE = re.compile(
    r"\b(?:requires?|needs?|please (?:set|specify|provide|pass|add|use)|"
    r"must (?:also )?(?:set|specify|pass|use))\b[^.;]*$",
    re.I,
)
_NEEDS_AFTER = re.compile(
    r"^`?\s*(?:(?:must|should|needs? to)(?: also)? be|to be) "
    r"(?:set|specified|provided|given|passed)\b",
    re.I,
)
# "--x requires --y to be disabled": asked to be off, which is not a flag to add
_OFF_AFTER = re.compile(r"^`?[^.;]{0,30}?\b(?:disabled|off|unset|false|none|not set)\b", re.I)
_VALUE_AFTER = re.compile(r"^`?(?:=|\s+set to\s+)([\w.-]+)")


def _asked_for(message: str, inv: Involvement) -> tuple[str] | tuple[()] | None:
    """What the message asks of a flag it names: (value,) when it gives one, () when it only
    asks for the flag to be given, None when it does not ask for it."""
    at = message.find(inv.flag)
    if at < 0:
        return None
    end = at + len(inv.flag)
    if message[end : end + 1].isalnum() or message[end : end + 1] == "-":
        return None  # a longer flag's prefix
    before, after = message[max(0, at - 60) : at], message[end:]
    if not (_NEEDS_BEFORE.search(before) or _NEEDS_AFTER.match(after)) or _OFF_AFTER.match(after):
        return None
    value = _VALUE_AFTER.match(after)
    return (value.group(1),) if value else ()


def flag_fixes_of(
    flags: list[Involvement], resolved: dict[str, str], message: str = "", asked: str = ""
) -> list[Fix]:
    """A solution for each flag the guard tests, then for each the message names; `asked` is
    the message's first sentence, which says what the check wants better than its code."""
    prov: tuple[Provenance, ...] = ("derived:flags", "derived:conditions")
    out: list[Fix] = []
    ordered = sorted(
        (f for f in flags if f.in_condition),
        key=lambda f: (not f.required, f.polarity == "other"),
    )
    for f in ordered:
        esc = escape(f)
        if esc is not None:
            # a flag the error needs only on one of its ways: one way out of several
            first = not any(o.command for o in out)
            lead = "" if f.required else "One way out: " if first else "Another way out: "
            text = lead + esc.text[:1].lower() + esc.text[1:] if lead else esc.text
            out.append(Fix("flag", _with_help(text, f), prov, flag=f.flag, command=esc.command))
        else:
            said = [default_words(f)]
            if f.cli and f.dest != f.flag.lstrip("-").replace("-", "_"):
                said.append(f"the code reads it as {f.dest}")  # --elastic-ep-join-rank-offset
            dflt = "; ".join(w for w in said if w)
            if asked:
                text = f"Check the value you gave {flag_name(f)}{f' ({dflt})' if dflt else ''}:"
                text += f" the message says what the check wants: “{asked}”"
            else:
                text = f"Check {flag_name(f)}{f' ({dflt})' if dflt else ''}: the guard tests "
                text += _tested_part(f, resolved)
            out.append(Fix("flag", _with_help(text, f), prov, flag=f.flag))
    requested: list[Fix] = []  # the flags the message asks for: the first way out
    for f in flags:
        if not f.in_condition and f.in_message:
            dflt = default_words(f)
            text = f"The message names {flag_name(f)}{f' ({dflt})' if dflt else ''}"
            wanted = _asked_for(message, f) if f.cli else None
            if wanted is not None:
                text = (
                    f"Run with {f.flag} {wanted[0]}: the message asks for that value"
                    if wanted
                    else f"Add {f.flag}, with the value you need, to the command line: the "
                    "message says it is required"
                )
                said_by: tuple[Provenance, ...] = ("derived:flags", "derived:message")
                requested.append(Fix("flag", _with_help(text, f), said_by, flag=f.flag))
                continue
            if f.cli and _says_leave_out(message, f):
                text = (
                    f"Remove {flag_name(f)} from the command line{f' ({dflt})' if dflt else ''}:"
                    " the message says to leave it out"
                )
            out.append(
                Fix("flag", _with_help(text, f), ("derived:flags", "derived:message"), flag=f.flag)
            )
    return requested + out
