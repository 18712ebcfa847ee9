"""A deployed agentledger on a live chain, with named accounts: used by the tests, the gas
benchmark and the demo scripts (not by the service itself)."""

from __future__ import annotations

from dataclasses import dataclass, field
from typing import Any

from eth_account import Account
from eth_account.signers.local import LocalAccount
from web3 import Web3
from web3.contract import Contract
from web3.contract.contract import ContractFunction
from web3.logs import DISCARD
from web3.types import TxReceipt

from core.chain import CONTRACT_NAMES, contract_at, send
from core.deployments import Deployment
from scripts.deploy import Roles, deploy_system

USDC = 10**6


def dev_account(i: int) -> LocalAccount:
    """A deterministic development account (not anvil's defaults, so no key is shared with make run)."""
    acct: LocalAccount = Account.from_key(Web3.keccak(text=f"agentledger-test-account-{i}"))
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


_DISCARD: Any = DISCARD

ETH = 10**18


def deploy_dev_system(w3: Web3, n_users: int = 12) -> System:
    """Fund deterministic accounts on a local node, deploy everything with distinct role holders."""
    deployer, operator, arbiter, anchorer, treasury = (dev_account(i) for i in range(5))
    users = [dev_account(10 + i) for i in range(n_users)]
    for acct in [deployer, operator, arbiter, anchorer, treasury, *users]:
        w3.provider.make_request("anvil_setBalance", [acct.address, hex(1000 * ETH)])  # type: ignore[arg-type]
    roles = Roles(
        admin=deployer.address,
        operator=operator.address,
        arbiter=arbiter.address,
        anchorer=anchorer.address,
        treasury=treasury.address,
    )
    dep = deploy_system(w3, deployer, roles)
    contracts = {name: contract_at(w3, name, dep.contracts[name]) for name in CONTRACT_NAMES if name in dep.contracts}
    return System(
        w3=w3,
        deployment=dep,
        deployer=deployer,
        operator=operator,
        arbiter=arbiter,
        anchorer=anchorer,
        treasury=treasury,
        users=users,
        c=contracts,
    )
