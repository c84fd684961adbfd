"""The read side (`service/read/`, installed as `errkb.service.read`): one function per question
the product answers. Every front end (the JSON routes, the pages, the CLI, the static export and
the MCP server) calls these and only formats what they return, so no two of them can disagree.

| question | function | answer |
|---|---|---|
| the entry of an id, at a version | `entries.entry`, `entries.entry_json` | `Entry` (or JSON) |
| its prose by a language model | `entries.ai_explanation` | `AiExplanationOut` |
| the history of an error | `history.occurrences` | `OccurrencePage` |
| the errors a text shows | `matches.matches_in`; in a server, `match_processes` | `MatchOut`s |
| search and browse | `search.search`, `browse.*` | `SearchResults`, trees, flags |
| the knowledge base's status | `status.kb_status`, `status.ping` | `KbStatus` |

Only the read side (and what it stands on) imports the domains' `queries` modules;
tests/core/test_layers.py keeps it so.
"""

from errkb.service.queries import DbSession

__all__ = ["DbSession"]  # the session type every read takes
