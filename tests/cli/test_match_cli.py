"""`errkb match [FILE|-]` on a database filled by the real pipeline (SQLite and PostgreSQL)."""

from __future__ import annotations

import json
from pathlib import Path

import pytest
from match_project import SWA, ingest_version, swa_id, swa_line, traceback
from typer.testing import CliRunner

from errkb.service.cli.main import app


def test_match_command_table_json_stdin_and_exit_codes(
    db_url: str, tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    ingest_version(db_url, tmp_path, 1)
    monkeypatch.setenv("ERRKB_DATABASE_URL", db_url)
    monkeypatch.setenv("COLUMNS", "200")
    log = tmp_path / "log.txt"
    log.write_text(traceback(swa_line(1)))
    runner = CliRunner()

    table = runner.invoke(app, ["match", str(log)])
    assert table.exit_code == 0, table.output
    assert swa_id() in table.output and "v1" in table.output
    assert f"python/pkg/pool.py:{swa_line(1)}" in table.output

    as_json = runner.invoke(app, ["match", "--json", "-"], input=f"ValueError: {SWA}")
    assert as_json.exit_code == 0, as_json.output
    top = json.loads(as_json.output)["matches"][0]
    assert top["id"] == swa_id() and top["site"] is None

    nothing = runner.invoke(app, ["match", "-"], input="all quiet")
    assert nothing.exit_code == 1 and "no known error found" in nothing.output
    missing = runner.invoke(app, ["match", str(tmp_path / "absent.txt")])
    assert missing.exit_code == 2
