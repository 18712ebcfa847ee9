"""An ASGI application (an SDK's Starlette app or session manager) run inside aiohttp for one request:
the MCP endpoint (api.mcp.bridge) and the A2A endpoint (api.hire.a2a.host) are the official SDKs'
own servers, behind checks of ours that run first and read the body.

`scope` is the request as ASGI names it; `serve` runs the app with the body already read and streams
its answer. `receive` hands the body over once, then waits until the answer is finished or the peer
has gone away, so an SSE stream's disconnect watch (which loops on it) never spins. The app's own
Content-Length is dropped: aiohttp frames the body it writes."""

from __future__ import annotations

import asyncio
import contextlib
from collections.abc import Awaitable, Callable, MutableMapping
from typing import Any

from aiohttp import web

Receive = Callable[[], Awaitable[dict[str, Any]]]
Send = Callable[[MutableMapping[str, Any]], Awaitable[None]]
AsgiApp = Callable[[dict[str, Any], Receive, Send], Awaitable[None]]


def scope(request: web.Request) -> dict[str, Any]:
    """The ASGI HTTP scope of `request` (the caller adds its own keys)."""
    transport = request.transport
    sockname = transport.get_extra_info("sockname") if transport is not None else None
    host, port = (sockname[0], sockname[1]) if isinstance(sockname, tuple) else ("127.0.0.1", 0)
    return {
        "type": "http",
        "asgi": {"version": "3.0", "spec_version": "2.3"},
        "http_version": f"{request.version.major}.{request.version.minor}",
        "method": request.method,
        "scheme": request.scheme,
        "path": request.path,
        "raw_path": request.raw_path.encode(),
        "query_string": request.query_string.encode(),
        "root_path": "",
        "headers": [(k.lower(), v) for k, v in request.raw_headers],
        "client": (request.remote or "", 0),
        "server": (host, port),
    }


async def serve(
    app: AsgiApp, request: web.Request, asgi_scope: dict[str, Any], body: bytes
) -> web.StreamResponse | None:
    """Run `app` for `request` (whose body was read already), streaming its answer; None when the app
    answered nothing."""
    done = asyncio.Event()
    sent_body = False
    response: web.StreamResponse | None = None

    async def receive() -> dict[str, Any]:
        nonlocal sent_body
        if not sent_body:
            sent_body = True
            return {"type": "http.request", "body": body, "more_body": False}
        while not done.is_set():
            transport = request.transport
            if transport is None or transport.is_closing():
                break
            with contextlib.suppress(TimeoutError):
                await asyncio.wait_for(done.wait(), 1.0)
        return {"type": "http.disconnect"}

    async def send(message: MutableMapping[str, Any]) -> None:
        nonlocal response
        if done.is_set():
            return  # the peer went away: whatever the app still sends goes nowhere
        try:
            if message["type"] == "http.response.start":
                response = web.StreamResponse(status=message["status"])
                for name, value in message.get("headers", []):
                    if name.lower() != b"content-length":
                        response.headers.add(name.decode("latin-1"), value.decode("latin-1"))
                await response.prepare(request)
            elif message["type"] == "http.response.body" and response is not None:
                chunk = message.get("body", b"")
                if chunk:
                    await response.write(chunk)
                if not message.get("more_body", False):
                    await response.write_eof()
                    done.set()
        except ConnectionResetError:  # the client closed its stream (an SSE stream it no longer reads)
            done.set()

    try:
        await app(asgi_scope, receive, send)
    finally:
        done.set()
    return response
