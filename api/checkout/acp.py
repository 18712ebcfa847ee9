"""ACP plumbing shared by the /api/acp route modules (checkout, providers, provider-side orders):
JSON bodies with JSONPath error params, the API-Version check and the Request-Id / Idempotency-Key
echo."""

from __future__ import annotations

from typing import TypeVar

from aiohttp import web
from pydantic import BaseModel

from api import idempotency
from api.errors import ApiError, Handler
from api.models import parse_body, parse_query
from core.checkout import rules

_ACP_MOUNTED: web.AppKey[bool] = web.AppKey("acp_headers_mounted", bool)

ACP_PREFIX = "/api/acp/"
API_VERSION_HEADER = "API-Version"
REQUEST_ID_HEADER = "Request-Id"

M = TypeVar("M", bound=BaseModel)


def _jsonpath(exc: ApiError) -> ApiError:
    if exc.param is not None and not exc.param.startswith("$"):
        exc.param = "$." + exc.param if not exc.param.startswith("[") else "$" + exc.param
    return exc


def acp_body(model: type[M], body: bytes | None, *, query: dict[str, str] | None = None) -> M:
    """Validate a JSON body (or a query) with `model`; 400 with `param` as an RFC 9535 JSONPath
    (ACP's convention) for bodies, the parameter name for queries."""
    if query is not None:
        return parse_query(model, query)
    try:
        return parse_body(model, body or b"")
    except ApiError as exc:
        raise _jsonpath(exc) from None


@web.middleware
async def _acp_middleware(request: web.Request, handler: Handler) -> web.StreamResponse:
    if request.path.startswith(ACP_PREFIX):
        version = request.headers.get(API_VERSION_HEADER)
        if version is not None and version.strip() not in rules.SUPPORTED_API_VERSIONS:
            raise ApiError(
                400,
                "unsupported_api_version",
                f"API-Version {version!r} is not supported; supported versions: "
                + ", ".join(rules.SUPPORTED_API_VERSIONS),
                param=API_VERSION_HEADER,
            )
    return await handler(request)


async def _acp_headers(request: web.Request, response: web.StreamResponse) -> None:
    if not request.path.startswith(ACP_PREFIX):
        return
    response.headers[API_VERSION_HEADER] = rules.SUPPORTED_API_VERSIONS[0]
    for name in (REQUEST_ID_HEADER, idempotency.HEADER):
        value = request.headers.get(name)
        if value is not None and name not in response.headers and value.isprintable() and len(value) <= 255:
            response.headers[name] = value


def add_acp_headers(app: web.Application) -> None:
    """API-Version check and Request-Id / Idempotency-Key echo on every /api/acp route (once per app;
    the middleware runs inside the app's error middleware, so its 400 has the one error shape)."""
    if app.get(_ACP_MOUNTED):
        return
    app[_ACP_MOUNTED] = True
    app.middlewares.append(_acp_middleware)
    app.on_response_prepare.append(_acp_headers)
