"""Small pure parts of the pipeline: titles, pins, repo configs chosen for command-line sources."""

from __future__ import annotations

from pathlib import Path

import pytest

from errkb.core.errors import ConfigError
from errkb.ingest.extract import ExtractConfig, extract_file
from errkb.ingest.pins import Pins, RepoPin, load_pins
from errkb.ingest.plan import git_repo_pin, pypi_planned
from errkb.ingest.snapshot_rows import TITLE_CHARS, title_of

ROOT = Path(__file__).resolve().parents[2]


def test_title_is_the_first_sentence_shortened() -> None:
    message = (
        "--enable-unified-memory with PD disaggregation does not support hybrid-SWA models yet "
        "(no whole-envelope transfer scheme for the SWA sub-pool). Drop --enable-unified-memory."
    )
    title = title_of(message, "ValueError")
    assert title.startswith("--enable-unified-memory with PD disaggregation")
    assert "Drop" not in title and len(title) <= TITLE_CHARS + 1 and title.endswith("…")
    assert title_of("Invalid   mode\n given.  Use a or b.", "ValueError") == "Invalid mode given."
    assert title_of("", "ValueError") == "ValueError raised without a message"
    assert title_of("v1.2 is not supported", "ValueError") == "v1.2 is not supported"


def test_the_default_pins_are_valid() -> None:
    pins = load_pins(ROOT / "pins.toml")
    sglang = pins.repo("sgl-project/sglang")
    assert sglang.path_prefix == "python/" and sglang.tag_pattern.format(version="1") == "v1"
    assert sglang.releases == ("0.5.18", "0.5.19", "0.5.20", "0.5.23")
    assert "ServerArgs" in sglang.flag_classes and sglang.launch_command
    config = sglang.extract_config(123)
    assert config.every_class and config.asserts and config.max_bytes == 123
    assert config.lookups == ("params_dict",)
    assert sglang.only(("ValueError",)).extract_config(1).markers == ("ValueError",)


def test_pins_errors_are_config_errors(tmp_path: Path) -> None:
    with pytest.raises(ConfigError, match="not found"):
        load_pins(tmp_path / "missing.toml")
    dup = tmp_path / "dup.toml"
    dup.write_text('[[repos]]\nname = "a"\n[[repos]]\nname = "a"\n')
    with pytest.raises(ConfigError, match="unique"):
        load_pins(dup)
    bad = tmp_path / "bad.toml"
    bad.write_text('[[repos]]\nname = "a"\ntag_pattern = "v{ver}"\n')
    with pytest.raises(ConfigError, match=r"repos\.0\.tag_pattern"):
        load_pins(bad)


def test_command_line_sources_pick_the_matching_repo_config() -> None:
    pins = Pins(
        repos=(
            RepoPin(
                name="org/proj", git_url="https://example.test/org/proj.git", pypi_name="Proj_X"
            ),
        )
    )
    repo, _ = pypi_planned("proj-x==1.0", pins, None, Path("/nonexistent"), 1000)
    assert repo.name == "org/proj"  # matched by normalized PyPI name
    other, _ = pypi_planned("other==2", pins, None, Path("/nonexistent"), 1000)
    assert other.name == "other" and other.pypi_name == "other"
    assert git_repo_pin("https://example.test/org/proj/", pins, None).name == "org/proj"
    assert git_repo_pin("https://example.test/a/b.git", pins, None).name == "a/b"
    with pytest.raises(ConfigError):
        git_repo_pin("https://example.test/a/b.git", pins, "nope")


def test_a_message_of_values_only_is_titled_by_what_fails_and_where() -> None:
    source = (
        "def prepare(block_size, e):\n"
        "    assert tuple(block_size) == (32, 32), f'{block_size}'\n"
        "    if e:\n"
        "        raise RuntimeError(f'{e}')\n"
        "    assert block_size, f'block size {block_size}'\n"
    )
    config = ExtractConfig(exceptions=("*",), asserts=True)
    sites = extract_file(source.encode(), "m.py", config).sites
    titles = [title_of(s.template.display, s.exception, s) for s in sites]
    assert titles == [
        "assert tuple(block_size) == (32, 32) (prepare)",
        "RuntimeError {e} in prepare",
        "block size {block_size}",  # a message with words keeps its own
    ]
