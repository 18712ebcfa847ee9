"""The health of one long-lived part of a process (the group committer, the indexer, the outbox
dispatcher, the job leases): whether its last round worked, and since when it has been failing.

Each part reports on itself after every round; core.liveness gathers the parts of a process for
/healthz and for the watchdog that ends a process whose part cannot recover while the database answers.
"""

from __future__ import annotations

import time
from collections.abc import Callable
from dataclasses import dataclass, field


@dataclass
class PartHealth:
    #: Seconds of `clock` (monotonic) since the first of the failures in a row; None while it works.
    failing_since: float | None = None
    last_error: str = ""
    #: Failed rounds in a row.
    failures: int = 0
    #: Times it recovered after failing (a reconnection, a lease taken again).
    recoveries: int = 0
    clock: Callable[[], float] = field(default=time.monotonic, repr=False)

    def ok(self) -> None:
        if self.failing_since is not None:
            self.recoveries += 1
        self.failing_since = None
        self.failures = 0

    def failed(self, exc: BaseException | str) -> None:
        if self.failing_since is None:
            self.failing_since = self.clock()
        self.failures += 1
        self.last_error = exc if isinstance(exc, str) else f"{type(exc).__name__}: {exc}"[:500]

    def failing_for(self) -> float:
        """Seconds it has been failing (0 while it works)."""
        return 0.0 if self.failing_since is None else self.clock() - self.failing_since
