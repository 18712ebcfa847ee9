"""Helpers for tests that run the service in a child process (crash and restart tests)."""

from __future__ import annotations

import asyncio

import aiohttp


async def wait_serving(session: aiohttp.ClientSession, url: str, attempts: int = 400) -> None:
    """Return once GET `url` gets any answer (the child process is serving); raise after `attempts`
    tries 50 ms apart."""
    for _ in range(attempts):
        try:
            async with session.get(url):
                return
        except aiohttp.ClientConnectionError:
            await asyncio.sleep(0.05)
    raise TimeoutError(f"nothing served {url}")
