"""Turning untrusted file bytes into parseable text, or into a status saying why not.

Scanned files are hostile input: they may be huge, binary, not UTF-8, or crafted to exhaust the
parser. Everything here is a cheap check on bytes done before `ast.parse` ever sees the file, so a
bad file costs a status string, never a crash or a long stall.
"""

from __future__ import annotations

import codecs
import io
import tokenize

from errkb.core.records import ExtractConfig, FileResult
from errkb.ingest.extract.flag_classes import class_markers

FLAG_MARKER = b"add_argument"
NUL = b"\x00"
EARLY_STATUSES = frozenset({"too_large", "prefiltered", "null_bytes"})  # what `rejected` gives


def may_raise(data: bytes, markers: tuple[str, ...]) -> bool:
    """True when the bytes contain one of the marker words (`ExtractConfig.markers`: a site is
    possible)."""
    return any(name.encode() in data for name in markers)


def may_import(data: bytes, config: ExtractConfig) -> bool:
    """True when import sites are read (`ExtractConfig.own_packages`) and the file may hold one."""
    return bool(config.own_packages) and b"import" in data


def may_define_flags(data: bytes, flag_classes: tuple[str, ...], path: str) -> bool:
    """True when the file may define command-line flags (argparse call or a flag class).

    Path-glob entries (`*/fields/*.py:*`) are decided by the path first, so a class glob does
    not let every file containing `class ` through.
    """
    return FLAG_MARKER in data or any(m in data for m in class_markers(flag_classes, path))


def rejected(data: bytes, path: str, config: ExtractConfig) -> FileResult | None:
    """The status of a file that must not be parsed, or None when it may be."""
    if len(data) > config.max_bytes:
        return FileResult(status="too_large", detail=f"{len(data)} bytes > {config.max_bytes}")
    if (
        not may_raise(data, config.markers)
        and not may_import(data, config)
        and not may_define_flags(data, config.flag_classes, path)
    ):
        return FileResult(status="prefiltered")
    if NUL in data:
        return FileResult(status="null_bytes", detail=f"NUL at byte {data.index(NUL)}")
    return None


def source_encoding(data: bytes) -> str:
    """The encoding Python reads the file in: its PEP 263 coding line, else UTF-8.

    Raises SyntaxError for a coding line naming an unknown codec, as Python does.
    """
    first = data.find(b"\n")
    second = data.find(b"\n", first + 1) if first >= 0 else -1
    head = data if second < 0 else data[:second]  # a cookie counts only on the first two lines
    if b"coding" not in head:  # the common case: no cookie, no tokenizer
        return "utf-8"
    encoding, _ = tokenize.detect_encoding(io.BytesIO(data).readline)
    return codecs.lookup(encoding).name


def decoded(data: bytes) -> str | FileResult:
    """The file as text, decoded as Python would (PEP 263), with newlines normalized, or a
    `not_utf8` result when Python could not read it either."""
    try:
        encoding = source_encoding(data)
        text = data.decode(encoding)
    except SyntaxError as exc:  # a coding line naming an unknown or mismatched codec
        return FileResult(status="not_utf8", detail=str(exc.msg))
    except UnicodeDecodeError as exc:
        return FileResult(
            status="not_utf8", detail=f"{exc.reason} at byte {exc.start} ({exc.encoding})"
        )
    if text.startswith("\ufeff"):
        text = text[1:]
    # The tokenizer treats \r\n and a lone \r as line ends; normalizing keeps our line list and
    # the AST's line numbers in step.
    if "\r" in text:
        text = text.replace("\r\n", "\n").replace("\r", "\n")
    return text
