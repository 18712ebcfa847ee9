"""Public verification (no credentials): /verify/{audit_id}, /methodology and the discovery document.

- GET /verify/{audit_id}: HTML for people, JSON for `Accept: application/json` (or ?format=json):
  the entry, the chain inputs, shell commands that recompute the payload, chain and leaf hashes
  with printf and sha256sum, the inclusion proof against the latest anchored checkpoint holding
  the entry (or the current tree, marked unanchored) and the anchor transaction.
- GET /methodology: every formula (HTML; JSON under Accept: application/json).
- GET /well-known/decisional-logging.json and /.well-known/decisional-logging.json: the decision
  logging service's description (Cache-Control: public, max-age=3600).
"""

from __future__ import annotations

import html
import json
import shlex
from typing import Any, Literal

from aiohttp import web
from pydantic import BaseModel, ConfigDict, RootModel

import merkle
from api.feature import Feature
from api.http import McpInfo, base_url, iso, services_of
from api.models import parse_query
from api.operation import Call, Operation, Reply
from api.policy import serve
from core import audit, decisions
from core.deployments import Deployment
from core.networks import network_for
from core.services import Services
from core.store import Conn
from core.store import audit as audit_store
from core.transparency import anchor_address, entry_or_404, proof_json

CACHE_CONTROL = "public, max-age=3600"
WELL_KNOWN_PATHS = ("/well-known/decisional-logging.json", "/.well-known/decisional-logging.json")

METHODOLOGY: dict[str, Any] = {
    "version": 1,
    "hash": "SHA-256; every hash is written as lowercase hex (Merkle values as 0x-prefixed bytes32)",
    "canonical_json": "RFC 8785 (JSON Canonicalization Scheme): sorted keys, no whitespace, "
    "ECMAScript number form, UTF-8; payloads carry no floats",
    "streams": {
        "decision": {
            "stream": "agent:<agent_uuid>",
            "payload_hash": "SHA-256(RFC8785(entry))",
            "chain_hash": 'SHA-256(agent_id + ":" + seq + ":" + prev_hash + ":" + payload_hash)',
            "entry_fields": [
                "agent_id",
                "content_hash",
                "correlation_ref",
                "event_type",
                "evidence_manifest",
                "model_id",
                "model_version",
                "timestamp",
            ],
        },
        "order": {
            "stream": "order:<order_id>",
            "chain_hash": "SHA-256(prev_hash || RFC8785(action))",
        },
        "hire": {
            "stream": "hire:<job_id>",
            "chain_hash": "SHA-256(prev_hash || RFC8785(move))",
            "read": "GET /api/a2a/hire/{jobId}/audit",
        },
    },
    "prev_hash": 'the previous chain_hash of the same stream; the literal "genesis" for its first entry (seq 1)',
    "seq": "counts from 1 per stream, without gaps",
    "merkle_tree": {
        "spec": "RFC 9162 section 2.1 (Certificate Transparency v2)",
        "leaf_index": "audit_id - 1 (entries in append order, across every stream)",
        "leaf_data": '"<audit_id>:<stream>:<chain_hash>" (ASCII)',
        "leaf_hash": "SHA-256(0x00 || leaf_data)",
        "node_hash": "SHA-256(0x01 || left || right)",
        "tree_hash": "MTH(D[n]): split at k, the largest power of two smaller than n; MTH of no leaves is SHA-256('')",
        "inclusion_proof": "RFC 9162 2.1.3 (GET /api/audit/proof/{audit_id}?tree_size=)",
        "consistency_proof": "RFC 9162 2.1.4 (GET /api/audit/consistency?first=&second=)",
    },
    "anchoring": {
        "contract": "AuditAnchor.anchor(uint64 treeSize, bytes32 root), nightly (and on demand); "
        "checkpoint(i), checkpointCount(), rootAt(treeSize); verifyInclusion(index, treeSize, leaf, proof) "
        "checks a proof on-chain against the anchored root",
        "checkpoints": "GET /api/audit/checkpoints",
    },
    "verifier": "verify <audit_id> --api URL --rpc URL: recomputes every hash, checks the proof against the root "
    "read from the chain, and consistency between consecutive anchors",
}


class FormatQuery(BaseModel):
    """?format=json or ?format=html picks the form; without it, Accept does (HTML unless it names
    application/json and not text/html)."""

    model_config = ConfigDict(extra="forbid", strict=True, frozen=True)
    format: Literal["json", "html"] | None = None


class HtmlPage(RootModel[str]):
    """A page for people (text/html)."""


def wants_json(request: web.Request) -> bool:
    chosen = parse_query(FormatQuery, dict(request.query)).format
    if chosen is not None:
        return chosen == "json"
    accept = request.headers.get("Accept", "")
    return "application/json" in accept and "text/html" not in accept


def _q(text: str) -> str:
    return shlex.quote(text)


def commands(entry: audit_store.AuditEntry) -> dict[str, str]:
    """POSIX shell commands (printf, sha256sum) recomputing the entry's hashes from its fields."""
    payload = _q(entry.payload)
    out = {"payload_hash": f"printf '%s' {payload} | sha256sum"}
    if entry.stream.startswith("agent:"):
        agent_id = entry.stream.removeprefix("agent:")
        inner = f"printf '%s' {payload} | sha256sum | cut -d' ' -f1"
        out["chain_hash"] = f"printf '%s' \"{agent_id}:{entry.seq}:{entry.prev_hash}:$({inner})\" | sha256sum"
    else:
        out["chain_hash"] = f"printf '%s%s' {_q(entry.prev_hash)} {payload} | sha256sum"
    leaf = _q(audit.leaf_data(entry.id, entry.stream, entry.chain_hash).decode())
    out["leaf_hash"] = f"printf '\\000%s' {leaf} | sha256sum"
    return out


def recompute_chain_hash(entry: audit_store.AuditEntry) -> str:
    body = entry.payload.encode()
    if entry.stream.startswith("agent:"):
        agent_id = entry.stream.removeprefix("agent:")
        return audit.decision_chain_hash(agent_id, entry.seq, entry.prev_hash, audit.sha256_hex(body))
    return audit.order_chain_hash(entry.prev_hash, body)


def _previous(conn: Any, entry: audit_store.AuditEntry) -> dict[str, Any] | None:
    """The stream's previous entry, whose chain hash must equal this entry's prev_hash."""
    prev = audit_store.by_stream_seq(conn, entry.stream, entry.seq - 1) if entry.seq > 1 else None
    if prev is None:
        return None
    return {"audit_id": prev.id, "chain_hash": prev.chain_hash, "links": prev.chain_hash == entry.prev_hash}


def verification_json(conn: Conn, deployment: Deployment, base: str, entry: audit_store.AuditEntry) -> dict[str, Any]:
    chain_id = deployment.chain_id
    payload_hash = audit.sha256_hex(entry.payload.encode())
    decision = entry.stream.startswith("agent:")
    if decision:
        chain_input = f"{entry.stream.removeprefix('agent:')}:{entry.seq}:{entry.prev_hash}:{payload_hash}"
    else:
        chain_input = entry.prev_hash + entry.payload
    leaf = audit.leaf_data(entry.id, entry.stream, entry.chain_hash)
    inclusion = proof_json(conn, chain_id, entry)
    root = bytes.fromhex(inclusion["root"][2:])
    proof = [bytes.fromhex(p[2:]) for p in inclusion["proof"]]
    anchor = inclusion["anchor"]
    reason = merkle.inclusion_failure(entry.leaf_hash, entry.leaf_index, inclusion["tree_size"], proof, root)
    if reason is None and anchor is not None and anchor["root"] != inclusion["root"]:
        reason = f"root mismatch: the log's root {inclusion['root']} is not the anchored {anchor['root']}"
    return {
        "audit_id": entry.id,
        "stream": entry.stream,
        "seq": entry.seq,
        "kind": entry.kind,
        "created_at": iso(entry.created_at),
        "payload": json.loads(entry.payload),
        "payload_canonical": entry.payload,
        "payload_hash": payload_hash,
        "prev_hash": entry.prev_hash,
        "chain_hash": entry.chain_hash,
        "chain_rule": "decision" if decision else "order",
        "chain_input": chain_input,
        "chain_hash_recomputed": recompute_chain_hash(entry),
        "leaf": {"index": entry.leaf_index, "data": leaf.decode(), "hash": "0x" + entry.leaf_hash.hex()},
        "commands": commands(entry),
        "inclusion": {
            "tree_size": inclusion["tree_size"],
            "root": inclusion["root"],
            "proof": inclusion["proof"],
            "anchored": inclusion["anchored"],
            "valid": reason is None,
            "reason": reason,
        },
        "anchor": None
        if anchor is None
        else {
            **anchor,
            "chain_id": chain_id,
            "network": network_for(chain_id).name,
            "contract": anchor_address(deployment),
        },
        "previous": _previous(conn, entry),
        "verify_command": f"verify {entry.id} --api {base} --rpc <JSON-RPC URL of chain {chain_id}>",
        "methodology_url": f"{base}/methodology",
    }


# ---- HTML ----------------------------------------------------------------------------------------

_STYLE = (
    "body{font-family:system-ui,sans-serif;max-width:60rem;margin:2rem auto;padding:0 1rem;line-height:1.5}"
    "code,pre{font-family:ui-monospace,monospace;font-size:.85rem}pre{background:#f4f4f4;padding:.75rem;"
    "overflow-x:auto;white-space:pre-wrap;word-break:break-all}td{padding:.2rem .6rem;vertical-align:top}"
    ".ok{color:#176b2c}.bad{color:#a31515}"
)


def _page(title: str, body: str) -> web.Response:
    text = (
        f'<!doctype html><html lang="en"><head><meta charset="utf-8"><title>{html.escape(title)}</title>'
        f'<meta name="viewport" content="width=device-width,initial-scale=1"><style>{_STYLE}</style></head>'
        f"<body>{body}</body></html>"
    )
    return web.Response(text=text, content_type="text/html")


def _rows(pairs: list[tuple[str, Any]]) -> str:
    cells = "".join(f"<tr><td>{html.escape(k)}</td><td><code>{html.escape(str(v))}</code></td></tr>" for k, v in pairs)
    return f"<table>{cells}</table>"


def _pre(text: str) -> str:
    return f"<pre>{html.escape(text)}</pre>"


def verification_html(v: dict[str, Any]) -> str:
    inc, anchor = v["inclusion"], v["anchor"]
    chain_ok = v["chain_hash_recomputed"] == v["chain_hash"]
    parts = [
        f"<h1>Audit entry {v['audit_id']}</h1>",
        _rows([("stream", v["stream"]), ("seq", v["seq"]), ("kind", v["kind"]), ("created", v["created_at"])]),
        "<h2>Chain hash</h2>",
        f'<p class="{"ok" if chain_ok else "bad"}">recomputed chain hash '
        f"{'matches' if chain_ok else 'DOES NOT match'} the stored one.</p>",
        _rows(
            [
                ("payload (RFC 8785)", v["payload_canonical"]),
                ("payload_hash", v["payload_hash"]),
                ("prev_hash", v["prev_hash"]),
                ("chain input", v["chain_input"]),
                ("chain_hash", v["chain_hash"]),
            ]
        ),
        "<p>Recompute it yourself:</p>",
        _pre(v["commands"]["chain_hash"]),
        "<h2>Merkle leaf</h2>",
        _rows([("leaf index", v["leaf"]["index"]), ("leaf data", v["leaf"]["data"]), ("leaf hash", v["leaf"]["hash"])]),
        _pre(v["commands"]["leaf_hash"]),
        "<h2>Inclusion proof</h2>",
        _rows(
            [
                ("tree size", inc["tree_size"]),
                ("root", inc["root"]),
                ("anchored", "yes" if inc["anchored"] else "not yet (proof against the current tree)"),
                ("proof valid", "yes" if inc["valid"] else f"NO: {inc['reason']}"),
            ]
        ),
        _pre("\n".join(inc["proof"]) or "(empty: the tree has one leaf)"),
    ]
    if anchor is not None:
        link = anchor["tx_hash"]
        if anchor["explorer_url"]:
            link = f'<a href="{html.escape(anchor["explorer_url"])}">{html.escape(anchor["tx_hash"])}</a>'
        else:
            link = f"<code>{html.escape(link)}</code>"
        parts += [
            "<h2>Anchor</h2>",
            _rows(
                [
                    ("chain", f"{anchor['network']} ({anchor['chain_id']})"),
                    ("contract", anchor["contract"] or ""),
                    ("checkpoint", anchor["index"]),
                    ("block", anchor["block_number"]),
                ]
            ),
            f"<p>transaction: {link}</p>",
        ]
    parts += [
        "<h2>Verify independently</h2>",
        _pre(v["verify_command"]),
        f'<p>Formulas: <a href="{html.escape(v["methodology_url"])}">methodology</a>.</p>',
    ]
    return "".join(parts)


async def run_verify(services: Services, call: Call) -> Reply:
    parse_query(FormatQuery, dict(call.query))  # the route's query rule (a tool answers JSON whatever it says)

    def read(conn: Conn) -> dict[str, Any]:
        return verification_json(conn, services.deployment, call.base_url, entry_or_404(conn, call.path["audit_id"]))

    return _json(await services.reads.run(read))


async def verify_page(request: web.Request) -> web.Response:
    if wants_json(request):
        return await serve(request, run_verify, "none")
    base = base_url(request)
    services = services_of(request.app)

    def read(conn: Conn) -> dict[str, Any]:
        return verification_json(conn, services.deployment, base, entry_or_404(conn, request.match_info["audit_id"]))

    v = await services.reads.run(read)
    return _page(f"Audit entry {v['audit_id']}", verification_html(v))


def _json(payload: dict[str, Any], headers: dict[str, str] | None = None) -> Reply:
    return Reply(200, json.dumps(payload).encode(), headers=headers or {})


def methodology_html() -> str:
    m = METHODOLOGY
    d, o, t = m["streams"]["decision"], m["streams"]["order"], m["merkle_tree"]
    return "".join(
        [
            "<h1>Methodology</h1>",
            f"<p>Hash: {html.escape(m['hash'])}. Canonical JSON: {html.escape(m['canonical_json'])}.</p>",
            "<h2>Decision logs (stream agent:&lt;agent_uuid&gt;)</h2>",
            _pre(
                f"payload_hash = {d['payload_hash']}\nchain_hash   = {d['chain_hash']}\n"
                f"entry fields: {', '.join(d['entry_fields'])}"
            ),
            "<h2>Orders (stream order:&lt;order_id&gt;)</h2>",
            _pre(f"chain_hash = {o['chain_hash']}"),
            _pre(f"prev_hash: {m['prev_hash']}\nseq: {m['seq']}"),
            "<h2>The transparency log (RFC 9162 Merkle tree)</h2>",
            _pre("\n".join(f"{k:18} {t[k]}" for k in t)),
            "<h2>Anchoring</h2>",
            _pre(f"{m['anchoring']['contract']}\n{m['anchoring']['checkpoints']}"),
            "<h2>Verifying</h2>",
            _pre(m["verifier"]),
        ]
    )


async def run_methodology(services: Services, call: Call) -> Reply:
    parse_query(FormatQuery, dict(call.query))  # the route's query rule (a tool answers JSON whatever it says)
    return _json(METHODOLOGY)


async def methodology(request: web.Request) -> web.Response:
    if wants_json(request):
        return await serve(request, run_methodology, "none")
    return _page("Methodology", methodology_html())


def discovery(base: str, mcp: McpInfo | None = None) -> dict[str, Any]:
    doc = {
        "service": "agentledger decision logging",
        "version": 1,
        "endpoint": f"{base}/api/agents/{{agent_uuid}}/log",
        "method": "POST",
        "auth": "Authorization: Bearer <API key> scoped to the agent or its account",
        "idempotency": "Idempotency-Key header supported (24 h)",
        "tiers": {
            "routine": "everyday decisions",
            "high_stakes": "decisions with material consequences for a person or for money",
            "critical": "irreversible or safety- or money-critical decisions; an evidence_manifest of at least "
            "one item is required",
        },
        "fields": {
            "required": ["event_type", "content_hash", "model_id", "model_version"],
            "optional": ["evidence_manifest", "correlation_ref", "webhook_url", "webhook_secret"],
            "unknown_fields": "rejected (400 unknown_field)",
        },
        "evidence": {
            "accepted": "hashes only: evidence_manifest = [{type: pdf|json|text, sha256: 64 lowercase hex}]",
            "max_items": decisions.MAX_EVIDENCE_ITEMS,
            "raw_content": "rejected with 400 evidence_content_not_accepted",
        },
        "rate_limit": {
            "limit": decisions.RATE_LIMIT_PER_HOUR,
            "per": "API key",
            "window": "fixed, resets at the top of every UTC hour",
            "exceeded": "429 with Retry-After and retry_after_seconds",
        },
        "webhook": {
            "event": decisions.EVENT,
            "when": "webhook_url given; sent after the entry is committed, retried at least once per event id",
            "signature": "X-Service-Signature: sha256=HMAC-SHA256(webhook_secret, body) and Standard Webhooks "
            "headers; a random 32-byte hex secret when webhook_secret is absent",
            "payload": "{event, job_id (audit_id), status (tier), timestamp, metadata{audit_id, agent_uuid, tier, "
            "chain_hash, content_hash}}",
            "stored": "only the delivery itself",
            "secret": "when webhook_url is given without webhook_secret, the 201 returns the generated secret once "
            "as webhook_secret; it is kept only in the delivery row, and an Idempotency-Key replay omits it (send your "
            "own webhook_secret if you may retry)",
        },
        "verification": {
            "page": f"{base}/verify/{{audit_id}}",
            "checkpoints": f"{base}/api/audit/checkpoints",
            "inclusion_proof": f"{base}/api/audit/proof/{{audit_id}}?tree_size=",
            "consistency_proof": f"{base}/api/audit/consistency?first=&second=",
            "cli": "verify <audit_id> --api URL --rpc URL",
            "anchoring": "Merkle root anchored on-chain (AuditAnchor) nightly",
        },
        "methodology": f"{base}/methodology",
    }
    if mcp is not None:
        doc["mcp"] = {
            "endpoint": base + mcp.path,
            "protocol_versions": list(mcp.versions),
            "tools": [name for op in ("logDecision", "verifyEntry") for name in mcp.tools.get(op, ())],
            "resources": ["agentledger://audit/{audit_id}", "agentledger://methodology"],
        }
    return doc


async def run_well_known(services: Services, call: Call) -> Reply:
    return _json(discovery(call.base_url, services.find(McpInfo)), {"Cache-Control": CACHE_CONTROL})


class _Loose(BaseModel):
    model_config = ConfigDict(extra="allow")


class Verification(_Loose):
    """The entry, its chain inputs, shell commands, inclusion proof and anchor (see /methodology)."""

    audit_id: int
    stream: str
    seq: int
    chain_hash: str
    prev_hash: str
    inclusion: dict[str, Any]
    anchor: dict[str, Any] | None


class Methodology(_Loose):
    """Every formula: both chain rules, RFC 8785 canonicalisation, the Merkle leaf and tree."""


class DecisionLoggingDiscovery(_Loose):
    """Endpoint, tiers, rate limit, verification, evidence options, webhook behaviour."""

    endpoint: str
    tiers: dict[str, str]
    methodology: str


OPERATIONS: list[Operation] = [
    Operation(
        "GET",
        "/verify/{audit_id}",
        "verifyEntry",
        "Verify an audit entry (HTML, or JSON with Accept: application/json or ?format=json)",
        Verification,
        query=FormatQuery,
        response_alternatives={"text/html": HtmlPage},
        auth="none",
        errors={404: ("entry_not_found",)},
        tags=("decisions",),
        path_params={"audit_id": "the entry's integer audit_id"},
        run=run_verify,
        handler=verify_page,
        resource="agentledger://audit/{audit_id}",
    ),
    Operation(
        "GET",
        "/methodology",
        "methodology",
        "The formulas (HTML, or JSON with Accept: application/json or ?format=json)",
        Methodology,
        query=FormatQuery,
        response_alternatives={"text/html": HtmlPage},
        auth="none",
        tags=("decisions",),
        run=run_methodology,
        handler=methodology,
        resource="agentledger://methodology",
        uses_database=False,
    ),
    *(
        Operation(
            "GET",
            path,
            op_id,
            "Decision logging discovery document",
            DecisionLoggingDiscovery,
            auth="none",
            tags=("decisions",),
            response_headers={"Cache-Control": "public, max-age=3600"},
            run=run_well_known,
            alias_of=alias,
            uses_database=False,
        )
        for path, op_id, alias in (
            ("/well-known/decisional-logging.json", "decisionLoggingDiscoveryLegacy", "decisionLoggingDiscovery"),
            ("/.well-known/decisional-logging.json", "decisionLoggingDiscovery", ""),
        )
    ),
]


#: Public verification: pages and JSON for anyone checking an entry against the anchored log.
FEATURE = Feature("verification", tuple(OPERATIONS))
