"""Orders: creation from a paid checkout session, validated transitions, and the GET /orders views.

Every change of an order's status writes, in the caller's transaction: the order row, one
order_history row, one audit entry on the order's stream (core.audit order chain rule) and, when
the session gave a webhook_url, one `job.state_changed` webhook in the outbox. Nothing else writes
orders.status.
"""

from __future__ import annotations

import json
import secrets
from dataclasses import asdict, astuple, dataclass
from datetime import UTC, datetime
from typing import Any, Literal

import apsw

from core import audit
from core.orders import check_transition
from core.store import audit as audit_store
from core.store import webhooks as webhook_store

Visibility = Literal["public", "authenticated", "funder"]
WEBHOOK_EVENT = "job.state_changed"


@dataclass(frozen=True)
class OrderRow:
    id: str
    session_id: str
    job_id: str
    provider_uuid: str
    provider_token_id: int
    buyer_address: str
    amount: int
    status: str
    deadline: int
    funding_tx: str
    deliverable_cid: str | None
    attested_at: int | None
    attestation: str | None
    release_submitted_tx: str | None
    release_tx: str | None
    created_at: float
    updated_at: float


@dataclass(frozen=True)
class HistoryRow:
    seq: int
    from_state: str | None
    to_state: str
    actor: str
    reason: str | None
    tx_hash: str | None
    audit_id: int
    at: float


_ORDER_COLS = (
    "id, session_id, job_id, provider_uuid, provider_token_id, buyer_address, amount, status, deadline,"
    " funding_tx, deliverable_cid, attested_at, attestation, release_submitted_tx, release_tx, created_at, updated_at"
)


def _rows(conn: apsw.Connection, sql: str, params: tuple[Any, ...] = ()) -> list[tuple[Any, ...]]:
    return conn.execute(sql, params).fetchall()


def iso(t: float) -> str:
    return datetime.fromtimestamp(t, UTC).isoformat(timespec="milliseconds").replace("+00:00", "Z")


def new_order_id() -> str:
    return "ord_" + secrets.token_hex(12)


def get_order(conn: apsw.Connection, order_id: str) -> OrderRow | None:
    rows = _rows(conn, f"SELECT {_ORDER_COLS} FROM orders WHERE id = ?", (order_id,))  # noqa: S608
    return OrderRow(*rows[0]) if rows else None


def order_by_job(conn: apsw.Connection, job_id: str) -> OrderRow | None:
    rows = _rows(conn, f"SELECT {_ORDER_COLS} FROM orders WHERE job_id = ?", (job_id.lower(),))  # noqa: S608
    return OrderRow(*rows[0]) if rows else None


def history(conn: apsw.Connection, order_id: str) -> list[HistoryRow]:
    rows = _rows(
        conn,
        "SELECT seq, from_state, to_state, actor, reason, tx_hash, audit_id, at FROM order_history"
        " WHERE order_id = ? ORDER BY seq",
        (order_id,),
    )
    return [HistoryRow(*r) for r in rows]


def _session_webhook(conn: apsw.Connection, session_id: str) -> tuple[str | None, str | None]:
    rows = _rows(conn, "SELECT webhook_url, webhook_secret FROM checkout_sessions WHERE id = ?", (session_id,))
    return (rows[0][0], rows[0][1]) if rows else (None, None)


def _record(
    conn: apsw.Connection,
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
    seq = len(history(conn, order.id)) + 1
    payload: dict[str, Any] = {
        "order_id": order.id,
        "job_id": order.job_id,
        "from_state": from_state,
        "to_state": to_state,
        "actor": actor,
        "at": iso(now),
    }
    if reason is not None:
        payload["reason"] = reason
    if tx_hash is not None:
        payload["tx_hash"] = tx_hash
    if extra:
        payload.update(extra)
    entry = audit_store.append(
        conn,
        stream=audit.order_stream(order.id),
        kind=audit.ORDER_TRANSITION,
        payload=payload,
        chain=lambda _seq, prev, body: audit.order_chain_hash(prev, body),
        now=now,
    )
    conn.execute(
        "INSERT INTO order_history (order_id, seq, from_state, to_state, actor, reason, tx_hash, audit_id, at)"
        " VALUES (?, ?, ?, ?, ?, ?, ?, ?, ?)",
        (order.id, seq, from_state, to_state, actor, reason, tx_hash, entry.id, now),
    )
    url, secret = _session_webhook(conn, order.session_id)
    if url and secret:
        webhook_store.enqueue(
            conn,
            event=WEBHOOK_EVENT,
            source=f"order:{order.id}",
            url=url,
            secret=secret,
            payload={
                "event": WEBHOOK_EVENT,
                "job_id": order.id,
                "status": to_state,
                "timestamp": iso(now),
                "metadata": {"from_state": from_state, "to_state": to_state},
            },
            now=now,
        )
    return HistoryRow(seq, from_state, to_state, actor, reason, tx_hash, entry.id, now)


def create_order(
    conn: apsw.Connection,
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
) -> OrderRow:
    """The order of a funded session, created once: a second call (the API after a crash, the
    follower from the chain event) returns the existing order. Completes the session."""
    rows = _rows(conn, "SELECT order_id FROM checkout_sessions WHERE id = ?", (session_id,))
    if not rows:
        raise LookupError(f"no checkout session {session_id}")
    if rows[0][0]:
        existing = get_order(conn, str(rows[0][0]))
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
    values = astuple(order)
    conn.execute(
        f"INSERT INTO orders ({_ORDER_COLS}) VALUES ({', '.join('?' * len(values))})",  # noqa: S608
        values,
    )
    conn.execute(
        "UPDATE checkout_sessions SET status = 'completed', order_id = ?, funding_tx = ?, job_id = ?,"
        " buyer_address = ?, updated_at = ? WHERE id = ?",
        (order.id, funding_tx, order.job_id, buyer_address, now, session_id),
    )
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
    conn: apsw.Connection,
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
    """Move an order, checked against core.orders.TRANSITIONS (InvalidTransition otherwise);
    `updates` are other order columns written with the move (e.g. deliverable_cid)."""
    order = get_order(conn, order_id)
    if order is None:
        raise LookupError(f"no order {order_id}")
    check_transition(order.status, to_state, actor)
    sets = {"status": to_state, "updated_at": now, **(updates or {})}
    for column in sets:
        if column not in _ORDER_COLS.replace(" ", "").split(","):
            raise ValueError(f"unknown order column {column}")
    assignments = ", ".join(f"{c} = ?" for c in sets)
    conn.execute(f"UPDATE orders SET {assignments} WHERE id = ?", (*sets.values(), order_id))  # noqa: S608
    _record(conn, order, order.status, to_state, actor=actor, reason=reason, tx_hash=tx_hash, extra=extra, now=now)
    updated = get_order(conn, order_id)
    assert updated is not None
    return updated


def update_order(conn: apsw.Connection, order_id: str, now: float, **columns: Any) -> None:
    """Columns that are not a status move (the deliverable of an in-progress order, the release tx we sent)."""
    allowed = {"deliverable_cid", "release_submitted_tx"}
    if not columns or set(columns) - allowed:
        raise ValueError(f"update_order writes only {sorted(allowed)}")
    assignments = ", ".join(f"{c} = ?" for c in columns)
    conn.execute(
        f"UPDATE orders SET {assignments}, updated_at = ? WHERE id = ?",  # noqa: S608
        (*columns.values(), now, order_id),
    )


def add_deliverable(conn: apsw.Connection, order_id: str, cid: str, now: float, limit: int) -> bool:
    """Make `cid` the order's deliverable, counting the upload; False (nothing written) when the order
    already had `limit` uploads."""
    conn.execute(
        "UPDATE orders SET deliverable_cid = ?, deliverable_uploads = deliverable_uploads + 1, updated_at = ?"
        " WHERE id = ? AND deliverable_uploads < ?",
        (cid, now, order_id, limit),
    )
    return bool(conn.changes())


def use_signature(conn: apsw.Connection, digest: str, expires_at: float, now: float) -> bool:
    """Record a provider signature's digest; False if it was already used (a replay)."""
    conn.execute("DELETE FROM used_signatures WHERE expires_at < ?", (now,))
    if _rows(conn, "SELECT 1 FROM used_signatures WHERE digest = ?", (digest,)):
        return False
    conn.execute("INSERT INTO used_signatures (digest, expires_at) VALUES (?, ?)", (digest, expires_at))
    return True


def forget_signature(conn: apsw.Connection, digest: str) -> None:
    """Give a signature back: what it asked for did not happen (nothing was sent), so it may be retried."""
    conn.execute("DELETE FROM used_signatures WHERE digest = ?", (digest,))


def signer_for(conn: apsw.Connection, order: OrderRow) -> str | None:
    """The address that signs for the order's provider: the agent NFT's current self wallet as the
    indexer last saw it on-chain (it changes with AgentRegistry.setSelfWallet), else the self wallet
    registered at link time. None (nobody signs) while the registry has reset it after a change of
    hands (the zero address), until the new owner sets one."""
    rows = _rows(conn, "SELECT self_wallet FROM agents WHERE token_id = ?", (order.provider_token_id,))
    if rows:
        wallet = str(rows[0][0])
        return None if int(wallet, 16) == 0 else wallet
    rows = _rows(conn, "SELECT self_wallet FROM providers WHERE agent_uuid = ?", (order.provider_uuid,))
    return str(rows[0][0]) if rows else None


def escrow_status(conn: apsw.Connection, job_id: str) -> str | None:
    """The gateway job's status as indexed (funded, disputed, released, resolved, refunded), if seen."""
    rows = _rows(conn, "SELECT status FROM gateway_jobs WHERE job_id = ?", (job_id,))
    return str(rows[0][0]) if rows else None


# ---- final chain events (the order follower) -----------------------------------------------------


def event_cursor(conn: apsw.Connection, name: str, chain_id: int) -> int:
    """The last block whose events reader `name` has applied (-1: none)."""
    rows = _rows(conn, "SELECT block_number FROM event_cursors WHERE name = ? AND chain_id = ?", (name, chain_id))
    return int(rows[0][0]) if rows else -1


def set_event_cursor(conn: apsw.Connection, name: str, chain_id: int, block: int) -> None:
    conn.execute(
        "INSERT INTO event_cursors (name, chain_id, block_number, log_index) VALUES (?, ?, ?, -1)"
        " ON CONFLICT (name, chain_id) DO UPDATE SET block_number = excluded.block_number",
        (name, chain_id, block),
    )


def gateway_events(conn: apsw.Connection, chain_id: int, low: int, high: int) -> list[tuple[Any, ...]]:
    """(block, block hash, tx hash, log index, topics, data) of PaymentGateway events in [low, high]."""
    return _rows(
        conn,
        "SELECT block_number, block_hash, tx_hash, log_index, topics, data FROM events WHERE chain_id = ?"
        " AND contract = 'PaymentGateway' AND block_number BETWEEN ? AND ? ORDER BY block_number, log_index",
        (chain_id, low, high),
    )


def reset_chain_bound_orders(conn: apsw.Connection) -> None:
    """Forget providers, catalogue, sessions and orders (they name tokens and jobs of one chain):
    for `make run`, which starts a fresh local chain. The audit log is append-only and stays."""
    for table in ("order_history", "orders", "checkout_sessions", "catalogue_items", "providers", "used_signatures"):
        conn.execute(f"DELETE FROM {table}")  # noqa: S608 (constant table names)


# ---- views --------------------------------------------------------------------------------------


def order_view(conn: apsw.Connection, order_id: str, visibility: Visibility) -> dict[str, Any] | None:
    """The GET /orders body: public fields for anyone; line items and totals for any valid key; the
    buyer's details and the webhook delivery state for the key that funded it."""
    order = get_order(conn, order_id)
    if order is None:
        return None
    hist = history(conn, order_id)
    entries = audit_store.stream_entries(conn, audit.order_stream(order_id))
    body: dict[str, Any] = {
        "id": order.id,
        "status": order.status,
        "service_job_id": order.job_id,
        "settlement_tx_hash": order.funding_tx,
        "release": {"tx_hash": order.release_tx, "submitted_tx_hash": order.release_submitted_tx},
        "deliverable_cid": order.deliverable_cid,
        "deadline": order.deadline,
        "created_at": iso(order.created_at),
        "updated_at": iso(order.updated_at),
        "history": [
            {
                "from_state": h.from_state,
                "to_state": h.to_state,
                "actor": h.actor,
                "reason": h.reason,
                "tx_hash": h.tx_hash,
                "audit_id": h.audit_id,
                "at": iso(h.at),
            }
            for h in hist
        ],
        "audit_chain": [
            {
                "audit_id": e.id,
                "seq": e.seq,
                "prev_hash": e.prev_hash,
                "chain_hash": e.chain_hash,
                "payload": json.loads(e.payload),
            }
            for e in entries
        ],
        "provenance": {
            "provider_token_id": order.provider_token_id,
            "attested_at": order.attested_at,
            "attestation": order.attestation,
            "chain_rule": "chain_hash = SHA-256(prev_hash || RFC 8785 canonical JSON of the action); see /methodology",
        },
    }
    if visibility in ("authenticated", "funder"):
        rows = _rows(conn, "SELECT line_items, total FROM checkout_sessions WHERE id = ?", (order.session_id,))
        if rows:
            body["line_items"] = json.loads(rows[0][0])
            body["totals"] = {"total": rows[0][1], "currency": "usdc"}
    if visibility == "funder":
        rows = _rows(conn, "SELECT buyer FROM checkout_sessions WHERE id = ?", (order.session_id,))
        body["buyer_details"] = {**json.loads(rows[0][0]), "address": order.buyer_address} if rows else None
        body["webhook_delivery"] = [asdict(d) for d in webhook_store.deliveries_for(conn, f"order:{order.id}")]
    return body
