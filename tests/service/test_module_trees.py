"""Module trees are built once per content key and snapshot, and never outlive their key."""

from __future__ import annotations

import asyncio
from pathlib import Path

import httpx
from html_check import page_facts
from pages_repo import ingest_pages_repo

from errkb.core.settings import Settings
from errkb.service.app import create_app
from errkb.service.browse.queries import ModuleTree
from errkb.service.browse.trees import ModuleTrees


class Builds:
    """A tree builder that counts its calls; each tree holds one file named after the call."""

    def __init__(self) -> None:
        self.count = 0

    def __call__(self) -> ModuleTree:
        self.count += 1
        tree = ModuleTree()
        tree.add(f"build{self.count}.py", "e")
        return tree


def test_a_tree_is_built_once_per_key_and_snapshot() -> None:
    trees, build = ModuleTrees(), Builds()
    first = trees.get_or_build("k1", None, build)
    assert trees.get_or_build("k1", None, build) is first
    assert build.count == 1
    trees.get_or_build("k1", "v1", build)  # another snapshot: its own tree
    assert build.count == 2 and len(trees) == 2
    moved = trees.get_or_build("k2", None, build)  # a new key: nothing older is kept
    assert build.count == 3 and len(trees) == 1
    assert "build3.py" in moved.files and "build1.py" not in moved.files


def test_the_least_recently_used_tree_goes_past_the_bound() -> None:
    trees, build = ModuleTrees(max_trees=2), Builds()
    trees.get_or_build("k", "a", build)
    trees.get_or_build("k", "b", build)
    trees.get_or_build("k", "a", build)  # used again: "b" is now the oldest
    trees.get_or_build("k", "c", build)
    assert len(trees) == 2 and build.count == 3
    trees.get_or_build("k", "a", build)
    assert build.count == 3
    trees.get_or_build("k", "b", build)
    assert build.count == 4


def test_module_pages_follow_an_ingest_made_while_the_server_runs(
    db_url: str, tmp_path: Path
) -> None:
    ingest_pages_repo(db_url, tmp_path, versions=(1,))  # srv/checks.py appears in v2

    async def run() -> tuple[list[str], list[str]]:
        app = create_app(Settings(database_url=db_url))
        async with app.router.lifespan_context(app):
            transport = httpx.ASGITransport(app=app)
            async with httpx.AsyncClient(transport=transport, base_url="http://t") as client:
                before = await client.get("/modules/srv")
                await asyncio.to_thread(ingest_pages_repo, db_url, tmp_path, (2,))
                after = await client.get("/modules/srv")
        return page_facts(before.text).links, page_facts(after.text).links

    before, after = asyncio.run(run())
    assert "/modules/srv/pools.py" in before and "/modules/srv/checks.py" not in before
    assert "/modules/srv/checks.py" in after
