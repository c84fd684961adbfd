"""Explanations per kind of error, from real code shapes extracted by the real extractor."""

from __future__ import annotations

import textwrap

from errkb.core.records import ExtractConfig, Site
from errkb.ingest.extract import extract_file
from errkb.knowledge import explain_error
from errkb.knowledge.who.kinds import kind_note

EVERY = ExtractConfig(exceptions=("*",), asserts=True, lookups=("params_dict",))


def _site(source: str, exception: str) -> Site:
    result = extract_file(textwrap.dedent(source).encode(), "pkg/mod.py", EVERY)
    return next(s for s in result.sites if s.exception == exception)


def test_not_implemented_names_the_cases_written_before_it() -> None:
    site = _site(
        """
        def attention(backend):
            if backend == "triton":
                return 1
            elif backend in ("fa3", "flashinfer"):
                return 2
            else:
                raise NotImplementedError(f"backend {backend}")
        """,
        "NotImplementedError",
    )
    note = kind_note(site)
    assert note is not None and note.text.startswith("This combination is not implemented yet")
    assert "handle 'triton', 'fa3' and 'flashinfer'." in note.text


def test_a_bare_not_implemented_method_is_a_placeholder_of_its_class() -> None:
    site = _site(
        "class Base:\n    def extend(self, x):\n        raise NotImplementedError\n",
        "NotImplementedError",
    )
    note = kind_note(site)
    assert note is not None and "extend of Base is a placeholder" in note.text


def test_an_assert_is_an_internal_check_and_leads_the_explanation() -> None:
    site = _site("def f(x):\n    assert x.ndim == 2\n", "AssertionError")
    ex = explain_error(site, [], None, project="demo")
    text = ex.what_it_means.text
    # the lead says it is internal (the kind note is no longer put before it), and an assert
    # without a message quotes none and claims no category of problem ("It reports ...")
    assert text.startswith("This is a check inside demo, and your input did not break it"), text
    assert "An internal check failed" not in text
    assert "The message says" not in text and "It reports" not in text
    assert ex.facts.items == ("the ndim of x is not 2",)
    assert ex.solutions[0].kind == "report"


def test_import_error_names_the_package_or_the_pip_command() -> None:
    site = _site(
        """
        def load():
            try:
                import flash_attn.ops
            except ImportError as e:
                raise ImportError("flash_attn is not installed") from e
        """,
        "ImportError",
    )
    ex = explain_error(site, [], None, project="demo")
    assert "importing flash_attn.ops failed" in ex.what_it_means.text
    assert ex.solutions[0].command == "pip install flash_attn"
    pip = _site(
        'def f():\n    raise ImportError("Please run pip install vllm==0.9.2 first")\n',
        "ImportError",
    )
    note = kind_note(pip)
    assert note is not None and note.fixes[0].command == "pip install vllm==0.9.2"


def test_a_type_check_lists_the_accepted_types_and_other_type_errors_say_nothing() -> None:
    site = _site(
        """
        def f(x):
            if not isinstance(x, (int, float)):
                raise TypeError(f"bad {type(x)}")
        """,
        "TypeError",
    )
    note = kind_note(site)
    assert note is not None and "accepts int or float" in note.text
    other = _site('def f(x):\n    raise TypeError("no")\n', "TypeError")
    assert kind_note(other) is None


def test_a_missing_key_in_load_weights_points_at_the_checkpoint() -> None:
    site = _site(
        """
        class M:
            def load_weights(self, weights):
                params_dict = dict(self.named_parameters())
                for name, w in weights:
                    if "rotary_emb.inv_freq" in name or self.config.tie_word_embeddings:
                        continue
                    param = params_dict[name]
        """,
        "KeyError",
    )
    ex = explain_error(site, [], None, project="demo")
    text = ex.what_it_means.text
    assert text.startswith("The model you serve has a configuration or weights"), text
    assert "The key printed after KeyError is not in params_dict" in text  # after the lead
    assert ex.solutions[0].kind == "model" and "config.json" in ex.solutions[0].text
    # what the missing name tells: a quantization scale, another variant's layer, a prefix
    assert "scale_inv" in ex.solutions[1].text and "quantization_config" in ex.solutions[1].text
    # the guards only skip names: quoting them as "raised when" would not help
    assert not any("raised when" in s.text and "inv_freq" in s.text for s in ex.solutions)


def test_an_assert_outside_any_if_is_raised_when_its_own_check_fails() -> None:
    site = _site("def f(ratio):\n    assert ratio in (4, 128)\n", "AssertionError")
    ex = explain_error(site, [], None, project="demo")
    assert "no condition guards" not in ex.what_it_means.text
    assert "Raised in" not in ex.what_it_means.text
    assert ex.facts.items == ("ratio is not 4 or 128",)
    assert "when ratio is not 4 or 128" in ex.trigger.text
    assert not any("no condition guards" in s.text for s in ex.solutions)


def test_a_docstring_that_restates_the_name_and_a_kind_the_guard_already_says_are_left_out() -> (
    None
):
    site = _site(
        '''
        def init_pools(size, page):
            """Initialize the memory pools."""
            if size % page != 0:
                raise ValueError(f"size {size} is not a multiple of {page}")
        ''',
        "ValueError",
    )
    ex = explain_error(site, [], None, project="demo")
    text = ex.what_it_means.text
    assert "The message says: “size {size} is not a multiple of {page}.”" in text
    assert ex.facts.items == ("size is not a multiple of page",)
    assert "documentation" not in text and "It reports" not in text
    told = _site(
        '''
        def init_pools(size, page):
            """Split the cache into pages: a partial page would be lost to every request."""
            raise ValueError(f"size {size} is not a multiple of {page}")
        ''',
        "ValueError",
    )
    text = explain_error(told, [], None, project="demo").what_it_means.text
    assert "The function that raises it is documented as: “Split the cache into pages" in text
    assert "a partial page would be lost" in text and "It reports" not in text


def test_an_error_built_at_run_time_is_called_the_error_not_by_its_builders_name() -> None:
    result = extract_file(
        textwrap.dedent(
            """
            class Pool:
                def load(self, n):
                    if n % self.page != 0:
                        raise self._unaligned_error(n)
            """
        ).encode(),
        "pkg/mod.py",
        EVERY,
    )
    (site,) = result.sites
    assert site.kind == "indirect"
    ex = explain_error(site, [], None, project="demo")
    texts = " ".join(
        [ex.what_it_means.text, ex.trigger.text, *ex.common_situations.items]
        + [s.text for s in ex.solutions]
    )
    assert "class is chosen at run time" in ex.what_it_means.text
    assert "the self." not in texts and "the _unaligned_error" not in texts
    # and no solution restates the check ("the error is raised when ...: that must stop holding")
    assert not any("is raised when" in s.text for s in ex.solutions)
    assert ex.facts.items == ("n is not a multiple of the page",)


def test_a_function_named_with_a_trailing_preposition_is_named_as_written() -> None:
    site = _site(
        "class TokenPool:\n    def source_layer_of(self, x):\n        assert x\n",
        "AssertionError",
    )
    ex = explain_error(site, [], None, project="demo")
    # the "Raised in <function words> of <class>" frame is gone from what it means; where the
    # function is named (the trigger, the situations), it is named as written
    assert "Raised in" not in ex.what_it_means.text, ex.what_it_means.text
    assert ex.what_it_means.text.startswith("We could not tell which of your inputs")
    assert "`TokenPool.source_layer_of`" in ex.trigger.text
    assert not any("of of" in t for t in (ex.trigger.text, *ex.common_situations.items))


def test_an_assert_on_a_flag_is_a_check_of_the_settings_not_an_internal_one() -> None:
    site = _site(
        "def check(server_args):\n    assert server_args.tp_size % server_args.dp_size == 0\n",
        "AssertionError",
    )
    ex = explain_error(site, [], None, project="demo")
    assert ex.who_hits_it is not None and ex.who_hits_it.kind == "flag"  # server settings
    text = ex.what_it_means.text
    assert text.startswith("A setting you started demo with is refused here"), text
    assert "This is a check inside" not in text and "A check of the settings" not in text
    note = kind_note(site, "unknown")
    assert note is not None and note.text.startswith("An internal check failed")


def test_a_function_named_underscore_is_named_by_where_it_is_defined() -> None:
    source = "def register_fake_ops():\n    def _(q):\n        assert q.dim() == 4\n    return _\n"
    site = _site(source, "AssertionError")
    ex = explain_error(site, [], None, project="demo")
    text = ex.what_it_means.text
    assert "Raised in" not in text, text
    assert text.startswith("This is a check inside demo"), text
    assert "`register_fake_ops._`" in ex.trigger.text  # named by where it is defined
