"""The store of entry docs (mapped into the package as `errkb.service.docstore`): what each doc
is built from (`inputs`), which docs a build must make (`plan`), the workers that build them
(`workers`) and their SQL (`queries`). `service/entries/docs.py` runs a build and serves docs."""
