"""MkDocs hook: the reference pages, generated at build time from what the service itself serves, so
they cannot drift from it. Each page is rendered from one source:

- reference/http.md: the operation table (api.operation_table.OPERATIONS: auth, scope, value moved)
  and the OpenAPI document built from it (api.openapi.document: parameters, bodies, answers, errors);
- reference/settings.md: core.config.Settings, its fields and their `#:` comments;
- reference/contracts.md: the compiled contracts' ABIs (contracts/build/*.json): events and functions;
- reference/mcp-tools.md: the MCP tools the server builds from the same table (api.mcp.tools), by toolset.

`mkdocs build --strict` (make docs-check, part of make test) fails on a link to a page or anchor that
does not exist, so a hand-written page that names a route links to its generated entry."""

from __future__ import annotations

import ast
import json
import re
from collections.abc import Iterable, Mapping
from dataclasses import MISSING, fields
from pathlib import Path
from typing import Any

from mkdocs.config.defaults import MkDocsConfig
from mkdocs.structure.files import File, Files

ROOT = Path(__file__).resolve().parents[2]

GENERATED_NOTE = "<!-- generated at build time by tools/docs/hooks.py: edit the source it names, not this page -->\n"


def on_files(files: Files, config: MkDocsConfig) -> Files:
    for uri, render in PAGES.items():
        files.append(File.generated(config, uri, content=GENERATED_NOTE + render()))
    return files


# ---- HTTP --------------------------------------------------------------------------------------------


def anchor(method: str, path: str) -> str:
    """The heading id of one route on reference/http.md (hand-written pages link to it)."""
    return re.sub(r"[^a-z0-9]+", "-", f"{method} {path}".lower()).strip("-")


def _cell(text: Any) -> str:
    return str(text).replace("|", "\\|").replace("\n", " ")


def _type(schema: Mapping[str, Any]) -> str:
    if "$ref" in schema:
        return str(schema["$ref"]).rsplit("/", 1)[-1]
    for combiner in ("anyOf", "oneOf"):
        if combiner in schema:
            return " or ".join(_type(s) for s in schema[combiner])
    kind = schema.get("type", "any")
    if kind == "array":
        return f"array of {_type(schema.get('items', {}))}"
    if "enum" in schema:
        return " \\| ".join(f"`{v}`" for v in schema["enum"])
    if isinstance(kind, list):
        return " or ".join(kind)
    fmt = schema.get("format") or ("decimal" if schema.get("multipleOf") == 1e-06 else "")
    return f"{kind} ({fmt})" if fmt else str(kind)


def _fields(schema: Mapping[str, Any], components: Mapping[str, Any]) -> list[str]:
    """A table of an object schema's fields (a $ref is followed once)."""
    if "$ref" in schema:
        schema = components[str(schema["$ref"]).rsplit("/", 1)[-1]]
    props: Mapping[str, Any] = schema.get("properties", {})
    if not props:
        return []
    required = set(schema.get("required", ()))
    rows = ["| field | type | required | description |", "|---|---|---|---|"]
    for name, prop in props.items():
        desc = prop.get("description", "")
        if "default" in prop:
            desc = f"{desc} (default `{json.dumps(prop['default'])}`)".strip()
        rows.append(f"| `{name}` | {_cell(_type(prop))} | {'yes' if name in required else ''} | {_cell(desc)} |")
    return rows


def http_page() -> str:
    from api.openapi import document
    from api.operation_table import OPERATIONS

    doc = document(OPERATIONS)
    components = doc["components"]["schemas"]
    out = [
        "# HTTP API",
        "",
        "Every route the service serves, generated from the operation table that also generates "
        "[`/api/schema`](#get-api-schema) (OpenAPI 3.1) and the MCP tools. Amounts are USDC as JSON "
        "numbers with at most 6 decimals; every error is `{type, code, message, param}` with the "
        "status below. A key is `Authorization: Bearer aglk_...`; its scope must include the one named.",
        "",
    ]
    by_tag: dict[str, list[Any]] = {}
    for op in OPERATIONS:
        if op.alias_of:
            continue
        by_tag.setdefault(op.tags[0] if op.tags else "other", []).append(op)
    described = {t["name"]: t.get("description", "") for t in doc.get("tags", [])}
    for tag, ops in by_tag.items():
        out += [f"## {tag}", ""]
        if described.get(tag):
            out += [described[tag], ""]
        for op in ops:
            spec = doc["paths"][op.path][op.method.lower()]
            out += [f"### `{op.method} {op.path}` {{#{anchor(op.method, op.path)}}}", "", f"**{op.summary}**", ""]
            if spec.get("description"):
                out += [spec["description"], ""]
            auth = {"none": "public", "optional": "a key optional"}.get(op.auth, "a key")
            if op.auth != "none" and op.scope:
                auth += f" with scope `{op.scope}`"
            notes = [f"Auth: {auth}."]
            if op.idempotent:
                notes.append("Honours `Idempotency-Key`.")
            if op.quote is not None:
                notes.append("Moves value: counts against a key's daily cap (over MCP: quote, then execute).")
            out += [" ".join(notes), ""]
            params = [p for p in spec.get("parameters", []) if p["in"] in ("path", "query")]
            if params:
                out += ["| parameter | in | type | required | description |", "|---|---|---|---|---|"]
                out += [
                    f"| `{p['name']}` | {p['in']} | {_cell(_type(p.get('schema', {})))} | "
                    f"{'yes' if p.get('required') else ''} | {_cell(p.get('description', ''))} |"
                    for p in params
                ]
                out.append("")
            body = spec.get("requestBody", {}).get("content", {})
            for media, content in body.items():
                out += [f"Request body ({media}, {_type(content.get('schema', {}))}):", ""]
                out += [*_fields(content.get("schema", {}), components), ""]
            for status, answer in spec["responses"].items():
                answered: dict[str, Any] = answer.get("content", {})
                if int(status) < 400:
                    first: dict[str, Any] = next(iter(answered.values()), {})
                    schema = first.get("schema", {})
                    out += [f"Answer `{status}`" + (f" ({_type(schema)}):" if schema else ": no body."), ""]
                    out += [*_fields(schema, components), ""]
            errors = [(s, a["description"]) for s, a in spec["responses"].items() if int(s) >= 400]
            if errors:
                out += ["| error status | when |", "|---|---|"]
                out += [f"| {s} | {_cell(d)} |" for s, d in errors]
                out.append("")
    return "\n".join(out)


# ---- settings ----------------------------------------------------------------------------------------


def _comments(source: Path, class_name: str) -> dict[str, str]:
    """The `#:` comment block above each field of `class_name`."""
    lines = source.read_text().splitlines()
    tree = ast.parse(source.read_text())
    cls = next(n for n in tree.body if isinstance(n, ast.ClassDef) and n.name == class_name)
    out: dict[str, str] = {}
    for node in cls.body:
        if isinstance(node, ast.AnnAssign) and isinstance(node.target, ast.Name):
            above: list[str] = []
            i = node.lineno - 2
            while i >= 0 and lines[i].strip().startswith("#:"):
                above.insert(0, lines[i].strip()[2:].strip())
                i -= 1
            out[node.target.id] = " ".join(above)
    return out


def settings_page() -> str:
    from core.config import PREFIX, Settings

    notes = _comments(ROOT / "core" / "config.py", "Settings")
    out = [
        "# Settings",
        "",
        f"Every setting of the service (`core/config.py`), as an environment variable `{PREFIX}<NAME>` or a "
        f"key of the TOML file `{PREFIX}CONFIG` names. Unknown keys are refused at start.",
        "",
        "| variable | default | what it sets |",
        "|---|---|---|",
    ]
    for f in fields(Settings):
        default: Any = f.default if f.default is not MISSING else ""
        shown = "" if default in ("", None) else f"`{default}`"
        if isinstance(default, Path):
            shown = f"`{default.relative_to(ROOT) if default.is_relative_to(ROOT) else default}`"
        out.append(f"| `{PREFIX}{f.name.upper()}` | {_cell(shown)} | {_cell(notes.get(f.name, ''))} |")
    return "\n".join(out) + "\n"


# ---- contracts ---------------------------------------------------------------------------------------


def _signature(item: Mapping[str, Any]) -> str:
    args = ", ".join(
        f"{i['type']}{' indexed' if i.get('indexed') else ''} {i.get('name', '')}".strip() for i in item["inputs"]
    )
    return f"{item['name']}({args})"


def _abi_items(abi: Iterable[Mapping[str, Any]], kind: str) -> list[Mapping[str, Any]]:
    return sorted((i for i in abi if i.get("type") == kind), key=lambda i: str(i["name"]))


def contracts_page() -> str:
    from core.chain import CONTRACT_NAMES

    out = [
        "# Contracts and events",
        "",
        "The Solidity contracts hold the money and are the source of truth; the indexer follows their "
        "events. Generated from the compiled ABIs (`contracts/build/`, made by `make compile`).",
        "",
    ]
    for name in CONTRACT_NAMES:
        abi = json.loads((ROOT / "contracts" / "build" / f"{name}.json").read_text())["abi"]
        out += [f"## {name}", ""]
        events = _abi_items(abi, "event")
        if events:
            out += ["Events:", "", *(f"- `{_signature(e)}`" for e in events), ""]
        writes = [f for f in _abi_items(abi, "function") if f["stateMutability"] not in ("view", "pure")]
        reads = [f for f in _abi_items(abi, "function") if f["stateMutability"] in ("view", "pure")]
        if writes:
            out += ["Transactions:", "", *(f"- `{_signature(f)}`" for f in writes), ""]
        if reads:
            out += ["Reads:", "", *(f"- `{_signature(f)}`" for f in reads), ""]
    return "\n".join(out)


# ---- MCP tools ---------------------------------------------------------------------------------------


def mcp_tools_page() -> str:
    from api.mcp.tools import build_tools
    from api.mcp.toolsets import DESCRIPTIONS
    from api.operation_table import OPERATIONS

    tools = build_tools(OPERATIONS)
    out = [
        "# MCP tools",
        "",
        f"The {len(tools)} tools `/api/mcp` builds from the operation table, by toolset, besides `list_toolsets` and "
        "`enable_toolset`, which every session has. **default**: in the compact list a session gets when it "
        "names no toolset. Scope: what a key needs to see and call it (public: no key needed). How toolsets "
        "are chosen: [the MCP server](mcp.md).",
        "",
    ]
    for toolset, about in DESCRIPTIONS.items():
        specs = [spec for spec in tools.values() if spec.op.toolset == toolset]
        out += [
            f"## {toolset}",
            "",
            f"{about}. {len(specs)} tools.",
            "",
            "| tool | scope | what it does |",
            "|---|---|---|",
        ]
        for spec in specs:
            scope = "public" if spec.visible_to(None) else f"`{spec.op.needs_scope or 'a key'}`"
            default = " **default**" if spec.op.mcp_default else ""
            route = f"[`{spec.op.method} {spec.op.path}`](http.md#{anchor(spec.op.method, spec.op.path)})"
            text = _cell(spec.tool.description or "")
            out.append(f"| `{spec.name}`{default} | {scope} | {text} ({route}) |")
        out.append("")
    return "\n".join(out)


PAGES = {
    "reference/http.md": http_page,
    "reference/settings.md": settings_page,
    "reference/contracts.md": contracts_page,
    "reference/mcp-tools.md": mcp_tools_page,
}
