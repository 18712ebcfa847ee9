"""The agent wallet API under /api/agents: register, earn, spend, balance, identity.

Amounts are decimal USDC numbers in JSON (parsed as Decimal, answered as numbers) and integers
of micro-USDC inside. Value-moving POSTs run under api.idempotency; their writes commit with
synchronous=FULL (the connection is opened durable) before the response is sent.
"""

from __future__ import annotations

import json
import time
from collections.abc import Awaitable, Callable
from decimal import Decimal
from typing import Any

import apsw
from aiohttp import web

from api import idempotency
from api.auth import (
    Caller,
    agent_for,
    authenticate,
    authenticate_optional,
    hash_api_key,
    new_api_key,
    require_account_scope,
)
from api.errors import ApiError, error_middleware
from api.models import AgentQuery, EarnRequest, RegisterRequest, SpendRequest, parse_body, parse_query
from core import wallets
from core.money import format_usdc
from core.store.wallets import AgentRow, BalanceRow, get_balance

WALLET_DB: web.AppKey[apsw.Connection] = web.AppKey("wallet_db", apsw.Connection)
#: The clock (seconds since the epoch); tests inject their own.
CLOCK: web.AppKey[Callable[[], float]] = web.AppKey("wallet_clock", Callable[[], float])  # type: ignore[arg-type]
#: Awaited by value-moving POSTs after the Idempotency-Key is claimed, before the transaction
#: (None in production; tests hold requests in flight with it).
HOOK: web.AppKey[Callable[[web.Request], Awaitable[None]] | None] = web.AppKey("wallet_hook", object)  # type: ignore[arg-type]

_STATUS = {"insufficient_balance": 422, "balance_limit": 422}


# ---- JSON with Decimal numbers ----------------------------------------------------------------


def encode(value: Any) -> str:
    """JSON text in which Decimals are numbers (json.dumps would need floats)."""
    if isinstance(value, Decimal):
        return str(value)
    if isinstance(value, dict):
        return "{" + ",".join(json.dumps(str(k)) + ":" + encode(v) for k, v in value.items()) + "}"
    if isinstance(value, (list, tuple)):
        return "[" + ",".join(encode(v) for v in value) + "]"
    return json.dumps(value)


def _ok(payload: dict[str, Any], status: int = 200) -> tuple[int, bytes]:
    return status, encode(payload).encode()


def _usdc(units: int) -> Decimal:
    return format_usdc(units)


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


async def _execute(request: web.Request, caller: Caller | None, body: bytes, work: idempotency.TxWork) -> web.Response:
    app = request.app
    hook = app.get(HOOK)

    async def before() -> None:
        if hook is not None:
            await hook(request)

    def guarded(conn: apsw.Connection) -> tuple[int, bytes]:
        try:
            return work(conn)
        except wallets.WalletError as exc:
            raise _wallet_error(exc) from exc

    owner = "anonymous" if caller is None else caller.key_hash
    return await idempotency.execute(
        request, app[WALLET_DB], owner=owner, body=body, now=app[CLOCK](), work=guarded, before=before
    )


async def register(request: web.Request) -> web.Response:
    db = request.app[WALLET_DB]
    caller = authenticate_optional(db, request)
    if caller is None and idempotency.HEADER in request.headers:
        raise ApiError(
            400,
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


async def earn(request: web.Request) -> web.Response:
    db = request.app[WALLET_DB]
    caller = authenticate(db, request)
    body = await request.read()
    now = request.app[CLOCK]()

    def work(conn: apsw.Connection) -> tuple[int, bytes]:
        req = parse_body(EarnRequest, body)
        agent = agent_for(conn, caller, req.agentId)
        r = wallets.earn(conn, agent, req.amount, req.source, now)
        return _ok(
            {
                "success": True,
                "balance": _usdc(r.balance.balance),
                "toll": _usdc(r.service_cut),
                "net": _usdc(r.net),
                "ownerCut": _usdc(r.owner_cut),
                "agentCut": _usdc(r.agent_cut),
                "serviceCut": _usdc(r.service_cut),
                "referralCut": _usdc(r.referral_cut),
                "ownerBalance": _usdc(r.balance.owner_balance),
                "agentSelfBalance": _usdc(r.balance.self_balance),
                "transactionId": r.ledger_id,
                "message": f"{format_usdc(r.amount)} USDC earned: {format_usdc(r.net)} credited to {agent.wallet}, "
                f"{format_usdc(r.service_cut)} toll"
                + (f", {format_usdc(r.referral_cut)} referral" if r.referral_cut else ""),
            }
        )

    return await _execute(request, caller, body, work)


async def spend(request: web.Request) -> web.Response:
    db = request.app[WALLET_DB]
    caller = authenticate(db, request)
    body = await request.read()
    now = request.app[CLOCK]()

    def work(conn: apsw.Connection) -> tuple[int, bytes]:
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

    return await _execute(request, caller, body, work)


def _balance_json(bal: BalanceRow) -> dict[str, Any]:
    return {
        "balance": _usdc(bal.balance),
        "ownerBalance": _usdc(bal.owner_balance),
        "agentSelfBalance": _usdc(bal.self_balance),
        "totalEarned": _usdc(bal.total_earned),
        "totalTransactions": bal.tx_count,
        "memoryEntries": 0,  # the memory endpoints are not built yet
    }


async def balance(request: web.Request) -> web.Response:
    db = request.app[WALLET_DB]
    caller = authenticate(db, request)
    q = parse_query(AgentQuery, dict(request.query))
    agent = agent_for(db, caller, q.agentId)
    return web.Response(text=encode(_balance_json(get_balance(db, agent.uuid))), content_type="application/json")


async def identity(request: web.Request) -> web.Response:
    db = request.app[WALLET_DB]
    caller = authenticate(db, request)
    q = parse_query(AgentQuery, dict(request.query))
    agent = agent_for(db, caller, q.agentId)
    return web.json_response({"uuid": agent.uuid, "wallet": agent.wallet})


# ---- wiring -----------------------------------------------------------------------------------


def add_wallet_routes(app: web.Application, db: apsw.Connection, clock: Callable[[], float] = time.time) -> None:
    """Mount the wallet API on `app` over `db` (open it with core.store.connect(durable=True))."""
    app[WALLET_DB] = db
    app[CLOCK] = clock
    app[HOOK] = None
    app.router.add_post("/api/agents/register", register)
    app.router.add_post("/api/agents/earn", earn)
    app.router.add_post("/api/agents/spend", spend)
    app.router.add_get("/api/agents/balance", balance)
    app.router.add_get("/api/agents/identity", identity)


def create_wallet_app(db: apsw.Connection, clock: Callable[[], float] = time.time) -> web.Application:
    """The wallet API alone (no chain): what tests and wallet-only deployments serve."""
    app = web.Application(middlewares=[error_middleware])
    add_wallet_routes(app, db, clock)
    return app
