"""Benchmark of the explanations' quality over every entry of the default pins.

Prints, over all errors of the pinned releases (each explained from its newest snapshot, as
`GET /api/errors/{id}` shows it):
- the code share of "what it means": characters inside backticks / all characters (goal <= 10%);
- the share with at least one concrete solution: a flag, request field, environment variable,
  model or hardware, version change, the message's own advice, or a report upstream for an
  internal invariant (goal >= 95%);
- the share with only the generic solution (goal <= 5%);
- the share with an example fix (goal >= 25%);
- the share in each "who hits it" class, and how many entries have each kind of solution;
- the share whose first solution is "report upstream", and how many of those are not classed
  internal (goal: 0; internal itself <= 25%);
- the share of example fixes that are version changes (goal <= 3%), and how many of them are not
  backed by a history fact;
- spurious flag links: flag solutions saying "the guard tests" code that does not read the flag
  (goal 0), and the generic "a model / platform this code supports" sentences (goal 0);
- outside the project's tests: the "could not tell" share of who hits it (goal <= 10%), the
  retired template frames in "what it means" (goal <= 1%), and first solutions that restate the
  check (goal 0).

Usage: .venv/bin/python bench/knowledge.py [--db URL]
Without --db it uses the tests' shared knowledge base of the default pins (built when missing).
"""

from __future__ import annotations

import argparse
import re
import sys
import time
from collections import Counter
from pathlib import Path
from typing import get_args

from sqlalchemy import select

from errkb.core.db import make_engine, session_factory
from errkb.core.models import Snapshot
from errkb.knowledge.facts import FixKind
from errkb.service.entries.facts import snapshot_explanations
from errkb.service.entries.schemas import ExplanationOut

ROOT = Path(__file__).resolve().parent.parent
# every kind of solution but the generic "condition" one
CONCRETE = set(get_args(FixKind)) - {"condition"}
_TICKS = re.compile(r"`[^`]*`")
_READS_AS = re.compile(r"the code reads it as (\w+)\)")
_GENERIC = ("Use a model this code supports", "Run on a platform")


def newest_explanations(url: str) -> dict[str, ExplanationOut]:
    """Every error's explanation from the newest snapshot that raises it."""
    engine = make_engine(url)
    out: dict[str, ExplanationOut] = {}
    with session_factory(engine)() as session:
        labels = session.scalars(select(Snapshot.label).order_by(Snapshot.sort_key, Snapshot.id))
        for label in list(labels):
            for error, ex in snapshot_explanations(session, label):
                out[error.id] = ex
    engine.dispose()
    return out


def example_source(ex: ExplanationOut) -> str:
    """Which input the example fix changes: flags, a request body, the environment, a release."""
    fix = ex.example_fix
    assert fix is not None
    if "derived:history" in fix.provenance:
        return "the version history"
    if fix.before.startswith("{"):
        return "a request field"
    if "=1 " in fix.before + fix.after:
        return "the environment"
    return "flags"


def defect_counts(entries: dict[str, ExplanationOut]) -> Counter[str]:
    """How many entries show each prose defect pattern (see tests/knowledge_checks.py)."""
    from knowledge_checks import defects

    counts: Counter[str] = Counter()
    for ex in entries.values():
        counts.update(defects(ex).keys())
    return counts


def print_defects(entries: dict[str, ExplanationOut]) -> None:
    """The defect counts over every entry, each with its target."""
    from knowledge_checks import DEFECTS

    counts = defect_counts(entries)
    print("prose defects (entries showing each; goal 0):")
    for name in DEFECTS:
        print(f"  {name:28} {share(counts[name], len(entries))}")


def spurious_flag_link(text: str, flag: str | None) -> bool:
    """A flag solution quoting a guard that does not read the flag (nor a local holding it)."""
    if not flag or "the guard tests" not in text:
        return False
    quoted = _TICKS.findall(text.split("the guard tests", 1)[1].split(f". {flag}:", 1)[0])
    named = _READS_AS.search(text)  # a flag whose field has another name
    dest = named.group(1) if named else flag.lstrip("-").replace("-", "_")
    return not any(dest in q for q in quoted)


_PINNED = re.compile(r"\b([A-Za-z][\w.-]*)(?:\[[^\]]*\])?==([\w.+-]+)")  # extras: sglang[ray]


def version_example(ex: ExplanationOut) -> tuple[bool, bool]:
    """(the example fix is a version change, it is backed by a history fact). A failed import's
    fix keeps the release and adds the package it needs (`pip install 'sglang==0.5.23'
    'openai==2.8.0'`): no version change."""
    fix = ex.example_fix
    if fix is None or not fix.before.startswith("pip install"):
        return False, False
    before, after = dict(_PINNED.findall(fix.before)), dict(_PINNED.findall(fix.after))
    if all(after.get(name) == version for name, version in before.items()):
        return False, False  # the releases pinned before stay: a package is added
    return True, "derived:history" in fix.provenance and "gone in" in (fix.note or "")


def print_targets(
    total: int, report_first: int, report_not_internal: int, versions: int, unbacked: int
) -> None:
    """The report-first and version-change figures against their goals."""
    print(f"first solution 'report upstream': {share(report_first, total)}")
    print(f"  of those not classed internal: {report_not_internal} (goal 0)")
    print(f"version-change example fixes:   {share(versions, total)} (goal <= 3%)")
    print(f"  of those without a history fact: {unbacked} (goal 0)")


# Template frames of "what it means" that issue 44 retired (goal: at most 1% of entries), and
# first solutions that restate the check instead of changing an input (goal 0).
_FRAMES = re.compile(
    r"with (one|\d+) more checks? shown in the source|under a check that is shown in the source|"
    r"^Raised in \w[\w ]* of |Meet the requirement the message states|must stop holding"
)
_RESTATES = re.compile(r"Meet the requirement|must stop holding|Nothing in the code names a fix")


def print_issue_44(entries: dict[str, ExplanationOut]) -> None:
    """Over the entries outside the project's tests: "could not tell", frames, restatements."""
    outside = [e for e in entries.values() if e.who_hits_it and e.who_hits_it.kind != "test"]
    n = len(outside)
    unknown = sum(e.who_hits_it is not None and e.who_hits_it.kind == "unknown" for e in outside)
    frames = sum(bool(_FRAMES.search(e.what_it_means.text)) for e in outside)
    restated = sum(bool(_RESTATES.search(e.solutions[0].text)) for e in outside)
    print(f"outside the project's tests ({n:,} entries):")
    print(f"  'could not tell' who hits it:   {share(unknown, n)} (goal <= 10%)")
    print(f"  template frames in the meaning: {share(frames, n)} (goal <= 1%)")
    print(f"  first solution restates check:  {share(restated, n)} (goal 0)")


def share(n: int, total: int) -> str:
    return f"{100 * n / total:5.1f}% ({n:,} of {total:,})"


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--db", help="database URL (default: the tests' sglang knowledge base)")
    args = parser.parse_args()
    url = args.db
    sys.path.insert(0, str(ROOT / "tests"))  # the kbcache builder and the defect detectors
    if url is None:
        from kbcache import sglang_kb_file

        url = f"sqlite:///{sglang_kb_file()}"
    started = time.perf_counter()
    entries = newest_explanations(url)
    seconds = time.perf_counter() - started
    total = len(entries)
    code_chars = all_chars = 0
    concrete = generic = examples = 0
    who: Counter[str] = Counter()
    kinds: Counter[str] = Counter()
    example_from: Counter[str] = Counter()
    report_first = report_not_internal = versions = unbacked = spurious = generic_words = 0
    for ex in entries.values():
        text = ex.what_it_means.text
        all_chars += len(text)
        code_chars += sum(len(m.group()) for m in _TICKS.finditer(text))
        found = {s.kind for s in ex.solutions}
        kinds.update(found)
        concrete += bool(found & CONCRETE)
        generic += found <= {"condition"}
        examples += ex.example_fix is not None
        if ex.example_fix is not None:
            example_from[example_source(ex)] += 1
        kind = ex.who_hits_it.kind if ex.who_hits_it else "none"
        who[kind] += 1
        if ex.solutions[0].kind == "report":
            report_first += 1
            report_not_internal += kind != "internal"
        is_version, backed = version_example(ex)
        versions += is_version
        unbacked += is_version and not backed
        spurious += sum(spurious_flag_link(s.text, s.flag) for s in ex.solutions)
        generic_words += any(g in s.text for s in ex.solutions for g in _GENERIC)
    print(f"{total:,} entries explained in {seconds:.1f} s")
    print(
        f"code share of 'what it means': {100 * code_chars / max(all_chars, 1):5.1f}% (goal <= 10%)"
    )
    print(f"at least one concrete solution: {share(concrete, total)} (goal >= 95%)")
    print(f"only the generic solution:      {share(generic, total)} (goal <= 5%)")
    print(f"an example fix:                 {share(examples, total)} (goal >= 25%)")
    for source, n in example_from.most_common():
        print(f"  example fix from {source:20} {share(n, total)}")
    print("who hits it:")
    for kind, n in who.most_common():
        print(f"  {kind:18} {share(n, total)}")
    print_targets(total, report_first, report_not_internal, versions, unbacked)
    print(f"spurious flag links:            {spurious} (goal 0)")
    print(f"generic 'a model/platform this code supports': {generic_words} entries (goal 0)")
    print("entries having a solution of each kind:")
    for kind, n in kinds.most_common():
        print(f"  {kind:14} {share(n, total)}")
    print_defects(entries)
    print_issue_44(entries)


if __name__ == "__main__":
    main()
