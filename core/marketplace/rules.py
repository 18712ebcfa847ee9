"""The marketplace's rules: listing states, the floor, the contract's EIP-712 Offer, the signed
messages of a mint on demand and of a buyer's claim, the due-diligence bundle's hash, the sweeps'
back-off. Pure functions: no I/O."""

from __future__ import annotations

import hashlib
import math
from typing import Any

from core.audit import canonical

#: Listing states as the API shows them (the contract's Listed / Committed / Settled / Cancelled /
#: Expired), plus `void`: recorded from a transaction that a reorg then removed from the chain.
ACTIVE, SETTLING, SOLD, EXPIRED, CANCELLED, VOID = "active", "settling", "sold", "expired", "cancelled", "void"
STATES = (ACTIVE, SETTLING, SOLD, EXPIRED, CANCELLED, VOID)
#: AgentMarketplace.Status (enum order) -> the API's state.
CHAIN_STATUS = {1: ACTIVE, 2: SETTLING, 3: SOLD, 4: CANCELLED, 5: EXPIRED}

#: The floor is at least this share (basis points) of the agent's lifetime earnings at listing.
MIN_FLOOR_BPS = 2_500
#: The seller's share of a sale (the rest, plus dust, is the service fee): the contract's SELLER_BPS.
SELLER_BPS = 9_800
BPS = 10_000

#: An earnings statement is good for this many seconds of chain time (and for one listing).
STATEMENT_SECONDS = 600

#: Listing pages: the default and the largest page size.
PAGE_SIZE = 20
MAX_PAGE_SIZE = 100

WEBHOOK_EVENT = "listing.state_changed"

#: Sweep back-off after a failed send: 60 s, doubling, at most an hour.
BACKOFF_BASE = 60.0
BACKOFF_MAX = 3600.0

OFFER_TYPES = [
    {"name": "listingId", "type": "uint256"},
    {"name": "buyer", "type": "address"},
    {"name": "price", "type": "uint256"},
    {"name": "nonce", "type": "uint256"},
    {"name": "deadline", "type": "uint256"},
]
EARNINGS_STATEMENT_TYPES = [
    {"name": "tokenId", "type": "uint256"},
    {"name": "seller", "type": "address"},
    {"name": "reportedEarnings", "type": "uint256"},
    {"name": "nonce", "type": "uint256"},
    {"name": "deadline", "type": "uint256"},
]
DOMAIN_TYPES = [
    {"name": "name", "type": "string"},
    {"name": "version", "type": "string"},
    {"name": "chainId", "type": "uint256"},
    {"name": "verifyingContract", "type": "address"},
]


def minimum_floor(lifetime_earnings: int) -> int:
    """25% of the lifetime earnings, rounded up (AgentMarketplace.list's rule)."""
    return -(-lifetime_earnings * MIN_FLOOR_BPS // BPS)


def sale_split(price: int) -> tuple[int, int]:
    """(seller proceeds, service fee) of a sale at `price`: 98%, the rest (the contract's settle)."""
    seller = price * SELLER_BPS // BPS
    return seller, price - seller


def _domain(chain_id: int, marketplace: str) -> dict[str, Any]:
    return {"name": "agentledger Marketplace", "version": "1", "chainId": chain_id, "verifyingContract": marketplace}


def offer_typed_data(
    *, chain_id: int, marketplace: str, listing_id: int, buyer: str, price: int, nonce: int, deadline: int
) -> dict[str, Any]:
    """The EIP-712 Offer a buyer signs; the seller submits it with acceptOffer."""
    return {
        "domain": _domain(chain_id, marketplace),
        "types": {"EIP712Domain": DOMAIN_TYPES, "Offer": OFFER_TYPES},
        "primaryType": "Offer",
        "message": {"listingId": listing_id, "buyer": buyer, "price": price, "nonce": nonce, "deadline": deadline},
    }


def earnings_statement_typed_data(
    *, chain_id: int, marketplace: str, token_id: int, seller: str, reported: int, nonce: int, deadline: int
) -> dict[str, Any]:
    """The EIP-712 EarningsStatement the operator signs and the seller passes to `list`: the agent's
    reported (off-chain) earnings, which the contract adds to the registry's for the floor's minimum."""
    return {
        "domain": _domain(chain_id, marketplace),
        "types": {"EIP712Domain": DOMAIN_TYPES, "EarningsStatement": EARNINGS_STATEMENT_TYPES},
        "primaryType": "EarningsStatement",
        "message": {
            "tokenId": token_id,
            "seller": seller,
            "reportedEarnings": reported,
            "nonce": nonce,
            "deadline": deadline,
        },
    }


def mint_message(*, chain_id: int, wallet: str, self_wallet: str, owner: str, timestamp: int) -> str:
    """What the self wallet signs (EIP-191) to be minted as the self wallet of `wallet` under `owner`."""
    return (
        f"agentledger agent mint\nchain: {chain_id}\nagent: {wallet}\nself_wallet: {self_wallet}\n"
        f"owner: {owner}\ntimestamp: {timestamp}"
    )


def claim_message(*, chain_id: int, wallet: str, token_id: int, owner: str, timestamp: int) -> str:
    """What the agent NFT's new owner signs (EIP-191) to claim the agent after a sale."""
    return (
        f"agentledger agent claim\nchain: {chain_id}\nagent: {wallet}\ntoken: {token_id}\nowner: {owner}\n"
        f"timestamp: {timestamp}"
    )


def bundle_hash(bundle: dict[str, Any]) -> tuple[str, str]:
    """(RFC 8785 JSON text, its SHA-256 hex) of a due-diligence bundle."""
    body = canonical(bundle)
    return body.decode(), hashlib.sha256(body).hexdigest()


def memory_digest(rows: list[tuple[str, str]]) -> str:
    """SHA-256 over the agent's memory: each key and value, length-prefixed, in key order."""
    h = hashlib.sha256()
    for key, value in rows:
        for part in (key.encode(), value.encode()):
            h.update(len(part).to_bytes(8, "big"))
            h.update(part)
    return h.hexdigest()


def backoff(failures: int) -> float:
    return float(min(BACKOFF_MAX, BACKOFF_BASE * math.pow(2, max(0, failures - 1))))


def listing_stream(listing_uuid: str) -> str:
    """The audit stream of a listing (its due-diligence bundles, reverted sales)."""
    return f"listing:{listing_uuid}"
