"""The aiohttp application factory and `GET /healthz`."""

from __future__ import annotations

from typing import Any

import aiohttp
import apsw
from aiohttp import web

from api.agent_card import add_agent_card_routes
from api.errors import ApiError, error_middleware
from api.openapi import add_schema_routes
from api.wallets import add_wallet_routes
from core.deployments import Deployment
from core.networks import network_for
from core.store.projections import get_tip

DEPLOYMENT: web.AppKey[Deployment] = web.AppKey("deployment", Deployment)
RPC_URL: web.AppKey[str] = web.AppKey("rpc_url", str)
HTTP: web.AppKey[aiohttp.ClientSession] = web.AppKey("http", aiohttp.ClientSession)
DB: web.AppKey[apsw.Connection] = web.AppKey("db", apsw.Connection)

#: The indexer is "behind" when the node's head is more than this many blocks past what it applied.
BEHIND_BLOCKS = 5


async def _rpc_batch(session: aiohttp.ClientSession, url: str, calls: list[tuple[str, list[Any]]]) -> list[Any]:
    payload = [{"jsonrpc": "2.0", "id": i, "method": m, "params": p} for i, (m, p) in enumerate(calls)]
    async with session.post(url, json=payload, timeout=aiohttp.ClientTimeout(total=5)) as resp:
        replies = await resp.json()
    by_id = {r["id"]: r for r in replies}
    out = []
    for i in range(len(calls)):
        reply = by_id.get(i, {})
        if "result" not in reply:
            raise RuntimeError(f"RPC error: {reply.get('error')}")
        out.append(reply["result"])
    return out


async def healthz(request: web.Request) -> web.Response:
    """Liveness plus the chain view: chain id, latest block and every deployed address."""
    dep = request.app[DEPLOYMENT]
    try:
        chain_id_hex, block_hex = await _rpc_batch(
            request.app[HTTP], request.app[RPC_URL], [("eth_chainId", []), ("eth_blockNumber", [])]
        )
    except (TimeoutError, aiohttp.ClientError, RuntimeError, ValueError) as exc:
        raise ApiError(
            503, "chain_unavailable", f"the JSON-RPC node does not answer: {type(exc).__name__}", type_="service_error"
        ) from exc
    chain_id = int(chain_id_hex, 16)
    if chain_id != dep.chain_id:
        raise ApiError(
            503,
            "chain_mismatch",
            f"node reports chain {chain_id}, deployment is for {dep.chain_id}",
            type_="service_error",
        )
    latest = int(block_hex, 16)
    body: dict[str, Any] = {
        "status": "ok",
        "chainId": chain_id,
        "network": network_for(chain_id).name,
        "latestBlock": latest,
        "deployBlock": dep.deploy_block,
        "usdc": dep.usdc,
        "contracts": dep.contracts,
    }
    if DB in request.app:
        body["indexer"] = indexer_view(request.app[DB], chain_id, latest)
        if body["indexer"]["state"] != "synced":
            body["status"] = "degraded"
    return web.json_response(body)


def indexer_view(db: apsw.Connection, chain_id: int, latest: int) -> dict[str, Any]:
    """What the indexer has applied ("seen") and treats as final, and how far behind it is."""
    tip = get_tip(db, chain_id)
    if tip is None:
        return {"state": "starting", "seen": None, "final": None, "behind": None}
    seen, _hash, _head, final = tip
    behind = max(0, latest - seen)
    return {"state": "behind" if behind > BEHIND_BLOCKS else "synced", "seen": seen, "final": final, "behind": behind}


async def _http_session(app: web.Application) -> Any:
    app[HTTP] = aiohttp.ClientSession()
    yield
    await app[HTTP].close()


def create_app(
    deployment: Deployment, rpc_url: str, db: apsw.Connection | None = None, *, public_url: str | None = None
) -> web.Application:
    """The service; `public_url` (e.g. https://ledger.example.com) makes the agent card's URLs absolute
    behind a proxy (default: the request's own scheme and host)."""
    app = web.Application(middlewares=[error_middleware])
    app[DEPLOYMENT] = deployment
    app[RPC_URL] = rpc_url
    if db is not None:
        app[DB] = db
        add_wallet_routes(app, db)
    app.cleanup_ctx.append(_http_session)
    app.router.add_get("/healthz", healthz)
    add_schema_routes(app)
    add_agent_card_routes(app, public_url)
    return app
