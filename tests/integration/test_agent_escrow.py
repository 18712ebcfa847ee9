"""AgentEscrow on a real anvil: prices and SLAs, hiring at the published price and SLA, oracle
release/refund until expiry (SLA + settlement grace), reclaim by anyone after it (funds to the
caller), the jobStatus view, credits and pause."""

from __future__ import annotations

from collections.abc import Callable
from dataclasses import dataclass
from typing import Any

import pytest
from eth_account.signers.local import LocalAccount
from eth_utils import keccak

from core import money
from core.chain import TransactionFailed, deploy, send
from tests.integration.chainkit import (
    USDC,
    System,
    assert_reverts,
    at_next_block,
    block_ts,
    revert_args,
    set_next_timestamp,
)

ZERO = "0x0000000000000000000000000000000000000000"
PRICE = 123_456_789  # 123.456789 USDC: every cut of the split has rounding dust
WALLET_ID = "agl_0000000a11ce"
REF_WALLET_ID = "agl_00000000beef"
HOUR = 3600
DAY = 24 * HOUR
MIN_SLA, MAX_SLA, DEFAULT_SLA, GRACE = HOUR, 90 * DAY, 7 * DAY, HOUR
DEFAULT_TTL = DEFAULT_SLA + GRACE  # a job of a provider with the default SLA expires this long after creation
CALLER_FUNDS = 10_000 * USDC

# AgentEscrow Status enum
NOT_FOUND, LOCKED, RELEASED, REFUNDED = 0, 1, 2, 3


# ---- helpers ------------------------------------------------------------------------------


def job_id(label: str) -> bytes:
    return keccak(text=f"escrow-test-job:{label}")


def assert_solvent(system: System) -> None:
    """The escrow holds exactly what it owes; the payout path keeps nothing but credits."""
    e, p = system.escrow, system.payouts
    assert system.balance(e.address) == e.functions.totalLocked().call() + e.functions.totalCredits().call()
    assert system.balance(p.address) == p.functions.totalCredits().call()
    assert system.usdc.functions.allowance(e.address, p.address).call() == 0


@dataclass
class Provider:
    owner: LocalAccount
    self_wallet: LocalAccount
    token_id: int
    referrer_owner: LocalAccount | None = None


def make_provider(system: System, referred: bool = False, price: int = PRICE, sla: int = 0) -> Provider:
    """Register a provider agent, publish its price, and fund + approve the default caller."""
    owner, self_wallet = system.users[0], system.users[1]
    ref_owner, referrer = None, 0
    if referred:
        ref_owner = system.users[3]
        referrer = system.register_agent(ref_owner.address, system.users[4].address, REF_WALLET_ID)
    token = system.register_agent(owner.address, self_wallet.address, WALLET_ID, referrer=referrer)
    if price:
        system.tx(owner, system.escrow.functions.setPrice(token, price, sla), "AgentEscrow.setPrice")
    caller = system.users[2]
    system.mint_usdc(caller.address, CALLER_FUNDS)
    system.approve(caller, system.escrow.address, CALLER_FUNDS)
    return Provider(owner, self_wallet, token, ref_owner)


def create_job(
    system: System,
    label: str = "job",
    caller: LocalAccount | None = None,
    amount: int = PRICE,
    sla: int = DEFAULT_SLA,
) -> tuple[bytes, Any]:
    jid = job_id(label)
    receipt = system.tx(
        caller or system.users[2],
        system.escrow.functions.createJob(jid, WALLET_ID, amount, sla),
        "AgentEscrow.createJob",
    )
    return jid, receipt


def status(system: System, jid: bytes) -> tuple[Any, ...]:
    return tuple(system.escrow.functions.jobStatus(jid).call())


def snapshot_parties(system: System, p: Provider) -> dict[str, int]:
    snap = {
        "owner": system.balance(p.owner.address),
        "self": system.balance(p.self_wallet.address),
        "treasury": system.balance(system.treasury.address),
    }
    if p.referrer_owner is not None:
        snap["ref"] = system.balance(p.referrer_owner.address)
    return snap


def assert_paid(system: System, p: Provider, before: dict[str, int], gross: int) -> None:
    s = money.split(gross, p.referrer_owner is not None)
    assert system.balance(p.owner.address) - before["owner"] == s.owner_cut
    assert system.balance(p.self_wallet.address) - before["self"] == s.agent_cut
    assert system.balance(system.treasury.address) - before["treasury"] == s.service_cut
    if p.referrer_owner is not None:
        assert system.balance(p.referrer_owner.address) - before["ref"] == s.referral_cut > 0
    assert s.owner_cut + s.agent_cut + s.service_cut + s.referral_cut == gross


# ---- deployment -----------------------------------------------------------------------------


def test_constructor_guards(system: System) -> None:
    usdc, reg, pay, admin = (
        system.usdc.address,
        system.registry.address,
        system.payouts.address,
        system.deployer.address,
    )
    for args in ((ZERO, reg, pay, admin), (usdc, ZERO, pay, admin), (usdc, reg, ZERO, admin), (usdc, reg, pay, ZERO)):
        assert_reverts(lambda a=args: deploy(system.w3, system.deployer, "AgentEscrow", *a), "ZeroAddress")  # type: ignore[misc]
    e = system.escrow
    assert (
        e.functions.MIN_SLA().call(),
        e.functions.MAX_SLA().call(),
        e.functions.DEFAULT_SLA().call(),
        e.functions.SETTLEMENT_GRACE().call(),
    ) == (MIN_SLA, MAX_SLA, DEFAULT_SLA, GRACE)
    assert (e.functions.usdc().call(), e.functions.registry().call(), e.functions.payouts().call()) == (usdc, reg, pay)
    assert e.functions.hasRole(e.functions.ORACLE_ROLE().call(), system.operator.address).call()
    assert e.functions.hasRole(e.functions.PAUSER_ROLE().call(), system.deployer.address).call()
    assert not e.functions.hasRole(e.functions.ORACLE_ROLE().call(), system.arbiter.address).call()


def test_role_administration(system: System) -> None:
    """Only the admin hands out roles; a new oracle works, a revoked one does not."""
    e, admin = system.escrow, system.deployer
    admin_role, oracle_role = e.functions.DEFAULT_ADMIN_ROLE().call(), e.functions.ORACLE_ROLE().call()
    assert oracle_role == keccak(text="ORACLE_ROLE")
    assert e.functions.PAUSER_ROLE().call() == keccak(text="PAUSER_ROLE")
    for role in (oracle_role, e.functions.PAUSER_ROLE().call()):
        assert e.functions.getRoleAdmin(role).call() == admin_role
    assert e.functions.hasRole(admin_role, admin.address).call()
    assert e.functions.supportsInterface(bytes.fromhex("7965db0b")).call()  # IAccessControl
    newcomer = system.users[7]
    assert revert_args(
        lambda: system.tx(system.operator, e.functions.grantRole(oracle_role, newcomer.address)),
        "AccessControlUnauthorizedAccount",
    ) == (system.operator.address, admin_role)

    make_provider(system)
    a, _ = create_job(system, "new-oracle-a")
    b, _ = create_job(system, "new-oracle-b")
    system.tx(admin, e.functions.grantRole(oracle_role, newcomer.address))
    system.tx(newcomer, e.functions.release(a))
    assert status(system, a)[0] == "released"
    system.tx(admin, e.functions.revokeRole(oracle_role, newcomer.address))
    assert_reverts(lambda: system.tx(newcomer, e.functions.refund(b)), "AccessControlUnauthorizedAccount")
    system.tx(system.operator, e.functions.renounceRole(oracle_role, system.operator.address))
    assert_reverts(lambda: system.tx(system.operator, e.functions.refund(b)), "AccessControlUnauthorizedAccount")
    assert status(system, b)[0] == "locked"
    assert_solvent(system)


# ---- setPrice -------------------------------------------------------------------------------


def test_set_price_by_owner_or_self_wallet_only(system: System) -> None:
    p = make_provider(system, price=0)
    e = system.escrow
    assert e.functions.priceOf(p.token_id).call() == 0
    r = system.tx(p.owner, e.functions.setPrice(p.token_id, 5 * USDC, DAY), "AgentEscrow.setPrice")
    (ev,) = system.events(r, "AgentEscrow", "PriceSet")
    assert dict(ev["args"]) == {"tokenId": p.token_id, "price": 5 * USDC, "slaSeconds": DAY, "setter": p.owner.address}
    assert e.functions.priceOf(p.token_id).call() == 5 * USDC
    assert e.functions.slaOf(p.token_id).call() == DAY
    r = system.tx(p.self_wallet, e.functions.setPrice(p.token_id, 7 * USDC, 0))
    assert system.events(r, "AgentEscrow", "PriceSet")[0]["args"]["setter"] == p.self_wallet.address
    assert e.functions.priceOf(p.token_id).call() == 7 * USDC

    other = system.register_agent(system.users[7].address, system.users[8].address, "agl_00000000cafe")
    for who in (system.users[2], system.operator, system.users[8]):
        assert revert_args(
            lambda w=who: system.tx(w, e.functions.setPrice(p.token_id, 1, 0)),  # type: ignore[misc]
            "NotProviderController",
        ) == (p.token_id, who.address)
    assert e.functions.priceOf(p.token_id).call() == 7 * USDC
    assert e.functions.priceOf(other).call() == 0
    assert_reverts(lambda: system.tx(p.owner, e.functions.setPrice(999, 1, 0)), "ERC721NonexistentToken")

    # control follows the registry: a rotated self wallet and a transferred token (which resets the
    # self wallet: the old one controls nothing, the new owner does)
    new_self = system.users[9]
    system.tx(p.owner, system.set_self_wallet_fn(p.owner.address, p.token_id, new_self))
    assert_reverts(lambda: system.tx(p.self_wallet, e.functions.setPrice(p.token_id, 1, 0)), "NotProviderController")
    system.tx(new_self, e.functions.setPrice(p.token_id, 9 * USDC, 0))
    new_owner = system.users[10]
    system.tx(p.owner, system.registry.functions.transferFrom(p.owner.address, new_owner.address, p.token_id))
    for old in (p.owner, new_self):
        assert_reverts(lambda o=old: system.tx(o, e.functions.setPrice(p.token_id, 1, 0)), "NotProviderController")  # type: ignore[misc]
    r = system.tx(new_owner, e.functions.setPrice(p.token_id, 0, DAY))
    assert system.events(r, "AgentEscrow", "PriceSet")[0]["args"]["slaSeconds"] == 0  # not for hire: no SLA
    assert (e.functions.priceOf(p.token_id).call(), e.functions.slaOf(p.token_id).call()) == (0, 0)


def test_set_price_sla_default_and_bounds(system: System) -> None:
    p = make_provider(system, price=0)
    e = system.escrow
    for bad in (1, MIN_SLA - 1, MAX_SLA + 1, 2**64 - 1):
        assert revert_args(
            lambda b=bad: system.tx(p.owner, e.functions.setPrice(p.token_id, PRICE, b)),  # type: ignore[misc]
            "BadSla",
        ) == (bad,)
    for sla, stored in ((0, DEFAULT_SLA), (MIN_SLA, MIN_SLA), (MAX_SLA, MAX_SLA)):
        r = system.tx(p.owner, e.functions.setPrice(p.token_id, PRICE, sla))
        assert system.events(r, "AgentEscrow", "PriceSet")[0]["args"]["slaSeconds"] == stored
        assert e.functions.slaOf(p.token_id).call() == stored


# ---- createJob ------------------------------------------------------------------------------


def test_create_job_locks_exactly_the_price(system: System) -> None:
    p = make_provider(system)
    e, caller = system.escrow, system.users[2]
    assert status(system, job_id("hire")) == ("not_found", ZERO, 0, False, False)
    jid, receipt = create_job(system, "hire")
    expires = block_ts(system, receipt) + DEFAULT_TTL
    (ev,) = system.events(receipt, "AgentEscrow", "JobCreated")
    assert dict(ev["args"]) == {
        "jobId": jid,
        "caller": caller.address,
        "providerTokenId": p.token_id,
        "amount": PRICE,
        "expiresAt": expires,
    }
    assert tuple(e.functions.getJob(jid).call()) == (caller.address, expires, LOCKED, p.token_id, PRICE)
    assert status(system, jid) == ("locked", caller.address, PRICE, False, False)
    assert system.balance(caller.address) == CALLER_FUNDS - PRICE
    assert system.usdc.functions.allowance(caller.address, e.address).call() == CALLER_FUNDS - PRICE
    assert e.functions.totalLocked().call() == PRICE
    # a second hire by another caller adds up
    other = system.users[6]
    system.mint_usdc(other.address, PRICE)
    system.approve(other, e.address, PRICE)
    create_job(system, "hire-2", caller=other)
    assert system.balance(other.address) == 0
    assert e.functions.totalLocked().call() == 2 * PRICE
    assert_solvent(system)


def test_create_job_needs_exactly_the_published_price(system: System) -> None:
    p = make_provider(system, price=0)
    e, caller = system.escrow, system.users[2]

    def hire(amount: int, sla: int = DEFAULT_SLA) -> Callable[[], object]:
        return lambda: system.tx(caller, e.functions.createJob(job_id("price"), WALLET_ID, amount, sla))

    assert revert_args(hire(PRICE), "NoPrice") == (p.token_id,)
    assert revert_args(hire(0), "NoPrice") == (p.token_id,)
    system.tx(p.owner, e.functions.setPrice(p.token_id, PRICE, 0))
    assert revert_args(hire(PRICE - 1), "PriceMismatch") == (PRICE, PRICE - 1)
    assert revert_args(hire(PRICE + 1), "PriceMismatch") == (PRICE, PRICE + 1)
    assert revert_args(hire(0), "PriceMismatch") == (PRICE, 0)
    # the provider raises its price between quote and hire: the caller is not charged more
    system.tx(p.self_wallet, e.functions.setPrice(p.token_id, 2 * PRICE, 0))
    assert revert_args(hire(PRICE), "PriceMismatch") == (2 * PRICE, PRICE)
    # ... or lengthens its SLA: the caller's USDC is not locked longer than it accepted
    system.tx(p.self_wallet, e.functions.setPrice(p.token_id, PRICE, 30 * DAY))
    assert revert_args(hire(PRICE), "SlaMismatch") == (30 * DAY, DEFAULT_SLA)
    assert revert_args(hire(PRICE, 0), "SlaMismatch") == (30 * DAY, 0)
    # back to "not for hire"
    system.tx(p.owner, e.functions.setPrice(p.token_id, 0, 0))
    assert_reverts(hire(PRICE), "NoPrice")
    assert e.functions.totalLocked().call() == 0
    assert system.balance(caller.address) == CALLER_FUNDS
    system.tx(p.owner, e.functions.setPrice(p.token_id, PRICE, 0))
    hire(PRICE)()
    assert status(system, job_id("price"))[0] == "locked"
    assert_solvent(system)


def test_create_job_rejections(system: System) -> None:
    p = make_provider(system)
    e, caller = system.escrow, system.users[2]
    jid, _ = create_job(system, "dup")
    dup = e.functions.createJob(jid, WALLET_ID, PRICE, DEFAULT_SLA)
    assert revert_args(lambda: system.tx(caller, dup), "JobExists") == (jid,)
    # another caller cannot take over an existing id either
    other = system.users[6]
    system.mint_usdc(other.address, PRICE)
    system.approve(other, e.address, PRICE)
    assert_reverts(lambda: system.tx(other, dup), "JobExists")
    assert status(system, jid)[1] == caller.address

    for bad in ("agl_0000000b0b00", WALLET_ID.upper(), "", "agl_0000000a11c"):
        assert revert_args(
            lambda w=bad: system.tx(caller, e.functions.createJob(job_id("x"), w, PRICE, DEFAULT_SLA)),  # type: ignore[misc]
            "UnknownWalletId",
        ) == (bad,)

    reg, market = system.registry, system.users[7]
    system.tx(system.deployer, reg.functions.grantRole(reg.functions.MARKET_ROLE().call(), market.address))
    system.tx(market, reg.functions.setSalePause(p.token_id, True, p.owner.address))
    assert revert_args(
        lambda: system.tx(caller, e.functions.createJob(job_id("x"), WALLET_ID, PRICE, DEFAULT_SLA)), "AgentPaused"
    ) == (p.token_id,)
    system.tx(market, reg.functions.setSalePause(p.token_id, False, ZERO))

    poor = system.users[11]
    system.approve(poor, e.address, PRICE - 1)
    assert revert_args(
        lambda: system.tx(poor, e.functions.createJob(job_id("x"), WALLET_ID, PRICE, DEFAULT_SLA)),
        "ERC20InsufficientAllowance",
    ) == (e.address, PRICE - 1, PRICE)
    system.approve(poor, e.address, PRICE)
    system.mint_usdc(poor.address, PRICE - 1)
    assert revert_args(
        lambda: system.tx(poor, e.functions.createJob(job_id("x"), WALLET_ID, PRICE, DEFAULT_SLA)),
        "ERC20InsufficientBalance",
    ) == (poor.address, PRICE - 1, PRICE)
    assert e.functions.totalLocked().call() == PRICE
    assert status(system, job_id("x"))[0] == "not_found"
    assert_solvent(system)


# ---- release / refund / reclaim ---------------------------------------------------------------


@pytest.mark.parametrize("referred", [False, True], ids=["no-referrer", "referrer"])
def test_release_by_oracle_pays_the_split(system: System, referred: bool) -> None:
    p = make_provider(system, referred)
    e, caller = system.escrow, system.users[2]
    jid, _ = create_job(system, "release")
    oracle_role = e.functions.ORACLE_ROLE().call()
    for who in (caller, p.self_wallet, system.deployer):
        assert revert_args(
            lambda w=who: system.tx(w, e.functions.release(jid)),  # type: ignore[misc]
            "AccessControlUnauthorizedAccount",
        ) == (who.address, oracle_role)
    before = snapshot_parties(system, p)
    caller_before = system.balance(caller.address)

    receipt = system.tx(system.operator, e.functions.release(jid), "AgentEscrow.release")

    (ev,) = system.events(receipt, "AgentEscrow", "JobReleased")
    assert dict(ev["args"]) == {
        "jobId": jid,
        "providerTokenId": p.token_id,
        "amount": PRICE,
        "oracle": system.operator.address,
    }
    s = money.split(PRICE, referred)
    (payout,) = system.events(receipt, "AgentPayouts", "Payout")
    assert payout["args"]["ref"] == jid and payout["args"]["payer"] == e.address
    assert (
        payout["args"]["ownerCut"],
        payout["args"]["agentCut"],
        payout["args"]["serviceCut"],
        payout["args"]["referralCut"],
    ) == (
        s.owner_cut,
        s.agent_cut,
        s.service_cut,
        s.referral_cut,
    )
    assert_paid(system, p, before, PRICE)
    assert system.balance(caller.address) == caller_before
    assert system.registry.functions.lifetimeEarningsOf(p.token_id).call() == PRICE
    assert status(system, jid) == ("released", caller.address, PRICE, True, False)
    assert e.functions.getJob(jid).call()[2] == RELEASED
    assert e.functions.totalLocked().call() == 0
    assert system.balance(e.address) == 0
    assert_solvent(system)

    # settled once: no second release, no refund, no reclaim after expiry
    assert revert_args(lambda: system.tx(system.operator, e.functions.release(jid)), "NotLocked") == (jid, RELEASED)
    assert revert_args(lambda: system.tx(system.operator, e.functions.refund(jid)), "NotLocked") == (jid, RELEASED)
    system.advance(DEFAULT_TTL + 10)
    assert revert_args(lambda: system.tx(caller, e.functions.reclaim(jid)), "NotLocked") == (jid, RELEASED)
    assert system.registry.functions.lifetimeEarningsOf(p.token_id).call() == PRICE
    assert_solvent(system)


def test_refund_by_oracle(system: System) -> None:
    p = make_provider(system)
    e, caller = system.escrow, system.users[2]
    jid, _ = create_job(system, "refund")
    keep, _ = create_job(system, "keep")
    oracle_role = e.functions.ORACLE_ROLE().call()
    for who in (caller, p.owner, system.deployer):
        assert revert_args(
            lambda w=who: system.tx(w, e.functions.refund(jid)),  # type: ignore[misc]
            "AccessControlUnauthorizedAccount",
        ) == (who.address, oracle_role)
    before = system.balance(caller.address)
    parties = snapshot_parties(system, p)
    receipt = system.tx(system.operator, e.functions.refund(jid), "AgentEscrow.refund")
    (ev,) = system.events(receipt, "AgentEscrow", "JobRefunded")
    assert dict(ev["args"]) == {"jobId": jid, "caller": caller.address, "amount": PRICE, "by": system.operator.address}
    assert system.balance(caller.address) - before == PRICE
    assert snapshot_parties(system, p) == parties
    assert system.events(receipt, "AgentPayouts", "Payout") == []
    assert status(system, jid) == ("refunded", caller.address, PRICE, False, True)
    assert status(system, keep) == ("locked", caller.address, PRICE, False, False)
    assert e.functions.totalLocked().call() == PRICE
    assert system.registry.functions.lifetimeEarningsOf(p.token_id).call() == 0
    assert_solvent(system)
    assert revert_args(lambda: system.tx(system.operator, e.functions.refund(jid)), "NotLocked") == (jid, REFUNDED)
    assert revert_args(lambda: system.tx(system.operator, e.functions.release(jid)), "NotLocked") == (jid, REFUNDED)
    assert_solvent(system)


def test_an_expired_job_is_refundable_by_anyone_to_its_caller(system: System) -> None:
    """A job expires SLA + SETTLEMENT_GRACE after creation. Until then (inclusive) only the oracle
    settles it; after it the oracle cannot, and anyone may reclaim it: the USDC goes to its caller."""
    p = make_provider(system, sla=DAY)
    e, caller = system.escrow, system.users[2]
    jid, receipt = create_job(system, "reclaim", sla=DAY)
    expires = block_ts(system, receipt) + DAY + GRACE
    assert system.events(receipt, "AgentEscrow", "JobCreated")[0]["args"]["expiresAt"] == expires
    assert revert_args(lambda: system.tx(caller, e.functions.reclaim(jid)), "NotExpired") == (jid, expires)
    set_next_timestamp(system, expires)  # exactly at expiry: not yet reclaimable, still the oracle's
    for who in (caller, system.users[6]):
        assert revert_args(at_next_block(who, e.functions.reclaim(jid)), "NotExpired") == (jid, expires)
    at_expiry, _ = create_job(system, "at-expiry", sla=DAY)  # mined at `expires`
    assert e.functions.getJob(at_expiry).call()[1] == expires + DAY + GRACE
    set_next_timestamp(system, expires + 1)
    # past expiry: the oracle can neither release nor refund it any more
    for fn in (e.functions.release(jid), e.functions.refund(jid)):
        assert revert_args(at_next_block(system.operator, fn), "Expired") == (jid, expires)
    stranger = system.users[6]
    before, stranger_before = system.balance(caller.address), system.balance(stranger.address)
    parties = snapshot_parties(system, p)
    r = send(system.w3, stranger, e.functions.reclaim(jid), gas=300_000)
    assert block_ts(system, r) == expires + 1
    (ev,) = system.events(r, "AgentEscrow", "JobRefunded")
    assert dict(ev["args"]) == {"jobId": jid, "caller": caller.address, "amount": PRICE, "by": stranger.address}
    assert system.balance(caller.address) - before == PRICE
    assert system.balance(stranger.address) == stranger_before
    assert snapshot_parties(system, p) == parties
    assert status(system, jid) == ("refunded", caller.address, PRICE, False, True)
    assert e.functions.totalLocked().call() == PRICE  # the other job is still locked
    assert_solvent(system)
    assert revert_args(lambda: system.tx(caller, e.functions.reclaim(jid)), "NotLocked") == (jid, REFUNDED)


def test_oracle_settles_up_to_the_expiry_inclusive(system: System) -> None:
    make_provider(system, sla=MIN_SLA)
    e = system.escrow
    to_release, r1 = create_job(system, "edge-release", sla=MIN_SLA)
    release_at = block_ts(system, r1) + MIN_SLA + GRACE
    assert e.functions.getJob(to_release).call()[1] == release_at
    set_next_timestamp(system, release_at)
    r = send(system.w3, system.operator, e.functions.release(to_release), gas=500_000)
    assert block_ts(system, r) == release_at and status(system, to_release)[0] == "released"
    to_refund, r2 = create_job(system, "edge-refund", sla=MIN_SLA)
    refund_at = block_ts(system, r2) + MIN_SLA + GRACE
    set_next_timestamp(system, refund_at)
    r = send(system.w3, system.operator, e.functions.refund(to_refund), gas=300_000)
    assert block_ts(system, r) == refund_at and status(system, to_refund)[0] == "refunded"
    assert_solvent(system)


def test_hire_fails_closed_while_the_providers_self_wallet_is_reset(system: System) -> None:
    """After the provider agent changes hands (self wallet reset to zero) nobody can hire it and the
    oracle cannot pay it (the payout path has no self wallet to pay); the caller can still be
    refunded. Once the new owner sets a self wallet with its proof, both work again."""
    p = make_provider(system)
    e, caller = system.escrow, system.users[2]
    locked, _ = create_job(system, "before-sale")
    refundable, _ = create_job(system, "before-sale-2")
    new_owner = system.users[10]
    system.tx(p.owner, system.registry.functions.transferFrom(p.owner.address, new_owner.address, p.token_id))
    assert revert_args(
        lambda: system.tx(caller, e.functions.createJob(job_id("x"), WALLET_ID, PRICE, DEFAULT_SLA)), "NoSelfWallet"
    ) == (p.token_id,)
    assert revert_args(lambda: system.tx(system.operator, e.functions.release(locked)), "NoSelfWallet") == (p.token_id,)
    system.tx(system.operator, e.functions.refund(refundable))
    fresh = system.users[9]
    system.tx(new_owner, system.set_self_wallet_fn(new_owner.address, p.token_id, fresh))
    before = system.balance(fresh.address)
    system.tx(system.operator, e.functions.release(locked))
    assert system.balance(fresh.address) - before == money.split(PRICE, False).agent_cut
    create_job(system, "after-sale")
    assert_solvent(system)


def test_unknown_job(system: System) -> None:
    make_provider(system)
    e, jid = system.escrow, job_id("ghost")
    assert revert_args(lambda: system.tx(system.operator, e.functions.release(jid)), "UnknownJob") == (jid,)
    assert revert_args(lambda: system.tx(system.operator, e.functions.refund(jid)), "UnknownJob") == (jid,)
    assert revert_args(lambda: system.tx(system.users[2], e.functions.reclaim(jid)), "UnknownJob") == (jid,)
    assert status(system, jid) == ("not_found", ZERO, 0, False, False)
    assert tuple(e.functions.getJob(jid).call()) == (ZERO, 0, NOT_FOUND, 0, 0)


def test_job_status_in_every_state(system: System) -> None:
    make_provider(system)
    e, caller = system.escrow, system.users[2]
    locked, _ = create_job(system, "s-locked")
    released, _ = create_job(system, "s-released")
    refunded, _ = create_job(system, "s-refunded")
    system.tx(system.operator, e.functions.release(released))
    system.tx(system.operator, e.functions.refund(refunded))
    assert status(system, locked) == ("locked", caller.address, PRICE, False, False)
    assert status(system, released) == ("released", caller.address, PRICE, True, False)
    assert status(system, refunded) == ("refunded", caller.address, PRICE, False, True)
    assert status(system, job_id("s-none")) == ("not_found", ZERO, 0, False, False)
    assert e.functions.totalLocked().call() == PRICE
    assert_solvent(system)


# ---- SLA --------------------------------------------------------------------------------------


def test_each_provider_sla_sets_its_jobs_expiry_and_existing_jobs_keep_theirs(system: System) -> None:
    make_provider(system, sla=MAX_SLA)
    e, caller = system.escrow, system.users[2]
    long_job, r_long = create_job(system, "sla-long", sla=MAX_SLA)
    long_expiry = block_ts(system, r_long) + MAX_SLA + GRACE
    assert e.functions.getJob(long_job).call()[1] == long_expiry
    system.tx(system.users[0], e.functions.setPrice(1, PRICE, MIN_SLA))
    short_job, r_short = create_job(system, "sla-short", sla=MIN_SLA)
    assert e.functions.getJob(short_job).call()[1] == block_ts(system, r_short) + MIN_SLA + GRACE
    assert e.functions.getJob(long_job).call()[1] == long_expiry  # unchanged by the new SLA
    system.advance(MIN_SLA + GRACE + 1)
    system.tx(system.users[7], e.functions.reclaim(short_job))  # anyone
    assert_reverts(lambda: system.tx(caller, e.functions.reclaim(long_job)), "NotExpired")
    system.tx(system.operator, e.functions.release(long_job))  # still within its own expiry
    assert_solvent(system)


# ---- credits ---------------------------------------------------------------------------------


def test_blacklisted_caller_gets_a_credit(system: System) -> None:
    make_provider(system)
    e, caller, rescue = system.escrow, system.users[2], system.users[9]
    by_oracle, _ = create_job(system, "bl-oracle")
    by_reclaim, _ = create_job(system, "bl-reclaim")
    system.tx(system.deployer, system.usdc.functions.setBlacklisted(caller.address, True))

    r = system.tx(system.operator, e.functions.refund(by_oracle))
    (credit,) = system.events(r, "AgentEscrow", "PaymentCredited")
    assert dict(credit["args"]) == {"payee": caller.address, "amount": PRICE}
    assert status(system, by_oracle)[0] == "refunded"
    system.advance(DEFAULT_TTL + 1)
    system.tx(caller, e.functions.reclaim(by_reclaim))
    assert e.functions.creditOf(caller.address).call() == 2 * PRICE
    assert e.functions.totalCredits().call() == 2 * PRICE
    assert e.functions.totalLocked().call() == 0
    assert system.balance(e.address) == 2 * PRICE
    assert_solvent(system)

    assert_reverts(lambda: system.tx(caller, e.functions.withdrawCredit(ZERO)), "ZeroAddress")
    assert_reverts(lambda: system.tx(rescue, e.functions.withdrawCredit(rescue.address)), "NothingToWithdraw")
    # withdrawing to the blacklisted address itself fails and keeps the credit
    assert_reverts(lambda: system.tx(caller, e.functions.withdrawCredit(caller.address)), "AccountBlacklisted")
    r = system.tx(caller, e.functions.withdrawCredit(rescue.address), "AgentEscrow.withdrawCredit")
    (w,) = system.events(r, "AgentEscrow", "CreditWithdrawn")
    assert dict(w["args"]) == {"payee": caller.address, "to": rescue.address, "amount": 2 * PRICE}
    assert system.balance(rescue.address) == 2 * PRICE
    assert e.functions.creditOf(caller.address).call() == 0
    assert e.functions.totalCredits().call() == 0
    assert_reverts(lambda: system.tx(caller, e.functions.withdrawCredit(rescue.address)), "NothingToWithdraw")
    assert_solvent(system)


def test_blacklisted_self_wallet_does_not_block_release(system: System) -> None:
    p = make_provider(system)
    jid, _ = create_job(system, "bl-self")
    system.tx(system.deployer, system.usdc.functions.setBlacklisted(p.self_wallet.address, True))
    owner_before = system.balance(p.owner.address)
    system.tx(system.operator, system.escrow.functions.release(jid))
    s = money.split(PRICE, False)
    assert system.payouts.functions.creditOf(p.self_wallet.address).call() == s.agent_cut
    assert system.balance(p.owner.address) - owner_before == s.owner_cut
    assert status(system, jid)[0] == "released"
    assert_solvent(system)


# ---- pause ------------------------------------------------------------------------------------


def test_pause_blocks_hire_and_release_but_not_refunds(system: System) -> None:
    p = make_provider(system, sla=30 * DAY)
    e, caller = system.escrow, system.users[2]
    to_release, _ = create_job(system, "p-release", sla=30 * DAY)  # still releasable after the wait below
    system.tx(p.owner, e.functions.setPrice(p.token_id, PRICE, 0))
    to_refund, _ = create_job(system, "p-refund")
    to_reclaim, _ = create_job(system, "p-reclaim")

    pauser_role = e.functions.PAUSER_ROLE().call()
    for who in (system.operator, caller):
        assert revert_args(lambda w=who: system.tx(w, e.functions.pause()), "AccessControlUnauthorizedAccount") == (  # type: ignore[misc]
            who.address,
            pauser_role,
        )
    assert_reverts(lambda: system.tx(system.deployer, e.functions.unpause()), "ExpectedPause")
    system.tx(system.deployer, e.functions.pause())
    assert e.functions.paused().call()
    assert_reverts(lambda: system.tx(system.deployer, e.functions.pause()), "EnforcedPause")

    assert_reverts(
        lambda: system.tx(caller, e.functions.createJob(job_id("p-new"), WALLET_ID, PRICE, DEFAULT_SLA)),
        "EnforcedPause",
    )
    assert_reverts(lambda: system.tx(system.operator, e.functions.release(to_release)), "EnforcedPause")
    before = system.balance(caller.address)
    system.tx(system.operator, e.functions.refund(to_refund))
    system.advance(DEFAULT_TTL + 1)
    system.tx(caller, e.functions.reclaim(to_reclaim), "AgentEscrow.reclaim")
    assert system.balance(caller.address) - before == 2 * PRICE
    assert status(system, to_release)[0] == "locked"
    assert_solvent(system)

    for who in (system.operator, caller):
        assert_reverts(lambda w=who: system.tx(w, e.functions.unpause()), "AccessControlUnauthorizedAccount")  # type: ignore[misc]
    system.tx(system.deployer, e.functions.unpause())
    assert not e.functions.paused().call()
    system.tx(system.operator, e.functions.release(to_release))
    create_job(system, "p-new")
    assert status(system, to_release)[0] == "released"
    assert status(system, job_id("p-new"))[0] == "locked"
    assert_solvent(system)


def test_failed_release_leaves_no_trace(system: System) -> None:
    """A release whose payout leg fails (payout path paused) reverts as a whole."""
    make_provider(system)
    e = system.escrow
    jid, _ = create_job(system, "payouts-paused")
    system.tx(system.deployer, system.payouts.functions.pause())
    assert_reverts(lambda: system.tx(system.operator, e.functions.release(jid)), "EnforcedPause")
    with pytest.raises(TransactionFailed):
        send(system.w3, system.operator, e.functions.release(jid), gas=500_000)
    assert status(system, jid)[0] == "locked"
    assert e.functions.totalLocked().call() == PRICE
    assert_solvent(system)
    # the oracle can still refund while the payout path is down
    system.tx(system.operator, e.functions.refund(jid))
    assert status(system, jid)[0] == "refunded"
    assert_solvent(system)
