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
import time
from collections.abc import Callable
from decimal import Decimal
from typing import Any

import apsw
from aiohttp import web

from api import idempotency
from api.auth import (
    Caller,
    FreshAgents,
    agent_for,
    authenticate,
    authenticate_optional,
    remember_agents,
    require_account_scope,
)
from api.errors import JSON_BODY, ApiError, error_middleware
from api.http import CLOCK, HOOKS, READ_DB, WRITER, Hooks, RawJson, encode, iso, usdc
from api.models import parse_body, parse_query
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
from core.store import wallets as store
from core.store.committer import GroupCommitter
from core.store.wallets import AgentRow, BalanceRow, get_balance

_STATUS = {
    "unknown_referral_code": 404,
    "insufficient_balance": 422,
    "balance_limit": 422,
    "value_too_large": 413,
    "memory_full": 409,
    "email_has_key": 409,
}


def _ok(payload: dict[str, Any], status: int = 200) -> tuple[int, bytes]:
    return status, encode(payload).encode()


_usdc = usdc
_iso = iso


def _json_response(payload: dict[str, Any]) -> web.Response:
    return web.Response(text=encode(payload), content_type="application/json")


def _agent_json(agent: AgentRow, balance: int) -> dict[str, Any]:
    return {
        "id": agent.uuid,
        "wallet": agent.wallet,
        "name": agent.name,
        "specialty": agent.specialty,
        "balance": _usdc(balance),
        "referral_code": agent.referral_code,
    }


def _wallet_error(exc: wallets.WalletError) -> ApiError:
    return ApiError(_STATUS.get(exc.code, 400), exc.code, exc.message, param=exc.param)


# ---- handlers ---------------------------------------------------------------------------------


async def _execute(
    request: web.Request, caller: Caller | None, body: bytes, work: idempotency.TxWork, *, savepoint: bool = True
) -> web.Response:
    app = request.app
    hook = app[HOOKS].before_write
    before = None if hook is None else functools.partial(hook, request)
    owner = "anonymous" if caller is None else caller.key_hash
    return await idempotency.execute(
        request,
        app[WRITER],
        owner=owner,
        body=body,
        now=app[CLOCK](),
        work=functools.partial(_guarded, work),
        before=before,
        savepoint=savepoint,
    )


def _guarded(work: idempotency.TxWork, conn: apsw.Connection) -> tuple[int, bytes]:
    """`work`, its WalletError answered in the API's error shape."""
    try:
        return work(conn)
    except wallets.WalletError as exc:
        raise _wallet_error(exc) from exc


#: The transactional part of an authenticated value-moving POST: (conn, caller, body, now) -> (status, body).
WriteWork = Callable[[apsw.Connection, Caller, bytes, float], tuple[int, bytes]]


def _bind(work: WriteWork, caller: Caller, body: bytes, now: float, conn: apsw.Connection) -> tuple[int, bytes]:
    return work(conn, caller, body, now)


async def _authenticated_write(request: web.Request, work: WriteWork, *, savepoint: bool = True) -> web.Response:
    """The common path of an authenticated value-moving POST: authenticate on the reading
    connection, then run `work` under the Idempotency-Key in the next group commit. The body is
    parsed inside `work`, so a 4xx is stored under the key like any other answer. savepoint=False
    for a `work` that writes nothing when it raises (idempotency.execute)."""
    caller = authenticate(request.app[READ_DB], request)
    body = await request.read()
    now = request.app[CLOCK]()
    return await _execute(request, caller, body, functools.partial(_bind, work, caller, body, now), savepoint=savepoint)


async def register(request: web.Request) -> web.Response:
    db = request.app[READ_DB]
    caller = authenticate_optional(db, request)
    if caller is None and idempotency.HEADER in request.headers:
        raise ApiError(  # well-formed, but this combination cannot be honoured: 422, not 400
            422,
            "idempotency_unsupported",
            "registration without an API key returns a new key and cannot be replayed; retry without "
            f"{idempotency.HEADER} or register with an account key",
            param=idempotency.HEADER,
        )
    if caller is not None:
        require_account_scope(caller)
    body = await request.read()
    api_key = new_api_key() if caller is None else None
    now = request.app[CLOCK]()

    def work(conn: apsw.Connection) -> tuple[int, bytes]:
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

    return await _execute(request, caller, body, work)


def _earn_work(
    conn: apsw.Connection,
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


async def earn(request: web.Request) -> web.Response:
    fresh = FreshAgents()
    work = functools.partial(_earn_work, fresh=fresh, decoded=request.get(JSON_BODY))  # decoded once, by api.errors
    resp = await _authenticated_write(request, work, savepoint=False)
    if fresh and resp.status == 200:  # committed: from now on the agent can come from the cache
        remember_agents(request.app[WRITER].conn, fresh)
    return resp


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


async def earn_batch(request: web.Request) -> web.Response:
    """POST /api/agents/earn/batch: every payment credited as POST /earn would, in ONE transaction:
    any refused item (validation, an agent the key may not act for, a total limit) answers its
    error with `param` naming it (e.g. `payments[3].amount`) and nothing is written. Items are
    applied in order; `results[i]` is item i's earn body (balances as of that item)."""

    def work(conn: apsw.Connection, caller: Caller, body: bytes, now: float) -> tuple[int, bytes]:
        req = parse_body(EarnBatchRequest, body)
        results = []
        for i, p in enumerate(req.payments):
            agent = agent_for(conn, caller, p.agentId, param=f"payments[{i}].agentId")
            try:
                r = wallets.earn(conn, agent, p.amount, p.source, now)
            except wallets.WalletError as exc:
                raise ApiError(
                    _STATUS.get(exc.code, 400),
                    exc.code,
                    f"payments[{i}]: {exc.message}",
                    param=f"payments[{i}].{exc.param}",
                ) from exc
            results.append(RawJson(_earn_text(agent.wallet, r)))
        return _ok({"success": True, "count": len(results), "results": results})

    return await _authenticated_write(request, work)


async def compound(request: web.Request) -> web.Response:
    """POST /api/agents/compound: move reinvestPercent % (default 20) of the spendable balance into
    the reinvested bucket (see core.wallets.compound); `moved` is the amount moved."""

    def work(conn: apsw.Connection, caller: Caller, body: bytes, now: float) -> tuple[int, bytes]:
        req = parse_body(CompoundRequest, body)
        agent = agent_for(conn, caller, req.agentId)
        r = wallets.compound(conn, agent, req.reinvestPercent, now)
        return _ok(
            {
                "success": True,
                "balance": _usdc(r.balance.balance),
                "reinvested": _usdc(r.balance.reinvested),
                "moved": _usdc(r.moved),
                "ownerBalance": _usdc(r.balance.owner_balance),
                "agentSelfBalance": _usdc(r.balance.self_balance),
                "transactionId": r.ledger_id,
            }
        )

    return await _authenticated_write(request, work)


async def spend(request: web.Request) -> web.Response:
    def work(conn: apsw.Connection, caller: Caller, body: bytes, now: float) -> tuple[int, bytes]:
        req = parse_body(SpendRequest, body)
        agent = agent_for(conn, caller, req.agentId)
        r = wallets.spend(conn, agent, req.amount, req.destination, now)
        return _ok(
            {
                "success": True,
                "spent": _usdc(r.amount),
                "destination": req.destination,
                "balance": _usdc(r.balance.balance),
                "ownerBalance": _usdc(r.balance.owner_balance),
                "agentSelfBalance": _usdc(r.balance.self_balance),
                "transactionId": r.ledger_id,
            }
        )

    return await _authenticated_write(request, work)


def _balance_json(bal: BalanceRow, memory_entries: int, settled: int) -> dict[str, Any]:
    return {
        "balance": _usdc(bal.balance),
        "ownerBalance": _usdc(bal.owner_balance),
        "agentSelfBalance": _usdc(bal.self_balance),
        "reinvested": _usdc(bal.reinvested),
        "totalEarned": _usdc(bal.total_earned + settled),
        "reportedEarned": _usdc(bal.total_earned),
        "settledEarned": _usdc(settled),
        "totalTransactions": bal.tx_count,
        "memoryEntries": memory_entries,  # every key, the service's brain: and run: keys included
    }


async def balance(request: web.Request) -> web.Response:
    db = request.app[READ_DB]
    caller = authenticate(db, request)
    q = parse_query(AgentQuery, dict(request.query))
    agent = agent_for(db, caller, q.agentId)
    bal = get_balance(db, agent.uuid)
    return _json_response(
        _balance_json(bal, store.count_memories(db, agent.uuid), store.settled_earnings(db, agent.uuid))
    )


async def identity(request: web.Request) -> web.Response:
    db = request.app[READ_DB]
    caller = authenticate(db, request)
    q = parse_query(AgentQuery, dict(request.query))
    agent = agent_for(db, caller, q.agentId)
    return web.json_response({"uuid": agent.uuid, "wallet": agent.wallet})


# ---- memory ---------------------------------------------------------------------------------


def _memory_json(m: store.MemoryRow) -> dict[str, Any]:
    return {"key": m.key, "value": RawJson(m.value), "createdAt": _iso(m.created_at), "updatedAt": _iso(m.updated_at)}


async def memory_write(request: web.Request) -> web.Response:
    """POST /api/agents/memory: upsert {key: value}; limits in api.models.MemoryWriteRequest."""

    def work(conn: apsw.Connection, caller: Caller, body: bytes, now: float) -> tuple[int, bytes]:
        req = parse_body(MemoryWriteRequest, body)
        agent = agent_for(conn, caller, req.agentId)
        m = wallets.put_memory(conn, agent, req.key, encode(req.value), now)
        return _ok({"success": True, "memory": _memory_json(m)})

    return await _authenticated_write(request, work)


async def memory_read(request: web.Request) -> web.Response:
    """GET /api/agents/memory?agentId=&query=&limit=&cursor=: the agent's entries ordered by key,
    `query` a case-sensitive substring of the key, `limit` 1-200 (default 50); nextCursor is the
    last key returned when more follow, else null."""
    db = request.app[READ_DB]
    caller = authenticate(db, request)
    q = parse_query(MemoryQuery, dict(request.query))
    agent = agent_for(db, caller, q.agentId)
    rows = store.list_memories(db, agent.uuid, q.query, q.cursor, q.limit + 1)
    more = len(rows) > q.limit
    rows = rows[: q.limit]
    return _json_response({"memories": [_memory_json(m) for m in rows], "nextCursor": rows[-1].key if more else None})


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
                    "revenue": _usdc(s.revenue),
                    "winRate": round(wallets.win_rate(s), 4),
                }
                for n, s in sorted(niches.items())
            },
            "prices": {
                p: {"listed": s.listed, "sold": s.sold, "revenue": _usdc(s.revenue)}
                for p, s in sorted(brain.prices.items(), key=lambda kv: (Decimal(kv[0]), kv[0]))
            },
            "topProducts": [
                {"name": name, "niche": niche, "price": _usdc(s.price), "sold": s.sold}
                for name, niche, s in wallets.top_products(brain)
            ],
            "totalListed": total.listed,
            "totalSold": total.sold,
            "totalRevenue": _usdc(total.revenue),
            "winRate": round(wallets.win_rate(total), 4),
            "strategyNote": note,
            "lastUpdated": None if brain.last_updated is None else _iso(brain.last_updated),
        },
        "weights": w,
    }


async def brain_read(request: web.Request) -> web.Response:
    db = request.app[READ_DB]
    caller = authenticate(db, request)
    q = parse_query(AgentQuery, dict(request.query))
    agent = agent_for(db, caller, q.agentId)
    return _json_response(_brain_payload(wallets.load_brain(db, agent), store.shared_brain(db)))


async def brain_write(request: web.Request) -> web.Response:
    """POST /api/agents/brain {agentId, action listed|sold, niche, price, revenue?, name?}: one listing
    or sale (of the product `name`, when given) into the agent's brain (memory brain:v1) and the
    shared brain, in one transaction; answers the updated brain and weights."""

    def work(conn: apsw.Connection, caller: Caller, body: bytes, now: float) -> tuple[int, bytes]:
        req = parse_body(BrainUpdateRequest, body)
        agent = agent_for(conn, caller, req.agentId)
        brain = wallets.update_brain(conn, agent, req.action, req.niche, req.price, req.revenue, now, req.name)
        return _ok({"success": True, **_brain_payload(brain, store.shared_brain(conn))})

    return await _authenticated_write(request, work)


# ---- runs, network, keys ------------------------------------------------------------------------


async def record_run(request: web.Request) -> web.Response:
    """POST /api/agents/runs {agentId, success, niche?}: count one run of the agent under memory key
    run:YYYY-MM-DD:<niche or general> (UTC day) as {"success": n, "failure": m}."""

    def work(conn: apsw.Connection, caller: Caller, body: bytes, now: float) -> tuple[int, bytes]:
        req = parse_body(RunRequest, body)
        agent = agent_for(conn, caller, req.agentId)
        key, ok, failed = wallets.record_run(conn, agent, req.success, req.niche, now)
        return _ok({"success": True, "key": key, "runs": {"success": ok, "failure": failed}})

    return await _authenticated_write(request, work)


async def network(request: web.Request) -> web.Response:
    """GET /api/agents/network (public): agents registered, total earned and total tolls in USDC
    (reported earnings plus settled on-chain payouts; see core.store.wallets.network_totals)."""
    agents, earned, tolls = store.network_totals(request.app[READ_DB])
    return _json_response({"totalAgents": agents, "totalEarned": _usdc(earned), "totalTolls": _usdc(tolls)})


async def create_key(request: web.Request) -> web.Response:
    """POST /api/keys {email} (public): a new account and an account-scoped key bound to the
    address (compared case-insensitively), shown once; 409 email_has_key when the address already
    has one. Not replayable (the key is never stored), so Idempotency-Key is refused."""
    if idempotency.HEADER in request.headers:
        raise ApiError(
            422,
            "idempotency_unsupported",
            f"a new key is shown once and cannot be replayed; retry without {idempotency.HEADER}",
            param=idempotency.HEADER,
        )
    body = await request.read()
    req = parse_body(KeyRequest, body)
    api_key = new_api_key()
    now = request.app[CLOCK]()
    try:
        account_id = await request.app[WRITER].run(
            lambda conn: wallets.create_email_key(conn, req.email, hash_api_key(api_key), now)
        )
    except wallets.WalletError as exc:
        raise _wallet_error(exc) from exc
    payload = {"success": True, "api_key": api_key, "accountId": account_id, "email": req.email.lower()}
    return web.Response(status=201, text=encode(payload), content_type="application/json")


# ---- wiring -----------------------------------------------------------------------------------


def add_wallet_routes(
    app: web.Application, db: apsw.Connection, clock: Callable[[], float] = time.time, hooks: Hooks | None = None
) -> None:
    """Mount the wallet API on `app`: `db` (a file opened with core.store.connect) serves reads; a
    GroupCommitter on the same file does every write and is closed with the app. `hooks`: test
    seams (api.http.Hooks)."""
    app[READ_DB] = db
    app[WRITER] = GroupCommitter(db.filename)

    async def close_writer(app: web.Application) -> None:
        await app[WRITER].close()

    app.on_cleanup.append(close_writer)
    app[CLOCK] = clock
    app[HOOKS] = hooks or Hooks()
    app.router.add_post("/api/agents/register", register)
    app.router.add_post("/api/agents/earn", earn)
    app.router.add_post("/api/agents/spend", spend)
    app.router.add_get("/api/agents/balance", balance)
    app.router.add_get("/api/agents/identity", identity)
    app.router.add_post("/api/agents/earn/batch", earn_batch)
    app.router.add_post("/api/agents/compound", compound)
    app.router.add_post("/api/agents/memory", memory_write)
    app.router.add_get("/api/agents/memory", memory_read)
    app.router.add_get("/api/agents/brain", brain_read)
    app.router.add_post("/api/agents/brain", brain_write)
    app.router.add_post("/api/agents/runs", record_run)
    app.router.add_get("/api/agents/network", network)
    app.router.add_post("/api/keys", create_key)


def create_wallet_app(
    db: apsw.Connection, clock: Callable[[], float] = time.time, hooks: Hooks | None = None
) -> web.Application:
    """The wallet API alone (no chain): what tests and wallet-only deployments serve."""
    app = web.Application(middlewares=[error_middleware])
    add_wallet_routes(app, db, clock, hooks)
    return app
