"""`GET /api/schema`: a valid OpenAPI 3.1 document, generated from the request models, covering
every route the app registers and stating the rule of every request string; and a bounded run of
schemathesis (every check, every phase, with and without a key) against the real service on the
session anvil, seeded with real ids (scripts.fuzz_api): zero failures."""

from __future__ import annotations

import os
import re
import subprocess
from pathlib import Path
from typing import Any

import pytest
import requests
from aiohttp import web

from api import dashboard, metrics
from api.app import create_app
from api.hire.a2a import host as a2a_host
from api.openapi import (
    API_VERSION,
    REF_TEMPLATE,
    SCHEMA_PATH,
    add_schema_routes,
    document,
    model_schema,
    request_schema,
    routes_of,
)
from api.operation_table import OPERATIONS
from api.wallets import create_wallet_app
from core.deployments import Deployment
from core.store import connect
from scripts.fuzz_api import config_toml, schemathesis_command, seed, service_app, serving
from tests.integration.chainkit import System

DEPLOYMENT = Deployment(
    chain_id=31337, network="anvil", deploy_block=0, deployer="0x" + "0" * 40, usdc="0x" + "1" * 40,
    mock_usdc=True, contracts={},
)  # fmt: skip

#: Routes deliberately left out of the document. Add (METHOD, path) here, with a reason, only for a
#: route that is not part of the REST API (every other route must have its OPERATIONS row):
#: - the dashboard's pages, forms and assets (HTML for people, signed in by cookie; not MCP tools);
#: - /metrics (Prometheus text format behind its own optional token, not an API key);
#: - the MCP endpoint: JSON-RPC over Streamable HTTP (POST, GET, DELETE), described by its own
#:   protocol (server/discover, tools/list); its tools are this document's operations.
UNDOCUMENTED: frozenset[tuple[str, str]] = dashboard.ROUTES | metrics.ROUTES | {("*", "/api/mcp")} | a2a_host.ROUTES

#: (METHOD, path) of every operation of the table.
DOCUMENTED = frozenset((op.method, op.path) for op in OPERATIONS)

#: The POSTs that move value and must honour Idempotency-Key.
VALUE_MOVING = {("POST", "/api/agents/earn"), ("POST", "/api/agents/spend")}


def full_app(tmp_path: Path) -> web.Application:
    return create_app(DEPLOYMENT, "http://127.0.0.1:9", connect(tmp_path / "wallets.db", durable=True))


def served_document(app: web.Application) -> dict[str, Any]:
    with serving(app) as base:
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


def test_the_full_app_serves_exactly_its_rows_and_its_pages(tmp_path: Path) -> None:
    """Routes are made from the rows (api.policy.mount): a route registered by hand instead (the
    dashboard's pages aside) would be missing from /api/schema and MCP, and fails here; so does a row
    whose feature create_app does not mount."""
    app = full_app(tmp_path)
    registered = routes_of(app.router)
    assert registered - DOCUMENTED == UNDOCUMENTED & registered
    assert registered >= DOCUMENTED
    assert operations_of(served_document(app)) == registered - UNDOCUMENTED


def test_document_describes_only_the_routes_the_app_serves(tmp_path: Path) -> None:
    app = create_wallet_app(connect(tmp_path / "w.db", durable=True))
    add_schema_routes(app, OPERATIONS)
    ops = operations_of(served_document(app))
    assert ("GET", "/healthz") not in ops
    assert ("POST", "/api/agents/earn") in ops and ("GET", SCHEMA_PATH) in ops
    assert ops == routes_of(app.router) & DOCUMENTED


def _resolve(doc: dict[str, Any], ref: str) -> dict[str, Any]:
    name = ref.removeprefix("#/components/schemas/")
    schema: dict[str, Any] = doc["components"]["schemas"][name]
    return schema


def test_request_schemas_are_the_pydantic_models() -> None:
    """Bodies and queries are the validating models' schemas, with the rule of every request string
    (no control character but tab/LF/CR) on each string that has no pattern of its own."""
    doc = document(OPERATIONS)
    checked = 0
    for op in OPERATIONS:
        item = doc["paths"][op.path][op.method.lower()]
        if op.request is not None:
            ref = item["requestBody"]["content"]["application/json"]["schema"]["$ref"]
            assert ref == REF_TEMPLATE.format(model=op.request.__name__)
            expected = request_schema(op.request)
            for name, sub in expected.pop("$defs", {}).items():
                assert doc["components"]["schemas"][name] == sub
            assert _resolve(doc, ref) == expected
            assert item["requestBody"]["required"] is True
            assert set(item["requestBody"]["content"]) == {"application/json", *op.request_forms}
            checked += 1
        elif op.request_forms:  # no JSON body; an optional form (the one-click unsubscribe)
            assert item["requestBody"]["required"] is False
            assert set(item["requestBody"]["content"]) == set(op.request_forms)
        else:
            assert "requestBody" not in item
        if op.query is not None:
            schema = request_schema(op.query)
            params = {p["name"]: p for p in item["parameters"] if p["in"] == "query"}
            assert set(params) == set(schema["properties"])
            for name, prop in schema["properties"].items():
                assert params[name]["schema"] == {k: v for k, v in prop.items() if k != "title"}
                assert params[name]["required"] == (name in schema.get("required", ()))
        content = item["responses"][str(op.status)]["content"]
        assert set(content) == {op.media_type, *op.response_alternatives}
        for media, model in ((op.media_type, op.response), *op.response_alternatives.items()):
            assert _resolve(doc, content[media]["schema"]["$ref"]) == {
                k: v for k, v in model_schema(model, "serialization").items() if k != "$defs"
            }
    assert checked >= 3


def test_every_request_string_carries_a_pattern() -> None:
    """One rule for every route, visible in the document: each string a request carries (body, query,
    path; keys of free objects) has a pattern, an enum or a const, so no generated valid string holds a
    character the server refuses."""
    doc = document(OPERATIONS)
    schemas = doc["components"]["schemas"]
    seen: set[str] = set()

    def walk(schema: Any, where: str) -> None:
        if isinstance(schema, list):
            for s in schema:
                walk(s, where)
            return
        if not isinstance(schema, dict):
            return
        ref = schema.get("$ref")
        if ref is not None:
            name = ref.rsplit("/", 1)[1]
            if name not in seen:
                seen.add(name)
                walk(schemas[name], name)
            return
        if schema.get("type") == "string" and "format" not in schema:
            assert {"pattern", "enum", "const"} & set(schema), (where, schema)
        if schema.get("type") == "object" and isinstance(schema.get("additionalProperties"), dict):
            assert "propertyNames" in schema, (where, schema)
        for key, sub in schema.items():
            if key not in ("enum", "const", "examples", "default"):
                walk(sub, f"{where}.{key}")

    for path, item in doc["paths"].items():
        for method, op in item.items():
            for p in op.get("parameters", ()):
                if p["name"] != "Idempotency-Key":
                    walk(p["schema"], f"{method} {path} {p['name']}")
            for media in op.get("requestBody", {}).get("content", {}).values():
                walk(media["schema"], f"{method} {path} body")
    assert "JsonValue" in seen and "EarnRequest" in seen


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
    assert DOCUMENTED >= VALUE_MOVING


# ---- schemathesis against the seeded service (every check, every phase) ---------------------------


#: Bounded here (make test stays fast); `python -m scripts.fuzz_api --run -- -n 100` explores longer.
MAX_EXAMPLES = "5"


@pytest.mark.parametrize("with_key", [True, False], ids=["key", "no-key"])
def test_schemathesis_every_check_every_phase_finds_nothing(system: System, tmp_path: Path, with_key: bool) -> None:
    """The README's schemathesis command (--checks all over examples, coverage, fuzzing and stateful)
    against the real service on the session anvil, seeded with real ids (an agent, a linked provider
    and its item, an open session, a funded order with a deliverable, a decision), with the buyer's
    key and without one: zero failures, every operation tested."""
    pytest.importorskip("schemathesis")
    with serving(service_app(system, tmp_path / "fuzz.db")) as base:
        seeded = seed(base, system)
        config = tmp_path / "schemathesis.toml"
        config.write_text(config_toml(seeded))
        extra = ["-n", MAX_EXAMPLES, "--workers", "1", "--seed", "12", "--no-shrink"]
        cmd = schemathesis_command(base, config, seeded.key if with_key else None, extra)
        proc = subprocess.run(
            cmd, capture_output=True, text=True, timeout=900, cwd=tmp_path, env={**os.environ, "NO_COLOR": "1"}
        )
        served = len(operations_of(requests.get(base + SCHEMA_PATH, timeout=10).json())) - 1  # not the schema's own
    out = proc.stdout + proc.stderr
    assert proc.returncode == 0, out[-12000:]
    assert f"Tested: {served}" in out and "Failures:" not in out, out[-4000:]
