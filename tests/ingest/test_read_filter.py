"""The read filter: texts it drops read no flag, including reads spelled in unusual ways."""

from __future__ import annotations

import ast

import pytest
from test_links import CATALOG

from errkb.core.records import FlagDef
from errkb.ingest.flag_links.linker import Linker
from errkb.ingest.flag_links.reads import Reads, parse_expr

SERVER = "srv/server_args.py"
TOOL = FlagDef(
    ("--backend",), "backend", "str", None, None, "B.", "bench/serving.py", 5, "argparse"
)
FLAGS = {**CATALOG, "backend": TOOL}

# Each reads a flag at a site in srv/x.py, spelled so that a naive word or pattern test misses it.
UNUSUAL_READS = [
    "getattr(args, 'tp\\x5fsize')",  # escaped constant
    "getattr(args, 'tp_' 'size')",  # adjacent literals joined
    "getattr(args, 'tp_' f'size')",  # not a constant: no read, but kept
    "args . port",  # spaces around the dot
    "(args.  # why\n port)",  # a comment between the dot and the name
    "(args.\\\n port)",  # a line continuation
    "(server_args).port",  # parenthesized object
    "(self.server_args ).port",
    "get_global_server_args( ).port",  # empty call with spaces
    "(get_x)().port",
    "x.args.args.port",  # a settings-like name that is also read from a settings-like name
    "'a.get_x'().port",  # a call of a constant whose text has get_ after its last dot
    "'a.ge' 't_x'().port",  # the same constant, split
    "ARGS.port",  # settings suffix in capitals
    "args.\uff54p_size",  # a non-ASCII identifier, NFKC-normalized to tp_size
    "layer.chunked_prefill_size",  # a specific dest from any object
    "f'{args.port}'",  # inside an f-string
    "[a for a in args.model]",
]
NO_READS = [
    "self.model is None",  # a generic dest from an object that does not look like settings
    "tp_size > 1",  # a bare name
    "chunked_prefill_size",
    "request.port > 0 and args",
    "self.model_config.hf_config",  # a dest's name as a prefix of an attribute
    "args.backend == 'vllm'",  # an argparse dest outside its own file
]


def exact(text: str, path: str, linker: Linker) -> bool:
    node = parse_expr(text)
    reads = Reads(linker.catalog, path, linker.server_paths)
    return node is not None and any(reads.dest(n) is not None for n in ast.walk(node))


@pytest.mark.parametrize("text", UNUSUAL_READS + NO_READS)
def test_a_text_that_reads_is_kept(text: str) -> None:
    linker = Linker(FLAGS)
    assert linker.filter is not None
    reads = exact(text, "srv/x.py", linker)
    assert reads == (text in UNUSUAL_READS and "f'size'" not in text)
    if reads:
        assert linker.filter.may_read(text, "srv/x.py")


def test_texts_without_reads_are_dropped() -> None:
    linker = Linker(FLAGS)
    assert linker.filter is not None
    assert not [t for t in NO_READS if linker.filter.may_read(t, "srv/x.py")]


def test_argparse_dests_are_looked_for_in_their_own_file_only() -> None:
    linker = Linker(FLAGS)
    assert linker.filter is not None
    text = "args.backend == 'vllm'"
    assert exact(text, "bench/serving.py", linker)
    assert linker.filter.may_read(text, "bench/serving.py")
    assert not linker.filter.may_read(text, "srv/x.py")
