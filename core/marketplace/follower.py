"""Listings follow AgentMarketplace's FINAL events (a follower, installed in the indexer).

The routes record a listing, a commit or a cancel from a verified receipt (so the caller gets its
answer at once), marked not final; from then on the state moves only on final events, which also
record whatever happened on-chain without the routes (a buy nobody reported, a listing made
straight on the contract for an agent of this service). Each move writes the listing, its audit
stream (bundle at a commit, the handover at the settlement), the offer book and the notices
(e-mails to the seller, the buyer and the stakers; `listing.state_changed` webhooks) in the
indexer's transaction, so they happen once, and never for a block a reorg removed.
"""

from __future__ import annotations

import logging
from collections.abc import Callable
from typing import Any

from core.marketplace import handover, notices, records, rules
from core.marketplace.context import Notices, notices_for
from core.services import Services
from core.store import Conn
from core.store import marketplace as store
from core.store import wallets as wallet_store
from core.store.events import Event
from core.store.marketplace import ListingRow

log = logging.getLogger("agentledger.drop")

INT64_MAX = 2**63 - 1


class MarketFollower:
    name = "drop"
    contracts = frozenset({"AgentMarketplace"})

    def __init__(self, clock: Callable[[], float], notices: Notices) -> None:
        self.clock = clock
        self.notices = notices

    def apply(self, conn: Conn, chain_id: int, event: Event) -> None:
        a, now = event.args, self.clock()
        if event.name == "OfferNonceCancelled":
            store.set_nonce_state(conn, str(a["buyer"]), int(a["nonce"]), "cancelled", now)
            return
        if "listingId" not in a:
            return
        listing_id = int(a["listingId"])
        if event.name == "Listed":
            self._listed(conn, event, listing_id, a, now)
            return
        listing = store.listing_by_chain_id(conn, listing_id)
        if listing is None:
            return  # not an agent of this service
        if event.name == "SaleCommitted":
            self._committed(conn, chain_id, event, listing, a, now)
        elif event.name == "SaleSettled":
            self._settled(conn, event, listing, now)
        elif event.name == "ListingCancelled":
            records.end_listing(
                conn, self.notices, listing, rules.CANCELLED, event.tx_hash, now, "cancelled by the seller"
            )
        elif event.name == "ListingExpired":
            records.end_listing(conn, self.notices, listing, rules.EXPIRED, event.tx_hash, now, "expired unsold")

    def _listed(self, conn: Conn, e: Event, listing_id: int, a: dict[str, Any], now: float) -> None:
        n = self.notices
        listing = store.listing_by_chain_id(conn, listing_id)
        if listing is not None:
            store.confirm_listing(conn, listing.id, e.tx_hash, e.block_number, now)
            if listing.state == rules.VOID:  # voided while its transaction was out of the chain: it is back
                store.set_listing_state(conn, listing.id, rules.ACTIVE, now)
            listing = store.get_listing(conn, listing.id)
            assert listing is not None
        else:
            token = store.token_row(conn, int(a["tokenId"]))
            agent = None if token is None else wallet_store.agent_by_wallet(conn, token.wallet_id)
            if agent is None:
                return  # an agent this service does not know
            lifetime = int(a["earningsAtListing"])  # the contract's: the statement's reported + the registry's
            if max(int(a["askingPrice"]), int(a["floorPrice"]), lifetime) > INT64_MAX:
                log.error("listing %d: prices or lifetime earnings beyond int64; not recorded", listing_id)
                return
            listing = records.insert_listing(
                conn,
                chain_listing_id=listing_id,
                agent=agent,
                token_id=int(a["tokenId"]),
                seller=str(a["seller"]),
                asking=int(a["askingPrice"]),
                floor=int(a["floorPrice"]),
                earnings=lifetime,
                accept_offers=False,
                seller_email=None,
                state=rules.ACTIVE,
                expires_at=int(a["expiresAt"]),
                list_tx=e.tx_hash,
                list_block=e.block_number,
                confirmed=True,
                now=now,
            )
        notices.listed(conn, n, listing, now)
        notices.state_changed(conn, n, listing, None, rules.ACTIVE, now, tx_hash=e.tx_hash, reason="listed")

    def _committed(
        self, conn: Conn, chain_id: int, e: Event, listing: ListingRow, a: dict[str, Any], now: float
    ) -> None:
        sale = store.live_sale(conn, listing.id)
        if sale is not None and sale.commit_tx == e.tx_hash:
            store.set_sale(conn, sale.id, now, confirmed=True, commit_block=e.block_number)
        else:
            if sale is not None:  # our record came from a transaction the final chain does not have
                records.revert_sale(conn, listing, sale, now, f"the final commit is {e.tx_hash}")
            if int(a["price"]) > INT64_MAX:
                log.error("listing %s: a commit beyond int64; not recorded", listing.id)
                return
            sale = records.record_sale(
                conn,
                chain_id,
                listing,
                buyer=str(a["buyer"]),
                price=int(a["price"]),
                via_offer=bool(a["viaOffer"]),
                offer_nonce=int(a["offerNonce"]),
                commit_tx=e.tx_hash,
                commit_block=e.block_number,
                notice_ends_at=int(a["noticeEndsAt"]),
                buyer_email=None,
                buyer_account=None,
                confirmed=True,
                now=now,
            )
        store.set_listing_state(conn, listing.id, rules.SETTLING, now)
        fresh = store.get_listing(conn, listing.id)
        assert fresh is not None
        notices.committed(conn, self.notices, fresh, sale, now)
        notices.state_changed(
            conn, self.notices, fresh, rules.ACTIVE, rules.SETTLING, now, tx_hash=e.tx_hash, reason="a buyer committed"
        )

    def _settled(self, conn: Conn, e: Event, listing: ListingRow, now: float) -> None:
        sale = store.live_sale(conn, listing.id)
        if sale is None:
            log.error("listing %s settled on-chain without a recorded commit", listing.id)
            return
        store.set_sale(conn, sale.id, now, state="settled", settle_tx=e.tx_hash)
        store.set_listing_state(conn, listing.id, rules.SOLD, now, end_tx=e.tx_hash)
        store.close_open_offers(conn, listing.id, now)
        done = handover.hand_over(conn, listing, sale, e.tx_hash, now)
        estate = None
        if done is not None and done.estate_agent_uuid is not None:
            estate_agent = wallet_store.agent_by_uuid(conn, done.estate_agent_uuid)
            estate = None if estate_agent is None else estate_agent.wallet
        notices.settled(conn, self.notices, listing, sale, estate, now)
        notices.state_changed(
            conn, self.notices, listing, rules.SETTLING, rules.SOLD, now, tx_hash=e.tx_hash, reason="settled"
        )


def follower(services: Services) -> MarketFollower | None:
    """The drop's follower, when the deployment has an AgentMarketplace (its notices link back to the
    service as notices_for says)."""
    if "AgentMarketplace" not in services.deployment.contracts:
        return None
    return MarketFollower(services.clock, notices_for(services.settings, services.chain_id))
