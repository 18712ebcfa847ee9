"""The operation table: the service's own rows and every feature's, in the order of the OpenAPI
document and of the MCP tools.

/api/schema is generated from it (api.openapi) and so are the MCP tools (api.mcp). A feature declares
its rows in its package (api.feature.Feature.operations); the features are listed in api.features.
"""

from __future__ import annotations

from collections.abc import Iterable, Sequence
from dataclasses import replace

from api import agent_card, health, openapi
from api.feature import Feature
from api.features import FEATURES
from api.mcp import OPERATIONS as MCP_DISCOVERY
from api.operation import Operation, Toolset

#: The service's own documents, served by every app (a database or not): health, this schema, the cards.
SERVICE_ROWS: tuple[Operation, ...] = (*health.OPERATIONS, *openapi.OPERATIONS, *agent_card.OPERATIONS)


#: The MCP toolset of the service's own documents and the MCP discovery documents.
SERVICE_TOOLSET: Toolset = "meta"


def _in_toolset(rows: Iterable[Operation], toolset: Toolset | None) -> list[Operation]:
    """The rows, each with its MCP toolset: its own, else `toolset` (its feature's)."""
    return [op if op.toolset is not None or toolset is None else replace(op, toolset=toolset) for op in rows]


def table(features: Sequence[Feature]) -> tuple[Operation, ...]:
    """Every row an app with `features` serves, in the document's order: the features' in their order,
    the service's own documents after the first feature's (the wallets': the API's front door) and the
    MCP discovery documents last, the order /api/schema and tools/list have always had. Each row carries
    its MCP toolset (its own, else its feature's; the service's documents: SERVICE_TOOLSET)."""
    first, *rest = (_in_toolset(feature.operations, feature.toolset) for feature in features)
    service = _in_toolset(SERVICE_ROWS, SERVICE_TOOLSET)
    return (*first, *service, *(op for ops in rest for op in ops), *_in_toolset(MCP_DISCOVERY, SERVICE_TOOLSET))


OPERATIONS: tuple[Operation, ...] = table(FEATURES)
