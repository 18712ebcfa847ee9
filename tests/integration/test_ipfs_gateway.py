"""The IPFS gateway and store_deliverable over real HTTP (aiohttp on loopback) and a real SQLite
file: store, refetch, rehash; HEAD, 304, 400, 404, CIDv0 reads, the size cap.

Pinning: no IPFS node is reachable here, so Kubo's RPC API is played by a small aiohttp server
on loopback that answers /api/v0/add the way Kubo does (NDJSON {Name, Hash, Size}), computing
the CID with the real importer (tests/ipfs_reference.js, npm ipfs-unixfs-importer), never with
core.ipfs.
"""

from __future__ import annotations

import asyncio
import json
import shutil
import socket
from collections.abc import AsyncIterator, Callable, Coroutine
from contextlib import asynccontextmanager
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any

import aiohttp
import pytest
from aiohttp import web
from aiohttp.test_utils import TestServer
from multidict import CIMultiDict
from multiformats import CID

from api import ipfs_gateway as gw
from api.app import install
from api.checkout.provider_orders import read_capped
from api.errors import ACCEPTS, ApiError
from api.http import services_of
from api.wallets import create_wallet_app
from core import deliverables, ipfs
from core.store import connect
from core.store import ipfs as store
from tests.integration.http_kit import Clock

ROOT = Path(__file__).resolve().parents[2]
REFERENCE = ROOT / "tests" / "ipfs_reference.js"
CHUNK = 262_144


@dataclass
class Gateway:
    session: aiohttp.ClientSession
    base: str
    app: web.Application
    db: Any
    clock: Clock

    @property
    def store(self) -> deliverables.Deliverables:
        """The app's deliverables store (what the provider's upload stores into)."""
        return services_of(self.app).part(deliverables.Deliverables)

    async def get(self, path: str, method: str = "GET", **headers: str) -> tuple[int, bytes, CIMultiDict[str]]:
        async with self.session.request(method, self.base + path, headers=headers) as resp:
            return resp.status, await resp.read(), resp.headers.copy()

    async def upload(self, content: bytes, limit: int = deliverables.MAX_DELIVERABLE_BYTES) -> tuple[int, Any]:
        form = aiohttp.FormData()
        form.add_field("file", content, filename="report.bin", content_type="application/octet-stream")
        async with self.session.post(self.base + "/test/upload", data=form, params={"limit": str(limit)}) as resp:
            return resp.status, await resp.json()


async def upload(request: web.Request) -> web.Response:
    """What the provider's upload endpoint does: stream the file part (capped), store it."""
    reader = await request.multipart()
    part = await reader.next()
    assert isinstance(part, aiohttp.BodyPartReader)
    content = await read_capped(part, int(request.query["limit"]))
    cid = await services_of(request.app).part(deliverables.Deliverables).store(content)
    return web.json_response({"cid": cid})


@asynccontextmanager
async def serve(tmp_path: Path, ipfs_api_url: str = "") -> AsyncIterator[Gateway]:
    db = connect(tmp_path / "ledger.db", durable=True)
    clock = Clock()
    app = create_wallet_app(db, clock)
    services = services_of(app)
    services.provide(deliverables.Deliverables(services.reads, services.writer, ipfs_api_url, clock))
    install(app, (gw.FEATURE,))
    app.router.add_post("/test/upload", upload)
    app[ACCEPTS] = {("POST", "/test/upload"): ("application/json", "multipart/form-data")}  # what the route reads
    server = TestServer(app, host="127.0.0.1", port=0)
    await server.start_server()
    try:
        async with aiohttp.ClientSession() as session:
            yield Gateway(session, str(server.make_url("")).rstrip("/"), app, db, clock)
    finally:
        await server.close()
        db.close()


def run(body: Callable[[], Coroutine[Any, Any, None]]) -> None:
    asyncio.run(body())


def assert_error(status: int, raw: bytes, want_status: int, code: str, param: str | None) -> None:
    assert status == want_status, raw
    body = json.loads(raw)
    assert set(body) == {"type", "code", "message", "param"} and body["message"]
    assert (body["code"], body["param"]) == (code, param)


def pattern(n: int, seed: int = 0) -> bytes:
    period = bytes((i * 31 + 7 + seed) % 251 for i in range(251))
    return (period * (n // 251 + 1))[:n]


CONTENTS = {
    "empty": b"",
    "json": json.dumps({"summary": "done", "items": [1, 2, 3]}).encode(),
    "text": b"hello world\n",
    "html": b"<html><script>alert(1)</script></html>",
    "binary": pattern(3 * CHUNK + 17),  # a dag-pb root over four raw leaves
}


# ---- store, fetch, rehash -------------------------------------------------------------------------


def test_store_then_fetch_rehashes_to_the_cid(tmp_path: Path) -> None:
    async def body() -> None:
        async with serve(tmp_path) as g:
            for name, content in CONTENTS.items():
                cid = await g.store.store(content)
                assert cid == ipfs.cid_of(content)
                status, got, headers = await g.get(f"/ipfs/{cid}")
                assert status == 200, name
                assert got == content and ipfs.cid_of(got) == cid
                assert headers["ETag"] == f'"{cid}"'
                assert headers["Cache-Control"] == "public, max-age=29030400, immutable"
                assert headers["X-Ipfs-Path"] == f"/ipfs/{cid}"
                assert headers["X-Ipfs-Roots"] == cid
                assert headers["X-Content-Type-Options"] == "nosniff"
                assert int(headers["Content-Length"]) == len(content)
                want = "application/json" if name == "json" else "application/octet-stream"
                assert headers["Content-Type"].split(";")[0] == want, name
                meta = store.info(g.db, cid)
                assert meta is not None and meta.size == len(content) and not meta.pinned

    run(body)


def test_store_is_idempotent(tmp_path: Path) -> None:
    async def body() -> None:
        async with serve(tmp_path) as g:
            content = CONTENTS["binary"]
            first = await g.store.store(content)
            g.clock.now += 60
            again = await g.store.store(content)
            assert first == again
            meta = store.info(g.db, first)
            assert meta is not None and meta.created_at == 1_800_000_000.0
            assert g.db.execute("SELECT count(*) FROM ipfs_objects").fetchone()[0] == 1

    run(body)


def test_multipart_upload_and_its_cap(tmp_path: Path) -> None:
    async def body() -> None:
        async with serve(tmp_path) as g:
            content = pattern(CHUNK + 5, seed=3)
            status, reply = await g.upload(content)
            assert status == 200 and reply["cid"] == ipfs.cid_of(content)
            status, got, _ = await g.get("/ipfs/" + reply["cid"])
            assert status == 200 and got == content
            status, reply = await g.upload(content, limit=CHUNK)
            assert status == 413 and (reply["code"], reply["param"]) == ("payload_too_large", "file")
            assert g.db.execute("SELECT count(*) FROM ipfs_objects").fetchone()[0] == 1
            with pytest.raises(ApiError) as exc:
                await g.store.store(bytes(deliverables.MAX_DELIVERABLE_BYTES + 1))
            assert (exc.value.status, exc.value.code) == (413, "payload_too_large")
            assert await g.store.store(bytes(deliverables.MAX_DELIVERABLE_BYTES)) == ipfs.cid_of(
                bytes(deliverables.MAX_DELIVERABLE_BYTES)
            )

    run(body)


# ---- HEAD, 304, CIDv0 -----------------------------------------------------------------------------


def test_head_sends_headers_only(tmp_path: Path) -> None:
    async def body() -> None:
        async with serve(tmp_path) as g:
            for content in (CONTENTS["json"], pattern(gw.SNIFF_LIMIT + 1)):  # sniffed, and too large to sniff
                cid = await g.store.store(content)
                status, got, headers = await g.get(f"/ipfs/{cid}", method="HEAD")
                assert status == 200 and got == b""
                assert int(headers["Content-Length"]) == len(content)
                assert headers["ETag"] == f'"{cid}"'
                want = "application/json" if content == CONTENTS["json"] else "application/octet-stream"
                assert headers["Content-Type"].split(";")[0] == want
            status, got, _ = await g.get(f"/ipfs/{ipfs.cid_of(b'absent')}", method="HEAD")
            assert status == 404

    run(body)


def test_if_none_match_answers_304(tmp_path: Path) -> None:
    async def body() -> None:
        async with serve(tmp_path) as g:
            cid = await g.store.store(CONTENTS["text"])
            for tag in (f'"{cid}"', f'W/"{cid}"', f'"other", "{cid}"', "*"):
                status, got, headers = await g.get(f"/ipfs/{cid}", **{"If-None-Match": tag})
                assert status == 304 and got == b"", tag
                assert headers["ETag"] == f'"{cid}"' and "immutable" in headers["Cache-Control"]
            status, got, _ = await g.get(f"/ipfs/{cid}", **{"If-None-Match": f'"{ipfs.cid_of(b"x")}"'})
            assert status == 200 and got == CONTENTS["text"]
            absent = ipfs.cid_of(b"absent")
            status, raw, _ = await g.get(f"/ipfs/{absent}", **{"If-None-Match": f'"{absent}"'})
            assert_error(status, raw, 404, "content_not_found", "cid")

    run(body)


def test_cidv0_and_other_bases_read_the_same_content(tmp_path: Path) -> None:
    async def body() -> None:
        async with serve(tmp_path) as g:
            content = CONTENTS["binary"]
            cid = await g.store.store(content)
            v1 = CID.decode(cid)
            for alias in (str(v1.set(version=0, base="base58btc")), cid.upper(), str(v1.set(base="base36"))):
                assert alias != cid
                status, got, headers = await g.get(f"/ipfs/{alias}")
                assert status == 200 and got == content, alias
                assert headers["X-Ipfs-Path"] == f"/ipfs/{alias}" and headers["ETag"] == f'"{cid}"'

    run(body)


# ---- errors -------------------------------------------------------------------------------------


def test_malformed_and_unknown_cids(tmp_path: Path) -> None:
    async def body() -> None:
        async with serve(tmp_path) as g:
            cid = await g.store.store(CONTENTS["text"])
            for bad in ("not-a-cid", cid[:20], "z" * 600, "b" + cid[1:].upper()):
                status, raw, _ = await g.get(f"/ipfs/{bad}")
                assert_error(status, raw, 400, "invalid_cid", "cid")
            for shaped in (cid + "a", "Qm" + "1" * 44):  # shaped like a CID (the schema's pattern): not stored
                status, raw, _ = await g.get(f"/ipfs/{shaped}")
                assert_error(status, raw, 404, "content_not_found", "cid")
            status, raw, _ = await g.get(f"/ipfs/{ipfs.cid_of(b'never stored')}")
            assert_error(status, raw, 404, "content_not_found", "cid")

    run(body)


# ---- pinning to a Kubo RPC API (played by a loopback stand-in, see the module docstring) ---------


@dataclass
class FakeKubo:
    calls: list[dict[str, str]] = field(default_factory=list)
    wrong_cid: bool = False
    fail: bool = False

    async def add(self, request: web.Request) -> web.Response:
        self.calls.append(dict(request.query))
        if self.fail:
            body = {"Message": "blockstore: disk full", "Code": 0, "Type": "error"}
            return web.json_response(body, status=500)
        reader = await request.multipart()
        part = await reader.next()
        assert isinstance(part, aiohttp.BodyPartReader) and part.filename
        content = await part.read()
        cid = ipfs.cid_of(b"something else") if self.wrong_cid else await importer_cid(bytes(content))
        line = json.dumps({"Name": part.filename, "Hash": cid, "Size": str(len(content))})
        return web.Response(text=line + "\n", content_type="application/json")


async def importer_cid(content: bytes) -> str:
    node = shutil.which("node")
    assert node is not None, "node is required (make installs it with the npm packages)"
    proc = await asyncio.create_subprocess_exec(
        node, str(REFERENCE), stdin=asyncio.subprocess.PIPE, stdout=asyncio.subprocess.PIPE, cwd=ROOT
    )
    out, _ = await proc.communicate(content)
    assert proc.returncode == 0
    return out.decode().strip()


@asynccontextmanager
async def fake_kubo() -> AsyncIterator[tuple[FakeKubo, str]]:
    kubo = FakeKubo()
    app = web.Application()
    app.router.add_post("/api/v0/add", kubo.add)
    server = TestServer(app, host="127.0.0.1", port=0)
    await server.start_server()
    try:
        yield kubo, str(server.make_url("")).rstrip("/")
    finally:
        await server.close()


def test_pins_to_the_configured_node(tmp_path: Path) -> None:
    async def body() -> None:
        async with fake_kubo() as (kubo, url), serve(tmp_path, url) as g:
            content = pattern(2 * CHUNK + 1, seed=9)
            status, reply = await g.upload(content)
            assert status == 200 and reply["cid"] == ipfs.cid_of(content)
            assert kubo.calls == [deliverables.KUBO_ADD_PARAMS]
            meta = store.info(g.db, reply["cid"])
            assert meta is not None and meta.pinned
            assert await g.store.store(content) == reply["cid"]
            assert len(kubo.calls) == 1  # already pinned: the node is not asked again

    run(body)


def test_a_node_naming_another_cid_is_an_error(tmp_path: Path) -> None:
    async def body() -> None:
        async with fake_kubo() as (kubo, url), serve(tmp_path, url) as g:
            kubo.wrong_cid = True
            content = CONTENTS["json"]
            status, reply = await g.upload(content)
            assert status == 502 and reply["code"] == "ipfs_cid_mismatch" and reply["type"] == "service_error"
            cid = ipfs.cid_of(content)
            meta = store.info(g.db, cid)
            assert meta is not None and not meta.pinned  # kept here, retried later
            assert store.unpinned(g.db) == [cid]
            kubo.wrong_cid = False
            assert await g.store.pin_unpinned() == [cid]
            assert store.unpinned(g.db) == []
            status, got, _ = await g.get(f"/ipfs/{cid}")
            assert status == 200 and got == content

    run(body)


def test_an_unreachable_or_failing_node_is_an_error(tmp_path: Path) -> None:
    async def body() -> None:
        with socket.socket() as s:  # a loopback port nobody listens on
            s.bind(("127.0.0.1", 0))
            dead = f"http://127.0.0.1:{s.getsockname()[1]}/SECRET"  # a URL may carry a key: never shown
        async with serve(tmp_path, dead) as g:
            status, reply = await g.upload(b"deliverable")
            assert status == 502 and reply["code"] == "ipfs_pin_failed"
            assert "SECRET" not in json.dumps(reply) and "127.0.0.1" not in json.dumps(reply)
        async with fake_kubo() as (kubo, url), serve(tmp_path, url) as g:
            kubo.fail = True
            status, reply = await g.upload(b"deliverable")
            assert status == 502 and reply["code"] == "ipfs_pin_failed"
            assert "disk full" not in reply["message"]  # the node's own text goes to the log only
            assert store.unpinned(g.db) == [ipfs.cid_of(b"deliverable")]

    run(body)
