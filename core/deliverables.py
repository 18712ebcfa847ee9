"""Deliverables: bytes stored by their CID (core.ipfs, Kubo's `ipfs add --cid-version=1`), and,
when an IPFS node is configured (Settings.ipfs_api_url, Kubo's RPC API), added and pinned there
too; the node must answer with the same CID. Content that could not be pinned (the node was down,
or was configured later) is pinned by the `ipfs-pin` job.
"""

from __future__ import annotations

import asyncio
import json
import logging
import time
from collections.abc import Callable
from dataclasses import dataclass
from typing import Any

import aiohttp

from core import egress, ipfs
from core.errors import ServiceError
from core.store import ipfs as store
from core.store.committer import GroupCommitter
from core.store.reads import Reads

log = logging.getLogger("agentledger.ipfs")

#: The largest deliverable accepted (bytes): 32 MiB, so one stays a single SQLite BLOB read into
#: memory and a Kubo add finishes well inside its timeout.
MAX_DELIVERABLE_BYTES = 32 * 1024 * 1024
#: Hashing of content above this size runs in a thread, off the event loop.
_THREAD_HASH_BYTES = 1024 * 1024
#: Kubo's RPC add with its CIDv1 defaults spelled out, so a node configured otherwise still agrees.
KUBO_ADD_PARAMS = {
    "cid-version": "1",
    "raw-leaves": "true",
    "chunker": "size-262144",
    "hash": "sha2-256",
    "pin": "true",
    "progress": "false",
}
KUBO_TIMEOUT = aiohttp.ClientTimeout(total=120, sock_connect=5)
#: How often the ipfs-pin job looks for content still to pin (with a node configured).
PIN_INTERVAL = 60.0


def too_large(size: int, param: str | None = "file") -> ServiceError:
    return ServiceError(
        413, "payload_too_large", f"a deliverable is at most {MAX_DELIVERABLE_BYTES} bytes, got {size}", param=param
    )


async def cid_of(content: bytes) -> str:
    """The content's CIDv1, hashed off the event loop when large."""
    if len(content) > _THREAD_HASH_BYTES:
        return await asyncio.to_thread(ipfs.cid_of, content)
    return ipfs.cid_of(content)


@dataclass
class Deliverables:
    reads: Reads

    writer: GroupCommitter
    #: Kubo RPC base URL (e.g. http://127.0.0.1:5001); empty: content is stored here only.
    api_url: str = ""
    clock: Callable[[], float] = time.time

    async def store(self, content: bytes) -> str:
        """Store `content` (idempotent) and return its CIDv1. With an IPFS node configured, the content
        is also added and pinned there before returning: 502 `ipfs_pin_failed` when the node cannot be
        reached or refuses, 502 `ipfs_cid_mismatch` when it names another CID. The bytes stay stored
        here either way (pinned=0), so a retry of the same upload pins them."""
        if len(content) > MAX_DELIVERABLE_BYTES:
            raise too_large(len(content))
        cid = await cid_of(content)
        now = self.clock()
        await self.writer.run(lambda conn: store.put(conn, cid, content, now))
        if self.api_url:
            await self.pin(cid, content)
        return cid

    async def pin(self, cid: str, content: bytes) -> None:
        """Add and pin `content` on the configured Kubo node (a no-op when already recorded as pinned)."""
        meta = await self.reads.run(lambda conn: store.info(conn, cid))
        if meta is not None and meta.pinned:
            return
        got = await kubo_add(self.api_url, content)
        if got != cid:
            raise ServiceError(
                502,
                "ipfs_cid_mismatch",
                f"the IPFS node computed {got} for content whose CID is {cid}",
                type_="service_error",
            )
        await self.writer.run(lambda conn: store.mark_pinned(conn, cid))

    async def pin_unpinned(self, limit: int = 100) -> list[str]:
        """Pin stored content whose pin failed or predates the node's configuration, oldest first; the
        CIDs pinned. Stops at the first failure (raised as in `store`); nothing to do without a node.
        The step of the ipfs-pin job."""
        done: list[str] = []
        if not self.api_url:
            return done

        async def content_of(cid: str) -> bytes | None:  # one at a time: up to 32 MiB each
            return await self.reads.run(lambda conn: store.get(conn, cid))

        for cid in await self.reads.run(lambda conn: store.unpinned(conn, limit)):
            content = await content_of(cid)
            if content is not None:
                await self.pin(cid, content)
                done.append(cid)
        return done


async def kubo_add(api_url: str, content: bytes) -> str:
    """POST /api/v0/add to a Kubo RPC API (multipart, one file); the root CID it reports. Through an
    egress session that allows private addresses: the node is the operator's (usually on loopback)."""
    form = aiohttp.FormData()
    form.add_field("file", content, filename="deliverable", content_type="application/octet-stream")
    endpoint = api_url.rstrip("/") + "/api/v0/add"
    try:
        async with (
            egress.session(allow_private=True, timeout=KUBO_TIMEOUT) as session,
            session.post(endpoint, params=KUBO_ADD_PARAMS, data=form, auto_decompress=True) as resp,
        ):
            body = await resp.text()
            status = resp.status
            stream_error = resp.headers.get("X-Stream-Error", "")
    except (aiohttp.ClientError, TimeoutError) as exc:
        # The node's URL (it may hold credentials) and the error's text go to the log only.
        log.warning("IPFS node at %s did not answer: %r", api_url, exc)
        raise _pin_failed("the IPFS node did not answer") from exc
    if status != 200 or stream_error:
        log.warning("IPFS node at %s refused the add (%s): %s", api_url, status, (stream_error or body)[:500])
        raise _pin_failed(f"the IPFS node refused the add (HTTP {status})")
    root = _last_hash(body)
    if root is None:
        log.warning("IPFS node at %s: add answer without a CID: %s", api_url, body[:500])
        raise _pin_failed("the IPFS node's add answer names no CID")
    return root


def _last_hash(body: str) -> str | None:
    """Kubo answers one JSON object per line ({"Name", "Hash", "Size"}); the last one is the root."""
    root = None
    for line in body.splitlines():
        try:
            entry: Any = json.loads(line)
        except ValueError:
            continue
        if isinstance(entry, dict) and isinstance(entry.get("Hash"), str):
            root = entry["Hash"]
    return root


def _pin_failed(message: str) -> ServiceError:
    return ServiceError(502, "ipfs_pin_failed", message, type_="service_error")
