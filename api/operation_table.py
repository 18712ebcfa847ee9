"""The operation table: the service's own rows and every feature's, in the order of the OpenAPI
document and of the MCP tools.

/api/schema is generated from it (api.openapi) and so are the MCP tools (api.mcp). A feature declares
its rows in its package (api.feature.Feature.operations); the features are listed in api.features.
"""

from __future__ import annotations

import dataclasses
from collections.abc import Sequence
from typing import Annotated

from pydantic import BaseModel, ConfigDict, Field

from api import agent_card, health, openapi, provider_orders
from api.feature import Feature
from api.features import FEATURES, TRANSITIONAL_ROWS
from api.mcp import OPERATIONS as MCP_DISCOVERY
from api.models import CanonicalJson
from api.operation import Operation


class DeliverableForm(BaseModel):
    """The multipart/form-data fields of a deliverable upload (api.provider_orders reads them)."""

    model_config = ConfigDict(extra="forbid")
    file: Annotated[bytes, Field(description="the deliverable's bytes, at most 32 MiB")]
    timestamp: Annotated[int, Field(description="unix seconds; within 300 s of the server's clock")]
    signature: Annotated[str, Field(pattern=provider_orders.SIGNATURE_PATTERN, description="EIP-191, 65 bytes hex")]


class DeliverableContent(BaseModel):
    """A JSON deliverable as api.provider_orders takes it: content with an RFC 8785 form."""

    model_config = ConfigDict(extra="forbid")
    content: dict[str, CanonicalJson]
    timestamp: Annotated[int, Field(description="unix seconds; within 300 s of the server's clock")]
    signature: Annotated[str, Field(pattern=provider_orders.SIGNATURE_PATTERN, description="EIP-191, 65 bytes hex")]


#: The CIDs this service issues (core.ipfs.cid_of: CIDv1, base32, sha2-256; raw leaves or dag-pb),
#: exactly: each string of this shape decodes as one (the last characters carry no padding bits).
ISSUED_CID_PATTERN = r"^(bafkrei|bafybei)[a-h][a-z2-7]{50}[aeimquy4]$"


class CompleteAttestation(BaseModel):
    """The provider's completion (api.provider_orders reads it): the deliverable's CID, signed."""

    model_config = ConfigDict(extra="forbid")
    cid: Annotated[str, Field(pattern=ISSUED_CID_PATTERN, description="the deliverable's CID")]
    timestamp: Annotated[int, Field(description="unix seconds; within 300 s of the server's clock")]
    signature: Annotated[str, Field(pattern=provider_orders.SIGNATURE_PATTERN, description="EIP-191, 65 bytes hex")]


_DELIVERABLES = ("POST", "/api/acp/orders/{order_id}/deliverables")
_COMPLETE = ("POST", "/api/acp/orders/{order_id}/complete")


def _with_forms(op: Operation) -> Operation:
    # Transitional (moves into the checkout package with its rows): rows of api.provider_orders
    # described as that module reads them: the upload also takes multipart/form-data, a JSON
    # deliverable's content has an RFC 8785 form, and a completion names a CID this service issued.
    # Declared here until those rows say so themselves (request_forms and the models), so that
    # api.errors lets the form through and /api/schema is exact.
    if (op.method, op.path) == _DELIVERABLES and not op.request_forms:
        return dataclasses.replace(
            op, request=DeliverableContent, request_forms={"multipart/form-data": DeliverableForm}
        )
    if (op.method, op.path) == _COMPLETE and op.request is not None and op.request.__name__ == "CompleteRequest":
        return dataclasses.replace(op, request=CompleteAttestation)
    return op


#: The service's own documents, served by every app (a database or not): health, this schema, the cards.
SERVICE_ROWS: tuple[Operation, ...] = (*health.OPERATIONS, *openapi.OPERATIONS, *agent_card.OPERATIONS)


def table(features: Sequence[Feature]) -> tuple[Operation, ...]:
    """Every row an app with `features` serves, in the document's order: the features' in their order,
    the service's own documents after the first feature's (the wallets': the API's front door) and the
    MCP discovery documents last, the order /api/schema and tools/list have always had."""
    first, *rest = (feature.operations or TRANSITIONAL_ROWS.get(feature.name, ()) for feature in features)
    rows = (*first, *SERVICE_ROWS, *(op for ops in rest for op in ops), *MCP_DISCOVERY)
    return tuple(_with_forms(op) for op in rows)


OPERATIONS: tuple[Operation, ...] = table(FEATURES)
