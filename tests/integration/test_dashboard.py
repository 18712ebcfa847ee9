"""The dashboard over real HTTP (the real create_app, a real SQLite file, loopback): the session
cookie's flags, the key never in a URL, CSRF and Origin checks on every form, sign-out, the operator
check, key issue and revoke, dead-letter reset, the CSV export, the live endpoint, security headers
and HTML error pages; hires and registry standing over a real anvil and a loopback provider. (The
browser tests, test_dashboard_browser.py, drive the same pages in Chromium.)"""

from __future__ import annotations

import asyncio
import csv
import io
import re
import time
from collections.abc import AsyncIterator
from contextlib import asynccontextmanager
from dataclasses import dataclass
from pathlib import Path
from typing import Any

import aiohttp
from aiohttp.test_utils import TestServer

from api.app import create_app
from api.dashboard.page import CSP
from core import outbox, wallets
from core.anvil import Anvil
from core.config import Settings
from core.deployments import Deployment
from core.keys import hash_api_key, new_api_key
from core.store import connect, transaction
from core.store import hire as hire_store
from core.store import marketplace as market_store
from core.store import outbox as outbox_store
from core.store import wallets as wallet_store
from scripts import issue_key
from tests.integration.chainkit import USDC, System
from tests.integration.hire_kit import run as hire_run

DEPLOYMENT = Deployment(
    chain_id=31337, network="anvil", deploy_block=0, deployer="0x" + "0" * 40, usdc="0x" + "1" * 40,
    mock_usdc=True, contracts={"MockUSDC": "0x" + "1" * 40},
)  # fmt: skip
PRICE = 2 * USDC
#: Nothing listens here: the operator's view must say the node does not answer, not fail.
DEAD_RPC = "http://127.0.0.1:9"


@dataclass
class Site:
    base: str
    db_path: Path

    def browser(self) -> aiohttp.ClientSession:
        """A client with a cookie jar that keeps cookies for 127.0.0.1, as a browser does."""
        return aiohttp.ClientSession(self.base, cookie_jar=aiohttp.CookieJar(unsafe=True))

    async def api(self, method: str, path: str, body: Any = None, key: str | None = None) -> tuple[int, Any]:
        headers = {"Authorization": f"Bearer {key}"} if key else {}
        async with aiohttp.ClientSession(self.base) as s, s.request(method, path, json=body, headers=headers) as r:
            return r.status, await r.json()

    async def account(self, name: str = "scout") -> tuple[str, str]:
        status, body = await self.api("POST", "/api/agents/register", {"name": name, "specialty": "content_seo"})
        assert status == 201
        return body["api_key"], body["agent"]["wallet"]

    def operator_key(self) -> str:
        return operator_key(self.db_path)


@asynccontextmanager
async def site(tmp_path: Path, **settings: Any) -> AsyncIterator[Site]:
    db_path = tmp_path / "dash.db"
    db = connect(db_path)
    app = create_app(DEPLOYMENT, DEAD_RPC, db, settings=Settings(**settings), sweep_interval=None)
    server = TestServer(app, host="127.0.0.1", port=0)
    await server.start_server()
    try:
        yield Site(str(server.make_url("")).rstrip("/"), db_path)
    finally:
        await server.close()
        db.close()


def form_token(html: str) -> str:
    found = re.search(r'name="csrf" value="([^"]+)"', html)
    assert found, html
    return found.group(1)


async def sign_in(s: aiohttp.ClientSession, key: str) -> aiohttp.ClientResponse:
    async with s.get("/dashboard/sign-in") as r:
        token = form_token(await r.text())
    async with s.post("/dashboard/sign-in", data={"key": key, "csrf": token}, allow_redirects=False) as r:
        await r.read()
        return r


def cookie(resp: aiohttp.ClientResponse, name: str) -> str:
    found = [c for c in resp.headers.getall("Set-Cookie", []) if c.startswith(name + "=")]
    assert len(found) == 1, resp.headers.getall("Set-Cookie", [])
    return found[0]


def run(coro: Any) -> None:
    asyncio.run(coro)


# ---- signing in and out -------------------------------------------------------------------------------


def test_sign_in_sets_an_httponly_strict_session_cookie_and_no_url_ever_holds_the_key(tmp_path: Path) -> None:
    async def main() -> None:
        async with site(tmp_path) as w, w.browser() as s:
            key, wallet = await w.account()
            async with s.get("/dashboard", allow_redirects=False) as r:
                assert (r.status, r.headers["Location"]) == (303, "/dashboard/sign-in")
            r = await sign_in(s, key)
            assert (r.status, r.headers["Location"]) == (303, "/dashboard")
            flags = cookie(r, "agl_session")
            assert "HttpOnly" in flags and "SameSite=Strict" in flags and "Path=/dashboard" in flags
            assert "Secure" not in flags  # plain http on loopback: a Secure cookie would never come back
            assert key not in flags and key not in r.headers["Location"]
            async with s.get("/dashboard") as page:
                html = await page.text()
                assert page.status == 200 and wallet in html and key not in html
                assert page.headers["Cache-Control"] == "no-store"
                assert page.headers["Content-Security-Policy"] == CSP
                assert page.headers["X-Content-Type-Options"] == "nosniff"
            # every link and form of the page leads somewhere without a key in it
            for url in re.findall(r'(?:href|action|data-live)="([^"]+)"', html):
                assert "aglk_" not in url

    run(main())


def test_the_cookie_is_secure_when_the_service_is_reached_over_https(tmp_path: Path) -> None:
    async def main() -> None:
        async with site(tmp_path, public_url="https://ledger.example.com") as w, w.browser() as s:
            key, _ = await w.account()
            async with s.get("/dashboard/sign-in") as r:
                token = form_token(await r.text())
                signin = cookie(r, "agl_signin")
                assert "Secure" in signin
            # as a browser on https sends it back (this client on plain http would not), with the page's Origin
            headers = {"Origin": "https://ledger.example.com", "Cookie": signin.split(";")[0]}
            async with s.post(
                "/dashboard/sign-in", data={"key": key, "csrf": token}, headers=headers, allow_redirects=False
            ) as r:
                assert r.status == 303 and "Secure" in cookie(r, "agl_session")

    run(main())


def test_a_wrong_key_is_refused_with_a_page_and_no_session(tmp_path: Path) -> None:
    async def main() -> None:
        async with site(tmp_path) as w, w.browser() as s:
            for wrong in ("aglk_" + "0" * 32, "not a key", ""):
                r = await sign_in(s, wrong)
                assert r.status == 401
                assert not [c for c in r.headers.getall("Set-Cookie", []) if c.startswith("agl_session=")]
            async with s.get("/dashboard", allow_redirects=False) as r:
                assert r.status == 303
            conn = connect(w.db_path)
            assert conn.execute("SELECT COUNT(*) FROM dashboard_sessions").fetchall()[0][0] == 0

    run(main())


def test_sign_in_needs_its_own_form_token_and_a_same_origin_post(tmp_path: Path) -> None:
    async def main() -> None:
        async with site(tmp_path) as w, w.browser() as s:
            key, _ = await w.account()
            await (await s.get("/dashboard/sign-in")).read()
            async with s.post("/dashboard/sign-in", data={"key": key, "csrf": "forged"}, allow_redirects=False) as r:
                assert r.status == 403 and "agl_session=" not in str(r.headers.getall("Set-Cookie", []))
            async with s.get("/dashboard/sign-in") as r:
                token = form_token(await r.text())
            evil = {"Origin": "https://evil.example"}
            async with s.post(
                "/dashboard/sign-in", data={"key": key, "csrf": token}, headers=evil, allow_redirects=False
            ) as r:
                assert r.status == 403 and "cross_site_request" in await r.text()
            async with s.post(
                "/dashboard/sign-in", json={"key": key, "csrf": token}, allow_redirects=False
            ) as r:  # not the form: refused before anything is read
                assert r.status == 415

    run(main())


def test_a_form_field_with_a_control_character_is_refused_like_any_request_string(tmp_path: Path) -> None:
    """The dashboard reads its own forms (api.errors reads JSON only), under the one string rule."""

    async def main() -> None:
        async with site(tmp_path) as w, w.browser() as s:
            key, _ = await w.account()
            async with s.get("/dashboard/sign-in") as r:
                token = form_token(await r.text())
            async with s.post(
                "/dashboard/sign-in", data={"key": key + "\x00", "csrf": token}, allow_redirects=False
            ) as r:
                assert r.status == 400 and "invalid_string" in await r.text()
                assert "agl_session=" not in str(r.headers.getall("Set-Cookie", []))
            r = await sign_in(s, key)  # the same form without it signs in
            assert r.status == 303

    run(main())


def test_sign_out_ends_the_session_on_the_server_and_needs_the_form_token(tmp_path: Path) -> None:
    async def main() -> None:
        async with site(tmp_path) as w, w.browser() as s:
            key, _ = await w.account()
            r = await sign_in(s, key)
            session = cookie(r, "agl_session").split(";")[0].split("=", 1)[1]
            async with s.get("/dashboard") as page:
                token = form_token(await page.text())
            async with s.post("/dashboard/sign-out", data={"csrf": "wrong"}, allow_redirects=False) as r:
                assert r.status == 403
            async with s.get("/dashboard", allow_redirects=False) as r:
                assert r.status == 200  # still signed in
            async with s.post("/dashboard/sign-out", data={"csrf": token}, allow_redirects=False) as r:
                assert (r.status, r.headers["Location"]) == (303, "/dashboard/sign-in")
                assert "Max-Age=0" in cookie(r, "agl_session")
            # the old cookie, replayed, opens nothing: the session is gone from the database
            async with (
                aiohttp.ClientSession(w.base) as other,
                other.get("/dashboard", headers={"Cookie": f"agl_session={session}"}, allow_redirects=False) as r,
            ):
                assert r.status == 303

    run(main())


# ---- what an owner sees -------------------------------------------------------------------------------


def test_the_owner_sees_balances_ledger_memory_as_text_and_exports_csv(tmp_path: Path) -> None:
    async def main() -> None:
        async with site(tmp_path) as w, w.browser() as s:
            key, wallet = await w.account("<b>scout</b>")
            for amount, source in ((250, "gumroad"), (12.5, "stripe"), (40, "gumroad")):
                status, _ = await w.api(
                    "POST", "/api/agents/earn", {"agentId": wallet, "amount": amount, "source": source}, key
                )
                assert status == 200
            status, _ = await w.api(
                "POST", "/api/agents/memory", {"agentId": wallet, "key": "note", "value": "<script>x()</script>"}, key
            )
            assert status == 200
            await sign_in(s, key)
            async with s.get("/dashboard") as r:
                html = await r.text()
            assert "&lt;b&gt;scout&lt;/b&gt;" in html and "<b>scout</b>" not in html
            assert "gumroad" in html and "290" in html  # by source: 250 + 40
            async with s.get(f"/dashboard/agents/{wallet}") as r:
                html = await r.text()
            assert "&lt;script&gt;x()&lt;/script&gt;" in html and "<script>x()" not in html
            async with s.get("/dashboard/ledger.csv", params={"source": "gumroad"}) as r:
                assert r.status == 200 and r.headers["Content-Type"] == "text/csv; charset=utf-8"
                assert r.headers["Content-Disposition"].startswith('attachment; filename="agentledger-ledger-')
                rows = list(csv.DictReader(io.StringIO(await r.text())))
            assert [(x["gross_usdc"], x["source"]) for x in rows] == [("40", "gumroad"), ("250", "gumroad")]
            async with s.get("/dashboard", params={"kind": "steal"}) as r:
                assert r.status == 400 and "text/html" in r.headers["Content-Type"]

    run(main())


def test_another_accounts_agent_is_not_found_and_unknown_pages_answer_html(tmp_path: Path) -> None:
    async def main() -> None:
        async with site(tmp_path) as w, w.browser() as s:
            key, _ = await w.account()
            _, theirs = await w.account("other")
            await sign_in(s, key)
            pages = []
            for path in (f"/dashboard/agents/{theirs}", "/dashboard/agents/agl_000000000000", "/dashboard/nope/x"):
                async with s.get(path) as r:
                    assert r.status == 404 and r.headers["Content-Type"].startswith("text/html")
                    assert r.headers["Content-Security-Policy"] == CSP
                    pages.append(await r.text())
            # another account's agent answers exactly as one that does not exist
            assert pages[0].replace(theirs, "W") == pages[1].replace("agl_000000000000", "W")
            async with s.get("/dashboard/static/../../core/keys.py") as r:
                assert r.status == 404

    run(main())


def test_live_answers_the_panels_with_an_etag_and_401_json_once_signed_out(tmp_path: Path) -> None:
    async def main() -> None:
        async with site(tmp_path) as w, w.browser() as s:
            key, wallet = await w.account()
            async with s.get("/dashboard/live") as r:
                assert r.status == 401 and (await r.json())["code"] == "not_signed_in"
            await sign_in(s, key)
            async with s.get("/dashboard/live", params={"view": "overview"}) as r:
                body, etag = await r.json(), r.headers["ETag"]
            overview = {"agents", "earnings", "ledger", "standing", "registry", "hires", "orders", "decisions"}
            assert set(body["panels"]) == overview
            async with s.get("/dashboard/live", params={"view": "overview"}, headers={"If-None-Match": etag}) as r:
                assert r.status == 304
            await w.api("POST", "/api/agents/earn", {"agentId": wallet, "amount": 1, "source": "tips"}, key)
            async with s.get("/dashboard/live", params={"view": "overview"}, headers={"If-None-Match": etag}) as r:
                assert r.status == 200 and "tips" in (await r.json())["panels"]["ledger"]
            async with s.get("/dashboard/live", params={"view": "agent", "wallet": wallet}) as r:
                assert set((await r.json())["panels"]) == {"agent", "listing", "registry", "hires", "memory", "brain"}
            async with s.get("/dashboard/live", params={"view": "operator"}) as r:
                assert r.status == 403 and (await r.json())["code"] == "operator_key_required"

    run(main())


# ---- the operator's view ------------------------------------------------------------------------------


def test_the_operator_view_needs_an_operator_key(tmp_path: Path) -> None:
    async def main() -> None:
        async with site(tmp_path) as w, w.browser() as s, w.browser() as ops:
            key, _ = await w.account()
            await sign_in(s, key)
            async with s.get("/dashboard/operator") as r:
                assert r.status == 403 and "operator key" in await r.text()
            async with s.get("/dashboard") as r:
                assert "/dashboard/operator" not in await r.text()  # no link for an owner
            await sign_in(ops, w.operator_key())
            async with ops.get("/dashboard/operator") as r:
                html = await r.text()
            assert r.status == 200 and "balances unavailable" in html  # nothing answers at DEAD_RPC
            for panel in ("network", "indexer", "jobs", "outbox", "anchors", "contracts", "keys"):
                assert f'data-panel="{panel}"' in html

    run(main())


def test_a_key_with_every_scope_but_no_operator_flag_is_refused_the_operator_view(tmp_path: Path) -> None:
    """The key scope 'admin' (its own account) is not the operator flag (the whole service): a key with
    all four scopes named, and one with NULL scopes (all, as every key issued before scopes), are refused
    the operator's pages and forms; an operator key with the 'read' scope alone opens them."""

    async def main() -> None:
        async with site(tmp_path) as w:
            owner_key, wallet = await w.account()
            conn = connect(w.db_path)
            account = conn.execute("SELECT account_id FROM wallet_agents WHERE wallet = ?", (wallet,)).fetchall()[0][0]
            named, narrow_operator = new_api_key(), new_api_key()
            with transaction(conn):
                wallets.issue_key(
                    conn, hash_api_key(named), time.time(), account_id=account, scopes="read log spend admin"
                )
                wallets.issue_key(
                    conn, hash_api_key(narrow_operator), time.time(), scopes="read", operator=True, new_account=True
                )
            row = wallet_store.get_api_key(conn, hash_api_key(owner_key))
            assert row is not None and row.scopes is None  # every scope, 'admin' included
            conn.close()
            event_id = _dead_letter(w.db_path, "https://hooks.example.com/x")
            for key in (owner_key, named):
                async with w.browser() as s:
                    await sign_in(s, key)
                    async with s.get("/dashboard") as r:
                        token = form_token(await r.text())
                    async with s.get("/dashboard/operator") as r:
                        assert r.status == 403 and "operator key" in await r.text()
                    data = {"event_id": event_id, "csrf": token}
                    async with s.post("/dashboard/operator/dead-letters/reset", data=data) as r:
                        assert r.status == 403
                    async with s.post("/dashboard/operator/keys", data={"scope": "new", "id": "", "csrf": token}) as r:
                        assert r.status == 403 and "aglk_" not in await r.text()
            async with w.browser() as ops:
                await sign_in(ops, narrow_operator)
                async with ops.get("/dashboard/operator") as r:
                    assert r.status == 200
            conn = connect(w.db_path)
            assert outbox_store.get_status(conn, event_id).status == "dead_letter"  # type: ignore[union-attr]
            conn.close()

    run(main())


def test_a_log_only_key_cannot_sign_in(tmp_path: Path) -> None:
    async def main() -> None:
        async with site(tmp_path) as w, w.browser() as s:
            _, wallet = await w.account()
            conn = connect(w.db_path)
            account = conn.execute("SELECT account_id FROM wallet_agents WHERE wallet = ?", (wallet,)).fetchall()[0][0]
            log_only = new_api_key()
            with transaction(conn):
                wallets.issue_key(conn, hash_api_key(log_only), time.time(), account_id=account, scopes="log")
            conn.close()
            r = await sign_in(s, log_only)
            assert r.status == 403 and not r.headers.getall("Set-Cookie", [])
            async with s.get("/dashboard", allow_redirects=False) as r:
                assert r.status == 303

    run(main())


def test_issue_key_script_operator_scopes_cap_and_revoke(tmp_path: Path, capsys: Any) -> None:
    """scripts.issue_key combines --scopes and --daily-cap (main) with --operator and --revoke."""
    db_path = tmp_path / "keys.db"
    connect(db_path).close()
    assert issue_key.main(["--operator", "--scopes", "read", "--daily-cap", "5", "--db", str(db_path)]) == 0
    out = capsys.readouterr()
    key = out.out.strip()
    assert re.fullmatch(r"aglk_[0-9a-f]{32}", key) and "an operator key" in out.err and "scopes read" in out.err
    conn = connect(db_path)
    row = conn.execute(
        "SELECT operator, scopes, daily_cap, revoked_at FROM api_keys WHERE key_hash = ?", (hash_api_key(key),)
    ).fetchall()[0]
    assert row == (1, "read", 5_000_000, None)
    account = conn.execute("SELECT account_id FROM api_keys WHERE key_hash = ?", (hash_api_key(key),)).fetchall()[0][0]
    # a plain key for that account: every scope, no operator flag
    assert issue_key.main(["--account", account, "--db", str(db_path)]) == 0
    plain = capsys.readouterr().out.strip()
    assert conn.execute("SELECT operator, scopes FROM api_keys WHERE key_hash = ?", (hash_api_key(plain),)).fetchall()[
        0
    ] == (0, None)
    # revoke by the hash prefix the operator view lists; twice: refused, exit 2
    assert issue_key.main(["--revoke", hash_api_key(plain)[:12], "--db", str(db_path)]) == 0
    assert "revoked key" in capsys.readouterr().err
    assert wallet_store.get_api_key(conn, hash_api_key(plain)) is None
    assert issue_key.main(["--revoke", hash_api_key(plain)[:12], "--db", str(db_path)]) == 2
    assert "already revoked" in capsys.readouterr().err
    assert issue_key.main(["--revoke", "0" * 12, "--db", str(db_path)]) == 2
    conn.close()
    for bad in (["--db", str(db_path)], ["--revoke", "ab" * 6, "--operator", "--db", str(db_path)]):
        try:
            issue_key.main(bad)
        except SystemExit as exc:
            assert exc.code == 2
        else:
            raise AssertionError(bad)


def test_the_agent_page_shows_its_listing_with_offers(tmp_path: Path) -> None:
    """The drop (core/marketplace): the agent's latest listing, whether it pauses the agent, its offers
    (no signature), and the same panel in the live update."""

    async def main() -> None:
        async with site(tmp_path) as w, w.browser() as s:
            key, wallet = await w.account()
            await sign_in(s, key)
            async with s.get(f"/dashboard/agents/{wallet}") as r:
                assert "Not listed in the drop" in await r.text()
            conn = connect(w.db_path)
            agent = wallet_store.agent_by_wallet(conn, wallet)
            assert agent is not None
            now = time.time()
            listing = market_store.ListingRow(
                "11111111-1111-4111-8111-111111111111", 7, agent.uuid, 3, agent.account_id, "0x" + "a" * 40,
                25_000_000, 20_000_000, 0, True, None, "active", int(now) + 86400, "0x" + "1" * 64, 10, True, None,
                now, now,
            )  # fmt: skip
            offer = market_store.OfferRow(
                "22222222-2222-4222-8222-222222222222", listing.id, "0x" + "b" * 40, 21_500_000, 1,
                int(now) + 3600, "0x" + "5" * 130, None, "buyer-account", "open", now, now,
            )  # fmt: skip
            with transaction(conn):
                market_store.insert_listing(conn, listing)
                market_store.insert_offer(conn, offer)
            conn.close()
            async with s.get(f"/dashboard/agents/{wallet}") as r:
                html = await r.text()
            assert 'data-panel="listing"' in html and "paused for the sale" in html
            assert "25" in html and "21.5" in html and "0xbbbbbbbb" in html and "5" * 130 not in html
            async with s.get("/dashboard/live", params={"view": "agent", "wallet": wallet}) as r:
                panels = await r.json()
            listing_html = panels["panels"]["listing"]
            assert "21.5" in listing_html and 'data-status="open"' in listing_html

    run(main())


def _dead_letter(db_path: Path, url: str) -> str:
    conn = connect(db_path)
    with transaction(conn):
        event_id = outbox.enqueue_webhook(conn, event="e", source="order:o", url=url, secret="s", payload={}, now=0)
        row = conn.execute("SELECT id FROM outbox WHERE event_id = ?", (event_id,)).fetchall()[0][0]
        for _ in outbox.RETRY_DELAYS:
            outbox_store.record_attempt(conn, row, ok=False, status=500, error="x", now=0, delays=outbox.RETRY_DELAYS)
    conn.close()
    return event_id


def test_a_dead_letter_is_reset_only_with_the_sessions_token(tmp_path: Path) -> None:
    async def main() -> None:
        async with site(tmp_path) as w, w.browser() as ops:
            event_id = _dead_letter(w.db_path, "https://hooks.example.com/T0/SECRET")
            await sign_in(ops, w.operator_key())
            async with ops.get("/dashboard/operator") as r:
                html = await r.text()
            assert event_id in html and "hooks.example.com:443" in html and "SECRET" not in html
            token = form_token(html)
            data = {"event_id": event_id, "csrf": "x"}
            async with ops.post("/dashboard/operator/dead-letters/reset", data=data, allow_redirects=False) as r:
                assert r.status == 403
            conn = connect(w.db_path)
            assert outbox_store.get_status(conn, event_id).status == "dead_letter"  # type: ignore[union-attr]
            data["csrf"] = token
            async with ops.post("/dashboard/operator/dead-letters/reset", data=data, allow_redirects=False) as r:
                assert r.status == 303 and r.headers["Location"].startswith("/dashboard/operator?done=reset")
            status = outbox_store.get_status(conn, event_id)
            assert status is not None and status.status == "pending" and status.attempts == 0
            async with ops.post("/dashboard/operator/dead-letters/reset", data=data) as r:
                assert r.status == 404  # no longer a dead letter

    run(main())


def test_keys_are_issued_once_and_a_revoked_key_stops_working_at_once(tmp_path: Path) -> None:
    async def main() -> None:
        async with site(tmp_path) as w, w.browser() as ops, w.browser() as owner:
            key, wallet = await w.account()
            await sign_in(owner, key)
            await sign_in(ops, w.operator_key())
            async with ops.get("/dashboard/operator") as r:
                token = form_token(await r.text())
            async with ops.post("/dashboard/operator/keys", data={"scope": "new", "id": "", "csrf": token}) as r:
                assert r.status == 201 and r.headers["Cache-Control"] == "no-store"
                issued = re.findall(r"aglk_[0-9a-f]{32}", await r.text())
            assert len(issued) == 1
            assert (await w.api("GET", f"/api/agents/balance?agentId={wallet}", key=issued[0]))[0] == 404
            async with ops.get("/dashboard/operator") as r:
                assert issued[0] not in await r.text()  # shown once
            # the owner's key works, then is revoked by its hash prefix and stops at once
            assert (await w.api("GET", f"/api/agents/balance?agentId={wallet}", key=key))[0] == 200
            data = {"key": hash_api_key(key)[:12], "csrf": token}
            async with ops.post("/dashboard/operator/keys/revoke", data=data, allow_redirects=False) as r:
                assert r.status == 303
            status, body = await w.api("GET", f"/api/agents/balance?agentId={wallet}", key=key)
            assert (status, body["code"]) == (401, "invalid_api_key")
            async with owner.get("/dashboard", allow_redirects=False) as r:
                assert r.status == 303  # its dashboard session ended too

    run(main())


# ---- hires and registry standing (over a real anvil and a loopback provider) ------------------------


def _panel(html: str, panel_id: str) -> str:
    """The live part of one panel of a page."""
    start = html.index(f'data-panel="{panel_id}"')
    return html[start : html.index("</section>", start)]


def _hire_rows(panel_html: str) -> list[tuple[str, str]]:
    """(job id, role) of the hires panel's rows, in the order shown."""
    return re.findall(r'data-hire="([^"]+)" data-role="([^"]+)"', panel_html)


async def _dashboard(h: Any, key: str) -> aiohttp.ClientSession:
    s = aiohttp.ClientSession(h.base, cookie_jar=aiohttp.CookieJar(unsafe=True))
    r = await sign_in(s, key)
    assert r.status == 303
    return s


async def _live(s: aiohttp.ClientSession, **params: str) -> dict[str, str]:
    async with s.get("/dashboard/live", params=params) as r:
        assert r.status == 200
        panels: dict[str, str] = (await r.json())["panels"]
        return panels


def test_hires_and_registry_standing_show_each_owner_its_own_side_live(
    system: System, tmp_path: Path, anvil: Anvil
) -> None:
    """Hires made through the real API (standard, and escrow locked on anvil and released by the
    operator) at a real loopback provider: the provider's owner sees every hire it received with the
    escrow job's release; a caller's owner sees its own hire and never another account's; an in-flight
    hire shows (reserved, with its SLA deadline) in the live panels and in the operator's Network
    counts, then moves on; the provider's own description shows as text."""

    async def body(h: Any) -> None:
        p = await h.provider(system.users[0], system.users[1], description="<script>alert(1)</script> keywords")
        h.set_price(p, PRICE)
        await h.index()
        key_a, caller_a, _ = await h.caller(100)
        key_b, caller_b, _ = await h.caller(100)
        r = await h.hire_call(key_a, caller_a, provider=p.wallet, topic="tea")
        assert r.status == 200, r.body
        job_a = r.body["jobId"]
        r = await h.hire_call(key_b, caller_b, provider=p.wallet, topic="coffee")
        assert r.status == 200, r.body
        job_b = r.body["jobId"]
        escrow_job, lock_tx = h.lock(system.users[5], p, "dashboard")
        r = await h.call("POST", "/api/a2a/escrow", h.escrow_body(system.users[5], p, escrow_job, lock_tx))
        assert r.status == 200 and r.body["status"] == "released", r.body
        release_tx = r.body["releaseTx"]
        await h.index()

        a = await _dashboard(h, key_a)
        prov = await _dashboard(h, p.key)
        try:
            # the caller's owner: its own hire, as caller, with the provider as counterparty; nothing of B's
            async with a.get("/dashboard") as page:
                html = await page.text()
            hires_a = _panel(html, "hires")
            assert _hire_rows(hires_a) == [(job_a, "caller")]
            assert p.wallet in hires_a and job_b not in html and escrow_job not in html and caller_b not in html
            assert "Services in the registry: none yet" in _panel(html, "registry")
            # the provider's owner: every hire it received, newest first, the escrow one with its chain steps
            async with prov.get(f"/dashboard/agents/{p.wallet}") as page:
                html = await page.text()
                assert page.headers["Content-Security-Policy"] == CSP
            hires_p = _panel(html, "hires")
            assert _hire_rows(hires_p) == [(escrow_job, "provider"), (job_b, "provider"), (job_a, "provider")]
            assert caller_a in hires_p and caller_b in hires_p and system.users[5].address in hires_p
            assert f'title="{escrow_job}"' in hires_p and f'title="{release_tx}"' in hires_p
            assert f'title="{lock_tx}"' in hires_p and "final" in hires_p and "escrow" in hires_p
            assert hires_p.count('data-status="charged"') == 2 and hires_p.count('data-status="released"') == 1
            # its registry standing: price, SLA, reputation, escrow available; the description as text
            registry = _panel(html, "registry")
            assert "<code>keyword_research</code>" in registry and '<td class="num">2</td>' in registry
            assert "<td>5 s</td>" in registry  # the service's SLA
            assert "available" in registry and "published" in registry and "healthy" in registry
            assert "&lt;script&gt;alert(1)&lt;/script&gt; keywords" in registry and "<script>alert" not in html
            svc = hire_store.get_service(h.db, p.uuid, "keyword_research")
            assert svc is not None and svc.jobs == 3 and f"{svc.score:.3f}" in registry and "100%" in registry
            assert p.published["signingSecret"] not in html  # never a secret
            # the overview shows the same hires (the account's one agent)
            panels = await _live(prov, view="overview")
            assert _hire_rows(panels["hires"]) == _hire_rows(hires_p)

            # a hire in flight: reserved, with its SLA deadline, live; the operator counts it
            op = await _dashboard(h, operator_key(h.db_path))
            try:
                network = (await _live(op, view="operator"))["network"]
                assert re.search(r"<dt>Hires</dt><dd>3</dd>", network)
                assert re.search(r"<dt>Hires in flight</dt><dd>0</dd>", network)
                gate = asyncio.Event()
                h.provider_server.gate = gate
                task = asyncio.create_task(h.hire_call(key_a, caller_a, provider=p.wallet, topic="gated"))
                for _ in range(200):
                    held = h.db.execute("SELECT id FROM hire_jobs WHERE status = 'reserved'").fetchall()
                    if held:
                        break
                    await asyncio.sleep(0.05)
                (job_c,) = (str(row[0]) for row in held)
                live_a = (await _live(a, view="overview"))["hires"]
                assert _hire_rows(live_a) == [(job_c, "caller"), (job_a, "caller")]
                assert 'data-status="reserved"' in live_a and " UTC" in live_a.split(job_c)[1].split("</tr>")[0]
                network = (await _live(op, view="operator"))["network"]
                assert re.search(r"<dt>Hires</dt><dd>4</dd>", network)
                assert re.search(r"<dt>Hires in flight</dt><dd>1</dd>", network)
                gate.set()
                r = await task
                assert r.status == 200 and r.body["jobId"] == job_c
                live_a = (await _live(a, view="overview"))["hires"]
                assert 'data-status="reserved"' not in live_a and 'data-status="charged"' in live_a
                assert re.search(r"<dt>Hires in flight</dt><dd>0</dd>", (await _live(op, view="operator"))["network"])
                # B's owner still sees only its own hire
                b = await _dashboard(h, key_b)
                try:
                    assert _hire_rows((await _live(b, view="overview"))["hires"]) == [(job_b, "caller")]
                    async with b.get(f"/dashboard/agents/{p.wallet}") as r404:
                        assert r404.status == 404
                finally:
                    await b.close()
            finally:
                await op.close()
        finally:
            await a.close()
            await prov.close()

    hire_run(tmp_path, system, anvil.rpc_url, body)


def operator_key(db_path: Path) -> str:
    key = new_api_key()
    conn = connect(db_path)
    with transaction(conn):
        wallets.issue_key(conn, hash_api_key(key), time.time(), operator=True, new_account=True)
    conn.close()
    return key
