"""The operation table: every route module's rows, in the order of the OpenAPI document.

/api/schema is generated from it (api.openapi) and the MCP tools will be too. A new feature's
route module declares its OPERATIONS beside its handlers and is added here.
"""

from __future__ import annotations

import dataclasses
from typing import Annotated

from pydantic import BaseModel, ConfigDict, Field

from api import (
    agent_card,
    audit_routes,
    checkout,
    decisions,
    health,
    ipfs_gateway,
    openapi,
    provider_orders,
    providers,
    verification,
)
from api.operation import Operation
from api.wallets import operations as wallets


class DeliverableForm(BaseModel):
    """The multipart/form-data fields of a deliverable upload (api.provider_orders reads them)."""

    model_config = ConfigDict(extra="forbid")
    file: Annotated[bytes, Field(description="the deliverable's bytes, at most 32 MiB")]
    timestamp: Annotated[int, Field(description="unix seconds; within 300 s of the server's clock")]
    signature: Annotated[str, Field(pattern=provider_orders.SIGNATURE_PATTERN, description="EIP-191, 65 bytes hex")]


def _with_forms(op: Operation) -> Operation:
    # The upload also takes multipart/form-data; declared here until its row in api.provider_orders
    # names it (request_forms), so that api.errors lets the form through and /api/schema shows it.
    if (op.method, op.path) == ("POST", "/api/acp/orders/{order_id}/deliverables") and not op.request_forms:
        return dataclasses.replace(op, request_forms={"multipart/form-data": DeliverableForm})
    return op


_ROWS: tuple[Operation, ...] = (
    *wallets.OPERATIONS,
    *health.OPERATIONS,
    *openapi.OPERATIONS,
    *agent_card.OPERATIONS,
    *decisions.OPERATIONS,
    *audit_routes.OPERATIONS,
    *checkout.OPERATIONS,
    *providers.OPERATIONS,
    *provider_orders.OPERATIONS,
    *ipfs_gateway.OPERATIONS,
    *verification.OPERATIONS,
)
OPERATIONS: tuple[Operation, ...] = tuple(_with_forms(op) for op in _ROWS)
