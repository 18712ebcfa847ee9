"""The ownership marketplace ("drop") over HTTP, under /api/a2a/drop.

Every POST that records something on-chain names its transaction (`txHash`); the service checks
its receipt, the event it must hold and its sender before recording, and answers the same record
when the same transaction comes again. Value-moving POSTs honour Idempotency-Key (not /claim,
whose answer carries a key shown once). Listings, offers and sales are public (GET); an offer's
signature is shown to the seller only. The rules are core.marketplace's.
"""

from __future__ import annotations

import html
from collections.abc import Awaitable, Callable
from dataclasses import dataclass
from typing import Any
from urllib.parse import parse_qsl

from aiohttp import web

from api import idempotency
from api.auth import agent_for, reach
from api.errors import ApiError
from api.http import ok, reply, usdc
from api.marketplace import models
from api.models import parse_body, parse_query, validate
from api.operation import Call, Quoted, Reply
from api.policy import serve
from core.jsontext import bad_text, invalid_string
from core.keys import Caller, hash_api_key, new_api_key
from core.marketplace import handover, notices, records, rules, trading, views
from core.marketplace.context import Market
from core.money import usdc_text
from core.services import Services
from core.store import Conn
from core.store import marketplace as store
from core.store import wallets as wallet_store
from core.store.marketplace import ListingRow, OfferRow, SaleRow
from core.store.wallets import AgentRow
from core.wallets import WalletError, normalise_email

BASE = "/api/a2a/drop"

# ---- helpers ----------------------------------------------------------------------------------------


def _email(value: str | None, param: str) -> str | None:
    if value is None:
        return None
    try:
        return normalise_email(value)
    except WalletError as exc:
        raise ApiError(400, "invalid_email", exc.message, param=param) from exc


Answer = Callable[[Conn], tuple[int, bytes]]


async def _post(services: Services, call: Call, steps: Callable[[Market, Caller], Awaitable[Answer]]) -> Reply:
    """The common shape of a recording POST: `steps(market, caller)` (chain checks and the recording,
    async) under the caller's Idempotency-Key; what it answers, `answer(conn)` -> (status, body), is
    stored with the key."""
    answers: list[Answer] = []

    async def before() -> None:
        answers.append(await steps(services.part(Market), call.authenticated))

    reply = await idempotency.execute_call(
        services.writer,
        call,
        owner=call.authenticated.key_hash,
        now=services.clock(),
        work=lambda conn: answers[0](conn),
        before=before,
    )
    services.wake()
    return reply


def _agent_or_404(conn: Conn, wallet: str) -> AgentRow:
    agent = wallet_store.agent_by_wallet(conn, wallet)
    if agent is None:
        raise ApiError(404, "agent_not_found", f"no agent {wallet}", param="agentId")
    return agent


def _listing_or_404(conn: Conn, listing_id: str) -> ListingRow:
    row = store.get_listing(conn, listing_id)
    if row is None or row.state == rules.VOID:
        raise ApiError(404, "listing_not_found", f"no listing {listing_id}", param="listingId")
    return row


# ---- the operations (routes and MCP tools run the same code) ---------------------------------------


async def run_mint(services: Services, call: Call) -> Reply:
    async def steps(m: Market, caller: Caller) -> Answer:
        req = parse_body(models.MintRequest, call.body)
        agent = await m.reads.run(lambda db: agent_for(db, caller, req.agentId))
        token, tx, minted = await trading.mint(
            m,
            agent,
            owner=req.ownerAddress,
            self_wallet=req.selfWallet,
            timestamp=req.timestamp,
            signature=req.signature,
        )
        out = {"agentId": agent.wallet, "tokenId": token, "mintTx": tx, "minted": minted}
        return lambda _c: ok(out, 201 if minted else 200)

    return await _post(services, call, steps)


async def run_statement(services: Services, call: Call) -> Reply:
    m = services.part(Market)
    req = parse_body(models.StatementRequest, call.body)
    agent = await m.reads.run(lambda db: agent_for(db, call.authenticated, req.agentId))
    st = await trading.earnings_statement(m, agent, seller=req.sellerAddress)
    return reply(views.statement_json(agent.wallet, st))


async def run_list(services: Services, call: Call) -> Reply:
    async def steps(m: Market, caller: Caller) -> Answer:
        req = parse_body(models.ListRequest, call.body)
        agent = await m.reads.run(lambda db: agent_for(db, caller, req.agentId))
        row, created = await trading.record_listing(
            m,
            agent,
            tx_hash=req.txHash,
            asking=req.askingPriceUsdc,
            accept_offers=req.acceptOffers,
            seller_email=_email(req.sellerEmail, "sellerEmail"),
        )

        def answer(conn: Conn) -> tuple[int, bytes]:
            current = store.get_listing(conn, row.id)
            assert current is not None
            return ok({"listing": views.listing_json(current), "agentPaused": True}, 201 if created else 200)

        return answer

    return await _post(services, call, steps)


async def run_offer(services: Services, call: Call) -> Reply:
    async def steps(m: Market, caller: Caller) -> Answer:
        req = parse_body(models.OfferRequest, call.body)
        offer = await trading.record_offer(
            m,
            caller,
            listing_uuid=req.listingId,
            price=req.offerPriceUsdc,
            buyer=req.buyerAddress,
            nonce=req.nonce,
            deadline=req.deadline,
            signature=req.signature,
            buyer_email=_email(req.buyerEmail, "buyerEmail"),
        )
        return lambda _c: ok({"offer": views.offer_json(offer, fillable=True, reason=None, show_signature=True)}, 201)

    return await _post(services, call, steps)


async def run_accept(services: Services, call: Call) -> Reply:
    async def steps(m: Market, caller: Caller) -> Answer:
        req = parse_body(models.AcceptRequest, call.body)
        sale, created = await trading.record_commit(
            m,
            caller,
            listing_uuid=req.listingId,
            buy_now=req.buyNow,
            tx_hash=req.txHash,
            buyer_email=_email(req.buyerEmail, "buyerEmail"),
        )
        return lambda _c: ok(views.sale_json(sale), 201 if created else 200)

    return await _post(services, call, steps)


async def quote_accept(services: Services, call: Call) -> Quoted:
    """What a recorded commit moved: the sale price from the buyer to the seller (and the service's
    fee out of it), read from the commit transaction; nothing is recorded."""
    req = parse_body(models.AcceptRequest, call.body)
    price, buyer, seller = await trading.quote_commit(
        services.part(Market), listing_uuid=req.listingId, tx_hash=req.txHash
    )
    proceeds, fee = rules.sale_split(price)
    return Quoted(
        amount=price,
        source=buyer,
        recipient=seller,
        what=f"the purchase of listing {req.listingId}: {usdc_text(price)} USDC held in the marketplace until"
        " settlement, then to the seller less the service fee",
        details={"sellerProceeds": usdc(proceeds), "serviceFee": usdc(fee), "txHash": req.txHash},
    )


async def run_cancel(services: Services, call: Call) -> Reply:
    async def steps(m: Market, caller: Caller) -> Answer:
        req = parse_body(models.CancelRequest, call.body)
        listing = await trading.record_cancel(m, caller, listing_uuid=req.listingId, tx_hash=req.txHash)
        return lambda _c: ok({"listing": views.listing_json(listing)})

    return await _post(services, call, steps)


async def run_claim(services: Services, call: Call) -> Reply:
    """Not replayable (its answer is a key shown once): HTTP refuses Idempotency-Key (claim)."""
    m = services.part(Market)
    req = parse_body(models.ClaimRequest, call.body)
    agent = await m.reads.run(lambda db: _agent_or_404(db, req.agentId))
    key = new_api_key()
    moved, account, account_scoped = await handover.claim(
        m,
        agent=agent,
        caller=call.caller,
        owner=req.ownerAddress,
        timestamp=req.timestamp,
        signature=req.signature,
        new_key_hash=hash_api_key(key),
    )
    return reply(
        {
            "agent": {"id": moved.uuid, "wallet": moved.wallet, "name": moved.name, "specialty": moved.specialty},
            "accountId": account,
            "api_key": key,
            "scope": "account" if account_scoped else "agent",
        },
        201,
    )


async def run_watch(services: Services, call: Call) -> Reply:
    m = services.part(Market)
    caller = call.authenticated
    req = parse_body(models.WatchRequest, call.body)
    if (req.email is None) == (req.webhookUrl is None):
        raise ApiError(400, "invalid_field", "give exactly one of email, webhookUrl", param="email")
    agent = await m.reads.run(lambda db: _agent_or_404(db, req.agentId))
    address = _email(req.email, "email")
    row = await notices.add_watch(m, caller, agent, address, req.webhookUrl)
    payload: dict[str, Any] = {
        "watch": {"id": row.id, "agentId": agent.wallet, "email": address, "webhookUrl": row.webhook_url}
    }
    if row.webhook_secret is not None:
        payload["webhook_secret"] = row.webhook_secret  # shown once
    return reply(payload, 201)


async def run_unwatch(services: Services, call: Call) -> Reply:
    m = services.part(Market)
    caller = call.authenticated
    watch_id = call.path["watch_id"]

    def mine(db: Conn) -> None:
        absent = ApiError(404, "watch_not_found", f"no watch {watch_id} of yours", param="watch_id")
        row = store.get_watch(db, watch_id)
        if row is None:
            raise absent
        reach(caller, row.account_id, row.holder_agent_uuid, absent, "a watch held by the account")

    await m.reads.run(mine)
    await services.writer.run(lambda conn: store.delete_watch(conn, watch_id))
    return reply({"deleted": watch_id})


async def run_assets(services: Services, call: Call) -> Reply:
    m = services.part(Market)
    q = parse_query(models.AgentQuery, dict(call.query))

    def read(db: Conn) -> Reply:
        agent = _agent_or_404(db, q.agentId)
        rows = store.assets_of(db, agent.uuid)
        return reply({"agentId": agent.wallet, "assets": [views.asset_json(a) for a in rows]})

    return await m.reads.run(read)


async def run_flag_asset(services: Services, call: Call) -> Reply:
    m = services.part(Market)
    caller = call.authenticated
    req = parse_body(models.AssetFlagRequest, call.body)
    agent = await m.reads.run(lambda db: agent_for(db, caller, req.agentId))
    now = services.clock()
    rows = await services.writer.run(lambda conn: records.flag_asset(conn, agent, req.cid, req.transferredWithNft, now))
    return reply({"agentId": agent.wallet, "assets": [views.asset_json(a) for a in rows]})


async def run_browse(services: Services, call: Call) -> Reply:
    m = services.part(Market)
    q = parse_query(models.BrowseQuery, dict(call.query))
    if q.listingId is not None or q.agentId is not None:

        def one(db: Conn) -> _Shown:
            if q.listingId is not None:
                row = _listing_or_404(db, q.listingId)
            else:
                agent = wallet_store.agent_by_wallet(db, q.agentId or "")
                found = None if agent is None else store.latest_listing(db, agent.uuid)
                if found is None:
                    raise ApiError(404, "listing_not_found", f"agent {q.agentId} has no listing", param="agentId")
                row = found
            return _Shown(
                row,
                wallet_store.agent_by_uuid(db, row.agent_uuid) is not None,
                store.offers_of(db, row.id),
                store.sales_of(db, row.id),
            )

        return reply({"listing": await _full_listing(m, call.caller, await m.reads.run(one))})
    if q.status is not None and q.state is not None and q.status != q.state:
        raise ApiError(400, "invalid_field", "status and state (its deprecated name) differ", param="state")
    state = q.status or q.state or rules.ACTIVE
    per_page = min(int(q.perPage or rules.PAGE_SIZE), rules.MAX_PAGE_SIZE)
    page = int(q.page or 1)

    def listings(db: Conn) -> Reply:
        total = store.count_listings(db, state)
        rows = store.page_listings(db, state, per_page, (page - 1) * per_page)
        pages = max(1, -(-total // per_page))
        return reply({"listings": [views.listing_json(r) for r in rows], "total": total, "page": page, "pages": pages})

    return await m.reads.run(listings)


@dataclass(frozen=True)
class _Shown:
    """What one listing's page reads from the database (in one read): the listing, whether its agent
    still exists, its offers and its sales."""

    listing: ListingRow
    agent_exists: bool
    offers: list[OfferRow]
    sales: list[SaleRow]


async def _full_listing(m: Market, caller: Caller | None, shown: _Shown) -> dict[str, Any]:
    row, offers = shown.listing, shown.offers
    seller = (
        caller is not None
        and shown.agent_exists
        and row.seller_account == caller.account_id
        and caller.may_act_for(row.seller_account, row.agent_uuid)
    )
    fill = await trading.fillability(m, row, offers)
    out = views.listing_json(row)
    out["drop_offers"] = [
        views.offer_json(o, fillable=fill[o.id][0], reason=fill[o.id][1], show_signature=seller) for o in offers
    ]
    out["drop_sales"] = [views.sale_json(s) for s in shown.sales]
    template = rules.offer_typed_data(
        chain_id=m.chain_id,
        marketplace=m.marketplace,
        listing_id=row.chain_listing_id,
        buyer="{buyerAddress}",
        price=0,
        nonce=0,
        deadline=0,
    )
    out["offerTypedData"] = {k: template[k] for k in ("domain", "types", "primaryType")}
    return out


# ---- HTTP handlers ---------------------------------------------------------------------------------


async def claim(request: web.Request) -> web.Response:
    if idempotency.HEADER in request.headers:
        raise ApiError(  # well-formed, but this combination cannot be honoured: 422, not 400
            422,
            "idempotency_unsupported",
            f"a claim answers a key shown once and cannot be replayed; retry without {idempotency.HEADER}",
            param=idempotency.HEADER,
        )
    return await serve(request, run_claim, auth="optional")


_PAGE = '<!doctype html><html><head><meta charset="utf-8"><title>agentledger drop</title></head><body>{}</body></html>'


async def run_unsubscribe_page(services: Services, call: Call) -> Reply:
    """GET: a page with a button (link scanners follow GETs; only the POST unsubscribes); JSON when asked."""
    q = parse_query(models.TokenQuery, dict(call.query))
    wants_json = call.request is None or "application/json" in call.request.headers.get("Accept", "")
    if wants_json:
        return reply({"unsubscribe": f"POST {BASE}/unsubscribe?token={q.token}"})
    form = (
        f'<form method="post" action="{BASE}/unsubscribe?token={html.escape(q.token)}">'
        "<p>Stop all agentledger drop e-mails to this address?</p><button>Unsubscribe</button></form>"
    )
    return Reply(200, _PAGE.format(form).encode(), media_type="text/html")


async def run_unsubscribe(services: Services, call: Call) -> Reply:
    """POST (the form, or a mail client's RFC 8058 one-click List-Unsubscribe-Post)."""
    q = parse_query(models.TokenQuery, dict(call.query))
    now = services.clock()
    address = await services.writer.run(lambda conn: store.unsubscribe(conn, q.token, now))
    if address is None:
        raise ApiError(404, "unknown_token", "no such unsubscribe link", param="token")
    if call.request is None or call.request.content_type != "application/x-www-form-urlencoded":
        return reply({"unsubscribed": True})
    return Reply(200, _PAGE.format("<p>Unsubscribed: no more drop e-mails.</p>").encode(), media_type="text/html")


async def unsubscribe(request: web.Request) -> web.Response:
    if request.content_type == "application/x-www-form-urlencoded":  # the form /api/schema describes
        fields = parse_qsl((await request.read()).decode("utf-8", "replace"), keep_blank_values=True)
        seen: set[str] = set()
        for name, value in fields:  # the rules of every request, for this form's fields
            if bad_text(name) or bad_text(value):
                raise invalid_string(None if bad_text(name) else name)
            if name in seen:
                raise ApiError(400, "duplicate_key", f"the form field {name!r} appears twice", param=name)
            seen.add(name)
        validate(models.OneClickForm, dict(fields))
    return await serve(request, run_unsubscribe, auth="none")
