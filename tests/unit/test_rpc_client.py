"""The indexer's JSON-RPC client against a fake node on loopback (a real aiohttp server): provider
range errors, retries with backoff, the 429 pacer, JSON-RPC errors and batches; and the RangeSizer."""

from __future__ import annotations

import asyncio
import itertools
import json
import random
from collections.abc import Callable
from types import TracebackType
from typing import Any

import pytest
from aiohttp import web

from indexer.decode import RawLog, in_chain_order, parse_logs
from indexer.fetch import RangeSizer
from indexer.rpc import RetryPolicy, RpcClient, RpcError, RpcUnavailable, is_range_error, parse_reply, suggested_range

# ---- provider range errors ----------------------------------------------------------------------

ALCHEMY = (
    "Log response size exceeded. You can make eth_getLogs requests with up to a 2K block range and no limit on "
    "the response size, or you can make eth_getLogs requests with a 10K block range and a 150MB limit on the "
    "response size. this block range should work: [0x1c9c380, 0x1c9cb4f]"
)
ALCHEMY_CAPPED = (
    "Log response size exceeded. You can make eth_getLogs requests with up to a 2K block range and no limit on "
    "the response size, or you can request any block range with a cap of 10K logs in the response. Based on your "
    "parameters and the response size limit, this block range should work: [0x0, 0x133e71]"
)
ALCHEMY_FREE = (
    "You can make eth_getLogs requests with up to a 10 block range. Based on your parameters, this block range "
    "should work: [0x1312d00, 0x1312d09]"
)
INFURA_DATA = {"from": "0xCB3D", "limit": 10000, "to": "0x7B737"}

RANGE_ERRORS = [
    # (provider, code, message, data, the suggested range)
    ("alchemy", -32602, ALCHEMY, None, (0x1C9C380, 0x1C9CB4F)),
    ("alchemy capped", -32602, ALCHEMY_CAPPED, None, (0x0, 0x133E71)),
    ("alchemy free tier", -32600, ALCHEMY_FREE, None, (0x1312D00, 0x1312D09)),
    (
        "infura",
        -32005,
        "query returned more than 10000 results. Try with this block range [0xCB3D, 0x7B737].",
        INFURA_DATA,
        (0xCB3D, 0x7B737),
    ),
    ("infura, range only in data", -32005, "query returned more than 10000 results", INFURA_DATA, (0xCB3D, 0x7B737)),
    ("infura, no range", -32005, "query returned more than 10000 results", None, None),
    ("quicknode", -32614, "eth_getLogs is limited to a 10,000 range", None, None),
    ("quicknode 413", -32602, "eth_getLogs and eth_newFilter are limited to a 10,000 blocks range", None, None),
    (
        "geth/erigon/reth/drpc result cap",
        -32602,
        "query exceeds max results 20000, retry with the range 50784086-50785570",
        None,
        (50784086, 50785570),
    ),
    ("reth block cap", -32602, "query exceeds max block range 100000", None, None),
    ("ankr", -32600, "block range is too wide", None, None),
    ("base/thirdweb", -32000, "block range too large", None, None),
    ("simplyvc", -32000, "too wide blocks range, the limit is 100", None, None),
    ("drpc", -32000, "requested too many blocks from 0 to 16777216, maximum is set to 2048", None, None),
    ("drpc free tier", -32000, "ranges over 10000 blocks are not supported on freetier", None, None),
    ("chainstack/goldsky", -32012, "requested range too large", None, None),
    ("arbitrum", -32000, "logs matched by query exceeds limit of 10000", None, None),
    ("alchemy timeout", -32000, "Query timeout exceeded. Consider reducing your block range.", None, None),
]

NOT_RANGE_ERRORS = [
    ("geth lagging node", -32000, "header not found"),
    ("method missing", -32601, "the method eth_getLogs does not exist/is not available"),
    ("bad params", -32602, "invalid argument 0: hex string without 0x prefix"),
    ("revert", 3, "execution reverted"),
    ("infura rate limit", -32005, "daily request count exceeded, request rate limited"),
    ("infura throughput", -32005, "project ID request rate exceeded"),
    ("goldsky rate limit", -32005, "Rate limit exceeded"),
    ("alchemy throughput", 429, "Your app has exceeded its compute units per second capacity."),
    ("quicknode rate", -32007, "100/second request limit reached - reduce calls per second or upgrade your account"),
]


@pytest.mark.parametrize(
    ("code", "message", "data", "suggestion"),
    [r[1:] for r in RANGE_ERRORS],
    ids=[r[0] for r in RANGE_ERRORS],
)
def test_provider_range_errors_are_recognised_with_their_suggestion(
    code: int, message: str, data: Any, suggestion: tuple[int, int] | None
) -> None:
    exc = RpcError(code, message, data)
    assert is_range_error(exc)
    assert suggested_range(exc) == suggestion


@pytest.mark.parametrize(("code", "message"), [r[1:] for r in NOT_RANGE_ERRORS], ids=[r[0] for r in NOT_RANGE_ERRORS])
def test_other_errors_and_rate_limits_are_not_range_errors(code: int, message: str) -> None:
    # A rate limit is not "ask for fewer blocks": shrinking the range would only multiply requests.
    assert not is_range_error(RpcError(code, message))


def test_suggested_range_ignores_reversed_and_absent_ranges() -> None:
    assert suggested_range(RpcError(-32005, "Try with this block range [0x20, 0x10].")) is None
    assert suggested_range(RpcError(-32005, "block range is too large", {"limit": 10000})) is None
    # the hint may arrive in a string `data` (Nethermind-style)
    assert suggested_range(RpcError(-32005, "too many logs", "try with this block range [0x1, 0x2]")) == (1, 2)


# ---- a fake node on loopback --------------------------------------------------------------------

Action = str | tuple[str, Any]


class FakeNode:
    """A JSON-RPC node on 127.0.0.1: each HTTP request first takes the next scripted action
    ("drop", "429", ("429", retry_after), "503", ("slow", seconds), ("raw", json_value), "garbled") and
    otherwise answers every call with `answer(call)`; `reorder` rearranges batch replies."""

    def __init__(self) -> None:
        self.script: list[Action] = []
        self.hits: list[float] = []  # loop time of each HTTP request
        self.bodies: list[Any] = []
        self.reorder: Callable[[list[Any]], list[Any]] = lambda replies: replies
        self._runner: web.AppRunner | None = None
        self.url = ""

    @staticmethod
    def answer(call: dict[str, Any]) -> dict[str, Any]:
        method, params, id_ = call["method"], call.get("params", []), call["id"]
        if method == "fail":
            code, message, data = params
            return {"jsonrpc": "2.0", "id": id_, "error": {"code": code, "message": message, "data": data}}
        if method == "echo":
            return {"jsonrpc": "2.0", "id": id_, "result": params}
        return {"jsonrpc": "2.0", "id": id_, "result": "0x10"}

    async def handle(self, request: web.Request) -> web.StreamResponse:
        body = await request.json()
        self.hits.append(asyncio.get_running_loop().time())
        self.bodies.append(body)
        action = self.script.pop(0) if self.script else None
        kind, arg = action if isinstance(action, tuple) else (action, 0)
        if kind == "drop":
            assert request.transport is not None
            request.transport.abort()
            return web.Response()
        if kind == "429":
            return web.Response(status=429, headers={"Retry-After": str(arg)} if arg else {})
        if kind == "503":
            return web.Response(status=503, text="upstream connect error")
        if kind == "slow":
            await asyncio.sleep(arg)
        if kind == "raw":
            return web.json_response(arg)
        if kind == "garbled":  # cut short, as by a proxy that gave up mid-body
            return web.Response(text='{"jsonrpc": "2.0", "id": 0, "res', content_type="application/json")
        if isinstance(body, list):
            return web.json_response(self.reorder([self.answer(c) for c in body]))
        return web.json_response(self.answer(body))

    async def __aenter__(self) -> FakeNode:
        app = web.Application()
        app.router.add_post("/", self.handle)
        self._runner = web.AppRunner(app, handle_signals=False, access_log=None)
        await self._runner.setup()
        site = web.TCPSite(self._runner, "127.0.0.1", 0)
        await site.start()
        self.url = f"http://127.0.0.1:{self._runner.addresses[0][1]}/"
        return self

    async def __aexit__(
        self, et: type[BaseException] | None, ev: BaseException | None, tb: TracebackType | None
    ) -> None:
        assert self._runner is not None
        await self._runner.cleanup()

    def gaps(self) -> list[float]:
        return [b - a for a, b in itertools.pairwise(self.hits)]


FAST = RetryPolicy(attempts=5, base_delay=0.01, max_delay=0.05, timeout=2.0)


def run(scenario: Callable[[FakeNode, RpcClient], Any], policy: RetryPolicy = FAST) -> Any:
    async def main() -> Any:
        async with FakeNode() as node, RpcClient(node.url, policy) as rpc:
            return await scenario(node, rpc)

    return asyncio.run(main())


# ---- retries ------------------------------------------------------------------------------------


def test_two_dropped_connections_then_success() -> None:
    async def scenario(node: FakeNode, rpc: RpcClient) -> None:
        node.script = ["drop", "drop"]
        assert await rpc.call("eth_blockNumber", []) == "0x10"
        assert len(node.hits) == 3
        assert rpc.requests == 3

    run(scenario)


def test_503_and_a_timeout_are_retried() -> None:
    async def scenario(node: FakeNode, rpc: RpcClient) -> None:
        node.script = ["503", ("slow", 0.5)]
        assert await rpc.call("echo", [1]) == [1]
        assert len(node.hits) == 3

    run(scenario, RetryPolicy(attempts=3, base_delay=0.01, max_delay=0.05, timeout=0.2))


def test_attempts_exhausted_raise_rpc_unavailable() -> None:
    async def scenario(node: FakeNode, rpc: RpcClient) -> None:
        node.script = ["503"] * 10
        with pytest.raises(RpcUnavailable, match="HTTP 503"):
            await rpc.call("eth_blockNumber", [])
        assert len(node.hits) == 4  # exactly the retry budget, then give up

    run(scenario, RetryPolicy(attempts=4, base_delay=0.01, max_delay=0.05))


def test_an_unreachable_node_raises_rpc_unavailable() -> None:
    async def main() -> None:
        async with FakeNode() as node:
            url = node.url
        async with RpcClient(url, RetryPolicy(attempts=2, base_delay=0.01)) as rpc:  # nothing listens there now
            with pytest.raises(RpcUnavailable, match="Cannot connect"):
                await rpc.call("eth_blockNumber", [])
            assert rpc.requests == 2

    asyncio.run(main())


def test_backoff_grows_exponentially_and_is_capped(monkeypatch: pytest.MonkeyPatch) -> None:
    monkeypatch.setattr(random, "random", lambda: 0.5)  # no jitter: the sleeps are exactly the delays

    async def scenario(node: FakeNode, rpc: RpcClient) -> list[float]:
        node.script = ["503"] * 5
        assert await rpc.call("eth_blockNumber", []) == "0x10"
        return node.gaps()

    gaps = run(scenario, RetryPolicy(attempts=6, base_delay=0.04, max_delay=0.2))
    expected = [0.04, 0.08, 0.16, 0.2, 0.2]
    assert len(gaps) == len(expected)
    for gap, want in zip(gaps, expected, strict=True):
        assert want * 0.95 <= gap < want + 0.1, (gaps, expected)


# ---- the 429 pacer ------------------------------------------------------------------------------


def test_429_raises_the_pacer_interval_and_successes_lower_it() -> None:
    async def scenario(node: FakeNode, rpc: RpcClient) -> None:
        await rpc.call("eth_blockNumber", [])  # connected: later gaps are pacing, not connection setup
        node.script = ["429", "429", "429"]
        assert await rpc.call("eth_blockNumber", []) == "0x10"
        assert rpc.throttled == 3
        # even the first retry waits for the pacer (0.05 s, then 0.1, 0.2), not just the tiny backoff
        gaps = node.gaps()[1:]
        for gap, (lo, hi) in zip(gaps, [(0.035, 0.095), (0.085, 0.19), (0.18, 0.4)], strict=True):
            assert lo <= gap < hi, gaps
        raised = rpc._interval  # the pacer: minimum seconds between requests
        assert raised >= 0.1
        # the pacer holds the next requests apart by (about) the interval
        t0 = len(node.hits)
        await rpc.call("eth_blockNumber", [])
        await rpc.call("eth_blockNumber", [])
        assert node.hits[t0 + 1] - node.hits[t0] >= rpc._interval * 0.9
        # every success lowers it, down to zero (full speed)
        seen = [rpc._interval]
        for _ in range(25):
            await rpc.call("eth_blockNumber", [])
            seen.append(rpc._interval)
        assert all(b <= a for a, b in itertools.pairwise(seen))
        assert seen[0] < raised and seen[-1] == 0.0

    run(scenario, RetryPolicy(attempts=5, base_delay=0.001, max_delay=0.002))


def test_the_interval_is_capped() -> None:
    async def scenario(node: FakeNode, rpc: RpcClient) -> None:
        rpc._interval = 1.5
        node.script = ["429"]
        with pytest.raises(RpcUnavailable, match="429"):
            await rpc.call("eth_blockNumber", [])
        assert rpc.throttled == 1
        assert rpc._interval == 2.0  # doubled, but never more than 2 s between requests

    run(scenario, RetryPolicy(attempts=1))


def test_retry_after_is_waited_at_least(monkeypatch: pytest.MonkeyPatch) -> None:
    monkeypatch.setattr(random, "random", lambda: 0.0)  # the shortest jitter the client can draw

    async def scenario(node: FakeNode, rpc: RpcClient) -> None:
        node.script = [("429", 1)]
        assert await rpc.call("eth_blockNumber", []) == "0x10"
        assert node.gaps()[0] >= 0.99  # the provider asked for 1 s: not a jittered half of it

    run(scenario, RetryPolicy(attempts=3, base_delay=0.01, max_delay=5.0))


def test_a_huge_retry_after_is_capped_at_max_delay() -> None:
    async def scenario(node: FakeNode, rpc: RpcClient) -> None:
        node.script = [("429", 3600)]
        assert await rpc.call("eth_blockNumber", []) == "0x10"
        assert node.gaps()[0] < 0.6

    run(scenario, RetryPolicy(attempts=3, base_delay=0.01, max_delay=0.2))


def test_concurrent_requests_are_paced_too() -> None:
    async def scenario(node: FakeNode, rpc: RpcClient) -> None:
        loop = asyncio.get_running_loop()
        released: list[float] = []  # when the pacer let each request go (the client's clock, not the server's)
        pace = rpc._pace

        async def recorded() -> None:
            await pace()
            released.append(loop.time())

        rpc._pace = recorded  # type: ignore[method-assign]
        rpc._interval = 0.2  # as after a few 429s
        await asyncio.gather(*(rpc.call("eth_blockNumber", []) for _ in range(4)))
        assert len(node.hits) == 4
        gaps = [b - a for a, b in itertools.pairwise(released)]
        # not four requests at once after one shared wait: each waits its turn (the interval shrinks
        # by a fifth with every success, from 0.2 s)
        assert min(gaps) >= 0.1, gaps

    run(scenario)


# ---- JSON-RPC errors and batches ------------------------------------------------------------------


def test_jsonrpc_errors_are_returned_in_batches_and_raised_by_call() -> None:
    async def scenario(node: FakeNode, rpc: RpcClient) -> None:
        ok, err, ok2 = await rpc.batch(
            [("echo", ["a"]), ("fail", [-32000, "header not found", {"x": 1}]), ("echo", ["b"])]
        )
        assert ok == ["a"] and ok2 == ["b"]
        assert isinstance(err, RpcError)
        assert (err.code, err.message, err.data) == (-32000, "header not found", {"x": 1})
        with pytest.raises(RpcError) as info:
            await rpc.call("fail", [-32602, "invalid argument", None])
        assert info.value.code == -32602 and info.value.message == "invalid argument"
        assert len(node.hits) == 2  # a JSON-RPC error is an answer: never retried here

    run(scenario)


def test_a_call_is_sent_as_an_object_and_a_batch_as_an_array_with_distinct_ids() -> None:
    async def scenario(node: FakeNode, rpc: RpcClient) -> None:
        await rpc.call("echo", [1])
        await rpc.batch([("echo", [2]), ("echo", [3]), ("echo", [4])])
        assert await rpc.batch([]) == []
        single, batch = node.bodies
        assert isinstance(single, dict) and single["method"] == "echo"
        assert [c["params"] for c in batch] == [[2], [3], [4]]
        ids = [single["id"], *(c["id"] for c in batch)]
        assert len(set(ids)) == 4
        assert len(node.hits) == 2  # the empty batch sent nothing

    run(scenario)


def test_batch_results_follow_the_calls_not_the_reply_order() -> None:
    async def scenario(node: FakeNode, rpc: RpcClient) -> None:
        node.reorder = lambda replies: list(reversed(replies))
        assert await rpc.batch([("echo", [i]) for i in range(6)]) == [[i] for i in range(6)]
        node.reorder = lambda replies: replies[1:]  # the node lost one reply
        first, *rest = await rpc.batch([("echo", [i]) for i in range(3)])
        assert isinstance(first, RpcError) and "missing" in first.message
        assert rest == [[1], [2]]

    run(scenario)


def test_an_error_for_the_whole_batch_reaches_every_call() -> None:
    # e.g. a provider refusing a batch over its size limit answers one error object with id null
    whole = {"jsonrpc": "2.0", "id": None, "error": {"code": -32600, "message": "batch size too large"}}

    async def scenario(node: FakeNode, rpc: RpcClient) -> None:
        node.script = [("raw", whole), ("raw", whole)]
        results = await rpc.batch([("echo", [1]), ("echo", [2])])
        assert [(r.code, r.message) for r in results] == [(-32600, "batch size too large")] * 2
        with pytest.raises(RpcError, match="batch size too large"):
            await rpc.call("echo", [1])

    run(scenario)


def test_a_null_error_member_is_not_an_error() -> None:
    async def scenario(node: FakeNode, rpc: RpcClient) -> None:
        node.script = [("raw", {"jsonrpc": "2.0", "id": 0, "result": "0x2a", "error": None})]
        assert await rpc.call("eth_blockNumber", []) == "0x2a"

    run(scenario)


def test_a_garbled_body_is_retried() -> None:
    async def scenario(node: FakeNode, rpc: RpcClient) -> None:
        node.script = ["garbled"]
        assert await rpc.call("echo", [7]) == [7]
        assert len(node.hits) == 2

    run(scenario)


# ---- the eth_getLogs range sizer ------------------------------------------------------------------


def test_range_sizer_grows_on_light_successes_up_to_the_maximum() -> None:
    s = RangeSizer(size=100, maximum=300, target_logs=1000)
    s.success(10)
    assert s.size == 200
    s.success(499)
    assert s.size == 300  # capped
    s.success(0)
    assert s.size == 300


def test_range_sizer_aims_at_the_target_from_the_observed_density() -> None:
    s = RangeSizer(size=100, target_logs=1000)
    s.success(1000)  # on target: hold
    assert s.size == 100
    s.success(4000)  # four times too dense: a quarter of the span next time
    assert s.size == 25
    s.success(800)  # a bit light: grow in proportion, never more than double
    assert s.size == 31
    s = RangeSizer(size=10, minimum=3, target_logs=10)
    s.success(10_000)
    assert s.size == 3  # never below the minimum


def test_range_sizer_halves_down_to_the_minimum_and_takes_a_suggestion() -> None:
    s = RangeSizer(size=10, minimum=2)
    s.too_large()
    assert s.size == 5
    s.too_large()
    assert s.size == 2
    s.too_large()
    assert s.size == 2  # never below the minimum
    s = RangeSizer(size=2000)
    s.too_large(37)
    assert s.size == 37  # the provider's suggested span
    s.too_large(0)
    assert s.size == 18  # no usable suggestion: halve


def test_range_sizer_aims_by_the_denser_tail_of_a_range() -> None:
    # 40 blocks: quiet for 30, then 1,000 logs a block. The average (10,000 logs in 40 blocks) says
    # "hold at 40"; the last quarter (10 blocks, 10,000 logs) says the chain is now 1,000 a block.
    logs = [{"blockNumber": hex(130 + i // 1000)} for i in range(10_000)]
    s = RangeSizer(size=40, target_logs=5_000)
    s.observe(logs, 100, 139)
    assert s.size == 5
    s = RangeSizer(size=40, target_logs=5_000)
    s.observe([{"blockNumber": hex(100)}] * 2_500, 100, 139)  # dense head, quiet tail: the average rules
    assert s.size == 80
    s = RangeSizer(size=40, target_logs=5_000)
    s.observe([], 100, 139)
    assert s.size == 80


def test_parse_reply_returns_the_result_or_raises_the_error() -> None:
    assert parse_reply(b'{"jsonrpc":"2.0","id":1,"result":[1,2]}') == [1, 2]
    assert parse_reply(b'[{"jsonrpc":"2.0","id":1,"result":"0x1"}]') == "0x1"
    with pytest.raises(RpcError) as err:
        parse_reply(b'{"jsonrpc":"2.0","id":1,"error":{"code":-32005,"message":"query returned more than 10000"}}')
    assert err.value.code == -32005 and is_range_error(err.value)
    with pytest.raises(RpcUnavailable):
        parse_reply(b'{"jsonrpc":"2.0","id":1,"resu')
    with pytest.raises(RpcError):
        parse_reply(b'"just a string"')


# ---- eth_getLogs replies read as structs (indexer.decode.parse_logs) ---------------------------------


def _log(i: int, order: tuple[str, ...]) -> dict[str, Any]:
    full = {
        "address": "0x" + "ab" * 20,
        "topics": ["0x" + f"{i:064x}", "0x" + "00" * 31 + "07"],
        "data": "0x" + "00" * 31 + f"{i % 256:02x}",
        "blockHash": "0x" + "cd" * 32,
        "blockNumber": hex(100 + i // 3),
        "blockTimestamp": "0x6b02ea39",
        "transactionHash": "0x" + f"{i + 1:064x}",
        "transactionIndex": hex(i % 3),
        "logIndex": hex(i),
        "removed": False,
    }
    return {k: full[k] for k in order}


ANVIL_ORDER = ("address", "topics", "data", "blockHash", "blockNumber", "blockTimestamp", "transactionHash",
               "transactionIndex", "logIndex", "removed")  # fmt: skip
GETH_ORDER = ("address", "topics", "data", "blockNumber", "transactionHash", "transactionIndex", "blockHash",
              "logIndex", "removed")  # fmt: skip


def _reply(logs: Any, compact: bool = True, **envelope: Any) -> bytes:
    body = {"jsonrpc": "2.0", "id": 5, "result": logs, **envelope}
    return json.dumps(body, separators=(",", ":") if compact else None).encode()


def _fields(lg: dict[str, Any]) -> tuple[Any, ...]:
    return (
        lg["address"],
        lg["topics"],
        lg["data"],
        lg["blockHash"],
        lg["blockNumber"],
        lg["transactionHash"],
        lg["logIndex"],
        lg.get("removed", False),
    )


def _struct_fields(raw: RawLog) -> tuple[Any, ...]:
    return (
        raw.address,
        raw.topics,
        raw.data,
        raw.blockHash,
        raw.blockNumber,
        raw.transactionHash,
        raw.logIndex,
        raw.removed,
    )


@pytest.mark.parametrize("order", [ANVIL_ORDER, GETH_ORDER])
@pytest.mark.parametrize("compact", [True, False])
def test_parse_logs_reads_every_field_in_any_key_order_and_spacing(order: tuple[str, ...], compact: bool) -> None:
    logs = [_log(i, order) for i in range(7)]
    mixed = [*logs[:2], _log(2, GETH_ORDER if order == ANVIL_ORDER else ANVIL_ORDER), *logs[3:]]
    unknown = [dict(lg, extra="0x1") for lg in logs]
    removed = [dict(lg) for lg in logs]
    removed[2]["removed"] = True
    for batch in (logs, mixed, unknown, removed):
        raw = parse_logs(_reply(batch, compact=compact))
        assert raw is not None
        assert [_struct_fields(r) for r in raw] == [_fields(lg) for lg in batch]
    assert parse_logs(_reply([])) == []


def test_parse_logs_leave_anything_else_to_the_json_parser() -> None:
    logs = [_log(i, ANVIL_ORDER) for i in range(5)]
    assert parse_logs(_reply(logs)) is not None
    pending = [dict(lg, blockHash=None) for lg in logs]
    missing = [{k: v for k, v in lg.items() if k != "logIndex"} for lg in logs]
    for body in (
        _reply(pending),
        _reply(missing),
        _reply(logs)[:-40] + b"]}",  # cut in the middle of a log
        _reply(logs)[:-1],  # not JSON
        b'{"jsonrpc":"2.0","id":5,"error":{"code":-32005,"message":"query returned more than 10000 results"}}',
        b'{"jsonrpc":"2.0","id":5,"result":[],"error":{"code":1,"message":"both"}}',
        b'{"jsonrpc":"2.0","id":5,"result":null}',
        b'[{"jsonrpc":"2.0","id":1,"result":[]}]',  # a batch-shaped reply: parse_reply reads it
        "é".encode() + _reply(logs),
        _reply(logs).replace(b"},{", b"}{", 1),  # a missing comma: not JSON
        _reply(logs).replace(b"},{", b'},"0x1",{', 1),  # something between two logs
        _reply(logs).replace(b"},{", b"},[],{", 1),
    ):
        assert parse_logs(body) is None, body[:80]


def test_parse_logs_never_take_a_log_from_outside_the_result_array() -> None:
    logs = [_log(i, ANVIL_ORDER) for i in range(3)]
    compact = json.dumps(logs[:2], separators=(",", ":"))
    for body in (
        _reply(logs[:2], extra=[logs[2]]),  # {"result":[A,B],"extra":[C]}
        f'{{"jsonrpc":"2.0","id":5,"result": [],"x":{{"result":{compact}}}}}'.encode(),  # a nested "result"
        f'{{"jsonrpc":"2.0","id":5,"\\u0072esult":[],"x":{{"result":{compact}}}}}'.encode(),  # an escaped key
        f'{{"jsonrpc":"2.0","id":5,"result":{compact},"result":[]}}'.encode(),  # a duplicate key: the last wins
    ):
        raw = parse_logs(body)
        parsed = json.loads(body)["result"]
        assert raw is not None, body[:90]
        assert [r.transactionHash for r in raw] == [lg["transactionHash"] for lg in parsed], body[:90]


def test_chain_order_refuses_a_repeated_or_misplaced_log() -> None:
    from core.store.events import Event

    def ev(block: int, index: int) -> Event:
        return Event(block, "0x", "0x", index, "C", "E", "0x", "0x", {})

    assert in_chain_order([]) and in_chain_order([ev(1, 0)]) and in_chain_order([ev(1, 0), ev(1, 1), ev(2, 0)])
    assert not in_chain_order([ev(1, 0), ev(1, 0)])  # the same log twice
    assert not in_chain_order([ev(1, 1), ev(1, 0)])
    assert not in_chain_order([ev(2, 0), ev(1, 5)])


def test_decode_logs_is_decode_all_on_the_same_logs() -> None:
    """Every event of our ABIs, read through parse_logs + decode_logs, decodes to exactly what
    decode_all makes of the same logs parsed as dicts (the path for anything parse_logs declines)."""
    from indexer.decode import INDEXED_CONTRACTS, Decoder

    addresses = {name: "0x" + f"{k + 1:02x}" * 20 for k, name in enumerate(INDEXED_CONTRACTS)}
    decoder = Decoder(addresses)
    logs = []
    for address, specs in decoder._by_address.items():
        for k, topic0 in enumerate(specs):
            word = f"{k + 1:064x}"
            logs.append(
                {
                    "address": address,
                    "topics": [topic0, "0x" + word, "0x" + "f" * 64, "0x" + "0" * 24 + "ab" * 20],
                    # eight words of 0x100, then a zero: a string's head (any of the eight) points at an empty string
                    "data": "0x" + f"{0x100:064x}" * 8 + "0" * 64,
                    "blockHash": "0x" + "cd" * 32,
                    "blockNumber": hex(100 + len(logs)),
                    "transactionHash": "0x" + f"{len(logs) + 1:064x}",
                    "logIndex": hex(len(logs) * 4097),  # past the table of small log indexes too
                    "removed": False,
                }
            )
    raw = parse_logs(_reply(logs))
    assert raw is not None
    assert decoder.decode_logs(raw) == decoder.decode_all(logs)
    assert len(decoder.decode_all(logs)) == len(logs) > 20
