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
  for text not shaped like a CID (CID_PATTERN: CIDv0 "Qm..." base58, or CIDv1 in base32, base36
  or base58btc); 404 `content_not_found` for anything else not stored here
  (including text of that shape that does not decode as a CID). CIDv0 is looked up as its CIDv1
  equivalent. No Range support.
"""

from __future__ import annotations

import json
import re
from typing import Any

from aiohttp import web
from pydantic import RootModel

from api.errors import ApiError
from api.feature import Feature
from api.http import services_of
from api.operation import Call, Operation, Reply
from api.policy import serve
from core import ipfs
from core.services import Services
from core.store import Conn
from core.store import ipfs as store

#: Bytes up to which content is examined for JSON (larger content is application/octet-stream).
SNIFF_LIMIT = 4 * 1024 * 1024
CACHE_CONTROL = "public, max-age=29030400, immutable"


#: What a CID looks like: a CIDv0 (base58btc, "Qm" + 44), or a CIDv1 in the multibases gateways
#: read (base32 b/B, base36 k/K, base58btc z); its length bounds that of the digest.
CID_PATTERN = (
    r"^(Qm[1-9A-HJ-NP-Za-km-z]{44}|b[a-z2-7]{50,200}|B[A-Z2-7]{50,200}|k[0-9a-z]{40,200}|K[0-9A-Z]{40,200}"
    r"|z[1-9A-HJ-NP-Za-km-z]{40,200})$"
)
_CID_RE = re.compile(CID_PATTERN)


class IpfsContent(RootModel[bytes]):
    """The stored bytes, as uploaded (when they are not a JSON object or array)."""


class IpfsJson(RootModel[dict[str, Any] | list[Any]]):
    """Stored bytes that are a JSON object or array (what an upload of `{content: {...}}` stores)."""


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


def _find(db: Conn, text: str) -> tuple[str, store.ObjectInfo]:
    if not _CID_RE.fullmatch(text):
        raise ApiError(400, "invalid_cid", f"not a CID: {text[:80]!r}", param="cid")
    try:
        cid = ipfs.canonical(text)
    except ValueError:  # shaped like one, but no CID: nothing is stored under it
        raise ApiError(404, "content_not_found", f"{text} is not stored here", param="cid") from None
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


async def run_ipfs_get(services: Services, call: Call) -> Reply:
    """The stored bytes of a CID (provider-produced content: MCP hands it out as a resource link)."""
    text = call.path["cid"]

    def read(db: Conn) -> tuple[str, bytes]:
        cid, _meta = _find(db, text)
        content = store.get(db, cid)
        if content is None:  # deleted between the two reads
            raise ApiError(404, "content_not_found", f"{cid} is not stored here", param="cid")
        return cid, content

    cid, content = await services.reads.run(read)
    return Reply(200, content, media_type=content_type(content), headers=_headers(text, cid))


async def ipfs_get(request: web.Request) -> web.StreamResponse:
    text = request.match_info["cid"]
    cid, meta = await services_of(request.app).reads.run(lambda db: _find(db, text))
    headers = _headers(text, cid)
    if _etag_matches(request.headers.get("If-None-Match", ""), headers["ETag"]):
        return web.Response(status=304, headers=headers)
    if request.method == "HEAD" and meta.size > SNIFF_LIMIT:
        headers["Content-Length"] = str(meta.size)
        return web.Response(headers=headers, content_type="application/octet-stream")
    return await serve(request, run_ipfs_get, "none")


OPERATIONS: list[Operation] = [
    Operation(
        "GET",
        "/ipfs/{cid}",
        "ipfsGet",
        "Stored deliverable content by CID, like an IPFS path gateway",
        IpfsContent,
        auth="none",
        errors={400: ("invalid_cid",), 404: ("content_not_found",)},
        media_type="application/octet-stream",
        response_alternatives={"application/json": IpfsJson},
        other_statuses={304: "Not Modified: If-None-Match names the ETag (or is *)"},
        path_patterns={"cid": CID_PATTERN},
        path_params={"cid": "a CIDv0 (Qm...) or a CIDv1 (base32 b..., base36 k..., base58btc z...)"},
        tags=("ipfs",),
        run=run_ipfs_get,
        handler=ipfs_get,
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

#: Reads only: the deliverables it serves are stored and pinned by the checkout's provider orders.
FEATURE = Feature("ipfs", tuple(OPERATIONS), toolset="provider")
