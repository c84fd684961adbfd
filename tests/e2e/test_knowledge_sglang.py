"""Knowledge on real sglang releases (0.5.18, 0.5.19, 0.5.20, 0.5.23 ingested by the pipeline).

Run with `-s` to read the reference entry and 30 random 0.5.23 entries as rendered text.
"""

from __future__ import annotations

import random
from collections import Counter
from collections.abc import Iterator

import pytest
from kb_explanations import kept_explanations
from knowledge_checks import flag_values, guard_holds
from sqlalchemy import func, select
from sqlalchemy.orm import Session

from errkb.core.db import make_engine, session_factory
from errkb.core.models import Error, Flag, Occurrence, Snapshot
from errkb.core.records import Segment, Template, error_id
from errkb.service.entries.build import build_entry
from errkb.service.entries.schemas import Entry

pytestmark = pytest.mark.sglang

REPO = "sgl-project/sglang"
REFERENCE = (
    "--enable-unified-memory with PD disaggregation does not support hybrid-SWA models yet "
    "(no whole-envelope transfer scheme for the SWA sub-pool). Drop --enable-unified-memory "
    "or run without PD."
)
REFERENCE_ID = error_id(REPO, "ValueError", Template((Segment("text", REFERENCE),), "literal"))


@pytest.fixture(scope="module")
def session(sglang_kb_url: str) -> Iterator[Session]:
    engine = make_engine(sglang_kb_url)
    with session_factory(engine)() as s:
        yield s
    engine.dispose()


def render(entry: Entry) -> str:
    """An entry as plain text, the way a reader meets it on the page."""
    ex = entry.explanation
    occ = entry.occurrences[0]
    out = [
        f"== {entry.title}  [{entry.id}]",
        f"message: {entry.message}",
        f"source: {occ.path}:{occ.line} in {occ.function} ({occ.snapshot}) {occ.url or ''}",
        f"what it means {ex.what_it_means.provenance}: {ex.what_it_means.text}",
        f"trigger {ex.trigger.provenance}: {ex.trigger.text}",
        f"common situations {ex.common_situations.provenance}:",
        *(f"  - {s}" for s in ex.common_situations.items),
        "solutions:",
        *(f"  {i}. [{s.kind}] {s.text}" for i, s in enumerate(ex.solutions, 1)),
    ]
    if ex.example_fix:
        out += [
            f"example fix: before: {ex.example_fix.before}",
            f"             after:  {ex.example_fix.after}",
            f"             note:   {ex.example_fix.note}",
        ]
    out += [
        f"flags: {[(f.flag, f.sides, f.polarity, f.value) for f in entry.flags]}",
        f"timeline: {entry.timeline.summary}",
        "related: " + "; ".join(f"{r.title[:50]} ({r.reason})" for r in entry.related),
    ]
    return "\n".join(out)


def test_reference_error_entry(session: Session) -> None:
    entry = build_entry(session, REFERENCE_ID, snapshot="0.5.18")
    print("\n" + render(entry))
    occ = entry.occurrences[0]
    assert (occ.path, occ.line, occ.function) == (
        "python/sglang/srt/mem_cache/kv_cache_configurator.py",
        406,
        "KVCacheConfigurator._init_pools",
    )
    flags = {f.flag: f for f in entry.flags}
    eum = flags["--enable-unified-memory"]
    assert eum.sides == ["message", "condition"] and eum.polarity == "on"
    assert eum.help and eum.default == "False"
    dm = flags["--disaggregation-mode"]
    assert "condition" in dm.sides and (dm.polarity, dm.value) == ("ne", "'null'")
    assert dm.condition == "pd_enabled"

    sols = entry.explanation.solutions
    assert sols[0].kind == "advice" and "Drop --enable-unified-memory" in sols[0].text
    assert any(s.flag == "--enable-unified-memory" and s.text.startswith("Remove") for s in sols)
    assert any(s.command == "--disaggregation-mode null" for s in sols)
    upgrade = [s for s in sols if s.kind == "upgrade"]
    assert [s.snapshot for s in upgrade] == ["0.5.20"] and "0.5.20" in upgrade[0].text

    fix = entry.explanation.example_fix
    assert fix is not None
    before = flag_values(fix.before)
    assert before["--enable-unified-memory"] is True
    assert before["--disaggregation-mode"] in ("prefill", "decode")
    assert fix.before.startswith("python -m sglang.launch_server --model-path")
    assert eum.required and dm.required
    assert guard_holds(fix.before, entry.flags) and not guard_holds(fix.after, entry.flags)

    tl = entry.timeline
    assert (tl.first_seen, tl.last_seen, tl.gone_in) == ("0.5.18", "0.5.19", "0.5.20")
    assert "not raised since 0.5.20" in tl.summary
    assert [(r.from_snapshot, r.to_snapshot) for r in tl.ranges if r.present] == [
        ("0.5.18", "0.5.19")
    ]

    reasons = {r.id: r.reason for r in entry.related}
    for prefix in (
        "--enable-unified-memory only supports hybrid Mamba",
        "--enable-unified-memory with PD disaggregation currently supports only MLA",
    ):
        (sibling,) = session.scalars(select(Error.id).where(Error.message.startswith(prefix)))
        assert reasons.get(sibling) == "same function", prefix
    assert REFERENCE_ID not in {r.id for r in entry.related} and len(entry.related) <= 8
    assert entry.occurrences[0].url == (
        "https://github.com/sgl-project/sglang/blob/v0.5.18/python/sglang/srt/mem_cache/"
        "kv_cache_configurator.py#L406-L411"
    )
    assert build_entry(session, REFERENCE_ID).snapshot == "0.5.19"


def test_reference_entry_reads_as_the_reference_text(session: Session) -> None:
    """Its four facts in plain words, the guard `req_to_token_pool is None` said as the comment
    on that path says it, the reason, a reader's reason for each related error, and a snippet
    that keeps the guarding `if`."""
    entry = build_entry(session, REFERENCE_ID, snapshot="0.5.18")
    ex = entry.explanation
    means = ex.what_it_means.text
    # in the user's terms first (issue 44); the guard's facts in words under their own heading
    assert means.startswith("You started sglang with --disaggregation-mode and")
    facts = " | ".join(ex.facts.items)
    for fact in (
        "--enable-unified-memory is on",
        "prefill/decode (PD) disaggregation is enabled",
        "hybrid sliding-window attention (SWA)",
        "this is the target worker",  # from "Gated to the target worker (req_to_token_pool …)"
    ):
        assert fact in facts, facts
    assert "request to token pool" not in facts + means and "`" not in means
    assert "no whole-envelope transfer scheme for the SWA sub-pool" in means
    assert "derived:comments" in ex.what_it_means.provenance
    occ = entry.occurrences[0]
    guard = "if get_memory().enable_unified_memory and req_to_token_pool is None:"
    assert any(line.strip() == guard for line in occ.snippet.lines), occ.snippet.lines[:3]
    siblings = [r for r in entry.related if r.reason == "same function"]
    assert siblings and all(r.why.startswith("raised just") for r in siblings), siblings
    assert all("while initializing pools" in r.why for r in siblings)


def test_every_0_5_23_value_error_is_explained(session: Session) -> None:
    snap_id = session.scalars(select(Snapshot.id).where(Snapshot.label == "0.5.23")).one()
    expected = session.execute(
        select(func.count(func.distinct(Occurrence.error_id)))
        .join(Error, Error.id == Occurrence.error_id)
        .where(Occurrence.snapshot_id == snap_id, Error.exception == "ValueError")
    ).scalar_one()
    explained = {}
    kinds: Counter[str] = Counter()
    stats: Counter[str] = Counter()
    for error, ex in kept_explanations(session, "0.5.23"):  # derived once per code
        if error.exception != "ValueError":
            continue
        assert ex.what_it_means.text.strip(), error.id
        assert ex.solutions and all(s.text.strip() for s in ex.solutions), error.id
        explained[error.id] = ex
        kinds.update({s.kind for s in ex.solutions})
        stats["example fix"] += ex.example_fix is not None
        stats["flag-derived field"] += "derived:flags" in ex.what_it_means.provenance
    print(
        f"\n0.5.23: {len(explained)} ValueError entries; entries having a solution of each "
        f"kind: {dict(kinds)}; {dict(stats)}"
    )
    assert len(explained) == expected > 8000

    rng = random.Random(23)
    for eid in rng.sample(sorted(explained), 30):
        entry = build_entry(session, eid, snapshot="0.5.23")
        assert entry.explanation == explained[eid]  # the bulk path derives the same entry
        print("\n" + render(entry))


def test_stored_flag_catalogs(session: Session) -> None:
    def flags_of(label: str, path: str) -> int:
        return session.execute(
            select(func.count())
            .select_from(Flag)
            .join(Snapshot, Snapshot.id == Flag.snapshot_id)
            .where(Snapshot.label == label, Flag.origin == "dataclass", Flag.path == path)
        ).scalar_one()

    server_args = "python/sglang/srt/server_args.py"
    assert flags_of("0.5.18", server_args) == 472
    fields = "python/sglang/srt/arg_groups/fields/memory.py"
    assert flags_of("0.5.23", fields) > 20  # 0.5.23 declares the fields by namespace
    eum = session.execute(
        select(Flag.help, Flag.default)
        .join(Snapshot, Snapshot.id == Flag.snapshot_id)
        .where(Snapshot.label == "0.5.23", Flag.dest == "enable_unified_memory")
    ).one()
    assert eum.help and eum.default == "False"
