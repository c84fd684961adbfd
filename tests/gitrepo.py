"""Real git repositories built by tests with GitPython."""

from __future__ import annotations

from datetime import UTC, datetime, timedelta
from pathlib import Path

import git

START = datetime(2026, 1, 1, 12, 0, tzinfo=UTC)


def new_repo(root: Path) -> git.Repo:
    """An empty repository with a fixed identity."""
    repo = git.Repo.init(root, initial_branch="main")
    with repo.config_writer() as cfg:
        cfg.set_value("user", "name", "errkb tests")
        cfg.set_value("user", "email", "tests@errkb.invalid")
    return repo


def commit(repo: git.Repo, message: str, files: dict[str, str | None], day: int) -> str:
    """Write (or delete, for None) files, commit them on a given day, return the full SHA."""
    root = Path(repo.working_tree_dir or ".")
    for rel, text in files.items():
        path = root / rel
        if text is None:
            repo.index.remove([rel], working_tree=True)
            continue
        path.parent.mkdir(parents=True, exist_ok=True)
        path.write_text(text)
        repo.index.add([rel])
    when = (START + timedelta(days=day)).strftime("%Y-%m-%dT%H:%M:%S+0000")
    return repo.index.commit(message, author_date=when, commit_date=when).hexsha
