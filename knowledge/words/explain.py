"""What an error means and when it happens, in words derived from its site and flags.

`what_it_means` says where the error is raised, what that code is doing as far as names tell,
and under which conditions (flags named); `trigger` says which flag combination and state lead
there; `common_situations` lists the situations the message, the flags and the history point to.
"""

from __future__ import annotations

from errkb.core.records import Site
from errkb.knowledge.facts import Derived, DerivedItems, Involvement, Provenance, TimelineFacts
from errkb.knowledge.fixes.commands import trigger_args
from errkb.knowledge.origins import notes
from errkb.knowledge.who.evidence import WhoKind as Audience
from errkb.knowledge.words import message
from errkb.knowledge.words.intent import INTENT_WORDS
from errkb.knowledge.words.names import class_name, class_noun, phrase
from errkb.knowledge.words.reading import Reading
from errkb.knowledge.words.wording import activity, code, condition_clauses, flag_state


def _value_like(expr: str) -> bool:
    """A placeholder that prints a value, not a label like `{scope}` or `{name}`."""
    last = expr.rsplit(".", 1)[-1].strip("()")
    return last not in ("scope", "name", "key", "prefix", "label", "cls", "self", "type")


def clauses(site: Site, flags: list[Involvement]) -> list[str]:
    """Every guard of the site as a short clause, outermost first, without repeats."""
    out: list[str] = []
    for cond in site.conditions:
        for c in condition_clauses(cond, flags):
            if c not in out:
                out.append(c)
    return out


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


def _provenance(*parts: tuple[bool, Provenance]) -> tuple[Provenance, ...]:
    return tuple(p for ok, p in parts if ok) or ("derived:conditions",)


def _raised_where(site: Site, glossary: dict[str, str]) -> str:
    """ "Raised while initializing pools in the KV cache configurator": activity and owner."""
    act = activity(site.qualname)
    act = act.replace("`", "") if act else None
    cls = class_name(site.qualname)
    owner = class_noun(site.qualname, glossary) or cls
    named = bool(act and cls and cls in act)  # "constructing SamplingParams" names it already
    the_owner = "the " + owner if owner and owner != cls else owner
    if act and owner and not named and " " not in act:  # `validate`: "validating the X"
        return f"Raised while {act} {the_owner}"
    if act and owner and not named:
        return f"Raised while {act} in {the_owner}"
    if act:
        return f"Raised while {act}"
    func = site.qualname.rsplit(".", 1)[-1]
    if site.qualname in ("", "<module>"):
        return "Raised when the module is imported"
    if not func.strip("_"):  # `_`: a throwaway name, often a function registered by decorator
        outer = [p for p in site.qualname.split(".")[:-1] if p != "<locals>"]
        inside = f" defined in {phrase(outer[-1], glossary)}" if outer else ""
        return f"Raised in a function named {func}{inside}"
    words = phrase(func, glossary)
    # `source_layer_of`: "in source layer of of the pool" would not read; the name does
    where = f"Raised in {func.strip('_') if words.split()[-1] in _TRAILING else words}"
    return where + (f" of {'the ' + owner if owner != cls else owner}" if owner else "")


_TRAILING = frozenset("of to in on by at for from with into".split())
_USER_WORDS = ("--", "the request", "the model", "environment variable", "running on")


def _joined(facts: list[str]) -> str:
    """Facts as one clause: "a, b and c", or "all of these hold: a; b; and c" when long."""
    if len(facts) == 1:
        return facts[0]
    if len(facts) <= 3 and not any("," in f or ";" in f for f in facts):
        return ", ".join(facts[:-1]) + " and " + facts[-1]
    return "all of these hold: " + "; ".join(facts[:-1]) + "; and " + facts[-1]


# A docstring summary this short restates the function's name; it gives no reason.
_SHORT_DOC_WORDS = 5


def _why(site: Site) -> tuple[list[str], list[Provenance]]:
    """Why the check exists: the message's reason, then the source's comment or docstring."""
    out: list[str] = []
    prov: list[Provenance] = []
    why = message.reason(site.template)
    if why:
        out.append(f"The message gives the reason: {why.replace('`', '')}.")
        prov.append("derived:message")
    for text, source in notes.reasons(site):
        if source == "derived:docstring" and len(text.split()) <= _SHORT_DOC_WORDS:
            continue  # "Initialize the memory pools.": the function's name said again
        said = (
            "A comment at the check says"
            if source == "derived:comments"
            else ("The function's documentation says")
        )
        out.append(f"{said}: “{text.replace('`', '')}”")
        prov.append(source)
    return out, prov


def what_it_means(exception: str, site: Site, flags: list[Involvement], r: Reading) -> Derived:
    """What the user was doing (the activity, the inputs the guard tests, in words), why the
    check exists, and what kind of problem the message reports. Code stays out: a test that has
    no words is left to the source shown below it."""
    worded = [f.text for f in r.facts if f.worded]
    worded.sort(key=lambda t: not any(w in t for w in _USER_WORDS))  # the user's part first
    quoted = len(r.facts) - len(worded)
    text = _raised_where(site, r.glossary)
    if worded:
        text += ", when " + _joined(worded)
        text += (
            ", with one more check shown in the source"
            if quoted == 1
            else (f", with {quoted} more checks shown in the source" if quoted else "")
        )
        text += "."
    elif quoted:
        text += ", under a check that is shown in the source."
    else:
        text += ", whenever that code runs: no condition guards the raise."
    prov: list[Provenance] = ["derived:conditions"]
    why, why_prov = _why(site)
    if why:
        text += " " + " ".join(why)
        prov += why_prov
    if r.intent and not worded:  # the kind of problem, when the guard's words do not say it
        text += f" It reports {INTENT_WORDS[r.intent]}."
        prov.append("derived:message")
    named = named_flags(site, flags)
    if named:
        text += f" It names {', '.join(named)}."
        prov.append("derived:message")
    if flags:
        prov.append("derived:flags")
    if r.glossary and any(w in text for w in r.glossary.values()):
        prov.append("derived:glossary")
    return Derived(text, tuple(dict.fromkeys(prov)))


_WHO_LEAD: dict[str, str] = {
    "flag": "A flag you set",
    "request_field": "A field of the request you sent",
    "environment": "An environment variable where the server starts",
    "model_config": "The model you serve: its configuration or weights",
    "dependency": "The installed packages: one is missing or has another version",
    "hardware": "The hardware, platform or parallelism settings in use",
}


def who_hits_it(r: Reading) -> tuple[Audience, Derived, tuple[str, ...]]:
    """The class of who hits it, a sentence saying why, and the evidence (the chains of names)."""
    evidence = tuple(c.text for c in r.clues)
    if r.audience in _WHO_LEAD:
        first = [c.text for c in r.clues if c.kind == r.audience]
        others = [c.text for c in r.clues if c.kind != r.audience]
        text = f"{_WHO_LEAD[r.audience]}: " + "; ".join(first[:3]) + "."
        if others:
            text += " The guard also depends on: " + "; ".join(others[:3]) + "."
    elif r.audience == "test":
        text = (
            f"The project's own tests: {r.clues[0].code} is test code, run by the project's "
            "test suite and not by a server or a program using the library, so it fails when "
            "a test fails."
        )
    elif r.audience == "internal":
        how = r.clues[0].text if r.clues else "the values it compares are the code's own"
        text = (
            "Nobody's input: this is an internal check, and the values it compares are built by "
            f"the code itself ({how}). Reaching it points to a bug, or a case the code did not "
            "expect."
        )
    else:
        text = (
            "We could not tell which input leads here: the values the check reads could not be "
            "followed to a flag, a request field, an environment variable, the model, the "
            "platform or a package."
        )
        if r.clues:
            text += f" Where the trace stopped: {r.clues[0].text}."
    prov: tuple[Provenance, ...] = (
        ("derived:conditions", "derived:flags") if r.flags else ("derived:conditions",)
    )
    return r.audience, Derived(text, prov), evidence


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
