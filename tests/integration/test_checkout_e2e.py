"""The whole buyer sequence end to end, as a buyer and a provider see it from outside: the REAL
service (api.app.create_app) over HTTP on loopback with a real SQLite file, the session anvil, the
indexer following final PaymentGateway events (OrderFollower) as a task, and a webhook receiver on
loopback that checks every delivery with its own HMAC code.

Two orders run the five steps (session, approve, complete, the funder's view, the provider's work
and the release): one uploads its deliverable as multipart/form-data, the other as JSON. Step 5
then verifies, independently of the service's code, the release transaction and the payout split,
the deliverable refetched from /ipfs/{cid} and rehashed, every audit chain hash recomputed, the
order's history and the webhooks (one per move, signatures valid, no event id twice). Along the way
the provider calls are refused when replayed, signed by another key, stale, or completing with a CID
that is not the uploaded deliverable, and an anonymous GET /orders shows no buyer data."""

from __future__ import annotations

import asyncio
import base64
import hashlib
import hmac
import json
import os
import signal
import sys
import time
from collections.abc import AsyncIterator, Awaitable, Callable
from contextlib import asynccontextmanager
from dataclasses import dataclass, field
from datetime import datetime
from pathlib import Path
from typing import Any

import aiohttp
import rfc8785
from aiohttp import web
from aiohttp.test_utils import TestServer
from eth_account.messages import encode_defunct
from eth_account.signers.local import LocalAccount
from eth_typing import HexStr

from api.app import create_app
from core import deployments
from core.chain import ROOT
from core.checkout import rules
from core.checkout.follower import OrderFollower
from core.checkout.orders import completion_message, deliverable_message, provider_message
from core.config import Settings
from core.ipfs import cid_of
from core.money import split
from core.operator import Operator
from core.store import connect
from indexer.rpc import RetryPolicy, RpcClient
from tests.integration.chainkit import USDC, System, test_account
from tests.integration.indexer_kit import make_indexer
from tests.pg_redirect import child_location

EXPECTED_MOVES = [
    (None, "created"),
    ("created", "acknowledged"),
    ("acknowledged", "in_progress"),
    ("in_progress", "completed"),
    ("completed", "released"),
]
#: Standard Webhooks receivers refuse a webhook-timestamp further than this from their clock.
TOLERANCE = 300


# ---- the webhook receiver: its own verification code, not core.egress ---------------------------


def service_signature_ok(body: bytes, secret: str, header: str) -> bool:
    expected = "sha256=" + hmac.new(secret.encode("utf-8"), body, hashlib.sha256).hexdigest()
    return hmac.compare_digest(expected.encode(), header.encode("utf-8", "replace"))


def standard_signature_ok(body: bytes, whsec: str, headers: dict[str, str], now: float) -> bool:
    """Standard Webhooks: key = base64-decoded whsec_ secret; signed content "{id}.{timestamp}.{body}"."""
    msg_id, ts, sigs = (headers.get(h, "") for h in ("webhook-id", "webhook-timestamp", "webhook-signature"))
    if not (msg_id and ts.isdigit() and sigs) or abs(now - int(ts)) > TOLERANCE:
        return False
    key = base64.b64decode(whsec.removeprefix("whsec_"))
    mac = base64.b64encode(hmac.new(key, f"{msg_id}.{ts}.".encode() + body, hashlib.sha256).digest())
    return any(
        v == "v1" and hmac.compare_digest(mac, s.encode("utf-8", "replace"))
        for v, _, s in (part.partition(",") for part in sigs.split(" "))
    )


@dataclass
class Delivery:
    name: str
    body: dict[str, Any]
    event_id: str
    service_ok: bool
    standard_ok: bool


@dataclass
class Receiver:
    secrets: dict[str, str] = field(default_factory=dict)
    got: list[Delivery] = field(default_factory=list)
    url: str = ""

    async def handle(self, request: web.Request) -> web.Response:
        name = request.match_info["name"]
        raw = await request.read()
        headers = {k.lower(): v for k, v in request.headers.items()}
        secret = self.secrets[name]
        whsec = "whsec_" + base64.b64encode(secret.encode("utf-8")).decode()  # the key as receivers configure it
        d = Delivery(
            name,
            json.loads(raw),
            headers.get("webhook-id", ""),
            service_signature_ok(raw, secret, headers.get("x-service-signature", "")),
            standard_signature_ok(raw, whsec, headers, time.time()),
        )
        self.got.append(d)
        return web.Response(status=204 if d.service_ok and d.standard_ok else 400)

    def of(self, name: str) -> list[Delivery]:
        return [d for d in self.got if d.name == name]


# ---- the service, the indexer and the receiver --------------------------------------------------


@dataclass
class World:
    http: aiohttp.ClientSession
    base: str
    system: System
    hooks: Receiver

    async def call(
        self,
        method: str,
        path: str,
        body: Any = None,
        *,
        key: str | None = None,
        idem: str | None = None,
        headers: dict[str, str] | None = None,
    ) -> tuple[int, Any]:
        headers = dict(headers or {})
        if key is not None:
            headers["Authorization"] = f"Bearer {key}"
        if idem is not None:
            headers["Idempotency-Key"] = idem
        async with self.http.request(method, self.base + path, json=body, headers=headers) as resp:
            raw = await resp.read()
            return resp.status, json.loads(raw) if raw else None

    async def ok(self, method: str, path: str, body: Any = None, status: int = 200, **kw: Any) -> Any:
        got, reply = await self.call(method, path, body, **kw)
        assert got == status, (method, path, got, reply)
        return reply

    async def error(self, path: str, body: Any, status: int, code: str) -> None:
        got, reply = await self.call("POST", path, body)
        assert (got, reply["code"]) == (status, code), reply


@asynccontextmanager
async def indexer_process(tmp_path: Path, system: System, rpc_url: str, db_path: Path) -> AsyncIterator[None]:
    """`python -m indexer` in a process of its own on the same database (the README's mode for
    AGENTLEDGER_RUN_INDEXER=false), configured as an operator would: the deployment file and env."""
    deployments.save(system.deployment, tmp_path / "deployments")
    env = {
        **os.environ,
        "AGENTLEDGER_DEPLOYMENTS_DIR": str(tmp_path / "deployments"),
        "AGENTLEDGER_POLL_INTERVAL": "0.02",
    }
    cmd = [sys.executable, "-m", "indexer", "--rpc", rpc_url, "--db", child_location(db_path)]
    proc = await asyncio.create_subprocess_exec(
        *cmd, cwd=ROOT, env=env, stdout=asyncio.subprocess.DEVNULL, stderr=asyncio.subprocess.PIPE
    )
    try:
        yield
        assert proc.returncode is None, "the indexer process ended"
    finally:
        if proc.returncode is None:
            proc.send_signal(signal.SIGTERM)
        _out, err = await proc.communicate()
        assert proc.returncode == 0, err.decode()[-2000:]


@asynccontextmanager
async def running(tmp_path: Path, system: System, *, indexer: str = "task") -> AsyncIterator[World]:
    """The service; `indexer` "task": the indexer in this process (as `make run` runs it), "process":
    `python -m indexer` apart (AGENTLEDGER_RUN_INDEXER=false)."""
    dep = system.deployment
    rpc_url: str = system.w3.provider.endpoint_uri  # type: ignore[attr-defined]
    db_path = tmp_path / "ledger.db"
    api_db = connect(db_path)
    indexer_db = connect(db_path, durable=False)
    operator = Operator(system.w3, system.operator, dep.contracts, dep.usdc)
    app = create_app(dep, rpc_url, api_db, settings=Settings(webhook_allow_private="true"), operator=operator)
    server = TestServer(app, host="127.0.0.1", port=0)
    hooks = Receiver()
    hook_app = web.Application()
    hook_app.router.add_post("/hook/{name}", hooks.handle)
    hook_server = TestServer(hook_app, host="127.0.0.1", port=0)
    stop = asyncio.Event()
    await server.start_server()
    await hook_server.start_server()
    hooks.url = str(hook_server.make_url("/hook"))
    try:
        async with RpcClient(rpc_url, RetryPolicy(attempts=3)) as rpc, aiohttp.ClientSession() as http:
            if indexer == "process":
                async with indexer_process(tmp_path, system, rpc_url, db_path):
                    yield World(http, str(server.make_url("")), system, hooks)
                return
            follower = OrderFollower(time.time)
            ix = make_indexer(
                indexer_db, rpc, system, use_finalized_tag=False, poll_interval=0.02, followers=[follower]
            )
            task = asyncio.create_task(ix.run(stop), name="indexer")
            try:
                yield World(http, str(server.make_url("")), system, hooks)
            finally:
                stop.set()
                await task
    finally:
        await server.close()
        await hook_server.close()
        indexer_db.close()
        api_db.close()


# ---- the provider -------------------------------------------------------------------------------


def sign(acct: LocalAccount, text: str) -> str:
    return "0x" + bytes(acct.sign_message(encode_defunct(text=text)).signature).hex()


def signed(acct: LocalAccount, message: Callable[[int], str], ts: int | None = None) -> dict[str, Any]:
    ts = int(time.time()) if ts is None else ts
    return {"timestamp": ts, "signature": sign(acct, message(ts))}


def upload_headers(sig: dict[str, Any], sha: str) -> dict[str, str]:
    """A deliverable upload's signature headers (checked before the body is read)."""
    return {
        "X-Provider-Timestamp": str(sig["timestamp"]),
        "X-Provider-Signature": sig["signature"],
        "X-Content-SHA256": sha,
    }


@dataclass
class Shop:
    self_wallet: LocalAccount
    owner: LocalAccount
    token_id: int
    item: str
    buyer: LocalAccount
    buyer_key: str
    provider_key: str = ""  # the seller's account key (the dashboard's tests sign in with it)
    provider_wallet: str = ""


async def open_shop(w: World) -> Shop:
    s = w.system
    self_wallet, owner, buyer = test_account(700), test_account(701), s.users[4]
    reg = await w.ok("POST", "/api/agents/register", {"name": "seller", "specialty": "content_seo"}, 201)
    pkey, pwallet = reg["api_key"], reg["agent"]["wallet"]
    ts = int(time.time())
    message = rules.provider_link_message(
        chain_id=s.deployment.chain_id,
        agent_wallet=pwallet,
        self_wallet=self_wallet.address,
        owner=owner.address,
        timestamp=ts,
    )
    link = {
        "agent_id": pwallet,
        "self_wallet": self_wallet.address,
        "owner_address": owner.address,
        "timestamp": ts,
        "signature": sign(self_wallet, message),
    }
    provider = await w.ok("POST", "/api/acp/providers", link, 201, key=pkey)
    token_id = int(provider["token_id"])
    assert s.registry.functions.selfWalletOf(token_id).call() == self_wallet.address
    assert s.registry.functions.ownerOf(token_id).call() == owner.address
    item = await w.ok(
        "POST", "/api/acp/items", {"title": "Market report", "tier": "standard", "agent_id": pwallet}, 201, key=pkey
    )
    assert item["price"] == 250
    breg = await w.ok("POST", "/api/agents/register", {"name": "buyer", "specialty": "content_seo"}, 201)
    s.mint_usdc(buyer.address, 1_000 * USDC)
    return Shop(self_wallet, owner, token_id, item["id"], buyer, breg["api_key"], pkey, pwallet)


# ---- one order through the five steps -----------------------------------------------------------


@dataclass
class Done:
    order_id: str
    job_id: str
    total: int
    cid: str
    data: bytes
    complete_tx: str
    before: dict[str, int]


def balances(s: System, shop: Shop) -> dict[str, int]:
    who = {"owner": shop.owner.address, "self": shop.self_wallet.address, "treasury": s.treasury.address}
    return {name: s.balance(addr) for name, addr in {**who, "gateway": s.gateway.address}.items()}


async def buy(w: World, shop: Shop, name: str, *, multipart: bool, refusals: bool) -> Done:
    s = w.system
    # 1. the session, with a webhook
    create = {
        "line_items": [{"item": {"id": shop.item}, "quantity": 1}],
        "buyer": {"email": f"{name}@example.com"},
        "webhook_url": f"{w.hooks.url}/{name}",
    }
    session = await w.ok("POST", "/api/acp/checkout_sessions", create, 201, key=shop.buyer_key, idem=f"{name}-c")
    w.hooks.secrets[name] = session["webhook_secret"]
    total = {t["type"]: t["amount"] for t in session["totals"]}["total"]
    assert session["status"] == "incomplete" and total == 250 * USDC
    # 2. the buyer approves the gateway from its own account
    s.approve(shop.buyer, s.gateway.address, total)
    buyer_before = s.balance(shop.buyer.address)
    # 3. complete: the buyer consents to this funding by signing the EIP-712 typed data the session's
    # handler config gives (payer filled in), and the service funds the gateway job with that signature
    config = session["capabilities"]["payment"]["handlers"][0]["config"]
    typed = config["typed_data"]
    typed["message"]["buyer"] = shop.buyer.address
    expires_at = datetime.fromisoformat(session["expires_at"].replace("Z", "+00:00")).timestamp()
    deadline = typed["message"]["deadline"]  # the session's expiry (whole seconds, rounded up) + the tier's 48 h
    assert 0 <= deadline - 48 * 3600 - expires_at < 1
    assert typed == rules.checkout_typed_data(
        chain_id=s.deployment.chain_id,
        gateway=s.gateway.address,
        session_id=session["id"],
        buyer=shop.buyer.address,
        provider_token_id=shop.token_id,
        amount=total,
        deadline=deadline,
    )
    digest = s.gateway.functions.fundingDigest(
        bytes.fromhex(rules.job_id_for(session["id"])[2:]), shop.buyer.address, shop.token_id, total, deadline
    ).call()
    consent = shop.buyer.sign_typed_data(full_message=typed)
    assert bytes(consent.message_hash) == digest  # what the buyer signs is what the gateway checks
    signature = consent.signature.to_0x_hex()
    credential = {"type": "address", "token": shop.buyer.address, "signature": signature}
    payment = {"handler_id": rules.PAYMENT_HANDLER_ID, "instrument": {"type": "wallet", "credential": credential}}
    paid = await w.ok(
        "POST",
        f"/api/acp/checkout_sessions/{session['id']}/complete",
        {"buyer": {"email": f"{name}@example.com"}, "payment_data": payment},
        key=shop.buyer_key,
        idem=f"{name}-p",
    )
    order = paid["order"]
    oid, job_id = order["id"], order["service_job_id"]
    assert paid["status"] == "completed" and order["status"] == "created"
    assert s.w3.eth.get_transaction_receipt(order["settlement_tx_hash"])["status"] == 1
    assert s.balance(shop.buyer.address) == buyer_before - total
    # 4. the funder's view; an anonymous caller sees no buyer data
    mine = await w.ok("GET", f"/api/acp/orders/{oid}", key=shop.buyer_key)
    assert mine["buyer_details"]["address"] == shop.buyer.address and mine["line_items"]
    anon = await w.ok("GET", f"/api/acp/orders/{oid}")
    assert anon["status"] == "created" and anon["service_job_id"] == job_id
    assert not {"buyer_details", "line_items", "totals", "webhook_delivery"} & set(anon)

    # 5. the provider works (EIP-191 signatures of its self wallet)
    me, path = shop.self_wallet, f"/api/acp/orders/{oid}"
    ack = signed(me, lambda t: provider_message("acknowledge", oid, t))
    assert (await w.ok("POST", f"{path}/acknowledge", ack))["status"] == "acknowledged"
    if refusals:
        await w.error(f"{path}/acknowledge", ack, 409, "signature_replayed")
        stranger = test_account(702)
        await w.error(
            f"{path}/start", signed(stranger, lambda t: provider_message("start", oid, t)), 401, "invalid_signature"
        )
        stale = int(time.time()) - 1000
        await w.error(
            f"{path}/start", signed(me, lambda t: provider_message("start", oid, t), stale), 401, "signature_expired"
        )
    start = signed(me, lambda t: provider_message("start", oid, t))
    assert (await w.ok("POST", f"{path}/start", start))["status"] == "in_progress"

    if multipart:
        data = bytes(range(256)) * 1200 + name.encode()  # > 256 KiB: two chunks and a parent node
        form = aiohttp.FormData()
        form.add_field("file", data, filename="report.bin", content_type="application/octet-stream")
        sha = hashlib.sha256(data).hexdigest()
        hdrs = upload_headers(signed(me, lambda t: deliverable_message(oid, sha, t)), sha)
        async with w.http.post(f"{w.base}{path}/deliverables", data=form, headers=hdrs) as resp:
            assert resp.status == 201, await resp.text()
            up = await resp.json()
    else:
        content = {"title": "Market report", "order": oid, "findings": ["demand is up", "prices are flat"], "n": 3}
        data = rfc8785.dumps(content)  # the service stores the canonical JSON bytes
        sha = hashlib.sha256(data).hexdigest()
        hdrs = upload_headers(signed(me, lambda t: deliverable_message(oid, sha, t)), sha)
        up = await w.ok("POST", f"{path}/deliverables", {"content": content}, 201, headers=hdrs)
    cid = up["cid"]
    assert up["size"] == len(data) and cid == cid_of(data)

    if refusals:
        other = cid_of(b"not the deliverable")
        wrong = signed(me, lambda t: completion_message(job_id, other, t))
        await w.error(f"{path}/complete", {"cid": other, **wrong}, 409, "deliverable_mismatch")
    before = balances(s, shop)
    fin = await w.ok(
        "POST", f"{path}/complete", {"cid": cid, **signed(me, lambda t: completion_message(job_id, cid, t))}
    )
    # completed, or already released when the indexer saw the final release before our commit
    assert fin["jobId"] == job_id and fin["status"] in ("completed", "released")
    return Done(oid, job_id, total, cid, data, fin["txHash"], before)


async def until(what: str, ready: Callable[[], Awaitable[bool]], timeout: float = 10.0) -> None:
    deadline = time.monotonic() + timeout
    while not await ready():
        assert time.monotonic() < deadline, f"timed out waiting for {what}"
        await asyncio.sleep(0.02)


# ---- step 5: the buyer's checks, independent of the service's code ------------------------------


async def verify(w: World, shop: Shop, name: str, done: Done) -> None:
    s = w.system
    view: dict[str, Any] = {}

    async def released() -> bool:
        view.update(await w.ok("GET", f"/api/acp/orders/{done.order_id}", key=shop.buyer_key))
        return bool(view["status"] == "released")

    await until(f"{name} released", released)

    # the release transaction: mined, the JobReleased event names this job and CID, the split paid out
    assert view["release"]["tx_hash"] == done.complete_tx
    receipt = s.w3.eth.get_transaction_receipt(HexStr(done.complete_tx))
    assert receipt["status"] == 1
    (ev,) = s.events(receipt, "PaymentGateway", "JobReleased")
    assert "0x" + bytes(ev["args"]["jobId"]).hex() == done.job_id and ev["args"]["cid"] == done.cid
    assert ev["args"]["amount"] == done.total and ev["args"]["providerTokenId"] == shop.token_id
    parts = split(done.total, referred=False)
    on_chain = s.payouts.functions.split(done.total, False).call()
    assert list(on_chain) == [parts.owner_cut, parts.agent_cut, parts.service_cut, parts.referral_cut]
    after = balances(s, shop)
    assert after["owner"] - done.before["owner"] == parts.owner_cut == done.total * 97 // 100
    assert after["self"] - done.before["self"] == parts.agent_cut == done.total // 100
    assert after["treasury"] - done.before["treasury"] == parts.service_cut
    assert done.before["gateway"] - after["gateway"] == done.total

    # the deliverable: refetched, same bytes, same CID
    async with w.http.get(f"{w.base}/ipfs/{done.cid}") as resp:
        assert resp.status == 200
        fetched = await resp.read()
    assert fetched == done.data and cid_of(fetched) == done.cid
    assert view["deliverable_cid"] == done.cid

    # the audit chain, recomputed: chain_hash = SHA-256(prev_hash || RFC 8785 canonical payload)
    prev = "genesis"
    for seq, entry in enumerate(view["audit_chain"]["entries"], start=1):
        assert entry["seq"] == seq and entry["prev_hash"] == prev
        mine = hashlib.sha256(prev.encode("ascii") + rfc8785.dumps(entry["payload"])).hexdigest()
        assert mine == entry["chain_hash"], entry
        prev = mine
    payloads = [e["payload"] for e in view["audit_chain"]["entries"]]
    assert [(p["from_state"], p["to_state"]) for p in payloads] == EXPECTED_MOVES
    assert payloads[-1]["tx_hash"] == done.complete_tx and payloads[3]["cid"] == done.cid
    assert [(h["from_state"], h["to_state"]) for h in view["history"]] == EXPECTED_MOVES
    assert [h["audit_id"] for h in view["history"]] == [e["audit_id"] for e in view["audit_chain"]["entries"]]

    # the webhooks: one per move, both signatures valid
    async def all_delivered() -> bool:
        return len(w.hooks.of(name)) >= len(EXPECTED_MOVES)

    await until(f"{name} webhooks", all_delivered)
    got = w.hooks.of(name)
    assert all(d.service_ok and d.standard_ok for d in got)
    assert all(d.body["event"] == "job.state_changed" and d.body["job_id"] == done.order_id for d in got)
    moves = sorted(
        ((d.body["metadata"]["from_state"], d.body["metadata"]["to_state"]) for d in got),
        key=EXPECTED_MOVES.index,
    )
    assert moves == EXPECTED_MOVES and all(d.body["status"] == d.body["metadata"]["to_state"] for d in got)


def test_buyer_sequence_end_to_end(system: System, tmp_path: Path) -> None:
    async def main() -> None:
        async with running(tmp_path, system) as w:
            shop = await open_shop(w)
            a = await buy(w, shop, "multipart", multipart=True, refusals=True)
            await verify(w, shop, "multipart", a)
            b = await buy(w, shop, "json", multipart=False, refusals=False)
            await verify(w, shop, "json", b)

            # The receiver answered every webhook, but the dispatcher commits each outcome after the
            # answer (its own writer): wait for the rows to say so instead of assuming it is done.
            async def recorded() -> bool:
                view = await w.ok("GET", f"/api/acp/orders/{b.order_id}", key=shop.buyer_key)
                return sorted(d["status"] for d in view["webhook_delivery"]) == ["delivered"] * len(EXPECTED_MOVES)

            await until("json webhook outcomes recorded", recorded)
            await asyncio.sleep(0.2)  # a duplicate delivery would show up here
            ids = [d.event_id for d in w.hooks.got]
            assert len(ids) == 2 * len(EXPECTED_MOVES) and len(set(ids)) == len(ids) and all(ids)

    asyncio.run(main())


def test_with_the_indexer_as_its_own_process_an_order_is_released_and_its_webhook_sent(
    system: System, tmp_path: Path
) -> None:
    """The API with no indexer of its own and `python -m indexer` apart: the indexer process installs
    every follower (indexer.service), so the order reaches `released` from the final JobReleased,
    and the API's outbox dispatcher sends the webhooks that process queued."""

    async def main() -> None:
        async with running(tmp_path, system, indexer="process") as w:
            shop = await open_shop(w)
            done = await buy(w, shop, "apart", multipart=True, refusals=False)
            await verify(w, shop, "apart", done)  # released, audit chain, one signed webhook per move
            released = [d for d in w.hooks.of("apart") if d.body["status"] == "released"]
            assert len(released) == 1 and released[0].service_ok and released[0].standard_ok

    asyncio.run(main())
