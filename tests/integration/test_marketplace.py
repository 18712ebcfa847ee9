"""AgentMarketplace against a real anvil: listing, buy-now, EIP-712 offers, the notice window,
settlement, cancellation, expiry, credits for unpayable payees, pause and admin.

Every test runs through the `mk` fixture, whose teardown checks the marketplace invariants:
USDC held == totalCommitted + totalCredits, and every listed token is in escrow (paused, seller
as owner payee) or with its rightful owner (unpaused)."""

from __future__ import annotations

from collections.abc import Callable, Iterator
from typing import Any

import pytest
from eth_account import Account
from eth_account.messages import _hash_eip191_message, encode_typed_data
from eth_account.signers.local import LocalAccount
from eth_utils import keccak
from web3.exceptions import ContractCustomError

from core.chain import CONTRACT_NAMES, deploy, load_artifact, send
from tests.integration.chainkit import USDC, System, assert_reverts, revert_args, revert_name

DAY = 24 * 3600
ZERO = "0x0000000000000000000000000000000000000000"

# Listing.status values (enum Status in AgentMarketplace.sol).
NONE, LISTED, COMMITTED, SETTLED, CANCELLED, EXPIRED = range(6)

OFFER_FIELDS = [
    {"name": "listingId", "type": "uint256"},
    {"name": "buyer", "type": "address"},
    {"name": "price", "type": "uint256"},
    {"name": "nonce", "type": "uint256"},
    {"name": "deadline", "type": "uint256"},
]


# ---- helpers -----------------------------------------------------------------------------


def _error_inputs(selector: str) -> list[str]:
    """The argument types of the custom error whose 4-byte selector is `selector` (0x-hex)."""
    for contract in (*CONTRACT_NAMES, "CreditFallback"):
        for item in load_artifact(contract)["abi"]:
            if item["type"] == "error":
                types = [i["type"] for i in item["inputs"]]
                if "0x" + keccak(text=f"{item['name']}({','.join(types)})")[:4].hex() == selector:
                    return types
    raise KeyError(selector)


def split98(price: int) -> tuple[int, int]:
    seller = price * 9_800 // 10_000
    return seller, price - seller


class Market:
    """Test driver for the marketplace; `check()` asserts the invariants."""

    def __init__(self, system: System) -> None:
        self.s = system
        self.m = system.market
        self.reg = system.registry
        self.seller = system.users[0]
        self.buyer = system.users[1]
        self.other = system.users[2]
        self.keeper = system.users[3]  # an unrelated account that settles / expires
        self.seller2 = system.users[4]
        self.poor = system.users[5]  # holds no USDC and has approved nothing
        self.payer = system.users[11]  # holds AgentPayouts.PAYER_ROLE (see `funded`)
        self._agents = 0
        self.self_wallet_of: dict[int, str] = {}

    # -- agents and earnings --
    def agent(self, owner: LocalAccount | None = None, earnings: int = 0) -> int:
        self._agents += 1
        n = self._agents
        self_wallet = Account.from_key(keccak(text=f"marketplace-self-wallet-{n}")).address
        token = self.s.register_agent((owner or self.seller).address, self_wallet, f"agl_{0xA0000 + n:012x}")
        self.self_wallet_of[token] = self_wallet
        if earnings:
            self.pay(token, earnings)
        return token

    def pay(self, token: int, amount: int) -> None:
        """Pay the agent through the real payout path (records lifetime earnings)."""
        self.s.tx(self.payer, self.s.payouts.functions.pay(token, amount, keccak(text=f"job-{token}-{amount}")))

    # -- listing --
    def approve_nft(self, owner: LocalAccount, token: int) -> None:
        self.s.tx(owner, self.reg.functions.approve(self.m.address, token))

    def list(
        self,
        token: int,
        asking: int,
        floor: int,
        duration: int = 0,
        seller: LocalAccount | None = None,
    ) -> int:
        seller = seller or self.seller
        self.approve_nft(seller, token)
        receipt = self.s.tx(
            seller, self.s.list_fn(seller.address, token, asking, floor, duration), "AgentMarketplace.list"
        )
        (ev,) = self.s.events(receipt, "AgentMarketplace", "Listed")
        listing_id: int = ev["args"]["listingId"]
        return listing_id

    def buy(self, listing_id: int, buyer: LocalAccount | None = None) -> Any:
        buyer = buyer or self.buyer
        return self.s.tx(buyer, self.m.functions.buy(listing_id), "AgentMarketplace.buy")

    # -- offers --
    def domain(self, verifying_contract: str | None = None, chain_id: int | None = None) -> dict[str, Any]:
        return {
            "name": "agentledger Marketplace",
            "version": "1",
            "chainId": chain_id if chain_id is not None else self.s.w3.eth.chain_id,
            "verifyingContract": verifying_contract or self.m.address,
        }

    def offer(
        self,
        listing_id: int,
        price: int,
        nonce: int,
        *,
        buyer: LocalAccount | None = None,
        signer: LocalAccount | None = None,
        deadline: int | None = None,
        domain: dict[str, Any] | None = None,
    ) -> tuple[tuple[int, str, int, int, int], bytes]:
        buyer = buyer or self.buyer
        signer = signer or buyer
        if deadline is None:
            deadline = self.s.now() + DAY
        msg = {"listingId": listing_id, "buyer": buyer.address, "price": price, "nonce": nonce, "deadline": deadline}
        signed = Account.sign_typed_data(signer.key, domain or self.domain(), {"Offer": OFFER_FIELDS}, msg)
        return (listing_id, buyer.address, price, nonce, deadline), bytes(signed.signature)

    def accept(
        self, listing_id: int, offer: tuple[int, str, int, int, int], sig: bytes, seller: LocalAccount | None = None
    ) -> Any:
        fn = self.m.functions.acceptOffer(listing_id, offer, sig)
        return self.s.tx(seller or self.seller, fn, "AgentMarketplace.acceptOffer")

    # -- views --
    def listing(self, listing_id: int) -> dict[str, Any]:
        raw = self.m.functions.getListing(listing_id).call()
        if isinstance(raw, dict):
            return dict(raw)
        (out,) = next(i for i in self.m.abi if i.get("name") == "getListing")["outputs"]
        return {c["name"]: v for c, v in zip(out["components"], raw, strict=True)}

    def owner(self, token: int) -> str:
        owner: str = self.reg.functions.ownerOf(token).call()
        return owner

    def check(self) -> None:
        m = self.m
        committed = m.functions.totalCommitted().call()
        credits = m.functions.totalCredits().call()
        assert self.s.balance(m.address) == committed + credits
        latest: dict[int, dict[str, Any]] = {}
        open_sum = 0
        for lid in range(1, m.functions.listingCount().call() + 1):
            listing = self.listing(lid)
            assert listing["status"] != NONE
            if listing["status"] == COMMITTED:
                open_sum += listing["price"]
            latest[listing["tokenId"]] = listing
        assert open_sum == committed
        for token, listing in latest.items():
            paused = self.reg.functions.isAgentPaused(token).call()
            payee = self.reg.functions.ownerPayee(token).call()
            owner = self.owner(token)
            if listing["status"] in (LISTED, COMMITTED):
                assert owner == m.address
                assert paused
                assert payee == listing["seller"]
            else:
                rightful = listing["buyer"] if listing["status"] == SETTLED else listing["seller"]
                assert owner == rightful
                assert not paused
                assert payee == rightful


FUNDS = 10_000 * USDC
MAX = 2**256 - 1


@pytest.fixture(scope="module")
def funded(deployed: System) -> Iterator[None]:
    """Once per module: a payer with PAYER_ROLE and USDC approved to AgentPayouts, and buyers
    holding USDC approved to the marketplace. Reverted when the module is done, so other
    modules never see it; each test still runs in its own snapshot on top of it."""
    s = deployed
    snap = s.w3.provider.make_request("evm_snapshot", [])  # type: ignore[arg-type]
    try:
        payer = s.users[11]
        s.tx(s.deployer, s.payouts.functions.grantRole(s.payouts.functions.PAYER_ROLE().call(), payer.address))
        s.mint_usdc(payer.address, 100 * FUNDS)
        s.approve(payer, s.payouts.address, MAX)
        for who in (s.users[0], s.users[1], s.users[2], s.users[4]):
            s.mint_usdc(who.address, FUNDS)
            s.approve(who, s.market.address, MAX)
        yield
    finally:
        s.w3.provider.make_request("evm_revert", [snap["result"]])  # type: ignore[arg-type]


@pytest.fixture()
def mk(funded: None, system: System) -> Iterator[Market]:
    market = Market(system)
    yield market
    market.check()


# ---- deployment, constants, views ---------------------------------------------------------


def test_constants_and_wiring(mk: Market) -> None:
    m, s = mk.m, mk.s
    assert m.functions.DEFAULT_DURATION().call() == 30 * DAY
    assert m.functions.MAX_DURATION().call() == 365 * DAY
    assert m.functions.NOTICE_PERIOD().call() == 7 * DAY
    assert m.functions.BPS().call() == 10_000
    assert m.functions.SELLER_BPS().call() == 9_800
    assert m.functions.MIN_FLOOR_BPS().call() == 2_500
    assert m.functions.OFFER_TYPEHASH().call() == keccak(
        text="Offer(uint256 listingId,address buyer,uint256 price,uint256 nonce,uint256 deadline)"
    )
    assert m.functions.PAUSER_ROLE().call() == keccak(text="PAUSER_ROLE")
    assert m.functions.registry().call() == s.registry.address
    assert m.functions.usdc().call() == s.usdc.address
    assert m.functions.treasury().call() == s.treasury.address
    assert m.functions.listingCount().call() == 0
    assert m.functions.totalCommitted().call() == 0
    assert m.functions.paused().call() is False
    assert m.functions.hasRole(m.functions.DEFAULT_ADMIN_ROLE().call(), s.deployer.address).call()
    assert m.functions.hasRole(m.functions.PAUSER_ROLE().call(), s.deployer.address).call()
    assert s.registry.functions.hasRole(s.registry.functions.MARKET_ROLE().call(), m.address).call()
    # ERC-5267 domain matches what buyers sign.
    fields, name, version, chain_id, verifying, salt, ext = m.functions.eip712Domain().call()
    assert (name, version, chain_id, verifying) == ("agentledger Marketplace", "1", s.w3.eth.chain_id, m.address)
    assert fields == b"\x0f"
    assert salt == b"\x00" * 32
    assert ext == []
    # An unknown listing reads as all zeroes.
    empty = mk.listing(99)
    assert empty["status"] == NONE and empty["seller"] == ZERO and empty["tokenId"] == 0


def test_constructor_rejects_zero_addresses(mk: Market) -> None:
    s = mk.s
    good = (s.usdc.address, s.registry.address, s.treasury.address, s.deployer.address)
    for i in range(4):
        args = list(good)
        args[i] = ZERO
        assert_reverts(lambda a=args: deploy(s.w3, s.deployer, "AgentMarketplace", *a), "ZeroAddress")
    fresh, _ = deploy(s.w3, s.deployer, "AgentMarketplace", *good)
    assert fresh.functions.treasury().call() == s.treasury.address


# ---- list -----------------------------------------------------------------------------------


def test_list_escrows_nft_and_pauses_agent(mk: Market) -> None:
    s, m = mk.s, mk.m
    token = mk.agent()
    assert mk.owner(token) == mk.seller.address
    assert not mk.reg.functions.isAgentPaused(token).call()

    mk.approve_nft(mk.seller, token)
    fn = s.list_fn(mk.seller.address, token, 100 * USDC, 40 * USDC)
    assert fn.call({"from": mk.seller.address}) == 1  # returns the listing id
    receipt = s.tx(mk.seller, fn, "AgentMarketplace.list")
    ts = s.w3.eth.get_block(receipt["blockNumber"])["timestamp"]

    (ev,) = s.events(receipt, "AgentMarketplace", "Listed")
    assert dict(ev["args"]) == {
        "listingId": 1,
        "tokenId": token,
        "seller": mk.seller.address,
        "askingPrice": 100 * USDC,
        "floorPrice": 40 * USDC,
        "earningsAtListing": 0,
        "expiresAt": ts + 30 * DAY,
    }
    (pause_ev,) = s.events(receipt, "AgentRegistry", "AgentPauseChanged")
    assert (pause_ev["args"]["tokenId"], pause_ev["args"]["paused"], pause_ev["args"]["seller"]) == (
        token,
        True,
        mk.seller.address,
    )
    assert mk.listing(1) == {
        "seller": mk.seller.address,
        "expiresAt": ts + 30 * DAY,
        "status": LISTED,
        "buyer": ZERO,
        "noticeEndsAt": 0,
        "tokenId": token,
        "askingPrice": 100 * USDC,
        "floorPrice": 40 * USDC,
        "earningsAtListing": 0,
        "price": 0,
    }
    assert m.functions.listingCount().call() == 1
    # Escrowed and paused; the seller keeps the owner share while listed.
    assert mk.owner(token) == m.address
    assert mk.reg.functions.isAgentPaused(token).call()
    assert mk.reg.functions.ownerPayee(token).call() == mk.seller.address
    assert mk.reg.functions.agent(token).call()[3] == mk.seller.address  # sellerWhilePaused
    # The seller no longer owns it, so cannot list it twice or move it.
    assert_reverts(
        lambda: s.tx(mk.seller, s.list_fn(mk.seller.address, token, 100 * USDC, 40 * USDC, 0)), "NotTokenOwner"
    )
    assert_reverts(
        lambda: s.tx(mk.seller, mk.reg.functions.transferFrom(m.address, mk.other.address, token)),
        "AgentIsPaused",
    )
    # A second listing gets the next id.
    assert mk.list(mk.agent(), 5 * USDC, 5 * USDC) == 2


def test_list_needs_erc721_approval(mk: Market) -> None:
    s, m = mk.s, mk.m
    token = mk.agent()
    assert_reverts(
        lambda: s.tx(mk.seller, s.list_fn(mk.seller.address, token, 10 * USDC, 5 * USDC, 0)),
        "ERC721InsufficientApproval",
    )
    assert m.functions.listingCount().call() == 0
    assert mk.owner(token) == mk.seller.address
    # Operator approval works as well as a per-token approval.
    s.tx(mk.seller, mk.reg.functions.setApprovalForAll(m.address, True))
    s.tx(mk.seller, s.list_fn(mk.seller.address, token, 10 * USDC, 5 * USDC, 0), "AgentMarketplace.list")
    assert mk.owner(token) == m.address


def test_list_only_by_token_owner(mk: Market) -> None:
    s, m = mk.s, mk.m
    token = mk.agent()
    mk.approve_nft(mk.seller, token)
    args = revert_args(
        lambda: s.tx(mk.other, s.list_fn(mk.other.address, token, 10 * USDC, 5 * USDC, 0)), "NotTokenOwner"
    )
    assert args == (token, mk.other.address)
    # An approved operator is still not the owner.
    s.tx(mk.seller, mk.reg.functions.setApprovalForAll(mk.other.address, True))
    assert_reverts(lambda: s.tx(mk.other, s.list_fn(mk.other.address, token, 10 * USDC, 5 * USDC, 0)), "NotTokenOwner")
    # A token that does not exist.
    assert_reverts(
        lambda: s.tx(mk.seller, s.list_fn(mk.seller.address, 999, 10 * USDC, 5 * USDC, 0)), "ERC721NonexistentToken"
    )
    assert m.functions.listingCount().call() == 0


def test_list_price_checks(mk: Market) -> None:
    s = mk.s
    token = mk.agent()
    mk.approve_nft(mk.seller, token)

    def try_list(asking: int, floor: int) -> Callable[[], object]:
        return lambda: s.tx(mk.seller, s.list_fn(mk.seller.address, token, asking, floor, 0))

    assert_reverts(try_list(0, 0), "ZeroPrice")
    assert_reverts(try_list(0, 1), "ZeroPrice")
    assert_reverts(try_list(10 * USDC, 0), "ZeroPrice")
    assert revert_args(try_list(10 * USDC, 10 * USDC + 1), "FloorAboveAsking") == (10 * USDC + 1, 10 * USDC)
    # Floor == asking is allowed (no earnings, so any positive floor meets the minimum).
    try_list(10 * USDC, 10 * USDC)()
    assert mk.listing(1)["floorPrice"] == 10 * USDC
    # 1 unit asking and floor is fine too.
    assert mk.list(mk.agent(), 1, 1) == 2


def test_floor_minimum_is_a_quarter_of_lifetime_earnings(mk: Market) -> None:
    s = mk.s
    # Earnings not divisible by 4: the minimum rounds up.
    token = mk.agent(earnings=1_000_001)
    assert mk.reg.functions.lifetimeEarningsOf(token).call() == 1_000_001
    mk.approve_nft(mk.seller, token)
    args = revert_args(
        lambda: s.tx(mk.seller, s.list_fn(mk.seller.address, token, 10 * USDC, 250_000, 0)), "FloorTooLow"
    )
    assert args == (250_000, 250_001)
    lid = mk.list(token, 10 * USDC, 250_001)
    assert mk.listing(lid)["earningsAtListing"] == 1_000_001
    assert mk.listing(lid)["floorPrice"] == 250_001

    # Exactly divisible: the minimum is exactly 25%.
    token2 = mk.agent(earnings=4 * USDC)
    mk.approve_nft(mk.seller, token2)
    assert revert_args(
        lambda: s.tx(mk.seller, s.list_fn(mk.seller.address, token2, 10 * USDC, USDC - 1, 0)), "FloorTooLow"
    ) == (
        USDC - 1,
        USDC,
    )
    lid2 = mk.list(token2, 10 * USDC, USDC)

    # The floor also caps the asking price from below: asking below the minimum fails as well.
    token3 = mk.agent(earnings=100 * USDC)
    mk.approve_nft(mk.seller, token3)
    assert_reverts(
        lambda: s.tx(mk.seller, s.list_fn(mk.seller.address, token3, 24 * USDC, 24 * USDC, 0)), "FloorTooLow"
    )

    # Earnings recorded while listed go to the seller (owner payee) and do not move the frozen floor.
    seller_before = s.balance(mk.seller.address)
    mk.pay(token, 10 * USDC)
    assert s.balance(mk.seller.address) - seller_before == 9_700_000  # 97% owner share, no referrer
    assert mk.reg.functions.lifetimeEarningsOf(token).call() == 11_000_001
    assert mk.listing(lid)["earningsAtListing"] == 1_000_001
    assert mk.listing(lid)["floorPrice"] == 250_001
    # An offer at the frozen floor is still acceptable; one unit below is not.
    offer, sig = mk.offer(lid, 250_000, 1)
    assert revert_args(lambda: mk.accept(lid, offer, sig), "OfferBelowFloor") == (250_000, 250_001)
    offer, sig = mk.offer(lid, 250_001, 2)
    mk.accept(lid, offer, sig)
    assert mk.listing(lid)["status"] == COMMITTED
    assert mk.listing(lid2)["status"] == LISTED


def test_earnings_statement_sets_the_floor_and_is_checked(mk: Market) -> None:
    """The operator's EarningsStatement adds the reported (off-chain) earnings to the registry's for
    the floor's minimum; a statement forged, tampered with, expired, replayed, for another token or
    seller, or signed by a key that lost the role, lists nothing."""
    s, m = mk.s, mk.m
    token = mk.agent(earnings=4 * USDC)  # on-chain: minimum 1 USDC alone
    mk.approve_nft(mk.seller, token)
    seller = mk.seller.address

    def try_list(statement: Any, sig: bytes, floor: int = 26 * USDC, sender: LocalAccount | None = None) -> Any:
        return lambda: s.tx(sender or mk.seller, m.functions.list(token, 100 * USDC, floor, 0, statement, sig))

    st, sig = s.earnings_statement(seller, token, 100 * USDC)  # 100 reported + 4 on-chain: minimum 26
    assert revert_args(try_list(st, sig, 26 * USDC - 1), "FloorTooLow") == (26 * USDC - 1, 26 * USDC)
    # forged: the seller's own signature of a statement of no reported earnings
    zero, forged = s.earnings_statement(seller, token, 0, signer=mk.seller)
    assert revert_args(try_list(zero, forged, USDC), "BadStatementSigner") == (seller,)
    # tampered: the operator's signature over 100 USDC, presented as 0
    (recovered,) = revert_args(try_list((token, seller, 0, st[3], st[4]), sig, USDC), "BadStatementSigner")
    assert recovered not in (seller, s.operator.address)
    # expired: a deadline before the block's time
    old, old_sig = s.earnings_statement(seller, token, 0, deadline=s.now() - 1)
    assert revert_args(try_list(old, old_sig, USDC), "StatementExpired") == (old[4],)
    # for another token, or another seller
    other_token = mk.agent()
    other, other_sig = s.earnings_statement(seller, other_token, 0)
    assert revert_args(try_list(other, other_sig, USDC), "StatementForOther") == (other_token, seller)
    theirs, theirs_sig = s.earnings_statement(mk.other.address, token, 0)
    assert revert_args(try_list(theirs, theirs_sig, USDC), "StatementForOther") == (token, mk.other.address)
    assert m.functions.listingCount().call() == 0 and mk.owner(token) == seller

    receipt = s.tx(mk.seller, m.functions.list(token, 100 * USDC, 26 * USDC, 0, st, sig))
    (ev,) = s.events(receipt, "AgentMarketplace", "Listed")
    assert (ev["args"]["floorPrice"], ev["args"]["earningsAtListing"]) == (26 * USDC, 104 * USDC)
    assert m.functions.statementNonceUsed(st[3]).call()
    s.tx(mk.seller, m.functions.cancel(ev["args"]["listingId"]))
    # replayed: the same statement, good once
    mk.approve_nft(mk.seller, token)
    assert revert_args(try_list(st, sig), "StatementNonceUsed") == (st[3],)
    # a signer whose role was revoked signs nothing the contract takes
    role = m.functions.STATEMENT_SIGNER_ROLE().call()
    s.tx(s.deployer, m.functions.revokeRole(role, s.operator.address))
    fresh, fresh_sig = s.earnings_statement(seller, token, 0)
    assert revert_args(try_list(fresh, fresh_sig, USDC), "BadStatementSigner") == (s.operator.address,)
    s.tx(s.deployer, m.functions.grantRole(role, s.operator.address))
    try_list(fresh, fresh_sig, USDC)()
    assert mk.owner(token) == m.address


def test_duration_default_max_and_bad(mk: Market) -> None:
    s = mk.s
    token = mk.agent()
    mk.approve_nft(mk.seller, token)
    assert revert_args(
        lambda: s.tx(mk.seller, s.list_fn(mk.seller.address, token, 10 * USDC, 5 * USDC, 365 * DAY + 1)), "BadDuration"
    ) == (365 * DAY + 1,)
    assert_reverts(
        lambda: s.tx(mk.seller, s.list_fn(mk.seller.address, token, 10 * USDC, 5 * USDC, 2**64 - 1)), "BadDuration"
    )

    def expires_after(duration: int) -> int:
        lid = mk.list(mk.agent(), 10 * USDC, 5 * USDC, duration)
        receipt_ts = s.now()
        return mk.listing(lid)["expiresAt"] - receipt_ts

    assert expires_after(0) == 30 * DAY
    assert expires_after(365 * DAY) == 365 * DAY
    assert expires_after(1) == 1
    assert expires_after(3 * DAY) == 3 * DAY


# ---- buy ------------------------------------------------------------------------------------


def test_buy_at_asking_price_starts_notice_window(mk: Market) -> None:
    s, m = mk.s, mk.m
    token = mk.agent()
    lid = mk.list(token, 100 * USDC, 40 * USDC)
    buyer0 = s.balance(mk.buyer.address)
    receipt = s.tx(mk.buyer, m.functions.buy(lid), "AgentMarketplace.buy")
    ts = s.w3.eth.get_block(receipt["blockNumber"])["timestamp"]
    (ev,) = s.events(receipt, "AgentMarketplace", "SaleCommitted")
    assert dict(ev["args"]) == {
        "listingId": lid,
        "buyer": mk.buyer.address,
        "price": 100 * USDC,
        "noticeEndsAt": ts + 7 * DAY,
        "viaOffer": False,
        "offerNonce": 0,
    }
    assert buyer0 - s.balance(mk.buyer.address) == 100 * USDC
    assert s.balance(m.address) == 100 * USDC
    assert m.functions.totalCommitted().call() == 100 * USDC
    listing = mk.listing(lid)
    assert (listing["status"], listing["buyer"], listing["price"], listing["noticeEndsAt"]) == (
        COMMITTED,
        mk.buyer.address,
        100 * USDC,
        ts + 7 * DAY,
    )
    # Still in escrow, still paused, seller still the payee during the notice window.
    assert mk.owner(token) == m.address
    assert mk.reg.functions.isAgentPaused(token).call()
    assert mk.reg.functions.ownerPayee(token).call() == mk.seller.address
    # Nobody can commit a second time.
    assert revert_args(lambda: s.tx(mk.other, m.functions.buy(lid)), "WrongStatus") == (lid, COMMITTED)
    offer, sig = mk.offer(lid, 100 * USDC, 1, buyer=mk.other)
    assert_reverts(lambda: mk.accept(lid, offer, sig), "WrongStatus")
    mk.check()


def test_buy_rejections(mk: Market) -> None:
    s, m = mk.s, mk.m
    lid = mk.list(mk.agent(), 100 * USDC, 40 * USDC, 2 * DAY)
    # The seller cannot buy its own listing.
    assert revert_args(lambda: s.tx(mk.seller, m.functions.buy(lid)), "SellerCannotBuy") == (lid,)
    # The USDC must be approved and held.
    assert_reverts(lambda: s.tx(mk.poor, m.functions.buy(lid)), "ERC20InsufficientAllowance")
    s.approve(mk.poor, m.address, 100 * USDC)
    assert_reverts(lambda: s.tx(mk.poor, m.functions.buy(lid)), "ERC20InsufficientBalance")
    s.mint_usdc(mk.poor.address, 100 * USDC - 1)
    assert_reverts(lambda: s.tx(mk.poor, m.functions.buy(lid)), "ERC20InsufficientBalance")
    assert revert_args(lambda: s.tx(mk.buyer, m.functions.buy(0)), "UnknownListing") == (0,)
    assert revert_args(lambda: s.tx(mk.buyer, m.functions.buy(lid + 1)), "UnknownListing") == (lid + 1,)
    assert mk.listing(lid)["status"] == LISTED
    # After the listing's TTL nobody can buy.
    expires_at = mk.listing(lid)["expiresAt"]
    s.advance(2 * DAY)
    assert revert_args(lambda: s.tx(mk.buyer, m.functions.buy(lid)), "ListingEnded") == (lid, expires_at)
    assert m.functions.totalCommitted().call() == 0


def test_buy_just_before_expiry_succeeds(mk: Market) -> None:
    lid = mk.list(mk.agent(), 3 * USDC, 2 * USDC, DAY)
    mk.s.advance(DAY - 60)
    mk.buy(lid)
    assert mk.listing(lid)["status"] == COMMITTED
    # Committed listings cannot be expired even once the TTL passes.
    mk.s.advance(120)
    assert_reverts(lambda: mk.s.tx(mk.keeper, mk.m.functions.expire(lid)), "WrongStatus")


# ---- offers ---------------------------------------------------------------------------------


def test_accept_offer_with_eip712_signature(mk: Market) -> None:
    s, m = mk.s, mk.m
    token = mk.agent(earnings=80 * USDC)
    lid = mk.list(token, 100 * USDC, 20 * USDC)
    deadline = s.now() + 3600
    offer, sig = mk.offer(lid, 55 * USDC, 42, deadline=deadline)

    # The digest eth-account signs is the contract's _hashTypedDataV4(hashOffer(offer)).
    message = {"listingId": lid, "buyer": mk.buyer.address, "price": 55 * USDC, "nonce": 42, "deadline": deadline}
    signable = encode_typed_data(mk.domain(), {"Offer": OFFER_FIELDS}, message)
    domain_sep = m.functions.domainSeparator().call()
    struct_hash = m.functions.hashOffer(offer).call()
    assert signable.header == domain_sep
    assert signable.body == struct_hash
    digest = keccak(b"\x19\x01" + domain_sep + struct_hash)
    assert _hash_eip191_message(signable) == digest
    assert Account._recover_hash(digest, signature=sig) == mk.buyer.address
    # Independently: the domain separator and struct hash from first principles.
    type_hash = keccak(text="EIP712Domain(string name,string version,uint256 chainId,address verifyingContract)")
    expected_sep = keccak(
        type_hash
        + keccak(text="agentledger Marketplace")
        + keccak(text="1")
        + s.w3.eth.chain_id.to_bytes(32, "big")
        + bytes(12)
        + bytes.fromhex(m.address[2:])
    )
    assert domain_sep == expected_sep
    expected_struct = keccak(
        m.functions.OFFER_TYPEHASH().call()
        + lid.to_bytes(32, "big")
        + bytes(12)
        + bytes.fromhex(mk.buyer.address[2:])
        + (55 * USDC).to_bytes(32, "big")
        + (42).to_bytes(32, "big")
        + deadline.to_bytes(32, "big")
    )
    assert struct_hash == expected_struct

    assert not m.functions.offerNonceUsed(mk.buyer.address, 42).call()
    buyer0 = s.balance(mk.buyer.address)
    receipt = mk.accept(lid, offer, sig)
    ts = s.w3.eth.get_block(receipt["blockNumber"])["timestamp"]
    (ev,) = s.events(receipt, "AgentMarketplace", "SaleCommitted")
    assert dict(ev["args"]) == {
        "listingId": lid,
        "buyer": mk.buyer.address,
        "price": 55 * USDC,
        "noticeEndsAt": ts + 7 * DAY,
        "viaOffer": True,
        "offerNonce": 42,
    }
    assert m.functions.offerNonceUsed(mk.buyer.address, 42).call()
    assert buyer0 - s.balance(mk.buyer.address) == 55 * USDC
    assert m.functions.totalCommitted().call() == 55 * USDC
    listing = mk.listing(lid)
    assert (listing["status"], listing["buyer"], listing["price"]) == (COMMITTED, mk.buyer.address, 55 * USDC)
    # Replaying the same signed offer fails: the listing is no longer open.
    assert revert_args(lambda: mk.accept(lid, offer, sig), "WrongStatus") == (lid, COMMITTED)


def test_offer_above_asking_is_allowed(mk: Market) -> None:
    s = mk.s
    lid = mk.list(mk.agent(), 10 * USDC, 10 * USDC)
    # An offer above the asking price is allowed (the buyer pays what it signed).
    offer, sig = mk.offer(lid, 12 * USDC, 0, deadline=s.now() + 30)
    mk.accept(lid, offer, sig)
    assert mk.listing(lid)["price"] == 12 * USDC


def test_accept_offer_rejections(mk: Market) -> None:
    s, m = mk.s, mk.m
    lid = mk.list(mk.agent(), 100 * USDC, 40 * USDC)
    lid2 = mk.list(mk.agent(mk.seller2), 100 * USDC, 40 * USDC, seller=mk.seller2)

    offer, sig = mk.offer(lid, 50 * USDC, 1)
    # Only the seller may accept; not the buyer, not a third party.
    assert revert_args(lambda: mk.accept(lid, offer, sig, seller=mk.buyer), "NotSeller") == (lid, mk.buyer.address)
    assert_reverts(lambda: mk.accept(lid, offer, sig, seller=mk.other), "NotSeller")
    assert_reverts(lambda: mk.accept(lid, offer, sig, seller=mk.seller2), "NotSeller")
    # An offer for listing 2 cannot be used on listing 1.
    offer2, sig2 = mk.offer(lid2, 50 * USDC, 2)
    assert revert_args(lambda: mk.accept(lid, offer2, sig2), "OfferForOtherListing") == (lid2,)
    # The seller cannot buy through an offer either.
    own, own_sig = mk.offer(lid, 50 * USDC, 3, buyer=mk.seller)
    assert revert_args(lambda: mk.accept(lid, own, own_sig), "SellerCannotBuy") == (lid,)
    # Expired offer.
    stale_deadline = s.now() - 1
    stale, stale_sig = mk.offer(lid, 50 * USDC, 4, deadline=stale_deadline)
    assert revert_args(lambda: mk.accept(lid, stale, stale_sig), "OfferExpired") == (stale_deadline,)
    # Below the floor.
    low, low_sig = mk.offer(lid, 40 * USDC - 1, 5)
    assert revert_args(lambda: mk.accept(lid, low, low_sig), "OfferBelowFloor") == (40 * USDC - 1, 40 * USDC)
    # Signed by someone other than the named buyer.
    forged, forged_sig = mk.offer(lid, 50 * USDC, 6, signer=mk.other)
    assert revert_args(lambda: mk.accept(lid, forged, forged_sig), "BadOfferSignature") == (
        mk.other.address,
        mk.buyer.address,
    )
    # A genuine signature over a different price.
    good, good_sig = mk.offer(lid, 50 * USDC, 7)
    tampered = (good[0], good[1], 60 * USDC, good[3], good[4])
    signer, named = revert_args(lambda: mk.accept(lid, tampered, good_sig), "BadOfferSignature")
    assert named == mk.buyer.address and signer != mk.buyer.address
    for i, changed in ((3, 8), (4, good[4] + 1)):  # tampered nonce / deadline
        t = list(good)
        t[i] = changed
        assert_reverts(lambda t=tuple(t): mk.accept(lid, t, good_sig), "BadOfferSignature")
    # Signed for another verifying contract or another chain.
    wrong_dom, wd_sig = mk.offer(lid, 50 * USDC, 9, domain=mk.domain(verifying_contract=s.registry.address))
    assert_reverts(lambda: mk.accept(lid, wrong_dom, wd_sig), "BadOfferSignature")
    wrong_chain, wc_sig = mk.offer(lid, 50 * USDC, 10, domain=mk.domain(chain_id=8453))
    assert_reverts(lambda: mk.accept(lid, wrong_chain, wc_sig), "BadOfferSignature")
    # Malformed signature bytes.
    assert_reverts(lambda: mk.accept(lid, good, good_sig[:64]), "ECDSAInvalidSignatureLength")
    assert_reverts(lambda: mk.accept(lid, good, b"\x00" * 65), "ECDSAInvalidSignature")
    # Unknown listing.
    assert revert_args(lambda: mk.accept(77, good, good_sig), "UnknownListing") == (77,)
    # Nothing above changed any state.
    assert mk.listing(lid)["status"] == LISTED
    assert m.functions.totalCommitted().call() == 0
    for nonce in range(1, 11):
        assert not m.functions.offerNonceUsed(mk.buyer.address, nonce).call()
    # The untampered offer still works.
    mk.accept(lid, good, good_sig)
    assert mk.listing(lid)["price"] == 50 * USDC


def test_offer_nonce_replay_and_cancellation(mk: Market) -> None:
    s, m = mk.s, mk.m
    lid = mk.list(mk.agent(), 100 * USDC, 40 * USDC)
    lid2 = mk.list(mk.agent(mk.seller2), 100 * USDC, 40 * USDC, seller=mk.seller2)
    lid3 = mk.list(mk.agent(mk.seller2), 100 * USDC, 40 * USDC, seller=mk.seller2)

    # The same nonce signed for two listings can be used only once.
    a, a_sig = mk.offer(lid, 50 * USDC, 7)
    b, b_sig = mk.offer(lid2, 50 * USDC, 7)
    mk.accept(lid, a, a_sig)
    assert revert_args(lambda: mk.accept(lid2, b, b_sig, seller=mk.seller2), "OfferNonceUsed") == (
        mk.buyer.address,
        7,
    )
    # Nonces are per buyer: another buyer's nonce 7 is independent.
    c, c_sig = mk.offer(lid2, 45 * USDC, 7, buyer=mk.other)
    mk.accept(lid2, c, c_sig, seller=mk.seller2)
    assert mk.listing(lid2)["buyer"] == mk.other.address

    # A buyer withdraws a signed offer by cancelling its nonce.
    d, d_sig = mk.offer(lid3, 50 * USDC, 8)
    receipt = s.tx(mk.buyer, m.functions.cancelOfferNonce(8), "AgentMarketplace.cancelOfferNonce")
    (ev,) = s.events(receipt, "AgentMarketplace", "OfferNonceCancelled")
    assert (ev["args"]["buyer"], ev["args"]["nonce"]) == (mk.buyer.address, 8)
    assert m.functions.offerNonceUsed(mk.buyer.address, 8).call()
    assert revert_args(lambda: mk.accept(lid3, d, d_sig, seller=mk.seller2), "OfferNonceUsed") == (
        mk.buyer.address,
        8,
    )
    # Cancelling an already used or cancelled nonce reverts.
    assert revert_args(lambda: s.tx(mk.buyer, m.functions.cancelOfferNonce(8)), "OfferNonceUsed") == (
        mk.buyer.address,
        8,
    )
    assert_reverts(lambda: s.tx(mk.buyer, m.functions.cancelOfferNonce(7)), "OfferNonceUsed")
    # Cancelling is per sender: it did not touch the other buyer's nonce 8.
    assert not m.functions.offerNonceUsed(mk.other.address, 8).call()
    assert mk.listing(lid3)["status"] == LISTED


# ---- notice window, settle, cancel ---------------------------------------------------------


def test_cancel_and_settle_during_notice_window(mk: Market) -> None:
    s, m = mk.s, mk.m
    lid = mk.list(mk.agent(), 10 * USDC, 10 * USDC)
    mk.buy(lid)
    notice_ends = mk.listing(lid)["noticeEndsAt"]
    assert revert_args(lambda: s.tx(mk.seller, m.functions.cancel(lid)), "NoticeWindowActive") == (lid, notice_ends)
    assert revert_args(lambda: s.tx(mk.keeper, m.functions.cancel(lid)), "NotSeller") == (lid, mk.keeper.address)
    assert_reverts(lambda: s.tx(mk.buyer, m.functions.cancel(lid)), "NotSeller")
    assert revert_args(lambda: s.tx(mk.keeper, m.functions.settle(lid)), "NoticeWindowActive") == (lid, notice_ends)
    s.advance(7 * DAY - 30)
    assert_reverts(lambda: s.tx(mk.keeper, m.functions.settle(lid)), "NoticeWindowActive")
    assert_reverts(lambda: s.tx(mk.seller, m.functions.cancel(lid)), "NoticeWindowActive")
    # Once the window has passed the sale still cannot be cancelled, only settled.
    s.advance(60)
    assert_reverts(lambda: s.tx(mk.seller, m.functions.cancel(lid)), "NoticeWindowActive")
    s.tx(mk.keeper, m.functions.settle(lid), "AgentMarketplace.settle")
    assert mk.listing(lid)["status"] == SETTLED


@pytest.mark.parametrize("price", [10 * USDC, 1_234_567, 1, 49, 51])
def test_settle_pays_98_2_and_transfers_nft(mk: Market, price: int) -> None:
    s, m = mk.s, mk.m
    token = mk.agent(earnings=4 * price)
    self_wallet = mk.reg.functions.selfWalletOf(token).call()
    earnings = mk.reg.functions.lifetimeEarningsOf(token).call()
    lid = mk.list(token, price, price)
    mk.buy(lid)
    s.advance(7 * DAY)

    seller0, treasury0, keeper0 = (s.balance(a.address) for a in (mk.seller, s.treasury, mk.keeper))
    receipt = s.tx(mk.keeper, m.functions.settle(lid), "AgentMarketplace.settle")
    seller_amount, fee = split98(price)
    assert seller_amount + fee == price
    assert fee * 10_000 >= 200 * price and (fee - 1) * 10_000 < 200 * price  # 2% plus only the dust
    (ev,) = s.events(receipt, "AgentMarketplace", "SaleSettled")
    assert dict(ev["args"]) == {
        "listingId": lid,
        "tokenId": token,
        "buyer": mk.buyer.address,
        "seller": mk.seller.address,
        "sellerAmount": seller_amount,
        "fee": fee,
    }
    assert s.balance(mk.seller.address) - seller0 == seller_amount
    assert s.balance(s.treasury.address) - treasury0 == fee
    assert s.balance(mk.keeper.address) == keeper0
    assert s.balance(m.address) == 0
    assert m.functions.totalCommitted().call() == 0
    assert s.events(receipt, "AgentMarketplace", "PaymentCredited") == []
    # The NFT is the buyer's, with its self wallet and lifetime earnings intact, and unpaused.
    assert mk.owner(token) == mk.buyer.address
    # A sale is a change of hands: the self wallet is reset (the new owner sets its own, with a proof).
    assert mk.reg.functions.selfWalletOf(token).call() == ZERO
    (reset,) = s.events(receipt, "AgentRegistry", "SelfWalletChanged")
    assert dict(reset["args"]) == {"tokenId": token, "previous": self_wallet, "current": ZERO}
    assert mk.reg.functions.tokenOfSelfWallet(self_wallet).call() == 0
    assert mk.reg.functions.lifetimeEarningsOf(token).call() == earnings
    assert not mk.reg.functions.isAgentPaused(token).call()
    assert mk.reg.functions.ownerPayee(token).call() == mk.buyer.address
    assert mk.listing(lid)["status"] == SETTLED
    # Terminal: nothing else applies to a settled listing.
    assert revert_args(lambda: s.tx(mk.keeper, m.functions.settle(lid)), "WrongStatus") == (lid, SETTLED)
    assert_reverts(lambda: s.tx(mk.seller, m.functions.cancel(lid)), "WrongStatus")
    assert_reverts(lambda: s.tx(mk.keeper, m.functions.expire(lid)), "WrongStatus")
    assert_reverts(lambda: s.tx(mk.buyer, m.functions.buy(lid)), "WrongStatus")


def test_settled_agent_serves_new_owner_and_can_be_relisted(mk: Market) -> None:
    s, m = mk.s, mk.m
    token = mk.agent(earnings=40 * USDC)
    lid = mk.list(token, 20 * USDC, 10 * USDC)
    offer, sig = mk.offer(lid, 15 * USDC, 1)
    mk.accept(lid, offer, sig)
    s.advance(7 * DAY + 1)
    s.tx(mk.other, m.functions.settle(lid), "AgentMarketplace.settle")
    # The self wallet was reset: no payout until the buyer sets one (with that wallet's proof); then
    # payouts go to the buyer and its self wallet.
    assert revert_args(lambda: mk.pay(token, USDC), "NoSelfWallet") == (token,)
    s.tx(mk.buyer, s.set_self_wallet_fn(mk.buyer.address, token, mk.other))
    before, self_before = s.balance(mk.buyer.address), s.balance(mk.other.address)
    mk.pay(token, USDC)
    assert s.balance(mk.buyer.address) - before == 970_000
    assert s.balance(mk.other.address) - self_before == 10_000
    # The buyer relists; the floor minimum uses the agent's whole history (41 USDC).
    mk.approve_nft(mk.buyer, token)
    assert revert_args(
        lambda: s.tx(mk.buyer, s.list_fn(mk.buyer.address, token, 20 * USDC, 10 * USDC, 0)), "FloorTooLow"
    ) == (
        10 * USDC,
        10_250_000,
    )
    lid2 = mk.list(token, 20 * USDC, 10_250_000, seller=mk.buyer)
    assert mk.listing(lid2)["earningsAtListing"] == 41 * USDC
    assert mk.reg.functions.ownerPayee(token).call() == mk.buyer.address
    mk.buy(lid2, buyer=mk.seller)
    s.advance(7 * DAY)
    s.tx(mk.keeper, m.functions.settle(lid2), "AgentMarketplace.settle")
    assert mk.owner(token) == mk.seller.address


def test_cancel_before_commit_returns_nft(mk: Market) -> None:
    s, m = mk.s, mk.m
    token = mk.agent(earnings=USDC)
    lid = mk.list(token, 10 * USDC, 5 * USDC)
    assert revert_args(lambda: s.tx(mk.other, m.functions.cancel(lid)), "NotSeller") == (lid, mk.other.address)
    receipt = s.tx(mk.seller, m.functions.cancel(lid), "AgentMarketplace.cancel")
    (ev,) = s.events(receipt, "AgentMarketplace", "ListingCancelled")
    assert (ev["args"]["listingId"], ev["args"]["tokenId"]) == (lid, token)
    assert mk.owner(token) == mk.seller.address
    assert not mk.reg.functions.isAgentPaused(token).call()
    assert mk.reg.functions.ownerPayee(token).call() == mk.seller.address
    assert mk.reg.functions.agent(token).call()[3] == ZERO
    assert mk.reg.functions.lifetimeEarningsOf(token).call() == USDC
    # listing and cancelling is no change of hands: the self wallet is kept all along
    assert mk.reg.functions.selfWalletOf(token).call() == mk.self_wallet_of[token]
    assert s.events(receipt, "AgentRegistry", "SelfWalletChanged") == []
    assert mk.listing(lid)["status"] == CANCELLED
    assert revert_args(lambda: s.tx(mk.seller, m.functions.cancel(lid)), "WrongStatus") == (lid, CANCELLED)
    assert_reverts(lambda: s.tx(mk.buyer, m.functions.buy(lid)), "WrongStatus")
    offer, sig = mk.offer(lid, 10 * USDC, 1)
    assert_reverts(lambda: mk.accept(lid, offer, sig), "WrongStatus")
    assert_reverts(lambda: s.tx(mk.keeper, m.functions.settle(lid)), "WrongStatus")
    s.advance(31 * DAY)
    assert_reverts(lambda: s.tx(mk.keeper, m.functions.expire(lid)), "WrongStatus")
    # The seller owns it again and can transfer it freely (a direct transfer resets the self wallet).
    s.tx(mk.seller, mk.reg.functions.transferFrom(mk.seller.address, mk.other.address, token))
    assert mk.owner(token) == mk.other.address
    assert mk.reg.functions.selfWalletOf(token).call() == ZERO
    s.tx(mk.other, mk.reg.functions.transferFrom(mk.other.address, mk.seller.address, token))


def test_cancel_after_ttl_still_allowed_for_seller(mk: Market) -> None:
    lid = mk.list(mk.agent(), 10 * USDC, 5 * USDC, DAY)
    mk.s.advance(2 * DAY)
    mk.s.tx(mk.seller, mk.m.functions.cancel(lid), "AgentMarketplace.cancel")
    assert mk.listing(lid)["status"] == CANCELLED


def test_expire_after_ttl_by_anyone(mk: Market) -> None:
    s, m = mk.s, mk.m
    token = mk.agent()
    lid = mk.list(token, 10 * USDC, 5 * USDC, 2 * DAY)
    expires_at = mk.listing(lid)["expiresAt"]
    assert revert_args(lambda: s.tx(mk.keeper, m.functions.expire(lid)), "ListingNotEnded") == (lid, expires_at)
    s.advance(2 * DAY - 60)
    assert_reverts(lambda: s.tx(mk.keeper, m.functions.expire(lid)), "ListingNotEnded")
    s.advance(60)
    receipt = s.tx(mk.keeper, m.functions.expire(lid), "AgentMarketplace.expire")
    (ev,) = s.events(receipt, "AgentMarketplace", "ListingExpired")
    assert (ev["args"]["listingId"], ev["args"]["tokenId"]) == (lid, token)
    assert mk.owner(token) == mk.seller.address
    assert not mk.reg.functions.isAgentPaused(token).call()
    # back with its seller: not a change of hands, the self wallet is kept
    assert mk.reg.functions.selfWalletOf(token).call() == mk.self_wallet_of[token]
    assert s.events(receipt, "AgentRegistry", "SelfWalletChanged") == []
    assert mk.listing(lid)["status"] == EXPIRED
    assert revert_args(lambda: s.tx(mk.keeper, m.functions.expire(lid)), "WrongStatus") == (lid, EXPIRED)
    assert_reverts(lambda: s.tx(mk.seller, m.functions.cancel(lid)), "WrongStatus")
    assert_reverts(lambda: s.tx(mk.keeper, m.functions.settle(lid)), "WrongStatus")
    # The agent can be listed again.
    lid2 = mk.list(token, 10 * USDC, 5 * USDC)
    assert lid2 == lid + 1
    assert mk.owner(token) == m.address


def test_unknown_listing_everywhere(mk: Market) -> None:
    s, m = mk.s, mk.m
    offer, sig = mk.offer(5, USDC, 1)
    for lid in (0, 5, 2**256 - 1):
        assert revert_args(lambda lid=lid: s.tx(mk.buyer, m.functions.buy(lid)), "UnknownListing") == (lid,)
        assert_reverts(lambda lid=lid: s.tx(mk.keeper, m.functions.settle(lid)), "UnknownListing")
        assert_reverts(lambda lid=lid: s.tx(mk.seller, m.functions.cancel(lid)), "UnknownListing")
        assert_reverts(lambda lid=lid: s.tx(mk.keeper, m.functions.expire(lid)), "UnknownListing")
        assert_reverts(lambda lid=lid: mk.accept(lid, offer, sig), "UnknownListing")


# ---- payees that cannot receive ----------------------------------------------------------


def test_blacklisted_seller_gets_credit_and_withdraws(mk: Market) -> None:
    s, m, usdc = mk.s, mk.m, mk.s.usdc
    token = mk.agent()
    price = 1_234_567
    seller_amount, fee = split98(price)
    lid = mk.list(token, price, price)
    mk.buy(lid)
    s.advance(7 * DAY)
    s.tx(s.deployer, usdc.functions.setBlacklisted(mk.seller.address, True))
    treasury0 = s.balance(s.treasury.address)

    receipt = s.tx(mk.keeper, m.functions.settle(lid), "AgentMarketplace.settle")
    (credited,) = s.events(receipt, "AgentMarketplace", "PaymentCredited")
    assert (credited["args"]["payee"], credited["args"]["amount"]) == (mk.seller.address, seller_amount)
    assert mk.owner(token) == mk.buyer.address
    assert s.balance(s.treasury.address) - treasury0 == fee
    assert m.functions.creditOf(mk.seller.address).call() == seller_amount
    assert m.functions.totalCredits().call() == seller_amount
    assert m.functions.totalCommitted().call() == 0
    assert s.balance(m.address) == seller_amount
    mk.check()

    # Withdrawing to the blacklisted address itself still fails; to another address works.
    assert_reverts(lambda: s.tx(mk.seller, m.functions.withdrawCredit(mk.seller.address)), "AccountBlacklisted")
    assert_reverts(lambda: s.tx(mk.seller, m.functions.withdrawCredit(ZERO)), "ZeroAddress")
    assert_reverts(lambda: s.tx(mk.other, m.functions.withdrawCredit(mk.other.address)), "NothingToWithdraw")
    other0 = s.balance(mk.other.address)
    receipt = s.tx(mk.seller, m.functions.withdrawCredit(mk.other.address), "AgentMarketplace.withdrawCredit")
    (ev,) = s.events(receipt, "AgentMarketplace", "CreditWithdrawn")
    assert dict(ev["args"]) == {"payee": mk.seller.address, "to": mk.other.address, "amount": seller_amount}
    assert s.balance(mk.other.address) - other0 == seller_amount
    assert m.functions.creditOf(mk.seller.address).call() == 0
    assert m.functions.totalCredits().call() == 0
    assert s.balance(m.address) == 0
    assert_reverts(lambda: s.tx(mk.seller, m.functions.withdrawCredit(mk.other.address)), "NothingToWithdraw")


def test_blacklisted_seller_and_treasury_do_not_block_settlement(mk: Market) -> None:
    s, m, usdc = mk.s, mk.m, mk.s.usdc
    lid_a = mk.list(mk.agent(), 10 * USDC, 10 * USDC)
    lid_b = mk.list(mk.agent(), 3 * USDC, 3 * USDC)
    mk.buy(lid_a)
    mk.buy(lid_b, buyer=mk.other)
    s.advance(7 * DAY)
    for who in (mk.seller.address, s.treasury.address):
        s.tx(s.deployer, usdc.functions.setBlacklisted(who, True))
    receipt = s.tx(mk.keeper, m.functions.settle(lid_a), "AgentMarketplace.settle")
    assert len(s.events(receipt, "AgentMarketplace", "PaymentCredited")) == 2
    assert m.functions.creditOf(mk.seller.address).call() == 9_800_000
    assert m.functions.creditOf(s.treasury.address).call() == 200_000
    assert m.functions.totalCommitted().call() == 3 * USDC
    mk.check()  # 3 USDC still committed for lid_b, 10 USDC in credits
    assert s.balance(m.address) == 13 * USDC
    # Once un-blacklisted, the next settlement pays directly; credits stay withdrawable.
    s.tx(s.deployer, usdc.functions.setBlacklisted(mk.seller.address, False))
    seller0 = s.balance(mk.seller.address)
    s.tx(mk.keeper, m.functions.settle(lid_b), "AgentMarketplace.settle")
    assert s.balance(mk.seller.address) - seller0 == 2_940_000
    assert m.functions.creditOf(s.treasury.address).call() == 200_000 + 60_000
    s.tx(mk.seller, m.functions.withdrawCredit(mk.seller.address))
    assert s.balance(mk.seller.address) - seller0 == 2_940_000 + 9_800_000
    assert m.functions.totalCredits().call() == 260_000
    assert s.balance(m.address) == 260_000


# ---- pause and admin -----------------------------------------------------------------------


def test_pause_blocks_new_business_but_not_exits(mk: Market) -> None:
    s, m = mk.s, mk.m
    to_settle = mk.list(mk.agent(), 10 * USDC, 10 * USDC)
    mk.buy(to_settle)
    to_cancel = mk.list(mk.agent(), 10 * USDC, 10 * USDC)
    to_expire = mk.list(mk.agent(), 10 * USDC, 10 * USDC, DAY)
    open_one = mk.list(mk.agent(), 10 * USDC, 10 * USDC, 30 * DAY)
    fresh = mk.agent()
    mk.approve_nft(mk.seller, fresh)
    offer, sig = mk.offer(open_one, 10 * USDC, 1, deadline=s.now() + 30 * DAY)

    role = m.functions.PAUSER_ROLE().call()
    args = revert_args(lambda: s.tx(mk.other, m.functions.pause()), "AccessControlUnauthorizedAccount")
    assert args == (mk.other.address, role)
    s.tx(s.deployer, m.functions.pause())
    assert m.functions.paused().call()
    assert_reverts(
        lambda: s.tx(mk.seller, s.list_fn(mk.seller.address, fresh, 10 * USDC, 5 * USDC, 0)), "EnforcedPause"
    )
    assert_reverts(lambda: s.tx(mk.buyer, m.functions.buy(open_one)), "EnforcedPause")
    assert_reverts(lambda: mk.accept(open_one, offer, sig), "EnforcedPause")

    s.advance(7 * DAY)
    s.tx(mk.keeper, m.functions.settle(to_settle))
    s.tx(mk.seller, m.functions.cancel(to_cancel))
    s.tx(mk.keeper, m.functions.expire(to_expire))
    s.tx(mk.other, m.functions.cancelOfferNonce(99))
    assert [mk.listing(i)["status"] for i in (to_settle, to_cancel, to_expire, open_one)] == [
        SETTLED,
        CANCELLED,
        EXPIRED,
        LISTED,
    ]
    mk.check()

    assert_reverts(lambda: s.tx(mk.other, m.functions.unpause()), "AccessControlUnauthorizedAccount")
    s.tx(s.deployer, m.functions.unpause())
    assert_reverts(lambda: s.tx(s.deployer, m.functions.unpause()), "ExpectedPause")
    mk.accept(open_one, offer, sig)
    mk.list(fresh, 10 * USDC, 5 * USDC)


def test_set_treasury(mk: Market) -> None:
    s, m = mk.s, mk.m
    new = s.users[9]
    admin_role = m.functions.DEFAULT_ADMIN_ROLE().call()
    assert revert_args(
        lambda: s.tx(mk.other, m.functions.setTreasury(new.address)), "AccessControlUnauthorizedAccount"
    ) == (mk.other.address, admin_role)
    assert_reverts(lambda: s.tx(s.treasury, m.functions.setTreasury(new.address)), "AccessControlUnauthorizedAccount")
    assert_reverts(lambda: s.tx(s.deployer, m.functions.setTreasury(ZERO)), "ZeroAddress")
    receipt = s.tx(s.deployer, m.functions.setTreasury(new.address))
    (ev,) = s.events(receipt, "AgentMarketplace", "TreasuryChanged")
    assert (ev["args"]["previous"], ev["args"]["current"]) == (s.treasury.address, new.address)
    assert m.functions.treasury().call() == new.address
    # The fee of the next settlement goes to the new treasury.
    lid = mk.list(mk.agent(), 5 * USDC, 5 * USDC)
    mk.buy(lid)
    s.advance(7 * DAY)
    old0, new0 = s.balance(s.treasury.address), s.balance(new.address)
    s.tx(mk.keeper, m.functions.settle(lid))
    assert s.balance(new.address) - new0 == 100_000
    assert s.balance(s.treasury.address) == old0


def test_market_is_the_only_mover_of_escrowed_agents(mk: Market) -> None:
    """Without MARKET_ROLE the marketplace cannot pause agents, so listing fails atomically."""
    s, m, reg = mk.s, mk.m, mk.reg
    token = mk.agent()
    market_role = reg.functions.MARKET_ROLE().call()
    s.tx(s.deployer, reg.functions.revokeRole(market_role, m.address))
    mk.approve_nft(mk.seller, token)
    assert_reverts(
        lambda: s.tx(mk.seller, s.list_fn(mk.seller.address, token, 10 * USDC, 5 * USDC, 0)),
        "AccessControlUnauthorizedAccount",
    )
    assert mk.owner(token) == mk.seller.address
    assert m.functions.listingCount().call() == 0
    s.tx(s.deployer, reg.functions.grantRole(market_role, m.address))


def test_role_management_and_interfaces(mk: Market) -> None:
    s, m = mk.s, mk.m
    admin_role, pauser_role = m.functions.DEFAULT_ADMIN_ROLE().call(), m.functions.PAUSER_ROLE().call()
    assert m.functions.getRoleAdmin(pauser_role).call() == admin_role
    assert m.functions.getRoleAdmin(admin_role).call() == admin_role
    assert m.functions.supportsInterface(bytes.fromhex("7965db0b")).call()  # IAccessControl
    assert m.functions.supportsInterface(bytes.fromhex("01ffc9a7")).call()  # IERC165
    assert not m.functions.supportsInterface(bytes.fromhex("ffffffff")).call()
    user = mk.other
    grant = m.functions.grantRole(pauser_role, user.address)
    assert_reverts(lambda: s.tx(user, grant), "AccessControlUnauthorizedAccount")
    s.tx(s.deployer, m.functions.grantRole(pauser_role, user.address))
    assert m.functions.hasRole(pauser_role, user.address).call()
    s.tx(user, m.functions.pause())
    s.tx(user, m.functions.unpause())
    renounce_other = m.functions.renounceRole(pauser_role, s.deployer.address)
    assert_reverts(lambda: s.tx(user, renounce_other), "AccessControlBadConfirmation")
    s.tx(user, m.functions.renounceRole(pauser_role, user.address))
    assert_reverts(lambda: s.tx(user, m.functions.pause()), "AccessControlUnauthorizedAccount")
    s.tx(s.deployer, m.functions.grantRole(pauser_role, user.address))
    s.tx(s.deployer, m.functions.revokeRole(pauser_role, user.address))
    assert not m.functions.hasRole(pauser_role, user.address).call()
    assert_reverts(lambda: s.tx(user, m.functions.pause()), "AccessControlUnauthorizedAccount")


# ---- exact time boundaries -------------------------------------------------------------------


def call_at(mk: Market, account: LocalAccount, fn_name: str, args: list[Any], ts: int) -> str | None:
    """eth_call `fn_name(args)` from `account` with the block time overridden to `ts`; return the
    custom error name it reverts with, or None when it would succeed."""
    tx = {"from": account.address, "to": mk.m.address, "data": mk.m.encode_abi(fn_name, args=args)}
    resp = mk.s.w3.provider.make_request("eth_call", [tx, "latest", {}, {"time": hex(ts)}])  # type: ignore[arg-type]
    if "error" not in resp:
        return None
    data = resp["error"].get("data")
    assert isinstance(data, str), resp
    return revert_name(ContractCustomError(data, data=data))


def test_time_boundaries_are_exact(mk: Market) -> None:
    s = mk.s
    lid = mk.list(mk.agent(), 10 * USDC, 10 * USDC, DAY)
    expires_at = mk.listing(lid)["expiresAt"]
    # The override really is applied: the same call succeeds and fails on either side.
    assert call_at(mk, mk.buyer, "buy", [lid], expires_at - 1) is None
    assert call_at(mk, mk.buyer, "buy", [lid], expires_at) == "ListingEnded"
    assert call_at(mk, mk.keeper, "expire", [lid], expires_at - 1) == "ListingNotEnded"
    assert call_at(mk, mk.keeper, "expire", [lid], expires_at) is None
    deadline = s.now() + 3600
    offer, sig = mk.offer(lid, 10 * USDC, 1, deadline=deadline)
    assert call_at(mk, mk.seller, "acceptOffer", [lid, offer, sig], deadline) is None
    assert call_at(mk, mk.seller, "acceptOffer", [lid, offer, sig], deadline + 1) == "OfferExpired"

    mk.buy(lid)
    notice_ends = mk.listing(lid)["noticeEndsAt"]
    assert call_at(mk, mk.keeper, "settle", [lid], notice_ends - 1) == "NoticeWindowActive"
    assert call_at(mk, mk.keeper, "settle", [lid], notice_ends) is None
    # And a real settlement mined exactly at the end of the window.
    s.w3.provider.make_request("evm_setNextBlockTimestamp", [notice_ends])  # type: ignore[arg-type]
    receipt = send(s.w3, mk.keeper, mk.m.functions.settle(lid), gas=500_000)
    assert s.w3.eth.get_block(receipt["blockNumber"])["timestamp"] == notice_ends
    assert mk.listing(lid)["status"] == SETTLED
