"""Tracing a snapshot's sites on two cores: the second half of the files traced in a forked copy
of the process gives the origins one process gives, in order, and a copy that dies costs nothing
but time."""

from __future__ import annotations

import os

import pytest

from errkb.core.origin import Origin
from errkb.core.records import Condition, FlagDef, Site, Snippet, Template, Vocabulary
from errkb.ingest.origins import split
from errkb.ingest.origins.kept import forget
from errkb.ingest.origins.snapshot_origins import snapshot_origins

VOCAB = Vocabulary(env_helpers=("envs",), model_config_names=("hf_config",))
FLAGS = [
    FlagDef(("--page-size",), "page_size", "int", "1", None, None, "p/args.py", 2, "dataclass")
]


def _snapshot(files: int) -> tuple[dict[str, str], list[Site]]:
    """Modules whose checks read a flag, an environment variable, the model's configuration or
    a literal, by turns."""
    texts = {"p/__init__.py": "", "p/args.py": "class ServerArgs:\n    page_size: int = 1\n"}
    reads = ["server_args.page_size", "envs.SGLANG_X.get()", "hf_config.vocab_size", "n"]
    sites = []
    for i in range(files):
        path = f"p/m{i:03}.py"
        value = reads[i % len(reads)]
        texts[path] = (
            "def check(server_args, hf_config, n=3):\n"
            f"    if {value} > 4:\n"
            "        raise ValueError('too big')\n"
            "def run(server_args, hf_config):\n"
            "    check(server_args, hf_config)\n"
        )
        cond = Condition("if", f"{value} > 4", True, 2)
        sites.append(
            Site(
                "ValueError",
                Template((), "none"),
                path,
                3,
                3,
                "check",
                (cond,),
                Snippet(3, (), 3, 3),
                "",
            )
        )
    return texts, sites


def _origins(texts: dict[str, str], sites: list[Site]) -> list[Origin | None]:
    forget()
    return snapshot_origins(texts, sites, FLAGS, VOCAB, ("ServerArgs",))


def test_two_processes_give_the_origins_of_one(monkeypatch: pytest.MonkeyPatch) -> None:
    texts, sites = _snapshot(40)
    monkeypatch.setattr(split, "SPLIT_SITES", 10**9)
    alone = _origins(texts, sites)
    monkeypatch.setattr(split, "SPLIT_SITES", 4)
    assert split._cut(sites) == 20  # the second half is traced in the forked copy
    assert _origins(texts, sites) == alone
    assert {o.kind for o in alone if o} == {"flag", "environment", "model_config", "internal"}


def test_a_helper_that_dies_leaves_its_half_to_this_process(
    monkeypatch: pytest.MonkeyPatch,
) -> None:
    texts, sites = _snapshot(12)
    monkeypatch.setattr(split, "SPLIT_SITES", 10**9)
    alone = _origins(texts, sites)
    monkeypatch.setattr(split, "SPLIT_SITES", 4)
    parent = os.getpid()
    traced_here: list[str] = []

    def trace(site: Site) -> Origin | None:
        traced_here.append(site.path)
        return alone[sites.index(site)]

    def die() -> None:
        if os.getpid() != parent:
            os._exit(3)  # the helper dies before it sends anything

    assert split.traced(sites, trace, in_helper=die) == alone
    assert traced_here == [s.path for s in sites]  # the second half too, after the first
