"""What an error means and when it happens, in words derived from its site and flags.

`what_it_means` says where the error is raised, what that code is doing as far as names tell,
and under which conditions (flags named); `trigger` says which flag combination and state lead
there; `common_situations` lists the situations the message, the flags and the history point to.
"""

from __future__ import annotations

from errkb.core.records import Site
from errkb.knowledge import message
from errkb.knowledge.commands import trigger_args
from errkb.knowledge.facts import Derived, DerivedItems, Involvement, Provenance, TimelineFacts
from errkb.knowledge.wording import activity, code, condition_clauses, flag_state


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


def what_it_means(exception: str, site: Site, flags: list[Involvement]) -> Derived:
    """Where it is raised, what that code does (from names), under which conditions."""
    act = activity(site.qualname)
    cl = clauses(site, flags)
    text = f"This {exception} is raised {_where(site)}" + (f", while {act}" if act else "")
    if len(cl) == 1:
        text += f", when {cl[0]}."
    elif cl:
        text += ", when all of these hold: " + "; ".join(cl) + "."
    else:
        text += ". No condition guards the raise: it is raised whenever that line is reached."
    cat = message.category(site.template)
    if cat:
        text += f" The message reports {cat}."
    named = named_flags(site, flags)
    if named:
        text += f" It names {', '.join(named)}."
    shown = message.placeholders(site.template)
    if shown:
        text += " It prints " + ", ".join(code(s) for s in shown[:4]) + "."
    return Derived(
        text,
        _provenance(
            (True, "derived:conditions"),
            (bool(flags), "derived:flags"),
            (bool(cat or named or shown), "derived:message"),
        ),
    )


def trigger(site: Site, flags: list[Involvement], launch_command: str | None) -> Derived:
    """The flag combination and state that lead to the raise."""
    needed = [f for f in flags if f.in_condition and f.required]
    either = [f for f in flags if f.in_condition and not f.required]
    flag_texts = {flag_state(f) for f in needed + either}
    state = [c for c in clauses(site, flags) if not any(c.startswith(t) for t in flag_texts)]
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
    site: Site, flags: list[Involvement], tl: TimelineFacts | None, project: str
) -> DerivedItems:
    """Situations that lead to the error: flag combination, message category, versions."""
    items: list[str] = []
    prov: list[Provenance] = []
    guarded = [f for f in flags if f.in_condition]
    if guarded:
        items.append("Running with " + " and ".join(_setting(f) for f in guarded) + ".")
        prov.append("derived:flags")
    cat = message.category(site.template)
    if cat:
        items.append(cat[:1].upper() + cat[1:] + ".")
        prov.append("derived:message")
    named = [n for n in named_flags(site, flags) if n not in {f.flag for f in guarded}]
    if named:
        items.append(f"Passing {', '.join(named)} (named by the message).")
        prov.append("derived:message")
    shown = message.placeholders(site.template)
    if shown:
        items.append(
            f"A value of {code(shown[0])} this code does not accept (the message prints it)."
        )
        prov.append("derived:message")
    if tl is not None and (tl.gone_in is not None or tl.absent_before is not None):
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
