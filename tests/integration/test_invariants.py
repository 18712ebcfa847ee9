"""Invariant: after any random sequence of fund (with and without the buyer's consent) / release /
dispute / resolve / reclaim / hire / list / buy / offer / settle / cancel / expire / transfer /
set self wallet, the USDC each contract holds equals exactly what it still owes (computed from an
independent Python model, not from the contracts' own counters), no USDC appears or vanishes,
every agent NFT is where the model says it is, and every agent's self wallet is the one the model
says (reset to zero by a change of hands, kept through a listing that ends without a sale)."""

from __future__ import annotations

import random
from dataclasses import dataclass, field

import pytest
from eth_account import Account
from eth_account.messages import encode_defunct
from eth_account.signers.local import LocalAccount
from web3.exceptions import ContractCustomError, ContractLogicError

from core.money import split
from tests.integration.chainkit import USDC, System

DAY = 86_400
HOUR = 3600
AGENTS = 4
GRACE = 3600  # AgentEscrow.SETTLEMENT_GRACE
ZERO = "0x" + "00" * 20


@dataclass
class Model:
    gateway_jobs: dict[bytes, int] = field(default_factory=dict)  # open (funded/disputed) job -> amount
    disputed: set[bytes] = field(default_factory=set)
    gateway_meta: dict[bytes, tuple[LocalAccount, int, int]] = field(default_factory=dict)  # buyer, token, deadline
    escrow_jobs: dict[bytes, tuple[LocalAccount, int, int]] = field(default_factory=dict)  # caller, amount, expiry
    listings: dict[int, dict[str, object]] = field(default_factory=dict)  # open or committed
    owner_of: dict[int, str] = field(default_factory=dict)
    self_of: dict[int, LocalAccount | None] = field(default_factory=dict)  # None: reset, not set again yet
    sla_of: dict[int, int] = field(default_factory=dict)
    credits: dict[str, dict[str, int]] = field(default_factory=dict)  # contract -> payee -> credit


class Run:
    def __init__(self, system: System, seed: int) -> None:
        self.s = system
        self.rng = random.Random(seed)
        self.m = Model()
        self.owners = system.users[:AGENTS]
        self.selves = [Account.from_key(bytes([seed % 250 + 1]) * 31 + bytes([i + 1])) for i in range(AGENTS)]
        self.buyers = system.users[AGENTS : AGENTS + 5]
        self.blacklisted: set[str] = set()
        self.done: dict[str, int] = {}  # successful state changes by kind, to prove the run did something
        self.job_counter = 0
        self.offer_nonce = 0
        self.wallets_made = 0
        for i in range(AGENTS):
            token = system.register_agent(
                self.owners[i].address, self.selves[i].address, f"agl_{i:012x}", 1 if i == 3 else 0
            )
            self.m.owner_of[token] = self.owners[i].address
            self.m.self_of[token] = self.selves[i]
            self.m.sla_of[token] = self.rng.choice([HOUR, DAY, 3 * DAY])
            system.tx(
                self.owners[i], system.escrow.functions.setPrice(token, (i + 1) * 10 * USDC, self.m.sla_of[token])
            )
            system.tx(self.owners[i], system.registry.functions.setApprovalForAll(system.market.address, True))
        for b in self.buyers + self.owners:
            system.mint_usdc(b.address, 100_000 * USDC)
            for spender in (system.gateway, system.escrow, system.market):
                system.approve(b, spender.address, 2**255)
        self.supply = system.usdc.functions.totalSupply().call()

    # ---- helpers ------------------------------------------------------------------------
    def try_tx(self, account: LocalAccount, fn: object) -> bool:
        try:
            self.s.tx(account, fn)  # type: ignore[arg-type]
            return True
        except (ContractCustomError, ContractLogicError):
            return False

    def new_id(self) -> bytes:
        self.job_counter += 1
        return self.rng.randbytes(28) + self.job_counter.to_bytes(4, "big")

    def after(self, boundary: int) -> bool | None:
        """Whether the next block is past `boundary`; None within a minute of it (too close to call)."""
        now = self.s.now()
        if now > boundary + 60:
            return True
        if now + 60 < boundary:
            return False
        return None

    def payee_of_owner(self, token: int) -> str:
        for lst in self.m.listings.values():
            if lst["token"] == token:
                return str(lst["seller"])
        return self.m.owner_of[token]

    # ---- operations ---------------------------------------------------------------------
    def op_fund(self) -> None:
        buyer = self.rng.choice(self.buyers)
        token = self.rng.randint(1, AGENTS)
        amount = self.rng.randint(1, 500) * USDC + self.rng.randint(0, 999_999)
        deadline = self.s.now() + self.rng.randint(1, 5) * DAY
        job = self.new_id()
        listed = any(lst["token"] == token for lst in self.m.listings.values())
        # the operator alone (another account's signature, or none) can never pull the buyer's USDC
        forger = self.rng.choice([self.s.operator, self.rng.choice(self.buyers)])
        forged = self.s.funding_signature(forger, job, token, amount, deadline) if forger != buyer else b""
        assert not self.try_tx(
            self.s.operator, self.s.gateway.functions.fund(job, buyer.address, token, amount, deadline, forged)
        )
        ok = self.try_tx(self.s.operator, self.s.fund_fn(buyer, job, token, amount, deadline))
        blocked = buyer.address in self.blacklisted
        assert ok == (not listed and not blocked and self.m.self_of[token] is not None)
        if ok:
            self.m.gateway_jobs[job] = amount
            self.m.gateway_meta[job] = (buyer, token, deadline)

    def op_release(self) -> None:
        open_jobs = [j for j in self.m.gateway_jobs if j not in self.m.disputed]
        if not open_jobs:
            return
        job = self.rng.choice(open_jobs)
        _, token, deadline = self.m.gateway_meta[job]
        cid = "bafkrei" + self.rng.randbytes(8).hex()
        ts = self.s.now()
        msg = f"complete:0x{job.hex()}:{cid}:{ts}"
        signer = self.m.self_of[token] or self.selves[token - 1]  # reset: the old self wallet tries
        sig = signer.sign_message(encode_defunct(text=msg)).signature
        submitter = self.rng.choice(self.s.users)
        late = self.after(deadline)
        ok = self.try_tx(submitter, self.s.gateway.functions.release(job, cid, ts, sig))
        if late is not None:
            assert ok == (not late and self.m.self_of[token] is not None)
        if ok:
            self.pay_model(token, self.m.gateway_jobs.pop(job))

    def op_dispute(self) -> None:
        open_jobs = [j for j in self.m.gateway_jobs if j not in self.m.disputed]
        if not open_jobs:
            return
        job = self.rng.choice(open_jobs)
        buyer, _, _ = self.m.gateway_meta[job]
        assert self.try_tx(buyer, self.s.gateway.functions.openDispute(job))
        self.m.disputed.add(job)

    def op_resolve(self) -> None:
        if not self.m.disputed:
            return
        job = self.rng.choice(sorted(self.m.disputed))
        amount = self.m.gateway_jobs[job]
        provider_part = self.rng.choice([0, amount, self.rng.randint(0, amount)])
        buyer, token, _ = self.m.gateway_meta[job]
        ok = self.try_tx(self.s.arbiter, self.s.gateway.functions.resolveDispute(job, provider_part))
        assert ok == (provider_part == 0 or self.m.self_of[token] is not None)  # no payout without a self wallet
        if not ok:
            return
        del self.m.gateway_jobs[job]
        self.m.disputed.discard(job)
        if provider_part:
            self.pay_model(token, provider_part)
        self.maybe_credit("PaymentGateway", buyer.address, amount - provider_part)

    def op_reclaim(self) -> None:
        open_jobs = [j for j in self.m.gateway_jobs if j not in self.m.disputed]
        if not open_jobs:
            return
        job = self.rng.choice(open_jobs)
        buyer, _, deadline = self.m.gateway_meta[job]
        late = self.after(deadline)
        ok = self.try_tx(buyer, self.s.gateway.functions.reclaim(job))
        if late is not None:
            assert ok == late
        if ok:
            self.maybe_credit("PaymentGateway", buyer.address, self.m.gateway_jobs.pop(job))

    def op_hire(self) -> None:
        caller = self.rng.choice(self.buyers)
        token = self.rng.randint(1, AGENTS)
        price = token * 10 * USDC
        job = self.new_id()
        listed = any(lst["token"] == token for lst in self.m.listings.values())
        sla = self.m.sla_of[token]
        wallet = f"agl_{token - 1:012x}"
        assert not self.try_tx(
            caller, self.s.escrow.functions.createJob(job, wallet, price, sla + 1)
        )  # SLA it did not accept
        ok = self.try_tx(caller, self.s.escrow.functions.createJob(job, wallet, price, sla))
        assert ok == (not listed and caller.address not in self.blacklisted and self.m.self_of[token] is not None)
        if ok:
            self.m.escrow_jobs[job] = (caller, price, self.s.now() + sla + GRACE)

    def op_hire_end(self) -> None:
        if not self.m.escrow_jobs:
            return
        job = self.rng.choice(sorted(self.m.escrow_jobs))
        caller, amount, expiry = self.m.escrow_jobs[job]
        token = amount // (10 * USDC)
        kind = self.rng.choice(["release", "refund", "reclaim"])
        late = self.after(expiry)
        if kind == "release":
            ok = self.try_tx(self.s.operator, self.s.escrow.functions.release(job))
            if late is not None:
                assert ok == (not late and self.m.self_of[token] is not None)
            if not ok:
                return
            self.pay_model(token, amount)
        elif kind == "refund":
            ok = self.try_tx(self.s.operator, self.s.escrow.functions.refund(job))
            if late is not None:
                assert ok == (not late)
            if not ok:
                return
            self.maybe_credit("AgentEscrow", caller.address, amount)
        else:  # anyone may reclaim an expired job; the USDC goes to its caller
            ok = self.try_tx(self.rng.choice(self.s.users), self.s.escrow.functions.reclaim(job))
            if late is not None:
                assert ok == late
            if not ok:
                return
            self.maybe_credit("AgentEscrow", caller.address, amount)
        del self.m.escrow_jobs[job]

    def op_list(self) -> None:
        free = [t for t in self.m.owner_of if not any(lst["token"] == t for lst in self.m.listings.values())]
        if not free:
            return
        token = self.rng.choice(free)
        owner = next(a for a in self.s.users + self.buyers if a.address == self.m.owner_of[token])
        if owner.address not in {o.address for o in self.owners}:
            self.s.tx(owner, self.s.registry.functions.setApprovalForAll(self.s.market.address, True))
        earnings = self.s.registry.functions.lifetimeEarningsOf(token).call()
        floor = max(1, -(-earnings * 25 // 100))
        asking = floor + self.rng.randint(0, 1000) * USDC
        receipt = self.s.tx(owner, self.s.list_fn(owner.address, token, asking, floor, self.rng.choice([0, 2 * DAY])))
        (ev,) = self.s.events(receipt, "AgentMarketplace", "Listed")
        self.m.listings[ev["args"]["listingId"]] = {
            "token": token,
            "seller": owner.address,
            "asking": asking,
            "floor": floor,
            "expires": ev["args"]["expiresAt"],
            "buyer": None,
            "price": 0,
            "notice": 0,
        }

    def op_commit(self) -> None:
        open_ls = [i for i, lst in self.m.listings.items() if lst["buyer"] is None]
        if not open_ls:
            return
        lid = self.rng.choice(open_ls)
        lst = self.m.listings[lid]
        buyer = self.rng.choice([b for b in self.buyers if b.address != lst["seller"]])
        expired = self.after(int(lst["expires"]))  # type: ignore[call-overload]
        if self.rng.random() < 0.5:
            ok = self.try_tx(buyer, self.s.market.functions.buy(lid))
            price = int(lst["asking"])  # type: ignore[call-overload]
        else:
            price = int(lst["floor"]) + self.rng.randint(0, 50) * USDC  # type: ignore[call-overload]
            self.offer_nonce += 1
            offer = (lid, buyer.address, price, self.offer_nonce, self.s.now() + DAY)
            sig = self.sign_offer(buyer, offer)
            seller = next(a for a in self.s.users + self.buyers if a.address == lst["seller"])
            ok = self.try_tx(seller, self.s.market.functions.acceptOffer(lid, offer, sig))
        if expired is not None:
            assert ok == (not expired and buyer.address not in self.blacklisted)
        if ok:
            lst.update(buyer=buyer.address, price=price, notice=self.s.now() + 7 * DAY)
            self.done["commit"] = self.done.get("commit", 0) + 1

    def sign_offer(self, buyer: LocalAccount, offer: tuple[int, str, int, int, int]) -> bytes:
        domain = {
            "name": "agentledger Marketplace",
            "version": "1",
            "chainId": self.s.w3.eth.chain_id,
            "verifyingContract": self.s.market.address,
        }
        types = {
            "Offer": [
                {"name": "listingId", "type": "uint256"},
                {"name": "buyer", "type": "address"},
                {"name": "price", "type": "uint256"},
                {"name": "nonce", "type": "uint256"},
                {"name": "deadline", "type": "uint256"},
            ]
        }
        msg = dict(zip(["listingId", "buyer", "price", "nonce", "deadline"], offer, strict=True))
        signed = Account.sign_typed_data(buyer.key, domain, types, msg)
        return bytes(signed.signature)

    def op_end_listing(self) -> None:
        if not self.m.listings:
            return
        lid = self.rng.choice(sorted(self.m.listings))
        lst = self.m.listings[lid]
        seller = next(a for a in self.s.users + self.buyers if a.address == lst["seller"])
        token = int(lst["token"])  # type: ignore[call-overload]
        if lst["buyer"] is not None:
            due = self.after(int(lst["notice"]))  # type: ignore[call-overload]
            ok = self.try_tx(self.rng.choice(self.s.users), self.s.market.functions.settle(lid))
            if due is not None:
                assert ok == due
            if ok:
                price = int(lst["price"])  # type: ignore[call-overload]
                seller_amount = price * 9800 // 10000
                self.maybe_credit("AgentMarketplace", str(lst["seller"]), seller_amount)
                self.m.owner_of[token] = str(lst["buyer"])
                self.m.self_of[token] = None  # a sale is a change of hands
                self.done["settle"] = self.done.get("settle", 0) + 1
                del self.m.listings[lid]
            else:
                assert not self.try_tx(seller, self.s.market.functions.cancel(lid))  # notice window: no cancel
            return
        if self.rng.random() < 0.5:
            assert self.try_tx(seller, self.s.market.functions.cancel(lid))
            del self.m.listings[lid]
        else:
            due = self.after(int(lst["expires"]))  # type: ignore[call-overload]
            ok = self.try_tx(self.rng.choice(self.s.users), self.s.market.functions.expire(lid))
            if due is not None:
                assert ok == due
            if ok:
                del self.m.listings[lid]

    def account(self, address: str) -> LocalAccount:
        return next(a for a in self.s.users + self.buyers if a.address == address)

    def op_transfer(self) -> None:
        """The owner hands an unlisted agent to someone else directly: its self wallet is reset."""
        listed = {lst["token"] for lst in self.m.listings.values()}
        free = [t for t in self.m.owner_of if t not in listed]
        if not free:
            return
        token = self.rng.choice(free)
        owner = self.account(self.m.owner_of[token])
        to = self.rng.choice([b for b in self.buyers + self.owners if b.address != owner.address])
        self.s.tx(owner, self.s.registry.functions.transferFrom(owner.address, to.address, token))
        self.m.owner_of[token] = to.address
        self.m.self_of[token] = None
        self.s.tx(to, self.s.registry.functions.setApprovalForAll(self.s.market.address, True))

    def op_set_self_wallet(self) -> None:
        """The owner of an agent whose self wallet was reset names a new one, with the new wallet's
        proof; without the proof (signed by another key) it is refused."""
        listed = {lst["token"] for lst in self.m.listings.values()}
        reset = [t for t, w in self.m.self_of.items() if w is None and t not in listed]
        if not reset:
            return
        token = self.rng.choice(reset)
        owner = self.account(self.m.owner_of[token])
        self.wallets_made += 1
        fresh = Account.from_key(bytes([0xA0 + self.rng.randint(0, 15)]) * 28 + self.wallets_made.to_bytes(4, "big"))
        deadline = self.s.now() + HOUR
        impostor = self.s.self_wallet_proof(owner, token, owner.address, deadline)  # the owner's own key
        bad = self.s.registry.functions.setSelfWallet(token, fresh.address, deadline, impostor)
        assert not self.try_tx(owner, bad)
        assert self.try_tx(owner, self.s.set_self_wallet_fn(owner.address, token, fresh))
        self.m.self_of[token] = fresh

    def op_time(self) -> None:
        self.s.advance(self.rng.choice([60, 3600, DAY, 3 * DAY, 8 * DAY]))

    def op_blacklist(self) -> None:
        who = self.rng.choice(self.buyers + self.owners)
        flag = who.address not in self.blacklisted
        self.s.tx(self.s.deployer, self.s.usdc.functions.setBlacklisted(who.address, flag))
        (self.blacklisted.add if flag else self.blacklisted.discard)(who.address)

    # ---- model of payouts ---------------------------------------------------------------
    def pay_model(self, token: int, amount: int) -> None:
        self.done["payout"] = self.done.get("payout", 0) + 1
        referred = token == 4
        parts = split(amount, referred)
        owner = self.payee_of_owner(token)
        self.maybe_credit("AgentPayouts", owner, parts.owner_cut)
        if referred:
            self.maybe_credit("AgentPayouts", self.payee_of_owner(1), parts.referral_cut)

    def maybe_credit(self, contract: str, payee: str, amount: int) -> None:
        if amount and payee in self.blacklisted:
            book = self.m.credits.setdefault(contract, {})
            book[payee] = book.get(payee, 0) + amount

    # ---- the invariant --------------------------------------------------------------------
    def check(self) -> None:
        s, m = self.s, self.m
        credits = {
            name: sum(m.credits.get(name, {}).values())
            for name in ("AgentPayouts", "PaymentGateway", "AgentEscrow", "AgentMarketplace")
        }
        owed = {
            "PaymentGateway": sum(m.gateway_jobs.values()) + credits["PaymentGateway"],
            "AgentEscrow": sum(a for _, a, _ in m.escrow_jobs.values()) + credits["AgentEscrow"],
            "AgentMarketplace": sum(int(lst["price"]) for lst in m.listings.values())  # type: ignore[call-overload]
            + credits["AgentMarketplace"],
            "AgentPayouts": credits["AgentPayouts"],
        }
        for name, expected in owed.items():
            assert s.balance(s.c[name].address) == expected, name
            assert s.c[name].functions.totalCredits().call() == credits[name], name
        for payee in self.blacklisted:
            for name in owed:
                assert s.c[name].functions.creditOf(payee).call() == m.credits.get(name, {}).get(payee, 0)
        listed_tokens = {int(lst["token"]): lst for lst in m.listings.values()}  # type: ignore[call-overload]
        for token, owner in m.owner_of.items():
            actual = s.registry.functions.ownerOf(token).call()
            assert actual == (s.market.address if token in listed_tokens else owner)
            assert s.registry.functions.isAgentPaused(token).call() == (token in listed_tokens)
            wallet = m.self_of[token]
            assert s.registry.functions.selfWalletOf(token).call() == (wallet.address if wallet else ZERO)
        assert s.usdc.functions.totalSupply().call() == self.supply  # nothing minted or burnt


OPS = [
    ("op_fund", 4),
    ("op_release", 3),
    ("op_dispute", 1),
    ("op_resolve", 1),
    ("op_reclaim", 1),
    ("op_hire", 3),
    ("op_hire_end", 2),
    ("op_list", 2),
    ("op_commit", 2),
    ("op_end_listing", 2),
    ("op_time", 2),
    ("op_blacklist", 1),
    ("op_transfer", 1),
    ("op_set_self_wallet", 2),
]


@pytest.mark.parametrize("seed", [1, 2, 3])
def test_contracts_hold_exactly_what_they_owe(system: System, seed: int) -> None:
    run = Run(system, seed)
    names = [n for n, w in OPS for _ in range(w)]
    for step in range(200):
        getattr(run, run.rng.choice(names))()
        run.check()
        if step >= 50 and run.done.get("payout", 0) >= 1 and run.done.get("commit", 0) >= 1:
            break
    assert run.done.get("payout", 0) >= 1 and run.done.get("commit", 0) >= 1, run.done
