"""Helpers for tests against a real anvil: the deployed system, reverts, time travel."""

from __future__ import annotations

from collections.abc import Callable
from typing import Any

import pytest
from eth_abi.abi import decode as abi_decode
from eth_account.signers.local import LocalAccount
from web3 import Web3
from web3.exceptions import ContractCustomError, ContractLogicError

from core.operator import error_table
from scripts.devchain import USDC, System, deploy_dev_system, dev_account

test_account = dev_account
test_account.__test__ = False  # type: ignore[attr-defined]  # a helper, not a test

__all__ = [
    "USDC",
    "System",
    "assert_reverts",
    "at_next_block",
    "block_ts",
    "deploy_dev_system",
    "revert_args",
    "revert_name",
    "set_next_timestamp",
    "test_account",
]


def revert_name(exc: BaseException) -> str:
    """The custom error name (or revert reason) of a failed call or transaction."""
    data = getattr(exc, "data", None)
    if isinstance(data, str) and data.startswith("0x") and len(data) >= 10:
        return error_table().get(data[:10], (data[:10], []))[0]
    return str(getattr(exc, "message", exc))


def revert_args(fn: Callable[[], object], error: str) -> tuple[Any, ...]:
    """Assert `fn` reverts with custom error `error`; return its decoded arguments (addresses checksummed)."""
    with pytest.raises((ContractCustomError, ContractLogicError)) as info:
        fn()
    data = getattr(info.value, "data", None)
    assert isinstance(data, str) and data.startswith("0x"), f"no revert data: {info.value!r}"
    name, types = error_table().get(data[:10], (data[:10], []))
    assert name == error, f"expected {error}, got {name}"
    decoded = abi_decode(types, bytes.fromhex(data[10:]))
    return tuple(Web3.to_checksum_address(v) if t == "address" else v for t, v in zip(types, decoded, strict=True))


def assert_reverts(fn: Callable[[], object], error: str, *args: Any) -> tuple[Any, ...]:
    """Assert `fn` reverts with custom error `error` (and, when given, exactly these arguments)."""
    got = revert_args(fn, error)
    if args:
        checksummed = tuple(
            Web3.to_checksum_address(v) if Web3.is_address(v) and isinstance(v, str) else v for v in got
        )
        assert checksummed == args, f"{error} arguments: expected {args}, got {checksummed}"
    return got


# ---- time at exact boundaries ------------------------------------------------------------------


def set_next_timestamp(system: System, ts: int) -> None:
    """Fix the next block's timestamp. anvil's gas estimate ignores it (it runs on `latest`), so
    boundary reverts are checked with `at_next_block` and boundary successes sent with a fixed gas."""
    system.w3.provider.make_request("evm_setNextBlockTimestamp", [ts])  # type: ignore[arg-type]


def at_next_block(account: LocalAccount, fn: Any) -> Callable[[], object]:
    """An eth_call of `fn` from `account` against the pending block (which has the next timestamp)."""
    return lambda: fn.call({"from": account.address}, block_identifier="pending")


def block_ts(system: System, receipt: Any) -> int:
    """The timestamp of the block that mined `receipt`."""
    ts: int = system.w3.eth.get_block(receipt["blockNumber"])["timestamp"]
    return ts
