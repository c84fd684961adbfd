"""A project's own class named where no message of it was read: its few sites, weak guesses."""

from __future__ import annotations

from matcher_rows import occ, row

from errkb.service.match.matcher import build_index, match_text

CONN = "python/sglang/srt/disaggregation/common/conn.py"
RAISE = "R.failure_exception"
OLD = row("{self.bootstrap_room}, {failure_reason}", occ(CONN, 900, RAISE, "0.5.18"),
          exception="KVTransferError")  # fmt: skip
NEW = row("{self.bootstrap_room}, {reason}", occ(CONN, 2452, RAISE, "0.5.23"),
          exception="KVTransferError")  # fmt: skip
OTHER = row("Failed to fetch the bootstrap info: {e}", occ(CONN, 70, "f", "0.5.23"))
STORED = (
    "Decode transfer failed for request rank=0 with exception "
    "KVTransferError(bootstrap_room=2170015846053279415): Failed to get kvcache from prefill "
    "instance, it might be dead"
)


def test_a_named_project_class_offers_its_sites_newest_first_as_guesses() -> None:
    index = build_index([OLD, NEW, OTHER])
    found = match_text(index, STORED)
    assert [m.entry.id for m in found[:2]] == [NEW.id, OLD.id]
    assert all(m.score < 0.5 for m in found)  # guesses, and said to be
    assert STORED[found[0].start : found[0].end] == "KVTransferError"


def test_no_guess_for_builtins_for_many_sites_or_a_mere_word() -> None:
    builtin = [row(f"{{x}} number {i}", occ(CONN, i, "f", "1"), exception="OSError")
               for i in range(2)]  # fmt: skip
    assert match_text(build_index(builtin), "OSError: [Errno 98] Address in use") == []
    many = [row(f"{{x}}, {{y{i}}}", occ(CONN, i, "f", "1"), exception="KVTransferError")
            for i in range(4)]  # fmt: skip
    assert match_text(build_index(many), STORED) == []
    prose = "we think KVTransferError is raised too often"  # not printed as an exception
    assert match_text(build_index([OLD, NEW]), prose) == []
