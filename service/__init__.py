"""The service (`service/` on disk, installed as `errkb.service`): the read side and every front
end over it.

- `read/`: one function per question the product answers (entry, history, matches, search and
  browse, status); the only door to the domains below.
- `entries/`, `search/`, `browse/`, `match/`, `snapshots/`: the domains, each with its queries,
  schemas and JSON routes side by side.
- Front ends, which only format the read side's answers: the JSON routes, `pages/` (the live
  site and the static export), `cli/` (the `errkb` command) and the MCP server.
- `app.py` assembles the HTTP front ends into one FastAPI app.
"""
