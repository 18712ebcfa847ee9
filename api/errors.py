"""The one error shape of the API (ACP's flat error): {type, code, message, param}, and the request
rules every route shares.

Handlers and use cases raise ApiError (core.errors.ServiceError: the same class, so core/ refuses
requests without knowing HTTP); the middleware turns it, aiohttp's own HTTP errors and any
unexpected exception into that shape with the right status. A stack trace never reaches a client.

Before any handler runs, the middleware applies the rules of every request, once for every route:
no path segment or query value holds a control character or a lone surrogate; a body must be of a
media type the route takes (`application/json`, charset utf-8 or none;
a route may also take others, ACCEPTS), else 415; a JSON body must be what core.jsontext.decode_json
accepts (UTF-8, no key twice, no lone surrogate, bounded depth, an object), else 400; so nothing a
route parses or writes can be one of them. A 405 names the methods the resource takes in `Allow`
(RFC 9110 15.5.6).

What aiohttp's HTTP parser refuses (an over-long request line or header, a NUL in a header, broken
chunking) never reaches a handler: ApiRequestHandler answers it in the same shape, logs one line
and echoes none of the request's bytes (api.app.make_runner serves with it).
"""

from __future__ import annotations

import json
import logging
from collections.abc import Awaitable, Callable, Mapping
from typing import Any

from aiohttp import web
from aiohttp.http_exceptions import BadHttpMethod, HttpProcessingError, LineTooLong

from core.errors import ServiceError, unexpected
from core.jsontext import bad_text, decode_json, invalid_string

log = logging.getLogger("agentledger.api")

Handler = Callable[[web.Request], Awaitable[web.StreamResponse]]

#: A refused request (core.errors.ServiceError).
ApiError = ServiceError

JSON = "application/json"
#: Media types a route takes besides JSON, by (METHOD, canonical path) (api.app fills it from the
#: operation table's `request_media_types`); a route absent from it takes JSON only.
ACCEPTS: web.AppKey[Mapping[tuple[str, str], tuple[str, ...]]] = web.AppKey("accepts", Mapping)
_BODY_METHODS = frozenset({"POST", "PUT", "PATCH", "DELETE"})
#: The request's JSON body as check_request decoded it (a handler may read it instead of decoding
#: the same bytes again; nothing may change it).
JSON_BODY: web.RequestKey[dict[str, Any]] = web.RequestKey("json_body", dict)
_JSON_ONLY: tuple[str, ...] = (JSON,)
#: Canonical paths of routes that read and check their body themselves (the MCP endpoint, which
#: answers in JSON-RPC's error shape: api.mcp.bridge applies the same rules there).
OWN_BODY: web.AppKey[set[str]] = web.AppKey("own_body", set)


def error_response(exc: ServiceError) -> web.Response:
    """The error shape as a JSON response with the refusal's status and headers."""
    resp = web.Response(
        status=exc.status, text=json.dumps(exc.shape()), content_type="application/json", headers=exc.headers
    )
    return resp


_HTTP_CODES = {404: "not_found", 405: "method_not_allowed", 413: "payload_too_large", 415: "unsupported_media_type"}
#: Headers of aiohttp's HTTP errors that belong to the refusal (Allow on a 405).
_KEEP_HEADERS = ("Allow",)


def _allow(request: web.Request) -> str | None:
    """The methods of the resource `request` matched, as an Allow value (None: no resource)."""
    route = request.match_info.route
    resource = route.resource if route is not None else None
    if resource is None:
        return None
    methods = {r.method for r in resource if r.method != "*"}
    return ",".join(sorted(methods)) or None


def _refusal(request: web.Request, exc: ServiceError) -> web.Response:
    resp = error_response(exc)
    if exc.status == 405 and "Allow" not in resp.headers:
        allow = _allow(request)
        if allow is not None:
            resp.headers["Allow"] = allow
    return resp


def _media_error(expected: tuple[str, ...]) -> ServiceError:
    return ServiceError(
        415,
        "unsupported_media_type",
        f"send the body as {' or '.join(expected)}" + (" (charset utf-8)" if JSON in expected else ""),
        param="Content-Type",
    )


async def check_request(request: web.Request) -> None:
    """The rules every request obeys (module docstring), before its handler runs: no control
    character nor lone surrogate in a path segment or a query value (core.jsontext's rule for every
    request string), then the body's. A request no route takes is left to its 404 or 405."""
    if request.match_info.http_exception is not None:
        return
    for name, value in request.match_info.items():
        if bad_text(value):
            raise invalid_string(name)
    if request.query_string:
        for name, value in request.query.items():
            if bad_text(name) or bad_text(value):
                raise invalid_string(name if not bad_text(name) else None)
    if request.method not in _BODY_METHODS or not request.body_exists:
        return
    route = request.match_info.route
    canonical = route.resource.canonical if route.resource is not None else ""
    config = request.config_dict  # a new ChainMapProxy per call: read once
    if canonical in config.get(OWN_BODY, ()):
        return
    accepted = _JSON_ONLY
    table = config.get(ACCEPTS)
    if table is not None:
        accepted = table.get((request.method, canonical), _JSON_ONLY)
    # Almost every body is sent as exactly `application/json`: then there is nothing to parse.
    if request.headers.get("Content-Type") != JSON or JSON not in accepted:
        media = request.content_type
        if media not in accepted:
            raise _media_error(accepted)
        if media != JSON:
            return  # the route reads it itself (multipart: streamed)
        ctype = request.headers.get("Content-Type", "")
        names = {p.partition("=")[0].strip().lower() for p in ctype.split(";")[1:]}
        if names - {"charset", ""} or (request.charset or "utf-8").lower() != "utf-8":
            raise _media_error(accepted)
    request[JSON_BODY] = decode_json(await request.read())


@web.middleware
async def error_middleware(request: web.Request, handler: Handler) -> web.StreamResponse:
    try:
        await check_request(request)
        return await handler(request)
    except ServiceError as exc:
        return _refusal(request, exc)
    except web.HTTPException as exc:
        if exc.status < 400:
            raise
        code = _HTTP_CODES.get(exc.status, "http_error")
        headers = {h: exc.headers[h] for h in _KEEP_HEADERS if h in exc.headers}
        return _refusal(request, ApiError(exc.status, code, exc.reason, type_="invalid_request", headers=headers))
    except HttpProcessingError as exc:  # the body broke the HTTP framing while a handler read it
        log.info("malformed request body on %s %s: %s", request.method, request.path, type(exc).__name__)
        return error_response(parse_error(exc))
    except Exception as exc:
        return error_response(answer_unexpected(exc, f"{request.method} {request.path}"))


def answer_unexpected(exc: Exception, where: str) -> ServiceError:
    """core.errors.unexpected for `exc`, logged: one line when the database is out of reach (every call
    meets it then), the trace otherwise."""
    refusal = unexpected(exc)
    if refusal.status == 503:
        log.warning("%s: the database is out of reach: %s", where, exc)
    else:
        log.error("unhandled error on %s", where, exc_info=exc)
    return refusal


# ---- what the HTTP parser refuses ---------------------------------------------------------------


def parse_error(exc: BaseException | None) -> ServiceError:
    """The refusal of a request aiohttp's HTTP parser could not read (its bytes are never echoed)."""
    if isinstance(exc, LineTooLong):
        return ApiError(400, "request_too_long", "the request line or a header field is too long")
    status = exc.code if isinstance(exc, HttpProcessingError) and 400 <= exc.code < 500 else 400
    return ApiError(status, "malformed_request", "the request is not valid HTTP/1.1")


class ApiRequestHandler(web.RequestHandler):
    """aiohttp's connection handler, answering what its parser refuses (and a failure outside the
    middleware) in the error shape, with one log line instead of a traceback and plain text that
    echoes the request's bytes."""

    def handle_error(
        self,
        request: web.BaseRequest,
        status: int = 500,
        exc: BaseException | None = None,
        message: str | None = None,
    ) -> web.StreamResponse:
        if isinstance(exc, HttpProcessingError):
            if isinstance(exc, BadHttpMethod) and self._request_count == 1:
                log.debug("not HTTP from %s", request.remote)  # port scanners, TLS to a plain port
            else:
                log.info("refused a malformed request from %s: %s", request.remote, type(exc).__name__)
            refusal = parse_error(exc)
        elif status == 504:
            refusal = ApiError(504, "timeout", "the request took too long", type_="service_error")
        else:
            log.error("unhandled error from %s", request.remote, exc_info=exc)
            refusal = ApiError(500, "internal_error", "internal server error", type_="service_error")
        if request.writer.output_size > 0:  # part of a response went out: the connection is broken
            raise ConnectionError("a response was already started")
        resp = error_response(refusal)
        resp.force_close()
        return resp
