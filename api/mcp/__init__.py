"""The MCP server at /api/mcp: every row of the operation table as a tool (api.mcp.tools), served by
the official SDK (api.mcp.server) inside aiohttp (api.mcp.bridge), and the RFC 9728 documents."""

from __future__ import annotations

from collections.abc import Iterable

from aiohttp import web
from mcp_types.version import MODERN_PROTOCOL_VERSIONS

from api.http import MCP_INFO, McpInfo
from api.mcp.bridge import Bridge
from api.mcp.discovery import MCP_PATH, OPERATIONS, add_discovery_routes
from api.mcp.server import Tools, build_server
from api.mcp.tools import tools_by_operation
from api.operation import Operation

#: The revisions served at the one URL: the current one first, then the handshake one most clients speak.
PROTOCOL_VERSIONS = (*MODERN_PROTOCOL_VERSIONS, "2025-11-25")

__all__ = ["MCP_PATH", "OPERATIONS", "PROTOCOL_VERSIONS", "add_mcp_routes"]


def add_mcp_routes(app: web.Application, table: Iterable[Operation]) -> Tools:
    """Serve the tools and resources of `table` at /api/mcp (on an app with the wallet routes'
    READS, WRITER and CLOCK), the RFC 9728 documents, and name the endpoint for discovery."""
    tools = Tools(app, table)
    Bridge(MCP_PATH, lambda: build_server(tools)).mount(app)
    add_discovery_routes(app)
    app[MCP_INFO] = McpInfo(MCP_PATH, PROTOCOL_VERSIONS, tools_by_operation(tools.tools))
    return tools
