"""The hire's background work: settling escrow jobs until their release or refund is mined, the
start-up recovery of jobs a crash cut off, and the providers' health probes.

Recovery (at start-up, before the API serves): only jobs whose owner (the process that started
running them, core.instance) is gone. Other processes serving the same database may be running
theirs right now; a job of an owner this process cannot judge (another host) is presumed
abandoned once untouched for ABANDONED_AFTER_SECONDS, and a job from before owners were recorded
(owner NULL) is abandoned. Of an abandoned job:
- a standard hire still `reserved` was cut off between its reservation and its settlement: the
  reservation is given back and its Idempotency-Key gets the stored answer 503 `hire_interrupted`
  (a retry with the key replays it: the job never runs twice for one key, nothing is charged);
- an escrow job still `running` never got its output committed: it is refunded;
- an escrow job `releasing` or `refunding` is left to `settle_due`, which reads the chain first, so
  a release the crashed process had already sent is recorded, never sent again.
"""

from __future__ import annotations

import asyncio
import logging

from core import instance
from core.hire import escrow, moves, reputation, rules, runners, standard
from core.hire.context import Hire
from core.hire.runners import Outcome
from core.store import Conn
from core.store import checkout as checkout_store
from core.store import hire as store
from core.store import idempotency as idem_store

log = logging.getLogger("agentledger.hire")

SETTLE_INTERVAL = 15.0
PROBE_INTERVAL = 30.0
#: Scores decay with time alone: every service's is recomputed this often.
SCORE_INTERVAL = 3600.0
#: A service is probed when no run or probe has checked it for this long.
PROBE_EVERY = 600.0
PROBES_PER_STEP = 64
PROBE_CONCURRENCY = 8
#: A job of an owner on another host (never judged gone here) is presumed abandoned after this long
#: without a move: far past any run (rules.MAX_SLA_SECONDS) and any own settlement attempt.
ABANDONED_AFTER_SECONDS = 3600.0


def abandoned(job: store.JobRow, now: float) -> bool:
    """Whether `job`'s owner no longer runs it (see the module docstring)."""
    if job.owner is None:
        return True
    return instance.is_gone(job.owner) or (
        not instance.on_this_host(job.owner) and job.updated_at < now - ABANDONED_AFTER_SECONDS
    )


async def recover(ctx: Hire) -> int:
    """Settle what a crash left (see the module docstring); returns how many jobs it touched."""
    now = ctx.clock()

    def work(conn: Conn) -> int:
        touched = 0
        for job in store.jobs_in_status(conn, rules.STANDARD, ("reserved",)):
            if not abandoned(job, now):
                continue
            provider = checkout_store.get_provider(conn, job.provider_uuid)
            wallet = provider.wallet if provider is not None else job.provider_uuid
            outcome = Outcome(False, 0, None, "hire_interrupted", "the service restarted while the job ran")
            status, body = standard.fail(conn, job, wallet, outcome, now)
            if job.idem_scope is not None and job.idem_key is not None and job.idem_attempt is not None:
                idem_store.finish(conn, job.idem_scope, job.idem_key, job.idem_attempt, status, body)
            touched += 1
        for job in store.jobs_in_status(conn, rules.ESCROW, ("running",)):
            if not abandoned(job, now):
                continue
            store.update_job(
                conn,
                job.id,
                ("running",),
                status="refunding",
                outcome="interrupted",
                error_code="hire_interrupted",
                error_message="the service restarted while the job ran",
                next_settle_at=now,
                updated_at=now,
            )
            moves.record(conn, job, "running", "refunding", now, {"error_code": "hire_interrupted"})
            touched += 1
        for job in store.jobs_in_status(conn, rules.ESCROW, ("releasing", "refunding")):
            if not abandoned(job, now):  # its owner's own attempt is under way: due when it ends
                continue
            # the crashed process's own attempt is gone: due at once (settle_due reads the chain first)
            store.update_job(conn, job.id, ("releasing", "refunding"), next_settle_at=now)
            touched += 1
        return touched

    touched = await ctx.writer.run(work)
    if touched:
        log.warning("hire recovery: %d job(s) cut off by a restart were settled or queued for settlement", touched)
        ctx.services.wake()
    return touched


async def settle_due(ctx: Hire) -> int:
    """Release or refund every escrow job whose settlement is due (the `hire-settle` job)."""
    now = ctx.clock()
    due = await ctx.reads.run(
        lambda conn: store.jobs_in_status(conn, rules.ESCROW, ("releasing", "refunding"), due_before=now, limit=200)
    )
    done = 0
    for job in due:
        if job.id in ctx.busy:  # its own request is settling it
            continue
        ctx.busy.add(job.id)
        try:
            await escrow.settle(ctx, job.id)
            done += 1
        finally:
            ctx.busy.discard(job.id)
    return done


async def probe_due(ctx: Hire) -> int:
    """Probe services no run or probe has checked for PROBE_EVERY seconds (the `hire-health` job)."""
    now = ctx.clock()
    due = await ctx.reads.run(lambda conn: store.services_due_for_probe(conn, now - PROBE_EVERY, PROBES_PER_STEP))
    gate = asyncio.Semaphore(PROBE_CONCURRENCY)

    async def one(service: store.ServiceRow) -> tuple[store.ServiceRow, str | None]:
        async with gate:
            return service, await runners.probe(ctx, service)

    results = await asyncio.gather(*(one(s) for s in due))
    if results:
        at = ctx.clock()

        def work(conn: Conn) -> None:
            for service, error in results:
                store.record_health(conn, service.provider_uuid, service.service_type, error is None, error, at)

        await ctx.writer.run(work)
    return len(results)


async def refresh_scores(ctx: Hire) -> int:
    """Recompute every sampled service's score (recency decay moves it with time alone)."""
    keys = await ctx.reads.run(store.service_keys)
    now = ctx.clock()
    for start in range(0, len(keys), 500):  # bounded transactions: writers queued behind stay short
        chunk = keys[start : start + 500]

        def part(conn: Conn, chunk: list[tuple[str, str]] = chunk) -> None:
            for provider_uuid, service_type in chunk:
                reputation.refresh(conn, provider_uuid, service_type, now)

        await ctx.writer.run(part)
    return len(keys)
