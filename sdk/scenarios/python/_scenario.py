"""What every Python scenario shares: the environment (AGENTLEDGER_URL, AGENTLEDGER_RPC_URL,
AGENTLEDGER_PRIVATE_KEYS), checks that end the script with a message, the one JSON summary line, and
the local test chain's scaffolding (fresh accounts funded from the first key, test USDC from MockUSDC,
chain time moved by anvil). Only the SDK and its ``escrow`` extra (eth-account) are used."""

from __future__ import annotations

import json
import os
import sys
import time
from collections.abc import Callable
from typing import Any, TypeVar

import httpx
from agentledger_sdk import AgentLedger, to_units
from eth_account import Account
from eth_account.signers.local import LocalAccount

T = TypeVar("T")

URL = os.environ.get("AGENTLEDGER_URL", "http://127.0.0.1:8080")
RPC_URL = os.environ.get("AGENTLEDGER_RPC_URL", "http://127.0.0.1:8545")
KEYS = [k.strip() for k in os.environ.get("AGENTLEDGER_PRIVATE_KEYS", "").split(",") if k.strip()]


class Failed(Exception):
    pass


def check(condition: object, what: str) -> None:
    if not condition:
        raise Failed(what)


def run(scenario: Callable[[], dict[str, Any]]) -> None:
    """Run the scenario: its summary as one JSON line and exit 0, or what failed and exit 1."""
    try:
        summary = scenario()
    except Failed as exc:
        print(json.dumps({"ok": False, "failed": str(exc)}))
        sys.exit(1)
    print(json.dumps({"ok": True, **summary}, default=str))
    sys.exit(0)


def until(read: Callable[[], T], done: Callable[[T], bool], what: str, timeout: float = 60.0) -> T:
    """Poll ``read`` until ``done`` holds (the service's indexer and sweeps work in the background)."""
    deadline = time.monotonic() + timeout
    while True:
        value = read()
        if done(value):
            return value
        if time.monotonic() > deadline:
            raise Failed(f"timed out waiting for {what}: last saw {value!r}")
        time.sleep(0.25)


# ---- the local test chain ----------------------------------------------------------------------------


def _rpc(method: str, params: list[Any]) -> Any:
    reply = httpx.post(RPC_URL, json={"jsonrpc": "2.0", "id": 1, "method": method, "params": params}, timeout=30).json()
    if "error" in reply:
        raise Failed(f"{method}: {reply['error']}")
    return reply["result"]


def _send(acct: LocalAccount, to: str, data: str = "0x", value: int = 0) -> None:
    chain_id = int(_rpc("eth_chainId", []), 16)
    nonce = int(_rpc("eth_getTransactionCount", [acct.address, "pending"]), 16)
    gas = int(_rpc("eth_estimateGas", [{"from": acct.address, "to": to, "data": data, "value": hex(value)}]), 16)
    price = int(_rpc("eth_gasPrice", []), 16)
    tx: dict[str, Any] = {"to": to, "data": data, "value": value, "nonce": nonce, "gas": gas * 2, "gasPrice": price}
    tx["chainId"] = chain_id
    tx_hash = _rpc("eth_sendRawTransaction", ["0x" + acct.sign_transaction(tx).raw_transaction.hex()])
    receipt = until(lambda: _rpc("eth_getTransactionReceipt", [tx_hash]), lambda r: r is not None, tx_hash)
    check(int(receipt["status"], 16) == 1, f"transaction {tx_hash} reverted")


def fresh_account() -> LocalAccount:
    """A new account holding 1 ETH for gas, sent from the first funded key."""
    check(KEYS, "AGENTLEDGER_PRIVATE_KEYS names no funded key")
    acct: LocalAccount = Account.create()
    _send(Account.from_key(KEYS[0]), acct.address, value=10**18)
    return acct


def mint_test_usdc(acct: LocalAccount, amount: str) -> None:
    """MockUSDC.mint(acct, amount) (anyone may mint on the local test chain)."""
    with AgentLedger(URL) as al:
        usdc = al.deployment().usdc
    word = to_units(amount).to_bytes(32, "big").hex()
    _send(acct, usdc, "0x40c10f19" + bytes(12).hex() + acct.address[2:].lower() + word)


def advance_chain_time(seconds: int) -> None:
    _rpc("evm_increaseTime", [seconds])
    _rpc("evm_mine", [])
