"""What `errkb ingest` prints at the end: totals, then the snapshots that changed something.

An ingest of every release covers well over a hundred snapshots, so the summary has one row per
snapshot written (not one column) and leaves out those already stored; past `MAX_ROWS`, only the
snapshots that brought new errors are listed. The table stays within 100 columns. `--json`
prints the full record of every snapshot instead, for programs.
"""

from __future__ import annotations

from collections import Counter
from dataclasses import asdict, dataclass
from typing import TYPE_CHECKING, Any

from rich import box
from rich.console import Group, RenderableType
from rich.table import Table
from rich.text import Text

if TYPE_CHECKING:
    from errkb.ingest.pipeline import SnapshotSummary

MAX_ROWS = 40  # beyond this many written snapshots, list only those with new errors


@dataclass(frozen=True)
class DownloadTotals:
    """What the download pool did."""

    releases: int = 0
    bytes: int = 0
    seconds: float = 0.0


def _plural(n: int, word: str) -> str:
    return f"{n:,} {word}{'' if n == 1 else 's'}"


def totals_text(
    summaries: list[SnapshotSummary],
    seconds: float,
    failures: int = 0,
    downloads: DownloadTotals | None = None,
) -> str:
    """The ingest in a few plain sentences: snapshots, files, sites, errors and time.

    The files' four counts add up to the files read: each file is parsed, from the cache,
    without the exception's name, or skipped.
    """
    written = [s for s in summaries if s.status == "ingested"]
    stored = len(summaries) - len(written)
    head = f"{_plural(len(summaries) + failures, 'snapshot')}: {len(written):,} ingested"
    head += f", {stored:,} already ingested"
    if failures:
        head += f", {failures:,} failed"
    skipped = sum(sum(s.skipped.values()) for s in written)
    files = (
        f"{_plural(sum(s.files for s in written), 'file')} read: "
        f"{sum(s.read_parsed for s in written):,} parsed, "
        f"{sum(s.read_cached for s in written):,} from the cache, "
        f"{sum(s.prefiltered for s in written):,} without a possible site, "
        f"{skipped:,} skipped."
    )
    found = (
        f"{_plural(sum(s.sites for s in written), 'site')}, "
        f"{_plural(sum(s.new_errors for s in written), 'new error')}."
    )
    kinds = kinds_text(written)
    if kinds:
        found += "\n" + kinds
    took = f"Took {seconds:.1f} s"
    if downloads is not None and downloads.releases:
        took += (
            f", downloading {_plural(downloads.releases, 'release')} "
            f"({downloads.bytes / 1e6:,.1f} MB) in {downloads.seconds:.1f} s of transfer"
        )
    return f"{head}.\n{files}\n{found}\n{took}."


SHOWN_CLASSES = 12  # classes named in the summary; the rest are summed


def kinds_text(written: list[SnapshotSummary]) -> str:
    """The sites of the snapshots written, per class and kind, in a sentence or two."""
    by_class: Counter[str] = Counter()
    kinds: Counter[str] = Counter()
    for s in written:
        by_class.update(s.site_counts.get("raise", {}))
        kinds.update({k: v for k, v in s.site_counts.items() if k != "raise"})
    if not by_class and not kinds:
        return ""
    top = by_class.most_common(SHOWN_CLASSES)
    parts = [f"{name} {n:,}" for name, n in top]
    rest = sum(by_class.values()) - sum(n for _, n in top)
    if rest:
        others = len(by_class) - len(top)
        parts.append(f"{rest:,} more of {others:,} other class{'' if others == 1 else 'es'}")
    text = f"Raises by class: {', '.join(parts)}." if parts else ""
    extra = [
        _plural(kinds[k], word)
        for k, word in (
            ("assert", "assert"),
            ("lookup", "missing-key lookup"),
            ("import", "import"),  # of another package: a failed import's sites
        )
        if kinds[k]
    ]
    if kinds["import"]:
        extra[-1] += " of other packages"
    if kinds["indirect"]:
        indirect = _plural(kinds["indirect"], "indirect raise")
        extra.append(f"{indirect} (their class is known only at run time)")
    if extra:
        text += (" " if text else "") + f"Also {', '.join(extra)}."
    return text


def summary_table(summaries: list[SnapshotSummary], seconds: float) -> Table:
    """One row per snapshot written (those with new errors only, past MAX_ROWS)."""
    written = [s for s in summaries if s.status == "ingested"]
    shown = written if len(written) <= MAX_ROWS else [s for s in written if s.new_errors]
    repos = {s.repo for s in summaries}
    # One space between columns, none at the edges: nine columns of figures fit 80 columns
    # with a git label (`main@5ce54159`) whole; rich cut headers to `erro…` and `se…` before.
    table = Table(
        title=f"ingest summary: {len(summaries)} snapshot(s)",
        box=box.SIMPLE_HEAD,
        padding=0,  # the box's own space separates the columns
        show_edge=False,
    )
    table.add_column("snapshot", no_wrap=True, overflow="ellipsis", min_width=8, max_width=32)
    for name in ("files", "parsed", "cached", "skipped", "sites", "errors", "new", "secs"):
        table.add_column(name, justify="right", no_wrap=True)
    for s in shown:
        label = s.label if len(repos) == 1 else f"{s.repo} {s.label}"
        table.add_row(
            label,
            f"{s.files:,}",
            f"{s.read_parsed:,}",
            f"{s.read_cached:,}",
            f"{sum(s.skipped.values()):,}",
            f"{s.sites:,}",
            f"{s.errors:,}",
            f"{s.new_errors:,}",
            f"{s.seconds:.1f}",
        )
    return table


def hidden_text(summaries: list[SnapshotSummary]) -> str:
    """The line under the table for the snapshots it leaves out, or ""."""
    written = [s for s in summaries if s.status == "ingested"]
    hidden = 0 if len(written) <= MAX_ROWS else sum(1 for s in written if not s.new_errors)
    return f"{hidden} other snapshots added no new error (all of them: --json)" if hidden else ""


def summary(
    summaries: list[SnapshotSummary],
    seconds: float,
    failures: int = 0,
    downloads: DownloadTotals | None = None,
) -> RenderableType:
    """The totals, then the table of snapshots written (when any was)."""
    text = Text(totals_text(summaries, seconds, failures, downloads))
    if not any(s.status == "ingested" for s in summaries):
        return text
    hidden = hidden_text(summaries)  # under the table, not as its caption: that wraps to its width
    return Group(summary_table(summaries, seconds), *([Text(hidden)] if hidden else []), text)


def summary_json(
    summaries: list[SnapshotSummary],
    seconds: float,
    failures: list[str],
    downloads: DownloadTotals | None = None,
) -> dict[str, Any]:
    """Every snapshot's full record, the failures and the totals, for `--json`."""
    return {
        "snapshots": [asdict(s) for s in summaries],
        "failures": failures,
        "seconds": round(seconds, 3),
        "downloads": asdict(downloads or DownloadTotals()),
    }
