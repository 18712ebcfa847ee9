"""Helpers for tests that run the service in a child process (crash and restart tests)."""

from __future__ import annotations

import asyncio

import aiohttp

from core.deployments import Deployment

#: A local deployment with no contracts: the service's wallet, decision and key routes, which never call
#: the chain.
NO_CHAIN = Deployment(
    chain_id=31337,
    network="anvil",
    deploy_block=0,
    deployer="0x" + "0" * 40,
    usdc="0x" + "1" * 40,
    mock_usdc=True,
    contracts={},
)


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
