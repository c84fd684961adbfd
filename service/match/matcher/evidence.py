"""What a match is, and the evidence besides a read message that adds matches: a traceback's
frame alone (`frame_matches`), and a site named in prose (`mentions`)."""

from __future__ import annotations

from dataclasses import dataclass

from errkb.service.match.matcher import frame_matches
from errkb.service.match.matcher.index import CompiledTemplate, FrameSite, MatchIndex
from errkb.service.match.matcher.mentions import Mention
from errkb.service.match.matcher.normalize import Prepared


@dataclass(frozen=True)
class Match:
    """One error shown by the text, with its evidence."""

    entry: CompiledTemplate
    score: float
    start: int  # input offsets of the span
    end: int
    params: dict[str, str]
    site: FrameSite | None  # the raise site a traceback frame pinned
    site_line: int | None  # the line the frame reported
    snapshots: tuple[str, ...]  # snapshot labels consistent with the input
    matched: int  # literal characters found
    # How closely the frame before the message names the error's file and function (see
    # `frames.affinity`; 3 when it pins a site): what breaks a tie between alike scores.
    affinity: int = 0


def with_frames(
    index: MatchIndex,
    matches: list[Match],
    hits: list[frame_matches.FrameHit],
    message_starts: list[int],
    prep: Prepared,
    min_score: float,
) -> list[Match]:
    """The matches plus those a frame shows alone (a traceback whose message is missing or
    cut), each entry kept once at its best score."""
    best = {m.entry.id: m for m in matches}
    open_hits = [h for h in hits if not frame_matches.explained(h, message_starts)]
    for hit in open_hits:
        entry = index.entries[hit.entry]
        sharing = len({h.entry for h in open_hits if h.frame == hit.frame})
        score = frame_matches.scored_hit(hit, entry, prep.squeezed, sharing)
        known = best.get(entry.id)
        if score < min_score or (known is not None and known.score >= score):
            continue
        start, end = frame_matches.span(hit, prep)
        best[entry.id] = Match(
            entry=entry,
            score=score,
            start=start,
            end=end,
            params={},
            site=hit.sites[0],
            site_line=hit.frame.line,
            snapshots=tuple(dict.fromkeys(s.snapshot for s in hit.sites)),
            matched=0,
            affinity=3,
        )
    return sorted(best.values(), key=lambda m: (-m.score, -m.matched, m.start, m.entry.id))


def with_mentions(
    index: MatchIndex, matches: list[Match], named: list[Mention], min_score: float
) -> list[Match]:
    """The matches plus the sites the text names in prose (an assert's source, a loader's
    name), each entry kept once at its best score."""
    best = {m.entry.id: m for m in matches}
    for mention in named:
        entry = index.entries[mention.entry]
        known = best.get(entry.id)
        if mention.score < min_score or (known is not None and known.score >= mention.score):
            continue
        best[entry.id] = Match(
            entry=entry,
            score=mention.score,
            start=mention.start,
            end=mention.end,
            params={},
            site=None,
            site_line=None,
            snapshots=entry.snapshots,
            matched=0,
        )
    return sorted(best.values(), key=lambda m: (-m.score, -m.matched, m.start, m.entry.id))
