"""What sellers and buyers do on the marketplace, behind its routes: mint on demand, the earnings
statement a listing needs, and recording a listing, an offer, a buyer's commit and a cancel, each
from a transaction verified on-chain first (its receipt, the event it must hold, sent by the right
party). Recording is idempotent (a transaction is recorded once, a second call answers the same
record); the follower moves the state on final events.
"""

from __future__ import annotations

import asyncio
import logging
import secrets
import uuid
from dataclasses import dataclass
from typing import Any

from web3 import Web3

from core import agents_onchain, errors, signatures
from core.errors import ServiceError
from core.keys import Caller
from core.marketplace import notices, records, rules
from core.marketplace.context import Market
from core.operator import USDC, ChainUnavailable, ContractReverted
from core.store import Conn
from core.store import marketplace as store
from core.store import wallets as wallet_store
from core.store.marketplace import ListingRow, OfferRow, SaleRow
from core.store.wallets import AgentRow

log = logging.getLogger("agentledger.drop")

#: At most this many offers are checked on-chain when a listing is shown (the rest: fillable null).
MAX_CHECKED_OFFERS = 50


# ---- chain reads --------------------------------------------------------------------------------


async def _receipt(m: Market, tx_hash: str) -> dict[str, Any]:
    try:
        receipt = await m.operator.receipt_of(tx_hash)
    except ChainUnavailable as exc:
        log.warning("chain node unavailable: %s", exc)
        raise errors.chain_unavailable() from exc
    if receipt is None:
        raise ServiceError(
            422,
            "tx_not_found",
            f"transaction {tx_hash} is not mined (yet): send it again once it is",
            param="txHash",
            replayable=False,
        )
    if receipt.get("status") != 1:
        raise ServiceError(422, "tx_failed", f"transaction {tx_hash} reverted", param="txHash")
    return receipt


def _events(m: Market, receipt: dict[str, Any], name: str, listing_id: int | None = None) -> list[dict[str, Any]]:
    """The `name` events the marketplace itself emitted in `receipt` (for `listing_id` when given)."""
    out = []
    for ev in m.operator.events(receipt, "AgentMarketplace", name):
        if Web3.to_checksum_address(ev["address"]) != m.marketplace:
            continue
        args = dict(ev["args"])
        if listing_id is None or int(args.get("listingId", -1)) == listing_id:
            out.append(args)
    return out


def _sender(receipt: dict[str, Any]) -> str:
    return Web3.to_checksum_address(receipt["from"])


async def _call(m: Market, contract: str, fn: str, *args: Any) -> Any:
    return await agents_onchain.chain_call(m.operator, contract, fn, *args)


async def chain_now(m: Market) -> int:
    try:
        return await m.operator.block_timestamp()
    except ChainUnavailable as exc:
        log.warning("chain node unavailable: %s", exc)
        raise errors.chain_unavailable() from exc


def _tx_hash(receipt: dict[str, Any]) -> str:
    h = receipt["transactionHash"]
    return h.lower() if isinstance(h, str) else "0x" + bytes(h).hex()


# ---- mint on demand ----------------------------------------------------------------------------


async def mint(
    m: Market, agent: AgentRow, *, owner: str, self_wallet: str, timestamp: int, signature: str
) -> tuple[int, str | None, bool]:
    """The agent's NFT, minted now if it has none: (token id, mint tx or None, minted now). The self
    wallet consents with an EIP-191 signature of rules.mint_message (the provider link's saga)."""
    owner, self_wallet = Web3.to_checksum_address(owner), Web3.to_checksum_address(self_wallet)
    async with m.mint_lock:
        token, _ = await agents_onchain.existing_token(m.operator, agent.wallet)
        if token is not None:
            return token, None, False
        signatures.require_in_window(timestamp, m.clock())
        message = rules.mint_message(
            chain_id=m.chain_id, wallet=agent.wallet, self_wallet=self_wallet, owner=owner, timestamp=timestamp
        )
        signatures.require_signer(message, signature, self_wallet)
        referrer = None
        referred_by = agent.referred_by
        if referred_by is not None:
            ref = await m.reads.run(lambda db: wallet_store.agent_by_uuid(db, referred_by))
            if ref is not None:
                referrer, _ = await agents_onchain.existing_token(m.operator, ref.wallet)
        token, mint_tx = await agents_onchain.mint(m.operator, agent.wallet, self_wallet, owner, referrer)
        return token, mint_tx, mint_tx is not None


# ---- listing -------------------------------------------------------------------------------------


@dataclass(frozen=True)
class Statement:
    """An operator-signed EarningsStatement (the contract's struct and its signature) and the figures
    beside it: micro-USDC the registry records on-chain, the floor's minimum if listed now."""

    token_id: int
    seller: str
    reported: int
    nonce: int
    deadline: int
    signature: str
    onchain: int
    minimum_floor: int


async def earnings_statement(m: Market, agent: AgentRow, *, seller: str) -> Statement:
    """The operator-signed EarningsStatement `seller` passes to AgentMarketplace.list for `agent`'s NFT:
    the agent's reported earnings (the contract adds the registry's own to check the floor), good for
    one listing within rules.STATEMENT_SECONDS of chain time. Refused: an agent without an NFT (404
    agent_not_minted), a seller that does not own it (403 not_nft_owner)."""
    seller = Web3.to_checksum_address(seller)
    token, _ = await agents_onchain.existing_token(m.operator, agent.wallet)
    if token is None:
        raise ServiceError(
            404, "agent_not_minted", f"agent {agent.wallet} has no NFT: mint it first (POST /mint)", param="agentId"
        )
    owner, onchain, now_chain = await asyncio.gather(
        _call(m, "AgentRegistry", "ownerOf", token),
        _call(m, "AgentRegistry", "lifetimeEarningsOf", token),
        chain_now(m),
    )
    if Web3.to_checksum_address(owner) != seller:
        raise ServiceError(
            403,
            "not_nft_owner",
            f"{seller} does not own agent token #{token} (its owner is {owner})",
            param="sellerAddress",
        )
    reported = await m.reads.run(lambda db: wallet_store.get_balance(db, agent.uuid).total_earned)
    nonce, deadline = int.from_bytes(secrets.token_bytes(32), "big"), now_chain + rules.STATEMENT_SECONDS
    typed = rules.earnings_statement_typed_data(
        chain_id=m.chain_id,
        marketplace=m.marketplace,
        token_id=token,
        seller=seller,
        reported=reported,
        nonce=nonce,
        deadline=deadline,
    )
    return Statement(
        token_id=token,
        seller=seller,
        reported=reported,
        nonce=nonce,
        deadline=deadline,
        signature=m.operator.sign_typed_data(typed),
        onchain=int(onchain),
        minimum_floor=rules.minimum_floor(reported + int(onchain)),
    )


async def record_listing(
    m: Market, agent: AgentRow, *, tx_hash: str, asking: int, accept_offers: bool, seller_email: str | None
) -> tuple[ListingRow, bool]:
    """Record the on-chain listing `tx_hash` of `agent`; (listing, created). Refused: a transaction
    without the agent's Listed event (422 listed_event_missing / wrong_agent), another asking price
    (422 asking_price_mismatch). The floor needs no check here: the contract refused any floor under
    25% of the lifetime earnings the operator's EarningsStatement and the registry gave it."""
    receipt = await _receipt(m, tx_hash)
    found = _events(m, receipt, "Listed")
    if len(found) != 1:
        raise ServiceError(
            422, "listed_event_missing", f"{tx_hash} holds no AgentMarketplace.Listed event", param="txHash"
        )
    ev = found[0]
    chain_listing_id, token_id = int(ev["listingId"]), int(ev["tokenId"])
    token, _ = await agents_onchain.existing_token(m.operator, agent.wallet)
    if token != token_id:
        raise ServiceError(
            422, "wrong_agent", f"{tx_hash} lists token #{token_id}, not agent {agent.wallet}", param="txHash"
        )
    seller = Web3.to_checksum_address(ev["seller"])
    if _sender(receipt) != seller:
        raise ServiceError(403, "wrong_sender", f"{tx_hash} was not sent by the seller {seller}", param="txHash")
    if int(ev["askingPrice"]) != asking:
        raise ServiceError(
            422,
            "asking_price_mismatch",
            f"the listing asks {int(ev['askingPrice'])} micro-USDC on-chain, not {asking}",
            param="askingPriceUsdc",
        )
    floor, lifetime = int(ev["floorPrice"]), int(ev["earningsAtListing"])
    if max(asking, floor, lifetime) > 2**63 - 1:
        raise ServiceError(
            422, "amount_too_large", "prices or lifetime earnings beyond int64 are not recorded", param="txHash"
        )
    onchain = await _call(m, "AgentMarketplace", "getListing", chain_listing_id)
    state = rules.CHAIN_STATUS.get(int(onchain[2]), rules.ACTIVE)
    now, block = m.clock(), int(receipt["blockNumber"])

    def work(conn: Conn) -> tuple[ListingRow, bool]:
        existing = store.listing_by_chain_id(conn, chain_listing_id)
        if existing is not None:
            if existing.agent_uuid != agent.uuid:
                raise ServiceError(
                    409, "listing_of_other_agent", "that listing belongs to another agent", param="txHash"
                )
            store.set_listing_terms(conn, existing.id, accept_offers, seller_email, now)
            row = store.get_listing(conn, existing.id)
            assert row is not None
            return row, False
        row = records.insert_listing(
            conn,
            chain_listing_id=chain_listing_id,
            agent=agent,
            token_id=token_id,
            seller=seller,
            asking=asking,
            floor=floor,
            earnings=lifetime,
            accept_offers=accept_offers,
            seller_email=seller_email,
            state=state,
            expires_at=int(ev["expiresAt"]),
            list_tx=_tx_hash(receipt),
            list_block=block,
            confirmed=False,
            now=now,
        )
        return row, True

    return await m.writer.run(work)


# ---- offers --------------------------------------------------------------------------------------


def _open_listing(conn: Conn, listing_uuid: str) -> ListingRow:
    listing = store.get_listing(conn, listing_uuid)
    if listing is None or listing.state == rules.VOID:
        raise ServiceError(404, "listing_not_found", f"no listing {listing_uuid}", param="listingId")
    return listing


async def record_offer(
    m: Market,
    caller: Caller,
    *,
    listing_uuid: str,
    price: int,
    buyer: str,
    nonce: int,
    deadline: int,
    signature: str,
    buyer_email: str | None,
) -> OfferRow:
    """An offer into the book, checked: the listing takes it (active; at or above the floor; below the
    asking price only with acceptOffers), it is the buyer's own EIP-712 signature of the contract's
    Offer, it has not expired, its nonce is unused, the buyer's USDC balance and allowance cover it."""
    listing = await m.reads.run(lambda db: _open_listing(db, listing_uuid))
    buyer = _offer_terms(listing, price, buyer)
    _offer_signed(m, listing, buyer=buyer, price=price, nonce=nonce, deadline=deadline, signature=signature)
    await _offer_funded(m, buyer=buyer, price=price, nonce=nonce, deadline=deadline)
    now = m.clock()
    offer = OfferRow(
        id=str(uuid.uuid4()),
        listing_id=listing_uuid,
        buyer_address=buyer,
        price=price,
        nonce=nonce,
        deadline=deadline,
        signature=signature,
        buyer_email=buyer_email,
        buyer_account=caller.account_id,
        state="open",
        created_at=now,
        updated_at=now,
    )
    return await m.writer.run(lambda conn: _book_offer(conn, m, offer))


def _require_active(listing: ListingRow) -> ListingRow:
    if listing.state != rules.ACTIVE:
        raise ServiceError(409, "listing_not_active", f"the listing is {listing.state}", param="listingId")
    return listing


def _offer_terms(listing: ListingRow, price: int, buyer: str) -> str:
    """The listing takes an offer of `price` from `buyer` (active; at or above the floor; below the
    asking price only with acceptOffers; not the seller's own): the buyer's checksummed address."""
    _require_active(listing)
    if price < listing.floor_price:
        raise ServiceError(
            422,
            "offer_below_floor",
            f"offers start at the floor, {listing.floor_price} micro-USDC (25% of the lifetime earnings or more)",
            param="offerPriceUsdc",
        )
    if price < listing.asking_price and not listing.accept_offers:
        raise ServiceError(
            422, "offers_not_accepted", "this listing takes no offers below its asking price", param="offerPriceUsdc"
        )
    buyer = Web3.to_checksum_address(buyer)
    if buyer == listing.seller_address:
        raise ServiceError(422, "seller_cannot_buy", "the seller cannot offer on its own listing", param="buyerAddress")
    return buyer


def _offer_signed(
    m: Market, listing: ListingRow, *, buyer: str, price: int, nonce: int, deadline: int, signature: str
) -> None:
    """401 offer_signature_mismatch unless `signature` is the buyer's EIP-712 signature of the Offer."""
    typed = rules.offer_typed_data(
        chain_id=m.chain_id,
        marketplace=m.marketplace,
        listing_id=listing.chain_listing_id,
        buyer=buyer,
        price=price,
        nonce=nonce,
        deadline=deadline,
    )
    signer = signatures.typed_signer(typed, signature)
    if signer != buyer:  # None: a well-formed signature of nobody (no key recovers from it)
        raise ServiceError(
            401,
            "offer_signature_mismatch",
            f"the Offer signature recovers to {signer or 'no address'}, not to buyerAddress {buyer}",
            param="signature",
        )


async def _offer_funded(m: Market, *, buyer: str, price: int, nonce: int, deadline: int) -> None:
    """As the chain stands: the offer has not expired, its nonce is unused, the buyer's USDC balance and
    allowance cover it."""
    now_chain = await chain_now(m)
    if deadline <= now_chain:
        raise ServiceError(
            422, "offer_expired", f"the offer's deadline has passed (chain time {now_chain})", param="deadline"
        )
    used, balance, allowance = await asyncio.gather(
        _call(m, "AgentMarketplace", "offerNonceUsed", buyer, nonce),
        _call(m, USDC, "balanceOf", buyer),
        _call(m, USDC, "allowance", buyer, m.marketplace),
    )
    if used:
        raise ServiceError(409, "offer_nonce_used", f"nonce {nonce} of {buyer} is used or cancelled", param="nonce")
    if int(balance) < price:
        raise ServiceError(
            422,
            "insufficient_balance",
            f"{buyer} holds {int(balance)} micro-USDC",
            param="buyerAddress",
            replayable=False,
        )
    if int(allowance) < price:
        raise ServiceError(
            422,
            "insufficient_allowance",
            f"{buyer} allows the marketplace {int(allowance)} micro-USDC: approve {m.marketplace} first",
            param="buyerAddress",
            replayable=False,
        )


def _book_offer(conn: Conn, m: Market, offer: OfferRow) -> OfferRow:
    """The offer into the book, in the writer's transaction, if the listing is still active and the
    buyer's nonce was not offered before; its notice to the seller."""
    fresh = _require_active(_open_listing(conn, offer.listing_id))
    if store.find_offer(conn, offer.listing_id, offer.buyer_address, offer.nonce) is not None:
        raise ServiceError(
            409, "offer_exists", f"{offer.buyer_address} already offered with nonce {offer.nonce}", param="nonce"
        )
    store.insert_offer(conn, offer)
    notices.offer_received(conn, m.notices, fresh, offer.buyer_address, offer.price, offer.deadline, offer.created_at)
    return offer


async def fillability(
    m: Market, listing: ListingRow, offers: list[OfferRow]
) -> dict[str, tuple[bool | None, str | None]]:
    """For each offer: can the seller fill it now (True), not (False, why), or unknown (None: the
    node did not answer, or too many offers to check)."""
    out: dict[str, tuple[bool | None, str | None]] = {}
    pending = []
    for o in offers:
        if o.state != "open":
            out[o.id] = (False, o.state)
        elif listing.state != rules.ACTIVE:
            out[o.id] = (False, f"listing_{listing.state}")
        else:
            pending.append(o)
    if not pending:
        return out
    try:
        now_chain = await m.operator.block_timestamp()
    except ChainUnavailable:
        return {**out, **{o.id: (None, "chain_unavailable") for o in pending}}

    async def check(o: OfferRow) -> tuple[bool | None, str | None]:
        if o.deadline <= now_chain:
            return False, "expired"
        try:
            used, balance, allowance = await asyncio.gather(
                m.operator.call("AgentMarketplace", "offerNonceUsed", o.buyer_address, o.nonce),
                m.operator.call(USDC, "balanceOf", o.buyer_address),
                m.operator.call(USDC, "allowance", o.buyer_address, m.marketplace),
            )
        except (ChainUnavailable, ContractReverted):
            return None, "chain_unavailable"
        if used:
            return False, "nonce_used"
        if int(balance) < o.price:
            return False, "insufficient_balance"
        if int(allowance) < o.price:
            return False, "insufficient_allowance"
        return True, None

    checked = pending[:MAX_CHECKED_OFFERS]
    results = await asyncio.gather(*(check(o) for o in checked))
    out.update({o.id: r for o, r in zip(checked, results, strict=True)})
    out.update({o.id: (None, "not_checked") for o in pending[MAX_CHECKED_OFFERS:]})
    return out


# ---- a buyer's commit ----------------------------------------------------------------------------


async def quote_commit(m: Market, *, listing_uuid: str, tx_hash: str) -> tuple[int, str, str]:
    """What the commit `tx_hash` moved, without recording anything: (price in micro-USDC, the buyer,
    the seller); 404/422 as record_commit would refuse it. The MCP accept tool's quote."""
    listing, _, ev = await _commit_event(m, listing_uuid, tx_hash)
    return int(ev["price"]), Web3.to_checksum_address(ev["buyer"]), listing.seller_address


async def _commit_event(
    m: Market, listing_uuid: str, tx_hash: str
) -> tuple[ListingRow, dict[str, Any], dict[str, Any]]:
    """(the open listing, the receipt of `tx_hash`, its one SaleCommitted event of the listing); 404/422."""
    listing = await m.reads.run(lambda db: _open_listing(db, listing_uuid))
    receipt = await _receipt(m, tx_hash)
    found = _events(m, receipt, "SaleCommitted", listing.chain_listing_id)
    if len(found) != 1:
        raise ServiceError(
            422, "commit_event_missing", f"{tx_hash} holds no SaleCommitted event of this listing", param="txHash"
        )
    return listing, receipt, found[0]


async def record_commit(
    m: Market, caller: Caller, *, listing_uuid: str, buy_now: bool, tx_hash: str, buyer_email: str | None
) -> tuple[SaleRow, bool]:
    """Record the commit `tx_hash` (buy-now by the buyer, or the seller's acceptOffer) with its
    due-diligence bundle; (sale, created). The same transaction again answers the same sale."""
    listing, receipt, ev = await _commit_event(m, listing_uuid, tx_hash)
    via_offer = bool(ev["viaOffer"])
    if via_offer == buy_now:
        raise ServiceError(
            422,
            "wrong_commit_kind",
            f"{tx_hash} is {'an accepted offer' if via_offer else 'a buy-now'}:"
            f" buyNow must be {str(not via_offer).lower()}",
            param="buyNow",
        )
    buyer = Web3.to_checksum_address(ev["buyer"])
    expected = listing.seller_address if via_offer else buyer
    if _sender(receipt) != expected:
        raise ServiceError(
            403,
            "wrong_sender",
            f"{tx_hash} must be sent by the {'seller' if via_offer else 'buyer'} {expected}",
            param="txHash",
        )
    if int(ev["price"]) > 2**63 - 1:
        raise ServiceError(422, "amount_too_large", "prices beyond int64 are not recorded", param="txHash")
    commit_tx, now = _tx_hash(receipt), m.clock()

    def work(conn: Conn) -> tuple[SaleRow, bool]:
        fresh = _open_listing(conn, listing_uuid)
        live = store.live_sale(conn, fresh.id)
        if live is not None:
            if live.commit_tx != commit_tx:
                raise ServiceError(409, "listing_settling", "another commit holds this listing", param="listingId")
            if buyer_email and not live.buyer_email:
                store.set_sale(conn, live.id, now, buyer_email=buyer_email, buyer_account=caller.account_id)
            again = store.live_sale(conn, fresh.id)
            assert again is not None
            return again, False
        sale = records.record_sale(
            conn,
            m.chain_id,
            fresh,
            buyer=buyer,
            price=int(ev["price"]),
            via_offer=via_offer,
            offer_nonce=int(ev["offerNonce"]),
            commit_tx=commit_tx,
            commit_block=int(receipt["blockNumber"]),
            notice_ends_at=int(ev["noticeEndsAt"]),
            buyer_email=buyer_email,
            buyer_account=caller.account_id,
            confirmed=False,
            now=now,
        )
        return sale, True

    return await m.writer.run(work)


# ---- cancel --------------------------------------------------------------------------------------


async def record_cancel(m: Market, caller: Caller, *, listing_uuid: str, tx_hash: str) -> ListingRow:
    """The seller's on-chain cancel, recorded. Refused once a buyer committed (409
    notice_window_active: the contract refuses the cancel too) or after the listing ended."""

    def yours(db: Conn) -> ListingRow:
        listing = _open_listing(db, listing_uuid)
        agent = wallet_store.agent_by_uuid(db, listing.agent_uuid)
        if agent is None or not caller.may_act_for(agent.account_id, agent.uuid):
            raise ServiceError(404, "listing_not_found", f"no listing {listing_uuid} of yours", param="listingId")
        return listing

    listing = await m.reads.run(yours)
    if listing.state == rules.SETTLING:
        raise ServiceError(
            409,
            "notice_window_active",
            "a buyer committed: the sale cannot be cancelled during the notice window",
            param="listingId",
        )
    if listing.state == rules.CANCELLED and listing.end_tx == tx_hash.lower():
        return listing
    if listing.state != rules.ACTIVE:
        raise ServiceError(409, "listing_ended", f"the listing is {listing.state}", param="listingId")
    receipt = await _receipt(m, tx_hash)
    if not _events(m, receipt, "ListingCancelled", listing.chain_listing_id):
        raise ServiceError(
            422, "cancel_event_missing", f"{tx_hash} holds no ListingCancelled event of this listing", param="txHash"
        )
    if _sender(receipt) != listing.seller_address:
        raise ServiceError(403, "wrong_sender", f"{tx_hash} was not sent by the seller", param="txHash")
    now, end_tx = m.clock(), _tx_hash(receipt)

    def work(conn: Conn) -> ListingRow:
        fresh = _open_listing(conn, listing_uuid)
        if fresh.state == rules.ACTIVE:
            records.end_listing(
                conn, m.notices, fresh, rules.CANCELLED, end_tx, now, "cancelled by the seller", notify=False
            )
        row = store.get_listing(conn, listing_uuid)
        assert row is not None
        return row

    return await m.writer.run(work)
