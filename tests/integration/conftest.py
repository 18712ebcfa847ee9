"""Integration fixtures: one real anvil per session with the whole system deployed; every test
runs inside an EVM snapshot that is reverted afterwards, so tests never see each other's state."""

from __future__ import annotations

import json
from collections.abc import Iterator

import pytest

from core.anvil import Anvil
from core.chain import BUILD_DIR, connect
from scripts.compile import compile_contracts
from scripts.deploy import Roles, deploy_system
from tests.integration.chainkit import System, load_system, test_account

ETH = 10**18


@pytest.fixture(scope="session")
def anvil() -> Iterator[Anvil]:
    compile_contracts()
    with Anvil() as node:
        yield node


@pytest.fixture(scope="session")
def deployed(anvil: Anvil) -> Iterator[System]:
    w3 = connect(anvil.rpc_url)
    named = {
        "deployer": test_account(0),
        "operator": test_account(1),
        "arbiter": test_account(2),
        "anchorer": test_account(3),
        "treasury": test_account(4),
    }
    users = [test_account(10 + i) for i in range(12)]
    for acct in list(named.values()) + users:
        w3.provider.make_request("anvil_setBalance", [acct.address, hex(1000 * ETH)])  # type: ignore[arg-type]
    roles = Roles(
        admin=named["deployer"].address,
        operator=named["operator"].address,
        arbiter=named["arbiter"].address,
        anchorer=named["anchorer"].address,
        treasury=named["treasury"].address,
    )
    dep = deploy_system(w3, named["deployer"], roles)
    system = load_system(w3, dep, named, users)
    yield system
    # Gas per operation, for benchmarks/gas_table.py and the README table.
    report = {k: sorted(v) for k, v in system.gas.items()}
    (BUILD_DIR / "gas-observed.json").write_text(json.dumps(report, indent=1, sort_keys=True))


@pytest.fixture()
def system(deployed: System) -> Iterator[System]:
    snap = deployed.w3.provider.make_request("evm_snapshot", [])  # type: ignore[arg-type]
    try:
        yield deployed
    finally:
        deployed.w3.provider.make_request("evm_revert", [snap["result"]])  # type: ignore[arg-type]
