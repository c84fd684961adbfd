"""Literals a placeholder's source shows (a fallback, a second argument, a conditional's arms)
are forms the printed message may take, and are matched as such."""

from __future__ import annotations

import pytest
from matcher_rows import occ, row

from errkb.service.match.matcher import build_index, match_text
from errkb.service.match.matcher.literals import shown_literals

CONN = "python/sglang/srt/disaggregation/common/conn.py"
FALLBACK = "Failed due to an unknown reason from another rank"


@pytest.mark.parametrize(
    ("source", "shown"),
    [
        (f"failure_reason or '{FALLBACK}'", [FALLBACK]),
        ("'NIXL KVSender Exception occurred'", ["NIXL KVSender Exception occurred"]),
        ("'the prefill server timed out' if t else 'the prefill server is dead'",
         ["the prefill server timed out", "the prefill server is dead"]),
        ("reason or 'unknown'", []),  # too short to tell errors apart
        ("f'{x} failed' + ' while loading weights'", []),  # not the message as a whole
        ("'unclosed", []),  # not an expression
        ("self.bootstrap_room", []),
    ],
)  # fmt: skip
def test_the_literals_a_placeholder_may_evaluate_to(source: str, shown: list[str]) -> None:
    assert shown_literals(source) == shown


def test_a_fallback_literal_is_matched_as_the_whole_message() -> None:
    kv = row(
        f"{{self.bootstrap_room}}, {{failure_reason or '{FALLBACK}'}}",
        occ(CONN, 2452, "MooncakeKVReceiver.failure_exception", "0.5.23"),
        exception="KVTransferError",
    )
    other = row("Failed to transfer the KV cache: {reason}", occ(CONN, 90, "f", "0.5.23"))
    index = build_index([kv, other])
    log = (
        "[2025-09-17 16:23:13 TP1] Decode transfer failed for request rank=1 with exception "
        f"KVTransferError(bootstrap_room=1655955501905217457): {FALLBACK}\n"
    )
    (top, *_) = match_text(index, log)
    assert top.entry.id == kv.id and top.score >= 0.9
    assert log[top.start : top.end] == FALLBACK
    assert [e.id for e in index.entries] == [kv.id, other.id]  # one entry, two forms
    assert top.matched == len("".join(FALLBACK.split()))  # read from the fallback's form
