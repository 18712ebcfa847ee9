"""The one error shape of the API (ACP's flat error): {type, code, message, param}.

Handlers raise ApiError; the middleware turns it, aiohttp's own HTTP errors and any unexpected
exception into that shape with the right status. A stack trace never reaches a client.
"""

from __future__ import annotations

import logging
from collections.abc import Awaitable, Callable

from aiohttp import web

log = logging.getLogger("agentledger.api")

Handler = Callable[[web.Request], Awaitable[web.StreamResponse]]


class ApiError(Exception):
    def __init__(
        self,
        status: int,
        code: str,
        message: str,
        *,
        type_: str = "invalid_request",
        param: str | None = None,
        replayable: bool = True,
    ) -> None:
        super().__init__(message)
        self.status = status
        self.code = code
        self.message = message
        self.type = type_
        self.param = param
        #: False: a refusal that says "not now" (another request holds what this one needs), not stored
        #: under the Idempotency-Key, so a retry with the same key really runs (api.idempotency).
        self.replayable = replayable

    def response(self) -> web.Response:
        body = {"type": self.type, "code": self.code, "message": self.message, "param": self.param}
        return web.json_response(body, status=self.status)


_HTTP_CODES = {404: "not_found", 405: "method_not_allowed", 413: "payload_too_large", 415: "unsupported_media_type"}


@web.middleware
async def error_middleware(request: web.Request, handler: Handler) -> web.StreamResponse:
    try:
        return await handler(request)
    except ApiError as exc:
        return exc.response()
    except web.HTTPException as exc:
        if exc.status < 400:
            raise
        code = _HTTP_CODES.get(exc.status, "http_error")
        return ApiError(exc.status, code, exc.reason, type_="invalid_request").response()
    except Exception:
        log.exception("unhandled error on %s %s", request.method, request.path)
        return ApiError(500, "internal_error", "internal server error", type_="service_error").response()
