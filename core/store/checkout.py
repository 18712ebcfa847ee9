"""SQL of escrow checkout's buyer side: providers (linked agents), catalogue items and checkout
sessions. Orders and their history live in core.store.orders. Callers own the transaction."""

from __future__ import annotations

import json
from dataclasses import dataclass
from typing import Any

import apsw


@dataclass(frozen=True)
class ProviderRow:
    agent_uuid: str
    wallet: str  # agl_ wallet id of the agent (from wallet_agents)
    self_wallet: str
    owner_address: str
    token_id: int | None  # None until the mint is recorded
    mint_tx: str | None
    referrer_token_id: int | None
    linked_at: float


@dataclass(frozen=True)
class ItemRow:
    item_id: str
    provider_uuid: str
    title: str
    tier: str
    price: int
    created_at: float


@dataclass(frozen=True)
class SessionRow:
    id: str
    key_hash: str
    status: str
    line_items: list[dict[str, Any]]  # [{item_id, title, tier, quantity, unit_amount}]
    buyer: dict[str, Any]
    provider_uuid: str
    total: int
    webhook_url: str | None
    webhook_secret: str | None
    job_id: str | None
    buyer_address: str | None
    funding_tx: str | None
    order_id: str | None
    expires_at: float
    created_at: float
    updated_at: float


# ---- providers ----------------------------------------------------------------------------------

_PROVIDER_COLS = (
    "p.agent_uuid, w.wallet, p.self_wallet, p.owner_address, p.token_id, p.mint_tx, p.referrer_token_id, p.linked_at"
)
_PROVIDER_FROM = "FROM providers p JOIN wallet_agents w ON w.uuid = p.agent_uuid"


def _rows(conn: apsw.Connection, sql: str, params: Any = ()) -> list[tuple[Any, ...]]:
    return conn.execute(sql, params).fetchall()


def _provider(row: Any) -> ProviderRow:
    return ProviderRow(*row)


def _one_provider(conn: apsw.Connection, where: str, arg: object) -> ProviderRow | None:
    rows = _rows(conn, f"SELECT {_PROVIDER_COLS} {_PROVIDER_FROM} WHERE {where}", (arg,))
    return _provider(rows[0]) if rows else None


def get_provider(conn: apsw.Connection, agent_uuid: str) -> ProviderRow | None:
    return _one_provider(conn, "p.agent_uuid = ?", agent_uuid)


def provider_by_wallet(conn: apsw.Connection, wallet: str) -> ProviderRow | None:
    return _one_provider(conn, "w.wallet = ?", wallet)


def provider_by_self_wallet(conn: apsw.Connection, self_wallet: str) -> ProviderRow | None:
    return _one_provider(conn, "p.self_wallet = ?", self_wallet)


def provider_by_token(conn: apsw.Connection, token_id: int) -> ProviderRow | None:
    return _one_provider(conn, "p.token_id = ?", token_id)


def insert_pending_provider(
    conn: apsw.Connection,
    *,
    agent_uuid: str,
    self_wallet: str,
    owner_address: str,
    referrer_token_id: int | None,
    now: float,
    link_owner: str | None = None,
    link_attempt: str | None = None,
) -> bool:
    """The provider row before its NFT exists (token_id NULL): written first, so a crash between
    the mint and its record leaves a row a retry can complete (by the registry's walletId lookup).
    It carries the link's claim (the process and attempt minting). False when the agent has a row
    already (a concurrent link's: insert nothing)."""
    conn.execute(
        "INSERT INTO providers (agent_uuid, self_wallet, owner_address, token_id, mint_tx, referrer_token_id,"
        " linked_at, link_owner, link_attempt, link_started) VALUES (?, ?, ?, NULL, NULL, ?, ?, ?, ?, ?)"
        " ON CONFLICT (agent_uuid) DO NOTHING",
        (agent_uuid, self_wallet, owner_address, referrer_token_id, now, link_owner, link_attempt, now),
    )
    return bool(conn.changes())


@dataclass(frozen=True)
class LinkClaim:
    """Who is minting a pending provider row's NFT (all None on a row from before claims)."""

    owner: str | None  # core.instance id
    attempt: str | None
    started: float | None


def link_claim(conn: apsw.Connection, agent_uuid: str) -> LinkClaim | None:
    """The claim on the agent's pending provider row; None without a pending row."""
    rows = _rows(
        conn,
        "SELECT link_owner, link_attempt, link_started FROM providers WHERE agent_uuid = ? AND token_id IS NULL",
        (agent_uuid,),
    )
    return LinkClaim(*rows[0]) if rows else None


def take_over_link(
    conn: apsw.Connection, agent_uuid: str, seen_attempt: str | None, owner: str, attempt: str, now: float
) -> bool:
    """Claim the pending row for `attempt` if its claim still is `seen_attempt`'s; False when another
    attempt moved it first (or the row is gone or linked)."""
    conn.execute(
        "UPDATE providers SET link_owner = ?, link_attempt = ?, link_started = ?"
        " WHERE agent_uuid = ? AND token_id IS NULL AND coalesce(link_attempt, '') = ?",
        (owner, attempt, now, agent_uuid, seen_attempt or ""),
    )
    return bool(conn.changes())


def release_link(conn: apsw.Connection, agent_uuid: str, attempt: str) -> None:
    """Give up `attempt`'s claim, keeping the pending row (the chain decides on the next attempt)."""
    conn.execute(
        "UPDATE providers SET link_owner = NULL, link_attempt = NULL, link_started = NULL"
        " WHERE agent_uuid = ? AND token_id IS NULL AND link_attempt = ?",
        (agent_uuid, attempt),
    )


def delete_pending_provider(conn: apsw.Connection, agent_uuid: str, attempt: str | None = None) -> None:
    """Delete the pending row (nothing was minted); with `attempt`, only while that attempt holds it."""
    if attempt is None:
        conn.execute("DELETE FROM providers WHERE agent_uuid = ? AND token_id IS NULL", (agent_uuid,))
    else:
        conn.execute(
            "DELETE FROM providers WHERE agent_uuid = ? AND token_id IS NULL AND link_attempt = ?",
            (agent_uuid, attempt),
        )


def set_provider_token(
    conn: apsw.Connection,
    agent_uuid: str,
    *,
    token_id: int,
    mint_tx: str | None,
    self_wallet: str,
    owner_address: str,
    referrer_token_id: int | None,
) -> None:
    """Record the minted token (with what the chain recorded, which wins over the pending row)."""
    conn.execute(
        "UPDATE providers SET token_id = ?, mint_tx = ?, self_wallet = ?, owner_address = ?, referrer_token_id = ?"
        " WHERE agent_uuid = ?",
        (token_id, mint_tx, self_wallet, owner_address, referrer_token_id, agent_uuid),
    )


# ---- catalogue ----------------------------------------------------------------------------------

_ITEM_COLS = "item_id, provider_uuid, title, tier, price, created_at"


def insert_item(conn: apsw.Connection, item: ItemRow) -> None:
    conn.execute(
        f"INSERT INTO catalogue_items ({_ITEM_COLS}) VALUES (?, ?, ?, ?, ?, ?)",  # noqa: S608
        (item.item_id, item.provider_uuid, item.title, item.tier, item.price, item.created_at),
    )


def get_item(conn: apsw.Connection, item_id: str) -> ItemRow | None:
    rows = _rows(conn, f"SELECT {_ITEM_COLS} FROM catalogue_items WHERE item_id = ?", (item_id,))  # noqa: S608
    return ItemRow(*rows[0]) if rows else None


def list_items(
    conn: apsw.Connection, *, provider_uuid: str | None = None, after: str | None = None, limit: int = 100
) -> list[ItemRow]:
    """Items in id order (keyset pagination: `after` is the last id of the previous page)."""
    where, args = ["1 = 1"], []
    if provider_uuid is not None:
        where.append("provider_uuid = ?")
        args.append(provider_uuid)
    if after is not None:
        where.append("item_id > ?")
        args.append(after)
    sql = f"SELECT {_ITEM_COLS} FROM catalogue_items WHERE {' AND '.join(where)} ORDER BY item_id LIMIT ?"  # noqa: S608
    return [ItemRow(*r) for r in _rows(conn, sql, (*args, limit))]


def items_by_ids(conn: apsw.Connection, item_ids: list[str]) -> dict[str, ItemRow]:
    if not item_ids:
        return {}
    marks = ",".join("?" * len(item_ids))
    rows = _rows(conn, f"SELECT {_ITEM_COLS} FROM catalogue_items WHERE item_id IN ({marks})", item_ids)  # noqa: S608
    return {str(r[0]): ItemRow(*r) for r in rows}


# ---- checkout sessions --------------------------------------------------------------------------

_SESSION_COLS = (
    "id, key_hash, status, line_items, buyer, provider_uuid, total, webhook_url, webhook_secret, job_id,"
    " buyer_address, funding_tx, order_id, expires_at, created_at, updated_at"
)


def _session(row: Any) -> SessionRow:
    values = list(row)
    values[3] = json.loads(values[3])
    values[4] = json.loads(values[4])
    return SessionRow(*values)


def _dump(value: Any) -> str:
    return json.dumps(value, separators=(",", ":"), sort_keys=True)


def insert_session(conn: apsw.Connection, s: SessionRow) -> None:
    conn.execute(
        f"INSERT INTO checkout_sessions ({_SESSION_COLS}) VALUES ({', '.join('?' * 16)})",  # noqa: S608
        (
            s.id,
            s.key_hash,
            s.status,
            _dump(s.line_items),
            _dump(s.buyer),
            s.provider_uuid,
            s.total,
            s.webhook_url,
            s.webhook_secret,
            s.job_id,
            s.buyer_address,
            s.funding_tx,
            s.order_id,
            s.expires_at,
            s.created_at,
            s.updated_at,
        ),
    )


def get_session(conn: apsw.Connection, session_id: str) -> SessionRow | None:
    rows = _rows(conn, f"SELECT {_SESSION_COLS} FROM checkout_sessions WHERE id = ?", (session_id,))  # noqa: S608
    return _session(rows[0]) if rows else None


def session_by_job(conn: apsw.Connection, job_id: str) -> SessionRow | None:
    """The session whose gateway job is `job_id`."""
    sql = f"SELECT {_SESSION_COLS} FROM checkout_sessions WHERE job_id = ?"  # noqa: S608
    rows = _rows(conn, sql, (job_id,))
    return _session(rows[0]) if rows else None


def update_session_contents(
    conn: apsw.Connection,
    session_id: str,
    *,
    line_items: list[dict[str, Any]],
    buyer: dict[str, Any],
    provider_uuid: str,
    total: int,
    now: float,
) -> bool:
    """Replace the cart of an incomplete session; False when it is no longer incomplete."""
    conn.execute(
        "UPDATE checkout_sessions SET line_items = ?, buyer = ?, provider_uuid = ?, total = ?, updated_at = ?"
        " WHERE id = ? AND status = 'incomplete'",
        (_dump(line_items), _dump(buyer), provider_uuid, total, now, session_id),
    )
    return bool(conn.changes())


def transition(conn: apsw.Connection, session_id: str, from_status: str, to_status: str, now: float) -> bool:
    """Compare-and-set the status; False when the session was not in `from_status`."""
    conn.execute(
        "UPDATE checkout_sessions SET status = ?, updated_at = ? WHERE id = ? AND status = ?",
        (to_status, now, session_id, from_status),
    )
    return bool(conn.changes())


def begin_complete(
    conn: apsw.Connection,
    session_id: str,
    *,
    job_id: str,
    buyer_address: str,
    buyer: dict[str, Any],
    now: float,
    owner: str | None = None,
) -> bool:
    """incomplete -> complete_in_progress, fixing the job id and the paying address, held by the
    process `owner` (core.instance); False when the session was not incomplete (a concurrent
    complete got there first)."""
    conn.execute(
        "UPDATE checkout_sessions SET status = 'complete_in_progress', job_id = ?, buyer_address = ?, buyer = ?,"
        " updated_at = ?, completing_owner = ? WHERE id = ? AND status = 'incomplete'",
        (job_id, buyer_address, _dump(buyer), now, owner, session_id),
    )
    return bool(conn.changes())


def abort_complete(conn: apsw.Connection, session_id: str, now: float) -> bool:
    """complete_in_progress -> incomplete (nothing was funded): the buyer may retry. The job id
    stays (it is derived from the session id anyway)."""
    return transition(conn, session_id, "complete_in_progress", "incomplete", now)


def expire_session(conn: apsw.Connection, session_id: str, now: float) -> bool:
    """Expire one session if it is incomplete and past its expiry (the lazy path)."""
    conn.execute(
        "UPDATE checkout_sessions SET status = 'expired', updated_at = ?"
        " WHERE id = ? AND status = 'incomplete' AND expires_at <= ?",
        (now, session_id, now),
    )
    return bool(conn.changes())


def expire_due(conn: apsw.Connection, now: float, limit: int = 1000) -> int:
    """Expire incomplete sessions past their expiry (the sweep); returns how many."""
    conn.execute(
        "UPDATE checkout_sessions SET status = 'expired', updated_at = ? WHERE id IN ("
        " SELECT id FROM checkout_sessions WHERE status = 'incomplete' AND expires_at <= ? LIMIT ?)",
        (now, now, limit),
    )
    return int(conn.changes())


def completions_in_progress(conn: apsw.Connection) -> list[tuple[SessionRow, str | None]]:
    """Every session being completed, with the process completing it (core.instance id, if recorded)."""
    rows = conn.execute(
        f"SELECT {_SESSION_COLS}, completing_owner FROM checkout_sessions"  # noqa: S608
        " WHERE status = 'complete_in_progress'",
    ).fetchall()
    return [(_session(r[:-1]), None if r[-1] is None else str(r[-1])) for r in rows]
