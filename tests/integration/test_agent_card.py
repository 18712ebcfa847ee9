"""The A2A agent cards over real HTTP: cacheable, readable from any origin (CORS), absolute URLs
from the request (or the configured public URL); the 1.0 card at agent-card.json valid against the
A2A 1.0 AgentCard of the a2a-sdk (its protobuf message, parsed from the served JSON with unknown
fields refused), the pre-1.0 card at agent.json valid against the AgentCard of a2a-sdk 0.3.x (the
JSON schema of its pydantic model, a2a_0_3_agent_card.schema.json: `url` required among others)."""

from __future__ import annotations

import asyncio
import json
from pathlib import Path
from typing import Any

import aiohttp
import jsonschema
import pytest
from aiohttp.test_utils import TestServer

from api.agent_card import AGENT_CARD_PATHS, CACHE_CONTROL, build_card
from api.app import create_app
from api.openapi import API_VERSION
from core.deployments import Deployment
from core.store import connect

a2a_pb2 = pytest.importorskip("a2a.types.a2a_pb2")
json_format = pytest.importorskip("google.protobuf.json_format")

DEPLOYMENT = Deployment(
    chain_id=31337, network="anvil", deploy_block=0, deployer="0x" + "0" * 40, usdc="0x" + "1" * 40,
    mock_usdc=True, contracts={},
)  # fmt: skip


def fetch_all(tmp_path: Path, public_url: str | None = None) -> list[tuple[int, dict[str, str], dict[str, Any]]]:
    async def main() -> list[tuple[int, dict[str, str], dict[str, Any]]]:
        db = connect(tmp_path / "wallets.db", durable=True)
        app = create_app(DEPLOYMENT, "http://127.0.0.1:9", db, public_url=public_url)
        server = TestServer(app, host="127.0.0.1", port=0)
        await server.start_server()
        out = []
        try:
            async with aiohttp.ClientSession() as session:
                for path in AGENT_CARD_PATHS:
                    async with session.get(str(server.make_url(path))) as resp:
                        out.append((resp.status, dict(resp.headers), json.loads(await resp.read())))
                async with session.head(str(server.make_url(AGENT_CARD_PATHS[1]))) as resp:
                    assert resp.status == 200
        finally:
            await server.close()
            db.close()
        return out

    return asyncio.run(main())


def parse_a2a(card: dict[str, Any]) -> Any:
    """The served JSON as the a2a-sdk's AgentCard; a field it does not know is an error."""
    return json_format.ParseDict(card, a2a_pb2.AgentCard(), ignore_unknown_fields=False)


LEGACY_SCHEMA = json.loads((Path(__file__).parent / "a2a_0_3_agent_card.schema.json").read_text())


def test_both_paths_serve_cacheable_cards_any_origin_may_read(tmp_path: Path) -> None:
    (s1, h1, legacy), (s2, h2, card) = fetch_all(tmp_path)
    assert s1 == s2 == 200
    for h in (h1, h2):
        assert h["Cache-Control"] == CACHE_CONTROL == "public, max-age=3600"
        assert h["Content-Type"].startswith("application/json")
        assert h["Access-Control-Allow-Origin"] == "*"
    assert legacy["name"] == card["name"] and legacy["skills"] == card["skills"]
    base = card["provider"]["url"]
    assert base.startswith("http://127.0.0.1:")
    # exactly the interfaces the A2A endpoint serves (tests/integration/test_a2a_endpoint.py drives both)
    assert [(i["protocolBinding"], i["url"]) for i in card["supportedInterfaces"]] == [
        ("JSONRPC", base + "/api/a2a/rpc"),
        ("HTTP+JSON", base + "/api"),
    ]
    assert card["capabilities"]["streaming"] is True
    assert card["documentationUrl"] == base + "/api/schema"
    assert card["version"] == API_VERSION


def test_legacy_path_serves_what_pre_1_0_clients_read(tmp_path: Path) -> None:
    """a2a-sdk 0.3.x clients refused the 1.0 card at agent.json (`url: Field required`)."""
    (_s, _h, legacy), (_s2, _h2, card) = fetch_all(tmp_path)
    jsonschema.validate(legacy, LEGACY_SCHEMA)
    with pytest.raises(jsonschema.ValidationError, match="'url' is a required property"):
        jsonschema.validate(card, LEGACY_SCHEMA)  # what agent.json served before
    base = card["provider"]["url"]
    assert legacy["url"] == base + "/api/a2a/rpc" and legacy["preferredTransport"] == "JSONRPC"
    assert legacy["protocolVersion"] == "0.3.0"
    assert legacy["securitySchemes"]["bearer"] == {
        "type": "http",
        "scheme": "bearer",
        "bearerFormat": "aglk_ followed by 32 lowercase hex",
        "description": "API key from POST /api/agents/register or POST /api/keys",
    }
    assert legacy["security"] == [{"bearer": []}] and legacy["documentationUrl"] == base + "/api/schema"
    # the MCP endpoint is named in both cards alike (extension and skill)
    assert legacy["capabilities"]["extensions"] == card["capabilities"]["extensions"]
    assert [s["id"] for s in legacy["skills"]][-1] == "mcp"
    assert [s["id"] for s in legacy["skills"]] == [s["id"] for s in card["skills"]] == ["hire", "mcp"]


def test_card_is_a_valid_a2a_1_0_agent_card(tmp_path: Path) -> None:
    _, (_s, _h, card) = fetch_all(tmp_path)
    parsed = parse_a2a(card)
    # proto3 has no required fields: check the ones A2A 1.0 marks REQUIRED
    assert parsed.name == "agentledger" and parsed.description and parsed.version == "1.0.0"
    assert parsed.HasField("capabilities")
    assert list(parsed.default_input_modes) == ["application/json"]
    assert list(parsed.default_output_modes) == ["application/json"]
    assert len(parsed.supported_interfaces) >= 1
    for iface in parsed.supported_interfaces:
        assert iface.url.startswith("http") and iface.protocol_binding in ("JSONRPC", "GRPC", "HTTP+JSON")
        assert iface.protocol_version == "1.0"
    scheme = parsed.security_schemes["bearer"]
    assert scheme.WhichOneof("scheme") == "http_auth_security_scheme"
    assert scheme.http_auth_security_scheme.scheme.lower() == "bearer"
    assert "aglk_" in scheme.http_auth_security_scheme.bearer_format
    assert [set(r.schemes) for r in parsed.security_requirements] == [{"bearer"}]
    # every requirement names a declared scheme
    for req in parsed.security_requirements:
        assert set(req.schemes) <= set(parsed.security_schemes)
    skills = {s.id: s for s in parsed.skills}
    # what a message does (a hire) and the MCP tools: the skills that work, nothing the endpoint lacks
    assert list(skills) == ["hire", "mcp"]
    for s in parsed.skills:
        assert s.id and s.name and s.description and len(s.tags) >= 1 and len(s.examples) >= 1
    assert len(skills) == len(parsed.skills)  # ids are unique
    # the round trip through the SDK's message loses nothing we served
    # (proto3 JSON leaves out the empty scope list of the bearer requirement)
    back = json_format.MessageToDict(parsed)
    assert back.pop("securityRequirements") == [{"schemes": {"bearer": {}}}]
    assert card.pop("securityRequirements") == [{"schemes": {"bearer": {"list": []}}}]
    assert back == card


def test_card_with_a_configured_public_url(tmp_path: Path) -> None:
    (_s, _h, legacy), (_s2, _h2, card) = fetch_all(tmp_path, public_url="https://ledger.example.com/")
    parse_a2a(card)
    assert legacy["url"] == "https://ledger.example.com/api/a2a/rpc"
    assert card["supportedInterfaces"][1]["url"] == "https://ledger.example.com/api"
    assert card["documentationUrl"] == "https://ledger.example.com/api/schema"
    assert card["provider"]["url"] == "https://ledger.example.com"


def test_an_unknown_field_would_be_refused() -> None:
    """The validation is strict: the SDK refuses a card carrying a field A2A 1.0 does not define
    (e.g. the top-level `url` of A2A 0.x)."""
    card = json.loads(build_card("https://x.example").model_dump_json(by_alias=True, exclude_none=True))
    parse_a2a(card)
    with pytest.raises(json_format.ParseError):
        parse_a2a({**card, "url": "https://x.example"})
