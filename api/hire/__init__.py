"""Agent-to-agent hire under /api/a2a, the HTTP side of core.hire: its models, its runs (routes) and
its rows (operations). `install` makes the hire context and its jobs; at start-up, before serving,
the recovery settles what a crash left, then escrow settlements due are sent."""

from __future__ import annotations

import asyncio
import logging
from typing import Any

from api.feature import Feature, Parts
from api.hire.operations import OPERATIONS
from core.hire import Hire, settle
from core.hire.follower import follower
from core.jobs import Every, Job
from core.services import Services

__all__ = ["FEATURE", "OPERATIONS", "install"]

log = logging.getLogger("agentledger.hire")


def install(services: Services) -> Parts:
    hire = services.provide(Hire(services))
    started: list[asyncio.Task[Any]] = []

    async def start() -> None:
        await settle.recover(hire)
        if hire.has_escrow():
            started.append(asyncio.create_task(_settle_quietly(hire)))

    async def stop() -> None:
        for task in started:
            task.cancel()
        await asyncio.gather(*started, return_exceptions=True)
        await hire.close()

    jobs = [
        Job("hire-health", Every(settle.PROBE_INTERVAL), lambda: settle.probe_due(hire)),
        Job("hire-reputation", Every(settle.SCORE_INTERVAL), lambda: settle.refresh_scores(hire)),
    ]
    if "AgentEscrow" in services.deployment.contracts:
        jobs.append(Job("hire-settle", Every(settle.SETTLE_INTERVAL), lambda: settle.settle_due(hire)))
    return Parts(jobs=tuple(jobs), starting=(start,), stopping=(stop,))


async def _settle_quietly(hire: Hire) -> None:
    try:
        await settle.settle_due(hire)
    except Exception as exc:  # the hire-settle job tries again
        log.warning("start-up settlement failed: %s", exc)


FEATURE = Feature("hire", tuple(OPERATIONS), install=install, follower=follower, toolset="hire")
