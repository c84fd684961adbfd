"""Version changes as solutions, said only as far as the ingested history shows them.

A release change fixes an error only when the check is gone in that release, so an upgrade is
offered where the timeline shows the error no longer raised, and every claim is bounded by the
releases that were ingested: "appeared between 0.5.20 and 0.5.23", never "first appears in 0.5.23"
when the releases in between were not read. A downgrade is offered as a solution of last resort,
never as an example fix: the older release may lack the feature or the model altogether.
"""

from __future__ import annotations

from collections.abc import Collection

from errkb.knowledge.facts import ExampleFix, Fix, Provenance, TimelineFacts
from errkb.knowledge.words.intent import Intent

_PROV: tuple[Provenance, ...] = ("derived:history",)
# Intents whose check going away means the case became supported (not merely reworded).
_LIFTED: frozenset[Intent] = frozenset({"unsupported"})


def history_fixes(
    tl: TimelineFacts | None, project: str, releases: Collection[str], pypi_name: str | None
) -> tuple[list[Fix], list[Fix]]:
    """(upgrades, downgrades) the timeline supports."""
    if tl is None:
        return [], []
    ups, downs = [], []
    # a check that lives on under another message is not fixed by a version change
    if tl.gone_in is not None and tl.successor is None:
        command = (
            f"pip install '{pypi_name}>={tl.gone_in}'"
            if (pypi_name and tl.gone_in in releases)
            else None
        )
        ups.append(
            Fix(
                "upgrade",
                f"Upgrade to {project} {tl.gone_in} or later: of the ingested releases, "
                f"{tl.last_seen} is the last that raises it and {tl.gone_in} does not.",
                _PROV,
                command=command,
                snapshot=tl.gone_in,
            )
        )
    if tl.absent_before is not None and tl.predecessor is None:
        downs.append(
            Fix(
                "downgrade",
                f"If this appeared after an upgrade: the check appeared between {project} "
                f"{tl.absent_before}, which does not raise it, and {tl.first_seen}. Going back "
                "only helps if that release has the model and the options you use.",
                _PROV,
                snapshot=tl.absent_before,
            )
        )
    return ups, downs


def version_example(
    tl: TimelineFacts | None,
    pypi_name: str | None,
    releases: Collection[str],
    intent: Intent | None,
) -> ExampleFix | None:
    """The install lines of the last ingested release that raises it and of the next, which
    does not, when the check was lifted there (an unsupported case that became supported)."""
    if tl is None or not pypi_name or intent not in _LIFTED or tl.gone_in is None:
        return None
    if tl.successor is not None:
        return None
    if tl.gone_in not in releases or tl.last_seen not in releases:
        return None
    return ExampleFix(
        f"pip install '{pypi_name}=={tl.last_seen}'",
        f"pip install '{pypi_name}>={tl.gone_in}'",
        f"The check is gone in {tl.gone_in}: of the ingested releases, {tl.last_seen} is the "
        f"last that raises it and {tl.gone_in} the first that does not (the case it rejected "
        "is no longer refused there).",
        _PROV,
    )
