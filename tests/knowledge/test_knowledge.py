"""Knowledge synthesis on small hand-built sites: fixes, example fix, honesty, wording, related."""

from __future__ import annotations

from dataclasses import replace

from knowledge_checks import guard_holds

from errkb.core.origin import Origin
from errkb.core.records import Condition, FlagDef, Segment, Site, Snippet, Template
from errkb.ingest.flag_links.linker import flag_involvements
from errkb.knowledge import explain_error
from errkb.knowledge.facts import Involvement, Placement, RelatedError, SnapshotSites
from errkb.knowledge.fixes.commands import escape, trigger_args
from errkb.knowledge.history.related import rank_related, reason_words, similarity
from errkb.knowledge.history.timeline import timeline
from errkb.knowledge.origins.environment import named_in_message
from errkb.knowledge.words.message import advice, category, reason, rules, sentences
from errkb.knowledge.words.wording import activity, cli_value

LAUNCH = "python -m srv.launch --model-path <model>"


def fdef(
    dest: str,
    type_: str,
    default: str | None,
    choices: tuple[str, ...] | None = None,
    help_: str | None = None,
) -> FlagDef:
    return FlagDef(
        ("--" + dest.replace("_", "-"),),
        dest,
        type_,
        default,
        choices,
        help_ or f"Help of {dest}.",
        "srv/server_args.py",
        3,
        "dataclass",
    )


CATALOG = {
    f.dest: f
    for f in (
        fdef("enable_unified_memory", "bool", "False", help_="Use one memory pool."),
        fdef(
            "disaggregation_mode",
            'Literal["null", "prefill", "decode"]',
            '"null"',
            ("null", "prefill", "decode"),
        ),
        fdef("tp_size", "int", "1"),
        fdef("attention_backend", "Optional[str]", "None", ("triton", "fa3", "flashinfer")),
        fdef("kv_cache_dtype", "str", '"auto"', ("auto", "fp8_e4m3", "fp8_e5m2")),
    )
}
REF_MESSAGE = (
    "--enable-unified-memory with PD disaggregation does not support hybrid-SWA models yet "
    "(no whole-envelope transfer scheme for the SWA sub-pool). Drop --enable-unified-memory "
    "or run without PD."
)


def make_site(
    message: list[Segment] | str,
    conditions: tuple[Condition, ...],
    qualname: str = "KVCacheConfigurator._init_pools",
) -> Site:
    segs = [Segment("text", message)] if isinstance(message, str) else message
    return Site(
        "ValueError",
        Template(tuple(segs), "literal"),
        "srv/mem/kv.py",
        406,
        411,
        qualname,
        conditions,
        Snippet(400, ("x",) * 12, 406, 411),
        "...",
    )


def ref_site() -> Site:
    return make_site(
        REF_MESSAGE,
        (
            Condition(
                "if", "get_memory().enable_unified_memory and req_to_token_pool is None", True, 389
            ),
            Condition("if", "self.mambaish_config is not None", False, 391),
            Condition("elif", "self.is_hybrid_swa and (not is_deepseek_v4(self.cfg))", True, 404),
            Condition(
                "if",
                "pd_enabled",
                True,
                405,
                (("pd_enabled", "get_disagg().disaggregation_mode != 'null'"),),
            ),
        ),
    )


def involvements(site: Site) -> list[Involvement]:
    return [Involvement.from_link(x, CATALOG.get(x.dest)) for x in flag_involvements(site, CATALOG)]


def history(*present: bool) -> list[SnapshotSites]:
    return [
        SnapshotSites(f"1.{i}", None, (Placement("srv/mem/kv.py", 400 + i, "f"),) if p else ())
        for i, p in enumerate(present)
    ]


def test_reference_error_solutions_and_example_fix() -> None:
    site = ref_site()
    flags = involvements(site)
    tl = timeline(
        [
            SnapshotSites("0.5.18", None, (Placement(site.path, 406, site.qualname),)),
            SnapshotSites("0.5.19", None, (Placement(site.path, 451, site.qualname),)),
            SnapshotSites("0.5.20", None, ()),
        ]
    )
    ex = explain_error(
        site, flags, tl, project="srv", launch_command=LAUNCH, releases={"0.5.20"}, pypi_name="srv"
    )
    kinds = [s.kind for s in ex.solutions]
    assert kinds[0] == "advice" and ex.solutions[0].text == (
        "Drop --enable-unified-memory or run without PD."
    )
    remove = next(s for s in ex.solutions if s.flag == "--enable-unified-memory")
    assert remove.text.startswith("Remove --enable-unified-memory") and "default: False" in (
        remove.text
    )
    assert "Use one memory pool." in remove.text
    assert any(s.command == "--disaggregation-mode null" for s in ex.solutions)
    up = next(s for s in ex.solutions if s.kind == "upgrade")
    assert up.snapshot == "0.5.20" and up.command == "pip install 'srv>=0.5.20'"
    assert kinds.index("advice") < kinds.index("flag") < kinds.index("upgrade")
    fix = ex.example_fix
    assert fix is not None
    assert fix.before.startswith(LAUNCH) and fix.after.startswith(LAUNCH)
    assert "--enable-unified-memory" in fix.before and "--disaggregation-mode" in fix.before
    assert guard_holds(fix.before, flags) and not guard_holds(fix.after, flags)
    assert "there is no req to token pool" in (fix.note or "") and "`" not in (fix.note or "")
    # what it means starts with what the user did, in their terms; the guard's conditions are
    # said in words under their own heading (facts), and the template frame is gone
    meaning = ex.what_it_means.text
    assert meaning.startswith(
        "You started srv with --enable-unified-memory and --disaggregation-mode"
    ), meaning
    assert "Raised" not in meaning and "shown in the source" not in meaning
    assert "pd is enabled (--disaggregation-mode is not null)" in ex.facts.items
    assert any("initializing pools" in s for s in ex.common_situations.items)
    assert "no whole-envelope transfer scheme for the SWA sub-pool" in meaning
    assert set(ex.what_it_means.provenance) == {
        "derived:conditions",
        "derived:flags",
        "derived:message",
    }
    assert "--enable-unified-memory on and --disaggregation-mode not null" in ex.trigger.text
    assert any("1" in s or "0.5.18" in s for s in ex.common_situations.items)


def test_example_fix_for_each_polarity_escapes_the_guard() -> None:
    cases = [
        "server_args.tp_size > 1",
        "server_args.attention_backend == 'triton'",
        "server_args.kv_cache_dtype in ('fp8_e4m3', 'fp8_e5m2')",
        "server_args.kv_cache_dtype not in ('auto',)",
        "not server_args.enable_unified_memory and server_args.attention_backend is None",
        "server_args.tp_size <= 2 and server_args.disaggregation_mode == 'decode'",
    ]
    for expr in cases:
        site = make_site("bad combination", (Condition("if", expr, True, 10),), "f")
        flags = involvements(site)
        fix = explain_error(site, flags, None, project="srv", launch_command=LAUNCH).example_fix
        assert fix is not None, expr
        assert guard_holds(fix.before, flags), (expr, fix.before)
        assert not guard_holds(fix.after, flags), (expr, fix.after)


def test_no_flag_no_advice_says_what_is_known_without_inventing() -> None:
    site = make_site(
        [Segment("text", "Unexpected head size "), Segment("placeholder", "head_dim")],
        (Condition("if", "head_dim not in SUPPORTED", True, 7),),
        "Attn.forward",
    )
    ex = explain_error(
        site, [], None, project="srv", launch_command=LAUNCH, web_url="https://example.org/srv"
    )
    # `head_dim` is a parameter: where it comes from cannot be told, and the entry says so
    # instead of calling it an internal invariant; reporting it comes last, without that claim
    assert ex.who_hits_it.kind == "unknown"
    assert "could not tell" in ex.who_hits_it.text
    # no solution restates the check ("Nothing in the code names a fix ... must stop holding"):
    # with no input to change, the report is the only one
    assert [s.kind for s in ex.solutions] == ["report"]
    assert ex.solutions[-1].url == "https://example.org/srv/issues/new"
    assert "traceback" in ex.solutions[-1].text and "no flag" not in ex.solutions[-1].text
    assert not any(
        "Nothing in the code names a fix" in s.text
        or "must stop holding" in s.text
        or "head dim is not in" in s.text
        for s in ex.solutions
    )
    assert ex.facts.items == ("head dim is not in supported",)
    assert ex.example_fix is None
    meaning = ex.what_it_means.text
    assert meaning.startswith("We could not tell which of your inputs leads here"), meaning
    assert "The message says: “Unexpected head size" in meaning and "Raised" not in meaning
    assert any("running the forward pass of" in s for s in ex.common_situations.items)
    # when the value-origin index reached an input, the first solution changes that input
    traced = replace(site, origin=Origin("flag", inputs=("--attention-backend",)))
    ex = explain_error(traced, [], None, project="srv", launch_command=LAUNCH)
    assert ex.who_hits_it.kind == "flag"
    assert ex.what_it_means.text.startswith("You started srv with --attention-backend")
    first = ex.solutions[0]
    assert first.kind == "flag" and first.flag == "--attention-backend"
    assert first.text.startswith("Change --attention-backend (or leave it out) when you start srv")
    assert ex.solutions[-1].kind == "report"
    unguarded = make_site("boom", (), "<module>")
    ex = explain_error(unguarded, [], None, project="srv")
    assert [s.kind for s in ex.solutions] == ["report"]
    assert "no condition guards it" in ex.trigger.text
    assert "whenever that code runs" not in ex.what_it_means.text
    assert "The message says: “boom.”" in ex.what_it_means.text
    assert ex.common_situations.items
    # a guard on the code's own state only (a private attribute, a constant) is internal, with
    # that state as its evidence, and the report comes first
    own = make_site("bad state", (Condition("if", "self._pending > MAX_PENDING", True, 7),), "A.f")
    ex = explain_error(own, [], None, project="srv", web_url="https://example.org/srv")
    assert ex.who_hits_it.kind == "internal"
    assert ex.who_hits_it.evidence and "self._pending" in ex.who_hits_it.evidence[0]
    assert ex.solutions[0].kind == "report" and "your input did not break" in ex.solutions[0].text
    assert ex.what_it_means.text.startswith("This is a check inside srv, and your input did not")
    # the inputs that choose its code path are the way around it, after the report
    pathed = replace(
        own,
        origin=Origin(
            "internal", path_inputs=("--attention-backend", "env: SGLANG_FORCE_FUSED_OP_BACKEND")
        ),
    )
    ex = explain_error(pathed, [], None, project="srv")
    assert ex.who_hits_it.kind == "internal"
    assert [s.kind for s in ex.solutions][:3] == ["report", "flag", "environment"]
    assert ex.solutions[1].flag == "--attention-backend"
    assert ex.solutions[1].text.startswith("Until it is fixed, start srv with another value of")
    assert ex.solutions[2].command == "unset SGLANG_FORCE_FUSED_OP_BACKEND"
    assert (
        "The code path is chosen by --attention-backend and the environment variable "
        "SGLANG_FORCE_FUSED_OP_BACKEND." in ex.what_it_means.text
    )


def test_rule_sentences_become_requirements_when_no_advice() -> None:
    site = make_site("tp_size must be divisible by the number of heads.", (), "f")
    ex = explain_error(site, [], None, project="srv")
    # no guard at all: who hits it cannot be told; the message's rule is quoted in what it
    # means (a name is not capitalised), never restated as a solution ("Meet the requirement")
    assert "The message says: “tp_size must be divisible" in ex.what_it_means.text
    assert [s.kind for s in ex.solutions] == ["report"]
    assert not any(
        "Meet the requirement" in s.text or "must be divisible" in s.text for s in ex.solutions
    )
    assert category(site.template) == "a size that does not divide evenly as required"
    # the index reached the flag: changing it is the first solution, the rule still not restated
    traced = replace(site, origin=Origin("flag", inputs=("--tp-size",)))
    ex = explain_error(traced, [], None, project="srv")
    assert ex.solutions[0].kind == "flag" and ex.solutions[0].flag == "--tp-size"
    assert ex.solutions[-1].kind == "report"
    assert not any("Meet the requirement" in s.text for s in ex.solutions)


def test_message_sentences_and_advice() -> None:
    text = "Bad value 1.5 for x, e.g. 2. Please use --y instead; set it to 3. Done"
    assert sentences(text) == [
        "Bad value 1.5 for x, e.g. 2.",
        "Please use --y instead;",
        "set it to 3.",
        "Done",
    ]
    tpl = Template((Segment("text", "X is not supported. Use --z or disable y."),), "literal")
    assert advice(tpl) == ["Use --z or disable y."]
    assert rules(tpl) == ["X is not supported."]


def test_the_reason_is_read_from_the_message_not_from_the_code_it_prints() -> None:
    said = Template(
        (Segment("text", "Transfer failed due to a dead peer ("), Segment("placeholder", "room"),
         Segment("text", ")")),
        "fstring",
    )  # fmt: skip
    assert reason(said) == "a dead peer ({room})"
    # KVTransferError(self.bootstrap_room, failure_reason or "Failed due to ... another rank")
    printed = Template(
        (Segment("placeholder", "self.bootstrap_room"), Segment("text", ", "),
         Segment("placeholder", "failure_reason or 'Failed due to an unknown reason (rank)'")),
        "other",
    )  # fmt: skip
    assert reason(printed) is None


def test_a_sentence_reporting_what_happened_is_not_advice() -> None:
    """A log label that starts with a verb (`set x rejected by server`) reports a failure; it is
    not an instruction to set x (a whole-history entry offered it as the first solution)."""
    for report in (
        "set dspark_force_budget_frac={frac} rejected by server: {response}",
        "Update of the weights failed after {n} tries",
        "Run {name} returned {code}",
    ):
        assert advice(Template((Segment("text", report),), "fstring")) == [], report
    for told in ("Set --x to 2 and retry.", "Use --z or disable y.", "Set it to 3 to fix this."):
        assert advice(Template((Segment("text", told),), "literal")) == [told], told


def test_commands_per_flag_type() -> None:
    def inv(dest: str, polarity: str, value: str | None = None) -> Involvement:
        return Involvement(
            "--" + dest.replace("_", "-"),
            dest,
            ("condition",),
            polarity,
            value,
            "c",
            True,
            None,
            True,
            CATALOG[dest],
        )

    assert trigger_args(inv("enable_unified_memory", "on")) == ("--enable-unified-memory",)
    assert escape(inv("enable_unified_memory", "off")).args == ("--enable-unified-memory",)  # type: ignore[union-attr]
    assert trigger_args(inv("disaggregation_mode", "ne", "'null'")) == (
        "--disaggregation-mode",
        "prefill",
    )
    assert escape(inv("disaggregation_mode", "eq", "'null'")).command == (  # type: ignore[union-attr]
        "--disaggregation-mode prefill"
    )
    assert escape(inv("tp_size", "other", "> 1")).args == ("--tp-size", "1")  # type: ignore[union-attr]
    assert escape(inv("tp_size", "other", "len(x)")) is None
    assert cli_value("'a b'") == "'a b'" and cli_value("None") is None


def test_activity_from_names() -> None:
    assert activity("KVCacheConfigurator._init_pools") == "initializing pools"
    assert activity("ServerArgs.__post_init__") == "checking the fields of a new ServerArgs"
    assert activity("__post_init__") == "checking the fields of a new object"  # not "a new the"
    assert activity("load_weights") == "loading weights"
    assert activity("forward_with_lora") == "running the forward pass with lora"  # not "of with"
    assert activity("forward_mlp") == "running the forward pass of mlp"
    assert activity("ModelRunner.weird_name") is None
    assert activity("<module>") == "importing the module"


def test_timeline_gone_regression_gaps_and_moves() -> None:
    tl = timeline(history(False, True, True, False))
    assert (tl.first_seen, tl.last_seen, tl.gone_in, tl.absent_before) == (
        "1.1",
        "1.2",
        "1.3",
        "1.0",
    )
    assert tl.present_in == ("1.1", "1.2")
    assert [c.kind for c in tl.changes] == ["line_changed"]
    assert "not raised since 1.3" in tl.summary
    hist = history(True, False, True)
    hist[2] = SnapshotSites(
        "1.2", None, (Placement("srv/other.py", 5, "f"), Placement("srv/other.py", 9, "g"))
    )
    tl = timeline(hist)
    assert tl.gone_in is None and "absent in 1.1 in between" in tl.summary
    assert sorted(c.kind for c in tl.changes) == ["added_site", "moved"]


def test_related_ranking_quota_and_self() -> None:
    cands = [RelatedError(f"f{i}", f"F{i}", "same file") for i in range(10)]
    cands += [RelatedError("self", "me", "same function"), RelatedError("s1", "S", "same function")]
    cands += [RelatedError(f"g{i}", f"G{i}", "shares --x") for i in range(5)]
    cands += [RelatedError("f1", "F1", "similar message")]
    out = rank_related("self", cands)
    assert len(out) == 8 and all(r.id != "self" for r in out)
    assert out[0] == RelatedError("s1", "S", "same function")
    assert [r.reason for r in out].count("shares --x") >= 3
    assert len({r.id for r in out}) == 8
    assert similarity("tp size must be even", "tp size must be odd") > 0.3


def test_environment_variables_are_named_as_leads_not_fixes() -> None:
    site = make_site(
        "--enable-unified-memory is incompatible with SGLANG_STAGING_BUFFER (the staging path).",
        (
            Condition("if", "get_memory().enable_unified_memory", True, 3),
            Condition("if", "envs.SGLANG_STAGING_BUFFER.get()", True, 4),
            Condition("if", "flag", True, 5, (("flag", "os.environ.get('MY_TOGGLE', '')"),)),
        ),
    )
    ex = explain_error(site, involvements(site), None, project="srv", launch_command=LAUNCH)
    env = {s.input: s for s in ex.solutions if s.kind == "environment"}
    assert set(env) == {"SGLANG_STAGING_BUFFER", "MY_TOGGLE"}
    assert env["SGLANG_STAGING_BUFFER"].command == "unset SGLANG_STAGING_BUFFER"
    assert env["MY_TOGGLE"].text.startswith("Unset the environment variable MY_TOGGLE")
    assert "the environment variable SGLANG_STAGING_BUFFER is set" in ex.facts.items
    assert "the environment variable SGLANG_STAGING_BUFFER is set" in ex.trigger.text
    assert ex.who_hits_it.kind == "flag"
    assert ex.what_it_means.text.startswith("You started srv with --enable-unified-memory")
    assert "SGLANG_STAGING_BUFFER is an environment variable" in ex.who_hits_it.evidence
    tpl = Template((Segment("text", "Set FOO_BAR or OTHER_THING_2, not X_Y or Foo_Bar."),), "x")
    assert named_in_message(tpl) == ["FOO_BAR", "OTHER_THING_2"]
    # a format field the code never filled names the code's constant, not a setting
    tpl = Template((Segment("text", "N={N} not divisible by {_ROWS_PER_TG}."),), "literal")
    assert named_in_message(tpl) == []
    # nor does a constant whose value the snapshot does not give (see notes.with_constants)
    tpl = Template((Segment("text", "N not divisible by <value of _ROWS_PER_TG>."),), "literal")
    assert named_in_message(tpl) == []


def test_caught_exception_clause() -> None:
    site = make_site(
        [Segment("text", "bad value: "), Segment("placeholder", "e")],
        (Condition("try", "try", True, 3), Condition("except", "(TypeError, KeyError)", True, 5)),
        "parse",
    )
    ex = explain_error(site, [], None, project="srv")
    assert ex.facts.items == ("a TypeError or KeyError was caught",)
    assert "when a TypeError or KeyError was caught" in ex.trigger.text
    assert "Raised" not in ex.what_it_means.text


def test_related_reasons_in_words() -> None:
    assert reason_words("same function", before=True, activity="initializing pools") == (
        "raised just before this one in the same function, while initializing pools"
    )
    assert reason_words("same function", before=False) == (
        "raised just after this one in the same function"
    )
    assert reason_words("shares --tp-size") == "the same flag (--tp-size) also leads to it"
    assert reason_words("shares --a, --b") == "the same flags (--a, --b) also lead to it"
    assert reason_words("similar message") == "its message is worded much like this one"


def test_an_error_the_code_around_it_catches_says_what_the_user_sees() -> None:
    from errkb.core.records import ExtractConfig
    from errkb.ingest.extract import extract_file

    src = (
        "import logging\nlogger = logging.getLogger()\n"
        "def load(path):\n"
        "    try:\n"
        "        if not path.endswith('.json'):\n"
        "            raise ValueError('not a json file')\n"
        "    except ValueError as e:\n"
        "        logger.warning('skipping %s', e)\n"
        "        return None\n"
        "def strict(path):\n"
        "    try:\n"
        "        if not path:\n"
        "            raise ValueError('no path')\n"
        "    except ValueError:\n"
        "        raise\n"
    )
    found = extract_file(src.encode(), "x.py", ExtractConfig()).sites
    sites = {s.template.literal_text: s for s in found}
    quiet = explain_error(sites["not a json file"], [], None, project="srv")
    assert quiet.solutions[0].text.startswith("This error may not stop the program")
    assert "`except ValueError`" in quiet.solutions[0].text and "log" in quiet.solutions[0].text
    loud = explain_error(sites["no path"], [], None, project="srv")
    assert not any("does not stop" in s.text for s in loud.solutions)


def test_a_long_resolved_value_is_shortened_around_the_whole_flag_name() -> None:
    from errkb.knowledge.fixes.flag_fixes import _around

    dest = "remote_instance_weight_loader_seed_instance_service_port"
    value = "f'http://{" + "x" * 80 + f"}}:{{load_config.{dest}}}/' + " + "y" * 80
    shown = _around(value, [dest])
    assert dest in shown and shown.startswith("`… ") and shown.endswith(" …`")


def test_a_message_saying_not_to_set_a_flag_gets_its_removal() -> None:
    from errkb.knowledge.facts import Involvement
    from errkb.knowledge.fixes.flag_fixes import flag_fixes_of

    inv = Involvement(
        flag="--enable-tokenizer-batch-encode",
        dest="enable_tokenizer_batch_encode",
        sides=("message",),
        polarity=None,
        value=None,
    )
    said = "For multimodal input processing do not set `enable_tokenizer_batch_encode`."
    (fix,) = flag_fixes_of([inv], {}, said)
    assert fix.text.startswith("Remove --enable-tokenizer-batch-encode from the command line")
    (fix,) = flag_fixes_of([inv], {}, "enable_tokenizer_batch_encode needs a text model.")
    assert fix.text.startswith("The message names --enable-tokenizer-batch-encode")


def test_a_flag_whose_field_has_another_name_says_what_the_code_reads() -> None:
    from errkb.knowledge.facts import Involvement
    from errkb.knowledge.fixes.flag_fixes import flag_fixes_of

    inv = Involvement(
        flag="--elastic-ep-join-rank-offset",
        dest="ep_join_rank_offset",
        sides=("condition",),
        polarity="other",
        value=None,
        condition="not (cfg.elastic_ep_initial_size <= cfg.ep_join_rank_offset)",
        required=True,
    )
    (fix,) = flag_fixes_of([inv], {})
    assert "the code reads it as ep_join_rank_offset" in fix.text, fix.text
    assert "`not (cfg.elastic_ep_initial_size <= cfg.ep_join_rank_offset)`" in fix.text
