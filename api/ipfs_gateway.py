"""Deliverables on IPFS: `GET|HEAD /ipfs/{cid}` served like a path gateway (storing and pinning
are core.deliverables').

The CID is the one `ipfs add --cid-version=1` of Kubo gives (core.ipfs). Content lives in the
ipfs_objects table.

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

import json
from typing import Any

from aiohttp import web
from pydantic import RootModel

from api.errors import ApiError
from api.http import READ_DB
from api.operation import Call, Operation, Reply
from api.policy import serve
from core import ipfs
from core.store import ipfs as store

#: Bytes up to which content is examined for JSON (larger content is application/octet-stream).
SNIFF_LIMIT = 4 * 1024 * 1024
CACHE_CONTROL = "public, max-age=29030400, immutable"


class IpfsContent(RootModel[bytes]):
    """The stored bytes, as uploaded (application/json when they are a JSON object or array,
    otherwise application/octet-stream)."""


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


def _find(db: Any, text: str) -> tuple[str, store.ObjectInfo]:
    try:
        cid = ipfs.canonical(text)
    except ValueError as exc:
        raise ApiError(400, "invalid_cid", f"not a CID: {text[:80]!r}", param="cid") from exc
    meta = store.info(db, cid)
    if meta is None:
        raise ApiError(404, "content_not_found", f"{cid} is not stored here", param="cid")
    return cid, meta


def _headers(text: str, cid: str) -> dict[str, str]:
    return {
        "ETag": f'"{cid}"',
        "Cache-Control": CACHE_CONTROL,
        "X-Ipfs-Path": f"/ipfs/{text}",
        "X-Ipfs-Roots": cid,
        "X-Content-Type-Options": "nosniff",
        "Content-Security-Policy": "default-src 'none'; sandbox",
    }


async def run_ipfs_get(app: web.Application, call: Call) -> Reply:
    """The stored bytes of a CID (provider-produced content: MCP hands it out as a resource link)."""
    text = call.path["cid"]
    db = app[READ_DB]
    cid, _meta = _find(db, text)
    content = store.get(db, cid)
    if content is None:  # deleted between the two reads
        raise ApiError(404, "content_not_found", f"{cid} is not stored here", param="cid")
    return Reply(200, content, media_type=content_type(content), headers=_headers(text, cid))


async def ipfs_get(request: web.Request) -> web.StreamResponse:
    text = request.match_info["cid"]
    cid, meta = _find(request.app[READ_DB], text)
    headers = _headers(text, cid)
    if _etag_matches(request.headers.get("If-None-Match", ""), headers["ETag"]):
        return web.Response(status=304, headers=headers)
    if request.method == "HEAD" and meta.size > SNIFF_LIMIT:
        headers["Content-Length"] = str(meta.size)
        return web.Response(headers=headers, content_type="application/octet-stream")
    return await serve(request, run_ipfs_get, "none")


def add_ipfs_routes(app: web.Application) -> None:
    """Mount the gateway on an app that has a reading connection (READ_DB)."""
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
        run=run_ipfs_get,
        resource="agentledger://ipfs/{cid}",
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
