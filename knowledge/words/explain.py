"""Who hits an error and when it happens, in words derived from its site and flags.

`who_hits_it` says the class and why (what it means is said by `meaning`); `trigger` says
which flag combination and state lead there; `common_situations` lists the situations the
message, the flags and the history point to.
"""

from __future__ import annotations

import re
from collections.abc import Iterable

from errkb.core.origin import NEVER_RUNS, UNIMPLEMENTED
from errkb.core.records import Site
from errkb.knowledge.facts import Derived, DerivedItems, Involvement, Provenance, TimelineFacts
from errkb.knowledge.fixes.commands import trigger_args
from errkb.knowledge.who.evidence import WhoKind as Audience
from errkb.knowledge.words import message
from errkb.knowledge.words.intent import INTENT_WORDS
from errkb.knowledge.words.reading import Reading
from errkb.knowledge.words.wording import activity, code, flag_state


def _value_like(expr: str) -> bool:
    """A placeholder that prints a value, not a label like `{scope}` or `{name}`."""
    last = expr.rsplit(".", 1)[-1].strip("()")
    return last not in ("scope", "name", "key", "prefix", "label", "cls", "self", "type")


def named_flags(site: Site, flags: list[Involvement]) -> list[str]:
    """Flags the message's text spells out (not those it only prints the value of)."""
    literal = site.template.literal_text
    return [
        f.flag
        for f in flags
        if f.in_message
        and f.cli
        and any(n in literal for n in (f.definition.flags if f.definition else (f.flag,)))
    ]


def _setting(f: Involvement) -> str:
    """`--x on`, `--x not null`: a flag state after "with"."""
    return flag_state(f).replace(" is ", " ", 1)


def _where(site: Site) -> str:
    if site.qualname in ("", "<module>"):
        return f"at module level in {site.path}"
    return f"in `{site.qualname}` ({site.path})"


_WHO_LEAD: dict[str, str] = {
    "flag": "A flag you set",
    "request_field": "A field of the request you sent",
    "environment": "The environment where the server runs (an environment variable, the network)",
    "model_config": "The model you serve (its configuration or weights)",
    "dependency": "An installed package (missing, or at another version)",
    "hardware": "The hardware, platform or parallelism settings in use",
}


def who_hits_it(r: Reading) -> tuple[Audience, Derived, tuple[str, ...]]:
    """The class of who hits it, a sentence saying why, and the evidence (the chains of names)."""
    evidence = tuple(c.text for c in r.clues)
    if r.audience in _WHO_LEAD:
        first = [c.text for c in r.clues if c.kind == r.audience]
        others = [c.text for c in r.clues if c.kind != r.audience]
        # the site's own clues, and the traced steps that end at an input
        # (else the first that reaches anything: never a step where the trace stopped)
        reached = [c for c in first if c.endswith(")") or _own_clue(c)]
        reached = reached or [c for c in first if not _STOPPED.search(c)][:1] or first[:1]
        # the steps that end at an input of that class first (a chain of the index carries
        # its class on every step, even one that ends at another class's input)
        reached.sort(key=lambda c: _MARKS[r.audience].search(c) is None)
        said = _one_per_name(_short_clue(c) for c in reached)
        text = f"{_WHO_LEAD[r.audience]}: " + "; ".join(said[:3]) + "."
        names = {m.group(1) for c in said if (m := _NAMED.match(c))}
        also = _one_per_name(_short_clue(c) for c in others if c.endswith(")"))
        also = [c for c in also if c not in said and not _said_name(c, names)]
        if also:  # "Also, `y` comes from ...": names of another class the check reads
            text += " Also, " + "; ".join(also[:2]) + "."
    elif r.audience == "test":
        text = (
            f"The project's own tests: {r.clues[0].code} is test code, run by the project's "
            "test suite and not by a server or a program using the library, so it fails when "
            "a test fails."
        )
    elif r.audience == "internal" and any(NEVER_RUNS in c.text for c in r.clues):
        text = "Nobody: this check never runs, because it sits under `if TYPE_CHECKING:`."
    elif r.audience == "internal" and any(UNIMPLEMENTED in c.text for c in r.clues):
        text = (
            "Nobody's input: the class in use leaves this method unimplemented, so reaching it "
            "points to a gap in the code for that setup, not to a value you gave."
        )
    elif r.audience == "internal":
        searched = [c.text for c in r.clues if "followed; none reaches an input" in c.text]
        # what shows it: the search, else a step that ends in state the code builds, never a
        # step where the trace stopped
        shown = [_short_clue(c.text) for c in r.clues if not _STOPPED.search(c.text)]
        how = (searched or shown or [""])[0]
        text = (
            "Nobody's input: this is an internal check, and the values it compares are built by "
            f"the code itself{f' ({how})' if how else ''}. Reaching it points to a bug, or a case "
            "the code did not expect."
        )
    else:
        text = (
            "We could not tell which input leads here: the values the check reads could not be "
            "followed to a flag, a request field, an environment variable, the model, the "
            "platform or a package."
        )
        if r.clues:
            text += " " + _stopped(r.clues[0].text)
    prov: tuple[Provenance, ...] = (
        ("derived:conditions", "derived:flags") if r.flags else ("derived:conditions",)
    )
    return r.audience, Derived(text, prov), evidence


_STOPPED = re.compile(r": (not traced|followed too far|no call(er)? of .*)$")
_STEP = " ← "


_CLAUSE = re.compile(r"^(`?[\w.]+`?) is an? ([^()]+?)(?: \(.*\))?$")
_MARKS = {
    "flag": re.compile(r"--[\w-]|server setting|a flag"),
    "request_field": re.compile(r"request"),
    "environment": re.compile(r"env: |environment variable|network"),
    "model_config": re.compile(r"config\.json|model's configuration|checkpoint|weights"),
    "dependency": re.compile(r"package"),
    "hardware": re.compile(r"hardware|platform|parallel|GPU"),
}
_NAMED = re.compile(r"(`[^`]+`)(:? .*)$")
_THROUGH = re.compile(r", read through `[^`]+`$")
_PLURAL = {"comes": "come", "follows": "follow", "is": "are", "tells": "tell", "tests": "test"}


def _one_per_name(clauses: Iterable[str]) -> list[str]:
    """The clauses, the names that end at the same input said together ("`a` and `b` follow
    from ..."), each name once."""
    groups: dict[str, list[str]] = {}
    seen: set[str] = set()
    for clause in clauses:
        m = _NAMED.match(clause)
        if m is None:
            groups.setdefault(clause, [])
            continue
        name, reason = m.group(1), _THROUGH.sub("", m.group(2))
        if name not in seen:
            seen.add(name)
            groups.setdefault(reason, []).append(name)
    out = []
    for reason, names in groups.items():
        if not names:
            out.append(reason)
            continue
        if len(names) > 1:
            verb, _, more = reason.strip().partition(" ")
            reason = f" {_PLURAL[verb]} {more}" if verb in _PLURAL else reason
        shown = names[:3]
        listed = ", ".join(shown[:-1]) + " and " + shown[-1] if len(shown) > 1 else shown[0]
        out.append(listed + reason)
    return out


def _said_name(clause: str, names: set[str]) -> bool:
    """True when a clause starts with a name already said."""
    m = _NAMED.match(clause)
    return m is not None and m.group(1) in names


def _own_clue(text: str) -> bool:
    """True for a clue of the site's own reading (not a traced chain, nor the trace's note)."""
    return _STEP not in text and not text.startswith("no call of ") and ": " not in text


def _short_clue(text: str) -> str:
    """A chain of names said by its ends: "`x` comes from a server setting (--y)"."""
    parts = text.split(_STEP)
    if len(parts) == 1:
        return text
    first = parts[0].split(": ", 1)[0]
    if _STOPPED.search(parts[-1]):  # not "`x` comes from no call of f shows what it gets"
        return f"{first} was followed until the code no longer shows where it comes from"
    reason = _reason(parts[-1])
    clause = _CLAUSE.match(reason)
    if clause:  # "SGLANG_X is an environment variable (env: ...)": the environment variable
        reason = f"the {clause.group(2)} {clause.group(1)}"
    return f"{first} comes from {reason}"


def _reason(step: str) -> str:
    """What a step ends at: the part after its last ": " outside brackets."""
    depth, cut, quoted = 0, -1, False
    for i, ch in enumerate(step):
        if ch == "`":
            quoted = not quoted
        elif quoted:
            continue
        elif ch in "([{":
            depth += 1
        elif ch in ")]}":
            depth -= 1
        elif ch == ":" and depth == 0 and step[i + 1 : i + 2] == " ":
            cut = i
    return step[cut + 2 :] if cut >= 0 else step


def _stopped(text: str) -> str:
    """Where a trace that found no input stopped, in a sentence."""
    parts = text.split(_STEP)
    first = parts[0].split(": ", 1)[0]
    m = _STOPPED.search(parts[-1])
    reason = m.group(1) if m else ""
    steps = f"{len(parts) - 1} step{'s' if len(parts) != 2 else ''}"
    if reason == "not traced":
        why = "at a call or a name whose value cannot be read from the source"
    elif reason == "followed too far":
        why = "after as many steps as are followed"
    elif reason.startswith("no caller of "):
        name = reason.removeprefix("no caller of ").removesuffix(" found")
        why = f"at {code(name)}, which nothing in this release calls"
    elif reason.startswith("no call of "):
        name = reason.removeprefix("no call of ").removesuffix(" shows what it gets")
        why = f"at {code(name)}, whose calls do not show what they pass"
    else:
        why = "where the source says no more"
    if len(parts) == 1 and not m:  # a note of the trace, not a name it followed
        return text[:1].upper() + text[1:].rstrip(".") + "."
    if len(parts) == 1:
        return f"{first} was followed no further: the trace stopped {why}."
    return f"{first} was followed back {steps}; the trace stopped {why}."


def trigger(
    site: Site, flags: list[Involvement], launch_command: str | None, r: Reading
) -> Derived:
    """The flag combination and state that lead to the raise."""
    needed = [f for f in flags if f.in_condition and f.required]
    either = [f for f in flags if f.in_condition and not f.required]
    flag_texts = {flag_state(f) for f in needed + either}
    state = [
        f.text
        for f in r.facts
        if not any(f.text.startswith(t) for t in flag_texts)
        and not any(x.flag in f.text for x in needed + either)
    ]
    where = f"`{site.qualname}`" if site.qualname not in ("", "<module>") else site.path
    if needed or either:
        args = [a for f in needed if (t := trigger_args(f)) for a in t]
        run = f"`{launch_command} {' '.join(args)}`" if launch_command and args else "a run"
        if needed:
            text = f"Starting {run} with " + " and ".join(_setting(f) for f in needed)
            if either:
                text += ", or with any of: " + "; ".join(_setting(f) for f in either)
        else:
            text = "Starting a run with any of: " + "; ".join(_setting(f) for f in either)
        text += f" reaches {where}"
        text += (", which raises when also " + "; ".join(state) + ".") if state else " and raises."
        return Derived(text, ("derived:flags", "derived:conditions"))
    if state:
        text = f"Reaching {where} when " + "; ".join(state) + "."
    else:
        text = f"Any call that reaches line {site.line} of {where}: no condition guards it."
    return Derived(text, ("derived:conditions",))


def common_situations(
    site: Site, flags: list[Involvement], tl: TimelineFacts | None, project: str, r: Reading
) -> DerivedItems:
    """Situations that lead to the error: flag combination, message category, versions."""
    items: list[str] = []
    prov: list[Provenance] = []
    guarded = [f for f in flags if f.in_condition]
    if guarded:
        items.append("Running with " + " and ".join(_setting(f) for f in guarded) + ".")
        prov.append("derived:flags")
    if r.intent:
        cat = INTENT_WORDS[r.intent]
        items.append(cat[:1].upper() + cat[1:] + ".")
        prov.append("derived:message")
    for i in r.inputs:
        if i.kind == "request_field":
            items.append(f"A request whose {i.name} field this code rejects.")
        elif i.kind == "environment":
            items.append(f"The environment variable {i.name} set (or not) where it starts.")
        else:
            continue
        prov.append("derived:conditions")
    named = [n for n in named_flags(site, flags) if n not in {f.flag for f in guarded}]
    if named:
        items.append(f"Passing {', '.join(named)} (named by the message).")
        prov.append("derived:message")
    shown = [p for p in message.placeholders(site.template) if _value_like(p)]
    if shown and r.intent not in (None, "unsupported", "missing"):
        items.append(f"The value the message prints ({code(shown[0])}) is one this code rejects.")
        prov.append("derived:message")
    if tl is not None and (
        (tl.gone_in is not None and tl.successor is None)
        or (tl.absent_before is not None and tl.predecessor is None)
    ):
        versions = (
            ", ".join(tl.present_in)
            if len(tl.present_in) <= 4
            else (f"{tl.first_seen} to {tl.last_seen}")
        )
        items.append(f"Running {project} {versions}: the ingested versions that raise it.")
        prov.append("derived:history")
    act = activity(site.qualname)
    if not items or act:
        items.append(
            f"While {act}, {_where(site)}." if act else f"Running the code {_where(site)}."
        )
        prov.append("derived:conditions")
    return DerivedItems(tuple(items), tuple(dict.fromkeys(prov)))
