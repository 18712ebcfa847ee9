"""The transparency log's public reads (no credentials): checkpoints, inclusion and consistency proofs.

- GET /api/audit/checkpoints: the log's size and root now, and every checkpoint anchored on-chain
  (as the indexer recorded the AuditAnchor.Anchored events), with block-explorer links on Base.
- GET /api/audit/proof/{audit_id}?tree_size=: the RFC 9162 inclusion proof of entry audit_id (leaf
  audit_id - 1). Without tree_size: against the latest anchored checkpoint containing the entry, or
  the current tree when none does yet.
- GET /api/audit/consistency?first=&second=: the RFC 9162 consistency proof between two tree sizes.

Merkle values (leaf hashes, roots, proof nodes) are 0x-prefixed lowercase hex (bytes32, as on
chain); chain and content hashes elsewhere are plain lowercase hex. Every proof is read from the
stored complete subtrees in O(log n) point reads (core.store.audit), never rebuilt.
"""

from __future__ import annotations

import json
from typing import Annotated, Any

from pydantic import BaseModel, ConfigDict, Field
from pydantic.json_schema import SkipJsonSchema

from api.errors import ApiError
from api.feature import Feature
from api.models import parse_query
from api.operation import Call, Operation, Reply
from core.networks import network_for
from core.services import Services
from core.store import Conn
from core.store import audit as audit_store
from core.transparency import anchor_address, checkpoint_json, entry_or_404, hex32, proof_json

Hash32 = Annotated[str, Field(pattern=r"^0x[0-9a-f]{64}$")]


def _absent(schema: dict[str, Any]) -> None:
    """An optional query parameter that is absent rather than null: no `default` in its schema."""
    schema.pop("default", None)


class _Model(BaseModel):
    model_config = ConfigDict(extra="forbid", frozen=True)


class ProofQuery(_Model):
    tree_size: Annotated[
        Annotated[int, Field(ge=1, strict=False)] | SkipJsonSchema[None],
        Field(description="default: the latest anchor holding the entry", json_schema_extra=_absent),
    ] = None


class ConsistencyQuery(_Model):
    first: Annotated[int, Field(ge=1, strict=False)]
    second: Annotated[int, Field(ge=1, strict=False)]


class CheckpointView(_Model):
    index: int
    tree_size: int
    root: Hash32
    anchorer: str
    block_number: int
    tx_hash: str
    explorer_url: str | None


class CheckpointsResponse(_Model):
    chain_id: int
    network: str
    contract: str | None
    log_size: int
    log_root: Hash32
    checkpoints: list[CheckpointView]


class ProofResponse(_Model):
    audit_id: int
    leaf_index: int
    leaf_hash: Hash32
    tree_size: int
    root: Hash32
    proof: list[Hash32]
    anchored: Annotated[bool, Field(description="tree_size is an anchored checkpoint")]
    anchor: CheckpointView | None


class ConsistencyResponse(_Model):
    first: int
    second: int
    first_root: Hash32
    second_root: Hash32
    proof: list[Hash32]


def _json(payload: dict[str, Any]) -> Reply:
    return Reply(200, json.dumps(payload).encode())


async def run_checkpoints(services: Services, call: Call) -> Reply:
    def read(conn: Conn) -> Reply:
        chain_id = services.chain_id
        size = audit_store.size(conn)
        body = {
            "chain_id": chain_id,
            "network": network_for(chain_id).name,
            "contract": anchor_address(services.deployment),
            "log_size": size,
            "log_root": hex32(audit_store.root(conn, size)),
            "checkpoints": [checkpoint_json(chain_id, a) for a in audit_store.anchors(conn, chain_id)],
        }
        return _json(body)

    return await services.reads.run(read)


async def run_proof(services: Services, call: Call) -> Reply:
    def read(conn: Conn) -> Reply:
        entry = entry_or_404(conn, call.path["audit_id"])
        q = parse_query(ProofQuery, dict(call.query))
        return _json(proof_json(conn, services.chain_id, entry, q.tree_size or 0))

    return await services.reads.run(read)


async def run_consistency(services: Services, call: Call) -> Reply:
    def read(conn: Conn) -> Reply:
        q = parse_query(ConsistencyQuery, dict(call.query))
        if q.first > q.second:
            raise ApiError(422, "invalid_tree_size", "first must not be larger than second", param="first")
        try:
            nodes = audit_store.consistency_proof(conn, q.first, q.second)
        except ValueError as exc:
            raise ApiError(422, "invalid_tree_size", str(exc), param="second") from exc
        body = {
            "first": q.first,
            "second": q.second,
            "first_root": hex32(audit_store.root(conn, q.first)),
            "second_root": hex32(audit_store.root(conn, q.second)),
            "proof": [hex32(p) for p in nodes],
        }
        return _json(body)

    return await services.reads.run(read)


OPERATIONS: list[Operation] = [
    Operation(
        "GET",
        "/api/audit/checkpoints",
        "auditCheckpoints",
        "The log's size and root, and every checkpoint anchored on-chain",
        CheckpointsResponse,
        auth="none",
        tags=("audit",),
        run=run_checkpoints,
        resource="agentledger://audit/checkpoints",
    ),
    Operation(
        "GET",
        "/api/audit/proof/{audit_id}",
        "auditInclusionProof",
        "RFC 9162 inclusion proof of an audit entry",
        ProofResponse,
        query=ProofQuery,
        auth="none",
        errors={404: ("entry_not_found",), 422: ("invalid_tree_size",)},
        tags=("audit",),
        run=run_proof,
    ),
    Operation(
        "GET",
        "/api/audit/consistency",
        "auditConsistencyProof",
        "RFC 9162 consistency proof between two tree sizes",
        ConsistencyResponse,
        query=ConsistencyQuery,
        auth="none",
        errors={422: ("invalid_tree_size",)},
        tags=("audit",),
        run=run_consistency,
    ),
]

#: The transparency log's reads; its anchoring is the runtime's job (api.app, anchor_log).
FEATURE = Feature("audit", tuple(OPERATIONS), toolset="decisions")
