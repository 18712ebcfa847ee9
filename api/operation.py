"""One row of the operation table (api.operation_table.OPERATIONS), and what running one takes.

Its own module so that route modules can declare their rows beside their handlers
(`OPERATIONS: list[Operation]`) and api.openapi and api.mcp can gather them without an import cycle.

A row with `run` can be executed without HTTP: `run(services, call)` does what the route does (the route, which
api.policy.mount makes from the row, reads the request into a Call, awaits the same `run` and writes its
Reply), so a transport that is not HTTP (the MCP tools of api.mcp) calls the very same code. The row's
other fields say what the transports need to know about it: who may call it (auth, scope), whether it
moves value (quote), what the MCP annotations say (destructive, open_world) and which resource template
reads it.
"""

from __future__ import annotations

from collections.abc import Awaitable, Callable, Mapping
from dataclasses import dataclass, field
from types import MappingProxyType
from typing import TYPE_CHECKING, Any, Literal, NamedTuple, get_args

from pydantic import BaseModel

from core.errors import ServiceError
from core.keys import Caller

if TYPE_CHECKING:
    from aiohttp import web

    from core.services import Services

Auth = Literal["required", "optional", "none"]
Scope = Literal["read", "log", "spend", "admin"]
#: What of an account an operation touches, and so what an agent-scoped key may do with it (the rule is
#: core.keys.Caller.reach; an account key reaches all of its account):
#: - "agent": one agent, named by the call (an agl_ wallet or UUID, or a listing of it) or the key's own:
#:   api.auth.agent_for; an agent-scoped key reaches only its own, a sibling answers 404 as a stranger's;
#: - "held": a stored thing by its id, held by the account or by one agent of it (who made it or whom it
#:   is about): api.auth.reach; the account's needs an account key (403 account_key_required), a
#:   sibling's answers 404 as a stranger's;
#: - "account": the account as a whole (its agents, keys, provider webhooks and policies not about one
#:   agent): an agent-scoped key is refused before the run (api.policy.authorize, 403 account_key_required);
#: - "key": what this very key made (a checkout session, the order it funded): no other key reaches it;
#: - "nothing": nothing of an account (public data, a chain act signed elsewhere, a record of the caller's
#:   own): the key only authenticates, scopes and caps the call.
Touches = Literal["agent", "held", "account", "key", "nothing"]
#: The MCP toolsets (what an agent is doing): a session lists the tools of the toolsets it chose
#: (api.mcp.toolsets, which describes each). Every tool is in exactly one.
Toolset = Literal["wallet", "decisions", "checkout", "provider", "hire", "drop", "account", "meta"]
TOOLSETS: tuple[Toolset, ...] = get_args(Toolset)
#: Toolset choices beside the names: every toolset, and the compact default list (Operation.mcp_default).
ALL_TOOLSETS, DEFAULT_TOOLS = "all", "default"
_TOOLSET_NAME = "|".join((*TOOLSETS, ALL_TOOLSETS, DEFAULT_TOOLS))
#: A toolset choice as a JSON Schema pattern (what parse_toolsets takes, less blanks around names).
TOOLSETS_PATTERN = f"^({_TOOLSET_NAME})(,({_TOOLSET_NAME}))*$"


def parse_toolsets(text: str, param: str) -> frozenset[str]:
    """A comma-separated toolset choice (names, `all`, `default`) as the set of names it picks (`default`
    stays a member: the default tools); 400 unknown_toolset naming `param` for anything else."""
    names = {name.strip() for name in text.split(",") if name.strip()}
    unknown = sorted(names - {*TOOLSETS, ALL_TOOLSETS, DEFAULT_TOOLS})
    if unknown or not names:
        raise ServiceError(
            400,
            "unknown_toolset",
            (f"{param}: unknown toolset {unknown[0]!r}" if unknown else f"{param}: name at least one toolset")
            + f"; the toolsets are {', '.join(TOOLSETS)}, or {ALL_TOOLSETS} or {DEFAULT_TOOLS}",
            param=param,
        )
    if ALL_TOOLSETS in names:
        return frozenset(TOOLSETS)
    return frozenset(names)


_EMPTY: Mapping[str, str] = MappingProxyType({})


class Call(NamedTuple):
    """One call of an operation, whatever carried it: what the HTTP handler read from its request, or
    the arguments of an MCP tool. `body` is the JSON body as bytes (what Idempotency-Key digests);
    `target` the method and concrete path ("POST /api/acp/orders/ord_1/complete") an Idempotency-Key
    is scoped to, so a key means the same over every transport."""

    caller: Caller | None
    target: str
    path: Mapping[str, str] = _EMPTY
    query: Mapping[str, str] = _EMPTY
    body: bytes = b""
    idempotency_key: str | None = None
    #: The base of published links (api.http.base_url of the request, or of the MCP request).
    base_url: str = ""
    #: The HTTP request when HTTP carried the call (test seams hold it; tools have none).
    request: web.Request | None = None

    @property
    def authenticated(self) -> Caller:
        """The caller of an operation that needs a key (every transport authenticates it first)."""
        assert self.caller is not None, "an authenticated operation's call carries its caller"
        return self.caller


class Reply(NamedTuple):
    """What an operation answered: a status and its body (JSON unless media_type says otherwise);
    `replayed` when it is the stored answer of an earlier call with the same Idempotency-Key."""

    status: int
    body: bytes
    replayed: bool = False
    media_type: str = "application/json"
    headers: Mapping[str, str] = _EMPTY


@dataclass(frozen=True)
class Quoted:
    """What a value-moving call will move: `amount` micro-USDC from `source` to `recipient`, in
    words (`what`); shown to the caller before it executes and held in a key's daily cap. A quote
    raises ServiceError only for what the run would refuse alike (a malformed body, another key's
    agent); a refusal that depends on the state of things is `refusal`."""

    amount: int
    source: str
    recipient: str
    what: str
    details: Mapping[str, Any] = field(default_factory=dict)
    #: Why the call would be refused as things stand (short balance, a session no longer open): the
    #: amount is still what it names, so a retry of a call that did move it holds the same cap.
    refusal: ServiceError | None = None


#: Runs the operation: (the app whose parts it uses, the call) -> the reply; refusals raise ServiceError.
#: An operation's transport-free body: what it receives is the process's core.services.Services.
Run = Callable[["Services", Call], Awaitable[Reply]]
#: What a value-moving operation would move for this call, without moving anything.
Quote = Callable[["Services", Call], Awaitable[Quoted]]


@dataclass(frozen=True)
class Operation:
    method: str
    path: str
    operation_id: str
    summary: str
    response: type[BaseModel]
    status: int = 200
    request: type[BaseModel] | None = None
    query: type[BaseModel] | None = None
    auth: Auth = "required"
    #: A value-moving POST that honours Idempotency-Key.
    idempotent: bool = False
    #: Errors particular to this operation (status -> codes); the ones implied by auth, body,
    #: query and idempotency are added by the generator.
    errors: Mapping[int, tuple[str, ...]] = field(default_factory=dict)
    tags: tuple[str, ...] = ()
    description: str = ""
    response_headers: Mapping[str, str] = field(default_factory=dict)
    #: Media type of the success response (e.g. application/octet-stream for stored bytes).
    media_type: str = "application/json"
    #: Descriptions of the {placeholders} in `path` (each is a required string path parameter).
    path_params: Mapping[str, str] = field(default_factory=dict)
    #: The operation without HTTP (see the module doc); every row has one (a test holds it).
    run: Run | None = None
    #: The scope a key needs (core.keys.SCOPES): default read for GET, admin for anything else, none
    #: for auth="none" rows.
    scope: Scope | None = None
    #: What of an account the call touches (Touches above); every row that takes a key says it (a test
    #: holds it), auth="none" rows none.
    touches: Touches | None = None
    #: Moves value out (spend, checkout complete, hire, a marketplace purchase): what a call would
    #: move. Such a row is charged to a key's daily cap and is two MCP tools, quote then execute.
    quote: Quote | None = None
    #: Overwrites or cancels something (MCP destructiveHint; value-moving rows are destructive anyway).
    destructive: bool = False
    #: Touches the chain or a provider outside this service (MCP openWorldHint).
    open_world: bool = False
    #: Reads or writes the store, so it answers 503 database_unavailable while the database is out of
    #: reach (False: a static document, or /healthz, which reports the outage instead).
    uses_database: bool = True
    #: An RFC 6570 URI template (agentledger://...) under which MCP clients read this GET as a
    #: resource; its variables are the path's placeholders (no variable: a plain resource).
    resource: str = ""
    #: Answer fields holding provider-produced content, as {field: URI template with that field}:
    #: MCP returns them as resource links, never inline (third-party input to a model).
    links: Mapping[str, str] = field(default_factory=dict)
    #: Answer fields holding provider-produced content as text (a hire's `output`): over MCP they are
    #: left out of structuredContent, the text content and the outputSchema, and the result carries a
    #: resource link per field, readable by the key that executed the call (api.mcp). Only on a row
    #: with `quote` (the content is kept with the quote). HTTP answers them inline, as the spec says.
    content_fields: tuple[str, ...] = ()
    #: The operation id this row serves again at a second path (an older well-known path): no tool.
    alias_of: str = ""
    #: The route's own handler, for a row whose HTTP side is more than its run (a multipart upload read
    #: as it streams, an HTML page, stored bytes with their own caching): None for every other row, which
    #: api.policy.mount serves as `run` through api.policy.serve.
    handler: Callable[[web.Request], Awaitable[web.StreamResponse]] | None = None
    #: Request media types the route takes besides application/json, each with the model of its
    #: fields (e.g. multipart/form-data); any other type is refused with 415 (api.errors.ACCEPTS).
    request_forms: Mapping[str, type[BaseModel]] = field(default_factory=dict)
    #: Patterns of path parameters the route refuses (400) when they do not match.
    path_patterns: Mapping[str, str] = field(default_factory=dict)
    #: Other media types of the success response, each with its model (JSON under an Accept header...).
    response_alternatives: Mapping[str, type[BaseModel]] = field(default_factory=dict)
    #: Other success statuses without a body (e.g. 304), with their descriptions.
    other_statuses: Mapping[int, str] = field(default_factory=dict)
    #: Its MCP toolset; None: its feature's (api.feature.Feature.toolset, filled in by
    #: api.operation_table.table, which gives every row one).
    toolset: Toolset | None = None
    #: In the compact default tool list a session gets when it chooses no toolset (the core loop).
    mcp_default: bool = False
    #: Publish the response model as the tool's outputSchema (for clients that validate structured
    #: content); the other tools answer the same structuredContent without a schema, to keep the list small.
    mcp_output_schema: bool = False

    @property
    def needs_scope(self) -> Scope | None:
        """The scope a key must have to call this operation (None: any caller may)."""
        if self.auth == "none":
            return None
        if self.scope is not None:
            return self.scope
        return "read" if self.method == "GET" else "admin"
