"""The end-of-ingest summary stays readable for many snapshots; --json keeps every figure."""

from __future__ import annotations

from rich.console import Console

from errkb.ingest.pipeline import SnapshotSummary
from errkb.service.cli.ingest_summary import (
    MAX_ROWS,
    DownloadTotals,
    summary,
    summary_json,
    totals_text,
)


def _snapshots(n: int) -> list[SnapshotSummary]:
    out = []
    for i in range(n):
        s = SnapshotSummary("sgl-project/sglang", f"0.{i // 30}.{i % 30}", "pypi", f"v{i}")
        s.files, s.read_parsed, s.read_cached, s.prefiltered, s.sites = 3000, 40, 2500, 459, 700
        s.skipped = {"syntax_error": 1}
        s.errors, s.new_errors, s.seconds = 600, 3 if i % 10 == 0 else 0, 1.25
        out.append(s)
    return out


def _rendered(renderable: object, width: int = 100) -> list[str]:
    console = Console(width=width, record=True, file=open("/dev/null", "w"))  # noqa: SIM115
    console.print(renderable)
    console.file.close()
    return console.export_text().splitlines()


def test_many_snapshots_fit_100_columns_and_only_those_with_new_errors_are_listed() -> None:
    snaps = _snapshots(151)
    for i in (5, 6):
        snaps[i].status = "already ingested"
    lines = _rendered(summary(snaps, 185.0, failures=2, downloads=DownloadTotals(149, 439e6, 61.0)))
    assert max(len(line) for line in lines) <= 100
    listed = [line.split()[0] for line in lines if line.strip().startswith("0.")]
    assert listed == [s.label for s in snaps if s.new_errors]  # 16 of them
    text = "\n".join(lines)
    assert "133 other snapshots added no new error (all of them: --json)" in text
    assert "153 snapshots: 149 ingested, 2 already ingested, 2 failed." in text
    assert "downloading 149 releases (439.0 MB) in 61.0 s of transfer" in text


def test_a_few_snapshots_are_all_listed_and_nothing_new_is_one_sentence() -> None:
    snaps = _snapshots(MAX_ROWS)
    lines = _rendered(summary(snaps, 10.0))
    assert len([line for line in lines if line.strip().startswith("0.")]) == MAX_ROWS
    for s in snaps:
        s.status = "already ingested"
    assert _rendered(summary(snaps, 0.2)) == [
        f"{MAX_ROWS} snapshots: 0 ingested, {MAX_ROWS} already ingested.",
        "0 files read: 0 parsed, 0 from the cache, 0 without a possible site, 0 skipped.",
        "0 sites, 0 new errors.",
        "Took 0.2 s.",
    ]


def test_totals_count_written_snapshots_only_and_json_keeps_each() -> None:
    snaps = _snapshots(3)
    snaps[1].status = "already ingested"
    text = totals_text(snaps, 5.0)
    assert "6,000 files read: 80 parsed, 5,000 from the cache" in text and "2 skipped" in text
    assert "1,400 sites, 3 new errors." in text
    report = summary_json(snaps, 5.0, ["demo==1.1: failed"])
    assert [s["label"] for s in report["snapshots"]] == ["0.0.0", "0.0.1", "0.0.2"]
    assert report["snapshots"][0]["skipped"] == {"syntax_error": 1}
    assert report["failures"] == ["demo==1.1: failed"]


def test_the_summary_counts_sites_per_class_and_kind() -> None:
    snaps = _snapshots(2)
    snaps[0].site_counts = {"raise": {"ValueError": 9196, "RuntimeError": 1800}, "assert": 20}
    snaps[1].site_counts = {"raise": {"ValueError": 4, "FooError": 1}, "indirect": 3}
    text = totals_text(snaps, 1.0)
    assert "Raises by class: ValueError 9,200, RuntimeError 1,800, FooError 1." in text
    assert "Also 20 asserts, 3 indirect raises (their class is known only at run time)." in text


def test_the_table_fits_80_columns_with_every_figure_whole() -> None:
    """A git label and the figures of a whole history, in an 80-column terminal: nothing cut."""
    snaps = _snapshots(2)
    snaps[0].label = "main@5ce5415912ab"
    s = snaps[1]
    s.files, s.read_parsed, s.read_cached, s.sites = 4_719, 4_719, 12_345, 128_639
    s.errors, s.new_errors, s.seconds, s.skipped = 121_234, 21_234, 1161.25, {"big": 12}
    lines = _rendered(summary(snaps, 1200.0, failures=0), width=80)
    assert max(len(line) for line in lines) <= 80
    text = "\n".join(lines)
    assert "…" not in text, text
    for figure in ("main@5ce5415912ab", "128,639", "121,234", "21,234", "1161.2", "skipped"):
        assert figure in text, figure


def test_the_classes_past_the_first_few_read_as_more_raises() -> None:
    snaps = _snapshots(1)
    counts = {f"Error{i}": 10 for i in range(20)}
    snaps[0].site_counts = {"raise": {"ValueError": 500, **counts}}
    text = totals_text(snaps, 1.0)
    assert "more of" in text and " of 91 other" not in text
    shown = text.split("Raises by class: ")[1].split(".")[0].split(", ")
    rest = shown[-1]
    assert rest.endswith("other classes") and rest.split()[1:3] == ["more", "of"], rest
