"""Signing in and out of the dashboard, and who a request is from.

The key is typed into the sign-in form (a POST body: never a URL) and exchanged for a session cookie
(core.dashboard.access): HttpOnly (no script reads it), SameSite=Strict (no other site's request
carries it), Path=/dashboard, Secure when the service is reached over https (the request's scheme or
AGENTLEDGER_PUBLIC_URL). Every form carries the session's CSRF token, and a POST whose Origin is
another site's is refused before its token is even looked at. The sign-in form itself, before any
session exists, is protected by a double-submit token (a short-lived cookie equal to a form field).
"""

from __future__ import annotations

import secrets
from urllib.parse import parse_qsl

from aiohttp import web
from multidict import MultiDict, MultiDictProxy

from api.dashboard.page import Nav, esc, html_errors, html_response, layout, redirect
from api.http import PUBLIC_URL, base_url, services_of
from core.dashboard import access
from core.dashboard.access import Viewer
from core.errors import ServiceError
from core.jsontext import bad_text, invalid_string
from core.store import Conn

SESSION_COOKIE = "agl_session"
SIGNIN_COOKIE = "agl_signin"
COOKIE_PATH = "/dashboard"
#: The largest form the dashboard accepts (a sign-in, a reset, a key to issue or revoke).
MAX_FORM_BYTES = 4096


def is_https(request: web.Request) -> bool:
    configured = request.app.get(PUBLIC_URL)
    return request.scheme == "https" or bool(configured and configured.startswith("https://"))


def set_cookie(request: web.Request, resp: web.StreamResponse, name: str, value: str, max_age: int) -> None:
    resp.set_cookie(
        name,
        value,
        max_age=max_age,
        path=COOKIE_PATH,
        httponly=True,
        samesite="Strict",
        secure=is_https(request),
    )


def clear_cookie(request: web.Request, resp: web.StreamResponse, name: str) -> None:
    resp.del_cookie(name, path=COOKIE_PATH, httponly=True, samesite="Strict", secure=is_https(request))


def viewer_of(db: Conn, request: web.Request, now: float) -> Viewer | None:
    """The signed-in viewer of this request, if any (revoked keys and expired sessions: None), read on
    `db`: for a read function that goes on to read what the viewer sees (one read per request)."""
    return access.viewer(db, request.cookies.get(SESSION_COOKIE), now)


async def current(request: web.Request) -> Viewer | None:
    """The signed-in viewer of this request, if any (revoked keys and expired sessions: None)."""
    now = services_of(request.app).clock()
    return await services_of(request.app).reads.run(lambda db: viewer_of(db, request, now))


async def require(request: web.Request) -> Viewer:
    """The viewer, or a 401 refusal (page handlers turn it into a redirect to the sign-in page)."""
    found = await current(request)
    if found is None:
        raise ServiceError(401, "not_signed_in", "sign in with your API key first")
    return found


def check_origin(request: web.Request) -> None:
    """A POST from another site is refused: its Origin (sent by browsers on every POST) must be ours."""
    origin = request.headers.get("Origin")
    if origin is not None and origin != base_url(request):
        raise ServiceError(403, "cross_site_request", "this form must be sent from the dashboard itself")


async def read_form(request: web.Request) -> MultiDictProxy[str]:
    """The POSTed form (urlencoded, at most MAX_FORM_BYTES), after the Origin check."""
    check_origin(request)
    if request.content_type != "application/x-www-form-urlencoded":
        raise ServiceError(
            415, "unsupported_media_type", "send the dashboard's form (application/x-www-form-urlencoded)"
        )
    if request.content_length is not None and request.content_length > MAX_FORM_BYTES:
        raise ServiceError(413, "payload_too_large", f"a dashboard form is at most {MAX_FORM_BYTES} bytes")
    body = await request.content.read(MAX_FORM_BYTES + 1)
    if len(body) > MAX_FORM_BYTES:
        raise ServiceError(413, "payload_too_large", f"a dashboard form is at most {MAX_FORM_BYTES} bytes")
    try:
        pairs = parse_qsl(body.decode("utf-8"), keep_blank_values=True, strict_parsing=False)
    except UnicodeDecodeError as exc:
        raise ServiceError(400, "invalid_form", "the form is not UTF-8") from exc
    for name, value in pairs:  # the rule of every request string (api.errors reads JSON bodies only)
        if bad_text(name) or bad_text(value):
            raise invalid_string(None if bad_text(name) else name)
    return MultiDictProxy(MultiDict(pairs))


async def posted(request: web.Request) -> tuple[Viewer, MultiDictProxy[str]]:
    """A signed-in POST: the viewer and its form, whose CSRF token must be the session's (403)."""
    viewer = await require(request)
    form = await read_form(request)
    if not access.csrf_ok(viewer.csrf, form.get("csrf")):
        raise ServiceError(403, "csrf_failed", "this form is stale or was not sent from the dashboard; reload it")
    return viewer, form


# ---- sign-in and sign-out ------------------------------------------------------------------------


def _sign_in_page(request: web.Request, token: str, error: str | None, status: int) -> web.Response:
    alert = f'<p class="error" role="alert" id="sign-in-error">{esc(error)}</p>' if error else ""
    described = ' aria-describedby="sign-in-error" aria-invalid="true"' if error else ""
    body = (
        f"{alert}"
        '<form method="post" action="/dashboard/sign-in" class="sign-in">'
        f'<input type="hidden" name="csrf" value="{esc(token)}">'
        '<label for="key">API key</label>'
        f'<input id="key" name="key" type="password" autocomplete="off" spellcheck="false" required'
        f' inputmode="text" pattern="aglk_[0-9a-f]{{32}}" placeholder="aglk_…" autofocus{described}>'
        '<p class="hint">Your account or agent key (<code>aglk_</code> and 32 hex digits). It is sent once and kept '
        "only as a session cookie this browser's scripts cannot read.</p>"
        '<button type="submit">Sign in</button></form>'
    )
    resp = html_response(layout(request, "Sign in", body, nav=Nav(csrf=None)), status=status)
    set_cookie(request, resp, SIGNIN_COOKIE, token, 3600)
    return resp


@html_errors
async def sign_in_form(request: web.Request) -> web.StreamResponse:
    if await current(request) is not None:
        return redirect("/dashboard")
    return _sign_in_page(request, secrets.token_urlsafe(24), None, 200)


@html_errors
async def sign_in(request: web.Request) -> web.StreamResponse:
    form = await read_form(request)
    expected = request.cookies.get(SIGNIN_COOKIE)
    if expected is None or not access.csrf_ok(expected, form.get("csrf")):
        return _sign_in_page(request, secrets.token_urlsafe(24), "The form expired; please try again.", 403)
    key = form.get("key", "")
    now = services_of(request.app).clock()
    try:
        token, _viewer = await services_of(request.app).writer.run(lambda conn: access.sign_in(conn, key, now))
    except ServiceError as exc:
        if exc.status != 401:
            raise
        return _sign_in_page(request, secrets.token_urlsafe(24), "That API key is not valid.", 401)
    resp = redirect("/dashboard")
    set_cookie(request, resp, SESSION_COOKIE, token, int(access.SESSION_TTL))
    clear_cookie(request, resp, SIGNIN_COOKIE)
    return resp


@html_errors
async def sign_out(request: web.Request) -> web.StreamResponse:
    await posted(request)  # signed in, the session's own form
    token = request.cookies.get(SESSION_COOKIE, "")
    await services_of(request.app).writer.run(lambda conn: access.sign_out(conn, token))
    resp = redirect("/dashboard/sign-in")
    clear_cookie(request, resp, SESSION_COOKIE)
    return resp
