"""The chain client: connecting, compiled artifacts, contract handles and sending transactions."""

from __future__ import annotations

import weakref
from functools import cache
from typing import Any

from eth_account.signers.local import LocalAccount
from web3 import Web3
from web3.contract import Contract
from web3.contract.contract import ContractFunction
from web3.types import TxReceipt

# where they always were, for their many importers (their home: core.paths, light to import)
from core.paths import BUILD_DIR as BUILD_DIR
from core.paths import ROOT as ROOT
from core.paths import load_artifact as load_artifact

#: Every contract `scripts.deploy` puts on a chain, in deploy order.
CONTRACT_NAMES = (
    "MockUSDC",
    "AgentRegistry",
    "AgentPayouts",
    "PaymentGateway",
    "AgentEscrow",
    "AgentMarketplace",
    "AuditAnchor",
)


_chain_ids: weakref.WeakKeyDictionary[Web3, int] = weakref.WeakKeyDictionary()


def chain_id_of(w3: Web3) -> int:
    """The node's chain id, asked once per Web3 instance (it never changes under a connection)."""
    cid = _chain_ids.get(w3)
    if cid is None:
        cid = _chain_ids[w3] = w3.eth.chain_id
    return cid


class TransactionFailed(RuntimeError):
    """A transaction was mined but reverted."""


def connect(rpc_url: str, timeout: float = 30.0) -> Web3:
    """A Web3 for `rpc_url`; raises ConnectionError when the node does not answer."""
    w3 = Web3(Web3.HTTPProvider(rpc_url, request_kwargs={"timeout": timeout}))
    if not w3.is_connected():
        raise ConnectionError(f"no JSON-RPC node answers at {rpc_url}")
    return w3


@cache
def contract_at(w3: Web3, name: str, address: str) -> Contract:
    return w3.eth.contract(address=Web3.to_checksum_address(address), abi=load_artifact(name)["abi"])


def send(w3: Web3, account: LocalAccount, fn: ContractFunction, *, value: int = 0, gas: int | None = None) -> TxReceipt:
    """Sign `fn` with `account`, send it, wait for the receipt; raise if it reverted."""
    tx: dict[str, Any] = {"from": account.address, "value": value, "chainId": chain_id_of(w3)}
    if gas is not None:
        tx["gas"] = gas
    built = dict(fn.build_transaction(tx))  # type: ignore[arg-type]
    return _sign_send_wait(w3, account, built)


def deploy(w3: Web3, account: LocalAccount, name: str, *args: Any) -> tuple[Contract, TxReceipt]:
    """Deploy contract `name` with constructor `args`; return its handle and receipt."""
    art = load_artifact(name)
    factory = w3.eth.contract(abi=art["abi"], bytecode=art["bytecode"])
    built = factory.constructor(*args).build_transaction(
        {"from": account.address, "chainId": chain_id_of(w3)}  # type: ignore[arg-type]
    )
    receipt = _sign_send_wait(w3, account, built)
    address = receipt["contractAddress"]
    assert address is not None
    return contract_at(w3, name, address), receipt


def _sign_send_wait(w3: Web3, account: LocalAccount, tx: dict[str, Any]) -> TxReceipt:
    tx.setdefault("nonce", w3.eth.get_transaction_count(account.address, "pending"))
    signed = account.sign_transaction(tx)
    tx_hash = w3.eth.send_raw_transaction(signed.raw_transaction)
    receipt = w3.eth.wait_for_transaction_receipt(tx_hash, timeout=120)
    if receipt["status"] != 1:
        raise TransactionFailed(f"transaction {tx_hash.to_0x_hex()} reverted")
    return receipt
