"""Failed imports (pure): from an import site and the release's declared requirements to the
entry's prose and pip-line fixes.

`distributions` finds the distribution behind a module and this release's requirement of it;
`guards` reads a `try`/`if` around the import (what the code falls back to); `explain` and
`fixes` write the entry. The import sites themselves come from `ingest.extract.imports`.
"""

from __future__ import annotations

from errkb.knowledge.imports.explain import ImportFacts, explain_import, import_facts

__all__ = ["ImportFacts", "explain_import", "import_facts"]
