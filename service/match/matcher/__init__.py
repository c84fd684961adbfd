"""Log matching: which knowledge-base errors a pasted log or traceback shows.

`build_index` compiles error rows into an immutable `MatchIndex`; `match_text` answers one text.
Both are pure; `service.match.queries` reads the rows from the database.

The build compiles these modules with mypyc (setup.py), and Python imports a compiled module
before its source. In a checkout, a source edited after the build would then go unseen: there,
a compiled module older than any source of the package is set aside, the package runs from its
sources, and a warning says to rebuild (`make install`).
"""

from errkb.service.match.matcher.compiled import prefer_sources

prefer_sources(__name__, __path__[0])

from errkb.service.match.matcher.index import (  # noqa: E402 - after the choice above
    ErrorRow,
    MatchIndex,
    OccurrenceRow,
    build_index,
)
from errkb.service.match.matcher.matcher import Match, match_text  # noqa: E402

__all__ = ["ErrorRow", "Match", "MatchIndex", "OccurrenceRow", "build_index", "match_text"]
