"""Deliverables on IPFS: `GET|HEAD /ipfs/{cid}` served like a path gateway, and store_deliverable(),
which the provider's upload endpoint calls to store bytes and get their CID.

The CID is the one `ipfs add --cid-version=1` of Kubo gives (core.ipfs). Content lives in the
ipfs_objects table; when an IPFS node is configured (Settings.ipfs_api_url, Kubo's RPC API) every
new deliverable is also added and pinned there, and the node must answer with the same CID.

Gateway responses:
- 200 with the bytes; ETag `"<cidv1>"`, Cache-Control `public, max-age=29030400, immutable`
  (content never changes under a CID), X-Ipfs-Path `/ipfs/<cid as requested>`, X-Ipfs-Roots.
- Content-Type: `application/json` when the bytes are a JSON object or array (what an upload of
  `{content: {...}}` stores) and at most SNIFF_LIMIT bytes long, otherwise
  `application/octet-stream`. Never text/html or another type a browser would render: the bytes
  come from providers and are served on the service's own origin (plus nosniff and a sandboxing CSP).
- 304 when If-None-Match names the ETag (or `*`) and the content is stored; 400 `invalid_cid`
  for text that is not a CID; 404 `content_not_found` for a CID not stored here. CIDv0 ("Qm...")
  is accepted for reads and looked up as its CIDv1 equivalent. No Range support.
"""

from __future__ import annotations

import asyncio
import json
import logging
from typing import Any

import aiohttp
from aiohttp import BodyPartReader, web
from pydantic import RootModel

from api.errors import ApiError
from api.operation import Operation
from api.wallets import CLOCK, WALLET_DB, WRITER
from core import ipfs
from core.store import ipfs as store

log = logging.getLogger("agentledger.ipfs")

#: The largest deliverable accepted (bytes): 32 MiB, so one stays a single SQLite BLOB read into
#: memory and a Kubo add finishes well inside its timeout.
MAX_DELIVERABLE_BYTES = 32 * 1024 * 1024
#: Bytes up to which content is examined for JSON (larger content is application/octet-stream).
SNIFF_LIMIT = 4 * 1024 * 1024
#: Hashing of content above this size runs in a thread, off the event loop.
_THREAD_HASH_BYTES = 1024 * 1024
CACHE_CONTROL = "public, max-age=29030400, immutable"
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

#: Kubo RPC base URL (e.g. http://127.0.0.1:5001); empty: content is stored here only.
IPFS_API_URL: web.AppKey[str] = web.AppKey("ipfs_api_url", str)


class IpfsContent(RootModel[bytes]):
    """The stored bytes, as uploaded (application/json when they are a JSON object or array,
    otherwise application/octet-stream)."""


# ---- storing ----------------------------------------------------------------------------------


def too_large(size: int, param: str | None = "file") -> ApiError:
    return ApiError(
        413, "payload_too_large", f"a deliverable is at most {MAX_DELIVERABLE_BYTES} bytes, got {size}", param=param
    )


async def read_capped(part: BodyPartReader, limit: int = MAX_DELIVERABLE_BYTES) -> bytes:
    """The bytes of one multipart part, refused with 413 as soon as they pass `limit` (the
    multipart reader streams, so aiohttp's client_max_size does not bound it)."""
    out = bytearray()
    while True:
        chunk = await part.read_chunk(64 * 1024)
        if not chunk:
            return bytes(out)
        out += chunk
        if len(out) > limit:
            raise too_large(len(out))


async def _cid_of(content: bytes) -> str:
    if len(content) > _THREAD_HASH_BYTES:
        return await asyncio.to_thread(ipfs.cid_of, content)
    return ipfs.cid_of(content)


async def store_deliverable(app: web.Application, content: bytes) -> str:
    """Store `content` (idempotent) and return its CIDv1. With an IPFS node configured, the content is
    also added and pinned there before returning: 502 `ipfs_pin_failed` when the node cannot be
    reached or refuses, 502 `ipfs_cid_mismatch` when it names another CID. The bytes stay stored
    here either way (pinned=0), so a retry of the same upload pins them."""
    if len(content) > MAX_DELIVERABLE_BYTES:
        raise too_large(len(content))
    cid = await _cid_of(content)
    now = app[CLOCK]()
    await app[WRITER].run(lambda conn: store.put(conn, cid, content, now))
    url = app.get(IPFS_API_URL, "")
    if url:
        await pin(app, cid, content)
    return cid


async def pin(app: web.Application, cid: str, content: bytes) -> None:
    """Add and pin `content` on the configured Kubo node (a no-op when already recorded as pinned)."""
    meta = store.info(app[WALLET_DB], cid)
    if meta is not None and meta.pinned:
        return
    got = await kubo_add(app[IPFS_API_URL], content)
    if got != cid:
        raise ApiError(
            502,
            "ipfs_cid_mismatch",
            f"the IPFS node computed {got} for content whose CID is {cid}",
            type_="service_error",
        )
    await app[WRITER].run(lambda conn: store.mark_pinned(conn, cid))


async def pin_unpinned(app: web.Application, limit: int = 100) -> list[str]:
    """Pin stored content whose pin failed or predates the node's configuration, oldest first; the CIDs
    pinned. Stops at the first failure (raised as in store_deliverable); nothing to do without a node."""
    done: list[str] = []
    if not app.get(IPFS_API_URL, ""):
        return done
    for cid in store.unpinned(app[WALLET_DB], limit):
        content = store.get(app[WALLET_DB], cid)
        if content is not None:
            await pin(app, cid, content)
            done.append(cid)
    return done


async def kubo_add(api_url: str, content: bytes) -> str:
    """POST /api/v0/add to a Kubo RPC API (multipart, one file); the root CID it reports."""
    form = aiohttp.FormData()
    form.add_field("file", content, filename="deliverable", content_type="application/octet-stream")
    endpoint = api_url.rstrip("/") + "/api/v0/add"
    try:
        async with (
            aiohttp.ClientSession(timeout=KUBO_TIMEOUT) as session,
            session.post(endpoint, params=KUBO_ADD_PARAMS, data=form) as resp,
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


def _pin_failed(message: str) -> ApiError:
    return ApiError(502, "ipfs_pin_failed", message, type_="service_error")


# ---- serving ----------------------------------------------------------------------------------


def content_type(content: bytes) -> str:
    head = content[:64].lstrip()
    if len(content) <= SNIFF_LIMIT and head[:1] in (b"{", b"["):
        try:
            json.loads(content)
        except ValueError:  # includes UnicodeDecodeError
            return "application/octet-stream"
        return "application/json"
    return "application/octet-stream"


def _etag_matches(header: str, etag: str) -> bool:
    for tag in header.split(","):
        tag = tag.strip()
        if tag == "*" or tag.removeprefix("W/") == etag:
            return True
    return False


async def ipfs_get(request: web.Request) -> web.StreamResponse:
    text = request.match_info["cid"]
    try:
        cid = ipfs.canonical(text)
    except ValueError as exc:
        raise ApiError(400, "invalid_cid", f"not a CID: {text[:80]!r}", param="cid") from exc
    db = request.app[WALLET_DB]
    meta = store.info(db, cid)
    if meta is None:
        raise ApiError(404, "content_not_found", f"{cid} is not stored here", param="cid")
    etag = f'"{cid}"'
    headers = {
        "ETag": etag,
        "Cache-Control": CACHE_CONTROL,
        "X-Ipfs-Path": f"/ipfs/{text}",
        "X-Ipfs-Roots": cid,
        "X-Content-Type-Options": "nosniff",
        "Content-Security-Policy": "default-src 'none'; sandbox",
    }
    if _etag_matches(request.headers.get("If-None-Match", ""), etag):
        return web.Response(status=304, headers=headers)
    if request.method == "HEAD" and meta.size > SNIFF_LIMIT:
        headers["Content-Length"] = str(meta.size)
        return web.Response(headers=headers, content_type="application/octet-stream")
    content = store.get(db, cid)
    if content is None:  # deleted between the two reads
        raise ApiError(404, "content_not_found", f"{cid} is not stored here", param="cid")
    return web.Response(body=content, headers=headers, content_type=content_type(content))


def add_ipfs_routes(app: web.Application, ipfs_api_url: str = "") -> None:
    """Mount the gateway on an app that has the wallet routes (WALLET_DB, WRITER, CLOCK);
    `ipfs_api_url` is Settings.ipfs_api_url (empty: no pinning)."""
    app[IPFS_API_URL] = ipfs_api_url
    app.router.add_get("/ipfs/{cid}", ipfs_get)  # HEAD too (aiohttp's allow_head)


OPERATIONS: list[Operation] = [
    Operation(
        "GET",
        "/ipfs/{cid}",
        "ipfsGet",
        "Stored deliverable content by CID, like an IPFS path gateway",
        IpfsContent,
        auth="none",
        errors={400: ("invalid_cid",), 404: ("content_not_found",)},
        tags=("ipfs",),
        description="The bytes whose CID (as `ipfs add --cid-version=1` of Kubo computes it) is `cid`; "
        "CIDv0 is accepted. Immutable: ETag is the CID, If-None-Match answers 304.",
        response_headers={
            "ETag": 'the CIDv1 in double quotes, e.g. "bafk..."',
            "Cache-Control": CACHE_CONTROL,
            "X-Ipfs-Path": "/ipfs/<cid as requested>",
            "X-Ipfs-Roots": "the CIDv1 of the content",
        },
    ),
]
