"""Notices of the marketplace, written through the outbox in the transaction of the change they
announce: e-mails (the e-mail channel) and `listing.state_changed` webhooks.

Who is told what:
- the seller (the listing's sellerEmail): each offer, and the settlement;
- the buyer (the sale's buyerEmail): the settlement, with how to claim the agent;
- the agent's stakers, when it is listed and when a buyer commits. Stakers are: the agent's
  referrer (the account that owns the referring agent, at the e-mail its key was issued for),
  the holders of open offers on the listing that gave an e-mail, and everyone who watches the
  agent (POST /api/a2a/drop/watch, by e-mail or webhook);
- webhook watchers: every state change of the agent's listings (`listing.state_changed`).

An address that used its unsubscribe link gets nothing more; each address is told once per notice.
"""

from __future__ import annotations

import html
import secrets
from typing import Any

from core import egress
from core.isotime import iso_utc
from core.keys import Caller
from core.marketplace import rules
from core.marketplace.context import Market, Notices
from core.money import usdc_text
from core.outbox import enqueue_webhook
from core.outbox.email import enqueue_email
from core.store import Conn
from core.store import marketplace as store
from core.store import wallets as wallet_store
from core.store.marketplace import ListingRow, SaleRow, WatchRow
from core.store.wallets import AgentRow


def email(
    conn: Conn,
    n: Notices,
    listing: ListingRow,
    *,
    to: str,
    event: str,
    subject: str,
    lines: list[str],
    now: float,
) -> str | None:
    """Queue one e-mail about `listing` (plain text and the same lines as HTML, after the line that names
    the agent and the listing) unless `to` unsubscribed; its event id."""
    lines = [f"Agent {listing.wallet} (token #{listing.token_id}), listing {listing.id}.", *lines]
    address = to.lower()
    token, unsubscribed = store.recipient_token(conn, address, secrets.token_urlsafe(24), now)
    if unsubscribed:
        return None
    link = n.unsubscribe_url(token)
    text = "\n\n".join(lines) + f"\n\n--\nagentledger drop. Stop these e-mails: {link}\n"
    body = "".join(f"<p>{html.escape(line)}</p>" for line in lines)
    page = (
        f'<!doctype html><html><body>{body}<hr><p style="font-size:small">agentledger drop. '
        f'<a href="{html.escape(link)}">Unsubscribe</a></p></body></html>'
    )
    return enqueue_email(
        conn,
        event=event,
        source=f"listing:{listing.id}",
        to=address,
        sender=n.sender,
        subject=subject,
        text=text,
        html=page,
        unsubscribe_url=link,
        now=now,
    )


def staker_emails(conn: Conn, listing: ListingRow) -> list[str]:
    """The stakers' e-mail addresses (lower case, each once): referrer, open offers, watchers."""
    found: list[str] = []
    agent = wallet_store.agent_by_uuid(conn, listing.agent_uuid)
    if agent is not None and agent.referred_by is not None:
        referrer = wallet_store.agent_by_uuid(conn, agent.referred_by)
        address = None if referrer is None else store.account_email(conn, referrer.account_id)
        if address:
            found.append(address)
    for o in store.offers_of(conn, listing.id):
        if o.state != "cancelled" and o.buyer_email:  # open, or just closed by the commit it hears of
            found.append(o.buyer_email)
    for w in store.watches_of(conn, listing.agent_uuid):
        if w.email:
            found.append(w.email)
    seen: set[str] = set()
    out = []
    for a in found:
        if a.lower() not in seen:
            seen.add(a.lower())
            out.append(a.lower())
    return out


def state_changed(
    conn: Conn,
    n: Notices,
    listing: ListingRow,
    previous: str | None,
    state: str,
    now: float,
    *,
    tx_hash: str | None = None,
    reason: str | None = None,
) -> None:
    """`listing.state_changed` to every webhook watcher of the agent."""
    payload: dict[str, Any] = {
        "event": rules.WEBHOOK_EVENT,
        "listing_id": listing.id,
        "chain_listing_id": listing.chain_listing_id,
        "agent_id": listing.wallet,
        "token_id": listing.token_id,
        "status": state,
        "timestamp": iso_utc(now),
        "metadata": {"from_state": previous, "to_state": state, "tx_hash": tx_hash, "reason": reason},
    }
    for w in store.watches_of(conn, listing.agent_uuid):
        if w.webhook_url and w.webhook_secret:
            enqueue_webhook(
                conn,
                event=rules.WEBHOOK_EVENT,
                source=f"listing:{listing.id}",
                url=w.webhook_url,
                secret=w.webhook_secret,
                payload=payload,
                now=now,
            )


def listed(conn: Conn, n: Notices, listing: ListingRow, now: float) -> None:
    for to in staker_emails(conn, listing):
        email(
            conn,
            n,
            listing,
            to=to,
            event="drop.listed",
            subject=f"Agent {listing.wallet} is listed for sale",
            lines=[
                f"Asking price {usdc_text(listing.asking_price)} USDC; offers from "
                f"{usdc_text(listing.floor_price)} USDC"
                + (" are taken." if listing.accept_offers else " only at the asking price."),
                f"Listing ends {iso_utc(listing.expires_at)}. Details: {n.listing_url(listing.id)}",
            ],
            now=now,
        )


def committed(conn: Conn, n: Notices, listing: ListingRow, sale: SaleRow, now: float) -> None:
    for to in staker_emails(conn, listing):
        email(
            conn,
            n,
            listing,
            to=to,
            event="drop.committed",
            subject=f"A buyer committed to agent {listing.wallet}",
            lines=[
                f"{sale.buyer_address} committed {usdc_text(sale.price)} USDC"
                + (" (an accepted offer)." if sale.via_offer else " (buy now)."),
                f"The sale settles after the notice window, {iso_utc(sale.notice_ends_at)}.",
                f"Due-diligence bundle SHA-256 {sale.bundle_sha256} (audit entry {sale.bundle_audit_id}).",
            ],
            now=now,
        )


def offer_received(
    conn: Conn, n: Notices, listing: ListingRow, buyer: str, price: int, deadline: int, now: float
) -> None:
    if not listing.seller_email:
        return
    email(
        conn,
        n,
        listing,
        to=listing.seller_email,
        event="drop.offer",
        subject=f"New offer of {usdc_text(price)} USDC for agent {listing.wallet}",
        lines=[
            f"{buyer} offers {usdc_text(price)} USDC, valid until {iso_utc(deadline)}.",
            "Accept it on-chain with acceptOffer (the offer and its signature are in the listing), then POST "
            f"/api/a2a/drop/accept. Listing: {n.listing_url(listing.id)}",
        ],
        now=now,
    )


def settled(conn: Conn, n: Notices, listing: ListingRow, sale: SaleRow, estate: str | None, now: float) -> None:
    if listing.seller_email:
        lines = [
            f"Sold to {sale.buyer_address} for {usdc_text(sale.price)} USDC: {usdc_text(sale.seller_proceeds)} "
            f"USDC went to {listing.seller_address}, the service fee was {usdc_text(sale.service_fee)} USDC.",
            "Your keys no longer act for this agent.",
        ]
        if estate:
            lines.append(f"The agent's balance earned before the sale is yours, in your wallet {estate}.")
        email(
            conn,
            n,
            listing,
            to=listing.seller_email,
            event="drop.settled",
            subject=f"Agent {listing.wallet} is sold",
            lines=lines,
            now=now,
        )
    if sale.buyer_email:
        email(
            conn,
            n,
            listing,
            to=sale.buyer_email,
            event="drop.settled",
            subject=f"Agent {listing.wallet} is yours: claim it",
            lines=[
                f"The NFT is now owned by {sale.buyer_address}. Claim the agent with POST /api/a2a/drop/claim and "
                "an EIP-191 signature of that address; you get its API key once.",
                "Its self wallet was reset on the transfer: set a new one with AgentRegistry.setSelfWallet.",
            ],
            now=now,
        )


async def add_watch(
    m: Market, caller: Caller, agent: AgentRow, address: str | None, webhook_url: str | None
) -> WatchRow:
    """The caller's watch of `agent`: e-mails to `address`, or listing.state_changed webhooks to
    `webhook_url` (SSRF rules; its secret made here). Held by the key's agent; by the watched agent
    when an account key watches one of its own (so that agent's key reaches it and its siblings' do
    not); else by the account (core.keys.Caller.reach)."""
    secret = None
    if webhook_url is not None:
        await egress.check_webhook_url(webhook_url, m.services.allow_private, "webhookUrl")
        secret = egress.new_secret()
    holder = caller.agent_id or (agent.uuid if agent.account_id == caller.account_id else None)
    row = WatchRow(
        "wat_" + secrets.token_hex(12), agent.uuid, caller.account_id, address, webhook_url, secret, m.clock(), holder
    )
    await m.writer.run(lambda conn: store.insert_watch(conn, row))
    return row
