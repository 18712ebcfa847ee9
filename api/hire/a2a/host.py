"""The A2A endpoint in aiohttp: the a2a-sdk's own bindings (its JSON-RPC and HTTP+JSON dispatchers, as
Starlette routes: A2A 1.0 method names and paths, A2A-Version checks, SSE framing, error payloads; on
the JSON-RPC URL 0.3's method names too), a small ASGI host, and what this service checks before the SDK sees a request.

Before the SDK, in this order: the Bearer key (none, malformed or unknown: HTTP 401 with a Bearer
challenge, both bindings, as A2A names authentication errors); the body, read up to MAX_BODY (413) and
held to the API's request rules (core.jsontext.decode_json: UTF-8, no key twice, no control character,
bounded depth; a refusal is InvalidRequestError, or JSONParseError for JSON that does not parse); the
key's scope for the method (spend to send a message, read otherwise: HTTP 403 insufficient_scope).
The body as decoded here is handed on (api.hire.a2a.handler.BODY): the hire is read from it, with
its numbers exact.

Paths: JSON-RPC at JSONRPC_PATH; HTTP+JSON under HTTP_JSON_PATH (/api/message:send, /api/message:stream,
/api/tasks/{id}, /api/tasks/{id}:cancel, /api/tasks/{id}:subscribe, /api/tasks; push notification
configs and the extended card answer the errors the spec names for what is not offered).

The SDK's Starlette app runs inside aiohttp through api.asgi, as the MCP endpoint's does.
"""

from __future__ import annotations

from collections.abc import Awaitable, Callable
from typing import Any

from a2a.server.context import ServerCallContext
from a2a.server.jsonrpc_models import JSONRPCError
from a2a.server.request_handlers.response_helpers import build_error_response
from a2a.server.routes import create_jsonrpc_routes, create_rest_routes
from a2a.server.routes.common import DefaultServerCallContextBuilder
from a2a.utils.error_handlers import ERROR_INFO_TYPE, build_error_details, build_rest_error_payload
from a2a.utils.errors import JSON_RPC_ERROR_CODE_MAP, A2AError, InvalidRequestError, JSONParseError
from aiohttp import web
from starlette.applications import Starlette
from starlette.requests import Request as StarletteRequest

from api import asgi
from api.auth import authenticate
from api.errors import OWN_BODY, ApiError
from api.hire.a2a.handler import BASE_URL, BODY, CALLER, HireHandler, a2a_error
from api.http import base_url, services_of
from core.errors import ServiceError
from core.jsontext import decode_json

__all__ = ["HTTP_JSON_PATH", "JSONRPC_PATH", "MAX_BODY", "ROUTES", "Endpoint"]

JSONRPC_PATH = "/api/a2a/rpc"
HTTP_JSON_PATH = "/api"
#: Largest request body (a hire's input is bounded far below: core.hire.rules).
MAX_BODY = 1024 * 1024
#: The JSON-RPC code of an authentication or authorization refusal: JSON-RPC's implementation-defined
#: server error, the one code of that range A2A does not assign (it names -32001 and up).
AUTH_ERROR_CODE = -32000
#: (METHOD, path) of the endpoint's routes: A2A's, described by the agent card and the A2A spec, not by
#: /api/schema (the MCP endpoint's is alike), and no MCP tools.
ROUTES = frozenset(
    {
        ("POST", JSONRPC_PATH),
        ("POST", HTTP_JSON_PATH + "/message:{verb}"),
        ("GET", HTTP_JSON_PATH + "/tasks"),
        ("*", HTTP_JSON_PATH + "/tasks/{id}"),  # and {id}:cancel, {id}:subscribe
        ("*", HTTP_JSON_PATH + "/tasks/{id}/pushNotificationConfigs"),
        ("*", HTTP_JSON_PATH + "/tasks/{id}/pushNotificationConfigs/{config}"),
        ("GET", HTTP_JSON_PATH + "/extendedAgentCard"),
    }
)
_SENDS = frozenset({"SendMessage", "SendStreamingMessage", "message/send", "message/stream"})  # 1.0, 0.3
_STATE = "agentledger.a2a"
#: HTTP+JSON's google.rpc status names of the refusals answered before the SDK.
_STATUS_NAMES = {401: "UNAUTHENTICATED", 403: "PERMISSION_DENIED", 413: "INVALID_ARGUMENT"}


class _Context(DefaultServerCallContextBuilder):
    """The SDK's call context, with what the host read (the key, the decoded body, the base URL)."""

    def build(self, request: StarletteRequest) -> ServerCallContext:
        context = super().build(request)
        context.state.update(request.scope[_STATE])
        return context


class Endpoint:
    """The A2A endpoint of one process: its handler, the SDK's two bindings, their aiohttp routes."""

    def __init__(self, handler: HireHandler) -> None:
        self.handler = handler
        builder = _Context()
        self._app = Starlette(
            routes=[
                # 0.3's method names too: the legacy card (agent.json) sends 0.3 clients here
                *create_jsonrpc_routes(handler, JSONRPC_PATH, context_builder=builder, enable_v0_3_compat=True),
                *create_rest_routes(handler, context_builder=builder, path_prefix=HTTP_JSON_PATH),
            ]
        )

    # ---- one request ---------------------------------------------------------------------------

    async def handle(self, request: web.Request) -> web.StreamResponse:
        jsonrpc = request.path == JSONRPC_PATH
        services = services_of(request.app)
        body: dict[str, Any] = {}
        raw = b""
        try:
            caller = await authenticate(services.reads, request)
            if request.method == "POST":
                raw = await _read_capped(request)
                body = decode_json(raw) if raw.strip() else {}
        except ServiceError as exc:
            return _refusal(jsonrpc, exc, body.get("id"))
        method = body.get("method") if jsonrpc else request.path.rpartition(":")[2]
        scope = "spend" if method in _SENDS or (not jsonrpc and method in ("send", "stream")) else "read"
        if not caller.has_scope(scope):
            refusal = ApiError(
                403,
                "insufficient_scope",
                f"this API key lacks the '{scope}' scope this A2A method needs",
                param="Authorization",
                headers={"WWW-Authenticate": f'Bearer error="insufficient_scope", scope="{scope}"'},
            )
            return _refusal(jsonrpc, refusal, body.get("id"))
        state = {CALLER: caller, BODY: body, BASE_URL: base_url(request)}
        answer = await asgi.serve(self._app, request, {**asgi.scope(request), _STATE: state}, raw)
        if answer is None:
            raise ApiError(500, "no_response", "the A2A binding gave no answer", type_="service_error")
        return answer

    @staticmethod
    def mount_routes(app: web.Application, handle: Callable[[web.Request], Awaitable[web.StreamResponse]]) -> None:
        """The endpoint's routes on `app`, each answered by `handle` (the process's Endpoint.handle)."""
        own = app.setdefault(OWN_BODY, set())  # api.errors leaves these bodies to handle()
        for method, path in sorted(ROUTES):
            resource = app.router.add_resource(path)
            resource.add_route(method, handle)
            own.add(resource.canonical)


async def _read_capped(request: web.Request) -> bytes:
    if request.content_length is not None and request.content_length > MAX_BODY:
        raise _too_large()
    out = bytearray()
    while len(out) <= MAX_BODY:
        chunk = await request.content.readany()
        if not chunk:
            break
        out += chunk
    if len(out) > MAX_BODY:
        raise _too_large()
    return bytes(out)


def _too_large() -> ServiceError:
    return ApiError(413, "body_too_large", f"the request body is larger than {MAX_BODY} bytes")


def _refusal(jsonrpc: bool, exc: ServiceError, rpc_id: Any) -> web.Response:
    """A refusal made before the SDK, in the binding's own error form: authentication and authorization
    at their HTTP status (401, 403) with the service's error shape as the data; a body that breaks the
    request rules as the SDK answers a malformed request (JSON-RPC: HTTP 200)."""
    shape = {k: str(v) for k, v in exc.shape().items() if v is not None}
    message = f"{exc.code}: {exc.message}"
    if exc.status in (401, 403):
        # the shape as the SDK carries an error's data: a google.rpc.ErrorInfo (reason: the code)
        info = {"@type": ERROR_INFO_TYPE, "reason": exc.code.upper(), "domain": "agentledger", "metadata": shape}
        if jsonrpc:
            auth_error = {"code": AUTH_ERROR_CODE, "message": message, "data": [info]}
            payload: dict[str, Any] = {"jsonrpc": "2.0", "id": _rpc_id(rpc_id), "error": auth_error}
        else:
            rest_error = {
                "code": exc.status,
                "status": _STATUS_NAMES[exc.status],
                "message": message,
                "details": [info],
            }
            payload = {"error": rest_error}
        return web.json_response(payload, status=exc.status, headers=exc.headers)
    a2a: A2AError = (
        JSONParseError(message, shape) if exc.code == "invalid_json" else InvalidRequestError(message, shape)
    )
    if exc.status >= 500:
        a2a = a2a_error(exc)
    if jsonrpc:  # (the SDK's build_error_response would make a parse error an internal one)
        rpc_error = JSONRPCError(
            code=JSON_RPC_ERROR_CODE_MAP[type(a2a)], message=str(a2a), data=build_error_details(a2a)
        )
        return web.json_response(build_error_response(_rpc_id(rpc_id), rpc_error), status=200)
    payload = build_rest_error_payload(a2a)
    return web.json_response(payload, status=exc.status if exc.status == 413 else int(payload["error"]["code"]))


def _rpc_id(value: Any) -> str | int | None:
    return value if isinstance(value, str | int) and not isinstance(value, bool) else None


# ---- hosting the SDK's Starlette routes -----------------------------------------------------------
