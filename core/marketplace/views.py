"""What callers see of listings, offers and sales (JSON-ready dicts; amounts as decimal USDC)."""

from __future__ import annotations

import json
from typing import TYPE_CHECKING, Any

from core.isotime import iso_utc
from core.jsontext import usdc
from core.marketplace import rules
from core.store.marketplace import AssetRow, ListingRow, OfferRow, SaleRow

if TYPE_CHECKING:
    from core.marketplace.trading import Statement


def listing_json(row: ListingRow) -> dict[str, Any]:
    return {
        "id": row.id,
        "chainListingId": row.chain_listing_id,
        "agentId": row.wallet,
        "agentUuid": row.agent_uuid,
        "tokenId": row.token_id,
        "seller": row.seller_address,
        "askingPriceUsdc": usdc(row.asking_price),
        "floorPriceUsdc": usdc(row.floor_price),
        "earningsAtListingUsdc": usdc(row.earnings_at_listing),
        "acceptOffers": row.accept_offers,
        "status": row.state,
        "state": row.state,  # the deprecated name of status (api.marketplace.models.Listing says until when)
        "agentPaused": row.state in (rules.ACTIVE, rules.SETTLING),
        "expiresAt": iso_utc(row.expires_at),
        "listTx": row.list_tx,
        "final": row.confirmed,
        "endTx": row.end_tx,
        "createdAt": iso_utc(row.created_at),
        "updatedAt": iso_utc(row.updated_at),
    }


def statement_json(wallet: str, st: Statement) -> dict[str, Any]:
    """The statement as `list` takes it (uint256 figures as decimal strings of the raw units), then the
    figures in USDC."""
    return {
        "agentId": wallet,
        "statement": {
            "tokenId": st.token_id,
            "seller": st.seller,
            "reportedEarnings": str(st.reported),
            "nonce": str(st.nonce),
            "deadline": st.deadline,
        },
        "signature": st.signature,
        "reportedEarningsUsdc": usdc(st.reported),
        "onchainEarningsUsdc": usdc(st.onchain),
        "minimumFloorUsdc": usdc(st.minimum_floor),
    }


def offer_json(o: OfferRow, *, fillable: bool | None, reason: str | None, show_signature: bool) -> dict[str, Any]:
    out: dict[str, Any] = {
        "id": o.id,
        "buyerAddress": o.buyer_address,
        "offerPriceUsdc": usdc(o.price),
        "nonce": str(o.nonce),
        "deadline": o.deadline,
        "state": o.state,
        "fillable": fillable,
        "notFillableReason": reason,
        "createdAt": iso_utc(o.created_at),
    }
    if show_signature:  # the seller needs it to accept the offer on-chain
        out["signature"] = o.signature
    return out


def sale_json(s: SaleRow) -> dict[str, Any]:
    return {
        "saleId": s.id,
        "buyerAddress": s.buyer_address,
        "salePrice": usdc(s.price),
        "sellerProceeds": usdc(s.seller_proceeds),
        "serviceFee": usdc(s.service_fee),
        "viaOffer": s.via_offer,
        "offerId": s.offer_id,
        "commitTx": s.commit_tx,
        "noticeWindowEndsAt": iso_utc(s.notice_ends_at),
        "state": s.state,
        "final": s.confirmed,
        "settleTx": s.settle_tx,
        "dueDiligence": {"sha256": s.bundle_sha256, "auditId": s.bundle_audit_id, "bundle": json.loads(s.bundle)},
        "createdAt": iso_utc(s.created_at),
    }


def asset_json(a: AssetRow) -> dict[str, Any]:
    return {
        "cid": a.cid,
        "producedBy": a.origin_agent,
        "orderId": a.order_id,
        "size": a.size,
        "transferred_with_nft": a.transferred_with_nft,
    }
