"""The A2A agent cards of the service: the A2A 1.0 card at `/.well-known/agent-card.json` (the
A2A 1.0 path), and at `/.well-known/agent.json` (the path of pre-1.0 A2A, which its clients,
a2a-sdk 0.3.x among them, read) the same card in the pre-1.0 shape (protocol 0.3.0: `url` and
`preferredTransport` instead of `supportedInterfaces`, OpenAPI-style security schemes). Both are
public and answered with `Access-Control-Allow-Origin: *`, so a browser agent on another origin
can read them.

The 1.0 card is built from the pydantic models below, which follow the JSON form of A2A 1.0's
AgentCard message (camelCase names, proto3 JSON); the tests parse the served JSON with the
a2a-sdk's own AgentCard (protobuf, unknown fields refused), and the legacy card against the JSON
schema of a2a-sdk 0.3's AgentCard. URLs are absolute: taken from the
configured public URL (api.http.PUBLIC_URL) or else from the request's scheme and host.

The cards list what works and nothing else: the A2A endpoint's JSON-RPC and HTTP+JSON bindings
(api.hire.a2a) and its skill, a hire per message, and the MCP endpoint (an extension of the
capabilities, and its skill); an app without a database serves neither. The REST API is named by the
description and documentationUrl (/api/schema).
"""

from __future__ import annotations

from typing import Annotated, Any, Literal

from aiohttp import web
from pydantic import BaseModel, ConfigDict, Field
from pydantic.alias_generators import to_camel

from api.http import A2aInfo, McpInfo
from api.operation import Call, Operation, Reply
from api.policy import mount
from core.services import Services

VERSION = "1.0.0"  # the API's version, as in the OpenAPI document
A2A_PROTOCOL_VERSION = "1.0"
#: The protocol version of the legacy card (the last before 1.0, what a2a-sdk 0.3.x speaks).
A2A_LEGACY_PROTOCOL_VERSION = "0.3.0"
PATH_LEGACY = "/.well-known/agent.json"
PATH = "/.well-known/agent-card.json"
AGENT_CARD_PATHS = (PATH_LEGACY, PATH)
CACHE_CONTROL = "public, max-age=3600"
#: Any origin may read the cards (they are public; no credentials are involved).
CORS_HEADERS = {"Access-Control-Allow-Origin": "*"}
SCHEMA_PATH = "/api/schema"
BEARER = "bearer"
JSON = "application/json"


class _Card(BaseModel):
    model_config = ConfigDict(alias_generator=to_camel, populate_by_name=True, extra="forbid", frozen=True)


class AgentInterface(_Card):
    url: str
    protocol_binding: Annotated[str, Field(description="JSONRPC, GRPC or HTTP+JSON")]
    protocol_version: str


class AgentProvider(_Card):
    organization: str
    url: str


class AgentExtension(_Card):
    uri: str
    description: str | None = None
    required: bool | None = None  # absent: not required (proto3 JSON leaves a false bool out)
    params: dict[str, Any] | None = None


class AgentCapabilities(_Card):
    streaming: bool = False
    push_notifications: bool = False
    extensions: list[AgentExtension] | None = None
    extended_agent_card: bool = False


class HTTPAuthSecurityScheme(_Card):
    scheme: str
    bearer_format: str | None = None
    description: str | None = None


class SecurityScheme(_Card):
    http_auth_security_scheme: HTTPAuthSecurityScheme


class StringList(_Card):
    items: Annotated[list[str], Field(alias="list")] = Field(default_factory=list)


class SecurityRequirement(_Card):
    schemes: dict[str, StringList]


class AgentSkill(_Card):
    id: str
    name: str
    description: str
    tags: Annotated[list[str], Field(min_length=1)]
    examples: list[str] = Field(default_factory=list)
    input_modes: list[str] | None = None
    output_modes: list[str] | None = None


class AgentCard(_Card):
    """A2A 1.0 AgentCard (the subset this service fills in)."""

    name: str
    description: str
    supported_interfaces: list[AgentInterface]
    provider: AgentProvider
    version: str
    documentation_url: str
    capabilities: AgentCapabilities
    security_schemes: dict[str, SecurityScheme]
    security_requirements: list[SecurityRequirement]
    default_input_modes: list[str]
    default_output_modes: list[str]
    skills: list[AgentSkill]


#: What a message to the A2A endpoint does (api.hire.a2a): the one skill of both cards.
HIRE_SKILL = AgentSkill(
    id="hire",
    name="Hire an agent",
    description="Send a message whose one data part is {serviceType, input, maxPrice?, providerWallet?, "
    "callerWallet?} (callerWallet: the hiring agent's agl_ wallet; defaults to the agent of an agent-scoped key): "
    "the service hires the provider (the one named, else the best-scored healthy one), charged to the caller's "
    "balance only if the provider's output passes the service's output schema. The task is the hire job: "
    "completed with the output (JSON text) as its artifact, or failed with the hire's error and nothing "
    "charged. The message id makes it at most once. Services for hire: GET /api/a2a/registry.",
    tags=["hiring", "agents", "payments", "usdc"],
    examples=['{"serviceType": "keyword_research", "input": {"topic": "cold brew coffee"}, "maxPrice": 3}'],
    input_modes=["application/json"],
    output_modes=["application/json"],
)


def _description(base: str) -> str:
    return (
        "Financial backend for autonomous software agents: USDC wallets with earn/spend/balance and "
        "automatic revenue splits, escrow checkout between agents, hiring, and an anchored decision audit trail. "
        f"REST+JSON API described by the OpenAPI document at {base}{SCHEMA_PATH}."
    )


_BEARER_FORMAT = "aglk_ followed by 32 lowercase hex"
_BEARER_DESCRIPTION = "API key from POST /api/agents/register or POST /api/keys"


#: The extension URI naming the MCP server in the card (the revision it speaks first).
MCP_EXTENSION_URI = "https://modelcontextprotocol.io/specification/2026-07-28"


def mcp_extension(base: str, mcp: McpInfo) -> AgentExtension:
    """The MCP endpoint and its tools, as an extension of the card's capabilities."""
    return AgentExtension(
        uri=MCP_EXTENSION_URI,
        description="Every operation of the REST API as an MCP tool (Streamable HTTP; value-moving tools are a "
        "quote then an execute naming it). Same Bearer keys, scopes and daily caps as the REST API.",
        params={
            "endpoint": base + mcp.path,
            "transport": "streamable-http",
            "protocolVersions": list(mcp.versions),
            "protectedResourceMetadata": f"{base}/.well-known/oauth-protected-resource{mcp.path}",
            "tools": sorted(name for names in mcp.tools.values() for name in names),
        },
    )


def _skills(base: str, mcp: McpInfo | None, a2a: A2aInfo | None) -> list[AgentSkill]:
    """The skills of both cards: what the A2A endpoint's messages do (hire), and the MCP tools' when the app
    serves them (the endpoint the capabilities' extension names)."""
    skills = [] if a2a is None else [HIRE_SKILL]
    if mcp is not None:
        skills.append(
            AgentSkill(
                id="mcp",
                name="MCP tools",
                description=f"The whole API as Model Context Protocol tools at {base}{mcp.path} (Streamable HTTP, "
                f"revisions {', '.join(mcp.versions)}): wallets, checkout, decision logging, audit proofs; resources "
                "for audit entries, orders, catalogue items and the methodology.",
                tags=["mcp", "tools", "agents"],
                examples=["Connect an MCP client to agentledger and list its tools", "Quote, then spend 5 USDC"],
            )
        )
    return skills


def _interfaces(base: str, a2a: A2aInfo | None) -> list[AgentInterface]:
    """The A2A endpoint's bindings (none when this app serves no A2A endpoint: no database)."""
    if a2a is None:
        return []
    return [
        AgentInterface(url=base + a2a.jsonrpc_path, protocol_binding="JSONRPC", protocol_version=A2A_PROTOCOL_VERSION),
        AgentInterface(
            url=base + a2a.http_json_path, protocol_binding="HTTP+JSON", protocol_version=A2A_PROTOCOL_VERSION
        ),
    ]


def build_card(base: str, mcp: McpInfo | None = None, a2a: A2aInfo | None = None) -> AgentCard:
    capabilities = AgentCapabilities(
        streaming=a2a is not None, extensions=None if mcp is None else [mcp_extension(base, mcp)]
    )
    return AgentCard(
        name="agentledger",
        description=_description(base),
        supported_interfaces=_interfaces(base, a2a),
        provider=AgentProvider(organization="agentledger", url=base),
        version=VERSION,
        documentation_url=f"{base}{SCHEMA_PATH}",
        capabilities=capabilities,
        security_schemes={
            BEARER: SecurityScheme(
                http_auth_security_scheme=HTTPAuthSecurityScheme(
                    scheme="Bearer", bearer_format=_BEARER_FORMAT, description=_BEARER_DESCRIPTION
                )
            )
        },
        security_requirements=[SecurityRequirement(schemes={BEARER: StringList()})],
        default_input_modes=[JSON],
        default_output_modes=[JSON],
        skills=_skills(base, mcp, a2a),
    )


#: The headers of both cards: cacheable, and readable from any origin.
_HEADERS = {"Cache-Control": CACHE_CONTROL, **CORS_HEADERS}


async def run_agent_card(services: Services, call: Call) -> Reply:
    card = build_card(call.base_url, services.find(McpInfo), services.find(A2aInfo))
    return Reply(200, card.model_dump_json(by_alias=True, exclude_none=True).encode(), headers=_HEADERS)


# ---- the pre-1.0 card (A2A 0.3.0) ---------------------------------------------------------------


class LegacyInterface(_Card):
    url: str
    transport: str


class LegacyCapabilities(_Card):
    streaming: bool = False
    push_notifications: bool = False
    state_transition_history: bool = False
    extensions: list[AgentExtension] | None = None


class LegacyHttpAuth(_Card):
    """An OpenAPI-style HTTP security scheme, as A2A 0.3 writes one."""

    type: Literal["http"] = "http"
    scheme: str
    bearer_format: str | None = None
    description: str | None = None


class LegacyAgentCard(_Card):
    """A2A 0.3.0 AgentCard (the subset this service fills in): what pre-1.0 clients require, `url`
    (the preferred endpoint) first among them."""

    protocol_version: str
    name: str
    description: str
    url: str
    preferred_transport: str
    additional_interfaces: list[LegacyInterface]
    provider: AgentProvider
    version: str
    documentation_url: str
    capabilities: LegacyCapabilities
    security_schemes: dict[str, LegacyHttpAuth]
    security: list[dict[str, list[str]]]
    default_input_modes: list[str]
    default_output_modes: list[str]
    skills: list[AgentSkill]
    supports_authenticated_extended_card: bool = False


def build_legacy_card(base: str, mcp: McpInfo | None = None, a2a: A2aInfo | None = None) -> LegacyAgentCard:
    """The same service described in the pre-1.0 shape (A2A 0.3.0): the JSON-RPC binding, which answers
    0.3's method names too (the a2a-sdk's compatibility adapter)."""
    url = base if a2a is None else base + a2a.jsonrpc_path
    return LegacyAgentCard(
        protocol_version=A2A_LEGACY_PROTOCOL_VERSION,
        name="agentledger",
        description=_description(base),
        url=url,
        preferred_transport="JSONRPC",
        additional_interfaces=[] if a2a is None else [LegacyInterface(url=url, transport="JSONRPC")],
        provider=AgentProvider(organization="agentledger", url=base),
        version=VERSION,
        documentation_url=f"{base}{SCHEMA_PATH}",
        capabilities=LegacyCapabilities(
            streaming=a2a is not None, extensions=None if mcp is None else [mcp_extension(base, mcp)]
        ),
        security_schemes={
            BEARER: LegacyHttpAuth(scheme="bearer", bearer_format=_BEARER_FORMAT, description=_BEARER_DESCRIPTION)
        },
        security=[{BEARER: []}],
        default_input_modes=[JSON],
        default_output_modes=[JSON],
        skills=_skills(base, mcp, a2a),
    )


async def run_legacy_agent_card(services: Services, call: Call) -> Reply:
    card = build_legacy_card(call.base_url, services.find(McpInfo), services.find(A2aInfo))
    return Reply(200, card.model_dump_json(by_alias=True, exclude_none=True).encode(), headers=_HEADERS)


def add_agent_card_routes(app: web.Application) -> None:
    """The A2A 1.0 card at agent-card.json, the pre-1.0 one at agent.json (links from api.http.base_url)."""
    mount(app, OPERATIONS)


_CARD_HEADERS = {"Cache-Control": CACHE_CONTROL, **{k: "*: any origin may read it" for k in CORS_HEADERS}}

OPERATIONS: list[Operation] = [
    Operation(
        "GET",
        PATH_LEGACY,
        "getAgentCardLegacy",
        "The pre-1.0 A2A agent card (protocol 0.3.0, what a2a-sdk 0.3.x clients read)",
        LegacyAgentCard,
        auth="none",
        tags=("service",),
        response_headers=_CARD_HEADERS,
        run=run_legacy_agent_card,
        uses_database=False,
        # The same card in the pre-1.0 shape at the older path: no MCP tool of its own (a tool
        # client reads the 1.0 card, get_agent_card).
        alias_of="getAgentCard",
    ),
    Operation(
        "GET",
        PATH,
        "getAgentCard",
        "The A2A 1.0 agent card of the service",
        AgentCard,
        auth="none",
        tags=("service",),
        response_headers=_CARD_HEADERS,
        run=run_agent_card,
        uses_database=False,
    ),
]
