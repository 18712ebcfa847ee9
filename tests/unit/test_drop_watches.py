"""Who holds a drop watch (core.store.marketplace.WatchRow.holder_agent_uuid), on both backends.

A watch is held by its account or by one agent of it (core.keys.Caller.reach decides what an
agent-scoped key may do with it). Watches written before the column existed do not say which key made
them: the migration gives each the watched agent when that agent is still the account's, and leaves it
to the account otherwise (a watch of another account's agent).
"""

from __future__ import annotations

from core import wallets
from core.keys import hash_api_key, new_api_key
from core.store import Database, pg_ddl, schema, transaction
from core.store import marketplace as store
from core.store.wallets import AgentRow

#: The migration that added holder_agent_uuid.
HOLDER_MIGRATION = next(i for i, m in enumerate(schema.MIGRATIONS) if "holder_agent_uuid" in m)


def test_older_watches_are_held_by_the_watched_agent_when_it_is_the_accounts(database: Database) -> None:
    conn = database.connect()
    with transaction(conn):

        def agent(name: str, account: str | None) -> AgentRow:
            key = None if account is not None else hash_api_key(new_api_key())
            return wallets.register(
                conn, account_id=account, new_key_hash=key, name=name, specialty="email", referral_code=None, now=0
            )

        a1 = agent("a1", None)
        a2 = agent("a2", a1.account_id)
        stranger = agent("x", None)
        # the table as it was before the migration, and watches written then
        conn.execute("ALTER TABLE drop_watches DROP COLUMN holder_agent_uuid")
        for watch_id, watched in (("wat_own", a1), ("wat_sibling", a2), ("wat_stranger", stranger)):
            conn.execute(
                "INSERT INTO drop_watches (id, agent_uuid, account_id, email, webhook_url, webhook_secret, created_at)"
                " VALUES (?, ?, ?, 'w@example.com', NULL, NULL, 0)",
                (watch_id, watched.uuid, a1.account_id),
            )
        # the migration, as each backend's migrate() runs it
        script = schema.MIGRATIONS[HOLDER_MIGRATION]
        conn.execute(script if database.kind == "sqlite" else pg_ddl.translate(script))
    held = {}
    for watch_id in ("wat_own", "wat_sibling", "wat_stranger"):
        row = store.get_watch(conn, watch_id)
        assert row is not None and row.account_id == a1.account_id
        held[watch_id] = row.holder_agent_uuid
    assert held == {"wat_own": a1.uuid, "wat_sibling": a2.uuid, "wat_stranger": None}
    conn.close()
