"""Provider identity and the catalogue over real HTTP, a real SQLite file and a real anvil: the
EIP-191 link signature, the agent NFT minted by the operator, every refusal, crash recovery of a
link between mint and record, and the public catalogue.

`Harness` and `serve` are also used by test_checkout.py."""

from __future__ import annotations

import asyncio
import json
import subprocess
import sys
import time
from collections.abc import AsyncIterator, Awaitable, Callable
from contextlib import asynccontextmanager
from dataclasses import dataclass, field
from decimal import Decimal
from pathlib import Path
from typing import Any

import aiohttp
import apsw
import pytest
from aiohttp import web
from aiohttp.test_utils import TestServer
from eth_account.messages import encode_defunct
from eth_account.signers.local import LocalAccount
from web3 import Web3

from api.errors import error_middleware
from api.http import PUBLIC_URL, Hooks
from api.wallets import add_wallet_routes
from core import instance
from core.anvil import Anvil
from core.checkout import rules
from core.checkout.context import Checkout
from core.config import Settings
from core.operator import ContractReverted, Operator, operator_account
from core.outbox.dispatcher import Dispatcher as WebhookDispatcher
from core.store import checkout as store
from core.store import connect, transaction
from tests.integration.chainkit import USDC, System
from tests.integration.http_kit import Client, Reply, install_checkout, mount_dispatcher
from tests.integration.rpc_proxy import RpcProxy


@dataclass
class Clock:
    now: float = field(default_factory=lambda: float(int(time.time())))

    def __call__(self) -> float:
        return self.now


@dataclass
class Harness(Client):
    db: apsw.Connection
    clock: Clock
    system: System
    app: web.Application
    operator: Operator
    #: What the checkout use cases run with (the sweep takes it).
    checkout: Checkout
    #: The app's test seams (api.http.Hooks): set after_funding / before_order to fail a complete there.
    seams: Hooks
    #: Awaited by complete after it moved the session to complete_in_progress (Hooks.before_funding).
    complete_hooks: list[Callable[[web.Request], Awaitable[None]]] = field(default_factory=list)

    async def register(self, key: str | None = None) -> tuple[str, str, str]:
        """(api key, agl_ wallet, uuid) of a new agent (a new account unless `key` is given)."""
        r = await self.call("POST", "/api/agents/register", {"name": "bot", "specialty": "content_seo"}, key=key)
        assert r.status == 201, r.body
        return key or r.body["api_key"], r.body["agent"]["wallet"], r.body["agent"]["id"]

    def link_body(
        self,
        wallet: str,
        self_acct: LocalAccount,
        owner: str,
        *,
        timestamp: int | None = None,
        signer: LocalAccount | None = None,
        referrer: int | None = None,
    ) -> dict[str, Any]:
        ts = int(self.clock.now) if timestamp is None else timestamp
        msg = rules.provider_link_message(
            chain_id=self.system.deployment.chain_id,
            agent_wallet=wallet,
            self_wallet=self_acct.address,
            owner=owner,
            timestamp=ts,
        )
        sig = (signer or self_acct).sign_message(encode_defunct(text=msg)).signature
        body: dict[str, Any] = {
            "agent_id": wallet,
            "self_wallet": self_acct.address,
            "owner_address": owner,
            "timestamp": ts,
            "signature": "0x" + bytes(sig).hex(),
        }
        if referrer is not None:
            body["referrer_token_id"] = referrer
        return body

    async def provider(
        self, self_acct: LocalAccount, owner: str, *, tier: str = "standard", price: Any = None
    ) -> tuple[str, str, int, str]:
        """A linked provider with one item: (key, wallet, token id, item id)."""
        key, wallet, _ = await self.register()
        r = await self.call("POST", "/api/acp/providers", self.link_body(wallet, self_acct, owner), key=key)
        assert r.status == 201, r.body
        item: dict[str, Any] = {"title": f"{tier} work", "tier": tier, "agent_id": wallet}
        if price is not None:
            item["price"] = price
        ri = await self.call("POST", "/api/acp/items", item, key=key)
        assert ri.status == 201, ri.body
        return key, wallet, int(r.body["token_id"]), str(ri.body["id"])

    def total_agents(self) -> int:
        n: int = self.system.registry.functions.totalAgents().call()
        return n


@asynccontextmanager
async def serve(
    tmp_path: Path,
    system: System,
    *,
    ttl: float = 3600.0,
    dispatcher: bool = False,
    rpc_url: str | None = None,
    public_url: str | None = None,
) -> AsyncIterator[Harness]:
    """The service on a free loopback port; `rpc_url` points the operator at another node URL (a proxy);
    `public_url` is the configured AGENTLEDGER_PUBLIC_URL."""
    db = connect(tmp_path / "ledger.db", durable=True)
    clock = Clock()
    app = web.Application(middlewares=[error_middleware])
    if public_url is not None:
        app[PUBLIC_URL] = public_url
    hooks: list[Callable[[web.Request], Awaitable[None]]] = []

    async def complete_hook(request: web.Request) -> None:
        for hook in list(hooks):
            await hook(request)

    seams = Hooks(before_funding=complete_hook)
    add_wallet_routes(app, db, clock, seams)
    if dispatcher:
        mount_dispatcher(app, WebhookDispatcher(tmp_path / "ledger.db", clock, allow_private=True))
    # (no connect(): its blocking probe would starve a proxy served by this very loop)
    w3 = Web3(Web3.HTTPProvider(rpc_url)) if rpc_url else system.w3
    operator = Operator(w3, system.operator, system.deployment.contracts, system.deployment.usdc)
    checkout = install_checkout(
        app, system.deployment, operator, clock, settings=Settings(checkout_session_ttl=ttl), hooks=seams
    )
    server = TestServer(app, host="127.0.0.1", port=0)
    await server.start_server()
    try:
        async with aiohttp.ClientSession() as session:
            yield Harness(session, str(server.make_url("")), db, clock, system, app, operator, checkout, seams, hooks)
    finally:
        await server.close()
        db.close()


def run(tmp_path: Path, system: System, body: Callable[[Harness], Awaitable[None]], **kw: Any) -> None:
    async def main() -> None:
        async with serve(tmp_path, system, **kw) as h:
            await body(h)

    asyncio.run(main())


def assert_error(r: Reply, status: int, code: str, param: str | None = None) -> None:
    assert r.status == status, (r.status, r.body)
    assert set(r.body) == {"type", "code", "message", "param"}, r.body
    assert r.body["code"] == code, r.body
    assert r.body["param"] == param, r.body
    assert isinstance(r.body["message"], str) and r.body["message"]


# ---- provider link ------------------------------------------------------------------------------


def test_link_mints_the_agent_nft_and_records_it(system: System, tmp_path: Path) -> None:
    self_acct, owner = system.users[0], system.users[1].address

    async def body(h: Harness) -> None:
        key, wallet, uuid = await h.register()
        before = h.total_agents()
        r = await h.call(
            "POST",
            "/api/acp/providers",
            h.link_body(wallet, self_acct, owner),
            key=key,
            headers={"Request-Id": "req-42", "API-Version": "2026-04-17"},
        )
        assert r.status == 201, r.body
        assert r.headers["Request-Id"] == "req-42" and r.headers["API-Version"] == "2026-04-17"
        token = r.body["token_id"]
        assert token == before + 1 == h.total_agents()
        reg = system.registry.functions
        assert reg.ownerOf(token).call() == owner
        assert reg.selfWalletOf(token).call() == self_acct.address
        assert reg.tokenOfWalletId(wallet).call() == token
        receipt = system.w3.eth.get_transaction_receipt(r.body["mint_tx"])
        assert receipt["status"] == 1 and receipt["from"] == system.operator.address
        assert r.body["agent_id"] == wallet and r.body["agent_uuid"] == uuid
        assert r.body["self_wallet"] == self_acct.address and r.body["owner_address"] == owner
        assert r.body["referrer_token_id"] is None
        row = store.get_provider(h.db, uuid)
        assert row is not None and row.token_id == token and row.mint_tx == r.body["mint_tx"]
        # public read, by wallet id and by uuid
        for ref in (wallet, uuid):
            g = await h.call("GET", f"/api/acp/providers/{ref}")
            assert g.status == 200 and g.body["token_id"] == token
        assert_error(await h.call("GET", "/api/acp/providers/agl_000000000000"), 404, "provider_not_found", "agent_id")

    run(tmp_path, system, body)


def test_link_with_referrer_and_idempotent_replay(system: System, tmp_path: Path) -> None:
    async def body(h: Harness) -> None:
        _, _, first, _ = await h.provider(system.users[0], system.users[1].address)
        key, wallet, _ = await h.register()
        link = h.link_body(wallet, system.users[2], system.users[3].address, referrer=first)
        r1 = await h.call("POST", "/api/acp/providers", link, key=key, idem="link-1")
        r2 = await h.call("POST", "/api/acp/providers", link, key=key, idem="link-1")
        assert r1.status == r2.status == 201 and r1.raw == r2.raw, r1.body
        assert r2.headers["Idempotent-Replayed"] == "true" and r2.headers["Idempotency-Key"] == "link-1"
        assert r1.body["referrer_token_id"] == first
        assert system.registry.functions.agent(r1.body["token_id"]).call()[1] == first
        assert h.total_agents() == 2

    run(tmp_path, system, body)


def test_link_refusals(system: System, tmp_path: Path) -> None:
    a, b, c, owner = system.users[0], system.users[1], system.users[2], system.users[5].address

    async def body(h: Harness) -> None:
        key, wallet, uuid = await h.register()
        path = "/api/acp/providers"
        # a signature by another address than the self wallet
        r = await h.call("POST", path, h.link_body(wallet, a, owner, signer=b), key=key)
        assert_error(r, 401, "signature_mismatch", "$.signature")
        assert b.address in r.body["message"]
        # a signature over another timestamp than the one sent
        wrong_ts = h.link_body(wallet, a, owner)
        wrong_ts["timestamp"] -= 1
        assert_error(await h.call("POST", path, wrong_ts, key=key), 401, "signature_mismatch", "$.signature")
        # outside the +-5 min window, both ways (correctly signed)
        for skew in (-301, 301):
            stale = h.link_body(wallet, a, owner, timestamp=int(h.clock.now) + skew)
            assert_error(await h.call("POST", path, stale, key=key), 401, "timestamp_out_of_window", "$.timestamp")
        edge = h.link_body(wallet, a, owner, timestamp=int(h.clock.now) - 300)
        # a well-shaped signature no key recovers from: what the schema allows, signed by nobody
        bad = h.link_body(wallet, a, owner)
        bad["signature"] = "0x" + "00" * 65
        assert_error(await h.call("POST", path, bad, key=key), 401, "signature_mismatch", "$.signature")
        # a shape error names the field as a JSONPath
        short = {**h.link_body(wallet, a, owner), "self_wallet": "0x1234"}
        assert_error(await h.call("POST", path, short, key=key), 400, "invalid_field", "$.self_wallet")
        # another account's agent is not found; no key at all is a 401
        other_key, _, _ = await h.register()
        assert_error(
            await h.call("POST", path, h.link_body(wallet, a, owner), key=other_key),
            404,
            "agent_not_found",
            "$.agent_id",
        )
        assert (await h.call("POST", path, h.link_body(wallet, a, owner))).status == 401
        assert h.total_agents() == 0 and store.get_provider(h.db, uuid) is None
        # an unknown referrer: refused by the registry, nothing kept
        ref = h.link_body(wallet, a, owner, referrer=99)
        assert_error(await h.call("POST", path, ref, key=key), 404, "unknown_referrer", "$.referrer_token_id")
        assert store.get_provider(h.db, uuid) is None
        # the edge of the window is accepted; then a second link of the agent is refused
        assert (await h.call("POST", path, edge, key=key)).status == 201
        again = h.link_body(wallet, c, owner)
        assert_error(await h.call("POST", path, again, key=key), 409, "provider_already_linked")
        # another agent reusing a linked self wallet
        key2, wallet2, uuid2 = await h.register()
        reuse = h.link_body(wallet2, a, owner)
        assert_error(await h.call("POST", path, reuse, key=key2), 409, "self_wallet_taken")
        # a self wallet already used by a token minted outside the service: the chain refuses it
        system.register_agent(owner, c.address, "agl_00000000abcd")
        outside = h.link_body(wallet2, c, owner)
        assert_error(await h.call("POST", path, outside, key=key2), 409, "self_wallet_taken")
        assert store.get_provider(h.db, uuid2) is None  # the pending row is gone: a retry may link
        assert h.total_agents() == 2

    run(tmp_path, system, body)


def test_link_recovers_a_crash_between_mint_and_record(system: System, tmp_path: Path) -> None:
    """A pending row (token NULL) whose mint was mined: the retry adopts the minted token, no second
    mint. A pending row whose mint never happened: the retry mints."""
    owner = system.users[4].address

    async def body(h: Harness) -> None:
        key, wallet, uuid = await h.register()
        store.insert_pending_provider(
            h.db,
            agent_uuid=uuid,
            self_wallet=system.users[0].address,
            owner_address=owner,
            referrer_token_id=None,
            now=1.0,
        )
        token = system.register_agent(owner, system.users[0].address, wallet)  # the crashed attempt's mint
        r = await h.call("POST", "/api/acp/providers", h.link_body(wallet, system.users[0], owner), key=key)
        assert r.status == 201, r.body
        assert r.body["token_id"] == token and h.total_agents() == 1
        row = store.get_provider(h.db, uuid)
        assert row is not None and row.token_id == token

        key2, wallet2, uuid2 = await h.register()
        store.insert_pending_provider(
            h.db,
            agent_uuid=uuid2,
            self_wallet=system.users[1].address,
            owner_address=owner,
            referrer_token_id=None,
            now=1.0,
        )
        r2 = await h.call("POST", "/api/acp/providers", h.link_body(wallet2, system.users[1], owner), key=key2)
        assert r2.status == 201, r2.body
        assert r2.body["token_id"] == 2 and h.total_agents() == 2
        assert system.registry.functions.tokenOfWalletId(wallet2).call() == 2

    run(tmp_path, system, body)


def test_concurrent_links_of_one_agent_mint_once(system: System, tmp_path: Path) -> None:
    async def body(h: Harness) -> None:
        key, wallet, _ = await h.register()
        link = h.link_body(wallet, system.users[0], system.users[1].address)
        replies = await asyncio.gather(*(h.call("POST", "/api/acp/providers", link, key=key) for _ in range(4)))
        assert sorted(r.status for r in replies) == [201, 409, 409, 409], [r.body for r in replies]
        assert h.total_agents() == 1

    run(tmp_path, system, body)


def test_concurrent_links_through_two_processes_mint_once(system: System, tmp_path: Path) -> None:
    """Two API processes on one database (two apps, each its own writer and operator) get links of
    one agent at once: the pending row's claim lets one mint; every other request, on either, is
    refused (409) and the operator sends one transaction."""

    async def main() -> None:
        async with serve(tmp_path, system) as a, serve(tmp_path, system) as b:
            key, wallet, uuid = await a.register()
            link = a.link_body(wallet, system.users[0], system.users[1].address)
            sent = system.w3.eth.get_transaction_count(system.operator.address)
            replies = await asyncio.gather(
                *(h.call("POST", "/api/acp/providers", link, key=key) for h in (a, b, a, b, a, b))
            )
            assert sorted(r.status for r in replies) == [201] + [409] * 5, [r.body for r in replies]
            refusals = {r.body["code"] for r in replies if r.status == 409}
            assert refusals <= {"provider_already_linked", "provider_link_in_progress"}
            assert system.w3.eth.get_transaction_count(system.operator.address) == sent + 1  # one mint
            row = store.get_provider(a.db, uuid)
            assert row is not None and row.token_id == a.total_agents()

    asyncio.run(main())


def test_a_pending_link_of_a_live_process_is_refused_and_of_a_gone_one_taken_over(
    system: System, tmp_path: Path
) -> None:
    """A pending row another request is minting (its process runs): 409 provider_link_in_progress
    with Retry-After, nothing sent. Once that process is gone, a link takes the row over and mints."""
    self_acct, owner = system.users[0], system.users[1].address

    async def body(h: Harness) -> None:
        key, wallet, uuid = await h.register()
        with transaction(h.db):
            assert store.insert_pending_provider(
                h.db,
                agent_uuid=uuid,
                self_wallet=self_acct.address,
                owner_address=owner,
                referrer_token_id=None,
                now=h.clock.now,
                link_owner=instance.current(),  # a live process (this one) is minting
                link_attempt="running",
            )
        sent = system.w3.eth.get_transaction_count(system.operator.address)
        r = await h.call("POST", "/api/acp/providers", h.link_body(wallet, self_acct, owner), key=key)
        assert_error(r, 409, "provider_link_in_progress")
        assert r.headers["Retry-After"] == "2"
        assert system.w3.eth.get_transaction_count(system.operator.address) == sent
        gone = subprocess.run(
            [sys.executable, "-c", "from core import instance; print(instance.current())"],
            capture_output=True,
            text=True,
            check=True,
        ).stdout.strip()
        with transaction(h.db):
            assert store.take_over_link(h.db, uuid, "running", gone, "crashed", h.clock.now)
        r = await h.call("POST", "/api/acp/providers", h.link_body(wallet, self_acct, owner), key=key)
        assert r.status == 201, r.body
        assert system.w3.eth.get_transaction_count(system.operator.address) == sent + 1

    run(tmp_path, system, body)


# ---- catalogue ----------------------------------------------------------------------------------


def test_catalogue_items(system: System, tmp_path: Path) -> None:
    async def body(h: Harness) -> None:
        key, wallet, token, std = await h.provider(system.users[0], system.users[1].address)
        r = await h.call("GET", f"/api/acp/items/{std}")
        assert r.status == 200
        assert r.body["tier"] == "standard" and r.body["delivery_hours"] == 48
        assert r.body["price"] == 250 and r.body["unit_amount"] == 250 * USDC and r.body["currency"] == "usdc"
        assert r.body["provider"] == {"agent_id": wallet, "token_id": token}
        made = {}
        for tier, price, units in (
            ("rush", None, 375 * USDC),
            ("deep", None, 500 * USDC),
            ("rush", "12.5", 12_500_000),
        ):
            item: dict[str, Any] = {"title": "t", "tier": tier, "agent_id": wallet}
            if price is not None:
                item["price"] = Decimal(price)
            body_text = json.dumps({k: (float(v) if isinstance(v, Decimal) else v) for k, v in item.items()})
            ri = await h.call("POST", "/api/acp/items", body_text, key=key)
            assert ri.status == 201, ri.body
            assert ri.body["unit_amount"] == units and ri.body["delivery_hours"] == rules.TIERS[tier].hours
            made[ri.body["id"]] = units
        named = await h.call("POST", "/api/acp/items", {"item_id": "seo-audit", "title": "x", "tier": "deep"}, key=key)
        assert named.status == 422 and named.body["code"] == "missing_agent_id"  # an account key must name the agent
        named = await h.call(
            "POST",
            "/api/acp/items",
            {"item_id": "seo-audit", "title": "x", "tier": "deep", "agent_id": wallet},
            key=key,
        )
        assert named.status == 201 and named.body["id"] == "seo-audit"
        dup = {"item_id": "seo-audit", "title": "y", "tier": "rush", "agent_id": wallet}
        assert_error(await h.call("POST", "/api/acp/items", dup, key=key), 409, "item_exists", "$.item_id")
        bad_tier = {"title": "y", "tier": "express", "agent_id": wallet}
        assert_error(await h.call("POST", "/api/acp/items", bad_tier, key=key), 400, "invalid_field", "$.tier")
        for bad_price in ("-1", "0", "1.0000001"):
            r = await h.call(
                "POST",
                "/api/acp/items",
                f'{{"title":"y","tier":"rush","agent_id":"{wallet}","price":{bad_price}}}',
                key=key,
            )
            assert r.status == 400 and r.body["param"] == "$.price", r.body
        # an agent that is not a linked provider cannot publish
        other_key, other_wallet, _ = await h.register()
        item = {"title": "y", "tier": "rush", "agent_id": other_wallet}
        assert_error(await h.call("POST", "/api/acp/items", item, key=other_key), 403, "provider_not_linked")
        assert (await h.call("POST", "/api/acp/items", item)).status == 401
        # listing: public, paginated, filterable
        listing = await h.call("GET", "/api/acp/items")
        assert listing.status == 200 and len(listing.body["data"]) == 5 and listing.body["has_more"] is False
        page = await h.call("GET", "/api/acp/items", params={"limit": "2"})
        assert len(page.body["data"]) == 2 and page.body["has_more"] is True
        rest = await h.call("GET", "/api/acp/items", params={"limit": "10", "after": page.body["data"][-1]["id"]})
        ids = [i["id"] for i in page.body["data"] + rest.body["data"]]
        assert ids == sorted(ids) and len(ids) == 5
        none = await h.call("GET", "/api/acp/items", params={"provider": other_wallet})
        assert none.body == {"data": [], "has_more": False}
        assert_error(await h.call("GET", "/api/acp/items/nope"), 404, "item_not_found", "item_id")

    run(tmp_path, system, body)


def test_api_version_header(system: System, tmp_path: Path) -> None:
    async def body(h: Harness) -> None:
        r = await h.call("GET", "/api/acp/items", headers={"API-Version": "2025-09-29", "Request-Id": "abc"})
        assert_error(r, 400, "unsupported_api_version", "API-Version")
        assert "2026-04-17" in r.body["message"]
        assert r.headers["Request-Id"] == "abc"
        ok = await h.call("GET", "/api/acp/items", headers={"API-Version": "2026-04-17"})
        assert ok.status == 200 and ok.headers["API-Version"] == "2026-04-17" and "Request-Id" not in ok.headers
        # other parts of the API are not ACP: no version check there
        other = await h.call("GET", "/api/agents/network", headers={"API-Version": "1999-01-01"})
        assert other.status == 200 and "API-Version" not in other.headers

    run(tmp_path, system, body)


# ---- the operator -------------------------------------------------------------------------------


def test_operator_serialises_nonces_decodes_reverts_and_resyncs(system: System) -> None:
    op = Operator(system.w3, system.operator, system.deployment.contracts, system.deployment.usdc)
    owner = system.users[1].address

    async def main() -> None:
        receipts = await asyncio.gather(
            *(
                op.transact("AgentRegistry", "mint", owner, system.users[i].address, f"agl_00000000000{i}", 0)
                for i in range(4)
            )
        )
        tokens = sorted(int(op.events(r, "AgentRegistry", "AgentRegistered")[0]["args"]["tokenId"]) for r in receipts)
        assert tokens == [1, 2, 3, 4] and op.sent == 4
        # a revert is found by the estimate, decoded, and nothing is sent
        with pytest.raises(ContractReverted) as info:
            await op.transact("AgentRegistry", "mint", owner, system.users[5].address, "bad-id", 0)
        assert info.value.error_name == "InvalidWalletId" and info.value.args_ == ("bad-id",)
        with pytest.raises(ContractReverted) as info:
            await op.transact("AgentRegistry", "mint", owner, system.users[0].address, "agl_00000000000f", 0)
        assert info.value.error_name == "SelfWalletTaken" and info.value.args_ == (system.users[0].address,)
        with pytest.raises(ContractReverted) as info:
            await op.call("AgentRegistry", "tokenOfWalletId", "agl_0000000000ff")
        assert info.value.error_name == "UnknownWalletId"
        assert op.sent == 4
        # the account used elsewhere (its nonce moved on): the next send resyncs and succeeds
        system.register_agent(owner, system.users[6].address, "agl_000000000006")
        r = await op.transact("AgentRegistry", "mint", owner, system.users[7].address, "agl_000000000007", 0)
        assert r["status"] == 1 and len(op.events(r, "AgentRegistry", "AgentRegistered")) == 1
        assert await op.call("USDC", "decimals") == 6

    asyncio.run(main())


def test_operator_account_rules() -> None:
    assert operator_account("", 31337).address == "0xf39Fd6e51aad88F6F4ce6aB8827279cffFb92266"  # anvil's first key
    key = "0x" + "11" * 32
    assert operator_account(key, 8453).key.hex().endswith("11" * 32)
    with pytest.raises(ValueError, match="OPERATOR_KEY"):
        operator_account("", 8453)


def test_mint_errors_never_show_the_rpc_url(system: System, tmp_path: Path, anvil: Anvil) -> None:
    """The node answers reads but fails the mint's send: the 503 says so in fixed words; the RPC URL
    (here with a key-like path) and the node's own error text go to the log only."""

    async def main() -> None:
        async with RpcProxy(anvil.rpc_url) as proxy, serve(tmp_path, system, rpc_url=proxy.url + "/v2/SECRET") as h:
            key, wallet, _ = await h.register()
            proxy.fail_next("503", 50, method="eth_estimateGas")
            body = h.link_body(wallet, system.users[4], system.users[5].address)
            r = await h.call("POST", "/api/acp/providers", body, key=key)
            assert_error(r, 503, "chain_unavailable")
            assert "SECRET" not in r.raw.decode() and "127.0.0.1" not in r.raw.decode(), r.body
            assert store.provider_by_self_wallet(h.db, system.users[4].address) is None  # a retry may run

    asyncio.run(main())
