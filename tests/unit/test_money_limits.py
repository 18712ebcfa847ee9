"""The largest amounts the service accepts, accumulated and summed through the real store on both
backends: an agent's running totals stop at int64 micro-USDC (core.store.wallets.MAX_TOTAL_UNITS: 422
balance_limit, nothing written), and every total over many rows (the service's, an account's, the shared
brain's, the operator's) stays exact past int64 (core.store.sums; the shared brain's carry)."""

from __future__ import annotations

import itertools
import re
from dataclasses import dataclass
from pathlib import Path
from types import SimpleNamespace

import apsw
import pytest
from hypothesis import HealthCheck, given, settings
from hypothesis import strategies as st

from core import wallets
from core.checkout import orders
from core.dashboard import operator, owner
from core.keys import hash_api_key, new_api_key
from core.marketplace import handover, records
from core.marketplace import rules as market_rules
from core.marketplace.context import Notices
from core.marketplace.follower import MarketFollower
from core.money import MAX_AMOUNT_UNITS, split
from core.store import Conn, Database, begin, kind_of, pg_ddl, savepoint, schema, transaction
from core.store import checkout as checkout_store
from core.store import dashboard as dashboard_store
from core.store import hire as hire_store
from core.store import marketplace as market_store
from core.store import wallets as store
from core.store.events import Event
from core.store.projections import apply_events
from core.store.types import Uint256Hex
from tests.thread_kit import waits_for_commit

INT64_MAX = 2**63 - 1
CHAIN = 31337
NOW = 1_800_000_000.0
ZERO_ADDRESS = "0x" + "00" * 20
#: Token ids, block numbers and listing ids never repeat within a test (hypothesis' examples share its database).
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


def _fill(conn: apsw.Connection, w: Wallet, net: Network) -> None:
    """Earn up to exactly the ceiling (or until the referrer's refuses), then 1 micro-USDC more."""
    while w.has_room(1):
        before = w.earned
        _earn(conn, w, min(MAX_AMOUNT_UNITS, INT64_MAX - w.earned - w.transferred_in), net)
        if w.earned == before:
            break
    _earn(conn, w, 1, net)


def _spend(conn: apsw.Connection, w: Wallet, amount: int) -> None:
    try:
        with transaction(conn):
            wallets.spend(conn, w.agent, amount, "0xabc", NOW)
    except wallets.WalletError as exc:
        assert (exc.code, amount > w.balance) == ("insufficient_balance", True)
        return
    from_self = min(amount, w.self_)
    w.self_ -= from_self
    w.owner -= amount - from_self


def _compound(conn: apsw.Connection, w: Wallet, percent: int) -> None:
    with transaction(conn):
        wallets.compound(conn, w.agent, percent, NOW)
    from_owner, from_self = w.owner * percent // 100, w.self_ * percent // 100
    w.owner, w.self_, w.reinvested = w.owner - from_owner, w.self_ - from_self, w.reinvested + from_owner + from_self


def _payout(conn: apsw.Connection, w: Wallet, amount: int, net: Network) -> None:
    """An on-chain payout to the agent's NFT as the indexer records it (the real projection)."""
    n = next(_serial)
    s = split(amount, False)
    with transaction(conn):
        if w.token is None:
            w.token = n
            conn.execute(
                "INSERT INTO providers (agent_uuid, self_wallet, owner_address, token_id, linked_at)"
                " VALUES (?, ?, ?, ?, 0)",
                (w.agent.uuid, f"0x{n:040x}", "0x" + "22" * 20, n),
            )
        args = {
            "ref": f"0x{n:064x}",
            "tokenId": w.token,
            "payer": "0x" + "6a" * 20,
            "amount": amount,
            "ownerCut": s.owner_cut,
            "agentCut": s.agent_cut,
            "serviceCut": s.service_cut,
            "referralCut": 0,
            "owner": "0x" + "22" * 20,
            "selfWallet": f"0x{n:040x}",
            "referrer": ZERO_ADDRESS,
        }
        event = Event(n, "0x" + "bb" * 32, f"0x{n:064x}", 0, "AgentPayouts", "Payout", "0x01", "0x", args)
        apply_events(conn, CHAIN, [event])
    w.settled += amount
    net.earned += amount
    net.tolls += s.service_cut


def _sale(conn: apsw.Connection, w: Wallet, revenue: int, net: Network) -> None:
    """A sale recorded in the agent's brain and the network's shared brain."""
    try:
        with transaction(conn):
            wallets.update_brain(conn, w.agent, "sold", "email", revenue, None, NOW)
    except wallets.WalletError as exc:
        assert (exc.code, w.brain_revenue + revenue > INT64_MAX) == ("balance_limit", True)
        return
    w.brain_revenue += revenue
    net.brain_sold += 1
    net.brain_revenue += revenue


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


LARGE = st.one_of(
    st.just(MAX_AMOUNT_UNITS), st.integers(MAX_AMOUNT_UNITS - 10**6, MAX_AMOUNT_UNITS), st.integers(1, MAX_AMOUNT_UNITS)
)
SLOTS = 3  # the agents an example acts on; the second is referred by the first
OPS = st.lists(
    st.one_of(
        st.tuples(st.just("earn"), st.integers(0, SLOTS - 1), LARGE, st.integers(1, 10)),  # (.., amount, times)
        st.tuples(st.just("spend"), st.integers(0, SLOTS - 1), LARGE, st.just(1)),
        st.tuples(st.just("compound"), st.integers(0, SLOTS - 1), st.integers(1, 100), st.just(1)),
        # a payout as large as its column holds (real USDC's whole supply is ~1% of int64)
        st.tuples(st.just("payout"), st.integers(0, SLOTS - 1), st.sampled_from([INT64_MAX, 10**18]), st.just(1)),
        st.tuples(st.just("sale"), st.integers(0, SLOTS - 1), LARGE, st.integers(1, 10)),
        st.tuples(st.just("sell"), st.integers(0, SLOTS - 1), st.just(0), st.just(1)),
        st.tuples(st.just("fill"), st.integers(0, SLOTS - 1), st.just(0), st.just(1)),
    ),
    min_size=1,
    max_size=25,
)


@settings(max_examples=50, deadline=None, suppress_health_check=[HealthCheck.function_scoped_fixture])
@given(ops=OPS)
def test_the_largest_amounts_keep_every_total_exact_and_within_its_column(
    conn: apsw.Connection, ops: list[tuple[str, int, int, int]]
) -> None:
    """Every example adds to the same database, so the service's totals pass int64 within a few
    examples; each checks the store against its model, exactly, and every refusal against the ceiling."""
    _, earned_before, tolls_before = store.network_totals(conn)
    brain_before = store.shared_brain(conn).get("email", store.NicheStats())
    first = Wallet(_register(conn))
    slots = [first, Wallet(_register(conn, first.agent), referrer=first), Wallet(_register(conn))]
    every = list(slots)
    net = Network()
    for op, i, value, times in ops:
        w = slots[i]
        for _ in range(times):
            if op == "earn":
                _earn(conn, w, value, net)
            elif op == "spend":
                _spend(conn, w, value)
            elif op == "compound":
                _compound(conn, w, value)
            elif op == "payout":
                _payout(conn, w, value, net)
            elif op == "sale":
                _sale(conn, w, value, net)
            elif op == "fill":
                _fill(conn, w, net)
            else:
                slots[i] = _sell(conn, w)
                every.append(slots[i])
    _, earned, tolls = store.network_totals(conn)
    assert (earned - earned_before, tolls - tolls_before) == (net.earned, net.tolls)
    assert operator.network(conn).earned == earned
    brain = store.shared_brain(conn)["email"] if net.brain_sold else brain_before
    assert (brain.sold - brain_before.sold, brain.revenue - brain_before.revenue) == (net.brain_sold, net.brain_revenue)
    assert brain.sold_price_total - brain_before.sold_price_total == net.brain_revenue
    seen = owner.earnings(conn, [w.agent for w in every], NOW, {})
    assert (seen.reported_total, seen.settled_total) == (sum(w.earned for w in every), sum(w.settled for w in every))
    for w in every:
        _check(conn, w)


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


def test_a_referrer_credited_by_another_writer_meanwhile_refuses_with_balance_limit(database: Database) -> None:
    """The referrer's room is read before the first write, without a lock: another process may fill it
    before the referral credit's guarded update runs (PostgreSQL; SQLite's writer holds the whole file).
    The earning is then refused with 422 balance_limit, nothing kept (it was a 500: TotalLimit escaped)."""
    conn = database.connect()
    referrer = Wallet(_register(conn))
    referred = Wallet(_register(conn, referrer.agent), referrer=referrer)
    cut = split(MAX_AMOUNT_UNITS, True).referral_cut
    net = Network()
    while referrer.has_room(cut + 1):  # leaves room for exactly one maximal earning's referral cut
        _earn(conn, referrer, min(MAX_AMOUNT_UNITS, INT64_MAX - referrer.earned - cut), net)
    assert referrer.earned == INT64_MAX - cut
    refused: list[str] = []

    def earn_meanwhile(other: Conn) -> None:
        try:
            with savepoint(other, "earn"):
                wallets.earn(other, referred.agent, MAX_AMOUNT_UNITS, "race", NOW)
        except wallets.WalletError as exc:
            refused.append(exc.code)

    begin(conn)
    wallets.earn(conn, referrer.agent, 1, "first", NOW)  # the referrer's row stays locked until the commit
    waits_for_commit(conn, database, earn_meanwhile)
    assert refused == ["balance_limit"]
    one = split(1, False)  # the referrer's own earning, committed
    referrer.owner, referrer.self_, referrer.earned = (
        referrer.owner + one.owner_cut,
        referrer.self_ + one.agent_cut,
        referrer.earned + 1,
    )
    for w in (referrer, referred):
        _check(conn, w)


def test_the_migration_counts_what_estates_received_and_carries_large_shared_figures(database: Database) -> None:
    """A database from before the bounds: an estate's transfer in is counted from its ledger, and a shared
    brain figure past 2^62 is split into its carry, the same number either way."""
    conn = database.connect()
    sold = Wallet(_register(conn))
    net = Network()
    for _ in range(2):
        _earn(conn, sold, MAX_AMOUNT_UNITS, net)
    _compound(conn, sold, 10)
    estate = _sell(conn, sold)
    with transaction(conn):  # back to the schema (and figures) of the version before
        conn.execute("ALTER TABLE balances DROP COLUMN transferred_in")
        conn.execute("ALTER TABLE shared_brain DROP COLUMN revenue_carry")
        conn.execute("ALTER TABLE shared_brain DROP COLUMN sold_price_carry")
        conn.execute(
            "INSERT INTO shared_brain (niche, listed, sold, revenue, sold_price_total, updated_at)"
            " VALUES ('migrated', 3, 2, ?, ?, 0)",
            (2**62 + 5, INT64_MAX),
        )
        # the two migrations of the bounds, as each backend's migrate() runs them (wherever they sit in the
        # list: other changes append migrations too)
        first = next(i for i, m in enumerate(schema.MIGRATIONS) if "ADD COLUMN transferred_in" in m)
        for script in schema.MIGRATIONS[first : first + 2]:
            conn.execute(script if kind_of(conn) == "sqlite" else pg_ddl.translate(script))
    assert store.get_balance(conn, estate.agent.uuid).transferred_in == estate.transferred_in > 0
    assert store.get_balance(conn, sold.agent.uuid).transferred_in == 0
    assert store.shared_brain(conn)["migrated"] == store.NicheStats(3, 2, 2**62 + 5, INT64_MAX)
    carried = "SELECT revenue_carry, revenue, sold_price_carry, sold_price_total FROM shared_brain WHERE niche = ?"
    assert conn.execute(carried, ("migrated",)).fetchall() == [(1, 5, 1, 2**62 - 1)]


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
    """The contract's lifetime earnings at listing (the operator's statement of the reported earnings plus
    the registry's, a uint256) pass int64: the listing the chain reports is left unrecorded, as one priced
    past int64 is, and the indexer goes on (the insert raised on both backends, failing the indexer's step
    for ever)."""
    w = Wallet(_register(conn))
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
        "earningsAtListing": INT64_MAX + 1,
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
        if path.name not in ("sums.py", "exact.py", "schema.py")
    }
    assert {name: n for name, n in plain.items() if n} == {"hire.py": 4}
