"""A snapshot's flags merged into one definition per destination (pure).

The ingester links sites against it and the service describes flags from it, so it sits in the
core both of them import.
"""

from __future__ import annotations

from collections.abc import Iterable
from dataclasses import replace

from errkb.core.records import FlagDef


def _rank(f: FlagDef, class_paths: set[str]) -> tuple[int, int, int]:
    # Settings-class fields describe the server's own options; an argparse call in the same
    # file usually re-registers one of them; argparse calls elsewhere (benchmarks, tools) last.
    return (
        0 if f.origin == "dataclass" else 1 if f.path in class_paths else 2,
        0 if f.help else 1,
        len(f.path),
    )


def flag_catalog(defs: Iterable[FlagDef]) -> dict[str, FlagDef]:
    """dest -> the best definition of a snapshot's flags, gaps filled from the same file."""
    by_dest: dict[str, list[FlagDef]] = {}
    for f in defs:
        by_dest.setdefault(f.dest, []).append(f)
    by_flag: dict[str, list[FlagDef]] = {}
    for fs in by_dest.values():
        for f in fs:
            if f.origin == "argparse":
                for name in f.flags:
                    by_flag.setdefault(name, []).append(f)
    class_paths = {f.path for fs in by_dest.values() for f in fs if f.origin == "dataclass"}
    catalog: dict[str, FlagDef] = {}
    for dest, fs in by_dest.items():
        fs.sort(key=lambda f: _rank(f, class_paths))
        best = fs[0]
        # Only a settings field borrows from argparse calls of its own file (help, aliases):
        # unrelated tools elsewhere may reuse a dest for something else.
        # argparse stores `--tensor-parallel-size/--tp-size` in `tensor_parallel_size`, so a
        # call sharing a flag string with the field documents it too.
        peers = [
            f
            for f in fs[1:] + by_flag.get(best.flags[0], [])
            if best.origin == "dataclass" and f.path == best.path and f is not best
        ]
        catalog[dest] = replace(
            best,
            flags=best.flags
            + tuple(dict.fromkeys(x for f in peers for x in f.flags if x not in best.flags)),
            help=best.help or next((f.help for f in peers if f.help), None),
            choices=best.choices or next((f.choices for f in peers if f.choices), None),
            default=best.default
            if best.default is not None
            else next((f.default for f in peers if f.default is not None), None),
        )
    return catalog
