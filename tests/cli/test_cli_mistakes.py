"""Plain user mistakes, made as a user makes them (the installed console script, a real
environment): each gets one line that says what is wrong and what to do, an exit code of its
kind (never 70, "a bug"), and leaves no file or folder behind.
"""

from __future__ import annotations

import os
import socket
import subprocess
import sys
from pathlib import Path

import pytest
from local_index import LocalIndex, serving, wheel_bytes

from errkb.service.cli import failures

ERRKB = Path(sys.executable).parent / "errkb"
UNKNOWN_ID = "0123456789abcdef"


def _tree(root: Path) -> set[str]:
    return {str(p.relative_to(root)) for p in root.rglob("*")}


def _run(tmp_path: Path, args: list[str | bytes], env: dict[str, str]) -> tuple[int, list[str]]:
    """Run `errkb args` in `tmp_path`; (exit code, the non-empty lines it printed)."""
    before = _tree(tmp_path)
    base = {k: v for k, v in os.environ.items() if not k.startswith("ERRKB_")}
    settings = {"ERRKB_CACHE_DIR": str(tmp_path / "cache"), "ERRKB_DATA_DIR": str(tmp_path / "d")}
    done = subprocess.run(
        [str(ERRKB), *args],
        env={**base, **settings, **env},
        cwd=tmp_path,
        stdin=subprocess.DEVNULL,  # an empty standard input, as `< /dev/null` gives
        capture_output=True,
        timeout=120,
    )
    out = (done.stdout + done.stderr).decode("utf-8", "replace")
    assert _tree(tmp_path) == before, "the mistake left files or folders behind"
    return done.returncode, [line for line in out.splitlines() if line.strip()]


@pytest.mark.parametrize(
    ("url", "says"),
    [
        ("notaurl", "'notaurl' is not a database URL: use sqlite:///PATH or postgresql://"),
        ("mysql://me@db.example/kb", "errkb works with SQLite and PostgreSQL, not mysql"),
        ("sqlite:////proc/errkb-test.sqlite3", "cannot create the SQLite database /proc/"),
    ],
)
@pytest.mark.parametrize("command", [["serve", "--port", "1"], ["show", UNKNOWN_ID], ["ingest"]])
def test_a_database_url_errkb_cannot_use(
    tmp_path: Path, url: str, says: str, command: list[str]
) -> None:
    code, lines = _run(tmp_path, list[str | bytes](command), {"ERRKB_DATABASE_URL": url})
    assert code == failures.CONFIG, lines
    assert len(lines) == 1 and lines[0].startswith("error: ") and says in lines[0], lines
    assert not Path("/proc/errkb-test.sqlite3").exists()


def test_serve_does_not_create_the_missing_folders_of_a_mistyped_path(tmp_path: Path) -> None:
    url = f"sqlite:///{tmp_path / 'mistyped' / 'kb.sqlite3'}"
    code, lines = _run(tmp_path, ["serve", "--port", "1"], {"ERRKB_DATABASE_URL": url})
    assert code == failures.CONFIG, lines
    assert len(lines) == 1 and f"there is no folder {tmp_path / 'mistyped'}" in lines[0], lines
    assert "errkb ingest creates it" in lines[0]


def _folder(tmp_path: Path) -> Path:
    src = tmp_path / "src" / "pkg"
    src.mkdir(parents=True)
    (src / "m.py").write_text("def f(n):\n    if n:\n        raise ValueError('bad n')\n")
    return tmp_path / "src"


@pytest.mark.parametrize("repo", [[], ["--repo", "sgl-project/sglang"]])
def test_ingest_dir_on_a_symlink_loop(tmp_path: Path, repo: list[str | bytes]) -> None:
    (tmp_path / "loop").symlink_to("loop")
    url = f"sqlite:///{tmp_path / 'kb' / 'kb.sqlite3'}"  # ingest would create this folder
    code, lines = _run(tmp_path, ["ingest", "--dir", "loop", *repo], {"ERRKB_DATABASE_URL": url})
    assert code == failures.BAD_INPUT, lines
    assert lines == ["error: cannot read the folder 'loop': it is a symlink loop"]


@pytest.mark.parametrize("repo", [[], ["--repo", "sgl-project/sglang"]])
def test_ingest_dir_with_a_label_that_is_not_utf8(tmp_path: Path, repo: list[str | bytes]) -> None:
    src = _folder(tmp_path)
    url = f"sqlite:///{tmp_path / 'kb' / 'kb.sqlite3'}"
    args: list[str | bytes] = ["ingest", "--dir", str(src), "--label", b"v\xff\xfe", *repo]
    code, lines = _run(tmp_path, args, {"ERRKB_DATABASE_URL": url})
    assert code == failures.BAD_INPUT, lines
    assert lines == [
        "error: the label 'v\\xff\\xfe' is not valid UTF-8 text: give --label (and --repo) in UTF-8"
    ]


def test_ingest_dir_on_a_folder_whose_name_is_not_utf8(tmp_path: Path) -> None:
    src = _folder(tmp_path)
    odd = os.fsencode(tmp_path) + b"/\xff"
    os.rename(src, odd)
    url = f"sqlite:///{tmp_path / 'kb' / 'kb.sqlite3'}"
    code, lines = _run(tmp_path, ["ingest", "--dir", odd], {"ERRKB_DATABASE_URL": url})
    assert code == failures.BAD_INPUT, lines
    assert len(lines) == 1 and "the folder's name '\\xff' is not valid UTF-8 text" in lines[0]


def test_ingest_dir_on_no_folder(tmp_path: Path) -> None:
    url = f"sqlite:///{tmp_path / 'kb' / 'kb.sqlite3'}"
    code, lines = _run(tmp_path, ["ingest", "--dir", "nowhere"], {"ERRKB_DATABASE_URL": url})
    assert (code, lines) == (failures.BAD_INPUT, ["error: there is no folder 'nowhere'"])


def test_an_invalid_setting_is_named_as_the_environment_spells_it(tmp_path: Path) -> None:
    code, lines = _run(tmp_path, ["show", UNKNOWN_ID], {"ERRKB_MATCH_NICE": "99"})
    assert code == failures.CONFIG, lines
    assert lines == [
        "error: the setting ERRKB_MATCH_NICE ('99') is not valid: "
        "Input should be less than or equal to 19"
    ]


def test_debug_is_a_switch(tmp_path: Path) -> None:
    code, lines = _run(tmp_path, ["--help"], {})
    (debug,) = [line for line in lines if "--debug" in line]
    assert debug.split() == "--debug print the full traceback of a failure".split()
    assert not any("<bool>" in line for line in lines), lines
    # A switch: the next word is the command, and the failure comes with its traceback.
    code, lines = _run(tmp_path, ["--debug", "show", UNKNOWN_ID], {"ERRKB_DATABASE_URL": "x"})
    assert code == failures.CONFIG
    assert lines[0] == "Traceback (most recent call last):" and "ConfigError" in lines[-2]
    assert lines[-1].startswith("error: ERRKB_DATABASE_URL 'x' is not a database URL")


def test_ingest_dir_on_a_folder_with_no_python_file(tmp_path: Path) -> None:
    """Refused before anything is written: no empty project listed by `status` from then on."""
    (tmp_path / "docs").mkdir()
    (tmp_path / "docs" / "notes.txt").write_text("no code here\n")
    url = f"sqlite:///{tmp_path / 'kb' / 'kb.sqlite3'}"
    code, lines = _run(tmp_path, ["ingest", "--dir", "docs"], {"ERRKB_DATABASE_URL": url})
    assert code == failures.BAD_INPUT, lines
    assert lines == ["error: docs holds no Python file (*.py): there is nothing to ingest"]


@pytest.mark.parametrize("source", [["-"], ["empty.log"], []])
def test_match_of_an_empty_input(tmp_path: Path, source: list[str | bytes]) -> None:
    (tmp_path / "empty.log").write_text("  \n")
    url = f"sqlite:///{tmp_path / 'kb' / 'kb.sqlite3'}"
    code, lines = _run(tmp_path, ["match", *source], {"ERRKB_DATABASE_URL": url})
    assert code == failures.USAGE, lines
    where = "empty.log" if source == ["empty.log"] else "standard input"
    assert len(lines) == 1 and lines[0].startswith(f"error: {where} is empty: give the log"), lines


@pytest.mark.parametrize("error_id", ["xyz", "0123456789abcdeg", "0123456789abcdef0"])
def test_show_of_a_malformed_id(tmp_path: Path, error_id: str) -> None:
    url = f"sqlite:///{tmp_path / 'kb' / 'kb.sqlite3'}"
    code, lines = _run(tmp_path, ["show", error_id], {"ERRKB_DATABASE_URL": url})
    assert code == failures.USAGE, lines
    assert lines == [
        f"error: {error_id!r} is not an error id: an id is 16 hexadecimal digits, as "
        "`errkb match` and the pages show them"
    ]


def test_serve_on_a_busy_port(tmp_path: Path) -> None:
    """Refused at once, in one line, before the app starts or the database is made."""
    with socket.socket() as busy:
        busy.bind(("127.0.0.1", 0))
        busy.listen()
        port = busy.getsockname()[1]
        url = f"sqlite:///{tmp_path / 'kb' / 'kb.sqlite3'}"
        code, lines = _run(tmp_path, ["serve", "--port", str(port)], {"ERRKB_DATABASE_URL": url})
    assert code == failures.CONFIG, lines
    assert lines == [
        f"error: cannot listen on 127.0.0.1:{port}: Address already in use (choose another --port)"
    ]


def test_ingest_writes_nothing_under_the_current_folder(tmp_path: Path) -> None:
    """With the database elsewhere, the downloaded release goes to the user's cache folder
    (XDG_CACHE_HOME here), never to ./data/cache of the folder the ingest is run from."""
    work, elsewhere = tmp_path / "work", tmp_path / "kb"
    for folder in (work, elsewhere):
        folder.mkdir()
    (tmp_path / "pins.toml").write_text('[[repos]]\nname = "tests/demo"\npypi_name = "demo"\n')
    served = LocalIndex()
    body = b"def f(n):\n    raise ValueError(f'bad {n}')\n"
    served.add("demo", "1.0", "demo-1.0-py3-none-any.whl", wheel_bytes({"demo/m.py": body}))
    base = {k: v for k, v in os.environ.items() if not k.startswith("ERRKB_")}
    with serving(served):
        env = {
            **base,
            "XDG_CACHE_HOME": str(tmp_path / "user-cache"),
            "ERRKB_DATABASE_URL": f"sqlite:///{elsewhere / 'kb.sqlite3'}",
            "ERRKB_PINS_FILE": str(tmp_path / "pins.toml"),
            "ERRKB_INDEX_URL": served.url,
        }
        done = subprocess.run(
            [str(ERRKB), "ingest", "--pypi", "demo==1.0"],
            env=env,
            cwd=work,
            stdin=subprocess.DEVNULL,
            capture_output=True,
            timeout=120,
        )
    assert done.returncode == 0, done.stderr.decode()
    assert _tree(work) == set()
    assert (tmp_path / "user-cache" / "errkb" / "pypi" / "demo-1.0-py3-none-any.whl").exists()
