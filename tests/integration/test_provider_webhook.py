"""The provider hears of its orders (a signed webhook to a URL it registers, under
the SSRF rules) and lists them (paginated); the order's audit trail is `audit_chain: {entries}`."""

from __future__ import annotations

import asyncio
import json
from pathlib import Path

import pytest
from agentledger_sdk import AsyncAgentLedger, NotFound
from agentledger_sdk.webhooks import verify_service
from aiohttp import web

from core.anvil import free_port
from tests.integration.chainkit import System
from tests.integration.test_checkout import Shop
from tests.integration.test_providers import Harness, assert_error, run


def test_provider_is_told_of_new_orders_and_lists_them(system: System, tmp_path: Path) -> None:
    received: list[tuple[bytes, dict[str, str]]] = []

    async def receiver(request: web.Request) -> web.Response:
        received.append((await request.read(), dict(request.headers)))
        return web.Response(status=204)

    async def body(h: Harness) -> None:
        hook_app = web.Application()
        hook_app.router.add_post("/provider", receiver)
        runner = web.AppRunner(hook_app)
        await runner.setup()
        port = free_port()
        await web.TCPSite(runner, "127.0.0.1", port).start()
        try:
            await flow(h, f"http://127.0.0.1:{port}/provider")
        finally:
            await runner.cleanup()

    async def flow(h: Harness, url: str) -> None:
        shop = Shop(h, system.users[2])
        provider_key, wallet, shop.token, shop.item = await h.provider(system.users[0], system.users[1].address)
        shop.key, _, _ = await h.register()
        system.mint_usdc(shop.buyer.address, 10_000 * 10**6)
        system.approve(shop.buyer, system.gateway.address, 10_000 * 10**6)
        hook = f"/api/acp/providers/{wallet}/webhook"
        orders = f"/api/acp/providers/{wallet}/orders"

        # who may set it, and where to
        assert_error(await h.call("POST", hook, {"url": url}), 401, "missing_api_key", "Authorization")
        assert_error(await h.call("POST", hook, {"url": url}, key=shop.key), 404, "agent_not_found", "agent_id")
        unlinked_key, unlinked, _ = await h.register()
        assert_error(
            await h.call("POST", f"/api/acp/providers/{unlinked}/webhook", {"url": url}, key=unlinked_key),
            403,
            "provider_not_linked",
        )
        h.checkout.services.allow_private = False  # as in production: loopback, private, link-local refused
        for bad in (url, "http://169.254.169.254/latest/meta-data", "http://10.0.0.1/x", "ftp://example.com/x"):
            refused = await h.call("POST", hook, {"url": bad}, key=provider_key)
            assert_error(refused, 400, "invalid_webhook_url", "$.url")
        h.checkout.services.allow_private = True  # the test's receiver is on loopback
        set_ = await h.call("POST", hook, {"url": url}, key=provider_key)
        assert set_.status == 200, set_.body
        secret = set_.body["webhook_secret"]
        assert set_.body["webhook_url"] == url and len(secret) == 64

        # two orders
        made = []
        for _ in range(2):
            sid = await shop.new(buyer={"email": "b@example.com"})
            c = await shop.complete(sid)
            assert c.status == 200, c.body
            made.append(c.body["order"])
        for _ in range(200):
            if len(received) >= 2:
                break
            await asyncio.sleep(0.05)
        news = [json.loads(raw) for raw, _ in received]
        assert [n["event"] for n in news] == ["order.created", "order.created"], news
        for (raw, headers), n, order in zip(received, news, made, strict=True):
            assert verify_service(raw, secret, headers["X-Service-Signature"])
            assert n["order_id"] == order["id"] and n["status"] == "created"
            assert n["service_job_id"] == order["service_job_id"] and n["amount"] == 250 * 10**6
            assert n["line_items"][0]["item"]["id"] == shop.item and n["buyer_address"] == shop.buyer.address

        # the list, newest first, one per page
        page1 = await h.call("GET", f"{orders}?limit=1", key=provider_key)
        assert page1.status == 200, page1.body
        assert [o["id"] for o in page1.body["data"]] == [made[1]["id"]] and page1.body["has_more"] is True
        page2 = await h.call("GET", f"{orders}?limit=1&cursor={page1.body['next_cursor']}", key=provider_key)
        assert [o["id"] for o in page2.body["data"]] == [made[0]["id"]]
        assert page2.body["has_more"] is False and page2.body["next_cursor"] is None
        assert (await h.call("GET", f"{orders}?status=released", key=provider_key)).body["data"] == []
        assert_error(await h.call("GET", orders, key=shop.key), 404, "agent_not_found", "agent_id")
        assert (await h.call("GET", f"{orders}?limit=x", key=provider_key)).status == 400

        # the order's audit trail in the spec's shape
        view = await h.call("GET", f"/api/acp/orders/{made[0]['id']}")
        assert set(view.body["audit_chain"]) == {"entries"}
        (entry,) = view.body["audit_chain"]["entries"]
        assert entry["prev_hash"] == "genesis" and entry["payload"]["to_state"] == "created"

        # the same through the SDK
        async with AsyncAgentLedger(h.base, provider_key) as al:
            page = await al.provider_orders(wallet, limit=1)
            assert [o["id"] for o in page.orders] == [made[1]["id"]] and page.has_more
            last = await al.provider_orders(wallet, limit=1, cursor=page.next_cursor)
            assert [o["id"] for o in last.orders] == [made[0]["id"]] and last.next_cursor is None
            assert (await al.provider_orders(wallet, "created")).orders[0]["status"] == "created"
            rotated = await al.set_provider_webhook(wallet, url)
            assert rotated["webhook_secret"] != secret and rotated["webhook_url"] == url
            async with AsyncAgentLedger(h.base, shop.key) as buyer:
                with pytest.raises(NotFound):
                    await buyer.provider_orders(wallet)
            gone = await al.delete_provider_webhook(wallet)
        # stopped
        assert gone.raw == {"agent_id": wallet, "webhook_url": None}
        sid = await shop.new(buyer={"email": "b@example.com"})
        assert (await shop.complete(sid)).status == 200
        await asyncio.sleep(0.3)
        assert len(received) == 2

    run(tmp_path, system, body, dispatcher=True)
