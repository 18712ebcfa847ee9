"""The agent wallet API under /api/agents: register, earn (single and batch), spend, compound,
balance, identity, memory, brain, run records and the network totals; self-serve keys at
/api/keys.

Amounts are decimal USDC numbers in JSON (parsed as Decimal, answered as numbers) and integers
of micro-USDC inside. Value-moving POSTs run under api.idempotency; their writes commit with
synchronous=FULL (the connection is opened durable) before the response is sent.
"""

from __future__ import annotations

import functools
import json
from collections.abc import Callable
from decimal import Decimal
from typing import Any

from aiohttp import web

from api import idempotency
from api.auth import (
    Caller,
    FreshAgents,
    agent_for,
    remember_agents,
)
from api.errors import JSON_BODY, ApiError
from api.http import RawJson, encode, iso, usdc
from api.models import parse_body, parse_query
from api.operation import Call, Quoted, Reply, parse_toolsets
from api.policy import serve
from api.wallets.models import (
    AgentQuery,
    BrainUpdateRequest,
    CompoundRequest,
    EarnBatchRequest,
    KeyRequest,
    MemoryQuery,
    MemoryWriteRequest,
    RegisterRequest,
    RunRequest,
    SpendRequest,
    parse_earn,
)
from core import wallets
from core.keys import hash_api_key, new_api_key
from core.money import usdc_text
from core.services import Services
from core.store import Conn
from core.store import wallets as store
from core.store.wallets import AgentRow, BalanceRow, get_balance


def _ok(payload: dict[str, Any], status: int = 200) -> tuple[int, bytes]:
    return status, encode(payload).encode()


_iso = iso


def _reply(payload: dict[str, Any], status: int = 200) -> Reply:
    return Reply(status, encode(payload).encode())


def _agent_json(agent: AgentRow, balance: int) -> dict[str, Any]:
    return {
        "id": agent.uuid,
        "wallet": agent.wallet,
        "name": agent.name,
        "specialty": agent.specialty,
        "balance": usdc(balance),
        "referral_code": agent.referral_code,
    }


# ---- runs (the operations without HTTP) and their handlers ----------------------------------------


def _caller(call: Call) -> Caller:
    assert call.caller is not None, "an authenticated operation's call carries its caller"
    return call.caller


async def _execute(services: Services, call: Call, work: idempotency.TxWork, *, savepoint: bool = True) -> Reply:
    hook = services.hooks.before_write
    before = None if hook is None or call.request is None else functools.partial(hook, call.request)
    owner = "anonymous" if call.caller is None else call.caller.key_hash
    return await idempotency.execute_call(
        services.writer,
        call,
        owner=owner,
        now=services.clock(),
        work=work,
        before=before,
        savepoint=savepoint,
    )


#: The transactional part of an authenticated value-moving POST: (conn, caller, body, now) -> (status, body).
WriteWork = Callable[[Conn, Caller, bytes, float], tuple[int, bytes]]


def _bind(work: WriteWork, caller: Caller, body: bytes, now: float, conn: Conn) -> tuple[int, bytes]:
    return work(conn, caller, body, now)


async def _authenticated_write(services: Services, call: Call, work: WriteWork, *, savepoint: bool = True) -> Reply:
    """The common path of an authenticated value-moving POST: run `work` under the call's
    Idempotency-Key in the next group commit. The body is parsed inside `work`, so a 4xx is stored
    under the key like any other answer. savepoint=False for a `work` that writes nothing when it
    raises (idempotency.execute)."""
    caller = _caller(call)
    now = services.clock()
    return await _execute(services, call, functools.partial(_bind, work, caller, call.body, now), savepoint=savepoint)


async def run_register(services: Services, call: Call) -> Reply:
    caller = call.caller
    if caller is None and call.idempotency_key is not None:
        raise ApiError(  # well-formed, but this combination cannot be honoured: 422, not 400
            422,
            "idempotency_unsupported",
            "registration without an API key returns a new key and cannot be replayed; retry without "
            f"{idempotency.HEADER} or register with an account key",
            param=idempotency.HEADER,
        )
    body = call.body
    api_key = new_api_key() if caller is None else None
    now = services.clock()

    def work(conn: Conn) -> tuple[int, bytes]:
        req = parse_body(RegisterRequest, body)
        agent = wallets.register(
            conn,
            account_id=None if caller is None else caller.account_id,
            new_key_hash=None if api_key is None else hash_api_key(api_key),
            name=req.name,
            specialty=req.specialty,
            referral_code=req.referralCode,
            now=now,
        )
        payload: dict[str, Any] = {"success": True, "agent": _agent_json(agent, 0)}
        if api_key is not None:
            payload["api_key"] = api_key
        return _ok(payload, 201)

    return await _execute(services, call, work)


def _earn_work(
    conn: Conn,
    caller: Caller,
    body: bytes,
    now: float,
    fresh: FreshAgents,
    decoded: dict[str, Any] | None = None,
) -> tuple[int, bytes]:
    """Every check (body, agent, totals) comes before the first write, and the balance update
    refuses without writing: so it runs without a savepoint of its own (GroupCommitter.run)."""
    wallet, amount, source = parse_earn(body, decoded)
    agent = agent_for(conn, caller, wallet, fresh=fresh)
    r = wallets.earn(conn, agent, amount, source, now)
    return 200, _earn_text(agent.wallet, r).encode()


async def run_earn(services: Services, call: Call) -> Reply:
    fresh = FreshAgents()
    # The body api.errors already decoded (HTTP: once per request, on the hot path); a call that did
    # not come through HTTP (an MCP tool) is decoded by parse_earn under the same rule.
    decoded = call.request.get(JSON_BODY) if call.request is not None else None
    work = functools.partial(_earn_work, fresh=fresh, decoded=decoded)
    reply = await _authenticated_write(services, call, work, savepoint=False)
    writing = services.writer.conn
    if fresh and reply.status == 200 and writing is not None:  # committed: the agent can come from the cache
        remember_agents(writing, fresh)
    return reply


_json_str = json.encoder.encode_basestring_ascii  # what json.dumps does to a str


def _earn_text(wallet: str, r: wallets.EarnResult) -> str:
    """The earn body (every field of both shapes), written directly: it is the hottest response.
    Equal to encode() of the same fields (the tests hold them equal)."""
    bal = r.balance
    amount, toll, net, referral = (
        usdc_text(r.amount),
        usdc_text(r.service_cut),
        usdc_text(r.net),
        usdc_text(r.referral_cut),
    )
    owner, agent = usdc_text(r.owner_cut), usdc_text(r.agent_cut)
    if r.referral_cut:
        message = (
            f"{amount} USDC earned, split: owner {owner} (96.5%) + agent {agent} (1%) + referral {referral} "
            f"(0.5%) + service {toll} (2% toll); {net} credited to {wallet}"
        )
    else:
        message = (
            f"{amount} USDC earned, split: owner {owner} (97%) + agent {agent} (1%) + service {toll} (2% toll); "
            f"{net} credited to {wallet}"
        )
    return (
        f'{{"success":true,"balance":{usdc_text(bal.owner_balance + bal.self_balance)},"toll":{toll},"net":{net},'
        f'"ownerCut":{owner},"agentCut":{agent},"serviceCut":{toll},'
        f'"referralCut":{referral},"ownerBalance":{usdc_text(bal.owner_balance)},'
        f'"agentSelfBalance":{usdc_text(bal.self_balance)},"transactionId":{r.ledger_id},"message":{_json_str(message)}}}'
    )


async def run_earn_batch(services: Services, call: Call) -> Reply:
    """POST /api/agents/earn/batch: every payment credited as POST /earn would, in ONE transaction:
    any refused item (validation, an agent the key may not act for, a total limit) answers its
    error with `param` naming it (e.g. `payments[3].amount`) and nothing is written. Items are
    applied in order; `results[i]` is item i's earn body (balances as of that item)."""

    def work(conn: Conn, caller: Caller, body: bytes, now: float) -> tuple[int, bytes]:
        req = parse_body(EarnBatchRequest, body)
        results = []
        for i, p in enumerate(req.payments):
            agent = agent_for(conn, caller, p.agentId, param=f"payments[{i}].agentId")
            try:
                r = wallets.earn(conn, agent, p.amount, p.source, now)
            except wallets.WalletError as exc:
                raise ApiError(
                    exc.status,
                    exc.code,
                    f"payments[{i}]: {exc.message}",
                    param=f"payments[{i}].{exc.param}",
                ) from exc
            results.append(RawJson(_earn_text(agent.wallet, r)))
        return _ok({"success": True, "count": len(results), "results": results})

    return await _authenticated_write(services, call, work)


async def run_compound(services: Services, call: Call) -> Reply:
    """POST /api/agents/compound: move reinvestPercent % (default 20) of the spendable balance into
    the reinvested bucket (see core.wallets.compound); `moved` is the amount moved."""

    def work(conn: Conn, caller: Caller, body: bytes, now: float) -> tuple[int, bytes]:
        req = parse_body(CompoundRequest, body)
        agent = agent_for(conn, caller, req.agentId)
        r = wallets.compound(conn, agent, req.reinvestPercent, now)
        return _ok(
            {
                "success": True,
                "balance": usdc(r.balance.balance),
                "reinvested": usdc(r.balance.reinvested),
                "moved": usdc(r.moved),
                "ownerBalance": usdc(r.balance.owner_balance),
                "agentSelfBalance": usdc(r.balance.self_balance),
                "transactionId": r.ledger_id,
            }
        )

    return await _authenticated_write(services, call, work)


async def quote_spend(services: Services, call: Call) -> Quoted:
    """What a spend would move (nothing is written): the amount, from the agent's wallet to the
    destination; 404 for an agent the key may not act for; past the balance, its refusal."""
    req = parse_body(SpendRequest, call.body)

    def read(db: Conn) -> Quoted:
        agent = agent_for(db, _caller(call), req.agentId)
        bal = get_balance(db, agent.uuid)
        return Quoted(
            req.amount,
            agent.wallet,
            req.destination,
            f"spend {usdc_text(req.amount)} USDC from {agent.wallet} to {req.destination}",
            {"balance": usdc_text(bal.balance), "balance_after": usdc_text(max(0, bal.balance - req.amount))},
            refusal=wallets.shortfall(bal.balance, req.amount),
        )

    return await services.reads.run(read)


async def run_spend(services: Services, call: Call) -> Reply:
    def work(conn: Conn, caller: Caller, body: bytes, now: float) -> tuple[int, bytes]:
        req = parse_body(SpendRequest, body)
        agent = agent_for(conn, caller, req.agentId)
        r = wallets.spend(conn, agent, req.amount, req.destination, now)
        return _ok(
            {
                "success": True,
                "spent": usdc(r.amount),
                "destination": req.destination,
                "balance": usdc(r.balance.balance),
                "ownerBalance": usdc(r.balance.owner_balance),
                "agentSelfBalance": usdc(r.balance.self_balance),
                "transactionId": r.ledger_id,
            }
        )

    return await _authenticated_write(services, call, work)


def _balance_json(bal: BalanceRow, memory_entries: int, settled: int) -> dict[str, Any]:
    return {
        "balance": usdc(bal.balance),
        "ownerBalance": usdc(bal.owner_balance),
        "agentSelfBalance": usdc(bal.self_balance),
        "reinvested": usdc(bal.reinvested),
        "totalEarned": usdc(bal.total_earned + settled),
        "reportedEarned": usdc(bal.total_earned),
        "settledEarned": usdc(settled),
        "totalTransactions": bal.tx_count,
        "memoryEntries": memory_entries,  # every key, the service's brain: and run: keys included
    }


async def run_balance(services: Services, call: Call) -> Reply:
    def read(db: Conn) -> Reply:
        q = parse_query(AgentQuery, dict(call.query))
        agent = agent_for(db, _caller(call), q.agentId)
        bal = get_balance(db, agent.uuid)
        return _reply(_balance_json(bal, store.count_memories(db, agent.uuid), store.settled_earnings(db, agent.uuid)))

    return await services.reads.run(read)


async def run_identity(services: Services, call: Call) -> Reply:
    def read(db: Conn) -> Reply:
        q = parse_query(AgentQuery, dict(call.query))
        agent = agent_for(db, _caller(call), q.agentId)
        return _reply({"uuid": agent.uuid, "wallet": agent.wallet})

    return await services.reads.run(read)


# ---- memory ---------------------------------------------------------------------------------


def _memory_json(m: store.MemoryRow) -> dict[str, Any]:
    return {"key": m.key, "value": RawJson(m.value), "createdAt": _iso(m.created_at), "updatedAt": _iso(m.updated_at)}


async def run_memory_write(services: Services, call: Call) -> Reply:
    """POST /api/agents/memory: upsert {key: value}; limits in api.models.MemoryWriteRequest."""

    def work(conn: Conn, caller: Caller, body: bytes, now: float) -> tuple[int, bytes]:
        req = parse_body(MemoryWriteRequest, body)
        agent = agent_for(conn, caller, req.agentId)
        m = wallets.put_memory(conn, agent, req.key, encode(req.value), now)
        return _ok({"success": True, "memory": _memory_json(m)})

    return await _authenticated_write(services, call, work)


async def run_memory_read(services: Services, call: Call) -> Reply:
    """GET /api/agents/memory?agentId=&query=&limit=&cursor=: the agent's entries ordered by key,
    `query` a case-sensitive substring of the key, `limit` 1-200 (default 50); nextCursor is the
    last key returned when more follow, else null."""

    def read(db: Conn) -> Reply:
        q = parse_query(MemoryQuery, dict(call.query))
        agent = agent_for(db, _caller(call), q.agentId)
        rows = store.list_memories(db, agent.uuid, q.query, q.cursor, q.limit + 1)
        more = len(rows) > q.limit
        rows = rows[: q.limit]
        return _reply({"memories": [_memory_json(m) for m in rows], "nextCursor": rows[-1].key if more else None})

    return await services.reads.run(read)


# ---- brain --------------------------------------------------------------------------------------


def _brain_payload(brain: wallets.Brain, network: dict[str, store.NicheStats]) -> dict[str, Any]:
    """The brain as the API shows it:

    - niches{name: {listed, sold, revenue, winRate}}: the agent's own counts; winRate is sales per
      listing capped at 1 (core.wallets.win_rate), rounded to 4 decimals;
    - prices{price: {listed, sold, revenue}}: the agent's listings, sales and revenue at each price
      (the key is the price in USDC as decimal text, e.g. "19.99");
    - topProducts: up to 5 named products with sales, most sold first (then by name):
      [{name, niche, price (its latest), sold}];
    - totals and the overall winRate over every niche; lastUpdated (ISO 8601 UTC or null);
    - strategyNote: a one-line reading of the weights;
    - weights{niche: number}: core.wallets.weights (agent + network, Laplace-smoothed, sum 1)."""
    niches = brain.niches
    total = store.NicheStats(
        sum(s.listed for s in niches.values()),
        sum(s.sold for s in niches.values()),
        sum(s.revenue for s in niches.values()),
    )
    w = wallets.weights(brain, network)
    best = max(w, key=lambda n: (w[n], n in niches, n))  # never empty: every specialty is weighed
    if not niches:
        note = f"No listings yet: weights come from the network; start with {best} and record every listing and sale."
    else:
        note = f"Favour {best} (weight {w[best]:.3f}); the best smoothed win rate across your and the network's sales."
    return {
        "brain": {
            "niches": {
                n: {
                    "listed": s.listed,
                    "sold": s.sold,
                    "revenue": usdc(s.revenue),
                    "winRate": round(wallets.win_rate(s), 4),
                }
                for n, s in sorted(niches.items())
            },
            "prices": {
                p: {"listed": s.listed, "sold": s.sold, "revenue": usdc(s.revenue)}
                for p, s in sorted(brain.prices.items(), key=lambda kv: (Decimal(kv[0]), kv[0]))
            },
            "topProducts": [
                {"name": name, "niche": niche, "price": usdc(s.price), "sold": s.sold}
                for name, niche, s in wallets.top_products(brain)
            ],
            "totalListed": total.listed,
            "totalSold": total.sold,
            "totalRevenue": usdc(total.revenue),
            "winRate": round(wallets.win_rate(total), 4),
            "strategyNote": note,
            "lastUpdated": None if brain.last_updated is None else _iso(brain.last_updated),
        },
        "weights": w,
    }


async def run_brain_read(services: Services, call: Call) -> Reply:
    def read(db: Conn) -> Reply:
        q = parse_query(AgentQuery, dict(call.query))
        agent = agent_for(db, _caller(call), q.agentId)
        return _reply(_brain_payload(wallets.load_brain(db, agent), store.shared_brain(db)))

    return await services.reads.run(read)


async def run_brain_write(services: Services, call: Call) -> Reply:
    """POST /api/agents/brain {agentId, action listed|sold, niche, price, revenue?, name?}: one listing
    or sale (of the product `name`, when given) into the agent's brain (memory brain:v1) and the
    shared brain, in one transaction; answers the updated brain and weights."""

    def work(conn: Conn, caller: Caller, body: bytes, now: float) -> tuple[int, bytes]:
        req = parse_body(BrainUpdateRequest, body)
        agent = agent_for(conn, caller, req.agentId)
        brain = wallets.update_brain(conn, agent, req.action, req.niche, req.price, req.revenue, now, req.name)
        return _ok({"success": True, **_brain_payload(brain, store.shared_brain(conn))})

    return await _authenticated_write(services, call, work)


# ---- runs, network, keys ------------------------------------------------------------------------


async def run_record_run(services: Services, call: Call) -> Reply:
    """POST /api/agents/runs {agentId, success, niche?}: count one run of the agent under memory key
    run:YYYY-MM-DD:<niche or general> (UTC day) as {"success": n, "failure": m}."""

    def work(conn: Conn, caller: Caller, body: bytes, now: float) -> tuple[int, bytes]:
        req = parse_body(RunRequest, body)
        agent = agent_for(conn, caller, req.agentId)
        key, ok, failed = wallets.record_run(conn, agent, req.success, req.niche, now)
        return _ok({"success": True, "key": key, "runs": {"success": ok, "failure": failed}})

    return await _authenticated_write(services, call, work)


async def run_network(services: Services, call: Call) -> Reply:
    """GET /api/agents/network (public): agents registered, total earned and total tolls in USDC
    (reported earnings plus settled on-chain payouts; see core.store.wallets.network_totals)."""
    agents, earned, tolls = await services.reads.run(store.network_totals)
    return _reply({"totalAgents": agents, "totalEarned": usdc(earned), "totalTolls": usdc(tolls)})


async def run_create_key(services: Services, call: Call) -> Reply:
    """POST /api/keys {email} (public): a new account and an account-scoped key bound to the
    address (compared case-insensitively), shown once; 409 email_has_key when the address already
    has one. Not replayable (the key is never stored), so Idempotency-Key is refused."""
    if call.idempotency_key is not None:
        raise ApiError(
            422,
            "idempotency_unsupported",
            f"a new key is shown once and cannot be replayed; retry without {idempotency.HEADER}",
            param=idempotency.HEADER,
        )
    req = parse_body(KeyRequest, call.body)
    toolsets = None if req.mcpToolsets is None else ",".join(sorted(parse_toolsets(req.mcpToolsets, "mcpToolsets")))
    api_key = new_api_key()
    now = services.clock()
    account_id = await services.writer.run(
        lambda conn: wallets.create_email_key(conn, req.email, hash_api_key(api_key), now, toolsets)
    )
    payload = {"success": True, "api_key": api_key, "accountId": account_id, "email": req.email.lower()}
    return _reply(payload, 201)


async def create_key(request: web.Request) -> web.Response:
    if idempotency.HEADER in request.headers:  # refused before the key's format is even looked at
        raise ApiError(  # well-formed, but this combination cannot be honoured: 422, not 400
            422,
            "idempotency_unsupported",
            f"a new key is shown once and cannot be replayed; retry without {idempotency.HEADER}",
            param=idempotency.HEADER,
        )
    return await serve(request, run_create_key, "none")
