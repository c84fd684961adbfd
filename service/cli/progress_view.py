"""Progress of long phases as a person sees it: a bar on a terminal, one line per phase in a log.

On a terminal each phase (downloading, reading a release, storing, building entry documents)
shows a Rich bar with its counts, the time spent and an estimate of the time left. Anywhere else
(a pipe, `docker compose logs`, a cron mail) a bar would print nothing until the end, so each
phase prints one line when it starts instead, with how many steps it has.
"""

from __future__ import annotations

from collections.abc import Iterator
from contextlib import contextmanager
from datetime import datetime

from rich.console import Console
from rich.markup import escape
from rich.progress import (
    BarColumn,
    MofNCompleteColumn,
    Progress,
    TextColumn,
    TimeElapsedColumn,
    TimeRemainingColumn,
)


def bar(console: Console) -> Progress:
    """The bar every long phase uses: counts, time spent, time left."""
    return Progress(
        TextColumn("{task.description}"),
        BarColumn(),
        MofNCompleteColumn(),
        TimeElapsedColumn(),
        TextColumn("left"),
        TimeRemainingColumn(),
        console=console,
        transient=True,
    )


def stamp() -> str:
    """The time of day, for lines in a log."""
    return datetime.now().astimezone().strftime("%H:%M:%S")


class PhaseView:
    """The pipeline's `Progress`: a bar per phase on a terminal, else one line per phase."""

    def __init__(self, console: Console, progress: Progress | None) -> None:
        self.console = console
        self.progress = progress
        self.task = progress.add_task("starting", total=None) if progress is not None else None

    def phase(self, description: str, total: int | None) -> None:
        """Start a new phase."""
        if self.progress is not None and self.task is not None:
            self.progress.reset(self.task, description=description, total=total, completed=0)
            return
        count = f" ({total:,} steps)" if total else ""
        self.console.print(f"{stamp()} {escape(description)}{count}", highlight=False)

    def advance(self, steps: int = 1) -> None:
        """Advance the bar (nothing to do in a log)."""
        if self.progress is not None and self.task is not None:
            self.progress.advance(self.task, steps)

    def beside(self) -> PhaseView:
        """Another view on the same console: a second bar on a terminal (the next snapshot,
        read while this one is stored), lines among these in a log."""
        return PhaseView(self.console, self.progress)


@contextmanager
def phases(console: Console) -> Iterator[PhaseView]:
    """A `PhaseView` for the block: a live bar on a terminal, lines otherwise."""
    if not console.is_terminal:
        yield PhaseView(console, None)
        return
    with bar(console) as progress:
        yield PhaseView(console, progress)


class CountView:
    """A count of steps (entry documents built): a bar on a terminal, else a line per tenth."""

    def __init__(self, console: Console, description: str, progress: Progress | None) -> None:
        self.console = console
        self.description = description
        self.progress = progress
        self.task = progress.add_task(description, total=None) if progress is not None else None
        self._tenth = -1

    def __call__(self, done: int, total: int) -> None:
        """Record that `done` of `total` steps are done."""
        if self.progress is not None and self.task is not None:
            self.progress.update(self.task, completed=done, total=total)
            return
        tenth = 10 * done // total if total else 10
        if tenth != self._tenth:
            self._tenth = tenth
            line = f"{stamp()} {self.description}: {done:,} of {total:,}"
            self.console.print(line, highlight=False)


@contextmanager
def counting(console: Console, description: str) -> Iterator[CountView]:
    """A `CountView` for the block."""
    if not console.is_terminal:
        yield CountView(console, description, None)
        return
    with bar(console) as progress:
        yield CountView(console, description, progress)
