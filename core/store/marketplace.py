"""SQL of the ownership marketplace ("drop"): listings, the offer book, sales, watches, e-mail
recipients, the sweeps' sent transactions and back-off, handovers and asset flags; plus the reads
of other tables the marketplace needs (the agents projection, the off-chain balances, orders'
deliverables). The rules are core.marketplace's; callers own the transaction."""

from __future__ import annotations

from dataclasses import dataclass
from typing import Any, cast

import apsw


def _rows(conn: apsw.Connection, sql: str, params: tuple[Any, ...] = ()) -> list[tuple[Any, ...]]:
    return cast(list[tuple[Any, ...]], conn.execute(sql, params).fetchall())


# ---- listings ----------------------------------------------------------------------------------


@dataclass(frozen=True)
class ListingRow:
    id: str
    chain_listing_id: int
    agent_uuid: str
    token_id: int
    seller_account: str
    seller_address: str
    asking_price: int
    floor_price: int
    earnings_at_listing: int
    accept_offers: bool
    seller_email: str | None
    state: str
    expires_at: int
    list_tx: str
    list_block: int
    confirmed: bool
    end_tx: str | None
    created_at: float
    updated_at: float
    wallet: str = ""  # the agent's agl_ wallet (joined)


_LISTING_COLS = (
    "l.id, l.chain_listing_id, l.agent_uuid, l.token_id, l.seller_account, l.seller_address, l.asking_price,"
    " l.floor_price, l.earnings_at_listing, l.accept_offers, l.seller_email, l.state, l.expires_at, l.list_tx,"
    " l.list_block, l.confirmed, l.end_tx, l.created_at, l.updated_at, a.wallet"
)
_LISTING_FROM = "FROM drop_listings l JOIN wallet_agents a ON a.uuid = l.agent_uuid"


def _listing(r: tuple[Any, ...]) -> ListingRow:
    return ListingRow(
        r[0],
        int(r[1]),
        r[2],
        int(r[3]),
        r[4],
        r[5],
        int(r[6]),
        int(r[7]),
        int(r[8]),
        bool(r[9]),
        r[10],
        r[11],
        int(r[12]),
        r[13],
        int(r[14]),
        bool(r[15]),
        r[16],
        float(r[17]),
        float(r[18]),
        r[19],
    )


def insert_listing(conn: apsw.Connection, row: ListingRow) -> None:
    conn.execute(
        "INSERT INTO drop_listings (id, chain_listing_id, agent_uuid, token_id, seller_account, seller_address,"
        " asking_price, floor_price, earnings_at_listing, accept_offers, seller_email, state, expires_at, list_tx,"
        " list_block, confirmed, end_tx, created_at, updated_at) VALUES (?, ?, ?, ?, ?, ?, ?, ?, ?, ?, ?, ?, ?, ?, ?,"
        " ?, ?, ?, ?)",
        (
            row.id,
            row.chain_listing_id,
            row.agent_uuid,
            row.token_id,
            row.seller_account,
            row.seller_address,
            row.asking_price,
            row.floor_price,
            row.earnings_at_listing,
            int(row.accept_offers),
            row.seller_email,
            row.state,
            row.expires_at,
            row.list_tx,
            row.list_block,
            int(row.confirmed),
            row.end_tx,
            row.created_at,
            row.updated_at,
        ),
    )


def get_listing(conn: apsw.Connection, listing_id: str) -> ListingRow | None:
    rows = _rows(conn, f"SELECT {_LISTING_COLS} {_LISTING_FROM} WHERE l.id = ?", (listing_id,))
    return _listing(rows[0]) if rows else None


def listing_by_chain_id(conn: apsw.Connection, chain_listing_id: int) -> ListingRow | None:
    rows = _rows(
        conn,
        f"SELECT {_LISTING_COLS} {_LISTING_FROM} WHERE l.chain_listing_id = ?",
        (chain_listing_id,),
    )
    return _listing(rows[0]) if rows else None


def latest_listing(conn: apsw.Connection, agent_uuid: str) -> ListingRow | None:
    rows = _rows(
        conn,
        f"SELECT {_LISTING_COLS} {_LISTING_FROM} WHERE l.agent_uuid = ? AND l.state != 'void'"
        " ORDER BY l.created_at DESC, l.chain_listing_id DESC LIMIT 1",
        (agent_uuid,),
    )
    return _listing(rows[0]) if rows else None


def count_listings(conn: apsw.Connection, state: str) -> int:
    return int(_rows(conn, "SELECT COUNT(*) FROM drop_listings WHERE state = ?", (state,))[0][0])


def page_listings(conn: apsw.Connection, state: str, limit: int, offset: int) -> list[ListingRow]:
    """Listings in `state`, newest first: the page's ids are read from the (state, created_at DESC, id)
    index alone (an OFFSET skips index entries, no sort), then only those rows are joined."""
    rows = _rows(
        conn,
        f"SELECT {_LISTING_COLS} FROM (SELECT id FROM drop_listings WHERE state = ?"  # noqa: S608
        " ORDER BY created_at DESC, id LIMIT ? OFFSET ?) p JOIN drop_listings l ON l.id = p.id"
        " JOIN wallet_agents a ON a.uuid = l.agent_uuid ORDER BY l.created_at DESC, l.id",
        (state, limit, offset),
    )
    return [_listing(r) for r in rows]


def set_listing_state(
    conn: apsw.Connection, listing_id: str, state: str, now: float, *, end_tx: str | None = None
) -> None:
    conn.execute(
        "UPDATE drop_listings SET state = ?, end_tx = coalesce(?, end_tx), updated_at = ? WHERE id = ?",
        (state, end_tx, now, listing_id),
    )


def confirm_listing(conn: apsw.Connection, listing_id: str, list_tx: str, list_block: int, now: float) -> None:
    conn.execute(
        "UPDATE drop_listings SET confirmed = 1, list_tx = ?, list_block = ?, updated_at = ? WHERE id = ?",
        (list_tx, list_block, now, listing_id),
    )


def set_listing_terms(
    conn: apsw.Connection, listing_id: str, accept_offers: bool, seller_email: str | None, now: float
) -> None:
    conn.execute(
        "UPDATE drop_listings SET accept_offers = ?, seller_email = coalesce(?, seller_email), updated_at = ?"
        " WHERE id = ?",
        (int(accept_offers), seller_email, now, listing_id),
    )


def unconfirmed_listings(conn: apsw.Connection) -> list[ListingRow]:
    rows = _rows(
        conn,
        f"SELECT {_LISTING_COLS} {_LISTING_FROM} WHERE l.confirmed = 0 AND l.state != 'void'",
    )
    return [_listing(r) for r in rows]


# ---- offers --------------------------------------------------------------------------------------


@dataclass(frozen=True)
class OfferRow:
    id: str
    listing_id: str
    buyer_address: str
    price: int
    nonce: int
    deadline: int
    signature: str
    buyer_email: str | None
    buyer_account: str
    state: str
    created_at: float
    updated_at: float


_OFFER_COLS = (
    "id, listing_id, buyer_address, price, nonce, deadline, signature, buyer_email, buyer_account, state,"
    " created_at, updated_at"
)


def _offer(r: tuple[Any, ...]) -> OfferRow:
    return OfferRow(
        r[0], r[1], r[2], int(r[3]), int(r[4]), int(r[5]), r[6], r[7], r[8], r[9], float(r[10]), float(r[11])
    )


def insert_offer(conn: apsw.Connection, o: OfferRow) -> None:
    conn.execute(
        f"INSERT INTO drop_offers ({_OFFER_COLS}) VALUES (?, ?, ?, ?, ?, ?, ?, ?, ?, ?, ?, ?)",  # noqa: S608
        (
            o.id,
            o.listing_id,
            o.buyer_address,
            o.price,
            str(o.nonce),
            o.deadline,
            o.signature,
            o.buyer_email,
            o.buyer_account,
            o.state,
            o.created_at,
            o.updated_at,
        ),
    )


def offers_of(conn: apsw.Connection, listing_id: str) -> list[OfferRow]:
    rows = _rows(
        conn,
        f"SELECT {_OFFER_COLS} FROM drop_offers WHERE listing_id = ? ORDER BY created_at, id",  # noqa: S608
        (listing_id,),
    )
    return [_offer(r) for r in rows]


def find_offer(conn: apsw.Connection, listing_id: str, buyer: str, nonce: int) -> OfferRow | None:
    rows = _rows(
        conn,
        f"SELECT {_OFFER_COLS} FROM drop_offers WHERE listing_id = ? AND buyer_address = ? AND nonce = ?",  # noqa: S608
        (listing_id, buyer, str(nonce)),
    )
    return _offer(rows[0]) if rows else None


def set_nonce_state(conn: apsw.Connection, buyer: str, nonce: int, state: str, now: float) -> int:
    """Every open offer of `buyer` with `nonce` (any listing) -> `state` (nonce_used, cancelled)."""
    conn.execute(
        "UPDATE drop_offers SET state = ?, updated_at = ? WHERE buyer_address = ? AND nonce = ? AND state = 'open'",
        (state, now, buyer, str(nonce)),
    )
    return int(conn.changes())


def set_offer_state(conn: apsw.Connection, offer_id: str, state: str, now: float) -> None:
    conn.execute("UPDATE drop_offers SET state = ?, updated_at = ? WHERE id = ?", (state, now, offer_id))


def close_open_offers(conn: apsw.Connection, listing_id: str, now: float) -> int:
    conn.execute(
        "UPDATE drop_offers SET state = 'closed', updated_at = ? WHERE listing_id = ? AND state = 'open'",
        (now, listing_id),
    )
    return int(conn.changes())


def reopen_offers(conn: apsw.Connection, listing_id: str, now: float) -> list[OfferRow]:
    """Offers a reorged-out sale had closed or accepted back to open; returns them (the caller checks
    their nonces on-chain)."""
    conn.execute(
        "UPDATE drop_offers SET state = 'open', updated_at = ? WHERE listing_id = ?"
        " AND state IN ('closed', 'accepted')",
        (now, listing_id),
    )
    return [o for o in offers_of(conn, listing_id) if o.state == "open"]


# ---- sales ---------------------------------------------------------------------------------------


@dataclass(frozen=True)
class SaleRow:
    id: str
    listing_id: str
    buyer_address: str
    price: int
    seller_proceeds: int
    service_fee: int
    via_offer: bool
    offer_id: str | None
    buyer_email: str | None
    buyer_account: str | None
    commit_tx: str
    commit_block: int
    notice_ends_at: int
    state: str
    confirmed: bool
    bundle: str
    bundle_sha256: str
    bundle_audit_id: int
    settle_tx: str | None
    created_at: float
    updated_at: float


_SALE_COLS = (
    "id, listing_id, buyer_address, price, seller_proceeds, service_fee, via_offer, offer_id, buyer_email,"
    " buyer_account, commit_tx, commit_block, notice_ends_at, state, confirmed, bundle, bundle_sha256,"
    " bundle_audit_id, settle_tx, created_at, updated_at"
)


def _sale(r: tuple[Any, ...]) -> SaleRow:
    return SaleRow(
        r[0],
        r[1],
        r[2],
        int(r[3]),
        int(r[4]),
        int(r[5]),
        bool(r[6]),
        r[7],
        r[8],
        r[9],
        r[10],
        int(r[11]),
        int(r[12]),
        r[13],
        bool(r[14]),
        r[15],
        r[16],
        int(r[17]),
        r[18],
        float(r[19]),
        float(r[20]),
    )


def insert_sale(conn: apsw.Connection, s: SaleRow) -> None:
    conn.execute(
        f"INSERT INTO drop_sales ({_SALE_COLS}) VALUES (?, ?, ?, ?, ?, ?, ?, ?, ?, ?, ?, ?, ?, ?, ?, ?, ?, ?, ?, ?, ?)",  # noqa: S608
        (
            s.id,
            s.listing_id,
            s.buyer_address,
            s.price,
            s.seller_proceeds,
            s.service_fee,
            int(s.via_offer),
            s.offer_id,
            s.buyer_email,
            s.buyer_account,
            s.commit_tx,
            s.commit_block,
            s.notice_ends_at,
            s.state,
            int(s.confirmed),
            s.bundle,
            s.bundle_sha256,
            s.bundle_audit_id,
            s.settle_tx,
            s.created_at,
            s.updated_at,
        ),
    )


def sales_of(conn: apsw.Connection, listing_id: str) -> list[SaleRow]:
    rows = _rows(
        conn,
        f"SELECT {_SALE_COLS} FROM drop_sales WHERE listing_id = ? ORDER BY created_at, id",  # noqa: S608
        (listing_id,),
    )
    return [_sale(r) for r in rows]


def live_sale(conn: apsw.Connection, listing_id: str) -> SaleRow | None:
    rows = _rows(
        conn,
        f"SELECT {_SALE_COLS} FROM drop_sales WHERE listing_id = ? AND state != 'reorged'",  # noqa: S608
        (listing_id,),
    )
    return _sale(rows[0]) if rows else None


def set_sale(conn: apsw.Connection, sale_id: str, now: float, **columns: Any) -> None:
    allowed = {"state", "confirmed", "settle_tx", "buyer_email", "buyer_account", "commit_block"}
    if not columns or set(columns) - allowed:
        raise ValueError(f"unknown sale columns: {sorted(set(columns) - allowed)}")
    sets = ", ".join(f"{c} = ?" for c in columns)
    conn.execute(
        f"UPDATE drop_sales SET {sets}, updated_at = ? WHERE id = ?",  # noqa: S608 (names checked above)
        (*(int(v) if isinstance(v, bool) else v for v in columns.values()), now, sale_id),
    )


def unconfirmed_sales(conn: apsw.Connection) -> list[SaleRow]:
    rows = _rows(
        conn,
        f"SELECT {_SALE_COLS} FROM drop_sales WHERE confirmed = 0 AND state = 'committed'",  # noqa: S608
    )
    return [_sale(r) for r in rows]


# ---- watches and e-mail recipients ---------------------------------------------------------------


@dataclass(frozen=True)
class WatchRow:
    id: str
    agent_uuid: str  # the agent watched
    account_id: str  # the account holding the watch (whose key made it)
    email: str | None
    webhook_url: str | None
    webhook_secret: str | None
    created_at: float
    holder_agent_uuid: str | None  # the agent of that account holding it; None: the account itself


def insert_watch(conn: apsw.Connection, w: WatchRow) -> None:
    conn.execute(
        "INSERT INTO drop_watches (id, agent_uuid, account_id, email, webhook_url, webhook_secret, created_at,"
        " holder_agent_uuid) VALUES (?, ?, ?, ?, ?, ?, ?, ?)",
        (w.id, w.agent_uuid, w.account_id, w.email, w.webhook_url, w.webhook_secret, w.created_at, w.holder_agent_uuid),
    )


def watches_of(conn: apsw.Connection, agent_uuid: str) -> list[WatchRow]:
    rows = _rows(
        conn,
        "SELECT id, agent_uuid, account_id, email, webhook_url, webhook_secret, created_at, holder_agent_uuid"
        " FROM drop_watches WHERE agent_uuid = ? ORDER BY created_at, id",
        (agent_uuid,),
    )
    return [WatchRow(*r) for r in rows]


def get_watch(conn: apsw.Connection, watch_id: str) -> WatchRow | None:
    rows = _rows(
        conn,
        "SELECT id, agent_uuid, account_id, email, webhook_url, webhook_secret, created_at, holder_agent_uuid"
        " FROM drop_watches WHERE id = ?",
        (watch_id,),
    )
    return WatchRow(*rows[0]) if rows else None


def delete_watch(conn: apsw.Connection, watch_id: str) -> None:
    conn.execute("DELETE FROM drop_watches WHERE id = ?", (watch_id,))


def recipient_token(conn: apsw.Connection, email: str, new_token: str, now: float) -> tuple[str, bool]:
    """(the unsubscribe token of `email`, whether it unsubscribed); `new_token` is stored the first time."""
    conn.execute(
        "INSERT INTO email_recipients (email, token, unsubscribed_at, created_at) VALUES (?, ?, NULL, ?)"
        " ON CONFLICT (email) DO NOTHING",
        (email, new_token, now),
    )
    token, unsubscribed = _rows(conn, "SELECT token, unsubscribed_at FROM email_recipients WHERE email = ?", (email,))[
        0
    ]
    return str(token), unsubscribed is not None


def unsubscribe(conn: apsw.Connection, token: str, now: float) -> str | None:
    """Mark the recipient of `token` unsubscribed (once); returns its address, None for no such token."""
    rows = _rows(conn, "SELECT email FROM email_recipients WHERE token = ?", (token,))
    if not rows:
        return None
    conn.execute(
        "UPDATE email_recipients SET unsubscribed_at = coalesce(unsubscribed_at, ?) WHERE token = ?", (now, token)
    )
    return str(rows[0][0])


def account_email(conn: apsw.Connection, account_id: str) -> str | None:
    """The e-mail address an account's key was issued for (POST /api/keys), if any."""
    rows = _rows(
        conn,
        "SELECT email FROM api_keys WHERE account_id = ? AND email IS NOT NULL ORDER BY created_at LIMIT 1",
        (account_id,),
    )
    return str(rows[0][0]) if rows else None


# ---- the sweeps' transactions --------------------------------------------------------------------


@dataclass(frozen=True)
class SweepTx:
    id: int
    action: str
    chain_listing_id: int
    state: str
    tx_hash: str
    nonce: int


def record_sent(
    conn: apsw.Connection, action: str, chain_listing_id: int, tx_hash: str, nonce: int, now: float
) -> None:
    """The transaction about to be sent for (action, listing): the open row, replaced when the same
    send signs again (a refused nonce was resynced: the first one never reached the chain)."""
    conn.execute(
        "INSERT INTO drop_sweep_txs (action, chain_listing_id, state, tx_hash, nonce, created_at, updated_at)"
        " VALUES (?, ?, 'sent', ?, ?, ?, ?) ON CONFLICT (action, chain_listing_id) WHERE state = 'sent'"
        " DO UPDATE SET tx_hash = excluded.tx_hash, nonce = excluded.nonce, updated_at = excluded.updated_at",
        (action, chain_listing_id, tx_hash, nonce, now, now),
    )


def open_sweep_txs(conn: apsw.Connection, action: str) -> list[SweepTx]:
    rows = _rows(
        conn,
        "SELECT id, action, chain_listing_id, state, tx_hash, nonce FROM drop_sweep_txs WHERE action = ?"
        " AND state = 'sent' ORDER BY id",
        (action,),
    )
    return [SweepTx(int(r[0]), r[1], int(r[2]), r[3], r[4], int(r[5])) for r in rows]


def sweep_txs(conn: apsw.Connection, chain_listing_id: int) -> list[SweepTx]:
    rows = _rows(
        conn,
        "SELECT id, action, chain_listing_id, state, tx_hash, nonce FROM drop_sweep_txs WHERE chain_listing_id = ?"
        " ORDER BY id",
        (chain_listing_id,),
    )
    return [SweepTx(int(r[0]), r[1], int(r[2]), r[3], r[4], int(r[5])) for r in rows]


def finish_sweep_tx(conn: apsw.Connection, tx_hash: str, state: str, error: str | None, now: float) -> None:
    conn.execute(
        "UPDATE drop_sweep_txs SET state = ?, error = ?, updated_at = ? WHERE tx_hash = ? AND state = 'sent'",
        (state, None if error is None else error[:500], now, tx_hash),
    )


def backoff_of(conn: apsw.Connection, action: str, chain_listing_id: int) -> tuple[int, float] | None:
    rows = _rows(
        conn,
        "SELECT failures, next_attempt_at FROM drop_sweep_backoff WHERE action = ? AND chain_listing_id = ?",
        (action, chain_listing_id),
    )
    return (int(rows[0][0]), float(rows[0][1])) if rows else None


def set_backoff(
    conn: apsw.Connection, action: str, chain_listing_id: int, failures: int, next_at: float, error: str
) -> None:
    conn.execute(
        "INSERT INTO drop_sweep_backoff (action, chain_listing_id, failures, next_attempt_at, last_error)"
        " VALUES (?, ?, ?, ?, ?) ON CONFLICT (action, chain_listing_id) DO UPDATE SET failures = excluded.failures,"
        " next_attempt_at = excluded.next_attempt_at, last_error = excluded.last_error",
        (action, chain_listing_id, failures, next_at, error[:500]),
    )


def clear_backoff(conn: apsw.Connection, action: str, chain_listing_id: int) -> None:
    conn.execute("DELETE FROM drop_sweep_backoff WHERE action = ? AND chain_listing_id = ?", (action, chain_listing_id))


def due_on_chain(conn: apsw.Connection, action: str, chain_now: int, limit: int = 200) -> list[int]:
    """On-chain listings (the indexer's projection) whose settle or expiry is due at `chain_now`."""
    if action == "settle":
        sql = "SELECT listing_id FROM listings WHERE status = 'committed' AND notice_ends_at <= ?"
    else:
        sql = "SELECT listing_id FROM listings WHERE status = 'listed' AND expires_at <= ?"
    return [int(r[0]) for r in _rows(conn, sql + " ORDER BY listing_id LIMIT ?", (chain_now, limit))]


# ---- handovers and assets ------------------------------------------------------------------------


@dataclass(frozen=True)
class HandoverRow:
    listing_id: str
    agent_uuid: str
    seller_account: str
    holding_account: str
    estate_agent_uuid: str | None
    moved_owner: int
    moved_self: int
    moved_reinvested: int
    buyer_address: str
    settle_tx: str
    claimed_by: str | None
    claimed_account: str | None
    claimed_at: float | None
    created_at: float


_HANDOVER_COLS = (
    "listing_id, agent_uuid, seller_account, holding_account, estate_agent_uuid, moved_owner, moved_self,"
    " moved_reinvested, buyer_address, settle_tx, claimed_by, claimed_account, claimed_at, created_at"
)


def insert_handover(conn: apsw.Connection, h: HandoverRow) -> None:
    conn.execute(
        f"INSERT INTO drop_handovers ({_HANDOVER_COLS}) VALUES (?, ?, ?, ?, ?, ?, ?, ?, ?, ?, ?, ?, ?, ?)",  # noqa: S608
        (
            h.listing_id,
            h.agent_uuid,
            h.seller_account,
            h.holding_account,
            h.estate_agent_uuid,
            h.moved_owner,
            h.moved_self,
            h.moved_reinvested,
            h.buyer_address,
            h.settle_tx,
            h.claimed_by,
            h.claimed_account,
            h.claimed_at,
            h.created_at,
        ),
    )


def latest_handover(conn: apsw.Connection, agent_uuid: str) -> HandoverRow | None:
    rows = _rows(
        conn,
        f"SELECT {_HANDOVER_COLS} FROM drop_handovers WHERE agent_uuid = ? ORDER BY created_at DESC LIMIT 1",  # noqa: S608
        (agent_uuid,),
    )
    return HandoverRow(*rows[0]) if rows else None


def handover_of(conn: apsw.Connection, listing_id: str) -> HandoverRow | None:
    rows = _rows(conn, f"SELECT {_HANDOVER_COLS} FROM drop_handovers WHERE listing_id = ?", (listing_id,))  # noqa: S608
    return HandoverRow(*rows[0]) if rows else None


def claim_handover(conn: apsw.Connection, listing_id: str, claimed_by: str, account: str, now: float) -> bool:
    """Mark the handover claimed (once); False when it already was."""
    conn.execute(
        "UPDATE drop_handovers SET claimed_by = ?, claimed_account = ?, claimed_at = ? WHERE listing_id = ?"
        " AND claimed_at IS NULL",
        (claimed_by, account, now, listing_id),
    )
    return bool(conn.changes())


def move_agent(conn: apsw.Connection, agent_uuid: str, account_id: str) -> None:
    """The agent (its wallet, memory, brain, ledger history) now belongs to `account_id`; the agent-scoped
    keys of its previous account are deleted (they could no longer act for it anyway)."""
    conn.execute(
        "DELETE FROM api_keys WHERE agent_id = ? AND account_id != ?",
        (agent_uuid, account_id),
    )
    conn.execute("UPDATE wallet_agents SET account_id = ? WHERE uuid = ?", (account_id, agent_uuid))


@dataclass(frozen=True)
class AssetRow:
    cid: str
    origin_agent: str
    holder_agent: str
    transferred_with_nft: bool
    order_id: str | None
    size: int | None


def assets_of(conn: apsw.Connection, agent_uuid: str) -> list[AssetRow]:
    """What the agent holds: the deliverables of its orders (transferred_with_nft true unless flagged
    otherwise; none retained by an estate at a sale) and the assets it holds from others."""
    produced = _rows(
        conn,
        "SELECT o.deliverable_cid, f.holder_agent, f.transferred_with_nft, o.id, i.size FROM orders o"
        " LEFT JOIN drop_assets f ON f.origin_agent = o.provider_uuid AND f.cid = o.deliverable_cid"
        " LEFT JOIN ipfs_objects i ON i.cid = o.deliverable_cid"
        " WHERE o.provider_uuid = ? AND o.deliverable_cid IS NOT NULL ORDER BY o.created_at, o.id",
        (agent_uuid,),
    )
    out: dict[str, AssetRow] = {}
    for cid, holder, flag, order_id, size in produced:
        if holder is not None and holder != agent_uuid:
            continue
        if cid not in out:
            out[cid] = AssetRow(
                cid,
                agent_uuid,
                agent_uuid,
                True if flag is None else bool(flag),
                order_id,
                None if size is None else int(size),
            )
    held = _rows(
        conn,
        "SELECT f.cid, f.origin_agent, f.transferred_with_nft, i.size FROM drop_assets f"
        " LEFT JOIN ipfs_objects i ON i.cid = f.cid WHERE f.holder_agent = ? AND f.origin_agent != ?"
        " ORDER BY f.cid",
        (agent_uuid, agent_uuid),
    )
    for cid, origin, flag, size in held:
        out.setdefault(cid, AssetRow(cid, origin, agent_uuid, bool(flag), None, None if size is None else int(size)))
    return list(out.values())


def produced_cid(conn: apsw.Connection, agent_uuid: str, cid: str) -> bool:
    return bool(
        _rows(conn, "SELECT 1 FROM orders WHERE provider_uuid = ? AND deliverable_cid = ? LIMIT 1", (agent_uuid, cid))
    )


def set_asset_flag(conn: apsw.Connection, agent_uuid: str, cid: str, transferred: bool, now: float) -> None:
    conn.execute(
        "INSERT INTO drop_assets (origin_agent, cid, holder_agent, transferred_with_nft, updated_at)"
        " VALUES (?, ?, ?, ?, ?) ON CONFLICT (origin_agent, cid) DO UPDATE SET"
        " transferred_with_nft = excluded.transferred_with_nft, updated_at = excluded.updated_at",
        (agent_uuid, cid, agent_uuid, int(transferred), now),
    )


def retain_assets(conn: apsw.Connection, agent_uuid: str, estate_uuid: str, now: float) -> int:
    """At a handover: the assets flagged not transferred_with_nft go to the seller's estate wallet."""
    conn.execute(
        "UPDATE drop_assets SET holder_agent = ?, updated_at = ? WHERE holder_agent = ? AND transferred_with_nft = 0",
        (estate_uuid, now, agent_uuid),
    )
    return int(conn.changes())


def retained_count(conn: apsw.Connection, agent_uuid: str) -> int:
    return int(
        _rows(
            conn,
            "SELECT COUNT(*) FROM drop_assets WHERE holder_agent = ? AND transferred_with_nft = 0",
            (agent_uuid,),
        )[0][0]
    )


# ---- reads of other features' tables -------------------------------------------------------------


@dataclass(frozen=True)
class TokenRow:
    token_id: int
    wallet_id: str
    owner: str
    self_wallet: str
    paused: bool
    seller_while_paused: str | None
    lifetime_earnings: int
    referrer_token_id: int | None


def token_row(conn: apsw.Connection, token_id: int) -> TokenRow | None:
    rows = _rows(
        conn,
        "SELECT token_id, wallet_id, owner, self_wallet, paused, seller_while_paused, lifetime_earnings,"
        " referrer_token_id FROM agents WHERE token_id = ? LIMIT 1",
        (token_id,),
    )
    return _token(rows[0]) if rows else None


def _token(r: tuple[Any, ...]) -> TokenRow:
    earnings = r[6]
    return TokenRow(
        int(r[0]),
        r[1],
        r[2],
        r[3],
        bool(r[4]),
        r[5],
        int(earnings, 16) if isinstance(earnings, str) else int(earnings),
        None if r[7] is None else int(r[7]),
    )


def sale_paused(conn: apsw.Connection, agent_uuid: str, wallet: str) -> str | None:
    """Why the agent is paused for a sale ('settling', 'listed'), or None: a live listing here, or its
    NFT paused on-chain (listed without telling the service)."""
    rows = _rows(
        conn,
        "SELECT state FROM drop_listings WHERE agent_uuid = ? AND state IN ('active', 'settling')"
        " ORDER BY state = 'settling' DESC LIMIT 1",
        (agent_uuid,),
    )
    if rows:
        return "settling" if rows[0][0] == "settling" else "listed"
    if _rows(conn, "SELECT 1 FROM agents WHERE wallet_id = ? AND paused = 1 LIMIT 1", (wallet,)):
        return "listed"
    return None


@dataclass(frozen=True)
class Reputation:
    orders_released: int
    orders_failed: int
    orders_disputed: int
    onchain_payouts: int
    decisions_logged: int


def reputation(conn: apsw.Connection, agent_uuid: str, token_id: int) -> Reputation:
    released, failed, disputed = _rows(
        conn,
        "SELECT COUNT(*) FILTER (WHERE status = 'released'), COUNT(*) FILTER (WHERE status = 'failed'),"
        " COUNT(*) FILTER (WHERE status = 'disputed') FROM orders WHERE provider_uuid = ?",
        (agent_uuid,),
    )[0]
    payouts = _rows(conn, "SELECT COUNT(*) FROM payouts WHERE token_id = ?", (token_id,))[0][0]
    decisions = _rows(conn, "SELECT COUNT(*) FROM audit_log WHERE stream = ?", (f"agent:{agent_uuid}",))[0][0]
    return Reputation(int(released), int(failed), int(disputed), int(payouts), int(decisions))


def memory_digest_rows(conn: apsw.Connection, agent_uuid: str) -> list[tuple[str, str]]:
    """(key, value) of every memory entry of the agent, in key order (the bundle hashes them)."""
    return [
        (str(k), str(v))
        for k, v in _rows(conn, "SELECT key, value FROM memories WHERE agent_uuid = ? ORDER BY key", (agent_uuid,))
    ]


def final_block(conn: apsw.Connection, chain_id: int) -> int:
    rows = _rows(conn, "SELECT finalized_number FROM sync_state WHERE chain_id = ?", (chain_id,))
    return int(rows[0][0]) if rows else -1
