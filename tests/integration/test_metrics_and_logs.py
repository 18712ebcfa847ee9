"""/metrics over real HTTP: the text parses with prometheus-client's own parser and its figures move
with the traffic (requests by route and status, latencies, group commits, the outbox, jobs, the
indexer's checkpoint, anchors); the optional token; the request id; and the JSON access log (one line
per request) that never carries a secret, whatever a request carries."""

from __future__ import annotations

import asyncio
import io
import json
import logging
import re
import time
from collections.abc import AsyncIterator, Iterator
from contextlib import asynccontextmanager, contextmanager
from pathlib import Path
from typing import Any

import aiohttp
from aiohttp.test_utils import TestServer
from prometheus_client.parser import text_string_to_metric_families

from api.app import create_app
from api.http import JOBS
from core import logs, outbox
from core.config import Settings
from core.store import connect, transaction
from indexer.metrics import IndexerCollector
from indexer.status import Status
from tests.integration.test_dashboard import DEAD_RPC, DEPLOYMENT, form_token

Samples = dict[tuple[str, tuple[tuple[str, str], ...]], float]


def parse(text: str) -> Samples:
    """Every sample of the exposition, by (name, sorted labels), through prometheus-client's parser."""
    out: Samples = {}
    for family in text_string_to_metric_families(text):
        for s in family.samples:
            out[(s.name, tuple(sorted(s.labels.items())))] = s.value
    return out


def value(samples: Samples, name: str, **labels: str) -> float:
    return samples.get((name, tuple(sorted(labels.items()))), 0.0)


class World:
    def __init__(self, base: str, app: Any, db_path: Path) -> None:
        self.base, self.app, self.db_path = base, app, db_path

    async def scrape(self, token: str | None = None) -> Samples:
        headers = {"Authorization": f"Bearer {token}"} if token else {}
        async with aiohttp.ClientSession() as s, s.get(self.base + "/metrics", headers=headers) as r:
            assert r.status == 200, await r.text()
            assert r.headers["Content-Type"].startswith("text/plain; version=")
            return parse(await r.text())

    async def call(self, method: str, path: str, body: Any = None, *, key: str | None = None, **kw: Any) -> Any:
        headers = {"Authorization": f"Bearer {key}"} if key else {}
        headers.update(kw.pop("headers", {}))
        async with (
            aiohttp.ClientSession() as s,
            s.request(method, self.base + path, json=body, headers=headers, **kw) as r,
        ):
            raw = await r.read()
            return r.status, (json.loads(raw) if raw and r.content_type == "application/json" else raw), r.headers


@asynccontextmanager
async def world(tmp_path: Path, **settings: Any) -> AsyncIterator[World]:
    db_path = tmp_path / "m.db"
    db = connect(db_path)
    app = create_app(DEPLOYMENT, DEAD_RPC, db, settings=Settings(**settings), sweep_interval=3600)
    server = TestServer(app, host="127.0.0.1", port=0)
    await server.start_server()
    # the checkout sweep also runs once at start-up (it settles what a crashed run left): let that run
    # end first, so that figures a test compares before and after move only with what the test does
    deadline = time.monotonic() + 30
    while app[JOBS].figures()["checkout-sweep"][0] < 1 or app[JOBS].figures()["checkout-sweep"][4]:
        assert time.monotonic() < deadline, "the start-up sweep did not run"
        await asyncio.sleep(0.01)
    try:
        yield World(str(server.make_url("")).rstrip("/"), app, db_path)
    finally:
        await server.close()
        db.close()


def test_metrics_parse_and_move_with_the_traffic(tmp_path: Path) -> None:
    async def main() -> None:
        async with world(tmp_path) as w:
            _, body, _ = await w.call("POST", "/api/agents/register", {"name": "a", "specialty": "email"})
            key, wallet = body["api_key"], body["agent"]["wallet"]
            before = await w.scrape()
            earn = {"method": "POST", "route": "/api/agents/earn", "status": "200"}
            n = 7
            await asyncio.gather(
                *(
                    w.call("POST", "/api/agents/earn", {"agentId": wallet, "amount": 1, "source": "s"}, key=key)
                    for _ in range(n)
                )
            )
            bad = await w.call("POST", "/api/agents/earn", {"agentId": wallet, "amount": -1}, key=key)
            assert bad[0] == 400
            await w.call("GET", f"/api/agents/balance?agentId={wallet}", key=key)
            await w.call("GET", f"/no/such/{wallet}")
            after = await w.scrape()
            grew = lambda name, **labels: value(after, name, **labels) - value(before, name, **labels)  # noqa: E731
            assert grew("agentledger_http_requests_total", **earn) == n
            assert grew("agentledger_http_requests_total", method="POST", route="/api/agents/earn", status="400") == 1
            assert (
                grew("agentledger_http_request_duration_seconds_count", method="POST", route="/api/agents/earn")
                == n + 1
            )
            assert grew("agentledger_http_request_duration_seconds_sum", method="POST", route="/api/agents/earn") > 0
            assert value(after, "agentledger_http_requests_total", method="GET", route="unmatched", status="404") == 1
            # no label ever holds a path's own values: routes are templates
            assert not any(wallet in str(labels) for _, labels in after)
            # every earn (the refused one too: it is parsed inside its item) was one item of a group commit
            assert grew("agentledger_group_commit_size_sum") == n + 1
            assert 1 <= grew("agentledger_group_commit_size_count") <= n
            assert grew("agentledger_group_commit_wait_seconds_count") == grew("agentledger_group_commit_size_count")
            assert value(after, "agentledger_group_commit_seconds_sum") > 0

    asyncio.run(main())


def test_outbox_jobs_indexer_and_anchor_figures_come_from_the_service(tmp_path: Path) -> None:
    async def main() -> None:
        async with world(tmp_path) as w:
            first = await w.scrape()
            assert (
                value(first, "agentledger_outbox_pending") == 0 and value(first, "agentledger_outbox_dead_letters") == 0
            )
            assert ("agentledger_indexer_applied_block", ()) not in first  # no checkpoint yet
            conn = connect(w.db_path)
            with transaction(conn):
                for i in range(3):
                    outbox.enqueue_webhook(
                        conn,
                        event="e",
                        source="s",
                        url=f"https://h{i}.example/x",
                        secret="s",
                        payload={},
                        now=time.time() + 3600,
                    )
                conn.execute("UPDATE outbox SET next_attempt_at = ?", (time.time() + 3600,))  # not due: stays pending
                conn.execute("UPDATE outbox SET status = 'dead_letter' WHERE url LIKE '%h0%'")
                conn.execute(
                    "INSERT INTO sync_state (chain_id, block_number, block_hash, head_number, finalized_number,"
                    " updated_at)"
                    " VALUES (31337, 40, '0x', 52, 38, 1.5)"
                )
                conn.execute(
                    "INSERT INTO audit_log (id, stream, seq, kind, payload, prev_hash, chain_hash, leaf_hash,"
                    " created_at) VALUES (1, 's', 1, 'k', '{}', 'genesis', 'c', ?, 0)",
                    (b"\x00",),
                )
                conn.execute(
                    "INSERT INTO anchors (chain_id, idx, tree_size, root, anchorer, block_number, tx_hash)"
                    " VALUES (31337, 0, 1, '0xr', '0xa', 33, '0xt')"
                )
            await w.app[JOBS].run_now("checkout-sweep")
            s = await w.scrape()
            assert value(s, "agentledger_outbox_pending") == 2 and value(s, "agentledger_outbox_dead_letters") == 1
            assert value(s, "agentledger_outbox_oldest_pending_age_seconds") >= 0
            assert (value(s, "agentledger_indexer_applied_block"), value(s, "agentledger_indexer_head_block")) == (
                40,
                52,
            )
            assert (value(s, "agentledger_indexer_lag_blocks"), value(s, "agentledger_indexer_final_block")) == (12, 38)
            assert value(s, "agentledger_indexer_checkpoint_timestamp_seconds") == 1.5
            assert value(s, "agentledger_audit_log_entries") == 1 and value(s, "agentledger_anchors") == 1
            assert value(s, "agentledger_anchored_entries") == 1 and value(s, "agentledger_anchor_last_block") == 33
            job = {"job": "checkout-sweep"}
            assert (
                value(s, "agentledger_job_runs_total", **job) == value(first, "agentledger_job_runs_total", **job) + 1
            )
            assert value(s, "agentledger_job_failures_total", **job) == 0
            assert value(s, "agentledger_job_last_run_timestamp_seconds", **job) > 0
            assert value(s, "agentledger_job_next_run_timestamp_seconds", **job) > time.time() + 3000
            assert ("agentledger_outbox_attempts_total", ()) in s  # this process's dispatcher
            assert ("agentledger_outbox_held_hosts", ()) in s

    asyncio.run(main())


def test_the_indexers_own_counters() -> None:
    from prometheus_client import CollectorRegistry, generate_latest

    status = Status(events_applied=12, reorgs=2, last_reorg_depth=3, node_ok=True)
    registry = CollectorRegistry()
    registry.register(IndexerCollector(status))  # type: ignore[arg-type]
    s = parse(generate_latest(registry).decode())
    assert (
        value(s, "agentledger_indexer_events_applied_total") == 12 and value(s, "agentledger_indexer_reorgs_total") == 2
    )
    assert value(s, "agentledger_indexer_node_up") == 1 and value(s, "agentledger_indexer_halted") == 0
    assert value(s, "agentledger_indexer_leader") == 0
    status.events_applied += 5
    status.halted = "reorg below final"
    status.leader = True
    s = parse(generate_latest(registry).decode())
    assert value(s, "agentledger_indexer_events_applied_total") == 17 and value(s, "agentledger_indexer_halted") == 1
    assert value(s, "agentledger_indexer_leader") == 1


def test_a_metrics_token_is_required_when_configured(tmp_path: Path) -> None:
    async def main() -> None:
        async with world(tmp_path, metrics_token="t0ken-for-prometheus") as w:
            for headers in ({}, {"Authorization": "Bearer wrong"}, {"Authorization": "t0ken-for-prometheus"}):
                status, body, h = await w.call("GET", "/metrics", headers=headers)
                assert (status, body["code"]) == (401, "invalid_metrics_token")
                assert h["WWW-Authenticate"].startswith("Bearer")
            assert await w.scrape("t0ken-for-prometheus")

    asyncio.run(main())


def test_every_response_carries_a_request_id(tmp_path: Path) -> None:
    async def main() -> None:
        async with world(tmp_path) as w:
            _, _, h = await w.call("GET", "/api/agents/network")
            assert re.fullmatch(r"[0-9a-f]{32}", h["X-Request-Id"])
            _, _, h = await w.call("GET", "/api/agents/network", headers={"X-Request-Id": "trace-1.2:3"})
            assert h["X-Request-Id"] == "trace-1.2:3"
            _, _, h = await w.call("GET", "/nope", headers={"X-Request-Id": "bad id\u00e9 with spaces"})
            assert re.fullmatch(r"[0-9a-f]{32}", h["X-Request-Id"])  # not echoed into logs or headers

    asyncio.run(main())


# ---- logs -------------------------------------------------------------------------------------------------


@contextmanager
def captured() -> Iterator[io.StringIO]:
    """Every record of every logger, at DEBUG, as the service's JSON lines."""
    stream = io.StringIO()
    handler = logging.StreamHandler(stream)
    handler.setFormatter(logs.JsonFormatter())
    root = logging.getLogger()
    level = root.level
    root.addHandler(handler)
    root.setLevel(logging.DEBUG)
    try:
        yield stream
    finally:
        root.removeHandler(handler)
        root.setLevel(level)


def test_json_logs_have_one_access_line_per_request_and_never_a_secret(tmp_path: Path) -> None:
    secrets: list[str] = []

    async def main() -> None:
        async with world(tmp_path, log_format="json") as w:
            _, body, _ = await w.call("POST", "/api/agents/register", {"name": "a", "specialty": "email"})
            key, wallet = body["api_key"], body["agent"]["wallet"]
            secrets.append(key)
            hook_secret = "whsec-" + "9" * 40
            secrets.append(hook_secret)
            calls = [
                ("POST", "/api/agents/earn", {"agentId": wallet, "amount": 5, "source": "s"}, key, {}),
                ("GET", f"/api/agents/balance?agentId={wallet}&api_key={key}", None, key, {}),  # a key in a query: 400
                ("GET", f"/api/agents/balance?agentId={wallet}", None, "aglk_" + "f" * 32, {}),  # a wrong key: 401
                ("GET", f"/nothing/{key}", None, None, {}),  # a key in a path: 404
                (
                    "POST",
                    "/api/keys",
                    {"email": "x@example.com"},
                    None,
                    {"headers": {"Cookie": "agl_session=agls_" + "A" * 43}},
                ),
            ]
            for method, path, payload, k, extra in calls:
                await w.call(method, path, payload, key=k, **extra)
            # the dashboard: the key typed into the form, the session cookie it answers
            async with aiohttp.ClientSession(w.base, cookie_jar=aiohttp.CookieJar(unsafe=True)) as s:
                async with s.get("/dashboard/sign-in") as r:
                    token = form_token(await r.text())
                async with s.post("/dashboard/sign-in", data={"key": key, "csrf": token}) as r:
                    assert r.status == 200
                secrets.extend(c.value for c in s.cookie_jar if c.key == "agl_session")
                await (await s.get(f"/dashboard/agents/{wallet}")).read()

    with captured() as stream:
        asyncio.run(main())
    text = stream.getvalue()
    assert len(secrets) == 3 and secrets[2].startswith("agls_")
    for secret in secrets:
        assert secret not in text, f"a secret reached the logs: {secret[:8]}..."
    lines = [json.loads(line) for line in text.splitlines()]
    access = [ln for ln in lines if ln["logger"] == "agentledger.access"]
    # one line per request: register, 5 calls, sign-in form, sign-in, the redirect's page, the agent page
    assert len(access) == 10
    for ln in access:
        assert set(ln) >= {"ts", "level", "message", "method", "route", "status", "latency_ms", "request_id"}
        assert ln["latency_ms"] >= 0 and re.fullmatch(r"[0-9a-f]{32}", ln["request_id"])
        assert "?" not in ln["route"] and "aglk_" not in ln["message"]
    assert [(ln["route"], ln["status"]) for ln in access][:6] == [
        ("/api/agents/register", 201),
        ("/api/agents/earn", 200),
        ("/api/agents/balance", 400),
        ("/api/agents/balance", 401),
        ("unmatched", 404),
        ("/api/keys", 201),
    ]
    assert ("/dashboard/agents/{wallet}", 200) in [(ln["route"], ln["status"]) for ln in access]


def test_the_policy_middleware_and_mcp_calls_are_counted_once(tmp_path: Path) -> None:
    """The observer (outermost) counts each HTTP request once, whatever main's policy middleware does
    inside it: a scope refusal (403 before the handler), a capped key's spend (a cap hold around the
    handler), a spend past the cap. An MCP tool call is one request to /api/mcp; the tool runs the
    operation in-process, so the REST route it mirrors is not counted again."""
    from prometheus_client.parser import text_string_to_metric_families as families

    from tests.integration.mcp_kit import mcp, service

    def samples(text: str) -> Samples:
        out: Samples = {}
        for family in families(text):
            for s in family.samples:
                out[(s.name, tuple(sorted(s.labels.items())))] = s.value
        return out

    async def main() -> None:
        async with service(tmp_path) as svc:
            key, wallet, account = await svc.account()
            await svc.fund(key, wallet, 100)
            log_only = svc.issue_key(account, scopes="log")
            capped = svc.issue_key(account, daily_cap=10_000_000)

            async def scrape() -> Samples:
                async with svc.session.get(svc.base + "/metrics") as r:
                    return samples(await r.text())

            before = await scrape()
            r = await svc.call("GET", f"/api/agents/balance?agentId={wallet}", key=log_only)
            assert (r.status, r.body["code"]) == (403, "insufficient_scope")
            spend = {"agentId": wallet, "amount": 4, "destination": "shop"}
            r = await svc.call("POST", "/api/agents/spend", spend, key=capped, headers={"Idempotency-Key": "k1"})
            assert r.status == 200, r.body
            r = await svc.call(
                "POST", "/api/agents/spend", {**spend, "amount": 20}, key=capped, headers={"Idempotency-Key": "k2"}
            )
            assert (r.status, r.body["code"]) == (403, "daily_cap_exceeded")
            middle = await scrape()
            async with mcp(svc.url, key, "2026-07-28") as client:
                for _ in range(3):
                    result = await client.call_tool("get_balance", {"agentId": wallet})
                    assert not result.is_error
            after = await scrape()

        def grew(a: Samples, b: Samples, **labels: str) -> float:
            return value(b, "agentledger_http_requests_total", **labels) - value(
                a, "agentledger_http_requests_total", **labels
            )

        balance, spend_route = "/api/agents/balance", "/api/agents/spend"
        assert grew(before, middle, method="GET", route=balance, status="403") == 1
        assert grew(before, middle, method="POST", route=spend_route, status="200") == 1
        assert grew(before, middle, method="POST", route=spend_route, status="403") == 1
        total = lambda s: sum(v for (n, _), v in s.items() if n == "agentledger_http_requests_total")  # noqa: E731
        assert total(middle) - total(before) == 3 + 1  # the three calls and the scrape between
        # MCP: requests to /api/mcp only (the handshake-free revision: one POST per call, plus the
        # client's own requests), never to the REST route the tool mirrors
        mcp_requests = sum(
            v - before.get((n, labels), 0.0)
            for (n, labels), v in after.items()
            if n == "agentledger_http_requests_total" and ("route", "/api/mcp") in labels
        )
        assert mcp_requests >= 3
        assert grew(middle, after, method="GET", route=balance, status="200") == 0
        assert total(after) - total(middle) == mcp_requests + 1  # and the scrape between

    asyncio.run(main())
