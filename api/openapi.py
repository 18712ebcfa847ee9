"""`GET /api/schema`: the OpenAPI 3.1 document of the API, generated, never written by hand.

Every operation is one row of the operation table (api.operation_table: each route module declares
its rows beside its handlers). Request bodies and query parameters come from the very pydantic
models that validate requests, responses from each feature's response models, errors from the one
error shape of api.errors. A test checks that every route registered on the app has its row, so
an endpoint added later cannot be left out of the document.

The document served describes the routes the running app has actually registered (a wallet-less
app has no /api/agents paths; a wallet-only app has no /healthz).
"""

from __future__ import annotations

import functools
import json
import re
from collections.abc import Iterable, Mapping
from dataclasses import dataclass
from typing import Annotated, Any

from aiohttp import web
from pydantic import BaseModel, ConfigDict, Field
from pydantic.json_schema import JsonSchemaMode

from api import idempotency
from api.http import services_of
from api.operation import Call, Operation, Reply
from api.policy import mount
from core.jsontext import TEXT_PATTERN
from core.services import Services

OPENAPI_VERSION = "3.1.0"
API_VERSION = "1.0.0"  # also the agent card's version (api.agent_card.VERSION)
SCHEMA_PATH = "/api/schema"
REF_TEMPLATE = "#/components/schemas/{model}"
BEARER = "bearerAuth"

# ---- response models of this module ----------------------------------------------------------


class _Response(BaseModel):
    model_config = ConfigDict(extra="forbid")


class Error(_Response):
    """The one error shape of every failure (ACP's flat error)."""

    type: Annotated[str, Field(description="invalid_request or service_error", examples=["invalid_request"])]
    code: Annotated[str, Field(description="machine-readable code, e.g. insufficient_balance")]
    message: Annotated[str, Field(min_length=1, description="human-readable explanation")]
    param: Annotated[str | None, Field(description="the offending field, parameter or header, or null")]


class OpenApiDocument(BaseModel):
    """This document (described loosely: its own schema is OpenAPI 3.1's)."""

    model_config = ConfigDict(extra="allow")
    openapi: str
    info: dict[str, Any]
    paths: dict[str, Any]


# ---- the operation table ------------------------------------------------------------------------

OPERATIONS: list[Operation] = [
    Operation(
        "GET",
        SCHEMA_PATH,
        "getOpenApiSchema",
        "The OpenAPI 3.1 document of this API",
        OpenApiDocument,
        auth="none",
        tags=("service",),
        run=lambda services, call: run_schema(services, call),
        uses_database=False,
    ),
]


@dataclass
class ServedSchema:
    """The document an app serves (a part of its Services, provided by add_schema_routes): generated from
    the whole table once, on the first request, for the routes the app has registered (frozen by then)."""

    table: tuple[Operation, ...]
    router: web.UrlDispatcher

    @functools.cached_property
    def text(self) -> str:
        return json.dumps(document(self.table, routes_of(self.router)))


# ---- generation ---------------------------------------------------------------------------------

_AUTH_ERRORS = {401: ("missing_api_key", "malformed_api_key", "invalid_api_key")}
_OPTIONAL_AUTH_ERRORS = {401: ("malformed_api_key", "invalid_api_key")}
_AUTH_BY_KIND: dict[str, Mapping[int, tuple[str, ...]]] = {
    "required": _AUTH_ERRORS,
    "optional": _OPTIONAL_AUTH_ERRORS,
    "none": {},
}
_BODY_ERRORS = {
    400: (
        "invalid_json",
        "duplicate_key",
        "invalid_string",
        "invalid_field",
        "missing_field",
        "unknown_field",
        "invalid_amount",
    ),
    413: ("payload_too_large",),
    415: ("unsupported_media_type",),
}
_QUERY_ERRORS = {400: ("invalid_string", "invalid_field", "missing_field", "unknown_field")}
_PATH_ERRORS = {400: ("invalid_string",)}
_IDEM_ERRORS = {
    400: ("invalid_idempotency_key",),
    409: ("idempotency_in_flight",),
    422: ("idempotency_conflict",),
}
_ALWAYS_ERRORS = {500: ("internal_error",)}
_DATABASE_ERRORS = {503: ("database_unavailable",)}

_STATUS_TEXT = {
    400: "Invalid request",
    401: "Missing, malformed or unknown API key (or signature)",
    403: "The key's scope does not allow this",
    404: "Not found (or not yours: existence is not disclosed)",
    405: "Not allowed in the resource's state",
    409: "Conflict with the resource's state",
    413: "Request body too large",
    415: "The body is not application/json (charset utf-8)",
    422: "Well-formed, but refused by the current state",
    429: "Rate limited",
    500: "Internal error",
    503: "A dependency is unavailable",
}


def _merge(*tables: Mapping[int, tuple[str, ...]]) -> dict[int, tuple[str, ...]]:
    out: dict[int, list[str]] = {}
    for table in tables:
        for status, codes in table.items():
            bucket = out.setdefault(status, [])
            bucket.extend(c for c in codes if c not in bucket)
    return {s: tuple(out[s]) for s in sorted(out)}


def error_codes(op: Operation) -> dict[int, tuple[str, ...]]:
    """Every error status of `op` with its codes."""
    return _merge(
        _AUTH_BY_KIND[op.auth],
        {403: ("insufficient_scope",)} if op.needs_scope is not None else {},
        {403: ("account_key_required",)} if op.touches in ("account", "held") else {},
        {403: ("daily_cap_exceeded",)} if op.quote is not None else {},
        _BODY_ERRORS if op.request is not None else {},
        _QUERY_ERRORS if op.query is not None else {},
        _PATH_ERRORS if "{" in op.path else {},
        _IDEM_ERRORS if op.idempotent else {},
        op.errors,
        _DATABASE_ERRORS if op.uses_database else {},
        _ALWAYS_ERRORS,
    )


class _Components:
    def __init__(self) -> None:
        self.schemas: dict[str, Any] = {}

    def add(self, model: type[BaseModel], mode: JsonSchemaMode) -> dict[str, str]:
        """Put `model` (and its $defs) into components; return a $ref to it. A request model
        (mode "validation") is described with the rule of every request string (text_rule)."""
        schema = request_schema(model) if mode == "validation" else model_schema(model, mode)
        for name, sub in schema.pop("$defs", {}).items():
            self._put(name, sub)
        self._put(model.__name__, schema)
        return {"$ref": REF_TEMPLATE.format(model=model.__name__)}

    def _put(self, name: str, schema: dict[str, Any]) -> None:
        if self.schemas.get(name, schema) != schema:
            raise ValueError(f"two different schemas are named {name!r}")
        self.schemas[name] = schema


def model_schema(model: type[BaseModel], mode: JsonSchemaMode = "validation") -> dict[str, Any]:
    return model.model_json_schema(ref_template=REF_TEMPLATE, mode=mode)


ANY_JSON = "AnyJson"
_ANY_REF = {"$ref": REF_TEMPLATE.format(model=ANY_JSON)}
#: Free JSON under the rule of every request string: what a field the server reads as any JSON
#: (or ignores) may hold.
ANY_JSON_SCHEMA: dict[str, Any] = {
    "anyOf": [
        {"type": "null"},
        {"type": "boolean"},
        {"type": "number"},
        {"type": "string", "pattern": TEXT_PATTERN},
        {"type": "array", "items": _ANY_REF},
        {"type": "object", "additionalProperties": _ANY_REF, "propertyNames": {"pattern": TEXT_PATTERN}},
    ],
    "description": "any JSON; no string or key holds a control character but tab, LF and CR",
}
_METADATA = frozenset({"title", "description", "default", "examples"})


def text_rule(schema: Any) -> Any:
    """`schema` with the rule of every request string (core.jsontext: no control character but
    tab, LF and CR) on each string without a pattern, enum or const of its own, on the keys of every
    object open to other keys, and on free JSON (AnyJson): the server enforces it on every body,
    query and path before a handler runs."""
    if isinstance(schema, list):
        return [text_rule(s) for s in schema]
    if not isinstance(schema, dict):
        return schema
    if not set(schema) - _METADATA:  # any JSON at all
        return {**schema, **_ANY_REF}
    out = {k: text_rule(v) if k not in ("enum", "const", "default", "examples") else v for k, v in schema.items()}
    if out.get("type") == "string" and not {"pattern", "enum", "const", "format"} & set(out):
        out["pattern"] = TEXT_PATTERN
    if out.get("type") == "object":
        extra = out.get("additionalProperties", True)
        if extra is True:
            out["additionalProperties"] = _ANY_REF
        if extra is not False:
            out.setdefault("propertyNames", {"pattern": TEXT_PATTERN})
    return out


def request_schema(model: type[BaseModel]) -> dict[str, Any]:
    """The JSON schema of a request (body or query) model as /api/schema shows it."""
    out: dict[str, Any] = text_rule(model_schema(model))
    return out


def _query_parameters(model: type[BaseModel], components: _Components) -> list[dict[str, Any]]:
    schema = request_schema(model)
    for name, sub in schema.pop("$defs", {}).items():
        components._put(name, sub)
    required = set(schema.get("required", ()))
    params = []
    for name, prop in schema["properties"].items():
        prop = {k: v for k, v in prop.items() if k != "title"}
        param: dict[str, Any] = {"name": name, "in": "query", "required": name in required, "schema": prop}
        if "description" in prop:
            param["description"] = prop["description"]
        if prop.get("deprecated") or any(alt.get("deprecated") for alt in prop.get("anyOf", ())):
            param["deprecated"] = True  # an old name kept for a while (the Parameter Object's own flag)
        params.append(param)
    return params


_IDEMPOTENCY_PARAMETER = {
    "name": idempotency.HEADER,
    "in": "header",
    "required": False,
    "description": "Makes a retry safe: the same key with the same body replays the stored response (with "
    "`Idempotent-Replayed: true`) for 24 hours; with another body it is a 422, while the first request is still "
    "running a 409. Scoped to the API key and the endpoint.",
    "schema": {"type": "string", "minLength": 1, "maxLength": idempotency.MAX_KEY_LEN, "pattern": "^[ -~]+$"},
}

_ECHO_HEADERS = {
    idempotency.HEADER: {
        "description": "The request's Idempotency-Key, echoed when one was sent",
        "schema": {"type": "string"},
    },
    idempotency.REPLAYED: {
        "description": "`true` when this is the stored response of an earlier request with the same key",
        "schema": {"type": "string", "enum": ["true"]},
    },
}


def _error_response(status: int, codes: tuple[str, ...], idempotent: bool) -> dict[str, Any]:
    text = _STATUS_TEXT.get(status, "Error")
    resp: dict[str, Any] = {
        "description": f"{text}. `code` is one of: {', '.join(codes)}",
        "content": {"application/json": {"schema": {"$ref": REF_TEMPLATE.format(model="Error")}}},
    }
    headers: dict[str, Any] = {}
    if status == 401:
        headers["WWW-Authenticate"] = {"description": "Bearer challenge", "schema": {"type": "string"}}
    if status == 409 and idempotent:
        headers["Retry-After"] = {"description": "seconds to wait", "schema": {"type": "integer"}}
    if idempotent:
        headers[idempotency.HEADER] = _ECHO_HEADERS[idempotency.HEADER]
    if headers:
        resp["headers"] = headers
    return resp


_PLACEHOLDER = re.compile(r"\{(\w+)\}")


def _operation(op: Operation, components: _Components) -> dict[str, Any]:
    out: dict[str, Any] = {"operationId": op.operation_id, "summary": op.summary}
    if op.description:
        out["description"] = op.description
    if op.tags:
        out["tags"] = list(op.tags)
    params: list[dict[str, Any]] = [
        {
            "name": name,
            "in": "path",
            "required": True,
            "description": op.path_params.get(name, name),
            "schema": {"type": "string", "pattern": op.path_patterns.get(name, TEXT_PATTERN)},
        }
        for name in _PLACEHOLDER.findall(op.path)
    ]
    if op.query is not None:
        params.extend(_query_parameters(op.query, components))
    if op.idempotent:
        params.append(_IDEMPOTENCY_PARAMETER)
    if params:
        out["parameters"] = params
    if op.request is not None:
        content = {"application/json": {"schema": components.add(op.request, "validation")}}
        for media, form in op.request_forms.items():
            content[media] = {"schema": components.add(form, "validation")}
        out["requestBody"] = {"required": True, "content": content}
    elif op.request_forms:  # no JSON body, but an optional form (a mail client's one-click POST)
        forms = {media: {"schema": components.add(form, "validation")} for media, form in op.request_forms.items()}
        out["requestBody"] = {"required": False, "content": forms}
    content = {op.media_type: {"schema": components.add(op.response, "serialization")}}
    for media, model in op.response_alternatives.items():
        content[media] = {"schema": components.add(model, "serialization")}
    ok: dict[str, Any] = {"description": "Success", "content": content}
    headers: dict[str, Any] = {
        name: {"description": text, "schema": {"type": "string"}} for name, text in op.response_headers.items()
    }
    if op.idempotent:
        headers.update(_ECHO_HEADERS)
    if headers:
        ok["headers"] = headers
    responses: dict[str, Any] = {str(op.status): ok}
    for status, text in op.other_statuses.items():
        responses[str(status)] = {"description": text}
        if headers:
            responses[str(status)]["headers"] = headers
    for status, codes in error_codes(op).items():
        responses[str(status)] = _error_response(status, codes, op.idempotent)
    out["responses"] = responses
    if op.auth == "none":
        out["security"] = []
    elif op.auth == "optional":
        out["security"] = [{}, {BEARER: []}]
    return out


def document(table: tuple[Operation, ...], routes: frozenset[tuple[str, str]] | None = None) -> dict[str, Any]:
    """The OpenAPI document of the operations of `table` among `routes` ((METHOD, path) pairs;
    None: all)."""
    components = _Components()
    components.add(Error, "serialization")
    components.schemas[ANY_JSON] = ANY_JSON_SCHEMA
    paths: dict[str, dict[str, Any]] = {}
    for op in table:
        if routes is not None and (op.method, op.path) not in routes:
            continue
        paths.setdefault(op.path, {})[op.method.lower()] = _operation(op, components)
    return {
        "openapi": OPENAPI_VERSION,
        "info": {
            "title": "agentledger API",
            "version": API_VERSION,
            "description": "Financial backend for autonomous software agents: wallets, USDC escrow, audit trail. "
            "Amounts are JSON numbers of USDC with at most 6 decimals; every error has the shape "
            "{type, code, message, param}.",
        },
        "tags": [
            {"name": "agents", "description": "Accounts, agents and identity"},
            {"name": "wallet", "description": "Earning, spending and balances"},
            {"name": "service", "description": "Health and machine-readable descriptions"},
            {"name": "decisions", "description": "Decision logging (hashes only) and its public verification"},
            {"name": "audit", "description": "The transparency log: checkpoints, inclusion and consistency proofs"},
            {"name": "checkout", "description": "Providers, catalogue and buyer-funded escrow checkout (ACP)"},
            {"name": "orders", "description": "Orders and the provider's signed calls"},
            {"name": "ipfs", "description": "Deliverables by CID"},
        ],
        "paths": paths,
        "components": {
            "schemas": dict(sorted(components.schemas.items())),
            "securitySchemes": {
                BEARER: {
                    "type": "http",
                    "scheme": "bearer",
                    "bearerFormat": "aglk_ followed by 32 lowercase hex",
                    "description": "An API key from POST /api/agents/register (no key) or POST /api/keys.",
                }
            },
        },
        "security": [{BEARER: []}],
    }


def routes_of(router: web.UrlDispatcher) -> frozenset[tuple[str, str]]:
    """(METHOD, path) of every route of `router`, HEAD and OPTIONS aside."""
    out = set()
    for route in router.routes():
        if route.method in ("HEAD", "OPTIONS"):
            continue
        canonical = route.resource.canonical if route.resource is not None else ""
        out.add((route.method, canonical))
    return frozenset(out)


async def run_schema(services: Services, call: Call) -> Reply:
    return Reply(200, services.part(ServedSchema).text.encode())


def add_schema_routes(app: web.Application, table: Iterable[Operation]) -> None:
    """Serve the document of `table` (the composed operation table, api.operation_table.table),
    limited to the routes `app` has registered."""
    services_of(app).provide(ServedSchema(tuple(table), app.router))
    mount(app, OPERATIONS)
