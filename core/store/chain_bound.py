"""What a fresh chain drops: every table is declared here once, as naming the chain it was written for
(CHAIN_BOUND: dropped when a new chain replaces that one, as `make run` does at each start) or as
outliving it (SURVIVES, with why). tests/integration/test_fresh_chain.py walks the live schema of both
backends and fails on a table declared nowhere, or on one with a chain-naming column declared as
surviving, so a new table cannot be forgotten."""

from __future__ import annotations

from dataclasses import dataclass

from core.store.projections import CHAIN_DERIVED
from core.store.types import Conn


@dataclass(frozen=True)
class Bound:
    """A table whose rows name things of one chain (tokens, listings, jobs, transactions, signatures
    over its contracts): `names` says which columns do; `keep` is the SQL condition of the rows a
    fresh chain must not drop (None: every row goes)."""

    names: str
    keep: str | None = None


#: In delete order: a row goes before the rows it references.
CHAIN_BOUND: dict[str, Bound] = {
    **{table: Bound("chain_id: the indexer's projections and progress of the old chain") for table in CHAIN_DERIVED},
    # the drop: listing ids restart at 1 on a new marketplace, and a listing the old chain held would
    # keep its agent paused and answer for the new chain's listing of the same id
    "drop_handovers": Bound("listing_id, settle_tx (a sale settled on the old chain: its NFT is gone)"),
    "drop_sales": Bound("listing_id, commit_tx, settle_tx"),
    "drop_offers": Bound("listing_id; signature: an EIP-712 Offer over the old marketplace's listing id"),
    "drop_listings": Bound("chain_listing_id, token_id, list_tx, end_tx"),
    "drop_sweep_txs": Bound("chain_listing_id, tx_hash, nonce of the old chain's sweeps"),
    "drop_sweep_backoff": Bound("chain_listing_id"),
    # hire: a standard hire still holding a reservation stays, for the start-up recovery to give its
    # off-chain amount back
    "hire_samples": Bound("job_id (the reputation's evidence of the old chain's jobs)"),
    # an A2A task is its hire job: it goes with the job, and stays with one kept for the recovery
    "a2a_tasks": Bound(
        "id: the old chain's hire job it is",
        keep="id IN (SELECT id FROM hire_jobs WHERE kind = 'standard' AND status = 'reserved')",
    ),
    "hire_jobs": Bound("provider_token_id, created_tx, settle_tx", keep="kind = 'standard' AND status = 'reserved'"),
    "hire_services": Bound("token_id"),
    # escrow checkout
    "order_history": Bound("order_id, tx_hash"),
    "orders": Bound("job_id, provider_token_id, funding_tx, release_tx"),
    "checkout_sessions": Bound("job_id, funding_tx"),
    "catalogue_items": Bound("provider_uuid: a provider of the old chain's token"),
    "providers": Bound("token_id, mint_tx"),
    "used_signatures": Bound("digest: provider messages naming the old chain's job ids"),
}

#: Tables that outlive the chain, and why: accounts, keys, balances and the audit log above all.
SURVIVES: dict[str, str] = {
    "accounts": "accounts",
    "wallet_agents": "agents (their uuid and agl_ wallet are the service's, not the chain's)",
    "api_keys": "keys",
    "balances": "off-chain balances",
    "ledger": "the balances' movements",
    "memories": "agents' memory",
    "shared_brain": "the network's aggregates, history",
    "audit_log": "append-only: the anchored audit log never loses an entry",
    "merkle_nodes": "the audit log's tree",
    "outbox": "webhooks and e-mails already promised (at-least-once)",
    "idempotency_keys": "answers already given (replayed for 24 h)",
    "mcp_quotes": "quotes (expire on their own) and answers already given",
    "mcp_enabled_toolsets": "MCP toolsets a session or key enabled",
    "spend_holds": "spend caps' holds of the day",
    "rate_windows": "rate limits",
    "ipfs_objects": "deliverables, by content",
    "drop_assets": "which wallet holds each deliverable",
    "drop_watches": "who watches an agent: the agent outlives the chain, its next listing is told",
    "email_recipients": "unsubscribes",
    "dashboard_sessions": "signed-in browsers",
    "job_runs": "background jobs' schedules",
    "leases": "which process runs what (they expire on their own)",
    "auth_epoch": "a counter the auth caches follow",
    "reorg_context": "the block being applied: NULL outside the indexer",
    "schema_version": "PostgreSQL's migration counter",
}


def reset_for_fresh_chain(conn: Conn) -> dict[str, int]:
    """Drop what names the old chain, by CHAIN_BOUND; what SURVIVES is not touched. The rows dropped per
    table. Call inside a transaction."""
    dropped: dict[str, int] = {}
    for table, bound in CHAIN_BOUND.items():
        where = "" if bound.keep is None else f" WHERE NOT ({bound.keep})"
        count = conn.execute(f"SELECT count(*) FROM {table}{where}").fetchall()[0][0]  # noqa: S608 (declared names)
        conn.execute(f"DELETE FROM {table}{where}")  # noqa: S608 (declared names)
        dropped[table] = int(count)  # type: ignore[arg-type]
    return dropped
