"""The buyer side of escrow checkout over real HTTP, a real SQLite file and a real anvil: sessions
(create, get, update, cancel, expire), complete funding the gateway job with the operator key,
every row of the complete error table, concurrent completes, GET /orders views, and a crash of the
API process between the funding transaction and its commit healed by the order follower.

Run as `python -m tests.integration.test_checkout --rpc ... --deployment ... --db ... --port ...`
it serves the same app (the crash test's subprocess)."""

from __future__ import annotations

import argparse
import asyncio
import json
import os
import subprocess
import sys
import time
from dataclasses import asdict
from pathlib import Path
from typing import Any

import aiohttp
import pytest
from agentledger_sdk.webhooks import verify_service
from aiohttp import web
from eth_account import Account
from eth_account.signers.local import LocalAccount

from api.errors import error_middleware
from api.http import Hooks
from api.wallets import add_wallet_routes
from core.anvil import Anvil, free_port
from core.chain import connect as connect_chain
from core.checkout import rules
from core.checkout.follower import OrderFollower
from core.checkout.sweep import STUCK_AFTER, sweep
from core.deployments import Deployment
from core.operator import Operator
from core.store import checkout as store
from core.store import connect, open_database, transaction
from core.store import orders as order_store
from indexer.rpc import RpcClient
from tests.integration.chainkit import USDC, System
from tests.integration.http_kit import install_checkout
from tests.integration.indexer_kit import make_indexer
from tests.integration.proc_kit import wait_serving
from tests.integration.rpc_proxy import RpcProxy
from tests.integration.test_providers import Harness, Reply, assert_error, run, serve
from tests.pg_redirect import child_location

ROOT = Path(__file__).resolve().parents[2]
STD = 250 * USDC
FUNDED = 1  # PaymentGateway.Status.Funded


def pay_signature(
    h: Harness,
    signer: LocalAccount,
    sid: str,
    *,
    amount: int | None = None,
    payer: str | None = None,
    token: int | None = None,
    deadline: int | None = None,
) -> str:
    """`signer`'s EIP-712 Funding consent for session `sid` (core.checkout.checkout_typed_data) paid by
    `payer` (default: the signer itself); amount, provider token and deadline default to the session's
    current ones (0 for an unknown session)."""
    s = store.get_session(h.db, sid)
    provider = store.get_provider(h.db, s.provider_uuid) if s else None
    typed = rules.checkout_typed_data(
        chain_id=h.system.deployment.chain_id,
        gateway=h.system.gateway.address,
        session_id=sid,
        buyer=payer or signer.address,
        provider_token_id=token if token is not None else (provider.token_id or 0 if provider else 0),
        amount=amount if amount is not None else (s.total if s else 0),
        deadline=deadline
        if deadline is not None
        else (rules.work_deadline(s.expires_at, [li["tier"] for li in s.line_items]) if s else 0),
    )
    return signer.sign_typed_data(full_message=typed).signature.to_0x_hex()


def complete_body(
    address: str | None,
    *,
    email: str | None = "buyer@example.com",
    handler: str | None = None,
    signature: str | None = None,
) -> Any:
    credential: dict[str, Any] = {"type": "address"}
    if address is not None:
        credential["token"] = address
    if signature is not None:
        credential["signature"] = signature
    body: dict[str, Any] = {
        "payment_data": {
            "handler_id": handler or rules.PAYMENT_HANDLER_ID,
            "instrument": {"type": "wallet", "credential": credential},
        }
    }
    if email is not None:
        body["buyer"] = {"email": email}
    return body


class Shop:
    """A linked provider with a standard item, and a funded buyer (key + chain account)."""

    def __init__(self, h: Harness, buyer: LocalAccount) -> None:
        self.h = h
        self.buyer = buyer
        self.item = ""
        self.key = ""
        self.token = 0

    async def open(self, *, approve: int = 10_000 * USDC, mint: int = 10_000 * USDC) -> Shop:
        s = self.h.system
        _, _, self.token, self.item = await self.h.provider(s.users[0], s.users[1].address)
        self.key, _, _ = await self.h.register()
        if mint:
            s.mint_usdc(self.buyer.address, mint)
        if approve:
            s.approve(self.buyer, s.gateway.address, approve)
        return self

    async def session(self, *, quantity: int = 1, buyer: dict[str, Any] | None = None, **extra: Any) -> Reply:
        body: dict[str, Any] = {"line_items": [{"item": {"id": self.item}, "quantity": quantity}], **extra}
        if buyer is not None:
            body["buyer"] = buyer
        return await self.h.call("POST", "/api/acp/checkout_sessions", body, key=self.key)

    async def new(self, **kw: Any) -> str:
        r = await self.session(**kw)
        assert r.status == 201, r.body
        return str(r.body["id"])

    def signature(self, sid: str) -> str:
        """The buyer's Funding consent for the session as it stands (zeros for an unknown session)."""
        return pay_signature(self.h, self.buyer, sid)

    def body(self, sid: str, **kw: Any) -> Any:
        return complete_body(self.buyer.address, signature=self.signature(sid), **kw)

    async def complete(self, sid: str, body: Any = None, *, key: str | None = None, idem: str | None = None) -> Reply:
        return await self.h.call(
            "POST",
            f"/api/acp/checkout_sessions/{sid}/complete",
            self.body(sid) if body is None else body,
            key=self.key if key is None else key,
            idem=idem,
        )


def test_order_links_use_the_configured_public_url_not_the_host_header(system: System, tmp_path: Path) -> None:
    async def body(h: Harness) -> None:
        shop = await Shop(h, system.users[3]).open()
        sid = await shop.new()
        c = await shop.complete(sid)
        assert c.status == 200, c.body
        order = c.body["order"]
        assert order["permalink_url"] == f"https://ledger.example/api/acp/orders/{order['id']}"
        got = await h.call("GET", f"/api/acp/checkout_sessions/{sid}", key=shop.key, headers={"Host": "evil.test"})
        assert got.body["order"]["permalink_url"] == order["permalink_url"]

    run(tmp_path, system, body, public_url="https://ledger.example")


def test_webhook_secret_is_never_replayed(system: System, tmp_path: Path) -> None:
    """The create call's 201 shows the webhook secret once; an Idempotency-Key replay of it (same key,
    same body, even re-serialised) answers the same session without it."""

    async def body(h: Harness) -> None:
        shop = await Shop(h, system.users[3]).open()
        create = {"line_items": [{"item": {"id": shop.item}, "quantity": 1}], "webhook_url": "http://127.0.0.1:9/h"}
        first = await h.call("POST", "/api/acp/checkout_sessions", create, key=shop.key, idem="once")
        assert first.status == 201 and len(first.body["webhook_secret"]) == 64, first.body
        reordered = json.dumps(dict(reversed(list(create.items()))), indent=2)
        for again in (create, reordered):
            replay = await h.call("POST", "/api/acp/checkout_sessions", again, key=shop.key, idem="once")
            assert replay.status == 201 and replay.headers["Idempotent-Replayed"] == "true"
            assert "webhook_secret" not in replay.body and first.body["webhook_secret"] not in replay.raw.decode()
            assert replay.body == {k: v for k, v in first.body.items() if k != "webhook_secret"}
        stored = idem_rows(h)
        assert stored and all(first.body["webhook_secret"] not in (b or b"").decode() for b in stored)

    run(tmp_path, system, body)


def idem_rows(h: Harness) -> list[bytes | None]:
    return [b for (b,) in h.db.execute("SELECT response_body FROM idempotency_keys")]


def job(system: System, sid: str) -> Any:
    return system.gateway.functions.getJob(bytes.fromhex(rules.job_id_for(sid)[2:])).call()


def status_of(h: Harness, sid: str) -> str:
    s = store.get_session(h.db, sid)
    assert s is not None
    return s.status


# ---- the buyer flow -----------------------------------------------------------------------------


def test_buyer_flow_end_to_end(system: System, tmp_path: Path) -> None:
    received: list[tuple[bytes, dict[str, str]]] = []

    async def receiver(request: web.Request) -> web.Response:
        received.append((await request.read(), dict(request.headers)))
        return web.Response(status=204)

    async def body(h: Harness) -> None:
        hook_app = web.Application()
        hook_app.router.add_post("/hook", receiver)
        runner = web.AppRunner(hook_app)
        await runner.setup()
        port = free_port()
        await web.TCPSite(runner, "127.0.0.1", port).start()
        try:
            await flow(h, port)
        finally:
            await runner.cleanup()

    async def flow(h: Harness, port: int) -> None:
        shop = await Shop(h, system.users[2]).open()
        buyer_before = system.balance(shop.buyer.address)
        url = f"http://127.0.0.1:{port}/hook"
        create = {
            "line_items": [{"item": {"id": shop.item}, "quantity": 1}],
            "buyer": {"email": "ann@example.com"},
            "webhook_url": url,
        }
        path = "/api/acp/checkout_sessions"
        hdrs = {"Request-Id": "r-1", "API-Version": "2026-04-17"}
        r = await h.call("POST", path, create, key=shop.key, idem="create-1", headers=hdrs)
        assert r.status == 201, r.body
        assert r.headers["Idempotency-Key"] == "create-1" and r.headers["Request-Id"] == "r-1"
        sid = r.body["id"]
        assert sid.startswith("cs_") and r.body["status"] == "incomplete" and r.body["currency"] == "usdc"
        secret = r.body["webhook_secret"]
        assert len(secret) == 64 and r.body["webhook_url"] == url
        assert r.body["line_items"][0]["item"]["id"] == shop.item and r.body["line_items"][0]["unit_amount"] == STD
        assert {t["type"]: t["amount"] for t in r.body["totals"]}["total"] == STD
        config = r.body["capabilities"]["payment"]["handlers"][0]["config"]
        assert config["spender"] == system.gateway.address and config["token"] == system.usdc.address
        assert config["amount"] == STD and config["chain_id"] == system.deployment.chain_id
        assert r.body["provider"]["token_id"] == shop.token and r.body["messages"][0]["type"] == "info"
        replay = await h.call("POST", path, create, key=shop.key, idem="create-1")
        assert replay.headers["Idempotent-Replayed"] == "true"
        assert replay.body == {k: v for k, v in r.body.items() if k != "webhook_secret"}  # the secret: once
        assert store.completions_in_progress(h.db) == [] and status_of(h, sid) == "incomplete"

        g = await h.call("GET", f"{path}/{sid}", key=shop.key, headers={"Request-Id": "r-2"})
        assert g.status == 200 and "webhook_secret" not in g.body and g.headers["Request-Id"] == "r-2"
        assert g.body["buyer"] == {"email": "ann@example.com"}

        u = await h.call(
            "POST",
            f"{path}/{sid}",
            {"line_items": [{"item": {"id": shop.item}, "quantity": 2}], "buyer": {"first_name": "Ann"}},
            key=shop.key,
        )
        assert u.status == 200, u.body
        assert u.body["buyer"] == {"email": "ann@example.com", "first_name": "Ann"}
        assert {t["type"]: t["amount"] for t in u.body["totals"]}["total"] == 2 * STD

        c = await shop.complete(sid, idem="complete-1")
        assert c.status == 200, c.body
        assert c.body["id"] == sid and c.body["status"] == "completed"
        order = c.body["order"]
        assert order["status"] == "created" and order["service_job_id"] == rules.job_id_for(sid)
        assert order["permalink_url"].endswith(f"/api/acp/orders/{order['id']}")
        receipt = system.w3.eth.get_transaction_receipt(order["settlement_tx_hash"])
        assert receipt["status"] == 1 and receipt["from"] == system.operator.address
        (funded,) = system.events(receipt, "PaymentGateway", "JobFunded")
        on_chain = job(system, sid)
        assert on_chain[0] == shop.buyer.address and on_chain[2] == FUNDED
        assert on_chain[3] == shop.token and on_chain[4] == 2 * STD
        session = store.get_session(h.db, sid)
        assert session is not None
        deadline = rules.work_deadline(session.expires_at, ["standard"])  # what the buyer signed
        assert on_chain[1] == funded["args"]["deadline"] == deadline == int(session.expires_at) + 48 * 3600
        assert system.balance(shop.buyer.address) == buyer_before - 2 * STD
        again = await shop.complete(sid, idem="complete-1")
        assert again.raw == c.raw and again.headers["Idempotent-Replayed"] == "true"
        assert_error(await shop.complete(sid, idem="complete-2"), 409, "session_completed")

        done = await h.call("GET", f"{path}/{sid}", key=shop.key)
        assert done.body["status"] == "completed" and done.body["order"]["id"] == order["id"]
        assert done.body["buyer"]["first_name"] == "Ann"

        # GET /orders: three views
        opath = f"/api/acp/orders/{order['id']}"
        public = await h.call("GET", opath)
        assert public.status == 200 and public.body["status"] == "created"
        assert public.body["service_job_id"] == order["service_job_id"]
        assert public.body["settlement_tx_hash"] == order["settlement_tx_hash"]
        assert "line_items" not in public.body and "buyer_details" not in public.body
        assert len(public.body["history"]) == 1 and len(public.body["audit_chain"]["entries"]) == 1
        other_key, _, _ = await h.register()
        authed = await h.call("GET", opath, key=other_key)
        assert authed.body["line_items"][0]["quantity"] == 2 and "buyer_details" not in authed.body
        funder = await h.call("GET", opath, key=shop.key)
        assert funder.body["buyer_details"]["email"] == "buyer@example.com"  # the complete body's buyer wins
        assert funder.body["buyer_details"]["address"] == shop.buyer.address
        assert len(funder.body["webhook_delivery"]) == 1
        assert_error(await h.call("GET", "/api/acp/orders/ord_nope"), 404, "order_not_found", "order_id")
        assert (await h.call("GET", opath, key="aglk_" + "0" * 32)).status == 401

        # the order's webhook, signed with the secret shown once
        for _ in range(100):
            if received:
                break
            await asyncio.sleep(0.05)
        (raw, headers) = received[0]
        assert verify_service(raw, secret, headers["X-Service-Signature"])
        event = json.loads(raw)
        assert event["event"] == "job.state_changed" and event["job_id"] == order["id"]
        assert event["status"] == "created"

    run(tmp_path, system, body, dispatcher=True)


# ---- the complete error table -------------------------------------------------------------------


@pytest.mark.parametrize(
    ("case", "code", "param"),
    [
        ("no_key", "missing_api_key", "Authorization"),
        ("bad_key", "invalid_api_key", "Authorization"),
        ("malformed_key", "malformed_api_key", "Authorization"),
        ("other_key", "session_key_mismatch", "Authorization"),
    ],
)
def test_complete_401(system: System, tmp_path: Path, case: str, code: str, param: str) -> None:
    async def body(h: Harness) -> None:
        shop = await Shop(h, system.users[2]).open()
        sid = await shop.new(buyer={"email": "b@example.com"})
        key = {
            "no_key": "",
            "bad_key": "aglk_" + "f" * 32,
            "malformed_key": "aglk_nothex",
            "other_key": (await h.register())[0],
        }[case]
        if key:
            r = await shop.complete(sid, key=key)
        else:
            r = await h.call("POST", f"/api/acp/checkout_sessions/{sid}/complete", shop.body(sid))
        assert_error(r, 401, code, param)
        assert status_of(h, sid) == "incomplete" and job(system, sid)[2] == 0

    run(tmp_path, system, body)


_PARAM_TOKEN = "$.payment_data.instrument.credential.token"
_PARAM_SIG = "$.payment_data.instrument.credential.signature"


@pytest.mark.parametrize(
    ("case", "code", "param"),
    [
        ("email_missing", "missing_email", "$.buyer.email"),
        ("email_invalid", "invalid_email", "$.buyer.email"),
        ("address_missing", "missing_address", _PARAM_TOKEN),
        ("address_short", "invalid_address", _PARAM_TOKEN),
        ("address_no_0x", "invalid_address", _PARAM_TOKEN),
        ("address_not_hex", "invalid_address", _PARAM_TOKEN),
        ("address_not_string", "invalid_address", _PARAM_TOKEN),
        ("handler_unsupported", "unsupported_payment_handler", "$.payment_data.handler_id"),
        ("payment_missing", "missing_payment_data", "$.payment_data"),
        ("signature_missing", "missing_payment_signature", _PARAM_SIG),
        ("signature_empty", "missing_payment_signature", _PARAM_SIG),
        ("signature_short", "invalid_payment_signature", _PARAM_SIG),
        ("signature_not_hex", "invalid_payment_signature", _PARAM_SIG),
        ("signature_not_string", "invalid_payment_signature", _PARAM_SIG),
        ("signature_unrecoverable", "payment_signature_mismatch", _PARAM_SIG),
    ],
)
def test_complete_400(system: System, tmp_path: Path, case: str, code: str, param: str) -> None:
    async def body(h: Harness) -> None:
        shop = await Shop(h, system.users[2]).open()
        sid = await shop.new()  # no buyer e-mail on the session
        addr, sig = shop.buyer.address, shop.signature(sid)
        req: Any = {
            "email_missing": complete_body(addr, email=None, signature=sig),
            "email_invalid": complete_body(addr, email="not-an-email", signature=sig),
            "address_missing": complete_body(None, signature=sig),
            "address_short": complete_body(addr[:-2], signature=sig),
            "address_no_0x": complete_body(addr[2:] + "ab", signature=sig),
            "address_not_hex": complete_body("0x" + "g" * 40, signature=sig),
            "address_not_string": complete_body(None, signature=sig),
            "handler_unsupported": complete_body(addr, handler="card-stripe", signature=sig),
            "payment_missing": {"buyer": {"email": "b@example.com"}},
            "signature_missing": complete_body(addr),
            "signature_empty": complete_body(addr, signature=""),
            "signature_short": complete_body(addr, signature=sig[:-2]),
            "signature_not_hex": complete_body(addr, signature="0x" + "z" * 130),
            "signature_not_string": complete_body(addr, signature=sig),
            "signature_unrecoverable": complete_body(addr, signature="0x" + "00" * 65),
        }[case]
        if case == "address_not_string":
            req["payment_data"]["instrument"]["credential"]["token"] = 1234
        if case == "signature_not_string":
            req["payment_data"]["instrument"]["credential"]["signature"] = 1234
        # a well-formed signature nobody made is not the payer's: 401 (400 is for what the schema refuses)
        status = 401 if case == "signature_unrecoverable" else 400
        assert_error(await shop.complete(sid, req), status, code, param)
        assert status_of(h, sid) == "incomplete" and job(system, sid)[2] == 0
        # the e-mail may come from the session instead of the complete body
        if case == "email_missing":
            await h.call(
                "POST", f"/api/acp/checkout_sessions/{sid}", {"buyer": {"email": "b@example.com"}}, key=shop.key
            )
            assert (await shop.complete(sid, req)).status == 200

    run(tmp_path, system, body)


def test_complete_refuses_another_users_allowance(system: System, tmp_path: Path) -> None:
    """Naming an address is not proof of control: a buyer naming the victim (who approved the gateway)
    with its own signature, or with the victim's signature of another session, pulls nothing."""

    async def body(h: Harness) -> None:
        shop = await Shop(h, system.users[2]).open()
        victim = system.users[3]
        system.mint_usdc(victim.address, 1_000 * USDC)
        system.approve(victim, system.gateway.address, 1_000 * USDC)

        def victim_funds() -> tuple[int, int]:
            usdc = system.usdc.functions
            return usdc.balanceOf(victim.address).call(), usdc.allowance(victim.address, system.gateway.address).call()

        before = victim_funds()
        sid = await shop.new(buyer={"email": "b@example.com"})
        other = await shop.new(buyer={"email": "b@example.com"})
        attempts = [
            pay_signature(h, shop.buyer, sid, payer=victim.address),  # the attacker's own key
            pay_signature(h, victim, other),  # the victim's signature, for another session
            pay_signature(h, victim, sid, amount=STD - 1),  # ... for another amount
            pay_signature(h, victim, sid, payer=shop.buyer.address),  # ... naming another payer
            pay_signature(h, victim, sid, token=shop.token + 1),  # ... for another provider
            pay_signature(h, victim, sid, deadline=rules.work_deadline(h.clock.now, ["deep"])),  # another deadline
        ]
        for i, sig in enumerate(attempts):
            r = await shop.complete(sid, complete_body(victim.address, signature=sig), idem=f"steal-{i}")
            assert_error(r, 401, "payment_signature_mismatch", _PARAM_SIG)
        assert victim_funds() == before
        assert status_of(h, sid) == "incomplete" and job(system, sid)[2] == 0
        s = store.get_session(h.db, sid)
        assert s is not None and s.buyer_address is None and s.job_id is None  # nothing written
        # the buyer's own, correctly signed complete still works and pays from the buyer
        ok = await shop.complete(sid)
        assert ok.status == 200, ok.body
        assert job(system, sid)[2] == FUNDED and victim_funds() == before

    run(tmp_path, system, body)


def test_payment_signature_is_bound_to_the_cart(system: System, tmp_path: Path) -> None:
    """A cart update changes the amount: the consent signed before it no longer completes; the session
    shows the typed data to sign (with its payer to fill in)."""

    async def body(h: Harness) -> None:
        shop = await Shop(h, system.users[2]).open()
        sid = await shop.new(buyer={"email": "b@example.com"})
        old = shop.body(sid)
        upd = {"line_items": [{"item": {"id": shop.item}, "quantity": 2}]}
        assert (await h.call("POST", f"/api/acp/checkout_sessions/{sid}", upd, key=shop.key)).status == 200
        assert_error(await shop.complete(sid, old), 401, "payment_signature_mismatch", _PARAM_SIG)
        assert status_of(h, sid) == "incomplete" and job(system, sid)[2] == 0
        got = await h.call("GET", f"/api/acp/checkout_sessions/{sid}", key=shop.key)
        config = got.body["capabilities"]["payment"]["handlers"][0]["config"]
        typed = config["typed_data"]
        assert config["signature_scheme"] == "eip712" and typed["message"]["buyer"] == "{payer}"
        typed["message"]["buyer"] = shop.buyer.address
        s = store.get_session(h.db, sid)
        assert s is not None
        assert typed == rules.checkout_typed_data(
            chain_id=system.deployment.chain_id,
            gateway=system.gateway.address,
            session_id=sid,
            buyer=shop.buyer.address,
            provider_token_id=shop.token,
            amount=2 * STD,
            deadline=int(s.expires_at) + 48 * 3600,
        )
        assert typed["message"]["jobId"] == rules.job_id_for(sid)
        sig = shop.buyer.sign_typed_data(full_message=typed)
        ok = await shop.complete(sid, complete_body(shop.buyer.address, signature=sig.signature.to_0x_hex()))
        assert ok.status == 200, ok.body
        assert job(system, sid)[4] == 2 * STD

    run(tmp_path, system, body)


def test_complete_404(system: System, tmp_path: Path) -> None:
    async def body(h: Harness) -> None:
        shop = await Shop(h, system.users[2]).open()
        r = await shop.complete("cs_000000000000000000000000")
        assert_error(r, 404, "session_not_found", "checkout_session_id")
        assert_error(
            await h.call("GET", "/api/acp/checkout_sessions/cs_x", key=shop.key),
            404,
            "session_not_found",
            "checkout_session_id",
        )

    run(tmp_path, system, body)


@pytest.mark.parametrize("state", ["completed", "cancelled", "expired", "in_progress"])
def test_complete_409(system: System, tmp_path: Path, state: str) -> None:
    async def body(h: Harness) -> None:
        shop = await Shop(h, system.users[2]).open()
        sid = await shop.new(buyer={"email": "b@example.com"})
        if state == "completed":
            assert (await shop.complete(sid)).status == 200
        elif state == "cancelled":
            assert (await h.call("POST", f"/api/acp/checkout_sessions/{sid}/cancel", key=shop.key)).status == 200
        elif state == "expired":
            h.clock.now += 3600
        else:
            gate, entered = asyncio.Event(), asyncio.Event()

            async def hold(_request: web.Request) -> None:
                entered.set()
                await gate.wait()

            h.complete_hooks.append(hold)
            first = asyncio.create_task(shop.complete(sid))
            await entered.wait()
            h.complete_hooks.clear()
            assert status_of(h, sid) == "complete_in_progress"
        r = await shop.complete(sid)
        code = {"in_progress": "session_in_progress"}.get(state, f"session_{state}")
        assert_error(r, 409, code)
        if state == "in_progress":
            gate.set()
            assert (await first).status == 200
        expected = {"in_progress": "completed"}.get(state, state)
        assert status_of(h, sid) == expected
        assert job(system, sid)[2] == (FUNDED if expected == "completed" else 0)

    run(tmp_path, system, body)


@pytest.mark.parametrize("short", ["allowance", "balance"])
def test_complete_422_rolls_back_and_retry_works(system: System, tmp_path: Path, short: str) -> None:
    async def body(h: Harness) -> None:
        shop = await Shop(h, system.users[2]).open(
            approve=STD - 1 if short == "allowance" else 10_000 * USDC,
            mint=STD - 1 if short == "balance" else 10_000 * USDC,
        )
        sid = await shop.new(buyer={"email": "b@example.com"})
        r = await shop.complete(sid, idem="try-1")
        assert_error(r, 422, f"insufficient_{short}", _PARAM_TOKEN)
        assert status_of(h, sid) == "incomplete" and job(system, sid)[2] == 0
        assert (await shop.complete(sid, idem="try-1")).raw == r.raw  # the same key replays the answer
        if short == "allowance":
            system.approve(shop.buyer, system.gateway.address, STD)
        else:
            system.mint_usdc(shop.buyer.address, 1)
        ok = await shop.complete(sid, idem="try-2")
        assert ok.status == 200, ok.body
        assert job(system, sid)[2] == FUNDED and system.balance(system.gateway.address) == STD

    run(tmp_path, system, body)


def test_complete_503_when_the_commit_fails_after_funding_then_the_follower_heals(
    system: System, tmp_path: Path, anvil: Anvil
) -> None:
    async def body(h: Harness) -> None:
        shop = await Shop(h, system.users[2]).open()
        sid = await shop.new(buyer={"email": "b@example.com"})
        h.seams.before_order = _fail_order
        r = await shop.complete(sid, idem="k")
        assert_error(r, 503, "order_pending")
        assert r.body["type"] == "service_error" and r.headers["Idempotency-Key"] == "k"
        h.seams.before_order = None
        assert job(system, sid)[2] == FUNDED and status_of(h, sid) == "complete_in_progress"
        assert h.db.execute("SELECT count(*) FROM orders").fetchall()[0][0] == 0
        assert_error(await shop.complete(sid, idem="k2"), 409, "session_in_progress")
        await heal(h.db.filename, anvil.rpc_url, system)
        s = store.get_session(h.db, sid)
        assert s is not None and s.status == "completed" and s.order_id is not None
        got = await h.call("GET", f"/api/acp/checkout_sessions/{sid}", key=shop.key)
        assert got.body["order"]["service_job_id"] == rules.job_id_for(sid)
        # "being completed" was not stored under k2: the same key now gets the session's real state
        again = await shop.complete(sid, idem="k2")
        assert_error(again, 409, "session_completed")
        assert "Idempotent-Replayed" not in again.headers

    run(tmp_path, system, body)


async def heal(db_path: str, rpc_url: str, system: System) -> None:
    """Index the chain to its head with the order follower as finality hook (final = head)."""
    conn = connect(db_path, durable=False)
    try:
        async with RpcClient(rpc_url) as rpc:
            follower = OrderFollower(time.time)
            ix = make_indexer(conn, rpc, system, followers=[follower], use_finalized_tag=False)
            await ix.run_until(system.w3.eth.block_number)
    finally:
        conn.close()


# ---- concurrency, cancel, update, expiry --------------------------------------------------------


def test_concurrent_completes_fund_once(system: System, tmp_path: Path) -> None:
    async def body(h: Harness) -> None:
        shop = await Shop(h, system.users[2]).open()
        sid = await shop.new(buyer={"email": "b@example.com"})
        replies = await asyncio.gather(*(shop.complete(sid, idem=f"c{i}") for i in range(5)))
        assert sorted(r.status for r in replies) == [200, 409, 409, 409, 409], [r.body for r in replies]
        assert {r.body["code"] for r in replies if r.status == 409} <= {"session_in_progress", "session_completed"}
        # the same Idempotency-Key twice at once: one runs, the other is told it is in flight
        other = await shop.new(buyer={"email": "b@example.com"})
        same_key = await asyncio.gather(shop.complete(other, idem="x"), shop.complete(other, idem="x"))
        assert sorted(r.status for r in same_key) == [200, 409]
        assert [r.body["code"] for r in same_key if r.status == 409] == ["idempotency_in_flight"]
        assert system.balance(system.gateway.address) == 2 * STD
        assert h.db.execute("SELECT count(*) FROM orders").fetchall()[0][0] == 2

    run(tmp_path, system, body)


def test_cancel_update_and_expiry(system: System, tmp_path: Path) -> None:
    async def body(h: Harness) -> None:
        shop = await Shop(h, system.users[2]).open()
        base = "/api/acp/checkout_sessions"
        sid = await shop.new()
        c = await h.call("POST", f"{base}/{sid}/cancel", key=shop.key, idem="cx")
        assert c.status == 200 and c.body["status"] == "cancelled" and c.headers["Idempotency-Key"] == "cx"
        assert_error(await h.call("POST", f"{base}/{sid}/cancel", key=shop.key), 405, "session_not_cancelable")
        upd = {"buyer": {"email": "z@example.com"}}
        assert_error(await h.call("POST", f"{base}/{sid}", upd, key=shop.key), 409, "session_cancelled")
        other, _, _ = await h.register()
        assert_error(
            await h.call("POST", f"{base}/{sid}/cancel", key=other), 401, "session_key_mismatch", "Authorization"
        )
        assert_error(await h.call("GET", f"{base}/{sid}", key=other), 401, "session_key_mismatch", "Authorization")

        done = await shop.new(buyer={"email": "b@example.com"})
        assert (await shop.complete(done)).status == 200
        assert_error(await h.call("POST", f"{base}/{done}/cancel", key=shop.key), 405, "session_not_cancelable")

        # expiry: lazily on read (persisted), and then refused everywhere
        late = await shop.new()
        h.clock.now += 3599
        assert (await h.call("GET", f"{base}/{late}", key=shop.key)).body["status"] == "incomplete"
        h.clock.now += 1
        g = await h.call("GET", f"{base}/{late}", key=shop.key)
        assert g.body["status"] == "expired" and g.body["messages"][0]["code"] == "expired"
        assert status_of(h, late) == "expired"
        assert_error(await h.call("POST", f"{base}/{late}/cancel", key=shop.key), 405, "session_not_cancelable")
        # expiry on write without a prior read
        late2 = await shop.new()
        h.clock.now += 3600
        assert_error(await h.call("POST", f"{base}/{late2}", upd, key=shop.key), 409, "session_expired")
        assert status_of(h, late2) == "expired"
        # and by the sweep
        swept = [await shop.new() for _ in range(3)]
        h.clock.now += 3600
        assert await sweep(h.checkout) == (3, 0)
        assert {status_of(h, s) for s in swept} == {"expired"}

    run(tmp_path, system, body)


def test_complete_503_when_the_node_is_down_rolls_back(system: System, tmp_path: Path, anvil: Anvil) -> None:
    async def main() -> None:
        async with RpcProxy(anvil.rpc_url) as proxy, serve(tmp_path, system, rpc_url=proxy.url) as h:
            shop = await Shop(h, system.users[2]).open()
            sid = await shop.new(buyer={"email": "b@example.com"})
            proxy.down(30, mode="503")
            r = await shop.complete(sid)
            assert_error(r, 503, "chain_unavailable")
            assert status_of(h, sid) == "incomplete"
            proxy.up()
            ok = await shop.complete(sid)
            assert ok.status == 200, ok.body
            assert job(system, sid)[2] == FUNDED

    asyncio.run(main())


def test_sweep_settles_completions_stuck_without_a_job(system: System, tmp_path: Path) -> None:
    """complete_in_progress for longer than STUCK_AFTER: no job on-chain -> incomplete again (a retry
    can never double-fund: same job id); a funded job is left to the order follower."""

    async def body(h: Harness) -> None:
        shop = await Shop(h, system.users[2]).open()
        unfunded = await shop.new(buyer={"email": "b@example.com"})
        funded = await shop.new(buyer={"email": "b@example.com"})
        store.begin_complete(
            h.db,
            unfunded,
            job_id=rules.job_id_for(unfunded),
            buyer_address=shop.buyer.address,
            buyer={},
            now=h.clock.now,
        )
        h.seams.before_order = _fail_order
        assert (await shop.complete(funded)).status == 503
        h.seams.before_order = None
        assert await sweep(h.checkout) == (0, 0)  # too recent to judge
        h.clock.now += STUCK_AFTER + 1
        assert await sweep(h.checkout) == (0, 1)
        assert status_of(h, unfunded) == "incomplete" and status_of(h, funded) == "complete_in_progress"
        assert (await shop.complete(unfunded)).status == 200
        assert job(system, unfunded)[2] == FUNDED

    run(tmp_path, system, body, ttl=10 * STUCK_AFTER)


def _held(h: Harness) -> tuple[asyncio.Event, asyncio.Event]:
    """Hold the next complete right after it moved the session to complete_in_progress."""
    entered, release = asyncio.Event(), asyncio.Event()

    async def hold(_request: web.Request) -> None:
        entered.set()
        await release.wait()

    h.complete_hooks.append(hold)
    return entered, release


def test_sweep_skips_a_session_whose_funding_is_in_flight(system: System, tmp_path: Path) -> None:
    """A complete that waits longer than STUCK_AFTER (operator lock, slow receipt) must not be sent
    back to incomplete by this process's sweep while its funding is on the way."""

    async def body(h: Harness) -> None:
        shop = await Shop(h, system.users[2]).open()
        sid = await shop.new(buyer={"email": "b@example.com"})
        entered, release = _held(h)
        first = asyncio.create_task(shop.complete(sid))
        await entered.wait()
        h.complete_hooks.clear()
        h.clock.now += STUCK_AFTER + 1
        assert rules.job_id_for(sid) in h.checkout.funding
        assert await sweep(h.checkout) == (0, 0)
        assert status_of(h, sid) == "complete_in_progress"
        release.set()
        r = await first
        assert r.status == 200, r.body
        assert job(system, sid)[2] == FUNDED and status_of(h, sid) == "completed"
        assert h.checkout.funding == set()

    run(tmp_path, system, body, ttl=10 * STUCK_AFTER)


def test_complete_rechecks_the_session_before_funding(system: System, tmp_path: Path) -> None:
    """If the session stopped being this complete's (another process's sweep reset it) between the
    start and the send, nothing is sent: 409 session_changed."""

    async def body(h: Harness) -> None:
        shop = await Shop(h, system.users[2]).open()
        sid = await shop.new(buyer={"email": "b@example.com"})
        entered, release = _held(h)
        first = asyncio.create_task(shop.complete(sid))
        await entered.wait()
        h.complete_hooks.clear()
        with transaction(h.db):
            assert store.abort_complete(h.db, sid, h.clock.now)  # what a sweep elsewhere would do
        release.set()
        assert_error(await first, 409, "session_changed")
        assert job(system, sid)[2] == 0 and status_of(h, sid) == "incomplete"
        assert (await shop.complete(sid)).status == 200
        assert job(system, sid)[2] == FUNDED

    run(tmp_path, system, body)


def test_503_bodies_never_carry_the_rpc_url(system: System, tmp_path: Path) -> None:
    """An RPC URL can hold an API key: chain errors reach the client as fixed messages only."""
    state: dict[str, Any] = {}

    async def prepare(h: Harness) -> None:
        shop = await Shop(h, system.users[2]).open()
        state["sid"] = await shop.new(buyer={"email": "b@example.com"})
        state["key"], state["body"] = shop.key, shop.body(state["sid"])
        key, wallet, _ = await h.register()
        state["link"] = (key, h.link_body(wallet, system.users[4], system.users[5].address))

    run(tmp_path, system, prepare)

    async def down(h: Harness) -> None:
        sid = state["sid"]
        r = await h.call("POST", f"/api/acp/checkout_sessions/{sid}/complete", state["body"], key=state["key"])
        assert_error(r, 503, "chain_unavailable")
        key, link = state["link"]
        r2 = await h.call("POST", "/api/acp/providers", link, key=key)
        assert r2.status == 503 and r2.body["code"] == "chain_unavailable", r2.body
        for reply in (r, r2):
            assert "SECRET" not in reply.raw.decode() and "127.0.0.1" not in reply.raw.decode(), reply.body
        assert status_of(h, sid) == "incomplete"

    run(tmp_path, system, down, rpc_url="http://127.0.0.1:9/v2/SECRET")


def test_create_and_update_validation(system: System, tmp_path: Path) -> None:
    async def body(h: Harness) -> None:
        shop = await Shop(h, system.users[2]).open()
        _, _, _, other_item = await h.provider(system.users[3], system.users[4].address, tier="rush")
        base = "/api/acp/checkout_sessions"

        async def create(payload: Any) -> Reply:
            return await h.call("POST", base, payload, key=shop.key)

        li = [{"item": {"id": shop.item}, "quantity": 1}]
        assert_error(
            await create({"line_items": [{"item": {"id": "nope"}}]}), 404, "item_not_found", "$.line_items[0].item.id"
        )
        mixed = {"line_items": [*li, {"item": {"id": other_item}, "quantity": 1}]}
        assert_error(await create(mixed), 422, "multiple_providers", "$.line_items")
        assert_error(await create({"line_items": []}), 400, "invalid_field", "$.line_items")
        assert (await create({"line_items": [{"item": {"id": shop.item}, "quantity": 0}]})).body[
            "param"
        ] == "$.line_items[0].quantity"
        assert_error(await create({"line_items": li, "buyer": {"email": "x"}}), 400, "invalid_email", "$.buyer.email")
        for url in ("ftp://127.0.0.1/x", "http://user:pw@127.0.0.1/x", "not a url"):
            assert_error(
                await create({"line_items": li, "webhook_url": url}), 400, "invalid_webhook_url", "$.webhook_url"
            )
        assert (await create({"line_items": li, "currency": "eur"})).body["param"] == "$.currency"
        assert (await h.call("POST", base, {"line_items": li})).status == 401
        r = await create({"line_items": li, "currency": "usdc", "capabilities": {}})
        assert r.status == 201 and "webhook_secret" not in r.body
        sid = r.body["id"]
        # an update that switches provider entirely is fine (one provider per session)
        u = await h.call(
            "POST", f"{base}/{sid}", {"line_items": [{"item": {"id": other_item}, "quantity": 3}]}, key=shop.key
        )
        assert u.status == 200 and {t["type"]: t["amount"] for t in u.body["totals"]}["total"] == 3 * 375 * USDC
        assert u.body["line_items"][0]["tier"] == "rush"
        assert_error(await h.call("POST", f"{base}/{sid}", {}, key=shop.key), 400, "empty_update", "$")

    run(tmp_path, system, body)


# ---- a crash between the funding transaction and the commit ----------------------------------


def test_crash_after_funding_heals_exactly_once(system: System, tmp_path: Path, anvil: Anvil) -> None:
    state: dict[str, Any] = {}

    async def prepare(h: Harness) -> None:
        shop = await Shop(h, system.users[2]).open()
        state["sid"] = await shop.new(buyer={"email": "b@example.com"})
        state["key"] = shop.key
        state["buyer"] = shop.buyer.address
        state["body"] = shop.body(state["sid"])

    run(tmp_path, system, prepare)
    sid = state["sid"]
    dep_path = tmp_path / "deployment.json"
    dep_path.write_text(json.dumps(asdict(system.deployment)))
    port = free_port()
    env = dict(os.environ)
    cmd = [
        sys.executable,
        "-m",
        "tests.integration.test_checkout",
        "--rpc",
        anvil.rpc_url,
        "--deployment",
        str(dep_path),
    ]
    cmd += ["--db", child_location(tmp_path / "ledger.db"), "--port", str(port)]
    cmd += ["--operator-key", system.operator.key.hex(), "--exit-after-funding"]
    proc = subprocess.Popen(cmd, cwd=ROOT, env=env, stdout=subprocess.DEVNULL, stderr=subprocess.PIPE)
    try:

        async def crash() -> None:
            base = f"http://127.0.0.1:{port}"
            async with aiohttp.ClientSession() as session:
                await wait_serving(session, base + "/api/acp/items", 200)
                with pytest.raises(aiohttp.ClientError):
                    await session.post(
                        f"{base}/api/acp/checkout_sessions/{sid}/complete",
                        json=state["body"],
                        headers={"Authorization": f"Bearer {state['key']}"},
                    )

        asyncio.run(crash())
        assert proc.wait(timeout=30) == 1, proc.stderr.read() if proc.stderr else b""
    finally:
        if proc.poll() is None:
            proc.kill()
            proc.wait()
        if proc.stderr:
            proc.stderr.close()
    # the chain has the job; the database has no order
    assert job(system, sid)[2] == FUNDED and job(system, sid)[4] == STD
    db = connect(tmp_path / "ledger.db")
    try:
        assert status_of_db(db, sid) == "complete_in_progress"
        assert db.execute("SELECT count(*) FROM orders").fetchall()[0][0] == 0
        asyncio.run(heal(str(tmp_path / "ledger.db"), anvil.rpc_url, system))
        asyncio.run(heal(str(tmp_path / "ledger.db"), anvil.rpc_url, system))  # again: nothing more
        assert db.execute("SELECT count(*) FROM orders").fetchall()[0][0] == 1
        s = store.get_session(db, sid)
        assert s is not None and s.status == "completed" and s.order_id is not None
        order = order_store.get_order(db, s.order_id)
        assert order is not None and order.job_id == rules.job_id_for(sid) and order.amount == STD
        assert order.buyer_address == state["buyer"]
        assert len(order_store.history(db, order.id)) == 1
    finally:
        db.close()

    async def after(h: Harness) -> None:  # the restarted API answers from the healed state
        got = await h.call("GET", f"/api/acp/checkout_sessions/{sid}", key=state["key"])
        assert got.body["status"] == "completed" and got.body["order"]["status"] == "created"
        r = await h.call("POST", f"/api/acp/checkout_sessions/{sid}/complete", state["body"], key=state["key"])
        assert_error(r, 409, "session_completed")

    run(tmp_path, system, after)


def status_of_db(db: Any, sid: str) -> str:
    s = store.get_session(db, sid)
    assert s is not None
    return s.status


# ---- the subprocess entry point ----------------------------------------------------------------


def _fail_order() -> None:
    raise RuntimeError("injected fault: the order's transaction fails after funding")


def _serve_main() -> None:
    """The service in a process of its own; --exit-after-funding ends it (exit status 1) right after
    a complete's funding receipt, before the order is written: a crash between chain and database;
    --exit-before-funding ends it once the session is complete_in_progress, before anything is sent."""
    parser = argparse.ArgumentParser()
    for name in ("--rpc", "--deployment", "--db", "--port", "--operator-key"):
        parser.add_argument(name, required=True)
    parser.add_argument("--exit-after-funding", action="store_true")
    parser.add_argument("--exit-before-funding", action="store_true")
    args = parser.parse_args()
    dep = Deployment(**json.loads(Path(args.deployment).read_text()))
    w3 = connect_chain(args.rpc)
    db = open_database(args.db).connect()  # a SQLite file, or the PostgreSQL database standing for it
    app = web.Application(middlewares=[error_middleware])

    async def die(_request: web.Request) -> None:  # a crash with the session complete_in_progress, nothing sent
        os._exit(1)

    seams = Hooks(
        after_funding=(lambda: os._exit(1)) if args.exit_after_funding else None,
        before_funding=die if args.exit_before_funding else None,
    )
    add_wallet_routes(app, db, hooks=seams)
    operator = Operator(w3, Account.from_key(args.operator_key), dep.contracts, dep.usdc)
    install_checkout(app, dep, operator, hooks=seams)
    web.run_app(app, host="127.0.0.1", port=int(args.port), print=None)


if __name__ == "__main__":
    _serve_main()
