"""The `errkb` command line in-process: ingest forms, the summary, clear errors, and show."""

from __future__ import annotations

import json
from pathlib import Path

import pytest
from gitrepo import commit, new_repo
from sqlalchemy import select
from typer.testing import CliRunner

from errkb.core.db import make_engine
from errkb.core.models import EntryDoc, Error, Snapshot
from errkb.service.cli import failures
from errkb.service.cli.main import app

RAISING = "def f(n):\n    if n < 0:\n        raise ValueError(f'n must be >= 0, got {n}')\n"


@pytest.fixture
def cli_env(db_url: str, tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> Path:
    """Settings pointing at a fresh database, a private cache and a small pins file."""
    monkeypatch.setenv("ERRKB_DATABASE_URL", db_url)
    monkeypatch.setenv("ERRKB_CACHE_DIR", str(tmp_path / "cache"))
    monkeypatch.setenv("ERRKB_WORKERS", "1")
    pins = tmp_path / "pins.toml"
    pins.write_text('[[repos]]\nname = "tests/cli"\nweb_url = "https://example.test/cli"\n')
    monkeypatch.setenv("ERRKB_PINS_FILE", str(pins))
    return tmp_path


def _run(*args: str):  # type: ignore[no-untyped-def]
    return CliRunner().invoke(app, list(args), catch_exceptions=False)


def _errors(db_url: str) -> dict[str, str]:
    engine = make_engine(db_url)
    with engine.connect() as conn:
        rows = dict(conn.execute(select(Error.id, Error.message)).all())
    engine.dispose()
    return rows


def test_ingest_returns_with_its_documents_left_to_the_server(cli_env: Path, db_url: str) -> None:
    """Without --docs, the ingest stores the snapshot and builds no entry document, says who
    will, and the entry reads the same as one built by --docs."""
    (cli_env / "src" / "pkg").mkdir(parents=True)
    (cli_env / "src" / "pkg" / "m.py").write_text(RAISING)
    result = _run(
        "ingest", "--dir", str(cli_env / "src"), "--label", "local-1", "--repo", "tests/cli"
    )
    assert result.exit_code == 0, result.output
    assert "1 site, 1 new error." in result.output
    assert "Entry documents are left to `errkb serve`" in result.output
    assert "Built" not in result.output
    engine = make_engine(db_url)
    with engine.connect() as conn:
        assert conn.execute(select(EntryDoc.error_id)).all() == []
    engine.dispose()
    ((error_id, _),) = _errors(db_url).items()
    shown = _run("show", error_id)
    assert shown.exit_code == 0 and "n must be >= 0" in shown.output
    docs = _run("docs")
    assert docs.exit_code == 0 and "Built 1 entry for fast reads" in docs.output
    assert json.loads(_run("show", error_id).output) == json.loads(shown.output)


def test_ingest_dir_then_show(cli_env: Path, db_url: str) -> None:
    (cli_env / "src" / "pkg").mkdir(parents=True)
    (cli_env / "src" / "pkg" / "m.py").write_text(RAISING)
    result = _run(
        "ingest",
        "--dir",
        str(cli_env / "src"),
        "--label",
        "local-1",
        "--repo",
        "tests/cli",
        "--docs",
    )
    assert result.exit_code == 0, result.output
    assert "ingest summary" in result.output and "local-1" in result.output
    assert "1 site, 1 new error." in result.output and "parsed" in result.output
    assert "Built 1 entry for fast reads" in result.output

    ((error_id, message),) = _errors(db_url).items()
    assert message == "n must be >= 0, got {n}"
    engine = make_engine(db_url)
    with engine.connect() as conn:  # the entry was built after the ingest, under its key
        (doc,) = conn.execute(select(EntryDoc.error_id, EntryDoc.content_key)).all()
    engine.dispose()
    assert doc == (error_id, "1.0")
    shown = _run("show", error_id)
    assert shown.exit_code == 0, shown.output
    entry = json.loads(shown.output)
    assert entry["id"] == error_id
    assert "n must be >= 0" in json.dumps(entry)
    assert "pkg/m.py" in json.dumps(entry)

    again = _run(
        "ingest",
        "--dir",
        str(cli_env / "src"),
        "--label",
        "local-1",
        "--repo",
        "tests/cli",
        "--docs",
    )
    assert again.exit_code == 0 and "already ingested" in again.output
    assert "Entry documents are current: none changed (1 entry kept)." in again.output


def test_show_unknown_id_is_a_clear_error(cli_env: Path) -> None:
    result = _run("show", "0123456789abcdef")
    assert result.exit_code == 1
    assert "no error with id" in result.output


def test_ingest_git_refs(cli_env: Path, db_url: str) -> None:
    repo = new_repo(cli_env / "proj")
    first = commit(repo, "one", {"a.py": RAISING}, day=0)
    second = commit(repo, "two", {"b.py": RAISING.replace("n must", "m must")}, day=1)
    repo.close()
    result = _run("ingest", "--git", str(cli_env / "proj"), "--ref", first, "--ref", "main")
    assert result.exit_code == 0, result.output
    engine = make_engine(db_url)
    with engine.connect() as conn:
        commits = conn.execute(select(Snapshot.commit).order_by(Snapshot.sort_key)).scalars().all()
    engine.dispose()
    assert commits == [first, second]
    assert len(_errors(db_url)) == 2


def test_default_ingest_skips_unreachable_git(cli_env: Path, tmp_path: Path) -> None:
    pins = tmp_path / "pins.toml"
    pins.write_text(
        '[[repos]]\nname = "tests/offline"\n'
        f'git_url = "{(tmp_path / "no-such-repo").as_uri()}"\ncommits = ["main"]\n'
    )
    result = _run("ingest")
    assert result.exit_code == 0, result.output
    assert "git source unreachable, skipped" in result.output


@pytest.mark.parametrize(
    ("args", "message", "code"),
    [
        (["--ref", "main"], "--ref needs --git", failures.BAD_INPUT),
        (["--label", "x"], "--label needs --dir", failures.BAD_INPUT),
        (["--pypi", "sglang[srt]>=0.5"], "a name and a version bound only", failures.BAD_INPUT),
        (["--pypi", "not a requirement!"], "name==version or name>=version", failures.BAD_INPUT),
        (["--repo", "nope"], "no repo named 'nope'", failures.CONFIG),
    ],
)
def test_bad_arguments_are_clear_errors(
    cli_env: Path, args: list[str], message: str, code: int
) -> None:
    result = _run("ingest", *args)
    assert result.exit_code == code
    assert message in result.output


def test_invalid_pins_name_the_problem(cli_env: Path, tmp_path: Path) -> None:
    bad = tmp_path / "bad.toml"
    bad.write_text('[[repos]]\nname = "x"\npath_prefix = "python"\nreleses = ["1.0"]\n')
    result = _run("ingest", "--pins", str(bad))
    assert result.exit_code == failures.CONFIG
    assert "repos.0.path_prefix" in result.output and "end with '/'" in result.output
    assert "repos.0.releses" in result.output
    bad.write_text("[[repos]\n")
    assert "invalid TOML" in _run("ingest", "--pins", str(bad)).output


def test_unreadable_git_location_fails_clearly(cli_env: Path) -> None:
    result = _run("ingest", "--git", (cli_env / "missing").as_uri(), "--ref", "main")
    assert result.exit_code == 1
    assert "cannot fetch 'main'" in result.output


def test_the_entry_docs_sentence_groups_thousands() -> None:
    from errkb.service.cli.materialize import sentence
    from errkb.service.entries.docs import Materialized

    built = sentence(Materialized(1234, 10_500_000, 120_800_000, 151.6, kept=9573))
    assert built == (
        "Built 1,234 entries for fast reads in 151.6 s (10.5 MB stored, 120.8 MB of JSON); "
        "9,573 entries unchanged."
    )
    assert sentence(Materialized(0, 0, 0, 0.1, skipped=True, kept=9573)) == (
        "Entry documents are current: none changed (9,573 entries kept)."
    )
    left = sentence(Materialized(12, 10_000, 100_000, 0.5, kept=3, deferred=2500))
    assert left == (
        "Built 12 entries for fast reads in 0.5 s (0.0 MB stored, 0.1 MB of JSON); 3 entries "
        "unchanged. 2,500 entries changed only by the new release in their version lists and "
        "line numbers: each is built when first read, or by `errkb docs` (which `errkb serve` "
        "starts in the background)."
    )


@pytest.mark.parametrize(
    "command",
    ["ingest", "serve", "match", "show", "explain", "export-site", "watch", "status", "docs"],
)
def test_help_shows_plain_placeholders(command: str) -> None:
    """Values are named as a person would (`--pypi SPEC`, `ID`), not by Python type
    (`--pypi <list[str]>`, `ID <str>`, `{ID}`), and the help fits 80 columns."""
    result = CliRunner().invoke(app, [command, "--help"], terminal_width=80)
    assert result.exit_code == 0, result.output
    for line in result.output.splitlines():
        assert "<" not in line.replace("<=", "") and "{" not in line, line
        assert len(line) <= 80, line
