"""The worker pool: processes start without importing the parent's main module."""

from __future__ import annotations

import os
import subprocess
import sys
from pathlib import Path

MAIN = """
import os, sys
with open(os.environ["IMPORT_LOG"], "a") as log:
    log.write(__name__ + "\\n")
from errkb.ingest.workers import Workers, split_chunk

if __name__ == "__main__":
    with Workers(2) as workers:
        workers.warm()
        for _ in workers.map(split_chunk, [[], [], []], None):
            pass
        print(workers.submit(os.getpid).result() != os.getpid())
"""


def test_worker_processes_do_not_import_the_main_module(tmp_path: Path) -> None:
    """A main module importing the whole app made each worker pay for it at every snapshot."""
    script = tmp_path / "main_script.py"
    script.write_text(MAIN)
    log = tmp_path / "imports.log"
    root = Path(__file__).resolve().parents[2]
    env = {**os.environ, "IMPORT_LOG": str(log), "PYTHONPATH": str(root)}
    done = subprocess.run(
        [sys.executable, str(script)], env=env, capture_output=True, text=True, timeout=120
    )
    assert done.returncode == 0, done.stderr
    assert done.stdout.strip() == "True"  # the work did run in another process
    assert log.read_text().split() == ["__main__"]  # and only the parent ran the script
