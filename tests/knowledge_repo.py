"""A small two-version project ingested by the real pipeline, for entry and API tests.

v1 holds three sibling raises in one function (like sglang's `_init_pools`), a flag-free error
and a size check; v2 makes the SWA combination supported (its error is gone) and moves the size
check to another file.
"""

from __future__ import annotations

import os
import textwrap
from pathlib import Path

from errkb.core.db import make_engine, upgrade
from errkb.core.records import Segment, Template, error_id
from errkb.ingest.pins import RepoPin
from errkb.ingest.pipeline import Job, ingest_snapshot
from errkb.ingest.sources.folder import FolderSource

REPO = RepoPin(
    name="acme/srv",
    web_url="https://example.org/acme/srv",
    flag_classes=("ServerArgs",),
    launch_command="python -m srv.launch --model-path <model>",
)

SERVER_ARGS = """
from dataclasses import dataclass
from typing import Literal

@dataclass
class ServerArgs:
    enable_unified_memory: A[bool, "Use one memory pool for every cache."] = False
    disaggregation_mode: A[Literal["null", "prefill", "decode"], "PD disaggregation mode."] = "null"
    tp_size: A[int, "Tensor parallel size."] = 1
"""

POOLS = """
class Pools:
    def init_pools(self, server_args, model):
        pd_enabled = server_args.disaggregation_mode != "null"
        if server_args.enable_unified_memory:
            if model.is_mamba:
                if pd_enabled:
                    raise ValueError(
                        "--enable-unified-memory with PD supports only MLA models. "
                        "Drop --enable-unified-memory or run without PD."
                    )
            elif model.is_swa:
{swa}
            else:
                raise ValueError(
                    f"--enable-unified-memory only supports Mamba and SWA models, "
                    f"not {{model.name}}."
                )
"""
SWA_V1 = """                if pd_enabled:
                    raise ValueError(
                        "--enable-unified-memory with PD does not support SWA models yet. "
                        "Drop --enable-unified-memory or run without PD."
                    )"""
SWA_V2 = "                pass"

CHECK_TP = """

def check_tp(server_args):
    if server_args.tp_size > 8:
        raise ValueError(f"tp_size {server_args.tp_size} is too large")


def parse_layout(layout):
    raise ValueError(f"Unsupported layout {layout!r}")
"""

SWA_MESSAGE = (
    "--enable-unified-memory with PD does not support SWA models yet. "
    "Drop --enable-unified-memory or run without PD."
)
MAMBA_MESSAGE = (
    "--enable-unified-memory with PD supports only MLA models. "
    "Drop --enable-unified-memory or run without PD."
)


def literal_id(message: str) -> str:
    """The id of a plain-literal ValueError of this repo."""
    return error_id(REPO.name, "ValueError", Template((Segment("text", message),), "literal"))


def write_version(root: Path, version: int) -> Path:
    """The project's files for v1 or v2 under `root`, dated so v2 sorts after v1."""
    folder = root / f"v{version}"
    files = {
        "srv/server_args.py": SERVER_ARGS,
        "srv/pools.py": POOLS.format(swa=SWA_V1 if version == 1 else SWA_V2)
        + (CHECK_TP if version == 1 else ""),
    }
    if version == 2:
        files["srv/checks.py"] = CHECK_TP
    for rel, text in files.items():
        path = folder / rel
        path.parent.mkdir(parents=True, exist_ok=True)
        path.write_text(textwrap.dedent(text).lstrip())
        stamp = 1_700_000_000 + version * 86_400
        os.utime(path, (stamp, stamp))
    return folder


def ingest_small_repo(url: str, root: Path) -> None:
    """Ingest v1 then v2 of the project into the database at `url`."""
    engine = make_engine(url)
    try:
        upgrade(engine)
        for version in (1, 2):
            source = FolderSource(write_version(root, version), f"v{version}")
            ingest_snapshot(source, REPO, REPO.extract_config(2_000_000), Job(engine, workers=1))
    finally:
        engine.dispose()
