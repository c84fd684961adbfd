"""The MCP answers as compact Markdown, the form a model reads best.

Each answer has a budget (about 2 KB for the matches, 8 KB for an entry): long fields are cut,
lists are capped, and every answer ends with the link to the full page, where nothing is cut.
"""

from __future__ import annotations

from errkb.service.mcp.answers import ErrorDetails, MatchAnswer, SearchAnswer
from errkb.service.mcp.texts import cut

ENTRY_BUDGET = 8000
MATCH_BUDGET = 2000
TEST_CODE = "Test code: raised only in sglang's own tests, not by the code a server runs."


def _fence(text: str) -> str:
    """A code block that a backtick run inside `text` cannot close."""
    ticks = "```"
    while ticks in text:
        ticks += "`"
    return f"{ticks}\n{text}\n{ticks}"


def _solutions(d: ErrorDetails) -> list[str]:
    lines = ["## Solutions, in the order to try them"]
    for i, s in enumerate(d.solutions[:6], 1):
        command = f" Command: `{s.command}`." if s.command else ""
        lines.append(f"{i}. {cut(s.text, 400)}{command}")
    if d.example_fix:
        fix = d.example_fix
        lines += ["", "Example fix, before:", _fence(cut(fix.before, 600))]
        lines += ["after:", _fence(cut(fix.after, 600))]
        if fix.note:
            lines.append(cut(fix.note, 500))
    return lines


def error_markdown(d: ErrorDetails) -> str:
    """The entry of one error in at most `ENTRY_BUDGET` characters."""
    head = [
        f"# {d.exception}: {cut(d.message, 600)}",
        f"Error `{d.id}` of {d.repo}. {d.versions.summary}",
        *([TEST_CODE] if d.test_code else []),
        "",
        "## What it means",
        cut(d.what_it_means, 1200),
        "",
        "## When it is raised",
        cut(d.trigger, 800),
    ]
    head += [f"- {cut(s, 200)}" for s in d.common_situations[:4]]
    if d.who_hits_it:
        head += ["", f"## Who hits it ({d.who_hits_it.kind})", cut(d.who_hits_it.text, 400)]
    runs = [r.first if r.versions == 1 else f"{r.first} to {r.last}" for r in d.versions.ranges]
    tail = ["", "## Versions", f"Raised in: {', '.join(runs[-12:])}"]
    if len(runs) > 12:
        tail[-1] += f" (the newest 12 runs of {len(runs)})"
    if d.source:
        src = d.source
        sites = f" (1 of {d.sites_total} raise sites)" if d.sites_total > 1 else ""
        tail += [
            "",
            "## Source",
            f"`{src.path}:{src.line}` in `{src.function}` ({src.snapshot}){sites}",
        ]
        if src.url:
            tail.append(src.url)
    if d.related:
        shown = len(d.related)
        more = f" ({shown} of {d.related_total})" if d.related_total > shown else ""
        tail += ["", f"## Related errors{more}"]
        tail += [f"- `{r.id}` {cut(r.title, 120)} ({r.reason})" for r in d.related]
    if d.page_url:
        tail += ["", f"Full page: {d.page_url}", f"JSON: {d.json_url}"]
    body = "\n".join([*head, "", *_solutions(d), *tail])
    if len(body) > ENTRY_BUDGET:  # only with extreme fields: keep the end, the links
        keep = "\n".join(tail)
        body = body[: ENTRY_BUDGET - len(keep) - 3].rstrip() + "…\n" + keep
    return body


def match_markdown(answer: MatchAnswer) -> str:
    """The matches in at most `MATCH_BUDGET` characters, each with the way to its entry."""
    if not answer.matches:
        found = "No known error matches this text. "
        hint = "If it comes from sglang, try search_errors with words from its message."
        return found + hint + (f" {answer.note}" if answer.note else "")
    lines = [_headline(answer)]
    if answer.note:
        lines.append(answer.note)
    for m in answer.matches:
        label = "match" if m.confidence == "match" else "weak guess"
        item = [
            "",
            f"## `{m.id}` {m.exception} (score {m.score:.2f}, {label})",
            cut(m.message, 240),
            f"{m.raised_in}.",
        ]
        if m.test_code:
            item.append(TEST_CODE)
        if m.site:
            s = m.site
            item.append(f"Raised at `{s.path}:{s.line}` in `{s.function}`.")
        if m.who_hits_it:
            item.append(f"Who hits it: {cut(m.who_hits_it, 160)}")
        item.append(f"First thing to try: {cut(m.first_solution, 240)}")
        if m.page_url:
            item.append(f"Page: {m.page_url}")
        if len("\n".join(lines + item)) > MATCH_BUDGET - 120:
            lines.append("\n(more matches left out: ask for fewer or read the pages)")
            break
        lines += item
    lines.append("\nCall get_error with an id for the full entry.")
    return "\n".join(lines)


def _headline(answer: MatchAnswer) -> str:
    """ "1 match, 2 weak guesses, best first:" on the documented score scale."""
    sure = sum(1 for m in answer.matches if m.confidence == "match")
    weak = len(answer.matches) - sure
    parts = []
    if sure:
        parts.append(f"{sure} match" + ("es" if sure > 1 else ""))
    if weak:
        parts.append(f"{weak} weak guess" + ("es" if weak > 1 else ""))
    tail = "best first" if sure else "no confident match (scores under 0.5)"
    return f"{', '.join(parts)}, {tail}:"


def search_markdown(answer: SearchAnswer) -> str:
    """The hits of a search, one line each: the message, or an assert's title, and its place."""
    notes = [*answer.notes]
    if not answer.items:
        return " ".join([*notes, "No error matches this search: try fewer or other words."])
    lines = [*notes, f"{answer.total} error(s) found; the first {len(answer.items)}:"]
    for h in answer.items:
        newest = h.versions[-1] if h.versions else "?"
        said = cut(h.message, 200) if h.message.strip() else cut(h.title, 200)
        place = f" at `{h.where}`" if h.where else ""
        test = " (test code)" if h.test_code else ""
        lines.append(f"- `{h.id}` {h.exception}: {said}{test}{place} (newest: {newest})")
    lines.append("Call get_error with an id for the full entry.")
    return "\n".join(lines)
