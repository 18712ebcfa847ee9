"""Pure rules of escrow checkout: tiers and prices, session expiry, totals, the gateway job id and
work deadline, the provider-link message and the payer's EIP-712 funding consent. No I/O: the
store and the API build on these.

Amounts are integers of micro-USDC. Checkout sessions speak ACP 2026-04-17, whose amounts are
integers in the currency's minor unit: for USDC that is exactly micro-USDC (6 decimals), so
`unit_amount: 250000000` is 250 USDC.
"""

from __future__ import annotations

import math
import re
from collections.abc import Iterable
from dataclasses import dataclass
from typing import Any, Literal

from web3 import Web3

from core.money import MAX_AMOUNT_UNITS, UNITS_PER_USDC

TierName = Literal["standard", "rush", "deep"]


@dataclass(frozen=True)
class Tier:
    name: TierName
    hours: int  # work time: the gateway job's deadline is the session's expiry + the longest tier's hours
    default_price: int  # micro-USDC per unit when the provider names no price


#: Delivery tiers. The reference listing's standard tier costs 250 USDC; rush (half the time)
#: costs 1.5x and deep (72 h, more work) 2x: 375 and 500 USDC.
TIERS: dict[str, Tier] = {
    "standard": Tier("standard", 48, 250 * UNITS_PER_USDC),
    "rush": Tier("rush", 24, 375 * UNITS_PER_USDC),
    "deep": Tier("deep", 72, 500 * UNITS_PER_USDC),
}

#: The one payment handler: the buyer's USDC, pulled into the PaymentGateway escrow.
PAYMENT_HANDLER_ID = "service-usdc-commerce-v1"
#: ACP versions this service speaks (the API-Version header); the newest is what responses follow.
SUPPORTED_API_VERSIONS = ("2026-04-17",)
CURRENCY = "usdc"

MAX_LINE_ITEMS = 50
MAX_QUANTITY = 1000

ADDRESS_RE = re.compile(r"0x[0-9a-fA-F]{40}")
EMAIL_RE = re.compile(r"[^@\s]{1,64}@[^@\s]+\.[^@\s]+")
#: An EIP-191 signature as personal_sign returns it: 65 bytes (r, s, v) in hex.
SIGNATURE_RE = re.compile(r"0x[0-9a-fA-F]{130}")


def tier(name: str) -> Tier:
    return TIERS[name]


def job_id_for(session_id: str) -> str:
    """The gateway job id of a checkout session: deterministic, so a retried or crashed complete
    can never fund twice (the gateway refuses a second fund of one id with JobExists)."""
    return "0x" + bytes(Web3.keccak(b"agentledger:checkout:" + session_id.encode())).hex()


def work_deadline(expires_at: float, tier_names: Iterable[str]) -> int:
    """The gateway job's deadline for a session, in Unix seconds: the session's expiry plus the
    longest tier among its items (one job pays for every line item, so it must leave time for the
    slowest). Fixed by the session's contents alone (expires_at is set at creation; an update of
    the items can change the tiers), so the buyer signs it before paying: a session can only be
    completed before it expires, which leaves the provider at least the tier's hours, and the
    buyer knows exactly when it may reclaim (after this instant)."""
    return math.ceil(expires_at) + max(TIERS[t].hours for t in tier_names) * 3600


def session_expires_at(now: float, ttl: float) -> float:
    return now + ttl


def is_expired(status: str, expires_at: float, now: float) -> bool:
    """Only an unpaid (incomplete) session expires; one being completed is never cut short."""
    return status == "incomplete" and now >= expires_at


def valid_address(value: str) -> bool:
    return ADDRESS_RE.fullmatch(value) is not None


def valid_email(value: str) -> bool:
    return len(value) <= 254 and EMAIL_RE.fullmatch(value) is not None


@dataclass(frozen=True)
class PricedLine:
    item_id: str
    title: str
    tier: str
    quantity: int
    unit_amount: int

    @property
    def subtotal(self) -> int:
        return self.unit_amount * self.quantity


class TotalTooLarge(ValueError):
    pass


def session_total(lines: list[PricedLine]) -> int:
    total = sum(line.subtotal for line in lines)
    if total > MAX_AMOUNT_UNITS:
        raise TotalTooLarge(f"the session total exceeds {MAX_AMOUNT_UNITS // UNITS_PER_USDC} USDC")
    return total


def line_items_json(lines: list[PricedLine]) -> list[dict[str, Any]]:
    """ACP line items (amounts in micro-USDC): no discount, no tax, no fulfillment cost."""
    return [
        {
            "id": f"li_{i + 1}",
            "item": {"id": line.item_id, "name": line.title, "unit_amount": line.unit_amount},
            "quantity": line.quantity,
            "name": line.title,
            "unit_amount": line.unit_amount,
            "tier": line.tier,
            "delivery_hours": TIERS[line.tier].hours,
            "totals": [
                {"type": "items_base_amount", "display_text": "Base amount", "amount": line.subtotal},
                {"type": "subtotal", "display_text": "Subtotal", "amount": line.subtotal},
                {"type": "total", "display_text": "Total", "amount": line.subtotal},
            ],
        }
        for i, line in enumerate(lines)
    ]


def totals_json(total: int) -> list[dict[str, Any]]:
    return [
        {"type": "items_base_amount", "display_text": "Item(s) total", "amount": total},
        {"type": "subtotal", "display_text": "Subtotal", "amount": total},
        {"type": "total", "display_text": "Total", "amount": total},
    ]


# ---- provider link ------------------------------------------------------------------------------


def provider_link_message(*, chain_id: int, agent_wallet: str, self_wallet: str, owner: str, timestamp: int) -> str:
    """The exact text the self wallet signs (EIP-191 personal_sign) to link an agent as a provider.
    Addresses are EIP-55 checksummed; the chain id keeps a signature for one deployment's chain
    from being replayed on another."""
    return (
        "agentledger provider link\n"
        f"chain: {chain_id}\n"
        f"agent: {agent_wallet}\n"
        f"self_wallet: {self_wallet}\n"
        f"owner: {owner}\n"
        f"timestamp: {timestamp}"
    )


# ---- the payer's consent ------------------------------------------------------------------------

#: EIP-712 domain of PaymentGateway (name and version as its constructor gives them to EIP712).
FUNDING_DOMAIN_NAME = "agentledger PaymentGateway"
FUNDING_DOMAIN_VERSION = "1"
#: The struct PaymentGateway.fund checks (FUNDING_TYPEHASH), with the domain's own type.
FUNDING_TYPES: dict[str, list[dict[str, str]]] = {
    "EIP712Domain": [
        {"name": "name", "type": "string"},
        {"name": "version", "type": "string"},
        {"name": "chainId", "type": "uint256"},
        {"name": "verifyingContract", "type": "address"},
    ],
    "Funding": [
        {"name": "jobId", "type": "bytes32"},
        {"name": "buyer", "type": "address"},
        {"name": "providerTokenId", "type": "uint256"},
        {"name": "amount", "type": "uint256"},
        {"name": "deadline", "type": "uint64"},
    ],
}


def funding_typed_data(
    *, chain_id: int, gateway: str, job_id: str, buyer: str, provider_token_id: int, amount: int, deadline: int
) -> dict[str, Any]:
    """The EIP-712 typed data {domain, types, primaryType, message} the buyer signs to let the
    gateway pull exactly `amount` micro-USDC from it into job `job_id` (0x + 64 hex) for provider
    token `provider_token_id`, reclaimable only after `deadline` (Unix seconds). The domain binds the
    chain and the gateway; the job id is funded at most once, so a signature is good once."""
    return {
        "domain": {
            "name": FUNDING_DOMAIN_NAME,
            "version": FUNDING_DOMAIN_VERSION,
            "chainId": chain_id,
            "verifyingContract": Web3.to_checksum_address(gateway),
        },
        "types": FUNDING_TYPES,
        "primaryType": "Funding",
        "message": {
            "jobId": job_id,
            "buyer": Web3.to_checksum_address(buyer),
            "providerTokenId": provider_token_id,
            "amount": amount,
            "deadline": deadline,
        },
    }


def checkout_typed_data(
    *, chain_id: int, gateway: str, session_id: str, buyer: str, provider_token_id: int, amount: int, deadline: int
) -> dict[str, Any]:
    """funding_typed_data for a checkout session: its job id is job_id_for(session_id), `amount`
    its total and `deadline` its work_deadline."""
    return funding_typed_data(
        chain_id=chain_id,
        gateway=gateway,
        job_id=job_id_for(session_id),
        buyer=buyer,
        provider_token_id=provider_token_id,
        amount=amount,
        deadline=deadline,
    )


def valid_signature(value: str) -> bool:
    return SIGNATURE_RE.fullmatch(value) is not None
