"""`GET /api/schema`: a valid OpenAPI 3.1 document, generated from the request models, covering
every route the app registers; and a bounded property-based run (schemathesis) against a live
loopback server over a real SQLite file: no 5xx, every response as documented."""

from __future__ import annotations

import asyncio
import json
import re
import threading
from collections.abc import Iterator
from contextlib import contextmanager
from pathlib import Path
from typing import Any

import pytest
import requests
from aiohttp import web
from hypothesis import HealthCheck, Phase, given, settings
from hypothesis.errors import Unsatisfiable

from api.app import create_app
from api.models import WALLET_PATTERN
from api.openapi import (
    API_VERSION,
    REF_TEMPLATE,
    SCHEMA_PATH,
    add_schema_routes,
    app_routes,
    document,
    documented_routes,
)
from api.operations import OPERATIONS
from api.wallets import create_wallet_app
from core.deployments import Deployment
from core.store import connect

DEPLOYMENT = Deployment(
    chain_id=31337, network="anvil", deploy_block=0, deployer="0x" + "0" * 40, usdc="0x" + "1" * 40,
    mock_usdc=True, contracts={},
)  # fmt: skip

#: Routes deliberately left out of the document. Add (METHOD, path) here, with a reason, only for a
#: route that is not part of the REST API (every other route must have its OPERATIONS row).
UNDOCUMENTED: frozenset[tuple[str, str]] = frozenset(
    {
        # The MCP endpoint: JSON-RPC over Streamable HTTP (POST, GET, DELETE), described by its own
        # protocol (server/discover, tools/list); its tools are this document's operations.
        ("*", "/api/mcp"),
    }
)

#: The POSTs that move value and must honour Idempotency-Key.
VALUE_MOVING = {("POST", "/api/agents/earn"), ("POST", "/api/agents/spend")}


@contextmanager
def live_server(app: web.Application) -> Iterator[str]:
    """Serve `app` on a free loopback port from a background thread; yields the base URL."""
    loop = asyncio.new_event_loop()
    thread = threading.Thread(target=loop.run_forever, daemon=True)
    thread.start()
    runner = web.AppRunner(app)

    async def start() -> str:
        await runner.setup()
        site = web.TCPSite(runner, "127.0.0.1", 0)
        await site.start()
        host, port = runner.addresses[0][:2]
        return f"http://{host}:{port}"

    try:
        yield asyncio.run_coroutine_threadsafe(start(), loop).result(10)
    finally:
        asyncio.run_coroutine_threadsafe(runner.cleanup(), loop).result(10)
        loop.call_soon_threadsafe(loop.stop)
        thread.join(10)
        loop.close()


def full_app(tmp_path: Path) -> web.Application:
    return create_app(DEPLOYMENT, "http://127.0.0.1:9", connect(tmp_path / "wallets.db", durable=True))


def served_document(app: web.Application) -> dict[str, Any]:
    with live_server(app) as base:
        resp = requests.get(base + SCHEMA_PATH, timeout=10)
    assert resp.status_code == 200
    assert resp.headers["Content-Type"].startswith("application/json")
    doc: dict[str, Any] = resp.json()
    return doc


def operations_of(doc: dict[str, Any]) -> set[tuple[str, str]]:
    return {(method.upper(), path) for path, item in doc["paths"].items() for method in item}


# ---- the document -------------------------------------------------------------------------------


def test_document_is_valid_openapi_3_1(tmp_path: Path) -> None:
    validator = pytest.importorskip("openapi_spec_validator")
    doc = served_document(full_app(tmp_path))
    assert doc["openapi"] == "3.1.0"
    assert doc["info"]["version"] == API_VERSION == "1.0.0"
    validator.validate(doc)  # detects 3.1 from the document; raises on any violation
    ids = [op["operationId"] for item in doc["paths"].values() for op in item.values()]
    assert len(ids) == len(set(ids))


def test_every_registered_route_is_documented(tmp_path: Path) -> None:
    """An endpoint added to the app without its OPERATIONS row fails here."""
    app = full_app(tmp_path)
    registered = app_routes(app)
    missing = registered - documented_routes(OPERATIONS) - UNDOCUMENTED
    assert not missing, f"routes without an OPERATIONS row (api.operations): {sorted(missing)}"
    stale = documented_routes(OPERATIONS) - registered
    assert not stale, f"OPERATIONS rows without a route on the full app: {sorted(stale)}"
    assert operations_of(served_document(app)) == registered - UNDOCUMENTED


def test_document_describes_only_the_routes_the_app_serves(tmp_path: Path) -> None:
    app = create_wallet_app(connect(tmp_path / "w.db", durable=True))
    add_schema_routes(app, OPERATIONS)
    ops = operations_of(served_document(app))
    assert ("GET", "/healthz") not in ops
    assert ("POST", "/api/agents/earn") in ops and ("GET", SCHEMA_PATH) in ops
    assert ops == app_routes(app) & documented_routes(OPERATIONS)


def _resolve(doc: dict[str, Any], ref: str) -> dict[str, Any]:
    name = ref.removeprefix("#/components/schemas/")
    schema: dict[str, Any] = doc["components"]["schemas"][name]
    return schema


def test_request_schemas_are_the_pydantic_models() -> None:
    doc = document(OPERATIONS)
    checked = 0
    for op in OPERATIONS:
        item = doc["paths"][op.path][op.method.lower()]
        if op.request is not None:
            ref = item["requestBody"]["content"]["application/json"]["schema"]["$ref"]
            assert ref == REF_TEMPLATE.format(model=op.request.__name__)
            expected = op.request.model_json_schema(ref_template=REF_TEMPLATE)
            for name, sub in expected.pop("$defs", {}).items():
                assert doc["components"]["schemas"][name] == sub
            assert _resolve(doc, ref) == expected
            assert item["requestBody"]["required"] is True
            checked += 1
        else:
            assert "requestBody" not in item
        if op.query is not None:
            schema = op.query.model_json_schema(ref_template=REF_TEMPLATE)
            params = {p["name"]: p for p in item["parameters"] if p["in"] == "query"}
            assert set(params) == set(schema["properties"])
            for name, prop in schema["properties"].items():
                assert params[name]["schema"] == {k: v for k, v in prop.items() if k != "title"}
                assert params[name]["required"] == (name in schema.get("required", ()))
        resp = item["responses"][str(op.status)]["content"]["application/json"]["schema"]
        assert _resolve(doc, resp["$ref"]) == {
            k: v
            for k, v in op.response.model_json_schema(ref_template=REF_TEMPLATE, mode="serialization").items()
            if k != "$defs"
        }
    assert checked >= 3


def test_error_shape_security_and_idempotency() -> None:
    doc = document(OPERATIONS)
    err = doc["components"]["schemas"]["Error"]
    assert set(err["properties"]) == set(err["required"]) == {"type", "code", "message", "param"}
    assert err["additionalProperties"] is False
    assert doc["components"]["securitySchemes"]["bearerAuth"]["scheme"] == "bearer"
    assert "aglk_" in doc["components"]["securitySchemes"]["bearerAuth"]["bearerFormat"]
    assert doc["security"] == [{"bearerAuth": []}]
    for op in OPERATIONS:
        item = doc["paths"][op.path][op.method.lower()]
        for status, resp in item["responses"].items():
            if int(status) >= 400:
                assert resp["content"]["application/json"]["schema"] == {"$ref": "#/components/schemas/Error"}
                assert re.search(r"`code` is one of: \w+", resp["description"])
        if op.auth == "required":
            assert "security" not in item and "401" in item["responses"]
        else:
            assert item["security"] == ([] if op.auth == "none" else [{}, {"bearerAuth": []}])
        names = [p["name"] for p in item.get("parameters", ())]
        assert ("Idempotency-Key" in names) == op.idempotent
        if (op.method, op.path) in VALUE_MOVING:
            assert op.idempotent, f"{op.method} {op.path} moves value: it must honour Idempotency-Key"
    assert documented_routes(OPERATIONS) >= VALUE_MOVING


# ---- property-based run against a live server -------------------------------------------------

MAX_EXAMPLES = 25


@pytest.fixture()
def live(tmp_path: Path) -> Iterator[tuple[str, str, str]]:
    """(base URL, API key, wallet) of a live wallet app (+ schema and agent card) over a real file."""
    from api.agent_card import add_agent_card_routes

    db = connect(tmp_path / "wallets.db", durable=True)
    app = create_wallet_app(db)
    add_schema_routes(app, OPERATIONS)
    add_agent_card_routes(app)
    try:
        with live_server(app) as base:
            r = requests.post(
                base + "/api/agents/register", json={"name": "fuzz", "specialty": "content_seo"}, timeout=10
            )
            assert r.status_code == 201, r.text
            key, wallet = r.json()["api_key"], r.json()["agent"]["wallet"]
            r = requests.post(
                base + "/api/agents/earn",
                json={"agentId": wallet, "amount": 1000},
                headers={"Authorization": f"Bearer {key}"},
                timeout=10,
            )
            assert r.status_code == 200, r.text
            yield base, key, wallet
    finally:
        db.close()


def test_schemathesis_finds_no_5xx_and_no_undocumented_response(live: tuple[str, str, str]) -> None:
    schemathesis = pytest.importorskip("schemathesis")
    from schemathesis.checks import not_a_server_error
    from schemathesis.generation import GenerationMode
    from schemathesis.specs.openapi.checks import (
        content_type_conformance,
        response_headers_conformance,
        response_schema_conformance,
        status_code_conformance,
    )

    base, key, wallet = live
    schema = schemathesis.openapi.from_url(base + SCHEMA_PATH)
    checks = [
        not_a_server_error,
        status_code_conformance,
        content_type_conformance,
        response_headers_conformance,
        response_schema_conformance,
    ]
    headers = {"Authorization": f"Bearer {key}"}
    wallet_re = re.compile(WALLET_PATTERN)
    session = requests.Session()
    statuses: dict[str, set[int]] = {}

    def use_our_wallet(container: Any) -> None:
        # a well-formed agentId is almost never a registered one: aim it at ours to reach success paths
        agent_id = container.get("agentId") if isinstance(container, dict) else None
        if isinstance(agent_id, str) and wallet_re.fullmatch(agent_id):
            container["agentId"] = wallet

    operations = [result.ok() for result in schema.get_all_operations()]
    tested = {(op.method.upper(), op.path) for op in operations}
    served = operations_of(requests.get(base + SCHEMA_PATH, timeout=10).json())
    assert tested == served - {("GET", SCHEMA_PATH)}  # schemathesis leaves out the schema's own path
    for operation in operations:
        label = f"{operation.method.upper()} {operation.path}"
        for mode in (GenerationMode.POSITIVE, GenerationMode.NEGATIVE):

            @settings(
                max_examples=MAX_EXAMPLES,
                deadline=None,
                database=None,
                derandomize=True,
                phases=[Phase.explicit, Phase.generate],
                suppress_health_check=list(HealthCheck),
            )
            @given(case=operation.as_strategy(generation_mode=mode))
            def run(case: Any) -> None:
                use_our_wallet(case.body)
                use_our_wallet(case.query)
                resp = case.call_and_validate(base_url=base, session=session, headers=headers, checks=checks)
                statuses.setdefault(label, set()).add(resp.status_code)  # noqa: B023 (run() is called right below)

            try:
                run()
            except Unsatisfiable:
                # nothing to negate (an operation without parameters or body has no invalid input)
                assert mode == GenerationMode.NEGATIVE and not operation.body and not operation.query, label
    # the run reached the success path of the operations that can succeed for our agent
    for label in ("POST /api/agents/earn", "GET /api/agents/balance", "GET /api/agents/identity"):
        assert 200 in statuses[label], (label, statuses[label])
    assert all(s < 500 for codes in statuses.values() for s in codes), statuses
    # the balance is what the ledger says: never negative after the fuzzing
    bal = session.get(base + "/api/agents/balance", params={"agentId": wallet}, headers=headers, timeout=10)
    assert bal.status_code == 200 and json.loads(bal.text)["balance"] >= 0
