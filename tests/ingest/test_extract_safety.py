"""Broken or hostile files get a status and never an exception; cheap files are never parsed."""

from __future__ import annotations

import pytest

from errkb.core.records import ExtractConfig, FileResult
from errkb.ingest.extract import EXTRACTOR_VERSION, extract_file, flag_defs

CONFIG = ExtractConfig(max_bytes=1_000_000)
RAISE = b"raise ValueError('x')\n"


@pytest.mark.parametrize(
    ("data", "status", "parsed"),
    [
        (b"def f(:\n" + RAISE, "syntax_error", True),
        (b"if x:\nraise ValueError('x')\n", "syntax_error", True),
        (b"x = " + b"(" * 100_000 + b"\n" + RAISE, "syntax_error", True),  # tokenizer's limit
        (b"x = " + b"-" * 100_000 + b"1\n" + RAISE, "too_deep", True),  # MemoryError
        (b"x = " + b"a+" * 100_000 + b"a\n" + RAISE, "too_deep", True),  # RecursionError
        (b"x = 1\x00\n" + RAISE, "null_bytes", False),
        ("x = 'caf\u00e9'\n".encode("latin-1") + RAISE, "not_utf8", False),
        (b"# " + b"x" * 1_000_001 + b"\n" + RAISE, "too_large", False),
        (b"x = 1\n", "prefiltered", False),
    ],
)
def test_bad_files_get_a_status(data: bytes, status: str, parsed: bool) -> None:
    result = extract_file(data, "bad.py", CONFIG)
    assert (result.status, result.parsed) == (status, parsed), result.detail
    assert result.sites == ()


def test_recursion_deep_inside_one_raise_keeps_the_site() -> None:
    # Parses fine, but following the message or the guard recursively would overflow the stack.
    terms = b"+a" * 900
    data = b"def f(a):\n    if a" + terms + b":\n        raise ValueError('s'" + terms + b")\n"
    result = extract_file(data, "deep.py", CONFIG)
    assert result.status == "ok", result.detail
    (site,) = result.sites
    assert site.template.form == "other"
    assert site.template.segments[0].text.startswith("'s'+a+a")


def test_syntax_warnings_of_scanned_code_neither_fail_nor_leak() -> None:
    # pytest runs with filterwarnings=error: a leaked SyntaxWarning would fail the parse.
    data = b'def f(s):\n    """\\( not an escape"""\n    raise ValueError("x")\n'
    result = extract_file(data, "warn.py", CONFIG)
    assert result.status == "ok", result.detail
    assert len(result.sites) == 1


def test_utf8_with_bom_and_crlf_keeps_line_numbers() -> None:
    data = b"\xef\xbb\xbfimport os\r\n\r\nif x:\r\n    raise ValueError('caf\xc3\xa9')\r\n"
    result = extract_file(data, "ok.py", CONFIG)
    assert result.status == "ok" and result.parsed
    (site,) = result.sites
    assert (site.line, site.template.display) == (4, "café")
    assert site.snippet.lines[-1] == "    raise ValueError('café')"


def test_prefilter_skips_files_without_exception_name_or_flag_marker() -> None:
    config = ExtractConfig(exceptions=("ConfigError",), flag_classes=("ServerArgs",))
    assert extract_file(b"raise ValueError('x')\n", "a.py", config).status == "prefiltered"
    for data in (
        b"raise ConfigError('x')\n",
        b"p.add_argument('--x')\n",
        b"class ServerArgs: ...\n",
    ):
        result = extract_file(data, "a.py", config)
        assert (result.status, result.parsed) == ("ok", True)


def test_path_glob_flag_classes_prefilter_by_path() -> None:
    config = ExtractConfig(flag_classes=("*/arg_groups/fields/*.py:*",))
    data = b"class Memory:\n    x: int = 1\n"
    assert extract_file(data, "pkg/models/memory.py", config).status == "prefiltered"
    inside = extract_file(data, "pkg/arg_groups/fields/memory.py", config)
    assert (inside.status, [f.dest for f in inside.flags]) == ("ok", ["x"])


def test_a_failing_flag_extractor_does_not_lose_sites(monkeypatch: pytest.MonkeyPatch) -> None:
    def broken(*args: object) -> tuple[()]:
        raise KeyError("flag bug")

    monkeypatch.setattr(flag_defs, "flags_from_tree", broken)
    result = extract_file(b"p.add_argument('--x')\n" + RAISE, "a.py", CONFIG)
    assert result.status == "ok"
    assert len(result.sites) == 1
    assert "KeyError" in result.detail and result.flags == ()


def test_flag_extractor_is_called_only_when_flags_are_possible(
    monkeypatch: pytest.MonkeyPatch,
) -> None:
    calls: list[str] = []

    def spy(tree: object, source: str, path: str, flag_classes: tuple[str, ...]) -> tuple[()]:
        calls.append(path)
        return ()

    monkeypatch.setattr(flag_defs, "flags_from_tree", spy)
    extract_file(RAISE, "no_flags.py", CONFIG)
    extract_file(b"p.add_argument('--x')\n", "flags.py", CONFIG)
    assert calls == ["flags.py"]


def test_scanned_code_is_never_run(tmp_path: object) -> None:
    data = b"import os\nos.system('touch /tmp/errkb-pwned')\n__import__('sys').exit(3)\n" + RAISE
    result = extract_file(data, "evil.py", CONFIG)
    assert isinstance(result, FileResult) and result.status == "ok"
    assert len(result.sites) == 1


def test_version_is_a_nonempty_string() -> None:
    assert isinstance(EXTRACTOR_VERSION, str) and EXTRACTOR_VERSION
