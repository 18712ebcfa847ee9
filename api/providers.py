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
of the agent (409 provider_already_linked), a self wallet another provider or token uses (409
self_wallet_taken), a signature from another address (401 signature_mismatch), a stale timestamp
(401 timestamp_out_of_window), an unknown referrer token (400 unknown_referrer).

Crash safety: the provider row is written first with token_id NULL; after the mint the token id is
recorded. A link retried after a crash in between finds the token by the registry's
tokenOfWalletId(walletId) instead of minting again (the registry refuses a second mint of one
wallet id anyway).

Catalogue: POST /api/acp/items (a linked provider's key) {item_id?, title, tier, price?, agent_id?}
and the public GET /api/acp/items, GET /api/acp/items/{item_id}. Prices are decimal USDC in and
out (`price`), with `unit_amount` in micro-USDC as checkout sessions use.
"""

from __future__ import annotations

import asyncio
import logging
import re
import secrets
from typing import Annotated, Any

import apsw
from aiohttp import web
from eth_account import Account
from eth_account.messages import encode_defunct
from pydantic import BaseModel, ConfigDict, Field
from web3 import Web3

from api import idempotency
from api.acp import OPERATOR, acp_body, add_acp_headers, json_response, ok
from api.auth import Caller, agent_for, authenticate
from api.checkout import chain_unavailable
from api.errors import ApiError
from api.models import Amount, Wallet
from api.operation import Operation
from api.wallets import CLOCK, WALLET_DB, WRITER, RawJson
from core import checkout as rules
from core.money import usdc_text
from core.operator import ChainUnavailable, ContractReverted, Operator, SendUncertain, TransactionFailed, tx_hash_of
from core.store import checkout as store
from core.store.checkout import ItemRow, ProviderRow
from core.store.orders import iso

log = logging.getLogger("agentledger.providers")

#: Serialises provider links in this process (rare calls; makes check-insert-mint-record race-free).
LINK_LOCK: web.AppKey[asyncio.Lock] = web.AppKey("provider_link_lock", asyncio.Lock)

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
        "price": RawJson(usdc_text(item.price)),
        "unit_amount": item.price,
        "currency": rules.CURRENCY,
        "provider": {
            "agent_id": provider.wallet if provider else None,
            "token_id": provider.token_id if provider else None,
        },
        "created_at": iso(item.created_at),
    }


# ---- provider link ------------------------------------------------------------------------------


def _recover(message: str, signature: str) -> str | None:
    try:
        return str(Account.recover_message(encode_defunct(text=message), signature=signature))
    except Exception:  # malformed signature (bad v, s out of range, ...)
        return None


async def link_provider(request: web.Request) -> web.Response:
    app = request.app
    db = app[WALLET_DB]
    caller = authenticate(db, request)
    body = await request.read()
    now = app[CLOCK]()
    operator = app[OPERATOR]
    try:
        chain_id = await operator.chain_id()
    except ChainUnavailable as exc:
        raise chain_unavailable(exc) from exc
    result: dict[str, Any] = {}

    async def steps() -> None:
        req = acp_body(ProviderLinkRequest, body)
        agent = agent_for(db, caller, req.agent_id, param="$.agent_id")
        self_wallet = Web3.to_checksum_address(req.self_wallet)
        owner = Web3.to_checksum_address(req.owner_address)
        if not rules.within_window(req.timestamp, now):
            raise ApiError(
                401,
                "timestamp_out_of_window",
                f"timestamp must be within {rules.LINK_WINDOW_SECONDS} s of the server clock ({int(now)})",
                param="$.timestamp",
            )
        message = rules.provider_link_message(
            chain_id=chain_id, agent_wallet=agent.wallet, self_wallet=self_wallet, owner=owner, timestamp=req.timestamp
        )
        signer = _recover(message, req.signature)
        if signer is None:
            raise ApiError(400, "invalid_signature", "signature is not a valid 65-byte signature", param="$.signature")
        if signer != self_wallet:
            raise ApiError(
                401,
                "signature_mismatch",
                f"the signature recovers to {signer}, not to self_wallet {self_wallet}",
                param="$.signature",
            )
        async with app[LINK_LOCK]:
            result["provider"] = await _link(app, agent.uuid, agent.wallet, self_wallet, owner, req, now)

    def finish(conn: apsw.Connection) -> tuple[int, bytes]:
        p = store.get_provider(conn, result["provider"].agent_uuid)
        assert p is not None
        return ok(provider_json(p), 201)

    return await idempotency.execute(
        request, app[WRITER], owner=caller.key_hash, body=body, now=now, work=finish, before=steps
    )


async def _link(
    app: web.Application,
    agent_uuid: str,
    wallet: str,
    self_wallet: str,
    owner: str,
    req: ProviderLinkRequest,
    now: float,
) -> ProviderRow:
    writer, operator = app[WRITER], app[OPERATOR]

    def reserve(conn: apsw.Connection) -> ProviderRow | None:
        existing = store.get_provider(conn, agent_uuid)
        if existing is not None and existing.token_id is not None:
            raise ApiError(409, "provider_already_linked", f"agent {wallet} is already linked as a provider")
        holder = store.provider_by_self_wallet(conn, self_wallet)
        if holder is not None and holder.agent_uuid != agent_uuid:
            raise ApiError(409, "self_wallet_taken", f"{self_wallet} is another provider's self wallet")
        if existing is not None:  # a pending link (a crashed attempt): the chain decides below
            return existing
        store.insert_pending_provider(
            conn,
            agent_uuid=agent_uuid,
            self_wallet=self_wallet,
            owner_address=owner,
            referrer_token_id=req.referrer_token_id,
            now=now,
        )
        return None

    await writer.run(reserve)
    token_id, mint_tx = await _existing_token(operator, wallet)
    if token_id is None:
        token_id, mint_tx = await _mint(app, agent_uuid, wallet, self_wallet, owner, req.referrer_token_id)
    # What the chain recorded wins (a recovered token keeps its original wallets and referrer).
    agent = await _chain_call(operator, "AgentRegistry", "agent", token_id)
    chain_owner = await _chain_call(operator, "AgentRegistry", "ownerOf", token_id)
    chain_self, referrer = Web3.to_checksum_address(agent[0]), int(agent[1]) or None

    def record(conn: apsw.Connection) -> ProviderRow:
        store.set_provider_token(
            conn,
            agent_uuid,
            token_id=token_id,
            mint_tx=mint_tx,
            self_wallet=chain_self,
            owner_address=Web3.to_checksum_address(chain_owner),
            referrer_token_id=referrer,
        )
        p = store.get_provider(conn, agent_uuid)
        assert p is not None
        return p

    return await writer.run(record)


async def _chain_call(operator: Operator, contract: str, fn: str, *args: Any) -> Any:
    try:
        return await operator.call(contract, fn, *args)
    except ChainUnavailable as exc:
        raise chain_unavailable(exc) from exc


async def _existing_token(operator: Operator, wallet: str) -> tuple[int | None, str | None]:
    try:
        return int(await operator.call("AgentRegistry", "tokenOfWalletId", wallet)), None
    except ContractReverted as exc:
        if exc.error_name == "UnknownWalletId":
            return None, None
        log.warning("registry lookup for %s failed: %s", wallet, exc)
        raise ApiError(502, "chain_error", f"registry lookup failed ({exc.error_name})", type_="service_error") from exc
    except ChainUnavailable as exc:
        raise chain_unavailable(exc) from exc


async def _mint(
    app: web.Application, agent_uuid: str, wallet: str, self_wallet: str, owner: str, referrer: int | None
) -> tuple[int, str | None]:
    operator, writer = app[OPERATOR], app[WRITER]

    async def forget() -> None:  # nothing was minted: the pending row must not block a retry
        await writer.run(lambda conn: store.delete_pending_provider(conn, agent_uuid))

    try:
        receipt = await operator.transact("AgentRegistry", "mint", owner, self_wallet, wallet, referrer or 0)
    except ContractReverted as exc:
        if exc.error_name == "WalletIdTaken":  # minted meanwhile (by a crashed attempt's transaction)
            token, _ = await _existing_token(operator, wallet)
            if token is not None:
                return token, None
        await forget()
        raise _mint_error(exc, self_wallet, referrer) from exc
    except (ChainUnavailable, TransactionFailed) as exc:
        await forget()
        log.warning("minting the agent token of %s failed: %s", wallet, exc)  # may carry the RPC URL: log only
        raise ApiError(
            503, "chain_unavailable", "minting failed: the chain node did not accept it", type_="service_error"
        ) from exc
    except SendUncertain as exc:  # keep the pending row: a retry finds the token if it was minted
        log.warning("minting the agent token of %s: outcome unknown: %s", wallet, exc)
        raise ApiError(
            503, "chain_unavailable", "minting outcome unknown; retry the link shortly", type_="service_error"
        ) from exc
    (event,) = operator.events(receipt, "AgentRegistry", "AgentRegistered")
    return int(event["args"]["tokenId"]), tx_hash_of(receipt)


def _mint_error(exc: ContractReverted, self_wallet: str, referrer: int | None) -> ApiError:
    if exc.error_name == "SelfWalletTaken":
        return ApiError(409, "self_wallet_taken", f"{self_wallet} is already an agent's self wallet on-chain")
    if exc.error_name == "UnknownAgent":
        return ApiError(400, "unknown_referrer", f"no agent token {referrer}", param="$.referrer_token_id")
    log.warning("registry refused the mint: %s", exc)
    return ApiError(502, "mint_failed", f"the registry refused the mint ({exc.error_name})", type_="service_error")


async def get_provider(request: web.Request) -> web.Response:
    """GET /api/acp/providers/{agent_id}: public (wallet id or UUID)."""
    db = request.app[WALLET_DB]
    key = request.match_info["agent_id"]
    p = store.provider_by_wallet(db, key) if key.startswith("agl_") else store.get_provider(db, key)
    if p is None or p.token_id is None:
        raise ApiError(404, "provider_not_found", f"no linked provider {key}", param="agent_id")
    return json_response(provider_json(p))


# ---- catalogue ----------------------------------------------------------------------------------


def _provider_for(conn: apsw.Connection, caller: Caller, agent_id: str | None) -> ProviderRow:
    """The linked provider the caller creates an item for: its agent (agent-scoped key) or `agent_id`."""
    if agent_id is not None:
        agent = agent_for(conn, caller, agent_id, param="$.agent_id")
        uuid = agent.uuid
    elif caller.agent_id is not None:
        uuid = caller.agent_id
    else:
        raise ApiError(
            400, "missing_agent_id", "an account-scoped key must name the provider's agent_id", param="$.agent_id"
        )
    p = store.get_provider(conn, uuid)
    if p is None or p.token_id is None:
        raise ApiError(403, "provider_not_linked", "the agent is not a linked provider: POST /api/acp/providers first")
    return p


async def create_item(request: web.Request) -> web.Response:
    app = request.app
    caller = authenticate(app[WALLET_DB], request)
    body = await request.read()
    now = app[CLOCK]()

    def work(conn: apsw.Connection) -> tuple[int, bytes]:
        req = acp_body(ItemCreateRequest, body)
        provider = _provider_for(conn, caller, req.agent_id)
        item_id = req.item_id or "item_" + secrets.token_hex(8)
        if store.get_item(conn, item_id) is not None:
            raise ApiError(409, "item_exists", f"an item {item_id} already exists", param="$.item_id")
        price = req.price if req.price is not None else rules.TIERS[req.tier].default_price
        item = ItemRow(item_id, provider.agent_uuid, req.title, req.tier, price, now)
        store.insert_item(conn, item)
        return ok(item_json(item, provider), 201)

    return await idempotency.execute(request, app[WRITER], owner=caller.key_hash, body=body, now=now, work=work)


async def list_items(request: web.Request) -> web.Response:
    db = request.app[WALLET_DB]
    q = acp_body(ItemsQuery, None, query=dict(request.query))
    limit = min(int(q.limit), 100) if q.limit else 100
    provider_uuid = None
    if q.provider is not None:
        p = store.provider_by_wallet(db, q.provider)
        if p is None:
            return json_response({"data": [], "has_more": False})
        provider_uuid = p.agent_uuid
    items = store.list_items(db, provider_uuid=provider_uuid, after=q.after, limit=limit + 1)
    providers: dict[str, ProviderRow | None] = {}
    for it in items:
        if it.provider_uuid not in providers:
            providers[it.provider_uuid] = store.get_provider(db, it.provider_uuid)
    page = items[:limit]
    data = [item_json(it, providers[it.provider_uuid]) for it in page]
    return json_response({"data": data, "has_more": len(items) > limit})


async def get_item(request: web.Request) -> web.Response:
    db = request.app[WALLET_DB]
    item_id = request.match_info["item_id"]
    item = store.get_item(db, item_id) if re.fullmatch(r"[A-Za-z0-9_\-]{1,64}", item_id) else None
    if item is None:
        raise ApiError(404, "item_not_found", f"no item {item_id}", param="item_id")
    return json_response(item_json(item, store.get_provider(db, item.provider_uuid)))


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
            400: ("invalid_signature", "unknown_referrer"),
            401: ("timestamp_out_of_window", "signature_mismatch"),
            404: ("agent_not_found",),
            409: ("provider_already_linked", "self_wallet_taken"),
            502: ("mint_failed", "chain_error"),
            503: ("chain_unavailable",),
        },
        tags=("checkout",),
        description="The self wallet signs (EIP-191) 'agentledger provider link\\nchain: <id>\\nagent: <agl_ id>\\n"
        "self_wallet: <address>\\nowner: <address>\\ntimestamp: <unix s>' (EIP-55 addresses, +-5 min window).",
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
        errors={400: ("missing_agent_id",), 403: ("provider_not_linked",), 409: ("item_exists",)},
        tags=("checkout",),
        description="Tiers: standard 48 h (default 250 USDC), rush 24 h (375 USDC), deep 72 h (500 USDC); "
        "`price` (USDC) overrides the tier's default.",
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
    ),
]


def add_provider_routes(app: web.Application, operator: Operator) -> None:
    """Mount provider linking and the catalogue (needs add_wallet_routes first: WALLET_DB, WRITER, CLOCK)."""
    app[OPERATOR] = operator
    app[LINK_LOCK] = asyncio.Lock()
    add_acp_headers(app)
    app.router.add_post("/api/acp/providers", link_provider)
    app.router.add_get("/api/acp/providers/{agent_id}", get_provider)
    app.router.add_post("/api/acp/items", create_item)
    app.router.add_get("/api/acp/items", list_items)
    app.router.add_get("/api/acp/items/{item_id}", get_item)
