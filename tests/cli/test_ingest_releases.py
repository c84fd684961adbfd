"""`errkb ingest` of PyPI releases from a local index: every release or a bound, only the new
ones downloaded, no code of a package ever run, and one failed release costing no other."""

from __future__ import annotations

import json
from pathlib import Path

import pytest
from local_index import LocalIndex, probe_sdist, serving, wheel_bytes
from sqlalchemy import select
from typer.testing import CliRunner

from errkb.core.db import make_engine
from errkb.core.models import Error, Snapshot
from errkb.service.cli import failures
from errkb.service.cli.main import app

PINS = """[[repos]]
name = "tests/demo"
pypi_name = "demo"
path_prefix = "src/"
releases = {releases}
"""


def _demo_wheel(version: str) -> bytes:
    """A release raising one error common to all, and one naming its own version."""
    tag = version.replace(".", "_")
    body = (
        "def check(n):\n    if n < 0:\n        raise ValueError(f'n must be >= 0, got {n}')\n"
        f"def only_{tag}():\n    raise ValueError('introduced in {version}')\n"
    )
    return wheel_bytes({"demo/core.py": body.encode()})


@pytest.fixture
def index(db_url: str, tmp_path: Path, monkeypatch: pytest.MonkeyPatch):  # type: ignore[no-untyped-def]
    """A local index with demo 1.0, 1.1, 1.2 and 2.0rc1, and settings pointing at it."""
    served = LocalIndex()
    for v in ("1.0", "1.1", "1.2", "2.0rc1"):
        served.add("demo", v, f"demo-{v}-py3-none-any.whl", _demo_wheel(v))
    served.add("demo", "1.1", "demo-1.1.tar.gz", b"the sdist is never taken when a wheel exists")
    monkeypatch.setenv("ERRKB_DATABASE_URL", db_url)
    monkeypatch.setenv("ERRKB_CACHE_DIR", str(tmp_path / "cache"))
    monkeypatch.setenv("ERRKB_WORKERS", "1")
    with serving(served):
        monkeypatch.setenv("ERRKB_INDEX_URL", served.url)
        yield served


def _run(*args: str):  # type: ignore[no-untyped-def]
    return CliRunner().invoke(app, list(args), catch_exceptions=False)


def _stored(db_url: str) -> tuple[list[str], list[str]]:
    engine = make_engine(db_url)
    with engine.connect() as conn:
        labels = conn.execute(select(Snapshot.label).order_by(Snapshot.sort_key)).scalars().all()
        messages = conn.execute(select(Error.message).order_by(Error.message)).scalars().all()
    engine.dispose()
    return list(labels), list(messages)


def _pins(tmp_path: Path, releases: str) -> str:
    path = tmp_path / "pins.toml"
    path.write_text(PINS.format(releases=releases))
    return str(path)


def test_every_release_then_only_new_ones(index: LocalIndex, db_url: str, tmp_path: Path) -> None:
    pins = _pins(tmp_path, '"all"')
    first = _run("ingest", "--pins", pins, "--json", "--docs")
    assert first.exit_code == 0, first.output
    report = json.loads(first.stdout)  # the phase lines go to stderr
    assert [s["label"] for s in report["snapshots"]] == ["1.0", "1.1", "1.2"]  # no pre-release
    assert {s["status"] for s in report["snapshots"]} == {"ingested"}
    assert report["downloads"]["releases"] == 3
    docs = report["entry_docs"]  # every entry built after the ingest, its figures in the JSON
    assert docs["entries"] >= 1 and docs["stored_bytes"] > 0 and not docs["already_built"]
    # Two download threads: the order they finish in is theirs.
    assert sorted(index.files_downloaded()) == [
        f"demo-{v}-py3-none-any.whl" for v in ("1.0", "1.1", "1.2")
    ]
    labels, messages = _stored(db_url)
    assert labels == ["1.0", "1.1", "1.2"]
    assert "introduced in 1.2" in messages and "n must be >= 0, got {n}" in messages

    # A new release appears: re-running fetches and parses that one only.
    index.add("demo", "1.3", "demo-1.3-py3-none-any.whl", _demo_wheel("1.3"))
    (tmp_path / "cache" / "pypi" / "demo-1.0-py3-none-any.whl").unlink()  # not needed again
    again = json.loads(_run("ingest", "--pins", pins, "--json", "--docs").stdout)
    status = {s["label"]: (s["status"], s["files_parsed"]) for s in again["snapshots"]}
    assert status == {
        "1.0": ("already ingested", 0),
        "1.1": ("already ingested", 0),
        "1.2": ("already ingested", 0),
        "1.3": ("ingested", 1),
    }
    assert index.files_downloaded()[3:] == ["demo-1.3-py3-none-any.whl"]
    assert not again["entry_docs"]["already_built"]  # a new snapshot: every entry rebuilt

    # Nothing new: nothing downloaded, nothing parsed, and the summary says so.
    third = _run("ingest", "--pins", pins)
    assert third.exit_code == 0, third.output
    assert "4 snapshots: 0 ingested, 4 already ingested." in third.output
    assert len(index.files_downloaded()) == 4
    assert _stored(db_url)[0] == ["1.0", "1.1", "1.2", "1.3"]


def test_a_bound_on_the_command_line(index: LocalIndex, db_url: str, tmp_path: Path) -> None:
    pins = _pins(tmp_path, '["1.0"]')
    result = _run("ingest", "--pins", pins, "--pypi", "demo>=1.1")
    assert result.exit_code == 0, result.output
    assert _stored(db_url)[0] == ["1.1", "1.2"]
    pre = _run("ingest", "--pins", pins, "--pypi", "demo>=2.0rc1")
    assert pre.exit_code == 0, pre.output
    assert _stored(db_url)[0] == ["1.1", "1.2", "2.0rc1"]  # named, a pre-release counts
    none = _run("ingest", "--pins", pins, "--pypi", "demo>=9")
    assert none.exit_code == failures.BAD_INPUT
    assert "no release on the package index matches" in none.output


def test_a_failed_download_is_one_line_and_costs_no_other_release(
    index: LocalIndex, db_url: str, tmp_path: Path
) -> None:
    index.releases["demo"]["1.1"] = [
        (name, data, "0" * 64) for name, data, _ in index.releases["demo"]["1.1"]
    ]
    result = _run("ingest", "--pins", _pins(tmp_path, '">=1.0"'))
    assert result.exit_code == 1
    errors = [line for line in result.output.splitlines() if line.startswith("error:")]
    assert errors == [
        "error: demo==1.1: demo-1.1-py3-none-any.whl does not match the sha256 the index gives"
    ]
    assert "3 snapshots: 2 ingested, 0 already ingested, 1 failed." in result.output
    assert _stored(db_url)[0] == ["1.0", "1.2"]


def test_an_sdist_is_read_and_its_build_backend_never_runs(
    db_url: str, tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    marker = tmp_path / "backend-ran.txt"
    served = LocalIndex()
    served.add("errkbprobe", "1.0", "errkbprobe-1.0.tar.gz", probe_sdist(marker))
    monkeypatch.setenv("ERRKB_DATABASE_URL", db_url)
    monkeypatch.setenv("ERRKB_CACHE_DIR", str(tmp_path / "cache"))
    monkeypatch.setenv("ERRKB_WORKERS", "1")
    monkeypatch.setenv("ERRKB_PINS_FILE", _pins(tmp_path, "[]"))
    with serving(served):
        monkeypatch.setenv("ERRKB_INDEX_URL", served.url)
        result = _run("ingest", "--pypi", "errkbprobe==1.0")
    assert result.exit_code == 0, result.output
    assert served.files_downloaded() == ["errkbprobe-1.0.tar.gz"]
    assert not marker.exists()
    assert _stored(db_url) == (["1.0"], ["probe value must be positive, got {n}"])


def test_a_bad_release_bound_in_pins_names_its_place(
    db_url: str, tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    monkeypatch.setenv("ERRKB_DATABASE_URL", db_url)
    result = _run("ingest", "--pins", _pins(tmp_path, '"every one"'))
    assert result.exit_code == failures.CONFIG
    assert "repos.0.releases" in result.output and '"all" or a version specifier' in result.output


def test_a_release_the_index_does_not_have_is_one_line(index: LocalIndex, tmp_path: Path) -> None:
    """Nothing got as far as a snapshot: the error line alone, no summary of nothing."""
    pins = _pins(tmp_path, '["1.0"]')
    result = _run("ingest", "--pins", pins, "--pypi", "demo==99.99.99")
    assert result.exit_code == 1
    lines = [line for line in result.output.splitlines() if line.strip()]
    errors = [line for line in lines if line.startswith("error: ")]
    assert errors == ["error: demo==99.99.99: not found on the package index"], lines
    assert len(lines) <= 2 and not any("ingested" in line for line in lines), lines
