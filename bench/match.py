"""Benchmark: POST /api/match's matcher, in process, on sglang 0.5.18-0.5.23.

Prints, for a corpus of generated realistic inputs (templates rendered with values, embedded in
server logs with prefixes and tracebacks, wrapped at 80 columns, some cut after 60 characters):
- median and p99 latency per request with the index;
- the same texts matched naively (every template aligned), and the ratio (goal >= 100x);
- time for 10x longer inputs / time for the base inputs (goal <= 12x), two ways: one error in
  10x more log, and ten errors in one text;
- hostile bodies (1 MiB of `a`, 1 MiB of the commonest first word, 256 KiB of random bytes,
  1 MiB of random template words, 1 MiB of traceback frames);
- index build time (database read + compile) and its memory (tracemalloc, retained and peak).
Timings are medians over interleaved rounds in one process, so machine load affects both sides.

- tracebacks with no message line, built from stored raise sites across the releases: top-1
  and whether the snapshot range given is exactly the snapshots with that raise line.

Usage: .venv/bin/python bench/match.py [--db URL] [--releases 0.5.18,...] [--texts N]
       .venv/bin/python bench/match.py --all-releases [--db URL]
Missing releases are ingested into the database first with the real pipeline (one-off cost);
`--all-releases` means every final sglang release on PyPI, into data/bench/match-all.sqlite3
by default (about 450 MB of wheels; or point --db at a knowledge base built with
`errkb ingest --pypi 'sglang>=0'`).
"""

from __future__ import annotations

import argparse
import random
import statistics
import sys
import time
import tracemalloc
from collections import Counter
from collections.abc import Callable
from pathlib import Path

from sqlalchemy import select

ROOT = Path(__file__).resolve().parent.parent
# Run as a script, bench/ comes first on sys.path and bench/ingest.py would shadow the package.
sys.path[:] = [p for p in sys.path if Path(p or ".").resolve() != ROOT / "bench"]
sys.path[:0] = [str(ROOT), str(ROOT / "tests")]  # tests/: the acceptance test's corpus generator

from kbcache import ingest_release  # noqa: E402
from match_corpus import cut, embed, render  # noqa: E402

from errkb.core.db import make_engine, upgrade  # noqa: E402
from errkb.core.errors import ErrkbError  # noqa: E402
from errkb.core.models import Error, Occurrence, Snapshot  # noqa: E402
from errkb.core.settings import Settings  # noqa: E402
from errkb.ingest.pipeline import Job  # noqa: E402
from errkb.ingest.sources.download import Downloads  # noqa: E402
from errkb.ingest.sources.index import matching_versions, releases_spec  # noqa: E402
from errkb.service.match.matcher import MatchIndex, build_index, match_text  # noqa: E402
from errkb.service.match.queries import error_rows, load_index  # noqa: E402

RELEASES = ("0.5.18", "0.5.19", "0.5.20", "0.5.21", "0.5.22", "0.5.23")
ROUNDS = 3


def ensure_releases(url: str, releases: tuple[str, ...]) -> list[str]:
    """Ingest the releases the database lacks; returns the labels it holds afterwards."""
    engine = make_engine(url)
    upgrade(engine)
    settings = Settings()
    job = Job(engine=engine)
    with engine.connect() as conn:
        have = {label for (label,) in conn.execute(select(Snapshot.label)).all()}
    for version in releases:
        if version in have:
            continue
        print(f"ingesting sglang {version} ...", flush=True)
        try:
            ingest_release(job, f"sglang=={version}", settings.cache_dir / "pypi")
        except ErrkbError as exc:
            print(f"  skipped: {exc.message}")
    with engine.connect() as conn:
        labels = sorted({label for (label,) in conn.execute(select(Snapshot.label)).all()})
    engine.dispose()
    return labels


_SP = "/usr/lib/python3.11/site-packages"


def every_release(settings: Settings) -> tuple[str, ...]:
    """Every final sglang release the package index lists."""
    with Downloads(settings.cache_dir / "pypi", settings.index_url) as downloads:
        return tuple(matching_versions(downloads.listing("sglang"), releases_spec("all")))


def frame_corpus(url: str, count: int, seed: int = 2) -> list[tuple[str, str, frozenset[str]]]:
    """(error id, traceback with no message line, snapshots with that raise line) for sampled
    raise sites whose lines no other error shares (those cannot tell one error from another)."""
    engine = make_engine(url)
    with engine.connect() as conn:
        rows = conn.execute(
            select(
                Occurrence.error_id,
                Occurrence.path,
                Occurrence.line,
                Occurrence.end_line,
                Occurrence.qualname,
                Snapshot.label,
            ).join(Snapshot, Snapshot.id == Occurrence.snapshot_id)
        ).all()
    engine.dispose()
    by_line: dict[tuple[str, int], set[str]] = {}
    for r in rows:
        for line in range(r.line, max(r.end_line, r.line) + 1):
            by_line.setdefault((r.path, line), set()).add(r.error_id)
    per_error: dict[str, list] = {}  # type: ignore[type-arg]
    for r in rows:
        per_error.setdefault(r.error_id, []).append(r)
    sites = sorted({(r.error_id, r.path, r.line, r.qualname) for r in rows})
    alone = [s for s in sites if by_line[(s[1], s[2])] == {s[0]}]
    rng = random.Random(seed)
    out = []
    for error_id, path, line, qualname in rng.sample(alone, min(count, len(alone))):
        function = qualname.rsplit(".", 1)[-1]
        expected = frozenset(
            r.label
            for r in per_error[error_id]
            if r.path == path
            and r.line <= line <= max(r.end_line, r.line)
            and r.qualname.rsplit(".", 1)[-1] == function
        )
        module = path.removeprefix("python/")
        text = (
            "Traceback (most recent call last):\n"
            f'  File "{_SP}/sglang/launch_server.py", line 11, in <module>\n'
            "    main()\n"
            f'  File "{_SP}/{module}", line {line}, in {function}\n'
            "    raise ValueError(\n"
        )
        out.append((error_id, text, expected))
    return out


def bench_frames(index: MatchIndex, url: str, count: int) -> None:
    """Top-1 and snapshot ranges of tracebacks whose message line is missing."""
    cases = frame_corpus(url, count)
    top1 = ranges = 0
    for error_id, text, expected in cases:
        found = match_text(index, text, limit=1)
        if found and found[0].entry.id == error_id:
            top1 += 1
            ranges += set(found[0].snapshots) == expected
    times = per_text(index, [t for _, t, _ in cases])
    print(
        f"tracebacks with no message line, {len(cases)} raise sites: "
        f"top-1 {top1 / len(cases):.1%}, "
        f"snapshot range exact {ranges / len(cases):.1%}; p50 {ms(statistics.median(times))}"
    )


def corpus(url: str, count: int, seed: int = 1) -> list[tuple[str, str]]:
    """(error id, text) pairs: full logs and cut-off messages, for sampled errors."""
    engine = make_engine(url)
    with engine.connect() as conn:
        rows = conn.execute(
            select(Error.id, Error.template, Occurrence.path, Occurrence.line, Occurrence.qualname)
            .join(Occurrence, Occurrence.error_id == Error.id)
            .order_by(Error.id, Occurrence.id)
        ).all()
    engine.dispose()
    first = {}
    for row in rows:
        if any(s["kind"] == "text" and s["text"].strip() for s in row.template):
            first.setdefault(row.id, row)
    rng = random.Random(seed)
    picked = rng.sample(sorted(first), min(count, len(first)))
    out = []
    for error_id in picked:
        row = first[error_id]
        message = render(rng, row.template)
        if rng.random() < 0.25:
            out.append((error_id, cut(rng, message)))
        else:
            module = row.path.removeprefix("python/")
            function = row.qualname.rsplit(".", 1)[-1]
            out.append(
                (
                    error_id,
                    embed(rng, message, module_path=module, line=row.line, function=function),
                )
            )
    return out


def timed(fn: Callable[[], object]) -> float:
    start = time.perf_counter()
    fn()
    return time.perf_counter() - start


def per_text(index: MatchIndex, texts: list[str], **kw: object) -> list[float]:
    """Median over ROUNDS of each text's match time, rounds interleaved."""
    rounds = [[timed(lambda t=t: match_text(index, t, **kw)) for t in texts] for _ in range(ROUNDS)]  # type: ignore[misc]
    return [statistics.median(r[i] for r in rounds) for i in range(len(texts))]


def pct(values: list[float], q: float) -> float:
    ordered = sorted(values)
    return ordered[min(len(ordered) - 1, int(q * len(ordered)))]


def ms(seconds: float) -> str:
    return f"{seconds * 1e3:.2f} ms"


def bench_build(url: str) -> MatchIndex:
    engine = make_engine(url)
    from sqlalchemy.orm import Session

    reads, builds = [], []
    for _ in range(ROUNDS):
        start = time.perf_counter()
        with Session(engine) as session:
            rows = error_rows(session)
        reads.append(time.perf_counter() - start)
        builds.append(timed(lambda rows=rows: build_index(rows)))  # type: ignore[misc]
    tracemalloc.start()
    index = load_index(engine)
    retained, peak = tracemalloc.get_traced_memory()
    tracemalloc.stop()
    engine.dispose()
    print(
        f"index: {index.stats['entries']} templates ({index.stats['opaque']} opaque skipped), "
        f"{index.stats['words']} words, {index.stats['postings']} postings"
    )
    print(
        f"build: read rows {statistics.median(reads):.2f} s + compile "
        f"{statistics.median(builds):.2f} s; memory retained {retained / 2**20:.1f} MiB, "
        f"peak {peak / 2**20:.1f} MiB (tracemalloc, during database read + build)"
    )
    return index


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--db", default="")
    parser.add_argument("--releases", default=",".join(RELEASES))
    parser.add_argument("--all-releases", action="store_true", help="every sglang release")
    parser.add_argument("--texts", type=int, default=1000)
    parser.add_argument("--naive-texts", type=int, default=30)
    parser.add_argument("--frame-texts", type=int, default=300)
    args = parser.parse_args()
    name = "match-all.sqlite3" if args.all_releases else "match.sqlite3"
    args.db = args.db or f"sqlite:///{ROOT / 'data' / 'bench' / name}"
    wanted = tuple(args.releases.split(","))
    if args.all_releases:
        wanted = every_release(Settings())
    labels = ensure_releases(args.db, wanted)
    print(f"snapshots: {len(labels)} ({labels[0]} ... {labels[-1]})")
    index = bench_build(args.db)
    bench_frames(index, args.db, args.frame_texts)

    pairs = corpus(args.db, args.texts)
    texts = [t for _, t in pairs]
    fast = per_text(index, texts)
    top1 = sum(
        1 for (eid, t) in pairs if (m := match_text(index, t, limit=1)) and m[0].entry.id == eid
    )
    print(
        f"corpus: {len(texts)} texts (25% cut after 60 chars), median "
        f"{statistics.median(len(t) for t in texts):.0f} chars; "
        f"top-1 exact id {top1 / len(texts):.1%} (cut texts, identical-text twins: misses)"
    )
    print(
        f"latency with index: p50 {ms(statistics.median(fast))}, p99 {ms(pct(fast, 0.99))} "
        "(goal p50 <= 2 ms)"
    )

    subset = texts[: args.naive_texts]
    naive = per_text(index, subset, exhaustive=True)
    indexed = fast[: args.naive_texts]
    ratio = statistics.median(naive) / statistics.median(indexed)
    print(
        f"naive (every template aligned), {len(subset)} texts: "
        f"median {ms(statistics.median(naive))} -> index is {ratio:.0f}x faster (goal >= 100x)"
    )

    scale(index, pairs)
    hostile(index)


def scale(index: MatchIndex, pairs: list[tuple[str, str]]) -> None:
    """Time for 10x longer inputs over time for the base inputs."""
    rng = random.Random(3)
    logs = [t for _, t in pairs if "\n" in t][:60]
    base, padded, ten = [], [], []
    for log in logs[:30]:
        noise = [t for t in logs if t is not log]
        filler = []
        while sum(map(len, filler)) < 9 * len(log):
            filler.append(_noise_only(rng, len(log)))
        half = len(filler) // 2
        base.append(log)
        padded.append("\n".join(filler[:half] + [log] + filler[half:]))
        ten.append("\n".join([log] + rng.sample(noise, 9)))
    t_base = statistics.median(per_text(index, base))
    t_pad = statistics.median(per_text(index, padded))
    t_ten = statistics.median(per_text(index, ten))
    size = statistics.median(len(t) for t in base)
    print(
        f"scaling (base median {size:.0f} chars, {ms(t_base)}): one error in 10x more log "
        f"{t_pad / t_base:.1f}x, ten errors in one text {t_ten / t_base:.1f}x (goal <= 12x)"
    )


def _noise_only(rng: random.Random, size: int) -> str:
    lines = []
    while sum(map(len, lines)) < size:
        lines.append(
            f"[2025-03-0{rng.randrange(1, 9)} 10:{rng.randrange(10, 59)}:00 TP{rng.randrange(8)}] "
            f"Decode batch. #running-req: {rng.randrange(64)}, #token: {rng.randrange(99999)}, "
            f"token usage: 0.{rng.randrange(99):02d}, gen throughput (token/s): "
            f"{rng.uniform(1, 900):.2f}, #queue-req: {rng.randrange(9)}"
        )
    return "\n".join(lines)


def hostile(index: MatchIndex) -> None:
    """Bounded time on bodies built to hurt."""
    rng = random.Random(9)
    vocab = sorted(w.decode() for w in index.postings)
    word = _commonest_first_word(index)
    bodies = {
        "1 MiB of 'a'": "a" * (1 << 20),
        f"1 MiB of {word!r} repeated": (word + " ") * ((1 << 20) // (len(word) + 1)),
        "256 KiB random bytes": rng.randbytes(256 << 10).decode("utf-8", errors="replace"),
        "1 MiB random template words": " ".join(rng.choice(vocab) for _ in range((1 << 20) // 8))[
            : 1 << 20
        ],
        "1 MiB of traceback frames": ('File "/x/sglang/srt/a.py", line 1, in f\n' * 30_000)[
            : 1 << 20
        ],
    }
    for name, body in bodies.items():
        seconds = statistics.median(
            timed(lambda b=body: match_text(index, b)) for _ in range(ROUNDS)
        )  # type: ignore[misc]
        print(f"hostile: {name}: {ms(seconds)}")


def _commonest_first_word(index: MatchIndex) -> str:
    words: Counter[str] = Counter()
    for entry in index.entries:
        if not entry.gaps[0]:
            head = entry.title.split()[:1]
            words.update(head)
    return words.most_common(1)[0][0]


if __name__ == "__main__":
    main()
