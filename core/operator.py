"""The service's own transactions (fund and release gateway jobs, mint provider NFTs), sent with
the operator key.

One Operator per process: an asyncio.Lock serialises sends so nonces are assigned locally in
order (no "nonce too low" races between requests); every web3 call runs in a thread so the event
loop never blocks on the node. Processes that share the key (several API processes, the anchorer)
also share a `send_lock` (core.store.process_lock.ProcessLock on their database): held from the nonce to
the send, so two processes never sign the same nonce (one would be refused or, at a higher fee,
replace the other's transaction). Before each send the local nonce is checked against the node's
pending count, so a reorg that dropped our transactions (a gap) is found and closed at the next
send instead of leaving every later one queued behind the gap. Each transaction's gas is
estimated first: a call that would revert raises ContractReverted with the custom error decoded
from the contracts' ABIs, and nothing is sent.

Failure classes matter to callers that move money:
- ContractReverted / ChainUnavailable: nothing was sent; the caller may undo its own state;
- SendUncertain: the signed transaction may have reached the node; only the chain (or its
  events) can tell whether it was mined.
"""

from __future__ import annotations

import asyncio
import contextlib
import functools
import logging
from collections.abc import Callable, Mapping
from contextlib import AbstractContextManager
from typing import Any

from eth_abi.abi import decode as abi_decode
from eth_account import Account
from eth_account.signers.local import LocalAccount
from web3 import Web3
from web3.contract import Contract
from web3.exceptions import ContractCustomError, ContractLogicError, TransactionNotFound, Web3RPCError
from web3.logs import DISCARD

from core.chain import CONTRACT_NAMES, chain_id_of, contract_at, load_artifact
from core.networks import ANVIL_DEV_KEY, LOCAL_CHAIN_ID

log = logging.getLogger("agentledger.operator")

#: Extra gas over the estimate (state can change between estimate and inclusion).
GAS_MARGIN = 1.25
RECEIPT_TIMEOUT = 120.0
#: The USDC token is addressed by this name; its ABI is MockUSDC's (a plain ERC-20 surface).
USDC = "USDC"


class ContractReverted(Exception):
    """The call reverts (found by the gas estimate: nothing was sent)."""

    def __init__(self, error_name: str, args: tuple[Any, ...], message: str = "") -> None:
        super().__init__(f"{error_name}{args}" + (f": {message}" if message else ""))
        self.error_name = error_name
        self.args_ = args


class ChainUnavailable(Exception):
    """The node did not answer before anything was sent."""


class SendUncertain(Exception):
    """The transaction may have been sent (or mined) but its outcome is unknown."""

    def __init__(self, message: str, tx_hash: str | None) -> None:
        super().__init__(message)
        self.tx_hash = tx_hash


class _StaleNonce(Exception):
    """The node refused our nonce (the account was used elsewhere): resync and retry."""


class TransactionFailed(Exception):
    """The transaction was mined and reverted (the chain changed between estimate and inclusion)."""

    def __init__(self, tx_hash: str) -> None:
        super().__init__(f"transaction {tx_hash} reverted")
        self.tx_hash = tx_hash


@functools.cache
def error_table() -> dict[str, tuple[str, list[str]]]:
    """4-byte selector -> (custom error name, argument types) over every contract's ABI."""
    table: dict[str, tuple[str, list[str]]] = {}
    for name in (*CONTRACT_NAMES, "CreditFallback"):
        for item in load_artifact(name)["abi"]:
            if item["type"] == "error":
                types = [i["type"] for i in item["inputs"]]
                selector = "0x" + bytes(Web3.keccak(text=f"{item['name']}({','.join(types)})"))[:4].hex()
                table[selector] = (item["name"], types)
    return table


def decode_revert(exc: BaseException) -> ContractReverted:
    """A web3 revert exception as ContractReverted(error name, decoded args)."""
    data = getattr(exc, "data", None)
    if isinstance(data, str) and data.startswith("0x") and len(data) >= 10:
        entry = error_table().get(data[:10])
        if entry is not None:
            name, types = entry
            try:
                values = abi_decode(types, bytes.fromhex(data[10:]))
            except Exception:  # malformed payload: keep the name
                values = ()
            args = tuple(
                Web3.to_checksum_address(v) if t == "address" else ("0x" + v.hex() if isinstance(v, bytes) else v)
                for t, v in zip(types, values, strict=False)
            )
            return ContractReverted(name, args)
        return ContractReverted(data[:10], ())
    message = str(getattr(exc, "message", None) or exc)
    return ContractReverted("Error", (message,), message)


def operator_account(key: str, chain_id: int) -> LocalAccount:
    """The operator account: the configured key, or anvil's development key on a local chain only."""
    if key:
        acct: LocalAccount = Account.from_key(key)
        return acct
    if chain_id != LOCAL_CHAIN_ID:
        raise ValueError(
            f"AGENTLEDGER_OPERATOR_KEY is required on chain {chain_id} (no development key off a local chain)"
        )
    dev: LocalAccount = Account.from_key(ANVIL_DEV_KEY)
    return dev


class Operator:
    def __init__(
        self,
        w3: Web3,
        account: LocalAccount,
        contracts: Mapping[str, str],
        usdc: str,
        *,
        send_lock: Callable[[], AbstractContextManager[object]] | None = None,
    ) -> None:
        """`contracts`: name -> address (a deployment's); `usdc`: the token's address; `send_lock`: held
        (in a worker thread) from choosing a nonce to sending, shared with the key's other processes."""
        self.w3 = w3
        self.account = account
        self.address = account.address
        self._handles: dict[str, Contract] = {name: contract_at(w3, name, addr) for name, addr in contracts.items()}
        self._handles[USDC] = w3.eth.contract(
            address=Web3.to_checksum_address(usdc), abi=load_artifact("MockUSDC")["abi"]
        )
        self._lock = asyncio.Lock()
        self._nonce: int | None = None
        #: nonce -> hash of each transaction we sent that the node's pending count has not yet passed
        self._unconfirmed: dict[int, bytes] = {}
        self._send_lock = send_lock or contextlib.nullcontext
        self.sent = 0  # transactions sent, for tests and benchmarks
        self.nonce_conflicts = 0  # sends the node refused for their nonce (another sender used it)
        self.resyncs = 0  # nonce gaps found and closed (the chain dropped our transactions)

    def contract(self, name: str) -> Contract:
        return self._handles[name]

    async def call(self, contract_name: str, function_name: str, *args: Any) -> Any:
        """A view call against the latest block; a revert raises ContractReverted."""
        fn = getattr(self.contract(contract_name).functions, function_name)(*args)
        try:
            return await asyncio.to_thread(fn.call, {"from": self.address})
        except (ContractCustomError, ContractLogicError) as exc:
            raise decode_revert(exc) from exc
        except (Web3RPCError, OSError) as exc:
            raise ChainUnavailable(str(exc)) from exc

    async def chain_id(self) -> int:
        try:
            return await asyncio.to_thread(chain_id_of, self.w3)
        except (Web3RPCError, OSError) as exc:
            raise ChainUnavailable(str(exc)) from exc

    async def block_timestamp(self) -> int:
        """The latest block's timestamp (on-chain deadlines are measured against chain time)."""
        try:
            block = await asyncio.to_thread(self.w3.eth.get_block, "latest")
        except (Web3RPCError, OSError) as exc:
            raise ChainUnavailable(str(exc)) from exc
        return int(block["timestamp"])

    async def transact(
        self,
        contract_name: str,
        function_name: str,
        *args: Any,
        before_send: Callable[[str, int], None] | None = None,
    ) -> dict[str, Any]:
        """Estimate, sign, send and wait for the receipt of one operator transaction. The lock covers
        the nonce (estimate to send) only: waiting for a receipt never holds up other sends.

        `before_send(tx_hash, nonce)` is called (in a worker thread) once the transaction is signed and
        before it is sent: a caller that must never send one action twice across crashes records the
        hash there, durably. If it raises, nothing is sent and the nonce is not used."""
        fn = getattr(self.contract(contract_name).functions, function_name)(*args)
        label = f"{contract_name}.{function_name}"
        async with self._lock:
            signed_hash = await asyncio.to_thread(self._transact_sync, fn, label, before_send)
        return await asyncio.to_thread(self._receipt, signed_hash, label)

    async def receipt_of(self, tx_hash: str) -> dict[str, Any] | None:
        """The receipt of a transaction, or None when it is not mined (pending, dropped or unknown)."""
        try:
            return dict(await asyncio.to_thread(self.w3.eth.get_transaction_receipt, tx_hash))  # type: ignore[arg-type]
        except TransactionNotFound:
            return None
        except (Web3RPCError, OSError) as exc:
            raise ChainUnavailable(str(exc)) from exc

    async def is_pending(self, tx_hash: str) -> bool:
        """Whether the node knows the transaction (in its pool or mined)."""
        try:
            await asyncio.to_thread(self.w3.eth.get_transaction, tx_hash)  # type: ignore[arg-type]
        except TransactionNotFound:
            return False
        except (Web3RPCError, OSError) as exc:
            raise ChainUnavailable(str(exc)) from exc
        return True

    def _receipt(self, signed_hash: bytes, label: str) -> dict[str, Any]:
        tx_hash = "0x" + signed_hash.hex()
        try:
            receipt = self.w3.eth.wait_for_transaction_receipt(signed_hash, timeout=RECEIPT_TIMEOUT)  # type: ignore[arg-type]
        except Exception as exc:
            raise SendUncertain(f"{label}: no receipt for {tx_hash}: {exc}", tx_hash) from exc
        if receipt["status"] != 1:
            raise TransactionFailed(tx_hash)
        log.info("%s mined in block %d: %s", label, receipt["blockNumber"], tx_hash)
        return dict(receipt)

    def _transact_sync(self, fn: Any, label: str, before_send: Callable[[str, int], None] | None = None) -> bytes:
        for attempt in (1, 2):
            try:
                with self._send_lock():
                    return self._send_once(fn, label, before_send)
            except _StaleNonce as exc:  # someone else used the account's nonce: resync once
                self.nonce_conflicts += 1
                if attempt == 2:
                    raise ChainUnavailable(f"{label}: node refused the transaction: {exc}") from exc
        raise AssertionError("unreachable")

    def _send_once(self, fn: Any, label: str, before_send: Callable[[str, int], None] | None = None) -> bytes:
        w3 = self.w3
        try:
            gas = fn.estimate_gas({"from": self.address})
            self._nonce = self._next_nonce()
            tx = fn.build_transaction(
                {"from": self.address, "nonce": self._nonce, "gas": int(gas * GAS_MARGIN), "chainId": chain_id_of(w3)}
            )
        except (ContractCustomError, ContractLogicError) as exc:
            raise decode_revert(exc) from exc
        except (Web3RPCError, OSError) as exc:  # nothing was sent (ConnectionError, TimeoutError are OSErrors)
            raise ChainUnavailable(f"{label}: {exc}") from exc
        signed = self.account.sign_transaction(tx)
        tx_hash = "0x" + bytes(signed.hash).hex()
        if before_send is not None:
            before_send(tx_hash, self._nonce)  # raises: nothing sent, the nonce stays ours
        try:
            w3.eth.send_raw_transaction(signed.raw_transaction)
        except Web3RPCError as exc:  # the node answered: refused, unless it already has this very transaction
            if "already known" not in str(exc).lower():
                self._nonce = None
                if "nonce" in str(exc).lower():
                    raise _StaleNonce(str(exc)) from exc
                raise ChainUnavailable(f"{label}: node refused the transaction: {exc}") from exc
        except Exception as exc:
            self._nonce = None  # unknown: ask the node next time
            raise SendUncertain(f"{label}: sending failed: {exc}", tx_hash) from exc
        self._unconfirmed[self._nonce] = bytes(signed.hash)
        self._nonce += 1
        self.sent += 1
        return bytes(signed.hash)

    def _next_nonce(self) -> int:
        """The nonce of our next transaction: ours, checked against the node's pending count. Behind
        it: another sender used the key, take the node's. Ahead of it: the node lost transactions we
        sent. If it does not know the first missing one, a reorg dropped them (without this, every
        later send would wait in the node's queue behind the gap until the receipt timeout): resync
        to the node's count. If it knows it, the node is only lagging (a load balancer): keep ours."""
        pending = int(self.w3.eth.get_transaction_count(self.address, "pending"))
        for n in [n for n in self._unconfirmed if n < pending]:
            del self._unconfirmed[n]
        local = self._nonce
        if local is None or pending > local:
            return pending
        if pending < local:
            first_missing = self._unconfirmed.get(pending)
            if first_missing is None or not self._node_knows(first_missing):
                log.warning(
                    "nonce gap: the node counts %d transactions from %s, we sent %d: transactions %d..%d were "
                    "dropped (a reorg); resyncing to %d",
                    pending,
                    self.address,
                    local,
                    pending,
                    local - 1,
                    pending,
                )
                for n in [n for n in self._unconfirmed if n >= pending]:
                    del self._unconfirmed[n]
                self.resyncs += 1
                return pending
        return local

    def _node_knows(self, tx_hash: bytes) -> bool:
        try:
            self.w3.eth.get_transaction(tx_hash)  # type: ignore[arg-type]
        except TransactionNotFound:
            return False
        return True

    def sign_typed_data(self, typed: dict[str, Any]) -> str:
        """The operator key's EIP-712 signature (0x hex) of `typed` (a statement a contract checks
        against the key's role, e.g. AgentMarketplace's EarningsStatement)."""
        return str(self.account.sign_typed_data(full_message=typed).signature.to_0x_hex())

    def events(self, receipt: Mapping[str, Any], contract_name: str, event_name: str) -> list[Any]:
        """The decoded `event_name` logs of `contract_name` in a receipt."""
        event = getattr(self.contract(contract_name).events, event_name)()
        return list(event.process_receipt(receipt, errors=DISCARD))


def tx_hash_of(receipt: Mapping[str, Any]) -> str:
    h = receipt["transactionHash"]
    return "0x" + bytes(h).hex() if not isinstance(h, str) else h
