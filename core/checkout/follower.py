"""Orders follow the payment gateway's FINAL events (a follower, installed in the indexer).

The API never marks money as moved on its own: an order becomes `released` only when the indexer
has seen the gateway's JobReleased (or the arbiter's DisputeResolved) in a final block. The same
follower heals a crash of the checkout's complete call between the funding transaction and its
database commit: a final JobFunded for a session that has no order yet creates the order, once,
from the event's own values (the chain is the truth, whatever the session says by then).
"""

from __future__ import annotations

import logging
from collections.abc import Callable
from typing import Any

import apsw

from core.checkout import orders
from core.checkout.orders import InvalidTransition
from core.store import checkout as checkout_store
from core.store import orders as order_store
from core.store.projections import Event

log = logging.getLogger("agentledger.orders")

INT64_MAX = 2**63 - 1


class OrderFollower:
    name = "orders"
    contracts = frozenset({"PaymentGateway"})

    def __init__(self, clock: Callable[[], float]) -> None:
        self.clock = clock

    def apply(self, conn: apsw.Connection, chain_id: int, event: Event) -> None:
        name, a, tx_hash = event.name, event.args, event.tx_hash
        now = self.clock()
        if name == "JobFunded":
            self._funded(conn, str(a["jobId"]).lower(), a, tx_hash, now)
            return
        if name not in ("JobReleased", "DisputeOpened", "DisputeResolved", "JobReclaimed"):
            return
        order = order_store.order_by_job(conn, str(a["jobId"]).lower())
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
