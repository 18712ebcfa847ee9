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
import secrets
from typing import Annotated, Any

from aiohttp import web
from pydantic import BaseModel, ConfigDict, Field
from web3 import Web3

from api import idempotency
from api.acp import acp_body, add_acp_headers
from api.auth import Caller, agent_for
from api.errors import ApiError
from api.http import CHECKOUT, CLOCK, READS, WRITER, chain_unavailable, encode, iso, ok, usdc
from api.models import Amount, Wallet
from api.operation import Call, Operation, Reply
from api.policy import mount
from core.checkout import providers, rules, views
from core.checkout.context import Checkout
from core.operator import ChainUnavailable
from core.store import Conn
from core.store import checkout as store
from core.store.checkout import ItemRow, ProviderRow

_ADDRESS = r"^0x[0-9a-fA-F]{40}$"


class _Strict(BaseModel):
    model_config = ConfigDict(extra="forbid", strict=True, frozen=True)


class ProviderLinkRequest(_Strict):
    agent_id: Wallet
    self_wallet: Annotated[str, Field(pattern=_ADDRESS)]
    owner_address: Annotated[str, Field(pattern=_ADDRESS)]
    referrer_token_id: Annotated[int, Field(ge=1)] | None = None
    timestamp: Annotated[int, Field(ge=0, lt=2**63)]
    signature: Annotated[str, Field(pattern=r"^0x[0-9a-fA-F]{130}$")]


class ItemCreateRequest(_Strict):
    item_id: Annotated[str, Field(pattern=r"^[A-Za-z0-9_\-]{1,64}$")] | None = None
    title: Annotated[str, Field(min_length=1, max_length=200)]
    tier: Annotated[str, Field(pattern=r"^(standard|rush|deep)$")]
    price: Amount | None = None
    agent_id: Wallet | None = None


class ItemsQuery(_Strict):
    provider: Wallet | None = None
    after: Annotated[str, Field(max_length=64)] | None = None
    limit: Annotated[str, Field(pattern=r"^[0-9]{1,3}$")] | None = None


class ProviderWebhookRequest(_Strict):
    url: Annotated[str, Field(min_length=1, max_length=2048, description="http(s) URL; private targets refused")]


class ProviderOrdersQuery(_Strict):
    status: (
        Annotated[str, Field(pattern=r"^(created|acknowledged|in_progress|completed|released|failed|disputed)$")] | None
    ) = None
    limit: Annotated[str, Field(pattern=r"^[0-9]{1,3}$", description="1-100, default 50")] | None = None
    cursor: Annotated[str, Field(pattern=r"^[0-9]{1,19}$", description="next_cursor of the previous page")] | None = (
        None
    )


class ProviderWebhookResponse(BaseModel):
    model_config = ConfigDict(extra="forbid")
    agent_id: str
    webhook_url: str | None
    webhook_secret: Annotated[
        str | None, Field(description="HMAC key of the webhooks; shown once, in the answer that set it")
    ] = None


class ProviderOrder(BaseModel):
    model_config = ConfigDict(extra="allow")
    id: str
    status: str
    service_job_id: str
    amount: int
    deadline: int


class ProviderOrderList(BaseModel):
    model_config = ConfigDict(extra="forbid")
    data: list[ProviderOrder]
    has_more: bool
    next_cursor: str | None


class ProviderResponse(BaseModel):
    model_config = ConfigDict(extra="allow")
    agent_id: str
    agent_uuid: str
    self_wallet: str
    owner_address: str
    token_id: int | None
    referrer_token_id: int | None
    mint_tx: str | None
    linked_at: str


class ItemResponse(BaseModel):
    model_config = ConfigDict(extra="allow")
    id: str
    title: str
    tier: str
    delivery_hours: int
    price: Any
    unit_amount: int
    currency: str
    provider: dict[str, Any]


class ItemListResponse(BaseModel):
    model_config = ConfigDict(extra="allow")
    data: list[ItemResponse]
    has_more: bool


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


async def run_link_provider(app: web.Application, call: Call) -> Reply:
    reads = app[READS]
    ctx = app[CHECKOUT]
    caller = call.caller
    assert caller is not None
    body = call.body
    now = app[CLOCK]()
    try:
        chain_id = await ctx.operator.chain_id()
    except ChainUnavailable as exc:
        raise chain_unavailable(exc) from exc
    result: dict[str, ProviderRow] = {}

    async def steps() -> None:
        req = acp_body(ProviderLinkRequest, body)
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

    return await idempotency.execute_call(app[WRITER], call, owner=caller.key_hash, now=now, work=finish, before=steps)


def _reply(payload: dict[str, Any], status: int = 200) -> Reply:
    return Reply(status, encode(payload).encode())


async def run_get_provider(app: web.Application, call: Call) -> Reply:
    """GET /api/acp/providers/{agent_id}: public (wallet id or UUID)."""
    key = call.path["agent_id"]
    p = await app[READS].run(
        lambda db: store.provider_by_wallet(db, key) if key.startswith("agl_") else store.get_provider(db, key)
    )
    if p is None or p.token_id is None:
        raise ApiError(404, "provider_not_found", f"no linked provider {key}", param="agent_id")
    return _reply(provider_json(p))


# ---- the provider's webhook and its orders ---------------------------------------------------------


def _own_provider(db: Conn, caller: Caller, agent_id: str) -> ProviderRow:
    """The linked provider `agent_id` (an agl_ wallet) if the caller's key covers it."""
    agent = agent_for(db, caller, agent_id, param="agent_id")
    return providers.linked_provider(db, agent.uuid)


async def run_set_provider_webhook(app: web.Application, call: Call) -> Reply:
    """POST /api/acp/providers/{agent_id}/webhook {url}: where the provider hears of its orders
    (`order.created` with what to work on, then `job.state_changed`), signed like every webhook
    with the secret this answer shows once (each call rotates it)."""
    caller = call.caller
    assert caller is not None
    agent_id = call.path["agent_id"]
    p = await app[READS].run(lambda db: _own_provider(db, caller, agent_id))
    req = acp_body(ProviderWebhookRequest, call.body)
    await providers.check_webhook_url(req.url, app[CHECKOUT].allow_private_webhooks)  # DNS: outside the writer
    secret = await app[WRITER].run(lambda conn: providers.set_webhook(conn, p.agent_uuid, req.url))
    return _reply({"agent_id": agent_id, "webhook_url": req.url, "webhook_secret": secret})


async def run_delete_provider_webhook(app: web.Application, call: Call) -> Reply:
    caller = call.caller
    assert caller is not None
    agent_id = call.path["agent_id"]
    p = await app[READS].run(lambda db: _own_provider(db, caller, agent_id))
    await app[WRITER].run(lambda conn: providers.clear_webhook(conn, p.agent_uuid))
    return _reply({"agent_id": agent_id, "webhook_url": None})


async def run_list_provider_orders(app: web.Application, call: Call) -> Reply:
    """GET /api/acp/providers/{agent_id}/orders?status=&limit=&cursor=: the provider's orders, newest first."""
    caller = call.caller
    assert caller is not None

    def read(db: Conn) -> Reply:
        p = _own_provider(db, caller, call.path["agent_id"])
        q = acp_body(ProviderOrdersQuery, None, query=dict(call.query))
        limit = max(1, min(int(q.limit), 100)) if q.limit else 50
        cursor = int(q.cursor) if q.cursor else None
        return _reply(views.provider_orders_page(db, p.agent_uuid, status=q.status, cursor=cursor, limit=limit))

    return await app[READS].run(read)


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


async def run_create_item(app: web.Application, call: Call) -> Reply:
    caller = call.caller
    assert caller is not None
    body = call.body
    now = app[CLOCK]()

    def work(conn: Conn) -> tuple[int, bytes]:
        req = acp_body(ItemCreateRequest, body)
        provider = _provider_for(conn, caller, req.agent_id)
        item_id = req.item_id or "item_" + secrets.token_hex(8)
        if store.get_item(conn, item_id) is not None:
            raise ApiError(409, "item_exists", f"an item {item_id} already exists", param="$.item_id")
        price = req.price if req.price is not None else rules.TIERS[req.tier].default_price
        item = ItemRow(item_id, provider.agent_uuid, req.title, req.tier, price, now)
        store.insert_item(conn, item)
        return ok(item_json(item, provider), 201)

    return await idempotency.execute_call(app[WRITER], call, owner=caller.key_hash, now=now, work=work)


async def run_list_items(app: web.Application, call: Call) -> Reply:
    q = acp_body(ItemsQuery, None, query=dict(call.query))
    limit = min(int(q.limit), 100) if q.limit else 100

    def read(db: Conn) -> Reply:
        provider_uuid = None
        if q.provider is not None:
            p = store.provider_by_wallet(db, q.provider)
            if p is None:
                return _reply({"data": [], "has_more": False})
            provider_uuid = p.agent_uuid
        items = store.list_items(db, provider_uuid=provider_uuid, after=q.after, limit=limit + 1)
        providers: dict[str, ProviderRow | None] = {}
        for it in items:
            if it.provider_uuid not in providers:
                providers[it.provider_uuid] = store.get_provider(db, it.provider_uuid)
        page = items[:limit]
        data = [item_json(it, providers[it.provider_uuid]) for it in page]
        return _reply({"data": data, "has_more": len(items) > limit})

    return await app[READS].run(read)


async def run_get_item(app: web.Application, call: Call) -> Reply:
    item_id = call.path["item_id"]

    def read(db: Conn) -> Reply:
        item = store.get_item(db, item_id) if re.fullmatch(r"[A-Za-z0-9_\-]{1,64}", item_id) else None
        if item is None:
            raise ApiError(404, "item_not_found", f"no item {item_id}", param="item_id")
        return _reply(item_json(item, store.get_provider(db, item.provider_uuid)))

    return await app[READS].run(read)


# ---- wiring -------------------------------------------------------------------------------------

OPERATIONS: list[Operation] = [
    Operation(
        "POST",
        "/api/acp/providers",
        "linkProvider",
        "Link an agent as a provider (mints its agent NFT)",
        ProviderResponse,
        status=201,
        request=ProviderLinkRequest,
        idempotent=True,
        errors={
            401: ("timestamp_out_of_window", "signature_mismatch"),
            404: ("agent_not_found", "unknown_referrer"),
            409: ("provider_already_linked", "provider_link_in_progress", "self_wallet_taken"),
            502: ("mint_failed", "chain_error"),
            503: ("chain_unavailable",),
        },
        tags=("checkout",),
        description="The self wallet signs (EIP-191) 'agentledger provider link\\nchain: <id>\\nagent: <agl_ id>\\n"
        "self_wallet: <address>\\nowner: <address>\\ntimestamp: <unix s>' (EIP-55 addresses, +-5 min window).",
        run=run_link_provider,
        touches="agent",
        scope="admin",
        open_world=True,
    ),
    Operation(
        "GET",
        "/api/acp/providers/{agent_id}",
        "getProvider",
        "A linked provider (public)",
        ProviderResponse,
        auth="none",
        errors={404: ("provider_not_found",)},
        tags=("checkout",),
        run=run_get_provider,
        resource="agentledger://providers/{agent_id}",
    ),
    Operation(
        "POST",
        "/api/acp/providers/{agent_id}/webhook",
        "setProviderWebhook",
        "Register the provider's webhook (news of its orders)",
        ProviderWebhookResponse,
        request=ProviderWebhookRequest,
        errors={
            400: ("invalid_webhook_url",),
            403: ("provider_not_linked",),
            404: ("agent_not_found",),
        },
        tags=("checkout",),
        run=run_set_provider_webhook,
        touches="agent",
        scope="admin",
        destructive=True,
        description="Key of the agent or its account. The provider is sent `order.created` (the order id, "
        "service_job_id, amount in micro-USDC, deadline, buyer_address, line_items) when an order of its is "
        "created, then `job.state_changed` on each move, signed as every webhook (X-Service-Signature and the "
        "Standard Webhooks headers) with `webhook_secret`, shown once in this answer; each call rotates it. "
        "http(s) only; private, loopback and link-local targets are refused (also after DNS resolution).",
        path_params={"agent_id": "the provider agent's agl_ wallet id"},
    ),
    Operation(
        "DELETE",
        "/api/acp/providers/{agent_id}/webhook",
        "deleteProviderWebhook",
        "Stop the provider's order webhooks",
        ProviderWebhookResponse,
        errors={403: ("provider_not_linked",), 404: ("agent_not_found",)},
        tags=("checkout",),
        path_params={"agent_id": "the provider agent's agl_ wallet id"},
        run=run_delete_provider_webhook,
        touches="agent",
        scope="admin",
        destructive=True,
    ),
    Operation(
        "GET",
        "/api/acp/providers/{agent_id}/orders",
        "listProviderOrders",
        "The provider's orders, newest first",
        ProviderOrderList,
        query=ProviderOrdersQuery,
        errors={403: ("provider_not_linked",), 404: ("agent_not_found",)},
        tags=("checkout",),
        run=run_list_provider_orders,
        touches="agent",
        description="Key of the agent or its account. Each order: id, status, service_job_id, settlement_tx_hash, "
        "amount (micro-USDC), deadline, buyer_address, deliverable_cid, line_items. Paginated: pass next_cursor "
        "as cursor while has_more.",
        path_params={"agent_id": "the provider agent's agl_ wallet id"},
    ),
    Operation(
        "POST",
        "/api/acp/items",
        "createItem",
        "Publish a catalogue item",
        ItemResponse,
        status=201,
        request=ItemCreateRequest,
        idempotent=True,
        errors={
            404: ("agent_not_found",),
            403: ("provider_not_linked",),
            409: ("item_exists",),
            422: ("missing_agent_id",),
        },
        tags=("checkout",),
        description="Tiers: standard 48 h (default 250 USDC), rush 24 h (375 USDC), deep 72 h (500 USDC); "
        "`price` (USDC) overrides the tier's default.",
        run=run_create_item,
        touches="agent",
        scope="admin",
    ),
    Operation(
        "GET",
        "/api/acp/items",
        "listItems",
        "List catalogue items (public)",
        ItemListResponse,
        query=ItemsQuery,
        auth="none",
        tags=("checkout",),
        run=run_list_items,
    ),
    Operation(
        "GET",
        "/api/acp/items/{item_id}",
        "getItem",
        "A catalogue item (public)",
        ItemResponse,
        auth="none",
        errors={404: ("item_not_found",)},
        tags=("checkout",),
        run=run_get_item,
        resource="agentledger://items/{item_id}",
    ),
]


def add_provider_routes(app: web.Application, ctx: Checkout) -> None:
    """Mount provider linking and the catalogue (needs READS, WRITER and CLOCK, as api.app sets them)."""
    app[CHECKOUT] = ctx
    add_acp_headers(app)
    mount(app, OPERATIONS)
