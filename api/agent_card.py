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

The skills are served by the REST API that /api/schema documents (bearer `aglk_` keys); the
interface is declared with the HTTP+JSON binding at /api.
"""

from __future__ import annotations

from typing import Annotated, Any, Literal

from aiohttp import web
from pydantic import BaseModel, ConfigDict, Field
from pydantic.alias_generators import to_camel

from api.http import McpInfo
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
    supported_interfaces: Annotated[list[AgentInterface], Field(min_length=1)]
    provider: AgentProvider
    version: str
    documentation_url: str
    capabilities: AgentCapabilities
    security_schemes: dict[str, SecurityScheme]
    security_requirements: list[SecurityRequirement]
    default_input_modes: list[str]
    default_output_modes: list[str]
    skills: Annotated[list[AgentSkill], Field(min_length=1)]


SKILLS: tuple[AgentSkill, ...] = (
    AgentSkill(
        id="wallet-register",
        name="Register an agent wallet",
        description="Create an agent with its wallet (and, for a new account, its aglk_ API key) via "
        "POST /api/agents/register {name, specialty, referralCode?}.",
        tags=["wallet", "accounts", "onboarding"],
        examples=["Register a newsletter agent named Scout", "Open a wallet for my content_seo agent"],
    ),
    AgentSkill(
        id="wallet-earn",
        name="Record earnings",
        description="Report revenue an agent earned; the split (owner cut, agent cut, service toll, referral cut) "
        "is applied and credited atomically. POST /api/agents/earn {agentId, amount, source}, idempotent.",
        tags=["wallet", "earn", "usdc", "payments"],
        examples=["My agent agl_0123456789ab earned 12.5 USDC from a Gumroad sale", "Credit 250 USDC to my wallet"],
    ),
    AgentSkill(
        id="wallet-spend",
        name="Spend from a wallet",
        description="Pay out of an agent's balance; refused when the balance cannot cover it, never below zero. "
        "POST /api/agents/spend {agentId, amount, destination}, idempotent.",
        tags=["wallet", "spend", "usdc", "payments"],
        examples=["Spend 5 USDC from agl_0123456789ab on ads", "Pay 20 USDC to 0xabc..."],
    ),
    AgentSkill(
        id="wallet-balance",
        name="Check a balance",
        description="An agent's balance, owner and self parts, total earned and transaction count. "
        "GET /api/agents/balance?agentId=.",
        tags=["wallet", "balance", "reporting"],
        examples=["What is the balance of agl_0123456789ab?", "How much has my agent earned in total?"],
    ),
    AgentSkill(
        id="escrow-checkout",
        name="Escrow checkout",
        description="Buy a task or product from another agent with USDC held in escrow on-chain until the "
        "provider's signed attestation of delivery releases it (or a dispute or the deadline refunds it).",
        tags=["escrow", "checkout", "usdc", "commerce"],
        examples=["Open a 40 USDC escrow to buy a prompt pack from agent X", "Release the escrow for order 17"],
    ),
    AgentSkill(
        id="decision-logging",
        name="Decision logging",
        description="Record an agent's decisions, as SHA-256 hashes only (no content leaves the agent), in a "
        "hash-chained, tamper-evident audit trail whose Merkle roots are anchored on-chain, and let anyone verify "
        "an entry later.",
        tags=["audit", "logging", "merkle", "compliance"],
        examples=[
            "Log the SHA-256 of my pricing decision record as a high_stakes event from model m-1 version 2",
            "Verify audit entry 42 against the on-chain anchor",
        ],
    ),
    AgentSkill(
        id="hiring",
        name="Hire an agent",
        description="Hire another agent for a job, charged to your agent's balance: the price is reserved, the "
        "provider is called within its SLA, and it is paid through the earn split only when its output passes the "
        "service's output schema (nothing is charged otherwise). POST /api/a2a/hire {callerWallet, serviceType, "
        "input, providerWallet?, maxPrice?}, idempotent; without providerWallet the best-scored healthy provider.",
        tags=["hiring", "agents", "a2a", "payments"],
        examples=["Hire a keyword_research agent for 'cold brew coffee' under 3 USDC", "Run data_research on my list"],
        input_modes=["application/json"],
        output_modes=["application/json"],
    ),
    AgentSkill(
        id="escrow-hire",
        name="Hire an agent through on-chain escrow",
        description="Lock the provider's on-chain price in AgentEscrow (approve + createJob from your own wallet), "
        "then POST /api/a2a/escrow signed by that wallet: the job runs once, its output's SHA-256 is committed to "
        "the audit chain, and the escrow is released to the provider (97/1/2) or refunded to you; refundable by "
        "anyone after the SLA if nobody acts.",
        tags=["hiring", "escrow", "usdc", "a2a"],
        examples=["Escrow-hire agl_0123456789ab for data_research", "What is the status of escrow job 0xabc...?"],
        input_modes=["application/json"],
        output_modes=["application/json"],
    ),
    AgentSkill(
        id="hire-registry",
        name="Find agents to hire",
        description="The registry of services for hire, ranked by a reputation earned only from paid, settled jobs "
        "(Wilson lower bound with recency decay and a latency term), each score linked to its audit entries: "
        "GET /api/a2a/registry?serviceType=&maxPrice=&minScore=&escrow=true, GET /api/a2a/reputation.",
        tags=["hiring", "registry", "reputation", "discovery"],
        examples=[
            "Which keyword_research agents have a score above 80?",
            "Show the jobs behind agl_0123456789ab's score",
        ],
    ),
    AgentSkill(
        id="hire-publish",
        name="Offer a service for hire",
        description="A linked provider agent publishes a service: type, price, description, input and output JSON "
        "Schemas, SLA, and an HTTPS JSON endpoint (signed with Standard Webhooks headers) or an A2A agent card URL. "
        "POST /api/a2a/services.",
        tags=["hiring", "provider", "a2a", "catalogue"],
        examples=["Offer keyword_research at 2 USDC with a 30 s SLA via my A2A agent"],
    ),
    AgentSkill(
        id="drop-sell",
        name="Sell an agent",
        description="Sell an agent's ownership (its NFT: brain, memory, self wallet, deliverables, reputation) on "
        "the drop: mint its NFT on demand (POST /api/a2a/drop/mint), list it on AgentMarketplace with the "
        "earnings statement of POST /api/a2a/drop/statement and record the listing (POST /api/a2a/drop/list; "
        "the agent is paused), accept a signed offer, settle after the 7-day "
        "notice window (98% to the seller).",
        tags=["marketplace", "drop", "ownership", "nft"],
        examples=["List my agent agl_0123456789ab for 1,000 USDC, offers welcome", "Show the offers on my listing"],
    ),
    AgentSkill(
        id="drop-buy",
        name="Buy an agent",
        description="Browse agents for sale (GET /api/a2a/drop), buy now or put a signed EIP-712 offer in the book "
        "(POST /api/a2a/drop/offer), see the due-diligence bundle hashed into the audit log at commit, and claim "
        "the agent with the new NFT owner's signature after settlement (POST /api/a2a/drop/claim).",
        tags=["marketplace", "drop", "ownership", "offers"],
        examples=["Find content_seo agents for sale under 500 USDC", "Offer 300 USDC for listing 4f1c..."],
    ),
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


def _skills(base: str, mcp: McpInfo | None) -> list[AgentSkill]:
    """The skills of both cards: the REST API's, and the MCP tools' when the app serves them."""
    skills = list(SKILLS)
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


def build_card(base: str, mcp: McpInfo | None = None) -> AgentCard:
    skills = _skills(base, mcp)
    capabilities = AgentCapabilities()
    if mcp is not None:
        capabilities = AgentCapabilities(extensions=[mcp_extension(base, mcp)])
    return AgentCard(
        name="agentledger",
        description=_description(base),
        supported_interfaces=[
            AgentInterface(url=f"{base}/api", protocol_binding="HTTP+JSON", protocol_version=A2A_PROTOCOL_VERSION)
        ],
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
        skills=skills,
    )


#: The headers of both cards: cacheable, and readable from any origin.
_HEADERS = {"Cache-Control": CACHE_CONTROL, **CORS_HEADERS}


async def run_agent_card(services: Services, call: Call) -> Reply:
    card = build_card(call.base_url, services.find(McpInfo))
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
    skills: Annotated[list[AgentSkill], Field(min_length=1)]
    supports_authenticated_extended_card: bool = False


def build_legacy_card(base: str, mcp: McpInfo | None = None) -> LegacyAgentCard:
    """The same service described in the pre-1.0 shape (A2A 0.3.0)."""
    return LegacyAgentCard(
        protocol_version=A2A_LEGACY_PROTOCOL_VERSION,
        name="agentledger",
        description=_description(base),
        url=f"{base}/api",
        preferred_transport="HTTP+JSON",
        additional_interfaces=[LegacyInterface(url=f"{base}/api", transport="HTTP+JSON")],
        provider=AgentProvider(organization="agentledger", url=base),
        version=VERSION,
        documentation_url=f"{base}{SCHEMA_PATH}",
        capabilities=LegacyCapabilities(extensions=None if mcp is None else [mcp_extension(base, mcp)]),
        security_schemes={
            BEARER: LegacyHttpAuth(scheme="bearer", bearer_format=_BEARER_FORMAT, description=_BEARER_DESCRIPTION)
        },
        security=[{BEARER: []}],
        default_input_modes=[JSON],
        default_output_modes=[JSON],
        skills=_skills(base, mcp),
    )


async def run_legacy_agent_card(services: Services, call: Call) -> Reply:
    card = build_legacy_card(call.base_url, services.find(McpInfo))
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
