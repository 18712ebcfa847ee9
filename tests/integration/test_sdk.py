"""The Python SDK (sdk/, package agentledger_sdk) against a LIVE wallet API: a real aiohttp server
on a free loopback port over a real SQLite file, run in a background thread so the synchronous
client can block on it. Faults (a lost response, a 503, a 429) are injected by a tiny loopback
proxy in front of the same server, which also records what the SDK sent (Idempotency-Key, body).
No chain needed."""

from __future__ import annotations

import asyncio
import inspect
import threading
from collections.abc import Awaitable, Callable, Iterator
from concurrent.futures import ThreadPoolExecutor
from dataclasses import dataclass, field
from datetime import UTC, datetime
from decimal import Decimal
from pathlib import Path
from typing import Any, TypeVar

import agentledger_sdk as sdk
import aiohttp
import pytest
from agentledger_sdk import AgentLedger, AsyncAgentLedger
from aiohttp import web

from api.http import Hooks
from api.wallets import create_wallet_app
from core.keys import hash_api_key, new_api_key
from core.store import connect, transaction
from core.store import wallets as store

T = TypeVar("T")
NOW = 1_800_000_000.0  # the server's injected clock (2027-01-15 UTC)
EARN = "/api/agents/earn"


@dataclass
class Seen:
    method: str
    path: str
    idempotency_key: str | None
    body: bytes


@dataclass
class Proxy:
    """Loopback proxy in front of the server. `faults[path]` is a queue of what to do with the next
    requests to that path: "drop" (forward, let the server commit, then close the connection
    without answering), "503" / "429" (answer that error without forwarding). Everything else is
    forwarded unchanged."""

    upstream: str
    url: str = ""
    faults: dict[str, list[str]] = field(default_factory=dict)
    seen: list[Seen] = field(default_factory=list)

    def requests(self, path: str) -> list[Seen]:
        return [s for s in self.seen if s.path == path]


class Live:
    """The wallet API (and a fault proxy) served from a background event loop."""

    def __init__(self, tmp_path: Path) -> None:
        self.db_path = tmp_path / "wallets.db"
        self.hooks: list[Callable[[web.Request], Awaitable[None]]] = []
        self.loop = asyncio.new_event_loop()
        self.thread = threading.Thread(target=self.loop.run_forever, daemon=True)
        self.thread.start()
        self.url, self.proxy = self.run(self._start())

    def run(self, coro: Awaitable[T]) -> T:
        return asyncio.run_coroutine_threadsafe(coro, self.loop).result(timeout=30)  # type: ignore[arg-type]

    async def _start(self) -> tuple[str, Proxy]:
        self.db = connect(self.db_path, durable=True)

        async def hook(request: web.Request) -> None:
            for h in list(self.hooks):
                await h(request)

        app = create_wallet_app(self.db, lambda: NOW, Hooks(before_write=hook))
        self.runner = web.AppRunner(app)
        await self.runner.setup()
        site = web.TCPSite(self.runner, "127.0.0.1", 0)
        await site.start()
        url = _url(self.runner)
        proxy = Proxy(url)
        self.session = aiohttp.ClientSession()
        papp = web.Application()
        papp.router.add_route("*", "/{tail:.*}", self._proxy_handler(proxy))
        self.proxy_runner = web.AppRunner(papp, handle_signals=False)
        await self.proxy_runner.setup()
        await web.TCPSite(self.proxy_runner, "127.0.0.1", 0).start()
        proxy.url = _url(self.proxy_runner)
        return url, proxy

    def _proxy_handler(self, proxy: Proxy) -> Callable[[web.Request], Awaitable[web.StreamResponse]]:
        async def handle(request: web.Request) -> web.StreamResponse:
            body = await request.read()
            proxy.seen.append(Seen(request.method, request.path, request.headers.get("Idempotency-Key"), body))
            queue = proxy.faults.get(request.path) or []
            fault = queue.pop(0) if queue else None
            if fault == "503":
                return web.json_response(
                    {"type": "service_error", "code": "unavailable", "message": "injected", "param": None}, status=503
                )
            if fault == "429":
                return web.json_response(
                    {"type": "invalid_request", "code": "rate_limited", "message": "slow down", "param": None},
                    status=429,
                    headers={"Retry-After": "0"},
                )
            headers = {k: v for k, v in request.headers.items() if k.lower() not in ("host", "content-length")}
            async with self.session.request(
                request.method, proxy.upstream + request.path_qs, data=body, headers=headers
            ) as up:
                raw = await up.read()
                kept = ("Content-Type", "Idempotency-Key", "Idempotent-Replayed", "Retry-After", "WWW-Authenticate")
                out = {k: up.headers[k] for k in kept if k in up.headers}
                status = up.status
            if fault == "drop":  # the server committed and answered; the client never hears it
                assert request.transport is not None
                request.transport.abort()
                raise asyncio.CancelledError
            resp = web.Response(status=status, body=raw, headers=out)
            return resp

        return handle

    async def _stop(self) -> None:
        await self.session.close()
        await self.proxy_runner.cleanup()
        await self.runner.cleanup()
        self.db.close()

    def close(self) -> None:
        self.run(self._stop())
        self.loop.call_soon_threadsafe(self.loop.stop)
        self.thread.join(timeout=10)
        self.loop.close()

    def hold(self, path: str) -> tuple[threading.Event, threading.Event]:
        """Hold the next request to `path` after it claimed its Idempotency-Key: returns (entered,
        release) events."""
        entered, release = threading.Event(), threading.Event()

        async def h(request: web.Request) -> None:
            if request.path == path and not entered.is_set():
                entered.set()
                while not release.is_set():
                    await asyncio.sleep(0.01)

        self.hooks.append(h)
        return entered, release

    def ledger_rows(self) -> int:
        return self.run(self._count("ledger"))

    async def _count(self, table: str) -> int:
        return store.count_rows(self.db, table)

    def agent_scoped_key(self, wallet: str) -> str:
        key = new_api_key()

        async def insert() -> None:
            agent = store.agent_by_wallet(self.db, wallet)
            assert agent is not None
            with transaction(self.db):
                store.insert_api_key(self.db, hash_api_key(key), agent.account_id, agent.uuid, None, 0)

        self.run(insert())
        return key


def _url(runner: web.AppRunner) -> str:
    host, port = runner.addresses[0][:2]
    return f"http://{host}:{port}"


@pytest.fixture()
def live(tmp_path: Path) -> Iterator[Live]:
    server = Live(tmp_path)
    try:
        yield server
    finally:
        server.close()


def client(base: str, api_key: str | None = None, **kw: Any) -> AgentLedger:
    kw.setdefault("backoff", 0.01)
    kw.setdefault("timeout", 10.0)
    return AgentLedger(base, api_key, **kw)


def aclient(base: str, api_key: str | None = None, **kw: Any) -> AsyncAgentLedger:
    kw.setdefault("backoff", 0.01)
    kw.setdefault("timeout", 10.0)
    return AsyncAgentLedger(base, api_key, **kw)


def new_agent(live: Live, **kw: Any) -> tuple[str, str]:
    """(api key, wallet) of a freshly registered agent in a new account."""
    with client(live.url) as al:
        reg = al.register("bot", "content_seo", **kw)
    assert reg.api_key is not None
    return reg.api_key, reg.agent.wallet


# ---- round trips --------------------------------------------------------------------------------


def test_register_earn_get_agent_round_trip(live: Live) -> None:
    with client(live.url) as al:
        reg = al.register("scout", "content_seo")
        assert reg.success and not reg.replayed
        assert reg.api_key is not None and reg.api_key.startswith("aglk_")
        assert al.api_key == reg.api_key  # a keyless client adopts the key it was shown
        wallet = reg.agent.wallet
        assert wallet.startswith("agl_") and reg.agent.name == "scout" and reg.agent.balance == 0
        assert len(reg.agent.referral_code or "") == 8
        assert al.identity(wallet).uuid == reg.agent.id

        r = al.earn(wallet, Decimal("12.5"), source="gumroad")
        assert isinstance(r.balance, Decimal) and not r.replayed
        assert (r.service_cut, r.agent_cut, r.owner_cut, r.referral_cut) == (
            Decimal("0.25"),
            Decimal("0.125"),
            Decimal("12.125"),
            Decimal(0),
        )
        assert (r.serviceCut, r.agentCut, r.ownerCut, r.toll) == (r.service_cut, r.agent_cut, r.owner_cut, r.toll)
        assert r.net == r.owner_cut + r.agent_cut == r.balance == Decimal("12.25")
        assert r.ownerBalance + r.agentSelfBalance == r.balance
        assert r["ownerCut"] == r.owner_cut and r.transaction_id is not None

        r2 = al.earn(wallet, 100, "test")  # int and decimal-string amounts are accepted too
        r3 = al.earn(wallet, "0.000001", "test")
        agent = al.get_agent(wallet)
        assert isinstance(agent.total_earned, Decimal) and isinstance(agent.balance, Decimal)
        assert agent.total_earned == agent.totalEarned == Decimal("112.500001")
        assert agent.balance == r.net + r2.net + r3.net == r3.balance
        assert agent.total_transactions == agent.totalTransactions == 3

        s = al.spend(wallet, "10.25", "0xabc")
        assert s.spent == Decimal("10.25") and s.balance == agent.balance - Decimal("10.25")
        with pytest.raises(sdk.InvalidRequest) as exc:
            al.spend(wallet, 1000, "0xabc")
        assert (exc.value.status, exc.value.code) == (422, "insufficient_balance")
        assert al.get_agent(wallet).balance == s.balance


def test_amounts_are_decimal_and_floats_are_refused(live: Live) -> None:
    key, wallet = new_agent(live)
    with client(live.proxy.url, key) as al:
        for bad in (0.1, 1e3, True):
            with pytest.raises(TypeError):
                al.earn(wallet, bad, "test")  # type: ignore[arg-type]
        for bad_value in ("ten", "NaN", Decimal("Infinity")):
            with pytest.raises(ValueError):
                al.earn(wallet, bad_value, "test")
        assert live.proxy.requests(EARN) == []  # nothing was sent
        al.earn(wallet, Decimal("1E+2"), "test")  # sent as the plain number 100, never through float
        al.earn(wallet, Decimal("0.10"), "test")
    bodies = [s.body for s in live.proxy.requests(EARN)]
    assert bodies == [
        f'{{"agentId":"{wallet}","amount":100,"source":"test"}}'.encode(),
        f'{{"agentId":"{wallet}","amount":0.10,"source":"test"}}'.encode(),
    ]


# ---- typed errors -------------------------------------------------------------------------------


def test_errors_are_typed_and_carry_the_error_shape(live: Live) -> None:
    key, wallet = new_agent(live)
    _other_key, other_wallet = new_agent(live)

    with client(live.url) as anonymous, pytest.raises(sdk.AuthenticationError) as e401:
        anonymous.get_agent(wallet)
    err = e401.value
    assert isinstance(err, sdk.AgentLedgerError)
    assert (err.status, err.type, err.code, err.param) == (401, "invalid_request", "missing_api_key", "Authorization")
    assert err.message and "missing_api_key" in str(err)

    with client(live.url, "aglk_" + "0" * 32) as wrong, pytest.raises(sdk.AuthenticationError) as e401:
        wrong.earn(wallet, 1, "test")
    assert e401.value.code == "invalid_api_key"
    with client(live.url, "not-a-key") as malformed, pytest.raises(sdk.AuthenticationError) as e401:
        malformed.get_agent(wallet)
    assert e401.value.code == "malformed_api_key"

    with client(live.proxy.url, key) as al:
        for missing in ("agl_000000000000", other_wallet):  # unknown, and another account's agent
            with pytest.raises(sdk.NotFound) as e404:
                al.earn(missing, 5, "test")
            assert (e404.value.status, e404.value.code, e404.value.param) == (404, "agent_not_found", "agentId")
            assert e404.value.idempotency_key is not None

        with pytest.raises(sdk.InvalidRequest) as e400:
            al.earn(wallet, "1.0000001", "test")
        assert (e400.value.status, e400.value.code, e400.value.param) == (400, "invalid_amount", "amount")
        with pytest.raises(sdk.InvalidRequest) as e400:
            al.get_agent("bad wallet")
        assert (e400.value.status, e400.value.param) == (400, "agentId")
        with pytest.raises(sdk.InvalidRequest) as e400:
            al.register("bot", "underwater_basket_weaving")
        assert e400.value.status == 400 and e400.value.param == "specialty"
    # a 4xx is an answer, not a failure: it was sent once, never retried
    assert len(live.proxy.requests(EARN)) == 3

    with client(live.url, live.agent_scoped_key(wallet)) as scoped:
        assert scoped.get_agent(wallet).total_transactions == 0  # the scoped key works for its agent
        with pytest.raises(sdk.PermissionDenied) as e403:
            scoped.register("sibling", "content_seo")
        assert (e403.value.status, e403.value.code) == (403, "account_key_required")

    with client(live.proxy.url, key, retries=0) as al:
        live.proxy.faults[EARN] = ["503"]
        with pytest.raises(sdk.ServerError) as e5xx:
            al.earn(wallet, 1, "test")
        assert (e5xx.value.status, e5xx.value.code) == (503, "unavailable")
        live.proxy.faults[EARN] = ["429"]
        with pytest.raises(sdk.RateLimited) as e429:
            al.earn(wallet, 1, "test")
        assert e429.value.retry_after == 0

    with client(f"http://127.0.0.1:{_closed_port()}", key, retries=1) as dead, pytest.raises(sdk.ConnectionError):
        dead.get_agent(wallet)
    assert issubclass(sdk.ConnectionError, sdk.TransportError) and issubclass(sdk.TimeoutError, sdk.TransportError)


def _closed_port() -> int:
    import socket

    with socket.socket() as s:
        s.bind(("127.0.0.1", 0))
        return int(s.getsockname()[1])


# ---- retries never double-credit -----------------------------------------------------------------


def test_retried_earn_after_a_lost_response_is_replayed_not_credited_twice(live: Live) -> None:
    key, wallet = new_agent(live)
    live.proxy.faults[EARN] = ["drop"]
    with client(live.proxy.url, key) as al:
        r = al.earn(wallet, 10, source="lost")
    sent = live.proxy.requests(EARN)
    assert len(sent) == 2  # the original reached the server and committed; its answer was lost
    assert sent[0].idempotency_key is not None and sent[0].idempotency_key == sent[1].idempotency_key
    assert sent[0].body == sent[1].body
    assert r.replayed  # the server answered the retry with the stored response
    assert r.balance == r.net == Decimal("9.8")
    with client(live.url, key) as direct:
        agent = direct.get_agent(wallet)
    assert (agent.balance, agent.total_earned, agent.total_transactions) == (Decimal("9.8"), Decimal(10), 1)

    # Every retry, whatever the failure, goes out with the one key of its logical call.
    live.proxy.faults[EARN] = ["503", "429", "drop"]
    with client(live.proxy.url, key) as al:
        r2 = al.earn(wallet, 10, "test")
    keys = {s.idempotency_key for s in live.proxy.requests(EARN)[2:]}
    assert len(live.proxy.requests(EARN)) == 6 and len(keys) == 1 and sent[0].idempotency_key not in keys
    assert r2.replayed and r2.balance == Decimal("19.6")

    # Out of retries: the error names the key, and a later call with it is still at most once.
    live.proxy.faults[EARN] = ["drop"]
    with client(live.proxy.url, key, retries=0) as al:
        with pytest.raises(sdk.TransportError) as lost:
            al.earn(wallet, 10, "test")
        assert lost.value.idempotency_key is not None and lost.value.status is None
        again = al.earn(wallet, 10, "test", idempotency_key=lost.value.idempotency_key)
        assert again.replayed and again.balance == Decimal("29.4")
        with pytest.raises(sdk.InvalidRequest) as reused:  # same key, different body
            al.earn(wallet, 11, "test", idempotency_key=lost.value.idempotency_key)
        assert (reused.value.status, reused.value.code) == (422, "idempotency_conflict")
    with client(live.url, key) as direct:
        assert direct.get_agent(wallet).total_transactions == 3


def test_keyless_register_is_not_retried_after_a_lost_response(live: Live) -> None:
    """Registration without a key returns a new key once and the server will not replay it, so the
    SDK sends it without Idempotency-Key and never repeats it once it may have arrived."""
    path = "/api/agents/register"
    live.proxy.faults[path] = ["drop"]
    with client(live.proxy.url) as al, pytest.raises(sdk.TransportError):
        al.register("bot", "content_seo")
    assert [s.idempotency_key for s in live.proxy.requests(path)] == [None]
    live.proxy.faults[path] = ["503"]
    with client(live.proxy.url) as al, pytest.raises(sdk.ServerError):
        al.register("bot", "content_seo")
    assert len(live.proxy.requests(path)) == 2


def test_in_flight_earn_waits_for_the_original_and_gets_its_replay(live: Live) -> None:
    key, wallet = new_agent(live)
    entered, release = live.hold(EARN)
    with ThreadPoolExecutor(1) as pool, client(live.url, key) as first, client(live.url, key, retries=0) as impatient:
        original = pool.submit(first.earn, wallet, 7, "test", idempotency_key="order-42")
        assert entered.wait(10)
        with pytest.raises(sdk.Conflict) as busy:
            impatient.earn(wallet, 7, "test", idempotency_key="order-42")
        assert (busy.value.status, busy.value.code, busy.value.retry_after) == (409, "idempotency_in_flight", 1)

        threading.Timer(0.3, release.set).start()
        with client(live.url, key) as patient:  # 409 in flight -> waits Retry-After, retries, replay
            retried = patient.earn(wallet, 7, "test", idempotency_key="order-42")
        first_result = original.result(timeout=10)
    assert retried.replayed and not first_result.replayed
    assert retried.transaction_id == first_result.transaction_id
    with client(live.url, key) as direct:
        assert direct.get_agent(wallet).total_transactions == 1


# ---- the rest of the API -------------------------------------------------------------------------


def test_earn_batch_is_atomic(live: Live) -> None:
    key, wallet = new_agent(live)
    with client(live.url, key) as al:
        sibling = al.register("sibling", "youtube").agent.wallet
        batch = al.earn_batch(
            [(wallet, 10, "a"), {"wallet": sibling, "amount": Decimal("2.5"), "source": "b"}, (wallet, "1", "c")]
        )
        assert batch.success and batch.count == 3 and len(batch.results) == 3
        assert [r.net for r in batch.results] == [Decimal("9.8"), Decimal("2.45"), Decimal("0.98")]
        assert batch.results[2].balance == Decimal("10.78")

        with pytest.raises(sdk.InvalidRequest) as bad:  # one bad item: nothing at all is credited
            al.earn_batch([(wallet, 5, "s"), (sibling, "0.0000001", "s")])
        assert bad.value.param == "payments[1].amount"
        with pytest.raises(sdk.NotFound) as missing:
            al.earn_batch([(wallet, 5, "s"), ("agl_000000000000", 1, "s")])
        assert missing.value.param == "payments[1].agentId"
        assert al.get_agent(wallet).total_transactions == 2
        assert al.get_agent(sibling).balance == Decimal("2.45")

    live.proxy.faults["/api/agents/earn/batch"] = ["drop"]
    with client(live.proxy.url, key) as al:
        replay = al.earn_batch([(wallet, 1, "s"), (sibling, 1, "s")])
    assert replay.replayed and replay.results[0].balance == Decimal("11.76")
    with client(live.url, key) as al:
        assert al.get_agent(wallet).total_transactions == 3


def test_record_run_counts_per_day_and_niche(live: Live) -> None:
    key, wallet = new_agent(live)
    day = datetime.fromtimestamp(NOW, UTC).strftime("%Y-%m-%d")
    with client(live.url, key) as al:
        assert (al.record_run(wallet, True, "youtube").successes, al.record_run(wallet, False, "youtube").failures) == (
            1,
            1,
        )
        r = al.record_run(wallet, True, "youtube")
        assert (r.key, r.successes, r.failures) == (f"run:{day}:youtube", 2, 1)
        general = al.record_run(wallet, False)
        assert general.key == f"run:{day}:general" and (general.successes, general.failures) == (0, 1)
        with pytest.raises(TypeError):
            al.record_run(wallet, 1)  # type: ignore[arg-type]
        with pytest.raises(sdk.InvalidRequest) as bad:
            al.record_run(wallet, True, "Not A Niche")
        assert bad.value.param == "niche"
        assert al.get_agent(wallet).memory_entries == 2
    live.proxy.faults["/api/agents/runs"] = ["drop"]
    with client(live.proxy.url, key) as al:
        assert al.record_run(wallet, True, "youtube").replayed
    with client(live.url, key) as al:
        assert al.record_run(wallet, True, "youtube").successes == 4  # the lost one counted once


def test_memory_compound_brain_network_and_keys(live: Live) -> None:
    key, wallet = new_agent(live)
    with client(live.url, key) as al:
        m = al.remember(wallet, "pricing:ebook", {"price": Decimal("9.99"), "tags": ["a", "b"]})
        assert m.key == "pricing:ebook" and m.value == {"price": Decimal("9.99"), "tags": ["a", "b"]}
        al.remember(wallet, "pricing:course", "x")
        al.remember(wallet, "other", 1)
        page = al.memories(wallet, "pricing", limit=1)
        assert [x.key for x in page.memories] == ["pricing:course"] and page.next_cursor == "pricing:course"
        rest = al.memories(wallet, "pricing", limit=1, cursor=page.next_cursor)
        assert [x.key for x in rest.memories] == ["pricing:ebook"] and rest.next_cursor is None
        assert len(al.memories(wallet).memories) == 3
        with pytest.raises(sdk.InvalidRequest) as reserved:
            al.remember(wallet, "brain:v1", {})
        assert reserved.value.status == 400

        al.earn(wallet, 100, "test")
        c = al.compound(wallet, 50)
        assert (c.moved, c.balance, c.reinvested) == (Decimal(49), Decimal(49), Decimal(49))
        with pytest.raises(TypeError):
            al.compound(wallet, Decimal("20.5"))  # type: ignore[arg-type]

        b = al.update_brain(wallet, "sold", "youtube", Decimal("19.5"), revenue=Decimal("19.5"), name="Intro pack")
        assert b["brain"]["niches"]["youtube"]["sold"] == 1
        assert b["brain"]["prices"]["19.5"] == {"listed": 0, "sold": 1, "revenue": Decimal("19.5")}
        assert b["brain"]["topProducts"] == [
            {"name": "Intro pack", "niche": "youtube", "price": Decimal("19.5"), "sold": 1}
        ]
        with pytest.raises(TypeError):
            al.earn(wallet, 1, None)  # type: ignore[arg-type]  # the source is required
        assert al.brain(wallet)["brain"]["totalRevenue"] == Decimal("19.5")
        with pytest.raises(sdk.InvalidRequest):
            al.update_brain(wallet, "stolen", "youtube", 1)

        net = al.network()
        assert net.total_agents == 1 and net.total_earned == 100 and net.total_tolls == 2

    with client(live.url) as anonymous:
        k = anonymous.create_key("Ops@Example.com")
        assert k.api_key.startswith("aglk_") and k.email == "ops@example.com"
        with pytest.raises(sdk.Conflict) as taken:
            anonymous.create_key("ops@example.com")
        assert taken.value.status == 409
        assert anonymous.create_key("mcp@example.com", mcp_toolsets="wallet,hire").api_key.startswith("aglk_")
        with pytest.raises(sdk.InvalidRequest) as toolsets:
            anonymous.create_key("mcp2@example.com", mcp_toolsets="wallet,bank")
        assert toolsets.value.param == "mcpToolsets"
    with client(live.url, k.api_key) as fresh:
        assert fresh.register("new", "podcast").api_key is None  # an account key: no new key


# ---- async parity -------------------------------------------------------------------------------


def test_async_client_has_the_same_methods() -> None:
    def public(cls: type) -> set[str]:
        return {n for n, v in vars(cls).items() if not n.startswith("_") and callable(v)}

    assert public(AgentLedger) - {"close"} == public(AsyncAgentLedger) - {"aclose"}
    for name in public(AsyncAgentLedger):
        assert inspect.iscoroutinefunction(getattr(AsyncAgentLedger, name)), name
        if name != "aclose":
            sync_sig = inspect.signature(getattr(AgentLedger, name))
            assert inspect.signature(getattr(AsyncAgentLedger, name)).parameters == sync_sig.parameters, name


def test_async_client_round_trip_errors_and_retries(live: Live) -> None:
    async def main() -> None:
        async with aclient(live.url) as al:
            reg = await al.register("async", "content_seo")
            wallet = reg.agent.wallet
            r = await al.earn(wallet, Decimal("12.5"), "test")
            assert (r.owner_cut, r.agent_cut, r.service_cut, r.net) == (
                Decimal("12.125"),
                Decimal("0.125"),
                Decimal("0.25"),
                Decimal("12.25"),
            )
            agent = await al.get_agent(wallet)
            assert (agent.totalEarned, agent.balance, agent.totalTransactions) == (
                Decimal("12.5"),
                Decimal("12.25"),
                1,
            )
            batch = await al.earn_batch([(wallet, 1, "s"), (wallet, 1, "s")])
            assert batch.count == 2
            assert (await al.record_run(wallet, True)).successes == 1
            assert (await al.identity(wallet)).wallet == wallet
            with pytest.raises(sdk.NotFound):
                await al.earn("agl_000000000000", 1, "test")
            with pytest.raises(sdk.InvalidRequest):
                await al.earn(wallet, 0, "test")
            with pytest.raises(TypeError):
                await al.earn(wallet, 0.5, "test")  # type: ignore[arg-type]
            key = al.api_key
        async with aclient(live.url) as anonymous:
            with pytest.raises(sdk.AuthenticationError):
                await anonymous.get_agent(wallet)

        live.proxy.faults[EARN] = ["drop", "503"]
        async with aclient(live.proxy.url, key) as al:
            retried = await al.earn(wallet, 10, "test")
        sent = live.proxy.requests(EARN)
        assert len(sent) == 3 and len({s.idempotency_key for s in sent}) == 1
        assert retried.replayed and retried.balance == Decimal("24.01")
        async with aclient(live.url, key) as al:
            assert (await al.get_agent(wallet)).total_transactions == 4

    asyncio.run(main())


def test_public_surface() -> None:
    assert set(sdk.__all__) == {
        "DEFAULT_BASE_URL",
        "Agent",
        "AgentBalance",
        "AgentLedger",
        "AgentLedgerError",
        "AmountLike",
        "ApiKey",
        "AsyncAgentLedger",
        "AuthenticationError",
        "BatchEarnResult",
        "CheckoutSession",
        "CompoundResult",
        "Conflict",
        "ConnectionError",
        "DecisionLogged",
        "Deployment",
        "EarnResult",
        "EntryVerification",
        "EscrowResult",
        "EscrowStatus",
        "HireAudit",
        "HireResult",
        "Identity",
        "InvalidRequest",
        "Memory",
        "MemoryPage",
        "NetworkStats",
        "NotFound",
        "PermissionDenied",
        "ProviderOrderPage",
        "RateLimited",
        "Registration",
        "Registry",
        "Result",
        "RunRecord",
        "ServerError",
        "SpendResult",
        "TimeoutError",
        "TransportError",
        "__version__",
        "from_units",
        "to_decimal",
        "to_units",
    }
    for cls in (
        sdk.AuthenticationError,
        sdk.PermissionDenied,
        sdk.NotFound,
        sdk.Conflict,
        sdk.InvalidRequest,
        sdk.RateLimited,
        sdk.ServerError,
        sdk.TransportError,
    ):
        assert issubclass(cls, sdk.AgentLedgerError)
