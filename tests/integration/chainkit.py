"""Helpers for tests against a real anvil: accounts, transactions, reverts, time travel."""

from __future__ import annotations

from collections.abc import Callable
from dataclasses import dataclass, field
from typing import Any

import pytest
from eth_account import Account
from eth_account.signers.local import LocalAccount
from eth_utils import keccak
from web3 import Web3
from web3.contract import Contract
from web3.contract.contract import ContractFunction
from web3.exceptions import ContractCustomError, ContractLogicError
from web3.types import TxReceipt

from core.chain import CONTRACT_NAMES, contract_at, load_artifact, send
from core.deployments import Deployment

USDC = 10**6


def test_account(i: int) -> LocalAccount:
    """A deterministic test account (not anvil's defaults, so no key is shared with make run)."""
    acct: LocalAccount = Account.from_key(keccak(text=f"agentledger-test-account-{i}"))
    return acct


@dataclass
class System:
    """A deployed agentledger on a live anvil, with named accounts."""

    w3: Web3
    deployment: Deployment
    deployer: LocalAccount
    operator: LocalAccount
    arbiter: LocalAccount
    anchorer: LocalAccount
    treasury: LocalAccount
    users: list[LocalAccount]
    c: dict[str, Contract] = field(default_factory=dict)
    gas: dict[str, list[int]] = field(default_factory=dict)

    @property
    def usdc(self) -> Contract:
        return self.c["MockUSDC"]

    @property
    def registry(self) -> Contract:
        return self.c["AgentRegistry"]

    @property
    def payouts(self) -> Contract:
        return self.c["AgentPayouts"]

    @property
    def gateway(self) -> Contract:
        return self.c["PaymentGateway"]

    @property
    def escrow(self) -> Contract:
        return self.c["AgentEscrow"]

    @property
    def market(self) -> Contract:
        return self.c["AgentMarketplace"]

    @property
    def anchor(self) -> Contract:
        return self.c["AuditAnchor"]

    # ---- transactions -----------------------------------------------------------------
    def tx(self, account: LocalAccount, fn: ContractFunction, label: str | None = None) -> TxReceipt:
        receipt = send(self.w3, account, fn)
        if label:
            self.gas.setdefault(label, []).append(receipt["gasUsed"])
        return receipt

    def events(self, receipt: TxReceipt, contract: str, event: str) -> list[Any]:
        return list(getattr(self.c[contract].events, event)().process_receipt(receipt, errors=_DISCARD))

    # ---- time -------------------------------------------------------------------------
    def now(self) -> int:
        ts: int = self.w3.eth.get_block("latest")["timestamp"]
        return ts

    def advance(self, seconds: int) -> None:
        self.w3.provider.make_request("evm_increaseTime", [seconds])  # type: ignore[arg-type]
        self.w3.provider.make_request("evm_mine", [])  # type: ignore[arg-type]

    # ---- convenience ------------------------------------------------------------------
    def mint_usdc(self, to: str, amount: int) -> None:
        self.tx(self.deployer, self.usdc.functions.mint(to, amount))

    def approve(self, owner: LocalAccount, spender: str, amount: int) -> None:
        self.tx(owner, self.usdc.functions.approve(spender, amount))

    def balance(self, who: str) -> int:
        value: int = self.usdc.functions.balanceOf(who).call()
        return value

    def register_agent(self, owner: str, self_wallet: str, wallet_id: str, referrer: int = 0) -> int:
        receipt = self.tx(
            self.operator, self.registry.functions.mint(owner, self_wallet, wallet_id, referrer), "AgentRegistry.mint"
        )
        (ev,) = self.events(receipt, "AgentRegistry", "AgentRegistered")
        token_id: int = ev["args"]["tokenId"]
        return token_id


_DISCARD: Any = __import__("web3.logs", fromlist=["DISCARD"]).DISCARD


def load_system(w3: Web3, dep: Deployment, accounts: dict[str, LocalAccount], users: list[LocalAccount]) -> System:
    contracts = {name: contract_at(w3, name, dep.contracts[name]) for name in CONTRACT_NAMES if name in dep.contracts}
    return System(w3=w3, deployment=dep, users=users, c=contracts, **accounts)


def _error_selectors() -> dict[str, str]:
    table: dict[str, str] = {}
    for name in (*CONTRACT_NAMES, "CreditFallback"):
        for item in load_artifact(name)["abi"]:
            if item["type"] == "error":
                sig = f"{item['name']}({','.join(i['type'] for i in item['inputs'])})"
                table["0x" + keccak(text=sig)[:4].hex()] = item["name"]
    return table


def revert_name(exc: BaseException) -> str:
    """The custom error name (or revert reason) of a failed call or transaction."""
    data = getattr(exc, "data", None)
    if isinstance(data, str) and data.startswith("0x") and len(data) >= 10:
        return _error_selectors().get(data[:10], data[:10])
    return str(getattr(exc, "message", exc))


def assert_reverts(fn: Callable[[], object], error: str) -> None:
    """Run `fn` (which sends or calls) and assert it reverts with custom error `error`."""
    with pytest.raises((ContractCustomError, ContractLogicError)) as info:
        fn()
    assert revert_name(info.value) == error, f"expected {error}, got {revert_name(info.value)}"
