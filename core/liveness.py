"""The long-lived parts of a process (its group committer, indexer, outbox dispatcher, job leases) and
the watchdog that ends the process when one of them cannot recover.

Every part reports after each of its rounds (core.store.health.PartHealth); /healthz shows each part's
state, and the process is `degraded` while one fails. A part that fails because the database is out of
reach recovers by itself once it is back (every part reconnects), so the process stays up and answers
503 meanwhile: restarting it would not bring the database back. A part that keeps failing while the
database answers (or whose loop has ended) will not recover by itself: past `exit_after` seconds the
watchdog ends the process with EXIT_UNHEALTHY, so that its supervisor (systemd's Restart=always, a
container's restart policy) starts it afresh.
"""

from __future__ import annotations

import asyncio
import contextlib
import logging
import time
from collections.abc import Awaitable, Callable
from dataclasses import dataclass, field
from typing import Any

from core.store.health import PartHealth

log = logging.getLogger("agentledger.liveness")

#: The process's exit status when the watchdog ends it (EX_SOFTWARE).
EXIT_UNHEALTHY = 70
#: Seconds a part may fail while the database answers before the watchdog ends the process.
EXIT_AFTER = 60.0
#: Seconds between two looks of the watchdog.
WATCH_EVERY = 1.0


@dataclass
class Liveness:
    parts: dict[str, PartHealth] = field(default_factory=dict)

    def add(self, name: str, health: PartHealth) -> None:
        self.parts[name] = health

    def view(self) -> dict[str, dict[str, Any]]:
        """Each part's state for /healthz: ok, or failing with for how long and the last error."""
        out: dict[str, dict[str, Any]] = {}
        for name, health in sorted(self.parts.items()):
            if health.failing_since is None:
                out[name] = {"state": "ok", "recoveries": health.recoveries}
            else:
                out[name] = {
                    "state": "failing",
                    "failingForSeconds": round(health.failing_for(), 3),
                    "lastError": health.last_error,
                    "recoveries": health.recoveries,
                }
        return out

    def ok(self) -> bool:
        return all(h.failing_since is None for h in self.parts.values())

    def worst(self) -> tuple[str, float] | None:
        """The part failing the longest and for how many seconds (None: every part works)."""
        failing = [(name, h.failing_for()) for name, h in self.parts.items() if h.failing_since is not None]
        return max(failing, key=lambda item: item[1]) if failing else None


async def watch(
    liveness: Liveness,
    database_answers: Callable[[], Awaitable[bool]],
    stop: asyncio.Event,
    *,
    exit_after: float = EXIT_AFTER,
    every: float = WATCH_EVERY,
) -> str | None:
    """Until `stop` is set: look at the parts every `every` seconds; return the reason to end the process
    once a part has failed for more than `exit_after` seconds while `database_answers()` (None when
    stopped first)."""
    told_down = False
    while not stop.is_set():
        with contextlib.suppress(TimeoutError):
            await asyncio.wait_for(stop.wait(), timeout=every)
        if stop.is_set():
            return None
        worst = liveness.worst()
        if worst is None or worst[1] <= exit_after:
            told_down = False
            continue
        name, seconds = worst
        if not await database_answers():
            if not told_down:
                log.warning("%s has failed for %.0f s: the database is out of reach; waiting for it", name, seconds)
                told_down = True
            continue
        reason = f"{name} has failed for {seconds:.0f} s while the database answers: {liveness.parts[name].last_error}"
        log.critical("%s; ending the process so that its supervisor restarts it", reason)
        return reason
    return None


async def answers_within(probe: Callable[[], Awaitable[object]], seconds: float) -> bool:
    """Does `probe()` succeed within `seconds`?"""
    started = time.monotonic()
    try:
        await asyncio.wait_for(probe(), timeout=seconds)
    except Exception as exc:
        log.debug("database probe failed after %.2f s: %s", time.monotonic() - started, exc)
        return False
    return True
