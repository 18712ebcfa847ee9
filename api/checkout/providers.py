"""Provider identity and the catalogue, under /api/acp.

POST /api/acp/providers links a wallet agent as a provider. Bearer key of the agent or of its
account; body {agent_id: "agl_...", self_wallet, owner_address, referrer_token_id?, timestamp,
signature}. `signature` is the self wallet's EIP-191 personal_sign of exactly
(core.checkout.provider_link_message):

    agentledger provider link
    chain: <chain id>
    agent: <agl_ wallet id>
    self_wallet: <EIP-55 address>
    owner: <EIP-55 address>
    timestamp: <unix seconds>

lines joined by "\\n", no trailing newline; the timestamp must be within 5 minutes of the server
clock. The service then mints the agent NFT (AgentRegistry.mint(owner, selfWallet, walletId,
referrerTokenId)) with the operator key and answers 201 with the token id. Refused: a second link
of the agent (409 provider_already_linked; 409 provider_link_in_progress while another request,
in any process, is linking it), a self wallet another provider or token uses (409
self_wallet_taken), a signature from another address (401 signature_mismatch), a stale timestamp
(401 timestamp_out_of_window), an unknown referrer token (404 unknown_referrer).

Crash safety: the provider row is written first with token_id NULL; after the mint the token id is
recorded. A link retried after a crash in between finds the token by the registry's
tokenOfWalletId(walletId) instead of minting again (the registry refuses a second mint of one
wallet id anyway).

The provider's news: POST /api/acp/providers/{agent_id}/webhook {url} (the agent's or its account's
key; SSRF rules; the secret shown once) sends it `order.created` for each new order, then
`job.state_changed`; DELETE stops them; GET /api/acp/providers/{agent_id}/orders lists its orders.

Catalogue: POST /api/acp/items (a linked provider's key) {item_id?, title, tier, price?, agent_id?}
and the public GET /api/acp/items, GET /api/acp/items/{item_id}. Prices are decimal USDC in and
out (`price`), with `unit_amount` in micro-USDC as checkout sessions use.
"""

from __future__ import annotations

import re
from typing import Any

from web3 import Web3

from api import idempotency
from api.auth import Caller, agent_for
from api.checkout import models
from api.checkout.acp import acp_body
from api.errors import ApiError
from api.http import chain_unavailable, iso, ok, reply, usdc
from api.operation import Call, Reply
from core.checkout import providers, rules, views
from core.checkout.context import Checkout
from core.operator import ChainUnavailable
from core.services import Services
from core.store import Conn
from core.store import checkout as store
from core.store.checkout import ItemRow, ProviderRow

# ---- JSON ---------------------------------------------------------------------------------------


def provider_json(p: ProviderRow) -> dict[str, Any]:
    return {
        "agent_id": p.wallet,
        "agent_uuid": p.agent_uuid,
        "self_wallet": p.self_wallet,
        "owner_address": p.owner_address,
        "token_id": p.token_id,
        "referrer_token_id": p.referrer_token_id,
        "mint_tx": p.mint_tx,
        "linked_at": iso(p.linked_at),
    }


def item_json(item: ItemRow, provider: ProviderRow | None) -> dict[str, Any]:
    return {
        "id": item.item_id,
        "title": item.title,
        "tier": item.tier,
        "delivery_hours": rules.TIERS[item.tier].hours,
        "price": usdc(item.price),
        "unit_amount": item.price,
        "currency": rules.CURRENCY,
        "provider": {
            "agent_id": provider.wallet if provider else None,
            "token_id": provider.token_id if provider else None,
        },
        "created_at": iso(item.created_at),
    }


# ---- provider link ------------------------------------------------------------------------------


async def run_link_provider(services: Services, call: Call) -> Reply:
    reads = services.reads
    ctx = services.part(Checkout)
    caller = call.authenticated
    body = call.body
    now = services.clock()
    try:
        chain_id = await ctx.operator.chain_id()
    except ChainUnavailable as exc:
        raise chain_unavailable(exc) from exc
    result: dict[str, ProviderRow] = {}

    async def steps() -> None:
        req = acp_body(models.ProviderLinkRequest, body)
        agent = await reads.run(lambda db: agent_for(db, caller, req.agent_id, param="$.agent_id"))
        self_wallet = Web3.to_checksum_address(req.self_wallet)
        owner = Web3.to_checksum_address(req.owner_address)
        providers.check_link_signature(
            chain_id=chain_id,
            wallet=agent.wallet,
            self_wallet=self_wallet,
            owner=owner,
            timestamp=req.timestamp,
            signature=req.signature,
            now=now,
        )
        # one link of an agent at a time, in every process: the pending row's claim (core.checkout.providers)
        result["provider"] = await providers.link(
            ctx, agent.uuid, agent.wallet, self_wallet, owner, req.referrer_token_id, now
        )

    def finish(conn: Conn) -> tuple[int, bytes]:
        p = store.get_provider(conn, result["provider"].agent_uuid)
        assert p is not None
        return ok(provider_json(p), 201)

    return await idempotency.execute_call(
        services.writer, call, owner=caller.key_hash, now=now, work=finish, before=steps
    )


async def run_get_provider(services: Services, call: Call) -> Reply:
    """GET /api/acp/providers/{agent_id}: public (wallet id or UUID)."""
    key = call.path["agent_id"]
    p = await services.reads.run(
        lambda db: store.provider_by_wallet(db, key) if key.startswith("agl_") else store.get_provider(db, key)
    )
    if p is None or p.token_id is None:
        raise ApiError(404, "provider_not_found", f"no linked provider {key}", param="agent_id")
    return reply(provider_json(p))


# ---- the provider's webhook and its orders ---------------------------------------------------------


def _own_provider(db: Conn, caller: Caller, agent_id: str) -> ProviderRow:
    """The linked provider `agent_id` (an agl_ wallet) if the caller's key covers it."""
    agent = agent_for(db, caller, agent_id, param="agent_id")
    return providers.linked_provider(db, agent.uuid)


async def run_set_provider_webhook(services: Services, call: Call) -> Reply:
    """POST /api/acp/providers/{agent_id}/webhook {url}: where the provider hears of its orders
    (`order.created` with what to work on, then `job.state_changed`), signed like every webhook
    with the secret this answer shows once (each call rotates it)."""
    caller = call.authenticated
    agent_id = call.path["agent_id"]
    p = await services.reads.run(lambda db: _own_provider(db, caller, agent_id))
    req = acp_body(models.ProviderWebhookRequest, call.body)
    await providers.check_webhook_url(req.url, services.allow_private)  # DNS: outside the writer
    secret = await services.writer.run(lambda conn: providers.set_webhook(conn, p.agent_uuid, req.url))
    return reply({"agent_id": agent_id, "webhook_url": req.url, "webhook_secret": secret})


async def run_delete_provider_webhook(services: Services, call: Call) -> Reply:
    caller = call.authenticated
    agent_id = call.path["agent_id"]
    p = await services.reads.run(lambda db: _own_provider(db, caller, agent_id))
    await services.writer.run(lambda conn: providers.clear_webhook(conn, p.agent_uuid))
    return reply({"agent_id": agent_id, "webhook_url": None})


async def run_list_provider_orders(services: Services, call: Call) -> Reply:
    """GET /api/acp/providers/{agent_id}/orders?status=&limit=&cursor=: the provider's orders, newest first."""
    caller = call.authenticated

    def read(db: Conn) -> Reply:
        p = _own_provider(db, caller, call.path["agent_id"])
        q = acp_body(models.ProviderOrdersQuery, None, query=dict(call.query))
        limit = max(1, min(int(q.limit), 100)) if q.limit else 50
        cursor = int(q.cursor) if q.cursor else None
        return reply(views.provider_orders_page(db, p.agent_uuid, status=q.status, cursor=cursor, limit=limit))

    return await services.reads.run(read)


# ---- catalogue ----------------------------------------------------------------------------------


def _provider_for(conn: Conn, caller: Caller, agent_id: str | None) -> ProviderRow:
    """The linked provider the caller creates an item for: its agent (agent-scoped key) or `agent_id`."""
    if agent_id is not None:
        agent = agent_for(conn, caller, agent_id, param="$.agent_id")
        uuid = agent.uuid
    elif caller.agent_id is not None:
        uuid = caller.agent_id
    else:
        raise ApiError(
            422, "missing_agent_id", "an account-scoped key must name the provider's agent_id", param="$.agent_id"
        )
    p = store.get_provider(conn, uuid)
    if p is None or p.token_id is None:
        raise ApiError(403, "provider_not_linked", "the agent is not a linked provider: POST /api/acp/providers first")
    return p


async def run_create_item(services: Services, call: Call) -> Reply:
    caller = call.authenticated
    body = call.body
    now = services.clock()

    def work(conn: Conn) -> tuple[int, bytes]:
        req = acp_body(models.ItemCreateRequest, body)
        provider = _provider_for(conn, caller, req.agent_id)
        item = providers.add_item(conn, provider, req.item_id, req.title, req.tier, req.price, now)
        return ok(item_json(item, provider), 201)

    return await idempotency.execute_call(services.writer, call, owner=caller.key_hash, now=now, work=work)


async def run_list_items(services: Services, call: Call) -> Reply:
    q = acp_body(models.ItemsQuery, None, query=dict(call.query))
    limit = min(int(q.limit), 100) if q.limit else 100

    def read(db: Conn) -> Reply:
        provider_uuid = None
        if q.provider is not None:
            p = store.provider_by_wallet(db, q.provider)
            if p is None:
                return reply({"data": [], "has_more": False})
            provider_uuid = p.agent_uuid
        items = store.list_items(db, provider_uuid=provider_uuid, after=q.after, limit=limit + 1)
        providers: dict[str, ProviderRow | None] = {}
        for it in items:
            if it.provider_uuid not in providers:
                providers[it.provider_uuid] = store.get_provider(db, it.provider_uuid)
        page = items[:limit]
        data = [item_json(it, providers[it.provider_uuid]) for it in page]
        return reply({"data": data, "has_more": len(items) > limit})

    return await services.reads.run(read)


async def run_get_item(services: Services, call: Call) -> Reply:
    item_id = call.path["item_id"]

    def read(db: Conn) -> Reply:
        item = store.get_item(db, item_id) if re.fullmatch(r"[A-Za-z0-9_\-]{1,64}", item_id) else None
        if item is None:
            raise ApiError(404, "item_not_found", f"no item {item_id}", param="item_id")
        return reply(item_json(item, store.get_provider(db, item.provider_uuid)))

    return await services.reads.run(read)
