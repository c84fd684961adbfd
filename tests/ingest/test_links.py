"""Linking sites to flags: message mentions, guard reads, polarity, and the false-link rule."""

from __future__ import annotations

from dataclasses import replace
from typing import Any

from errkb.core.records import Condition, FlagDef, Segment, Site, Snippet, Template
from errkb.ingest.flag_links.linker import flag_involvements, message_flags

REF_MESSAGE = (
    "--enable-unified-memory with PD disaggregation does not support hybrid-SWA models yet "
    "(no whole-envelope transfer scheme for the SWA sub-pool). Drop --enable-unified-memory "
    "or run without PD."
)


def flag(dest: str, *aliases: str, type_: str = "bool", default: str = "False") -> FlagDef:
    return FlagDef(
        flags=("--" + dest.replace("_", "-"), *aliases),
        dest=dest,
        type=type_,
        default=default,
        choices=None,
        help=f"Help of {dest}.",
        path="srv/server_args.py",
        line=10,
        origin="dataclass",
    )


CATALOG = {
    f.dest: f
    for f in (
        flag("enable_unified_memory"),
        flag("disaggregation_mode", type_="str", default='"null"'),
        flag("tp_size", "--tensor-parallel-size", type_="int", default="1"),
        flag("model", type_="str", default="None"),
        flag("port", type_="int", default="30000"),
        flag("speculative_algorithm", type_="str", default="None"),
        flag("chunked_prefill_size", type_="int", default="None"),
        flag("model_config", type_="str", default="None"),
    )
}


def site(conditions: tuple[Condition, ...] = (), message: str = "bad", *placeholders: str) -> Site:
    segs = [Segment("text", message)] + [Segment("placeholder", p) for p in placeholders]
    return Site(
        exception="ValueError",
        template=Template(tuple(segs), "fstring" if placeholders else "literal"),
        path="srv/x.py",
        line=5,
        end_line=5,
        qualname="f",
        conditions=conditions,
        snippet=Snippet(1, ("raise ValueError('bad')",), 5, 5),
        raise_source="'bad'",
    )


def cond(expr: str, holds: bool = True, kind: str = "if", **resolved: str) -> Condition:
    return Condition(kind, expr, holds, 1, tuple(resolved.items()))


def by_dest(s: Site) -> dict[str, dict[str, Any]]:
    return {e.dest: e for e in flag_involvements(s, CATALOG)}


def test_reference_error_links_both_flags_with_polarity() -> None:
    s = site(
        (
            cond("get_memory().enable_unified_memory and req_to_token_pool is None"),
            cond("self.mambaish_config is not None", holds=False),
            cond(
                "self.is_hybrid_swa and not is_deepseek_v4(self.model_config.hf_config)",
                kind="elif",
            ),
            cond("pd_enabled", pd_enabled='get_disagg().disaggregation_mode != "null"'),
        ),
        REF_MESSAGE,
    )
    links = by_dest(s)
    assert set(links) == {"enable_unified_memory", "disaggregation_mode"}
    eum = links["enable_unified_memory"]
    assert eum.flag == "--enable-unified-memory"
    assert eum.sides == ("message", "condition")
    assert (eum.polarity, eum.required) == ("on", True)
    assert eum.condition == "get_memory().enable_unified_memory and req_to_token_pool is None"
    dm = links["disaggregation_mode"]
    assert dm.sides == ("condition",)
    assert (dm.polarity, dm.value, dm.via) == ("ne", "'null'", "pd_enabled")
    assert dm.required is True


def test_negation_flips_polarity() -> None:
    links = by_dest(
        site(
            (
                cond("server_args.enable_unified_memory", holds=False, kind="else"),
                cond("not (args.disaggregation_mode == 'prefill')"),
                cond("self.server_args.tp_size in (2, 4)", holds=False),
            )
        )
    )
    assert links["enable_unified_memory"].polarity == "off"
    assert (links["disaggregation_mode"].polarity, links["disaggregation_mode"].value) == (
        "ne",
        "'prefill'",
    )
    assert (links["tp_size"].polarity, links["tp_size"].value) == ("not_in", "(2, 4)")


def test_comparisons_and_other_uses() -> None:
    links = by_dest(
        site(
            (
                cond("server_args.tp_size > 1", holds=False),
                cond("'null' == server_args.disaggregation_mode"),
                cond("is_valid(server_args.chunked_prefill_size)"),
                cond("server_args.speculative_algorithm is not None"),
            )
        )
    )
    assert (links["tp_size"].polarity, links["tp_size"].value) == ("other", "<= 1")
    assert (links["disaggregation_mode"].polarity, links["disaggregation_mode"].value) == (
        "eq",
        "'null'",
    )
    assert links["chunked_prefill_size"].polarity == "other"
    assert (
        links["speculative_algorithm"].polarity,
        links["speculative_algorithm"].value,
    ) == ("ne", "None")


def test_alternatives_are_not_required() -> None:
    links = by_dest(
        site((cond("server_args.enable_unified_memory or args.speculative_algorithm"),))
    )
    assert links["enable_unified_memory"].polarity == "on"
    assert links["enable_unified_memory"].required is False
    # not (a and b) needed: either may be false, neither is required
    links = by_dest(site((cond("args.enable_unified_memory and args.tp_size", holds=False),)))
    assert links["enable_unified_memory"].polarity == "off"
    assert links["enable_unified_memory"].required is False
    # not (a or b): both must be false
    links = by_dest(site((cond("args.enable_unified_memory or args.tp_size", holds=False),)))
    assert links["tp_size"].polarity == "off" and links["tp_size"].required is True


def test_generic_dests_need_a_settings_like_object() -> None:
    links = by_dest(
        site(
            (
                cond("self.model is None"),
                cond("request.port > 0"),
                cond("self.tp_size > 1"),
                cond("layer.chunked_prefill_size"),  # specific dest: linked from any object
                cond("self.model_config.hf_config is None"),  # two words: an object's attribute
            )
        )
    )
    assert set(links) == {"chunked_prefill_size"}
    links = by_dest(
        site(
            (
                cond("self.server_args.model is None"),
                cond("get_global_server_args().port > 0"),
                cond("getattr(args, 'tp_size', 1) > 1"),
            )
        )
    )
    assert set(links) == {"model", "port", "tp_size"}


def test_message_mentions_and_placeholders() -> None:
    s = site((), "Use --tensor-parallel-size or --unknown-flag; got ", "server_args.port")
    links = by_dest(s)
    assert links["tp_size"].flag == "--tp-size"
    assert links["tp_size"].mentioned_as == "--tensor-parallel-size"
    assert links["tp_size"].sides == ("message",) and links["tp_size"].polarity is None
    assert links["port"].sides == ("message",)
    assert set(links) == {"tp_size", "port"}


def test_a_message_naming_a_flag_by_its_field_links_it() -> None:
    """sglang: "For multimodal input processing do not set `enable_tokenizer_batch_encode`." and
    "pp_max_micro_batch_size must be a positive integer": the field name is the flag."""
    links = by_dest(site((), "chunked_prefill_size must be positive; see `speculative_algorithm`."))
    assert set(links) == {"chunked_prefill_size", "speculative_algorithm"}
    assert links["speculative_algorithm"].sides == ("message",)
    # the code's names: after a dot, before a call, short ones (`tp_size` in a kernel's message
    # is as likely its own argument), or not a flag at all
    said = "cfg.chunked_prefill_size, get_speculative_algorithm(), tp_size or head_dim_v is wrong"
    assert by_dest(site((), said)) == {}
    # a script's argparse flag is named only in its own file: `top_p` in a request check is not
    # the benchmark's --top-p
    script = FlagDef(
        ("--top-p",), "top_p", "float", "None", None, None, "bench/s.py", 3, "argparse"
    )
    catalog = CATALOG | {"top_p": script}
    assert flag_involvements(site((), "top_p must be in (0, 1]"), catalog) == []


def test_an_asserts_own_check_links_the_flags_it_reads() -> None:
    s = replace(
        site(),
        kind="assert",
        check="self.chunked_prefill_size is None or self.chunked_prefill_size >= 1",
        template=Template((), "none"),
    )
    link = by_dest(s)["chunked_prefill_size"]
    assert link.sides == ("condition",) and link.required


def test_message_flag_tokens() -> None:
    assert message_flags("Drop --enable-unified-memory, or set --tp-size=2. a--b -- --9x") == [
        "--enable-unified-memory",
        "--tp-size",
    ]


def test_unparsable_or_cyclic_resolution_is_harmless() -> None:
    s = site((cond("a", a="b", b="a"), cond("x(", holds=True), cond("for x in", kind="for")))
    assert flag_involvements(s, CATALOG) == []


def test_argparse_flags_link_only_in_their_own_file_or_the_settings_module() -> None:
    tool = FlagDef(
        ("--backend",),
        "backend",
        "str",
        None,
        None,
        "Bench backend.",
        "bench/serving.py",
        5,
        "argparse",
    )
    manual = FlagDef(
        ("--config",),
        "config",
        "str",
        None,
        None,
        "Config file.",
        "srv/server_args.py",
        900,
        "argparse",
    )
    catalog = {**CATALOG, "backend": tool, "config": manual}
    elsewhere = site((cond("args.backend == 'vllm'"), cond("server_args.config")))
    links = {e.dest: e for e in flag_involvements(elsewhere, catalog)}
    assert set(links) == {"config"}
    own = Site(**{**elsewhere.__dict__, "path": "bench/serving.py"})
    links = {e.dest: e for e in flag_involvements(own, catalog)}
    assert links["backend"].polarity == "eq" and links["backend"].value == "'vllm'"
    # a specific-looking argparse dest read from a non-args object is never linked
    hdr = FlagDef(
        ("--model-identity-sha256",),
        "model_identity_sha256",
        "str",
        None,
        None,
        "Digest.",
        "tools/pack.py",
        3,
        "argparse",
    )
    s = Site(
        **{
            **elsewhere.__dict__,
            "path": "tools/pack.py",
            "conditions": (cond("header.model_identity_sha256 != want"),),
        }
    )
    assert flag_involvements(s, {"model_identity_sha256": hdr}) == []


def test_local_resolved_to_a_flag_read_compares_like_the_read() -> None:
    links = by_dest(site((cond("tp != 1", tp="server_args.tp_size"),)))
    assert (links["tp_size"].polarity, links["tp_size"].value) == ("ne", "1")
    assert links["tp_size"].via == "tp"


def test_a_flag_given_to_a_builder_is_not_tested_by_a_guard_on_what_it_built() -> None:
    # The guard compares a loaded config's field; the flag only configured the loader.
    built = site(
        (
            cond(
                "cfg.num_layers != 2",
                cfg="load_config(path, trust=server_args.enable_unified_memory)",
            ),
            cond("make(server_args.tp_size)[0] > 1"),
            cond("load(server_args.speculative_algorithm).ok"),
        )
    )
    assert by_dest(built) == {}
    # A predicate over the flag still tests it, and so does a local holding the flag itself.
    tested = by_dest(
        site(
            (
                cond("is_valid(server_args.chunked_prefill_size)"),
                cond("mode.upper", mode="server_args.disaggregation_mode"),
            )
        )
    )
    assert set(tested) == {"chunked_prefill_size", "disaggregation_mode"}


def test_an_attribute_the_class_copied_from_a_flag_links_to_it() -> None:
    resolved = (("self.tp_size", "server_args.tp_size"),)
    s = site((Condition("if", "self.tp_size > 8", True, 1, resolved),))
    links = by_dest(s)
    assert (links["tp_size"].polarity, links["tp_size"].value) == ("other", "> 8")
    assert links["tp_size"].via == "self.tp_size"
    assert not by_dest(site((cond("self.tp_size > 8"),)))  # unresolved, it is no flag read
