"""SQL of the agent wallets: accounts, API keys, agents, the ledger and its balances, memory and
the shared brain. Callers own the transaction (core.store.transaction); functions that
move money refuse to run outside one."""

from __future__ import annotations

import weakref
from collections.abc import Mapping, Sequence
from dataclasses import dataclass
from typing import Any, cast

import apsw

from core.store import serialization, sums
from core.store.backend import backend_of
from core.store.serialization import NotInTransaction as NotInTransaction  # ledger writes outside a transaction
from core.store.types import Conn


class Overdraft(ValueError):
    """A ledger row would take a balance part below zero."""


@dataclass(frozen=True)
class ApiKeyRow:
    key_hash: str
    account_id: str
    agent_id: str | None
    scopes: str | None = None  # space-separated; None: every scope
    daily_cap: int | None = None  # micro-USDC per UTC day; None: no cap
    mcp_toolsets: str | None = None  # comma-separated MCP toolsets (api.mcp.toolsets); None: the default


@dataclass(frozen=True)
class AgentRow:
    uuid: str
    wallet: str
    account_id: str
    name: str
    specialty: str
    referral_code: str
    referred_by: str | None
    created_at: float


@dataclass(frozen=True)
class BalanceRow:
    owner_balance: int
    self_balance: int
    total_earned: int
    tx_count: int
    reinvested: int = 0  # the reinvested bucket (compound); not part of the spendable balance
    transferred_in: int = 0  # what transfers brought in (a sold agent's pre-sale balance, into an estate)

    @property
    def balance(self) -> int:
        return self.owner_balance + self.self_balance


@dataclass(frozen=True)
class LedgerEntry:
    agent_uuid: str
    kind: str
    owner_delta: int
    self_delta: int
    source: str | None
    gross: int | None = None
    owner_cut: int | None = None
    agent_cut: int | None = None
    service_cut: int | None = None
    referral_cut: int | None = None
    earned: int = 0  # what this row adds to total_earned
    reinvested_delta: int = 0  # compound: what this row moves into the reinvested bucket
    transferred_in: int = 0  # a transfer in: what this row adds to transferred_in


_ZERO = BalanceRow(0, 0, 0, 0)
_BALANCE_COLS = "owner_balance, self_balance, total_earned, tx_count, reinvested, transferred_in"  # BalanceRow's
_AGENT_COLS = "uuid, wallet, account_id, name, specialty, referral_code, referred_by, created_at"


def _rows(conn: apsw.Connection, sql: str, params: Sequence[Any] | Mapping[str, Any] = ()) -> list[tuple[Any, ...]]:
    return cast(list[tuple[Any, ...]], conn.execute(sql, params).fetchall())


def _require_tx(conn: apsw.Connection) -> None:
    serialization.lock(conn, "ledger")  # a ledger write decides by the balance it reads: inside a write transaction


# ---- accounts and keys ---------------------------------------------------------------------


def insert_account(conn: apsw.Connection, account_id: str, now: float) -> None:
    conn.execute("INSERT INTO accounts (id, created_at) VALUES (?, ?)", (account_id, now))


#: Counts this process's writes that can change who may act for what: api_keys rows (insert now)
#: and, should they ever be updated or deleted, wallet_agents rows (a marketplace handover moves an
#: agent to another account: it also advances auth_epoch, which every process's cache checks). Such a
#: write calls _auth_rows_changed(); caches of those rows (api.auth) drop everything when it moves.
_auth_generation = 0


def auth_generation() -> int:
    return _auth_generation


def _auth_rows_changed() -> None:
    global _auth_generation
    _auth_generation += 1


#: auth_epoch as read in a write transaction, by connection: (the transaction's id, n). No other writer
#: can move it before that transaction ends (the write lock), so it is read once per transaction, not
#: once per write that checks an agent (PostgreSQL: a round trip fewer per earn).
_epochs: weakref.WeakKeyDictionary[Conn, tuple[int, int]] = weakref.WeakKeyDictionary()


def auth_epoch(conn: apsw.Connection) -> int:
    """The count of changes of who controls an agent, in any process (a marketplace handover or claim
    moves an agent to another account): caches of agents are good only at the epoch they were read at."""
    txid = backend_of(conn).write_transaction(conn)
    if txid is not None:
        kept = _epochs.get(conn)
        if kept is not None and kept[0] == txid:
            return kept[1]
    rows = conn.execute("SELECT n FROM auth_epoch WHERE id = 1").fetchall()
    n = int(rows[0][0]) if rows else 0  # type: ignore[arg-type]
    if txid is not None:
        _epochs[conn] = (txid, n)
    return n


def bump_auth_epoch(conn: apsw.Connection) -> None:
    """Who controls an agent changed: every process's auth cache drops its agents (api.auth)."""
    conn.execute("UPDATE auth_epoch SET n = n + 1 WHERE id = 1")
    _epochs.pop(conn, None)


def insert_api_key(
    conn: apsw.Connection,
    key_hash: str,
    account_id: str,
    agent_id: str | None,
    email: str | None,
    now: float,
    *,
    scopes: str | None = None,
    daily_cap: int | None = None,
    operator: bool = False,
    mcp_toolsets: str | None = None,
) -> None:
    """`operator`: a key the operator issued for the service-wide operator's view
    (core.dashboard.access; not the key scope 'admin')."""
    _auth_rows_changed()
    conn.execute(
        "INSERT INTO api_keys (key_hash, account_id, agent_id, email, created_at, scopes, daily_cap, operator,"
        " mcp_toolsets) VALUES (?, ?, ?, ?, ?, ?, ?, ?, ?)",
        (key_hash, account_id, agent_id, email, now, scopes, daily_cap, int(operator), mcp_toolsets),
    )


def revoke_api_key(conn: apsw.Connection, key_hash: str, now: float) -> bool:
    """Revoke a key (it authenticates nothing from now on; the row stays); False when there is no
    such key or it was already revoked. Callers clear api.auth's caches once this has committed."""
    _auth_rows_changed()
    conn.execute("UPDATE api_keys SET revoked_at = ? WHERE key_hash = ? AND revoked_at IS NULL", (now, key_hash))
    return bool(conn.changes())


def account_exists(conn: apsw.Connection, account_id: str) -> bool:
    return bool(conn.execute("SELECT 1 FROM accounts WHERE id = ?", (account_id,)).fetchall())


def email_has_key(conn: apsw.Connection, email: str) -> bool:
    return bool(conn.execute("SELECT 1 FROM api_keys WHERE email = ?", (email,)).fetchall())


def get_api_key(conn: apsw.Connection, key_hash: str) -> ApiKeyRow | None:
    rows = _rows(
        conn,
        "SELECT key_hash, account_id, agent_id, scopes, daily_cap, mcp_toolsets FROM api_keys"
        " WHERE key_hash = ? AND revoked_at IS NULL",
        (key_hash,),
    )
    if not rows:
        return None
    h, account, agent, scopes, cap, toolsets = rows[0]
    return ApiKeyRow(
        str(h),
        str(account),
        None if agent is None else str(agent),
        None if scopes is None else str(scopes),
        None if cap is None else int(cap),
        None if toolsets is None else str(toolsets),
    )


# ---- agents --------------------------------------------------------------------------------


def insert_agent(conn: apsw.Connection, a: AgentRow) -> None:
    conn.execute(
        f"INSERT INTO wallet_agents ({_AGENT_COLS}) VALUES (?, ?, ?, ?, ?, ?, ?, ?)",  # noqa: S608
        (a.uuid, a.wallet, a.account_id, a.name, a.specialty, a.referral_code, a.referred_by, a.created_at),
    )
    conn.execute(
        "INSERT INTO balances (agent_uuid, owner_balance, self_balance, total_earned, tx_count, updated_at)"
        " VALUES (?, 0, 0, 0, 0, ?)",
        (a.uuid, a.created_at),
    )


_AGENT_BY = {
    column: f"SELECT {_AGENT_COLS} FROM wallet_agents WHERE {column} = ?"  # noqa: S608 (fixed names)
    for column in ("wallet", "uuid", "referral_code")
}


def _agent(conn: apsw.Connection, column: str, value: str) -> AgentRow | None:
    rows = _rows(conn, _AGENT_BY[column], (value,))
    # The columns come back in AgentRow's field order, typed by the schema (TEXT, REAL).
    return AgentRow(*rows[0]) if rows else None


def agent_by_wallet(conn: apsw.Connection, wallet: str) -> AgentRow | None:
    return _agent(conn, "wallet", wallet)


def agent_by_uuid(conn: apsw.Connection, uuid: str) -> AgentRow | None:
    return _agent(conn, "uuid", uuid)


def agent_by_referral_code(conn: apsw.Connection, code: str) -> AgentRow | None:
    return _agent(conn, "referral_code", code)


def wallet_taken(conn: apsw.Connection, wallet: str) -> bool:
    return bool(conn.execute("SELECT 1 FROM wallet_agents WHERE wallet = ?", (wallet,)).fetchall())


def referral_code_taken(conn: apsw.Connection, code: str) -> bool:
    return bool(conn.execute("SELECT 1 FROM wallet_agents WHERE referral_code = ?", (code,)).fetchall())


def count_agents(conn: apsw.Connection) -> int:
    return int(_rows(conn, "SELECT COUNT(*) FROM wallet_agents")[0][0])


# ---- ledger and balances -------------------------------------------------------------------


def get_balance(conn: apsw.Connection, agent_uuid: str) -> BalanceRow:
    """The agent's balance (inside a write that decides a debit by it, the write lock keeps it as read
    until the transaction ends: core.store.serialization)."""
    rows = _rows(
        conn,
        f"SELECT {_BALANCE_COLS} FROM balances WHERE agent_uuid = ?",  # noqa: S608 (fixed names)
        (agent_uuid,),
    )
    if not rows:
        return _ZERO
    return BalanceRow(*(int(v) for v in rows[0]))


def settled_earnings(conn: apsw.Connection, agent_uuid: str) -> int:
    """Gross on-chain payouts (escrow releases) to the agent's NFT once it is a linked provider:
    the USDC already went to its owner and self wallet, so it is never in the off-chain balance.
    One database follows one chain, so payouts are not filtered by chain."""
    rows = sums.rows(
        conn,
        "SELECT coalesce(exact_sum(p.amount), 0) FROM payouts p JOIN providers pr ON p.token_id = pr.token_id"
        " WHERE pr.agent_uuid = ?",
        (agent_uuid,),
    )
    return int(rows[0][0])


class TotalLimit(ValueError):
    """A ledger row would take an agent's total_earned + transferred_in past MAX_TOTAL_UNITS."""


#: Ceiling of an agent's total_earned + transferred_in: int64 (SQLite's INTEGER; past it SQLite's +
#: silently turns REAL, PostgreSQL's BIGINT raises). Every credit of a balance (an earning's net, a
#: referral cut, a transfer in; a hire's released reservation only gives back what a debit took) adds at
#: least as much to that sum, so it also bounds owner_balance + self_balance (balance_after) + reinvested
#: + the agent's open hire reservations: none of the running totals can overflow.
MAX_TOTAL_UNITS = 2**63 - 1

# One statement applies the deltas and returns the new balance. The WHERE refuses an overdraft or a
# total past MAX_TOTAL_UNITS without writing (no row comes back); _refusal says which. Its bounds are
# computed in Python (a column compared with a parameter; `:ceiling - transferred_in` lies within
# [-MAX, MAX]): no arithmetic of the guard can overflow, and the SET's sums only run on a row it let
# through, whose new values the ceiling keeps within int64 (PostgreSQL would raise, SQLite turn REAL).
_APPLY_DELTAS = (
    "UPDATE balances SET owner_balance = owner_balance + :owner,"  # noqa: S608 (fixed names)
    " self_balance = self_balance + :self, total_earned = total_earned + :earned, tx_count = tx_count + 1,"
    " reinvested = reinvested + :reinvested, transferred_in = transferred_in + :transferred_in, updated_at = :now"
    " WHERE agent_uuid = :agent AND total_earned <= :ceiling - transferred_in AND owner_balance >= :owner_floor"
    " AND self_balance >= :self_floor AND reinvested >= :reinvested_floor"
    f" RETURNING {_BALANCE_COLS}"
)
_LEDGER_COLS = (
    "agent_uuid, kind, amount, owner_delta, self_delta, balance_after, gross, owner_cut, agent_cut, service_cut,"
    " referral_cut, source, created_at, reinvested_delta"
)
_INSERT_LEDGER = (
    f"INSERT INTO ledger ({_LEDGER_COLS}) VALUES (:agent, :kind, :amount, :owner, :self, :balance_after, :gross,"  # noqa: S608
    " :owner_cut, :agent_cut, :service_cut, :referral_cut, :source, :now, :reinvested) RETURNING id"
)
#: Both in one statement where the backend chains writes (core.store.backend): the ledger row is inserted
#: from the row the update returned, so no row is inserted when the guard refused.
_APPLY_AND_INSERT = (
    f"WITH b AS ({_APPLY_DELTAS}), l AS (INSERT INTO ledger ({_LEDGER_COLS})"  # noqa: S608
    " SELECT :agent, :kind, :amount, :owner, :self, b.owner_balance + b.self_balance, :gross, :owner_cut,"
    " :agent_cut, :service_cut, :referral_cut, :source, :now, :reinvested FROM b RETURNING id)"
    " SELECT b.*, l.id FROM b, l"
)


def append_ledger(conn: apsw.Connection, e: LedgerEntry, now: float) -> tuple[int, BalanceRow]:
    """Write one ledger row and the balance it produces, in the caller's transaction.

    Raises (writing nothing) Overdraft when a balance part or the reinvested bucket would go below
    zero, TotalLimit when total_earned + transferred_in would pass MAX_TOTAL_UNITS, LookupError
    without a balances row. The balance update (returning the new balance), then the ledger row: two
    statements, or one where the backend chains writes.

    The ledger row takes its id under the database's write lock (core.store.serialization), so ledger ids are
    allocated in the commit order of their rows, which the dashboard's `id > last_id` fold of an agent's
    ledger (core.dashboard.owner) relies on."""
    _require_tx(conn)
    params: dict[str, object] = {
        "owner": e.owner_delta,
        "self": e.self_delta,
        "earned": e.earned,
        "reinvested": e.reinvested_delta,
        "transferred_in": e.transferred_in,
        "now": now,
        "agent": e.agent_uuid,
        "ceiling": MAX_TOTAL_UNITS - e.earned - e.transferred_in,
        "owner_floor": -e.owner_delta,
        "self_floor": -e.self_delta,
        "reinvested_floor": -e.reinvested_delta,
        "kind": e.kind,
        "amount": e.owner_delta + e.self_delta,
        "gross": e.gross,
        "owner_cut": e.owner_cut,
        "agent_cut": e.agent_cut,
        "service_cut": e.service_cut,
        "referral_cut": e.referral_cut,
        "source": e.source,
    }
    if backend_of(conn).chains_writes:
        rows = _rows(conn, _APPLY_AND_INSERT, params)
        if not rows:
            raise _refusal(conn, e)
        *balance, ledger_id = rows[0]
        return int(ledger_id), BalanceRow(*balance)
    rows = _rows(conn, _APPLY_DELTAS, params)
    if not rows:
        raise _refusal(conn, e)
    new = BalanceRow(*rows[0])
    params["balance_after"] = new.owner_balance + new.self_balance
    ledger_id = _rows(conn, _INSERT_LEDGER, params)[0][0]
    return int(ledger_id), new


def _refusal(conn: apsw.Connection, e: LedgerEntry) -> Exception:
    """Why _APPLY_DELTAS matched no row."""
    if not _rows(conn, "SELECT 1 FROM balances WHERE agent_uuid = ?", (e.agent_uuid,)):
        return LookupError(f"no balances row for agent {e.agent_uuid}")
    cur = get_balance(conn, e.agent_uuid)
    if not has_room(cur, e.earned + e.transferred_in):
        return TotalLimit(
            f"total earned {cur.total_earned} and transferred in {cur.transferred_in}"
            f" cannot grow by {e.earned + e.transferred_in}"
        )
    return Overdraft(f"balance {cur.balance} cannot cover {-(e.owner_delta + e.self_delta)}")


def has_room(bal: BalanceRow, credit: int) -> bool:
    """May an agent whose balance is `bal` be credited `credit` more (earned or transferred in)?"""
    return bal.total_earned + bal.transferred_in + credit <= MAX_TOTAL_UNITS


def ledger_totals(conn: apsw.Connection, agent_uuid: str) -> tuple[int, int, int]:
    """(sum of amounts, sum of owner deltas, sum of self deltas) of an agent's ledger."""
    row = sums.rows(
        conn,
        "SELECT COALESCE(exact_sum(amount), 0), COALESCE(exact_sum(owner_delta), 0),"
        " COALESCE(exact_sum(self_delta), 0) FROM ledger WHERE agent_uuid = ?",
        (agent_uuid,),
    )[0]
    return int(row[0]), int(row[1]), int(row[2])


def count_rows(conn: apsw.Connection, table: str) -> int:
    """Row count of one of this module's tables (tests use it to prove nothing was written)."""
    if table not in {
        "accounts",
        "api_keys",
        "wallet_agents",
        "ledger",
        "balances",
        "idempotency_keys",
        "memories",
        "shared_brain",
    }:
        raise ValueError(f"not a wallet table: {table}")
    return int(_rows(conn, f"SELECT COUNT(*) FROM {table}")[0][0])  # noqa: S608


def network_totals(conn: apsw.Connection) -> tuple[int, int, int]:
    """(agents registered, total earned, total tolls) over the whole service, micro-USDC.

    Earned: the gross of every reported earning (ledger kind 'earn'; referral credits are part
    of those grosses and are not added again) plus every settled on-chain payout the indexer
    recorded. Tolls: the service cut (dust included) of both."""
    agents = count_agents(conn)
    earned, tolls = sums.rows(
        conn,
        "SELECT COALESCE(exact_sum(gross), 0), COALESCE(exact_sum(service_cut), 0) FROM ledger WHERE kind = 'earn'",
    )[0]
    p_earned, p_tolls = sums.rows(
        conn, "SELECT COALESCE(exact_sum(amount), 0), COALESCE(exact_sum(service_cut), 0) FROM payouts"
    )[0]
    return agents, int(earned) + int(p_earned), int(tolls) + int(p_tolls)


# ---- memory --------------------------------------------------------------------------------


@dataclass(frozen=True)
class MemoryRow:
    key: str
    value: str  # compact JSON text
    created_at: float
    updated_at: float


#: Keys under these prefixes belong to the service (brain, run records).
RESERVED_PREFIXES = ("brain:", "run:")


def get_memory(conn: apsw.Connection, agent_uuid: str, key: str) -> MemoryRow | None:
    rows = _rows(
        conn,
        "SELECT key, value, created_at, updated_at FROM memories WHERE agent_uuid = ? AND key = ?",
        (agent_uuid, key),
    )
    if not rows:
        return None
    k, v, c, u = rows[0]
    return MemoryRow(str(k), str(v), float(c), float(u))


def put_memory(conn: apsw.Connection, agent_uuid: str, key: str, value: str, now: float) -> MemoryRow:
    """Insert or replace the value of `key` (created_at kept on update)."""
    _require_tx(conn)
    conn.execute(
        "INSERT INTO memories (agent_uuid, key, value, created_at, updated_at) VALUES (?, ?, ?, ?, ?)"
        " ON CONFLICT (agent_uuid, key) DO UPDATE SET value = excluded.value, updated_at = excluded.updated_at",
        (agent_uuid, key, value, now, now),
    )
    row = get_memory(conn, agent_uuid, key)
    assert row is not None
    return row


def count_memories(conn: apsw.Connection, agent_uuid: str, *, user_only: bool = False) -> int:
    """All memory entries of an agent, or (user_only) those outside the reserved prefixes."""
    sql = "SELECT COUNT(*) FROM memories WHERE agent_uuid = ?"
    if user_only:
        sql += " AND substr(key, 1, 6) != 'brain:' AND substr(key, 1, 4) != 'run:'"
    return int(_rows(conn, sql, (agent_uuid,))[0][0])


def list_memories(
    conn: apsw.Connection, agent_uuid: str, query: str | None, after: str | None, limit: int
) -> list[MemoryRow]:
    """Entries ordered by key (binary: byte order), whose key contains `query` (case-sensitive),
    strictly after the key `after`; at most `limit` rows."""
    sql = "SELECT key, value, created_at, updated_at FROM memories WHERE agent_uuid = ?"
    params: list[Any] = [agent_uuid]
    if query:
        # contains `query`: replace() is the one substring test SQLite and PostgreSQL share (instr is
        # SQLite's, strpos PostgreSQL's; LIKE folds ASCII case on SQLite only)
        sql += " AND replace(key, ?, '') != key"
        params.append(query)
    if after is not None:
        sql += " AND key > ?"
        params.append(after)
    sql += " ORDER BY key LIMIT ?"
    params.append(limit)
    return [MemoryRow(str(k), str(v), float(c), float(u)) for k, v, c, u in _rows(conn, sql, tuple(params))]


# ---- shared brain --------------------------------------------------------------------------


@dataclass(frozen=True)
class NicheStats:
    listed: int = 0
    sold: int = 0
    revenue: int = 0  # micro-USDC
    sold_price_total: int = 0  # micro-USDC


#: The network's money totals of a niche grow with every agent's sales, without bound: each is kept in two
#: int64 columns, carry * CARRY_UNIT + low with 0 <= low < CARRY_UNIT. Adding a delta below CARRY_UNIT
#: to low stays below 2^63 (no overflow), and the carry grows by at most one a write.
CARRY_UNIT = 2**62


def add_shared_brain(conn: apsw.Connection, niche: str, delta: NicheStats, now: float) -> None:
    _require_tx(conn)
    revenue_carry, revenue = divmod(delta.revenue, CARRY_UNIT)
    price_carry, price = divmod(delta.sold_price_total, CARRY_UNIT)
    conn.execute(
        "INSERT INTO shared_brain (niche, listed, sold, revenue, revenue_carry, sold_price_total, sold_price_carry,"
        " updated_at) VALUES (:niche, :listed, :sold, :revenue, :revenue_carry, :price, :price_carry, :now)"
        " ON CONFLICT (niche) DO UPDATE SET listed = shared_brain.listed + excluded.listed,"
        " sold = shared_brain.sold + excluded.sold,"
        " revenue = (shared_brain.revenue + excluded.revenue) % :unit,"
        " revenue_carry = shared_brain.revenue_carry + excluded.revenue_carry"
        " + (shared_brain.revenue + excluded.revenue) / :unit,"
        " sold_price_total = (shared_brain.sold_price_total + excluded.sold_price_total) % :unit,"
        " sold_price_carry = shared_brain.sold_price_carry + excluded.sold_price_carry"
        " + (shared_brain.sold_price_total + excluded.sold_price_total) / :unit,"
        " updated_at = excluded.updated_at",
        {
            "niche": niche,
            "listed": delta.listed,
            "sold": delta.sold,
            "revenue": revenue,
            "revenue_carry": revenue_carry,
            "price": price,
            "price_carry": price_carry,
            "now": now,
            "unit": CARRY_UNIT,
        },
    )


def shared_brain(conn: apsw.Connection) -> dict[str, NicheStats]:
    rows = _rows(
        conn,
        "SELECT niche, listed, sold, revenue_carry, revenue, sold_price_carry, sold_price_total FROM shared_brain",
    )
    return {
        str(n): NicheStats(int(a), int(b), int(rc) * CARRY_UNIT + int(r), int(pc) * CARRY_UNIT + int(p))
        for n, a, b, rc, r, pc, p in rows
    }
