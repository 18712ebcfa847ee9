"""Deploy every agentledger contract to a JSON-RPC endpoint and write deployments/<chainId>.json.

    python -m scripts.deploy --rpc http://127.0.0.1:8545

The deployer key comes from the environment, never from the command line:
  AGENTLEDGER_DEPLOYER_KEY        a hex private key, or
  AGENTLEDGER_DEPLOYER_KEYSTORE   an eth-account (V3) keystore file, unlocked with
  AGENTLEDGER_DEPLOYER_PASSWORD   (asked on the terminal when unset).
Roles (addresses; each defaults to the deployer): AGENTLEDGER_ADMIN, AGENTLEDGER_OPERATOR,
AGENTLEDGER_ARBITER, AGENTLEDGER_ANCHORER, AGENTLEDGER_TREASURY. AGENTLEDGER_USDC overrides the
USDC address. On Base (8453) and Base Sepolia (84532) the real USDC is used and no mock is
deployed; on any other chain MockUSDC is deployed.
"""

from __future__ import annotations

import argparse
import getpass
import json
import os
import sys
from dataclasses import dataclass
from pathlib import Path

from eth_account import Account
from eth_account.signers.local import LocalAccount
from web3 import Web3

from core import deployments
from core.chain import connect, deploy, send
from core.networks import ANVIL_DEV_KEY, LOCAL_CHAIN_ID, network_for
from scripts.compile import SOLC_PACKAGE, compile_contracts


@dataclass(frozen=True)
class Roles:
    admin: str
    operator: str
    arbiter: str
    anchorer: str
    treasury: str

    @classmethod
    def from_env(cls, deployer: str) -> Roles:
        def pick(var: str, default: str) -> str:
            value = os.environ.get(var, "").strip()
            return Web3.to_checksum_address(value) if value else default

        admin = pick("AGENTLEDGER_ADMIN", deployer)
        operator = pick("AGENTLEDGER_OPERATOR", deployer)
        return cls(
            admin=admin,
            operator=operator,
            arbiter=pick("AGENTLEDGER_ARBITER", operator),
            anchorer=pick("AGENTLEDGER_ANCHORER", operator),
            treasury=pick("AGENTLEDGER_TREASURY", deployer),
        )


def load_deployer_key() -> LocalAccount:
    """The deployer account from AGENTLEDGER_DEPLOYER_KEY or an eth-account keystore."""
    key = os.environ.get("AGENTLEDGER_DEPLOYER_KEY", "").strip()
    if key:
        acct: LocalAccount = Account.from_key(key)
        return acct
    keystore = os.environ.get("AGENTLEDGER_DEPLOYER_KEYSTORE", "").strip()
    if keystore:
        password = os.environ.get("AGENTLEDGER_DEPLOYER_PASSWORD")
        if password is None:
            password = getpass.getpass(f"password for {keystore}: ")
        encrypted = json.loads(Path(keystore).read_text())
        acct = Account.from_key(Account.decrypt(encrypted, password))
        return acct
    raise SystemExit("set AGENTLEDGER_DEPLOYER_KEY or AGENTLEDGER_DEPLOYER_KEYSTORE (never pass a key as an argument)")


def deploy_system(w3: Web3, deployer: LocalAccount, roles: Roles, *, usdc: str | None = None) -> deployments.Deployment:
    """Deploy and wire all contracts; return the deployment record (not yet saved)."""
    chain_id = w3.eth.chain_id
    net = network_for(chain_id)
    usdc = usdc or os.environ.get("AGENTLEDGER_USDC", "").strip() or net.usdc
    me = deployer.address
    addresses: dict[str, str] = {}
    first_block: int | None = None

    def record(name: str, receipt_block: int, address: str) -> None:
        nonlocal first_block
        addresses[name] = address
        first_block = receipt_block if first_block is None else first_block

    if usdc is None:
        mock, r = deploy(w3, deployer, "MockUSDC")
        record("MockUSDC", r["blockNumber"], mock.address)
        usdc = mock.address
    usdc = Web3.to_checksum_address(usdc)

    registry, r = deploy(w3, deployer, "AgentRegistry", me)
    record("AgentRegistry", r["blockNumber"], registry.address)
    payouts, r = deploy(w3, deployer, "AgentPayouts", usdc, registry.address, roles.treasury, me)
    record("AgentPayouts", r["blockNumber"], payouts.address)
    gateway, r = deploy(w3, deployer, "PaymentGateway", usdc, registry.address, payouts.address, me)
    record("PaymentGateway", r["blockNumber"], gateway.address)
    escrow, r = deploy(w3, deployer, "AgentEscrow", usdc, registry.address, payouts.address, me)
    record("AgentEscrow", r["blockNumber"], escrow.address)
    market, r = deploy(w3, deployer, "AgentMarketplace", usdc, registry.address, roles.treasury, me)
    record("AgentMarketplace", r["blockNumber"], market.address)
    anchor, r = deploy(w3, deployer, "AuditAnchor", me)
    record("AuditAnchor", r["blockNumber"], anchor.address)

    def grant(contract: object, role_name: str, account: str) -> None:
        c = contract  # web3 Contract
        role = getattr(c.functions, role_name)().call()  # type: ignore[attr-defined]
        send(w3, deployer, c.functions.grantRole(role, account))  # type: ignore[attr-defined]

    grant(registry, "REGISTRAR_ROLE", roles.operator)
    grant(registry, "EARNINGS_ROLE", payouts.address)
    grant(registry, "MARKET_ROLE", market.address)
    grant(payouts, "PAYER_ROLE", gateway.address)
    grant(payouts, "PAYER_ROLE", escrow.address)
    grant(gateway, "OPERATOR_ROLE", roles.operator)
    grant(gateway, "ARBITER_ROLE", roles.arbiter)
    grant(escrow, "ORACLE_ROLE", roles.operator)
    grant(market, "STATEMENT_SIGNER_ROLE", roles.operator)
    grant(anchor, "ANCHORER_ROLE", roles.anchorer)
    for c in (registry, payouts, gateway, escrow, market, anchor):
        grant(c, "PAUSER_ROLE", roles.admin)
    if roles.admin != me:  # hand the admin role over, then drop the deployer's
        for c in (registry, payouts, gateway, escrow, market, anchor):
            admin_role = c.functions.DEFAULT_ADMIN_ROLE().call()
            send(w3, deployer, c.functions.grantRole(admin_role, roles.admin))
            send(w3, deployer, c.functions.renounceRole(admin_role, me))

    assert first_block is not None
    solc_version = json.loads(SOLC_PACKAGE.read_text())["version"]
    return deployments.Deployment(
        chain_id=chain_id,
        network=net.name,
        deploy_block=first_block,
        deployer=me,
        usdc=usdc,
        mock_usdc="MockUSDC" in addresses,
        contracts=addresses,
        roles={
            "admin": roles.admin,
            "operator": roles.operator,
            "arbiter": roles.arbiter,
            "anchorer": roles.anchorer,
            "treasury": roles.treasury,
        },
        solc_version=solc_version,
    )


def main(argv: list[str] | None = None) -> int:
    parser = argparse.ArgumentParser(description="Deploy agentledger's contracts.")
    parser.add_argument("--rpc", default=os.environ.get("AGENTLEDGER_RPC_URL", "http://127.0.0.1:8545"))
    parser.add_argument("--out", type=Path, default=deployments.DEFAULT_DIR, help="deployments directory")
    args = parser.parse_args(argv)

    compile_contracts()
    w3 = connect(args.rpc)
    deployer = load_deployer_key()
    chain_id = w3.eth.chain_id
    if chain_id != LOCAL_CHAIN_ID and deployer.address == Account.from_key(ANVIL_DEV_KEY).address:
        raise SystemExit("refusing to deploy to a non-local chain with anvil's public development key")
    dep = deploy_system(w3, deployer, Roles.from_env(deployer.address))
    path = deployments.save(dep, args.out)
    print(f"deployed to chain {chain_id} ({dep.network}) from block {dep.deploy_block}: {path}", file=sys.stderr)
    print(json.dumps(dep.contracts, indent=2))
    return 0


if __name__ == "__main__":
    raise SystemExit(main())
