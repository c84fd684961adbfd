"""Every class and assert on real sglang releases: the counts against an independent `ast` walk,
the ValueError ids as they were, and real-looking tracebacks of other kinds matched to their
entries (built from the real source lines of 0.5.23)."""

from __future__ import annotations

import ast
import hashlib
import json
import warnings
import zipfile
from collections import Counter
from collections.abc import Iterator

import pytest
from kbcache import MAX_BYTES
from sqlalchemy import select
from sqlalchemy.orm import Session
from wheels import sglang_wheel

from errkb.core.db import make_engine
from errkb.core.models import Error, Occurrence, Snapshot
from errkb.service.entries.build import build_entry
from errkb.service.match.matcher import MatchIndex, match_text
from errkb.service.match.queries import load_index
from errkb.service.search.queries import search_errors

pytestmark = pytest.mark.sglang

REPO = "sgl-project/sglang"
SITE = "/usr/local/lib/python3.12/dist-packages/sglang/srt"


@pytest.fixture(scope="module")
def session(sglang_kb_url: str) -> Iterator[Session]:
    engine = make_engine(sglang_kb_url)
    with Session(engine) as s:
        yield s
    engine.dispose()


@pytest.fixture(scope="module")
def index(sglang_kb_url: str) -> MatchIndex:
    engine = make_engine(sglang_kb_url)
    try:
        return load_index(engine)
    finally:
        engine.dispose()


def _independent_counts(version: str) -> Counter[str]:
    """Raises per class name, asserts, and other raises, by a plain walk of every file."""
    counts: Counter[str] = Counter()
    with zipfile.ZipFile(sglang_wheel(version)) as wheel:
        for name in wheel.namelist():
            data = wheel.read(name)
            if not name.endswith(".py") or len(data) > MAX_BYTES:
                continue
            try:
                with warnings.catch_warnings():
                    warnings.simplefilter("ignore")
                    tree = ast.parse(data)
            except (SyntaxError, ValueError):
                continue
            for node in ast.walk(tree):
                if isinstance(node, ast.Assert):
                    counts["assert"] += 1
                elif isinstance(node, ast.Raise) and node.exc is not None:
                    target = node.exc.func if isinstance(node.exc, ast.Call) else node.exc
                    cls = getattr(target, "id", None) or getattr(target, "attr", None)
                    named = cls is not None and cls.lstrip("_")[:1].isupper()
                    counts[cls if named else "other raise"] += 1
    return counts


def test_site_counts_of_0_5_23_equal_an_independent_ast_count(session: Session) -> None:
    stored = session.scalar(select(Snapshot.site_counts).where(Snapshot.label == "0.5.23"))
    assert stored is not None
    walked = _independent_counts("0.5.23")
    assert stored["raise"] == {
        k: n for k, n in walked.items() if k not in ("assert", "other raise")
    }
    assert stored["assert"] == walked["assert"] == 14955
    # The walk's other raises are the indirect sites plus re-raises of a caught exception
    # (`except E as e: raise e`), which raise nothing new.
    assert 0 < stored["indirect"] <= walked["other raise"]
    assert stored["raise"]["ValueError"] == 9196 and stored["raise"]["RuntimeError"] == 1800
    assert stored["lookup"] > 100  # params_dict[...] in the models' load_weights


def _old_error_id(exception: str, normalized: str) -> str:
    """The id formula every ValueError with a message has had since the first round."""
    key = "\x1f".join((REPO, exception, normalized))
    return hashlib.sha256(key.encode()).hexdigest()[:16]


def test_value_errors_keep_their_sites_and_ids(session: Session) -> None:
    rows = session.execute(
        select(Error.id, Error.message, Error.form).where(Error.exception == "ValueError")
    ).all()
    with_message = [r for r in rows if r.form != "none"]
    assert len(with_message) > 8000
    assert all(
        r.id == _old_error_id("ValueError", " ".join(r.message.split())) for r in with_message
    )
    sites = session.scalar(select(Snapshot.site_counts).where(Snapshot.label == "0.5.23"))["raise"][
        "ValueError"
    ]
    assert sites == 9196


def _error(session: Session, path: str, line: int, version: str = "0.5.23") -> Error:
    found = session.scalars(
        select(Error)
        .join(Occurrence, Occurrence.error_id == Error.id)
        .join(Snapshot, Snapshot.id == Occurrence.snapshot_id)
        .where(
            Snapshot.label == version, Occurrence.path == f"python/{path}", Occurrence.line == line
        )
    ).all()
    assert len(found) == 1, found
    return found[0]


def _frames(*frames: tuple[str, int, str, str]) -> str:
    out = ["Traceback (most recent call last):"]
    for path, line, function, source in frames:
        out.append(f'  File "{SITE}/{path}", line {line}, in {function}')
        out.append(f"    {source}")
    return "\n".join(out)


def _best(index: MatchIndex, text: str) -> str:
    matches = match_text(index, text)
    assert matches, text
    return matches[0].entry.id


def test_a_runtime_error_traceback(session: Session, index: MatchIndex) -> None:
    expected = _error(session, "sglang/srt/managers/scheduler.py", 2373)
    text = _frames(
        ("managers/scheduler.py", 1402, "process_input_requests", "self._dispatch(recv_req)"),
        (
            "managers/scheduler.py",
            2373,
            "_dispatch_tokenized_mm_requests",
            'raise RuntimeError("VMM materialization results do not match requests")',
        ),
    )
    text += "\nRuntimeError: VMM materialization results do not match requests\n"
    assert _best(index, text) == expected.id
    assert expected.chain == ["RuntimeError", "Exception", "BaseException"]


def test_a_bare_not_implemented_error_at_a_known_and_an_unknown_line(
    session: Session, index: MatchIndex
) -> None:
    expected = _error(session, "sglang/srt/layers/attention/base_attn_backend.py", 258)
    assert expected.kind == "raise" and expected.form == "none"
    for line in (258, 249):  # 249: a release whose lines moved, as 0.5.22 may be
        text = _frames(
            (
                "model_executor/cuda_graph_runner.py",
                421,
                "__init__",
                "self.attn_backend.init_cuda_graph_state(self.max_bs, self.max_num_token)",
            ),
            (
                "layers/attention/base_attn_backend.py",
                line,
                "init_cuda_graph_state",
                "raise NotImplementedError()",
            ),
        )
        assert _best(index, text + "\nNotImplementedError\n") == expected.id
    entry = build_entry(session, expected.id)
    assert "AttentionBackend" in entry.title and entry.kind == "raise"
    assert "placeholder that subclasses fill in" in entry.explanation.what_it_means.text


def test_a_message_less_assertion_error(session: Session, index: MatchIndex) -> None:
    expected = _error(session, "sglang/srt/managers/load_snapshot.py", 489)
    assert expected.kind == "assert" and expected.check_text == "self.fd is not None"
    for line in (489, 501):
        text = _frames(
            ("managers/scheduler.py", 3110, "_load_snapshot", "snap = self.reader.read(dp_rank)"),
            ("managers/load_snapshot.py", line, "read", "assert self.fd is not None"),
        )
        assert _best(index, text + "\nAssertionError\n") == expected.id
    entry = build_entry(session, expected.id)
    assert entry.check == "self.fd is not None"
    assert entry.explanation.what_it_means.text.startswith("This is a check inside sglang")


def test_a_custom_class_printed_with_its_module_path(session: Session, index: MatchIndex) -> None:
    expected = _error(session, "sglang/srt/hardware_backend/mlx/remote_code_gate.py", 82)
    assert expected.chain == ["RemoteCodeGateError", "RuntimeError", "Exception", "BaseException"]
    text = (
        "sglang.srt.hardware_backend.mlx.remote_code_gate.RemoteCodeGateError: no config.json "
        "in resolved model directory /models/qwen3-mlx; not a loadable MLX checkpoint"
    )
    assert _best(index, text) == expected.id
    found = search_errors(session, q="loadable MLX checkpoint", exception="RuntimeError")
    assert expected.id in {h.id for h in found.items}
    assert not search_errors(session, q="loadable MLX checkpoint", exception="ValueError").total


def test_a_key_error_from_load_weights(session: Session, index: MatchIndex) -> None:
    expected = _error(session, "sglang/srt/models/qwen2.py", 703)
    assert expected.kind == "lookup" and expected.exception == "KeyError"
    for line in (703, 688):
        text = _frames(
            ("model_executor/model_runner.py", 902, "load_model", "self.model = get_model(...)"),
            ("models/qwen2.py", line, "_legacy_load_weights", "param = params_dict[name]"),
        )
        text += "\nKeyError: 'model.layers.0.mlp.gate.weight'\n"
        assert _best(index, text) == expected.id
    entry = build_entry(session, expected.id)
    assert json.loads(entry.model_dump_json())["exception_chain"][:2] == ["KeyError", "LookupError"]
    assert entry.explanation.solutions[0].kind == "model"
