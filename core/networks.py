"""Chains the service knows by id. Anything else is treated as a local development chain."""

from __future__ import annotations

from dataclasses import dataclass


@dataclass(frozen=True)
class Network:
    chain_id: int
    name: str
    usdc: str | None  # None: deploy MockUSDC
    explorer: str | None
    confirmations: int


LOCAL_CHAIN_ID = 31337
#: anvil's first default account (public knowledge): usable on a local chain only, refused anywhere else
#: (deploy, operator and anchoring keys).
ANVIL_DEV_KEY = "0xac0974bec39a17e36ba4a6b4d238ff944bacb478cbed5efcae784d7bf4f2ff80"

NETWORKS: dict[int, Network] = {
    8453: Network(8453, "base", "0x833589fCD6eDb6E08f4c7C32D4f71b54bdA02913", "https://basescan.org", 12),
    84532: Network(
        84532, "base-sepolia", "0x036CbD53842c5426634e7929541eC2318f3dCF7e", "https://sepolia.basescan.org", 12
    ),
    LOCAL_CHAIN_ID: Network(LOCAL_CHAIN_ID, "local", None, None, 0),
}


def network_for(chain_id: int) -> Network:
    """The known network for `chain_id`, or a local development network (MockUSDC, no explorer)."""
    return NETWORKS.get(chain_id, Network(chain_id, f"chain-{chain_id}", None, None, 0))
