"""Every class, asserts and lookups: what each kind of site records, and how it is identified."""

from __future__ import annotations

import textwrap

from errkb.core.records import ClassDef, ExtractConfig, site_error_id
from errkb.ingest.extract import extract_file
from errkb.ingest.hierarchy import Hierarchy

EVERY = ExtractConfig(exceptions=("*",), asserts=True, lookups=("params_dict",))
SOURCE = """
class FooError(ValueError):
    pass

class Model:
    def load_weights(self, weights):
        params_dict = dict(self.named_parameters())
        for name, w in weights:
            param = params_dict[name]
            try:
                param.copy_(w)
            except KeyError as e:
                raise e
            except Exception as e:
                raise FooError(f"bad {name}") from e
        assert w is not None, f"no weight for {name}"

    def forward(self, x):
        assert x.ndim == 2
        if x.is_cuda:
            raise NotImplementedError
        raise self._error("unsupported input")
"""


def _sites(config: ExtractConfig = EVERY):
    result = extract_file(textwrap.dedent(SOURCE).encode(), "pkg/model.py", config)
    assert result.status == "ok"
    return result


def test_every_kind_of_site_is_found_with_its_class_and_check() -> None:
    found = [(s.kind, s.exception, s.template.display, s.check) for s in _sites().sites]
    assert found == [
        ("lookup", "KeyError", "{name!r}", "params_dict[name]"),
        ("raise", "FooError", "bad {name}", ""),
        ("assert", "AssertionError", "no weight for {name}", "w is not None"),
        ("assert", "AssertionError", "", "x.ndim == 2"),
        ("raise", "NotImplementedError", "", "x.is_cuda"),
        ("indirect", "self._error", "unsupported input", ""),
    ]


def test_the_classes_of_a_file_are_recorded_with_their_bases() -> None:
    assert _sites().classes == (ClassDef("FooError", ("ValueError",)),)
    assert _sites(ExtractConfig()).classes == ()  # only read when every class is wanted


def test_naming_classes_keeps_only_their_raises() -> None:
    result = _sites(ExtractConfig(exceptions=("NotImplementedError",)))
    assert [(s.kind, s.exception) for s in result.sites] == [("raise", "NotImplementedError")]


def test_message_less_sites_are_told_apart_by_function_and_check() -> None:
    sites = _sites().sites
    ids = {site_error_id("r", s) for s in sites}
    assert len(ids) == len(sites)
    moved = [s.__class__(**{**s.__dict__, "line": s.line + 40}) for s in sites]
    assert {site_error_id("r", s) for s in moved} == ids  # lines do not matter
    bare = sites[4]
    other = bare.__class__(**{**bare.__dict__, "qualname": "Model.backward"})
    assert site_error_id("r", other) != site_error_id("r", bare)


def test_hierarchy_resolves_project_classes_to_builtins() -> None:
    h = Hierarchy([ClassDef("FooError", ("ValueError",)), ClassDef("Bar", ("Mixin", "FooError"))])
    assert h.chain("Bar") == ("Bar", "FooError", "ValueError", "Exception", "BaseException")
    assert h.chain("KeyError") == ("KeyError", "LookupError", "Exception", "BaseException")
    assert h.chain("HTTPException") == ("HTTPException",)  # a dependency's: not read
    loop = Hierarchy([ClassDef("A", ("B",)), ClassDef("B", ("A",))])
    assert loop.chain("A") == ("A",)
