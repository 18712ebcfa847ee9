"""The operation table: the service's own rows and every feature's, in the order of the OpenAPI
document and of the MCP tools.

/api/schema is generated from it (api.openapi) and so are the MCP tools (api.mcp). A feature declares
its rows in its package (api.feature.Feature.operations); the features are listed in api.features.
"""

from __future__ import annotations

from collections.abc import Sequence

from api import agent_card, health, openapi
from api.feature import Feature
from api.features import FEATURES
from api.mcp import OPERATIONS as MCP_DISCOVERY
from api.operation import Operation

#: The service's own documents, served by every app (a database or not): health, this schema, the cards.
SERVICE_ROWS: tuple[Operation, ...] = (*health.OPERATIONS, *openapi.OPERATIONS, *agent_card.OPERATIONS)


def table(features: Sequence[Feature]) -> tuple[Operation, ...]:
    """Every row an app with `features` serves, in the document's order: the features' in their order,
    the service's own documents after the first feature's (the wallets': the API's front door) and the
    MCP discovery documents last, the order /api/schema and tools/list have always had."""
    first, *rest = (feature.operations for feature in features)
    return (*first, *SERVICE_ROWS, *(op for ops in rest for op in ops), *MCP_DISCOVERY)


OPERATIONS: tuple[Operation, ...] = table(FEATURES)
