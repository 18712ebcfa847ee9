"""The one error shape of the API (ACP's flat error): {type, code, message, param}.

Handlers and use cases raise ApiError (core.errors.ServiceError: the same class, so core/ refuses
requests without knowing HTTP); the middleware turns it, aiohttp's own HTTP errors and any
unexpected exception into that shape with the right status. A stack trace never reaches a client.
"""

from __future__ import annotations

import json
import logging
from collections.abc import Awaitable, Callable

from aiohttp import web

from core.errors import ServiceError

log = logging.getLogger("agentledger.api")

Handler = Callable[[web.Request], Awaitable[web.StreamResponse]]

#: A refused request (core.errors.ServiceError).
ApiError = ServiceError


def error_response(exc: ServiceError) -> web.Response:
    """The error shape as a JSON response with the refusal's status and headers."""
    resp = web.Response(
        status=exc.status, text=json.dumps(exc.shape()), content_type="application/json", headers=exc.headers
    )
    return resp


_HTTP_CODES = {404: "not_found", 405: "method_not_allowed", 413: "payload_too_large", 415: "unsupported_media_type"}


@web.middleware
async def error_middleware(request: web.Request, handler: Handler) -> web.StreamResponse:
    try:
        return await handler(request)
    except ServiceError as exc:
        return error_response(exc)
    except web.HTTPException as exc:
        if exc.status < 400:
            raise
        code = _HTTP_CODES.get(exc.status, "http_error")
        return error_response(ApiError(exc.status, code, exc.reason, type_="invalid_request"))
    except Exception:
        log.exception("unhandled error on %s %s", request.method, request.path)
        return error_response(ApiError(500, "internal_error", "internal server error", type_="service_error"))
