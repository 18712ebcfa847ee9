"""Provider-side order calls against the real app: the signer is the agent NFT's CURRENT self wallet,
hostile uploads are refused before work, a reclaimed escrow cannot be recovered."""

from __future__ import annotations

import asyncio
import contextlib
import hashlib
import json
import time
from collections.abc import AsyncIterator
from contextlib import asynccontextmanager
from dataclasses import dataclass
from pathlib import Path
from typing import Any

import aiohttp
import apsw
from aiohttp import web
from aiohttp.test_utils import TestServer
from eth_account import Account
from eth_account.messages import encode_defunct
from eth_account.signers.local import LocalAccount
from web3 import Web3

from api.app import create_app
from api.checkout import UploadSlots
from api.http import SERVICES
from core.audit import canonical
from core.checkout.follower import OrderFollower
from core.checkout.orders import completion_message, deliverable_message, provider_message
from core.checkout.provider_orders import MAX_DELIVERABLE_UPLOADS
from core.config import Settings
from core.ipfs import cid_of
from core.operator import Operator
from core.store import connect, transaction
from core.store import orders as store
from core.store.projections import clear_halt, set_halt
from indexer.rpc import RetryPolicy, RpcClient
from scripts.devchain import System, dev_account
from tests.integration.indexer_kit import make_indexer
from tests.integration.test_order_follower import _fund, _pending_session, _setup


def upload_headers(order_id: str, who: LocalAccount, data: bytes, ts: int | None = None) -> dict[str, str]:
    """The signature headers of a deliverable upload of `data` by `who`."""
    ts = int(time.time()) if ts is None else ts
    sha = hashlib.sha256(data).hexdigest()
    msg = deliverable_message(order_id, sha, ts)
    sig = "0x" + bytes(Account.sign_message(encode_defunct(text=msg), who.key).signature).hex()
    return {"X-Provider-Timestamp": str(ts), "X-Provider-Signature": sig, "X-Content-SHA256": sha}


@dataclass
class Harness:
    system: System
    db: apsw.Connection
    base: str
    http: aiohttp.ClientSession
    port: int

    async def index(self) -> None:
        async with RpcClient(self.system.w3.provider.endpoint_uri, RetryPolicy(attempts=3)) as rpc:  # type: ignore[attr-defined]
            ix = make_indexer(
                self.db,
                rpc,
                self.system,
                use_finalized_tag=False,
                followers=[OrderFollower(time.time)],
            )
            await ix.run_until(self.system.w3.eth.block_number)

    async def upload(self, order_id: str, who: LocalAccount, data: bytes, ts: int | None = None) -> tuple[int, Any]:
        """A multipart deliverable upload signed by `who` (in its headers): (status, body)."""
        form = aiohttp.FormData()
        form.add_field("file", data, filename="d.txt")
        headers = upload_headers(order_id, who, data, ts)
        async with self.http.post(
            f"{self.base}/api/acp/orders/{order_id}/deliverables", data=form, headers=headers
        ) as r:
            return r.status, await r.json()

    async def signed(self, order_id: str, action: str, who: LocalAccount, ts: int | None = None) -> tuple[int, Any]:
        ts = int(time.time()) if ts is None else ts
        sig = Account.sign_message(encode_defunct(text=provider_message(action, order_id, ts)), who.key).signature
        body = {"timestamp": ts, "signature": "0x" + bytes(sig).hex()}
        async with self.http.post(f"{self.base}/api/acp/orders/{order_id}/{action}", json=body) as r:
            return r.status, await r.json()


@asynccontextmanager
async def harness(system: System, tmp_path: Path, uploads: UploadSlots | None = None) -> AsyncIterator[Harness]:
    db = connect(tmp_path / "p.db")
    dep = system.deployment
    op = Operator(system.w3, system.operator, dep.contracts, dep.usdc)
    app = create_app(dep, "http://127.0.0.1:9", db, settings=Settings(webhook_allow_private="true"), operator=op)
    if uploads is not None:
        app[SERVICES].provide(uploads)
    runner = web.AppRunner(app)
    await runner.setup()
    site = web.TCPSite(runner, "127.0.0.1", 0)
    await site.start()
    host, port = runner.addresses[0][:2]
    try:
        async with aiohttp.ClientSession() as http:
            yield Harness(system, db, f"http://{host}:{port}", http, port)
    finally:
        await runner.cleanup()
        db.close()


async def _order(h: Harness, wallet_id: str, sid: str, account: int = 300) -> tuple[str, int, LocalAccount]:
    token, provider = _setup(h.db, h.system, wallet_id, account)
    job = _pending_session(h.db, sid, wallet_id, h.system.users[2].address)
    _fund(h.system, job, token)
    await h.index()
    order = store.order_by_job(h.db, job)
    assert order is not None
    return order.id, token, provider  # type: ignore[return-value]


async def _started(h: Harness, wallet_id: str, sid: str, account: int = 300) -> tuple[str, LocalAccount]:
    """An order moved to in_progress by its provider: (order id, provider)."""
    order_id, _token, provider = await _order(h, wallet_id, sid, account)
    for action in ("acknowledge", "start"):
        assert (await h.signed(order_id, action, provider))[0] == 200
    return order_id, provider


def test_signatures_follow_the_self_wallet_rotated_on_chain(system: System, tmp_path: Path) -> None:
    async def main() -> None:
        async with harness(system, tmp_path) as h:
            order_id, token, old = await _order(h, "agl_00000000e001", "cs_rot")
            assert (await h.signed(order_id, "acknowledge", old))[0] == 200
            new = dev_account(301)
            owner = system.users[1]  # _setup made users[1] the NFT's owner
            system.tx(owner, system.set_self_wallet_fn(owner.address, token, new))
            await h.index()
            status, body = await h.signed(order_id, "start", old)
            assert (status, body["code"]) == (401, "invalid_signature")
            assert set(body) == {"type", "code", "message", "param"}
            assert store.get_order(h.db, order_id).status == "acknowledged"  # type: ignore[union-attr]
            status, body = await h.signed(order_id, "start", new)
            assert (status, body["status"]) == (200, "in_progress")

    asyncio.run(main())


def test_nobody_signs_for_an_agent_that_changed_hands_until_its_new_owner_sets_a_self_wallet(
    system: System, tmp_path: Path
) -> None:
    """A transfer of the agent NFT resets its self wallet on-chain (SelfWalletChanged to 0x0): the
    indexed zero address signs nothing (409 provider_not_linked; the old wallet is refused too) until
    the new owner sets a wallet with its proof."""

    async def main() -> None:
        async with harness(system, tmp_path) as h:
            order_id, token, old = await _order(h, "agl_00000000e002", "cs_sold")
            owner, new_owner, fresh = system.users[1], system.users[5], dev_account(302)
            system.tx(owner, system.registry.functions.transferFrom(owner.address, new_owner.address, token))
            await h.index()
            assert h.db.execute("SELECT self_wallet FROM agents WHERE token_id = ?", (token,)).fetchall() == [
                ("0x" + "00" * 20,)
            ]
            status, body = await h.signed(order_id, "acknowledge", old)
            assert (status, body["code"]) == (409, "provider_not_linked")
            assert store.get_order(h.db, order_id).status == "created"  # type: ignore[union-attr]
            system.tx(new_owner, system.set_self_wallet_fn(new_owner.address, token, fresh))
            await h.index()
            assert (await h.signed(order_id, "acknowledge", old))[1]["code"] == "invalid_signature"
            status, body = await h.signed(order_id, "acknowledge", fresh)
            assert (status, body["status"]) == (200, "acknowledged")

    asyncio.run(main())


def test_uploads_are_refused_before_reading_when_not_in_progress_and_floats_are_400(
    system: System, tmp_path: Path
) -> None:
    async def main() -> None:
        async with harness(system, tmp_path) as h:
            order_id, _token, provider = await _order(h, "agl_00000000e002", "cs_up")
            url = f"{h.base}/api/acp/orders/{order_id}/deliverables"
            content = {"a": 1}
            hdrs = upload_headers(order_id, provider, canonical(content))
            async with h.http.post(url, json={"content": content}, headers=hdrs) as r:
                assert (r.status, (await r.json())["code"]) == (409, "invalid_transition")  # still `created`
            for action in ("acknowledge", "start"):
                assert (await h.signed(order_id, action, provider))[0] == 200
            float_body = b'{"content": {"x": 1.5}}'
            hdrs = upload_headers(order_id, provider, float_body)
            async with h.http.post(url, data=float_body, headers={**hdrs, "Content-Type": "application/json"}) as r:
                assert (r.status, (await r.json())["code"]) == (400, "invalid_content")
            form = aiohttp.FormData()
            form.add_field("file", b"one", filename="a")
            form.add_field("file", b"two", filename="b")
            async with h.http.post(url, data=form, headers=upload_headers(order_id, provider, b"one")) as r:
                assert (r.status, (await r.json())["param"]) == (400, "file")
            # the bytes must be the ones signed
            form = aiohttp.FormData()
            form.add_field("file", b"other bytes", filename="a")
            async with h.http.post(url, data=form, headers=upload_headers(order_id, provider, b"signed bytes")) as r:
                body = await r.json()
                assert (r.status, body["code"], body["param"]) == (400, "digest_mismatch", "X-Content-SHA256")
            # refused uploads wrote nothing
            assert store.get_order(h.db, order_id).deliverable_cid is None  # type: ignore[union-attr]
            assert h.db.execute("SELECT count(*) FROM ipfs_objects").fetchall() == [(0,)]
            # the real thing still works
            data = b"report"
            status, body = await h.upload(order_id, provider, data)
            assert status == 201, body
            assert body["cid"] == cid_of(data)
            assert store.get_order(h.db, order_id).deliverable_cid == cid_of(data)  # type: ignore[union-attr]

    asyncio.run(main())


def test_a_reclaimed_escrow_cannot_be_recovered(system: System, tmp_path: Path) -> None:
    async def main() -> None:
        async with harness(system, tmp_path) as h:
            order_id, _token, provider = await _order(h, "agl_00000000e003", "cs_rec")
            order = store.get_order(h.db, order_id)
            assert order is not None
            system.advance(49 * 3600)  # past the job's deadline
            system.tx(system.users[2], system.gateway.functions.reclaim(bytes.fromhex(order.job_id[2:])))
            await h.index()
            assert store.get_order(h.db, order_id).status == "failed"  # type: ignore[union-attr]
            status, body = await h.signed(order_id, "recover", provider, ts=int(time.time()))
            assert (status, body["code"]) == (409, "escrow_closed")
            assert set(body) == {"type", "code", "message", "param"}  # the one error shape
            assert store.get_order(h.db, order_id).status == "failed"  # type: ignore[union-attr]

    asyncio.run(main())


async def _delivered(h: Harness, wallet_id: str, sid: str) -> tuple[str, str, LocalAccount, store.OrderRow]:
    """An in_progress order with an uploaded deliverable: (order id, cid, provider, order row)."""
    order_id, provider = await _started(h, wallet_id, sid)
    status, body = await h.upload(order_id, provider, b"the report")
    assert status == 201, body
    order = store.get_order(h.db, order_id)
    assert order is not None
    return order_id, body["cid"], provider, order


def _attestation(order: store.OrderRow, cid: str, provider: LocalAccount) -> dict[str, Any]:
    ts = int(time.time())
    msg = completion_message(order.job_id, cid, ts)
    sig = Account.sign_message(encode_defunct(text=msg), provider.key).signature
    return {"cid": cid, "timestamp": ts, "signature": "0x" + bytes(sig).hex()}


def test_a_release_the_node_never_got_answers_503_without_the_rpc_url_and_may_be_retried(
    system: System, tmp_path: Path
) -> None:
    """The operator's node is down (its URL carries a provider API key): the 503 names no URL, nothing
    changed, and the same attestation is accepted once the node answers again."""
    secret_url = "http://127.0.0.1:9/v2/SECRET_API_KEY_123"

    async def main() -> None:
        async with harness(system, tmp_path) as h:
            order_id, cid, provider, order = await _delivered(h, "agl_00000000e004", "cs_503")
            attestation = _attestation(order, cid, provider)
            dep = system.deployment
            dead = Operator(Web3(Web3.HTTPProvider(secret_url)), system.operator, dep.contracts, dep.usdc)
            app = create_app(dep, secret_url, connect(tmp_path / "p.db"), operator=dead)
            server = TestServer(app, host="127.0.0.1", port=0)
            await server.start_server()
            try:
                async with h.http.post(
                    f"{server.make_url('')}/api/acp/orders/{order_id}/complete", json=attestation
                ) as r:
                    text = await r.text()
                    assert r.status == 503 and "SECRET" not in text and "127.0.0.1:9" not in text, text
                    assert set(await r.json()) == {"type", "code", "message", "param"}
            finally:
                await server.close()
            assert store.get_order(h.db, order_id).status == "in_progress"  # type: ignore[union-attr]
            async with h.http.post(f"{h.base}/api/acp/orders/{order_id}/complete", json=attestation) as r:
                assert r.status == 200, await r.text()  # the same attestation, now through a live node
            assert store.get_order(h.db, order_id).status == "completed"  # type: ignore[union-attr]
            async with h.http.post(f"{h.base}/api/acp/orders/{order_id}/complete", json=attestation) as r:
                assert r.status in (200, 409)  # the attestation is not accepted a third time as new

    asyncio.run(main())


def test_a_malformed_multipart_upload_is_a_400(system: System, tmp_path: Path) -> None:
    """A part header aiohttp cannot parse (InvalidHeader) was a 500."""

    async def main() -> None:
        async with harness(system, tmp_path) as h:
            order_id, provider = await _started(h, "agl_00000000e005", "cs_mp")
            url = f"{h.base}/api/acp/orders/{order_id}/deliverables"
            for headers, payload in (
                ({"Content-Type": "multipart/form-data"}, b"--x\r\n"),  # no boundary
                ({"Content-Type": "multipart/form-data; boundary=x"}, b"--x\r\nContent-Disposition: form-data\r\n"),
                # a part header without a colon, and one with a NUL in its name: aiohttp's InvalidHeader
                ({"Content-Type": "multipart/form-data; boundary=x"}, b"--x\r\nbadheader\r\n\r\ndata\r\n--x--\r\n"),
                ({"Content-Type": "multipart/form-data; boundary=x"}, b"--x\r\nX\x00: y\r\n\r\ndata\r\n--x--\r\n"),
            ):
                signed = upload_headers(order_id, provider, b"data")
                async with h.http.post(url, data=payload, headers={**headers, **signed}) as r:
                    body = await r.json()
                    assert (r.status, body["code"]) == (400, "invalid_request"), body
                    assert set(body) == {"type", "code", "message", "param"}
            assert store.get_order(h.db, order_id).deliverable_cid is None  # type: ignore[union-attr]

    asyncio.run(main())


def test_an_order_takes_at_most_twenty_deliverable_uploads(system: System, tmp_path: Path) -> None:
    """Each upload is kept by CID (up to 32 MiB): one order must not be able to fill the disk."""

    async def main() -> None:
        async with harness(system, tmp_path) as h:
            order_id, provider = await _started(h, "agl_00000000e006", "cs_quota")
            cids = []
            for i in range(MAX_DELIVERABLE_UPLOADS):
                status, body = await h.upload(order_id, provider, f"draft {i}".encode())
                assert status == 201, body
                cids.append(body["cid"])
            status, body = await h.upload(order_id, provider, b"one too many")
            assert (status, body["code"]) == (409, "deliverable_quota"), body
            order = store.get_order(h.db, order_id)
            assert order is not None and order.deliverable_cid == cids[-1]  # the refused one wrote nothing
            stored = h.db.execute("SELECT count(*) FROM ipfs_objects").fetchall()[0][0]
            assert stored == MAX_DELIVERABLE_UPLOADS

    asyncio.run(main())


# ---- slow uploads, the fail reason, start without acknowledge -----------------------------------


class SlowUpload:
    """A raw socket POSTing a 30 MB multipart deliverable at 16 bytes a second."""

    def __init__(self, port: int, order_id: str, headers: dict[str, str]) -> None:
        self.port, self.order_id, self.headers = port, order_id, headers
        self.writer: asyncio.StreamWriter | None = None
        self.trickle: asyncio.Task[None] | None = None
        self.response: asyncio.Task[tuple[int, Any]] | None = None

    async def start(self) -> SlowUpload:
        reader, self.writer = await asyncio.open_connection("127.0.0.1", self.port)
        head = (
            f"POST /api/acp/orders/{self.order_id}/deliverables HTTP/1.1\r\nHost: 127.0.0.1\r\n"
            "Content-Type: multipart/form-data; boundary=slow\r\nContent-Length: 30000000\r\n"
            + "".join(f"{k}: {v}\r\n" for k, v in self.headers.items())
            + "\r\n"
        )
        self.writer.write(head.encode())
        self.trickle = asyncio.create_task(self._trickle())
        self.response = asyncio.create_task(self._read(reader))
        return self

    async def _trickle(self) -> None:
        assert self.writer is not None
        body = b'--slow\r\nContent-Disposition: form-data; name="file"; filename="x"\r\n\r\n' + b"a" * 10_000
        with contextlib.suppress(OSError):
            for i in range(0, len(body), 16):
                self.writer.write(body[i : i + 16])
                await self.writer.drain()
                await asyncio.sleep(1.0)

    async def _read(self, reader: asyncio.StreamReader) -> tuple[int, Any]:
        status = int((await reader.readline()).split()[1])
        length = 0
        while (line := await reader.readline()) not in (b"\r\n", b""):
            name, _, value = line.decode().partition(":")
            if name.lower() == "content-length":
                length = int(value)
        return status, json.loads(await reader.readexactly(length))

    async def answer(self, timeout: float = 20.0) -> tuple[int, Any]:
        assert self.response is not None
        return await asyncio.wait_for(asyncio.shield(self.response), timeout)

    async def close(self) -> None:
        if self.trickle is not None:
            self.trickle.cancel()
        if self.response is not None:
            self.response.cancel()
        if self.writer is not None:
            self.writer.close()


def test_slow_uploads_hold_no_other_providers_slot(system: System, tmp_path: Path) -> None:
    """Slow clients (16 bytes/s) held every upload slot before they were even
    authenticated. Now the signature headers are checked before the body: strangers are answered at
    once, a provider's slow upload holds only its own order's slot, until the read deadline."""

    async def main() -> None:
        async with harness(system, tmp_path, UploadSlots(total=4, per_provider=2, read_deadline=3.0)) as h:
            slow_order, slow_provider = await _started(h, "agl_00000000e101", "cs_slow")
            other_order, other_provider = await _started(h, "agl_00000000e102", "cs_other", account=310)
            stranger = dev_account(311)
            uploads: list[SlowUpload] = []
            try:
                # unauthenticated, or signed by a stranger: refused before any body byte is read
                for headers in [{}] * 4 + [upload_headers(slow_order, stranger, b"x" * 30)] * 2:
                    uploads.append(await SlowUpload(h.port, slow_order, headers).start())
                for u, code in zip(uploads, ["missing_signature"] * 4 + ["invalid_signature"] * 2, strict=True):
                    status, body = await u.answer()
                    assert (status, body["code"]) == (401, code), body
                    assert set(body) == {"type", "code", "message", "param"}
                # the provider's own slow upload holds its order's slot; a second one is refused at once
                mine = await SlowUpload(h.port, slow_order, upload_headers(slow_order, slow_provider, b"big")).start()
                uploads.append(mine)
                await asyncio.sleep(0.3)
                again = await SlowUpload(h.port, slow_order, upload_headers(slow_order, slow_provider, b"2")).start()
                uploads.append(again)
                status, body = await again.answer()
                assert (status, body["code"]) == (409, "upload_in_progress"), body
                # another provider's 30-byte upload goes through while all of them still trickle
                status, body = await asyncio.wait_for(
                    h.upload(other_order, other_provider, b"thirty bytes of deliverable.."), 20
                )
                assert status == 201, body
                assert not mine.response.done()  # type: ignore[union-attr]
                # the slow upload is cut off at the read deadline, in the error shape
                status, body = await mine.answer()
                assert (status, body["code"]) == (408, "upload_timeout"), body
                assert set(body) == {"type", "code", "message", "param"}
            finally:
                for u in uploads:
                    await u.close()
            # its slot is free again: the provider's real upload works
            status, body = await h.upload(slow_order, slow_provider, b"the report")
            assert status == 201, body
            order = store.get_order(h.db, slow_order)
            assert order is not None and order.deliverable_cid == cid_of(b"the report")

    asyncio.run(main())


def test_fail_reason_is_signed_and_bounded(system: System, tmp_path: Path) -> None:
    """The public fail reason was free text outside the signature."""

    async def main() -> None:
        async with harness(system, tmp_path) as h:
            order_id, provider = await _started(h, "agl_00000000e103", "cs_fail")
            url = f"{h.base}/api/acp/orders/{order_id}/fail"

            def body(reason: str, signed_reason: str | None, ts: int | None = None) -> dict[str, Any]:
                ts = int(time.time()) if ts is None else ts
                msg = provider_message("fail", order_id, ts, signed_reason)
                sig = Account.sign_message(encode_defunct(text=msg), provider.key).signature
                return {"timestamp": ts, "signature": "0x" + bytes(sig).hex(), "reason": reason}

            # a reason the provider did not sign (e.g. put in by whoever relayed the call)
            async with h.http.post(url, json=body("the buyer is a fraud", None)) as r:
                assert (r.status, (await r.json())["code"]) == (401, "invalid_signature")
            async with h.http.post(url, json=body("the buyer is a fraud", "out of capacity")) as r:
                assert (r.status, (await r.json())["code"]) == (401, "invalid_signature")
            # bounded, printable
            for bad, status in (("x" * 281, 400), ("line\nbreak", 422), ("hidden\u202etext", 422), ("", 400)):
                async with h.http.post(url, json=body(bad, bad)) as r:
                    got = await r.json()
                    assert (r.status, got["param"]) == (status, "reason"), got
            assert store.get_order(h.db, order_id).status == "in_progress"  # type: ignore[union-attr]
            assert len(store.history(h.db, order_id)) == 3  # created, acknowledged, in_progress
            reason = "out of capacity: dataset unavailable"
            async with h.http.post(url, json=body(reason, reason)) as r:
                assert (r.status, (await r.json())["status"]) == (200, "failed")
            last = store.history(h.db, order_id)[-1]
            assert (last.to_state, last.reason) == ("failed", reason)
            payload = json.loads(
                h.db.execute("SELECT payload FROM audit_log WHERE id = ?", (last.audit_id,)).fetchone()[0]
            )
            assert payload["reason"] == reason

    asyncio.run(main())


def test_an_order_can_be_started_without_acknowledge(system: System, tmp_path: Path) -> None:
    """The spec makes acknowledge optional (created -> in_progress)."""

    async def main() -> None:
        async with harness(system, tmp_path) as h:
            order_id, _token, provider = await _order(h, "agl_00000000e104", "cs_start")
            status, body = await h.signed(order_id, "start", provider)
            assert (status, body["status"], body["from_state"]) == (200, "in_progress", "created"), body
            status, body = await h.upload(order_id, provider, b"done")
            assert status == 201, body

    asyncio.run(main())


def test_order_complete_is_refused_while_the_indexer_is_halted(system: System, tmp_path: Path) -> None:
    """The release would be followed by a halted index: 503 indexer_halted, nothing
    sent, and the same attestation works once an operator has resumed the indexer."""

    async def main() -> None:
        async with harness(system, tmp_path) as h:
            order_id, cid, provider, order = await _delivered(h, "agl_00000000e105", "cs_halt")
            attestation = _attestation(order, cid, provider)
            chain_id = system.deployment.chain_id
            with transaction(h.db):  # as the indexer (another process) records it
                set_halt(h.db, chain_id, "reorg deeper than the stored window", time.time())
            sent = system.w3.eth.get_transaction_count(system.operator.address)
            async with h.http.post(f"{h.base}/api/acp/orders/{order_id}/complete", json=attestation) as r:
                body = await r.json()
                assert (r.status, body["code"]) == (503, "indexer_halted"), body
                assert set(body) == {"type", "code", "message", "param"} and r.headers["Retry-After"] == "60"
            assert system.w3.eth.get_transaction_count(system.operator.address) == sent  # nothing sent
            assert store.get_order(h.db, order_id).status == "in_progress"  # type: ignore[union-attr]
            with transaction(h.db):
                assert clear_halt(h.db, chain_id)
            async with h.http.post(f"{h.base}/api/acp/orders/{order_id}/complete", json=attestation) as r:
                assert r.status == 200, await r.text()  # the same attestation: it was given back

    asyncio.run(main())


def test_an_mcp_upload_carries_the_header_signature_in_its_arguments(system: System, tmp_path: Path) -> None:
    """MCP has no request headers: the upload tool takes {content, timestamp, signature}, signed over the
    content's RFC 8785 SHA-256 exactly as the headers would be; HTTP refuses the fields in a JSON body
    (they go in the headers, checked before the body is read)."""
    from tests.integration.mcp_kit import error_code, mcp

    async def main() -> None:
        async with harness(system, tmp_path) as h:
            order_id, provider = await _started(h, "agl_00000000e105", "cs_mcp_upload")
            content = {"report": "keywords", "n": 3}
            data = canonical(content)
            headers = upload_headers(order_id, provider, data)
            ts, sig = int(headers["X-Provider-Timestamp"]), headers["X-Provider-Signature"]
            body = {"content": content, "timestamp": ts, "signature": sig}
            url = f"{h.base}/api/acp/orders/{order_id}/deliverables"
            async with h.http.post(url, json=body) as r:  # over HTTP the headers are the signature
                assert (r.status, (await r.json())["code"]) == (401, "missing_signature")
            async with h.http.post(url, json=body, headers=headers) as r:  # and the body holds no second one
                assert r.status == 400 and (await r.json())["param"] in ("signature", "timestamp")
            async with mcp(f"{h.base}/api/mcp") as client:
                unsigned = await client.call_tool("upload_deliverable", {"order_id": order_id, "content": content})
                assert error_code(unsigned) == "missing_signature"
                forged = await client.call_tool(
                    "upload_deliverable",
                    {"order_id": order_id, "content": {"other": 1}, "timestamp": ts, "signature": sig},
                )
                assert error_code(forged) == "invalid_signature"
                done = await client.call_tool("upload_deliverable", {"order_id": order_id, **body})
                assert not done.is_error, done.structured_content
                assert done.structured_content is not None
                assert done.structured_content["cid"] == cid_of(data)
                again = await client.call_tool("upload_deliverable", {"order_id": order_id, **body})
                assert error_code(again) == "signature_replayed"
            order = store.get_order(h.db, order_id)
            assert order is not None and order.deliverable_cid == cid_of(data)

    asyncio.run(main())
