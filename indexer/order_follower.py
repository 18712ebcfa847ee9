"""Orders follow the payment gateway's FINAL events (an indexer finality hook).

The API never marks money as moved on its own: an order becomes `released` only when the indexer
has seen the gateway's JobReleased (or the arbiter's DisputeResolved) in a final block. The same
reader heals a crash of the checkout's complete call between the funding transaction and its
database commit: a final JobFunded for a session that has no order yet creates the order, once,
from the event's own values (the chain is the truth, whatever the session says by then).

It reads the `events` rows the indexer stored (block <= final, after its cursor), in chain order,
inside the indexer's transaction, so the cursor and the order writes commit together. Anyone can
call the gateway with values of their choosing: each event is applied in its own savepoint, and an
event that cannot be applied is logged and skipped, never allowed to stop the indexer.
"""

from __future__ import annotations

import logging
from collections.abc import Callable
from typing import Any

import apsw

from core.orders import InvalidTransition
from core.store import checkout as checkout_store
from core.store import orders
from indexer.decode import Decoder

log = logging.getLogger("agentledger.orders")

CURSOR = "orders"
INT64_MAX = 2**63 - 1
_HANDLED = frozenset({"JobFunded", "JobReleased", "DisputeOpened", "DisputeResolved", "JobReclaimed"})


class OrderFollower:
    def __init__(self, addresses: dict[str, str], clock: Callable[[], float]) -> None:
        self.gateway = addresses["PaymentGateway"]
        self.decoder = Decoder({"PaymentGateway": self.gateway})
        self.clock = clock
        self.skipped = 0  # events that could not be applied (logged), for tests and health

    def __call__(self, conn: apsw.Connection, chain_id: int, final: int) -> None:
        done = orders.event_cursor(conn, CURSOR, chain_id)  # every event up to this block is applied
        if done >= final:
            return
        for row in orders.gateway_events(conn, chain_id, done + 1, final):
            number, block_hash, tx_hash, log_index, topics, data = row
            log_obj = {
                "address": self.gateway,
                "topics": topics.split(","),
                "data": data,
                "blockNumber": hex(number),
                "blockHash": block_hash,
                "transactionHash": tx_hash,
                "logIndex": hex(log_index),
            }
            conn.execute("SAVEPOINT order_event")
            try:
                event = self.decoder.decode(log_obj)
                if event is not None and event.name in _HANDLED:
                    self._apply(conn, event.name, event.args, tx_hash)
            except Exception:
                conn.execute("ROLLBACK TO order_event")
                self.skipped += 1
                log.exception("gateway event %s:%d not applied to orders; skipped", tx_hash, log_index)
            conn.execute("RELEASE order_event")
        orders.set_event_cursor(conn, CURSOR, chain_id, final)

    def _apply(self, conn: apsw.Connection, name: str, a: dict[str, Any], tx_hash: str) -> None:
        now = self.clock()
        job_id = str(a["jobId"]).lower()
        if name == "JobFunded":
            self._funded(conn, job_id, a, tx_hash, now)
            return
        order = orders.order_by_job(conn, job_id)
        if order is None:
            return  # a gateway job funded outside checkout (e.g. directly on-chain): not an order of ours

        def move(to_state: str, reason: str, **kw: Any) -> None:
            try:
                orders.transition(
                    conn, order.id, to_state, actor="chain", now=now, reason=reason, tx_hash=tx_hash, **kw
                )
            except InvalidTransition as exc:
                # The chain is the truth: say what could not be applied, keep following.
                log.error("order %s: chain event %s not applied: %s", order.id, name, exc)

        if name == "JobReleased":
            attested = int(a["attestedAt"])
            if order.status != "completed":
                move(
                    "completed",
                    "attestation released on-chain",
                    extra={"cid": a["cid"], "attested_at": str(attested)},
                    updates={
                        "attested_at": attested if attested <= INT64_MAX else None,
                        "release_submitted_tx": tx_hash,
                    },
                )
            move("released", "release confirmed on-chain", extra={"cid": a["cid"]}, updates={"release_tx": tx_hash})
        elif name == "DisputeOpened":
            move("disputed", "buyer opened a dispute on-chain")
        elif name == "DisputeResolved":
            amounts = {"provider_amount": str(a["providerAmount"]), "buyer_amount": str(a["buyerAmount"])}
            if int(a["providerAmount"]) == 0:
                move("failed", "dispute resolved: refunded to the buyer in full", extra=amounts)
            else:
                move("released", "dispute resolved by the arbiter", extra=amounts, updates={"release_tx": tx_hash})
        elif name == "JobReclaimed":
            move("failed", "buyer reclaimed the escrow after the deadline")

    def _funded(self, conn: apsw.Connection, job_id: str, a: dict[str, Any], tx_hash: str, now: float) -> None:
        session = checkout_store.session_by_job(conn, job_id)
        if session is None or session.order_id:
            return  # not a checkout job, or its order exists (the API recorded it)
        provider = checkout_store.provider_by_token(conn, int(a["providerTokenId"]))
        if provider is None:
            log.error("job %s funded for token %s, which is no linked provider: no order", job_id, a["providerTokenId"])
            return
        if session.status != "complete_in_progress":
            log.warning(
                "job %s was funded after its session became %s: the order follows the chain", job_id, session.status
            )
        order = orders.create_order(
            conn,
            session_id=session.id,
            job_id=job_id,
            provider_uuid=provider.agent_uuid,
            provider_token_id=int(a["providerTokenId"]),
            buyer_address=str(a["buyer"]),
            amount=int(a["amount"]),
            deadline=int(a["deadline"]),
            funding_tx=tx_hash,
            now=now,
        )
        log.warning("order %s created from the chain (session %s's complete did not finish)", order.id, session.id)
