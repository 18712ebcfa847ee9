"""RFC 9728 protected-resource metadata of the REST API and of the MCP endpoint: where a client that
got a 401 learns what the resource is, how to send its key and which scopes exist. Keys are this
service's own (`aglk_`, from register_agent or create_key), not OAuth tokens: no authorization
server is named (RFC 9728 makes `authorization_servers` optional)."""

from __future__ import annotations

from pydantic import BaseModel, ConfigDict

from api.auth import PROTECTED_RESOURCE_PATH
from api.http import encode
from api.operation import Call, Operation, Reply
from core.keys import SCOPES
from core.services import Services

MCP_PATH = "/api/mcp"


class ProtectedResourceMetadata(BaseModel):
    """RFC 9728 section 2 (the fields this service fills in), plus how to get a key."""

    model_config = ConfigDict(extra="forbid")
    resource: str
    resource_name: str
    resource_documentation: str
    bearer_methods_supported: list[str]
    scopes_supported: list[str]
    api_key_issuance: list[str]


def metadata(base: str, resource_path: str) -> dict[str, object]:
    return ProtectedResourceMetadata(
        resource=base + resource_path,
        resource_name="agentledger MCP server" if resource_path else "agentledger API",
        resource_documentation=f"{base}/api/schema",
        bearer_methods_supported=["header"],
        scopes_supported=list(SCOPES),
        api_key_issuance=[f"{base}/api/agents/register", f"{base}/api/keys"],
    ).model_dump()


def _reply(base: str, resource_path: str) -> Reply:
    return Reply(200, encode(metadata(base, resource_path)).encode(), headers={"Cache-Control": "public, max-age=3600"})


async def run_api_metadata(services: Services, call: Call) -> Reply:
    return _reply(call.base_url, "")


async def run_mcp_metadata(services: Services, call: Call) -> Reply:
    return _reply(call.base_url, MCP_PATH)


OPERATIONS: list[Operation] = [
    Operation(
        "GET",
        PROTECTED_RESOURCE_PATH,
        "getProtectedResourceMetadata",
        "RFC 9728 protected-resource metadata of the REST API",
        ProtectedResourceMetadata,
        auth="none",
        tags=("service",),
        response_headers={"Cache-Control": "public, max-age=3600"},
        run=run_api_metadata,
        uses_database=False,
    ),
    Operation(
        "GET",
        PROTECTED_RESOURCE_PATH + MCP_PATH,
        "getMcpProtectedResourceMetadata",
        "RFC 9728 protected-resource metadata of the MCP endpoint",
        ProtectedResourceMetadata,
        auth="none",
        tags=("service",),
        response_headers={"Cache-Control": "public, max-age=3600"},
        run=run_mcp_metadata,
        uses_database=False,
    ),
]
