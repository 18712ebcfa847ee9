"""PaymentGateway on a real anvil: funding, attested release, disputes, reclaim, credits, pause.

Every funding carries the buyer's real EIP-712 consent (eth-account, typed data built by
core.checkout.funding_typed_data); every release is authorised by a real EIP-191 signature over
the exact string `complete:{jobId}:{cid}:{timestamp}` made by the provider's registered self wallet.
"""

from __future__ import annotations

from collections.abc import Callable
from dataclasses import dataclass
from typing import Any

import pytest
from eth_account import Account
from eth_account.messages import encode_defunct, encode_typed_data
from eth_account.signers.local import LocalAccount
from eth_utils import keccak

from core import money, signatures
from core.chain import TransactionFailed, deploy, send
from core.checkout import rules
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
SECP256K1_N = 0xFFFFFFFFFFFFFFFFFFFFFFFFFFFFFFFEBAAEDCE6AF48A03BBFD25E8CD0364141
CID = "bafybeigdyrzt5sfp7udm7hu76uh7y26nf3efuylqabf3oclgtqy55fbzdi"
AMOUNT = 123_456_789  # 123.456789 USDC: every cut of the split has rounding dust
HOUR = 3600
BUYER_FUNDS = 10_000 * USDC  # minted to and approved by the default buyer once per test

# Gateway Status enum
FUNDED, DISPUTED, RELEASED, REFUNDED, RESOLVED = 1, 2, 3, 4, 5


# ---- helpers ------------------------------------------------------------------------------


def job_id(label: str) -> bytes:
    return keccak(text=f"gateway-test-job:{label}")


def attestation(jid: bytes, cid: str, timestamp: int) -> str:
    """The attestation string, built independently of the contract."""
    return f"complete:0x{jid.hex()}:{cid}:{timestamp}"


def sign_text(signer: LocalAccount, text: str) -> bytes:
    """EIP-191 personal_sign of `text`."""
    return bytes(Account.sign_message(encode_defunct(text=text), private_key=signer.key).signature)


def attest(signer: LocalAccount, jid: bytes, cid: str = CID, timestamp: int = 1_700_000_000) -> bytes:
    return sign_text(signer, attestation(jid, cid, timestamp))


def send_fixed_gas(system: System, account: LocalAccount, fn: Any) -> Any:
    return send(system.w3, account, fn, gas=600_000)


def assert_solvent(system: System) -> None:
    """The gateway holds exactly what it owes; the payout path keeps nothing but credits."""
    g, p = system.gateway, system.payouts
    assert system.balance(g.address) == g.functions.totalEscrowed().call() + g.functions.totalCredits().call()
    assert system.balance(p.address) == p.functions.totalCredits().call()
    assert system.usdc.functions.allowance(g.address, p.address).call() == 0


@dataclass
class Provider:
    owner: LocalAccount
    self_wallet: LocalAccount
    token_id: int
    referrer_owner: LocalAccount | None = None


def make_provider(system: System, referred: bool = False) -> Provider:
    owner, self_wallet = system.users[0], system.users[1]
    ref_owner = None
    referrer = 0
    if referred:
        ref_owner = system.users[3]
        referrer = system.register_agent(ref_owner.address, system.users[4].address, "agl_00000000beef")
    token = system.register_agent(owner.address, self_wallet.address, "agl_0000000a11ce", referrer=referrer)
    buyer = system.users[2]
    system.mint_usdc(buyer.address, BUYER_FUNDS)
    system.approve(buyer, system.gateway.address, BUYER_FUNDS)
    return Provider(owner, self_wallet, token, ref_owner)


def fund_job(
    system: System,
    p: Provider,
    label: str = "job",
    *,
    buyer: LocalAccount | None = None,
    amount: int = AMOUNT,
    ttl: int = HOUR,
) -> tuple[bytes, int]:
    """Fund a job from the (pre-approved) buyer; return (jobId, deadline)."""
    if buyer is None:
        buyer = system.users[2]
    else:
        system.mint_usdc(buyer.address, amount)
        system.approve(buyer, system.gateway.address, amount)
    jid = job_id(label)
    deadline = system.now() + ttl
    system.tx(
        system.operator,
        system.fund_fn(buyer, jid, p.token_id, amount, deadline),
        "PaymentGateway.fund",
    )
    return jid, deadline


def release(
    system: System, submitter: LocalAccount, jid: bytes, sig: bytes, cid: str = CID, ts: int = 1_700_000_000
) -> Any:
    return system.tx(submitter, system.gateway.functions.release(jid, cid, ts, sig), "PaymentGateway.release")


def status_of(system: System, jid: bytes) -> int:
    status: int = system.gateway.functions.getJob(jid).call()[2]
    return status


def balances(system: System, *who: str) -> list[int]:
    return [system.balance(w) for w in who]


def assert_paid(system: System, p: Provider, before: dict[str, int], gross: int) -> None:
    """The provider's parties were paid exactly core.money.split(gross) relative to `before`."""
    s = money.split(gross, p.referrer_owner is not None)
    assert system.balance(p.owner.address) - before["owner"] == s.owner_cut
    assert system.balance(p.self_wallet.address) - before["self"] == s.agent_cut
    assert system.balance(system.treasury.address) - before["treasury"] == s.service_cut
    if p.referrer_owner is not None:
        assert system.balance(p.referrer_owner.address) - before["ref"] == s.referral_cut
        assert s.referral_cut > 0 or gross < 200
    assert s.owner_cut + s.agent_cut + s.service_cut + s.referral_cut == gross


def snapshot_parties(system: System, p: Provider) -> dict[str, int]:
    snap = {
        "owner": system.balance(p.owner.address),
        "self": system.balance(p.self_wallet.address),
        "treasury": system.balance(system.treasury.address),
    }
    if p.referrer_owner is not None:
        snap["ref"] = system.balance(p.referrer_owner.address)
    return snap


# ---- deployment ---------------------------------------------------------------------------


def test_constructor_rejects_zero_addresses(system: System) -> None:
    usdc, reg, pay, admin = (
        system.usdc.address,
        system.registry.address,
        system.payouts.address,
        system.deployer.address,
    )
    for args in ((ZERO, reg, pay, admin), (usdc, ZERO, pay, admin), (usdc, reg, ZERO, admin), (usdc, reg, pay, ZERO)):
        assert_reverts(lambda a=args: deploy(system.w3, system.deployer, "PaymentGateway", *a), "ZeroAddress")  # type: ignore[misc]
    g = system.gateway
    assert g.functions.usdc().call() == usdc
    assert g.functions.registry().call() == reg
    assert g.functions.payouts().call() == pay
    assert g.functions.hasRole(g.functions.OPERATOR_ROLE().call(), system.operator.address).call()
    assert g.functions.hasRole(g.functions.ARBITER_ROLE().call(), system.arbiter.address).call()
    assert g.functions.hasRole(g.functions.PAUSER_ROLE().call(), system.deployer.address).call()
    assert not g.functions.hasRole(g.functions.OPERATOR_ROLE().call(), system.arbiter.address).call()


def test_role_administration(system: System) -> None:
    """Only the admin hands out roles; a new operator / arbiter works, a revoked one does not."""
    g, admin = system.gateway, system.deployer
    admin_role, op_role = g.functions.DEFAULT_ADMIN_ROLE().call(), g.functions.OPERATOR_ROLE().call()
    arb_role = g.functions.ARBITER_ROLE().call()
    assert op_role == keccak(text="OPERATOR_ROLE") and arb_role == keccak(text="ARBITER_ROLE")
    assert g.functions.PAUSER_ROLE().call() == keccak(text="PAUSER_ROLE")
    for role in (op_role, arb_role, g.functions.PAUSER_ROLE().call()):
        assert g.functions.getRoleAdmin(role).call() == admin_role
    assert g.functions.hasRole(admin_role, admin.address).call()
    assert g.functions.supportsInterface(bytes.fromhex("7965db0b")).call()  # IAccessControl
    newcomer = system.users[7]
    assert revert_args(
        lambda: system.tx(system.operator, g.functions.grantRole(op_role, newcomer.address)),
        "AccessControlUnauthorizedAccount",
    ) == (system.operator.address, admin_role)

    p = make_provider(system)
    system.tx(admin, g.functions.grantRole(op_role, newcomer.address))
    jid = job_id("new-operator")
    fund = system.fund_fn(system.users[2], jid, p.token_id, AMOUNT, system.now() + HOUR)
    system.tx(newcomer, fund)
    assert status_of(system, jid) == FUNDED
    system.tx(admin, g.functions.revokeRole(op_role, newcomer.address))
    fund2 = system.fund_fn(system.users[2], job_id("after-revoke"), p.token_id, AMOUNT, system.now() + HOUR)
    assert_reverts(lambda: system.tx(newcomer, fund2), "AccessControlUnauthorizedAccount")
    # an arbiter that renounces can no longer resolve
    system.tx(system.users[2], g.functions.openDispute(jid))
    system.tx(system.arbiter, g.functions.renounceRole(arb_role, system.arbiter.address))
    assert_reverts(
        lambda: system.tx(system.arbiter, g.functions.resolveDispute(jid, 0)), "AccessControlUnauthorizedAccount"
    )
    assert_solvent(system)


# ---- fund -----------------------------------------------------------------------------------


def test_fund_pulls_the_buyers_approved_usdc(system: System) -> None:
    p = make_provider(system)
    buyer = system.users[6]
    g = system.gateway
    jid = job_id("fund")
    system.mint_usdc(buyer.address, AMOUNT + 5)
    system.approve(buyer, g.address, AMOUNT + 7)
    deadline = system.now() + HOUR
    receipt = system.tx(
        system.operator, system.fund_fn(buyer, jid, p.token_id, AMOUNT, deadline), "PaymentGateway.fund"
    )

    (ev,) = system.events(receipt, "PaymentGateway", "JobFunded")
    assert ev["args"]["jobId"] == jid
    assert ev["args"]["buyer"] == buyer.address
    assert ev["args"]["providerTokenId"] == p.token_id
    assert ev["args"]["amount"] == AMOUNT
    assert ev["args"]["deadline"] == deadline
    assert system.balance(buyer.address) == 5
    assert system.balance(g.address) == AMOUNT
    assert system.usdc.functions.allowance(buyer.address, g.address).call() == 7
    assert g.functions.totalEscrowed().call() == AMOUNT
    assert tuple(g.functions.getJob(jid).call()) == (buyer.address, deadline, FUNDED, p.token_id, AMOUNT)
    assert tuple(g.functions.getJob(job_id("never")).call()) == (ZERO, 0, 0, 0, 0)

    # a second job (default buyer) accumulates in totalEscrowed
    fund_job(system, p, "second", amount=10 * USDC)
    assert system.balance(system.users[2].address) == BUYER_FUNDS - 10 * USDC
    assert g.functions.totalEscrowed().call() == AMOUNT + 10 * USDC
    assert_solvent(system)


def test_fund_rejects_an_existing_job_id(system: System) -> None:
    p = make_provider(system)
    jid, _ = fund_job(system, p, "dup")
    buyer = system.users[6]
    system.mint_usdc(buyer.address, AMOUNT)
    system.approve(buyer, system.gateway.address, AMOUNT)
    fund = system.fund_fn(buyer, jid, p.token_id, AMOUNT, system.now() + HOUR)
    assert revert_args(lambda: system.tx(system.operator, fund), "JobExists") == (jid,)
    # still taken once the job is settled: a job id is never reused
    release(system, system.users[5], jid, attest(p.self_wallet, jid))
    assert_reverts(lambda: system.tx(system.operator, fund), "JobExists")
    assert system.balance(buyer.address) == AMOUNT
    assert_solvent(system)


def test_fund_validates_its_inputs(system: System) -> None:
    p = make_provider(system)
    g, buyer = system.gateway, system.users[2]
    op = system.operator
    later = system.now() + HOUR
    assert_reverts(
        lambda: system.tx(op, g.functions.fund(job_id("z"), ZERO, p.token_id, AMOUNT, later, b"")), "ZeroAddress"
    )
    assert_reverts(lambda: system.tx(op, system.fund_fn(buyer, job_id("z"), p.token_id, 0, later)), "ZeroAmount")
    past = system.now() - 1
    assert revert_args(
        lambda: system.tx(op, system.fund_fn(buyer, job_id("z"), p.token_id, AMOUNT, past)), "DeadlineInPast"
    ) == (past,)
    # a deadline equal to the block time is already in the past
    now_dl = system.now() + 50
    set_next_timestamp(system, now_dl)
    assert_reverts(at_next_block(op, system.fund_fn(buyer, job_id("z"), p.token_id, AMOUNT, now_dl)), "DeadlineInPast")
    # an unknown provider token
    assert_reverts(
        lambda: system.tx(op, system.fund_fn(buyer, job_id("z"), 999, AMOUNT, later + 100)),
        "ERC721NonexistentToken",
    )
    # one second after the block time is fine
    r = send_fixed_gas(system, op, system.fund_fn(buyer, job_id("z"), p.token_id, AMOUNT, now_dl + 1))
    assert block_ts(system, r) == now_dl
    assert g.functions.totalEscrowed().call() == AMOUNT
    assert_solvent(system)


def test_fund_rejects_a_paused_agent(system: System) -> None:
    p = make_provider(system)
    reg, market = system.registry, system.users[7]
    system.tx(system.deployer, reg.functions.grantRole(reg.functions.MARKET_ROLE().call(), market.address))
    system.tx(market, reg.functions.setSalePause(p.token_id, True, p.owner.address))
    buyer = system.users[2]
    fund = system.fund_fn(buyer, job_id("paused"), p.token_id, AMOUNT, system.now() + HOUR)
    assert revert_args(lambda: system.tx(system.operator, fund), "AgentPaused") == (p.token_id,)
    system.tx(market, reg.functions.setSalePause(p.token_id, False, ZERO))
    system.tx(system.operator, fund)
    assert system.gateway.functions.totalEscrowed().call() == AMOUNT


def test_fund_needs_allowance_and_balance(system: System) -> None:
    p = make_provider(system)
    g, buyer, op = system.gateway, system.users[6], system.operator
    system.mint_usdc(buyer.address, AMOUNT)
    system.approve(buyer, g.address, AMOUNT - 1)
    fund = system.fund_fn(buyer, job_id("a"), p.token_id, AMOUNT, system.now() + HOUR)
    assert revert_args(lambda: system.tx(op, fund), "ERC20InsufficientAllowance") == (
        g.address,
        AMOUNT - 1,
        AMOUNT,
    )
    system.approve(buyer, g.address, AMOUNT + 1)
    fund_more = system.fund_fn(buyer, job_id("a"), p.token_id, AMOUNT + 1, system.now() + HOUR)
    assert revert_args(lambda: system.tx(op, fund_more), "ERC20InsufficientBalance") == (
        buyer.address,
        AMOUNT,
        AMOUNT + 1,
    )
    assert g.functions.totalEscrowed().call() == 0
    assert status_of(system, job_id("a")) == 0
    assert system.balance(buyer.address) == AMOUNT


def test_fund_is_operator_only(system: System) -> None:
    p = make_provider(system)
    g, buyer = system.gateway, system.users[2]
    fund = system.fund_fn(buyer, job_id("op"), p.token_id, AMOUNT, system.now() + HOUR)
    role = g.functions.OPERATOR_ROLE().call()
    for who in (buyer, system.arbiter, system.deployer):
        assert revert_args(lambda w=who: system.tx(w, fund), "AccessControlUnauthorizedAccount") == (
            who.address,
            role,
        )  # type: ignore[misc]
    assert system.balance(buyer.address) == BUYER_FUNDS
    assert system.gateway.functions.totalEscrowed().call() == 0


# ---- the buyer's consent -----------------------------------------------------------------------


def test_funding_digest_matches_python_typed_data(system: System) -> None:
    """The contract's domain separator and digest are exactly eth-account's EIP-712 hashing of
    core.checkout.funding_typed_data (what the API shows buyers and checks)."""
    g, buyer = system.gateway, system.users[2]
    jid, deadline = job_id("digest"), 1_900_000_000
    typed = rules.funding_typed_data(
        chain_id=system.deployment.chain_id,
        gateway=g.address,
        job_id="0x" + jid.hex(),
        buyer=buyer.address,
        provider_token_id=7,
        amount=AMOUNT,
        deadline=deadline,
    )
    signable = encode_typed_data(full_message=typed)
    assert signable.version == b"\x01"  # header: the domain separator, body: the struct hash
    assert g.functions.domainSeparator().call() == bytes(signable.header)
    digest = keccak(b"\x19\x01" + bytes(signable.header) + bytes(signable.body))
    assert g.functions.fundingDigest(jid, buyer.address, 7, AMOUNT, deadline).call() == digest
    assert g.functions.FUNDING_TYPEHASH().call() == keccak(
        text="Funding(bytes32 jobId,address buyer,uint256 providerTokenId,uint256 amount,uint64 deadline)"
    )
    sig = system.funding_signature(buyer, jid, 7, AMOUNT, deadline)
    assert signatures.typed_signer(typed, "0x" + sig.hex()) == buyer.address


def test_fund_needs_the_buyers_consent_to_exactly_this_job(system: System) -> None:
    """No signature, another signer's, or the buyer's signature of any other job id, provider,
    amount or deadline: BadBuyerSignature, nothing moves. Only the exact consent funds."""
    p = make_provider(system)
    other = system.register_agent(system.users[3].address, system.users[4].address, "agl_0000000b0b00")
    g, buyer, op = system.gateway, system.users[2], system.operator
    jid, deadline = job_id("consent"), system.now() + HOUR

    def fund_with(sig: bytes) -> Callable[[], object]:
        return lambda: system.tx(op, g.functions.fund(jid, buyer.address, p.token_id, AMOUNT, deadline, sig))

    good = system.funding_signature(buyer, jid, p.token_id, AMOUNT, deadline)
    wrong = {
        "none": b"",
        "garbage": b"\x01" * 65,
        "another signer": system.funding_signature(system.users[6], jid, p.token_id, AMOUNT, deadline),
        "the operator": system.funding_signature(op, jid, p.token_id, AMOUNT, deadline),
        "another amount": system.funding_signature(buyer, jid, p.token_id, AMOUNT + 1, deadline),
        "another provider": system.funding_signature(buyer, jid, other, AMOUNT, deadline),
        "another deadline": system.funding_signature(buyer, jid, p.token_id, AMOUNT, deadline + 1),
        "another job": system.funding_signature(buyer, job_id("consent-2"), p.token_id, AMOUNT, deadline),
        "personal_sign of the digest": sign_text(
            buyer, "0x" + g.functions.fundingDigest(jid, buyer.address, p.token_id, AMOUNT, deadline).call().hex()
        ),
    }
    for name, sig in wrong.items():
        assert revert_args(fund_with(sig), "BadBuyerSignature") == (jid, buyer.address), name
    # another chain or another gateway (the EIP-712 domain) does not count either
    for domain in ({"chainId": 1}, {"verifyingContract": system.escrow.address}):
        typed = rules.funding_typed_data(
            chain_id=system.deployment.chain_id,
            gateway=g.address,
            job_id="0x" + jid.hex(),
            buyer=buyer.address,
            provider_token_id=p.token_id,
            amount=AMOUNT,
            deadline=deadline,
        )
        typed["domain"].update(domain)
        sig = bytes(buyer.sign_typed_data(full_message=typed).signature)
        assert_reverts(fund_with(sig), "BadBuyerSignature")
    assert system.balance(buyer.address) == BUYER_FUNDS
    assert status_of(system, jid) == 0

    receipt = system.tx(op, g.functions.fund(jid, buyer.address, p.token_id, AMOUNT, deadline, good))
    assert system.events(receipt, "PaymentGateway", "JobFunded")[0]["args"]["deadline"] == deadline
    assert system.balance(buyer.address) == BUYER_FUNDS - AMOUNT
    # the same consent can never fund again: the job id is taken for good
    assert_reverts(fund_with(good), "JobExists")
    assert_solvent(system)


def test_a_stolen_operator_key_cannot_move_an_allowance(system: System) -> None:
    """Whoever holds OPERATOR_ROLE (here: a thief with the key) cannot pull a victim's approved USDC
    without the victim's signature, nor re-use a consent the victim gave for another job."""
    p = make_provider(system)
    g, op = system.gateway, system.operator
    victim, thief = system.users[6], system.users[7]
    system.mint_usdc(victim.address, 1_000 * USDC)
    system.approve(victim, g.address, 2**256 - 1)  # an unlimited allowance, as wallets often give
    thief_token = system.register_agent(thief.address, system.users[9].address, "agl_0000000bad00")
    deadline = system.now() + HOUR
    # a consent the victim did give: 10 USDC for one job with provider p
    consent = system.funding_signature(victim, job_id("honest"), p.token_id, 10 * USDC, deadline)
    attempts = [
        (
            job_id("steal"),
            thief_token,
            1_000 * USDC,
            system.funding_signature(thief, job_id("steal"), thief_token, 1_000 * USDC, deadline),
        ),
        (job_id("steal"), thief_token, 1_000 * USDC, b""),
        (job_id("honest"), thief_token, 10 * USDC, consent),  # the victim's consent, another provider
        (job_id("honest"), p.token_id, 1_000 * USDC, consent),  # the victim's consent, a larger amount
        (job_id("steal-2"), p.token_id, 10 * USDC, consent),  # the victim's consent, another job id
    ]
    for jid, token, amount, sig in attempts:
        fn = g.functions.fund(jid, victim.address, token, amount, deadline, sig)
        assert_reverts(lambda f=fn: system.tx(op, f), "BadBuyerSignature")  # type: ignore[misc]
    assert system.balance(victim.address) == 1_000 * USDC
    assert g.functions.totalEscrowed().call() == 0
    # what the victim signed is all that can move
    system.tx(op, g.functions.fund(job_id("honest"), victim.address, p.token_id, 10 * USDC, deadline, consent))
    assert system.balance(victim.address) == 990 * USDC
    assert_solvent(system)


def test_an_erc1271_contract_wallet_can_consent(system: System) -> None:
    """A contract wallet (ERC-1271) buyer consents through isValidSignature: its owner key's
    signature of the funding digest counts; anyone else's does not."""
    p = make_provider(system)
    g, op, owner = system.gateway, system.operator, system.users[6]
    wallet, _ = deploy(system.w3, owner, "TestContractWallet", owner.address)
    system.mint_usdc(wallet.address, AMOUNT)
    system.tx(owner, wallet.functions.approve(system.usdc.address, g.address, AMOUNT))
    jid, deadline = job_id("erc1271"), system.now() + HOUR
    digest = g.functions.fundingDigest(jid, wallet.address, p.token_id, AMOUNT, deadline).call()

    def fund_with(signer: LocalAccount) -> Any:
        sig = bytes(Account.unsafe_sign_hash(digest, signer.key).signature)
        return g.functions.fund(jid, wallet.address, p.token_id, AMOUNT, deadline, sig)

    assert revert_args(lambda: system.tx(op, fund_with(system.users[7])), "BadBuyerSignature") == (
        jid,
        wallet.address,
    )
    receipt = system.tx(op, fund_with(owner))
    (ev,) = system.events(receipt, "PaymentGateway", "JobFunded")
    assert ev["args"]["buyer"] == wallet.address
    assert system.balance(wallet.address) == 0
    assert tuple(g.functions.getJob(jid).call()) == (wallet.address, deadline, FUNDED, p.token_id, AMOUNT)
    # an empty signature is not the wallet's consent either (isValidSignature says no)
    fn = g.functions.fund(job_id("empty"), wallet.address, p.token_id, 1, deadline, b"")
    assert_reverts(lambda: system.tx(op, fn), "BadBuyerSignature")
    assert_solvent(system)


def test_fund_and_release_fail_closed_without_a_self_wallet(system: System) -> None:
    """After the agent changes hands its self wallet is zero: no funding (nobody could attest),
    no release (not even by the old self wallet), until the new owner sets one with a proof."""
    p = make_provider(system)
    buyer, submitter = system.users[2], system.users[5]
    jid, _ = fund_job(system, p, "handover", ttl=10 * HOUR)
    new_owner = system.users[7]
    system.tx(p.owner, system.registry.functions.transferFrom(p.owner.address, new_owner.address, p.token_id))
    assert system.registry.functions.selfWalletOf(p.token_id).call() == ZERO
    assert revert_args(lambda: release(system, submitter, jid, attest(p.self_wallet, jid)), "NoSelfWallet") == (
        p.token_id,
    )
    fund = system.fund_fn(buyer, job_id("handover-2"), p.token_id, AMOUNT, system.now() + HOUR)
    assert revert_args(lambda: system.tx(system.operator, fund), "NoSelfWallet") == (p.token_id,)
    # the new owner names a self wallet (with its proof): that wallet attests now, the old one cannot
    fresh = system.users[8]
    system.tx(new_owner, system.set_self_wallet_fn(new_owner.address, p.token_id, fresh))
    assert_reverts(lambda: release(system, submitter, jid, attest(p.self_wallet, jid)), "BadAttestation")
    before = system.balance(new_owner.address)
    release(system, submitter, jid, attest(fresh, jid))
    assert system.balance(new_owner.address) - before == money.split(AMOUNT, False).owner_cut
    system.tx(system.operator, fund)
    assert_solvent(system)


# ---- attestation ------------------------------------------------------------------------------


@pytest.mark.parametrize(
    ("jid", "cid", "ts"),
    [
        (job_id("msg"), CID, 1_700_000_000),
        ((1).to_bytes(32, "big"), "", 0),
        (b"\xab" * 32, "Qm:with:colons ünïcode", 2**256 - 1),
        (bytes(32), "x", 42),
    ],
)
def test_attestation_message_matches_python(system: System, jid: bytes, cid: str, ts: int) -> None:
    expected = attestation(jid, cid, ts)
    assert expected.startswith("complete:0x") and len(f"0x{jid.hex()}") == 66
    assert system.gateway.functions.attestationMessage(jid, cid, ts).call() == expected


# ---- release ------------------------------------------------------------------------------


@pytest.mark.parametrize("referred", [False, True], ids=["no-referrer", "referrer"])
def test_release_by_third_party_pays_the_split(system: System, referred: bool) -> None:
    p = make_provider(system, referred)
    g, buyer, submitter = system.gateway, system.users[2], system.users[5]
    jid, _ = fund_job(system, p, "release")
    ts = system.now()
    sig = attest(p.self_wallet, jid, CID, ts)
    assert g.functions.attestationMessage(jid, CID, ts).call() == attestation(jid, CID, ts)
    before = snapshot_parties(system, p)
    buyer_before, submitter_before = system.balance(buyer.address), system.balance(submitter.address)
    earnings_before = system.registry.functions.lifetimeEarningsOf(p.token_id).call()

    receipt = release(system, submitter, jid, sig, CID, ts)

    (ev,) = system.events(receipt, "PaymentGateway", "JobReleased")
    assert dict(ev["args"]) == {
        "jobId": jid,
        "providerTokenId": p.token_id,
        "amount": AMOUNT,
        "cid": CID,
        "attestedAt": ts,
        "submitter": submitter.address,
    }
    s = money.split(AMOUNT, referred)
    (payout,) = system.events(receipt, "AgentPayouts", "Payout")
    assert payout["args"]["ref"] == jid
    assert payout["args"]["payer"] == g.address
    assert payout["args"]["amount"] == AMOUNT
    assert (
        payout["args"]["ownerCut"],
        payout["args"]["agentCut"],
        payout["args"]["serviceCut"],
        payout["args"]["referralCut"],
    ) == (s.owner_cut, s.agent_cut, s.service_cut, s.referral_cut)
    assert system.payouts.functions.split(AMOUNT, referred).call() == [
        s.owner_cut,
        s.agent_cut,
        s.service_cut,
        s.referral_cut,
    ]
    assert_paid(system, p, before, AMOUNT)
    assert system.balance(buyer.address) == buyer_before
    assert system.balance(submitter.address) == submitter_before
    assert system.registry.functions.lifetimeEarningsOf(p.token_id).call() == earnings_before + AMOUNT
    assert status_of(system, jid) == RELEASED
    assert g.functions.totalEscrowed().call() == 0
    assert system.balance(g.address) == 0
    assert_solvent(system)

    # never twice: not by a replay, not by reclaim, dispute or arbiter
    assert revert_args(lambda: release(system, submitter, jid, sig, CID, ts), "WrongStatus") == (jid, RELEASED)
    assert_reverts(lambda: system.tx(buyer, g.functions.openDispute(jid)), "WrongStatus")
    assert_reverts(lambda: system.tx(system.arbiter, g.functions.resolveDispute(jid, 0)), "WrongStatus")
    system.advance(2 * HOUR)
    assert_reverts(lambda: system.tx(buyer, g.functions.reclaim(jid)), "WrongStatus")
    assert system.registry.functions.lifetimeEarningsOf(p.token_id).call() == earnings_before + AMOUNT
    assert_solvent(system)


def test_release_by_the_provider_itself_and_the_operator(system: System) -> None:
    p = make_provider(system)
    j1, _ = fund_job(system, p, "self")
    j2, _ = fund_job(system, p, "op")
    before = snapshot_parties(system, p)
    release(system, p.self_wallet, j1, attest(p.self_wallet, j1))
    release(system, system.operator, j2, attest(p.self_wallet, j2))
    # the self wallet paid gas in ETH only; its USDC is exactly two agent cuts
    s = money.split(AMOUNT, False)
    assert system.balance(p.self_wallet.address) - before["self"] == 2 * s.agent_cut
    assert system.balance(p.owner.address) - before["owner"] == 2 * s.owner_cut
    assert system.registry.functions.lifetimeEarningsOf(p.token_id).call() == 2 * AMOUNT
    assert_solvent(system)


def _high_s(sig: bytes) -> bytes:
    """The malleable twin of a valid signature: s -> n - s, v flipped."""
    r, s, v = sig[:32], int.from_bytes(sig[32:64], "big"), sig[64]
    return r + (SECP256K1_N - s).to_bytes(32, "big") + bytes([55 - v])


def test_release_rejects_bad_attestations(system: System) -> None:
    p = make_provider(system)
    g, submitter = system.gateway, system.users[5]
    jid, _ = fund_job(system, p, "bad")
    other, _ = fund_job(system, p, "other")
    ts = 1_700_000_123
    good = attest(p.self_wallet, jid, CID, ts)
    expected = p.self_wallet.address

    def rel(sig: bytes, cid: str = CID, at: int = ts, job: bytes = jid) -> Callable[[], object]:
        return lambda: system.tx(submitter, g.functions.release(job, cid, at, sig))

    # wrong signers: the owner, the submitter, an unrelated key
    for wrong in (p.owner, submitter, Account.from_key(keccak(text="stranger"))):
        assert revert_args(rel(attest(wrong, jid, CID, ts)), "BadAttestation") == (jid, wrong.address, expected)
    # a real self-wallet signature, but over something else
    assert_reverts(rel(good, cid=CID + "x"), "BadAttestation")
    assert_reverts(rel(good, at=ts + 1), "BadAttestation")
    assert_reverts(rel(attest(p.self_wallet, other, CID, ts)), "BadAttestation")  # signed for another job
    assert_reverts(rel(good, job=other), "BadAttestation")  # submitted for another job
    assert_reverts(rel(sign_text(p.self_wallet, attestation(jid, CID, ts).upper())), "BadAttestation")
    assert_reverts(rel(sign_text(p.self_wallet, f"complete:0x{jid.hex().upper()}:{CID}:{ts}")), "BadAttestation")
    # the raw keccak of the message (no EIP-191 prefix) is not an attestation
    raw = bytes(Account.unsafe_sign_hash(keccak(text=attestation(jid, CID, ts)), p.self_wallet.key).signature)
    assert_reverts(rel(raw), "BadAttestation")
    # malformed signatures recover nobody
    for bad in (b"", good[:64], good + b"\x00", bytes(65), good[:64] + b"\x01", _high_s(good)):
        assert revert_args(rel(bad), "BadAttestation") == (jid, ZERO, expected)
    assert status_of(system, jid) == FUNDED
    assert g.functions.totalEscrowed().call() == 2 * AMOUNT

    # the good one still works after all the failures
    release(system, submitter, jid, good, CID, ts)
    assert status_of(system, jid) == RELEASED
    assert status_of(system, other) == FUNDED
    assert_solvent(system)


def test_release_follows_a_rotated_self_wallet(system: System) -> None:
    p = make_provider(system)
    jid, _ = fund_job(system, p, "rotate")
    new_wallet = system.users[8]
    system.tx(p.owner, system.set_self_wallet_fn(p.owner.address, p.token_id, new_wallet))
    assert_reverts(lambda: release(system, system.users[5], jid, attest(p.self_wallet, jid)), "BadAttestation")
    before = system.balance(new_wallet.address)
    release(system, system.users[5], jid, attest(new_wallet, jid))
    assert system.balance(new_wallet.address) - before == money.split(AMOUNT, False).agent_cut
    assert_solvent(system)


def test_release_deadline_is_inclusive(system: System) -> None:
    p = make_provider(system)
    g, submitter = system.gateway, system.users[5]
    j_on, deadline_on = fund_job(system, p, "on-time", ttl=100)
    j_late, deadline_late = fund_job(system, p, "late", ttl=200)
    # exactly at the deadline: still releasable
    set_next_timestamp(system, deadline_on)
    r = release(system, submitter, j_on, attest(p.self_wallet, j_on))
    assert block_ts(system, r) == deadline_on
    assert status_of(system, j_on) == RELEASED
    # one second after: DeadlinePassed, even with a perfect attestation
    set_next_timestamp(system, deadline_late + 1)
    sig = attest(p.self_wallet, j_late)
    late = g.functions.release(j_late, CID, 1_700_000_000, sig)
    assert revert_args(at_next_block(submitter, late), "DeadlinePassed") == (j_late, deadline_late)
    with pytest.raises(TransactionFailed):
        send_fixed_gas(system, submitter, late)
    assert system.now() == deadline_late + 1
    assert status_of(system, j_late) == FUNDED
    # and well after the deadline, the usual way
    system.advance(HOUR)
    assert_reverts(lambda: release(system, submitter, j_late, sig), "DeadlinePassed")
    assert_solvent(system)


def test_unknown_job_everywhere(system: System) -> None:
    p = make_provider(system)
    g, jid = system.gateway, job_id("ghost")
    sig = attest(p.self_wallet, jid)
    assert revert_args(
        lambda: system.tx(system.users[5], g.functions.release(jid, CID, 1_700_000_000, sig)), "UnknownJob"
    ) == (jid,)
    assert_reverts(lambda: system.tx(system.users[2], g.functions.openDispute(jid)), "UnknownJob")
    assert_reverts(lambda: system.tx(system.arbiter, g.functions.resolveDispute(jid, 0)), "UnknownJob")
    assert_reverts(lambda: system.tx(system.users[2], g.functions.reclaim(jid)), "UnknownJob")


# ---- disputes -----------------------------------------------------------------------------


def test_open_dispute_is_buyer_only_and_freezes_the_job(system: System) -> None:
    p = make_provider(system)
    g, buyer = system.gateway, system.users[2]
    jid, _ = fund_job(system, p, "dispute")
    for who in (p.self_wallet, system.operator, system.arbiter):
        assert revert_args(lambda w=who: system.tx(w, g.functions.openDispute(jid)), "NotBuyer") == (
            jid,
            who.address,
        )  # type: ignore[misc]
    receipt = system.tx(buyer, g.functions.openDispute(jid), "PaymentGateway.openDispute")
    (ev,) = system.events(receipt, "PaymentGateway", "DisputeOpened")
    assert ev["args"]["jobId"] == jid and ev["args"]["buyer"] == buyer.address
    assert status_of(system, jid) == DISPUTED
    assert g.functions.totalEscrowed().call() == AMOUNT

    # frozen: no release (even a valid one), no second dispute, no reclaim after the deadline
    sig = attest(p.self_wallet, jid)
    assert revert_args(lambda: release(system, system.users[5], jid, sig), "WrongStatus") == (jid, DISPUTED)
    assert_reverts(lambda: system.tx(buyer, g.functions.openDispute(jid)), "WrongStatus")
    system.advance(2 * HOUR)
    assert revert_args(lambda: system.tx(buyer, g.functions.reclaim(jid)), "WrongStatus") == (jid, DISPUTED)
    assert system.balance(g.address) == AMOUNT
    assert_solvent(system)


def test_dispute_can_be_opened_after_the_deadline(system: System) -> None:
    p = make_provider(system)
    jid, _ = fund_job(system, p, "late-dispute", ttl=60)
    system.advance(120)
    system.tx(system.users[2], system.gateway.functions.openDispute(jid))
    assert status_of(system, jid) == DISPUTED


def _disputed(system: System, p: Provider, label: str, amount: int = AMOUNT) -> bytes:
    jid, _ = fund_job(system, p, label, amount=amount)
    system.tx(system.users[2], system.gateway.functions.openDispute(jid))
    return jid


#: (providerAmount, label): whole release, whole refund, splits incl. 1 unit either way.
RESOLUTIONS = ((AMOUNT, "release"), (0, "refund"), (45_678_901, "split"), (1, "split-1unit"), (AMOUNT - 1, "all-but-1"))


@pytest.mark.parametrize("referred", [False, True], ids=["no-referrer", "referrer"])
def test_resolve_dispute(system: System, referred: bool) -> None:
    p = make_provider(system, referred)
    g, buyer, arbiter = system.gateway, system.users[2], system.arbiter
    jobs = {label: _disputed(system, p, f"resolve-{label}") for _, label in RESOLUTIONS}
    earned = 0
    for provider_amount, label in RESOLUTIONS:
        jid = jobs[label]
        before = snapshot_parties(system, p)
        buyer_before = system.balance(buyer.address)
        escrowed_before = g.functions.totalEscrowed().call()

        receipt = system.tx(arbiter, g.functions.resolveDispute(jid, provider_amount), "PaymentGateway.resolveDispute")

        (ev,) = system.events(receipt, "PaymentGateway", "DisputeResolved")
        assert dict(ev["args"]) == {
            "jobId": jid,
            "providerAmount": provider_amount,
            "buyerAmount": AMOUNT - provider_amount,
            "arbiter": arbiter.address,
        }, label
        payouts = system.events(receipt, "AgentPayouts", "Payout")
        if provider_amount:
            (payout,) = payouts
            assert payout["args"]["amount"] == provider_amount and payout["args"]["ref"] == jid
        else:
            assert payouts == []
        assert_paid(system, p, before, provider_amount)
        assert system.balance(buyer.address) - buyer_before == AMOUNT - provider_amount, label
        earned += provider_amount
        assert system.registry.functions.lifetimeEarningsOf(p.token_id).call() == earned
        assert status_of(system, jid) == RESOLVED
        assert g.functions.totalEscrowed().call() == escrowed_before - AMOUNT
        assert system.events(receipt, "PaymentGateway", "PaymentCredited") == []
        assert_solvent(system)
        # settled once
        assert revert_args(lambda j=jid: system.tx(arbiter, g.functions.resolveDispute(j, 0)), "WrongStatus") == (  # type: ignore[misc]
            jid,
            RESOLVED,
        )
    assert g.functions.totalEscrowed().call() == 0


def test_resolve_dispute_guards(system: System) -> None:
    p = make_provider(system)
    g = system.gateway
    funded, _ = fund_job(system, p, "funded")
    jid = _disputed(system, p, "guarded")
    assert revert_args(
        lambda: system.tx(system.arbiter, g.functions.resolveDispute(jid, AMOUNT + 1)), "SplitTooLarge"
    ) == (
        AMOUNT + 1,
        AMOUNT,
    )
    assert revert_args(lambda: system.tx(system.arbiter, g.functions.resolveDispute(funded, 0)), "WrongStatus") == (
        funded,
        FUNDED,
    )
    role = g.functions.ARBITER_ROLE().call()
    for who in (system.users[2], system.operator, system.deployer):
        assert revert_args(
            lambda w=who: system.tx(w, g.functions.resolveDispute(jid, 0)),  # type: ignore[misc]
            "AccessControlUnauthorizedAccount",
        ) == (who.address, role)
    assert status_of(system, jid) == DISPUTED
    assert g.functions.totalEscrowed().call() == 2 * AMOUNT
    assert_solvent(system)


# ---- reclaim ----------------------------------------------------------------------------------


def test_reclaim_after_the_deadline_by_the_buyer_only(system: System) -> None:
    p = make_provider(system)
    g, buyer = system.gateway, system.users[2]
    jid, deadline = fund_job(system, p, "reclaim", ttl=500)
    before = system.balance(buyer.address)
    assert revert_args(lambda: system.tx(buyer, g.functions.reclaim(jid)), "DeadlineNotPassed") == (jid, deadline)
    # exactly at the deadline it is still the provider's time
    set_next_timestamp(system, deadline)
    assert_reverts(at_next_block(buyer, g.functions.reclaim(jid)), "DeadlineNotPassed")
    set_next_timestamp(system, deadline + 1)
    for who in (system.users[5], system.operator, p.owner):
        assert revert_args(at_next_block(who, g.functions.reclaim(jid)), "NotBuyer") == (jid, who.address)
    receipt = send_fixed_gas(system, buyer, g.functions.reclaim(jid))
    assert block_ts(system, receipt) == deadline + 1
    (ev,) = system.events(receipt, "PaymentGateway", "JobReclaimed")
    assert dict(ev["args"]) == {"jobId": jid, "buyer": buyer.address, "amount": AMOUNT}
    assert system.balance(buyer.address) - before == AMOUNT
    assert status_of(system, jid) == REFUNDED
    assert g.functions.totalEscrowed().call() == 0
    assert_solvent(system)
    # no double refund and no late release
    assert revert_args(lambda: system.tx(buyer, g.functions.reclaim(jid)), "WrongStatus") == (jid, REFUNDED)
    assert_reverts(lambda: release(system, system.users[5], jid, attest(p.self_wallet, jid)), "WrongStatus")


# ---- credits for payees that cannot receive ---------------------------------------------------


def test_blacklisted_buyer_gets_a_credit_on_reclaim(system: System) -> None:
    p = make_provider(system)
    g, buyer, rescue = system.gateway, system.users[2], system.users[9]
    jid, _ = fund_job(system, p, "bl-reclaim", ttl=60)
    system.tx(system.deployer, system.usdc.functions.setBlacklisted(buyer.address, True))
    system.advance(120)
    receipt = system.tx(buyer, g.functions.reclaim(jid))
    (credit,) = system.events(receipt, "PaymentGateway", "PaymentCredited")
    assert dict(credit["args"]) == {"payee": buyer.address, "amount": AMOUNT}
    assert status_of(system, jid) == REFUNDED
    assert g.functions.creditOf(buyer.address).call() == AMOUNT
    assert g.functions.totalCredits().call() == AMOUNT
    assert g.functions.totalEscrowed().call() == 0
    assert system.balance(g.address) == AMOUNT
    assert_solvent(system)

    assert_reverts(lambda: system.tx(buyer, g.functions.withdrawCredit(ZERO)), "ZeroAddress")
    assert_reverts(lambda: system.tx(rescue, g.functions.withdrawCredit(rescue.address)), "NothingToWithdraw")
    receipt = system.tx(buyer, g.functions.withdrawCredit(rescue.address), "PaymentGateway.withdrawCredit")
    (w,) = system.events(receipt, "PaymentGateway", "CreditWithdrawn")
    assert dict(w["args"]) == {"payee": buyer.address, "to": rescue.address, "amount": AMOUNT}
    assert system.balance(rescue.address) == AMOUNT
    assert g.functions.creditOf(buyer.address).call() == 0
    assert g.functions.totalCredits().call() == 0
    assert system.balance(g.address) == 0
    assert_reverts(lambda: system.tx(buyer, g.functions.withdrawCredit(rescue.address)), "NothingToWithdraw")
    assert_solvent(system)


def test_blacklisted_buyer_gets_a_credit_on_a_split_resolution(system: System) -> None:
    p = make_provider(system)
    g, buyer = system.gateway, system.users[2]
    jid = _disputed(system, p, "bl-split")
    other = _disputed(system, p, "bl-other", amount=7 * USDC)  # stays escrowed alongside the credit
    system.tx(system.deployer, system.usdc.functions.setBlacklisted(buyer.address, True))
    before = snapshot_parties(system, p)
    provider_part = 100 * USDC
    system.tx(system.arbiter, g.functions.resolveDispute(jid, provider_part))
    assert_paid(system, p, before, provider_part)
    assert g.functions.creditOf(buyer.address).call() == AMOUNT - provider_part
    assert g.functions.totalEscrowed().call() == 7 * USDC
    assert_solvent(system)
    # a whole refund of the second one adds to the same credit
    system.tx(system.arbiter, g.functions.resolveDispute(other, 0))
    assert g.functions.creditOf(buyer.address).call() == AMOUNT - provider_part + 7 * USDC
    assert g.functions.totalEscrowed().call() == 0
    assert_solvent(system)


def test_blacklisted_provider_owner_does_not_block_release(system: System) -> None:
    p = make_provider(system)
    jid, _ = fund_job(system, p, "bl-owner")
    system.tx(system.deployer, system.usdc.functions.setBlacklisted(p.owner.address, True))
    self_before = system.balance(p.self_wallet.address)
    release(system, system.users[5], jid, attest(p.self_wallet, jid))
    s = money.split(AMOUNT, False)
    assert system.payouts.functions.creditOf(p.owner.address).call() == s.owner_cut
    assert system.balance(p.self_wallet.address) - self_before == s.agent_cut
    assert status_of(system, jid) == RELEASED
    assert_solvent(system)


# ---- pause ------------------------------------------------------------------------------------


def test_pause_blocks_fund_and_release_but_not_the_exits(system: System) -> None:
    p = make_provider(system)
    g, buyer = system.gateway, system.users[2]
    to_release, _ = fund_job(system, p, "p-release", ttl=10 * HOUR)
    to_resolve, _ = fund_job(system, p, "p-resolve", ttl=10 * HOUR)
    to_reclaim, _ = fund_job(system, p, "p-reclaim", ttl=60)
    system.tx(buyer, g.functions.openDispute(to_resolve))

    pauser_role = g.functions.PAUSER_ROLE().call()
    for who in (system.operator, system.arbiter, buyer):
        assert revert_args(lambda w=who: system.tx(w, g.functions.pause()), "AccessControlUnauthorizedAccount") == (  # type: ignore[misc]
            who.address,
            pauser_role,
        )
    assert_reverts(lambda: system.tx(system.deployer, g.functions.unpause()), "ExpectedPause")
    receipt = system.tx(system.deployer, g.functions.pause())
    assert system.events(receipt, "PaymentGateway", "Paused")[0]["args"]["account"] == system.deployer.address
    assert g.functions.paused().call()
    assert_reverts(lambda: system.tx(system.deployer, g.functions.pause()), "EnforcedPause")

    fund = system.fund_fn(buyer, job_id("p-new"), p.token_id, AMOUNT, system.now() + HOUR)
    assert_reverts(lambda: system.tx(system.operator, fund), "EnforcedPause")
    sig = attest(p.self_wallet, to_release)
    assert_reverts(lambda: release(system, system.users[5], to_release, sig), "EnforcedPause")

    # exits still work while paused: dispute resolution, reclaim, opening a dispute
    before = system.balance(buyer.address)
    system.tx(system.arbiter, g.functions.resolveDispute(to_resolve, 0))
    system.advance(120)
    system.tx(buyer, g.functions.reclaim(to_reclaim), "PaymentGateway.reclaim")
    assert system.balance(buyer.address) - before == 2 * AMOUNT
    assert status_of(system, to_resolve) == RESOLVED
    assert status_of(system, to_reclaim) == REFUNDED
    assert_solvent(system)

    for who in (system.operator, buyer):
        assert_reverts(lambda w=who: system.tx(w, g.functions.unpause()), "AccessControlUnauthorizedAccount")  # type: ignore[misc]
    system.tx(system.deployer, g.functions.unpause())
    assert not g.functions.paused().call()
    release(system, system.users[5], to_release, sig)
    system.tx(system.operator, fund)
    assert status_of(system, to_release) == RELEASED
    assert status_of(system, job_id("p-new")) == FUNDED
    assert g.functions.totalEscrowed().call() == AMOUNT
    assert_solvent(system)


def test_failed_release_leaves_no_trace(system: System) -> None:
    """A release whose payout leg fails (payout path paused) reverts as a whole."""
    p = make_provider(system)
    jid, _ = fund_job(system, p, "payouts-paused")
    system.tx(system.deployer, system.payouts.functions.pause())
    sig = attest(p.self_wallet, jid)
    assert_reverts(lambda: release(system, system.users[5], jid, sig), "EnforcedPause")
    # even with an explicit gas limit (no estimate), the mined transaction reverts and changes nothing
    with pytest.raises(TransactionFailed):
        send(system.w3, system.users[5], system.gateway.functions.release(jid, CID, 1_700_000_000, sig), gas=500_000)
    assert status_of(system, jid) == FUNDED
    assert system.gateway.functions.totalEscrowed().call() == AMOUNT
    assert_solvent(system)
    system.tx(system.deployer, system.payouts.functions.unpause())
    release(system, system.users[5], jid, sig)
    assert status_of(system, jid) == RELEASED
    assert_solvent(system)
