"""The largest amounts the service accepts, accumulated and summed through the real store on both
backends: an agent's running totals stop at int64 micro-USDC (core.store.wallets.MAX_TOTAL_UNITS: 422
balance_limit, nothing written), and every total over many rows (the service's, an account's, the
operator's) stays exact past int64 (core.store.sums)."""

from __future__ import annotations

import itertools
import re
from dataclasses import dataclass
from pathlib import Path
from types import SimpleNamespace

import apsw
import pytest

from core import wallets
from core.checkout import orders
from core.dashboard import operator
from core.keys import hash_api_key, new_api_key
from core.marketplace import handover, records
from core.marketplace import rules as market_rules
from core.marketplace.context import Notices
from core.marketplace.follower import MarketFollower
from core.money import MAX_AMOUNT_UNITS, split
from core.store import Database, transaction
from core.store import checkout as checkout_store
from core.store import dashboard as dashboard_store
from core.store import hire as hire_store
from core.store import marketplace as market_store
from core.store import wallets as store
from core.store.projections import Event
from core.store.types import Uint256Hex

INT64_MAX = 2**63 - 1
CHAIN = 31337
NOW = 1_800_000_000.0
#: Token ids, block numbers and listing ids never repeat within a test.
_serial = itertools.count(1)


@pytest.fixture()
def conn(database: Database) -> apsw.Connection:
    return database.connect()


def _register(conn: apsw.Connection, referrer: store.AgentRow | None = None) -> store.AgentRow:
    with transaction(conn):
        return wallets.register(
            conn,
            account_id=None,
            new_key_hash=hash_api_key(new_api_key()),
            name="a",
            specialty="email",
            referral_code=None if referrer is None else referrer.referral_code,
            now=NOW,
        )


@dataclass
class Wallet:
    """What the store must hold for one agent: Python integers, exact at any size."""

    agent: store.AgentRow
    referrer: Wallet | None = None
    owner: int = 0
    self_: int = 0
    reinvested: int = 0
    earned: int = 0
    transferred_in: int = 0
    settled: int = 0  # on-chain payouts to its NFT
    brain_revenue: int = 0  # its brain's revenue in the niche "email"
    token: int | None = None

    @property
    def balance(self) -> int:
        return self.owner + self.self_

    def has_room(self, credit: int) -> bool:
        return self.earned + self.transferred_in + credit <= INT64_MAX


@dataclass
class Network:
    """What this example adds to the service's totals."""

    earned: int = 0
    tolls: int = 0
    brain_sold: int = 0
    brain_revenue: int = 0


def _earn(conn: apsw.Connection, w: Wallet, amount: int, net: Network) -> None:
    s = split(amount, w.referrer is not None)
    fits = w.has_room(amount) and (w.referrer is None or w.referrer.has_room(s.referral_cut))
    try:
        with transaction(conn):
            wallets.earn(conn, w.agent, amount, "prop", NOW)
    except wallets.WalletError as exc:
        assert (exc.code, fits) == ("balance_limit", False)
        return
    assert fits, f"credited past the ceiling: {w.earned} + {amount}"
    w.owner, w.self_, w.earned = w.owner + s.owner_cut, w.self_ + s.agent_cut, w.earned + amount
    if w.referrer is not None:
        w.referrer.owner += s.referral_cut
        w.referrer.earned += s.referral_cut
    net.earned += amount
    net.tolls += s.service_cut


def _sell(conn: apsw.Connection, w: Wallet) -> Wallet:
    """The agent sold in the drop: its pre-sale balance moves to a new estate wallet of the seller
    (core.marketplace.handover), which takes its place; returns that estate."""
    n = next(_serial)
    with transaction(conn):
        listing = records.insert_listing(
            conn,
            chain_listing_id=n,
            agent=w.agent,
            token_id=n,
            seller="0x" + "55" * 20,
            asking=1,
            floor=1,
            earnings=0,
            accept_offers=False,
            seller_email=None,
            state=market_rules.ACTIVE,
            expires_at=int(NOW) + 86_400,
            list_tx=f"0x{n:064x}",
            list_block=n,
            confirmed=True,
            now=NOW,
        )
        moved = handover.hand_over(
            conn, listing, SimpleNamespace(id=f"sale-{n}", buyer_address="0x" + "66" * 20), "0xs", NOW
        )  # type: ignore[arg-type]
    assert moved is not None
    if moved.estate_agent_uuid is None:  # nothing to move: a fresh agent takes the place
        assert (w.balance, w.reinvested) == (0, 0)
        return Wallet(_register(conn))
    estate = store.agent_by_uuid(conn, moved.estate_agent_uuid)
    assert estate is not None
    held = w.balance + w.reinvested
    taken = Wallet(estate, owner=w.owner, self_=w.self_, reinvested=w.reinvested, transferred_in=held)
    w.owner = w.self_ = w.reinvested = 0
    return taken


def _check(conn: apsw.Connection, w: Wallet) -> None:
    uuid = w.agent.uuid
    bal = store.get_balance(conn, uuid)
    got = (bal.owner_balance, bal.self_balance, bal.reinvested, bal.total_earned, bal.transferred_in)
    assert got == (w.owner, w.self_, w.reinvested, w.earned, w.transferred_in)
    assert max(bal.balance + bal.reinvested, bal.total_earned + bal.transferred_in) <= INT64_MAX
    assert store.ledger_totals(conn, uuid) == (w.balance, w.owner, w.self_)
    last = dashboard_store.ledger_rows(conn, [uuid], limit=1)
    assert [r.balance_after for r in last] == ([w.balance] if last else [])
    assert store.settled_earnings(conn, uuid) == w.settled


def test_an_estate_wallet_is_credited_only_up_to_the_ceiling(conn: apsw.Connection) -> None:
    """A sold agent's pre-sale balance moves to a new estate wallet whose total_earned is 0: what it
    holds counts against the ceiling as transferred_in, so its balance never passes int64 (it did:
    SQLite kept a rounded REAL, PostgreSQL failed the earning with bigint out of range)."""
    w = Wallet(_register(conn))
    net = Network()
    for _ in range(9):
        _earn(conn, w, MAX_AMOUNT_UNITS, net)
    estate = _sell(conn, w)
    assert estate.balance == 9 * split(MAX_AMOUNT_UNITS, False).net
    with pytest.raises(wallets.WalletError) as refused, transaction(conn):
        wallets.earn(conn, estate.agent, MAX_AMOUNT_UNITS, "late", NOW)
    assert refused.value.code == "balance_limit"
    room = INT64_MAX - estate.transferred_in
    _earn(conn, estate, room, net)
    for v in (w, estate):
        _check(conn, v)
    assert store.get_balance(conn, estate.agent.uuid).transferred_in + room == INT64_MAX


def test_the_operators_figures_sum_past_int64(conn: apsw.Connection) -> None:
    """Orders, hires and what each contract owes, over rows whose total passes int64, a uint256 price
    past int64 among them (0x-hex TEXT on SQLite, NUMERIC on PostgreSQL)."""
    provider = _register(conn)
    with transaction(conn):
        conn.execute(
            "INSERT INTO providers (agent_uuid, self_wallet, owner_address, token_id, linked_at)"
            " VALUES (?, ?, ?, 1, 0)",
            (provider.uuid, "0x" + "44" * 20, "0x" + "22" * 20),
        )
        for n in range(10):
            sid, job = f"cs_{n}", f"0x{n:064x}"
            checkout_store.insert_session(
                conn,
                checkout_store.SessionRow(
                    sid, "kh", "complete_in_progress", [], {}, provider.uuid, MAX_AMOUNT_UNITS, None, None, job,
                    "0x" + "33" * 20, None, None, NOW + 3600, NOW, NOW,
                ),
            )  # fmt: skip
            orders.create_order(
                conn,
                session_id=sid,
                job_id=job,
                provider_uuid=provider.uuid,
                provider_token_id=1,
                buyer_address="0x" + "33" * 20,
                amount=MAX_AMOUNT_UNITS,
                deadline=int(NOW) + 3600,
                funding_tx="0xf0",
                now=NOW,
            )
            hire_store.insert_job(conn, _hire(f"hire_{n:024x}", provider.uuid, MAX_AMOUNT_UNITS))
        for n in range(2):
            conn.execute(
                "INSERT INTO gateway_jobs (chain_id, job_id, buyer, provider_token_id, amount, deadline, status,"
                " funded_tx, funded_block) VALUES (?, ?, '0xb', 1, ?, 0, 'funded', '0x', 1)",
                (CHAIN, f"0x{n}", INT64_MAX),
            )
            conn.execute(
                "INSERT INTO escrow_jobs (chain_id, job_id, caller, provider_token_id, amount, expires_at, status,"
                " created_tx, created_block) VALUES (?, ?, '0xc', 1, ?, 0, 'locked', '0x', 1)",
                (CHAIN, f"0x{n}", INT64_MAX),
            )
            conn.execute(
                "INSERT INTO credits (chain_id, contract, payee, amount) VALUES (?, 'AgentPayouts', ?, ?)",
                (CHAIN, f"0x{n}", INT64_MAX),
            )
        for n, price in ((1, Uint256Hex(hex(2**200))), (2, INT64_MAX)):
            conn.execute(
                "INSERT INTO listings (chain_id, listing_id, token_id, seller, asking_price, floor_price,"
                " earnings_at_listing, expires_at, status, price, listed_block, updated_block)"
                " VALUES (?, ?, 1, '0xs', 1, 1, 0, 0, 'committed', ?, 1, 1)",
                (CHAIN, n, price),
            )
    n = operator.network(conn)
    assert n.orders == {"created": (10, 10 * MAX_AMOUNT_UNITS)}
    assert n.hires == {("standard", "charged"): (10, 10 * MAX_AMOUNT_UNITS)}
    deployed = {
        name: f"0x{i:040x}"
        for i, name in enumerate(("PaymentGateway", "AgentEscrow", "AgentPayouts", "AgentMarketplace"))
    }
    owes = {c.name: c.owes for c in operator.contracts(conn, CHAIN, deployed)}
    assert owes["PaymentGateway"] == owes["AgentEscrow"] == owes["AgentPayouts"] == 2 * INT64_MAX
    assert owes["AgentMarketplace"] == 2**200 + INT64_MAX


def _hire(job_id: str, provider_uuid: str, amount: int) -> hire_store.JobRow:
    return hire_store.JobRow(
        id=job_id, kind="standard", status="charged", provider_uuid=provider_uuid, provider_token_id=1,
        service_type="summarize", caller_uuid=None, caller_address=None, self_dealing=False,
        amount=amount, held_owner=None, held_self=None, input_sha256="00" * 32, idem_scope=None, idem_key=None,
        idem_attempt=None, outcome="success", output=None, output_sha256=None, output_cid=None, error_code=None,
        error_message=None, response_ms=1, created_tx=None, expires_at=None, settle_tx=None, settle_attempts=0,
        settle_error=None, next_settle_at=None, final=True, caller_webhook_url=None, caller_webhook_secret=None,
        created_at=NOW, updated_at=NOW,
    )  # fmt: skip


def test_a_listing_whose_lifetime_earnings_pass_int64_is_not_recorded(conn: apsw.Connection) -> None:
    """Reported earnings up to the ceiling plus the registry's on-chain lifetime earnings pass int64:
    the listing the chain reports is left unrecorded, as one priced past int64 is, and the indexer goes
    on (the insert raised on both backends, failing the indexer's step for ever)."""
    w = Wallet(_register(conn))
    net = Network()
    for _ in range(9):
        _earn(conn, w, MAX_AMOUNT_UNITS, net)
    _earn(conn, w, INT64_MAX - w.earned, net)
    assert w.earned == INT64_MAX
    with transaction(conn):
        conn.execute(
            "INSERT INTO agents (chain_id, token_id, wallet_id, owner, self_wallet, registered_block, updated_block)"
            " VALUES (?, 7, ?, '0xo', '0xs', 1, 1)",
            (CHAIN, w.agent.wallet),
        )
    args = {
        "listingId": 7,
        "tokenId": 7,
        "seller": "0x" + "55" * 20,
        "askingPrice": 10**6,
        "floorPrice": 10**6,
        "earningsAtListing": 1,
        "expiresAt": int(NOW) + 86_400,
    }
    listed = Event(1, "0x" + "bb" * 32, "0x" + "01" * 32, 0, "AgentMarketplace", "Listed", "0x01", "0x", args)
    with transaction(conn):
        MarketFollower(lambda: NOW, Notices("http://127.0.0.1")).apply(conn, CHAIN, listed)
    assert market_store.listing_by_chain_id(conn, 7) is None


def test_the_stores_sums_of_money_are_exact_sums() -> None:
    """A plain sum() raises past int64 on SQLite: every sum of money in the store is written exact_sum
    (core.store.sums). The plain ones left add a hire service's samples: successes, recency weights
    (REAL) and milliseconds. The migrations (schema.py) sum one transfer row per agent, once."""
    store_dir = Path(__file__).resolve().parents[2] / "core" / "store"
    plain = {
        path.name: len(re.findall(r"(?<![a-z_])sum\(", path.read_text(), re.IGNORECASE))
        for path in store_dir.glob("*.py")
        if path.name not in ("sums.py", "schema.py")
    }
    assert {name: n for name, n in plain.items() if n} == {"hire.py": 4}
