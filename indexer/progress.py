"""Backfill progress: blocks done of the target, blocks/s, events/s and ETA, as a bar redrawn in place
on a terminal and as plain lines (at most one a second) anywhere else (a pipe, a log file, JSON logs).

The historical sync hands a Snapshot to its `progress` callback after every range it commits; a
ProgressReporter decides what to show and how often.
"""

from __future__ import annotations

import os
import shutil
import sys
import time
from collections.abc import Callable
from dataclasses import dataclass, field
from typing import TextIO


@dataclass(frozen=True)
class Snapshot:
    start_block: int  # the checkpoint the backfill started from
    current: int  # the last block committed
    target: int  # the block it is going to (the final block when it was sized)
    events: int  # events committed since the start
    elapsed: float  # seconds since the start

    @property
    def done(self) -> bool:
        return self.current >= self.target

    @property
    def fraction(self) -> float:
        span = self.target - self.start_block
        return 1.0 if span <= 0 else min(1.0, max(0.0, (self.current - self.start_block) / span))

    @property
    def blocks_per_s(self) -> float:
        return (self.current - self.start_block) / max(self.elapsed, 1e-9)

    @property
    def events_per_s(self) -> float:
        return self.events / max(self.elapsed, 1e-9)

    @property
    def eta(self) -> float:
        bps = self.blocks_per_s
        return (self.target - self.current) / bps if bps > 0 else float("inf")

    def line(self) -> str:
        """The plain form: `block 1234/5678 (21%) 812 blocks/s 9,100 events/s ETA 5s`."""
        return (
            f"block {self.current}/{self.target} ({self.fraction:.0%}) "
            f"{self.blocks_per_s:,.0f} blocks/s {self.events_per_s:,.0f} events/s ETA {self.eta:,.0f}s"
        )

    def bar(self, columns: int) -> str:
        """The terminal form, at most `columns` wide: `[#####-----]  52% block 1,234/2,345 ...`."""
        eta = "--" if self.eta == float("inf") else f"{self.eta:,.0f}s"
        tail = (
            f" {self.fraction:4.0%} block {self.current:,}/{self.target:,} "
            f"{self.blocks_per_s:,.0f} blocks/s {self.events_per_s:,.0f} events/s ETA {eta}"
        )
        width = max(10, min(40, columns - len(tail) - 12))
        filled = round(width * self.fraction)
        text = f"backfill [{'#' * filled}{'-' * (width - filled)}]{tail}"
        return text[: max(columns - 1, 20)]


@dataclass
class Progress:
    """What the historical sync counts while it backfills."""

    start_block: int
    started: float = field(default_factory=time.monotonic)
    events: int = 0

    def snapshot(self, current: int, target: int) -> Snapshot:
        return Snapshot(self.start_block, current, target, self.events, time.monotonic() - self.started)


class ProgressReporter:
    """Shows snapshots: on a terminal, a bar redrawn in place at most every `tty_interval` seconds
    and finished with a newline; otherwise a plain line at most every `line_interval` seconds, through
    `plain` (default: a line on `stream`). A backfill shows from its first unfinished snapshot to its
    last one (current == target), which always shows; after the first backfill, a catch-up done in one
    range (the next block of a local chain) shows nothing."""

    def __init__(
        self,
        stream: TextIO | None = None,
        *,
        tty: bool | None = None,
        plain: Callable[[str], None] | None = None,
        tty_interval: float = 0.1,
        line_interval: float = 1.0,
        clock: Callable[[], float] = time.monotonic,
    ) -> None:
        self.stream = stream or sys.stderr
        self.tty = _isatty(self.stream) if tty is None else tty
        self.plain = plain or self._print
        self.interval = tty_interval if self.tty else line_interval
        self.clock = clock
        self._last = float("-inf")
        self._showing = False  # a backfill is being shown (its last snapshot not yet)
        self._first = True  # nothing shown yet: the first backfill shows even when it is one range

    def __call__(self, s: Snapshot) -> None:
        now = self.clock()
        if s.done and not self._showing and not self._first:
            return  # a catch-up over before it started: nothing to show
        if not s.done and self._showing and now - self._last < self.interval:
            return
        self._showing = not s.done
        self._first = False
        self._last = now
        if not self.tty:
            self.plain(s.line())
            return
        columns = shutil.get_terminal_size((100, 24)).columns
        self.stream.write("\r" + s.bar(columns) + "\x1b[K")
        if s.done:
            self.stream.write("\n")
        self.stream.flush()

    def _print(self, line: str) -> None:
        print(line, file=self.stream, flush=True)


def _isatty(stream: TextIO) -> bool:
    try:
        return stream.isatty() and os.environ.get("TERM") != "dumb"
    except (AttributeError, ValueError):
        return False
