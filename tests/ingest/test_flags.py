"""The flag catalog: argparse calls and settings dataclasses, on small sources and real sglang."""

from __future__ import annotations

import ast
import textwrap
import zipfile

import pytest
from wheels import sglang_wheel

from errkb.core.flag_catalog import flag_catalog
from errkb.core.records import FlagDef
from errkb.ingest.extract.flag_classes import class_markers
from errkb.ingest.extract.flag_defs import flags_from_tree


def _flags(source: str, classes: tuple[str, ...] = ()) -> tuple[FlagDef, ...]:
    source = textwrap.dedent(source)
    return flags_from_tree(ast.parse(source), source, "pkg/args.py", classes)


def test_add_argument_calls_nested_in_expressions_are_found() -> None:
    flags = _flags(
        """
        def build(p, extra):
            return [
                q.add_argument(
                    "--nested-flag", type=int
                ) for q in (p,)
            ], (lambda: p
                .add_argument("--in-lambda"))
        """
    )
    assert [f.dest for f in flags] == ["nested_flag", "in_lambda"]


def test_add_argument_flags_dest_type_default_choices_help() -> None:
    flags = _flags(
        """
        import argparse
        p = argparse.ArgumentParser()
        p.add_argument("--tp-size", "--tensor-parallel-size", type=int, default=1,
                       help="The tensor " "parallelism size.")
        group = p.add_argument_group("x")
        group.add_argument("-q", "--quant-method", dest="quantization",
                           choices=["awq", "fp8"], default=None)
        p.add_argument("--enable-x", action="store_true", help=f"Enable {NAME}.")
        p.add_argument("--files", nargs="+", type=str)
        p.add_argument("positional")
        p.add_argument(*names)
        """
    )
    by_dest = {f.dest: f for f in flags}
    assert set(by_dest) == {"tp_size", "quantization", "enable_x", "files"}
    tp = by_dest["tp_size"]
    assert tp.flags == ("--tp-size", "--tensor-parallel-size")
    assert (tp.type, tp.default, tp.help) == ("int", "1", "The tensor parallelism size.")
    assert (tp.path, tp.line, tp.origin) == ("pkg/args.py", 4, "argparse")
    q = by_dest["quantization"]
    assert q.flags == ("-q", "--quant-method") and q.choices == ("awq", "fp8")
    assert q.default == "None"
    x = by_dest["enable_x"]
    assert (x.type, x.default, x.help) == ("bool", "False", "Enable {NAME}.")
    assert by_dest["files"].type == "list[str]"


def test_argparse_default_from_class_attribute_in_same_file() -> None:
    flags = _flags(
        """
        @dataclass
        class Args:
            host: str = "127.0.0.1"
        def add(parser):
            parser.add_argument("--host", default=Args.host, help="Host.")
            parser.add_argument("--other", default=Other.port)
        """
    )
    by_dest = {f.dest: f for f in flags}
    assert by_dest["host"].default == '"127.0.0.1"'
    assert by_dest["other"].default == "Other.port"


def test_settings_dataclass_fields_in_every_style() -> None:
    flags = _flags(
        """
        from typing import Annotated as Ann
        @dataclass
        class ServerArgs:
            model_path: A[str, Arg(help="The model.", aliases=["--model"]), NS("m")]
            host: A[str, "The host of the HTTP server."] = "127.0.0.1"
            mode: A[Literal["null", "prefill", "decode"], "PD mode."] = "null"
            fmt: A[str, Arg(help="Fmt.", choices=CHOICES)] = "auto"
            hidden: A[Optional[bool], Arg(no_cli=True)] = None
            tp_size: int = 1
            '''Tensor parallel size.'''
            items: List[str] = field(default_factory=list)
            plain: Ann[int, "Annotated under an alias."] = 3
            kind: Literal["a", "b"] = "a"
            LIMIT: ClassVar[int] = 3
            def method(self) -> None:
                local: int = 1
        class Unrelated:
            field_x: int = 1
        """,
        ("ServerArgs",),
    )
    by_dest = {f.dest: f for f in flags}
    assert set(by_dest) == {
        "model_path",
        "host",
        "mode",
        "fmt",
        "hidden",
        "tp_size",
        "items",
        "plain",
        "kind",
    }
    mp = by_dest["model_path"]
    assert mp.flags == ("--model-path", "--model") and mp.help == "The model."
    assert mp.default is None and mp.origin == "dataclass" and mp.cli
    host = by_dest["host"]
    assert (host.flags, host.type, host.default) == (("--host",), "str", '"127.0.0.1"')
    assert host.help == "The host of the HTTP server."
    assert by_dest["mode"].choices == ("null", "prefill", "decode")
    assert by_dest["fmt"].choices == ("CHOICES",)
    assert by_dest["hidden"].cli is False
    assert by_dest["tp_size"].help == "Tensor parallel size."
    assert by_dest["items"].default == "list()"
    assert by_dest["plain"].help == "Annotated under an alias."
    assert by_dest["kind"].choices == ("a", "b") and by_dest["kind"].help is None


def test_catalog_merges_field_with_argparse_of_its_file_only() -> None:
    source = """
        @dataclass
        class ServerArgs:
            tp_size: int = 1
            port: int = 30000
        def add(parser):
            parser.add_argument("--tensor-parallel-size", "--tp-size", type=int,
                                default=ServerArgs.tp_size, help="The tensor parallelism size.")
        """
    tool = """
        parser.add_argument("--port", type=int, default=8080, help="Benchmark client port.")
        parser.add_argument("--model", help="Benchmark model.")
        """
    defs = _flags(source, ("ServerArgs",)) + tuple(
        f.__class__(**{**f.__dict__, "path": "bench/tool.py"}) for f in _flags(tool)
    )
    catalog = flag_catalog(defs)
    tp = catalog["tp_size"]
    assert tp.flags == ("--tp-size", "--tensor-parallel-size")
    assert tp.help == "The tensor parallelism size." and tp.default == "1"
    port = catalog["port"]
    assert (port.path, port.default, port.help) == ("pkg/args.py", "30000", None)
    assert catalog["model"].path == "bench/tool.py"


def _server_args(version: str) -> tuple[str, str]:
    with zipfile.ZipFile(sglang_wheel(version)) as zf:
        return "sglang/srt/server_args.py", zf.read("sglang/srt/server_args.py").decode()


@pytest.mark.sglang
def test_sglang_0_5_18_catalog_has_every_server_args_field_with_help() -> None:
    path, source = _server_args("0.5.18")
    tree = ast.parse(source)
    # Independent count: every annotated assignment directly in the ServerArgs class body.
    cls = next(n for n in tree.body if isinstance(n, ast.ClassDef) and n.name == "ServerArgs")
    fields = {s.target.id for s in cls.body if isinstance(s, ast.AnnAssign)}  # type: ignore[union-attr]
    calls = [
        n
        for n in ast.walk(tree)
        if isinstance(n, ast.Call) and getattr(n.func, "attr", None) == "add_argument"
    ]
    flags = flags_from_tree(tree, source, path, ("ServerArgs",))
    dataclass = [f for f in flags if f.origin == "dataclass"]
    argparse_ = [f for f in flags if f.origin == "argparse"]
    print(
        f"\n0.5.18 server_args.py: {len(fields)} fields, {len(calls)} add_argument calls, "
        f"{len(dataclass)} dataclass flags, {len(argparse_)} argparse flags"
    )
    assert len(fields) == 472
    assert {f.dest for f in dataclass} == fields and len(dataclass) == len(fields)
    assert all(f.help for f in dataclass)
    assert len(argparse_) == len(calls)  # every call there names its flags literally
    catalog = flag_catalog(flags)
    eum = catalog["enable_unified_memory"]
    assert (eum.flags, eum.type, eum.default) == (("--enable-unified-memory",), "bool", "False")
    dm = catalog["disaggregation_mode"]
    assert dm.choices == ("null", "prefill", "decode") and dm.default == '"null"'
    assert catalog["tp_size"].flags == ("--tp-size", "--tensor-parallel-size")
    assert "--stream-output" in catalog["incremental_streaming_output"].flags


@pytest.mark.sglang
def test_sglang_0_5_18_whole_tree_catalog_keeps_server_args_over_tools() -> None:
    defs: list[FlagDef] = []
    with zipfile.ZipFile(sglang_wheel("0.5.18")) as zf:
        for name in zf.namelist():
            if not name.endswith(".py"):
                continue
            source = zf.read(name).decode("utf-8", "replace")
            if "add_argument" in source or "class ServerArgs" in source:
                defs += flags_from_tree(ast.parse(source), source, name, ("ServerArgs",))
    catalog = flag_catalog(defs)
    srt = [f for f in defs if f.origin == "dataclass" and f.path == "sglang/srt/server_args.py"]
    print(f"\n0.5.18 tree: {len(defs)} definitions, {len(catalog)} distinct dests")
    assert len(srt) == 472
    # Dests shared with benchmark scripts or the multimodal server resolve to the main one.
    for dest in ("port", "model_path", "host", "tp_size"):
        assert catalog[dest].path == "sglang/srt/server_args.py", dest
    assert sum(f.origin == "argparse" for f in defs) > 500


@pytest.mark.sglang
def test_sglang_0_4_1_add_argument_release_yields_its_flags() -> None:
    path, source = _server_args("0.4.1")
    tree = ast.parse(source)
    calls = [
        n
        for n in ast.walk(tree)
        if isinstance(n, ast.Call) and getattr(n.func, "attr", None) == "add_argument"
    ]
    flags = flags_from_tree(tree, source, path, ("ServerArgs",))
    argparse_ = [f for f in flags if f.origin == "argparse"]
    print(f"\n0.4.1 server_args.py: {len(calls)} add_argument calls -> {len(argparse_)} flags")
    assert len(calls) > 50 and len(argparse_) == len(calls)
    catalog = flag_catalog(flags)
    tp = catalog["tp_size"]
    assert tp.help == "The tensor parallelism size." and tp.default == "1"
    assert set(tp.flags) == {"--tp-size", "--tensor-parallel-size"}
    trc = catalog["trust_remote_code"]
    assert trc.type == "bool" and trc.help and trc.help.startswith("Whether or not to allow")
    assert catalog["load_format"].choices and "safetensors" in catalog["load_format"].choices


def test_flag_class_patterns_select_classes_by_file_and_name() -> None:
    source = textwrap.dedent(
        """
        class Memory(msgspec.Struct):
            _NS_PATH = "memory"
            enable_unified_memory: A[bool, "One pool."] = False
        class Parallel(msgspec.Struct):
            tp_size: A[int, Arg(help="TP.", aliases=["--tensor-parallel-size"])] = 1
        """
    )
    tree = ast.parse(source)
    spec = ("*/arg_groups/fields/*.py:*",)
    inside = flags_from_tree(tree, source, "python/pkg/arg_groups/fields/memory.py", spec)
    assert {f.dest for f in inside} == {"enable_unified_memory", "tp_size"}
    assert flags_from_tree(tree, source, "python/pkg/models/memory.py", spec) == ()
    named = flags_from_tree(tree, source, "any.py", ("Parallel",))
    assert [f.dest for f in named] == ["tp_size"]
    assert class_markers(("ServerArgs", "*/fields/*.py:*", "x.py:Mem?")) == (
        b"ServerArgs",
        b"class ",
        b"class ",
    )


@pytest.mark.sglang
def test_sglang_0_5_23_fields_classes_hold_the_server_flags() -> None:
    spec = ("ServerArgs", "*/srt/arg_groups/fields/*.py:*")
    defs: list[FlagDef] = []
    with zipfile.ZipFile(sglang_wheel("0.5.23")) as zf:
        for name in zf.namelist():
            if "/srt/arg_groups/fields/" in name and name.endswith(".py"):
                source = zf.read(name).decode()
                defs += flags_from_tree(ast.parse(source), source, "python/" + name, spec)
    catalog = flag_catalog(defs)
    print(f"\n0.5.23 arg_groups/fields: {len(defs)} settings fields")
    assert len(defs) > 400 and all(f.origin == "dataclass" for f in defs)
    assert catalog["enable_unified_memory"].path.endswith("fields/memory.py")
    assert catalog["disaggregation_mode"].choices == ("null", "prefill", "decode")
