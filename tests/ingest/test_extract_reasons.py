"""What the source says about a raise besides its code (SiteNotes): comments, docstring, values."""

from __future__ import annotations

import textwrap

from errkb.core.records import ExtractConfig, Site
from errkb.ingest.extract import extract_file


def sites_of(source: str) -> list[Site]:
    result = extract_file(textwrap.dedent(source).encode(), "m.py", ExtractConfig())
    return list(result.sites)


def test_comments_above_the_raise_and_the_held_guards_not_the_skipped_branches() -> None:
    (site,) = sites_of(
        """
        def init_pools(self, pool):
            '''Initialize the memory pools.

            A second paragraph is left out.
            '''
            # Gated to the target worker (pool is None).
            if self.unified and pool is None:
                # Order matters: this comment is about the branch that is skipped.
                if self.mamba:
                    return 1
                elif self.swa:  # hybrid sliding-window models
                    # No transfer scheme exists for the SWA sub-pool.
                    raise ValueError("not supported")
        """
    )
    comments = dict(site.notes.comments)
    assert comments[0] == "No transfer scheme exists for the SWA sub-pool."
    assert comments[-6] == "Gated to the target worker (pool is None)."
    assert not any("Order matters" in t for t in comments.values())
    assert site.notes.docstring == "Initialize the memory pools."


def test_a_comment_beside_a_guard_is_kept() -> None:
    (site,) = sites_of(
        """
        def f(x):
            if x > 8:  # the kernel has 8 lanes
                raise ValueError("too wide")
        """
    )
    assert site.notes.comments == ((-1, "the kernel has 8 lanes"),)


def test_module_constants_named_by_the_message_and_the_guard() -> None:
    (site,) = sites_of(
        """
        MODES = ("fast", "slow")
        TABLE = {"a": 1, "b": 2}
        LIMIT = compute()

        def f(mode, key):
            if mode not in MODES or key not in TABLE or key > LIMIT:
                raise ValueError(f"mode must be one of {MODES}")
        """
    )
    assert dict(site.notes.constants) == {"MODES": "('fast', 'slow')", "TABLE": "('a', 'b')"}


def test_a_local_that_shadows_a_constant_is_not_the_constant() -> None:
    (site,) = sites_of(
        """
        MODES = ("fast", "slow")

        def f(mode):
            MODES = load()
            if mode not in MODES:
                raise ValueError(f"mode must be one of {MODES}")
        """
    )
    assert site.notes.constants == ()
