"""What a key scoped to one agent reaches of its account, over the whole operation table.

Every row that takes a key says what of an account it touches (`Operation.touches`); the rule is one,
core.keys.Caller.reach. One account holds agents A1 and A2 (an account key, and a key scoped to each);
another account has its own key. Then, row by row of the table (a new row is covered without a line
here, and a row that takes a key without saying what it touches fails the first test):

- "agent" rows: a request naming A1 (every agl_ wallet field, agent path parameter and listing of the
  request; the other fields made from the row's own schema) answers 404 to A2's key and to the other
  account's key, exactly as for an agent that does not exist; A1's key and the account key pass that
  check (whatever the rest of the request then meets);
- "account" rows: A1's key is refused with 403 account_key_required, over HTTP and as an MCP tool, and
  does not see the tool; the account key is not;
- "held" rows: a thing held by A1, by A2 and by the account, each made by the row's maker (HELD: a
  row without one fails): A1's key reaches A1's, gets 404 for A2's (as for another account's) and 403
  account_key_required for the account's; the account key reaches them all.

"key" rows (a checkout session, the order it funded) reach only what that very key made, and
"nothing" rows nothing of an account: neither names an account's thing or another agent.
"""

from __future__ import annotations

import asyncio
import json
import re
import time
from collections.abc import Awaitable, Callable
from dataclasses import dataclass
from pathlib import Path
from typing import Any, get_args

from pydantic import BaseModel

from api.mcp.tools import tool_name
from api.operation import Operation, Touches
from api.operation_table import OPERATIONS
from core import wallets
from core.keys import hash_api_key, new_api_key
from core.store import connect, transaction
from core.store import wallets as wallet_store
from tests.integration.chainkit import System
from tests.integration.drop_kit import BASE, USDC, World, running, seller_pair
from tests.integration.http_kit import Reply
from tests.integration.mcp_kit import error_code, mcp

WALLET_PATTERN = "^agl_[0-9a-f]{12}$"
#: Path parameters naming an agent: its agl_ wallet, or its UUID.
AGENT_PATH = {"agent_id": "wallet", "agent_uuid": "uuid"}
#: Body and query fields naming a drop listing (of the agent).
LISTING_FIELDS = {"listingId"}


@dataclass(frozen=True)
class Agent:
    wallet: str
    uuid: str


@dataclass(frozen=True)
class Account:
    """One account's agents A1 and A2, its key, a key scoped to each, A1's listing; a stranger's key."""

    key: str
    a1: Agent
    a2: Agent
    key_a1: str
    key_a2: str
    listing_a1: str
    stranger_key: str
    stranger: Agent


# ---- requests made from a row's own schema ---------------------------------------------------------


def _from_pattern(pattern: str) -> str:
    """The shortest string `pattern` matches (enough for this API's patterns: literals, classes,
    repeats, groups and alternations)."""
    parsed = re._parser.parse(pattern)  # type: ignore[attr-defined]
    c = re._constants  # type: ignore[attr-defined]

    def one(items: Any) -> str:
        out = []
        for op, av in items:
            if op is c.LITERAL:
                out.append(chr(av))
            elif op is c.ANY or op is c.NOT_LITERAL:
                out.append("a" if op is c.ANY or av != ord("a") else "b")
            elif op is c.IN:
                out.append(_first_of(av, c))
            elif op in (c.MAX_REPEAT, c.MIN_REPEAT, c.POSSESSIVE_REPEAT):
                low, _high, sub = av
                out.append(one(sub) * low)
            elif op is c.SUBPATTERN:
                out.append(one(av[-1]))
            elif op is c.BRANCH:
                out.append(one(av[1][0]))
            elif op is c.CATEGORY:
                out.append(_category(av, c))
            elif op in (c.AT, c.ASSERT, c.ASSERT_NOT):
                continue
            else:
                raise AssertionError(f"no example for {op} in {pattern!r}")
        return "".join(out)

    made = one(parsed)
    assert re.fullmatch(pattern.strip("^$"), made), (pattern, made)
    return made


def _first_of(choices: Any, c: Any) -> str:
    op, av = choices[0]
    if op is c.NEGATE:
        return next(ch for ch in "a0_" if not any(o is c.LITERAL and v == ord(ch) for o, v in choices[1:]))
    if op is c.LITERAL:
        return chr(av)
    if op is c.RANGE:
        return chr(av[0])
    return _category(av, c)


def _category(av: Any, c: Any) -> str:
    return {c.CATEGORY_DIGIT: "0", c.CATEGORY_WORD: "a", c.CATEGORY_SPACE: " "}.get(av, "a")


def _example(schema: dict[str, Any], defs: dict[str, Any], naming: Callable[[str, dict[str, Any]], Any]) -> Any:
    """A value `schema` accepts; agl_ wallets and listings are what `naming` names."""
    if "$ref" in schema:
        return _example(defs[schema["$ref"].split("/")[-1]], defs, naming)
    if "anyOf" in schema:
        return _example(next(s for s in schema["anyOf"] if s.get("type") != "null"), defs, naming)
    if "const" in schema:
        return schema["const"]
    if "enum" in schema:
        return schema["enum"][0]
    kind = schema.get("type")
    if kind == "object":
        props = schema.get("properties", {})
        required = set(schema.get("required", ()))
        out = {}
        for name, sub in props.items():
            named = naming(name, sub)
            if named is not None:
                out[name] = named
            elif name in required:
                out[name] = _example(sub, defs, naming)
        return out
    if kind == "array":
        return [_example(schema["items"], defs, naming) for _ in range(max(1, schema.get("minItems", 1)))]
    if kind == "string":
        if "pattern" in schema:
            return _from_pattern(schema["pattern"])
        return "x" * max(1, schema.get("minLength", 1))
    if kind == "integer":
        return int(schema.get("minimum", 1))
    if kind == "number":
        return 1
    if kind == "boolean":
        return False
    return "x"  # any JSON


def _names_agent(op: Operation) -> bool:
    """Whether a request of `op` can name an agent: a wallet field, an agent path parameter, a listing."""
    if any("{" + p + "}" in op.path for p in AGENT_PATH):
        return True
    found = False

    def note(name: str, schema: dict[str, Any]) -> None:
        nonlocal found
        text = json.dumps(schema)
        found = found or name in LISTING_FIELDS or WALLET_PATTERN in text

    for model in (op.query, op.request):
        if model is not None:
            _example(model.model_json_schema(), model.model_json_schema().get("$defs", {}), lambda n, s: note(n, s))
    return found


def _naming(agent: Agent, listing: str) -> Callable[[str, dict[str, Any]], Any]:
    def name(field: str, schema: dict[str, Any]) -> Any:
        if field in LISTING_FIELDS:
            return listing
        if WALLET_PATTERN in json.dumps(schema):
            return agent.wallet
        return None

    return name


def _request(op: Operation, agent: Agent, listing: str) -> tuple[str, dict[str, str] | None, Any]:
    """(path, query, body) of a call of `op` naming `agent` (and its `listing`) wherever it can."""
    path = op.path
    for param in re.findall(r"{(\w+)}", op.path):
        value = getattr(agent, AGENT_PATH[param]) if param in AGENT_PATH else "nope"
        path = path.replace("{" + param + "}", value)
    naming = _naming(agent, listing)

    def made(model: type[BaseModel] | None) -> Any:
        if model is None:
            return None
        schema = model.model_json_schema()
        return _example(schema, schema.get("$defs", {}), naming)

    query = made(op.query)
    return path, None if query is None else {k: str(v) for k, v in query.items()}, made(op.request)


async def _call(w: World, op: Operation, key: str, agent: Agent, listing: str) -> Reply:
    path, query, body = _request(op, agent, listing)
    return await w.call(op.method, path, body, key=key, params=query)


#: The answers of an agent (or its listing) the key may not reach: those of one that does not exist.
AGENT_ABSENT = ("agent_not_found", "listing_not_found")


def _agent_absent(r: Reply) -> bool:
    return r.status == 404 and r.body.get("code") in AGENT_ABSENT


def _refused_as_absent(op: Operation, r: Reply) -> bool:
    return r.status == 404 and r.body.get("code") in op.errors.get(404, ())


# ---- the makers of held things -------------------------------------------------------------------


async def _watch(w: World, key: str, watched: Agent) -> str:
    got = await w.ok("POST", f"{BASE}/watch", {"agentId": watched.wallet, "email": "w@example.com"}, 201, key=key)
    return f"{BASE}/watch/{got['watch']['id']}"


Maker = Callable[[World, Account, str], Awaitable[str]]


async def _watch_held_by(w: World, acc: Account, holder: str) -> str:
    """A watch held by A1 ("a1"), by A2 ("a2") or by the account ("account"): the path that names it."""
    if holder == "a1":
        return await _watch(w, acc.key, acc.a1)  # the account key watching its own agent A1
    if holder == "a2":
        return await _watch(w, acc.key_a2, acc.stranger)  # A2's key watching another account's agent
    return await _watch(w, acc.key, acc.stranger)  # the account key watching another account's agent


#: operation id -> how to make a thing of that row held by "a1", "a2" or "account" (its path).
HELD: dict[str, Maker] = {"dropUnwatch": _watch_held_by}


# ---- the tests -----------------------------------------------------------------------------------


def test_every_row_that_takes_a_key_says_what_it_touches() -> None:
    kinds = set(get_args(Touches))
    for op in OPERATIONS:
        if op.auth == "none":
            assert op.touches is None, f"{op.operation_id} takes no key: it touches nothing of an account"
            continue
        assert op.touches in kinds, f"{op.operation_id} takes a key: say what of an account it touches"
        if op.touches == "agent":
            assert _names_agent(op), f"{op.operation_id} touches an agent but no field names one"
            assert set(op.errors.get(404, ())) & set(AGENT_ABSENT), f"{op.operation_id}: its 404 of an agent"
    assert {op.operation_id for op in OPERATIONS if op.touches == "held"} == set(HELD), "a maker for each held row"


async def _account(w: World) -> Account:
    key, w1, u1 = await w.register("a1")
    _, w2, u2 = await w.register("a2", key=key)
    stranger_key, ws, us = await w.register("stranger")
    conn = connect(w.db_path)
    try:
        key_a1, key_a2 = new_api_key(), new_api_key()
        with transaction(conn):
            wallets.issue_key(conn, hash_api_key(key_a1), time.time(), agent_uuid=u1)
            wallets.issue_key(conn, hash_api_key(key_a2), time.time(), agent_uuid=u2)
    finally:
        conn.close()
    seller = w.system.users[0]
    token = await w.mint(key, w1, seller, seller_pair(0)[1])
    listing = await w.list(key, w1, seller, token, 500 * USDC, 30 * USDC)
    return Account(key, Agent(w1, u1), Agent(w2, u2), key_a1, key_a2, listing["id"], stranger_key, Agent(ws, us))


def test_an_agent_scoped_key_reaches_only_its_own_agent_on_every_row(system: System, tmp_path: Path) -> None:
    async def body() -> None:
        async with running(tmp_path, system) as w:
            acc = await _account(w)
            checked = set()
            for op in OPERATIONS:
                if op.touches != "agent":
                    continue
                for key in (acc.key_a2, acc.stranger_key):
                    r = await _call(w, op, key, acc.a1, acc.listing_a1)
                    assert _agent_absent(r), (op.operation_id, r.status, r.body)
                for key in (acc.key_a1, acc.key):
                    r = await _call(w, op, key, acc.a1, acc.listing_a1)
                    assert not _agent_absent(r), (op.operation_id, r.status, r.body)
                    assert r.body.get("code") != "account_key_required", (op.operation_id, r.body)
                checked.add(op.operation_id)
            assert len(checked) >= 20

    asyncio.run(body())


def test_the_account_as_a_whole_needs_an_account_key_on_every_row(system: System, tmp_path: Path) -> None:
    async def body() -> None:
        async with running(tmp_path, system) as w:
            acc = await _account(w)
            rows = [op for op in OPERATIONS if op.touches == "account"]
            assert {op.operation_id for op in rows} >= {"registerAgent", "dropClaim"}
            agents = wallet_store.count_rows(w.db, "wallet_agents")
            for op in rows:
                r = await _call(w, op, acc.key_a1, acc.a1, acc.listing_a1)
                assert (r.status, r.body["code"], r.body["param"]) == (403, "account_key_required", "Authorization")
            assert wallet_store.count_rows(w.db, "wallet_agents") == agents  # refused before anything ran
            for op in rows:
                r = await _call(w, op, acc.key, acc.a1, acc.listing_a1)
                assert r.status != 403, (op.operation_id, r.body)
            # the stateless revision: each call stands alone
            async with mcp(w.base + "/api/mcp", acc.key_a1, "2026-07-28") as client:
                listed = {tool.name for tool in (await client.list_tools()).tools}
                for op in rows:
                    name = tool_name(op.operation_id)
                    assert name not in listed
                    _path, _query, args = _request(op, acc.a1, acc.listing_a1)
                    assert error_code(await client.call_tool(name, args)) == "account_key_required"
            async with mcp(w.base + "/api/mcp", acc.key, "2026-07-28") as client:
                listed = {tool.name for tool in (await client.list_tools()).tools}
                assert {tool_name(op.operation_id) for op in rows} <= listed

    asyncio.run(body())


def test_held_things_answer_by_their_holder_on_every_row(system: System, tmp_path: Path) -> None:
    async def body() -> None:
        async with running(tmp_path, system) as w:
            acc = await _account(w)
            for op in OPERATIONS:
                if op.touches != "held":
                    continue
                make = HELD[op.operation_id]
                # another account's key finds none of them; A1's key finds only A1's
                for holder in ("a1", "a2", "account"):
                    path = await make(w, acc, holder)
                    r = await w.call(op.method, path, key=acc.stranger_key)
                    assert _refused_as_absent(op, r), (op.operation_id, holder, r.status, r.body)
                    r = await w.call(op.method, path, key=acc.key_a1)
                    if holder == "a1":
                        assert r.status < 300, (op.operation_id, holder, r.body)
                    elif holder == "a2":  # a sibling's: as if absent
                        assert _refused_as_absent(op, r), (op.operation_id, holder, r.status, r.body)
                    else:
                        assert (r.status, r.body["code"]) == (403, "account_key_required"), (op.operation_id, r.body)
                # the account key reaches every one of them
                for holder in ("a2", "account"):
                    path = await make(w, acc, holder)
                    r = await w.call(op.method, path, key=acc.key)
                    assert r.status < 300, (op.operation_id, holder, r.body)

    asyncio.run(body())
