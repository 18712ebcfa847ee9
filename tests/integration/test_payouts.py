"""AgentPayouts (and its CreditFallback) on a real anvil: the split, its events and transfers,
credits for payees that cannot receive, pause, access control, and equality with core.money.split.

A test user (`payer`) is granted PAYER_ROLE and calls `pay` directly, as the escrows do.
"""

from __future__ import annotations

from collections.abc import Iterator
from dataclasses import dataclass
from typing import Any

import pytest
from eth_account.signers.local import LocalAccount
from eth_utils import keccak
from hypothesis import HealthCheck, example, given, settings
from hypothesis import strategies as st
from web3.exceptions import ContractLogicError

from core import money
from core.chain import deploy
from tests.integration.chainkit import USDC, System, assert_reverts, revert_args

ZERO = "0x" + "00" * 20
ADMIN_ROLE = b"\x00" * 32
MAX_UINT = 2**256 - 1


# ---- helpers ---------------------------------------------------------------------------------


def ref_of(n: int) -> bytes:
    return keccak(text=f"job-{n}")


@dataclass
class World:
    """payer (PAYER_ROLE, funded, approved); agent `plain` (no referrer), agent `referred`
    (referred by agent `referrer`)."""

    payer: LocalAccount
    owner: LocalAccount
    self_wallet: LocalAccount
    ref_owner: LocalAccount
    ref_self: LocalAccount
    r_owner: LocalAccount
    r_self: LocalAccount
    other: LocalAccount
    plain: int
    referrer: int
    referred: int


FUNDS = 10**18


@pytest.fixture(scope="module")
def world(deployed: System) -> Iterator[World]:
    """Built once for this module on top of the deployment (each test still runs inside the
    `system` fixture's snapshot, taken after this); reverted when the module is done."""
    w3 = deployed.w3
    snap = w3.provider.make_request("evm_snapshot", [])  # type: ignore[arg-type]
    try:
        u, p = deployed.users, deployed.payouts
        payer = u[0]
        deployed.tx(deployed.deployer, p.functions.grantRole(p.functions.PAYER_ROLE().call(), payer.address))
        deployed.mint_usdc(payer.address, FUNDS)
        deployed.approve(payer, p.address, MAX_UINT)
        plain = deployed.register_agent(u[1].address, u[2].address, "agl_00000000000a")
        referrer = deployed.register_agent(u[3].address, u[4].address, "agl_00000000000b")
        referred = deployed.register_agent(u[5].address, u[6].address, "agl_00000000000c", referrer)
        yield World(payer, u[1], u[2], u[3], u[4], u[5], u[6], u[7], plain, referrer, referred)
    finally:
        w3.provider.make_request("evm_revert", [snap["result"]])  # type: ignore[arg-type]


def pay(system: System, w: World, token: int, amount: int, ref: bytes = b"\x11" * 32) -> Any:
    return system.tx(w.payer, system.payouts.functions.pay(token, amount, ref), "AgentPayouts.pay")


def balances(system: System, *who: str) -> dict[str, int]:
    return {a: system.balance(a) for a in who}


def deltas(system: System, before: dict[str, int]) -> dict[str, int]:
    return {a: system.balance(a) - b for a, b in before.items()}


def usdc_transfers(system: System, receipt: Any) -> list[tuple[str, str, int]]:
    return [
        (e["args"]["from"], e["args"]["to"], e["args"]["value"]) for e in system.events(receipt, "MockUSDC", "Transfer")
    ]


def net_flows(system: System, receipt: Any) -> dict[str, int]:
    """Net USDC change per address over one receipt's Transfer events (zero nets dropped)."""
    net: dict[str, int] = {}
    for src, dst, value in usdc_transfers(system, receipt):
        net[src] = net.get(src, 0) - value
        net[dst] = net.get(dst, 0) + value
    return {a: v for a, v in net.items() if v != 0}


def blacklist(system: System, who: str, flag: bool = True) -> None:
    system.tx(system.deployer, system.usdc.functions.setBlacklisted(who, flag))


def assert_solvent(system: System) -> None:
    """The payouts contract holds exactly the credits it owes, never more, never less."""
    p = system.payouts.functions
    assert system.balance(system.payouts.address) == p.totalCredits().call()


# ---- deployment ------------------------------------------------------------------------------


def test_deploy_wiring_and_constants(system: System) -> None:
    p = system.payouts.functions
    assert (p.BPS().call(), p.OWNER_BPS().call(), p.AGENT_BPS().call(), p.REFERRAL_BPS().call()) == (
        money.BPS,
        money.OWNER_BPS,
        money.AGENT_BPS,
        money.REFERRAL_BPS,
    )
    assert p.registry().call() == system.registry.address
    assert p.usdc().call() == system.usdc.address
    assert p.treasury().call() == system.treasury.address
    assert p.totalCredits().call() == 0
    assert p.paused().call() is False
    payer, pauser = p.PAYER_ROLE().call(), p.PAUSER_ROLE().call()
    assert payer == keccak(text="PAYER_ROLE") and pauser == keccak(text="PAUSER_ROLE")
    assert p.hasRole(payer, system.gateway.address).call() and p.hasRole(payer, system.escrow.address).call()
    assert not p.hasRole(payer, system.operator.address).call()
    assert p.hasRole(pauser, system.deployer.address).call()
    assert p.hasRole(ADMIN_ROLE, system.deployer.address).call()
    assert p.getRoleAdmin(payer).call() == ADMIN_ROLE
    assert p.supportsInterface(bytes.fromhex("7965db0b")).call() is True
    assert p.supportsInterface(bytes.fromhex("ffffffff")).call() is False
    reg = system.registry.functions
    assert reg.hasRole(reg.EARNINGS_ROLE().call(), system.payouts.address).call()


@pytest.mark.parametrize("zero_at", [0, 1, 2, 3])
def test_constructor_rejects_zero_addresses(system: System, zero_at: int) -> None:
    args: list[str] = [system.usdc.address, system.registry.address, system.treasury.address, system.deployer.address]
    args[zero_at] = ZERO
    assert_reverts(lambda: deploy(system.w3, system.deployer, "AgentPayouts", *args), "ZeroAddress")


# ---- the split, paid --------------------------------------------------------------------------


def test_pay_without_referrer(system: System, world: World) -> None:
    w, p = world, system.payouts
    amount = 1_234_567_891
    s = money.split(amount, False)
    assert (s.owner_cut, s.agent_cut, s.service_cut, s.referral_cut) == (1_197_530_854, 12_345_678, 24_691_359, 0)
    treasury = system.treasury.address
    before = balances(system, w.payer.address, w.owner.address, w.self_wallet.address, treasury, p.address)
    ref = ref_of(1)
    receipt = pay(system, w, w.plain, amount, ref)

    assert deltas(system, before) == {
        w.payer.address: -amount,
        w.owner.address: s.owner_cut,
        w.self_wallet.address: s.agent_cut,
        treasury: s.service_cut,
        p.address: 0,
    }
    (ev,) = system.events(receipt, "AgentPayouts", "Payout")
    assert dict(ev["args"]) == {
        "ref": ref,
        "tokenId": w.plain,
        "payer": w.payer.address,
        "amount": amount,
        "ownerCut": s.owner_cut,
        "agentCut": s.agent_cut,
        "serviceCut": s.service_cut,
        "referralCut": 0,
        "owner": w.owner.address,
        "selfWallet": w.self_wallet.address,
        "referrer": ZERO,
    }
    (er,) = system.events(receipt, "AgentRegistry", "EarningsRecorded")
    assert dict(er["args"]) == {"tokenId": w.plain, "amount": amount, "lifetimeEarnings": amount}
    # exactly: pull, owner, self wallet, treasury (no zero-value transfer for the missing referral)
    assert usdc_transfers(system, receipt) == [
        (w.payer.address, p.address, amount),
        (p.address, w.owner.address, s.owner_cut),
        (p.address, w.self_wallet.address, s.agent_cut),
        (p.address, treasury, s.service_cut),
    ]
    assert system.events(receipt, "AgentPayouts", "PaymentCredited") == []
    assert system.registry.functions.lifetimeEarningsOf(w.plain).call() == amount

    # lifetime earnings accumulate; other agents are untouched
    receipt = pay(system, w, w.plain, 5 * USDC, ref_of(2))
    (er,) = system.events(receipt, "AgentRegistry", "EarningsRecorded")
    assert dict(er["args"]) == {"tokenId": w.plain, "amount": 5 * USDC, "lifetimeEarnings": amount + 5 * USDC}
    assert system.registry.functions.lifetimeEarningsOf(w.plain).call() == amount + 5 * USDC
    assert system.registry.functions.lifetimeEarningsOf(w.referred).call() == 0
    assert system.usdc.functions.allowance(w.payer.address, p.address).call() == MAX_UINT
    assert_solvent(system)


def test_pay_with_referrer(system: System, world: World) -> None:
    w, p = world, system.payouts
    amount = 250 * USDC + 3
    s = money.split(amount, True)
    assert (s.owner_cut, s.agent_cut, s.service_cut, s.referral_cut) == (241_250_002, 2_500_000, 5_000_001, 1_250_000)
    treasury = system.treasury.address
    who = (w.payer.address, w.r_owner.address, w.r_self.address, w.ref_owner.address, w.ref_self.address, treasury)
    before = balances(system, *who)
    receipt = pay(system, w, w.referred, amount, ref_of(3))
    assert deltas(system, before) == {
        w.payer.address: -amount,
        w.r_owner.address: s.owner_cut,
        w.r_self.address: s.agent_cut,
        w.ref_owner.address: s.referral_cut,  # the referrer agent's owner, not its self wallet
        w.ref_self.address: 0,
        treasury: s.service_cut,
    }
    (ev,) = system.events(receipt, "AgentPayouts", "Payout")
    a = ev["args"]
    assert (a["ref"], a["tokenId"], a["payer"], a["amount"]) == (ref_of(3), w.referred, w.payer.address, amount)
    assert (a["ownerCut"], a["agentCut"], a["serviceCut"], a["referralCut"]) == (
        s.owner_cut,
        s.agent_cut,
        s.service_cut,
        s.referral_cut,
    )
    assert (a["owner"], a["selfWallet"], a["referrer"]) == (w.r_owner.address, w.r_self.address, w.ref_owner.address)
    assert usdc_transfers(system, receipt) == [
        (w.payer.address, p.address, amount),
        (p.address, w.r_owner.address, s.owner_cut),
        (p.address, w.r_self.address, s.agent_cut),
        (p.address, w.ref_owner.address, s.referral_cut),
        (p.address, treasury, s.service_cut),
    ]
    # earnings are the referred agent's, the referrer's stay zero
    assert system.registry.functions.lifetimeEarningsOf(w.referred).call() == amount
    assert system.registry.functions.lifetimeEarningsOf(w.referrer).call() == 0
    assert_solvent(system)


def test_pay_sums_exactly_at_edge_amounts(system: System, world: World) -> None:
    w = world
    treasury = system.treasury.address
    lifetime = {w.plain: 0, w.referred: 0}
    for amount in (1, 99, 100, 199, 200, 201, 10**6 - 1, 10**12 + 7):
        for token, referred in ((w.plain, False), (w.referred, True)):
            s = money.split(amount, referred)
            receipt = pay(system, w, token, amount)
            owner, selfw = (w.r_owner, w.r_self) if referred else (w.owner, w.self_wallet)
            expected = {
                w.payer.address: -amount,
                owner.address: s.owner_cut,
                selfw.address: s.agent_cut,
                w.ref_owner.address: s.referral_cut,
                treasury: s.service_cut,
            }
            # the contract nets to zero: what it pulled it paid out, to exactly these parties
            assert net_flows(system, receipt) == {a: v for a, v in expected.items() if v != 0}
            (ev,) = system.events(receipt, "AgentPayouts", "Payout")
            a = ev["args"]
            assert (a["ownerCut"], a["agentCut"], a["serviceCut"], a["referralCut"]) == (
                s.owner_cut,
                s.agent_cut,
                s.service_cut,
                s.referral_cut,
            )
            assert a["ownerCut"] + a["agentCut"] + a["serviceCut"] + a["referralCut"] == amount
            # the referrer is named in the event even when its cut rounds to zero
            assert a["referrer"] == (w.ref_owner.address if referred else ZERO)
            # zero parts move nothing: no zero-value transfers, no credits
            assert all(v > 0 for _, _, v in usdc_transfers(system, receipt))
            assert system.events(receipt, "AgentPayouts", "PaymentCredited") == []
            lifetime[token] += amount
    for token, total in lifetime.items():
        assert system.registry.functions.lifetimeEarningsOf(token).call() == total
    assert_solvent(system)
    assert system.payouts.functions.totalCredits().call() == 0


def test_owner_who_is_also_self_wallet_receives_both_parts(system: System, world: World) -> None:
    w = world
    token = system.register_agent(w.other.address, w.other.address, "agl_00000000000d")
    s = money.split(10 * USDC, False)
    before = balances(system, w.other.address)
    pay(system, w, token, 10 * USDC)
    assert deltas(system, before) == {w.other.address: s.owner_cut + s.agent_cut}
    assert s.net == s.owner_cut + s.agent_cut


def test_owner_share_goes_to_the_seller_while_sale_paused(system: System, world: World) -> None:
    w, reg = world, system.registry.functions
    market = system.users[8]
    system.tx(system.deployer, reg.grantRole(reg.MARKET_ROLE().call(), market.address))
    # both the agent and its referrer are listed: their owner shares follow the sellers
    system.tx(market, reg.setSalePause(w.referred, True, w.other.address))
    system.tx(market, reg.setSalePause(w.referrer, True, system.users[9].address))
    amount = 40 * USDC
    s = money.split(amount, True)
    before = balances(system, w.other.address, w.r_owner.address, system.users[9].address, w.ref_owner.address)
    receipt = pay(system, w, w.referred, amount)
    assert deltas(system, before) == {
        w.other.address: s.owner_cut,
        w.r_owner.address: 0,
        system.users[9].address: s.referral_cut,
        w.ref_owner.address: 0,
    }
    (ev,) = system.events(receipt, "AgentPayouts", "Payout")
    assert (ev["args"]["owner"], ev["args"]["referrer"]) == (w.other.address, system.users[9].address)
    # unpaused: back to the token owners
    system.tx(market, reg.setSalePause(w.referred, False, ZERO))
    system.tx(market, reg.setSalePause(w.referrer, False, ZERO))
    before = balances(system, w.r_owner.address, w.ref_owner.address)
    pay(system, w, w.referred, amount)
    assert deltas(system, before) == {w.r_owner.address: s.owner_cut, w.ref_owner.address: s.referral_cut}


def test_pay_follows_a_transferred_token(system: System, world: World) -> None:
    """A transfer resets the agent's self wallet: no payout (NoSelfWallet, nothing moves) until the new
    owner sets one with its proof; then the new owner and the new self wallet are paid."""
    w, reg = world, system.registry.functions
    system.tx(w.owner, reg.transferFrom(w.owner.address, w.other.address, w.plain))
    before = balances(system, w.payer.address, w.owner.address, w.other.address, w.self_wallet.address)
    assert revert_args(lambda: pay(system, w, w.plain, 3 * USDC), "NoSelfWallet") == (w.plain,)
    assert deltas(system, before) == {a: 0 for a in before}
    fresh = system.users[11]
    system.tx(w.other, system.set_self_wallet_fn(w.other.address, w.plain, fresh))
    s = money.split(3 * USDC, False)
    before = balances(system, w.owner.address, w.other.address, w.self_wallet.address, fresh.address)
    pay(system, w, w.plain, 3 * USDC)
    assert deltas(system, before) == {
        w.owner.address: 0,
        w.other.address: s.owner_cut,
        w.self_wallet.address: 0,
        fresh.address: s.agent_cut,
    }


def test_pay_works_while_registry_paused(system: System, world: World) -> None:
    system.tx(system.deployer, system.registry.functions.pause())
    pay(system, world, world.plain, 7 * USDC)
    assert system.registry.functions.lifetimeEarningsOf(world.plain).call() == 7 * USDC


# ---- credits (CreditFallback) ------------------------------------------------------------------


def test_blacklisted_owner_gets_a_credit_and_withdraws_it_elsewhere(system: System, world: World) -> None:
    w, p = world, system.payouts
    blacklist(system, w.owner.address)
    amount = 100 * USDC + 1
    s = money.split(amount, False)
    treasury = system.treasury.address
    before = balances(system, w.payer.address, w.owner.address, w.self_wallet.address, treasury, p.address)
    receipt = pay(system, w, w.plain, amount)
    # the payout went through: everyone else is paid, the owner share stays as a credit
    assert deltas(system, before) == {
        w.payer.address: -amount,
        w.owner.address: 0,
        w.self_wallet.address: s.agent_cut,
        treasury: s.service_cut,
        p.address: s.owner_cut,
    }
    (cr,) = system.events(receipt, "AgentPayouts", "PaymentCredited")
    assert dict(cr["args"]) == {"payee": w.owner.address, "amount": s.owner_cut}
    (ev,) = system.events(receipt, "AgentPayouts", "Payout")
    assert ev["args"]["owner"] == w.owner.address and ev["args"]["ownerCut"] == s.owner_cut
    assert p.functions.creditOf(w.owner.address).call() == s.owner_cut
    assert p.functions.totalCredits().call() == s.owner_cut
    assert_solvent(system)

    # a blacklisted destination cannot take it: reverts, and the credit is intact
    assert_reverts(
        lambda: system.tx(w.owner, p.functions.withdrawCredit(w.owner.address)), "AccountBlacklisted", w.owner.address
    )
    assert_reverts(lambda: system.tx(w.owner, p.functions.withdrawCredit(ZERO)), "ZeroAddress")
    assert p.functions.creditOf(w.owner.address).call() == s.owner_cut

    # the blacklisted payee collects through another address
    before = balances(system, w.other.address, p.address)
    receipt = system.tx(w.owner, p.functions.withdrawCredit(w.other.address), "AgentPayouts.withdrawCredit")
    (cw,) = system.events(receipt, "AgentPayouts", "CreditWithdrawn")
    assert dict(cw["args"]) == {"payee": w.owner.address, "to": w.other.address, "amount": s.owner_cut}
    assert deltas(system, before) == {w.other.address: s.owner_cut, p.address: -s.owner_cut}
    assert p.functions.creditOf(w.owner.address).call() == 0
    assert p.functions.totalCredits().call() == 0
    assert_reverts(lambda: system.tx(w.owner, p.functions.withdrawCredit(w.other.address)), "NothingToWithdraw")
    assert_solvent(system)


def test_every_payee_that_cannot_receive_is_credited(system: System, world: World) -> None:
    w, p = world, system.payouts
    treasury = system.treasury.address
    for who in (w.r_owner.address, w.r_self.address, w.ref_owner.address, treasury):
        blacklist(system, who)
    amount = 999 * USDC + 999
    s = money.split(amount, True)
    before = balances(system, w.payer.address, p.address)
    receipt = pay(system, w, w.referred, amount)
    assert deltas(system, before) == {w.payer.address: -amount, p.address: amount}
    credited = {
        e["args"]["payee"]: e["args"]["amount"] for e in system.events(receipt, "AgentPayouts", "PaymentCredited")
    }
    expected = {
        w.r_owner.address: s.owner_cut,
        w.r_self.address: s.agent_cut,
        w.ref_owner.address: s.referral_cut,
        treasury: s.service_cut,
    }
    assert credited == expected
    for who, amt in expected.items():
        assert p.functions.creditOf(who).call() == amt
    assert p.functions.totalCredits().call() == amount
    assert_solvent(system)

    # credits accumulate over payouts
    pay(system, w, w.referred, amount)
    assert p.functions.creditOf(w.r_self.address).call() == 2 * s.agent_cut
    assert p.functions.totalCredits().call() == 2 * amount

    # un-blacklisting does not pay out by itself; each payee withdraws (to itself, now)
    blacklist(system, w.r_self.address, False)
    before = balances(system, w.r_self.address)
    system.tx(w.r_self, p.functions.withdrawCredit(w.r_self.address))
    assert deltas(system, before) == {w.r_self.address: 2 * s.agent_cut}
    assert p.functions.totalCredits().call() == 2 * amount - 2 * s.agent_cut
    # payees not blacklisted any more are paid directly again
    before = balances(system, w.r_self.address)
    pay(system, w, w.referred, amount)
    assert deltas(system, before) == {w.r_self.address: s.agent_cut}
    assert_solvent(system)


def test_withdraw_credit_reverts_and_works_while_paused(system: System, world: World) -> None:
    w, p = world, system.payouts
    # never credited
    assert_reverts(lambda: system.tx(w.other, p.functions.withdrawCredit(w.other.address)), "NothingToWithdraw")
    assert_reverts(lambda: system.tx(w.other, p.functions.withdrawCredit(ZERO)), "ZeroAddress")
    blacklist(system, system.treasury.address)
    pay(system, w, w.plain, 50 * USDC)
    credit = money.split(50 * USDC, False).service_cut
    # the credit is the payee's alone: nobody else can move it
    assert_reverts(lambda: system.tx(w.other, p.functions.withdrawCredit(w.other.address)), "NothingToWithdraw")
    # pausing payouts does not lock anyone's credit
    system.tx(system.deployer, p.functions.pause())
    before = balances(system, w.other.address)
    system.tx(system.treasury, p.functions.withdrawCredit(w.other.address))
    assert deltas(system, before) == {w.other.address: credit}
    assert_solvent(system)


def test_blacklisted_payer_cannot_pay(system: System, world: World) -> None:
    w = world
    blacklist(system, w.payer.address)
    assert_reverts(lambda: pay(system, w, w.plain, USDC), "AccountBlacklisted", w.payer.address)
    assert system.registry.functions.lifetimeEarningsOf(w.plain).call() == 0


# ---- reverts, pause, access control -------------------------------------------------------------


def test_pay_reverts(system: System, world: World) -> None:
    w, p = world, system.payouts
    assert_reverts(lambda: pay(system, w, w.plain, 0), "ZeroAmount")
    assert_reverts(lambda: pay(system, w, 0, USDC), "ERC721NonexistentToken", 0)
    assert_reverts(lambda: pay(system, w, 99, USDC), "ERC721NonexistentToken", 99)
    # the payer's allowance and balance bound what it can pay
    system.approve(w.payer, p.address, 10)
    assert_reverts(lambda: pay(system, w, w.plain, 11), "ERC20InsufficientAllowance", p.address, 10, 11)
    system.approve(w.payer, p.address, MAX_UINT)
    assert_reverts(
        lambda: pay(system, w, w.plain, FUNDS + 1), "ERC20InsufficientBalance", w.payer.address, FUNDS, FUNDS + 1
    )
    # an amount whose split would overflow reverts (panic), it never wraps
    with pytest.raises(ContractLogicError):
        pay(system, w, w.plain, MAX_UINT // 100)
    assert system.registry.functions.lifetimeEarningsOf(w.plain).call() == 0
    assert system.balance(w.payer.address) == FUNDS


def test_pay_requires_payer_role(system: System, world: World) -> None:
    w, p = world, system.payouts
    payer_role = p.functions.PAYER_ROLE().call()
    system.mint_usdc(w.other.address, USDC)
    system.approve(w.other, p.address, USDC)
    for who in (w.other, system.deployer, system.operator):
        assert_reverts(
            lambda a=who: system.tx(a, p.functions.pay(w.plain, USDC, b"\x00" * 32)),
            "AccessControlUnauthorizedAccount",
            who.address,
            payer_role,
        )
    # only the admin grants or revokes it
    assert_reverts(
        lambda: system.tx(w.other, p.functions.grantRole(payer_role, w.other.address)),
        "AccessControlUnauthorizedAccount",
        w.other.address,
        ADMIN_ROLE,
    )
    receipt = system.tx(system.deployer, p.functions.revokeRole(payer_role, w.payer.address))
    assert len(system.events(receipt, "AgentPayouts", "RoleRevoked")) == 1
    assert_reverts(
        lambda: pay(system, w, w.plain, USDC), "AccessControlUnauthorizedAccount", w.payer.address, payer_role
    )
    # renouncing needs the caller's own address
    assert_reverts(
        lambda: system.tx(w.payer, p.functions.renounceRole(payer_role, w.other.address)),
        "AccessControlBadConfirmation",
    )


def test_pay_needs_the_registry_earnings_role(system: System, world: World) -> None:
    w, reg = world, system.registry.functions
    earnings = reg.EARNINGS_ROLE().call()
    system.tx(system.deployer, reg.revokeRole(earnings, system.payouts.address))
    assert_reverts(
        lambda: pay(system, w, w.plain, USDC), "AccessControlUnauthorizedAccount", system.payouts.address, earnings
    )
    assert system.balance(w.payer.address) == FUNDS  # atomic: nothing moved


def test_pause_and_unpause(system: System, world: World) -> None:
    w, p = world, system.payouts
    pauser = p.functions.PAUSER_ROLE().call()
    assert_reverts(
        lambda: system.tx(w.other, p.functions.pause()), "AccessControlUnauthorizedAccount", w.other.address, pauser
    )
    assert_reverts(
        lambda: system.tx(w.payer, p.functions.pause()), "AccessControlUnauthorizedAccount", w.payer.address, pauser
    )
    assert_reverts(lambda: system.tx(system.deployer, p.functions.unpause()), "ExpectedPause")
    receipt = system.tx(system.deployer, p.functions.pause())
    (ev,) = system.events(receipt, "AgentPayouts", "Paused")
    assert ev["args"]["account"] == system.deployer.address
    assert p.functions.paused().call() is True
    assert_reverts(lambda: system.tx(system.deployer, p.functions.pause()), "EnforcedPause")
    assert_reverts(lambda: pay(system, w, w.plain, USDC), "EnforcedPause")
    assert_reverts(
        lambda: system.tx(w.other, p.functions.unpause()), "AccessControlUnauthorizedAccount", w.other.address, pauser
    )
    receipt = system.tx(system.deployer, p.functions.unpause())
    assert len(system.events(receipt, "AgentPayouts", "Unpaused")) == 1
    assert p.functions.paused().call() is False
    pay(system, w, w.plain, USDC)
    assert system.registry.functions.lifetimeEarningsOf(w.plain).call() == USDC


def test_set_treasury(system: System, world: World) -> None:
    w, p = world, system.payouts
    assert_reverts(
        lambda: system.tx(w.other, p.functions.setTreasury(w.other.address)),
        "AccessControlUnauthorizedAccount",
        w.other.address,
        ADMIN_ROLE,
    )
    assert_reverts(lambda: system.tx(system.deployer, p.functions.setTreasury(ZERO)), "ZeroAddress")
    receipt = system.tx(system.deployer, p.functions.setTreasury(w.other.address))
    (ev,) = system.events(receipt, "AgentPayouts", "TreasuryChanged")
    assert dict(ev["args"]) == {"previous": system.treasury.address, "current": w.other.address}
    assert p.functions.treasury().call() == w.other.address
    s = money.split(77 * USDC, False)
    before = balances(system, w.other.address, system.treasury.address)
    pay(system, w, w.plain, 77 * USDC)
    assert deltas(system, before) == {w.other.address: s.service_cut, system.treasury.address: 0}


# ---- the on-chain split equals core.money.split ------------------------------------------------


@settings(max_examples=40, deadline=None, suppress_health_check=[HealthCheck.function_scoped_fixture])
@given(amount=st.integers(min_value=0, max_value=10**30), referred=st.booleans())
@example(amount=0, referred=False)
@example(amount=0, referred=True)
@example(amount=1, referred=False)
@example(amount=1, referred=True)
@example(amount=99, referred=False)
@example(amount=99, referred=True)
@example(amount=100, referred=False)
@example(amount=100, referred=True)
@example(amount=199, referred=False)
@example(amount=199, referred=True)
@example(amount=200, referred=False)
@example(amount=200, referred=True)
@example(amount=10**6 - 1, referred=False)
@example(amount=10**6 - 1, referred=True)
@example(amount=10**30, referred=True)
def test_contract_split_equals_core_money_split(system: System, amount: int, referred: bool) -> None:
    on_chain = tuple(system.payouts.functions.split(amount, referred).call())
    s = money.split(amount, referred)
    assert on_chain == (s.owner_cut, s.agent_cut, s.service_cut, s.referral_cut)
    assert sum(on_chain) == amount


@settings(max_examples=10, deadline=None, suppress_health_check=[HealthCheck.function_scoped_fixture])
@given(data=st.data())
def test_paid_amounts_equal_core_money_split(system: System, world: World, data: st.DataObject) -> None:
    """Real payouts (not just the view): every USDC movement is exactly core.money.split's part."""
    w = world
    amount = data.draw(st.integers(min_value=1, max_value=10**15), label="amount")
    referred = data.draw(st.booleans(), label="referred")
    token, owner, selfw = (w.referred, w.r_owner, w.r_self) if referred else (w.plain, w.owner, w.self_wallet)
    s = money.split(amount, referred)
    receipt = pay(system, w, token, amount)
    expected = {
        w.payer.address: -amount,
        owner.address: s.owner_cut,
        selfw.address: s.agent_cut,
        w.ref_owner.address: s.referral_cut,
        system.treasury.address: s.service_cut,
    }
    assert net_flows(system, receipt) == {a: v for a, v in expected.items() if v != 0}
