"""Orders follow the payment gateway's FINAL events (a follower, installed in the indexer).

The API never marks money as moved on its own: an order becomes `released` only when the indexer
has seen the gateway's JobReleased (or the arbiter's DisputeResolved) in a final block. The same
follower heals a crash of the checkout's complete call between the funding transaction and its
database commit: a final JobFunded for a session that has no order yet creates the order, once,
from the event's own values (the chain is the truth, whatever the session says by then).

The reconciliation rule. The API records `created` (the funding) and `completed`
(our release) from transaction receipts, which are not final while confirmations > 0: a reorg can
drop those transactions. Such an order remembers the receipt's block and stays unsettled until
this follower sees the event final (JobFunded, JobReleased). At each indexer step that leaves it
caught up with the head, for every unsettled order whose receipt's block is now final
(`finalized`, in the step's transaction, after the final events; two indexed queries):

- funding: if the chain as indexed (up to the tip) holds no gateway job for it, the funding
  transaction is gone and nothing was paid: the order moves to `failed` (actor chain, reason
  orders.FUNDING_GONE). If the job is there (the transaction was mined again, later), it waits for
  the final JobFunded. Should that JobFunded come final after the order was failed by this rule,
  the order moves back to `created` (orders.FUNDING_BACK).
- release: if the gateway job is still funded or disputed as indexed, our release is gone: the
  order moves back `completed -> in_progress` (orders.RELEASE_GONE) with its attestation cleared,
  so the provider attests again. If the job is released, it waits for the final JobReleased; a
  release mined again later is followed from in_progress as any release.

Each move is a checked transition: history row, audit entry, webhooks, in the indexer's
transaction. So the orders agree with a fresh re-index of the chain: an order is failed when its
job does not exist, released when its job is, and open while its job is funded.
"""

from __future__ import annotations

import logging
from collections.abc import Callable
from typing import Any

from core.checkout import orders
from core.checkout.orders import InvalidTransition
from core.services import Services
from core.store import Conn, projections
from core.store import checkout as checkout_store
from core.store import orders as order_store
from core.store.events import Event

log = logging.getLogger("agentledger.orders")

INT64_MAX = 2**63 - 1


class OrderFollower:
    name = "orders"
    contracts = frozenset({"PaymentGateway"})

    def __init__(self, clock: Callable[[], float]) -> None:
        self.clock = clock

    def apply(self, conn: Conn, chain_id: int, event: Event) -> None:
        name, a, tx_hash = event.name, event.args, event.tx_hash
        now = self.clock()
        if name == "JobFunded":
            self._funded(conn, str(a["jobId"]).lower(), a, tx_hash, event.block_number, now)
            return
        if name not in ("JobReleased", "DisputeOpened", "DisputeResolved", "JobReclaimed"):
            return
        order = order_store.order_by_job(conn, str(a["jobId"]).lower())
        if order is None:
            return  # a gateway job funded outside checkout (e.g. directly on-chain): not an order of ours

        def move(to_state: str, reason: str, **kw: Any) -> None:
            if order.status == to_state:
                return  # seen before (a re-index replays every final event)
            try:
                orders.transition(
                    conn, order.id, to_state, actor="chain", now=now, reason=reason, tx_hash=tx_hash, **kw
                )
            except InvalidTransition as exc:
                # The chain is the truth: say what could not be applied, keep following.
                log.error("order %s: chain event %s not applied: %s", order.id, name, exc)

        if name == "JobReleased":
            order_store.release_settled(conn, order.id)
            if order.status == "released":
                return  # seen before (a re-index replays every final event)
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

    def _funded(self, conn: Conn, job_id: str, a: dict[str, Any], tx_hash: str, block: int, now: float) -> None:
        # Locked: the API may be recording this order from its receipt right now (on PostgreSQL its
        # transaction runs beside ours). We then wait for it and settle its order, instead of creating a
        # second one that its commit would refuse (and the event would be skipped, the funding never settled).
        session = checkout_store.session_by_job(conn, job_id)
        if session is None:
            return  # not a checkout job
        if session.order_id:  # the API recorded the order from the receipt: now it is final
            self._funding_final(conn, session.order_id, tx_hash, block, now)
            return
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
            funding_block=block,
        )
        log.warning("order %s created from the chain (session %s's complete did not finish)", order.id, session.id)

    def _funding_final(self, conn: Conn, order_id: str, tx_hash: str, block: int, now: float) -> None:
        order_store.funding_settled(conn, order_id, block)
        order = order_store.get_order(conn, order_id)
        last = order_store.last_move(conn, order_id)
        if order is not None and order.status == "failed" and last is not None and last.reason == orders.FUNDING_GONE:
            orders.transition(
                conn,
                order_id,
                "created",
                actor="chain",
                now=now,
                reason=orders.FUNDING_BACK,
                tx_hash=tx_hash,
                updates={"funding_tx": tx_hash},
            )
            log.warning("order %s: its funding is final on-chain after all (%s): created again", order_id, tx_hash)

    # ---- the reconciliation rule -----------------------------------------------------------------

    def finalized(self, conn: Conn, chain_id: int, final: int) -> None:
        """Blocks up to `final` are final and their events applied: settle the orders recorded from
        receipts of those blocks whose events never came (the rule in the module docstring). Only once
        the indexer has applied every block up to the head it saw: while it backfills, a transaction
        mined again beyond its tip is not known yet, and "not in the chain" could not be told."""
        tip = projections.get_tip(conn, chain_id)
        if tip is None or tip[0] < tip[2]:
            return  # behind the head: decided at a later step, once caught up
        now = self.clock()
        for order_id, job_status in order_store.unsettled_fundings(conn, final):
            if job_status is not None:
                continue  # in the chain, mined again later than its receipt said: wait for it to be final
            order_store.funding_settled(conn, order_id)
            order_store.release_settled(conn, order_id)
            self._move(conn, order_id, "failed", orders.FUNDING_GONE, now)
        for order_id, job_status in order_store.unsettled_releases(conn, final):
            if job_status in ("released", "resolved"):
                continue  # mined again later: its final JobReleased settles it
            order_store.release_settled(conn, order_id)
            if job_status is None:
                continue  # no job at all: the funding rule above has it
            order = order_store.get_order(conn, order_id)
            if order is not None and order.status == "completed":
                self._move(
                    conn,
                    order_id,
                    "in_progress",
                    orders.RELEASE_GONE,
                    now,
                    updates={"attestation": None, "attested_at": None, "release_submitted_tx": None},
                )

    def _move(self, conn: Conn, order_id: str, to_state: str, reason: str, now: float, **kw: Any) -> None:
        order = order_store.get_order(conn, order_id)
        if order is None or order.status in (to_state, "released"):
            return
        try:
            orders.transition(conn, order_id, to_state, actor="chain", now=now, reason=reason, **kw)
        except InvalidTransition as exc:
            log.error("order %s: %s not applied: %s", order_id, reason, exc)
            return
        log.warning("order %s: %s -> %s: %s", order_id, order.status, to_state, reason)


def follower(services: Services) -> OrderFollower:
    return OrderFollower(services.clock)
