"""A small hand-built knowledge base for search and page tests that must not wait for an ingest.

The rows are written through the ORM exactly as the store writes them, then the search index is
refreshed the way the store does at the end of a snapshot.
"""

from __future__ import annotations

import hashlib
import json
from datetime import UTC, datetime

from sqlalchemy.orm import Session

from errkb.core.models import Error, Occurrence, Repo, SiteBody, Snapshot, packed_code
from errkb.core.search.index import refresh_search_index

MESSAGES = [
    # (message, exception, path, qualname, flags, snapshots)
    (
        "--enable-unified-memory with PD disaggregation does not support hybrid-SWA models yet",
        "ValueError",
        "python/pkg/mem_cache/kv_cache_configurator.py",
        "KVCacheConfigurator._init_pools",
        ["--enable-unified-memory", "--disaggregation-mode"],
        ("1.0",),
    ),
    (
        "--enable-unified-memory only supports hybrid Mamba models",
        "ValueError",
        "python/pkg/mem_cache/kv_cache_configurator.py",
        "KVCacheConfigurator._init_pools",
        ["--enable-unified-memory"],
        ("1.0", "1.1"),
    ),
    (
        "tp_size must divide the number of attention heads, got {tp_size}",
        "ValueError",
        "python/pkg/layers/attention.py",
        "Attention.__init__",
        ["--tp-size"],
        ("1.0", "1.1"),
    ),
    (
        "Unsupported memory layout {layout!r}",
        "ValueError",
        "python/pkg/layers/memory.py",
        "make_layout",
        [],
        ("1.1",),
    ),
    (
        "Invalid value <script>alert(1)</script> for option",
        "ValueError",
        "python/pkg/evil.py",
        "<module>",
        [],
        ("1.0", "1.1"),
    ),
    (
        "Café résumé naïve encoding: unified ünïcode",
        "TypeError",
        "python/pkg/text/encodings.py",
        "decode",
        [],
        ("1.1",),
    ),
    (
        "disaggregation mode {mode} requires a transfer backend",
        "ValueError",
        "python/pkg/disagg/base.py",
        "check_mode",
        ["--disaggregation-mode"],
        ("1.0",),
    ),
    (
        "memory pool exhausted; increase --mem-fraction-static",
        "ValueError",
        "python/pkg/MemCache/pool.py",
        "Pool.alloc",
        ["--mem-fraction-static"],
        ("1.0", "1.1"),
    ),
]


def error_id_of(message: str) -> str:
    """A stable 16-hex id for a test message."""
    return hashlib.sha256(message.encode()).hexdigest()[:16]


def populate(session: Session) -> dict[str, str]:
    """Write the small knowledge base; returns message -> error id."""
    repo = Repo(name="acme/pkg", web_url="https://example.org/acme/pkg", path_prefix="python/")
    session.add(repo)
    session.flush()
    snaps = {}
    for i, label in enumerate(("1.0", "1.1")):
        snaps[label] = Snapshot(
            repo_id=repo.id,
            label=label,
            kind="pypi",
            ref=f"v{label}",
            commit=label,
            date=datetime(2026, 1 + i, 1, tzinfo=UTC),
            link_base=f"https://example.org/acme/pkg/blob/v{label}/",
            sort_key=f"{i:04d}",
            ingested_at=datetime(2026, 6, 1, tzinfo=UTC),
        )
        session.add(snaps[label])
    session.flush()
    ids = {}
    for n, (message, exc, path, qualname, flags, labels) in enumerate(MESSAGES):
        eid = error_id_of(message)
        ids[message] = eid
        session.add(
            Error(
                id=eid,
                repo_id=repo.id,
                exception=exc,
                template=[{"kind": "text", "text": message}],
                form="literal",
                message=message,
                title=message[:60],
            )
        )
        session.flush()
        for k, label in enumerate(labels):
            line = 10 + n * 20 + k * 7
            body = SiteBody(
                hash=f"{eid}-{k}",
                end_offset=1,
                code=packed_code(
                    json.dumps([]),
                    json.dumps(
                        {
                            "start": -2,
                            "lines": ["if bad:", f"    raise {exc}(", f"        {message!r})"],
                            "raise_start": 0,
                            "raise_end": 1,
                        }
                    ),
                ),
                flags=[{"flag": f, "dest": f[2:].replace("-", "_")} for f in flags],
                raise_source=repr(message),
            )
            session.add(body)
            session.add(
                Occurrence(
                    error_id=eid,
                    snapshot_id=snaps[label].id,
                    path=path,
                    line=line,
                    end_line=line + 1,
                    qualname=qualname,
                    body=body,
                )
            )
    session.flush()
    refresh_search_index(session)
    session.commit()
    return ids
