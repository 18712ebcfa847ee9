"""The MCP server at /api/mcp: every row of the operation table as a tool (api.mcp.tools) in its
toolset (api.mcp.toolsets), the caller's agents as resources and the prompts (api.mcp.agent_context),
served by the official SDK (api.mcp.server) inside aiohttp (api.mcp.bridge), and the RFC 9728 documents."""

from __future__ import annotations

from collections.abc import Iterable

from aiohttp import web
from mcp_types.version import MODERN_PROTOCOL_VERSIONS

from api.http import McpInfo, services_of
from api.mcp.bridge import Bridge
from api.mcp.discovery import MCP_PATH, OPERATIONS
from api.mcp.server import Tools, build_server
from api.mcp.tools import tools_by_operation
from api.operation import Operation
from api.policy import mount

#: The revisions served at the one URL: the current one first, then the handshake one most clients speak.
PROTOCOL_VERSIONS = (*MODERN_PROTOCOL_VERSIONS, "2025-11-25")

__all__ = ["MCP_PATH", "OPERATIONS", "PROTOCOL_VERSIONS", "add_mcp_routes"]


def add_mcp_routes(app: web.Application, table: Iterable[Operation]) -> Tools:
    """Serve the tools and resources of `table` at /api/mcp (on an app whose Services have a
    database), the RFC 9728 documents, and name the endpoint for discovery (the McpInfo part of its
    Services: the agent cards and discovery documents list its tools)."""
    services = services_of(app)
    tools = Tools(services, table)
    Bridge(MCP_PATH, lambda: build_server(tools)).mount(app)
    mount(app, OPERATIONS)
    services.provide(McpInfo(MCP_PATH, PROTOCOL_VERSIONS, tools_by_operation(tools.tools)))
    return tools
