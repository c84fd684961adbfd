"""The matching core: which indexed errors a pasted text shows, where, and with what values.

Pure and bounded: one pass to prepare the text, one token lookup for candidates, then a fixed
number of bounded alignments. No database, no regular expressions.
"""

from __future__ import annotations

from dataclasses import dataclass, replace

from errkb.service.match.matcher import frame_matches
from errkb.service.match.matcher.align import Alignment, alignments
from errkb.service.match.matcher.class_mentions import class_mentions
from errkb.service.match.matcher.evidence import Match, with_frames, with_mentions
from errkb.service.match.matcher.frames import (
    Frame,
    affinity,
    contradicts,
    frame_before,
    innermost_frames,
    is_foreign,
    named_entries,
    pinned_sites,
    runs_in_test,
)
from errkb.service.match.matcher.index import (
    CompiledTemplate,
    FrameSite,
    MatchIndex,
    names_a_class,
)
from errkb.service.match.matcher.mentions import mentions
from errkb.service.match.matcher.normalize import Prepared, prepare, text_words
from errkb.service.match.matcher.score import (
    OTHER_FUNCTION_PENALTY,
    TEST_CODE_PENALTY,
    WEAK_BELOW,
    match_score,
)

CANDIDATES = 40  # templates aligned per request
CLASS_CANDIDATES = 8  # and the best of each class the text names
ALIGNMENTS_PER_CANDIDATE = 3
MIN_SCORE = 0.2
_LEAD = 200  # input characters searched before a message for a leading placeholder's value
_TRAIL = 300  # input characters kept for a trailing placeholder's value
_CUT_SLACK = 4  # squeezed characters after a match that still count as "the text ends here"
_EXC_SUFFIXES = ("Error", "Exception", "Warning", "Exit", "Interrupt")
_QUOTES = "`'\""
_READ = 0.5  # an aligned message at least this sure explains the traceback before it
_MIN_QUOTED = 16  # squeezed characters of a quoted opening that can tell errors apart
_POOL = 10  # matches kept beyond `limit` until the final order (`_ranked`)


def match_text(
    index: MatchIndex,
    text: str,
    *,
    limit: int = 10,
    min_score: float = MIN_SCORE,
    exhaustive: bool = False,
) -> list[Match]:
    """Ranked matches for `text`, at most `limit`, each scored at least `min_score`.

    `exhaustive` aligns every template instead of the indexed candidates: the naive baseline
    that bench/match.py measures the index against.
    """
    pool = limit + _POOL  # weak guesses and test code may yet give way (see `_ranked`)
    prep = prepare(text)
    said = text_words(prep.work)
    hits = frame_matches.frame_hits(index, prep.squeezed)
    if exhaustive:
        candidates: list[int] | range = range(len(index.entries))
    else:
        found = index.candidates(said, CANDIDATES, CLASS_CANDIDATES)
        by_frame = named_entries(innermost_frames(prep.squeezed), index.functions)
        candidates = list(dict.fromkeys([*found, *(h.entry for h in hits), *by_frame]))
    scored: list[_Scored] = []
    folded = prep.folded
    for e in candidates:
        entry = index.entries[e]
        best: _Scored | None = None
        for form in (entry, *entry.variants):  # without pieces, only frames tell it
            for probe in form.probes:  # none shows: the form aligns nowhere (inlined: hot)
                if probe in folded:
                    break
            else:
                continue
            for al in alignments(form.pieces, folded, form.anchors)[:ALIGNMENTS_PER_CANDIDATE]:
                s = _score(form, al, prep)
                if best is None or (s.score, al.matched) > (best.score, best.alignment.matched):
                    best = s
        if best is not None and best.score >= min_score:
            scored.append(best)
    scored = _frames_decide(scored)
    scored.sort(key=_rank)
    matches = [_finish(s, prep) for s in scored[:pool]]
    if hits:
        # Only a message read with some confidence accounts for a traceback: a few shared
        # words (the frame's own function name, say) do not.
        starts = [s.alignment.begin for s in scored if s.score >= _READ]
        matches = with_frames(index, matches, hits, starts, prep, min_score)[:pool]
    named = mentions(index.mentions, index.entries, prep)
    named += class_mentions(index, said, prep.text, {m.entry.exception for m in matches})
    if named:
        matches = with_mentions(index, matches, named, min_score)[:pool]
    in_test = runs_in_test(prep.squeezed, index.test_path)
    return _ranked(matches, in_test, min_score)[:limit]


def _ranked(matches: list[Match], in_test: bool, min_score: float) -> list[Match]:
    """The final order. Outside a test run, an error only the project's own tests raise loses
    40% and ranks below every error of the code a server runs (a fake out-of-memory raise of a
    unit test is not what a server's traceback shows), and is dropped if that leaves it a weak
    guess. A weak guess (score below `WEAK_BELOW`)
    is dropped when a match above it exists. Scores alike to two decimals go to the error whose
    file and function the traceback's frame names (`frames.affinity`), even when its line is
    of a release that was not ingested."""
    if not in_test:
        matches = [
            replace(m, score=round(m.score * TEST_CODE_PENALTY, 4)) if m.entry.test_code else m
            for m in matches
        ]
        # A test's raise read weakly in a server's traceback is noise (a torch out-of-memory
        # error read as a unit test's fake one): it is not offered even as a guess.
        matches = [
            m
            for m in matches
            if m.score >= min_score and not (m.entry.test_code and m.score < WEAK_BELOW)
        ]
    if any(m.score >= WEAK_BELOW for m in matches):
        matches = [m for m in matches if m.score >= WEAK_BELOW]
    demoted = not in_test
    return sorted(
        matches,
        key=lambda m: (
            demoted and m.entry.test_code,
            -round(m.score, 2),
            -m.affinity,
            -m.score,
            -m.matched,
            m.start,
            m.entry.id,
        ),
    )


@dataclass(slots=True)  # not frozen, for speed (see `Alignment`); never changed
class _Scored:
    entry: CompiledTemplate
    alignment: Alignment
    score: float
    frame: Frame | None
    pinned: tuple[FrameSite, ...]
    contradicted: bool = False  # the frame before it shows a function that never raises it
    near: int = 0  # how closely that frame names it (`frames.affinity`; 3: it pins a site)
    named_score: float = 0.0  # the score were its file and function as good as a pinned site


def _frames_decide(scored: list[_Scored]) -> list[_Scored]:
    """Where the frame before a message pins some of the errors that read it, those the frame
    contradicts (its function never raises them) lose 40%: the same words raised elsewhere.
    Where it pins none (its line is of a release that was not ingested) but names the file and
    function of some, those are read as surely as a pinned site, and the contradicted lose 40%
    as well."""
    pinning = {s.frame.start for s in scored if s.pinned and s.frame is not None}
    naming = {s.frame.start for s in scored if s.near == 2 and s.frame is not None} - pinning
    if not (pinning or naming):
        return scored
    out = []
    for s in scored:
        at = s.frame.start if s.frame is not None else -1
        if at in naming and s.near == 2:
            s = replace(s, score=s.named_score)
        elif s.contradicted and (at in pinning or at in naming):
            s = replace(s, score=round(s.score * OTHER_FUNCTION_PENALTY, 4))
        out.append(s)
    return out


def _rank(s: _Scored) -> tuple[float, int, int, str]:
    return (-s.score, -s.alignment.matched, s.alignment.begin, s.entry.id)


def _score(entry: CompiledTemplate, al: Alignment, prep: Prepared) -> _Scored:
    sq = prep.squeezed
    q0 = al.begin
    lead = al.first == 0 and bool(entry.gaps[0])
    named, other = _class_named(sq, q0, entry.exception, lead)
    if not names_a_class(entry.exception):  # an indirect raise: any class may show
        other = False
    frame = frame_before(sq, q0)
    pinned = tuple(pinned_sites(frame, entry.sites)) if frame is not None else ()
    near = 0
    if frame is not None:
        near = 3 if pinned else affinity(frame, entry.sites)
    visible = None
    partial = al.cut is not None or al.last < len(entry.pieces) - 1
    if partial and (
        len(sq) - al.end(entry.pieces) <= _CUT_SLACK
        or _cut_in_value(entry, al, prep)
        or _quoted_opening(entry, al, prep)
    ):
        visible = sum(len(p) for p in entry.pieces[: al.last + 1])
        if al.cut is not None:
            visible += al.cut[1] - len(entry.pieces[al.cut[0]])
    foreign = frame is not None and is_foreign(frame, entry.roots)
    score = match_score(
        matched=al.matched,
        literal_len=entry.literal_len,
        visible_len=visible,
        class_named=named,
        other_class_named=other,
        pinned=bool(pinned),
        foreign_frame=foreign,
    )
    named_score = score
    if near == 2:  # the frame's file and function, not its line: see `_frames_decide`
        named_score = match_score(
            matched=al.matched,
            literal_len=entry.literal_len,
            visible_len=visible,
            class_named=named,
            other_class_named=other,
            pinned=True,
            foreign_frame=foreign,
        )
    contradicted = frame is not None and not pinned and contradicts(frame, entry.sites)
    return _Scored(entry, al, score, frame, pinned, contradicted, near, named_score)


def _cut_in_value(entry: CompiledTemplate, al: Alignment, prep: Prepared) -> bool:
    """True when the text ends inside the value of the placeholder after the found part: the
    rest of the input is one short line (`Capture cuda graph failed: CUDA out of memory. Tried
    to allocate 448.00 MiB. GPU 7 has a total capacity of 95.00`, then nothing)."""
    if al.cut is not None or not entry.gaps[al.last + 1]:
        return False
    rest = prep.text[prep.end_to_input(al.end(entry.pieces)) :]
    return len(rest) <= _TRAIL and "\n" not in rest.rstrip()


def _quoted_opening(entry: CompiledTemplate, al: Alignment, prep: Prepared) -> bool:
    """True when the text quotes the message's opening words in prose (`raised `Unknown
    quantization method``, `` `ImportError: DeepEP is not installed` ``): the found part starts
    the template, is long enough to tell errors apart, and sits between a pair of quotes, with
    the class's name inside them or not. The rest was never shown, as with a cut text."""
    if al.first != 0 or entry.gaps[0] or al.matched < _MIN_QUOTED:
        return False
    start = prep.to_input(al.starts[0])
    end = prep.end_to_input(al.end(entry.pieces))
    text = prep.text
    head = text[max(0, start - _LEAD) : start].rstrip()
    if head.endswith(entry.exception + ":"):  # `ImportError: DeepEP is not installed`, quoted
        start -= len(text[max(0, start - _LEAD) : start]) - len(head) + len(entry.exception) + 1
    if start == 0 or end >= len(text):
        return False
    opening, closing = text[start - 1], text[end]
    return opening in _QUOTES and closing == opening


def _finish(s: _Scored, prep: Prepared) -> Match:
    """Map a scored alignment back to the input: span, captured values, site and snapshots."""
    entry, al = s.entry, s.alignment
    first, last = al.first, al.last
    start = prep.to_input(al.begin)
    end = prep.end_to_input(al.end(entry.pieces))
    params: dict[str, str] = {}
    if first == 0 and entry.gaps[0]:
        value_start = _lead_value_start(prep, start, entry.exception)
        if value_start < start:
            _assign(params, entry.gaps[0], prep.value(value_start, start))
            start = value_start
    for g in range(first + 1, last + 1):
        a, b = al.starts[g - 1], al.starts[g]
        if a >= 0 and b >= 0 and entry.gaps[g]:
            lo = prep.end_to_input(a + len(entry.pieces[g - 1]))
            _assign(params, entry.gaps[g], prep.value(lo, prep.to_input(b)))
    if last == len(entry.pieces) - 1 and entry.gaps[-1] and al.cut is None:
        stop = _trail_stop(prep, start, end, entry.exception)
        if _assign(params, entry.gaps[-1], prep.value(end, stop)):
            end = stop
    sites = sorted(s.pinned, key=lambda site: site.sort_key)
    return Match(
        entry=entry,
        score=s.score,
        start=start,
        end=end,
        params=params,
        site=sites[0] if sites else None,
        site_line=s.frame.line if sites and s.frame is not None else None,
        snapshots=tuple(dict.fromkeys(x.snapshot for x in sites)) if sites else entry.snapshots,
        matched=al.matched,
        affinity=s.near,
    )


def _class_named(sq: str, q0: int, exception: str, lead: bool) -> tuple[bool, bool]:
    """Whether the exception's class (or another class) is named right before the message."""
    if lead:  # the class is followed by the leading placeholder's value
        window = sq[max(0, q0 - _LEAD) : q0]
        return window.rfind(exception + ":") >= 0 or window.rfind(exception + "(") >= 0, False
    before = sq[max(0, q0 - 120) : q0].rstrip("'\"")
    if before.endswith(exception + ":") or before.endswith(exception + "("):
        return True, False
    if before.endswith(":") or before.endswith("("):
        name = before[:-1]
        k = len(name)
        while k > 0 and (name[k - 1].isalnum() or name[k - 1] == "_"):
            k -= 1
        word = name[k:]
        return False, word != exception and word.endswith(_EXC_SUFFIXES)
    return False, False


def _trail_stop(prep: Prepared, start: int, end: int, exception: str) -> int:
    """Where a trailing placeholder's value ends: the line's end, or the quote that opened
    the message (`"ValueError: ...", ` in JSON, `ValueError('...')`, backticks in markdown)."""
    stop = min(prep.line_bounds(end)[1], end + _TRAIL)
    text = prep.text
    head = text[max(0, start - _LEAD) : start].rstrip()
    if head.endswith(exception + ":"):
        head = head[: -len(exception) - 1].rstrip()
    if not head or head[-1] not in "\"'`":
        return stop
    quote = head[-1]
    close = text.find(quote, end, stop)
    while close > 0 and text[close - 1] == "\\":  # an escaped quote inside the value
        close = text.find(quote, close + 1, stop)
    return stop if close < 0 else close


def _lead_value_start(prep: Prepared, start: int, exception: str) -> int:
    """Input offset where a leading placeholder's value begins (after `ValueError: `)."""
    line_start = prep.line_bounds(start)[0]
    lo = max(line_start, start - _LEAD)
    window = prep.work[lo:start]
    k = window.rfind(exception + ":")
    if k >= 0:
        lo += k + len(exception) + 1
    while lo < start and prep.work[lo].isspace():
        lo += 1
    return lo


def _assign(params: dict[str, str], names: tuple[str, ...], value: str) -> bool:
    """Store a captured value under its placeholder expression(s); False when it is empty."""
    if not value:
        return False
    if len(names) == 1:
        params[names[0]] = value
        return True
    parts = value.split(" ")
    if len(parts) == len(names):
        params.update(zip(names, parts, strict=True))
    else:
        params[names[0]] = value
    return True
