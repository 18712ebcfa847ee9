"""Shared by the hire tests: the whole service (api.app.create_app) on a loopback port over a real
SQLite file and a real anvil, real provider servers (an HTTPS-style JSON endpoint for every
behaviour, verifying our Standard Webhooks signature with the `standardwebhooks` library, and a
real a2a-sdk agent served by uvicorn), and the chain steps of an escrow hire."""

from __future__ import annotations

import asyncio
import contextlib
import json
import socket
import time
from collections import Counter
from collections.abc import AsyncIterator, Awaitable, Callable, Iterator
from contextlib import asynccontextmanager
from dataclasses import dataclass, field
from decimal import Decimal
from pathlib import Path
from typing import Any
from urllib.parse import urlsplit

import aiohttp
import apsw
from aiohttp import web
from eth_account.messages import encode_defunct
from eth_account.signers.local import LocalAccount
from eth_utils import keccak
from standardwebhooks import Webhook, WebhookVerificationError

from api.app import create_app
from api.http import SERVICES
from core.checkout import rules as checkout_rules
from core.checkout.follower import OrderFollower
from core.config import Settings
from core.hire import EscrowFollower, Hire, rules
from core.hire.context import Seams
from core.operator import Operator
from core.store import connect, open_database
from indexer.rpc import RetryPolicy, RpcClient
from indexer.sync import Indexer
from tests.integration.chainkit import USDC, System
from tests.integration.http_kit import Client, Reply

KEYWORDS_IN = {
    "type": "object",
    "required": ["topic"],
    "properties": {"topic": {"type": "string", "minLength": 1}, "count": {"type": "integer", "minimum": 1}},
}
KEYWORDS_OUT = {
    "type": "object",
    "required": ["keywords"],
    "properties": {"keywords": {"type": "array", "items": {"type": "string"}}},
}


def free_port() -> int:
    s = socket.socket()
    s.bind(("127.0.0.1", 0))
    port: int = s.getsockname()[1]
    s.close()
    return port


# ---- a provider over HTTPS-style JSON ---------------------------------------------------------


@dataclass
class ProviderServer:
    """One loopback server, a route per behaviour. Every request's Standard Webhooks signature is
    checked with the `standardwebhooks` library against the secret registered for its path
    (`secrets[path]`, the whsec_ form the service returned); a request that fails it gets 401."""

    base: str = ""
    secrets: dict[str, str] = field(default_factory=dict)
    calls: Counter[str] = field(default_factory=Counter)  # job id -> runs
    bodies: list[dict[str, Any]] = field(default_factory=list)
    bad_signatures: int = 0
    slow_seconds: float = 0.3
    hooks: list[tuple[str, dict[str, str], bytes]] = field(default_factory=list)  # (path, headers, body)
    gate: asyncio.Event | None = None  # when set, /ok waits for it
    _runner: web.AppRunner | None = None

    def url(self, behaviour: str) -> str:
        return f"{self.base}/{behaviour}"

    async def _handle(self, request: web.Request) -> web.StreamResponse:
        behaviour = request.match_info["behaviour"]
        raw = await request.read()
        if request.method == "HEAD":
            return web.Response(status=200 if behaviour != "down" else 503)
        if behaviour == "hook":  # a webhook receiver: record, answer 204
            self.hooks.append((request.path, dict(request.headers), raw))
            return web.Response(status=204)
        secret = self.secrets.get(request.path)
        if secret is not None:
            try:
                Webhook(secret).verify(raw, dict(request.headers))
            except WebhookVerificationError:
                self.bad_signatures += 1
                return web.Response(status=401, text="bad signature")
        body = json.loads(raw)
        self.bodies.append(body)
        self.calls[body["jobId"]] += 1
        topic = body["input"].get("topic", "")
        ok = {"keywords": [f"{topic} tips", f"best {topic}"]}
        if behaviour == "ok":
            if self.gate is not None:
                await self.gate.wait()
            return web.json_response(ok)
        if behaviour == "error":
            return web.json_response({"error": "boom"}, status=500)
        if behaviour == "slow":
            await asyncio.sleep(self.slow_seconds)
            return web.json_response(ok)
        if behaviour == "timeout":
            await asyncio.sleep(30)
            return web.json_response(ok)
        if behaviour == "huge":
            resp = web.StreamResponse(headers={"Content-Type": "application/json"})
            await resp.prepare(request)
            await resp.write(b'{"keywords":["' + b"x" * (rules.MAX_OUTPUT_BYTES + 1024) + b'"]}')
            return resp
        if behaviour == "invalid":
            return web.Response(text="{not json", content_type="application/json")
        if behaviour == "badschema":
            return web.json_response({"words": 42})
        return web.Response(status=404)

    async def start(self) -> ProviderServer:
        app = web.Application()
        app.router.add_route("*", "/{behaviour}", self._handle)
        app.router.add_route("*", "/{behaviour}/{tag}", self._handle)
        # a held or sleeping handler must not hold the test's teardown up (aiohttp waits 60 s by default)
        self._runner = web.AppRunner(app, access_log=None, shutdown_timeout=0.2)
        await self._runner.setup()
        port = free_port()
        await web.TCPSite(self._runner, "127.0.0.1", port).start()
        self.base = f"http://127.0.0.1:{port}"
        return self

    async def stop(self) -> None:
        if self._runner is not None:
            await self._runner.cleanup()


def down_url() -> str:
    """A loopback URL nothing listens on."""
    return f"http://127.0.0.1:{free_port()}/down"


# ---- a real A2A agent ---------------------------------------------------------------------------


def _in_process_server() -> type[Any]:
    import uvicorn

    class InProcessServer(uvicorn.Server):
        """uvicorn without its SIGINT/SIGTERM handlers: two agents stopped in another order than they
        started would leave SIGTERM bound to a stopped server, and sse-starlette (the MCP server's SSE)
        then ends every later stream of this process at once."""

        @contextlib.contextmanager
        def capture_signals(self) -> Iterator[None]:
            yield

    return InProcessServer


class A2AAgent:
    """An a2a-sdk agent (JSON-RPC binding, starlette + uvicorn on loopback) that answers each message
    with one task whose artifact is a data part: keywords for the input's topic (or, with
    `fail=True`, a failed task)."""

    def __init__(self, *, fail: bool = False) -> None:
        self.fail = fail
        self.port = free_port()
        self.base = f"http://127.0.0.1:{self.port}"
        self.card_url = self.base + "/.well-known/agent-card.json"
        self.messages: list[Any] = []
        self._server: Any = None
        self._task: asyncio.Task[None] | None = None

    async def start(self) -> A2AAgent:
        import uvicorn
        from a2a.helpers.proto_helpers import get_data_parts, new_data_part, new_task_from_user_message
        from a2a.server.agent_execution import AgentExecutor, RequestContext
        from a2a.server.events import EventQueue
        from a2a.server.request_handlers import DefaultRequestHandler
        from a2a.server.routes import create_agent_card_routes, create_jsonrpc_routes
        from a2a.server.tasks import InMemoryTaskStore, TaskUpdater
        from a2a.types.a2a_pb2 import AgentCapabilities, AgentCard, AgentInterface, AgentSkill
        from starlette.applications import Starlette

        agent = self

        class Executor(AgentExecutor):
            async def execute(self, context: RequestContext, event_queue: EventQueue) -> None:
                message = context.message
                assert message is not None
                agent.messages.append(message)
                (data,) = get_data_parts(message.parts)
                task = context.current_task or new_task_from_user_message(message)
                await event_queue.enqueue_event(task)
                updater = TaskUpdater(event_queue, task.id, task.context_id)
                await updater.start_work()
                if agent.fail:
                    await updater.failed()
                    return
                topic = data.get("topic", "")
                await updater.add_artifact([new_data_part({"keywords": [f"{topic} via a2a"], "n": 1})], name="result")
                await updater.complete()

            async def cancel(self, context: RequestContext, event_queue: EventQueue) -> None:
                return None

        card = AgentCard(
            name="keyword agent",
            description="keyword research over A2A",
            version="1.0.0",
            supported_interfaces=[
                AgentInterface(url=self.base + "/", protocol_binding="JSONRPC", protocol_version="1.0")
            ],
            capabilities=AgentCapabilities(streaming=False),
            default_input_modes=["application/json"],
            default_output_modes=["application/json"],
            skills=[AgentSkill(id="keyword_research", name="keywords", description="keywords", tags=["seo"])],
        )
        handler = DefaultRequestHandler(agent_executor=Executor(), task_store=InMemoryTaskStore(), agent_card=card)
        app = Starlette(routes=[*create_agent_card_routes(card), *create_jsonrpc_routes(handler, "/")])
        self._server = _in_process_server()(uvicorn.Config(app, host="127.0.0.1", port=self.port, log_level="warning"))
        self._task = asyncio.create_task(self._server.serve())
        for _ in range(500):
            if self._server.started:
                break
            await asyncio.sleep(0.01)
        return self

    async def stop(self) -> None:
        if self._server is not None:
            self._server.should_exit = True
        if self._task is not None:
            await self._task


# ---- the service --------------------------------------------------------------------------------


@dataclass
class Clock:
    """Real time plus an offset the test moves."""

    offset: float = 0.0

    def __call__(self) -> float:
        return time.time() + self.offset


@dataclass
class Harness(Client):
    db: apsw.Connection
    db_path: Path
    clock: Clock
    system: System
    rpc_url: str
    app: web.Application
    hire: Hire
    provider_server: ProviderServer

    async def register(self, key: str | None = None, name: str = "bot") -> tuple[str, str, str]:
        """(api key, agl_ wallet, uuid) of a new agent (a new account unless `key` is given)."""
        r = await self.call("POST", "/api/agents/register", {"name": name, "specialty": "data_research"}, key=key)
        assert r.status == 201, r.body
        return key or r.body["api_key"], r.body["agent"]["wallet"], r.body["agent"]["id"]

    async def fund(self, key: str, wallet: str, amount: int | str) -> None:
        r = await self.call(
            "POST", "/api/agents/earn", {"agentId": wallet, "amount": amount, "source": "seed"}, key=key
        )
        assert r.status == 200, r.body

    async def balance(self, key: str, wallet: str) -> Decimal:
        r = await self.call("GET", "/api/agents/balance", key=key, params={"agentId": wallet})
        assert r.status == 200, r.body
        value: Decimal = r.body["balance"]
        return value

    async def link(self, key: str, wallet: str, self_acct: LocalAccount, owner: str) -> int:
        ts = int(self.clock())
        msg = checkout_rules.provider_link_message(
            chain_id=self.system.deployment.chain_id,
            agent_wallet=wallet,
            self_wallet=self_acct.address,
            owner=owner,
            timestamp=ts,
        )
        sig = "0x" + bytes(self_acct.sign_message(encode_defunct(text=msg)).signature).hex()
        body = {"agent_id": wallet, "self_wallet": self_acct.address, "owner_address": owner, "timestamp": ts}
        r = await self.call("POST", "/api/acp/providers", {**body, "signature": sig}, key=key)
        assert r.status == 201, r.body
        return int(r.body["token_id"])

    async def publish(
        self,
        key: str,
        wallet: str,
        *,
        url: str,
        runner: str = "https",
        service_type: str = "keyword_research",
        price: Any = 2,
        sla: int = 5,
        **extra: Any,
    ) -> Reply:
        body = {
            "agentId": wallet,
            "serviceType": service_type,
            "price": price,
            "description": "keywords for a topic",
            "inputSchema": KEYWORDS_IN,
            "outputSchema": KEYWORDS_OUT,
            "slaSeconds": sla,
            "runner": {"type": runner, "url": url},
            **extra,
        }
        r = await self.call("POST", "/api/a2a/services", body, key=key)
        assert r.status == 200, r.body
        if runner == "https" and "signingSecret" in r.body:
            self.provider_server.secrets[urlsplit(url).path] = r.body["signingSecret"]
        return r

    async def provider(
        self, self_acct: LocalAccount, owner: LocalAccount, *, behaviour: str = "ok", url: str | None = None, **kw: Any
    ) -> Provider:
        key, wallet, uuid = await self.register(name="provider")
        token = await self.link(key, wallet, self_acct, owner.address)
        url = url or f"{self.provider_server.url(behaviour)}/{wallet}"  # its own path: its own secret
        r = await self.publish(key, wallet, url=url, **kw)
        return Provider(key, wallet, uuid, token, self_acct, owner, r.body)

    async def caller(self, funds: int | str = 100) -> tuple[str, str, str]:
        key, wallet, uuid = await self.register(name="caller")
        await self.fund(key, wallet, funds)
        return key, wallet, uuid

    async def hire_call(
        self,
        key: str,
        caller: str,
        *,
        provider: str | None = None,
        topic: str = "seo",
        idem: str | None = None,
        **kw: Any,
    ) -> Reply:
        body: dict[str, Any] = {"callerWallet": caller, "serviceType": "keyword_research", "input": {"topic": topic}}
        if provider is not None:
            body["providerWallet"] = provider
        body.update(kw)
        return await self.call("POST", "/api/a2a/hire", body, key=key, idem=idem)

    async def index(self) -> None:
        """Index the chain to its head into the service's file, with every feature's follower."""
        conn = connect(self.db_path, durable=False)
        try:
            async with RpcClient(self.rpc_url, RetryPolicy(attempts=3)) as rpc:
                dep = self.system.deployment
                ix = Indexer(
                    conn,
                    rpc,
                    chain_id=dep.chain_id,
                    addresses=dep.contracts,
                    start_block=dep.deploy_block,
                    confirmations=0,
                    use_finalized_tag=False,
                    followers=[OrderFollower(self.clock), EscrowFollower(self.clock)],
                )
                await ix.run_until(self.system.w3.eth.block_number)
        finally:
            conn.close()

    # ---- escrow -----------------------------------------------------------------------------

    def set_price(self, p: Provider, price: int, sla: int = 0) -> None:
        self.system.tx(p.self_acct, self.system.escrow.functions.setPrice(p.token, price, sla))

    def lock(self, caller: LocalAccount, p: Provider, label: str, amount: int | None = None) -> tuple[str, str]:
        """approve + createJob at the provider's on-chain price and SLA: (job id, tx hash)."""
        esc = self.system.escrow.functions
        price = esc.priceOf(p.token).call() if amount is None else amount
        sla = esc.slaOf(p.token).call()
        self.system.mint_usdc(caller.address, price)
        self.system.approve(caller, self.system.escrow.address, price)
        job = keccak(text=f"hire-test:{label}:{time.time_ns()}")
        receipt = self.system.tx(caller, esc.createJob(job, p.wallet, price, sla))
        return "0x" + job.hex(), "0x" + bytes(receipt["transactionHash"]).hex()

    def escrow_body(
        self,
        caller: LocalAccount,
        p: Provider,
        job_id: str,
        tx: str,
        *,
        topic: str = "seo",
        signer: LocalAccount | None = None,
        timestamp: int | None = None,
        **kw: Any,
    ) -> dict[str, Any]:
        inp = {"topic": topic}
        _, digest = rules.input_digest(inp)
        ts = int(self.clock()) if timestamp is None else timestamp
        msg = rules.escrow_message(
            chain_id=self.system.deployment.chain_id,
            escrow=self.system.escrow.address,
            job_id=job_id,
            input_sha256=digest,
            timestamp=ts,
        )
        sig = "0x" + bytes((signer or caller).sign_message(encode_defunct(text=msg)).signature).hex()
        body = {
            "escrowJobId": job_id,
            "txHash": tx,
            "serviceType": "keyword_research",
            "input": inp,
            "providerWallet": p.wallet,
            "timestamp": ts,
            "signature": sig,
        }
        body.update(kw)
        return body


@dataclass
class Provider:
    key: str
    wallet: str
    uuid: str
    token: int
    self_acct: LocalAccount
    owner: LocalAccount
    published: dict[str, Any]


def build_app(
    db_path: Path | str, system: System, rpc_url: str, clock: Clock, seams: Seams | None = None
) -> tuple[web.Application, apsw.Connection]:
    """The service on `db_path`: a SQLite file, or a database URL (a child process under the redirect)."""
    db = open_database(db_path).connect()
    operator = Operator(system.w3, system.operator, system.deployment.contracts, system.deployment.usdc)
    app = create_app(
        system.deployment,
        rpc_url,
        db,
        settings=Settings(),
        clock=clock,
        operator=operator,
        sweep_interval=None,
    )
    if seams is not None:
        app[SERVICES].part(Hire).seams = seams
    return app, db


@asynccontextmanager
async def serve(
    tmp_path: Path, system: System, rpc_url: str, *, seams: Seams | None = None, clock: Clock | None = None
) -> AsyncIterator[Harness]:
    clock = clock or Clock()
    db_path = tmp_path / "ledger.db"
    app, db = build_app(db_path, system, rpc_url, clock, seams)
    provider_server = await ProviderServer().start()
    # As the service runs (no handler cancellation: an MCP session's opening SSE answer outlives it)
    runner = web.AppRunner(app, access_log=None)
    await runner.setup()
    site = web.TCPSite(runner, "127.0.0.1", 0)
    await site.start()
    host, port = runner.addresses[0][:2]
    try:
        async with aiohttp.ClientSession() as session:
            yield Harness(
                session,
                f"http://{host}:{port}",
                db,
                db_path,
                clock,
                system,
                rpc_url,
                app,
                app[SERVICES].part(Hire),
                provider_server,
            )
    finally:
        await runner.cleanup()
        await provider_server.stop()
        db.close()


def run(tmp_path: Path, system: System, rpc_url: str, body: Callable[[Harness], Awaitable[None]], **kw: Any) -> None:
    async def main() -> None:
        async with serve(tmp_path, system, rpc_url, **kw) as h:
            await body(h)

    asyncio.run(main())


def ledger_kinds(db: apsw.Connection, agent_uuid: str) -> list[tuple[str, int]]:
    return [
        (str(k), int(a))
        for k, a in db.execute("SELECT kind, amount FROM ledger WHERE agent_uuid = ? ORDER BY id", (agent_uuid,))
    ]


U = USDC
