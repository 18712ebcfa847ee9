"""SQL of orders: the order rows, their history, and the reads the order views need. The rules
(transitions, audit entries, webhooks) are core.checkout.orders'; nothing else writes orders.status.
"""

from __future__ import annotations

import json
from dataclasses import astuple, dataclass
from typing import Any

import apsw


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


def session_webhook(conn: apsw.Connection, session_id: str) -> tuple[str | None, str | None]:
    """(webhook_url, webhook_secret) of the checkout session an order came from."""
    rows = _rows(conn, "SELECT webhook_url, webhook_secret FROM checkout_sessions WHERE id = ?", (session_id,))
    return (rows[0][0], rows[0][1]) if rows else (None, None)


def provider_webhook(conn: apsw.Connection, provider_uuid: str) -> tuple[str | None, str | None]:
    """(webhook_url, webhook_secret) the provider registered for news of its orders."""
    rows = _rows(conn, "SELECT webhook_url, webhook_secret FROM providers WHERE agent_uuid = ?", (provider_uuid,))
    return (rows[0][0], rows[0][1]) if rows else (None, None)


def set_provider_webhook(conn: apsw.Connection, provider_uuid: str, url: str | None, secret: str | None) -> None:
    conn.execute(
        "UPDATE providers SET webhook_url = ?, webhook_secret = ? WHERE agent_uuid = ?", (url, secret, provider_uuid)
    )


def orders_of_provider(
    conn: apsw.Connection, provider_uuid: str, *, status: str | None, before: int | None, limit: int
) -> list[tuple[int, OrderRow]]:
    """(position, order) of a provider's orders, newest first; `before` is the position of the last
    order of the previous page (keyset pagination on the rowid)."""
    where: list[str] = ["provider_uuid = ?"]
    args: list[Any] = [provider_uuid]
    if status is not None:
        where.append("status = ?")
        args.append(status)
    if before is not None:
        where.append("rowid < ?")
        args.append(before)
    rows = _rows(
        conn,
        f"SELECT rowid, {_ORDER_COLS} FROM orders WHERE {' AND '.join(where)} ORDER BY rowid DESC LIMIT ?",  # noqa: S608
        (*args, limit),
    )
    return [(int(r[0]), OrderRow(*r[1:])) for r in rows]


def insert_history(conn: apsw.Connection, order_id: str, h: HistoryRow) -> None:
    conn.execute(
        "INSERT INTO order_history (order_id, seq, from_state, to_state, actor, reason, tx_hash, audit_id, at)"
        " VALUES (?, ?, ?, ?, ?, ?, ?, ?, ?)",
        (order_id, h.seq, h.from_state, h.to_state, h.actor, h.reason, h.tx_hash, h.audit_id, h.at),
    )


def session_order_id(conn: apsw.Connection, session_id: str) -> str | None:
    """The order of a session (None when it has none yet): whoever records the order next (the API from
    the receipt, the follower from the chain) does so under the write lock, after the other's commit.
    LookupError for an unknown session."""
    rows = _rows(conn, "SELECT order_id FROM checkout_sessions WHERE id = ?", (session_id,))
    if not rows:
        raise LookupError(f"no checkout session {session_id}")
    return str(rows[0][0]) if rows[0][0] else None


def insert_order(conn: apsw.Connection, order: OrderRow) -> None:
    """Write a new order and complete its session (it points at the order from now on)."""
    values = astuple(order)
    conn.execute(
        f"INSERT INTO orders ({_ORDER_COLS}) VALUES ({', '.join('?' * len(values))})",  # noqa: S608
        values,
    )
    conn.execute(
        "UPDATE checkout_sessions SET status = 'completed', order_id = ?, funding_tx = ?, job_id = ?,"
        " buyer_address = ?, updated_at = ? WHERE id = ?",
        (order.id, order.funding_tx, order.job_id, order.buyer_address, order.created_at, order.session_id),
    )


_MOVABLE = frozenset(_ORDER_COLS.replace(" ", "").split(","))


def set_order_columns(conn: apsw.Connection, order_id: str, columns: dict[str, Any]) -> None:
    """Write `columns` of one order (names checked against the table's)."""
    unknown = set(columns) - _MOVABLE
    if unknown:
        raise ValueError(f"unknown order columns {sorted(unknown)}")
    assignments = ", ".join(f"{c} = ?" for c in columns)
    conn.execute(f"UPDATE orders SET {assignments} WHERE id = ?", (*columns.values(), order_id))  # noqa: S608


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


# ---- receipts not yet final (the reconciliation rule is core.checkout.follower's) ------------------------


def funding_unsettled(conn: apsw.Connection, order_id: str, block: int) -> None:
    """The order was recorded from a funding receipt of `block` that was not final yet."""
    conn.execute("UPDATE orders SET funding_block = ?, funding_settled = 0 WHERE id = ?", (block, order_id))


def funding_settled(conn: apsw.Connection, order_id: str, block: int | None = None) -> None:
    """The funding is decided: seen final on-chain (in `block`), or found gone."""
    conn.execute(
        "UPDATE orders SET funding_settled = 1, funding_block = coalesce(?, funding_block) WHERE id = ?",
        (block, order_id),
    )


def release_unsettled(conn: apsw.Connection, order_id: str, block: int) -> None:
    """The order was moved by a release receipt of `block` that was not final yet."""
    conn.execute("UPDATE orders SET release_block = ?, release_settled = 0 WHERE id = ?", (block, order_id))


def release_settled(conn: apsw.Connection, order_id: str) -> None:
    conn.execute("UPDATE orders SET release_settled = 1 WHERE id = ?", (order_id,))


def unsettled_fundings(conn: apsw.Connection, final: int) -> list[tuple[str, str | None]]:
    """(order id, the gateway job's indexed status or None) of the orders whose funding receipt's block
    is final while its JobFunded has not been seen final."""
    rows = _rows(
        conn,
        "SELECT o.id, (SELECT g.status FROM gateway_jobs g WHERE g.job_id = o.job_id) FROM orders o"
        " WHERE o.funding_settled = 0 AND o.funding_block <= ?",
        (final,),
    )
    return [(str(r[0]), None if r[1] is None else str(r[1])) for r in rows]


def unsettled_releases(conn: apsw.Connection, final: int) -> list[tuple[str, str | None]]:
    """(order id, the gateway job's indexed status or None) of the orders whose release receipt's block
    is final while the JobReleased has not been seen final."""
    rows = _rows(
        conn,
        "SELECT o.id, (SELECT g.status FROM gateway_jobs g WHERE g.job_id = o.job_id) FROM orders o"
        " WHERE o.release_settled = 0 AND o.release_block <= ?",
        (final,),
    )
    return [(str(r[0]), None if r[1] is None else str(r[1])) for r in rows]


def unsettle_open_orders(conn: apsw.Connection) -> int:
    """Re-check every open order against the chain (a re-index): their receipts' blocks are known."""
    conn.execute(
        "UPDATE orders SET funding_settled = 0 WHERE funding_block IS NOT NULL"
        " AND status IN ('created', 'acknowledged', 'in_progress', 'completed', 'disputed')"
    )
    n = conn.changes()
    conn.execute("UPDATE orders SET release_settled = 0 WHERE release_block IS NOT NULL AND status = 'completed'")
    return int(n + conn.changes())


def last_move(conn: apsw.Connection, order_id: str) -> HistoryRow | None:
    rows = _rows(
        conn,
        "SELECT seq, from_state, to_state, actor, reason, tx_hash, audit_id, at FROM order_history"
        " WHERE order_id = ? ORDER BY seq DESC LIMIT 1",
        (order_id,),
    )
    return HistoryRow(*rows[0]) if rows else None


def session_contents(conn: apsw.Connection, session_id: str) -> tuple[list[Any], int, dict[str, Any]] | None:
    """(line items, total, buyer) of a checkout session, as stored."""
    rows = _rows(conn, "SELECT line_items, total, buyer FROM checkout_sessions WHERE id = ?", (session_id,))
    if not rows:
        return None
    return json.loads(rows[0][0]), int(rows[0][1]), json.loads(rows[0][2])
