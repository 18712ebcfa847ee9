"""Adding a feature the documented way (README "How a feature is shaped"): a core module, an api module
with its rows and runs exporting FEATURE, and one entry in the features create_app installs. The toy
(tests/integration/toy) answers over HTTP and over MCP, is in /api/schema, and its follower reaches the
indexer."""

from __future__ import annotations

import asyncio
from pathlib import Path

from api.features import FEATURES
from core.config import Settings
from core.services import Services
from indexer.service import feature_followers
from tests.integration.mcp_kit import DEPLOYMENT, mcp, service
from tests.integration.toy import api as toy


def test_a_feature_added_by_one_entry_answers_over_http_and_mcp(tmp_path: Path) -> None:
    async def body() -> None:
        async with service(tmp_path, features=(*FEATURES, toy.FEATURE)) as svc:
            await svc.account()  # one agent, whom the toy counts
            r = await svc.call("GET", "/api/toy/greeting", params={"name": "Ada"})
            assert (r.status, r.body) == (200, {"message": "Hello, Ada: 1 agent here"})
            refused = await svc.call("GET", "/api/toy/greeting", params={"name": "Ada1"})
            assert (refused.status, refused.body["code"], refused.body["param"]) == (400, "invalid_name", "name")
            schema = await svc.call("GET", "/api/schema")
            assert schema.body["paths"]["/api/toy/greeting"]["get"]["operationId"] == "toyGreeting"
            assert "invalid_name" in schema.body["paths"]["/api/toy/greeting"]["get"]["responses"]["400"]["description"]
            async with mcp(svc.url, None, "2026-07-28") as client:
                listed = {tool.name for tool in (await client.list_tools()).tools}
                result = await client.call_tool("toy_greeting", {"name": "Ada"})
            assert "toy_greeting" in listed
            assert not result.is_error and result.structured_content == {"message": "Hello, Ada: 1 agent here"}

    asyncio.run(body())


def test_the_indexer_takes_every_features_follower() -> None:
    services = Services(DEPLOYMENT, Settings(), "http://127.0.0.1:9", lambda: 0.0)
    names = [f.name for f in feature_followers(services, (*FEATURES, toy.FEATURE))]
    assert "toy" in names
    assert "toy" not in [f.name for f in feature_followers(services)]
