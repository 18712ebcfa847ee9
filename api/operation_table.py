"""The operation table: every route module's rows, in the order of the OpenAPI document.

/api/schema is generated from it (api.openapi) and so are the MCP tools (api.mcp). A new feature's
route module declares its OPERATIONS beside its handlers (each with its `run`) and is added here.
"""

from __future__ import annotations

from api import (
    agent_card,
    audit_routes,
    checkout,
    decisions,
    health,
    hire,
    ipfs_gateway,
    marketplace,
    openapi,
    verification,
)
from api.mcp import OPERATIONS as MCP_DISCOVERY
from api.operation import Operation
from api.wallets import operations as wallets

OPERATIONS: tuple[Operation, ...] = (
    *wallets.OPERATIONS,
    *health.OPERATIONS,
    *openapi.OPERATIONS,
    *agent_card.OPERATIONS,
    *decisions.OPERATIONS,
    *audit_routes.OPERATIONS,
    *checkout.OPERATIONS,
    *ipfs_gateway.OPERATIONS,
    *hire.OPERATIONS,
    *verification.OPERATIONS,
    *marketplace.OPERATIONS,
    *MCP_DISCOVERY,
)
