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
    r"(more than \d+ results|too many (results|logs)|query returned more than|block range|range is too large|"
    r"limit exceeded|response size|exceed)",
    re.IGNORECASE,
)
_SUGGESTED = re.compile(r"\[\s*(0x[0-9a-fA-F]+)\s*,\s*(0x[0-9a-fA-F]+)\s*\]")


def is_range_error(exc: RpcError) -> bool:
    """Whether an eth_getLogs error means "ask for a smaller range"."""
    return bool(_TOO_MANY.search(exc.message)) or exc.code in (-32005,)


def suggested_range(exc: RpcError) -> tuple[int, int] | None:
    """The block range a provider suggests in its error text, e.g. "try with this block range
    [0x1a, 0x2f]" (Alchemy, Infura and others phrase it alike)."""
    text = exc.message + " " + json.dumps(exc.data) if exc.data is not None else exc.message
    match = _SUGGESTED.search(text)
    if not match:
        return None
    return int(match.group(1), 16), int(match.group(2), 16)


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

    async def batch(self, calls: list[tuple[str, list[Any]]]) -> list[Any]:
        """Send calls in one HTTP request; each result is the value or an RpcError instance."""
        if not calls:
            return []
        first = self._ids
        self._ids += len(calls)
        payload = [{"jsonrpc": "2.0", "id": first + i, "method": m, "params": p} for i, (m, p) in enumerate(calls)]
        replies = await self._post(payload if len(calls) > 1 else payload[0])
        if isinstance(replies, dict):
            replies = [replies]
        by_id = {r.get("id"): r for r in replies}
        out: list[Any] = []
        for i in range(len(calls)):
            reply = by_id.get(first + i)
            if reply is None:
                out.append(RpcError(-32603, "missing reply in batch"))
            elif "error" in reply:
                err = reply["error"] or {}
                out.append(RpcError(int(err.get("code", -32603)), str(err.get("message", "")), err.get("data")))
            else:
                out.append(reply.get("result"))
        return out

    async def _pace(self) -> None:
        if self._interval > 0:
            loop = asyncio.get_running_loop()
            wait = self._last + self._interval - loop.time()
            if wait > 0:
                await asyncio.sleep(wait)
            self._last = loop.time()

    async def _post(self, payload: Any) -> Any:
        delay = self.policy.base_delay
        last_error = ""
        for attempt in range(1, self.policy.attempts + 1):
            await self._pace()
            self.requests += 1
            try:
                async with self._http().post(self.url, json=payload) as resp:
                    if resp.status == 429:
                        self.throttled += 1
                        self._interval = min(max(self._interval * 2, 0.05), 2.0)
                        retry_after = resp.headers.get("Retry-After", "")
                        last_error = "HTTP 429"
                        if retry_after.isdigit():
                            delay = max(delay, min(float(retry_after), self.policy.max_delay))
                        raise _Retry
                    if resp.status >= 500:
                        last_error = f"HTTP {resp.status}"
                        raise _Retry
                    body = await resp.read()
                    result = json.loads(body)
                    self._interval = self._interval * 0.8 if self._interval > 0.01 else 0.0
                    return result
            except (TimeoutError, _Retry, aiohttp.ClientError, json.JSONDecodeError, ConnectionError) as exc:
                if not isinstance(exc, _Retry):
                    last_error = f"{type(exc).__name__}: {exc}"
                if attempt == self.policy.attempts:
                    break
                log.debug("rpc attempt %d failed (%s); retrying in %.2fs", attempt, last_error, delay)
                await asyncio.sleep(delay * (0.5 + random.random()))
                delay = min(delay * 2, self.policy.max_delay)
        raise RpcUnavailable(f"{self.url}: {last_error}")


class _Retry(Exception):
    pass
