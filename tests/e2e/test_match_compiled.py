"""The compiled matcher (mypyc, see setup.py) is what runs, and answers as its sources do.

The build compiles `errkb.service.match.matcher`; these tests fail when the checkout's compiled
modules are missing or stale (run `make install`), and when the compiled and the pure matcher
give different answers for the same texts on the real sglang knowledge base, each in a process
with its own hash seed.
"""

from __future__ import annotations

import importlib.machinery
import json
import os
import subprocess
import sys
from pathlib import Path

import pytest

import errkb.service.match.matcher as matcher_package
from errkb.service.match.matcher import compiled

ROOT = Path(__file__).resolve().parents[2]
# Matches a sample of the knowledge base's own messages, whole, cut, quoted and wrapped, plus the
# posted dev cases, and prints how it matched them (a digest) and whether it ran compiled.
_SCRIPT = """
import hashlib, random, sys
from sqlalchemy import select
from errkb.core.db import make_engine
from errkb.core.models import Error
from errkb.service.read.matches import match_index, matches_json_in
import errkb.service.match.matcher.align as align
engine = make_engine(sys.argv[1])
with engine.connect() as conn:
    rows = conn.execute(select(Error.message).order_by(Error.id)).scalars().all()
rng = random.Random(5)
texts = [line for line in sys.stdin.read().split("\\0") if line]
for m in rng.sample(rows, 600):
    texts += [
        "Traceback (most recent call last):\\nValueError: " + m + "\\n",
        m[: max(5, len(m) // 2)],
        "the server said `" + m + "` when I ran it",
        m.replace(" ", "\\n  "),
    ]
index = match_index(engine)
digest = hashlib.sha256()
for text in texts:
    digest.update(matches_json_in(index, text, limit=10, public_url="http://x"))
print(len(texts), digest.hexdigest(), type(align.__loader__).__name__)
"""


def _match(url: str, pure: bool) -> list[str]:
    cases = ROOT / "tests" / "data" / "match-dev" / "cases.jsonl"
    lines = cases.read_text().splitlines()
    posted = [json.loads(line)["posted_text"] for line in lines if line.strip()]
    # Each with its own hash seed: as the server's processes do, they must answer alike anyway.
    env = {**os.environ, "ERRKB_PURE": "1" if pure else "0", "PYTHONHASHSEED": "1" if pure else "2"}
    done = subprocess.run(
        [sys.executable, "-c", _SCRIPT, url],
        input="\0".join(posted),
        env=env,
        capture_output=True,
        text=True,
        check=True,
    )
    return done.stdout.split()


@pytest.mark.skipif(os.environ.get("ERRKB_PURE") == "1", reason="built without compiling")
def test_the_checkout_runs_the_compiled_matcher() -> None:
    folder = Path(matcher_package.__path__[0])
    built = compiled.compiled_modules(folder)
    sources = [p for p in folder.glob("*.py") if p.name not in compiled.PURE]
    assert len(built) == len(sources) + 1, "the matcher is not compiled: run `make install`"
    assert not compiled.stale(folder), "the compiled matcher is older than its sources"
    align = sys.modules["errkb.service.match.matcher.align"]
    assert isinstance(align.__loader__, importlib.machinery.ExtensionFileLoader)


@pytest.mark.sglang
@pytest.mark.skipif(os.environ.get("ERRKB_PURE") == "1", reason="built without compiling")
def test_compiled_and_pure_matchers_answer_alike(sglang_kb_url: str) -> None:
    fast = _match(sglang_kb_url, pure=False)
    slow = _match(sglang_kb_url, pure=True)
    assert (fast[2], slow[2]) == ("ExtensionFileLoader", "SourceFileLoader")
    assert int(fast[0]) > 2400
    assert fast[:2] == slow[:2]


def test_a_stale_build_runs_the_sources(tmp_path: Path) -> None:
    """A source edited after the build: the package runs that source, not the old build."""
    package = tmp_path / "pkg"
    package.mkdir()
    (package / "__init__.py").write_text("")
    (package / "mod.py").write_text("WHO = 'source'\n")
    fake = package / f"mod{importlib.machinery.EXTENSION_SUFFIXES[0]}"
    fake.write_bytes(b"not a library")
    os.utime(fake, (1, 1))  # built long before the source was last saved
    assert compiled.stale(package)
    finder = compiled._Sources("pkg", package)
    spec = finder.find_spec("pkg.mod", None)
    assert spec is not None and spec.origin == str(package / "mod.py")
    assert finder.find_spec("other.mod", None) is None
    os.utime(fake)  # built after the source
    assert not compiled.stale(package)
