"""Integration fixtures: one real anvil per session with the whole system deployed; every test
runs inside an EVM snapshot that is reverted afterwards, so tests never see each other's state."""

from __future__ import annotations

from collections.abc import Iterator

import pytest

from core.anvil import Anvil
from core.chain import connect
from scripts.compile import compile_contracts
from tests.integration.chainkit import System, deploy_dev_system


@pytest.fixture(scope="session")
def anvil() -> Iterator[Anvil]:
    compile_contracts()
    with Anvil() as node:
        yield node


@pytest.fixture(scope="session")
def deployed(anvil: Anvil) -> Iterator[System]:
    yield deploy_dev_system(connect(anvil.rpc_url))


@pytest.fixture()
def system(deployed: System) -> Iterator[System]:
    snap = deployed.w3.provider.make_request("evm_snapshot", [])  # type: ignore[arg-type]
    try:
        yield deployed
    finally:
        deployed.w3.provider.make_request("evm_revert", [snap["result"]])  # type: ignore[arg-type]
