"""Decision logging over real HTTP (aiohttp on loopback, a real SQLite file, an injected clock): the
chain rule end to end, auth, the exact hourly rate limit under 1,200 concurrent posts and its reset,
idempotency, signed webhooks to a real receiver, and the public verification and transparency-log
reads (including the shell commands the verification page prints, run with bash). No chain needed."""

from __future__ import annotations

import asyncio
import hashlib
import hmac
import json
import logging
import re
import subprocess
from collections.abc import AsyncIterator, Awaitable, Callable
from contextlib import asynccontextmanager
from dataclasses import dataclass
from pathlib import Path
from typing import Any

import aiohttp
import apsw
import pytest
from aiohttp import web
from aiohttp.test_utils import TestServer

import merkle
from api import audit_routes, decisions, verification
from api.app import install
from api.http import SERVICES
from api.wallets import create_wallet_app
from core.decisions import DecisionLog
from core.keys import hash_api_key, new_api_key
from core.outbox.dispatcher import Dispatcher as WebhookDispatcher
from core.store import audit as audit_store
from core.store import connect, ratelimit, transaction
from core.store import wallets as store
from tests.integration.http_kit import Clock, mount_dispatcher

H = "ab" * 32
HOUR = 3600
T0 = 1_800_000_000.0  # 2027-01-15T08:00:00Z, the top of an hour


@dataclass
class Reply:
    status: int
    body: Any
    headers: dict[str, str]
    text: str


@dataclass
class Api:
    session: aiohttp.ClientSession
    base: str
    db: apsw.Connection
    clock: Clock

    async def call(
        self, method: str, path: str, body: Any = None, *, key: str | None = None, headers: dict[str, str] | None = None
    ) -> Reply:
        h = dict(headers or {})
        if key is not None:
            h["Authorization"] = f"Bearer {key}"
        data = None if body is None else (body if isinstance(body, (bytes, str)) else json.dumps(body))
        if data is not None:
            h.setdefault("Content-Type", "application/json")
        async with self.session.request(method, self.base + path, data=data, headers=h) as resp:
            text = await resp.text()
            try:
                parsed = json.loads(text)
            except ValueError:
                parsed = None
            return Reply(resp.status, parsed, dict(resp.headers), text)

    async def agent(self, key: str | None = None) -> tuple[str, str]:
        """(account key, agent uuid) of a newly registered agent."""
        r = await self.call("POST", "/api/agents/register", {"name": "bot", "specialty": "content_seo"}, key=key)
        assert r.status == 201, r.body
        return key or r.body["api_key"], r.body["agent"]["id"]

    async def log(self, key: str, agent: str, idem: str | None = None, **fields: Any) -> Reply:
        body = {"event_type": "routine", "content_hash": H, "model_id": "m-1", "model_version": "1.0", **fields}
        headers = {"Idempotency-Key": idem} if idem else None
        return await self.call("POST", f"/api/agents/{agent}/log", body, key=key, headers=headers)

    def count(self, table: str) -> int:
        (n,) = self.db.execute(f"SELECT count(*) FROM {table}").fetchone() or (0,)  # noqa: S608 (test tables)
        return int(n)


@asynccontextmanager
async def serve(
    tmp: Path, *, rate_limit: int = 1000, allow_private: bool = True, dispatcher: bool = False
) -> AsyncIterator[Api]:
    db = connect(tmp / "decisions.db", durable=True)
    clock = Clock(T0 + 120)
    app = create_wallet_app(db, clock)
    app[SERVICES].allow_private = allow_private
    install(app, (decisions.FEATURE, audit_routes.FEATURE, verification.FEATURE))
    app[SERVICES].provide(DecisionLog(rate_limit))
    if dispatcher:
        mount_dispatcher(app, WebhookDispatcher(tmp / "decisions.db", clock, allow_private=True))
    server = TestServer(app, host="127.0.0.1", port=0)
    await server.start_server()
    try:
        async with aiohttp.ClientSession(connector=aiohttp.TCPConnector(limit=200)) as session:
            yield Api(session, str(server.make_url("")).rstrip("/"), db, clock)
    finally:
        await server.close()
        db.close()


def run(tmp: Path, body: Callable[[Api], Awaitable[None]], **kw: Any) -> None:
    async def main() -> None:
        async with serve(tmp, **kw) as api:
            await body(api)

    asyncio.run(main())


def sha(b: bytes) -> str:
    return hashlib.sha256(b).hexdigest()


def expected_payload(agent: str, ts: str, **fields: Any) -> bytes:
    """The stored entry's canonical JSON, written out by hand (sorted keys, no spaces)."""
    p = {
        "agent_id": agent,
        "content_hash": H,
        "correlation_ref": None,
        "event_type": "routine",
        "evidence_manifest": [],
        "model_id": "m-1",
        "model_version": "1.0",
        "timestamp": ts,
        **fields,
    }
    return json.dumps(p, sort_keys=True, separators=(",", ":")).encode()


# ---- logging and the chain rule -------------------------------------------------------------------


def test_log_answers_201_and_chains_each_agents_entries(tmp_path: Path) -> None:
    async def body(api: Api) -> None:
        key, agent = await api.agent()
        _, other = await api.agent(key)
        prev = "genesis"
        for seq in (1, 2, 3):
            api.clock.now = T0 + seq + 0.5
            r = await api.log(key, agent, correlation_ref=f"ref-{seq}")
            assert r.status == 201, r.body
            ts = f"2027-01-15T08:00:0{seq}.500Z"
            assert set(r.body) == {"audit_id", "chain_hash", "content_hash", "tier", "timestamp", "verification_url"}
            assert (r.body["tier"], r.body["content_hash"], r.body["timestamp"]) == ("routine", H, ts)
            assert r.body["verification_url"] == f"{api.base}/verify/{r.body['audit_id']}"
            payload = expected_payload(agent, ts, correlation_ref=f"ref-{seq}")
            chain = sha(f"{agent}:{seq}:{prev}:{sha(payload)}".encode())
            assert r.body["chain_hash"] == chain
            entry = audit_store.get(api.db, r.body["audit_id"])
            assert entry is not None and entry.payload.encode() == payload and entry.seq == seq
            prev = chain
            # another agent's stream is independent: its own genesis and seq 1, 2, 3
            o = await api.log(key, other, event_type="high_stakes")
            assert o.status == 201 and o.body["tier"] == "high_stakes"
        others = audit_store.stream_entries(api.db, f"agent:{other}")
        assert [e.seq for e in others] == [1, 2, 3] and others[0].prev_hash == "genesis"
        assert audit_store.size(api.db) == 6
        # evidence is part of the hashed entry
        ev = [{"type": "pdf", "sha256": "cd" * 32}]
        r = await api.log(key, agent, event_type="critical", evidence_manifest=ev)
        assert r.status == 201
        entry = audit_store.get(api.db, r.body["audit_id"])
        assert entry is not None and json.loads(entry.payload)["evidence_manifest"] == [
            {"sha256": "cd" * 32, "type": "pdf"}
        ]

    run(tmp_path, body)


def test_concurrent_posts_for_one_agent_have_no_gaps_and_no_forks(tmp_path: Path) -> None:
    async def body(api: Api) -> None:
        key, agent = await api.agent()
        replies = await asyncio.gather(*(api.log(key, agent, correlation_ref=f"r{i}") for i in range(300)))
        assert all(r.status == 201 for r in replies)
        entries = audit_store.stream_entries(api.db, f"agent:{agent}")
        assert [e.seq for e in entries] == list(range(1, 301))
        prev = "genesis"
        for e in entries:
            assert e.prev_hash == prev
            assert e.chain_hash == sha(f"{agent}:{e.seq}:{prev}:{sha(e.payload.encode())}".encode())
            prev = e.chain_hash
        assert sorted(r.body["audit_id"] for r in replies) == list(range(1, 301))

    run(tmp_path, body)


def test_auth_and_agent_scope(tmp_path: Path) -> None:
    async def body(api: Api) -> None:
        key, agent = await api.agent()
        _, sibling = await api.agent(key)
        other_key, other_agent = await api.agent()
        assert (await api.log(None, agent)).status == 401  # type: ignore[arg-type]
        assert (await api.log("aglk_" + "0" * 32, agent)).status == 401
        for k, a in (
            (other_key, agent),
            (key, other_agent),
            (key, "not-a-uuid"),
            (key, "0" * 8 + "-0000-0000-0000-" + "0" * 12),
        ):
            r = await api.log(k, a)
            assert (r.status, r.body["code"], r.body["param"]) == (404, "agent_not_found", "agent_uuid"), r.body
        # an agent-scoped key logs for its agent only
        agent_key = new_api_key()
        account = store.agent_by_uuid(api.db, agent)
        assert account is not None
        store.insert_api_key(api.db, hash_api_key(agent_key), account.account_id, agent, None, 0)
        assert (await api.log(agent_key, agent)).status == 201
        assert (await api.log(agent_key, sibling)).status == 404
        assert api.count("audit_log") == 1 and api.count("rate_windows") == 1

    run(tmp_path, body)


def test_refused_bodies_write_nothing(tmp_path: Path) -> None:
    async def body(api: Api) -> None:
        key, agent = await api.agent()
        r = await api.log(key, agent, content="the full prompt and answer")
        assert (r.status, r.body["code"], r.body["param"]) == (400, "evidence_content_not_accepted", "content")
        assert set(r.body) == {"type", "code", "message", "param"}
        r = await api.log(key, agent, evidence_manifest=[{"type": "pdf", "sha256": "JVBERi0xLjQK"}])
        assert r.body["code"] == "evidence_content_not_accepted"
        r = await api.log(key, agent, surprise=1)
        assert (r.status, r.body["code"]) == (400, "unknown_field")
        r = await api.log(key, agent, event_type="critical")
        assert (r.status, r.body["code"]) == (400, "evidence_required")
        assert api.count("audit_log") == api.count("merkle_nodes") == api.count("rate_windows") == 0

    run(tmp_path, body)


def test_private_webhook_target_refused_when_not_allowed(tmp_path: Path) -> None:
    async def body(api: Api) -> None:
        key, agent = await api.agent()
        for url, status, code in (
            ("http://127.0.0.1:9/hook", 422, "webhook_url_refused"),  # well-formed: the target is refused
            ("http://10.0.0.1/x", 422, "webhook_url_refused"),
            ("ftp://example.com/", 400, "invalid_webhook_url"),  # not what the schema's pattern allows
            ("http://u:p@example.com/", 400, "invalid_webhook_url"),
        ):
            r = await api.log(key, agent, webhook_url=url)
            assert (r.status, r.body["code"], r.body["param"]) == (status, code, "webhook_url"), url
        assert api.count("audit_log") == api.count("outbox") == 0

    run(tmp_path, body, allow_private=False)


def test_webhook_url_is_not_resolved_for_an_agent_the_key_may_not_act_for(tmp_path: Path) -> None:
    """A stranger's webhook_url is never checked (no DNS probing of internal names through us): 404
    before the URL check, whichever answer the check would give."""

    async def body(api: Api) -> None:
        _, agent = await api.agent()
        stranger, _ = await api.agent()
        for url in ("http://localhost:8080/x", "http://10.0.0.1/x", "https://no-such-host.invalid/x"):
            r = await api.log(stranger, agent, webhook_url=url)
            assert (r.status, r.body["code"], r.body["param"]) == (404, "agent_not_found", "agent_uuid"), r.body
            assert "resolve" not in r.body["message"] and "non-public" not in r.body["message"]
        assert api.count("audit_log") == api.count("outbox") == 0

    run(tmp_path, body, allow_private=False)


def test_generated_webhook_secret_is_returned_once(tmp_path: Path) -> None:
    async def body(api: Api) -> None:
        key, agent = await api.agent()
        url = "http://127.0.0.1:1/refused"  # no dispatcher here: the delivery row stays as queued

        def delivery_secret(audit_id: int) -> str:
            row = api.db.execute("SELECT secret FROM outbox WHERE source = ?", (f"audit:{audit_id}",)).fetchone()
            assert row is not None
            return str(row[0])

        r = await api.log(key, agent, webhook_url=url)
        assert r.status == 201 and re.fullmatch(r"[0-9a-f]{64}", r.body["webhook_secret"])
        assert r.body["webhook_secret"] == delivery_secret(r.body["audit_id"])  # receivers can verify
        given = await api.log(key, agent, webhook_url=url, webhook_secret="mine-0123456789abcdef")
        assert given.status == 201 and "webhook_secret" not in given.body  # the caller knows it
        assert "webhook_secret" not in (await api.log(key, agent)).body  # no webhook, no secret
        # under an Idempotency-Key: shown in the first 201; the stored (replayed) answer never holds it
        first = await api.log(key, agent, idem="w1", webhook_url=url)
        secret = first.body["webhook_secret"]
        assert secret == delivery_secret(first.body["audit_id"])
        replay = await api.log(key, agent, idem="w1", webhook_url=url)
        assert replay.headers.get("Idempotent-Replayed") == "true"
        assert replay.status == 201 and "webhook_secret" not in replay.body
        assert {k: v for k, v in first.body.items() if k != "webhook_secret"} == replay.body
        stored = api.db.execute("SELECT response_body FROM idempotency_keys").fetchall()
        assert stored and all(secret not in str(row[0]) for row in stored)

    run(tmp_path, body)


def test_non_ascii_digit_ids_are_404_not_500(tmp_path: Path) -> None:
    async def body(api: Api) -> None:
        key, agent = await api.agent()
        assert (await api.log(key, agent)).status == 201
        for path in ("/verify/²", "/api/audit/proof/²", "/verify/١", "/api/audit/proof/１"):
            r = await api.call("GET", path, headers={"Accept": "application/json"})
            assert (r.status, r.body["code"]) == (404, "entry_not_found"), (path, r.status, r.text)

    run(tmp_path, body)


# ---- the rate limit ---------------------------------------------------------------------------------


def test_1200_concurrent_posts_admit_exactly_1000(tmp_path: Path) -> None:
    async def body(api: Api) -> None:
        key, agent = await api.agent()
        _, second = await api.agent(key)  # the limit is per key, across its agents
        api.clock.now = T0 + HOUR - 100.25
        replies = await asyncio.gather(*(api.log(key, (agent, second)[i % 2]) for i in range(1200)))
        statuses = [r.status for r in replies]
        assert statuses.count(201) == 1000 and statuses.count(429) == 200
        for r in replies:
            if r.status == 429:
                assert r.headers["Retry-After"] == "101"
                assert r.body["retry_after_seconds"] == 101 and r.body["code"] == "rate_limit_exceeded"
                assert {"type", "code", "message", "param"} <= set(r.body)
        assert api.count("audit_log") == 1000
        assert ratelimit.count(api.db, hash_api_key(key), api.clock.now) == 1000
        # another key has its own window
        other_key, other = await api.agent()
        assert (await api.log(other_key, other)).status == 201

    run(tmp_path, body)


def test_window_resets_at_the_top_of_the_utc_hour(tmp_path: Path) -> None:
    async def body(api: Api) -> None:
        key, agent = await api.agent()
        api.clock.now = T0 + 5 * HOUR + 3590.5  # 13:59:50.5
        for _ in range(3):
            assert (await api.log(key, agent)).status == 201
        r = await api.log(key, agent, idem="k-1")
        assert r.status == 429 and r.headers["Retry-After"] == "10" and r.body["retry_after_seconds"] == 10
        api.clock.now = T0 + 6 * HOUR - 0.001  # still the same window
        r = await api.log(key, agent)
        assert r.status == 429 and r.headers["Retry-After"] == "1"
        api.clock.now = T0 + 6 * HOUR  # 14:00:00: a new window
        # the 429 was not stored under the Idempotency-Key: the retry really runs
        r = await api.log(key, agent, idem="k-1")
        assert r.status == 201 and "Idempotent-Replayed" not in r.headers
        assert (await api.log(key, agent)).status == 201
        assert (await api.log(key, agent)).status == 201
        assert (await api.log(key, agent)).status == 429
        # finished windows of the key are dropped when its next window opens
        assert api.count("rate_windows") == 1
        assert api.count("audit_log") == 6

    run(tmp_path, body, rate_limit=3)


def test_idempotent_log_replays_and_conflicts(tmp_path: Path) -> None:
    async def body(api: Api) -> None:
        key, agent = await api.agent()
        a = await api.log(key, agent, idem="same")
        b = await api.log(key, agent, idem="same")
        assert a.status == b.status == 201 and a.text == b.text and b.headers["Idempotent-Replayed"] == "true"
        c = await api.log(key, agent, idem="same", model_id="other")
        assert (c.status, c.body["code"]) == (422, "idempotency_conflict")
        assert api.count("audit_log") == 1 and ratelimit.count(api.db, hash_api_key(key), api.clock.now) == 1

    run(tmp_path, body)


# ---- webhooks ---------------------------------------------------------------------------------------


def test_webhook_is_signed_and_delivered(tmp_path: Path) -> None:
    async def body(api: Api) -> None:
        got: list[tuple[bytes, dict[str, str]]] = []
        arrived = asyncio.Event()

        async def hook(request: web.Request) -> web.Response:
            got.append((await request.read(), dict(request.headers)))
            arrived.set()
            return web.Response(text="ok")

        receiver = web.Application()
        receiver.router.add_post("/hook", hook)
        server = TestServer(receiver, host="127.0.0.1", port=0)
        await server.start_server()
        try:
            key, agent = await api.agent()
            secret = "whsecret-0123456789abcdef"
            r = await api.log(key, agent, webhook_url=str(server.make_url("/hook")), webhook_secret=secret)
            assert r.status == 201
            await asyncio.wait_for(arrived.wait(), 10)
            raw, headers = got[0]
            assert headers["X-Service-Signature"] == "sha256=" + hmac.new(secret.encode(), raw, "sha256").hexdigest()
            assert json.loads(raw) == {
                "event": "decision_logged",
                "job_id": r.body["audit_id"],
                "status": "routine",
                "timestamp": r.body["timestamp"],
                "metadata": {
                    "audit_id": r.body["audit_id"],
                    "agent_uuid": agent,
                    "tier": "routine",
                    "chain_hash": r.body["chain_hash"],
                    "content_hash": H,
                },
            }
            # without a secret: a fresh random 32-byte hex one per delivery (kept until delivered: the
            # target here refuses connections)
            secrets_seen = set()
            for _ in range(2):
                r2 = await api.log(key, agent, webhook_url="http://127.0.0.1:1/refused")
                assert r2.status == 201
                row = api.db.execute(
                    "SELECT secret FROM outbox WHERE source = ?", (f"audit:{r2.body['audit_id']}",)
                ).fetchone()
                assert row is not None
                secrets_seen.add(str(row[0]))
            assert len(secrets_seen) == 2 and all(len(x) == 64 and int(x, 16) >= 0 for x in secrets_seen)
            for e in (1, 2):
                entry = audit_store.get(api.db, e)
                assert entry is not None and "hook" not in entry.payload and secret not in entry.payload
        finally:
            await server.close()

    run(tmp_path, body, dispatcher=True)


# ---- public reads ------------------------------------------------------------------------------------


def bash(command: str) -> str:
    out = subprocess.run(["bash", "-c", command], capture_output=True, text=True, check=True).stdout
    return out.split()[0]


def test_verify_page_methodology_and_discovery(tmp_path: Path) -> None:
    async def body(api: Api) -> None:
        key, agent = await api.agent()
        for _ in range(5):
            assert (await api.log(key, agent, correlation_ref="it's-fine".replace("'", ""))).status == 201
        r = await api.call("GET", "/verify/3", headers={"Accept": "application/json"})
        assert r.status == 200 and r.headers["Content-Type"].startswith("application/json")
        v = r.body
        entry = audit_store.get(api.db, 3)
        assert entry is not None
        assert (v["audit_id"], v["stream"], v["seq"], v["chain_hash"]) == (3, f"agent:{agent}", 3, entry.chain_hash)
        assert v["chain_hash_recomputed"] == entry.chain_hash and v["payload_canonical"] == entry.payload
        # the printed shell commands recompute the hashes with standard tools
        assert bash(v["commands"]["payload_hash"]) == sha(entry.payload.encode())
        assert bash(v["commands"]["chain_hash"]) == entry.chain_hash
        assert bash(v["commands"]["leaf_hash"]) == entry.leaf_hash.hex() == v["leaf"]["hash"][2:]
        # one ISO 8601 formatter everywhere: the entry's time as the decision's own timestamp, with a Z
        assert v["created_at"] == json.loads(entry.payload)["timestamp"] and v["created_at"].endswith("Z")
        inc = v["inclusion"]
        assert inc["tree_size"] == 5 and inc["anchored"] is False and inc["valid"] is True and v["anchor"] is None
        assert inc["reason"] is None
        proof = [bytes.fromhex(p[2:]) for p in inc["proof"]]
        assert merkle.verify_inclusion(entry.leaf_hash, 2, 5, proof, bytes.fromhex(inc["root"][2:]))
        page = await api.call("GET", "/verify/3", headers={"Accept": "text/html"})
        assert page.status == 200 and page.headers["Content-Type"].startswith("text/html")
        assert entry.chain_hash in page.text and "sha256sum" in page.text and "/methodology" in page.text
        for bad in ("0", "6", "x", "99999999999999999999999"):
            nf = await api.call("GET", f"/verify/{bad}", headers={"Accept": "application/json"})
            assert (nf.status, nf.body["code"]) == (404, "entry_not_found")
        # a leaf that no longer fits the tree: /verify says why the proof fails, in JSON and in HTML
        with transaction(api.db):
            api.db.execute("UPDATE audit_log SET leaf_hash = ? WHERE id = 4", (b"\x01" * 32,))
        bad_inc = (await api.call("GET", "/verify/4", headers={"Accept": "application/json"})).body["inclusion"]
        assert bad_inc["valid"] is False and bad_inc["reason"].startswith("root mismatch: the proof leads to 0x")
        assert "NO: root mismatch" in (await api.call("GET", "/verify/4", headers={"Accept": "text/html"})).text

        m = await api.call("GET", "/methodology")
        assert m.headers["Content-Type"].startswith("text/html")
        for formula in ("RFC 8785", "RFC 9162", "genesis", "SHA-256(0x00 || leaf_data)", "SHA-256(prev_hash ||"):
            assert formula in m.text, formula
        mj = await api.call("GET", "/methodology", headers={"Accept": "application/json"})
        assert "chain_hash" in mj.body["streams"]["decision"] and "chain_hash" in mj.body["streams"]["order"]

        for path in ("/well-known/decisional-logging.json", "/.well-known/decisional-logging.json"):
            d = await api.call("GET", path)
            assert d.status == 200 and d.headers["Cache-Control"] == "public, max-age=3600"
            assert set(d.body["tiers"]) == {"routine", "high_stakes", "critical"}
            assert d.body["rate_limit"]["limit"] == 1000
            assert d.body["endpoint"] == f"{api.base}/api/agents/{{agent_uuid}}/log"
            assert d.body["methodology"] == f"{api.base}/methodology"

    run(tmp_path, body)


def test_transparency_log_reads(tmp_path: Path) -> None:
    async def body(api: Api) -> None:
        key, agent = await api.agent()
        for _ in range(13):
            assert (await api.log(key, agent)).status == 201
        c = await api.call("GET", "/api/audit/checkpoints")
        assert c.status == 200 and c.body["log_size"] == 13 and c.body["checkpoints"] == []
        leaves = [e.leaf_hash for e in audit_store.stream_entries(api.db, f"agent:{agent}")]
        assert c.body["log_root"] == "0x" + merkle.root_from_leaf_hashes(leaves).hex()
        for audit_id, size in ((1, 13), (7, 7), (13, 13), (4, 9)):
            p = await api.call("GET", f"/api/audit/proof/{audit_id}?tree_size={size}")
            assert p.status == 200 and p.body["tree_size"] == size and p.body["anchored"] is False
            proof = [bytes.fromhex(x[2:]) for x in p.body["proof"]]
            root = merkle.root_from_leaf_hashes(leaves[:size])
            assert p.body["root"] == "0x" + root.hex()
            assert merkle.verify_inclusion(leaves[audit_id - 1], audit_id - 1, size, proof, root)
        p = await api.call("GET", "/api/audit/proof/5")
        assert p.body["tree_size"] == 13  # nothing anchored: the current tree
        for first, second in ((1, 13), (5, 8), (8, 13), (13, 13)):
            q = await api.call("GET", f"/api/audit/consistency?first={first}&second={second}")
            assert q.status == 200
            proof = [bytes.fromhex(x[2:]) for x in q.body["proof"]]
            r1, r2 = merkle.root_from_leaf_hashes(leaves[:first]), merkle.root_from_leaf_hashes(leaves[:second])
            assert merkle.verify_consistency(first, second, r1, r2, proof)
        for path, status in (
            # well-formed sizes the log refuses as it stands: 422 (400 is for what /api/schema refuses)
            ("/api/audit/proof/3?tree_size=2", 422),
            ("/api/audit/proof/3?tree_size=14", 422),
            ("/api/audit/consistency?first=5&second=4", 422),
            ("/api/audit/consistency?first=1&second=14", 422),
            ("/api/audit/proof/3?tree_size=0", 400),  # minimum 1
            ("/api/audit/consistency?first=0&second=4", 400),
            ("/api/audit/consistency?first=1", 400),  # second is required
        ):
            bad = await api.call("GET", path)
            assert bad.status == status, (path, bad.body)
        assert (await api.call("GET", "/api/audit/proof/14")).status == 404

    run(tmp_path, body)


@pytest.mark.parametrize("limit", [1])
def test_rate_limited_request_writes_nothing(tmp_path: Path, limit: int, caplog: pytest.LogCaptureFixture) -> None:
    async def body(api: Api) -> None:
        key, agent = await api.agent()
        assert (await api.log(key, agent)).status == 201
        before = (api.count("audit_log"), api.count("merkle_nodes"), api.count("outbox"))
        r = await api.log(key, agent, webhook_url="http://127.0.0.1:9/x")
        assert r.status == 429
        assert (api.count("audit_log"), api.count("merkle_nodes"), api.count("outbox")) == before

    with caplog.at_level(logging.ERROR, logger="agentledger.store"):
        run(tmp_path, body, rate_limit=limit)
    # A decision runs without a savepoint: its refusals must come before its first write (else the
    # committer rolls its whole group back and runs the others again, logging that it did).
    assert not [r for r in caplog.records if r.name == "agentledger.store"]
