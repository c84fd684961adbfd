"""In-order alignment of a template's literal pieces against squeezed input text.

A template matches where its literal pieces appear in order, each within `MAX_GAP` characters
of the previous one (the gap holds a placeholder's value). Alignment starts from a few *seeds*
(occurrences of one of the template's longer pieces, or of its first piece) and grows greedily
both ways with `str.find` / `str.rfind` in bounded windows, so the work per candidate is bounded
by (pieces x window) whatever the text is. A missing piece is skipped (the wording may have
changed between versions); after three misses in a row the rest is taken as absent (the text was
cut off). A cut inside a piece earns credit for the prefix of it that is present.

A piece missing before or between found pieces may have changed inside it: a later release
that wrote `{x.size()=}` where the poster's wrote `{self.x.size()=}` leaves the piece's head and
tail in the text with a few characters between them. Such a piece earns credit for its longest
prefix and suffix present in the gap (at least `_MIN_PART` characters each), in order.
"""

from __future__ import annotations

from dataclasses import dataclass

MAX_GAP = 1500  # longest placeholder value considered, in squeezed characters
MAX_SEEDS = 6  # occurrences of the anchor piece tried per candidate
MAX_ANCHORS = 4  # pieces tried as anchors before falling back to a cut first piece
_MAX_MISSES = 3
_MIN_CUT = 4  # shortest piece prefix that counts for a cut-off text
_HEAD = 8  # characters of the first piece that must show when even it was cut
_MIN_PART = 8  # shortest head or tail of a changed piece that earns credit


@dataclass(slots=True)
class Alignment:
    """Where the pieces of one template were found in the squeezed text.

    Not frozen, though never changed: a frozen dataclass sets each field through
    `object.__setattr__`, and building these and `matcher._Scored` was 6% of a match process's
    profiled time (a short match took 5% less without)."""

    starts: tuple[int, ...]  # per piece, squeezed start or -1 when missing
    matched: int  # literal characters found (including a cut piece's prefix)
    cut: tuple[int, int] | None  # (piece index, characters shown) of the piece the text cuts
    first: int  # index of the first piece found
    last: int  # index of the last piece found (the cut piece, if any)
    head: int = -1  # squeezed start of a changed piece found in part just before `first`

    @property
    def begin(self) -> int:
        """Squeezed offset of the first character matched."""
        return self.head if self.head >= 0 else self.starts[self.first]

    def end(self, pieces: tuple[str, ...]) -> int:
        """Squeezed offset just past the last character matched."""
        if self.cut is not None:
            return self.starts[self.cut[0]] + self.cut[1]
        return self.starts[self.last] + len(pieces[self.last])


def alignments(
    pieces: tuple[str, ...], text: str, anchors: tuple[int, ...] | None = None
) -> list[Alignment]:
    """Alignments grown from each seed, best first (most literal text, then shortest)."""
    found: dict[tuple[int, ...], Alignment] = {}
    seeds = _seeds(pieces, text, anchor_order(pieces) if anchors is None else anchors)
    for piece, pos in seeds:
        a = _grow(pieces, text, piece, pos)
        found.setdefault(a.starts, a)
    if not seeds:
        for a in _cut_first(pieces, text):
            found.setdefault(a.starts, a)
    return sorted(found.values(), key=lambda a: (-a.matched, a.end(pieces) - a.starts[a.first]))


def anchor_order(pieces: tuple[str, ...]) -> tuple[int, ...]:
    """Pieces to seed from: the two longest (most telling), then the first (a cut-off text)."""
    order = sorted(range(len(pieces)), key=lambda i: -len(pieces[i]))
    return tuple(dict.fromkeys([*order[:2], 0, *order[2:]]))[:MAX_ANCHORS]


def probes(pieces: tuple[str, ...], anchors: tuple[int, ...]) -> tuple[str, ...]:
    """Strings of which at least one shows in any text that `alignments` aligns the pieces in:
    the anchor pieces (seeds), and the head of the first piece (a text cut inside it). Most
    candidates of a text show none: testing these first skips their alignment (18,285 of the
    21,660 alignments of the bench's 200 match texts were of candidates that align nowhere)."""
    if not pieces:
        return ()
    head = (pieces[0][:_HEAD],) if len(pieces[0]) > _HEAD else ()
    return (*(pieces[i] for i in anchors), *head)


def _seeds(pieces: tuple[str, ...], text: str, anchors: tuple[int, ...]) -> list[tuple[int, int]]:
    for i in anchors:
        piece = pieces[i]
        pos = text.find(piece)
        if pos < 0:
            continue
        out: list[tuple[int, int]] = []
        while pos >= 0 and len(out) < MAX_SEEDS:
            out.append((i, pos))
            pos = text.find(piece, pos + len(piece))
        return out
    return []


def _cut_first(pieces: tuple[str, ...], text: str) -> list[Alignment]:
    """Alignments for a text cut inside the template's first piece."""
    out: list[Alignment] = []
    for pos, n in _prefixes(pieces[0], text, 0, len(text), min_len=_HEAD):
        starts = [-1] * len(pieces)
        starts[0] = pos
        out.append(Alignment(tuple(starts), n, (0, n), 0, 0))
    return out


def _grow(pieces: tuple[str, ...], text: str, i: int, pos: int) -> Alignment:
    starts = [-1] * len(pieces)
    starts[i] = pos
    matched = len(pieces[i])
    last = i
    # Forward: nearest occurrence of each next piece within the allowed gap.
    cur = pos + len(pieces[i])
    budget = MAX_GAP
    misses = 0
    cut: tuple[int, int, int] | None = None  # (piece, start, length)
    for j in range(i + 1, len(pieces)):
        p = pieces[j]
        f = text.find(p, cur, cur + budget + len(p))
        if f >= 0:
            starts[j] = f
            matched += len(p)
            cur = f + len(p)
            last = j
            budget = MAX_GAP
            misses = 0
            cut = None  # an earlier miss was a changed piece, not the end of the text
            continue
        if misses == 0:
            shown = _prefixes(p, text, cur, cur + budget + len(p))
            best = max(shown, key=lambda c: c[1], default=None)
            cut = (j, *best) if best else None
        misses += 1
        if misses >= _MAX_MISSES:
            break
        budget += MAX_GAP + len(p)
    # Backward: nearest occurrence of each previous piece.
    first = i
    cur = pos
    budget = MAX_GAP
    misses = 0
    for j in range(i - 1, -1, -1):
        p = pieces[j]
        f = text.rfind(p, max(0, cur - budget - len(p)), cur)
        if f >= 0:
            starts[j] = f
            matched += len(p)
            cur = f
            first = j
            budget = MAX_GAP
            misses = 0
            continue
        misses += 1
        if misses >= _MAX_MISSES:
            break
        budget += MAX_GAP + len(p)
    changed, head = _changed_pieces(pieces, text, starts, first, last)
    matched += changed
    if cut is None:
        return Alignment(tuple(starts), matched, None, first, last, head)
    starts[cut[0]] = cut[1]
    return Alignment(tuple(starts), matched + cut[2], (cut[0], cut[2]), first, cut[0], head)


def _changed_pieces(
    pieces: tuple[str, ...], text: str, starts: list[int], first: int, last: int
) -> tuple[int, int]:
    """(credit, start of the part before `first`) for the missing pieces from the one before
    `first` to `last`, each read as a head and a tail in the gap where it belongs."""
    credit, head = 0, -1
    for j in range(max(0, first - 1), last):
        if starts[j] >= 0:
            continue
        hi = next(starts[k] for k in range(j + 1, last + 1) if starts[k] >= 0)
        before = [k for k in range(j) if starts[k] >= 0]
        lo = starts[before[-1]] + len(pieces[before[-1]]) if before else hi - MAX_GAP
        n, at = _head_and_tail(
            pieces[j], text, max(0, lo - len(pieces[j])) if not before else lo, hi
        )
        credit += n
        if j == first - 1 and n:
            head = at
    return credit, head


def _head_and_tail(piece: str, text: str, lo: int, hi: int) -> tuple[int, int]:
    """(characters, start) of the longest head and tail of `piece` in text[lo:hi], in order in
    the text (never the whole piece: it was not found); either alone counts too. (0, -1) when
    neither shows."""
    if len(piece) <= _MIN_PART:
        return 0, -1
    heads = [(at, n) for at, n in _prefixes(piece, text, lo, hi, _MIN_PART) if n >= _MIN_PART]
    tails = _suffixes(piece, text, lo, hi)
    best = (0, -1)
    for at, n in heads:
        best = max(best, (n, at))
        for end, m in tails:
            if at + n <= end - m:  # in order in the text; a character both share counts once
                best = max(best, (min(n + m, len(piece) - 1), at))
    for end, m in tails:
        best = max(best, (m, end - m))
    return best


def _suffixes(piece: str, text: str, lo: int, hi: int) -> list[tuple[int, int]]:
    """(end, length) of up to MAX_SEEDS places in text[lo:hi] ending with a tail of `piece`
    (at least `_MIN_PART` characters, the whole piece excluded), nearest `hi` first."""
    tail = piece[-_MIN_PART:]
    out: list[tuple[int, int]] = []
    f = text.rfind(tail, lo, hi)
    while f >= 0 and len(out) < MAX_SEEDS:
        end = f + _MIN_PART
        n = _common_suffix(piece, text, end, lo)
        if n < len(piece):
            out.append((end, n))
        f = text.rfind(tail, lo, f + _MIN_PART - 1)
    return out


def _common_suffix(piece: str, text: str, end: int, lo: int) -> int:
    """Length of the common suffix of `piece` and text[lo:end], by halving."""
    low, high = 0, min(len(piece), end - lo)
    while low < high:
        mid = (low + high + 1) // 2
        if text.endswith(piece[-mid:], lo, end):
            low = mid
        else:
            high = mid - 1
    return low


def _prefixes(
    piece: str, text: str, lo: int, hi: int, min_len: int = _MIN_CUT
) -> list[tuple[int, int]]:
    """(start, length) of up to MAX_SEEDS places in text[lo:hi] showing a prefix of `piece`."""
    if len(piece) <= min_len:
        return []
    head = piece[:min_len]
    out: list[tuple[int, int]] = []
    f = text.find(head, lo, hi)
    while f >= 0 and len(out) < MAX_SEEDS:
        n = _common_prefix(piece, text, f)
        if n < len(piece):
            out.append((f, n))
        f = text.find(head, f + 1, hi)
    return out


def _common_prefix(piece: str, text: str, at: int) -> int:
    """Length of the common prefix of `piece` and text[at:], by halving (C-speed compares)."""
    lo, hi = 0, min(len(piece), len(text) - at)
    while lo < hi:
        mid = (lo + hi + 1) // 2
        if text.startswith(piece[:mid], at):
            lo = mid
        else:
            hi = mid - 1
    return lo
