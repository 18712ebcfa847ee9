"""Pure rules of escrow checkout: tiers and prices, session expiry, totals, the gateway job id
the provider-link message and the payer's payment message. No I/O: the store and the API build on
these.

Amounts are integers of micro-USDC. Checkout sessions speak ACP 2026-04-17, whose amounts are
integers in the currency's minor unit: for USDC that is exactly micro-USDC (6 decimals), so
`unit_amount: 250000000` is 250 USDC.
"""

from __future__ import annotations

import re
from dataclasses import dataclass
from typing import Any, Literal

from eth_account import Account
from eth_account.messages import encode_defunct
from web3 import Web3

from core.money import MAX_AMOUNT_UNITS, UNITS_PER_USDC

TierName = Literal["standard", "rush", "deep"]


@dataclass(frozen=True)
class Tier:
    name: TierName
    hours: int  # the work deadline: the gateway job's deadline is funding time + this
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

#: A provider link signature is accepted this many seconds either side of the server clock.
LINK_WINDOW_SECONDS = 300
MAX_LINE_ITEMS = 50
MAX_QUANTITY = 1000

ADDRESS_RE = re.compile(r"0x[0-9a-fA-F]{40}")
EMAIL_RE = re.compile(r"[^@\s]{1,64}@[^@\s]+\.[^@\s]+")
ITEM_ID_RE = re.compile(r"[A-Za-z0-9_\-]{1,64}")
#: An EIP-191 signature as personal_sign returns it: 65 bytes (r, s, v) in hex.
SIGNATURE_RE = re.compile(r"0x[0-9a-fA-F]{130}")


def tier(name: str) -> Tier:
    return TIERS[name]


def job_id_for(session_id: str) -> str:
    """The gateway job id of a checkout session: deterministic, so a retried or crashed complete
    can never fund twice (the gateway refuses a second fund of one id with JobExists)."""
    return "0x" + bytes(Web3.keccak(b"agentledger:checkout:" + session_id.encode())).hex()


def job_deadline(tier_names: list[str], chain_now: int) -> int:
    """The job's on-chain deadline: chain time plus the longest tier among the session's items
    (one job pays for every line item, so it must leave time for the slowest)."""
    return chain_now + max(TIERS[t].hours for t in tier_names) * 3600


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


def within_window(timestamp: int, now: float, window: int = LINK_WINDOW_SECONDS) -> bool:
    return abs(timestamp - now) <= window


# ---- payer authorization ------------------------------------------------------------------------


#: The payer's message (see payment_message); amount in micro-USDC, addresses EIP-55.
PAYMENT_MESSAGE_FORMAT = (
    "agentledger checkout payment\n"
    "chain: {chain}\n"
    "gateway: {gateway}\n"
    "session: {session}\n"
    "amount: {amount}\n"
    "payer: {payer}"
)


def payment_message(*, chain_id: int, gateway: str, session_id: str, amount: int, payer: str) -> str:
    """The exact text the paying address signs (EIP-191 personal_sign) to let the service pull
    `amount` micro-USDC from it into the gateway for one checkout session. Addresses are EIP-55.
    Binding the chain, the gateway, the session and the amount makes a signature useless for any
    other session, any other cart (an update changes the amount) and any other deployment."""
    return PAYMENT_MESSAGE_FORMAT.format(
        chain=chain_id,
        gateway=Web3.to_checksum_address(gateway),
        session=session_id,
        amount=amount,
        payer=Web3.to_checksum_address(payer),
    )


def valid_signature(value: str) -> bool:
    return SIGNATURE_RE.fullmatch(value) is not None


def recover_signer(message: str, signature: str) -> str | None:
    """The EIP-55 address whose personal_sign of `message` is `signature`; None when the signature
    cannot be recovered (bad v, r or s out of range)."""
    try:
        return str(Account.recover_message(encode_defunct(text=message), signature=signature))
    except Exception:  # eth_keys raises BadSignature / ValueError for malformed values
        return None
