"""The `errkb` command line (`service/cli/`, installed as `errkb.service.cli`): a front end like
the pages. Its commands format the read side's answers (`show`, `match`, `explain`), drive the
ingest pipeline (`ingest`), or start the server and the static export (`serve`, `export-site`).
"""
