"""The dashboard's HTML: escaping, the page layout, panels, tables, the security headers every
dashboard response carries, error pages, and the static assets (served by the service itself).

Every value that reaches a page goes through `esc` (html.escape with quotes), and the Content-
Security-Policy admits scripts and styles from this origin only (no inline script, no inline style,
no eval): text a caller stored (a memory value, an agent's name, a source) shows as text and could
not run if it ever slipped through.
"""

from __future__ import annotations

import gzip
import hashlib
import html
import json
import logging
from collections.abc import Awaitable, Callable, Iterable
from dataclasses import dataclass
from datetime import UTC, datetime
from pathlib import Path
from typing import Any

from aiohttp import web

from api.errors import answer_unexpected
from core.errors import ServiceError
from core.money import usdc_text

log = logging.getLogger("agentledger.dashboard")

#: Scripts, styles, images and fetches from this origin only; no inline code, no frames, no plugins.
CSP = (
    "default-src 'none'; script-src 'self'; style-src 'self'; img-src 'self'; connect-src 'self'; "
    "font-src 'self'; form-action 'self'; frame-ancestors 'none'; base-uri 'none'"
)
SECURITY_HEADERS = {
    "Content-Security-Policy": CSP,
    "X-Content-Type-Options": "nosniff",
    "Referrer-Policy": "same-origin",
    "X-Frame-Options": "DENY",
    "Cross-Origin-Opener-Policy": "same-origin",
    "Permissions-Policy": "camera=(), microphone=(), geolocation=(), payment=()",
}
#: Authenticated pages are never stored by browsers or proxies.
NO_STORE = "no-store"

STATIC_DIR = Path(__file__).resolve().parent / "static"
#: What /dashboard/static/ serves (nothing else): name -> content type. vendor/ is filled by the
#: Makefile from node_modules (chart.js, pinned in package.json, with its licence).
ASSETS: dict[str, str] = {
    "app.css": "text/css; charset=utf-8",
    "app.js": "text/javascript; charset=utf-8",
    "favicon.svg": "image/svg+xml",
    "vendor/chart.umd.min.js": "text/javascript; charset=utf-8",
    "vendor/chart.js.LICENSE.md": "text/plain; charset=utf-8",
    "vendor/kurkle-color.LICENSE.md": "text/plain; charset=utf-8",
}
CHART_JS = "vendor/chart.umd.min.js"


def esc(value: object) -> str:
    return html.escape(str(value), quote=True)


def money(units: int | None) -> str:
    return "" if units is None else usdc_text(units)


def when(t: float | None) -> str:
    if t is None:
        return ""
    return datetime.fromtimestamp(t, UTC).strftime("%Y-%m-%d %H:%M:%S UTC")


def short(text: str, head: int = 10, tail: int = 6) -> str:
    return text if len(text) <= head + tail + 1 else f"{text[:head]}…{text[-tail:]}"


def json_script(element_id: str, data: Any) -> str:
    """Data for a script to read (never run): JSON in a <script type="application/json">, with `<`
    escaped so no value can close the element."""
    text = json.dumps(data, separators=(",", ":"))
    text = text.replace("<", "\\u003c").replace(">", "\\u003e").replace("&", "\\u0026")
    return f'<script type="application/json" id="{esc(element_id)}">{text}</script>'


# ---- assets --------------------------------------------------------------------------------------


@dataclass(frozen=True)
class Asset:
    body: bytes
    gzipped: bytes
    content_type: str
    version: str  # the first 12 hex of its SHA-256: ?v= in links, so it may be cached for a year


def load_assets(directory: Path = STATIC_DIR) -> dict[str, Asset]:
    out = {}
    for name, content_type in ASSETS.items():
        path = directory / name
        if not path.is_file():
            if name == CHART_JS:
                log.warning("%s is missing (make install copies it from node_modules): charts are off", path)
            continue
        body = path.read_bytes()
        out[name] = Asset(body, gzip.compress(body, 9, mtime=0), content_type, hashlib.sha256(body).hexdigest()[:12])
    return out


ASSET_CACHE: web.AppKey[dict[str, Asset]] = web.AppKey("dashboard_assets", dict)


def asset_url(request: web.Request, name: str) -> str | None:
    asset = request.config_dict[ASSET_CACHE].get(name)
    return None if asset is None else f"/dashboard/static/{name}?v={asset.version}"


async def static(request: web.Request) -> web.StreamResponse:
    """GET /dashboard/static/{name}: one of ASSETS, gzipped for clients that take it; cached for a
    year under its versioned link, revalidated by ETag otherwise."""
    asset = request.app[ASSET_CACHE].get(request.match_info["name"])
    if asset is None:
        return error_page(request, ServiceError(404, "not_found", "no such file"))
    etag = f'"{asset.version}"'
    headers = {**SECURITY_HEADERS, "ETag": etag, "Vary": "Accept-Encoding"}
    headers["Cache-Control"] = (
        "public, max-age=31536000, immutable" if request.query.get("v") == asset.version else "no-cache"
    )
    if request.headers.get("If-None-Match") == etag:
        return web.Response(status=304, headers=headers)
    body = asset.body
    if "gzip" in request.headers.get("Accept-Encoding", ""):
        body = asset.gzipped
        headers["Content-Encoding"] = "gzip"
    return web.Response(body=body, headers={**headers, "Content-Type": asset.content_type})


# ---- responses -----------------------------------------------------------------------------------


def secure(resp: web.StreamResponse, *, no_store: bool = True) -> web.StreamResponse:
    resp.headers.update(SECURITY_HEADERS)
    if no_store:
        resp.headers["Cache-Control"] = NO_STORE
    return resp


def html_response(text: str, status: int = 200) -> web.Response:
    resp = web.Response(text=text, status=status, content_type="text/html", charset="utf-8")
    secure(resp)
    resp.enable_compression()
    return resp


def redirect(location: str) -> web.Response:
    resp = web.Response(status=303, headers={"Location": location})
    secure(resp)
    return resp


@dataclass(frozen=True)
class Nav:
    """What the header shows: the signed-in viewer's links and the sign-out form."""

    csrf: str | None  # None: not signed in
    operator: bool = False
    current: str = ""


def layout(
    request: web.Request,
    title: str,
    body: str,
    *,
    nav: Nav,
    live: str | None = None,
    charts: bool = False,
    interval_ms: int = 2000,
) -> str:
    """A whole page. `live`: the URL the page polls for fresh panels; `charts`: load chart.js."""
    css = asset_url(request, "app.css")
    js = asset_url(request, "app.js")
    head = [
        '<meta charset="utf-8">',
        '<meta name="viewport" content="width=device-width, initial-scale=1">',
        '<meta name="color-scheme" content="light">',
        f"<title>{esc(title)} · agentledger</title>",
    ]
    if css:
        head.append(f'<link rel="stylesheet" href="{esc(css)}">')
    icon = asset_url(request, "favicon.svg")
    if icon:
        head.append(f'<link rel="icon" type="image/svg+xml" href="{esc(icon)}">')
    chart = asset_url(request, CHART_JS) if charts else None
    if chart:
        head.append(f'<script src="{esc(chart)}" defer></script>')
    if js:
        head.append(f'<script src="{esc(js)}" defer></script>')
    attrs = f' data-live="{esc(live)}" data-interval="{interval_ms}"' if live else ""
    links = []
    if nav.csrf is not None:
        items = [("overview", "/dashboard", "Overview")]
        if nav.operator:
            items.append(("operator", "/dashboard/operator", "Operator"))
        for key, href, label in items:
            current = ' aria-current="page"' if key == nav.current else ""
            links.append(f'<li><a href="{href}"{current}>{label}</a></li>')
        links.append(
            '<li><form method="post" action="/dashboard/sign-out">'
            f'<input type="hidden" name="csrf" value="{esc(nav.csrf)}">'
            '<button type="submit" class="link">Sign out</button></form></li>'
        )
    nav_html = f'<nav aria-label="Dashboard"><ul>{"".join(links)}</ul></nav>' if links else ""
    status = '<p id="live-status" class="live-status" role="status" aria-live="polite"></p>' if live else ""
    return (
        f'<!doctype html><html lang="en"><head>{"".join(head)}</head><body{attrs}>'
        '<a class="skip" href="#main">Skip to content</a>'
        f'<header class="top"><a class="brand" href="/dashboard">agentledger</a>{nav_html}</header>'
        f'<main id="main" tabindex="-1"><h1>{esc(title)}</h1>{status}{body}</main>'
        "</body></html>"
    )


def panel(panel_id: str, title: str, inner: str, *, wide: bool = False, fixed: str | None = None) -> str:
    """A section: its heading, `fixed` (a form a person is using: never replaced while the page lives)
    and `inner`, the part /dashboard/live replaces (data-panel)."""
    cls = "panel wide" if wide else "panel"
    return (
        f'<section class="{cls}" id="{esc(panel_id)}" aria-labelledby="{esc(panel_id)}-h">'
        f'<h2 id="{esc(panel_id)}-h">{esc(title)}</h2>{fixed or ""}'
        f'<div class="panel-body" data-panel="{esc(panel_id)}">{inner}</div></section>'
    )


def table(caption: str, headers: Iterable[str], rows: Iterable[Iterable[str]], *, numeric: Iterable[int] = ()) -> str:
    """A table of already-escaped cells; `numeric`: indexes of right-aligned columns."""
    nums = set(numeric)
    num = ' class="num"'
    head = "".join(f'<th scope="col"{num if i in nums else ""}>{esc(h)}</th>' for i, h in enumerate(headers))
    body = []
    for row in rows:
        cells = "".join(f"<td{num if i in nums else ''}>{c}</td>" for i, c in enumerate(row))
        body.append(f"<tr>{cells}</tr>")
    if not body:
        return f'<p class="empty">{esc(caption)}: none yet.</p>'
    return (
        f'<div class="scroll" role="region" aria-label="{esc(caption)}" tabindex="0"><table>'
        f"<caption>{esc(caption)}</caption><thead><tr>{head}</tr></thead><tbody>{''.join(body)}</tbody></table></div>"
    )


def stats(items: Iterable[tuple[str, str]]) -> str:
    """Figures as a definition list of already-escaped values."""
    cells = "".join(f'<div class="stat"><dt>{esc(k)}</dt><dd>{v}</dd></div>' for k, v in items)
    return f'<dl class="stats">{cells}</dl>'


def badge(status: str) -> str:
    return f'<span class="badge badge-{esc(status)}" data-status="{esc(status)}">{esc(status)}</span>'


def hidden_csrf(csrf: str) -> str:
    return f'<input type="hidden" name="csrf" value="{esc(csrf)}">'


# ---- errors --------------------------------------------------------------------------------------

_TITLES = {400: "Bad request", 401: "Not signed in", 403: "Not allowed", 404: "Not found", 409: "Conflict"}


def error_page(request: web.Request, exc: ServiceError) -> web.Response:
    """A refusal as a page a person can read (the code and message of the shared error shape)."""
    title = _TITLES.get(exc.status, "Something went wrong")
    body = (
        f'<p class="error" role="alert">{esc(exc.message)}</p><p class="muted">code: <code>{esc(exc.code)}</code></p>'
        '<p><a href="/dashboard">Back to the dashboard</a></p>'
    )
    nav = Nav(csrf=None)
    return html_response(layout(request, title, body, nav=nav), status=exc.status)


Handler = Callable[[web.Request], Awaitable[web.StreamResponse]]


def html_errors(handler: Handler) -> Handler:
    """Answer a refusal raised by a page handler as an HTML page (the API's JSON error shape is for
    machines); anything unexpected is logged and answered as a plain 500 page, never a trace."""

    async def wrapped(request: web.Request) -> web.StreamResponse:
        try:
            return await handler(request)
        except ServiceError as exc:
            return error_page(request, exc)
        except web.HTTPException as exc:
            if exc.status < 400:
                raise
            return error_page(request, ServiceError(exc.status, "http_error", exc.reason))
        except Exception as exc:
            return error_page(request, answer_unexpected(exc, f"dashboard {request.method} {request.path}"))

    return wrapped
