"""An async JSON-RPC client for the indexer: batching, retries with capped exponential backoff,
and a request pacer that slows down on HTTP 429 and speeds back up on success."""

from __future__ import annotations

import asyncio
import json
import logging
import random
import re
from dataclasses import dataclass
from typing import Any

import aiohttp

log = logging.getLogger("agentledger.indexer.rpc")


class RpcError(Exception):
    """A JSON-RPC error object returned by the node (not retried here)."""

    def __init__(self, code: int, message: str, data: Any = None) -> None:
        super().__init__(f"{code}: {message}")
        self.code = code
        self.message = message
        self.data = data


class RpcUnavailable(Exception):
    """The node could not be reached after the retry budget (connection, timeout, 5xx, 429)."""


_TOO_MANY = re.compile(
    r"(more than \d+ results|too many (results|logs|blocks)|query returned more than|blocks? range|"
    r"range (is )?too (large|wide|big)|limited to (a )?[\d,]+ (blocks? )?range|ranges? over [\d,]+ blocks|"
    r"range limit|limit exceeded|response size|response (is )?too (large|big)|exceed)",
    re.IGNORECASE,
)
# Throttling phrased as a JSON-RPC error (Infura and others use -32005 for both): not a range problem.
_RATE_LIMITED = re.compile(
    r"(rate limit|request rate|requests? per second|calls per second|/second|too many requests|request count|"
    r"compute units|capacity|throughput)",
    re.IGNORECASE,
)
# -32005 limit exceeded (EIP-1474; Infura), -32012 range too large (Chainstack, Goldsky),
# -32614 eth_getLogs is limited to a 10,000 range (QuickNode, Base)
_RANGE_CODES = (-32005, -32012, -32614)
_SUGGESTED = re.compile(r"\[\s*(0x[0-9a-fA-F]+)\s*,\s*(0x[0-9a-fA-F]+)\s*\]")
# geth, erigon, reth, dRPC: "query exceeds max results 20000, retry with the range 50784086-50785570"
_SUGGESTED_DECIMAL = re.compile(r"retry with the range (\d+)\s*-\s*(\d+)", re.IGNORECASE)


def is_range_error(exc: RpcError) -> bool:
    """Whether an eth_getLogs error means "ask for a smaller range"."""
    if _RATE_LIMITED.search(exc.message):
        return False
    return bool(_TOO_MANY.search(exc.message)) or exc.code in _RANGE_CODES


def suggested_range(exc: RpcError) -> tuple[int, int] | None:
    """The block range a provider suggests: Infura's `data` {"from", "to", "limit"}, or in the
    error text "try with this block range [0x1a, 0x2f]" (Alchemy, Infura and others phrase it
    alike) or "retry with the range 26-47" (geth, erigon, reth)."""
    data = exc.data
    found: tuple[int, int] | None = None
    if isinstance(data, dict) and isinstance(data.get("from"), str) and isinstance(data.get("to"), str):
        try:
            found = int(data["from"], 16), int(data["to"], 16)
        except ValueError:
            found = None
    if found is None:
        text = exc.message if data is None else f"{exc.message} {json.dumps(data)}"
        if match := _SUGGESTED.search(text):
            found = int(match.group(1), 16), int(match.group(2), 16)
        elif match := _SUGGESTED_DECIMAL.search(text):
            found = int(match.group(1)), int(match.group(2))
    if found is None or found[0] > found[1]:
        return None
    return found


@dataclass
class RetryPolicy:
    attempts: int = 8
    base_delay: float = 0.1
    max_delay: float = 5.0
    timeout: float = 20.0


class RpcClient:
    def __init__(self, url: str, policy: RetryPolicy | None = None) -> None:
        self.url = url
        self.policy = policy or RetryPolicy()
        self._session: aiohttp.ClientSession | None = None
        self._interval = 0.0  # minimum seconds between requests, raised by 429s
        self._last = 0.0
        self._pacing = asyncio.Lock()
        self._ids = 0
        self.requests = 0
        self.throttled = 0

    async def __aenter__(self) -> RpcClient:
        return self

    async def __aexit__(self, *exc: object) -> None:
        await self.close()

    async def close(self) -> None:
        if self._session is not None:
            await self._session.close()
            self._session = None

    def _http(self) -> aiohttp.ClientSession:
        if self._session is None:
            self._session = aiohttp.ClientSession(
                timeout=aiohttp.ClientTimeout(total=self.policy.timeout),
                connector=aiohttp.TCPConnector(limit=8),
            )
        return self._session

    async def call(self, method: str, params: list[Any]) -> Any:
        (result,) = await self.batch([(method, params)])
        if isinstance(result, RpcError):
            raise result
        return result

    async def call_raw(self, method: str, params: list[Any]) -> bytes:
        """One call's HTTP body, unparsed (the same retries, backoff and pacing as `call`), for a
        caller that parses it elsewhere: a backfill parses each eth_getLogs reply in the thread
        that commits it instead of in the event loop. `parse_reply` turns it into the result."""
        self._ids += 1
        payload = {"jsonrpc": "2.0", "id": self._ids - 1, "method": method, "params": params}
        body: bytes = await self._post(payload, parse=False)
        return body

    async def batch(self, calls: list[tuple[str, list[Any]]]) -> list[Any]:
        """Send calls in one HTTP request; each result is the value or an RpcError instance."""
        if not calls:
            return []
        first = self._ids
        self._ids += len(calls)
        payload = [{"jsonrpc": "2.0", "id": first + i, "method": m, "params": p} for i, (m, p) in enumerate(calls)]
        replies = await self._post(payload if len(calls) > 1 else payload[0])
        if isinstance(replies, dict):
            if replies.get("id") is None and replies.get("error") is not None:
                # An error about the whole request (a batch over the provider's size limit, a parse
                # error): it is the answer to every call in it.
                return [_rpc_error(replies["error"]) for _ in calls]
            replies = [replies]
        if not isinstance(replies, list):
            return [RpcError(-32603, f"not a JSON-RPC reply: {str(replies)[:200]}") for _ in calls]
        by_id = {r.get("id"): r for r in replies if isinstance(r, dict)}
        out: list[Any] = []
        for i in range(len(calls)):
            reply = by_id.get(first + i)
            if reply is None:
                out.append(RpcError(-32603, "missing reply in batch"))
            elif reply.get("error") is not None:  # some nodes send "error": null beside a result
                out.append(_rpc_error(reply["error"]))
            else:
                out.append(reply.get("result"))
        return out

    async def _pace(self) -> None:
        # One sender at a time passes the pacer, and each waits a full interval after the previous
        # send, so concurrent callers are spaced too (not all released after one shared wait); every
        # send is noted, so the very first 429 already spaces the retry.
        async with self._pacing:
            loop = asyncio.get_running_loop()
            wait = self._last + self._interval - loop.time()
            if wait > 0:
                await asyncio.sleep(wait)
            self._last = loop.time()

    async def _post(self, payload: Any, parse: bool = True) -> Any:
        delay = self.policy.base_delay
        last_error = ""
        for attempt in range(1, self.policy.attempts + 1):
            at_least = 0.0  # a Retry-After to honour before the next attempt
            await self._pace()
            self.requests += 1
            try:
                async with self._http().post(self.url, json=payload) as resp:
                    if resp.status == 429:
                        self.throttled += 1
                        self._interval = min(max(self._interval * 2, 0.05), 2.0)
                        retry_after = _seconds(resp.headers.get("Retry-After", ""))
                        last_error = "HTTP 429"
                        if retry_after is not None:
                            at_least = min(retry_after, self.policy.max_delay)
                            delay = max(delay, at_least)
                        raise _Retry
                    if resp.status >= 500:
                        last_error = f"HTTP {resp.status}"
                        raise _Retry
                    body = await resp.read()
                    result = json.loads(body) if parse else body
                    self._interval = self._interval * 0.8 if self._interval > 0.01 else 0.0
                    return result
            except (TimeoutError, _Retry, aiohttp.ClientError, json.JSONDecodeError, ConnectionError) as exc:
                if not isinstance(exc, _Retry):
                    last_error = f"{type(exc).__name__}: {exc}"
                if attempt == self.policy.attempts:
                    break
                log.debug("rpc attempt %d failed (%s); retrying in %.2fs", attempt, last_error, delay)
                await asyncio.sleep(max(delay * (0.5 + random.random()), at_least))
                delay = min(delay * 2, self.policy.max_delay)
        raise RpcUnavailable(f"{self.url}: {last_error}")


def parse_reply(body: bytes) -> Any:
    """The result of a `call_raw` reply; raises RpcError for a JSON-RPC error (or a body that is not
    a JSON-RPC reply) and RpcUnavailable for a body that is not JSON at all (retried like a drop)."""
    try:
        reply = json.loads(body)
    except (json.JSONDecodeError, UnicodeDecodeError) as exc:
        raise RpcUnavailable(f"not JSON: {exc}") from exc
    if isinstance(reply, list) and len(reply) == 1:  # a node that always answers with a batch
        reply = reply[0]
    if not isinstance(reply, dict):
        raise RpcError(-32603, f"not a JSON-RPC reply: {str(reply)[:200]}")
    if reply.get("error") is not None:
        raise _rpc_error(reply["error"])
    return reply.get("result")


class _Retry(Exception):
    pass


def _rpc_error(err: Any) -> RpcError:
    if not isinstance(err, dict):
        return RpcError(-32603, str(err))
    return RpcError(int(err.get("code", -32603)), str(err.get("message", "")), err.get("data"))


def _seconds(retry_after: str) -> float | None:
    """Retry-After in seconds ("120", "1.5"); None for an HTTP date or garbage."""
    try:
        value = float(retry_after)
    except ValueError:
        return None
    return value if value >= 0 else None
