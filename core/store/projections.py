"""Projections: what each contract event writes into the SQLite tables the API reads.

`apply_events` runs inside the indexer's transaction; every write here lands in a tracked table
(see reorg.TRACKED_TABLES), so a reorg rolls it back exactly. Other components react to final
events only, as followers (core.followers), never to events a reorg may still take back.
"""

from __future__ import annotations

from collections.abc import Callable, Iterable, Sequence
from typing import Any

import apsw

from core.store.backend import backend_of
from core.store.events import EVENT_COLUMNS, Event
from core.store.types import Uint256Hex

INT64_MAX = 2**63 - 1


#: A handler turns one event into one SQL statement and its parameters, on one table; a batch's
#: statements run table by table, consecutive ones with the same SQL as one executemany (the
#: backfill's hot path). A handler's SQL must read and write only its own table.
Statement = tuple[str, tuple[Any, ...]]
Handler = Callable[[int, Event, dict[str, Any]], Statement]


def _n(value: int) -> int | str:
    """An integer for SQLite: uint256 values beyond int64 (user-chosen prices, timestamps) as 0x-hex
    TEXT. Not decimal text: an INTEGER column converts a too-large decimal literal to a lossy REAL."""
    return value if value <= INT64_MAX else Uint256Hex(hex(value))  # PostgreSQL: bound as NUMERIC


#: Handlers whose UPDATE only sets columns to values taken from the event, on the row named by its
#: last two parameters (chain_id, key). Several such writes to one row in one batch collapse into the
#: last of each kind (see apply_events): a price set 1,000 times in a range is written once.
OVERWRITES: set[Handler] = set()


def _overwrite(handler: Handler) -> Handler:
    OVERWRITES.add(handler)
    return handler


# ---- AgentRegistry ----------------------------------------------------------------------


def _agent_registered(chain: int, e: Event, a: dict[str, Any]) -> Statement:
    return (
        "INSERT INTO agents (chain_id, token_id, wallet_id, owner, self_wallet, referrer_token_id,"
        " registered_block, updated_block) VALUES (?, ?, ?, ?, ?, ?, ?, ?)",
        (
            chain,
            a["tokenId"],
            a["walletId"],
            a["owner"],
            a["selfWallet"],
            a["referrerTokenId"] or None,
            e.block_number,
            e.block_number,
        ),
    )


@_overwrite
def _agent_transfer(chain: int, e: Event, a: dict[str, Any]) -> Statement:
    return (
        "UPDATE agents SET owner = ?, updated_block = ? WHERE chain_id = ? AND token_id = ?",
        (a["to"], e.block_number, chain, a["tokenId"]),
    )


@_overwrite
def _self_wallet_changed(chain: int, e: Event, a: dict[str, Any]) -> Statement:
    """A rotation, or a reset to the zero address when the agent changed hands (stored as is: the
    zero address signs nothing, and core.store.orders.signer_for reads it as "no self wallet")."""
    return (
        "UPDATE agents SET self_wallet = ?, updated_block = ? WHERE chain_id = ? AND token_id = ?",
        (a["current"], e.block_number, chain, a["tokenId"]),
    )


@_overwrite
def _pause_changed(chain: int, e: Event, a: dict[str, Any]) -> Statement:
    seller = a["seller"] if a["paused"] else None
    return (
        "UPDATE agents SET paused = ?, seller_while_paused = ?, updated_block = ? WHERE chain_id = ? AND token_id = ?",
        (int(a["paused"]), seller, e.block_number, chain, a["tokenId"]),
    )


@_overwrite
def _earnings_recorded(chain: int, e: Event, a: dict[str, Any]) -> Statement:
    return (
        "UPDATE agents SET lifetime_earnings = ?, updated_block = ? WHERE chain_id = ? AND token_id = ?",
        (_n(a["lifetimeEarnings"]), e.block_number, chain, a["tokenId"]),
    )


# ---- AgentPayouts and credits -------------------------------------------------------------


def _payout(chain: int, e: Event, a: dict[str, Any]) -> Statement:
    referrer = a["referrer"] if int(a["referrer"], 16) else None
    return (
        "INSERT INTO payouts (chain_id, tx_hash, log_index, block_number, ref, token_id, payer, amount, owner_cut,"
        " agent_cut, service_cut, referral_cut, owner, self_wallet, referrer)"
        " VALUES (?, ?, ?, ?, ?, ?, ?, ?, ?, ?, ?, ?, ?, ?, ?)",
        (
            chain,
            e.tx_hash,
            e.log_index,
            e.block_number,
            a["ref"],
            a["tokenId"],
            a["payer"],
            a["amount"],
            a["ownerCut"],
            a["agentCut"],
            a["serviceCut"],
            a["referralCut"],
            a["owner"],
            a["selfWallet"],
            referrer,
        ),
    )


def _credited(chain: int, e: Event, a: dict[str, Any]) -> Statement:
    return (
        "INSERT INTO credits (chain_id, contract, payee, amount) VALUES (?, ?, ?, ?)"
        " ON CONFLICT (chain_id, contract, payee) DO UPDATE SET amount = credits.amount + excluded.amount",
        (chain, e.contract, a["payee"], a["amount"]),
    )


def _credit_withdrawn(chain: int, e: Event, a: dict[str, Any]) -> Statement:
    return (
        "UPDATE credits SET amount = amount - ? WHERE chain_id = ? AND contract = ? AND payee = ?",
        (a["amount"], chain, e.contract, a["payee"]),
    )


# ---- PaymentGateway -------------------------------------------------------------------------


def _gw_funded(chain: int, e: Event, a: dict[str, Any]) -> Statement:
    return (
        "INSERT INTO gateway_jobs (chain_id, job_id, buyer, provider_token_id, amount, deadline, status, funded_tx,"
        " funded_block) VALUES (?, ?, ?, ?, ?, ?, 'funded', ?, ?)",
        (chain, a["jobId"], a["buyer"], a["providerTokenId"], a["amount"], a["deadline"], e.tx_hash, e.block_number),
    )


def _gw_close(status: str) -> Handler:
    def handler(chain: int, e: Event, a: dict[str, Any]) -> Statement:
        provider = a.get("providerAmount", a["amount"] if status == "released" else None)
        attested = a.get("attestedAt")  # chosen by the provider: any uint256
        buyer = a.get("buyerAmount", a["amount"] if status == "refunded" else None)
        return (
            "UPDATE gateway_jobs SET status = ?, cid = coalesce(?, cid), attested_at = coalesce(?, attested_at),"
            " provider_amount = ?, buyer_amount = ?, closed_tx = ?, closed_block = ? WHERE chain_id = ? AND job_id = ?",
            (
                status,
                a.get("cid"),
                None if attested is None else _n(attested),
                provider,
                buyer,
                e.tx_hash,
                e.block_number,
                chain,
                a["jobId"],
            ),
        )

    return handler


def _gw_disputed(chain: int, e: Event, a: dict[str, Any]) -> Statement:
    return ("UPDATE gateway_jobs SET status = 'disputed' WHERE chain_id = ? AND job_id = ?", (chain, a["jobId"]))


# ---- AgentEscrow ------------------------------------------------------------------------------


@_overwrite
def _price_set(chain: int, e: Event, a: dict[str, Any]) -> Statement:
    return (
        "UPDATE agents SET hire_price = ?, hire_sla = ?, updated_block = ? WHERE chain_id = ? AND token_id = ?",
        (_n(a["price"]), a["slaSeconds"], e.block_number, chain, a["tokenId"]),
    )


def _esc_created(chain: int, e: Event, a: dict[str, Any]) -> Statement:
    return (
        "INSERT INTO escrow_jobs (chain_id, job_id, caller, provider_token_id, amount, expires_at, status, created_tx,"
        " created_block) VALUES (?, ?, ?, ?, ?, ?, 'locked', ?, ?)",
        (chain, a["jobId"], a["caller"], a["providerTokenId"], a["amount"], a["expiresAt"], e.tx_hash, e.block_number),
    )


def _esc_close(status: str) -> Handler:
    def handler(chain: int, e: Event, a: dict[str, Any]) -> Statement:
        return (
            "UPDATE escrow_jobs SET status = ?, closed_tx = ?, closed_block = ? WHERE chain_id = ? AND job_id = ?",
            (status, e.tx_hash, e.block_number, chain, a["jobId"]),
        )

    return handler


# ---- AgentMarketplace ---------------------------------------------------------------------------


def _listed(chain: int, e: Event, a: dict[str, Any]) -> Statement:
    return (
        "INSERT INTO listings (chain_id, listing_id, token_id, seller, asking_price, floor_price, earnings_at_listing,"
        " expires_at, status, listed_block, updated_block) VALUES (?, ?, ?, ?, ?, ?, ?, ?, 'listed', ?, ?)",
        (
            chain,
            a["listingId"],
            a["tokenId"],
            a["seller"],
            _n(a["askingPrice"]),
            _n(a["floorPrice"]),
            _n(a["earningsAtListing"]),
            a["expiresAt"],
            e.block_number,
            e.block_number,
        ),
    )


def _committed(chain: int, e: Event, a: dict[str, Any]) -> Statement:
    return (
        "UPDATE listings SET status = 'committed', buyer = ?, price = ?, notice_ends_at = ?, via_offer = ?,"
        " offer_nonce = ?, updated_block = ? WHERE chain_id = ? AND listing_id = ?",
        (
            a["buyer"],
            _n(a["price"]),
            a["noticeEndsAt"],
            int(a["viaOffer"]),
            str(a["offerNonce"]),
            e.block_number,
            chain,
            a["listingId"],
        ),
    )


def _settled(chain: int, e: Event, a: dict[str, Any]) -> Statement:
    return (
        "UPDATE listings SET status = 'settled', seller_amount = ?, fee = ?, updated_block = ?"
        " WHERE chain_id = ? AND listing_id = ?",
        (_n(a["sellerAmount"]), _n(a["fee"]), e.block_number, chain, a["listingId"]),
    )


def _listing_status(status: str) -> Handler:
    def handler(chain: int, e: Event, a: dict[str, Any]) -> Statement:
        return (
            "UPDATE listings SET status = ?, updated_block = ? WHERE chain_id = ? AND listing_id = ?",
            (status, e.block_number, chain, a["listingId"]),
        )

    return handler


# ---- AuditAnchor ----------------------------------------------------------------------------------


def _anchored(chain: int, e: Event, a: dict[str, Any]) -> Statement:
    return (
        "INSERT INTO anchors (chain_id, idx, tree_size, root, anchorer, block_number, tx_hash)"
        " VALUES (?, ?, ?, ?, ?, ?, ?)",
        (chain, a["index"], a["treeSize"], a["root"], a["anchorer"], e.block_number, e.tx_hash),
    )


HANDLERS: dict[str, Handler] = {
    "AgentRegistry.AgentRegistered": _agent_registered,
    "AgentRegistry.Transfer": _agent_transfer,
    "AgentRegistry.SelfWalletChanged": _self_wallet_changed,
    "AgentRegistry.AgentPauseChanged": _pause_changed,
    "AgentRegistry.EarningsRecorded": _earnings_recorded,
    "AgentPayouts.Payout": _payout,
    "PaymentGateway.JobFunded": _gw_funded,
    "PaymentGateway.JobReleased": _gw_close("released"),
    "PaymentGateway.DisputeOpened": _gw_disputed,
    "PaymentGateway.DisputeResolved": _gw_close("resolved"),
    "PaymentGateway.JobReclaimed": _gw_close("refunded"),
    "AgentEscrow.PriceSet": _price_set,
    "AgentEscrow.JobCreated": _esc_created,
    "AgentEscrow.JobReleased": _esc_close("released"),
    "AgentEscrow.JobRefunded": _esc_close("refunded"),
    "AgentMarketplace.Listed": _listed,
    "AgentMarketplace.SaleCommitted": _committed,
    "AgentMarketplace.SaleSettled": _settled,
    "AgentMarketplace.ListingCancelled": _listing_status("cancelled"),
    "AgentMarketplace.ListingExpired": _listing_status("expired"),
    "AuditAnchor.Anchored": _anchored,
}
for _contract in ("AgentPayouts", "PaymentGateway", "AgentEscrow", "AgentMarketplace"):
    HANDLERS[f"{_contract}.PaymentCredited"] = _credited
    HANDLERS[f"{_contract}.CreditWithdrawn"] = _credit_withdrawn
#: (handler, is an overwrite) by (contract, event name): the decoder's Event fields, no key string per event.
_HANDLER_OF: dict[tuple[str, str], tuple[Handler, bool]] = {
    (k.split(".")[0], k.split(".")[1]): (h, h in OVERWRITES) for k, h in HANDLERS.items()
}


def apply_events(
    conn: apsw.Connection,
    chain_id: int,
    events: Sequence[Event],
) -> None:
    """Record `events` (in chain order) and update the projections; call inside a transaction.
    Each event's topics and data are stored verbatim as the node returned them: the audit copy,
    decodable with the contract ABI (indexer.decode), from which `project_events` can rebuild every
    projection without the node (indexer.rebuild)."""
    backend_of(conn).record_events(conn, chain_id, [e[:EVENT_COLUMNS] for e in events])
    project_events(conn, chain_id, events)


def project_events(conn: apsw.Connection, chain_id: int, events: Sequence[Event]) -> None:
    """Update the projections for `events` (in chain order), already recorded; call inside a transaction."""
    pending = _Pending()
    add = pending.add_statement
    routes = _HANDLER_OF
    for e in events:
        route = routes.get((e.contract, e.name))
        if route is not None:
            statement = route[0](chain_id, e, e.args)
            add(statement, route[1], _tables.get(statement[0]) or _table_of(statement[0]))
    pending.flush(conn)


class _Pending:
    """Statements not yet run, in order; `flush` runs them table by table, consecutive ones with the
    same SQL as one executemany.

    An overwrite (see OVERWRITES) replaces the earlier overwrite of the same kind on the same row and
    moves to the end: running each kind's last write, in the order of those last writes, leaves every
    column as running them all would (each column's last writer stays last). Any other statement on a
    table pins the overwrites queued for that table before it (an INSERT must precede the UPDATEs of
    its row; a statement reading a column must see the writes before it)."""

    def __init__(self) -> None:
        #: each table's statements in order (None: replaced by a later overwrite), tables in the order
        #: they were first written
        self.tables: dict[str, list[Statement | None]] = {}
        self.overwrites: dict[tuple[str, tuple[Any, ...], int], int] = {}  # -> index in its table's list
        self.generation: dict[str, int] = {}  # table -> statements that pinned its overwrites so far

    @property
    def statements(self) -> list[Statement | None]:
        """Every queued statement, table by table (the order `flush` runs them in)."""
        return [statement for queued in self.tables.values() for statement in queued]

    def add(self, sql: str, params: tuple[Any, ...], overwrite: bool) -> None:
        self.add_statement((sql, params), overwrite, _table_of(sql))

    def add_statement(self, statement: Statement, overwrite: bool, table: str) -> None:
        """`add` for a statement on `table` (the one its SQL writes)."""
        queued = self.tables.get(table)
        if queued is None:
            queued = self.tables[table] = []
        if overwrite:
            key = (statement[0], statement[1][-2:], self.generation.get(table, 0))
            replaced = self.overwrites.get(key)
            if replaced is not None:
                queued[replaced] = None
            self.overwrites[key] = len(queued)
        elif self.overwrites:  # later overwrites of this table get keys that no earlier one has
            self.generation[table] = self.generation.get(table, 0) + 1
        queued.append(statement)

    def flush(self, conn: apsw.Connection) -> None:
        """Run the statements table by table (each table's in their order), consecutive ones with the
        same SQL as one executemany. Statements on different tables are independent (the handlers'
        SQL reads and writes only its own table, and the undo journal restores each row on its own),
        as the overwrites' reordering already relies on; a hire cycle interleaves three tables per
        event, which run one at a time made one executemany of one row per event."""
        for queued in self.tables.values():
            batch_sql = ""
            batch: list[tuple[Any, ...]] = []
            for statement in queued:
                if statement is None:
                    continue
                sql, params = statement
                if sql != batch_sql:
                    if batch:
                        conn.executemany(batch_sql, batch)
                    batch_sql, batch = sql, []
                batch.append(params)
            if batch:
                conn.executemany(batch_sql, batch)
        self.tables.clear()
        self.overwrites.clear()


_tables: dict[str, str] = {}


def _table_of(sql: str) -> str:
    """The table an INSERT INTO / UPDATE statement writes (handlers' SQL is a few constants)."""
    table = _tables.get(sql)
    if table is None:
        words = sql.split(None, 3)
        table = _tables[sql] = words[2] if words[0] == "INSERT" else words[1]
    return table


# ---- sync state and block window (used by the indexer) -----------------------------------------


def get_tip(conn: apsw.Connection, chain_id: int) -> tuple[int, str, int, int] | None:
    """(block_number, block_hash, head_number, finalized_number) of the checkpoint, or None."""
    row = conn.execute(
        "SELECT block_number, block_hash, head_number, finalized_number FROM sync_state WHERE chain_id = ?",
        (chain_id,),
    ).fetchone()
    return None if row is None else (row[0], row[1], row[2], row[3])


def tip_updated_at(conn: apsw.Connection, chain_id: int) -> float | None:
    """When the checkpoint last moved (the indexer's clock), or None before the first."""
    row = conn.execute("SELECT updated_at FROM sync_state WHERE chain_id = ?", (chain_id,)).fetchone()
    return None if row is None else float(row[0])


def set_tip(
    conn: apsw.Connection, chain_id: int, number: int, block_hash: str, head: int, finalized: int, now: float
) -> None:
    conn.execute(
        "INSERT INTO sync_state (chain_id, block_number, block_hash, head_number, finalized_number, updated_at)"
        " VALUES (?, ?, ?, ?, ?, ?) ON CONFLICT (chain_id) DO UPDATE SET block_number = excluded.block_number,"
        " block_hash = excluded.block_hash, head_number = excluded.head_number,"
        " finalized_number = excluded.finalized_number, updated_at = excluded.updated_at",
        (chain_id, number, block_hash, head, finalized, now),
    )


def sync_states(conn: apsw.Connection) -> list[tuple[Any, ...]]:
    """(chain_id, block, final, head, updated_at, halted, halted_at) of every checkpoint (operators' view)."""
    return conn.execute(
        "SELECT chain_id, block_number, finalized_number, head_number, updated_at, halted, halted_at FROM sync_state"
    ).fetchall()


def get_halt(conn: apsw.Connection, chain_id: int) -> tuple[str, float] | None:
    """(reason, since) when the indexer of `chain_id` is halted for an operator, else None."""
    row = conn.execute(
        "SELECT halted, halted_at FROM sync_state WHERE chain_id = ? AND halted IS NOT NULL", (chain_id,)
    ).fetchone()
    return None if row is None else (str(row[0]), float(row[1]))


def set_halt(conn: apsw.Connection, chain_id: int, reason: str, now: float) -> None:
    """Halt the indexer of `chain_id` (an earlier halt keeps its reason and time)."""
    conn.execute(
        "UPDATE sync_state SET halted = ?, halted_at = ? WHERE chain_id = ? AND halted IS NULL",
        (reason, now, chain_id),
    )


def clear_halt(conn: apsw.Connection, chain_id: int) -> bool:
    """Lift a halt (an operator's resume); False when there was none."""
    conn.execute(
        "UPDATE sync_state SET halted = NULL, halted_at = NULL WHERE chain_id = ? AND halted IS NOT NULL", (chain_id,)
    )
    return bool(conn.changes())


def add_blocks(conn: apsw.Connection, chain_id: int, blocks: Iterable[tuple[int, str, str, int]]) -> None:
    """Remember (number, hash, parent_hash, timestamp) of canonical blocks."""
    conn.executemany(
        "INSERT INTO blocks (chain_id, number, hash, parent_hash, timestamp) VALUES (?, ?, ?, ?, ?)"
        " ON CONFLICT (chain_id, number) DO UPDATE SET hash = excluded.hash, parent_hash = excluded.parent_hash,"
        " timestamp = excluded.timestamp",
        [(chain_id, *b) for b in blocks],
    )


def stored_hashes(conn: apsw.Connection, chain_id: int, low: int, high: int) -> dict[int, str]:
    rows = conn.execute(
        "SELECT number, hash FROM blocks WHERE chain_id = ? AND number BETWEEN ? AND ?", (chain_id, low, high)
    )
    return {int(n): str(h) for n, h in rows}


def lowest_stored_block(conn: apsw.Connection, chain_id: int) -> int | None:
    row = conn.execute("SELECT min(number) FROM blocks WHERE chain_id = ?", (chain_id,)).fetchone()
    return None if row is None else row[0]


#: Projection tables, for comparisons (reorg and kill tests) and operators' checks.
PROJECTION_TABLES = ("agents", "payouts", "gateway_jobs", "escrow_jobs", "listings", "credits", "anchors", "events")


#: Everything the indexer derives from the chain it follows: its projections and its own progress.
CHAIN_DERIVED = (*PROJECTION_TABLES, "sync_state", "blocks", "reorg_undo", "event_cursors")


#: The projections proper: what `project_events` derives from the `events` table alone.
EVENT_PROJECTIONS = tuple(t for t in PROJECTION_TABLES if t != "events")


def clear_for_rebuild(conn: apsw.Connection, chain_id: int, final: int) -> None:
    """Before projecting the recorded events again: empty the projections and the reorg journal, and
    drop the events of blocks above `final` (they are recorded again, journaled, so a reorg still
    undoes them). Call inside a transaction, with the journal off (core.store.reorg.set_block(None))."""
    for table in EVENT_PROJECTIONS:
        conn.execute(f"DELETE FROM {table} WHERE chain_id = ?", (chain_id,))  # noqa: S608 (constant names)
    conn.execute("DELETE FROM reorg_undo")
    conn.execute("DELETE FROM events WHERE chain_id = ? AND block_number > ?", (chain_id, final))


def reset_chain_data(conn: apsw.Connection) -> None:
    """Forget everything derived from the chain, for re-indexing the same chain from its deploy block
    (a fresh chain drops more: core.store.chain_bound). Call inside a transaction."""
    for table in CHAIN_DERIVED:
        conn.execute(f"DELETE FROM {table}")  # noqa: S608 (constant table names)


def dump(conn: apsw.Connection) -> dict[str, list[tuple[Any, ...]]]:
    """Every row of every projection table, in primary-key order (rowids excluded)."""
    out: dict[str, list[tuple[Any, ...]]] = {}
    for table in PROJECTION_TABLES:
        rows = conn.execute(f"SELECT * FROM {table}")  # noqa: S608 (constant table names)
        out[table] = sorted((tuple(r) for r in rows), key=repr)
    return out


# ---- followers' cursors (indexer.followers) --------------------------------------------------------


def event_cursor(conn: apsw.Connection, name: str, chain_id: int) -> int:
    """The last block whose events reader `name` has applied (-1: none)."""
    rows = conn.execute(
        "SELECT block_number FROM event_cursors WHERE name = ? AND chain_id = ?", (name, chain_id)
    ).fetchall()
    return int(rows[0][0]) if rows else -1  # type: ignore[arg-type]


def set_event_cursor(conn: apsw.Connection, name: str, chain_id: int, block: int) -> None:
    conn.execute(
        "INSERT INTO event_cursors (name, chain_id, block_number, log_index) VALUES (?, ?, ?, -1)"
        " ON CONFLICT (name, chain_id) DO UPDATE SET block_number = excluded.block_number",
        (name, chain_id, block),
    )


def stored_events(
    conn: apsw.Connection,
    chain_id: int,
    after: tuple[int, int],
    upto: int,
    *,
    contracts: Sequence[str] | None = None,
    limit: int | None = None,
) -> list[tuple[Any, ...]]:
    """The recorded events after (block, log index) `after` in blocks up to `upto`, in chain order (of
    `contracts` only, when given; at most `limit`), as their rows' first eight columns, the fields
    indexer.decode.decode_stored reads. `after` = (block, -1) starts at that block's first event."""
    where = "chain_id = ? AND (block_number, log_index) > (?, ?) AND block_number <= ?"
    params: list[Any] = [chain_id, after[0], after[1], upto]
    if contracts is not None:
        where += f" AND contract IN ({','.join('?' * len(contracts))})"
        params += contracts
    tail = ""
    if limit is not None:
        tail, params = " LIMIT ?", [*params, limit]
    return conn.execute(
        "SELECT block_number, block_hash, tx_hash, log_index, contract, event, topics, data FROM events"  # noqa: S608
        f" WHERE {where} ORDER BY block_number, log_index{tail}",
        params,
    ).fetchall()
