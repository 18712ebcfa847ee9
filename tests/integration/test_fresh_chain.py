"""`make run` starts a new local chain each time while the database stays: what names the old chain is
dropped by one declaration (core.store.chain_bound), what outlives it is left exactly as it was.

The walk: every table of the live schema (SQLite and PostgreSQL) is declared once, and every table with
a column naming chain things (chain id, token, listing or job id, transaction, block, nonce) is declared
chain-bound. The effect, on real anvils: after a fresh chain an agent listed on the old one spends
again, the old listing is gone from every read, and the new chain's listing ids (1, 2, ...) are usable.
"""

from __future__ import annotations

import asyncio
import re
from pathlib import Path
from typing import Any

from core.anvil import Anvil
from core.chain import connect
from core.store import Conn, Database, kind_of, transaction
from core.store import connect as store_connect
from core.store.chain_bound import CHAIN_BOUND, SURVIVES, reset_for_fresh_chain
from tests.integration.chainkit import System, deploy_dev_system
from tests.integration.drop_kit import BASE, DAY, USDC, World, running, seller_pair

#: Column names that name things of one chain.
NAMES_THE_CHAIN = re.compile(r"^(chain_id|.*token_id|.*listing_id|job_id|tx_hash|.*_tx|block_number|.*_block|nonce)$")
#: A surviving table whose column only looks chain-bound: the block the indexer is applying, NULL
#: whenever the indexer is not inside a block.
LOOKS_BOUND_BUT_IS_NOT = {"reorg_context"}
#: The PostgreSQL backend's own table (SQLite counts migrations in PRAGMA user_version).
POSTGRESQL_ONLY = {"schema_version"}


def live_tables(conn: Conn) -> dict[str, list[str]]:
    """Every table of the connected database and its columns, from the backend's catalog."""
    if kind_of(conn) == "sqlite":
        names = [str(r[0]) for r in conn.execute("SELECT name FROM sqlite_master WHERE type = 'table'")]
        return {n: [str(c[1]) for c in conn.execute(f"PRAGMA table_info({n})")] for n in names}
    out: dict[str, list[str]] = {}
    for table, column in conn.execute(
        "SELECT table_name, column_name FROM information_schema.columns WHERE table_schema = current_schema()"
        " ORDER BY table_name, ordinal_position"
    ):
        out.setdefault(str(table), []).append(str(column))
    return out


def test_every_table_is_declared_and_every_chain_naming_one_is_dropped(database: Database) -> None:
    conn = database.connect()
    try:
        tables = live_tables(conn)
        declared = CHAIN_BOUND.keys() | SURVIVES.keys()
        assert not CHAIN_BOUND.keys() & SURVIVES.keys()
        assert set(tables) - declared == set(), "declare each new table in core.store.chain_bound"
        assert declared - set(tables) <= POSTGRESQL_ONLY
        naming = {t for t, cols in tables.items() if any(NAMES_THE_CHAIN.match(c) for c in cols)}
        assert naming - LOOKS_BOUND_BUT_IS_NOT <= CHAIN_BOUND.keys(), naming - CHAIN_BOUND.keys()
        for table, bound in CHAIN_BOUND.items():  # each declared rule is valid SQL on this backend
            where = "" if bound.keep is None else f" WHERE {bound.keep}"
            conn.execute(f"SELECT count(*) FROM {table}{where}").fetchall()  # noqa: S608
        with transaction(conn):
            assert set(reset_for_fresh_chain(conn)) == CHAIN_BOUND.keys()
    finally:
        conn.close()


def _rows(db: Any, table: str) -> list[str]:
    return sorted(repr(tuple(r)) for r in db.execute(f"SELECT * FROM {table}"))  # noqa: S608


def _surviving(db: Any) -> dict[str, list[str]]:
    return {t: _rows(db, t) for t in live_tables(db) if t in SURVIVES}


def test_a_fresh_chain_frees_the_agents_and_listing_ids_of_the_old_one(system: System, tmp_path: Path) -> None:
    old: dict[str, Any] = {}

    async def on_old_chain(w: World) -> None:
        # agent A: listed first (listing #1), bought and settled (a sale, its sweep, a handover)
        key_a, wallet_a, _ = await w.register("sold")
        token_a = await w.mint(key_a, wallet_a, system.users[0], seller_pair(0)[1])
        sold = await w.list(key_a, wallet_a, system.users[0], token_a, 100 * USDC, 30 * USDC)
        w.fund(system.users[1], 100 * USDC)
        w.buy(system.users[1], sold["chainListingId"])
        await w.until_projected(sold["chainListingId"], "committed")
        system.advance(7 * DAY + 1)
        await w.sweep_when_due("settle", sold["chainListingId"])
        await w.settled_state(sold["id"], "sold")
        # agent B: earns, listed (#2) with an offer and a watcher: paused
        key_b, wallet_b, _ = await w.register("listed")
        await w.ok("POST", "/api/agents/earn", {"agentId": wallet_b, "amount": 100, "source": "shop"}, key=key_b)
        token_b = await w.mint(key_b, wallet_b, system.users[2], seller_pair(2)[1])
        listing = await w.list(key_b, wallet_b, system.users[2], token_b, 500 * USDC, 30 * USDC)
        assert listing["chainListingId"] == 2
        w.fund(system.users[3], 300 * USDC)
        await w.ok("POST", f"{BASE}/offer", w.offer_body(listing, system.users[3], 300 * USDC, 1), 201, key=key_a)
        await w.ok("POST", f"{BASE}/watch", {"agentId": wallet_b, "email": "w@example.com"}, 201, key=key_a)
        r = await w.call("POST", "/api/agents/spend", {"agentId": wallet_b, "amount": 1, "destination": "x"}, key=key_b)
        assert (r.status, r.body["code"]) == (409, "agent_paused")
        await w.until(lambda: w.listing_state(listing["id"]) == "active" and bool(_rows(w.db, "listings")))
        old.update(key=key_b, wallet=wallet_b, listing=listing["id"])

    async def on_new_chain(w: World, new_system: System) -> None:
        key, wallet = old["key"], old["wallet"]
        await w.ok("POST", "/api/agents/spend", {"agentId": wallet, "amount": 1, "destination": "x"}, key=key)
        r = await w.call("GET", BASE, params={"agentId": wallet})
        assert (r.status, r.body["code"]) == (404, "listing_not_found")
        r = await w.call("GET", BASE, params={"listingId": old["listing"]})
        assert (r.status, r.body["code"]) == (404, "listing_not_found")
        assert (await w.ok("GET", BASE))["total"] == 0
        # the new chain's first listing is #1 again, and it is this agent's
        seller = new_system.users[2]
        token = await w.mint(key, wallet, seller, seller_pair(2)[1])
        listing = await w.list(key, wallet, seller, token, 500 * USDC, 30 * USDC)
        assert (listing["chainListingId"], listing["state"], listing["agentPaused"]) == (1, "active", True)
        assert (await w.ok("GET", BASE, params={"agentId": wallet}))["listing"]["id"] == listing["id"]

    async def scenario() -> None:
        async with running(tmp_path, system) as w:
            await on_old_chain(w)
        db = store_connect(tmp_path / "ledger.db")
        try:
            before = _surviving(db)
            filled = {t for t in CHAIN_BOUND if _rows(db, t)}
            drop_tables = {t for t in CHAIN_BOUND if t.startswith("drop_")}
            assert drop_tables - {"drop_sweep_backoff"} <= filled  # the walk below proves something
            with transaction(db):
                dropped = reset_for_fresh_chain(db)
            assert {t for t, n in dropped.items() if n} == filled
            for table, bound in CHAIN_BOUND.items():
                rest = "" if bound.keep is None else f" WHERE NOT ({bound.keep})"
                assert db.execute(f"SELECT count(*) FROM {table}{rest}").fetchall()[0][0] == 0, table  # noqa: S608
            assert _surviving(db) == before  # balances, keys, the audit log...: untouched
        finally:
            db.close()
        with Anvil() as node:  # what `make run` does next: a new chain, the same deployer
            new_system = deploy_dev_system(connect(node.rpc_url))
            assert new_system.market.address == system.market.address
            async with running(tmp_path, new_system) as w:
                await on_new_chain(w, new_system)

    asyncio.run(scenario())
