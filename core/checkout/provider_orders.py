"""The provider side of an order: acknowledge, start, fail, recover, upload the deliverable, complete.

No Bearer key: each call carries an EIP-191 (personal_sign) signature of the provider's registered
self wallet over a documented message with a unix timestamp (core.checkout.orders:
`{action}:{order_id}:{ts}`, `deliver:{order_id}:{sha256}:{ts}`, `complete:{jobId}:{cid}:{ts}`). A
timestamp outside core.signatures' window is refused, and a signed message is accepted once
(core.signatures' once-only guard): no replay.

Completion sends the gateway release (the same attestation the contract checks) and records
`completed` once the transaction is mined; `released` follows only from the final on-chain event
(core.checkout.follower). If the process dies between the mined release and our commit, the
follower records both moves from the chain.
"""

from __future__ import annotations

import logging
from typing import Any

from core import errors, indexing, signatures
from core.checkout import orders
from core.checkout.context import Checkout
from core.checkout.orders import InvalidTransition
from core.errors import ServiceError
from core.operator import ChainUnavailable, ContractReverted, SendUncertain, TransactionFailed, tx_hash_of
from core.store import Conn
from core.store import ipfs as ipfs_store
from core.store import orders as store
from core.store.orders import OrderRow

log = logging.getLogger("agentledger.checkout")

#: Deliverable uploads per order (each kept by CID, up to 32 MiB): bounds what one order can store.
MAX_DELIVERABLE_UPLOADS = 20


def order_or_404(conn: Conn, order_id: str) -> OrderRow:
    order = store.get_order(conn, order_id)
    if order is None:
        raise ServiceError(404, "order_not_found", "no such order", param="order_id")
    return order


def check_signature(conn: Conn, order: OrderRow, message: str, timestamp: int, signature: str, now: float) -> str:
    """A digest of the message if `signature` is the provider's fresh signature of it (401
    otherwise): the replay guard's key, one use per message."""
    signatures.require_fresh(timestamp, now)
    expected = store.signer_for(conn, order)
    if expected is None:
        raise ServiceError(
            409,
            "provider_not_linked",
            "the order's provider has no self wallet (none registered, or reset after the agent changed hands "
            "until its new owner sets one)",
        )
    if signatures.recovered(message, signature).lower() != expected.lower():
        raise ServiceError(
            401, "invalid_signature", "the signature is not the provider's self wallet's", param="signature"
        )
    return signatures.digest(message)


def check_reason(reason: str) -> str:
    """A provider's failure reason, printable (422 invalid_reason otherwise): it is published. Its
    length is the request schema's (400); printability is a rule the schema cannot state."""
    problem = orders.reason_problem(reason)
    if problem is not None:
        raise ServiceError(422, "invalid_reason", problem, param="reason")
    return reason


def check_upload(
    conn: Conn, order_id: str, sha256_hex: str, timestamp: int, signature: str, now: float
) -> tuple[OrderRow, str]:
    """Before a deliverable's body is read (it may be 32 MiB, sent slowly): the order is in_progress
    and (timestamp, signature) is its provider's fresh, unused signature of the upload message over
    the DECLARED SHA-256 of the bytes. Returns the order and the replay guard's digest; the bytes
    are checked against the declared hash once read."""
    order = order_or_404(conn, order_id)
    if order.status != "in_progress":
        raise ServiceError(
            409, "invalid_transition", f"deliverables are uploaded while in_progress, not {order.status}"
        )
    message = orders.deliverable_message(order.id, sha256_hex, timestamp)
    digest = check_signature(conn, order, message, timestamp, signature, now)
    signatures.refuse_used(conn, digest, now)
    return order, digest


def invalid(exc: InvalidTransition) -> ServiceError:
    return ServiceError(409, "invalid_transition", str(exc), param="status")


def move(conn: Conn, order_id: str, digest: str, to_state: str, now: float, **kw: Any) -> dict[str, Any]:
    """A signed provider move (acknowledge, start, fail, recover) in the writer's transaction."""
    signatures.use_once(conn, digest, now)
    before = store.get_order(conn, order_id)
    assert before is not None
    try:
        moved = orders.transition(conn, order_id, to_state, actor="provider", now=now, **kw)
    except InvalidTransition as exc:
        raise invalid(exc) from exc
    last = store.history(conn, order_id)[-1]
    return {"id": moved.id, "status": moved.status, "from_state": before.status, "audit_id": last.audit_id}


def check_recoverable(conn: Conn, order: OrderRow) -> None:
    """Recovery needs the escrow still funded on-chain (as indexed)."""
    if store.escrow_status(conn, order.job_id) not in (None, "funded"):
        raise ServiceError(409, "escrow_closed", "the order's escrow is no longer funded on-chain: nothing to recover")


def add_deliverable(conn: Conn, order_id: str, digest: str, cid: str, data: bytes, now: float) -> None:
    """Store an uploaded deliverable (by CID) as the order's latest, in the writer's transaction."""
    signatures.use_once(conn, digest, now)
    current = store.get_order(conn, order_id)
    if current is None or current.status != "in_progress":
        raise ServiceError(409, "invalid_transition", "the order is no longer in_progress")
    if not store.add_deliverable(conn, order_id, cid, now, MAX_DELIVERABLE_UPLOADS):
        raise ServiceError(
            409,
            "deliverable_quota",
            f"an order takes at most {MAX_DELIVERABLE_UPLOADS} deliverable uploads; complete it with one of them",
        )
    ipfs_store.put(conn, cid, data, now)


async def release(
    ctx: Checkout,
    order: OrderRow,
    cid: str,
    timestamp: int,
    signature: str,
    *,
    resend: bool,
    claimed: str | None = None,
) -> dict[str, Any]:
    """Release the gateway job with the provider's attestation and record `completed`.
    `claimed`: the attestation's replay guard, given back when nothing was sent, so the same
    attestation can be retried."""
    receipt = await _send_release(ctx, order, cid, timestamp, signature, resend=resend, claimed=claimed)
    tx = tx_hash_of(receipt)
    block = int(receipt["blockNumber"])
    now = ctx.clock()
    try:
        status = await ctx.writer.run(
            lambda conn: _record_release(conn, order.id, cid, timestamp, signature, tx, block, now)
        )
    except Exception as exc:  # the chain moved; the follower records it from the final event
        raise ServiceError(
            503,
            "internal_step_failed",
            "the release is on-chain but recording it failed; it will be reconciled",
            type_="service_error",
        ) from exc
    return {"txHash": tx, "jobId": order.job_id, "status": status}


async def _give_back(ctx: Checkout, claimed: str | None) -> None:
    if claimed is not None:
        await ctx.writer.run(lambda conn: signatures.give_back(conn, claimed))


async def _send_release(
    ctx: Checkout, order: OrderRow, cid: str, timestamp: int, signature: str, *, resend: bool, claimed: str | None
) -> dict[str, Any]:
    """PaymentGateway.release with the attestation: its receipt. Refused while the indexer is halted
    (503; `released` needs it) and as the gateway refuses; `claimed` given back when nothing was sent."""
    try:
        chain_id = ctx.chain_id  # `released` needs the indexer: 503 while halted
        await ctx.reads.run(lambda conn: indexing.require_running(conn, chain_id))
    except ServiceError:
        await _give_back(ctx, claimed)
        raise
    try:
        receipt = await ctx.operator.transact(
            "PaymentGateway", "release", bytes.fromhex(order.job_id[2:]), cid, timestamp, bytes.fromhex(signature[2:])
        )
    except (ContractReverted, ChainUnavailable) as exc:  # nothing was sent
        await _give_back(ctx, claimed)
        if isinstance(exc, ChainUnavailable):
            log.warning("chain node unavailable: %s", exc)
            raise errors.chain_unavailable() from exc
        if exc.error_name == "WrongStatus" and resend:
            raise ServiceError(409, "already_released", "the gateway job is no longer funded") from exc
        raise ServiceError(
            409 if exc.error_name in ("DeadlinePassed", "WrongStatus", "AgentPaused") else 422,
            "release_refused",
            f"the payment gateway refuses the release: {exc.error_name}",
        ) from exc
    except (SendUncertain, TransactionFailed) as exc:  # the text can carry the RPC URL: log only
        log.warning("release of order %s not confirmed: %s", order.id, exc)
        sent = f" (transaction {exc.tx_hash})" if exc.tx_hash else ""
        raise ServiceError(
            503,
            "chain_unavailable",
            f"the release{sent} could not be confirmed: it may still be mined, and the order follows the"
            " chain; check the order before attesting again",
            type_="service_error",
        ) from exc
    return receipt


def _record_release(
    conn: Conn, order_id: str, cid: str, timestamp: int, signature: str, tx: str, block: int, now: float
) -> str:
    """The order `completed` by a mined release (or, on a resend or after the follower, the release
    transaction noted): the order's status after it."""
    current = store.get_order(conn, order_id)
    assert current is not None
    if current.status == "in_progress":
        orders.transition(
            conn,
            order_id,
            "completed",
            actor="provider",
            now=now,
            reason="attested",
            tx_hash=tx,
            extra={"cid": cid, "attested_at": timestamp},
            updates={"attested_at": timestamp, "attestation": signature.lower(), "release_submitted_tx": tx},
        )
        # recorded from a receipt not final yet: the order follower settles it (or takes the order
        # back to in_progress should the release not be in the chain once its block is final)
        store.release_unsettled(conn, order_id, block)
    else:  # a resend, or the follower got there first
        store.update_order(conn, order_id, now, release_submitted_tx=tx)
        if current.status == "completed":
            store.release_unsettled(conn, order_id, block)
    after = store.get_order(conn, order_id)
    assert after is not None
    return after.status
