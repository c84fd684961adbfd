"""Sites in the project's own tests: who meets them, and what to do about one (pure).

A project's wheel and repository carry its test suite and test tools beside the code users run
(sglang ships `sglang/test/` and `multimodal_gen/test/`). An assert there fails when a test
fails, not while a server runs: the person who meets it is someone running those tests or
tools, and the entry says so instead of "we could not tell which input leads here". The rule is
Python's own layout convention, nothing of one project (`knowledge.who.evidence.in_test_code`).
"""

from __future__ import annotations

from errkb.knowledge.facts import Fix


def test_suite_fix(path: str, project: str) -> Fix:
    """The first solution for a site in the tests: what such a failure means and what to check."""
    return Fix(
        "advice",
        f"This check is part of {project}'s own tests or test tools ({path}), not of the code a "
        "running server executes: you meet it only when running those tests or tools. A failing "
        "test usually needs something your setup lacks (a GPU model, a downloaded model, an "
        "optional package the test imports) or shows a real regression: run the one test alone "
        "with pytest to see the compared values, and report it with the test's name and output "
        "if it fails on a setup the test supports.",
        ("derived:conditions",),
    )
