"""In-order alignment of literal pieces: gaps, missing pieces, cut-off text, bounded work."""

from __future__ import annotations

from errkb.service.match.matcher.align import MAX_GAP, MAX_SEEDS, alignments

PIECES = ("Theinput(", "tokens)islongerthanthemodel'scontextlength(", "tokens).")


def test_pieces_in_order_with_values_between() -> None:
    text = "xxValueError:Theinput(85050tokens)islongerthanthemodel'scontextlength(32768tokens).yy"
    best = alignments(PIECES, text)[0]
    assert best.matched == sum(map(len, PIECES))
    assert best.cut is None and (best.first, best.last) == (0, 2)
    assert [text[s : s + len(p)] for s, p in zip(best.starts, PIECES, strict=True)] == list(PIECES)


def test_pieces_out_of_order_do_not_add_up() -> None:
    text = "tokens).Theinput(5tokens)islongerthanthemodel'scontextlength(7"
    best = alignments(PIECES, text)[0]
    assert best.matched < sum(map(len, PIECES))
    assert best.starts[2] == -1


def test_a_gap_longer_than_the_bound_breaks_the_chain() -> None:
    near = "Theinput(" + "9" * 10 + PIECES[1]
    far = "Theinput(" + "9" * (MAX_GAP * 4) + PIECES[1]
    assert alignments(PIECES, near)[0].starts[0] == 0
    assert alignments(PIECES, far)[0].starts[0] == -1


def test_a_changed_middle_piece_is_skipped_not_fatal() -> None:
    pieces = ("alpha:", "bravo:", "charlie:", "delta.")
    text = "alpha:1BRAVO:2charlie:3delta."
    best = alignments(pieces, text)[0]
    assert best.starts[1] == -1
    assert best.matched == len("alpha:charlie:delta.")


def test_text_cut_inside_a_later_piece_earns_its_prefix() -> None:
    text = "Theinput(85050tokens)islongerthanthemo"
    best = alignments(PIECES, text)[0]
    assert best.cut == (1, len("tokens)islongerthanthemo"))
    assert best.last == 1
    assert best.end(PIECES) == len(text)
    assert best.matched == len("Theinput(") + len("tokens)islongerthanthemo")


def test_text_cut_inside_the_first_piece() -> None:
    pieces = ("Globalserverargsisnotsetyet!",)
    best = alignments(pieces, "ERROR:Globalserverargsisno")[0]
    assert best.cut == (0, len("Globalserverargsisno"))
    assert alignments(pieces, "ERROR:Glob") == []  # too little of it to tell


def test_repeated_anchor_tries_a_bounded_number_of_seeds() -> None:
    pieces = ("Invalid", "mode:", "expected")
    text = "Invalid" * 200_000
    found = alignments(pieces, text)
    assert 1 <= len(found) <= MAX_SEEDS
    assert all(a.matched == len("Invalid") for a in found)


def test_nothing_found_gives_no_alignment() -> None:
    assert alignments(PIECES, "completely unrelated text") == []


def test_a_piece_changed_inside_earns_its_head_and_tail() -> None:
    """The poster's release printed `{self.pool.size()=}` where the indexed one prints
    `{pool.size()=}`: the first piece shows as its head and its tail with `self.` between."""
    pieces = ("allocrunsoutofmemory.Pleaselower--max-running-requests.pool.size()=", ",n=", ",")
    text = "RuntimeError:allocrunsoutofmemory.Pleaselower--max-running-requests."
    text += "self.pool.size()=1,n=2,"
    best = alignments(pieces, text)[0]
    assert best.starts[0] == -1 and best.first == 1  # the piece itself was not found whole
    assert best.matched == len(pieces[0]) - 1 + len(",n=,")  # its shared "." counts once
    assert best.begin == text.index("alloc")


def test_only_a_short_part_of_a_changed_piece_earns_nothing() -> None:
    pieces = ("abcdefghijklmnop:", "tail")
    best = alignments(pieces, "abcdXXXXXXXXXmnop:1tail")[0]
    assert best.matched == len("tail")  # "abcd" and "mnop:" are shorter than a part must be
    assert best.begin == best.starts[1]


def test_a_text_showing_none_of_the_probes_has_no_alignment() -> None:
    """The matcher skips a candidate whose probes all miss the text: that must never skip one
    that aligns. Random pieces over a small alphabet, in texts that often show one of them whole or
    cut (a first piece cut after its head aligns with no piece whole)."""
    import random

    from errkb.service.match.matcher.align import anchor_order, probes

    rng = random.Random(11)
    aligned = skipped = 0
    for _ in range(4000):
        pieces = tuple(
            "".join(rng.choice("ab:") for _ in range(rng.randint(1, 20)))
            for _ in range(rng.randint(1, 4))
        )
        noise = ["".join(rng.choice("ab:(x") for _ in range(rng.randint(0, 20))) for _ in "12"]
        shown_piece = rng.choice(pieces)[: rng.randint(1, 20)]  # whole, or cut at its end
        text = noise[0] + (shown_piece if rng.random() < 0.6 else "") + noise[1]
        found = alignments(pieces, text)
        shown = any(p in text for p in probes(pieces, anchor_order(pieces)))
        assert shown or not found, (pieces, text)
        aligned += bool(found)
        skipped += not shown
    assert aligned > 500 and skipped > 500  # both sides of the rule were tried
