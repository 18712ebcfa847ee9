"""The aiohttp application factory and `GET /healthz`."""

from __future__ import annotations

import time
from collections.abc import Callable
from typing import Any

import aiohttp
import apsw
from aiohttp import web
from web3 import Web3

from api.agent_card import add_agent_card_routes
from api.audit_routes import add_audit_routes
from api.checkout import add_checkout_routes
from api.decisions import add_decision_routes
from api.errors import ApiError, error_middleware
from api.ipfs_gateway import add_ipfs_routes
from api.openapi import add_schema_routes
from api.provider_orders import add_provider_order_routes
from api.providers import add_provider_routes
from api.verification import add_verification_routes
from api.wallets import add_wallet_routes
from api.webhook_dispatcher import WebhookDispatcher, add_webhook_dispatcher
from core.config import Settings
from core.deployments import Deployment
from core.networks import LOCAL_CHAIN_ID, network_for
from core.operator import Operator, operator_account
from core.store.projections import get_tip
from core.webhooks import allow_private_for

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
    deployment: Deployment,
    rpc_url: str,
    db: apsw.Connection | None = None,
    *,
    public_url: str | None = None,
    settings: Settings | None = None,
    clock: Callable[[], float] = time.time,
    operator: Operator | None = None,
) -> web.Application:
    """The service. Without `db`: health, schema and agent card only. With it: wallets, decision
    logging and its verification, the audit log, escrow checkout and orders, deliverables, and the
    webhook dispatcher. `public_url` (default: settings.public_url, else the request's own scheme and
    host) makes published URLs absolute behind a proxy; `operator` defaults to one built from
    settings.operator_key (anvil's development key on a local chain only)."""
    settings = settings or Settings()
    public_url = public_url or settings.public_url or None
    if public_url is None and db is not None and deployment.chain_id != LOCAL_CHAIN_ID:
        # Published links (verification_url, /verify, discovery documents cached for an hour) would
        # otherwise come from the caller's Host header.
        raise ValueError(f"set AGENTLEDGER_PUBLIC_URL: it is required on chain {deployment.chain_id}")
    app = web.Application(middlewares=[error_middleware])
    app[DEPLOYMENT] = deployment
    app[RPC_URL] = rpc_url
    app.cleanup_ctx.append(_http_session)
    app.router.add_get("/healthz", healthz)
    add_schema_routes(app)
    add_agent_card_routes(app, public_url)
    if db is None:
        return app
    app[DB] = db
    chain_id = deployment.chain_id
    allow_private = allow_private_for(settings.webhook_allow_private, chain_id)
    add_wallet_routes(app, db, clock)
    add_webhook_dispatcher(app, WebhookDispatcher(db.filename, clock, allow_private=allow_private))
    add_decision_routes(app, allow_private_webhooks=allow_private)
    add_audit_routes(app, chain_id, deployment.contracts.get("AuditAnchor"))
    add_verification_routes(app)
    add_ipfs_routes(app, settings.ipfs_api_url)
    if operator is None:
        operator = Operator(
            # No connection check: the API starts while the node is down (healthz and 503s tell).
            Web3(Web3.HTTPProvider(rpc_url, request_kwargs={"timeout": 30})),
            operator_account(settings.operator_key, chain_id),
            deployment.contracts,
            deployment.usdc,
        )
    add_provider_routes(app, operator)
    add_checkout_routes(
        app,
        operator,
        chain_id=chain_id,
        session_ttl=settings.checkout_session_ttl,
        allow_private_webhooks=allow_private,
    )
    add_provider_order_routes(app)
    return app
