"""A stored doc in a shape this errkb does not know (built by an older one) is not an entry: the
page builds the entry instead of failing with a 500."""

from __future__ import annotations

import json

from errkb.service.read.entries import stored_entry


def test_a_doc_of_another_shape_is_not_an_entry() -> None:
    assert stored_entry(b'{"id": "0123456789abcdef"}') is None
    assert stored_entry(b"not json") is None
    assert (
        stored_entry(json.dumps({"explanation": {"who_hits_it": {"kind": "?"}}}).encode()) is None
    )
