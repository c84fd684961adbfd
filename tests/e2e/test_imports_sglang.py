"""Failed imports on real sglang releases and their real metadata (issue 45), on SQLite and
PostgreSQL.

sglang 0.1.12 imports `build_regex_from_object` from `outlines.fsm.json_schema` unguarded and
declares `outlines>=0.0.27` in its `srt` extra; outlines 0.0.32 renamed the function, and users
met `ImportError: cannot import name 'build_regex_from_object'` (fixed by pinning an older
outlines). sglang 0.1.13 guards the same import and falls back to `build_regex_from_schema`.
The recent-release case (`No module named 'sgl_kernel'`) reads the shared knowledge base.
"""

from __future__ import annotations

from pathlib import Path

import pytest
from sqlalchemy import Engine, select
from wheels import sglang_wheel

from errkb.core.db import make_engine, session_factory
from errkb.core.models import Error, Snapshot
from errkb.ingest.pins import load_pins
from errkb.ingest.pipeline import Job, ingest_snapshot
from errkb.ingest.sources.pypi import PypiSource
from errkb.service.entries.build import build_entry
from errkb.service.match.matcher import match_text
from errkb.service.match.queries import load_index
from errkb.service.read.matches import match_answer, matches_in

pytestmark = pytest.mark.sglang

ROOT = Path(__file__).resolve().parents[2]
REPO = load_pins(ROOT / "pins.toml").repos[0]
NAME_ERROR = "cannot import name 'build_regex_from_object' from 'outlines.fsm.json_schema'"
TRACEBACK = """Traceback (most recent call last):
  File "/usr/lib/python3.10/runpy.py", line 196, in _run_module_as_main
    return _run_code(code, main_globals, None,
  File "/opt/venv/lib/python3.10/site-packages/sglang/launch_server.py", line 3, in <module>
    from sglang.srt.server import ServerArgs, launch_server
  File "/opt/venv/lib/python3.10/site-packages/sglang/srt/constrained/__init__.py", line 4, in <module>
    from outlines.fsm.json_schema import build_regex_from_object
ImportError: cannot import name 'build_regex_from_object' from 'outlines.fsm.json_schema' (/opt/venv/lib/python3.10/site-packages/outlines/fsm/json_schema.py)
"""  # noqa: E501


def ingest(engine: Engine, tmp_path: Path, version: str) -> None:
    source = PypiSource(
        "sglang",
        version,
        cache_dir=tmp_path,
        path_prefix=REPO.path_prefix,
        web_url=REPO.web_url,
        archive=sglang_wheel(version),
    )
    ingest_snapshot(source, REPO, REPO.extract_config(2_000_000), Job(engine, workers=1))


def first_ids(engine: Engine, text: str) -> list[str]:
    return [m.id for m in matches_in(load_index(engine), text, limit=5, public_url="")]


def id_of(engine: Engine, message: str) -> str:
    with engine.connect() as conn:
        return conn.execute(select(Error.id).where(Error.message == message)).scalar_one()


def test_an_old_outlines_import_error_finds_the_import_entry_and_the_declared_range(
    engine: Engine, tmp_path: Path
) -> None:
    ingest(engine, tmp_path, "0.1.12")
    with engine.connect() as conn:
        stored = conn.execute(select(Snapshot.requirements)).scalar_one()
    assert {"name": "outlines", "specifier": ">=0.0.27", "extra": "srt"} in stored
    wanted = id_of(engine, NAME_ERROR)
    assert first_ids(engine, TRACEBACK)[0] == wanted
    assert first_ids(engine, f"ImportError: {NAME_ERROR}")[0] == wanted
    assert first_ids(engine, "it says it can't import build_regex_from_object")[0] == wanted
    # the whole module name: not its submodules' entries, which read alike up to the quote
    missing = "ModuleNotFoundError: No module named 'outlines'"
    assert first_ids(engine, missing) == [id_of(engine, "No module named 'outlines'")]

    with session_factory(engine)() as session:
        entry = build_entry(session, wanted)
    assert entry.kind == "import"
    first = entry.explanation.solutions[0]
    assert "outlines>=0.0.27" in first.text
    assert first.command == "pip install 'outlines==0.0.27'"
    meaning = entry.explanation.what_it_means.text
    assert "declares outlines>=0.0.27, through the extra sglang[srt]" in meaning
    assert entry.explanation.who_hits_it is not None
    assert entry.explanation.who_hits_it.kind == "dependency"


def test_a_guarded_import_says_that_it_falls_back_and_how(engine: Engine, tmp_path: Path) -> None:
    ingest(engine, tmp_path, "0.1.13")
    with session_factory(engine)() as session:
        entry = build_entry(session, id_of(engine, NAME_ERROR))
    meaning = entry.explanation.what_it_means.text
    assert "This import is guarded: a failure does not stop sglang." in meaning
    assert (
        "the code imports build_regex_from_schema from outlines.fsm.json_schema instead and "
        "defines its own build_regex_from_object, and goes on." in meaning
    )
    assert entry.explanation.solutions[0].text.startswith("Nothing needs fixing")


def test_no_module_named_sgl_kernel_names_the_distribution_a_recent_release_declares(
    sglang_kb_url: str,
) -> None:
    engine = make_engine(sglang_kb_url)
    try:
        wanted = id_of(engine, "No module named 'sgl_kernel'")
        text = (
            "Traceback (most recent call last):\n"
            '  File "/usr/local/lib/python3.12/dist-packages/sglang/launch_server.py", line 7,'
            " in <module>\n"
            "ModuleNotFoundError: No module named 'sgl_kernel'\n"
        )
        assert first_ids(engine, text)[0] == wanted
        with session_factory(engine)() as session:
            entry = build_entry(session, wanted)
            newest = session.scalars(select(Snapshot).order_by(Snapshot.sort_key)).all()[-1]
    finally:
        engine.dispose()
    declared = [
        r for r in newest.requirements or () if r["name"] in ("sglang-kernel", "sgl-kernel")
    ]
    assert len(declared) == 1
    spec = declared[0]["name"] + declared[0]["specifier"]
    assert entry.explanation.solutions[0].command == f"pip install '{spec}'"
    assert f"declares {spec}" in entry.explanation.what_it_means.text  # plain: no backticks


OTHER_PACKAGE = """Traceback (most recent call last):
  File "/opt/venv/lib/python3.10/site-packages/sglang/srt/managers/router/model_runner.py", line 280, in load_model
    model = AutoModelForCausalLM.from_pretrained(path)
  File "/opt/venv/lib/python3.10/site-packages/transformers/models/auto/auto_factory.py", line 566, in from_pretrained
    raise ValueError(
ValueError: Unsupported architectures: for this kind of AutoModel
"""  # noqa: E501
NO_RAISE = """Traceback (most recent call last):
  File "/opt/venv/lib/python3.10/site-packages/sglang/srt/managers/router/model_runner.py", line 250, in __init__
    self.load_model()
  File "/opt/venv/lib/python3.10/site-packages/sglang/srt/managers/router/model_runner.py", line 290, in load_model
    hf_quant_method = self.model_config.hf_config.quantization_config["quant_method"]
KeyError: 'quant_method'
"""  # noqa: E501


def test_an_error_of_another_package_is_said_to_be_its_own(engine: Engine, tmp_path: Path) -> None:
    """0.1.12 raises "Unsupported architectures: {arch}" in model_runner.py: text that reads
    alike, raised by transformers, is not answered with it."""
    ingest(engine, tmp_path, "0.1.12")
    index = load_index(engine)
    assert match_text(index, OTHER_PACKAGE, limit=3)  # the matcher alone offers a lookalike
    answer = match_answer(index, OTHER_PACKAGE, limit=5, public_url="")
    assert answer.matches == []
    assert answer.raised_by is not None and answer.raised_by.package == "transformers"
    assert answer.raised_by.frame is not None
    assert (answer.raised_by.frame.line, answer.raised_by.frame.function) == (280, "load_model")
    assert "raised by transformers" in answer.raised_by.text


def test_a_key_error_at_a_line_with_no_raise_gets_the_nearest_entry_of_its_function(
    engine: Engine, tmp_path: Path
) -> None:
    ingest(engine, tmp_path, "0.1.12")
    answer = match_answer(load_index(engine), NO_RAISE, limit=5, public_url="")
    first = answer.matches[0]
    assert first.title.startswith("Unsupported quantization method")
    assert first.site is not None and first.site.function == "ModelRunner.load_model"
    assert first.confidence == "weak guess"
    assert first.note is not None and "Line 290 of load_model raises nothing" in first.note
    assert all(m.confidence == "weak guess" for m in answer.matches)


def test_the_release_that_guards_the_import_comes_first(engine: Engine, tmp_path: Path) -> None:
    """With 0.1.12 and 0.1.13 held, whoever sees the outlines ImportError runs 0.1.12: the
    upgrade to 0.1.13, which falls back, is the first solution; then outlines as declared."""
    ingest(engine, tmp_path, "0.1.12")
    ingest(engine, tmp_path, "0.1.13")
    with session_factory(engine)() as session:
        entry = build_entry(session, id_of(engine, NAME_ERROR))
    first, second = entry.explanation.solutions[:2]
    assert (first.kind, first.snapshot, first.command) == (
        "upgrade",
        "0.1.13",
        "pip install 'sglang==0.1.13'",
    )
    assert second.command == "pip install 'outlines==0.0.27'"
