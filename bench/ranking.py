"""Benchmark: how matches are ranked, on tracebacks rendered from a knowledge base's own sites.

For a sample of errors of the code a server runs (some sites outside the project's tests) it
renders a traceback (a frame at the raise's file, line and function, then the message with each
placeholder filled) and reads the first match:
- with the raise's own line, and with no frame: the right error first, test code first, a weak
  guess first beside a match;
- with another release's line (the raise's line + 37) and the message cut at half: the right
  error first, with the errors of the frame's file and function as candidates and without;
- test messages in a server's traceback (a frame outside any test): test code first, with the
  project's tests marked and without (the ranking before test code was known);
- the cost of the (file, function) candidates: time per traceback with and without, as a ratio
  (alternated rounds in one process).

Usage: .venv/bin/python bench/ranking.py --db sqlite:////path/kb.sqlite3 [--samples 500]
"""

from __future__ import annotations

import argparse
import random
import statistics
import sys
import time
from dataclasses import replace
from pathlib import Path

sys.path[:] = [p for p in sys.path if Path(p or ".").resolve() != Path(__file__).resolve().parent]

from sqlalchemy.orm import Session  # noqa: E402

from errkb.core.db import make_engine  # noqa: E402
from errkb.knowledge.who.evidence import in_test_code  # noqa: E402
from errkb.service.match.matcher import ErrorRow, MatchIndex, build_index, match_text  # noqa: E402
from errkb.service.match.matcher.score import WEAK_BELOW  # noqa: E402
from errkb.service.match.queries import error_rows  # noqa: E402


def message(row: ErrorRow) -> str:
    """The message with each placeholder filled."""
    return "".join(s["text"] if s["kind"] == "text" else "x17" for s in row.template)


def traceback(row: ErrorRow, shift: int | None, cut: bool = False) -> str:
    """A traceback of the row's newest site (no frame when `shift` is None)."""
    text = message(row)
    if cut:
        text = text[: max(12, len(text) // 2)]
    if shift is None:
        return f"{row.exception}: {text}\n"
    site = row.occurrences[-1]
    path = site.path.removeprefix(site.path_prefix)
    function = site.qualname.rsplit(".", 1)[-1]
    return (
        "Traceback (most recent call last):\n"
        '  File "/srv/launch.py", line 3, in <module>\n    main()\n'
        f'  File "/opt/venv/lib/python3.11/site-packages/{path}", line {site.line + shift}, '
        f"in {function}\n    raise it\n{row.exception}: {text}\n"
    )


def server_side(row: ErrorRow) -> str:
    """The row's message under a frame of a server's own file (no test runs)."""
    return (
        "Traceback (most recent call last):\n"
        '  File "/srv/app.py", line 9, in run\n    go()\n'
        f"{row.exception}: {message(row)}\n"
    )


def literal(row: ErrorRow) -> int:
    return sum(len(s["text"]) for s in row.template if s["kind"] == "text")


def first(index: MatchIndex, text: str, row: ErrorRow) -> tuple[bool, bool, bool]:
    """(right error first, test code first, a weak guess first beside a match)."""
    found = match_text(index, text, limit=5)
    if not found:
        return False, False, False
    top = found[0]
    weak = top.score < WEAK_BELOW and any(m.score >= WEAK_BELOW for m in found)
    return top.entry.id == row.id or top.entry.title == row.title, top.entry.test_code, weak


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--db", required=True)
    parser.add_argument("--samples", type=int, default=500)
    args = parser.parse_args()
    engine = make_engine(args.db, create_folders=False)
    with Session(engine) as session:
        rows = error_rows(session)
    marked = build_index(rows, test_path=in_test_code)
    unmarked = build_index(rows)
    tests = {
        r.id for r in rows if r.occurrences and all(in_test_code(o.path) for o in r.occurrences)
    }
    server = [r for r in rows if r.occurrences and r.id not in tests and literal(r) >= 12]
    test_rows = [r for r in rows if r.id in tests and literal(r) >= 20]
    sample = random.Random(7).sample(server, min(args.samples, len(server)))
    print(f"{len(rows):,} errors; {len(server):,} of server code with a message")
    print(f"sampled {len(sample)}")
    for label, shift in (("own line", 0), ("no frame", None)):
        counts = [first(marked, traceback(r, shift), r) for r in sample]
        right, test, weak = (sum(c[i] for c in counts) for i in range(3))
        print(f"  {label:9}: right first {right}/{len(sample)}, test code first {test}, ", end="")
        print(f"weak first beside a match {weak}")
    for label, index in (("with", marked), ("without", replace(marked, functions={}))):
        right = sum(first(index, traceback(r, 37, cut=True), r)[0] for r in sample)
        print(
            f"  another release's line, cut at half, {label} the (file, function) candidates: "
            f"right first {right}/{len(sample)}"
        )
    shown = random.Random(9).sample(test_rows, min(300, len(test_rows)))
    for label, index in (("marked", marked), ("unmarked", unmarked)):
        found = [match_text(index, server_side(r), limit=5) for r in shown]
        answered = [f for f in found if f]
        test_first = sum(f[0].entry.id in tests for f in answered)
        print(
            f"  test messages in a server's traceback, tests {label}: test code first "
            f"{test_first} of {len(answered)} answered ({len(shown)} texts)"
        )
    texts = [traceback(r, 5) for r in sample]
    times: dict[str, list[float]] = {"with": [], "without": []}
    plain = replace(marked, functions={})
    for _ in range(5):
        for label, index in (("without", plain), ("with", marked)):
            start = time.perf_counter()
            for text in texts:
                match_text(index, text)
            times[label].append((time.perf_counter() - start) / len(texts) * 1000)
    w, wo = statistics.median(times["with"]), statistics.median(times["without"])
    print(
        f"  time per traceback: {w:.3f} ms with the (file, function) candidates, {wo:.3f} ms "
        f"without: {w / wo:.2f}x"
    )


if __name__ == "__main__":
    main()
