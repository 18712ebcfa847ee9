"""A loopback JSON-RPC proxy in front of a node (anvil) with programmable faults, for indexer tests.

It is a real aiohttp HTTP server on 127.0.0.1 (a free port) that forwards JSON-RPC requests, single
or batched, to the upstream node and, by rule, instead:

* drops the connection without a response, delays the request, answers HTTP 429 (with or without
  Retry-After) or HTTP 503: by probability from a seeded RNG, for the next N requests
  (`fail_next`), or for a window of time (`down`, which can also close the listening socket so that
  connections are refused);
* answers eth_getLogs over more than `max_range` blocks with a provider-style range error, with a
  suggested range that starts at the requested fromBlock (Infura-like) or without one;
* answers eth_getLogs whose response holds more than `max_logs` logs with a "too many results"
  error, suggesting the longest prefix range that fits when there is one (as Alchemy does).

`counts` says what it did (keys: http, calls, forwarded, drop, delay, 429, 503, down, refused,
range_error, too_many_logs), `methods` counts JSON-RPC methods seen, `get_logs` lists every
eth_getLogs request as (fromBlock, toBlock, outcome) and `receipts` every eth_getBlockReceipts block;
`timeline` has the arrival time, fate and added delay of every HTTP request.

Use it as an async context manager in the event loop of the code under test, or as a plain context
manager (a background thread running its own event loop) from synchronous tests:

    async with RpcProxy(anvil_url, seed=1, drop=0.2, max_range=3) as proxy: ...
    with RpcProxy(anvil_url).fail_next("429", 3) as proxy: ...
"""

from __future__ import annotations

import asyncio
import collections
import json
import random
import threading
import time
from collections.abc import Coroutine
from dataclasses import dataclass
from types import TracebackType
from typing import Any

import aiohttp
from aiohttp import web

FAULT_KINDS = ("drop", "delay", "429", "503")
DOWN_MODES = ("503", "drop", "refuse")


@dataclass
class _Queued:
    kind: str
    remaining: int
    method: str | None
    delay_ms: float
    retry_after: str | None


class RpcProxy:
    def __init__(
        self,
        upstream: str,
        *,
        seed: int = 0,
        drop: float = 0.0,
        throttle: float = 0.0,
        unavailable: float = 0.0,
        delay: float = 0.0,
        delay_ms: float | tuple[float, float] = 20.0,
        retry_after: str | None = None,
        max_range: int | None = None,
        suggest_range: bool = True,
        max_logs: int | None = None,
        host: str = "127.0.0.1",
        port: int = 0,
    ) -> None:
        """`drop`, `throttle` (429), `unavailable` (503) and `delay` are per-HTTP-request
        probabilities; one RNG seeded with `seed` decides them, so a run is reproducible."""
        self.upstream = upstream
        self.rng = random.Random(seed)
        self.drop = drop
        self.throttle = throttle
        self.unavailable = unavailable
        self.delay = delay
        self.delay_ms = delay_ms
        self.retry_after = retry_after
        self.max_range = max_range
        self.suggest_range = suggest_range
        self.max_logs = max_logs
        self.host = host
        self.port = port
        self.counts: collections.Counter[str] = collections.Counter()
        self.methods: collections.Counter[str] = collections.Counter()
        self.get_logs: list[tuple[int, int, str]] = []
        self.receipts: list[int] = []
        self.timeline: list[tuple[float, str, float]] = []  # (time.monotonic() at arrival, fault or "ok", delay ms)
        self._queue: list[_Queued] = []
        #: method -> result: answered by the proxy instead of the node (e.g. a syncing node)
        self.overrides: dict[str, Any] = {}
        self._lock = threading.Lock()
        self._down_until = 0.0
        self._down_mode = "503"
        self._loop: asyncio.AbstractEventLoop | None = None
        self._runner: web.AppRunner | None = None
        self._site: web.TCPSite | None = None
        self._session: aiohttp.ClientSession | None = None
        self._relisten: asyncio.TimerHandle | None = None
        self._thread: threading.Thread | None = None
        self._tasks: set[asyncio.Future[None]] = set()

    @property
    def url(self) -> str:
        if not self.port:
            raise RuntimeError("the proxy is not started")
        return f"http://{self.host}:{self.port}"

    # ---- programming faults ------------------------------------------------------------------

    def fail_next(
        self,
        kind: str,
        n: int = 1,
        *,
        method: str | None = None,
        delay_ms: float = 200.0,
        retry_after: str | None = None,
    ) -> RpcProxy:
        """The next `n` HTTP requests (only those holding a call of `method`, if given) get `kind`:
        "drop", "delay" (by `delay_ms`, then forwarded), "429" (with `retry_after`) or "503"."""
        if kind not in FAULT_KINDS:
            raise ValueError(f"unknown fault {kind!r}; one of {FAULT_KINDS}")
        with self._lock:
            self._queue.append(_Queued(kind, n, method, delay_ms, retry_after))
        return self

    def down(self, seconds: float, mode: str = "503") -> None:
        """The node is unreachable for `seconds`: every request gets HTTP 503 ("503"), or its
        connection closed without a response ("drop"), or the port stops listening ("refuse")."""
        if mode not in DOWN_MODES:
            raise ValueError(f"unknown mode {mode!r}; one of {DOWN_MODES}")
        with self._lock:
            self._down_until = time.monotonic() + seconds
            self._down_mode = mode
        if mode == "refuse":
            loop = self._loop
            if loop is None:
                raise RuntimeError("the proxy is not started")
            loop.call_soon_threadsafe(self._refuse_for, seconds)

    def up(self) -> None:
        """End a `down` window now."""
        with self._lock:
            self._down_until = 0.0
        if self._loop is not None and not self._loop.is_closed():
            self._loop.call_soon_threadsafe(self._listen_again)

    @property
    def is_down(self) -> bool:
        return time.monotonic() < self._down_until

    # ---- lifecycle ---------------------------------------------------------------------------

    async def start(self) -> RpcProxy:
        self._loop = asyncio.get_running_loop()
        self._session = aiohttp.ClientSession(timeout=aiohttp.ClientTimeout(total=30))
        app = web.Application(client_max_size=64 * 1024 * 1024)
        app.router.add_post("/{tail:.*}", self._handle)
        self._runner = web.AppRunner(app, handle_signals=False, access_log=None)
        await self._runner.setup()
        await self._listen()
        return self

    async def stop(self) -> None:
        if self._relisten is not None:
            self._relisten.cancel()
            self._relisten = None
        for task in list(self._tasks):
            await task
        if self._runner is not None:
            await self._runner.cleanup()
            self._runner = None
            self._site = None
        if self._session is not None:
            await self._session.close()
            self._session = None

    async def __aenter__(self) -> RpcProxy:
        return await self.start()

    async def __aexit__(self, *exc: object) -> None:
        await self.stop()

    def start_in_thread(self) -> RpcProxy:
        """Serve from a background thread with its own event loop (for synchronous tests)."""
        ready = threading.Event()
        errors: list[BaseException] = []

        def serve() -> None:
            loop = asyncio.new_event_loop()
            try:
                loop.run_until_complete(self.start())
            except BaseException as exc:  # reported to the starting thread
                errors.append(exc)
                ready.set()
                loop.close()
                return
            ready.set()
            try:
                loop.run_forever()
            finally:
                loop.run_until_complete(self.stop())
                loop.close()

        self._thread = threading.Thread(target=serve, name="rpc-proxy", daemon=True)
        self._thread.start()
        ready.wait(10)
        if errors:
            raise errors[0]
        return self

    def stop_thread(self) -> None:
        thread, self._thread = self._thread, None
        if thread is None or self._loop is None:
            return
        self._loop.call_soon_threadsafe(self._loop.stop)
        thread.join(10)

    def __enter__(self) -> RpcProxy:
        return self.start_in_thread()

    def __exit__(self, et: type[BaseException] | None, ev: BaseException | None, tb: TracebackType | None) -> None:
        self.stop_thread()

    async def _listen(self) -> None:
        assert self._runner is not None
        self._site = web.TCPSite(self._runner, self.host, self.port)
        await self._site.start()
        if not self.port:
            self.port = self._runner.addresses[0][1]

    def _refuse_for(self, seconds: float) -> None:
        site, self._site = self._site, None
        if site is not None:
            self.counts["refused"] += 1
            self._background(site.stop())
        if self._relisten is not None:
            self._relisten.cancel()
        loop = asyncio.get_running_loop()
        self._relisten = loop.call_later(seconds, self._listen_again)

    def _listen_again(self) -> None:
        if self._relisten is not None:
            self._relisten.cancel()
            self._relisten = None
        if self._site is None and self._runner is not None:
            self._background(self._listen())

    def _background(self, coro: Coroutine[Any, Any, None]) -> None:
        task = asyncio.ensure_future(coro)
        self._tasks.add(task)
        task.add_done_callback(self._tasks.discard)

    # ---- the handler -------------------------------------------------------------------------

    def _decide(self, methods: set[str]) -> tuple[str | None, float, str | None]:
        """(fault kind or None, delay in ms before answering, Retry-After) for one HTTP request."""
        with self._lock:
            if time.monotonic() < self._down_until:
                self.counts["down"] += 1
                return ("503" if self._down_mode == "503" else "drop"), 0.0, None
            for q in self._queue:
                if q.method is None or q.method in methods:
                    q.remaining -= 1
                    if q.remaining <= 0:
                        self._queue.remove(q)
                    if q.kind == "delay":
                        return None, q.delay_ms, None
                    return q.kind, 0.0, q.retry_after
            delay = 0.0
            if self.delay and self.rng.random() < self.delay:
                lo, hi = self.delay_ms if isinstance(self.delay_ms, tuple) else (self.delay_ms, self.delay_ms)
                delay = self.rng.uniform(lo, hi)
            r = self.rng.random()
            if r < self.drop:
                return "drop", delay, None
            if r < self.drop + self.throttle:
                return "429", delay, self.retry_after
            if r < self.drop + self.throttle + self.unavailable:
                return "503", delay, None
            return None, delay, None

    async def _handle(self, request: web.Request) -> web.StreamResponse:
        body = await request.read()
        self.counts["http"] += 1
        try:
            payload = json.loads(body)
        except ValueError:
            payload = None
        items = payload if isinstance(payload, list) else [payload] if isinstance(payload, dict) else []
        methods = [str(i.get("method")) for i in items if isinstance(i, dict)]
        self.methods.update(methods)
        self.counts["calls"] += len(items)

        fault, delay_ms, retry_after = self._decide(set(methods))
        self.timeline.append((time.monotonic(), fault or "ok", delay_ms))
        if delay_ms > 0:
            self.counts["delay"] += 1
            await asyncio.sleep(delay_ms / 1000)
        if fault == "drop":
            self.counts["drop"] += 1
            if request.transport is not None:
                request.transport.abort()  # no status line, no body: the client sees a disconnect
            return web.Response()
        if fault == "429":
            self.counts["429"] += 1
            headers = {"Retry-After": retry_after} if retry_after is not None else {}
            err = {"jsonrpc": "2.0", "id": None, "error": {"code": 429, "message": "Too Many Requests"}}
            return web.json_response(err, status=429, headers=headers)
        if fault == "503":
            self.counts["503"] += 1
            return web.Response(status=503, text="Service Unavailable")

        if not items:  # not JSON-RPC we understand: pass it through untouched
            status, raw = await self._forward_raw(body)
            return web.Response(status=status, body=raw, content_type="application/json")
        replies = await self._answer(items)
        out: Any = replies if isinstance(payload, list) else replies[0]
        return web.json_response(out)

    async def _answer(self, items: list[Any]) -> list[Any]:
        """Replies to `items`, in order: local errors where a provider rule applies, the node's
        answers (one upstream batch) for the rest."""
        local: dict[int, dict[str, Any]] = {}
        ranges: dict[int, tuple[int, int]] = {}
        for pos, item in enumerate(items):
            if not isinstance(item, dict):
                continue
            if item.get("method") == "eth_getBlockReceipts":
                params = item.get("params") or []
                if params and isinstance(params[0], str) and params[0].startswith("0x"):
                    self.receipts.append(int(params[0], 16))
            if item.get("method") in self.overrides:
                local[pos] = {"jsonrpc": "2.0", "id": item.get("id"), "result": self.overrides[item["method"]]}
                continue
            if item.get("method") != "eth_getLogs":
                continue
            rng = await self._log_range(item)
            if rng is None:
                continue
            ranges[pos] = rng
            lo, hi = rng
            if self.max_range is not None and hi - lo + 1 > self.max_range:
                self.counts["range_error"] += 1
                self.get_logs.append((lo, hi, "range"))
                local[pos] = _error(item, *self._range_error(lo))
        forward = [item for pos, item in enumerate(items) if pos not in local]
        answers: list[Any] = []
        if forward:
            self.counts["forwarded"] += 1
            answers = await self._forward(forward)
        by_id = {a.get("id"): a for a in answers if isinstance(a, dict)}
        replies: list[Any] = []
        for pos, item in enumerate(items):
            if pos in local:
                replies.append(local[pos])
                continue
            reply = by_id.get(item.get("id")) if isinstance(item, dict) else None
            if reply is None:
                reply = {"jsonrpc": "2.0", "id": None, "error": {"code": -32600, "message": "invalid request"}}
            elif pos in ranges:
                lo, hi = ranges[pos]
                logs = reply.get("result")
                if self.max_logs is not None and isinstance(logs, list) and len(logs) > self.max_logs:
                    self.counts["too_many_logs"] += 1
                    self.get_logs.append((lo, hi, "too_many"))
                    reply = _error(item, *self._too_many_logs(lo, logs))
                else:
                    self.get_logs.append((lo, hi, "ok"))
            replies.append(reply)
        return replies

    def _range_error(self, lo: int) -> tuple[int, str]:
        if self.suggest_range:
            assert self.max_range is not None
            hi = lo + self.max_range - 1
            return -32005, f"query returned more than 10000 results. Try with this block range [{hex(lo)}, {hex(hi)}]."
        return -32000, "block range is too large"

    def _too_many_logs(self, lo: int, logs: list[dict[str, Any]]) -> tuple[int, str]:
        assert self.max_logs is not None
        message = f"query returned more than {self.max_logs} results"
        per_block = collections.Counter(int(lg["blockNumber"], 16) for lg in logs)
        total, fits = 0, None
        for block in sorted(per_block):
            total += per_block[block]
            if total > self.max_logs:
                break
            fits = block
        if self.suggest_range and fits is not None:
            message += f". Try with this block range [{hex(lo)}, {hex(fits)}]."
        return -32005, message

    async def _log_range(self, item: dict[str, Any]) -> tuple[int, int] | None:
        params = item.get("params") or [{}]
        flt = params[0] if isinstance(params[0], dict) else {}
        if "blockHash" in flt:
            return None
        lo = await self._block_number(flt.get("fromBlock", "latest"))
        hi = await self._block_number(flt.get("toBlock", "latest"))
        return (lo, hi) if lo is not None and hi is not None else None

    async def _block_number(self, tag: Any) -> int | None:
        if isinstance(tag, int):
            return tag
        if not isinstance(tag, str):
            return None
        if tag.startswith("0x"):
            return int(tag, 16)
        if tag == "earliest":
            return 0
        call = {"jsonrpc": "2.0", "id": 0, "method": "eth_getBlockByNumber", "params": [tag, False]}
        (reply,) = await self._forward([call])
        block = reply.get("result") if isinstance(reply, dict) else None
        return int(block["number"], 16) if isinstance(block, dict) else None

    async def _forward(self, items: list[Any]) -> list[Any]:
        assert self._session is not None
        async with self._session.post(self.upstream, json=items) as resp:
            answers = await resp.json(content_type=None)
        return answers if isinstance(answers, list) else [answers]

    async def _forward_raw(self, body: bytes) -> tuple[int, bytes]:
        assert self._session is not None
        headers = {"Content-Type": "application/json"}
        async with self._session.post(self.upstream, data=body, headers=headers) as resp:
            return resp.status, await resp.read()


def _error(item: dict[str, Any], code: int, message: str) -> dict[str, Any]:
    return {"jsonrpc": "2.0", "id": item.get("id"), "error": {"code": code, "message": message}}
