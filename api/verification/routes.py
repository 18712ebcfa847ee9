"""The verification pages' query and response models, the runs and the handlers of the pages (HTML for
people, JSON under Accept)."""

from __future__ import annotations

import json
from typing import Any, Literal

from aiohttp import web
from pydantic import BaseModel, ConfigDict, RootModel

from api.http import McpInfo, base_url, services_of
from api.models import parse_query
from api.operation import Call, Reply
from api.policy import serve
from api.verification.documents import METHODOLOGY, discovery
from api.verification.pages import methodology_html, page, verification_html
from core.services import Services
from core.store import Conn
from core.transparency import entry_or_404, verification_json

CACHE_CONTROL = "public, max-age=3600"


class FormatQuery(BaseModel):
    """?format=json or ?format=html picks the form; without it, Accept does (HTML unless it names
    application/json and not text/html)."""

    model_config = ConfigDict(extra="forbid", strict=True, frozen=True)
    format: Literal["json", "html"] | None = None


class HtmlPage(RootModel[str]):
    """A page for people (text/html)."""


class _Loose(BaseModel):
    model_config = ConfigDict(extra="allow")


class Verification(_Loose):
    """The entry, its chain inputs, shell commands, inclusion proof and anchor (see /methodology)."""

    audit_id: int
    stream: str
    seq: int
    chain_hash: str
    prev_hash: str
    inclusion: dict[str, Any]
    anchor: dict[str, Any] | None


class Methodology(_Loose):
    """Every formula: both chain rules, RFC 8785 canonicalisation, the Merkle leaf and tree."""


class DecisionLoggingDiscovery(_Loose):
    """Endpoint, tiers, rate limit, verification, evidence options, webhook behaviour."""

    endpoint: str
    tiers: dict[str, str]
    methodology: str


def wants_json(request: web.Request) -> bool:
    chosen = parse_query(FormatQuery, dict(request.query)).format
    if chosen is not None:
        return chosen == "json"
    accept = request.headers.get("Accept", "")
    return "application/json" in accept and "text/html" not in accept


async def run_verify(services: Services, call: Call) -> Reply:
    parse_query(FormatQuery, dict(call.query))  # the route's query rule (a tool answers JSON whatever it says)

    def read(conn: Conn) -> dict[str, Any]:
        return verification_json(conn, services.deployment, call.base_url, entry_or_404(conn, call.path["audit_id"]))

    return _json(await services.reads.run(read))


async def verify_page(request: web.Request) -> web.Response:
    if wants_json(request):
        return await serve(request, run_verify, "none")
    base = base_url(request)
    services = services_of(request.app)

    def read(conn: Conn) -> dict[str, Any]:
        return verification_json(conn, services.deployment, base, entry_or_404(conn, request.match_info["audit_id"]))

    v = await services.reads.run(read)
    return page(f"Audit entry {v['audit_id']}", verification_html(v))


def _json(payload: dict[str, Any], headers: dict[str, str] | None = None) -> Reply:
    return Reply(200, json.dumps(payload).encode(), headers=headers or {})


async def run_methodology(services: Services, call: Call) -> Reply:
    parse_query(FormatQuery, dict(call.query))  # the route's query rule (a tool answers JSON whatever it says)
    return _json(METHODOLOGY)


async def methodology(request: web.Request) -> web.Response:
    if wants_json(request):
        return await serve(request, run_methodology, "none")
    return page("Methodology", methodology_html())


async def run_well_known(services: Services, call: Call) -> Reply:
    return _json(discovery(call.base_url, services.find(McpInfo)), {"Cache-Control": CACHE_CONTROL})
