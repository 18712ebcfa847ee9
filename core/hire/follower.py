"""Escrow hire jobs follow AgentEscrow's FINAL events (a follower, installed in the indexer).

A job is settled for good when its JobReleased or JobRefunded is in a final block: the follower
records it (status, the event's transaction, `final`), writes its audit entry and webhooks, and
only then adds the job's reputation sample: a release of a job whose output the service committed
(success) or a refund of a job whose provider failed (failure). A release or refund the service
sent but did not get to record (a crash) is healed here from the event as well. Events of jobs the
service never ran are not ours and are left alone.
"""

from __future__ import annotations

import logging
from collections.abc import Callable

from core.hire import moves, reputation, rules
from core.services import Services
from core.store import Conn
from core.store import hire as store
from core.store.events import Event

log = logging.getLogger("agentledger.hire")


class EscrowFollower:
    name = "hire-escrow"
    contracts = frozenset({"AgentEscrow"})

    def __init__(self, clock: Callable[[], float]) -> None:
        self.clock = clock

    def apply(self, conn: Conn, chain_id: int, event: Event) -> None:
        if event.name not in ("JobReleased", "JobRefunded"):
            return
        # Locked: the API may be closing the same job in a transaction of its own (core.hire.escrow's
        # _closed); this one waits for it and then sees its move instead of recording a second one.
        job = store.get_job(conn, str(event.args["jobId"]).lower())
        if job is None or job.kind != rules.ESCROW or job.final:
            return
        now = self.clock()
        to_status = "released" if event.name == "JobReleased" else "refunded"
        columns = {
            "status": to_status,
            "settle_tx": event.tx_hash,
            "final": True,
            "settle_error": None,
            "updated_at": now,
        }
        extra: dict[str, object] = {"tx_hash": event.tx_hash, "final": True, "block_number": event.block_number}
        if to_status == "refunded" and job.outcome == "success":
            columns.update(error_code="release_expired", error_message="refunded on-chain before the release was mined")
            extra["error_code"] = "release_expired"
        if not store.update_job(conn, job.id, (job.status,), **columns):
            log.warning("hire job %s moved while %s was applied; left as it is", job.id, event.name)
            return  # nothing recorded twice (the lock above should make this unreachable)
        entry = moves.record(conn, job, job.status, to_status, now, extra)
        if (to_status == "released" and job.outcome == "success") or (
            to_status == "refunded" and job.outcome == "failure" and rules.provider_fault(job.error_code or "")
        ):
            reputation.add_sample(
                conn,
                job=job,
                success=to_status == "released",
                response_ms=job.response_ms or 0,
                audit_id=entry.id,
                now=now,
            )


def follower(services: Services) -> EscrowFollower:
    return EscrowFollower(services.clock)
