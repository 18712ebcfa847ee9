"""A deployed agentledger on a live chain, with named accounts: used by the tests, the gas
benchmark and the demo scripts (not by the service itself)."""

from __future__ import annotations

import hashlib
import os
from dataclasses import dataclass, field
from typing import Any

from eth_account import Account
from eth_account.messages import encode_defunct
from eth_account.signers.local import LocalAccount
from web3 import Web3
from web3.contract import Contract
from web3.contract.contract import ContractFunction
from web3.logs import DISCARD
from web3.types import TxReceipt

from core.chain import CONTRACT_NAMES, contract_at, send
from core.checkout.rules import funding_typed_data
from core.deployments import Deployment
from core.marketplace.rules import STATEMENT_SECONDS, earnings_statement_typed_data
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

    def funding_signature(self, buyer: LocalAccount, job: bytes, token_id: int, amount: int, deadline: int) -> bytes:
        """`buyer`'s EIP-712 consent to PaymentGateway.fund(job, buyer, token_id, amount, deadline)."""
        typed = funding_typed_data(
            chain_id=self.deployment.chain_id,
            gateway=self.gateway.address,
            job_id="0x" + job.hex(),
            buyer=buyer.address,
            provider_token_id=token_id,
            amount=amount,
            deadline=deadline,
        )
        return bytes(buyer.sign_typed_data(full_message=typed).signature)

    def fund_fn(self, buyer: LocalAccount, job: bytes, token_id: int, amount: int, deadline: int) -> ContractFunction:
        """PaymentGateway.fund of `job`, carrying `buyer`'s consent (for the operator to send)."""
        sig = self.funding_signature(buyer, job, token_id, amount, deadline)
        return self.gateway.functions.fund(job, buyer.address, token_id, amount, deadline, sig)

    def self_wallet_proof(self, wallet: LocalAccount, token_id: int, owner: str, deadline: int) -> bytes:
        """`wallet`'s EIP-712 proof that it accepts to be `token_id`'s self wallet under `owner`."""
        nonce: int = self.registry.functions.selfWalletNonce(token_id).call()
        typed = self_wallet_typed_data(
            chain_id=self.deployment.chain_id,
            registry=self.registry.address,
            token_id=token_id,
            self_wallet=wallet.address,
            owner=owner,
            nonce=nonce,
            deadline=deadline,
        )
        return bytes(wallet.sign_typed_data(full_message=typed).signature)

    def set_self_wallet_fn(self, owner: str, token_id: int, wallet: LocalAccount) -> ContractFunction:
        """AgentRegistry.setSelfWallet(token_id, wallet) with `wallet`'s proof (valid 1 h), for `owner` to send."""
        deadline = self.now() + 3600
        proof = self.self_wallet_proof(wallet, token_id, owner, deadline)
        return self.registry.functions.setSelfWallet(token_id, wallet.address, deadline, proof)

    def earnings_statement(
        self,
        seller: str,
        token_id: int,
        reported: int = 0,
        *,
        nonce: int | None = None,
        deadline: int | None = None,
        signer: LocalAccount | None = None,
    ) -> tuple[tuple[int, str, int, int, int], bytes]:
        """An EarningsStatement for AgentMarketplace.list, signed by the operator (or `signer`): the
        struct as the contract takes it, and the signature. A fresh random nonce unless given."""
        statement = (
            token_id,
            seller,
            reported,
            int.from_bytes(os.urandom(32), "big") if nonce is None else nonce,
            self.now() + STATEMENT_SECONDS if deadline is None else deadline,
        )
        typed = earnings_statement_typed_data(
            chain_id=self.deployment.chain_id,
            marketplace=self.market.address,
            token_id=statement[0],
            seller=statement[1],
            reported=statement[2],
            nonce=statement[3],
            deadline=statement[4],
        )
        return statement, bytes((signer or self.operator).sign_typed_data(full_message=typed).signature)

    def list_fn(
        self, seller: str, token_id: int, asking: int, floor: int, duration: int = 0, reported: int = 0
    ) -> ContractFunction:
        """AgentMarketplace.list for `seller` to send, with the operator's statement of `reported` earnings."""
        statement, sig = self.earnings_statement(seller, token_id, reported)
        return self.market.functions.list(token_id, asking, floor, duration, statement, sig)

    def register_agent(self, owner: str, self_wallet: str, wallet_id: str, referrer: int = 0) -> int:
        receipt = self.tx(
            self.operator, self.registry.functions.mint(owner, self_wallet, wallet_id, referrer), "AgentRegistry.mint"
        )
        (ev,) = self.events(receipt, "AgentRegistry", "AgentRegistered")
        token_id: int = ev["args"]["tokenId"]
        return token_id


_DISCARD: Any = DISCARD


def self_wallet_typed_data(
    *, chain_id: int, registry: str, token_id: int, self_wallet: str, owner: str, nonce: int, deadline: int
) -> dict[str, Any]:
    """The EIP-712 typed data a new self wallet signs for AgentRegistry.setSelfWallet."""
    return {
        "domain": {
            "name": "agentledger AgentRegistry",
            "version": "1",
            "chainId": chain_id,
            "verifyingContract": registry,
        },
        "types": {
            "EIP712Domain": [
                {"name": "name", "type": "string"},
                {"name": "version", "type": "string"},
                {"name": "chainId", "type": "uint256"},
                {"name": "verifyingContract", "type": "address"},
            ],
            "SelfWallet": [
                {"name": "tokenId", "type": "uint256"},
                {"name": "selfWallet", "type": "address"},
                {"name": "owner", "type": "address"},
                {"name": "nonce", "type": "uint256"},
                {"name": "deadline", "type": "uint256"},
            ],
        },
        "primaryType": "SelfWallet",
        "message": {
            "tokenId": token_id,
            "selfWallet": self_wallet,
            "owner": owner,
            "nonce": nonce,
            "deadline": deadline,
        },
    }


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


DAY = 86_400


def _node(a: bytes, b: bytes) -> bytes:
    return hashlib.sha256(b"\x01" + a + b).digest()


def run_scenario(s: System) -> dict[str, int]:
    """Exercise every contract operation once (every event type appears); return gas by label."""
    gas: dict[str, int] = {}

    def tx(label: str, account: object, fn: object) -> None:
        receipt = s.tx(account, fn)  # type: ignore[arg-type]
        gas[label] = receipt["gasUsed"]

    owner, self_a, owner_b, self_b, buyer, buyer2, payer = (s.users[i] for i in range(7))
    for u in (buyer, buyer2, payer, owner):
        s.mint_usdc(u.address, 1_000_000 * USDC)
    tx("MockUSDC.approve", buyer, s.usdc.functions.approve(s.gateway.address, 2**255))
    s.approve(buyer, s.escrow.address, 2**255)
    s.approve(buyer, s.market.address, 2**255)
    s.approve(buyer2, s.market.address, 2**255)
    s.approve(payer, s.payouts.address, 2**255)

    tx(
        "AgentRegistry.mint",
        s.operator,
        s.registry.functions.mint(owner.address, self_a.address, "agl_00000000000a", 0),
    )
    tx(
        "AgentRegistry.mint (referred)",
        s.operator,
        s.registry.functions.mint(owner_b.address, self_b.address, "agl_00000000000b", 1),
    )
    tx("AgentRegistry.setSelfWallet", owner_b, s.set_self_wallet_fn(owner_b.address, 2, s.users[8]))
    tx("AgentRegistry.setSelfWallet", owner_b, s.set_self_wallet_fn(owner_b.address, 2, self_b))

    s.tx(s.deployer, s.payouts.functions.grantRole(s.payouts.functions.PAYER_ROLE().call(), payer.address))
    tx("AgentPayouts.pay", payer, s.payouts.functions.pay(1, 100 * USDC, b"\x01" * 32))
    tx("AgentPayouts.pay (referred)", payer, s.payouts.functions.pay(2, 100 * USDC, b"\x02" * 32))
    s.tx(s.deployer, s.usdc.functions.setBlacklisted(owner.address, True))
    tx("AgentPayouts.pay (owner blacklisted: credit)", payer, s.payouts.functions.pay(1, 100 * USDC, b"\x03" * 32))
    s.tx(s.deployer, s.usdc.functions.setBlacklisted(owner.address, False))
    tx("AgentPayouts.withdrawCredit", owner, s.payouts.functions.withdrawCredit(owner.address))

    deadline = s.now() + 2 * DAY
    jobs = [bytes([0xA0 + i]) * 32 for i in range(4)]
    for j in jobs:
        tx("PaymentGateway.fund", s.operator, s.fund_fn(buyer, j, 1, 250 * USDC, deadline))
    cid = "bafkreigh2akiscaildcqabsyg3dfr6chu3fgpregiymsck7e7aqa4s52zy"
    ts = s.now()
    sig = self_a.sign_message(encode_defunct(text=f"complete:0x{jobs[0].hex()}:{cid}:{ts}")).signature
    tx("PaymentGateway.release", s.users[9], s.gateway.functions.release(jobs[0], cid, ts, sig))
    tx("PaymentGateway.openDispute", buyer, s.gateway.functions.openDispute(jobs[1]))
    tx("PaymentGateway.resolveDispute (split)", s.arbiter, s.gateway.functions.resolveDispute(jobs[1], 100 * USDC))
    tx("PaymentGateway.openDispute", buyer, s.gateway.functions.openDispute(jobs[2]))
    tx("PaymentGateway.resolveDispute (refund)", s.arbiter, s.gateway.functions.resolveDispute(jobs[2], 0))

    tx("AgentEscrow.setPrice", owner, s.escrow.functions.setPrice(1, 50 * USDC, 0))  # 0: the default SLA
    sla: int = s.escrow.functions.slaOf(1).call()
    hires = [bytes([0xB0 + i]) * 32 for i in range(3)]
    for h in hires:
        tx("AgentEscrow.createJob", buyer, s.escrow.functions.createJob(h, "agl_00000000000a", 50 * USDC, sla))
    tx("AgentEscrow.release", s.operator, s.escrow.functions.release(hires[0]))
    tx("AgentEscrow.refund", s.operator, s.escrow.functions.refund(hires[1]))

    s.advance(8 * DAY)
    tx("PaymentGateway.reclaim", buyer, s.gateway.functions.reclaim(jobs[3]))
    tx("AgentEscrow.reclaim", buyer, s.escrow.functions.reclaim(hires[2]))

    s.tx(owner, s.registry.functions.setApprovalForAll(s.market.address, True))
    tx("AgentMarketplace.list", owner, s.list_fn(owner.address, 1, 1000 * USDC, 200 * USDC))
    tx("AgentMarketplace.buy", buyer, s.market.functions.buy(1))
    s.advance(7 * DAY)
    tx("AgentMarketplace.settle", s.users[9], s.market.functions.settle(1))
    assert s.registry.functions.selfWalletOf(1).call() == "0x" + "00" * 20  # reset on the change of hands
    tx("AgentRegistry.setSelfWallet (after a sale)", buyer, s.set_self_wallet_fn(buyer.address, 1, self_a))
    s.tx(buyer, s.registry.functions.setApprovalForAll(s.market.address, True))
    s.tx(buyer, s.list_fn(buyer.address, 1, 1000 * USDC, 200 * USDC))
    offer = (2, buyer2.address, 300 * USDC, 1, s.now() + DAY)
    domain = {
        "name": "agentledger Marketplace",
        "version": "1",
        "chainId": s.w3.eth.chain_id,
        "verifyingContract": s.market.address,
    }
    types = {
        "Offer": [
            {"name": n, "type": t}
            for n, t in (
                ("listingId", "uint256"),
                ("buyer", "address"),
                ("price", "uint256"),
                ("nonce", "uint256"),
                ("deadline", "uint256"),
            )
        ]
    }
    msg = dict(zip(("listingId", "buyer", "price", "nonce", "deadline"), offer, strict=True))
    osig = buyer2.sign_typed_data(domain, types, msg).signature
    tx("AgentMarketplace.acceptOffer", buyer, s.market.functions.acceptOffer(2, offer, osig))
    s.tx(owner_b, s.registry.functions.setApprovalForAll(s.market.address, True))
    s.tx(owner_b, s.list_fn(owner_b.address, 2, 1000 * USDC, 500 * USDC))
    tx("AgentMarketplace.cancel", owner_b, s.market.functions.cancel(3))
    s.tx(owner_b, s.list_fn(owner_b.address, 2, 1000 * USDC, 500 * USDC, DAY))
    s.advance(DAY + 1)
    tx("AgentMarketplace.expire", s.users[9], s.market.functions.expire(4))

    # Anchor a 2^20-leaf tree built from one leaf and random siblings; check the proof on-chain.
    leaf = hashlib.sha256(b"\x00" + b"entry").digest()
    siblings = [hashlib.sha256(bytes([i])).digest() for i in range(20)]
    index = 0b1010_1010_1010_1010_1010
    root = leaf
    for level, sib in enumerate(siblings):
        root = _node(sib, root) if (index >> level) & 1 else _node(root, sib)
    tx("AuditAnchor.anchor", s.anchorer, s.anchor.functions.anchor(2**20, root))
    view = s.anchor.functions.verifyInclusion(index, 2**20, leaf, siblings)
    assert view.call() is True
    gas["AuditAnchor.verifyInclusion @ 2^20 leaves (view, estimateGas)"] = view.estimate_gas()
    return gas
