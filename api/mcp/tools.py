"""MCP tools and resources generated from the operation table, with no code per operation.

A row (api.operation.Operation) becomes:
- one tool named after its operation id in snake_case (`getBalance` -> `get_balance`) whose
  inputSchema is one object: the path's placeholders (strings), the query model's fields and the
  request model's fields (the very models that validate the HTTP request), and whose outputSchema is
  the response model's (serialization mode); a call splits the arguments back into path, query and
  JSON body and runs the row's `run`, as the route does;
- for a row with `quote` (it moves value), two tools instead: `quote_<name>` (the same arguments:
  what would move, to whom, a quote id with a short TTL, nothing moved) and `<name>` ({quote_id}:
  runs the quoted arguments under an Idempotency-Key derived from the quote);
- a resource or resource template when the row names one (`resource`);
- nothing for a row that only serves another at a second path (`alias_of`).

Annotations are derived from the row: readOnlyHint for GETs (and quotes), destructiveHint for rows
that move value or say they overwrite, idempotentHint for GETs and executes (the derived key makes a
retry harmless), openWorldHint for rows that touch the chain or a provider. `_meta` names the
operation, its HTTP route, the scope it needs and, on value-moving tools, that they move USDC.
"""

from __future__ import annotations

import copy
import functools
import json
import math
import re
from collections.abc import Iterable, Mapping
from dataclasses import dataclass
from typing import Any, Literal

import mcp_types as t
from mcp import UriTemplate
from pydantic import BaseModel, ConfigDict, Field

from api.operation import Call, Operation
from core.errors import ServiceError
from core.jsontext import bad_string, invalid_string
from core.keys import Caller
from core.quotes import QUOTE_ID_PATTERN, QUOTE_TTL_SECONDS

ToolKind = Literal["call", "quote", "execute"]

META = "agentledger/"
_PLACEHOLDER = re.compile(r"\{(\w+)\}")


def tool_name(operation_id: str) -> str:
    """`getBalance` -> `get_balance` (MCP tool names: letters, digits, _ - .)."""
    return re.sub(r"(?<=[a-z0-9])([A-Z])", r"_\1", operation_id).lower()


def path_params(op: Operation) -> list[str]:
    return _PLACEHOLDER.findall(op.path)


# ---- schemas -------------------------------------------------------------------------------------


class QuoteAnswer(BaseModel):
    """What a quote tool answers: what the execute tool would move, for how long the quote holds."""

    model_config = ConfigDict(extra="forbid")
    quote_id: str = Field(pattern=QUOTE_ID_PATTERN)
    execute_with: str = Field(description="the tool that executes this quote: call it with {quote_id}")
    operation: str
    amount: float = Field(description="USDC that will move (at most 6 decimals)")
    amount_micro_usdc: int
    source: str
    recipient: str
    what: str
    details: dict[str, Any]
    expires_at: str = Field(description="ISO 8601 UTC; execute before it")
    ttl_seconds: int


class ExecuteArguments(BaseModel):
    model_config = ConfigDict(extra="forbid")
    quote_id: str = Field(pattern=QUOTE_ID_PATTERN, description="the quote_id a quote_ tool returned")


class LinkedContent(BaseModel):
    """Content stored here but produced by a provider: never inline, a resource link to read it."""

    model_config = ConfigDict(extra="forbid")
    uri: str
    mime_type: str
    size: int


@functools.cache
def _object_schema(model: type[BaseModel], mode: Literal["validation", "serialization"]) -> dict[str, Any] | None:
    """The model's JSON Schema when it is an object (cached: generating one costs more than a call)."""
    schema = model.model_json_schema(mode=mode)
    return schema if schema.get("type") == "object" else None


#: Longest field description kept in a tool's schema (the first sentence, cut at a word past this).
FIELD_DESCRIPTION_CHARS = 100
#: Longest `pattern` kept (a URL's is 300 characters): the row's model still checks the value (400 naming it).
PATTERN_CHARS = 120
#: Keywords of a JSON Schema object whose value maps names to schemas (not schemas themselves).
_SCHEMA_MAPS = frozenset({"properties", "$defs", "patternProperties", "definitions"})


def _short(text: str) -> str:
    first = re.split(r"(?<!e\.g\.)(?<!i\.e\.)(?<=[.;:])\s|\s\(", text, maxsplit=1)[0].rstrip(".;: ")
    if len(first) <= FIELD_DESCRIPTION_CHARS:
        return first
    return first[:FIELD_DESCRIPTION_CHARS].rsplit(" ", 1)[0] + "..."


def slim(schema: Any, *, output: bool = False) -> Any:
    """A JSON Schema as a model needs it: no `title` (pydantic's, from field names), descriptions cut
    to their first sentence, an optional field's `anyOf [X, null]` with default null as X, no pattern
    past PATTERN_CHARS: what a value may be is still the row's model's to say when the call runs; an
    input schema only helps a model fill it in. An `output` schema keeps every keyword but titles and
    descriptions (structured content is validated against it)."""
    if isinstance(schema, list):
        return [slim(item, output=output) for item in schema]
    if not isinstance(schema, dict):
        return schema
    options = schema.get("anyOf")
    if (
        not output
        and isinstance(options, list)
        and len(options) == 2
        and options[1] == {"type": "null"}
        and "default" in schema
        and schema["default"] is None
    ):
        rest = {k: v for k, v in schema.items() if k not in ("anyOf", "default")}
        return slim({**options[0], **rest})
    out: dict[str, Any] = {}
    for key, value in schema.items():
        if key == "title" and isinstance(value, str):
            continue
        if key == "pattern" and isinstance(value, str) and len(value) > PATTERN_CHARS and not output:
            continue
        if key == "description" and isinstance(value, str):
            if not output:
                out[key] = _short(value)
            continue
        if key in _SCHEMA_MAPS and isinstance(value, dict):
            out[key] = {name: slim(sub, output=output) for name, sub in value.items()}
        else:
            out[key] = slim(value, output=output)
    return out


#: The schemas of the quote and execute tools (slim, as every tool's).
QUOTE_ANSWER_SCHEMA: dict[str, Any] = slim(QuoteAnswer.model_json_schema(), output=True)
EXECUTE_SCHEMA: dict[str, Any] = slim(ExecuteArguments.model_json_schema())


def input_schema(op: Operation) -> dict[str, Any]:
    """One object of the path's placeholders, the query model's fields and the request model's (slim)."""
    properties: dict[str, Any] = {}
    required: list[str] = []
    defs: dict[str, Any] = {}
    for name in path_params(op):
        properties[name] = {"type": "string", "description": op.path_params.get(name, name)}
        required.append(name)
    for model in (op.query, op.request):
        if model is None:
            continue
        schema = model.model_json_schema(mode="validation")
        defs.update(schema.pop("$defs", {}))
        for name, prop in schema.get("properties", {}).items():
            if name in properties:
                raise ValueError(f"{op.operation_id}: argument {name!r} is both a path/query and a body field")
            properties[name] = prop
        required += [name for name in schema.get("required", ()) if name not in required]
    out: dict[str, Any] = {"type": "object", "properties": properties, "additionalProperties": False}
    if required:
        out["required"] = required
    if defs:
        out["$defs"] = defs
    return dict(slim(out))


def output_schema(op: Operation) -> dict[str, Any] | None:
    """The response model's schema (no titles or descriptions), less the row's content_fields (they are
    links, never inline); a response that is not a JSON object (stored bytes) is a link. None for a row
    that publishes none (Operation.mcp_output_schema)."""
    if not op.mcp_output_schema:
        return None
    schema = copy.deepcopy(_object_schema(op.response, "serialization") or LinkedContent.model_json_schema())
    for name in op.content_fields:
        schema.get("properties", {}).pop(name, None)
        if name in schema.get("required", ()):
            schema["required"] = [r for r in schema["required"] if r != name] or None
            if schema["required"] is None:
                del schema["required"]
    return dict(slim(schema, output=True))


#: Where an execute's provider-produced content is read (api.mcp.server): by the key that executed it.
CONTENT_TEMPLATE = "agentledger://quotes/{quote_id}/content/{field}"


def content_uri(quote_id: str, field: str) -> str:
    return CONTENT_TEMPLATE.replace("{quote_id}", quote_id).replace("{field}", field)


def without_content(op: Operation, answer: Any) -> Any:
    """The answer less the row's content_fields (what structuredContent and the text carry)."""
    if not op.content_fields or not isinstance(answer, dict):
        return answer
    return {k: v for k, v in answer.items() if k not in op.content_fields}


def is_linked(op: Operation) -> bool:
    """Whether the answer is content handed out as a resource link (a non-object response)."""
    return _object_schema(op.response, "serialization") is None


# ---- tools ---------------------------------------------------------------------------------------


@dataclass(frozen=True)
class ToolSpec:
    """One generated tool: the row it runs and how (a plain call, a quote or an execute)."""

    tool: t.Tool
    op: Operation
    kind: ToolKind

    @property
    def name(self) -> str:
        return self.tool.name

    def visible_to(self, caller: Caller | None) -> bool:
        """Public tools for everyone; the others for a key that has their scope (and, for those touching
        the account as a whole, an account key)."""
        if caller is None:  # value-moving tools hold a quote for a key: none without one
            return self.op.auth != "required" and self.op.quote is None
        if self.op.touches == "account" and caller.agent_id is not None:
            return False
        scope = self.op.needs_scope
        return scope is None or caller.has_scope(scope)


def _description(op: Operation, kind: ToolKind) -> str:
    """What the tool is for, in a sentence or two: the row's summary (its OpenAPI description stays in
    /api/schema), what a quote or an execute does, and the scope a key needs."""
    name = tool_name(op.operation_id)
    summary = op.summary.rstrip(".")
    if kind == "quote":
        text = f"Quote: {summary}; moves nothing. Answers a quote_id valid {QUOTE_TTL_SECONDS} s for {name}."
    elif kind == "execute":
        text = f"{summary}: executes a quote_id from quote_{name}; a retry never moves money twice."
    else:
        text = summary + "."
    scope = op.needs_scope
    if scope is None:
        return text + " Public."
    return text + (f" Scope {scope} (key optional)." if op.auth == "optional" else f" Scope {scope}.")


def _annotations(op: Operation, kind: ToolKind) -> t.ToolAnnotations:
    """The hints, less those the spec's defaults already say (readOnlyHint and idempotentHint false;
    destructiveHint, meaningless on a read-only tool); destructiveHint and openWorldHint default to
    true, so their false is always sent."""
    read_only = op.method == "GET" or kind == "quote"
    return t.ToolAnnotations(
        read_only_hint=True if read_only else None,
        destructive_hint=None if read_only else (kind == "execute" or op.destructive),
        idempotent_hint=True if read_only or kind == "execute" else None,
        open_world_hint=op.open_world and kind != "quote",
    )


def _meta(op: Operation, kind: ToolKind) -> dict[str, Any]:
    meta: dict[str, Any] = {META + "http": f"{op.method} {op.path}", META + "scope": op.needs_scope}
    if op.quote is not None:
        meta[META + "movesValue"] = {"currency": "USDC", "quoteTool": "quote_" + tool_name(op.operation_id)}
    return meta


def _tool(op: Operation, kind: ToolKind) -> t.Tool:
    name = tool_name(op.operation_id)
    outputs: dict[str, Any] | None
    if kind == "quote":
        name, inputs, outputs = "quote_" + name, input_schema(op), QUOTE_ANSWER_SCHEMA
    elif kind == "execute":
        inputs, outputs = EXECUTE_SCHEMA, output_schema(op)
    else:
        inputs, outputs = input_schema(op), output_schema(op)
    return t.Tool(
        name=name,
        title=op.summary if kind != "quote" else f"Quote: {op.summary}",
        description=_description(op, kind),
        input_schema=inputs,
        output_schema=outputs,
        annotations=_annotations(op, kind),
        _meta=_meta(op, kind),
    )


def build_tools(table: Iterable[Operation]) -> dict[str, ToolSpec]:
    """Every tool of `table`, by name; ValueError for a row without `run` or a toolset, or a name used twice."""
    tools: dict[str, ToolSpec] = {}
    for op in table:
        if op.alias_of:
            continue
        if op.run is None:
            raise ValueError(f"{op.operation_id} has no run: it cannot be a tool")
        if op.toolset is None:
            raise ValueError(f"{op.operation_id} names no MCP toolset (nor does its feature)")
        if op.content_fields and op.quote is None:
            raise ValueError(f"{op.operation_id}: content_fields are kept with a quote: the row needs one")
        kinds: tuple[ToolKind, ...] = ("quote", "execute") if op.quote is not None else ("call",)
        for kind in kinds:
            spec = ToolSpec(_tool(op, kind), op, kind)
            if spec.name in tools:
                raise ValueError(f"two operations make the tool {spec.name!r}")
            tools[spec.name] = spec
    return tools


def tools_by_operation(tools: Mapping[str, ToolSpec]) -> dict[str, tuple[str, ...]]:
    out: dict[str, tuple[str, ...]] = {}
    for spec in tools.values():
        out[spec.op.operation_id] = (*out.get(spec.op.operation_id, ()), spec.name)
    return out


# ---- arguments -> a Call --------------------------------------------------------------------------


def _query_text(value: Any) -> str:
    if isinstance(value, bool):
        return "true" if value else "false"
    return value if isinstance(value, str) else json.dumps(value)


def to_call(
    op: Operation,
    arguments: Mapping[str, Any],
    *,
    caller: Caller | None,
    base_url: str,
    idempotency_key: str | None = None,
) -> Call:
    """The Call a route would make of the same request: path placeholders, query fields (as URL
    text) and the rest as the JSON body (what an Idempotency-Key digests, so the same arguments
    give the same digest). An argument the row has no place for is refused (400 unknown_field), as
    the models refuse unknown fields; so is what no request may carry (check_arguments)."""
    check_arguments(arguments)
    args = dict(arguments)
    path: dict[str, str] = {}
    for name in path_params(op):
        value = args.pop(name, None)
        path[name] = "" if value is None else str(value)
    query: dict[str, str] = {}
    if op.query is not None:
        names = set(op.query.model_fields) if op.request is not None else set(args)  # the rest: refused by the model
        for name in sorted(names & set(args)):
            value = args.pop(name)
            if value is not None:
                query[name] = _query_text(value)
    if op.request is None and args:
        name = sorted(args)[0]
        raise ServiceError(400, "unknown_field", f"{name}: Extra inputs are not permitted", param=name)
    body = b"" if op.request is None else json.dumps(args, separators=(",", ":")).encode()
    target = op.path
    for name, value in path.items():
        target = target.replace("{" + name + "}", value)
    return Call(caller, f"{op.method} {target}", path, query, body, idempotency_key, base_url)


def _non_finite(value: Any, path: str = "") -> str | None:
    """The path of the first number in `value` that is not finite (1e400 read as a float), else None."""
    if isinstance(value, float):
        return None if math.isfinite(value) else path
    if isinstance(value, Mapping):
        for k, v in value.items():
            found = _non_finite(v, f"{path}.{k}" if path else str(k))
            if found is not None:
                return found
    elif isinstance(value, list):
        for i, v in enumerate(value):
            found = _non_finite(v, f"{path}[{i}]")
            if found is not None:
                return found
    return None


def check_arguments(arguments: Mapping[str, Any]) -> None:
    """The rule of every request string (core.jsontext: no control character but tab, LF and CR, no
    lone surrogate, in any key or string: 400 invalid_string) and finite numbers (400
    invalid_number) on a tool's arguments, before anything reads them: what api.errors applies to
    an HTTP request's path, query and body. (The MCP message's duplicate keys are refused by the
    bridge; number ranges, like every field rule, by the row's models when its run parses the body.)"""
    where = bad_string(dict(arguments))
    if where is not None:
        raise invalid_string(where)
    where = _non_finite(arguments)
    if where is not None:
        raise ServiceError(400, "invalid_number", f"{where}: numbers must be finite", param=where)


def canonical_arguments(arguments: Mapping[str, Any]) -> dict[str, Any]:
    """Arguments as stored in a quote (JSON round trip: what the execute replays)."""
    loaded: dict[str, Any] = json.loads(json.dumps(dict(arguments), sort_keys=True))
    return loaded


# ---- resources -----------------------------------------------------------------------------------


@dataclass(frozen=True)
class ResourceSpec:
    op: Operation
    uri_template: str

    @property
    def is_template(self) -> bool:
        return "{" in self.uri_template

    def match(self, uri: str) -> dict[str, str] | None:
        if not self.is_template:
            return {} if uri == self.uri_template else None
        found = UriTemplate.parse(self.uri_template).match(uri)
        return None if found is None else {k: str(v) for k, v in found.items()}

    def resource(self) -> t.Resource:
        return t.Resource(
            name=tool_name(self.op.operation_id),
            title=self.op.summary,
            uri=self.uri_template,
            description=self.op.description or self.op.summary,
            mime_type=self.op.media_type,
        )

    def template(self) -> t.ResourceTemplate:
        return t.ResourceTemplate(
            name=tool_name(self.op.operation_id),
            title=self.op.summary,
            uri_template=self.uri_template,
            description=self.op.description or self.op.summary,
            mime_type=None if is_linked(self.op) else self.op.media_type,
        )


def build_resources(table: Iterable[Operation]) -> list[ResourceSpec]:
    """The rows that name a resource: GETs whose URI template's variables are the path's placeholders.
    Plain resources come first, so a template never shadows one."""
    specs = []
    for op in table:
        if not op.resource or op.alias_of:
            continue
        variables = set(_PLACEHOLDER.findall(op.resource))
        if op.method != "GET" or variables != set(path_params(op)) or op.run is None:
            raise ValueError(f"{op.operation_id}: resource {op.resource!r} must be a GET with the path's placeholders")
        specs.append(ResourceSpec(op, op.resource))
    return sorted(specs, key=lambda s: s.is_template)
