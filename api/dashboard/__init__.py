"""The dashboard: server-rendered pages for owners (/dashboard) and the operator (/dashboard/operator),
signed in with an API key (a session cookie afterwards), updated live by polling /dashboard/live,
with every asset served from /dashboard/static/ under a strict Content-Security-Policy.

These routes are pages for people, not part of the JSON API: they are not in the operation table
(so neither in /api/schema nor among the MCP tools); ROUTES names them. They answer refusals as
HTML pages (the live endpoint, polled by script, in the shared JSON error shape).
"""

from __future__ import annotations

import hashlib
import json

from aiohttp import web

from api.dashboard import operator, owner
from api.dashboard.operator import INDEXER_STATUS
from api.dashboard.page import ASSET_CACHE, error_page, html_errors, load_assets, secure
from api.dashboard.page import static as static_handler
from api.dashboard.session import current, sign_in, sign_in_form, sign_out
from api.errors import OWN_BODY
from api.feature import Feature
from core.errors import ServiceError

__all__ = ["FEATURE", "INDEXER_STATUS", "ROUTES", "add_dashboard_routes"]


async def live(request: web.Request) -> web.StreamResponse:
    """GET /dashboard/live?view=overview|agent|operator&<the page's query>: {"panels": {id: html}},
    the live part of each panel, with an ETag (304 when nothing changed). 401 JSON when the session
    ended (the page's script goes back to the sign-in page)."""
    try:
        view = request.query.get("view", "overview")
        # The viewer is read with the panels, in one read; a session that ended answers 401 first.
        panels: dict[str, str] | None
        if view == "operator":
            panels = await operator.operator_live(request)
        elif view in ("overview", "agent"):
            panels = await owner.owner_live(request)
        elif await current(request) is not None:
            raise ServiceError(400, "invalid_field", "view must be overview, agent or operator", param="view")
        else:
            panels = None
        if panels is None:
            raise ServiceError(401, "not_signed_in", "the dashboard session ended; sign in again")
    except ServiceError as exc:
        resp = web.Response(status=exc.status, text=json.dumps(exc.shape()), content_type="application/json")
        return secure(resp)
    body = json.dumps({"panels": panels}, separators=(",", ":")).encode()
    etag = '"' + hashlib.sha256(body).hexdigest()[:32] + '"'
    if request.headers.get("If-None-Match") == etag:
        return secure(web.Response(status=304, headers={"ETag": etag}))
    resp = web.Response(body=body, content_type="application/json", headers={"ETag": etag})
    resp.enable_compression()
    return secure(resp)


@html_errors
async def not_found(request: web.Request) -> web.StreamResponse:
    return error_page(request, ServiceError(404, "not_found", "there is no such dashboard page"))


#: (method, path) of every dashboard route: pages, not part of the JSON API (see the module docstring).
ROUTES: frozenset[tuple[str, str]] = frozenset(
    {
        ("GET", "/dashboard"),
        ("GET", "/dashboard/sign-in"),
        ("POST", "/dashboard/sign-in"),
        ("POST", "/dashboard/sign-out"),
        ("GET", "/dashboard/agents/{wallet}"),
        ("GET", "/dashboard/ledger.csv"),
        ("GET", "/dashboard/live"),
        ("GET", "/dashboard/operator"),
        ("POST", "/dashboard/operator/dead-letters/reset"),
        ("POST", "/dashboard/operator/keys"),
        ("POST", "/dashboard/operator/keys/revoke"),
        ("GET", "/dashboard/static/{name}"),
        ("GET", "/dashboard/{tail}"),
    }
)


def add_dashboard_routes(app: web.Application) -> None:
    """Mount the dashboard on an app with Services (create_app's)."""
    app[ASSET_CACHE] = load_assets()
    r = app.router
    r.add_get("/dashboard", owner.overview)
    r.add_get("/dashboard/sign-in", sign_in_form)
    r.add_post("/dashboard/sign-in", sign_in)
    r.add_post("/dashboard/sign-out", sign_out)
    r.add_get("/dashboard/agents/{wallet}", owner.agent_page)
    r.add_get("/dashboard/ledger.csv", owner.ledger_csv)
    r.add_get("/dashboard/live", live)
    r.add_get("/dashboard/operator", operator.operator_page)
    r.add_post("/dashboard/operator/dead-letters/reset", operator.reset_dead_letters)
    r.add_post("/dashboard/operator/keys", operator.issue_key)
    r.add_post("/dashboard/operator/keys/revoke", operator.revoke_key)
    r.add_get("/dashboard/static/{name:.+}", static_handler)
    r.add_get("/dashboard/{tail:.+}", not_found)
    # HTML forms (urlencoded) are read by read_form (Origin, size, the string rule), not by api.errors
    app.setdefault(OWN_BODY, set()).update(path for method, path in ROUTES if method == "POST")


#: Pages only (no operation rows): it reads every feature's tables to show owners and the operator.
FEATURE = Feature("dashboard", http=add_dashboard_routes)
