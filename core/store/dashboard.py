"""SQL the dashboard reads (and its sessions): what no feature's store module already answers.

Everything here reads, except the session rows and nothing else (sign-in, sign-out, pruning). The
rules (who may see what, how figures are composed) are core.dashboard's. Callers own transactions.
"""

from __future__ import annotations

import heapq
from collections.abc import Sequence
from dataclasses import dataclass
from datetime import date, timedelta
from typing import Any, cast

import apsw

from core.store import sums
from core.store.audit import Anchor


def _rows(conn: apsw.Connection, sql: str, params: Sequence[Any] = ()) -> list[tuple[Any, ...]]:
    rows: list[tuple[Any, ...]] = conn.execute(sql, params).fetchall()
    return rows


# ---- sessions -----------------------------------------------------------------------------------


@dataclass(frozen=True)
class SessionRow:
    key_hash: str
    csrf: str
    created_at: float
    expires_at: float


def insert_session(
    conn: apsw.Connection, token_hash: str, key_hash: str, csrf: str, now: float, expires: float
) -> None:
    conn.execute(
        "INSERT INTO dashboard_sessions (token_hash, key_hash, csrf, created_at, expires_at) VALUES (?, ?, ?, ?, ?)",
        (token_hash, key_hash, csrf, now, expires),
    )


def get_session(conn: apsw.Connection, token_hash: str) -> SessionRow | None:
    rows = _rows(
        conn,
        "SELECT key_hash, csrf, created_at, expires_at FROM dashboard_sessions WHERE token_hash = ?",
        (token_hash,),
    )
    return SessionRow(*rows[0]) if rows else None


def delete_session(conn: apsw.Connection, token_hash: str) -> None:
    conn.execute("DELETE FROM dashboard_sessions WHERE token_hash = ?", (token_hash,))


def delete_sessions_of_key(conn: apsw.Connection, key_hash: str) -> int:
    conn.execute("DELETE FROM dashboard_sessions WHERE key_hash = ?", (key_hash,))
    return int(conn.changes())


def prune_sessions(conn: apsw.Connection, now: float) -> int:
    conn.execute("DELETE FROM dashboard_sessions WHERE expires_at <= ?", (now,))
    return int(conn.changes())


# ---- keys ---------------------------------------------------------------------------------------


@dataclass(frozen=True)
class KeyRow:
    """An API key as the operator sees it: never the key, only its hash."""

    key_hash: str
    account_id: str
    agent_id: str | None
    email: str | None
    operator: bool
    created_at: float
    revoked_at: float | None
    scopes: str | None = None  # space-separated; None: every scope
    daily_cap: int | None = None  # micro-USDC a UTC day; None: no cap


_KEY_COLS = "key_hash, account_id, agent_id, email, operator, created_at, revoked_at, scopes, daily_cap"


def _key(row: Any) -> KeyRow:
    return KeyRow(
        row[0],
        row[1],
        row[2],
        row[3],
        bool(row[4]),
        float(row[5]),
        row[6],
        row[7],
        None if row[8] is None else int(row[8]),
    )


def key_is_operator(conn: apsw.Connection, key_hash: str) -> bool:
    rows = _rows(conn, "SELECT operator FROM api_keys WHERE key_hash = ? AND revoked_at IS NULL", (key_hash,))
    return bool(rows and rows[0][0])


def list_keys(conn: apsw.Connection, *, limit: int, before: float | None = None) -> list[KeyRow]:
    """Keys newest first (keyset on created_at)."""
    if before is None:
        rows = _rows(
            conn,
            f"SELECT {_KEY_COLS} FROM api_keys ORDER BY created_at DESC, key_hash LIMIT ?",
            (limit,),
        )
    else:
        rows = _rows(
            conn,
            f"SELECT {_KEY_COLS} FROM api_keys WHERE created_at < ? ORDER BY created_at DESC, key_hash LIMIT ?",
            (before, limit),
        )
    return [_key(r) for r in rows]


def keys_by_prefix(conn: apsw.Connection, prefix: str) -> list[KeyRow]:
    """Keys whose hash starts with `prefix` (lowercase hex; the operator's view names keys by a prefix)."""
    rows = _rows(
        conn,
        f"SELECT {_KEY_COLS} FROM api_keys WHERE key_hash >= ? AND key_hash < ? LIMIT 2",
        (prefix, prefix + "g"),
    )
    return [_key(r) for r in rows]


def key_counts(conn: apsw.Connection) -> tuple[int, int, int]:
    """(active keys, active operator keys, revoked keys)."""
    row = _rows(
        conn,
        "SELECT COUNT(*) FILTER (WHERE revoked_at IS NULL),"
        " COUNT(*) FILTER (WHERE revoked_at IS NULL AND operator = 1),"
        " COUNT(*) FILTER (WHERE revoked_at IS NOT NULL) FROM api_keys",
    )[0]
    return int(row[0]), int(row[1]), int(row[2])


def count_accounts(conn: apsw.Connection) -> int:
    return int(_rows(conn, "SELECT COUNT(*) FROM accounts")[0][0])


# ---- an owner's agents and their ledger ----------------------------------------------------------

_AGENT_COLS = "uuid, wallet, account_id, name, specialty, referral_code, referred_by, created_at"


def agents_of_account(conn: apsw.Connection, account_id: str, limit: int) -> list[tuple[Any, ...]]:
    """Rows of wallet_agents (core.store.wallets.AgentRow's column order), oldest first."""
    return list(
        _rows(
            conn,
            f"SELECT {_AGENT_COLS} FROM wallet_agents WHERE account_id = ? ORDER BY created_at, rowid LIMIT ?",
            (account_id, limit),
        )
    )


@dataclass(frozen=True)
class LedgerRow:
    id: int
    agent_uuid: str
    kind: str
    amount: int
    owner_delta: int
    self_delta: int
    reinvested_delta: int
    balance_after: int
    gross: int | None
    service_cut: int | None
    referral_cut: int | None
    source: str | None
    created_at: float


_LEDGER_COLS = (
    "id, agent_uuid, kind, amount, owner_delta, self_delta, reinvested_delta, balance_after, gross, service_cut,"
    " referral_cut, source, created_at"
)


def _marks(values: list[str]) -> str:
    return ",".join("?" * len(values))


def ledger_rows(
    conn: apsw.Connection,
    agent_uuids: list[str],
    *,
    kind: str | None = None,
    source: str | None = None,
    since: float | None = None,
    until: float | None = None,
    before_id: int | None = None,
    limit: int,
) -> list[LedgerRow]:
    """The agents' ledger rows, newest first, filtered (`source` is an exact match); `before_id`
    continues a page. One query per agent, each walking its (agent_uuid, id) index backwards until
    its limit, then merged: an IN list with ORDER BY id would sort every row of every agent."""
    where = ["agent_uuid = ?"]
    args: list[Any] = []
    for clause, value in (
        ("kind = ?", kind),
        ("source = ?", source),
        ("created_at >= ?", since),
        ("created_at < ?", until),
        ("id < ?", before_id),
    ):
        if value is not None:
            where.append(clause)
            args.append(value)
    sql = f"SELECT {_LEDGER_COLS} FROM ledger WHERE {' AND '.join(where)} ORDER BY id DESC LIMIT ?"
    per_agent = [[LedgerRow(*r) for r in _rows(conn, sql, (uuid, *args, limit))] for uuid in agent_uuids]
    return list(heapq.merge(*per_agent, key=lambda r: -r.id))[:limit]


@dataclass(frozen=True)
class EarningRow:
    id: int
    source: str  # the reporter's source; 'referral' for a referral credit
    gross: int
    created_at: float


def earnings_after(conn: apsw.Connection, agent_uuid: str, after_id: int, limit: int) -> list[EarningRow]:
    """The agent's reported earnings (earn rows by their gross, referral credits by their amount) with
    an id above `after_id`, in id order: an index range, however long the ledger."""
    rows = _rows(
        conn,
        "SELECT id, CASE WHEN kind = 'referral' THEN 'referral' ELSE COALESCE(source, '') END,"
        " CASE WHEN kind = 'earn' THEN gross ELSE amount END, created_at FROM ledger"
        " WHERE agent_uuid = ? AND id > ? AND kind IN ('earn', 'referral') ORDER BY id LIMIT ?",
        (agent_uuid, after_id, limit),
    )
    return [EarningRow(int(i), str(s), int(g), float(t)) for i, s, g, t in rows]


_SETTLED_FROM = "FROM payouts p JOIN providers pr ON pr.token_id = p.token_id"
_RELEASED = " JOIN orders o ON o.job_id = p.ref JOIN order_history h ON h.order_id = o.id AND h.to_state = 'released'"


def settled_by_payer(conn: apsw.Connection, agent_uuids: list[str]) -> list[tuple[str, int, int]]:
    """(payer address, gross, count) of the on-chain payouts to the agents (indexed), all time."""
    if not agent_uuids:
        return []
    rows = sums.rows(
        conn,
        f"SELECT p.payer, exact_sum(p.amount), COUNT(*) {_SETTLED_FROM} WHERE pr.agent_uuid IN ({_marks(agent_uuids)})"
        " GROUP BY p.payer",
        tuple(agent_uuids),
    )
    return [(str(a), int(v), int(n)) for a, v, n in rows]


#: The UTC day (days since 1970-01-01) of the release time h.at exactly as SQLite's date(h.at,
#: 'unixepoch') finds it (that is SQLite's only): the time as a julian day in whole milliseconds (the
#: same double arithmetic and rounding as SQLite's date.c), then whole days in integer arithmetic.
#: floor, CAST to BIGINT (exact: the value is whole) and integer division mean the same on PostgreSQL.
_UTC_DAY = "(CAST(floor(h.at * 1000 + 210866760000000.0 + 0.5) AS BIGINT) + 43200000) / 86400000 - 2440588"
_EPOCH = date(1970, 1, 1)


def settled_by_day(conn: apsw.Connection, agent_uuids: list[str], since: float) -> list[tuple[str, int]]:
    """(UTC day, gross) of payouts for orders the service saw released since `since`, by the day of
    that release (the payouts table keeps block numbers, not times)."""
    if not agent_uuids:
        return []
    rows = sums.rows(
        conn,
        f"SELECT {_UTC_DAY}, exact_sum(p.amount) {_SETTLED_FROM}{_RELEASED}"
        f" WHERE pr.agent_uuid IN ({_marks(agent_uuids)}) AND h.at >= ? GROUP BY 1 ORDER BY 1",
        (*agent_uuids, since),
    )
    return [((_EPOCH + timedelta(days=int(d))).isoformat(), int(v)) for d, v in rows]


def settled_dated_total(conn: apsw.Connection, agent_uuids: list[str]) -> int:
    """Gross of the payouts that have a release time (see settled_by_day), all time."""
    if not agent_uuids:
        return 0
    rows = sums.rows(
        conn,
        f"SELECT COALESCE(exact_sum(p.amount), 0) {_SETTLED_FROM}{_RELEASED}"
        f" WHERE pr.agent_uuid IN ({_marks(agent_uuids)})",
        tuple(agent_uuids),
    )
    return int(rows[0][0])


@dataclass(frozen=True)
class OnchainAgent:
    agent_uuid: str
    token_id: int | None
    owner: str | None
    self_wallet: str | None
    lifetime_earnings: int
    hire_price: int
    hire_sla: int
    paused: bool
    open_hires: int


def onchain_agents(conn: apsw.Connection, agent_uuids: list[str]) -> list[OnchainAgent]:
    """The agents linked as providers, with their NFT's indexed projection (agents, escrow_jobs)."""
    if not agent_uuids:
        return []
    rows = _rows(
        conn,
        "SELECT pr.agent_uuid, pr.token_id, a.owner, a.self_wallet, COALESCE(a.lifetime_earnings, 0),"
        " COALESCE(a.hire_price, 0), COALESCE(a.hire_sla, 0), COALESCE(a.paused, 0),"
        " (SELECT COUNT(*) FROM escrow_jobs e WHERE e.provider_token_id = pr.token_id AND e.status = 'locked')"
        " FROM providers pr LEFT JOIN agents a ON a.token_id = pr.token_id"
        f" WHERE pr.agent_uuid IN ({_marks(agent_uuids)}) ORDER BY pr.linked_at",
        tuple(agent_uuids),
    )
    return [
        OnchainAgent(str(u), t, o, s, _int(le), _int(hp), int(sla), bool(p), int(n))
        for u, t, o, s, le, hp, sla, p, n in rows
    ]


def _int(value: object) -> int:
    """A projected amount: INTEGER, or 0x-hex TEXT for a uint256 past int64 (core.store.schema)."""
    if isinstance(value, str):
        return int(value, 16)
    return int(cast(int, value))


# ---- orders and decisions of an owner -------------------------------------------------------------


def order_ids_for(conn: apsw.Connection, account_id: str, agent_uuids: list[str], limit: int) -> list[tuple[str, str]]:
    """(order id, role) of the orders an account sees, most recently updated first: as provider (one
    of its agents sells) or as buyer (one of its keys funded the checkout session)."""
    agents = agent_uuids or [""]
    rows = _rows(
        conn,
        "SELECT id, role FROM ("
        f" SELECT o.id, 'provider' AS role, o.updated_at FROM orders o WHERE o.provider_uuid IN ({_marks(agents)})"
        " UNION ALL"
        " SELECT o.id, 'buyer', o.updated_at FROM checkout_sessions s JOIN orders o ON o.session_id = s.id"
        " WHERE s.key_hash IN (SELECT key_hash FROM api_keys WHERE account_id = ?)"
        ") AS seen ORDER BY updated_at DESC, id LIMIT ?",
        (*agents, account_id, limit),
    )
    return [(str(i), str(r)) for i, r in rows]


def order_ids_funded_by(conn: apsw.Connection, key_hash: str, agent_uuid: str, limit: int) -> list[tuple[str, str]]:
    """What an agent-scoped key sees: orders its agent sells and orders this key funded."""
    rows = _rows(
        conn,
        "SELECT id, role FROM ("
        " SELECT o.id, 'provider' AS role, o.updated_at FROM orders o WHERE o.provider_uuid = ?"
        " UNION ALL"
        " SELECT o.id, 'buyer', o.updated_at FROM orders o JOIN checkout_sessions s ON s.id = o.session_id"
        " WHERE s.key_hash = ?"
        ") AS seen ORDER BY updated_at DESC, id LIMIT ?",
        (agent_uuid, key_hash, limit),
    )
    return [(str(i), str(r)) for i, r in rows]


@dataclass(frozen=True)
class DecisionRow:
    audit_id: int
    stream: str
    seq: int
    payload: str
    chain_hash: str
    created_at: float


def decisions_of(conn: apsw.Connection, streams: list[str], limit: int) -> list[DecisionRow]:
    """The latest decision-log entries of these streams ('agent:<uuid>'), newest first: each stream's
    latest through its (stream, seq) index, then merged."""
    out: list[DecisionRow] = []
    for stream in streams:
        rows = _rows(
            conn,
            "SELECT id, stream, seq, payload, chain_hash, created_at FROM audit_log WHERE stream = ?"
            " ORDER BY seq DESC LIMIT ?",
            (stream, limit),
        )
        out.extend(DecisionRow(*r) for r in rows)
    out.sort(key=lambda d: d.audit_id, reverse=True)
    return out[:limit]


# ---- the operator's figures ------------------------------------------------------------------------


def orders_by_status(conn: apsw.Connection) -> dict[str, tuple[int, int]]:
    """status -> (orders, amount)."""
    rows = sums.rows(conn, "SELECT status, COUNT(*), COALESCE(exact_sum(amount), 0) FROM orders GROUP BY status")
    return {str(s): (int(n), int(a)) for s, n, a in rows}


@dataclass(frozen=True)
class SyncRow:
    block_number: int
    head_number: int
    finalized_number: int
    updated_at: float


def sync_state(conn: apsw.Connection, chain_id: int) -> SyncRow | None:
    rows = _rows(
        conn,
        "SELECT block_number, head_number, finalized_number, updated_at FROM sync_state WHERE chain_id = ?",
        (chain_id,),
    )
    return SyncRow(int(rows[0][0]), int(rows[0][1]), int(rows[0][2]), float(rows[0][3])) if rows else None


@dataclass(frozen=True)
class OutboxCounts:
    pending: int
    held: int  # pending rows the breaker holds back now
    dead_letters: int
    oldest_pending_at: float | None


def outbox_counts(conn: apsw.Connection, now: float) -> OutboxCounts:
    pending, held, oldest = _rows(
        conn,
        "SELECT COUNT(*), COUNT(*) FILTER (WHERE held_since IS NOT NULL AND next_attempt_at > ?), MIN(created_at)"
        " FROM outbox WHERE status = 'pending'",
        (now,),
    )[0]
    dead = _rows(conn, "SELECT COUNT(*) FROM outbox WHERE status = 'dead_letter'")[0][0]
    return OutboxCounts(int(pending), int(held), int(dead), None if oldest is None else float(oldest))


@dataclass(frozen=True)
class DeadLetter:
    """A dead letter as the operator sees it: the target's host, never its full URL (a webhook URL's
    path can be its secret), nor the body or the signing secret."""

    event_id: str
    event: str
    source: str
    channel: str
    host: str | None
    attempts: int
    last_status: int | None
    last_error: str | None
    created_at: float


def dead_letters(conn: apsw.Connection, limit: int) -> list[DeadLetter]:
    rows = _rows(
        conn,
        "SELECT event_id, event, source, channel, host, attempts, last_status, last_error, created_at FROM outbox"
        " WHERE status = 'dead_letter' ORDER BY id DESC LIMIT ?",
        (limit,),
    )
    return [DeadLetter(*r) for r in rows]


def recent_anchors(conn: apsw.Connection, chain_id: int, limit: int) -> list[Anchor]:
    """The latest anchors, newest first (core.store.audit.anchors reads them all)."""
    rows = _rows(
        conn,
        "SELECT idx, tree_size, root, anchorer, block_number, tx_hash FROM anchors WHERE chain_id = ?"
        " ORDER BY idx DESC LIMIT ?",
        (chain_id, limit),
    )
    return [Anchor(*r) for r in rows]


def anchor_count(conn: apsw.Connection, chain_id: int) -> int:
    return int(_rows(conn, "SELECT COUNT(*) FROM anchors WHERE chain_id = ?", (chain_id,))[0][0])


def audit_size(conn: apsw.Connection) -> int:
    return int(_rows(conn, "SELECT COALESCE(MAX(id), 0) FROM audit_log")[0][0])


@dataclass(frozen=True)
class Obligations:
    """What the index says each contract owes (micro-USDC): open gateway jobs, locked hires,
    committed marketplace sales, and outstanding withdrawable credits by contract address."""

    gateway_escrowed: int
    escrow_locked: int
    marketplace_committed: int
    credits: dict[str, int]


def obligations(conn: apsw.Connection, chain_id: int) -> Obligations:
    (gateway,) = sums.rows(
        conn,
        "SELECT COALESCE(exact_sum(amount), 0) FROM gateway_jobs"
        " WHERE chain_id = ? AND status IN ('funded', 'disputed')",
        (chain_id,),
    )[0]
    (escrow,) = sums.rows(
        conn,
        "SELECT COALESCE(exact_sum(amount), 0) FROM escrow_jobs WHERE chain_id = ? AND status = 'locked'",
        (chain_id,),
    )[0]
    (market,) = sums.rows(
        conn,
        "SELECT COALESCE(exact_sum(price), 0) FROM listings WHERE chain_id = ? AND status = 'committed'",
        (chain_id,),
    )[0]
    credits = sums.rows(
        conn, "SELECT contract, exact_sum(amount) FROM credits WHERE chain_id = ? GROUP BY contract", (chain_id,)
    )
    return Obligations(int(gateway), int(escrow), int(market), {str(c): int(a) for c, a in credits})
