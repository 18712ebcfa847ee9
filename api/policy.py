"""Running an operation, for every transport: a route handler's request as a Call (`serve`), a Reply as
its response, and the one place where a key's limits are enforced (`authorize`, `CapHold`), for HTTP
(`policy_middleware`, mounted by api.app over the operation table) and MCP (`invoke`) alike.

The limits of a key (core.keys.Caller):
- its agent, when it is scoped to one: an operation touching the account as a whole
  (`Operation.touches`) is refused (403 account_key_required);
- its scopes: an operation needs `Operation.needs_scope` (403 insufficient_scope otherwise);
- its daily cap: an operation with a `quote` (it moves value) reserves what it will move in the
  key's cap before it runs (core.spend_caps; 403 daily_cap_exceeded past it) and releases the
  reservation when it is refused or only replays an earlier answer.
"""

from __future__ import annotations

from collections.abc import Awaitable, Callable, Iterable

from aiohttp import web

from api import idempotency
from api.auth import AuthError, account_key_required, authenticate, authenticate_optional
from api.errors import ApiError, answer_unexpected, error_response
from api.http import base_url, services_of
from api.operation import Auth, Call, Operation, Reply, Run
from core import spend_caps
from core.errors import ServiceError
from core.keys import Caller
from core.services import Services
from core.store import StoreError, unavailable

__all__ = [
    "POLICY",
    "CapHold",
    "add_policy",
    "authorize",
    "http_call",
    "invoke",
    "mount",
    "respond",
    "serve",
]

#: (METHOD, route path) -> its row, for the HTTP middleware (set by add_policy).
POLICY: web.AppKey[dict[tuple[str, str], Operation]] = web.AppKey("operation_policy", dict)
#: The caller the middleware authenticated, kept on the request so the handler does not look it up again.
_CALLER: web.RequestKey[Caller] = web.RequestKey("caller", Caller)


# ---- HTTP: a request as a Call, a Reply as a response ---------------------------------------------


async def http_call(request: web.Request, auth: Auth = "required", *, idempotent: bool = False) -> Call:
    """The Call of `request`: its caller (401 as `auth` says), body, path and query, and its
    Idempotency-Key when the operation honours one (400 for a malformed key)."""
    caller: Caller | None = request.get(_CALLER)
    if caller is None and auth != "none":
        reads = services_of(request.app).reads
        caller = await (authenticate(reads, request) if auth == "required" else authenticate_optional(reads, request))
    body = await request.read() if request.body_exists else b""
    return Call(
        caller,
        f"{request.method} {request.path}",
        request.match_info,
        request.query,
        body,
        idempotency.request_key(request) if idempotent else None,
        base_url(request),
        request,
    )


def respond(reply: Reply, key: str | None = None) -> web.Response:
    """`reply` as a response; `key` (the request's Idempotency-Key) is echoed."""
    resp = web.Response(status=reply.status, body=reply.body, content_type=reply.media_type, headers=reply.headers)
    if reply.replayed:
        resp.headers[idempotency.REPLAYED] = "true"
    if key is not None:
        resp.headers[idempotency.HEADER] = key
    return resp


async def serve(request: web.Request, run: Run, auth: Auth = "required", *, idempotent: bool = False) -> web.Response:
    """A route handler's whole body: the request as a Call, `run` (the row's), its reply as the response.
    A refusal of an idempotent operation echoes the Idempotency-Key too."""
    call = await http_call(request, auth, idempotent=idempotent)
    try:
        reply = await run(services_of(request.app), call)
    except ServiceError as exc:
        refusal = exc
    except StoreError as exc:  # the database out of reach: 503, with the key echoed as any refusal's
        if not unavailable(exc):
            raise
        refusal = answer_unexpected(exc, call.target)
    else:
        return respond(reply, call.idempotency_key)
    resp = error_response(refusal)
    if call.idempotency_key is not None:
        resp.headers[idempotency.HEADER] = call.idempotency_key
    return resp


# ---- the limits of a key ------------------------------------------------------------------------


def authorize(op: Operation, caller: Caller | None) -> None:
    """401 when `op` needs a key and there is none; 403 account_key_required when it touches the account
    as a whole and the key is scoped to one agent; 403 insufficient_scope when the key lacks the
    operation's scope."""
    if op.auth == "required" and caller is None:
        raise AuthError("missing_api_key", "this operation needs 'Authorization: Bearer <api key>'")
    if op.touches == "account" and caller is not None and caller.agent_id is not None:
        raise account_key_required(op.operation_id)
    scope = op.needs_scope
    if caller is not None and scope is not None and not caller.has_scope(scope):
        raise ApiError(
            403,
            "insufficient_scope",
            f"this API key lacks the '{scope}' scope that {op.operation_id} needs",
            param="Authorization",
            headers={"WWW-Authenticate": f'Bearer error="insufficient_scope", scope="{scope}"'},
        )


class CapHold:
    """What one value-moving call of a capped key holds of its daily cap (core.spend_caps)."""

    def __init__(self, services: Services, held: spend_caps.Hold | None) -> None:
        self._services = services
        self._held = held

    @classmethod
    async def take(cls, services: Services, op: Operation, call: Call, amount: int | None = None) -> CapHold:
        """Hold what `call` of `op` would move (`amount`, else its quote's) when the caller's key has a
        cap. A quote that refuses the call outright (a malformed body, another key's agent) holds
        nothing: the run refuses it the same way."""
        caller = call.caller
        if op.quote is None or caller is None or caller.daily_cap is None:
            return cls(services, None)
        if amount is None:
            try:
                amount = (await op.quote(services, call)).amount
            except ServiceError:
                return cls(services, None)
        key = call.idempotency_key
        ref = spend_caps.hold_ref(None if key is None else f"{caller.key_hash} {call.target} {key}")
        now = services.clock()
        held = await services.writer.run(lambda conn: spend_caps.hold(conn, caller, ref, amount, now))
        return cls(services, held)

    async def settle(self, status: int) -> None:
        """Keep the hold of a call that moved value (or replayed one that did); release it otherwise."""
        if status >= 400:
            await self.release()

    async def release(self) -> None:
        held, self._held = self._held, None
        if held is not None and held.made:
            await self._services.writer.run(lambda conn: spend_caps.release(conn, held))


async def invoke(services: Services, op: Operation, call: Call, *, amount: int | None = None) -> Reply:
    """Run `op` for `call` (a transport that is not HTTP: MCP), the key's limits enforced first;
    `amount`: what a quoted call moves (else the row's quote is asked)."""
    if op.run is None:
        raise ApiError(501, "not_runnable", f"{op.operation_id} has no transport-free run", type_="service_error")
    authorize(op, call.caller)
    hold = await CapHold.take(services, op, call, amount)
    try:
        reply = await op.run(services, call)
    except BaseException:
        await hold.release()
        raise
    await hold.settle(reply.status)
    return reply


@web.middleware
async def policy_middleware(
    request: web.Request, handler: Callable[[web.Request], Awaitable[web.StreamResponse]]
) -> web.StreamResponse:
    """The limits of a key over HTTP: the route's row (by method and route path), then authorize and
    the cap hold around the handler. Routes without a row (or public ones) pass straight through."""
    resource = request.match_info.route.resource
    op = None if resource is None else request.app[POLICY].get((request.method, resource.canonical))
    if op is None or op.auth == "none":
        return await handler(request)
    services = services_of(request.app)
    caller = await authenticate_optional(services.reads, request)
    if caller is None:  # the handler refuses (or serves the anonymous view of) a call without a key
        return await handler(request)
    authorize(op, caller)
    request[_CALLER] = caller
    if op.quote is None or caller.daily_cap is None:
        return await handler(request)
    call = await http_call(request, op.auth, idempotent=op.idempotent)
    hold = await CapHold.take(services, op, call)
    try:
        resp = await handler(request)
    except BaseException:
        await hold.release()
        raise
    await hold.settle(resp.status)
    return resp


def mount(app: web.Application, rows: Iterable[Operation]) -> None:
    """One route per row: its own `handler`, else its `run` served through `serve` with the row's auth and
    idempotency. Static paths before templated ones, so a static path is never taken by a template's
    match. A GET also answers HEAD (aiohttp's add_get)."""

    def handler_of(op: Operation) -> Callable[[web.Request], Awaitable[web.StreamResponse]]:
        if op.handler is not None:
            return op.handler
        run, auth, idempotent = op.run, op.auth, op.idempotent
        assert run is not None, f"{op.operation_id} has neither a run nor a handler"

        async def route(request: web.Request) -> web.StreamResponse:
            return await serve(request, run, auth, idempotent=idempotent)

        return route

    for op in sorted(rows, key=lambda op: "{" in op.path):
        if op.method == "GET":
            app.router.add_get(op.path, handler_of(op))
        else:
            app.router.add_route(op.method, op.path, handler_of(op))


def add_policy(app: web.Application, table: Iterable[Operation]) -> None:
    """Enforce the limits of keys on every route of `app` that has a row in `table`."""
    index: dict[tuple[str, str], Operation] = {}
    for op in table:
        index.setdefault((op.method, op.path), op)
    app[POLICY] = index
    app.middlewares.append(policy_middleware)
