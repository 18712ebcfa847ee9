"""The second slice of the wallet API over real HTTP against a real SQLite file: memory, brain,
network totals, compound, earn batches, run records, self-serve keys and the operator's
issue_key command. Every failure is checked for its status, its error shape and that nothing
was written."""

from __future__ import annotations

import asyncio
import os
import subprocess
import sys
from collections.abc import Callable, Iterator
from decimal import Decimal
from pathlib import Path
from typing import Any

import pytest
from aiohttp import web

from api.http import encode
from core import wallets
from core.keys import hash_api_key
from core.store import transaction
from core.store import wallets as store
from tests.integration.test_wallet_api import KEY_RE, Api, Reply, assert_error, run

ROOT = Path(__file__).resolve().parents[2]
MEM_TABLES = ("accounts", "api_keys", "wallet_agents", "ledger", "balances", "memories", "shared_brain")


@pytest.fixture()
def api_run(tmp_path: Path) -> Iterator[Callable[..., None]]:
    yield lambda body: run(tmp_path, body)


def counts(api: Api) -> dict[str, int]:
    return {t: store.count_rows(api.db, t) for t in MEM_TABLES}


async def remember(api: Api, key: str, wallet: str, k: Any, value: Any, **extra: Any) -> Reply:
    body = encode({"agentId": wallet, "key": k, "value": value})
    return await api.call("POST", "/api/agents/memory", body, key=key, **extra)


async def recall(api: Api, key: str | None, wallet: str, **params: str) -> Reply:
    return await api.call("GET", "/api/agents/memory", key=key, params={"agentId": wallet, **params})


async def brain_post(api: Api, key: str, wallet: str, **fields: Any) -> Reply:
    return await api.call("POST", "/api/agents/brain", encode({"agentId": wallet, **fields}), key=key)


# ---- memory ------------------------------------------------------------------------------------


def test_memory_upsert_read_and_balance_count(api_run: Any) -> None:
    async def body(api: Api) -> None:
        key, wallet, _ = await api.new_agent()
        value = {"a": [1, 2.50, None, True, "é"], "nested": {"x": "y"}}
        r = await remember(api, key, wallet, "notes/1", value)
        assert r.status == 200, r.body
        assert r.body["success"] is True and r.body["memory"]["key"] == "notes/1"
        assert r.body["memory"]["createdAt"] == "2027-01-15T08:00:00.000Z" == r.body["memory"]["updatedAt"]
        api.clock.now += 60
        r = await remember(api, key, wallet, "notes/1", "replaced")
        assert r.body["memory"]["createdAt"] == "2027-01-15T08:00:00.000Z"
        assert r.body["memory"]["updatedAt"] == "2027-01-15T08:01:00.000Z"
        for k, v in (("a key with spaces ~!", None), ("k" * 256, 7), ("num", Decimal("12.345"))):
            assert (await remember(api, key, wallet, k, v)).status == 200
        r = await recall(api, key, wallet)
        assert r.status == 200
        got = {m["key"]: m["value"] for m in r.body["memories"]}
        assert got == {"notes/1": "replaced", "a key with spaces ~!": None, "k" * 256: 7, "num": Decimal("12.345")}
        assert [m["key"] for m in r.body["memories"]] == sorted(got) and r.body["nextCursor"] is None
        assert b'"value":12.345' in r.raw  # numbers round-trip exactly, as numbers
        assert (await api.balance(key, wallet)).body["memoryEntries"] == 4
        # the same value is stored as the request gave it
        r = await remember(api, key, wallet, "obj", value)
        r = await recall(api, key, wallet, query="obj")
        assert r.body["memories"][0]["value"] == {"a": [1, Decimal("2.50"), None, True, "é"], "nested": {"x": "y"}}

    api_run(body)


@pytest.mark.parametrize(
    ("k", "value", "status", "code", "param"),
    [
        ("", 1, 400, "invalid_key", "key"),
        ("k" * 257, 1, 400, "invalid_key", "key"),
        ("line\nbreak", 1, 400, "invalid_key", "key"),
        ("tab\there", 1, 400, "invalid_key", "key"),
        ("caf\u00e9", 1, 400, "invalid_key", "key"),
        ("del\x7f", 1, 400, "invalid_string", "key"),  # the rule of every request string, before the key's
        (5, 1, 400, "invalid_field", "key"),
        ("brain:v1", {}, 400, "reserved_key", "key"),
        ("run:2027-01-15:general", {}, 400, "reserved_key", "key"),
        ("big", "x" * (16 * 1024 - 1), 413, "value_too_large", "value"),
        # numbers past +-(2^53 - 1) would be echoed as text other parsers read rounded or infinite
        ("n", 2**256, 400, "invalid_number", "value"),
        ("n", Decimal("1E+999999999"), 400, "invalid_number", "value"),
        ("n", {"deep": [1, {"x": -(2**53)}]}, 400, "invalid_number", "value"),
        ("n", Decimal("9007199254740991.5"), 400, "invalid_number", "value"),
    ],
)
def test_memory_write_refusals_write_nothing(
    api_run: Any, k: Any, value: Any, status: int, code: str, param: str
) -> None:
    async def body(api: Api) -> None:
        key, wallet, _ = await api.new_agent()
        before = counts(api)
        assert_error(await remember(api, key, wallet, k, value), status, code, param)
        assert counts(api) == before

    api_run(body)


def test_memory_value_limit_is_exactly_16_kib_of_compact_json(api_run: Any) -> None:
    async def body(api: Api) -> None:
        key, wallet, _ = await api.new_agent()
        assert (await remember(api, key, wallet, "fits", "x" * (16 * 1024 - 2))).status == 200  # + 2 quotes
        spaced = '{"agentId": "%s", "key": "sp", "value": [ 1 , 2 ]}' % wallet  # noqa: UP031
        assert (await api.call("POST", "/api/agents/memory", spaced, key=key)).status == 200
        r = await recall(api, key, wallet, query="sp")
        assert b'"value":[1,2]' in r.raw  # stored compact

    api_run(body)


def test_memory_body_and_auth_failures(api_run: Any) -> None:
    async def body(api: Api) -> None:
        key, wallet, _ = await api.new_agent()
        okey, owallet, _ = await api.new_agent()
        before = counts(api)
        r = await api.call("POST", "/api/agents/memory", {"agentId": wallet, "key": "k"}, key=key)
        assert_error(r, 400, "missing_field", "value")
        r = await api.call("POST", "/api/agents/memory", {"agentId": wallet, "key": "k", "value": 1, "x": 1}, key=key)
        assert_error(r, 400, "unknown_field", "x")
        assert_error(await api.call("POST", "/api/agents/memory", "[" * 100_000, key=key), 400, "invalid_json")
        r = await api.call("POST", "/api/agents/memory", {"agentId": wallet, "key": "k", "value": 1})
        assert_error(r, 401, "missing_api_key", "Authorization")
        assert_error(await remember(api, okey, wallet, "k", 1), 404, "agent_not_found", "agentId")
        assert_error(await recall(api, None, wallet), 401, "missing_api_key", "Authorization")
        assert_error(await recall(api, key, owallet), 404, "agent_not_found", "agentId")
        assert counts(api) == before

    api_run(body)


def test_memory_query_orders_by_key_and_paginates(api_run: Any) -> None:
    async def body(api: Api) -> None:
        key, wallet, _ = await api.new_agent()
        names = [f"task:{i:03d}" for i in range(7)] + ["Task:upper", "other", "my-task:x"]
        for n in names:
            assert (await remember(api, key, wallet, n, n)).status == 200
        r = await recall(api, key, wallet, query="task:")
        assert [m["key"] for m in r.body["memories"]] == ["my-task:x"] + [f"task:{i:03d}" for i in range(7)]
        assert [m["key"] for m in (await recall(api, key, wallet, query="Task")).body["memories"]] == ["Task:upper"]
        seen: list[str] = []
        cursor: str | None = None
        pages = 0
        while True:
            params = {"query": "task", "limit": "3"} | ({"cursor": cursor} if cursor else {})
            r = await recall(api, key, wallet, **params)
            assert r.status == 200 and len(r.body["memories"]) <= 3
            seen += [m["key"] for m in r.body["memories"]]
            pages += 1
            cursor = r.body["nextCursor"]
            if cursor is None:
                break
            assert cursor == seen[-1]
        assert seen == ["my-task:x"] + [f"task:{i:03d}" for i in range(7)] and pages == 3
        assert (await recall(api, key, wallet, query="nothing")).body == {"memories": [], "nextCursor": None}
        for bad in ("0", "201", "x", "1.5"):
            assert_error(await recall(api, key, wallet, limit=bad), 400, "invalid_field", "limit")
        assert_error(await recall(api, key, wallet, cursor=""), 400, "invalid_field", "cursor")
        assert_error(await recall(api, key, wallet, page="2"), 400, "unknown_field", "page")
        assert len((await recall(api, key, wallet, limit="200")).body["memories"]) == 10

    api_run(body)


def test_memory_full_at_ten_thousand_own_keys(api_run: Any) -> None:
    async def body(api: Api) -> None:
        key, wallet, _ = await api.new_agent()
        uuid = api.agent(wallet).uuid
        with transaction(api.db):
            for i in range(wallets.MAX_KEYS_PER_AGENT - 1):
                store.put_memory(api.db, uuid, f"k{i:05d}", "1", 0)
        assert (await remember(api, key, wallet, "last", 1)).status == 200
        before = counts(api)
        assert_error(await remember(api, key, wallet, "one-more", 1), 409, "memory_full", "key")
        assert counts(api) == before
        assert (await remember(api, key, wallet, "k00000", 2)).status == 200  # updating still works
        # the service's keys are not counted against the limit
        r = await api.call("POST", "/api/agents/runs", {"agentId": wallet, "success": True}, key=key)
        assert r.status == 200
        assert (await brain_post(api, key, wallet, action="listed", niche="email", price=1)).status == 200
        assert (await api.balance(key, wallet)).body["memoryEntries"] == wallets.MAX_KEYS_PER_AGENT + 2

    api_run(body)


# ---- brain -------------------------------------------------------------------------------------


def test_brain_starts_empty_with_uniform_nonzero_weights(api_run: Any) -> None:
    async def body(api: Api) -> None:
        key, wallet, _ = await api.new_agent()
        r = await api.call("GET", "/api/agents/brain", key=key, params={"agentId": wallet})
        assert r.status == 200
        b = r.body["brain"]
        assert b["niches"] == {} and b["prices"] == {} and b["topProducts"] == []
        assert (b["totalListed"], b["totalSold"], b["totalRevenue"], b["winRate"]) == (0, 0, 0, 0)
        assert b["lastUpdated"] is None and isinstance(b["strategyNote"], str)
        w = r.body["weights"]
        assert set(w) == set(wallets.SPECIALTIES)
        assert all(v > 0 for v in w.values()) and abs(sum(w.values()) - 1) < Decimal("0.0001")
        assert len(set(w.values())) == 1

    api_run(body)


def test_brain_updates_agent_and_shared_brain(api_run: Any) -> None:
    async def body(api: Api) -> None:
        key, wallet, _ = await api.new_agent()
        okey, owallet, _ = await api.new_agent()  # another account: the network
        for _ in range(4):
            assert (await brain_post(api, key, wallet, action="listed", niche="email", price=10)).status == 200
        r = await brain_post(api, key, wallet, action="sold", niche="email", price=10, revenue=Decimal("9.5"))
        r = await brain_post(api, key, wallet, action="sold", niche="email", price=Decimal("20.5"))
        r = await brain_post(api, key, wallet, action="listed", niche="my_niche_2", price=0)
        assert r.status == 200 and r.body["success"] is True
        b = r.body["brain"]
        assert b["niches"]["email"] == {"listed": 4, "sold": 2, "revenue": Decimal("30"), "winRate": Decimal("0.5")}
        assert b["niches"]["my_niche_2"] == {"listed": 1, "sold": 0, "revenue": 0, "winRate": 0}
        # prices: per price (the key is its USDC text), as the spec says
        assert b["prices"] == {
            "0": {"listed": 1, "sold": 0, "revenue": 0},
            "10": {"listed": 4, "sold": 1, "revenue": Decimal("9.5")},
            "20.5": {"listed": 0, "sold": 1, "revenue": Decimal("20.5")},
        }
        assert b["topProducts"] == []  # only named products
        assert (b["totalListed"], b["totalSold"], b["totalRevenue"]) == (5, 2, 30)
        assert b["winRate"] == Decimal("0.4") and b["lastUpdated"] == "2027-01-15T08:00:00.000Z"
        # the other agent's listings are part of the network
        for _ in range(3):
            await brain_post(api, okey, owallet, action="listed", niche="podcast", price=5)
        r = await api.call("GET", "/api/agents/brain", key=key, params={"agentId": wallet})
        w = r.body["weights"]
        assert "my_niche_2" in w and all(v > 0 for v in w.values())
        # email: (2+2+1)/(4+4+2) = .5 > unseen .5? equal; podcast (0+1)/(3+2) = .2 < unseen; my_niche_2 1/4
        assert w["email"] == w["youtube"] > w["my_niche_2"] > w["podcast"]
        assert "email" in r.body["brain"]["strategyNote"]
        # one more sale in email lifts it above every unseen niche
        await brain_post(api, key, wallet, action="sold", niche="email", price=1)
        w = (await api.call("GET", "/api/agents/brain", key=key, params={"agentId": wallet})).body["weights"]
        assert max(w, key=w.__getitem__) == "email"
        other = (await api.call("GET", "/api/agents/brain", key=okey, params={"agentId": owallet})).body
        assert other["brain"]["niches"] == {"podcast": {"listed": 3, "sold": 0, "revenue": 0, "winRate": 0}}
        shared = store.shared_brain(api.db)
        assert shared["email"] == store.NicheStats(4, 3, 31_000_000, 31_500_000)
        assert shared["podcast"].listed == 3
        # stored as the agent's memory brain:v1, readable but not writable by the agent
        mem = (await recall(api, key, wallet, query="brain:")).body["memories"]
        assert [m["key"] for m in mem] == ["brain:v1"] and mem[0]["value"]["niches"]["email"]["sold"] == 3
        assert_error(await remember(api, key, wallet, "brain:v1", {}), 400, "reserved_key", "key")

    api_run(body)


def test_maximal_sales_of_many_agents_keep_the_network_brain_exact(api_run: Any) -> None:
    """The network's revenue of a niche passes int64 micro-USDC: every sale is still recorded and the
    shared brain holds the exact totals (PostgreSQL answered 500, bigint out of range; SQLite kept a
    rounded REAL)."""

    async def body(api: Api) -> None:
        key, first, _ = await api.new_agent()
        _, second, _ = await api.new_agent(key)
        big = Decimal("999999999999.999999")  # USDC: near the largest amount an API call takes (10^12)
        for wallet in [first] * 5 + [second] * 5:
            r = await brain_post(api, key, wallet, action="sold", niche="email", price=big, revenue=big)
            assert r.status == 200, r.body
        units = 10 * (10**18 - 1)  # no double holds it: a rounded total would show
        assert store.shared_brain(api.db)["email"] == store.NicheStats(0, 10, units, units)

    api_run(body)


def test_brain_top_products_are_named_products_by_sales(api_run: Any) -> None:
    """topProducts holds {name, niche, price, sold} of the products named in updates, most sold first;
    a product is its name within its niche and shows its latest price."""

    async def body(api: Api) -> None:
        key, wallet, _ = await api.new_agent()
        posts = [
            ("listed", "ebooks", "Guide", 10),
            ("sold", "ebooks", "Guide", 12),
            ("sold", "ebooks", "Guide", 12),
            ("sold", "prompt_packs", "Guide", 5),  # the same name in another niche: another product
            ("sold", "ebooks", "Atlas", 30),
            ("listed", "ebooks", "Never sold", 1),
        ]
        for action, niche, name, price in posts:
            r = await brain_post(api, key, wallet, action=action, niche=niche, price=price, name=name)
            assert r.status == 200, r.body
        b = r.body["brain"]
        assert b["topProducts"] == [
            {"name": "Guide", "niche": "ebooks", "price": 12, "sold": 2},
            {"name": "Atlas", "niche": "ebooks", "price": 30, "sold": 1},
            {"name": "Guide", "niche": "prompt_packs", "price": 5, "sold": 1},
        ]
        assert b["prices"]["12"] == {"listed": 0, "sold": 2, "revenue": 24}
        got = await api.call("GET", "/api/agents/brain", key=key, params={"agentId": wallet})
        assert got.body["brain"] == b
        for bad in ("", "x" * 101, "nul\x00"):
            r = await brain_post(api, key, wallet, action="sold", niche="ebooks", price=1, name=bad)
            assert r.status == 400 and r.body["param"] == "name", r.body

    api_run(body)


@pytest.mark.parametrize(
    ("fields", "code", "param"),
    [
        ({"action": "bought", "niche": "email", "price": 1}, "invalid_field", "action"),
        ({"action": "listed", "niche": "Email", "price": 1}, "invalid_field", "niche"),
        ({"action": "listed", "niche": "x" * 41, "price": 1}, "invalid_field", "niche"),
        ({"action": "listed", "niche": "", "price": 1}, "invalid_field", "niche"),
        ({"action": "listed", "niche": "email", "price": -1}, "invalid_amount", "price"),
        ({"action": "listed", "niche": "email", "price": "1"}, "invalid_amount", "price"),
        ({"action": "listed", "niche": "email", "price": Decimal("0.0000001")}, "invalid_amount", "price"),
        ({"action": "sold", "niche": "email", "price": 1, "revenue": -2}, "invalid_amount", "revenue"),
        ({"action": "listed", "niche": "email", "price": 1, "revenue": 1}, "invalid_field", "revenue"),
        ({"action": "listed", "niche": "email"}, "missing_field", "price"),
        ({"action": "listed", "niche": "email", "price": 1, "extra": 1}, "unknown_field", "extra"),
    ],
)
def test_brain_refusals_write_nothing(api_run: Any, fields: dict[str, Any], code: str, param: str) -> None:
    async def body(api: Api) -> None:
        key, wallet, _ = await api.new_agent()
        before = counts(api)
        text = encode({"agentId": wallet, **fields})
        assert_error(await api.call("POST", "/api/agents/brain", text, key=key), 400, code, param)
        assert counts(api) == before

    api_run(body)


def test_brain_auth_failures(api_run: Any) -> None:
    async def body(api: Api) -> None:
        key, wallet, _ = await api.new_agent()
        okey, _ow, _ = await api.new_agent()
        before = counts(api)
        good = {"agentId": wallet, "action": "listed", "niche": "email", "price": 1}
        assert_error(await api.call("POST", "/api/agents/brain", good), 401, "missing_api_key", "Authorization")
        assert_error(await api.call("POST", "/api/agents/brain", good, key=okey), 404, "agent_not_found", "agentId")
        r = await api.call("GET", "/api/agents/brain", key=okey, params={"agentId": wallet})
        assert_error(r, 404, "agent_not_found", "agentId")
        assert_error(await api.call("GET", "/api/agents/brain", key=key), 400, "missing_field", "agentId")
        assert counts(api) == before

    api_run(body)


# ---- network -----------------------------------------------------------------------------------


def test_network_totals_are_public(api_run: Any) -> None:
    async def body(api: Api) -> None:
        r = await api.call("GET", "/api/agents/network")
        assert r.status == 200 and r.body == {"totalAgents": 0, "totalEarned": 0, "totalTolls": 0}
        key, wallet, ref = await api.new_agent()
        k2, w2, _ = await api.new_agent(referralCode=ref["referral_code"])
        await api.earn(key, wallet, 100)
        await api.earn(k2, w2, "1000.000001")
        r = await api.call("GET", "/api/agents/network", headers={"Authorization": "Bearer nonsense"})
        assert r.status == 200  # public: no key needed (a header is not even read)
        # referral credits are part of the second earning, not added again
        assert r.body == {"totalAgents": 2, "totalEarned": Decimal("1100.000001"), "totalTolls": Decimal("22.000001")}
        r = await api.call("POST", "/api/agents/network", {})
        assert_error(r, 405, "method_not_allowed")

    api_run(body)


# ---- compound ----------------------------------------------------------------------------------


async def compound(api: Api, key: str | None, wallet: str, idem: str | None = None, **fields: Any) -> Reply:
    return await api.call("POST", "/api/agents/compound", {"agentId": wallet, **fields}, key=key, idem=idem)


def test_compound_moves_a_share_into_reinvested(api_run: Any) -> None:
    async def body(api: Api) -> None:
        key, wallet, _ = await api.new_agent()
        await api.earn(key, wallet, 1000)  # owner 970, self 10
        r = await compound(api, key, wallet)
        assert r.status == 200, r.body
        assert r.body["success"] is True and r.body["moved"] == 196
        assert (r.body["balance"], r.body["reinvested"]) == (784, 196)
        assert (r.body["ownerBalance"], r.body["agentSelfBalance"]) == (776, 8)
        r = await compound(api, key, wallet, reinvestPercent=100, idem="c1")
        assert (r.body["moved"], r.body["balance"], r.body["reinvested"]) == (784, 0, 980)
        again = await compound(api, key, wallet, reinvestPercent=100, idem="c1")
        assert again.raw == r.raw and again.headers["Idempotent-Replayed"] == "true"
        bal = (await api.balance(key, wallet)).body
        assert (bal["balance"], bal["reinvested"], bal["totalEarned"], bal["totalTransactions"]) == (0, 980, 1000, 3)
        uuid = api.agent(wallet).uuid
        b = store.get_balance(api.db, uuid)
        assert store.ledger_totals(api.db, uuid) == (b.balance, b.owner_balance, b.self_balance)
        rows = api.db.execute("SELECT kind, amount, reinvested_delta FROM ledger WHERE kind = 'compound'").fetchall()
        assert rows == [("compound", -196_000_000, 196_000_000), ("compound", -784_000_000, 784_000_000)]
        assert sum(r[2] for r in rows) == b.reinvested
        # nothing left: success, moved 0, no ledger row
        before = counts(api)
        r = await compound(api, key, wallet, reinvestPercent=50)
        assert r.status == 200 and r.body["moved"] == 0 and r.body["transactionId"] is None
        assert counts(api) == before
        # reinvested funds are not spendable
        assert_error(await api.spend(key, wallet, 1), 422, "insufficient_balance", "amount")

    api_run(body)


@pytest.mark.parametrize("percent", [0, 101, -5, "20", True, Decimal("20.5"), None])
def test_compound_rejects_bad_percent(api_run: Any, percent: Any) -> None:
    async def body(api: Api) -> None:
        key, wallet, _ = await api.new_agent()
        await api.earn(key, wallet, 10)
        before = counts(api)
        text = encode({"agentId": wallet, "reinvestPercent": percent})
        assert_error(
            await api.call("POST", "/api/agents/compound", text, key=key), 400, "invalid_field", "reinvestPercent"
        )
        assert counts(api) == before

    api_run(body)


def test_compound_auth_failures(api_run: Any) -> None:
    async def body(api: Api) -> None:
        key, wallet, _ = await api.new_agent()
        okey, _ow, _ = await api.new_agent()
        await api.earn(key, wallet, 10)
        before = counts(api)
        assert_error(await compound(api, None, wallet), 401, "missing_api_key", "Authorization")
        assert_error(await compound(api, okey, wallet), 404, "agent_not_found", "agentId")
        assert_error(await compound(api, key, wallet, x=1), 400, "unknown_field", "x")
        assert counts(api) == before
        r1 = await compound(api, key, wallet, idem="k", reinvestPercent=10)
        assert_error(
            await compound(api, key, wallet, idem="k", reinvestPercent=11),
            422,
            "idempotency_conflict",
            "Idempotency-Key",
        )
        assert r1.status == 200

    api_run(body)


# ---- earn batch --------------------------------------------------------------------------------


async def batch(api: Api, key: str | None, payments: Any, idem: str | None = None) -> Reply:
    text = encode({"payments": payments})
    return await api.call("POST", "/api/agents/earn/batch", text, key=key, idem=idem)


def test_earn_batch_credits_every_item_in_order(api_run: Any) -> None:
    async def body(api: Api) -> None:
        key, w1, ref = await api.new_agent()
        _k, w2, _ = await api.new_agent(key, referralCode=ref["referral_code"])
        payments = [
            {"agentId": w1, "amount": 100, "source": "a"},
            {"agentId": w2, "amount": 1000, "source": "b"},
            {"agentId": w1, "amount": Decimal("0.5"), "source": "c"},
        ]
        r = await batch(api, key, payments, idem="b1")
        assert r.status == 200, r.body
        assert r.body["success"] is True and r.body["count"] == 3 and len(r.body["results"]) == 3
        first, second, third = r.body["results"]
        assert (first["net"], first["balance"], first["serviceCut"]) == (98, 98, 2)
        assert (second["referralCut"], second["net"], second["balance"]) == (5, 975, 975)
        assert third["balance"] == Decimal("103.49")  # 98 + 5 referral + 0.49
        assert set(first) >= {"ownerCut", "agentCut", "toll", "ownerBalance", "agentSelfBalance", "message"}
        again = await batch(api, key, payments, idem="b1")
        assert again.raw == r.raw and again.headers["Idempotent-Replayed"] == "true"
        assert (await api.balance(key, w1)).body["balance"] == Decimal("103.49")
        assert store.count_rows(api.db, "ledger") == 4  # three earnings and one referral credit

    api_run(body)


def test_earn_batch_is_all_or_none(api_run: Any) -> None:
    async def body(api: Api) -> None:
        key, w1, _ = await api.new_agent()
        okey, ow, _ = await api.new_agent()
        good = {"agentId": w1, "amount": 1, "source": "s"}
        await api.earn(key, w1, 1)
        before = counts(api)
        cases: list[tuple[Any, int, str, str | None]] = [
            (
                [good, good, good, {"agentId": w1, "amount": -1, "source": "s"}],
                400,
                "invalid_amount",
                "payments[3].amount",
            ),
            (
                [good, {"agentId": w1, "amount": Decimal("0.0000001"), "source": "s"}],
                400,
                "invalid_amount",
                "payments[1].amount",
            ),
            ([good, {"agentId": "bad", "amount": 1, "source": "s"}], 400, "invalid_field", "payments[1].agentId"),
            ([good, {"agentId": w1, "amount": 1, "source": "s", "x": 1}], 400, "unknown_field", "payments[1].x"),
            ([good, {"amount": 1, "source": "s"}], 400, "missing_field", "payments[1].agentId"),
            ([good, {"agentId": ow, "amount": 1, "source": "s"}], 404, "agent_not_found", "payments[1].agentId"),
            ([], 400, "invalid_field", "payments"),
            ([good] * 101, 400, "invalid_field", "payments"),
            ("nope", 400, "invalid_field", "payments"),
        ]
        for payments, status, code, param in cases:
            assert_error(await batch(api, key, payments), status, code, param)
            assert counts(api) == before, (payments, code)
        assert_error(await batch(api, None, [good]), 401, "missing_api_key", "Authorization")
        # an item failing in the ledger (total limit) rolls back the items before it
        uuid = api.agent(w1).uuid
        api.db.execute(
            "UPDATE balances SET total_earned = ? WHERE agent_uuid = ?", (wallets.MAX_TOTAL_UNITS - 5_000_000, uuid)
        )
        r = await batch(api, key, [good, good, {"agentId": w1, "amount": 4, "source": "s"}])
        assert_error(r, 422, "balance_limit", "payments[2].amount")
        assert counts(api) == before
        assert store.get_balance(api.db, uuid).balance == 980_000
        assert (await batch(api, key, [good] * 100)).status == 422  # 100 items are allowed (then the limit)
        assert (await api.balance(okey, ow)).body["balance"] == 0

    api_run(body)


# ---- runs --------------------------------------------------------------------------------------


async def run_post(api: Api, key: str | None, wallet: str, **fields: Any) -> Reply:
    return await api.call("POST", "/api/agents/runs", {"agentId": wallet, **fields}, key=key)


def test_runs_are_counted_per_day_and_niche(api_run: Any) -> None:
    async def body(api: Api) -> None:
        key, wallet, _ = await api.new_agent()
        r = await run_post(api, key, wallet, success=True)
        assert r.status == 200, r.body
        assert r.body == {"success": True, "key": "run:2027-01-15:general", "runs": {"success": 1, "failure": 0}}
        await run_post(api, key, wallet, success=False)
        r = await run_post(api, key, wallet, success=True)
        assert r.body["runs"] == {"success": 2, "failure": 1}
        r = await run_post(api, key, wallet, success=False, niche="email")
        assert r.body["key"] == "run:2027-01-15:email" and r.body["runs"] == {"success": 0, "failure": 1}
        api.clock.now += 16 * 3600  # past midnight UTC
        r = await run_post(api, key, wallet, success=True)
        assert r.body["key"] == "run:2027-01-16:general" and r.body["runs"] == {"success": 1, "failure": 0}
        mem = (await recall(api, key, wallet, query="run:")).body["memories"]
        assert {m["key"]: m["value"] for m in mem} == {
            "run:2027-01-15:email": {"success": 0, "failure": 1},
            "run:2027-01-15:general": {"success": 2, "failure": 1},
            "run:2027-01-16:general": {"success": 1, "failure": 0},
        }
        assert_error(await remember(api, key, wallet, "run:2027-01-16:general", {}), 400, "reserved_key", "key")

    api_run(body)


def test_run_refusals_write_nothing(api_run: Any) -> None:
    async def body(api: Api) -> None:
        key, wallet, _ = await api.new_agent()
        okey, _ow, _ = await api.new_agent()
        before = counts(api)
        assert_error(await run_post(api, key, wallet), 400, "missing_field", "success")
        assert_error(await run_post(api, key, wallet, success="yes"), 400, "invalid_field", "success")
        assert_error(await run_post(api, key, wallet, success=1), 400, "invalid_field", "success")
        assert_error(await run_post(api, key, wallet, success=True, niche="Bad!"), 400, "invalid_field", "niche")
        assert_error(await run_post(api, key, wallet, success=True, x=1), 400, "unknown_field", "x")
        assert_error(await run_post(api, None, wallet, success=True), 401, "missing_api_key", "Authorization")
        assert_error(await run_post(api, okey, wallet, success=True), 404, "agent_not_found", "agentId")
        assert counts(api) == before

    api_run(body)


def test_concurrent_runs_never_lose_a_count(api_run: Any) -> None:
    async def body(api: Api) -> None:
        key, wallet, _ = await api.new_agent()

        async def interleave(_request: web.Request) -> None:
            await asyncio.sleep(0)

        api.hooks.append(interleave)
        replies = await asyncio.gather(*(run_post(api, key, wallet, success=i % 3 != 0) for i in range(90)))
        assert all(r.status == 200 for r in replies)
        final = (await recall(api, key, wallet, query="run:")).body["memories"][0]["value"]
        assert final == {"success": 60, "failure": 30}
        assert sorted(r.body["runs"]["success"] + r.body["runs"]["failure"] for r in replies) == list(range(1, 91))

    api_run(body)


# ---- keys --------------------------------------------------------------------------------------


def test_self_serve_key_once_per_email(api_run: Any) -> None:
    async def body(api: Api) -> None:
        r = await api.call("POST", "/api/keys", {"email": "Ada@Example.com"})
        assert r.status == 201, r.body
        assert r.body["success"] is True and KEY_RE.fullmatch(r.body["api_key"])
        assert r.body["email"] == "ada@example.com"
        key = r.body["api_key"]
        reg = await api.register(key, name="from-email")
        assert reg.status == 201 and "api_key" not in reg.body  # the key is an account key
        assert api.agent(reg.body["agent"]["wallet"]).account_id == r.body["accountId"]
        before = counts(api)
        for email in ("Ada@Example.com", "ada@example.com", "ADA@EXAMPLE.COM"):
            again = await api.call("POST", "/api/keys", {"email": email})
            assert_error(again, 409, "email_has_key", "email")
            assert key not in again.raw.decode()
        assert counts(api) == before

    api_run(body)


@pytest.mark.parametrize(
    ("payload", "code", "param"),
    [
        ({"email": "not-an-email"}, "invalid_email", "email"),
        ({"email": "a@b"}, "invalid_email", "email"),
        ({"email": "a b@example.com"}, "invalid_email", "email"),
        ({"email": "a@-example.com"}, "invalid_email", "email"),
        ({"email": "x" * 250 + "@example.com"}, "invalid_field", "email"),
        ({"email": 5}, "invalid_field", "email"),
        ({}, "missing_field", "email"),
        ({"email": "a@example.com", "name": "x"}, "unknown_field", "name"),
    ],
)
def test_self_serve_key_refusals_write_nothing(api_run: Any, payload: Any, code: str, param: str) -> None:
    async def body(api: Api) -> None:
        before = counts(api)
        assert_error(await api.call("POST", "/api/keys", payload), 400, code, param)
        assert counts(api) == before

    api_run(body)


def test_self_serve_key_refuses_idempotency_key(api_run: Any) -> None:
    async def body(api: Api) -> None:
        r = await api.call("POST", "/api/keys", {"email": "a@example.com"}, idem="once")
        assert_error(r, 422, "idempotency_unsupported", "Idempotency-Key")
        assert counts(api)["api_keys"] == 0

    api_run(body)


# ---- operator command: scripts.issue_key -------------------------------------------------------


def _issue(db: Path, *args: str) -> subprocess.CompletedProcess[str]:
    env = {k: v for k, v in os.environ.items() if not k.startswith("AGENTLEDGER_")}
    return subprocess.run(
        [sys.executable, "-m", "scripts.issue_key", *args, "--db", str(db)],
        cwd=ROOT,
        env=env,
        capture_output=True,
        text=True,
        timeout=60,
        check=False,
    )


def test_issue_key_command_scopes_to_account_or_agent(api_run: Any, tmp_path: Path) -> None:
    db = tmp_path / "wallets.db"

    async def body(api: Api) -> None:
        key, w1, a1 = await api.new_agent()
        _k, w2, _ = await api.new_agent(key)
        account = api.agent(w1).account_id
        api.db.execute("PRAGMA wal_checkpoint(TRUNCATE)")
        done = await asyncio.to_thread(_issue, db, "--agent", a1["id"])
        assert done.returncode == 0, done.stderr
        agent_key = done.stdout.strip()
        assert KEY_RE.fullmatch(agent_key) and a1["id"] in done.stderr and agent_key not in done.stderr
        assert (await api.balance(agent_key, w1)).status == 200
        assert_error(await api.balance(agent_key, w2), 404, "agent_not_found", "agentId")
        assert_error(await api.register(agent_key), 403, "account_key_required", "Authorization")
        done = await asyncio.to_thread(_issue, db, "--account", account)
        assert done.returncode == 0, done.stderr
        account_key = done.stdout.strip()
        assert KEY_RE.fullmatch(account_key) and account_key != agent_key
        assert (await api.balance(account_key, w2)).status == 200
        assert (await api.register(account_key)).status == 201
        done = await asyncio.to_thread(_issue, db, "--account", account, "--mcp-toolsets", "hire, wallet")
        assert done.returncode == 0, done.stderr
        row = api.db.execute(
            "SELECT mcp_toolsets FROM api_keys WHERE key_hash = ?", (hash_api_key(done.stdout.strip()),)
        )
        assert row.fetchall() == [("hire,wallet",)]  # as the key's MCP sessions read it (api.mcp.toolsets)
        before = counts(api)
        for args in (("--agent", "no-such-agent"), ("--account", "no-such-account")):
            done = await asyncio.to_thread(_issue, db, *args)
            assert done.returncode == 2 and done.stdout == "" and "no " in done.stderr
        assert counts(api) == before
        done = await asyncio.to_thread(_issue, db)  # a scope is required
        assert done.returncode == 2 and done.stdout == ""
        done = await asyncio.to_thread(_issue, db, "--agent", a1["id"], "--account", account)
        assert done.returncode == 2 and done.stdout == ""
        done = await asyncio.to_thread(_issue, db, "--account", account, "--mcp-toolsets", "wallet,bank")
        assert done.returncode == 2 and done.stdout == "" and "unknown toolset 'bank'" in done.stderr
        done = await asyncio.to_thread(_issue, tmp_path / "missing.db", "--account", account)
        assert done.returncode == 2 and not (tmp_path / "missing.db").exists()
        assert counts(api) == before

    api_run(body)


def test_memory_numbers_within_the_safe_range_read_back_as_written(api_run: Any) -> None:
    """Memory values are any JSON whose numbers lie within +-(2^53 - 1): stored and echoed as given
    (1E+999999999 and 2^256 used to be echoed verbatim)."""

    async def body(api: Api) -> None:
        key, wallet, _ = await api.new_agent()
        value = {"max": 2**53 - 1, "min": -(2**53 - 1), "small": Decimal("1E-30"), "pi": Decimal("3.14159")}
        r = await remember(api, key, wallet, "nums", value)
        assert r.status == 200, r.body
        assert b'"small":1E-30' in r.raw and b'"max":9007199254740991' in r.raw
        got = (await recall(api, key, wallet, query="nums")).body["memories"][0]["value"]
        assert got == value

    api_run(body)


def test_earn_needs_its_source(api_run: Any) -> None:
    """`source` is required, as the spec says; nothing is written without it."""

    async def body(api: Api) -> None:
        key, wallet, _ = await api.new_agent()
        before = counts(api)
        for raw, code in (
            (f'{{"agentId":"{wallet}","amount":5}}', "missing_field"),
            (f'{{"agentId":"{wallet}","amount":5,"source":""}}', "invalid_field"),
            (f'{{"agentId":"{wallet}","amount":5,"source":null}}', "invalid_field"),
        ):
            assert_error(await api.call("POST", "/api/agents/earn", raw, key=key), 400, code, "source")
        r = await batch(api, key, [{"agentId": wallet, "amount": 1}])
        assert_error(r, 400, "missing_field", "payments[0].source")
        assert counts(api) == before

    api_run(body)
