"""Toolsets: which tools a session lists (api.operation.Toolset; every row names its own or its
feature's, api.operation_table.table).

What a request sees, in order: the toolsets it chose (`?toolsets=` on the MCP URL or the
`X-MCP-Toolsets` header: names, `all`, `default`; an unknown name is a 400 before the MCP handshake),
else its key's own choice (api_keys.mcp_toolsets), else the compact default (the rows with
mcp_default: the core loop). To that come the toolsets `enable_toolset` added, held in the database
(every process sees them) by:
- on 2025-11-25, the session (`session:<Mcp-Session-Id>`; the SDK binds a session to its key): the
  call's SSE stream carries notifications/tools/list_changed before its answer;
- on 2026-07-28, which has no session and whose tools/list must be "the set currently available to
  the requesting client", never varying per connection: the key (`key:<hash>`), so every request of
  that key, on any process, lists the same tools; list_changed goes to the key's own
  `subscriptions/listen` streams (ListenHub), the only place that revision delivers it. A request
  without a key has no identity to hold state: it chooses in the URL instead.
`list_toolsets` and `enable_toolset` are in every list. Scopes still decide what a key sees inside.
"""

from __future__ import annotations

from collections.abc import Awaitable, Callable, Iterable, Mapping
from typing import Any

import anyio
import mcp_types as t
from mcp.server.context import ServerRequestContext
from mcp.server.subscriptions import InMemorySubscriptionBus, ListenHandler, ToolsListChanged

from api.operation import DEFAULT_TOOLS, TOOLSETS, Operation, Toolset, parse_toolsets
from core.errors import ServiceError
from core.keys import Caller

#: The query parameter and header naming a request's toolsets.
QUERY, HEADER = "toolsets", "X-MCP-Toolsets"
LIST_TOOLSETS, ENABLE_TOOLSET = "list_toolsets", "enable_toolset"

DESCRIPTIONS: dict[Toolset, str] = {
    "wallet": "Balance, earnings, spending, memory, brain and runs of your agents",
    "decisions": "Log decisions to the tamper-evident log; verify entries and proofs",
    "checkout": "Buy from providers: catalogue, checkout sessions, orders",
    "provider": "Sell as a provider: items, orders, deliverables, completion attestations",
    "hire": "Find providers in the registry and hire them (standard or escrow); publish services",
    "drop": "The agent marketplace: browse, offer, list, accept, claim",
    "account": "API keys, watches and webhooks",
    "meta": "Health, OpenAPI schema, agent card and discovery documents",
}
assert set(DESCRIPTIONS) == set(TOOLSETS), "every toolset is described"


def requested(query: Mapping[str, str], headers: Mapping[str, str]) -> frozenset[str] | None:
    """The toolsets a request names (the query parameter wins), None when it names none; 400
    unknown_toolset for a name that is none."""
    if QUERY in query:
        return parse_toolsets(query[QUERY], QUERY)
    if HEADER in headers:
        return parse_toolsets(headers[HEADER], HEADER)
    return None


def chosen(explicit: frozenset[str] | None, caller: Caller | None) -> frozenset[str]:
    """The request's own choice, else its key's, else the default tools."""
    if explicit is not None:
        return explicit
    if caller is not None and caller.mcp_toolsets:
        return parse_toolsets(caller.mcp_toolsets, "mcpToolsets")
    return frozenset({DEFAULT_TOOLS})


def includes(selection: frozenset[str], op: Operation) -> bool:
    """Whether a selection (toolset names, and `default` for the default tools) lists `op`'s tools."""
    return op.toolset in selection or (DEFAULT_TOOLS in selection and op.mcp_default)


def holder(caller: Caller | None, session_id: str | None) -> str | None:
    """Who holds what enable_toolset adds: the 2025-11-25 session, else the key; None: nobody can."""
    if session_id:
        return "session:" + session_id
    if caller is not None:
        return "key:" + caller.key_hash
    return None


LIST_TOOL = t.Tool(
    name=LIST_TOOLSETS,
    title="List toolsets",
    description="The toolsets of this server: name, description, whether enabled here, tool count. "
    "Call enable_toolset to add one.",
    input_schema={"type": "object", "properties": {}, "additionalProperties": False},
    annotations=t.ToolAnnotations(read_only_hint=True, idempotent_hint=True, open_world_hint=False),
)
ENABLE_TOOL = t.Tool(
    name=ENABLE_TOOLSET,
    title="Enable a toolset",
    description="Add a toolset's tools to this session (tools/list_changed follows). Use list_toolsets first.",
    input_schema={
        "type": "object",
        "properties": {"toolset": {"type": "string", "enum": list(TOOLSETS)}},
        "required": ["toolset"],
        "additionalProperties": False,
    },
    annotations=t.ToolAnnotations(read_only_hint=False, destructive_hint=False, idempotent_hint=True),
)
DISCOVERY_TOOLS = (LIST_TOOL, ENABLE_TOOL)


def toolset_argument(arguments: Mapping[str, Any]) -> Toolset:
    """enable_toolset's one argument: a toolset name (400 unknown_toolset otherwise)."""
    extra = sorted(set(arguments) - {"toolset"})
    if extra:
        raise ServiceError(400, "unknown_field", f"{extra[0]}: Extra inputs are not permitted", param=extra[0])
    name = arguments.get("toolset")
    for toolset in TOOLSETS:
        if name == toolset:
            return toolset
    raise ServiceError(400, "unknown_toolset", f"toolset: one of {', '.join(TOOLSETS)}", param="toolset")


def overview(visible: Iterable[Operation], enabled: frozenset[str]) -> list[dict[str, Any]]:
    """list_toolsets' answer: per toolset its name, description, whether this session lists it whole,
    and how many tools it has for this caller (`visible`: the row of each tool the caller may see)."""
    counts: dict[str, int] = dict.fromkeys(TOOLSETS, 0)
    for op in visible:
        if op.toolset is not None:
            counts[op.toolset] += 1
    return [
        {"name": name, "description": DESCRIPTIONS[name], "enabled": name in enabled, "tools": counts[name]}
        for name in TOOLSETS
    ]


#: How long what a 2025-11-25 session enabled is kept (sessions end when idle for 10 minutes; the rows of
#: the ones gone are dropped when a toolset is next enabled).
SESSION_ROWS_SECONDS = 7 * 86400
#: How often a process's open listen streams look for toolsets another process enabled for their key.
WATCH_SECONDS = 1.0


class ListenHub:
    """2026-07-28 `subscriptions/listen` streams, one SDK ListenHandler (and bus) per key: a key's
    list_changed reaches that key's streams and no other's. An enable served by this process publishes
    at once; while a key has a stream open here, a watcher reads the key's enabled toolsets every
    WATCH_SECONDS and publishes when another process changed them (the database is what processes share)."""

    def __init__(self, read: Callable[[str], Awaitable[frozenset[str]]]) -> None:
        self._read = read
        self._handlers: dict[str, tuple[InMemorySubscriptionBus, ListenHandler]] = {}
        self._known: dict[str, frozenset[str]] = {}

    def _for(self, key_hash: str) -> tuple[InMemorySubscriptionBus, ListenHandler]:
        found = self._handlers.get(key_hash)
        if found is None:
            bus = InMemorySubscriptionBus()
            found = self._handlers[key_hash] = (bus, ListenHandler(bus))
        return found

    async def listen(
        self, key_hash: str, ctx: ServerRequestContext[Any, Any], params: t.SubscriptionsListenRequestParams
    ) -> t.SubscriptionsListenResult:
        """Serve one listen stream of `key_hash` until the client leaves."""
        handler = self._for(key_hash)[1]
        if key_hash not in self._known:
            self._known[key_hash] = await self._read(key_hash)
        async with anyio.create_task_group() as group:
            group.start_soon(self._watch, key_hash)
            try:
                result = await handler(ctx, params)
            finally:
                group.cancel_scope.cancel()
        return result

    async def _watch(self, key_hash: str) -> None:
        while True:
            await anyio.sleep(WATCH_SECONDS)
            await self.changed(key_hash, await self._read(key_hash))

    async def changed(self, key_hash: str, enabled: frozenset[str]) -> None:
        """The key's enabled toolsets are now `enabled`: its streams hear of it once per change."""
        found = self._handlers.get(key_hash)
        if self._known.get(key_hash) == enabled:
            return
        self._known[key_hash] = enabled
        if found is not None:
            await found[0].publish(ToolsListChanged())
