"""The dashboard in a real browser: Debian's headless Chromium driven by Playwright (never a browser
download), against the real service on loopback.

- on the session anvil with the indexer and the order follower running: an owner signs in with the
  keyboard, an earn appears with its source and an order moves to `released` without a reload; the
  operator resets a dead letter and it is delivered;
- a wrong key is refused and an owner's key does not open the operator's view;
- the Content-Security-Policy: a memory value and an agent name holding <script> show as text, and a
  script injected into the page, inline or as an event handler, is blocked by the browser;
- a phone's viewport: no sideways scrolling of the page, every field labelled, tables captioned;
- hires: a provider's own description holding <script> shows as text, and a new hire appears live.

Screenshots of each page go to a temporary directory (printed with -s; AGENTLEDGER_ARTIFACTS names
another); `make test` installs Chromium."""

from __future__ import annotations

import asyncio
import os
import time
from collections.abc import AsyncIterator
from contextlib import asynccontextmanager
from pathlib import Path
from typing import Any

import pytest
from playwright.async_api import Browser, BrowserContext, Page, async_playwright, expect

from core import outbox
from core.anvil import Anvil
from core.store import connect, transaction
from core.store import outbox as outbox_store
from tests.integration.chainkit import System
from tests.integration.hire_kit import run as hire_run
from tests.integration.test_checkout_e2e import buy, open_shop, running, until
from tests.integration.test_dashboard import operator_key, site

CHROMIUM = "/usr/bin/chromium"
#: As root, headless, and quiet on a machine whose only network is loopback (the machines' notes).
ARGS = [
    "--headless",
    "--no-sandbox",
    "--disable-gpu",
    "--disable-quic",
    "--no-first-run",
    "--disable-background-networking",
    "--disable-component-update",
    "--disable-sync",
]
#: Records every Content-Security-Policy violation of a page (init scripts are the browser's, not the page's).
WATCH_CSP = (
    "window.__csp = []; document.addEventListener('securitypolicyviolation',"
    " e => window.__csp.push(e.violatedDirective + ' ' + e.blockedURI));"
)


@pytest.fixture(scope="module")
def artifacts(tmp_path_factory: pytest.TempPathFactory) -> Path:
    configured = os.environ.get("AGENTLEDGER_ARTIFACTS")
    path = Path(configured) if configured else tmp_path_factory.mktemp("dashboard-screenshots")
    path.mkdir(parents=True, exist_ok=True)
    print(f"\ndashboard screenshots: {path}")
    return path


@asynccontextmanager
async def chromium() -> AsyncIterator[Browser]:
    if not Path(CHROMIUM).exists():
        pytest.fail(f"{CHROMIUM} is missing: `make test` installs Debian's chromium (apt-get install chromium)")
    async with async_playwright() as p:
        browser = await p.chromium.launch(executable_path=CHROMIUM, args=ARGS)
        try:
            yield browser
        finally:
            await browser.close()


async def new_context(browser: Browser, **kw: Any) -> BrowserContext:
    ctx = await browser.new_context(**kw)
    await ctx.add_init_script(WATCH_CSP)
    return ctx


async def sign_in_by_keyboard(page: Page, base: str, key: str) -> None:
    """Type the key into the focused field and press Enter, as a person without a mouse would."""
    await page.goto(base + "/dashboard/sign-in")
    await expect(page.locator("#key")).to_be_focused()
    await page.keyboard.type(key)
    await page.keyboard.press("Enter")
    await page.wait_for_url(base + "/dashboard")


async def until_true(page: Page, expression: str, timeout: float = 15.0) -> None:
    """Poll `expression` from outside the page (page.wait_for_function evaluates its predicate with
    eval inside the page, which this page's Content-Security-Policy refuses)."""
    deadline = time.monotonic() + timeout
    while not await page.evaluate(expression):
        assert time.monotonic() < deadline, f"timed out waiting for {expression}"
        await asyncio.sleep(0.02)


async def no_csp_violations(page: Page) -> None:
    assert await page.evaluate("window.__csp") == []


async def shot(page: Page, artifacts: Path, name: str) -> None:
    await page.screenshot(path=str(artifacts / f"{name}.png"), full_page=True)


def dead_letter(db_path: Path, url: str, secret: str) -> str:
    """A webhook whose every attempt failed (as the dispatcher records them): a dead letter."""
    conn = connect(db_path)
    with transaction(conn):
        event_id = outbox.enqueue_webhook(
            conn, event="job.state_changed", source="order:o", url=url, secret=secret, payload={"n": 1}, now=time.time()
        )
        row = conn.execute("SELECT id FROM outbox WHERE event_id = ?", (event_id,)).fetchall()[0][0]
        for _ in outbox.RETRY_DELAYS:
            outbox_store.record_attempt(
                conn, row, ok=False, status=503, error="HTTP 503", now=time.time(), delays=outbox.RETRY_DELAYS
            )
    conn.close()
    return event_id


# ---- on the chain: live updates, an order released, a dead letter reset -----------------------------------


def test_an_earn_and_a_released_order_appear_live_and_the_operator_resets_a_dead_letter(
    system: System, tmp_path: Path, artifacts: Path
) -> None:
    async def main() -> None:
        async with running(tmp_path, system) as w, chromium() as browser:
            shop = await open_shop(w)
            reg = await w.ok(
                "POST", "/api/agents/register", {"name": "scout", "specialty": "data_research"}, 201, key=shop.buyer_key
            )
            wallet, uuid = reg["agent"]["wallet"], reg["agent"]["id"]
            earn = {"agentId": wallet, "amount": 120, "source": "stripe"}
            await w.ok("POST", "/api/agents/earn", earn, key=shop.buyer_key)
            decision = {"event_type": "high_stakes", "content_hash": "ab" * 32, "model_id": "planner"}
            decision["model_version"] = "7"
            logged = await w.ok("POST", f"/api/agents/{uuid}/log", decision, 201, key=shop.buyer_key)
            base = w.base.rstrip("/")
            ctx = await new_context(browser, viewport={"width": 1280, "height": 900})
            page = await ctx.new_page()
            await sign_in_by_keyboard(page, base, shop.buyer_key)
            await expect(page.locator('[data-panel="agents"]')).to_contain_text("scout")
            await page.evaluate("window.__sameDocument = true")  # gone if the page reloads

            # an earn reported through the API shows, with its source, in the ledger and by source
            earn = {"agentId": wallet, "amount": 250, "source": "gumroad-live"}
            await w.ok("POST", "/api/agents/earn", earn, key=shop.buyer_key)
            ledger_row = page.locator('[data-panel="ledger"] tr', has_text="gumroad-live")
            await expect(ledger_row).to_contain_text("250", timeout=15_000)
            await expect(ledger_row).to_contain_text("scout")
            by_source = page.locator('[data-panel="earnings"] tr', has_text="gumroad-live")
            await expect(by_source).to_contain_text("reported")
            assert await page.evaluate("window.__sameDocument") is True

            # an order the account funds moves to released on screen, its history kept open
            done = await buy(w, shop, "live", multipart=False, refusals=False)
            row = page.locator('[data-panel="orders"] tr', has_text=done.order_id[-4:])
            await expect(row).to_be_visible(timeout=15_000)
            await row.locator("summary").click()
            await expect(row.locator('[data-status="released"]').first).to_be_visible(timeout=20_000)
            assert await row.locator("details").get_attribute("open") is not None  # kept open across updates
            await expect(row.locator("ol.moves li")).to_have_count(5)
            assert await row.locator('a[href^="/verify/"]').count() == 5
            assert await page.evaluate("window.__sameDocument") is True
            await expect(page.locator("#live-status")).to_contain_text("Updated")
            await no_csp_violations(page)
            await shot(page, artifacts, "dashboard-buyer")

            # the decision log links each entry to its public verification
            entry = page.locator('[data-panel="decisions"] tr', has_text="planner 7")
            await expect(entry).to_contain_text("high_stakes")
            await entry.get_by_role("link", name=f"verify #{logged['audit_id']}").click()
            await page.wait_for_url(f"{base}/verify/{logged['audit_id']}")
            await expect(page.locator("p.ok")).to_contain_text("matches the stored one")
            await page.goto(f"{base}/dashboard/agents/{wallet}")
            await expect(page.locator("h1")).to_have_text("scout")
            await shot(page, artifacts, "agent")

            # the seller's account: the release is a settled on-chain earning, its agent NFT standing shown
            await w.ok(
                "POST",
                "/api/agents/earn",
                {"agentId": shop.provider_wallet, "amount": 90, "source": "consulting"},
                key=shop.provider_key,
            )
            seller = await (await new_context(browser, viewport={"width": 1280, "height": 900})).new_page()
            await sign_in_by_keyboard(seller, base, shop.provider_key)
            settled = seller.locator('[data-panel="earnings"] tr', has_text="settled: PaymentGateway")
            await expect(settled).to_contain_text("250")
            await expect(settled).to_contain_text("settled on-chain")
            await expect(seller.locator('[data-panel="standing"]')).to_contain_text(str(shop.token_id))
            sold = seller.locator('[data-panel="orders"] tr', has_text=done.order_id[-4:])
            await expect(sold).to_contain_text("provider")
            await expect(sold.locator('td > [data-status="released"]')).to_be_visible()
            # both charts drawn by the vendored Chart.js (served by the service, allowed by the CSP)
            await until_true(
                seller,
                "[...document.querySelectorAll('canvas')]"
                ".filter(c => window.Chart && window.Chart.getChart(c)).length === 2",
            )
            await no_csp_violations(seller)
            await shot(seller, artifacts, "dashboard")

            # the operator: a dead letter to a receiver that answers again is reset and delivered
            w.hooks.secrets["revived"] = "revived-secret"
            event_id = dead_letter(tmp_path / "ledger.db", f"{w.hooks.url}/revived", "revived-secret")
            ops = await (await new_context(browser, viewport={"width": 1280, "height": 900})).new_page()
            await sign_in_by_keyboard(ops, base, operator_key(tmp_path / "ledger.db"))
            await ops.get_by_role("link", name="Operator").click()
            await ops.wait_for_url(base + "/dashboard/operator")
            dead_row = ops.locator('[data-panel="outbox"] tr', has_text=event_id)
            await expect(dead_row).to_contain_text("job.state_changed")
            await expect(ops.locator('[data-panel="indexer"]')).to_contain_text("synced")
            await expect(ops.locator('[data-panel="contracts"]')).to_contain_text("PaymentGateway")
            await ops.get_by_role("button", name=f"Reset dead letter {event_id}").click()
            await ops.wait_for_url("**/dashboard/operator?done=reset*")
            await expect(ops.locator(".notice")).to_contain_text("Dead letters reset")

            async def delivered() -> bool:
                return bool(w.hooks.of("revived"))

            await until("the reset dead letter delivered", delivered)
            got = w.hooks.of("revived")[0]
            assert got.event_id == event_id and got.service_ok and got.standard_ok
            await expect(ops.locator('[data-panel="outbox"]')).not_to_contain_text(event_id, timeout=10_000)
            await no_csp_violations(ops)
            await shot(ops, artifacts, "operator")

    asyncio.run(main())


# ---- refusals -------------------------------------------------------------------------------------------


def test_a_wrong_key_is_refused_and_an_owner_cannot_open_the_operators_view(tmp_path: Path, artifacts: Path) -> None:
    async def main() -> None:
        async with site(tmp_path) as w, chromium() as browser:
            ctx = await new_context(browser)
            page = await ctx.new_page()
            await page.goto(w.base + "/dashboard/sign-in")
            await shot(page, artifacts, "sign-in")
            await page.fill("#key", "aglk_" + "0" * 32)
            await page.click("button[type=submit]")
            await expect(page.get_by_role("alert")).to_have_text("That API key is not valid.")
            assert page.url == w.base + "/dashboard/sign-in"
            assert await page.locator("#key").get_attribute("aria-invalid") == "true"
            assert not [c for c in await ctx.cookies() if c["name"] == "agl_session"]
            await shot(page, artifacts, "sign-in-refused")
            await page.goto(w.base + "/dashboard")
            assert page.url == w.base + "/dashboard/sign-in"  # still nobody

            key, _ = await w.account()
            await sign_in_by_keyboard(page, w.base, key)
            session = [c for c in await ctx.cookies() if c["name"] == "agl_session"]
            assert len(session) == 1 and session[0]["httpOnly"] and session[0]["sameSite"] == "Strict"
            assert await page.evaluate("document.cookie") == ""  # no script can read it
            resp = await page.goto(w.base + "/dashboard/operator")
            assert resp is not None and resp.status == 403
            await expect(page.get_by_role("alert")).to_contain_text("operator key")
            await page.goto(w.base + "/dashboard")
            await page.get_by_role("button", name="Sign out").click()
            await page.wait_for_url(w.base + "/dashboard/sign-in")
            await page.goto(w.base + "/dashboard")
            assert page.url == w.base + "/dashboard/sign-in"
            await no_csp_violations(page)

    asyncio.run(main())


def test_the_csp_blocks_injected_scripts_and_stored_markup_shows_as_text(tmp_path: Path, artifacts: Path) -> None:
    async def main() -> None:
        async with site(tmp_path) as w, chromium() as browser:
            key, wallet = await w.account('<img src=x onerror="window.__pwned=1">')
            value = "<script>window.__pwned = 1</script>"
            status, _ = await w.api(
                "POST", "/api/agents/memory", {"agentId": wallet, "key": "<b>note</b>", "value": value}, key
            )
            assert status == 200
            earn = {"agentId": wallet, "amount": 1, "source": "<script>x</script>"}
            await w.api("POST", "/api/agents/earn", earn, key)
            page = await (await new_context(browser)).new_page()
            await sign_in_by_keyboard(page, w.base, key)
            await page.goto(f"{w.base}/dashboard/agents/{wallet}")
            # stored markup is text on the page: the memory value, its key, the agent's name
            await expect(page.locator('[data-panel="memory"] pre.value')).to_have_text(f'"{value}"')
            await expect(page.locator('[data-panel="memory"] code').first).to_have_text("<b>note</b>")
            await expect(page.locator("h1")).to_have_text('<img src=x onerror="window.__pwned=1">')
            await page.goto(w.base + "/dashboard")
            await expect(page.locator('[data-panel="ledger"]')).to_contain_text("<script>x</script>")
            assert await page.evaluate("window.__pwned") is None
            await no_csp_violations(page)
            # script slipped into the page (as an XSS would): the browser refuses to run it
            await page.evaluate(
                """() => {
                    const s = document.createElement('script');
                    s.textContent = 'window.__pwned = 2';
                    document.body.appendChild(s);
                    const i = document.createElement('img');
                    i.setAttribute('onerror', 'window.__pwned = 3');
                    i.src = '/dashboard/static/nothing.png';
                    document.body.appendChild(i);
                    const f = document.createElement('script');
                    f.src = 'https://cdn.example.com/evil.js';
                    document.body.appendChild(f);
                }"""
            )
            await until_true(page, "window.__csp.length >= 3")
            assert await page.evaluate("window.__pwned") is None
            violations = await page.evaluate("window.__csp")
            assert all(v.startswith("script-src") for v in violations), violations
            assert any("cdn.example.com" in v for v in violations)
            await shot(page, artifacts, "csp")

    asyncio.run(main())


def test_on_a_phone_the_pages_fit_and_every_control_is_labelled(tmp_path: Path, artifacts: Path) -> None:
    async def main() -> None:
        async with site(tmp_path) as w, chromium() as browser:
            key, wallet = await w.account()
            for amount, source in ((250, "gumroad"), (40, "stripe")):
                await w.api("POST", "/api/agents/earn", {"agentId": wallet, "amount": amount, "source": source}, key)
            ops_key = operator_key(w.db_path)
            phone = {"viewport": {"width": 390, "height": 844}, "is_mobile": True, "has_touch": True}
            for name, signed_with, path in (
                ("phone-dashboard", key, "/dashboard"),
                ("phone-agent", key, f"/dashboard/agents/{wallet}"),
                ("phone-operator", ops_key, "/dashboard/operator"),
            ):
                page = await (await new_context(browser, **phone)).new_page()
                await sign_in_by_keyboard(page, w.base, signed_with)
                await page.goto(w.base + path)
                await page.wait_for_load_state("networkidle")
                # the page itself never scrolls sideways (wide tables scroll inside their own region)
                assert await page.evaluate("document.documentElement.scrollWidth <= window.innerWidth"), name
                unlabelled = await page.evaluate(
                    "[...document.querySelectorAll('input:not([type=hidden]), select')]"
                    ".filter(e => !e.labels || e.labels.length === 0).map(e => e.name)"
                )
                assert unlabelled == [], (name, unlabelled)
                assert await page.evaluate("[...document.querySelectorAll('table')].every(t => t.caption)")
                assert await page.evaluate(
                    "[...document.querySelectorAll('canvas')].every(c => c.getAttribute('aria-label'))"
                )
                assert await page.evaluate("document.documentElement.lang") == "en"
                # the skip link is the first stop of the keyboard and leads to the content
                await page.keyboard.press("Tab")
                await expect(page.get_by_role("link", name="Skip to content")).to_be_focused()
                await no_csp_violations(page)
                await shot(page, artifacts, name)

    asyncio.run(main())


# ---- hires: a provider's description as text, a hire appearing live ------------------------------------------


def test_a_providers_description_shows_as_text_and_a_new_hire_appears_live(
    system: System, tmp_path: Path, anvil: Anvil, artifacts: Path
) -> None:
    """On the session anvil with a real loopback provider (tests.integration.hire_kit): the service's
    own description holding <script> is text in the registry panel, and a hire made while the page is
    open shows in the hires panel without a reload."""

    async def body(h: Any) -> None:
        injected = "<script>window.__pwned = 1</script>"
        p = await h.provider(system.users[0], system.users[1], description=injected)
        key, caller, _ = await h.caller(100)
        first = await h.hire_call(key, caller, provider=p.wallet)
        assert first.status == 200, first.body
        async with chromium() as browser:
            page = await (await new_context(browser)).new_page()
            await sign_in_by_keyboard(page, h.base, p.key)
            await expect(page.locator('[data-panel="registry"] .description')).to_have_text(injected)
            hires = page.locator('[data-panel="hires"] [data-hire]')
            await expect(hires).to_have_count(1)
            second = await h.hire_call(key, caller, provider=p.wallet, topic="live")
            assert second.status == 200, second.body
            await expect(hires).to_have_count(2)
            await expect(hires.first).to_have_attribute("data-hire", second.body["jobId"])
            await expect(page.locator('[data-panel="hires"]')).to_contain_text(caller)
            assert await page.evaluate("window.__pwned") is None
            await no_csp_violations(page)
            await shot(page, artifacts, "hires")

    hire_run(tmp_path, system, anvil.rpc_url, body)
