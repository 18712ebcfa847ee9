"""Helpers for tests against a real anvil: the deployed system, reverts, time travel."""

from __future__ import annotations

from collections.abc import Callable

import pytest
from eth_utils import keccak
from web3.exceptions import ContractCustomError, ContractLogicError

from core.chain import CONTRACT_NAMES, load_artifact
from scripts.devchain import USDC, System, deploy_dev_system, dev_account

test_account = dev_account
test_account.__test__ = False  # type: ignore[attr-defined]  # a helper, not a test

__all__ = ["USDC", "System", "assert_reverts", "deploy_dev_system", "revert_name", "test_account"]


def _error_selectors() -> dict[str, str]:
    table: dict[str, str] = {}
    for name in (*CONTRACT_NAMES, "CreditFallback"):
        for item in load_artifact(name)["abi"]:
            if item["type"] == "error":
                sig = f"{item['name']}({','.join(i['type'] for i in item['inputs'])})"
                table["0x" + keccak(text=sig)[:4].hex()] = item["name"]
    return table


def revert_name(exc: BaseException) -> str:
    """The custom error name (or revert reason) of a failed call or transaction."""
    data = getattr(exc, "data", None)
    if isinstance(data, str) and data.startswith("0x") and len(data) >= 10:
        return _error_selectors().get(data[:10], data[:10])
    return str(getattr(exc, "message", exc))


def assert_reverts(fn: Callable[[], object], error: str) -> None:
    """Run `fn` (which sends or calls) and assert it reverts with custom error `error`."""
    with pytest.raises((ContractCustomError, ContractLogicError)) as info:
        fn()
    assert revert_name(info.value) == error, f"expected {error}, got {revert_name(info.value)}"
