"""What the operator sees and does: network totals, the indexer's progress, the outbox (pending, held
hosts, dead letters and their reset), anchors with explorer links, the contracts with their USDC
balances against what the index says they owe, and API keys (list, issue, revoke).

Views read the features' stores (core.store.wallets, outbox, audit, dashboard); the writes are the
features' own (core.wallets.issue_key, core.store.outbox.reset_dead_letter, revoke_api_key), run by
the caller in its write transaction. The jobs' state is the job runner's (core.jobs.JobRunner.status).
"""

from __future__ import annotations

import re
from dataclasses import dataclass
from typing import Any

import aiohttp

from core import wallets
from core.errors import ServiceError
from core.keys import Caller, hash_api_key, new_api_key
from core.store import Conn
from core.store import dashboard as store
from core.store import hire as hire_store
from core.store import outbox as outbox_store
from core.store import wallets as wallet_store

#: A key is named in the operator's view by this many leading hex digits of its SHA-256.
KEY_ID_HEX = 12
_KEY_ID_RE = re.compile(r"[0-9a-f]{12,64}")
_UUID_RE = re.compile(r"[0-9a-f]{8}-[0-9a-f]{4}-[0-9a-f]{4}-[0-9a-f]{4}-[0-9a-f]{12}")


@dataclass(frozen=True)
class Network:
    agents: int
    accounts: int
    active_keys: int
    operator_keys: int
    revoked_keys: int
    earned: int
    tolls: int
    orders: dict[str, tuple[int, int]]  # status -> (count, amount)
    hires: dict[tuple[str, str], tuple[int, int]]  # (kind, status) -> (count, amount)

    @property
    def hire_total(self) -> int:
        return sum(n for n, _ in self.hires.values())

    @property
    def hires_in_flight(self) -> int:
        """Standard hires holding their reservation, escrow hires running or settling."""
        return sum(n for (_, status), (n, _) in self.hires.items() if status in hire_store.IN_FLIGHT)


def network(conn: Conn) -> Network:
    agents, earned, tolls = wallet_store.network_totals(conn)
    active, operators, revoked = store.key_counts(conn)
    return Network(
        agents,
        store.count_accounts(conn),
        active,
        operators,
        revoked,
        earned,
        tolls,
        store.orders_by_status(conn),
        hire_store.hire_counts(conn),
    )


def reset_dead_letters(conn: Conn, event_id: str | None, now: float) -> int:
    """Put one dead letter (or every one: None) back in the queue, due now (as `scripts.webhooks reset`);
    404 `dead_letter_not_found` when there is no such dead letter. The caller wakes the dispatcher."""
    if event_id is not None and not re.fullmatch(r"evt_[0-9a-f]{32}", event_id):
        raise ServiceError(400, "invalid_field", "event_id must be evt_ followed by 32 hex digits", param="event_id")
    n = outbox_store.reset_dead_letter(conn, event_id, now)
    if event_id is not None and n == 0:
        raise ServiceError(404, "dead_letter_not_found", f"no dead letter {event_id}", param="event_id")
    return n


@dataclass(frozen=True)
class ContractView:
    name: str
    address: str
    owes: int | None  # what the index says it holds for others (micro-USDC); None: holds none by design
    owes_what: str


def contracts(conn: Conn, chain_id: int, deployed: dict[str, str]) -> list[ContractView]:
    o = store.obligations(conn, chain_id)
    credits = o.credits
    owed: dict[str, tuple[int, str]] = {
        "PaymentGateway": (
            o.gateway_escrowed + credits.get("PaymentGateway", 0),
            "open checkout jobs (funded, disputed)",
        ),
        "AgentEscrow": (o.escrow_locked + credits.get("AgentEscrow", 0), "locked hires"),
        "AgentMarketplace": (
            o.marketplace_committed + credits.get("AgentMarketplace", 0),
            "committed sales awaiting settlement",
        ),
        "AgentPayouts": (credits.get("AgentPayouts", 0), "withdrawable credits of payees that could not receive"),
    }
    out = []
    for name, address in sorted(deployed.items()):
        amount, what = owed.get(name, (None, ""))
        out.append(ContractView(name, address, amount, what))
    return out


async def usdc_balances(
    rpc_url: str, usdc: str, addresses: list[str], timeout: float = 3.0
) -> tuple[int, dict[str, int]] | None:
    """(head block, USDC balance of each address) read from the node in one JSON-RPC batch; None
    when the node does not answer (the view says so; the reason goes nowhere near a page)."""
    selector = "0x70a08231"  # balanceOf(address)
    calls: list[dict[str, Any]] = [{"jsonrpc": "2.0", "id": 0, "method": "eth_blockNumber", "params": []}]
    for i, address in enumerate(addresses, start=1):
        data = selector + address.lower().removeprefix("0x").rjust(64, "0")
        calls.append(
            {"jsonrpc": "2.0", "id": i, "method": "eth_call", "params": [{"to": usdc, "data": data}, "latest"]}
        )
    try:
        async with (
            aiohttp.ClientSession(timeout=aiohttp.ClientTimeout(total=timeout)) as http,
            http.post(rpc_url, json=calls) as resp,
        ):
            replies = await resp.json(content_type=None)
        by_id = {r["id"]: r["result"] for r in replies if isinstance(r, dict) and "result" in r}
        head = int(by_id[0], 16)
        return head, {a: int(by_id[i], 16) for i, a in enumerate(addresses, start=1) if i in by_id}
    except (TimeoutError, aiohttp.ClientError, ValueError, KeyError, TypeError):
        return None


# ---- keys ------------------------------------------------------------------------------------------


def keys(conn: Conn, limit: int = 100) -> list[store.KeyRow]:
    return store.list_keys(conn, limit=limit)


def key_id(key_hash: str) -> str:
    """How the operator's view names a key: the first KEY_ID_HEX hex digits of its SHA-256 (the key
    itself is never stored)."""
    return key_hash[:KEY_ID_HEX]


def issue_key(
    conn: Conn, now: float, *, account_id: str | None = None, agent_uuid: str | None = None
) -> tuple[str, str, str | None]:
    """Issue a key (in the caller's write transaction) scoped to an existing account, one agent, or
    (neither given) a new account: (the key, shown once; account id; agent uuid). Never an operator
    key: those are issued on the operator's machine (`python -m scripts.issue_key --operator`).
    404 for an unknown account or agent."""
    if account_id is not None and agent_uuid is not None:
        raise ServiceError(400, "invalid_field", "give an account or an agent, not both", param="account_id")
    for value, param in ((account_id, "account_id"), (agent_uuid, "agent_uuid")):
        if value is not None and not _UUID_RE.fullmatch(value):
            raise ServiceError(400, "invalid_field", f"{param} must be a lowercase UUID", param=param)
    key = new_api_key()
    try:
        account, agent = wallets.issue_key(
            conn,
            hash_api_key(key),
            now,
            account_id=account_id,
            agent_uuid=agent_uuid,
            new_account=account_id is None and agent_uuid is None,
        )
    except LookupError as exc:
        param = "agent_uuid" if agent_uuid is not None else "account_id"
        raise ServiceError(404, "not_found", str(exc), param=param) from exc
    return key, account, agent


def revoke_key(conn: Conn, key_ref: str, now: float, by: Caller | None) -> store.KeyRow:
    """Revoke the key named by `key_ref` (a unique prefix of its hash, at least KEY_ID_HEX digits) and
    end its dashboard sessions, in the caller's write transaction. Refused: the key the operator is
    signed in with (403 `cannot_revoke_own_key`: that would lock the operator out mid-action), an
    ambiguous or unknown reference (404), a key already revoked (409). `by` None: the operator's own
    machine (`scripts.issue_key --revoke`). The caller clears the API's key caches after the commit
    (a running service's caches let a revoked key pass for at most api.auth's KEY_CACHE_TTL)."""
    if not _KEY_ID_RE.fullmatch(key_ref):
        raise ServiceError(400, "invalid_field", "key must be 12 to 64 lowercase hex digits of its hash", param="key")
    found = store.keys_by_prefix(conn, key_ref)
    if len(found) != 1:
        raise ServiceError(404, "key_not_found", f"no single key {key_ref}", param="key")
    row = found[0]
    if by is not None and row.key_hash == by.key_hash:
        raise ServiceError(
            403, "cannot_revoke_own_key", "sign in with another operator key to revoke this one", param="key"
        )
    if not wallet_store.revoke_api_key(conn, row.key_hash, now):
        raise ServiceError(409, "key_revoked", f"key {key_id(row.key_hash)} is already revoked", param="key")
    store.delete_sessions_of_key(conn, row.key_hash)
    return row
