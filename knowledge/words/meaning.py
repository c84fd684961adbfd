"""What an error means, in the user's terms: what they did or have, and why the code refuses it.

The first sentence is said from who hits it and the inputs the value-origin index reached ("You
started the server with --enable-unified-memory", "Your request set rollout", "Your model's
config.json sets hidden_size"); an internal check says plainly that the user's input did not
break it. Then the message's own words, the comment at the check and the docstring say why. The
list of conditions is not repeated here: the entry shows it under its own heading.
"""

from __future__ import annotations

import re
from fnmatch import fnmatchcase

from errkb.core.origin import NEVER_RUNS, UNIMPLEMENTED
from errkb.core.records import Site
from errkb.knowledge.facts import Derived, Involvement, Provenance
from errkb.knowledge.origins import notes
from errkb.knowledge.origins.hardware import stated as hardware_stated
from errkb.knowledge.origins.inputs import is_config_field
from errkb.knowledge.who.said import MEMORY_SAID, REQUEST_DATA_REFUSED, message_flags
from errkb.knowledge.words import message
from errkb.knowledge.words.reading import Reading

MAX_NAMED = 3  # inputs named in one sentence
_SHORT_DOC_WORDS = 5  # a docstring this short restates the function's name


def _listed(names: list[str], last: str = "and") -> str:
    names = list(dict.fromkeys(names))[:MAX_NAMED]
    return names[0] if len(names) == 1 else ", ".join(names[:-1]) + f" {last} " + names[-1]


# The exceptions a failed reading of a value raises: a site raised while handling one reports
# a value that could not be read
_UNREADABLE = re.compile(r"DecodeError|ParseError|ValueError|TypeError|SyntaxError|YAMLError|TOML")


def _code(name: str) -> str:
    """A name as "what it means" says it: plain (the entry's code lives under other headings)."""
    return name


def inputs_of(site: Site, r: Reading, flags: list[Involvement]) -> dict[str, list[str]]:
    """The user-facing inputs that lead here, by class: the index's first, then the flags the
    ingester linked to the guard and the inputs the site's own names show."""
    out: dict[str, list[str]] = {}
    origin = site.origin
    prefixes = {
        "request": "request_field",
        "env": "environment",
        "config.json": "model_config",
        "file": "model_config",
        "hardware": "hardware",
        "package": "dependency",
        "network": "environment",
    }
    for name in origin.inputs if origin is not None else ():
        kind, _, value = name.partition(": ")
        if name.startswith("--"):
            out.setdefault("flag", []).append(name)
        elif kind == "config.json" and not is_config_field(name):
            continue  # the whole configuration object, not a field of it
        elif kind in prefixes and value:
            out.setdefault(prefixes[kind], []).append(value)
    for f in flags:
        if f.in_condition and f.cli:
            out.setdefault("flag", []).append(f.flag)
    for i in r.inputs:
        # `get_device_capability`, `is_cuda`: a test of the machine, said as what it tests
        name = _PLATFORM if i.kind == "hardware" else i.name
        out.setdefault(i.kind, []).append(name)
    return {k: list(dict.fromkeys(v)) for k, v in out.items()}


_PLATFORM = "the GPU or platform"
_SYSTEM = "the operating system or CPU"  # `sys.platform`, `platform.machine()`


def named_inputs(
    site: Site, r: Reading, flags: list[Involvement], path_flags: tuple[tuple[str, str], ...] = ()
) -> tuple[str, ...]:
    """Every input that leads here by its user-facing name, the who class's own first, then
    those that choose the code path (for an internal check, the way around it)."""
    found = inputs_of(site, r, flags)
    prefix = {
        "request_field": "request: ",
        "environment": "env: ",
        "model_config": "config.json: ",
        "dependency": "package: ",
    }
    order = sorted(found, key=lambda k: k != r.audience)
    names = [
        n
        if n.startswith(("--", "the ")) or k not in prefix or n.endswith(".json")
        else prefix[k] + n
        for k in order
        for n in found[k]
        if n.strip()
    ]
    if site.origin is not None:
        names += [n for n in site.origin.path_inputs if not n.startswith("hardware: ")]
    if r.audience == "internal":
        chooser = next((f for g, f in path_flags if fnmatchcase(site.path, g)), None)
        names += [chooser.split("=")[0]] if chooser else []
    return tuple(dict.fromkeys(names))


def lead(site: Site, r: Reading, flags: list[Involvement], project: str) -> str:
    """The first sentence: what the user did or has that leads here, or that they did not."""
    found = inputs_of(site, r, flags)
    names = [n for n in dict.fromkeys(found.get(r.audience, [])) if n.strip()]
    if r.audience == "internal":
        return _internal_lead(site, project)
    if r.audience == "test":
        return (
            f"This check is part of {project}'s own test code: it fails when one of its tests "
            "fails, not while a server or a program using the library runs."
        )
    if r.audience == "flag":
        return _flag_lead(site, names, project)
    if r.audience == "request_field":
        if names:
            fields = _listed([_code(n) for n in names])
            return f"Your request set {fields} to something this code does not accept."
        if any(c.text == REQUEST_DATA_REFUSED for c in r.clues):
            return (
                "The image, video or audio your request sent (or linked to) is too large for "
                "this code, or could not be read."
            )
        return "A field of the request you sent has a value this code does not accept."
    if r.audience == "environment":
        return _environment_lead(r, names, project)
    if r.audience == "model_config":
        if names:
            fields = _listed([_code(n) for n in names])
            return (
                f"The model you serve has a configuration this code does not accept: {fields} "
                "in its config.json."
            )
        return "The model you serve has a configuration or weights this code does not accept."
    if r.audience == "hardware":
        if any(c.text == MEMORY_SAID for c in r.clues):
            return (
                "The server ran out of memory here: what it was asked to hold at once (the "
                "requests and tokens in flight) did not fit in the GPU memory set aside for it."
            )
        if names in ([_PLATFORM], [_SYSTEM]):
            message_need = hardware_stated(site.template)
            return (
                f"The {names[0].removeprefix('the ')} you run on is not one this code supports"
                + ("." if message_need else ", as the check below shows.")
            )
        if names == ["the parallelism sizes"]:
            return (
                "The way you split the model over GPUs (the tensor, data, expert or pipeline "
                "parallel sizes) does not fit what this code needs."
            )
        if names:
            return (
                f"The hardware or parallelism you run with is not what this code supports "
                f"({_listed(names)})."
            )
        return (
            "The GPU, platform or parallelism sizes you run with are not what this code supports."
        )
    if r.audience == "dependency":
        if names:
            noun = "package" if len(names) == 1 else "packages"
            return (
                f"The installed {noun} {_listed(names)} lead{'s' if len(names) == 1 else ''} "
                "here: missing, at a version this code does not expect, or giving back a result "
                "it cannot use."
            )
        return (
            "An installed package leads here: it is missing, or at a version this code does not "
            "expect."
        )
    return (
        "We could not tell which of your inputs leads here: the values the check reads could "
        "not be followed to a flag, a request, the environment, the model or the platform."
    )


def _plain(name: str) -> str:
    kind, _, value = name.partition(": ")
    if kind == "env":
        return f"the environment variable {value}"
    if kind == "request":
        return f"the request's {value}"
    if kind == "hardware":
        return value
    if kind == "package":
        return f"the package behind {value}"
    if kind in ("config.json", "file"):
        return f"the model's {value}" if kind == "config.json" else f"the model's {value} file"
    return name


def why(site: Site) -> tuple[list[str], list[Provenance]]:
    """Why the check exists: the message's reason, then the source's comment or docstring."""
    out: list[str] = []
    prov: list[Provenance] = []
    said = message.reason(site.template)
    if said:
        out.append(f"The message gives the reason: {said.replace('`', '')}.")
        prov.append("derived:message")
    for text, source in notes.reasons(site):
        if source == "derived:docstring" and len(text.split()) <= _SHORT_DOC_WORDS:
            continue
        who = (
            "A comment at the check says"
            if source == "derived:comments"
            else "The function that raises it is documented as"
        )
        out.append(f"{who}: “{text.replace('`', '')}”")
        prov.append(source)
    return out, prov


def _first_sentence(said: list[str]) -> str:
    """The message's first whole sentence: a clause ending in ";" runs on into the next one
    ("X cannot run this setup; expected one of ('a', 'b')")."""
    out: list[str] = []
    for s in said:
        out.append(s)
        if not s.endswith(";"):
            break
    return " ".join(out)


def _environment_lead(r: Reading, names: list[str], project: str) -> str:
    """The first sentence when an environment variable (or the network) leads here."""
    told = [c.code for c in r.clues if c.text.startswith("the message says to set ")]
    if told:
        return (
            f"What you asked for works here only with {_listed(told)} set where {project} "
            "starts, and the message says which value to give it."
        )
    if "the network connection" in names:
        return (
            "A connection from this machine failed (a download, or another server it talks "
            "to), and the code gave up: the network where it runs leads here, not a setting."
        )
    if names:
        one = len(names) == 1
        return (
            f"The environment variable{'' if one else 's'} {_listed(names)}, as set where "
            f"{project} starts, {'has a value' if one else 'have values'} this code does "
            "not accept."
        )
    return f"An environment variable set where {project} starts is refused here."


def _internal_lead(site: Site, project: str) -> str:
    """The first sentence of an internal check: a bug, a method left unimplemented, or a check
    that never runs."""
    path = [n for n in (site.origin.path_inputs if site.origin else ()) if n]
    chain = site.origin.chain if site.origin else ()
    if chain[:1] == (NEVER_RUNS,):
        return (
            f"This check never runs: it sits under `if TYPE_CHECKING:`, which is true only "
            f"for a type checker, so {project} skips it when it runs. An error with this text "
            "comes from another place."
        )
    if UNIMPLEMENTED in chain:
        text = (
            f"No value you gave broke a check here: {project} called a method that the "
            "class in use leaves unimplemented, so this points to a gap in "
            f"{project} for your setup."
        )
        if path:
            text += f" Which class is used is chosen by {_listed([_plain(p) for p in path])}."
        return text
    text = (
        f"This is a check inside {project}, and your input did not break it: the values it "
        f"compares are built by {project} itself, so reaching it points to a bug in "
        f"{project} (or a case its code did not expect)."
    )
    if path:
        text += f" The code path is chosen by {_listed([_plain(p) for p in path])}."
    return text


def _flag_lead(site: Site, names: list[str], project: str) -> str:
    """The first sentence when a flag leads here: the flags named, or the one the message names."""
    if names and any(c.kind == "except" and _UNREADABLE.search(c.expr) for c in site.conditions):
        # raised where reading a value failed (`json.JSONDecodeError` caught): the value
        # given is malformed, not a combination refused
        given = _listed(names, "or")
        return f"The value you gave {given} when you started {project} could not be read."
    if names:
        what = "that setting" if len(names) == 1 else "that combination"
        return f"You started {project} with {_listed(names)}, and this code refuses {what}."
    named = message_flags(site.template.literal_text)
    if named:
        return f"The value you gave {named[0]} when you started {project} is refused here."
    return f"A setting you started {project} with is refused here."


def what_it_means(site: Site, flags: list[Involvement], r: Reading, project: str) -> Derived:
    """One or two sentences in the user's terms, then the reason the source gives."""
    text = lead(site, r, flags, project)
    prov: list[Provenance] = ["derived:conditions"]
    shown = message.display(site.template).strip()
    said = message.sentences(shown)
    if site.template.literal_text.strip() and not message.reason(site.template):
        first = _first_sentence(said) or shown
        if len(first) <= 200:
            end = "" if first.endswith(("?", "!")) else "."
            text += f" The message says: “{first.rstrip('.;:, ')}{end}”"
            prov.append("derived:message")
    reasons, more = why(site)
    if reasons:
        text += " " + " ".join(reasons[:2])
        prov += more
    if site.origin is not None and site.origin.caught:
        logs = "logs it" in site.origin.caught
        text += f" Its callers catch it ({site.origin.caught}): " + (
            "you see it in the log as a warning or a failed request, not as a crash."
            if logs
            else "it does not stop the program; the code goes on without it."
        )
    if site.origin is not None and site.origin.callers == 0 and r.audience not in ("test",):
        text += (
            " No call of this function was found elsewhere in this release, so it may not be "
            "reachable from a running server."
        )
    if flags:
        prov.append("derived:flags")
    return Derived(text, tuple(dict.fromkeys(prov)))
