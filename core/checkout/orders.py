"""Orders: the state machine, the messages providers sign, and the one way an order changes state.

States and who may move an order between them. No endpoint writes a status: each call names an
action, the action is checked against this table, and the move is recorded (history, audit chain,
webhook) in one transaction.

    created      -> acknowledged (provider), in_progress (provider: acknowledge is optional),
                    failed (provider, operator, chain), disputed (chain)
    acknowledged -> in_progress (provider), failed (provider, operator, chain), disputed (chain)
    in_progress  -> completed (provider; chain after a crash), failed (provider, operator, chain), disputed (chain)
    completed    -> released (chain), failed (operator, chain), disputed (chain)
    failed       -> in_progress (provider, operator: recovery), failed -> disputed (chain)
    disputed     -> released (chain: resolved with a provider share), failed (chain: refunded in full)
    created, acknowledged, failed -> completed (chain: a release submitted by anyone, then released)
    completed    -> in_progress (chain: our release transaction is gone from the chain after a reorg)
    failed       -> created (chain: a funding found gone after a reorg is final on-chain after all)
    released     -> (final)

"chain" moves are made only by the order follower (core.checkout.follower) from final
PaymentGateway events: JobReleased and DisputeResolved -> released, DisputeOpened -> disputed,
JobReclaimed -> failed.

Every change of an order's status writes, in the caller's transaction: the order row, one
order_history row, one audit entry on the order's stream (core.audit order chain rule), one
`job.state_changed` webhook in the outbox when the session gave a webhook_url, and one to the
provider's registered webhook (`order.created` for a new order, with what it needs to start).
"""

from __future__ import annotations

import secrets
import unicodedata
from typing import Any

from core import audit, outbox
from core.isotime import iso_utc
from core.store import Conn
from core.store import orders as store
from core.store.orders import HistoryRow, OrderRow

WEBHOOK_EVENT = "job.state_changed"
#: Sent to the provider's registered webhook when one of its orders is created (then WEBHOOK_EVENT).
NEW_ORDER_EVENT = "order.created"

STATES = ("created", "acknowledged", "in_progress", "completed", "released", "failed", "disputed")
ACTORS = ("provider", "operator", "chain", "service")

_ANY_FAIL = {"provider", "operator", "chain"}

TRANSITIONS: dict[tuple[str, str], frozenset[str]] = {
    ("created", "acknowledged"): frozenset({"provider"}),
    # the spec makes acknowledge optional: a provider may start straight away
    ("created", "in_progress"): frozenset({"provider"}),
    ("created", "failed"): frozenset(_ANY_FAIL),
    ("created", "disputed"): frozenset({"chain"}),
    # chain: the gateway releases on the provider's attestation whoever submits it, so a release
    # may come straight from created, acknowledged or failed; the order follows the chain.
    ("created", "completed"): frozenset({"chain"}),
    ("acknowledged", "completed"): frozenset({"chain"}),
    ("failed", "completed"): frozenset({"chain"}),
    ("acknowledged", "in_progress"): frozenset({"provider"}),
    ("acknowledged", "failed"): frozenset(_ANY_FAIL),
    ("acknowledged", "disputed"): frozenset({"chain"}),
    # chain: the release was mined but our record of the attestation was lost (a crash): the follower
    # records both moves from the final JobReleased event.
    ("in_progress", "completed"): frozenset({"provider", "chain"}),
    ("in_progress", "failed"): frozenset(_ANY_FAIL),
    ("in_progress", "disputed"): frozenset({"chain"}),
    ("completed", "released"): frozenset({"chain"}),
    ("completed", "failed"): frozenset({"operator", "chain"}),
    ("completed", "disputed"): frozenset({"chain"}),
    ("failed", "in_progress"): frozenset({"provider", "operator"}),
    # chain, the reconciliation rule (core.checkout.follower): a release whose transaction the chain
    # dropped (a reorg) takes the order back to work; a funding found gone failed it, and one final
    # after all (the transaction mined again) brings it back.
    ("completed", "in_progress"): frozenset({"chain"}),
    ("failed", "created"): frozenset({"chain"}),
    ("failed", "disputed"): frozenset({"chain"}),
    ("disputed", "released"): frozenset({"chain"}),
    ("disputed", "failed"): frozenset({"chain"}),
}

#: Provider actions (no Bearer key: an EIP-191 signature of the provider's self wallet) -> target state.
PROVIDER_ACTIONS = {"acknowledge": "acknowledged", "start": "in_progress", "fail": "failed", "recover": "in_progress"}
#: Reasons of the reconciliation rule's moves (core.checkout.follower), also what it recognises.
FUNDING_GONE = "funding transaction no longer in the chain (reorganised away): nothing was paid"
FUNDING_BACK = "funding transaction final on-chain after all"
RELEASE_GONE = "release transaction no longer in the chain (reorganised away): attest again"

#: A provider's failure reason is public (order history, audit log, webhooks): at most this many
#: characters, no control, format, private-use or unassigned characters (nothing that hides text).
MAX_REASON_CHARS = 280


class InvalidTransition(ValueError):
    def __init__(self, from_state: str, to_state: str, actor: str) -> None:
        super().__init__(f"an order in state {from_state} cannot move to {to_state} (by {actor})")
        self.from_state = from_state
        self.to_state = to_state
        self.actor = actor


def check_transition(from_state: str, to_state: str, actor: str) -> None:
    """Raise InvalidTransition unless `actor` may move an order from `from_state` to `to_state`."""
    if actor not in TRANSITIONS.get((from_state, to_state), frozenset()):
        raise InvalidTransition(from_state, to_state, actor)


def reason_problem(reason: str) -> str | None:
    """Why `reason` cannot be a failure reason (None: it can)."""
    if not 1 <= len(reason) <= MAX_REASON_CHARS:
        return f"reason must be 1-{MAX_REASON_CHARS} characters"
    if any(unicodedata.category(ch).startswith("C") for ch in reason):
        return "reason must be printable text (no control, format, private-use or unassigned characters)"
    return None


def provider_message(action: str, order_id: str, timestamp: int, reason: str | None = None) -> str:
    """What a provider signs (EIP-191 personal_sign) for acknowledge, start, fail and recover. A
    fail's reason (public: it lands in the history and the audit log) is signed too, as the last
    field, so nobody can put words in the provider's mouth: `fail:{order_id}:{timestamp}:{reason}`."""
    if reason is not None:
        return f"{action}:{order_id}:{timestamp}:{reason}"
    return f"{action}:{order_id}:{timestamp}"


def deliverable_message(order_id: str, sha256_hex: str, timestamp: int) -> str:
    """What a provider signs to upload a deliverable: the SHA-256 of the exact bytes uploaded."""
    return f"deliver:{order_id}:{sha256_hex}:{timestamp}"


def completion_message(job_id: str, cid: str, timestamp: int) -> str:
    """The completion attestation: exactly PaymentGateway.attestationMessage(jobId, cid, timestamp)."""
    return f"complete:{job_id}:{cid}:{timestamp}"


# ---- the one way orders change -------------------------------------------------------------------


def new_order_id() -> str:
    return "ord_" + secrets.token_hex(12)


def _record(
    conn: Conn,
    order: OrderRow,
    from_state: str | None,
    to_state: str,
    *,
    actor: str,
    reason: str | None,
    tx_hash: str | None,
    extra: dict[str, Any] | None,
    now: float,
) -> HistoryRow:
    """History row + audit entry + webhook for one move (the order row is written by the caller)."""
    seq = len(store.history(conn, order.id)) + 1
    payload: dict[str, Any] = {
        "order_id": order.id,
        "job_id": order.job_id,
        "from_state": from_state,
        "to_state": to_state,
        "actor": actor,
        "at": iso_utc(now),
    }
    if reason is not None:
        payload["reason"] = reason
    if tx_hash is not None:
        payload["tx_hash"] = tx_hash
    if extra:
        payload.update(extra)
    entry = audit.append(
        conn,
        stream=audit.order_stream(order.id),
        kind=audit.ORDER_TRANSITION,
        payload=payload,
        chain=audit.order_rule,
        now=now,
    )
    row = HistoryRow(seq, from_state, to_state, actor, reason, tx_hash, entry.id, now)
    store.insert_history(conn, order.id, row)
    change = {
        "event": WEBHOOK_EVENT,
        "job_id": order.id,
        "status": to_state,
        "timestamp": iso_utc(now),
        "metadata": {"from_state": from_state, "to_state": to_state},
    }
    url, secret = store.session_webhook(conn, order.session_id)
    if url and secret:
        outbox.enqueue_webhook(
            conn, event=WEBHOOK_EVENT, source=f"order:{order.id}", url=url, secret=secret, payload=change, now=now
        )
    url, secret = store.provider_webhook(conn, order.provider_uuid)
    if url and secret:
        # The provider learns of a new order here (no longer out of band), then of each move of it.
        event = NEW_ORDER_EVENT if from_state is None else WEBHOOK_EVENT
        payload = {**change, "event": event, "order_id": order.id}
        if from_state is None:
            payload.update(new_order_details(conn, order))
        outbox.enqueue_webhook(
            conn, event=event, source=f"provider-order:{order.id}", url=url, secret=secret, payload=payload, now=now
        )
    return row


def new_order_details(conn: Conn, order: OrderRow) -> dict[str, Any]:
    """What a provider needs to start on a new order: the job, amount, deadline and line items."""
    contents = store.session_contents(conn, order.session_id)
    return {
        "service_job_id": order.job_id,
        "amount": order.amount,  # micro-USDC
        "currency": "usdc",
        "deadline": order.deadline,
        "buyer_address": order.buyer_address,
        "funding_tx": order.funding_tx,
        "line_items": contents[0] if contents is not None else [],
    }


def create_order(
    conn: Conn,
    *,
    session_id: str,
    job_id: str,
    provider_uuid: str,
    provider_token_id: int,
    buyer_address: str,
    amount: int,
    deadline: int,
    funding_tx: str,
    now: float,
    funding_block: int | None = None,
    funding_final: bool = True,
) -> OrderRow:
    """The order of a funded session, created once: a second call (the API after a crash, the
    follower from the chain event) returns the existing order. Completes the session.
    `funding_block`: where the funding was mined; `funding_final` False when it comes from a receipt
    not final yet (the API's), which the order follower then settles (core.checkout.follower)."""
    existing_id = store.session_order_id(conn, session_id)
    if existing_id:
        existing = store.get_order(conn, existing_id)
        assert existing is not None
        return existing
    order = OrderRow(
        id=new_order_id(),
        session_id=session_id,
        job_id=job_id.lower(),
        provider_uuid=provider_uuid,
        provider_token_id=provider_token_id,
        buyer_address=buyer_address,
        amount=amount,
        status="created",
        deadline=deadline,
        funding_tx=funding_tx,
        deliverable_cid=None,
        attested_at=None,
        attestation=None,
        release_submitted_tx=None,
        release_tx=None,
        created_at=now,
        updated_at=now,
    )
    store.insert_order(conn, order)
    if funding_block is not None:
        if funding_final:
            store.funding_settled(conn, order.id, funding_block)
        else:
            store.funding_unsettled(conn, order.id, funding_block)
    _record(
        conn,
        order,
        None,
        "created",
        actor="service",
        reason="funded",
        tx_hash=funding_tx,
        extra={"amount": str(amount), "provider_token_id": provider_token_id},
        now=now,
    )
    return order


def transition(
    conn: Conn,
    order_id: str,
    to_state: str,
    *,
    actor: str,
    now: float,
    reason: str | None = None,
    tx_hash: str | None = None,
    extra: dict[str, Any] | None = None,
    updates: dict[str, Any] | None = None,
) -> OrderRow:
    """Move an order, checked against TRANSITIONS (InvalidTransition otherwise); `updates` are
    other order columns written with the move (e.g. deliverable_cid)."""
    order = store.get_order(conn, order_id)
    if order is None:
        raise LookupError(f"no order {order_id}")
    check_transition(order.status, to_state, actor)
    store.set_order_columns(conn, order_id, {"status": to_state, "updated_at": now, **(updates or {})})
    _record(conn, order, order.status, to_state, actor=actor, reason=reason, tx_hash=tx_hash, extra=extra, now=now)
    updated = store.get_order(conn, order_id)
    assert updated is not None
    return updated
