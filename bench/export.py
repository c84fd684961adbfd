"""Benchmark: `errkb export-site` of the four pinned releases, the export the tests left out.

`tests/service/test_export.py` exports a real part of a release (about 700 pages), enough to
prove the export; the whole export of the four pins (about 20,000 error pages) is timed here.
The knowledge base is the tests' cached one with every entry document stored (built by
`tests/kbcache.py` on first use, as `errkb docs` builds them). The export runs as a user runs
it (the console script, every core), then the link check reads the site.

Baseline, in the same run: one entry built in this process (`build_entry`, the same ids the
export wrote, a sample). The ratio says what an exported page costs in core-seconds against an
entry built from the database: under 1 means the export reads the stored documents rather than
building the entries again.

Usage: .venv/bin/python bench/export.py [--sample N]
"""

from __future__ import annotations

import argparse
import os
import random
import shutil
import subprocess
import sys
import tempfile
import time
from pathlib import Path

ROOT = Path(__file__).resolve().parent.parent
sys.path[:] = [p for p in sys.path if Path(p or ".").resolve() != Path(__file__).resolve().parent]
sys.path[:0] = [str(ROOT / "tests")]  # the shared knowledge-base builder and the link check

from kbcache import copy_kb  # noqa: E402
from linkcheck import check_site  # noqa: E402
from sqlalchemy import select  # noqa: E402

from errkb.core.db import make_engine, session_factory  # noqa: E402
from errkb.core.models import Error  # noqa: E402
from errkb.service.entries.build import build_entry  # noqa: E402


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--sample", type=int, default=300, help="entries built for the baseline")
    args = parser.parse_args()
    folder = Path(tempfile.mkdtemp(prefix="errkb-bench-export-"))
    try:
        started = time.perf_counter()
        url = copy_kb(folder / "kb.sqlite3", docs=True)
        print(f"knowledge base with stored docs ready in {time.perf_counter() - started:.1f} s")
        site = folder / "site"
        env = {**os.environ, "ERRKB_DATABASE_URL": url, "ERRKB_PUBLIC_URL": ""}
        started = time.perf_counter()
        subprocess.run(
            [str(Path(sys.executable).parent / "errkb"), "export-site", str(site)],
            env=env,
            check=True,
        )
        export_s = time.perf_counter() - started
        pages = sum(1 for _ in (site / "errors").glob("*.html"))
        started = time.perf_counter()
        report, _ = check_site(site)
        check_s = time.perf_counter() - started
        print(
            f"export: {pages:,} error pages in {export_s:.1f} s; link check: {report.pages:,} "
            f"pages, {report.internal:,} links, {len(report.broken)} broken, {check_s:.1f} s"
        )
        engine = make_engine(url)
        with session_factory(engine)() as session:
            ids = sorted(session.scalars(select(Error.id)))
            sample = random.Random(47).sample(ids, min(args.sample, len(ids)))
            started = time.perf_counter()
            for error_id in sample:
                build_entry(session, error_id)
            build_s = (time.perf_counter() - started) / len(sample)
        engine.dispose()
        cores = os.cpu_count() or 1
        page_s = export_s * cores / max(pages, 1)
        print(
            f"one exported page {page_s * 1000:.1f} ms of a core (wall x {cores} cores / pages); "
            f"one entry built {build_s * 1000:.1f} ms: ratio {page_s / build_s:.2f}x"
        )
    finally:
        shutil.rmtree(folder, ignore_errors=True)


if __name__ == "__main__":
    main()
