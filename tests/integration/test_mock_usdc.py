"""MockUSDC on a real anvil: ERC-20 with 6 decimals, open mint, the Circle-like blacklist, and
EIP-2612 permit with real signatures from eth-account's typed-data signing."""

from __future__ import annotations

from typing import Any

from eth_abi import encode
from eth_account import Account
from eth_account.messages import encode_typed_data
from eth_account.signers.local import LocalAccount
from eth_utils import keccak

from tests.integration.chainkit import USDC, System, assert_reverts

ZERO = "0x" + "00" * 20
MAX_UINT = 2**256 - 1
NAME = "USD Coin (mock)"
#: secp256k1 group order: s and n - s are both valid signatures; EIP-2 allows only the low one.
SECP256K1_N = 0xFFFFFFFFFFFFFFFFFFFFFFFFFFFFFFFEBAAEDCE6AF48A03BBFD25E8CD0364141


# ---- helpers ---------------------------------------------------------------------------------


def permit_message(
    system: System, owner: str, spender: str, value: int, nonce: int, deadline: int, **domain_overrides: Any
) -> dict[str, Any]:
    domain = {
        "name": NAME,
        "version": "1",
        "chainId": system.w3.eth.chain_id,
        "verifyingContract": system.usdc.address,
        **domain_overrides,
    }
    return {
        "types": {
            "EIP712Domain": [
                {"name": "name", "type": "string"},
                {"name": "version", "type": "string"},
                {"name": "chainId", "type": "uint256"},
                {"name": "verifyingContract", "type": "address"},
            ],
            "Permit": [
                {"name": "owner", "type": "address"},
                {"name": "spender", "type": "address"},
                {"name": "value", "type": "uint256"},
                {"name": "nonce", "type": "uint256"},
                {"name": "deadline", "type": "uint256"},
            ],
        },
        "primaryType": "Permit",
        "domain": domain,
        "message": {"owner": owner, "spender": spender, "value": value, "nonce": nonce, "deadline": deadline},
    }


def sign_permit(
    system: System, signer: LocalAccount, owner: str, spender: str, value: int, deadline: int, **domain: Any
) -> tuple[int, bytes, bytes]:
    nonce = system.usdc.functions.nonces(owner).call()
    signed = signer.sign_typed_data(
        full_message=permit_message(system, owner, spender, value, nonce, deadline, **domain)
    )
    return signed.v, signed.r.to_bytes(32, "big"), signed.s.to_bytes(32, "big")


def permit_tx(
    system: System,
    relayer: LocalAccount,
    owner: str,
    spender: str,
    value: int,
    deadline: int,
    sig: tuple[int, bytes, bytes],
) -> Any:
    v, r, s = sig
    return system.tx(relayer, system.usdc.functions.permit(owner, spender, value, deadline, v, r, s), "MockUSDC.permit")


# ---- metadata ---------------------------------------------------------------------------------------


def test_metadata_and_eip712_domain(system: System) -> None:
    u = system.usdc.functions
    assert u.name().call() == NAME
    assert u.symbol().call() == "USDC"
    assert u.decimals().call() == 6
    assert u.totalSupply().call() == 0
    chain_id = system.w3.eth.chain_id
    fields, name, version, cid, verifying, salt, extensions = u.eip712Domain().call()
    assert (fields, name, version, cid, verifying, salt, list(extensions)) == (
        b"\x0f",
        NAME,
        "1",
        chain_id,
        system.usdc.address,
        b"\x00" * 32,
        [],
    )
    typehash = keccak(text="EIP712Domain(string name,string version,uint256 chainId,address verifyingContract)")
    expected = keccak(
        encode(
            ["bytes32", "bytes32", "bytes32", "uint256", "address"],
            [typehash, keccak(text=NAME), keccak(text="1"), chain_id, system.usdc.address],
        )
    )
    assert u.DOMAIN_SEPARATOR().call() == expected
    # and eth-account hashes the same domain (the header of the signable message)
    signable = encode_typed_data(full_message=permit_message(system, ZERO, ZERO, 0, 0, 0))
    assert signable.header == expected


# ---- mint, transfer, allowance ----------------------------------------------------------------------


def test_anyone_can_mint(system: System) -> None:
    a, b = system.users[0], system.users[1]
    receipt = system.tx(a, system.usdc.functions.mint(b.address, 12 * USDC), "MockUSDC.mint")
    (ev,) = system.events(receipt, "MockUSDC", "Transfer")
    assert dict(ev["args"]) == {"from": ZERO, "to": b.address, "value": 12 * USDC}
    assert system.balance(b.address) == 12 * USDC
    assert system.balance(a.address) == 0
    assert system.usdc.functions.totalSupply().call() == 12 * USDC
    assert_reverts(lambda: system.tx(a, system.usdc.functions.mint(ZERO, 1)), "ERC20InvalidReceiver", ZERO)


def test_transfer(system: System) -> None:
    a, b = system.users[0], system.users[1]
    u = system.usdc.functions
    system.mint_usdc(a.address, 10 * USDC)
    assert u.transfer(b.address, 4 * USDC).call({"from": a.address}) is True
    receipt = system.tx(a, u.transfer(b.address, 4 * USDC), "MockUSDC.transfer")
    (ev,) = system.events(receipt, "MockUSDC", "Transfer")
    assert dict(ev["args"]) == {"from": a.address, "to": b.address, "value": 4 * USDC}
    assert (system.balance(a.address), system.balance(b.address)) == (6 * USDC, 4 * USDC)
    assert u.totalSupply().call() == 10 * USDC
    assert_reverts(
        lambda: system.tx(a, u.transfer(b.address, 6 * USDC + 1)),
        "ERC20InsufficientBalance",
        a.address,
        6 * USDC,
        6 * USDC + 1,
    )
    assert_reverts(lambda: system.tx(a, u.transfer(ZERO, 1)), "ERC20InvalidReceiver", ZERO)
    system.tx(a, u.transfer(b.address, 6 * USDC))  # the whole balance
    assert system.balance(a.address) == 0


def test_approve_allowance_and_transfer_from(system: System) -> None:
    owner, spender, dest = system.users[0], system.users[1], system.users[2]
    u = system.usdc.functions
    system.mint_usdc(owner.address, 10 * USDC)
    receipt = system.tx(owner, u.approve(spender.address, 3 * USDC))
    (ev,) = system.events(receipt, "MockUSDC", "Approval")
    assert dict(ev["args"]) == {"owner": owner.address, "spender": spender.address, "value": 3 * USDC}
    assert u.allowance(owner.address, spender.address).call() == 3 * USDC
    assert_reverts(
        lambda: system.tx(spender, u.transferFrom(owner.address, dest.address, 3 * USDC + 1)),
        "ERC20InsufficientAllowance",
        spender.address,
        3 * USDC,
        3 * USDC + 1,
    )
    receipt = system.tx(spender, u.transferFrom(owner.address, dest.address, 2 * USDC), "MockUSDC.transferFrom")
    (ev,) = system.events(receipt, "MockUSDC", "Transfer")
    assert dict(ev["args"]) == {"from": owner.address, "to": dest.address, "value": 2 * USDC}
    assert u.allowance(owner.address, spender.address).call() == USDC
    assert (system.balance(owner.address), system.balance(dest.address)) == (8 * USDC, 2 * USDC)

    # an unlimited allowance is never decremented; the balance still bounds it
    system.tx(owner, u.approve(spender.address, MAX_UINT))
    system.tx(spender, u.transferFrom(owner.address, dest.address, 5 * USDC))
    assert u.allowance(owner.address, spender.address).call() == MAX_UINT
    assert_reverts(
        lambda: system.tx(spender, u.transferFrom(owner.address, dest.address, 3 * USDC + 1)),
        "ERC20InsufficientBalance",
        owner.address,
        3 * USDC,
        3 * USDC + 1,
    )
    # re-approving overwrites (including to zero)
    system.tx(owner, u.approve(spender.address, 0))
    assert u.allowance(owner.address, spender.address).call() == 0
    assert_reverts(
        lambda: system.tx(spender, u.transferFrom(owner.address, dest.address, 1)), "ERC20InsufficientAllowance"
    )

    assert_reverts(lambda: system.tx(owner, u.approve(ZERO, 1)), "ERC20InvalidSpender", ZERO)
    # a zero-value transferFrom from the zero address passes the allowance comparison and is
    # refused when the (unchanged) allowance is written back (ERC20InvalidSender is unreachable:
    # the only path with from=0 goes through this check first)
    assert_reverts(lambda: system.tx(spender, u.transferFrom(ZERO, dest.address, 0)), "ERC20InvalidApprover", ZERO)
    assert_reverts(lambda: system.tx(owner, u.transferFrom(owner.address, ZERO, 0)), "ERC20InvalidReceiver", ZERO)


# ---- blacklist ----------------------------------------------------------------------------------------


def test_blacklist_blocks_sending_and_receiving(system: System) -> None:
    bad, good, spender = system.users[0], system.users[1], system.users[2]
    u = system.usdc.functions
    system.mint_usdc(bad.address, 10 * USDC)
    system.mint_usdc(good.address, 10 * USDC)
    system.tx(bad, u.approve(spender.address, MAX_UINT))
    system.tx(good, u.approve(spender.address, MAX_UINT))
    assert u.isBlacklisted(bad.address).call() is False

    receipt = system.tx(system.users[5], u.setBlacklisted(bad.address, True))  # open to anyone: local mock
    (ev,) = system.events(receipt, "MockUSDC", "Blacklisted")
    assert dict(ev["args"]) == {"account": bad.address, "blacklisted": True}
    assert u.isBlacklisted(bad.address).call() is True

    assert_reverts(lambda: system.tx(bad, u.transfer(good.address, 1)), "AccountBlacklisted", bad.address)
    assert_reverts(lambda: system.tx(good, u.transfer(bad.address, 1)), "AccountBlacklisted", bad.address)
    assert_reverts(
        lambda: system.tx(spender, u.transferFrom(bad.address, good.address, 1)), "AccountBlacklisted", bad.address
    )
    assert_reverts(
        lambda: system.tx(spender, u.transferFrom(good.address, bad.address, 1)), "AccountBlacklisted", bad.address
    )
    assert_reverts(lambda: system.tx(good, u.mint(bad.address, 1)), "AccountBlacklisted", bad.address)
    # third parties are unaffected
    system.tx(spender, u.transferFrom(good.address, spender.address, USDC))
    assert (system.balance(bad.address), system.balance(good.address)) == (10 * USDC, 9 * USDC)

    receipt = system.tx(good, u.setBlacklisted(bad.address, False))
    (ev,) = system.events(receipt, "MockUSDC", "Blacklisted")
    assert dict(ev["args"]) == {"account": bad.address, "blacklisted": False}
    assert u.isBlacklisted(bad.address).call() is False
    system.tx(bad, u.transfer(good.address, USDC))
    system.tx(good, u.transfer(bad.address, 2 * USDC))
    assert (system.balance(bad.address), system.balance(good.address)) == (11 * USDC, 8 * USDC)


# ---- EIP-2612 permit ----------------------------------------------------------------------------------


def test_permit_sets_the_allowance_from_a_signature(system: System) -> None:
    owner, spender, relayer, dest = system.users[0], system.users[1], system.users[2], system.users[3]
    u = system.usdc.functions
    system.mint_usdc(owner.address, 100 * USDC)
    deadline = system.now() + 3600
    assert u.nonces(owner.address).call() == 0
    sig = sign_permit(system, owner, owner.address, spender.address, 40 * USDC, deadline)
    # anyone may submit it: the owner never sends a transaction
    receipt = permit_tx(system, relayer, owner.address, spender.address, 40 * USDC, deadline, sig)
    (ev,) = system.events(receipt, "MockUSDC", "Approval")
    assert dict(ev["args"]) == {"owner": owner.address, "spender": spender.address, "value": 40 * USDC}
    assert u.allowance(owner.address, spender.address).call() == 40 * USDC
    assert u.nonces(owner.address).call() == 1
    assert u.nonces(relayer.address).call() == 0
    system.tx(spender, u.transferFrom(owner.address, dest.address, 40 * USDC))
    assert system.balance(dest.address) == 40 * USDC

    # the next permit uses the next nonce and replaces the allowance
    sig = sign_permit(system, owner, owner.address, spender.address, 7, deadline)
    permit_tx(system, owner, owner.address, spender.address, 7, deadline, sig)
    assert u.allowance(owner.address, spender.address).call() == 7
    assert u.nonces(owner.address).call() == 2


def test_permit_deadline_is_inclusive(system: System) -> None:
    owner, spender = system.users[0], system.users[1]
    deadline = system.now() + 1000
    sig = sign_permit(system, owner, owner.address, spender.address, 5, deadline)
    system.w3.provider.make_request("evm_setNextBlockTimestamp", [deadline])  # type: ignore[arg-type]
    receipt = permit_tx(system, owner, owner.address, spender.address, 5, deadline, sig)
    assert system.w3.eth.get_block(receipt["blockNumber"])["timestamp"] == deadline
    assert system.usdc.functions.allowance(owner.address, spender.address).call() == 5


def test_permit_rejects_bad_signatures(system: System) -> None:
    owner, spender, mallory = system.users[0], system.users[1], system.users[2]
    u = system.usdc.functions
    o, sp = owner.address, spender.address
    deadline = system.now() + 3600
    value = 9 * USDC

    def attempt(sig: tuple[int, bytes, bytes], value: int = value, deadline: int = deadline, spender: str = sp) -> None:
        permit_tx(system, mallory, o, spender, value, deadline, sig)

    # expired
    past = system.now() - 1
    assert_reverts(
        lambda: attempt(sign_permit(system, owner, o, sp, value, past), deadline=past), "ERC2612ExpiredSignature", past
    )
    # signed by someone else
    assert_reverts(
        lambda: attempt(sign_permit(system, mallory, o, sp, value, deadline)),
        "ERC2612InvalidSigner",
        mallory.address,
        o,
    )
    # a valid signature over different terms or a different domain recovers some other address
    good = sign_permit(system, owner, o, sp, value, deadline)
    for bad in (
        lambda: attempt(good, value=value + 1),
        lambda: attempt(good, deadline=deadline + 1),
        lambda: attempt(good, spender=mallory.address),
        lambda: attempt(sign_permit(system, owner, o, sp, value, deadline, chainId=1)),
        lambda: attempt(sign_permit(system, owner, o, sp, value, deadline, name="USD Coin")),
        lambda: attempt(sign_permit(system, owner, o, sp, value, deadline, version="2")),
        lambda: attempt(sign_permit(system, owner, o, sp, value, deadline, verifyingContract=system.payouts.address)),
    ):
        recovered, claimed = assert_reverts(bad, "ERC2612InvalidSigner")
        assert claimed == o and recovered != o
    # malleated signature (high s, flipped v) is refused, not accepted as a second valid form
    v, r, s = good
    high_s = SECP256K1_N - int.from_bytes(s, "big")
    assert_reverts(
        lambda: attempt((55 - v, r, high_s.to_bytes(32, "big"))), "ECDSAInvalidSignatureS", high_s.to_bytes(32, "big")
    )
    # unrecoverable signatures
    assert_reverts(lambda: attempt((29, r, s)), "ECDSAInvalidSignature")
    assert_reverts(lambda: attempt((v, b"\x00" * 32, s)), "ECDSAInvalidSignature")
    # a correctly signed permit for the zero spender is refused by the ERC-20 itself
    assert_reverts(
        lambda: attempt(sign_permit(system, owner, o, ZERO, value, deadline), spender=ZERO), "ERC20InvalidSpender", ZERO
    )
    # none of that consumed the nonce or granted anything
    assert u.nonces(o).call() == 0
    assert u.allowance(o, sp).call() == 0

    # the good one works once; a replay is refused (the nonce moved on)
    attempt(good)
    assert u.allowance(o, sp).call() == value
    recovered, claimed = assert_reverts(lambda: attempt(good), "ERC2612InvalidSigner")
    assert claimed == o and recovered != o
    assert u.nonces(o).call() == 1


def test_permit_signature_is_not_transferable_between_owners(system: System) -> None:
    """A permit signed by the owner names the owner: it cannot be applied to another account."""
    owner, victim, spender = system.users[0], Account.from_key(keccak(text="victim")), system.users[1]
    deadline = system.now() + 3600
    sig = sign_permit(system, owner, owner.address, spender.address, 1, deadline)
    recovered, claimed = assert_reverts(
        lambda: permit_tx(system, owner, victim.address, spender.address, 1, deadline, sig), "ERC2612InvalidSigner"
    )
    assert claimed == victim.address and recovered != victim.address
