"""Orders follow the payment gateway's FINAL events (an indexer finality hook).

The API never marks money as moved on its own: an order becomes `released` only when the indexer
has seen the gateway's JobReleased (or the arbiter's DisputeResolved) in a final block. The same
reader heals a crash of the checkout's complete call between the funding transaction and its
database commit: a final JobFunded for a session that has no order yet creates the order, once.

It reads the `events` rows the indexer stored (block <= final, after its cursor), in chain order,
inside the indexer's transaction, so the cursor and the order writes commit together.
"""

from __future__ import annotations

import logging
from collections.abc import Callable
from typing import Any

import apsw

from core.orders import InvalidTransition
from core.store import orders
from indexer.decode import Decoder

log = logging.getLogger("agentledger.orders")

CURSOR = "orders"
_HANDLED = frozenset({"JobFunded", "JobReleased", "DisputeOpened", "DisputeResolved", "JobReclaimed"})


class OrderFollower:
    def __init__(self, addresses: dict[str, str], clock: Callable[[], float]) -> None:
        self.gateway = addresses["PaymentGateway"]
        self.decoder = Decoder({"PaymentGateway": self.gateway})
        self.clock = clock

    def __call__(self, conn: apsw.Connection, chain_id: int, final: int) -> None:
        done = orders.event_cursor(conn, CURSOR, chain_id)  # every event up to this block is applied
        if done >= final:
            return
        for row in orders.gateway_events(conn, chain_id, done + 1, final):
            number, block_hash, tx_hash, log_index, topics, data = row
            event = self.decoder.decode(
                {
                    "address": self.gateway,
                    "topics": topics.split(","),
                    "data": data,
                    "blockNumber": hex(number),
                    "blockHash": block_hash,
                    "transactionHash": tx_hash,
                    "logIndex": hex(log_index),
                }
            )
            if event is not None:
                self._apply(conn, event.name, event.args, tx_hash)
        orders.set_event_cursor(conn, CURSOR, chain_id, final)

    def _apply(self, conn: apsw.Connection, name: str, a: dict[str, Any], tx_hash: str) -> None:
        if name not in _HANDLED:
            return
        now = self.clock()
        job_id = str(a["jobId"]).lower()
        if name == "JobFunded":
            pending = orders.session_in_progress_for_job(conn, job_id)
            if pending is not None:
                session_id, provider_uuid = pending
                created = orders.create_order(
                    conn,
                    session_id=session_id,
                    job_id=job_id,
                    provider_uuid=provider_uuid,
                    provider_token_id=int(a["providerTokenId"]),
                    buyer_address=str(a["buyer"]),
                    amount=int(a["amount"]),
                    deadline=int(a["deadline"]),
                    funding_tx=tx_hash,
                    now=now,
                )
                log.warning(
                    "order %s created from the chain (session %s's complete did not finish)", created.id, session_id
                )
            return
        order = orders.order_by_job(conn, job_id)
        if order is None:
            return  # a gateway job funded outside checkout (e.g. directly on-chain): not an order of ours
        moves: dict[str, tuple[str, str, dict[str, Any]]] = {
            "JobReleased": ("released", "release confirmed on-chain", {"cid": a.get("cid")}),
            "DisputeOpened": ("disputed", "buyer opened a dispute on-chain", {}),
            "DisputeResolved": (
                "released",
                "dispute resolved by the arbiter",
                {"provider_amount": str(a.get("providerAmount")), "buyer_amount": str(a.get("buyerAmount"))},
            ),
            "JobReclaimed": ("failed", "buyer reclaimed the escrow after the deadline", {}),
        }
        if name not in moves:
            return
        to_state, reason, extra = moves[name]
        if name == "JobReleased" and order.status == "in_progress":
            # Our release went out but the process died before recording the attestation.
            orders.transition(
                conn,
                order.id,
                "completed",
                actor="chain",
                now=now,
                reason="attested (recorded from the chain)",
                tx_hash=tx_hash,
                extra={"cid": a.get("cid"), "attested_at": a.get("attestedAt")},
                updates={"attested_at": a.get("attestedAt"), "release_submitted_tx": tx_hash},
            )
        updates = {"release_tx": tx_hash} if to_state == "released" else None
        try:
            orders.transition(
                conn,
                order.id,
                to_state,
                actor="chain",
                now=now,
                reason=reason,
                tx_hash=tx_hash,
                extra={k: v for k, v in extra.items() if v is not None},
                updates=updates,
            )
        except InvalidTransition as exc:
            # The chain is the source of truth: record what we could not apply, never stop following.
            log.error("order %s: chain event %s not applied: %s", order.id, name, exc)
