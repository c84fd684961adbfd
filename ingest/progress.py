"""Where the ingest reports its phases and steps: the CLI passes a Rich progress bar."""

from __future__ import annotations

from typing import Protocol


class Progress(Protocol):
    """Where the pipeline reports its phases (the CLI passes a Rich progress bar)."""

    def phase(self, description: str, total: int | None) -> None:
        """Start a phase of `total` steps."""
        ...

    def advance(self, steps: int = 1) -> None:
        """Mark steps of the current phase done."""
        ...


class NoProgress:
    """Progress that reports nothing."""

    def phase(self, description: str, total: int | None) -> None:
        """Ignore the phase."""

    def advance(self, steps: int = 1) -> None:
        """Ignore the steps."""
