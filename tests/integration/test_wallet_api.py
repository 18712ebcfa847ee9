"""The wallet API over real HTTP (aiohttp server on a free loopback port) against a real SQLite
file: every endpoint's success and failure paths, auth, idempotency, concurrent spends, and the
split arithmetic as a property. No chain needed."""

from __future__ import annotations

import asyncio
import hashlib
import json
import re
from collections.abc import AsyncIterator, Awaitable, Callable, Iterator
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
from hypothesis import given, settings
from hypothesis import strategies as st

from api.app import create_app
from api.auth import Caller, FreshAgents, agent_for, clear_auth_caches, remember_agents
from api.errors import ApiError
from api.http import Hooks, RawJson, encode
from api.models import decode_json, parse_body
from api.wallets import create_wallet_app
from api.wallets.models import EarnRequest, parse_earn
from api.wallets.routes import _earn_text
from core import idempotency, wallets
from core.deployments import Deployment
from core.keys import hash_api_key, new_api_key
from core.money import MAX_AMOUNT_UNITS, parse_usdc, split, usdc_text
from core.store import connect, transaction
from core.store import idempotency as idem_store
from core.store import wallets as store
from core.wallets import EarnResult
from tests.integration.http_kit import Client, Clock, Reply

WALLET_RE = re.compile(r"agl_[0-9a-f]{12}")
KEY_RE = re.compile(r"aglk_[0-9a-f]{32}")
TABLES = ("accounts", "api_keys", "wallet_agents", "ledger", "balances", "idempotency_keys")


@dataclass
class Api(Client):
    db: apsw.Connection
    clock: Clock
    hooks: list[Callable[[web.Request], Awaitable[None]]] = field(default_factory=list)

    async def register(self, key: str | None = None, **fields: Any) -> Reply:
        body = {"name": "bot", "specialty": "content_seo", **fields}
        return await self.call("POST", "/api/agents/register", body, key=key)

    async def new_agent(self, key: str | None = None, **fields: Any) -> tuple[str, str, dict[str, Any]]:
        """(api key, wallet, agent json) of a freshly registered agent."""
        r = await self.register(key, **fields)
        assert r.status == 201, r.body
        return key or r.body["api_key"], r.body["agent"]["wallet"], r.body["agent"]

    async def earn(self, key: str, wallet: str, amount: Any, idem: str | None = None) -> Reply:
        body = '{"agentId": "%s", "amount": %s, "source": "test"}' % (wallet, amount)  # noqa: UP031
        return await self.call("POST", "/api/agents/earn", body, key=key, idem=idem)

    async def spend(self, key: str, wallet: str, amount: Any, idem: str | None = None) -> Reply:
        body = '{"agentId": "%s", "amount": %s, "destination": "0xabc"}' % (wallet, amount)  # noqa: UP031
        return await self.call("POST", "/api/agents/spend", body, key=key, idem=idem)

    async def balance(self, key: str | None, wallet: str) -> Reply:
        return await self.call("GET", "/api/agents/balance", key=key, params={"agentId": wallet})

    def counts(self) -> dict[str, int]:
        return {t: store.count_rows(self.db, t) for t in TABLES}

    def agent(self, wallet: str) -> store.AgentRow:
        a = store.agent_by_wallet(self.db, wallet)
        assert a is not None
        return a


@asynccontextmanager
async def serve(path: Path) -> AsyncIterator[Api]:
    db = connect(path / "wallets.db", durable=True)
    clock = Clock()
    hooks: list[Callable[[web.Request], Awaitable[None]]] = []

    async def hook(request: web.Request) -> None:
        for h in list(hooks):
            await h(request)

    app = create_wallet_app(db, clock, Hooks(before_write=hook))
    server = TestServer(app, host="127.0.0.1", port=0)
    await server.start_server()
    try:
        async with aiohttp.ClientSession() as session:
            yield Api(session, str(server.make_url("")), db, clock, hooks)
    finally:
        await server.close()
        db.close()


def run(tmp_path: Path, body: Callable[[Api], Awaitable[None]]) -> None:
    async def main() -> None:
        async with serve(tmp_path) as api:
            await body(api)

    asyncio.run(main())


@pytest.fixture()
def api_run(tmp_path: Path) -> Iterator[Callable[[Callable[[Api], Awaitable[None]]], None]]:
    yield lambda body: run(tmp_path, body)


def assert_error(r: Reply, status: int, code: str, param: str | None = None) -> None:
    assert r.status == status, (r.status, r.body)
    assert set(r.body) == {"type", "code", "message", "param"}, r.body
    assert r.body["code"] == code, r.body
    assert r.body["param"] == param, r.body
    assert isinstance(r.body["message"], str) and r.body["message"]


def usdc(units: int) -> Decimal:
    return Decimal(usdc_text(units))


# ---- register ------------------------------------------------------------------------------


def test_register_without_key_creates_account_and_shows_key_once(api_run: Any, tmp_path: Path) -> None:
    async def body(api: Api) -> None:
        r = await api.register(name="Scout", specialty="newsletter")
        assert r.status == 201
        assert r.body["success"] is True
        key = r.body["api_key"]
        assert KEY_RE.fullmatch(key) and len(key) == 37
        agent = r.body["agent"]
        assert set(agent) == {"id", "wallet", "name", "specialty", "balance", "referral_code"}
        assert WALLET_RE.fullmatch(agent["wallet"])
        assert agent["name"] == "Scout" and agent["specialty"] == "newsletter" and agent["balance"] == 0
        assert len(agent["referral_code"]) == 8
        row = store.get_api_key(api.db, hash_api_key(key))
        assert row is not None and row.agent_id is None  # account scope
        assert row.key_hash == hashlib.sha256(key.encode()).hexdigest()
        # the key works, and a second registration with it joins the same account, no new key
        r2 = await api.register(key, name="Second")
        assert r2.status == 201 and "api_key" not in r2.body
        assert api.agent(r2.body["agent"]["wallet"]).account_id == row.account_id
        assert (await api.balance(key, r2.body["agent"]["wallet"])).status == 200
        assert api.counts()["accounts"] == 1
        # registering with an account key is idempotent too
        reg = {"name": "Third", "specialty": "sales"}
        r3 = await api.call("POST", "/api/agents/register", reg, key=key, idem="reg-1")
        r4 = await api.call("POST", "/api/agents/register", reg, key=key, idem="reg-1")
        assert r3.status == r4.status == 201 and r3.raw == r4.raw and r4.headers["Idempotent-Replayed"] == "true"
        assert api.counts()["wallet_agents"] == 3
        api.db.execute("PRAGMA wal_checkpoint(TRUNCATE)")
        assert key.encode() not in (tmp_path / "wallets.db").read_bytes()  # only the hash is stored

    api_run(body)


@pytest.mark.parametrize(
    ("payload", "code", "param"),
    [
        ({"name": "x", "specialty": "astrology"}, "invalid_specialty", "specialty"),
        ({"name": "x", "specialty": "email", "extra": 1}, "unknown_field", "extra"),
        ({"specialty": "email"}, "missing_field", "name"),
        ({"name": "", "specialty": "email"}, "invalid_field", "name"),
        ({"name": 5, "specialty": "email"}, "invalid_field", "name"),
        ({"name": "x", "specialty": "email", "referralCode": "short"}, "invalid_field", "referralCode"),
        (b"{not json", "invalid_json", None),
        (b"[1, 2]", "invalid_json", None),
    ],
)
def test_register_rejects_bad_bodies_and_writes_nothing(api_run: Any, payload: Any, code: str, param: str) -> None:
    async def body(api: Api) -> None:
        r = await api.call("POST", "/api/agents/register", payload)
        assert_error(r, 400, code, param)
        # a well-formed code nobody has: what it names does not exist (404, like an unknown agent)
        r = await api.call(
            "POST", "/api/agents/register", {"name": "x", "specialty": "email", "referralCode": "ZZZZZZZZ"}
        )
        assert_error(r, 404, "unknown_referral_code", "referralCode")
        assert "api_key" not in r.body
        assert all(v == 0 for v in api.counts().values())

    api_run(body)


def test_register_auth_failures(api_run: Any) -> None:
    async def body(api: Api) -> None:
        key, wallet, agent = await api.new_agent()
        before = api.counts()
        assert_error(await api.register("aglk_" + "0" * 32), 401, "invalid_api_key", "Authorization")
        assert_error(await api.register("not-a-key"), 401, "malformed_api_key", "Authorization")
        # an agent-scoped key cannot open agents
        agent_key = new_api_key()
        with transaction(api.db):
            store.insert_api_key(api.db, hash_api_key(agent_key), api.agent(wallet).account_id, agent["id"], None, 0)
        before = api.counts()
        assert_error(await api.register(agent_key), 403, "account_key_required", "Authorization")
        # anonymous registration cannot be replayed (its response carries a new key)
        r = await api.call("POST", "/api/agents/register", {"name": "a", "specialty": "email"}, idem="k1", key=None)
        assert_error(r, 422, "idempotency_unsupported", "Idempotency-Key")
        assert api.counts() == before
        assert key

    api_run(body)


def test_referral_code_links_and_is_case_insensitive(api_run: Any) -> None:
    async def body(api: Api) -> None:
        _k, _w, referrer = await api.new_agent()
        r = await api.register(referralCode=referrer["referral_code"].lower())
        assert r.status == 201
        assert api.agent(r.body["agent"]["wallet"]).referred_by == referrer["id"]

    api_run(body)


# ---- earn ----------------------------------------------------------------------------------


def test_earn_splits_and_credits_net(api_run: Any) -> None:
    async def body(api: Api) -> None:
        key, wallet, _ = await api.new_agent()
        r = await api.earn(key, wallet, 250)
        assert r.status == 200, r.body
        b = r.body
        assert b["success"] is True
        assert (b["ownerCut"], b["agentCut"], b["serviceCut"], b["referralCut"]) == (
            Decimal("242.5"),
            Decimal("2.5"),
            5,
            0,
        )
        assert b["toll"] == b["serviceCut"] and b["net"] == Decimal(245)
        assert b["balance"] == Decimal(245) and b["ownerBalance"] == Decimal("242.5")
        assert b["agentSelfBalance"] == Decimal("2.5")
        assert b["message"] == (  # the message names the split
            "250 USDC earned, split: owner 242.5 (97%) + agent 2.5 (1%) + service 5 (2% toll); "
            f"245 credited to {wallet}"
        )
        assert b'"balance":245' in r.raw  # a JSON number, not a string
        r = await api.earn(key, wallet, "0.000001")  # one micro-USDC: all dust to the treasury
        assert (r.body["net"], r.body["serviceCut"], r.body["balance"]) == (0, Decimal("0.000001"), 245)
        bal = await api.balance(key, wallet)
        assert bal.status == 200
        assert bal.body["balance"] == 245 and bal.body["totalEarned"] == Decimal("250.000001")
        assert bal.body["totalTransactions"] == 2 and bal.body["memoryEntries"] == 0

    api_run(body)


def test_referral_credit_goes_to_the_referrer(api_run: Any) -> None:
    async def body(api: Api) -> None:
        rkey, rwallet, referrer = await api.new_agent()
        key, wallet, _ = await api.new_agent(referralCode=referrer["referral_code"])
        r = await api.earn(key, wallet, 1000)
        assert r.status == 200
        assert (r.body["ownerCut"], r.body["agentCut"], r.body["serviceCut"], r.body["referralCut"]) == (
            965,
            10,
            20,
            5,
        )
        assert r.body["net"] == Decimal(975) and r.body["balance"] == Decimal(975)
        ref = await api.balance(rkey, rwallet)
        assert ref.body["balance"] == 5 and ref.body["ownerBalance"] == 5 and ref.body["totalEarned"] == 5
        assert ref.body["totalTransactions"] == 1
        rows = api.db.execute("SELECT kind, amount, source FROM ledger ORDER BY id").fetchall()
        assert rows == [("earn", 975_000_000, "test"), ("referral", 5_000_000, wallet)]

    api_run(body)


@pytest.mark.parametrize(
    ("amount", "code"),
    [
        ("-1", "invalid_amount"),
        ("0", "invalid_amount"),
        ("1.0000001", "invalid_amount"),
        ('"12.5"', "invalid_amount"),
        ("true", "invalid_amount"),
        ("null", "invalid_amount"),
        ("1e13", "invalid_amount"),
        ("10000000000001", "invalid_amount"),
        ("NaN", "invalid_json"),
        ("Infinity", "invalid_json"),
    ],
)
def test_earn_rejects_bad_amounts(api_run: Any, amount: str, code: str) -> None:
    async def body(api: Api) -> None:
        key, wallet, _ = await api.new_agent()
        before = api.counts()
        r = await api.earn(key, wallet, amount)
        assert_error(r, 400, code, "amount" if code == "invalid_amount" else None)
        assert api.counts() == before

    api_run(body)


def test_earn_validation_and_auth_failures_write_nothing(api_run: Any) -> None:
    async def body(api: Api) -> None:
        key, wallet, _ = await api.new_agent()
        other_key, other_wallet, _ = await api.new_agent()
        before = api.counts()
        path = "/api/agents/earn"
        good = {"agentId": wallet, "amount": 1, "source": "x"}
        assert_error(await api.call("POST", path, good), 401, "missing_api_key", "Authorization")
        r = await api.call("POST", path, good, headers={"Authorization": "Basic abc"})
        assert_error(r, 401, "malformed_api_key", "Authorization")
        assert r.headers["WWW-Authenticate"].startswith("Bearer")
        assert_error(
            await api.call("POST", path, good, key="aglk_" + "a" * 31), 401, "malformed_api_key", "Authorization"
        )
        assert_error(await api.call("POST", path, good, key=new_api_key()), 401, "invalid_api_key", "Authorization")
        # another account's agent looks exactly like one that does not exist
        r1 = await api.call("POST", path, {**good, "agentId": other_wallet}, key=key)
        r2 = await api.call("POST", path, {**good, "agentId": "agl_000000000000"}, key=key)
        assert_error(r1, 404, "agent_not_found", "agentId")
        assert_error(r2, 404, "agent_not_found", "agentId")
        assert r1.body["message"].replace(other_wallet, "W") == r2.body["message"].replace("agl_000000000000", "W")
        assert_error(
            await api.call("POST", path, {**good, "agentId": "nope"}, key=key), 400, "invalid_field", "agentId"
        )
        assert_error(await api.call("POST", path, {**good, "tip": 1}, key=key), 400, "unknown_field", "tip")
        assert_error(await api.call("POST", path, {"agentId": wallet}, key=key), 400, "missing_field", "amount")
        assert api.counts() == before
        assert other_key

    api_run(body)


def test_agent_scoped_key_sees_only_its_agent(api_run: Any) -> None:
    async def body(api: Api) -> None:
        key, wallet, agent = await api.new_agent()
        _k, sibling, _ = await api.new_agent(key)
        agent_key = new_api_key()
        with transaction(api.db):
            store.insert_api_key(api.db, hash_api_key(agent_key), api.agent(wallet).account_id, agent["id"], None, 0)
        assert (await api.earn(agent_key, wallet, 10)).status == 200
        assert_error(await api.earn(agent_key, sibling, 10), 404, "agent_not_found", "agentId")
        assert (await api.earn(key, sibling, 10)).status == 200  # the account key reaches both

    api_run(body)


def test_earn_refuses_to_pass_the_int64_total(api_run: Any) -> None:
    async def body(api: Api) -> None:
        key, wallet, _ = await api.new_agent()
        big = usdc(MAX_AMOUNT_UNITS)
        for _ in range(9):
            assert (await api.earn(key, wallet, big)).status == 200
        before = api.counts()
        assert_error(await api.earn(key, wallet, big), 422, "balance_limit", "amount")
        assert api.counts() == before

    api_run(body)


def test_a_referrer_at_the_ceiling_refuses_the_earning_and_nothing_of_it_is_kept(api_run: Any) -> None:
    """The referrer's credit is refused by its own balance update, after the earner's row was written in
    the same group: the earning answers 422 balance_limit and neither row is kept (the group runs again
    without it), while an earning in the same group as it commits."""

    async def body(api: Api) -> None:
        key, referrer, agent = await api.new_agent()
        big = usdc(MAX_AMOUNT_UNITS)
        for _ in range(9):
            assert (await api.earn(key, referrer, big)).status == 200
        total = store.get_balance(api.db, agent["id"]).total_earned
        room = store.MAX_TOTAL_UNITS - total  # less than a referral cut of the earning below
        assert (await api.earn(key, referrer, usdc(room - 1))).status == 200  # one unit of room left
        _, referred, _ = await api.new_agent(key, referralCode=agent["referral_code"])
        _, other, _ = await api.new_agent(key)
        before = api.counts()
        refused, accepted = await asyncio.gather(api.earn(key, referred, 1000), api.earn(key, other, 10))
        assert_error(refused, 422, "balance_limit", "amount")
        assert accepted.status == 200
        after = api.counts()
        assert after["ledger"] == before["ledger"] + 1  # the other agent's earning only
        assert store.get_balance(api.db, api.agent(referred).uuid).total_earned == 0

    api_run(body)


def test_ten_maximal_earns_from_one_free_key_keep_the_network_totals_exact(api_run: Any) -> None:
    """The service-wide totals pass int64 micro-USDC (9.2e12 USDC) and the public network read still
    answers them exactly (it answered 500 for everyone: SQLite's sum() raised integer overflow)."""

    async def body(api: Api) -> None:
        key, first, _ = await api.new_agent()
        _, second, _ = await api.new_agent(key)
        big = usdc(MAX_AMOUNT_UNITS)
        for wallet in [first] * 5 + [second] * 5:
            assert (await api.earn(key, wallet, big)).status == 200
        r = await api.call("GET", "/api/agents/network")
        assert r.status == 200, r.body
        toll = split(MAX_AMOUNT_UNITS, False).service_cut
        assert r.body == {"totalAgents": 2, "totalEarned": usdc(10 * MAX_AMOUNT_UNITS), "totalTolls": usdc(10 * toll)}

    api_run(body)


# ---- balance, identity ---------------------------------------------------------------------


def test_balance_and_identity_failures(api_run: Any) -> None:
    async def body(api: Api) -> None:
        key, wallet, agent = await api.new_agent()
        _ok, other_wallet, _ = await api.new_agent()
        for path in ("/api/agents/balance", "/api/agents/identity"):
            assert_error(
                await api.call("GET", path, params={"agentId": wallet}), 401, "missing_api_key", "Authorization"
            )
            assert_error(await api.call("GET", path, key=key), 400, "missing_field", "agentId")
            r = await api.call("GET", path, key=key, params={"agentId": wallet, "x": "1"})
            assert_error(r, 400, "unknown_field", "x")
            r = await api.call("GET", path, key=key, params={"agentId": other_wallet})
            assert_error(r, 404, "agent_not_found", "agentId")
        r = await api.call("GET", "/api/agents/identity", key=key, params={"agentId": wallet})
        assert r.status == 200 and r.body == {"uuid": agent["id"], "wallet": wallet}
        r = await api.balance(key, wallet)
        assert r.body == {
            "balance": 0,
            "ownerBalance": 0,
            "agentSelfBalance": 0,
            "reinvested": 0,
            "totalEarned": 0,
            "reportedEarned": 0,
            "settledEarned": 0,
            "totalTransactions": 0,
            "memoryEntries": 0,
        }

    api_run(body)


# ---- spend ---------------------------------------------------------------------------------


def test_spend_debits_self_part_first_and_refuses_overdraft(api_run: Any) -> None:
    async def body(api: Api) -> None:
        key, wallet, _ = await api.new_agent()
        await api.earn(key, wallet, 100)  # owner 97, self 1
        r = await api.spend(key, wallet, "1.5")
        assert r.status == 200, r.body
        assert (r.body["spent"], r.body["balance"], r.body["agentSelfBalance"], r.body["ownerBalance"]) == (
            Decimal("1.5"),
            Decimal("96.5"),
            0,
            Decimal("96.5"),
        )
        before = api.counts()
        r = await api.spend(key, wallet, "96.500001")
        assert_error(r, 422, "insufficient_balance", "amount")
        assert api.counts() == before
        assert (await api.spend(key, wallet, "96.5")).body["balance"] == 0
        assert_error(await api.spend(key, wallet, "0.000001"), 422, "insufficient_balance", "amount")
        bad = await api.call("POST", "/api/agents/spend", {"agentId": wallet, "amount": 1}, key=key)
        assert_error(bad, 400, "missing_field", "destination")
        assert store.ledger_totals(api.db, api.agent(wallet).uuid) == (0, 0, 0)

    api_run(body)


def test_hundred_concurrent_spends_never_overdraw(api_run: Any) -> None:
    async def body(api: Api) -> None:
        key, wallet, _ = await api.new_agent()
        await api.earn(key, wallet, 50)  # balance 49

        async def interleave(_request: web.Request) -> None:
            await asyncio.sleep(0)  # every request yields between reading its body and its transaction

        api.hooks.append(interleave)
        replies = await asyncio.gather(*(api.spend(key, wallet, 1) for _ in range(100)))
        ok = [r for r in replies if r.status == 200]
        refused = [r for r in replies if r.status != 200]
        assert len(ok) == 49 and all(r.body["code"] == "insufficient_balance" for r in refused)
        uuid = api.agent(wallet).uuid
        bal = store.get_balance(api.db, uuid)
        assert bal.balance == 0
        assert sum(parse_usdc(r.body["spent"]) for r in ok) <= 49_000_000
        assert store.ledger_totals(api.db, uuid) == (bal.balance, bal.owner_balance, bal.self_balance)

    api_run(body)


def test_hundred_concurrent_spends_with_uneven_amounts(api_run: Any) -> None:
    async def body(api: Api) -> None:
        key, wallet, _ = await api.new_agent()
        await api.earn(key, wallet, "123.456789")
        start = store.get_balance(api.db, api.agent(wallet).uuid).balance
        amounts = [f"{1 + (i * 7919) % 300 / 100:.2f}" for i in range(100)]
        replies = await asyncio.gather(*(api.spend(key, wallet, a) for a in amounts))
        spent = sum(parse_usdc(r.body["spent"]) for r in replies if r.status == 200)
        bal = store.get_balance(api.db, api.agent(wallet).uuid)
        assert spent <= start and bal.balance == start - spent >= 0
        assert store.ledger_totals(api.db, api.agent(wallet).uuid)[0] == bal.balance

    api_run(body)


# ---- idempotency ---------------------------------------------------------------------------


def test_idempotent_replay_conflict_and_scope(api_run: Any) -> None:
    async def body(api: Api) -> None:
        key, wallet, _ = await api.new_agent()
        first = await api.earn(key, wallet, 10, idem="pay-1")
        assert first.status == 200 and first.headers["Idempotency-Key"] == "pay-1"
        assert "Idempotent-Replayed" not in first.headers
        again = await api.earn(key, wallet, 10, idem="pay-1")
        assert again.status == 200 and again.raw == first.raw
        assert again.headers["Idempotent-Replayed"] == "true" and again.headers["Idempotency-Key"] == "pay-1"
        assert (await api.balance(key, wallet)).body["balance"] == Decimal("9.8")  # credited once
        before = api.counts()
        conflict = await api.earn(key, wallet, 11, idem="pay-1")
        assert_error(conflict, 422, "idempotency_conflict", "Idempotency-Key")
        assert conflict.headers["Idempotency-Key"] == "pay-1"
        assert api.counts() == before
        # the same key on another endpoint, or from another caller, is another key
        await api.earn(key, wallet, 10)
        assert (await api.spend(key, wallet, 10, idem="pay-1")).status == 200
        k2, w2, _ = await api.new_agent()
        r = await api.earn(k2, w2, 10, idem="pay-1")
        assert r.status == 200 and "Idempotent-Replayed" not in r.headers
        assert_error(await api.earn(key, wallet, 1, idem=""), 400, "invalid_idempotency_key", "Idempotency-Key")

    api_run(body)


def test_idempotent_errors_are_replayed_but_5xx_is_not_stored(api_run: Any) -> None:
    async def body(api: Api) -> None:
        key, wallet, _ = await api.new_agent()
        r = await api.spend(key, wallet, 5, idem="s1")
        assert_error(r, 422, "insufficient_balance", "amount")
        await api.earn(key, wallet, 100)
        r2 = await api.spend(key, wallet, 5, idem="s1")  # the stored 4xx answers again
        assert r2.status == 422 and r2.headers["Idempotent-Replayed"] == "true" and r2.raw == r.raw

        async def boom(_request: web.Request) -> None:
            raise RuntimeError("injected")

        api.hooks.append(boom)
        r3 = await api.spend(key, wallet, 5, idem="s2")
        assert_error(r3, 500, "internal_error", None)
        api.hooks.clear()
        r4 = await api.spend(key, wallet, 5, idem="s2")  # not stored: runs afresh
        assert r4.status == 200 and "Idempotent-Replayed" not in r4.headers
        assert r4.body["balance"] == 93

    api_run(body)


def test_idempotent_in_flight_gets_409(api_run: Any) -> None:
    async def body(api: Api) -> None:
        key, wallet, _ = await api.new_agent()
        entered, release = asyncio.Event(), asyncio.Event()

        async def hold(_request: web.Request) -> None:
            entered.set()
            await release.wait()

        api.hooks.append(hold)
        first = asyncio.create_task(api.earn(key, wallet, 10, idem="slow"))
        await entered.wait()
        api.hooks.clear()
        second = await api.earn(key, wallet, 10, idem="slow")
        assert_error(second, 409, "idempotency_in_flight", "Idempotency-Key")
        assert second.headers["Retry-After"] == "1" and second.headers["Idempotency-Key"] == "slow"
        # a different body is a conflict even while the first runs
        assert_error(await api.earn(key, wallet, 11, idem="slow"), 422, "idempotency_conflict", "Idempotency-Key")
        release.set()
        done = await first
        assert done.status == 200
        replay = await api.earn(key, wallet, 10, idem="slow")
        assert replay.raw == done.raw and replay.headers["Idempotent-Replayed"] == "true"
        assert (await api.balance(key, wallet)).body["totalTransactions"] == 1

    api_run(body)


def test_idempotency_keys_expire_after_24h_and_abandoned_claims_are_taken_over(api_run: Any) -> None:
    async def body(api: Api) -> None:
        key, wallet, _ = await api.new_agent()
        await api.earn(key, wallet, 10, idem="day")
        api.clock.now += 24 * 3600 + 1
        r = await api.earn(key, wallet, 10, idem="day")
        assert r.status == 200 and "Idempotent-Replayed" not in r.headers
        assert (await api.balance(key, wallet)).body["totalTransactions"] == 2
        # a claim whose process died (in_flight, never finished) is taken over once stale
        scope = f"{hash_api_key(key)} POST /api/agents/earn"
        body_bytes = ('{"agentId": "%s", "amount": 10, "source": "test"}' % wallet).encode()  # noqa: UP031
        with transaction(api.db):
            idem_store.claim(api.db, scope, "dead", idempotency.body_digest(body_bytes), "gone", api.clock.now)
        assert_error(await api.earn(key, wallet, 10, idem="dead"), 409, "idempotency_in_flight", "Idempotency-Key")
        assert idempotency.STALE_AFTER_SECONDS == 300  # a complete may wait on the operator lock > 60 s
        api.clock.now += 299  # still presumed running (a slow complete, not a dead process)
        assert_error(await api.earn(key, wallet, 10, idem="dead"), 409, "idempotency_in_flight", "Idempotency-Key")
        api.clock.now += 2
        assert (await api.earn(key, wallet, 10, idem="dead")).status == 200

    api_run(body)


def test_late_original_is_rolled_back_after_takeover(api_run: Any) -> None:
    async def body(api: Api) -> None:
        key, wallet, _ = await api.new_agent()
        entered, release = asyncio.Event(), asyncio.Event()

        async def hold(_request: web.Request) -> None:
            entered.set()
            await release.wait()

        api.hooks.append(hold)
        first = asyncio.create_task(api.earn(key, wallet, 10, idem="late"))
        await entered.wait()
        api.hooks.clear()
        api.clock.now += idempotency.STALE_AFTER_SECONDS + 1  # the first claim now looks abandoned
        second = await api.earn(key, wallet, 10, idem="late")
        assert second.status == 200
        release.set()
        late = await first
        assert_error(late, 409, "idempotency_in_flight", "Idempotency-Key")
        assert (await api.balance(key, wallet)).body["totalTransactions"] == 1  # credited once

    api_run(body)


# ---- the split as a property, over HTTP -----------------------------------------------------


def test_earn_parts_sum_to_the_amount_and_equal_split(tmp_path: Path) -> None:
    loop = asyncio.new_event_loop()
    ctx = serve(tmp_path)
    api = loop.run_until_complete(ctx.__aenter__())
    try:
        _rk, _rw, referrer = loop.run_until_complete(api.new_agent())
        code = referrer["referral_code"]

        @settings(max_examples=120, deadline=None)
        @given(units=st.integers(min_value=1, max_value=MAX_AMOUNT_UNITS), referred=st.booleans())
        def check(units: int, referred: bool) -> None:
            async def one() -> None:
                key, wallet, _ = await api.new_agent(**({"referralCode": code} if referred else {}))
                r = await api.earn(key, wallet, usdc(units))
                assert r.status == 200, r.body
                parts = [parse_usdc(r.body[f], allow_zero=True) for f in ("ownerCut", "agentCut", "serviceCut")]
                ref_cut = parse_usdc(r.body["referralCut"], allow_zero=True)
                assert sum(parts) + ref_cut == units
                s = split(units, referred)
                assert (parts[0], parts[1], parts[2], ref_cut) == (
                    s.owner_cut,
                    s.agent_cut,
                    s.service_cut,
                    s.referral_cut,
                )
                assert parse_usdc(r.body["net"], allow_zero=True) == s.net == parts[0] + parts[1]
                assert parse_usdc(r.body["balance"], allow_zero=True) == s.net
                assert r.body["toll"] == r.body["serviceCut"]

            loop.run_until_complete(one())

        check()
    finally:
        loop.run_until_complete(ctx.__aexit__(None, None, None))
        loop.close()


def test_create_app_mounts_the_wallet_api(tmp_path: Path) -> None:
    dep = Deployment(31337, "anvil", 0, "0x0", "0x" + "00" * 20, True, {})

    async def main() -> None:
        db = connect(tmp_path / "app.db")
        server = TestServer(create_app(dep, "http://127.0.0.1:9", db), host="127.0.0.1", port=0)
        await server.start_server()
        try:
            async with aiohttp.ClientSession() as s:
                url = str(server.make_url("/api/agents/register"))
                async with s.post(url, json={"name": "a", "specialty": "sales"}) as resp:
                    assert resp.status == 201
                    assert KEY_RE.fullmatch((await resp.json())["api_key"])
        finally:
            await server.close()
            db.close()

    asyncio.run(main())


# ---- the hot path of POST /earn: fast forms held equal to the reference ones ------------------

_JSON_VALUES = st.one_of(
    st.none(),
    st.booleans(),
    st.integers(min_value=-(10**20), max_value=10**20),
    st.decimals(allow_nan=False, allow_infinity=False, places=None).map(str),
    st.sampled_from(["1.5", "0.0000001", "1e3", "1E-7", "2.50000000", "-0", "0", "1e13", "99999999999999.9"]),
    st.text(max_size=3),
    st.just("agl_0123456789ab"),
).map(lambda v: v if (isinstance(v, str) and v[:1].isdigit()) or v in ("-0",) else json.dumps(v))


def _mostly(good: st.SearchStrategy[Any], bad: st.SearchStrategy[Any]) -> st.SearchStrategy[Any]:
    """`good` three times in four (one_of would weigh every leaf of `bad` like `good`)."""
    return st.sampled_from([True, True, True, False]).flatmap(lambda g: good if g else bad)


_AMOUNTS = st.one_of(
    st.integers(min_value=0, max_value=10**14).map(str),
    st.decimals(min_value=0, max_value=10**13, places=6).map(str),
    st.decimals(min_value=0, max_value=10**6, places=8).map(str),
)


@settings(max_examples=500, deadline=None)
@given(
    wallet=_mostly(
        st.just('"agl_0123456789ab"'), st.one_of(st.sampled_from(['"agl_0123456789AB"', '"agl_0"']), _JSON_VALUES)
    ),
    amount=_mostly(_AMOUNTS, _JSON_VALUES),
    source=_mostly(
        st.text(max_size=205).map(json.dumps),
        st.one_of(st.sampled_from([json.dumps(c * n) for c in "xé" for n in (200, 201)]), _JSON_VALUES),
    ),
    drop=_mostly(st.just(set()), st.sets(st.sampled_from(["agentId", "amount", "source"]))),
    extra=_mostly(st.just(False), st.just(True)),
)
def test_parse_earn_agrees_with_the_model(wallet: str, amount: str, source: str, drop: set[str], extra: bool) -> None:
    fields = {"agentId": wallet, "amount": amount, "source": source, "other": "1"}
    body = "{" + ",".join(f'"{k}": {v}' for k, v in fields.items() if k not in drop and (extra or k != "other")) + "}"

    def outcome(fn: Callable[[], Any]) -> Any:
        try:
            return fn()
        except ApiError as exc:
            return (exc.status, exc.code, exc.message, exc.param)

    def reference() -> tuple[str, int, str | None]:
        req = parse_body(EarnRequest, body.encode())
        return req.agentId, req.amount, req.source

    assert outcome(lambda: parse_earn(body.encode())) == outcome(reference)


def _earn_json(wallet: str, r: EarnResult) -> dict[str, Any]:
    """The earn body as the generic encoder writes it: what _earn_text must equal."""

    def u(units: int) -> RawJson:
        return RawJson(usdc_text(units))

    if r.referral_cut:
        split_text = (
            f"owner {u(r.owner_cut)} (96.5%) + agent {u(r.agent_cut)} (1%) + referral {u(r.referral_cut)} (0.5%) + "
            f"service {u(r.service_cut)} (2% toll)"
        )
    else:
        split_text = (
            f"owner {u(r.owner_cut)} (97%) + agent {u(r.agent_cut)} (1%) + service {u(r.service_cut)} (2% toll)"
        )
    return {
        "success": True,
        "balance": u(r.balance.balance),
        "toll": u(r.service_cut),
        "net": u(r.net),
        "ownerCut": u(r.owner_cut),
        "agentCut": u(r.agent_cut),
        "serviceCut": u(r.service_cut),
        "referralCut": u(r.referral_cut),
        "ownerBalance": u(r.balance.owner_balance),
        "agentSelfBalance": u(r.balance.self_balance),
        "transactionId": r.ledger_id,
        "message": f"{u(r.amount)} USDC earned, split: {split_text}; {u(r.net)} credited to {wallet}",
    }


@settings(max_examples=200, deadline=None)
@given(
    units=st.lists(st.integers(min_value=0, max_value=2**62), min_size=6, max_size=6),
    ledger_id=st.integers(min_value=1, max_value=2**62),
)
def test_earn_body_is_the_encoded_earn_json(units: list[int], ledger_id: int) -> None:
    amount, owner, agent_cut, service, referral, self_balance = units
    bal = store.BalanceRow(owner + referral, self_balance, amount, 1)
    r = EarnResult(ledger_id, amount, owner, agent_cut, service, referral, bal)
    text = _earn_text("agl_0123456789ab", r)
    assert text == encode(_earn_json("agl_0123456789ab", r))
    assert json.loads(text, parse_float=Decimal)["ownerBalance"] == usdc(owner + referral)


def test_decode_json_reads_what_json_loads_reads() -> None:
    body = '{"a": 1.50, "b": [1, 2e3, "é\\u00e9", "\\ud83d\\ude00"], "c": null}'.encode()
    assert decode_json(body) == json.loads(body, parse_float=Decimal)


@pytest.mark.parametrize(
    "body",
    [
        b'{"a": NaN}',
        b'{"a": Infinity}',
        b"\xff\xfe{",
        b'{"a": 1',
        b"[1]",
        b'"x"',
        # RFC 8259: JSON exchanged between systems is UTF-8, without a byte order mark
        '{"a": 1.5}'.encode("utf-16"),
        '{"a": 1.5}'.encode("utf-16-le"),
        '{"a": 1.5}'.encode("utf-32"),
        '{"a": 1.5}'.encode("utf-8-sig"),
    ],
)
def test_decode_json_refusals(body: bytes) -> None:
    with pytest.raises(ApiError) as info:
        decode_json(body)
    assert (info.value.status, info.value.code) == (400, "invalid_json")


# ---- the caches of keys and agents ------------------------------------------------------------


def test_key_cache_never_keeps_unknown_keys_and_drops_changed_ones(api_run: Any) -> None:
    async def body(api: Api) -> None:
        key, wallet, _ = await api.new_agent()
        account = api.agent(wallet).account_id
        late = new_api_key()
        assert_error(await api.earn(late, wallet, 1), 401, "invalid_api_key", "Authorization")
        with transaction(api.db):  # as another process would: no generation bump here... but this is
            api.db.execute(  # the same process, so insert through the store like the API does
                "INSERT INTO api_keys (key_hash, account_id, created_at) VALUES (?, ?, 0)",
                (hash_api_key(late), account),
            )
        assert (await api.earn(late, wallet, 1)).status == 200  # a refusal was not cached
        # A revocation (a future feature): once it commits, clear_auth_caches() makes it bite at once...
        with transaction(api.db):
            api.db.execute("DELETE FROM api_keys WHERE key_hash = ?", (hash_api_key(late),))
        clear_auth_caches()
        assert_error(await api.earn(late, wallet, 1), 401, "invalid_api_key", "Authorization")
        # ...and so does any api_keys write of this process (the auth generation moves).
        assert (await api.earn(key, wallet, 1)).status == 200  # cached now
        with transaction(api.db):
            api.db.execute("DELETE FROM api_keys WHERE key_hash = ?", (hash_api_key(key),))
            store.insert_api_key(api.db, hash_api_key(new_api_key()), account, None, None, 0)
        assert_error(await api.earn(key, wallet, 1), 401, "invalid_api_key", "Authorization")

    api_run(body)


def test_cached_agents_are_still_checked_against_the_key(api_run: Any) -> None:
    async def body(api: Api) -> None:
        key, wallet, agent = await api.new_agent()
        other_key, other_wallet, _ = await api.new_agent()
        assert (await api.earn(key, wallet, 10)).status == 200  # the agent is cached from here on
        assert (await api.earn(key, wallet, 10)).status == 200
        assert_error(await api.earn(other_key, wallet, 10), 404, "agent_not_found", "agentId")
        agent_key = new_api_key()
        with transaction(api.db):
            store.insert_api_key(api.db, hash_api_key(agent_key), api.agent(wallet).account_id, agent["id"], None, 0)
        sibling_key, sibling, _ = await api.new_agent(key)
        assert (await api.earn(key, sibling, 10)).status == 200
        assert_error(await api.earn(agent_key, sibling, 10), 404, "agent_not_found", "agentId")
        assert (await api.earn(agent_key, wallet, 10)).status == 200
        assert other_wallet and sibling_key

    api_run(body)


def test_only_committed_agents_are_remembered(tmp_path: Path) -> None:
    db = connect(tmp_path / "a.db")
    with transaction(db):
        agent = wallets.register(
            db, account_id=None, new_key_hash="33" * 32, name="a", specialty="email", referral_code=None, now=0
        )
    caller = Caller("33" * 32, agent.account_id, None)
    fresh = FreshAgents()
    assert agent_for(db, caller, agent.wallet, fresh=fresh) == agent and fresh == [agent]
    with transaction(db):  # an auth row changes before the commit is known: nothing is remembered
        store.insert_api_key(db, "44" * 32, agent.account_id, None, None, 0)
    remember_agents(db, fresh)
    again = FreshAgents()
    agent_for(db, caller, agent.wallet, fresh=again)
    assert again == [agent]  # read from the database again
    remember_agents(db, again)
    cached = FreshAgents()
    assert agent_for(db, caller, agent.wallet, fresh=cached) == agent and cached == []  # from the cache
    db.close()
