"""The rules every request obeys, once for every route, over real HTTP
against the real app (api.app.create_app, a real SQLite file, served by api.app.make_runner):

- every string of a request is text before anything is written: a lone surrogate, a NUL or another
  control character is a 400, and no request can fail another's group commit (1,280 concurrent
  earns of one account, hostile ones among them: every clean one credited exactly once);
- a JSON object naming a key twice is 400 duplicate_key on every route that takes a body;
- a body must be application/json (charset utf-8 or none) or a form the route names: 415;
- what aiohttp's HTTP parser refuses (a request line or header too long, a NUL in a header) is
  answered in the error shape, logged in one line, never echoed;
- a 405 names the allowed methods in Allow."""

from __future__ import annotations

import asyncio
import json
import logging
import random
from collections.abc import AsyncIterator
from contextlib import asynccontextmanager
from decimal import Decimal
from pathlib import Path
from typing import Any

import aiohttp
import pytest
from aiohttp import web

from api.app import create_app, make_runner
from api.operation_table import OPERATIONS
from core.deployments import Deployment
from core.money import split
from core.store import connect
from core.store import wallets as store
from tests.integration.http_kit import Client, Reply

DEPLOYMENT = Deployment(
    chain_id=31337, network="anvil", deploy_block=0, deployer="0x" + "0" * 40, usdc="0x" + "1" * 40,
    mock_usdc=True, contracts={},
)  # fmt: skip
SHAPE = {"type", "code", "message", "param"}


@asynccontextmanager
async def serve(tmp_path: Path) -> AsyncIterator[tuple[Client, int, Any]]:
    """(client, port, reading db) of the whole app over a fresh file, as the runtime serves it."""
    db = connect(tmp_path / "rules.db", durable=True)
    app = create_app(DEPLOYMENT, "http://127.0.0.1:9", db, sweep_interval=None)
    runner = make_runner(app)
    await runner.setup()
    site = web.TCPSite(runner, "127.0.0.1", 0)
    await site.start()
    port = runner.addresses[0][1]
    try:
        async with aiohttp.ClientSession(connector=aiohttp.TCPConnector(limit=0)) as session:
            yield Client(session, f"http://127.0.0.1:{port}"), port, db
    finally:
        await runner.cleanup()
        db.close()


async def register(c: Client) -> tuple[str, str, str]:
    r = await c.call("POST", "/api/agents/register", {"name": "a", "specialty": "content_seo"})
    assert r.status == 201, r.body
    return r.body["api_key"], r.body["agent"]["wallet"], r.body["agent"]["id"]


def error(r: Reply, status: int, code: str) -> None:
    assert r.status == status, (r.status, r.body)
    assert set(r.body) == SHAPE and r.body["code"] == code, r.body


# ---- text before any write; no request fails another's group -------------------------------------

#: Earn bodies a hostile caller sends (the wallet is filled in); each must be refused before any
#: write with the code beside it. The first used to write the balance, fail to
#: encode in the ledger insert and roll back its whole group.
HOSTILE: list[tuple[bytes, str]] = [
    (b'{"agentId":"%s","amount":1,"source":"\\ud800"}', "invalid_string"),
    (b'{"agentId":"%s","amount":1,"source":"a\\udfffb"}', "invalid_string"),
    (b'{"agentId":"%s","amount":1,"source":"\xed\xa0\x80"}', "invalid_json"),  # a surrogate as raw UTF-8 bytes
    (b'{"agentId":"%s","amount":1,"source":"nul\\u0000"}', "invalid_string"),
    (b'{"agentId":"%s","amount":1,"source":"esc\\u001b[2J"}', "invalid_string"),
    (b'{"agentId":"%s","amount":1,"source":"c1\xc2\x85"}', "invalid_string"),
    (b'{"agentId":"%s","amount":1,"source":"bs\\b"}', "invalid_string"),
    (b'{"agentId":"%s","amount":1,"source":"x","\\ud800":1}', "invalid_string"),
    (b'{"agentId":"%s","amount":1,"amount":1000000,"source":"dup"}', "duplicate_key"),
    (b'\xef\xbb\xbf{"agentId":"%s","amount":1,"source":"bom"}', "invalid_json"),
]


def test_hostile_earns_never_fail_other_requests(tmp_path: Path) -> None:
    clean_n, hostile_n = 1_200, 80
    amounts = [Decimal(random.Random(i).randint(1, 10**6)) / 100 for i in range(clean_n)]

    async def main() -> None:
        async with serve(tmp_path) as (c, _port, db):
            key, wallet, agent_uuid = await register(c)
            other_key, other_wallet, _ = await register(c)  # another tenant's hostile earns
            jobs: list[tuple[str, Any, str | None]] = [("clean", a, None) for a in amounts]
            for i in range(hostile_n):
                raw, code = HOSTILE[i % len(HOSTILE)]
                jobs.append(("hostile", raw.replace(b"%s", other_wallet.encode()), code))
            random.Random(7).shuffle(jobs)

            async def one(kind: str, payload: Any, code: str | None) -> tuple[str, Reply, str | None]:
                if kind == "clean":
                    body = '{"agentId":"%s","amount":%s,"source":"shop"}' % (wallet, payload)  # noqa: UP031
                    return kind, await c.call("POST", "/api/agents/earn", body, key=key), code
                return kind, await c.call("POST", "/api/agents/earn", payload, key=other_key), code

            replies = await asyncio.gather(*(one(*j) for j in jobs))
            for kind, r, code in replies:
                if kind == "clean":
                    assert r.status == 200, r.body
                else:
                    assert code is not None
                    error(r, 400, code)
            ledger = db.execute("SELECT gross FROM ledger WHERE agent_uuid = ?", (agent_uuid,)).fetchall()
            assert sorted(g for (g,) in ledger) == sorted(int(a * 10**6) for a in amounts)  # each exactly once
            bal = store.get_balance(db, agent_uuid)
            assert bal.balance == sum(split(int(a * 10**6), False).net for a in amounts)
            other = store.agent_by_wallet(db, other_wallet)
            assert other is not None and store.get_balance(db, other.uuid).tx_count == 0  # nothing hostile written

    asyncio.run(main())


def test_every_string_of_every_route_is_text(tmp_path: Path) -> None:
    """Path segments and query values too: a NUL or a lone surrogate is a 400 before any handler."""

    async def main() -> None:
        async with serve(tmp_path) as (c, _port, _db):
            key, wallet, _ = await register(c)
            r = await c.call("GET", "/api/agents/balance", key=key, params={"agentId": wallet + "\x00"})
            error(r, 400, "invalid_string")
            r = await c.call("GET", "/api/agents/memory", key=key, params={"agentId": wallet, "query": "\x07"})
            error(r, 400, "invalid_string")
            r = await c.call("GET", "/api/acp/orders/ord%00x")
            error(r, 400, "invalid_string")
            for body in ('{"name":"a\\u0000","specialty":"content_seo"}', '{"name":"\\udc80","specialty":"sales"}'):
                error(await c.call("POST", "/api/agents/register", body), 400, "invalid_string")
            r = await c.call("POST", "/api/agents/register", '{"name":"tab\\tok","specialty":"sales"}')
            assert r.status == 201, r.body  # tab, LF and CR are text

    asyncio.run(main())


# ---- duplicate keys ----------------------------------------------------------------------------


def body_routes() -> list[tuple[str, str]]:
    return sorted({(op.method, op.path) for op in OPERATIONS if op.request is not None})


def test_duplicate_keys_are_refused_on_every_route(tmp_path: Path) -> None:
    async def main() -> None:
        async with serve(tmp_path) as (c, _port, db):
            key, wallet, agent_uuid = await register(c)
            routes = body_routes()
            assert len(routes) >= 20
            for method, path in routes:
                url = (
                    path.replace("{agent_uuid}", agent_uuid)
                    .replace("{session_id}", "cs_x")
                    .replace("{order_id}", "ord_x")
                    .replace("{agent_id}", wallet)
                )
                for body in ('{"a":1,"a":2}', '{"x":{"k":true,"k":false}}', '{"p":[{"q":1,"q":1}]}'):
                    r = await c.call(method, url, body, key=key)
                    error(r, 400, "duplicate_key")
            body = f'{{"agentId":"{wallet}","amount":1,"source":"s","amount":1000000}}'
            r = await c.call("POST", "/api/agents/earn", body, key=key)
            error(r, 400, "duplicate_key")
            assert r.body["param"] == "amount"
            assert db.execute("SELECT count(*) FROM ledger").fetchone() == (0,)

    asyncio.run(main())


# ---- content types -----------------------------------------------------------------------------

REFUSED_TYPES = [
    "text/plain",
    "text/plain;charset=utf-8",
    "application/x-www-form-urlencoded",
    "multipart/form-data",  # no boundary
    "multipart/form-data; boundary=x",
    "application/json; charset=utf-16",
    "application/json; charset=latin-1",
    "application/jsonx",
    "application/json; foo=bar",
]


def test_json_routes_take_json_only(tmp_path: Path) -> None:
    async def main() -> None:
        async with serve(tmp_path) as (c, _port, db):
            key, wallet, agent_uuid = await register(c)
            earn = json.dumps({"agentId": wallet, "amount": 1, "source": "s"})
            log_body = json.dumps(
                {"event_type": "routine", "content_hash": "0" * 64, "model_id": "m", "model_version": "1"}
            )
            routes = [
                ("/api/agents/earn", earn),
                (f"/api/agents/{agent_uuid}/log", log_body),
                ("/api/acp/checkout_sessions", json.dumps({"line_items": [{"item": {"id": "i"}}]})),
                ("/api/keys", json.dumps({"email": "a@example.com"})),
            ]
            for path, body in routes:
                for ctype in REFUSED_TYPES:
                    r = await c.call("POST", path, body, key=key, headers={"Content-Type": ctype})
                    error(r, 415, "unsupported_media_type")
                    assert r.body["param"] == "Content-Type"
                for raw in (body.encode("utf-16"), b"\xef\xbb\xbf" + body.encode(), body.encode("utf-32")):
                    error(await c.call("POST", path, raw, key=key), 400, "invalid_json")
            assert db.execute("SELECT count(*) FROM ledger").fetchone() == (0,)
            for ctype in ("application/json", "application/json; charset=utf-8", 'Application/JSON; Charset="UTF-8"'):
                r = await c.call("POST", "/api/agents/earn", earn, key=key, headers={"Content-Type": ctype})
                assert r.status == 200, (ctype, r.body)

    asyncio.run(main())


# ---- what the HTTP parser refuses ----------------------------------------------------------------


async def raw_exchange(port: int, data: bytes) -> bytes:
    reader, writer = await asyncio.open_connection("127.0.0.1", port)
    try:
        writer.write(data)
        await writer.drain()
        return await asyncio.wait_for(reader.read(65536), 10)
    finally:
        writer.close()


def test_parser_errors_answer_the_error_shape_in_one_log_line(tmp_path: Path, caplog: pytest.LogCaptureFixture) -> None:
    secret = b"SECRET-REQUEST-BYTES"
    cases = [
        (b"GET /" + secret + b"a" * 9000 + b" HTTP/1.1\r\nHost: x\r\n\r\n", 400, "request_too_long"),
        (b"GET /healthz HTTP/1.1\r\nHost: x\r\nX-A: " + secret + b"a" * 9000 + b"\r\n\r\n", 400, "request_too_long"),
        (b"GET /healthz HTTP/1.1\r\nHost: x\r\nX-A: " + secret + b"\x00b\r\n\r\n", 400, "malformed_request"),
        (b"GET /healthz HTTP/1.1\r\nHost: x\r\n" + b"".join(b"X-%d: a\r\n" % i for i in range(200)) + b"\r\n", 400,
         "malformed_request"),
        (b"POST /api/keys HTTP/1.1\r\nHost: x\r\nContent-Type: application/json\r\nTransfer-Encoding: chunked\r\n\r\n"
         b"zz\r\n" + secret + b"\r\n0\r\n\r\n", 400, "malformed_request"),
    ]  # fmt: skip

    async def main() -> None:
        async with serve(tmp_path) as (_c, port, _db):
            for data, status, code in cases:
                caplog.clear()
                with caplog.at_level(logging.DEBUG):
                    raw = await raw_exchange(port, data)
                head, _, body = raw.partition(b"\r\n\r\n")
                assert head.split(b" ")[1] == str(status).encode(), raw[:200]
                assert b"content-type: application/json" in head.lower()
                parsed = json.loads(body)
                assert set(parsed) == SHAPE and parsed["code"] == code, parsed
                assert secret not in raw
                ours = [  # the access log (one line per request, off in the runtime) aside
                    r
                    for r in caplog.records
                    if r.levelno >= logging.INFO
                    and r.name.startswith(("aiohttp", "agentl"))
                    and r.name != "aiohttp.access"
                ]
                assert len(ours) == 1 and ours[0].exc_info is None, [r.getMessage() for r in ours]
                assert "\n" not in ours[0].getMessage() and "SECRET" not in ours[0].getMessage()

    asyncio.run(main())


# ---- Allow on 405 -------------------------------------------------------------------------------


def test_405_names_the_allowed_methods(tmp_path: Path) -> None:
    async def main() -> None:
        async with serve(tmp_path) as (c, _port, _db):
            for method, path, allow in [
                ("PUT", "/api/agents/earn", {"POST"}),
                ("DELETE", "/api/agents/memory", {"GET", "HEAD", "POST"}),
                ("POST", "/healthz", {"GET", "HEAD"}),
                ("PATCH", "/api/acp/checkout_sessions/cs_1", {"GET", "HEAD", "POST"}),
            ]:
                r = await c.call(method, path)
                error(r, 405, "method_not_allowed")
                assert set(r.headers["Allow"].split(",")) == allow, (path, r.headers)
                # whatever the body: no route takes it, so its media type is not the question
                form = {"Content-Type": "application/x-www-form-urlencoded"}
                r = await c.call(method, path, "a=1", headers=form)
                error(r, 405, "method_not_allowed")

    asyncio.run(main())


# ---- "the same body" is the same canonical JSON --------------------------------------------------


def test_idempotency_key_replays_a_reserialised_body(tmp_path: Path) -> None:
    """The body check of an Idempotency-Key compares RFC 8785 canonical JSON: key order, whitespace,
    escapes and number forms aside, the same body replays; another one is still a 422."""

    async def main() -> None:
        async with serve(tmp_path) as (c, _port, db):
            key, wallet, agent_uuid = await register(c)
            first = await c.call(
                "POST", "/api/agents/earn", f'{{"agentId":"{wallet}","amount":1.5,"source":"shop"}}', key=key, idem="k1"
            )
            assert first.status == 200, first.body
            for again in (
                f'{{ "source" : "shop",\n "amount" : 1.50, "agentId" : "{wallet}" }}',
                f'{{"agentId":"{wallet}","amount":15e-1,"source":"\\u0073hop"}}',
            ):
                r = await c.call("POST", "/api/agents/earn", again, key=key, idem="k1")
                assert r.status == 200 and r.headers["Idempotent-Replayed"] == "true" and r.raw == first.raw, r.body
            other = f'{{"agentId":"{wallet}","amount":1.6,"source":"shop"}}'
            error(await c.call("POST", "/api/agents/earn", other, key=key, idem="k1"), 422, "idempotency_conflict")
            assert db.execute("SELECT count(*) FROM ledger WHERE agent_uuid = ?", (agent_uuid,)).fetchone() == (1,)

    asyncio.run(main())


# ---- the earn hot path: its body is parsed once, the key policy in front ---------------------------


class _CountingDecoder:
    """core.jsontext's decoder, counting the bodies it decodes."""

    def __init__(self, inner: json.JSONDecoder) -> None:
        self.inner = inner
        self.calls = 0

    def decode(self, text: str) -> Any:
        self.calls += 1
        return self.inner.decode(text)


def test_earn_parses_its_body_once_with_the_key_policy_in_front(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    """api.errors decodes the body (the request rules), api.policy's middleware checks the key's
    scopes and cap (it never reads the body of a row without a quote), and earn reads what api.errors
    decoded: one JSON parse per earn, with an unlimited key and with a scoped, capped one."""
    import core.jsontext
    from core import wallets
    from core.keys import hash_api_key, new_api_key
    from core.store import transaction

    counting = _CountingDecoder(core.jsontext._DECODER)
    monkeypatch.setattr(core.jsontext, "_DECODER", counting)

    async def main() -> None:
        async with serve(tmp_path) as (c, _port, db):
            key, wallet, agent_uuid = await register(c)
            account = store.agent_by_wallet(db, wallet)
            assert account is not None
            limited = new_api_key()
            with transaction(db):
                wallets.issue_key(
                    db, hash_api_key(limited), 0.0, account_id=account.account_id, scopes="read log", daily_cap=10**6
                )
            for k in (key, limited):
                counting.calls = 0
                r = await c.call("POST", "/api/agents/earn", {"agentId": wallet, "amount": 2, "source": "s"}, key=k)
                assert r.status == 200, r.body
                assert counting.calls == 1
            assert db.execute("SELECT count(*) FROM ledger WHERE agent_uuid = ?", (agent_uuid,)).fetchone() == (2,)

    asyncio.run(main())
