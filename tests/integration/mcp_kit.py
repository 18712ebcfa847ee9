"""Shared by the MCP tests: the real service (api.app.create_app over a real SQLite file, no chain) on a
loopback port, and the official `mcp` client on either protocol revision."""

from __future__ import annotations

import time
from collections.abc import AsyncIterator, Awaitable, Callable
from contextlib import asynccontextmanager
from dataclasses import dataclass
from pathlib import Path
from typing import Any

import aiohttp
import apsw
import mcp_types as t
from aiohttp import web
from mcp import Client
from mcp.client.streamable_http import streamable_http_client
from mcp.shared._httpx_utils import create_mcp_http_client

from api.app import create_app
from api.feature import Feature
from api.features import FEATURES
from core import wallets
from core.deployments import Deployment
from core.keys import hash_api_key, new_api_key
from core.store import connect, transaction
from tests.integration.http_kit import Client as HttpClient
from tests.integration.http_kit import Clock

DEPLOYMENT = Deployment(
    chain_id=31337, network="anvil", deploy_block=0, deployer="0x" + "0" * 40, usdc="0x" + "1" * 40,
    mock_usdc=True, contracts={},
)  # fmt: skip
#: Both revisions the endpoint serves: the handshake one (initialize + session) and the stateless one.
MODES = ("legacy", "2026-07-28")

Elicit = Callable[[Any, t.ElicitRequestParams], Awaitable[t.ElicitResult]]


@dataclass
class Service(HttpClient):
    url: str
    db: apsw.Connection
    clock: Clock
    app: web.Application

    async def account(self, name: str = "scout") -> tuple[str, str, str]:
        """A new account over HTTP: (its key, its agent's wallet, the account id)."""
        r = await self.call("POST", "/api/agents/register", {"name": name, "specialty": "data_research"})
        assert r.status == 201, r.body
        agent = wallets_row(self.db, r.body["agent"]["wallet"])
        return r.body["api_key"], r.body["agent"]["wallet"], agent.account_id

    async def fund(self, key: str, wallet: str, amount: int = 250) -> None:
        r = await self.call("POST", "/api/agents/earn", {"agentId": wallet, "amount": amount, "source": "t"}, key=key)
        assert r.status == 200, r.body

    def issue_key(self, account_id: str, scopes: str | None = None, daily_cap: int | None = None) -> str:
        """An operator-issued key (core.wallets.issue_key) with limits."""
        key = new_api_key()
        with transaction(self.db):
            wallets.issue_key(
                self.db, hash_api_key(key), time.time(), account_id=account_id, scopes=scopes, daily_cap=daily_cap
            )
        return key

    def spends(self, wallet: str) -> int:
        agent = wallets_row(self.db, wallet)
        rows = self.db.execute(
            "SELECT count(*) FROM ledger WHERE agent_uuid = ? AND kind = 'spend'", (agent.uuid,)
        ).fetchall()
        return int(rows[0][0])


def wallets_row(db: apsw.Connection, wallet: str) -> Any:
    from core.store import wallets as store

    agent = store.agent_by_wallet(db, wallet)
    assert agent is not None
    return agent


@asynccontextmanager
async def service(
    tmp_path: Path, *, public_url: str | None = None, features: tuple[Feature, ...] = FEATURES
) -> AsyncIterator[Service]:
    db = connect(tmp_path / "ledger.db", durable=True)
    clock = Clock(now=time.time())
    app = create_app(
        DEPLOYMENT, "http://127.0.0.1:9", db, clock=clock, sweep_interval=None, public_url=public_url, features=features
    )
    runner = web.AppRunner(app)
    await runner.setup()
    site = web.TCPSite(runner, "127.0.0.1", 0)
    await site.start()
    host, port = runner.addresses[0][:2]
    base = f"http://{host}:{port}"
    try:
        async with aiohttp.ClientSession() as session:
            yield Service(session, base, base + "/api/mcp", db, clock, app)
    finally:
        await runner.cleanup()
        db.close()


@asynccontextmanager
async def mcp(
    url: str,
    key: str | None = None,
    mode: str = "legacy",
    elicit: Elicit | None = None,
    toolsets: str | None = "all",
    message_handler: Any = None,
) -> AsyncIterator[Client]:
    """The official client on `mode`; `toolsets`: the session's choice (`?toolsets=`; None: none, so
    the key's own or the compact default)."""
    headers = {"Authorization": f"Bearer {key}"} if key else None
    if toolsets is not None:
        url = f"{url}?toolsets={toolsets}"
    async with create_mcp_http_client(headers=headers) as http:
        kwargs: dict[str, Any] = {"mode": mode}
        if elicit is not None:
            kwargs["elicitation_callback"] = elicit
        if message_handler is not None:
            kwargs["message_handler"] = message_handler
        async with Client(streamable_http_client(url, http_client=http), **kwargs) as client:
            yield client


def error_code(result: t.CallToolResult) -> str:
    assert result.is_error, result.structured_content
    assert result.structured_content is not None
    code = result.structured_content["error"]["code"]
    assert result.meta is not None and result.meta["agentledger/errorCode"] == code
    return str(code)


def accept(confirm: bool) -> Elicit:
    """An elicitation callback that confirms (or declines) and records the messages it was shown."""
    shown: list[str] = []

    async def callback(context: Any, params: t.ElicitRequestParams) -> t.ElicitResult:
        shown.append(params.message)
        if confirm:
            return t.ElicitResult(action="accept", content={"confirm": True})
        return t.ElicitResult(action="decline")

    callback.shown = shown  # type: ignore[attr-defined]
    return callback
