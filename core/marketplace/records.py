"""The marketplace's transactions (store + audit + outbox, inside the caller's transaction), shared by
the routes (from a verified receipt) and the follower (from a final event): record a listing, a
buyer's commit with its due-diligence bundle, an end; revert what a reorg removed."""

from __future__ import annotations

import logging
import uuid
from typing import Any

from core import audit
from core.errors import ServiceError
from core.isotime import iso_utc
from core.marketplace import notices, rules
from core.marketplace.context import Notices
from core.store import Conn
from core.store import audit as audit_store
from core.store import marketplace as store
from core.store import wallets as wallet_store
from core.store.marketplace import AssetRow, ListingRow, SaleRow
from core.store.wallets import AgentRow

log = logging.getLogger("agentledger.drop")

DUE_DILIGENCE = "drop_due_diligence"
LISTED = "drop_listed"
SALE_REVERTED = "drop_sale_reverted"
HANDOVER = "drop_handover"


def append_audit(conn: Conn, listing_uuid: str, kind: str, payload: dict[str, Any], now: float) -> int:
    """One entry of the listing's audit stream (chain rule: SHA-256(prev_hash || RFC 8785 payload))."""
    entry = audit.append(
        conn,
        stream=rules.listing_stream(listing_uuid),
        kind=kind,
        payload={"kind": kind, **payload},
        chain=audit.order_rule,
        now=now,
    )
    return entry.id


def insert_listing(
    conn: Conn,
    *,
    chain_listing_id: int,
    agent: wallet_store.AgentRow,
    token_id: int,
    seller: str,
    asking: int,
    floor: int,
    earnings: int,
    accept_offers: bool,
    seller_email: str | None,
    state: str,
    expires_at: int,
    list_tx: str,
    list_block: int,
    confirmed: bool,
    now: float,
) -> ListingRow:
    row = ListingRow(
        id=str(uuid.uuid4()),
        chain_listing_id=chain_listing_id,
        agent_uuid=agent.uuid,
        token_id=token_id,
        seller_account=agent.account_id,
        seller_address=seller,
        asking_price=asking,
        floor_price=floor,
        earnings_at_listing=earnings,
        accept_offers=accept_offers,
        seller_email=seller_email,
        state=state,
        expires_at=expires_at,
        list_tx=list_tx,
        list_block=list_block,
        confirmed=confirmed,
        end_tx=None,
        created_at=now,
        updated_at=now,
        wallet=agent.wallet,
    )
    store.insert_listing(conn, row)
    append_audit(
        conn,
        row.id,
        LISTED,
        {
            "listing_id": row.id,
            "chain_listing_id": chain_listing_id,
            "agent_id": agent.wallet,
            "token_id": token_id,
            "seller": seller,
            "asking_price": str(asking),
            "floor_price": str(floor),
            "earnings_at_listing": str(earnings),
            "list_tx": list_tx,
        },
        now,
    )
    return row


# ---- the due-diligence bundle -----------------------------------------------------------------------


def build_bundle(
    conn: Conn,
    chain_id: int,
    listing: ListingRow,
    *,
    buyer: str,
    price: int,
    via_offer: bool,
    commit_tx: str,
    notice_ends_at: int,
    now: float,
) -> dict[str, Any]:
    """What the buyer commits to, as the service knows it at the commit: earnings, reputation, the
    audit log's head (tree size and root, the agent's decision-log head), the asset manifest and a
    digest of the agent's memory. Amounts are micro-USDC as decimal strings."""
    balance = wallet_store.get_balance(conn, listing.agent_uuid)
    token = store.token_row(conn, listing.token_id)
    onchain = token.lifetime_earnings if token is not None else 0
    rep = store.reputation(conn, listing.agent_uuid, listing.token_id)
    size = audit_store.size(conn)
    root = audit_store.root(conn, size).hex() if size else None
    head = audit_store.stream_head(conn, audit.agent_stream(listing.agent_uuid))
    memory = store.memory_digest_rows(conn, listing.agent_uuid)
    assets = store.assets_of(conn, listing.agent_uuid)
    return {
        "version": 1,
        "chain_id": chain_id,
        "listing": {
            "id": listing.id,
            "chain_listing_id": listing.chain_listing_id,
            "agent_id": listing.wallet,
            "agent_uuid": listing.agent_uuid,
            "token_id": listing.token_id,
            "seller": listing.seller_address,
            "asking_price": str(listing.asking_price),
            "floor_price": str(listing.floor_price),
        },
        "sale": {
            "buyer": buyer,
            "price": str(price),
            "via_offer": via_offer,
            "commit_tx": commit_tx,
            "notice_ends_at": notice_ends_at,
        },
        "earnings": {
            "total_earned_reported": str(balance.total_earned),
            "lifetime_onchain": str(onchain),
            "lifetime": str(balance.total_earned + onchain),
            "at_listing": str(listing.earnings_at_listing),
            "transactions": balance.tx_count,
        },
        "reputation": {
            "orders_released": rep.orders_released,
            "orders_failed": rep.orders_failed,
            "orders_disputed": rep.orders_disputed,
            "onchain_payouts": rep.onchain_payouts,
            "decisions_logged": rep.decisions_logged,
        },
        "audit": {
            "tree_size": size,
            "root": root,
            "decision_log": None if head is None else {"seq": head[0], "chain_hash": head[1]},
        },
        "assets": [
            {"cid": a.cid, "transferred_with_nft": a.transferred_with_nft, "size": a.size, "order_id": a.order_id}
            for a in assets
        ],
        "memory": {"entries": len(memory), "sha256": rules.memory_digest(memory)},
        "created_at": iso_utc(now),
    }


def record_sale(
    conn: Conn,
    chain_id: int,
    listing: ListingRow,
    *,
    buyer: str,
    price: int,
    via_offer: bool,
    offer_nonce: int,
    commit_tx: str,
    commit_block: int,
    notice_ends_at: int,
    buyer_email: str | None,
    buyer_account: str | None,
    confirmed: bool,
    now: float,
) -> SaleRow:
    """A buyer's commit: the due-diligence bundle hashed into the listing's audit stream, the sale,
    the listing settling, the offer book updated (the accepted offer, its nonce used everywhere, the
    rest closed). Call with no live sale on the listing."""
    bundle = build_bundle(
        conn,
        chain_id,
        listing,
        buyer=buyer,
        price=price,
        via_offer=via_offer,
        commit_tx=commit_tx,
        notice_ends_at=notice_ends_at,
        now=now,
    )
    text, digest = rules.bundle_hash(bundle)
    sale_id = str(uuid.uuid4())
    audit_id = append_audit(
        conn,
        listing.id,
        DUE_DILIGENCE,
        {"sale_id": sale_id, "bundle_sha256": digest, "commit_tx": commit_tx, "buyer": buyer, "price": str(price)},
        now,
    )
    offer_id = None
    if via_offer:
        offer = store.find_offer(conn, listing.id, buyer, offer_nonce)
        if offer is not None:
            offer_id = offer.id
            store.set_offer_state(conn, offer.id, "accepted", now)
        store.set_nonce_state(conn, buyer, offer_nonce, "nonce_used", now)
    store.close_open_offers(conn, listing.id, now)
    proceeds, fee = rules.sale_split(price)
    sale = SaleRow(
        id=sale_id,
        listing_id=listing.id,
        buyer_address=buyer,
        price=price,
        seller_proceeds=proceeds,
        service_fee=fee,
        via_offer=via_offer,
        offer_id=offer_id,
        buyer_email=buyer_email,
        buyer_account=buyer_account,
        commit_tx=commit_tx,
        commit_block=commit_block,
        notice_ends_at=notice_ends_at,
        state="committed",
        confirmed=confirmed,
        bundle=text,
        bundle_sha256=digest,
        bundle_audit_id=audit_id,
        settle_tx=None,
        created_at=now,
        updated_at=now,
    )
    store.insert_sale(conn, sale)
    store.set_listing_state(conn, listing.id, rules.SETTLING, now)
    return sale


def end_listing(
    conn: Conn,
    n: Notices,
    listing: ListingRow,
    state: str,
    tx_hash: str | None,
    now: float,
    reason: str,
    *,
    notify: bool = True,
) -> None:
    """The listing ended (cancelled, expired, void): offers closed; watchers told when `notify` (the
    follower's final event and the reconciler do; a route recording a receipt leaves that to them)."""
    previous = rules.ACTIVE if listing.state == state else listing.state
    store.set_listing_state(conn, listing.id, state, now, end_tx=tx_hash)
    store.close_open_offers(conn, listing.id, now)
    if notify:
        notices.state_changed(conn, n, listing, previous, state, now, tx_hash=tx_hash, reason=reason)


def revert_sale(conn: Conn, listing: ListingRow, sale: SaleRow, now: float, reason: str) -> None:
    """A commit the chain no longer has (a reorg removed it): the sale is `reorged`, provably."""
    store.set_sale(conn, sale.id, now, state="reorged")
    append_audit(
        conn,
        listing.id,
        SALE_REVERTED,
        {"sale_id": sale.id, "commit_tx": sale.commit_tx, "reason": reason},
        now,
    )
    log.warning("listing %s: sale %s (%s) reverted: %s", listing.id, sale.id, sale.commit_tx, reason)


def flag_asset(conn: Conn, agent: AgentRow, cid: str, transferred: bool, now: float) -> list[AssetRow]:
    """Set whether the deliverable `cid` of `agent` goes with its NFT; the manifest is frozen once a
    buyer committed (409 agent_settling). Answers the agent's manifest."""
    if store.sale_paused(conn, agent.uuid, agent.wallet) == "settling":
        raise ServiceError(409, "agent_settling", "a buyer committed to the asset manifest: it is frozen")
    if not store.produced_cid(conn, agent.uuid, cid):
        raise ServiceError(404, "asset_not_found", f"agent {agent.wallet} produced no deliverable {cid}", param="cid")
    store.set_asset_flag(conn, agent.uuid, cid, transferred, now)
    return store.assets_of(conn, agent.uuid)
