"""Solutions and the example fix, derived from the message, the flags, the evidence and history.

Order: a note when the code around the raise catches the error (the user sees a warning, not a
crash); for a proven internal invariant, the report upstream; then the message's own advice, the
fixes of the cause the evidence points to (`knowledge.who.evidence`: a flag, a request field, an
environment variable, the model, a package, the hardware), the other inputs' fixes, and the
upgrade the timeline shows. When nothing names a way out, the entry says what is known (the guard
that must stop holding, the value the message reports) instead of inventing a fix, and reporting
it upstream comes last. The example fix is the user's own input before and after; a release
change only where the check was lifted (`knowledge.fixes.versions`).
"""

from __future__ import annotations

import re
from collections.abc import Collection

from errkb.core.records import Site, Vocabulary
from errkb.knowledge.facts import ExampleFix, Fix, Involvement, Provenance, TimelineFacts
from errkb.knowledge.fixes import cause_fixes, input_examples, input_fixes, origin_fixes, versions
from errkb.knowledge.fixes.advice_example import advice_example
from errkb.knowledge.fixes.commands import ANY_VALUE, escape, trigger_args
from errkb.knowledge.fixes.flag_fixes import flag_fixes_of
from errkb.knowledge.origins import environment
from errkb.knowledge.origins.requirements import requirement_example
from errkb.knowledge.who import swallowed, test_suite
from errkb.knowledge.words import message
from errkb.knowledge.words.reading import Reading, read_site
from errkb.knowledge.words.wording import (
    condition_clauses,
    flag_state,
)


def _capitalized(text: str) -> str:
    """Capitalise a sentence, unless it starts with a name (`seconds_per_frame`, `--flag`)."""
    first = text.split(" ", 1)[0].strip("'\"`(")
    if not first or "_" in first or first.startswith("-") or not first.isalpha():
        return text
    if any(c.isupper() for c in first[1:]):
        return text
    return text[:1].upper() + text[1:]


def _environment_fixes(site: Site) -> list[Fix]:
    """Environment variables the guard reads or the message names: a lead, said as such."""
    read = environment.read_by_guard(site.conditions)
    named = [n for n in environment.named_in_message(site.template) if n not in read]
    out = []
    if read:
        out.append(
            Fix(
                "condition",
                "The guard reads the environment variable"
                + ("s " if len(read) > 1 else " ")
                + ", ".join(read)
                + ": check how it is set where the process starts.",
                ("derived:conditions",),
            )
        )
    if named:
        out.append(
            Fix(
                "condition",
                "The message names " + ", ".join(named) + ": if that is an environment variable "
                "or setting of yours, check its value.",
                ("derived:message",),
            )
        )
    return out


# a placeholder that is an expression, not a name (`{[t.name for t in cls]}`): what it prints is
# a list the message shows, not words of the advice
_LISTED = re.compile(r"\{[^{}]*[^\w.{}!:][^{}]*\}")
_MESSAGE: tuple[Provenance, ...] = ("derived:message",)
# a placeholder glued after the sentence's end ("increase --mem-fraction-static.{msg}"): more
# text the message prints, not words of the advice
_TRAILING = re.compile(r"(?<=[.!?])\{[^{}]*\}$")


def solutions(
    site: Site,
    flags: list[Involvement],
    tl: TimelineFacts | None,
    *,
    exception: str,
    project: str,
    releases: Collection[str] = (),
    pypi_name: str | None = None,
    reading: Reading | None = None,
    launch_command: str | None = None,
    path_flags: tuple[tuple[str, str], ...] = (),
) -> list[Fix]:
    """Every solution, concrete ones first; never empty."""
    r = reading or read_site(site, flags, Vocabulary())
    advice = [
        Fix(
            "advice",
            _capitalized(_LISTED.sub("the values the message lists", _TRAILING.sub("", s))),
            _MESSAGE,
        )
        for s in message.advice(site.template)
    ]
    asked = input_fixes.asked_of(r)  # the message's first sentence, quoted by the fixes
    flag_fixes = flag_fixes_of(flags, r.resolved, site.template.literal_text, asked)
    by_cause: dict[str, list[Fix]] = {
        "flag": flag_fixes,
        "request_field": input_fixes.request_fixes(r),
        "environment": input_fixes.environment_fixes(r, launch_command),
        "model_config": cause_fixes.model_fixes(r),
        "dependency": cause_fixes.dependency_fixes(r),
        "hardware": cause_fixes.hardware_fixes(r),
    }
    if r.audience in by_cause and not by_cause[r.audience]:
        # the cause's inputs as the index reached them (a flag read through a settings
        # accessor, not linked to the guard), before any other class's fixes
        kind = "model" if r.audience == "model_config" else r.audience
        by_cause[r.audience] = [
            f for f in origin_fixes.input_fixes(site.origin, project, asked) if f.kind == kind
        ]
    # the fixes of the cause the evidence points to first, then the others in their order
    order = sorted(by_cause, key=lambda k: k != r.audience)
    inputs = [f for k in order if k != "flag" for f in by_cause[k]]
    ups, downs = versions.history_fixes(tl, project, releases, pypi_name)
    if r.audience == "test":  # a test failed: what that means first, no server input
        return [test_suite.test_suite_fix(site.path, project), *advice, *ups]
    if r.audience == "internal":  # proven: the code's own state, so it goes upstream first
        out = [cause_fixes.report_fix(r, project, first=True)]
        out += origin_fixes.workaround_fixes(site.origin, project, site.path, path_flags)
        out += [*advice, *ups]
    else:
        out = advice + [f for k in order for f in by_cause[k]]
        if not out:  # the inputs the index reached, when nothing more specific names one
            out = origin_fixes.input_fixes(site.origin, project, asked)
        out += ups
    if not any(f.kind == "environment" for f in inputs):
        out += _environment_fixes(site)
    if r.audience != "internal":
        out.append(cause_fixes.report_fix(r, project, first=False, alone=not out))
    quiet = swallowed.swallowed_fix(site) or origin_fixes.caught_fix(site.origin)
    return ([quiet] if quiet else []) + out + downs


def example_fix(
    site: Site,
    flags: list[Involvement],
    launch_command: str | None,
    reading: Reading | None = None,
    *,
    tl: TimelineFacts | None = None,
    pypi_name: str | None = None,
    releases: Collection[str] = (),
) -> ExampleFix | None:
    """Before/after: the flags the guard tests, the flag change the message advises, a request
    body, an environment line, the package version the code requires, or the release to move
    to."""
    found = _flag_example(site, flags, launch_command, reading)
    if found is None:  # the change the message itself advises, when it names a flag
        found = advice_example(site.template, flags, launch_command)
    if found is None and reading is not None:
        found = (
            input_fixes.request_example(reading)
            or input_examples.request_value_example(reading)
            or input_fixes.environment_example(reading, launch_command)
            or input_examples.environment_value_example(reading, launch_command)
        )
    if found is None and reading is not None and (req := cause_fixes.requirement(reading)):
        found = requirement_example(req)  # the package version the code requires
    intent = reading.intent if reading is not None else None
    return found or versions.version_example(tl, pypi_name, releases, intent)


def _other_facts(site: Site, flags: list[Involvement], reading: Reading | None) -> list[str]:
    """What else the guard needs besides the command line's flags: the facts in words when
    the site was read (`reading`), else the conditions' clauses."""
    named = [f.flag for f in flags if f.in_condition]
    if reading is not None:
        return [
            fact.text
            for fact in reading.facts
            if not any(re.search(rf"{re.escape(flag)}\b", fact.text) for flag in named)
        ]
    return [
        c
        for cond in site.conditions
        for c in condition_clauses(cond, flags)
        if not any(c.startswith(flag + " ") for flag in named)
    ]


def _flag_example(
    site: Site, flags: list[Involvement], launch_command: str | None, reading: Reading | None
) -> ExampleFix | None:
    """Before/after command lines: before sets the flags so the guard holds, after escapes it."""
    guarded = [f for f in flags if f.in_condition and f.required and f.cli]
    if not guarded:
        return None
    args: dict[str, tuple[str, ...]] = {}
    unset: list[Involvement] = []  # needed by the guard, but no value can be derived for them
    for f in guarded:
        trig = trigger_args(f)
        if trig is None:
            unset.append(f)
        else:
            args[f.dest] = trig
    guarded = [f for f in guarded if f.dest in args]
    fix = next(((f, e) for f in guarded if (e := escape(f)) is not None), None)
    if fix is None:
        return None
    flag, esc = fix
    after = dict(args)
    after[flag.dest] = esc.args
    launch = launch_command or "<launch command>"
    before_cmd = " ".join([launch, *(a for v in args.values() for a in v)])
    after_cmd = " ".join([launch, *(a for v in after.values() for a in v)])
    if before_cmd == after_cmd:
        return None
    others = _other_facts(site, flags, reading)
    notes = [f"After: {esc.text[:1].lower() + esc.text[1:]}, so the guard no longer holds."]
    if unset:
        notes.append("Before also needs " + "; ".join(flag_state(f) for f in unset) + ".")
    if others:
        notes.append(
            "The error also needs what the command line does not set: "
            + "; ".join(others[:4])
            + ("; …" if len(others) > 4 else "")
            + "."
        )
    if ANY_VALUE in before_cmd + after_cmd:
        notes.append(f"{ANY_VALUE} stands for any value the guard accepts.")
    return ExampleFix(
        before_cmd, after_cmd, " ".join(notes), ("derived:flags", "derived:conditions")
    )
