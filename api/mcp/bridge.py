"""Hosting the SDK's Streamable HTTP transport in aiohttp: one route at /api/mcp, a small ASGI bridge.

aiohttp-asgi would do, but its receive() returns an empty body forever once the body is read, and
the SDK's disconnect watchers (SSE responses, the standalone GET stream) loop on receive(): the
loop spins. Here receive() hands over the body once, then blocks until the response is done or the
peer went away. The SDK's session manager serves both revisions at the one URL (the
MCP-Protocol-Version header picks): 2026-07-28 statelessly, 2025-11-25 with initialize and
Mcp-Session-Id sessions, which the manager binds to the key that opened them.

Before the SDK sees a request, the bridge (in this order): checks Host and Origin against DNS
rebinding (421 / 403), reads the body (413 past MAX_BODY), refuses a JSON-RPC batch (neither
revision takes one; a clean -32600 rather than the SDK's validation message, which echoes the body)
and a message that names a key twice in one object (-32600 duplicate_key: the SDK's parser would
keep the last one silently, the REST API refuses such a body alike), and authenticates the Bearer
key: none is an anonymous caller (public tools only); a malformed or unknown one is 401 with a
WWW-Authenticate challenge naming the RFC 9728 metadata document.
"""

from __future__ import annotations

import asyncio
import json
from collections.abc import AsyncIterator, Callable
from typing import Any
from urllib.parse import urlsplit

from aiohttp import web
from mcp.server import Server
from mcp.server.auth.middleware.auth_context import auth_context_var
from mcp.server.auth.middleware.bearer_auth import AuthenticatedUser
from mcp.server.auth.provider import AccessToken
from mcp.server.streamable_http_manager import StreamableHTTPSessionManager
from mcp.server.transport_security import TransportSecurityMiddleware, TransportSecuritySettings
from starlette.requests import Request as StarletteRequest

from api import asgi
from api.auth import lookup_key, resource_metadata_url
from api.errors import OWN_BODY
from api.http import PUBLIC_URL, base_url, services_of
from api.mcp import toolsets
from api.mcp.server import BASE_URL, CALLER, TOOLSETS
from core.errors import ServiceError
from core.jsontext import DuplicateKey, unique_object
from core.keys import KEY_RE, Caller

#: Largest request body (JSON-RPC messages are small; arguments are bounded by the REST limits).
MAX_BODY = 1024 * 1024
#: Idle legacy sessions are dropped after this long.
SESSION_IDLE_SECONDS = 600

LOOPBACK_HOSTS = ["127.0.0.1:*", "localhost:*", "[::1]:*", "127.0.0.1", "localhost", "[::1]"]
LOOPBACK_ORIGINS = ["http://127.0.0.1:*", "http://localhost:*", "http://[::1]:*"]


def security_settings(public_url: str | None) -> TransportSecuritySettings:
    """Loopback, plus the configured public URL's host and origin (behind a proxy: what clients see)."""
    hosts, origins = list(LOOPBACK_HOSTS), list(LOOPBACK_ORIGINS)
    if public_url:
        parts = urlsplit(public_url)
        if parts.netloc:
            hosts.append(parts.netloc)
            origins.append(f"{parts.scheme}://{parts.netloc}")
    return TransportSecuritySettings(enable_dns_rebinding_protection=True, allowed_hosts=hosts, allowed_origins=origins)


def _challenge(request: web.Request, path: str, code: str, message: str) -> web.Response:
    metadata = resource_metadata_url(request, path)
    body = {"type": "invalid_request", "code": code, "message": message, "param": "Authorization"}
    return web.json_response(
        body,
        status=401,
        headers={
            "WWW-Authenticate": f'Bearer error="invalid_token", error_description="{message}", '
            f'resource_metadata="{metadata}"'
        },
    )


def _jsonrpc_error(status: int, code: int, message: str, data: dict[str, Any] | None = None) -> web.Response:
    error: dict[str, Any] = {"code": code, "message": message}
    if data is not None:
        error["data"] = data
    return web.json_response({"jsonrpc": "2.0", "id": None, "error": error}, status=status)


def _duplicate_key(body: bytes) -> web.Response | None:
    """-32600 (HTTP 400) for a message naming one key twice in an object (`"amount"` twice in a tool's
    arguments: which one counts?), with the REST API's error shape as data; None otherwise (a body
    that is no JSON at all is the SDK's parse error)."""
    try:
        json.loads(body, object_pairs_hook=unique_object)
    except DuplicateKey as exc:
        message = f"the key {exc.key!r} appears twice in one object"
        shape = {"type": "invalid_request", "code": "duplicate_key", "message": message, "param": exc.key}
        return _jsonrpc_error(400, -32600, f"duplicate_key: {message}", {"error": shape})
    except (ValueError, RecursionError):
        return None
    return None


async def _read_capped(request: web.Request) -> bytes:
    """The body, or its first MAX_BODY + 1 bytes when it is larger (then refused)."""
    out = bytearray()
    while len(out) <= MAX_BODY:
        chunk = await request.content.readany()
        if not chunk:
            break
        out += chunk
    return bytes(out)


def _user(caller: Caller) -> AuthenticatedUser:
    """The SDK's principal of a key: sessions and sealed requestState are bound to its hash."""
    token = AccessToken(
        token=caller.key_hash,
        client_id=caller.key_hash,
        scopes=sorted(caller.scopes) if caller.scopes is not None else ["read", "log", "spend", "admin"],
        subject=caller.account_id,
    )
    return AuthenticatedUser(token)


class Bridge:
    """The aiohttp handler of the MCP endpoint, and the manager's lifecycle in the app."""

    def __init__(self, path: str, build: Callable[[], Server[Any]]) -> None:
        self.path = path
        self._build = build
        self.manager: StreamableHTTPSessionManager | None = None
        self._security: TransportSecurityMiddleware | None = None

    # -- lifecycle: manager.run() enters an anyio task group, which must be entered and left in ONE task --

    def mount(self, app: web.Application) -> None:
        stop = asyncio.Event()
        task: list[asyncio.Task[None]] = []

        async def run(started: asyncio.Event) -> None:
            assert self.manager is not None
            async with self.manager.run():
                started.set()
                await stop.wait()

        async def lifespan(app: web.Application) -> AsyncIterator[None]:
            settings = security_settings(app.get(PUBLIC_URL))
            self._security = TransportSecurityMiddleware(settings)
            self.manager = StreamableHTTPSessionManager(
                app=self._build(),
                json_response=False,  # SSE: 2025-11-25 elicitation rides the call's stream
                stateless=False,  # 2025-11-25 sessions; 2026-07-28 is stateless whatever this says
                security_settings=settings,
                max_request_body_size=MAX_BODY,
                session_idle_timeout=SESSION_IDLE_SECONDS,
            )
            started = asyncio.Event()
            task.append(asyncio.create_task(run(started)))
            await started.wait()
            yield
            await shutdown(app)

        async def shutdown(_app: web.Application) -> None:
            # on_shutdown runs before aiohttp waits for in-flight handlers: an open SSE stream would
            # otherwise hold shutdown until its client goes away.
            stop.set()
            if task:
                await task.pop()

        app.cleanup_ctx.append(lifespan)
        app.on_shutdown.append(shutdown)
        app.router.add_route("*", self.path, self.handle)
        app.setdefault(OWN_BODY, set()).add(self.path)  # api.errors leaves the JSON-RPC body to handle()

    # -- one request --

    async def handle(self, request: web.Request) -> web.StreamResponse:
        if self.manager is None or self._security is None:
            raise web.HTTPServiceUnavailable()
        scope = asgi.scope(request)
        refused = await self._security.validate_request(StarletteRequest(scope), is_post=False)
        if refused is not None:  # DNS rebinding: a Host or Origin this service does not answer to
            return web.Response(status=refused.status_code, body=bytes(refused.body))
        try:
            chosen = toolsets.requested(request.query, request.headers)
        except ServiceError as exc:  # an unknown toolset: the REST error shape, before any MCP message
            return web.json_response(exc.shape(), status=exc.status)
        caller = None
        header = request.headers.get("Authorization")
        if header is not None:
            scheme, _, token = header.partition(" ")
            token = token.strip()
            if scheme.lower() != "bearer" or not KEY_RE.fullmatch(token):
                return _challenge(request, self.path, "malformed_api_key", "Authorization must be Bearer aglk_...")
            caller = await lookup_key(services_of(request.app).reads, token)
            if caller is None:
                return _challenge(request, self.path, "invalid_api_key", "the API key is not valid")
        body = b""
        if request.method == "POST":
            if request.content_length is not None and request.content_length > MAX_BODY:
                return _jsonrpc_error(413, -32600, f"request body larger than {MAX_BODY} bytes")
            body = await _read_capped(request)
            if len(body) > MAX_BODY:
                return _jsonrpc_error(413, -32600, f"request body larger than {MAX_BODY} bytes")
            if body.lstrip()[:1] == b"[":
                return _jsonrpc_error(400, -32600, "JSON-RPC batches are not supported: send one message per request")
            duplicate = _duplicate_key(body)
            if duplicate is not None:
                return duplicate
        scope[CALLER] = caller
        scope[TOOLSETS] = chosen
        scope[BASE_URL] = base_url(request)
        user = None if caller is None else _user(caller)
        if user is not None:
            scope["user"] = user
        return await self._serve(request, scope, body, user)

    async def _serve(
        self, request: web.Request, scope: dict[str, Any], body: bytes, user: AuthenticatedUser | None
    ) -> web.StreamResponse:
        assert self.manager is not None
        token = auth_context_var.set(user)  # what the SDK binds sealed requestState to
        try:
            response = await asgi.serve(self.manager.handle_request, request, scope, body)
        finally:
            auth_context_var.reset(token)
        if response is None:
            return web.Response(status=500, text=json.dumps({"error": "no response"}), content_type="application/json")
        return response
