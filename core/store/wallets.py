"""SQL of the agent wallets: accounts, API keys, agents, the ledger and its balances, and the
idempotency keys of the API. Callers own the transaction (core.store.transaction); functions that
move money refuse to run outside one."""

from __future__ import annotations

from dataclasses import dataclass
from typing import Any, cast

import apsw


class NotInTransaction(RuntimeError):
    """A ledger write was attempted outside BEGIN ... COMMIT."""


class Overdraft(ValueError):
    """A ledger row would take a balance part below zero."""


@dataclass(frozen=True)
class ApiKeyRow:
    key_hash: str
    account_id: str
    agent_id: str | None


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


@dataclass(frozen=True)
class IdemRow:
    body_sha256: str
    status: str
    attempt: str
    response_status: int | None
    response_body: bytes | None
    created_at: float


_ZERO = BalanceRow(0, 0, 0, 0)
_AGENT_COLS = "uuid, wallet, account_id, name, specialty, referral_code, referred_by, created_at"


def _rows(conn: apsw.Connection, sql: str, params: tuple[Any, ...] = ()) -> list[tuple[Any, ...]]:
    return cast(list[tuple[Any, ...]], conn.execute(sql, params).fetchall())


def _require_tx(conn: apsw.Connection) -> None:
    if not conn.in_transaction:
        raise NotInTransaction("ledger writes must run inside a transaction")


# ---- accounts and keys ---------------------------------------------------------------------


def insert_account(conn: apsw.Connection, account_id: str, now: float) -> None:
    conn.execute("INSERT INTO accounts (id, created_at) VALUES (?, ?)", (account_id, now))


def insert_api_key(
    conn: apsw.Connection, key_hash: str, account_id: str, agent_id: str | None, email: str | None, now: float
) -> None:
    conn.execute(
        "INSERT INTO api_keys (key_hash, account_id, agent_id, email, created_at) VALUES (?, ?, ?, ?, ?)",
        (key_hash, account_id, agent_id, email, now),
    )


def get_api_key(conn: apsw.Connection, key_hash: str) -> ApiKeyRow | None:
    rows = _rows(conn, "SELECT key_hash, account_id, agent_id FROM api_keys WHERE key_hash = ?", (key_hash,))
    if not rows:
        return None
    h, account, agent = rows[0]
    return ApiKeyRow(str(h), str(account), None if agent is None else str(agent))


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


def _agent(conn: apsw.Connection, column: str, value: str) -> AgentRow | None:
    rows = _rows(conn, f"SELECT {_AGENT_COLS} FROM wallet_agents WHERE {column} = ?", (value,))  # noqa: S608
    if not rows:
        return None
    u, w, acc, name, spec, code, ref, created = rows[0]
    return AgentRow(
        str(u), str(w), str(acc), str(name), str(spec), str(code), None if ref is None else str(ref), float(created)
    )


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
    rows = _rows(
        conn,
        "SELECT owner_balance, self_balance, total_earned, tx_count FROM balances WHERE agent_uuid = ?",
        (agent_uuid,),
    )
    if not rows:
        return _ZERO
    o, s, t, n = rows[0]
    return BalanceRow(int(o), int(s), int(t), int(n))


def append_ledger(conn: apsw.Connection, e: LedgerEntry, now: float) -> tuple[int, BalanceRow]:
    """Write one ledger row and the balance it produces, in the caller's transaction.

    Raises Overdraft (writing nothing) when either balance part would go below zero."""
    _require_tx(conn)
    cur = get_balance(conn, e.agent_uuid)
    new = BalanceRow(
        cur.owner_balance + e.owner_delta,
        cur.self_balance + e.self_delta,
        cur.total_earned + e.earned,
        cur.tx_count + 1,
    )
    if new.owner_balance < 0 or new.self_balance < 0:
        raise Overdraft(f"balance {cur.balance} cannot cover {-(e.owner_delta + e.self_delta)}")
    conn.execute(
        "INSERT INTO ledger (agent_uuid, kind, amount, owner_delta, self_delta, balance_after, gross, owner_cut,"
        " agent_cut, service_cut, referral_cut, source, created_at) VALUES (?, ?, ?, ?, ?, ?, ?, ?, ?, ?, ?, ?, ?)",
        (
            e.agent_uuid,
            e.kind,
            e.owner_delta + e.self_delta,
            e.owner_delta,
            e.self_delta,
            new.balance,
            e.gross,
            e.owner_cut,
            e.agent_cut,
            e.service_cut,
            e.referral_cut,
            e.source,
            now,
        ),
    )
    ledger_id = conn.last_insert_rowid()
    conn.execute(
        "UPDATE balances SET owner_balance = ?, self_balance = ?, total_earned = ?, tx_count = ?, updated_at = ?"
        " WHERE agent_uuid = ?",
        (new.owner_balance, new.self_balance, new.total_earned, new.tx_count, now, e.agent_uuid),
    )
    return int(ledger_id), new


def ledger_totals(conn: apsw.Connection, agent_uuid: str) -> tuple[int, int, int]:
    """(sum of amounts, sum of owner deltas, sum of self deltas) of an agent's ledger."""
    row = _rows(
        conn,
        "SELECT COALESCE(SUM(amount), 0), COALESCE(SUM(owner_delta), 0), COALESCE(SUM(self_delta), 0)"
        " FROM ledger WHERE agent_uuid = ?",
        (agent_uuid,),
    )[0]
    return int(row[0]), int(row[1]), int(row[2])


def count_rows(conn: apsw.Connection, table: str) -> int:
    """Row count of one of this module's tables (tests use it to prove nothing was written)."""
    if table not in {"accounts", "api_keys", "wallet_agents", "ledger", "balances", "idempotency_keys"}:
        raise ValueError(f"not a wallet table: {table}")
    return int(_rows(conn, f"SELECT COUNT(*) FROM {table}")[0][0])  # noqa: S608


# ---- idempotency keys ----------------------------------------------------------------------


def get_idem(conn: apsw.Connection, scope: str, key: str) -> IdemRow | None:
    rows = _rows(
        conn,
        "SELECT body_sha256, status, attempt, response_status, response_body, created_at FROM idempotency_keys"
        " WHERE scope = ? AND idem_key = ?",
        (scope, key),
    )
    if not rows:
        return None
    sha, status, attempt, rs, rb, created = rows[0]
    return IdemRow(
        str(sha),
        str(status),
        str(attempt),
        None if rs is None else int(rs),
        None if rb is None else bytes(rb),
        float(created),
    )


def put_idem_in_flight(conn: apsw.Connection, scope: str, key: str, body_sha256: str, attempt: str, now: float) -> None:
    """Claim (or re-claim, replacing an expired or abandoned row) a key for one attempt."""
    conn.execute(
        "INSERT OR REPLACE INTO idempotency_keys (scope, idem_key, body_sha256, status, attempt, created_at)"
        " VALUES (?, ?, ?, 'in_flight', ?, ?)",
        (scope, key, body_sha256, attempt, now),
    )


def finish_idem(conn: apsw.Connection, scope: str, key: str, attempt: str, status: int, body: bytes) -> bool:
    """Store the response of the attempt still holding the key; False when another attempt took it."""
    conn.execute(
        "UPDATE idempotency_keys SET status = 'done', response_status = ?, response_body = ?"
        " WHERE scope = ? AND idem_key = ? AND attempt = ? AND status = 'in_flight'",
        (status, body, scope, key, attempt),
    )
    return bool(conn.changes())


def release_idem(conn: apsw.Connection, scope: str, key: str, attempt: str) -> None:
    """Forget an attempt that produced no storable response (5xx, crash), so a retry may run."""
    conn.execute(
        "DELETE FROM idempotency_keys WHERE scope = ? AND idem_key = ? AND attempt = ? AND status = 'in_flight'",
        (scope, key, attempt),
    )


def purge_idem(conn: apsw.Connection, before: float) -> int:
    conn.execute("DELETE FROM idempotency_keys WHERE created_at < ?", (before,))
    return int(conn.changes())
