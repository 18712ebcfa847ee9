"""The checkout sweep (a job, every SWEEP_INTERVAL seconds and once at start-up): expire unpaid
sessions past their time, and settle sessions stuck complete_in_progress against the chain: no job
there -> back to incomplete (safe: a later fund of the same job id reverts); a job there -> the
order follower creates the order from its final JobFunded.

A session is settled at once when the process that was completing it is gone (core.instance: a
crash; so the start-up run settles what the previous run of this service left), otherwise once it
has been in progress for STUCK_AFTER seconds (an unanswered node, a process on another host)."""

from __future__ import annotations

from collections.abc import Callable

from core import instance
from core.checkout.context import Checkout
from core.operator import ChainUnavailable, ContractReverted
from core.store import Conn
from core.store import checkout as store

SWEEP_INTERVAL = 30.0
#: A session left complete_in_progress this long is checked against the chain.
STUCK_AFTER = 600.0


async def sweep(ctx: Checkout) -> tuple[int, int]:
    """One sweep; returns (expired, recovered)."""
    now = ctx.clock()
    expired = await ctx.writer.run(lambda conn: store.expire_due(conn, now))
    recovered = 0
    for s, owner in await ctx.reads.run(store.completions_in_progress):
        if s.job_id is None or s.job_id in ctx.funding:  # this process is still sending its funding
            continue
        if not instance.is_gone(owner) and s.updated_at >= now - STUCK_AFTER:
            continue  # its process may still be sending the funding
        try:
            job = await ctx.operator.call("PaymentGateway", "getJob", bytes.fromhex(s.job_id[2:]))
        except (ChainUnavailable, ContractReverted):
            continue
        if int(job[2]) == 0 and s.job_id not in ctx.funding:  # Status.None: never funded (and no send began meanwhile)
            recovered += int(await ctx.writer.run(_aborter(s.id, now)))
    return expired, recovered


def _aborter(session_id: str, now: float) -> Callable[[Conn], bool]:
    def abort(conn: Conn) -> bool:
        return store.abort_complete(conn, session_id, now)

    return abort
