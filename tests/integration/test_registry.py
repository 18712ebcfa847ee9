"""AgentRegistry on a real anvil: every external function and every revert path.

Accounts: `alice` owns agent 1 (self wallet `alice_self`), `bob` owns agent 2; `market` is a
test user granted MARKET_ROLE (standing in for the marketplace), `earner` one granted EARNINGS_ROLE.
"""

from __future__ import annotations

from typing import Any

import pytest
from eth_account import Account
from eth_account.messages import encode_typed_data
from eth_account.signers.local import LocalAccount
from eth_utils import keccak

from core.chain import deploy
from scripts.devchain import self_wallet_typed_data
from tests.integration.chainkit import System, assert_reverts, at_next_block, revert_args, set_next_timestamp

ZERO = "0x" + "00" * 20
ADMIN_ROLE = b"\x00" * 32


# ---- helpers ---------------------------------------------------------------------------------


def wid(i: int) -> str:
    return f"agl_{i:012x}"


def role(system: System, name: str) -> bytes:
    value: bytes = getattr(system.registry.functions, name)().call()
    return value


def grant(system: System, name: str, account: str) -> None:
    system.tx(system.deployer, system.registry.functions.grantRole(role(system, name), account))


class Cast:
    def __init__(self, system: System) -> None:
        u = system.users
        self.alice, self.alice_self, self.bob, self.bob_self = u[0], u[1], u[2], u[3]
        self.market, self.carol, self.earner, self.dave = u[4], u[5], u[6], u[7]


@pytest.fixture()
def cast(system: System) -> Cast:
    return Cast(system)


def mint_tx(system: System, owner: str, self_wallet: str, wallet_id: str, referrer: int = 0) -> Any:
    return system.tx(system.operator, system.registry.functions.mint(owner, self_wallet, wallet_id, referrer))


# ---- deployment, metadata, roles ---------------------------------------------------------------


def test_constructor_rejects_zero_admin(system: System) -> None:
    assert_reverts(lambda: deploy(system.w3, system.deployer, "AgentRegistry", ZERO), "ZeroAddress")


def test_metadata_interfaces_and_role_constants(system: System) -> None:
    reg = system.registry.functions
    assert reg.name().call() == "agentledger Agent"
    assert reg.symbol().call() == "AGENT"
    assert reg.totalAgents().call() == 0
    for iid, expected in [
        ("01ffc9a7", True),  # ERC-165
        ("80ac58cd", True),  # ERC-721
        ("5b5e139f", True),  # ERC-721 metadata
        ("7965db0b", True),  # IAccessControl
        ("780e9d63", False),  # ERC-721 enumerable: not implemented
        ("ffffffff", False),
    ]:
        assert reg.supportsInterface(bytes.fromhex(iid)).call() is expected, iid
    for name in ("REGISTRAR_ROLE", "EARNINGS_ROLE", "MARKET_ROLE", "PAUSER_ROLE"):
        assert role(system, name) == keccak(text=name)
        assert reg.getRoleAdmin(role(system, name)).call() == ADMIN_ROLE
    assert reg.DEFAULT_ADMIN_ROLE().call() == ADMIN_ROLE
    assert reg.hasRole(ADMIN_ROLE, system.deployer.address).call()
    assert reg.hasRole(role(system, "MARKET_ROLE"), system.market.address).call()
    assert reg.hasRole(role(system, "PAUSER_ROLE"), system.deployer.address).call()
    assert not reg.hasRole(role(system, "REGISTRAR_ROLE"), system.users[0].address).call()


def test_access_control_grant_revoke_renounce(system: System, cast: Cast) -> None:
    reg = system.registry.functions
    registrar = role(system, "REGISTRAR_ROLE")
    # only the admin grants
    assert_reverts(
        lambda: system.tx(cast.alice, reg.grantRole(registrar, cast.alice.address)),
        "AccessControlUnauthorizedAccount",
        cast.alice.address,
        ADMIN_ROLE,
    )
    receipt = system.tx(system.deployer, reg.grantRole(registrar, cast.carol.address))
    (ev,) = system.events(receipt, "AgentRegistry", "RoleGranted")
    assert ev["args"]["role"] == registrar and ev["args"]["account"] == cast.carol.address
    system.tx(cast.carol, reg.mint(cast.alice.address, cast.alice_self.address, wid(1), 0))
    # renouncing needs the caller's own address as confirmation
    assert_reverts(
        lambda: system.tx(cast.carol, reg.renounceRole(registrar, cast.alice.address)), "AccessControlBadConfirmation"
    )
    system.tx(cast.carol, reg.renounceRole(registrar, cast.carol.address))
    assert_reverts(
        lambda: system.tx(cast.carol, reg.mint(cast.bob.address, cast.bob_self.address, wid(2), 0)),
        "AccessControlUnauthorizedAccount",
        cast.carol.address,
        registrar,
    )
    # revoking the operator's role stops its minting
    assert_reverts(
        lambda: system.tx(cast.alice, reg.revokeRole(registrar, system.operator.address)),
        "AccessControlUnauthorizedAccount",
    )
    receipt = system.tx(system.deployer, reg.revokeRole(registrar, system.operator.address))
    assert len(system.events(receipt, "AgentRegistry", "RoleRevoked")) == 1
    assert_reverts(
        lambda: mint_tx(system, cast.bob.address, cast.bob_self.address, wid(2)),
        "AccessControlUnauthorizedAccount",
        system.operator.address,
        registrar,
    )


# ---- mint ----------------------------------------------------------------------------------------


def test_mint_records_the_agent(system: System, cast: Cast) -> None:
    reg = system.registry.functions
    receipt = mint_tx(system, cast.alice.address, cast.alice_self.address, wid(0xABC))
    (ev,) = system.events(receipt, "AgentRegistry", "AgentRegistered")
    assert dict(ev["args"]) == {
        "tokenId": 1,
        "owner": cast.alice.address,
        "selfWallet": cast.alice_self.address,
        "walletId": "agl_000000000abc",
        "referrerTokenId": 0,
    }
    (tr,) = system.events(receipt, "AgentRegistry", "Transfer")
    assert (tr["args"]["from"], tr["args"]["to"], tr["args"]["tokenId"]) == (ZERO, cast.alice.address, 1)

    assert reg.totalAgents().call() == 1
    assert reg.ownerOf(1).call() == cast.alice.address
    assert reg.balanceOf(cast.alice.address).call() == 1
    assert reg.selfWalletOf(1).call() == cast.alice_self.address
    assert reg.tokenOfSelfWallet(cast.alice_self.address).call() == 1
    assert reg.tokenOfSelfWallet(cast.alice.address).call() == 0
    assert reg.tokenOfWalletId("agl_000000000abc").call() == 1
    assert reg.ownerPayee(1).call() == cast.alice.address
    assert reg.referralPayee(1).call() == ZERO
    assert reg.isAgentPaused(1).call() is False
    assert reg.lifetimeEarningsOf(1).call() == 0
    assert reg.tokenURI(1).call() == ""
    assert reg.getApproved(1).call() == ZERO
    # Agent struct: (selfWallet, referrerTokenId, lifetimeEarnings, sellerWhilePaused, paused, walletId)
    assert tuple(reg.agent(1).call()) == (cast.alice_self.address, 0, 0, ZERO, False, "agl_000000000abc")

    # ids are sequential; owner may also be its own self wallet, and own several agents
    t2 = system.register_agent(cast.alice.address, cast.alice.address, wid(2))
    assert t2 == 2 and reg.totalAgents().call() == 2 and reg.balanceOf(cast.alice.address).call() == 2
    assert reg.tokenOfSelfWallet(cast.alice.address).call() == 2


def test_mint_with_referrer(system: System, cast: Cast) -> None:
    reg = system.registry.functions
    ref = system.register_agent(cast.bob.address, cast.bob_self.address, wid(1))
    receipt = mint_tx(system, cast.alice.address, cast.alice_self.address, wid(2), ref)
    (ev,) = system.events(receipt, "AgentRegistry", "AgentRegistered")
    assert ev["args"]["referrerTokenId"] == ref
    assert reg.agent(2).call()[1] == ref
    # the referral goes to the referrer agent's owner, not to its self wallet
    assert reg.referralPayee(2).call() == cast.bob.address
    # ... and follows that token when it changes hands
    system.tx(cast.bob, reg.transferFrom(cast.bob.address, cast.carol.address, ref))
    assert reg.referralPayee(2).call() == cast.carol.address


@pytest.mark.parametrize(
    "bad",
    [
        "",
        "agl_",
        "agl_0123456789a",  # 15 bytes
        "agl_0123456789abc",  # 17 bytes
        "agl_0123456789ab ",  # trailing space
        " agl_0123456789a",  # 16 bytes, leading space
        "AGL_0123456789ab",  # uppercase prefix
        "Agl_0123456789ab",
        "aGl_0123456789ab",
        "agL_0123456789ab",
        "agl-0123456789ab",  # wrong separator
        "agx_0123456789ab",  # wrong prefix
        "bgl_0123456789ab",
        "xagl_0123456789a",
        "agl_0123456789AB",  # uppercase hex
        "agl_A123456789ab",
        "agl_0123456789aF",
        "agl_0123456789ag",  # non-hex right after 'f'
        "agl_g123456789ab",
        "agl_0123456789a/",  # just below '0'
        "agl_0123456789a:",  # just above '9'
        "agl_0123456789a`",  # just below 'a'
        "agl_0123456789a@",  # just below 'A'
        "agl_0123456789a\x00",
        "agl_0123456789\u00e9",  # 16 bytes but not ASCII
        "agl_0x0123456789",
    ],
)
def test_mint_rejects_malformed_wallet_id(system: System, bad: str) -> None:
    u = system.users
    assert_reverts(lambda: mint_tx(system, u[0].address, u[1].address, bad), "InvalidWalletId", bad)


@pytest.mark.parametrize("good", ["agl_000000000000", "agl_ffffffffffff", "agl_0123456789ab", "agl_9a9a9a9a9a9f"])
def test_mint_accepts_well_formed_wallet_id(system: System, good: str) -> None:
    token = system.register_agent(system.users[0].address, system.users[1].address, good)
    assert system.registry.functions.tokenOfWalletId(good).call() == token


def test_mint_rejects_taken_ids_wallets_unknown_referrer_and_zero_addresses(system: System, cast: Cast) -> None:
    system.register_agent(cast.alice.address, cast.alice_self.address, wid(1))
    assert_reverts(lambda: mint_tx(system, cast.bob.address, cast.bob_self.address, wid(1)), "WalletIdTaken", wid(1))
    assert_reverts(
        lambda: mint_tx(system, cast.bob.address, cast.alice_self.address, wid(2)),
        "SelfWalletTaken",
        cast.alice_self.address,
    )
    assert_reverts(lambda: mint_tx(system, cast.bob.address, cast.bob_self.address, wid(2), 2), "UnknownAgent", 2)
    assert_reverts(lambda: mint_tx(system, cast.bob.address, cast.bob_self.address, wid(2), 99), "UnknownAgent", 99)
    assert_reverts(lambda: mint_tx(system, ZERO, cast.bob_self.address, wid(2)), "ZeroAddress")
    assert_reverts(lambda: mint_tx(system, cast.bob.address, ZERO, wid(2)), "ZeroAddress")
    # nothing of the failed attempts stuck: the same values still mint cleanly
    assert system.register_agent(cast.bob.address, cast.bob_self.address, wid(2), 1) == 2
    assert system.registry.functions.totalAgents().call() == 2


def test_mint_requires_registrar_role(system: System, cast: Cast) -> None:
    assert_reverts(
        lambda: system.tx(
            cast.alice, system.registry.functions.mint(cast.alice.address, cast.alice_self.address, wid(1), 0)
        ),
        "AccessControlUnauthorizedAccount",
        cast.alice.address,
        role(system, "REGISTRAR_ROLE"),
    )


# ---- registry pause --------------------------------------------------------------------------------


def test_registry_pause_blocks_mint_and_self_wallet_changes(system: System, cast: Cast) -> None:
    reg = system.registry.functions
    token = system.register_agent(cast.alice.address, cast.alice_self.address, wid(1))
    pauser = role(system, "PAUSER_ROLE")
    assert_reverts(
        lambda: system.tx(cast.alice, reg.pause()), "AccessControlUnauthorizedAccount", cast.alice.address, pauser
    )
    assert_reverts(lambda: system.tx(system.deployer, reg.unpause()), "ExpectedPause")

    receipt = system.tx(system.deployer, reg.pause())
    (ev,) = system.events(receipt, "AgentRegistry", "Paused")
    assert ev["args"]["account"] == system.deployer.address
    assert reg.paused().call() is True
    assert_reverts(lambda: system.tx(system.deployer, reg.pause()), "EnforcedPause")
    assert_reverts(lambda: mint_tx(system, cast.bob.address, cast.bob_self.address, wid(2)), "EnforcedPause")
    set_carol = system.set_self_wallet_fn(cast.alice.address, token, cast.carol)
    assert_reverts(lambda: system.tx(cast.alice, set_carol), "EnforcedPause")
    # earnings keep being recorded (payouts must not stall), and views keep answering
    grant(system, "EARNINGS_ROLE", cast.earner.address)
    system.tx(cast.earner, reg.recordEarnings(token, 5))
    assert reg.lifetimeEarningsOf(token).call() == 5

    assert_reverts(
        lambda: system.tx(cast.alice, reg.unpause()), "AccessControlUnauthorizedAccount", cast.alice.address, pauser
    )
    receipt = system.tx(system.deployer, reg.unpause())
    assert len(system.events(receipt, "AgentRegistry", "Unpaused")) == 1
    assert reg.paused().call() is False
    assert system.register_agent(cast.bob.address, cast.bob_self.address, wid(2)) == 2
    system.tx(cast.alice, set_carol)


# ---- views -------------------------------------------------------------------------------------------


def test_token_of_wallet_id_unknown(system: System, cast: Cast) -> None:
    reg = system.registry.functions
    system.register_agent(cast.alice.address, cast.alice_self.address, "agl_0123456789ab")
    assert reg.tokenOfWalletId("agl_0123456789ab").call() == 1
    for unknown in ("agl_0123456789ac", "AGL_0123456789AB", "agl_0123456789AB", "", "nonsense"):
        assert_reverts(lambda u=unknown: reg.tokenOfWalletId(u).call(), "UnknownWalletId", unknown)


@pytest.mark.parametrize(
    "view",
    [
        "agent",
        "selfWalletOf",
        "isAgentPaused",
        "lifetimeEarningsOf",
        "ownerPayee",
        "referralPayee",
        "ownerOf",
        "tokenURI",
        "getApproved",
    ],
)
def test_views_of_a_nonexistent_token_revert(system: System, view: str) -> None:
    system.register_agent(system.users[0].address, system.users[1].address, wid(1))
    fn = getattr(system.registry.functions, view)
    fn(1).call()  # exists
    for missing in (0, 2, 2**256 - 1):
        assert_reverts(lambda m=missing: fn(m).call(), "ERC721NonexistentToken", missing)


# ---- setSelfWallet -----------------------------------------------------------------------------------


def proof(
    system: System, wallet: LocalAccount, token: int, owner: str, deadline: int, nonce: int | None = None
) -> bytes:
    """`wallet`'s EIP-712 SelfWallet proof, built from the typed data (not the contract's digest)."""
    if nonce is None:
        nonce = system.registry.functions.selfWalletNonce(token).call()
    typed = self_wallet_typed_data(
        chain_id=system.deployment.chain_id,
        registry=system.registry.address,
        token_id=token,
        self_wallet=wallet.address,
        owner=owner,
        nonce=nonce,
        deadline=deadline,
    )
    return bytes(wallet.sign_typed_data(full_message=typed).signature)


def test_self_wallet_digest_matches_python_typed_data(system: System, cast: Cast) -> None:
    reg = system.registry.functions
    typed = self_wallet_typed_data(
        chain_id=system.deployment.chain_id,
        registry=system.registry.address,
        token_id=3,
        self_wallet=cast.carol.address,
        owner=cast.alice.address,
        nonce=5,
        deadline=1_900_000_000,
    )
    signable = encode_typed_data(full_message=typed)
    assert reg.domainSeparator().call() == bytes(signable.header)
    digest = keccak(b"\x19\x01" + bytes(signable.header) + bytes(signable.body))
    assert reg.selfWalletDigest(3, cast.carol.address, cast.alice.address, 5, 1_900_000_000).call() == digest
    assert reg.SELF_WALLET_TYPEHASH().call() == keccak(
        text="SelfWallet(uint256 tokenId,address selfWallet,address owner,uint256 nonce,uint256 deadline)"
    )


def test_set_self_wallet_by_owner_with_the_new_wallets_proof(system: System, cast: Cast) -> None:
    reg = system.registry.functions
    token = system.register_agent(cast.alice.address, cast.alice_self.address, wid(1))
    assert reg.selfWalletNonce(token).call() == 0
    deadline = system.now() + 600
    sig = proof(system, cast.carol, token, cast.alice.address, deadline)
    receipt = system.tx(
        cast.alice, reg.setSelfWallet(token, cast.carol.address, deadline, sig), "AgentRegistry.setSelfWallet"
    )
    (ev,) = system.events(receipt, "AgentRegistry", "SelfWalletChanged")
    assert dict(ev["args"]) == {"tokenId": token, "previous": cast.alice_self.address, "current": cast.carol.address}
    assert reg.selfWalletOf(token).call() == cast.carol.address
    assert reg.requireSelfWallet(token).call() == cast.carol.address
    assert reg.agent(token).call()[0] == cast.carol.address
    assert reg.tokenOfSelfWallet(cast.carol.address).call() == token
    assert reg.tokenOfSelfWallet(cast.alice_self.address).call() == 0
    assert reg.selfWalletNonce(token).call() == 1
    # the proof was good once: the nonce moved on, so it cannot put carol back after a rotation
    system.tx(cast.alice, system.set_self_wallet_fn(cast.alice.address, token, cast.dave))
    assert_reverts(
        lambda: system.tx(cast.alice, reg.setSelfWallet(token, cast.carol.address, deadline, sig)),
        "BadSelfWalletProof",
        token,
        cast.carol.address,
    )
    # the released wallet is free for another agent
    assert system.register_agent(cast.bob.address, cast.alice_self.address, wid(2)) == 2


def test_set_self_wallet_needs_a_valid_unexpired_proof_by_that_wallet(system: System, cast: Cast) -> None:
    """Nobody can point an agent at an address it does not control: the proof must be the new
    wallet's signature of exactly (token, wallet, owner, current nonce, deadline), before the deadline."""
    reg = system.registry.functions
    token = system.register_agent(cast.alice.address, cast.alice_self.address, wid(1))
    other = system.register_agent(cast.bob.address, cast.bob_self.address, wid(2))
    deadline = system.now() + 600
    carol, alice = cast.carol, cast.alice.address
    bad = {
        "none": b"",
        "the owner's own key": proof(system, cast.alice, token, alice, deadline),
        "another token": proof(system, carol, other, alice, deadline, nonce=0),
        "another owner": proof(system, carol, token, cast.bob.address, deadline),
        "another nonce": proof(system, carol, token, alice, deadline, nonce=1),
        "another deadline": proof(system, carol, token, alice, deadline + 1),
    }
    for name, sig in bad.items():
        fn = reg.setSelfWallet(token, carol.address, deadline, sig)
        assert revert_args(lambda f=fn: system.tx(cast.alice, f), "BadSelfWalletProof") == (token, carol.address), name  # type: ignore[misc]
    # a proof past its deadline (one second is enough)
    expired = system.now() + 30
    sig = proof(system, carol, token, alice, expired)
    set_next_timestamp(system, expired + 1)
    late = reg.setSelfWallet(token, carol.address, expired, sig)
    assert revert_args(at_next_block(cast.alice, late), "ProofExpired") == (expired,)
    assert reg.selfWalletOf(token).call() == cast.alice_self.address
    # a contract wallet (ERC-1271) proves control through isValidSignature
    wallet, _ = deploy(system.w3, cast.dave, "TestContractWallet", cast.dave.address)
    deadline = system.now() + 600
    digest = reg.selfWalletDigest(token, wallet.address, alice, reg.selfWalletNonce(token).call(), deadline).call()
    not_dave = bytes(Account.unsafe_sign_hash(digest, cast.carol.key).signature)
    assert_reverts(
        lambda: system.tx(cast.alice, reg.setSelfWallet(token, wallet.address, deadline, not_dave)),
        "BadSelfWalletProof",
    )
    by_dave = bytes(Account.unsafe_sign_hash(digest, cast.dave.key).signature)
    system.tx(cast.alice, reg.setSelfWallet(token, wallet.address, deadline, by_dave))
    assert reg.selfWalletOf(token).call() == wallet.address


def test_set_self_wallet_reverts(system: System, cast: Cast) -> None:
    reg = system.registry.functions
    token = system.register_agent(cast.alice.address, cast.alice_self.address, wid(1))
    system.register_agent(cast.bob.address, cast.bob_self.address, wid(2))
    # neither the self wallet, an approved operator, nor another agent's owner may rotate it
    system.tx(cast.alice, reg.approve(cast.dave.address, token))
    system.tx(cast.alice, reg.setApprovalForAll(cast.carol.address, True))
    for who in (cast.alice_self, cast.bob, cast.carol, cast.dave, system.operator, system.deployer):
        assert_reverts(
            lambda w=who: system.tx(w, system.set_self_wallet_fn(w.address, token, cast.earner)),
            "NotTokenOwner",
            token,
            who.address,
        )
    assert_reverts(
        lambda: system.tx(cast.alice, system.set_self_wallet_fn(cast.alice.address, 7, cast.earner)),
        "ERC721NonexistentToken",
        7,
    )
    later = system.now() + 600
    assert_reverts(lambda: system.tx(cast.alice, reg.setSelfWallet(token, ZERO, later, b"")), "ZeroAddress")
    for taken in (cast.bob_self, cast.alice_self):
        assert_reverts(
            lambda t=taken: system.tx(cast.alice, system.set_self_wallet_fn(cast.alice.address, token, t)),  # type: ignore[misc]
            "SelfWalletTaken",
            taken.address,
        )
    # sale-paused agent: owner cannot rotate
    grant(system, "MARKET_ROLE", cast.market.address)
    system.tx(cast.market, reg.setSalePause(token, True, cast.alice.address))
    assert_reverts(
        lambda: system.tx(cast.alice, system.set_self_wallet_fn(cast.alice.address, token, cast.earner)),
        "AgentIsPaused",
        token,
    )
    assert reg.selfWalletOf(token).call() == cast.alice_self.address


def test_a_transfer_resets_the_self_wallet_until_the_new_owner_sets_one(system: System, cast: Cast) -> None:
    reg = system.registry.functions
    token = system.register_agent(cast.alice.address, cast.alice_self.address, wid(1))
    # a proof alice collected before the sale is no good to anyone after it
    deadline = system.now() + 3600
    stale = proof(system, cast.carol, token, cast.alice.address, deadline)
    receipt = system.tx(
        cast.alice, reg.transferFrom(cast.alice.address, cast.bob.address, token), "AgentRegistry.transferFrom"
    )
    (tr,) = system.events(receipt, "AgentRegistry", "Transfer")
    assert (tr["args"]["from"], tr["args"]["to"], tr["args"]["tokenId"]) == (
        cast.alice.address,
        cast.bob.address,
        token,
    )
    (reset,) = system.events(receipt, "AgentRegistry", "SelfWalletChanged")
    assert dict(reset["args"]) == {"tokenId": token, "previous": cast.alice_self.address, "current": ZERO}
    assert reg.ownerOf(token).call() == cast.bob.address
    assert reg.ownerPayee(token).call() == cast.bob.address
    assert reg.selfWalletOf(token).call() == ZERO
    assert reg.tokenOfSelfWallet(cast.alice_self.address).call() == 0
    assert reg.selfWalletNonce(token).call() == 1
    assert_reverts(lambda: reg.requireSelfWallet(token).call(), "NoSelfWallet", token)
    assert_reverts(
        lambda: system.tx(cast.alice, system.set_self_wallet_fn(cast.alice.address, token, cast.carol)),
        "NotTokenOwner",
        token,
        cast.alice.address,
    )
    assert_reverts(
        lambda: system.tx(cast.bob, reg.setSelfWallet(token, cast.carol.address, deadline, stale)),
        "BadSelfWalletProof",
    )
    # a second transfer while it is zero changes nothing more (no event, no nonce)
    r2 = system.tx(cast.bob, reg.safeTransferFrom(cast.bob.address, cast.dave.address, token))
    assert system.events(r2, "AgentRegistry", "SelfWalletChanged") == []
    assert reg.selfWalletNonce(token).call() == 1
    system.tx(cast.dave, system.set_self_wallet_fn(cast.dave.address, token, cast.bob_self))
    assert reg.selfWalletOf(token).call() == cast.bob_self.address
    # a transfer to oneself is no change of hands
    r3 = system.tx(cast.dave, reg.transferFrom(cast.dave.address, cast.dave.address, token))
    assert system.events(r3, "AgentRegistry", "SelfWalletChanged") == []
    assert reg.selfWalletOf(token).call() == cast.bob_self.address


def test_market_escrow_keeps_the_self_wallet_a_sale_resets_it(system: System, cast: Cast) -> None:
    """Into a MARKET_ROLE holder and back to the same owner: kept; out of it to anyone else: reset."""
    reg = system.registry.functions
    grant(system, "MARKET_ROLE", cast.market.address)
    token = system.register_agent(cast.alice.address, cast.alice_self.address, wid(1))
    system.tx(cast.alice, reg.approve(cast.market.address, token))
    r_in = system.tx(cast.market, reg.transferFrom(cast.alice.address, cast.market.address, token))
    r_back = system.tx(cast.market, reg.transferFrom(cast.market.address, cast.alice.address, token))
    for r in (r_in, r_back):
        assert system.events(r, "AgentRegistry", "SelfWalletChanged") == []
    assert reg.selfWalletOf(token).call() == cast.alice_self.address
    # escrowed again, then handed to someone else: reset
    system.tx(cast.alice, reg.approve(cast.market.address, token))
    system.tx(cast.market, reg.transferFrom(cast.alice.address, cast.market.address, token))
    assert reg.selfWalletOf(token).call() == cast.alice_self.address
    r_out = system.tx(cast.market, reg.transferFrom(cast.market.address, cast.bob.address, token))
    (reset,) = system.events(r_out, "AgentRegistry", "SelfWalletChanged")
    assert reset["args"]["current"] == ZERO
    assert reg.selfWalletOf(token).call() == ZERO
    # the escrow record was used up: the next return to alice (a later escrow by bob) is a change of hands
    system.tx(cast.bob, system.set_self_wallet_fn(cast.bob.address, token, cast.bob_self))
    system.tx(cast.bob, reg.approve(cast.market.address, token))
    system.tx(cast.market, reg.transferFrom(cast.bob.address, cast.market.address, token))
    system.tx(cast.market, reg.transferFrom(cast.market.address, cast.alice.address, token))
    assert reg.selfWalletOf(token).call() == ZERO


# ---- setSalePause, ownerPayee and transfers while paused ---------------------------------------------


def test_set_sale_pause_switches_owner_payee_to_the_seller(system: System, cast: Cast) -> None:
    reg = system.registry.functions
    token = system.register_agent(cast.alice.address, cast.alice_self.address, wid(1))
    referred = system.register_agent(cast.bob.address, cast.bob_self.address, wid(2), token)
    market_role = role(system, "MARKET_ROLE")
    assert_reverts(
        lambda: system.tx(cast.alice, reg.setSalePause(token, True, cast.alice.address)),
        "AccessControlUnauthorizedAccount",
        cast.alice.address,
        market_role,
    )
    grant(system, "MARKET_ROLE", cast.market.address)
    assert_reverts(
        lambda: system.tx(cast.market, reg.setSalePause(9, True, cast.alice.address)), "ERC721NonexistentToken", 9
    )
    # a pause needs a seller to pay (otherwise the owner share would be credited to address(0))
    assert_reverts(lambda: system.tx(cast.market, reg.setSalePause(token, True, ZERO)), "ZeroAddress")

    # the token moves into the "escrow" (market) and the seller keeps receiving the owner share
    system.tx(cast.alice, reg.approve(cast.market.address, token))
    receipt = system.tx(cast.market, reg.setSalePause(token, True, cast.carol.address), "AgentRegistry.setSalePause")
    (ev,) = system.events(receipt, "AgentRegistry", "AgentPauseChanged")
    assert dict(ev["args"]) == {"tokenId": token, "paused": True, "seller": cast.carol.address}
    system.tx(cast.market, reg.transferFrom(cast.alice.address, cast.market.address, token))
    assert reg.ownerOf(token).call() == cast.market.address
    assert reg.isAgentPaused(token).call() is True
    assert reg.ownerPayee(token).call() == cast.carol.address
    assert reg.referralPayee(referred).call() == cast.carol.address
    assert tuple(reg.agent(token).call())[3:5] == (cast.carol.address, True)

    # unpausing clears the seller, whatever address is passed, and the owner is the payee again
    receipt = system.tx(cast.market, reg.setSalePause(token, False, cast.carol.address))
    (ev,) = system.events(receipt, "AgentRegistry", "AgentPauseChanged")
    assert dict(ev["args"]) == {"tokenId": token, "paused": False, "seller": ZERO}
    assert reg.isAgentPaused(token).call() is False
    assert tuple(reg.agent(token).call())[3:5] == (ZERO, False)
    assert reg.ownerPayee(token).call() == cast.market.address
    assert reg.referralPayee(referred).call() == cast.market.address


def test_transfers_blocked_while_sale_paused_except_by_market(system: System, cast: Cast) -> None:
    reg = system.registry.functions
    safe3 = system.registry.get_function_by_signature("safeTransferFrom(address,address,uint256)")
    safe4 = system.registry.get_function_by_signature("safeTransferFrom(address,address,uint256,bytes)")
    token = system.register_agent(cast.alice.address, cast.alice_self.address, wid(1))
    grant(system, "MARKET_ROLE", cast.market.address)
    system.tx(cast.alice, reg.approve(cast.carol.address, token))
    system.tx(cast.alice, reg.setApprovalForAll(cast.dave.address, True))
    system.tx(cast.market, reg.setSalePause(token, True, cast.alice.address))

    a, b = cast.alice.address, cast.bob.address
    for who, fn in [
        (cast.alice, reg.transferFrom(a, b, token)),
        (cast.alice, safe3(a, b, token)),
        (cast.alice, safe4(a, b, token, b"hi")),
        (cast.carol, reg.transferFrom(a, b, token)),  # approved for the token
        (cast.dave, reg.transferFrom(a, b, token)),  # approved for all
    ]:
        assert_reverts(lambda w=who, f=fn: system.tx(w, f), "AgentIsPaused", token)
    # the role does not replace ERC-721 authorisation
    assert_reverts(
        lambda: system.tx(cast.market, reg.transferFrom(a, cast.market.address, token)),
        "ERC721InsufficientApproval",
        cast.market.address,
        token,
    )
    # approvals themselves are not transfers and stay allowed
    system.tx(cast.alice, reg.approve(cast.market.address, token))
    system.tx(cast.market, reg.transferFrom(a, cast.market.address, token))
    assert reg.ownerOf(token).call() == cast.market.address
    assert reg.getApproved(token).call() == ZERO  # cleared by the transfer
    system.tx(cast.market, reg.transferFrom(cast.market.address, b, token))  # settle to a buyer while paused
    assert reg.ownerOf(token).call() == b
    assert reg.ownerPayee(token).call() == a  # still the seller until unpaused
    assert_reverts(lambda: system.tx(cast.bob, reg.transferFrom(b, a, token)), "AgentIsPaused", token)
    system.tx(cast.market, reg.setSalePause(token, False, ZERO))
    assert reg.ownerPayee(token).call() == b
    system.tx(cast.bob, safe3(b, cast.carol.address, token))
    assert reg.ownerOf(token).call() == cast.carol.address


def test_pause_of_one_agent_does_not_block_another(system: System, cast: Cast) -> None:
    reg = system.registry.functions
    t1 = system.register_agent(cast.alice.address, cast.alice_self.address, wid(1))
    t2 = system.register_agent(cast.alice.address, cast.bob_self.address, wid(2))
    grant(system, "MARKET_ROLE", cast.market.address)
    system.tx(cast.market, reg.setSalePause(t1, True, cast.alice.address))
    assert reg.isAgentPaused(t2).call() is False
    system.tx(cast.alice, reg.transferFrom(cast.alice.address, cast.bob.address, t2))
    assert reg.ownerOf(t2).call() == cast.bob.address


# ---- recordEarnings ---------------------------------------------------------------------------------


def test_record_earnings(system: System, cast: Cast) -> None:
    reg = system.registry.functions
    token = system.register_agent(cast.alice.address, cast.alice_self.address, wid(1))
    other = system.register_agent(cast.bob.address, cast.bob_self.address, wid(2))
    earnings = role(system, "EARNINGS_ROLE")
    for who in (cast.alice, system.operator, system.deployer):
        assert_reverts(
            lambda w=who: system.tx(w, reg.recordEarnings(token, 1)),
            "AccessControlUnauthorizedAccount",
            who.address,
            earnings,
        )
    grant(system, "EARNINGS_ROLE", cast.earner.address)
    assert_reverts(lambda: system.tx(cast.earner, reg.recordEarnings(3, 1)), "ERC721NonexistentToken", 3)
    receipt = system.tx(cast.earner, reg.recordEarnings(token, 5_000_000), "AgentRegistry.recordEarnings")
    (ev,) = system.events(receipt, "AgentRegistry", "EarningsRecorded")
    assert dict(ev["args"]) == {"tokenId": token, "amount": 5_000_000, "lifetimeEarnings": 5_000_000}
    receipt = system.tx(cast.earner, reg.recordEarnings(token, 7))
    (ev,) = system.events(receipt, "AgentRegistry", "EarningsRecorded")
    assert dict(ev["args"]) == {"tokenId": token, "amount": 7, "lifetimeEarnings": 5_000_007}
    assert reg.lifetimeEarningsOf(token).call() == 5_000_007
    assert reg.agent(token).call()[2] == 5_000_007
    assert reg.lifetimeEarningsOf(other).call() == 0
    # earnings belong to the agent, not its owner: they survive a transfer
    system.tx(cast.alice, reg.transferFrom(cast.alice.address, cast.carol.address, token))
    assert reg.lifetimeEarningsOf(token).call() == 5_000_007


# ---- plain ERC-721 behaviour ----------------------------------------------------------------------


def test_erc721_approvals_and_transfer_reverts(system: System, cast: Cast) -> None:
    reg = system.registry.functions
    safe3 = system.registry.get_function_by_signature("safeTransferFrom(address,address,uint256)")
    token = system.register_agent(cast.alice.address, cast.alice_self.address, wid(1))
    a, b = cast.alice.address, cast.bob.address

    assert_reverts(lambda: reg.balanceOf(ZERO).call(), "ERC721InvalidOwner", ZERO)
    assert_reverts(lambda: system.tx(cast.bob, reg.approve(b, token)), "ERC721InvalidApprover", b)
    assert_reverts(lambda: system.tx(cast.alice, reg.setApprovalForAll(ZERO, True)), "ERC721InvalidOperator", ZERO)
    assert_reverts(lambda: system.tx(cast.bob, reg.transferFrom(a, b, token)), "ERC721InsufficientApproval", b, token)
    assert_reverts(lambda: system.tx(cast.alice, reg.transferFrom(a, ZERO, token)), "ERC721InvalidReceiver", ZERO)
    assert_reverts(lambda: system.tx(cast.alice, reg.transferFrom(b, a, token)), "ERC721IncorrectOwner", b, token, a)
    assert_reverts(lambda: system.tx(cast.alice, reg.transferFrom(a, b, 5)), "ERC721NonexistentToken", 5)
    # a contract that is no ERC-721 receiver cannot take it through safeTransferFrom
    assert_reverts(
        lambda: system.tx(cast.alice, safe3(a, system.usdc.address, token)),
        "ERC721InvalidReceiver",
        system.usdc.address,
    )

    receipt = system.tx(cast.alice, reg.approve(cast.carol.address, token))
    (ev,) = system.events(receipt, "AgentRegistry", "Approval")
    assert (ev["args"]["owner"], ev["args"]["approved"], ev["args"]["tokenId"]) == (a, cast.carol.address, token)
    assert reg.getApproved(token).call() == cast.carol.address
    receipt = system.tx(cast.alice, reg.setApprovalForAll(cast.dave.address, True))
    (ev,) = system.events(receipt, "AgentRegistry", "ApprovalForAll")
    assert (ev["args"]["owner"], ev["args"]["operator"], ev["args"]["approved"]) == (a, cast.dave.address, True)
    assert reg.isApprovedForAll(a, cast.dave.address).call() is True
    system.tx(cast.carol, reg.transferFrom(a, b, token))
    assert reg.ownerOf(token).call() == b and reg.balanceOf(a).call() == 0 and reg.balanceOf(b).call() == 1
    # the operator of the old owner has no power over the new owner's token
    assert_reverts(
        lambda: system.tx(cast.dave, reg.transferFrom(b, a, token)),
        "ERC721InsufficientApproval",
        cast.dave.address,
        token,
    )
    system.tx(cast.alice, reg.setApprovalForAll(cast.dave.address, False))
    assert reg.isApprovedForAll(a, cast.dave.address).call() is False


def test_chainkit_assert_reverts_names_registry_errors(system: System) -> None:
    """The shared helper resolves registry errors too (keeps chainkit honest for other suites)."""
    assert_reverts(lambda: system.registry.functions.tokenOfWalletId("agl_000000000000").call(), "UnknownWalletId")
    assert_reverts(lambda: system.registry.functions.ownerOf(1).call(), "ERC721NonexistentToken")
