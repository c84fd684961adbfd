"""Log matching: which knowledge-base errors a pasted log or traceback shows.

`build_index` compiles error rows into an immutable `MatchIndex`; `match_text` answers one text.
Both are pure; `service.match.queries` reads the rows from the database.
"""

from errkb.service.match.matcher.index import ErrorRow, MatchIndex, OccurrenceRow, build_index
from errkb.service.match.matcher.matcher import Match, match_text

__all__ = ["ErrorRow", "Match", "MatchIndex", "OccurrenceRow", "build_index", "match_text"]
