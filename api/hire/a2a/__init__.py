"""The A2A endpoint (A2A 1.0, JSON-RPC and HTTP+JSON bindings): a message is a hire, its task the hire
job (api.hire.a2a.handler), served through the a2a-sdk's bindings (api.hire.a2a.host). A feature of its
own (api.features) inside the hire packages, whose use case it runs."""

from __future__ import annotations

from aiohttp import web

from api.feature import Feature, Parts
from api.hire.a2a.handler import HireHandler
from api.hire.a2a.host import HTTP_JSON_PATH, JSONRPC_PATH, Endpoint
from api.http import A2aInfo, services_of
from core.services import Services

__all__ = ["FEATURE"]


def install(services: Services) -> Parts:
    endpoint = services.provide(Endpoint(HireHandler(services)))
    services.provide(A2aInfo(JSONRPC_PATH, HTTP_JSON_PATH))
    return Parts(stopping=(endpoint.handler.close,))


def http(app: web.Application) -> None:
    async def handle(request: web.Request) -> web.StreamResponse:
        return await services_of(request.app).part(Endpoint).handle(request)

    Endpoint.mount_routes(app, handle)


FEATURE = Feature("a2a", install=install, http=http)
