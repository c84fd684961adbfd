"""docker-compose.yml: PostgreSQL, a one-shot ingest and the API, wired by ERRKB_DATABASE_URL."""

from __future__ import annotations

from pathlib import Path
from urllib.parse import urlsplit

import yaml

from errkb.core.settings import Settings
from errkb.service.cli.main import app

ROOT = Path(__file__).resolve().parents[2]


def _compose() -> dict:
    return yaml.safe_load((ROOT / "docker-compose.yml").read_text())


def test_services_exist_and_are_wired() -> None:
    services = _compose()["services"]
    assert {"postgres", "api", "ingest"} <= set(services)
    assert services["ingest"]["command"][:2] == ["errkb", "ingest"]
    assert services["ingest"]["restart"] == "no"  # one-shot
    assert services["api"]["command"][:2] == ["errkb", "serve"]
    assert services["api"]["depends_on"]["ingest"]["condition"] == "service_completed_successfully"
    assert services["watch"]["command"][:2] == ["errkb", "watch"]
    assert services["watch"]["restart"] == "unless-stopped"  # follows the index for good
    assert services["watch"]["depends_on"]["ingest"]["condition"] == (
        "service_completed_successfully"
    )
    # The watcher only ingests; the api builds the documents (first requests and its keeper),
    # so a new release is served once committed and no document is built by both.
    assert services["watch"]["environment"]["ERRKB_MATERIALIZE_ENTRIES"] == "false"
    assert "ERRKB_SERVE_BUILDS_DOCS" not in services["api"]["environment"]
    commands = {c.name or c.callback.__name__ for c in app.registered_commands}
    assert {"ingest", "serve", "watch", "status"} <= commands
    for name in ("api", "ingest", "watch"):
        assert services[name]["build"] == "."
        assert services[name]["depends_on"]["postgres"]["condition"] == "service_healthy"


def test_database_url_reaches_the_postgres_service() -> None:
    services = _compose()["services"]
    pg_env = services["postgres"]["environment"]
    for name in ("api", "ingest", "watch"):
        env = services[name]["environment"]
        url = urlsplit(env["ERRKB_DATABASE_URL"])
        assert url.scheme == "postgresql" and url.hostname == "postgres"
        assert (
            url.username == pg_env["POSTGRES_USER"] and url.password == pg_env["POSTGRES_PASSWORD"]
        )
        assert url.path == "/" + pg_env["POSTGRES_DB"]
        # Every variable handed to errkb is one that Settings reads.
        for var in env:
            assert var.startswith("ERRKB_")
            assert var.removeprefix("ERRKB_").lower() in Settings.model_fields, var


def test_dockerfile_ships_what_the_commands_need() -> None:
    dockerfile = (ROOT / "Dockerfile").read_text()
    # Every folder the package is built from is copied in, and the image installs the wheel.
    for needed in ("migrations", "ingest", "knowledge", "service", "errkb", "pyproject.toml"):
        assert f"COPY {needed} " in dockerfile, needed
    assert "pip wheel" in dockerfile and "/wheels/*.whl" in dockerfile
    assert "-e ." not in dockerfile
    for var in ("ERRKB_DATA_DIR", "ERRKB_CACHE_DIR", "ERRKB_HOST"):
        assert var in dockerfile and var.removeprefix("ERRKB_").lower() in Settings.model_fields
