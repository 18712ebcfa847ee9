"""The chain side of an escrow hire, done by the caller's own key: approve the escrow for the price,
createJob, wait for the receipt, and sign the message POST /api/a2a/escrow checks.

Needs eth-account (``pip install agentledger-sdk[escrow]``): transactions are signed locally and
sent over plain JSON-RPC (httpx), legacy gas pricing (eth_gasPrice), EIP-155 chain id; the key never
leaves the process. Pure pieces here; AgentLedger and AsyncAgentLedger drive them over their
transport (sync or async).
"""

from __future__ import annotations

import hashlib
import json
import secrets
from collections.abc import Mapping
from dataclasses import dataclass
from decimal import Decimal
from typing import Any

#: Extra gas over the node's estimate.
GAS_MARGIN = Decimal("1.25")


def _eth() -> Any:
    try:
        import eth_abi
        import eth_account
        from eth_account.messages import encode_defunct
        from eth_utils.crypto import keccak
    except ImportError as exc:  # pragma: no cover - depends on the installation
        raise ImportError("signing needs eth-account: pip install 'agentledger-sdk[escrow]'") from exc
    return eth_abi, eth_account, encode_defunct, keccak


def account_of(key_or_account: Any) -> Any:
    """A LocalAccount from a private key (hex or bytes) or an eth-account LocalAccount."""
    _, eth_account, _, _ = _eth()
    if hasattr(key_or_account, "sign_transaction"):
        return key_or_account
    return eth_account.Account.from_key(key_or_account)


def checksum(address: str) -> str:
    """The EIP-55 form of an address (what signed messages name)."""
    from eth_utils.address import to_checksum_address

    return str(to_checksum_address(address))


def new_job_id() -> str:
    return "0x" + secrets.token_hex(32)


def keccak_text(text: str) -> bytes:
    return bytes(_eth()[3](text=text))


def _selector(signature: str) -> bytes:
    _, _, _, keccak = _eth()
    return bytes(keccak(text=signature))[:4]


def calldata(signature: str, types: list[str], values: list[Any]) -> str:
    eth_abi = _eth()[0]
    encoded: bytes = eth_abi.encode(types, values)
    return "0x" + (_selector(signature) + encoded).hex()


def decode_uint(result: str) -> int:
    return int(result, 16) if result not in ("0x", "") else 0


@dataclass(frozen=True)
class Terms:
    """What createJob must name: read from the chain, checked against the registry's entry."""

    chain_id: int
    escrow: str
    usdc: str
    token_id: int
    price: int  # micro-USDC
    sla: int


def terms_from_registry(page: Mapping[str, Any], wallet: str, service_type: str) -> tuple[Mapping[str, Any], Terms]:
    """The registry entry of `wallet`'s `service_type` and the escrow contract it names."""
    contract = page.get("escrowContract")
    entry = next(
        (p for p in page.get("providers", []) if p.get("wallet") == wallet and p.get("serviceType") == service_type),
        None,
    )
    if not isinstance(contract, Mapping) or entry is None:
        raise LookupError(f"{wallet} offers no escrow-hirable {service_type} service")
    esc = entry.get("escrow") or {}
    if not esc.get("available"):
        raise LookupError(f"{wallet}'s {service_type} cannot be hired by escrow: {esc.get('reason')}")
    price = int(Decimal(str(entry["priceUsdc"])) * 10**6)
    return entry, Terms(
        int(contract["chainId"]),
        str(contract["address"]),
        str(contract["usdc"]),
        int(entry["tokenId"]),
        price,
        int(esc["slaSeconds"]),
    )


def input_sha256(value: Any) -> str:
    """SHA-256 hex of the input's RFC 8785 (JCS) JSON: numbers as doubles, keys sorted by UTF-16."""
    return hashlib.sha256(jcs(value).encode()).hexdigest()


def jcs(value: Any) -> str:
    if value is None or isinstance(value, bool):
        return json.dumps(value)
    if isinstance(value, (int, float, Decimal)) and not isinstance(value, bool):
        return _number(float(value) if not isinstance(value, int) else value)
    if isinstance(value, str):
        return json.dumps(value, ensure_ascii=False)
    if isinstance(value, Mapping):
        items = sorted(((str(k), v) for k, v in value.items()), key=lambda kv: kv[0].encode("utf-16-be"))
        return "{" + ",".join(json.dumps(k, ensure_ascii=False) + ":" + jcs(v) for k, v in items) + "}"
    if isinstance(value, (list, tuple)):
        return "[" + ",".join(jcs(v) for v in value) + "]"
    raise TypeError(f"not JSON: {type(value).__name__}")


def _number(value: int | float) -> str:
    """ECMAScript Number.prototype.toString, as RFC 8785 asks."""
    if isinstance(value, int):
        if abs(value) > 2**53 - 1:
            raise ValueError("integers beyond 2^53 have no JCS form")
        return str(value)
    if value != value or value in (float("inf"), float("-inf")):
        raise ValueError("NaN and Infinity have no JSON form")
    if value == 0:
        return "0"
    text = repr(value)  # the shortest round-trip digits, as JavaScript picks them
    if "e" in text:
        mantissa, exp = text.split("e")
        exponent = int(exp)
        if -7 < exponent < 21:
            return format(Decimal(text), "f")
        digits = mantissa.rstrip("0").rstrip(".") if "." in mantissa else mantissa
        return f"{digits}e{'+' if exponent > 0 else '-'}{abs(exponent)}"
    return text[:-2] if text.endswith(".0") else text


def escrow_message(*, chain_id: int, escrow: str, job_id: str, input_sha: str, timestamp: int) -> str:
    return "\n".join(
        [
            "agentledger escrow hire",
            f"chain: {chain_id}",
            f"escrow: {escrow}",
            f"job: {job_id}",
            f"input: {input_sha}",
            f"timestamp: {timestamp}",
        ]
    )


def sign_message(account: Any, message: str) -> str:
    _, _, encode_defunct, _ = _eth()
    return "0x" + bytes(account.sign_message(encode_defunct(text=message)).signature).hex()


def signed_tx(account: Any, *, to: str, data: str, nonce: int, gas: int, gas_price: int, chain_id: int) -> str:
    tx = {"to": to, "data": data, "nonce": nonce, "gas": gas, "gasPrice": gas_price, "value": 0, "chainId": chain_id}
    return "0x" + bytes(account.sign_transaction(tx).raw_transaction).hex()


def with_margin(gas: int) -> int:
    return int(Decimal(gas) * GAS_MARGIN)
