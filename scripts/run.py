"""`make run`: everything on the embedded default, in one process you stop with Ctrl-C.

With AGENTLEDGER_RPC_URL unset: start a local anvil on AGENTLEDGER_ANVIL_PORT (8545) that keeps its
chain in <data dir>/anvil-state-<build>.json (dumped every second and at exit, loaded at the next start),
so balances, orders, anchors, NFTs and listings stay consistent with each other across restarts. The
chain of the last run is kept when deployments/31337.json names contracts it holds and the database's
indexed block is one of its blocks; otherwise (first run, `make reset`, contracts rebuilt from other
sources, a new database or one of another chain, a state dump older than what was indexed) the run starts a fresh
chain: every contract deployed with anvil's development key (local only), deployments/31337.json
written, the rows naming the old chain dropped. Then serve the API on
AGENTLEDGER_API_HOST:AGENTLEDGER_API_PORT (127.0.0.1:8080).
With AGENTLEDGER_RPC_URL set: use that node and the deployments/<chainId>.json already written
by `python -m scripts.deploy`; start and deploy nothing.
Ctrl-C (SIGINT) or SIGTERM stops the server and the anvil this command started; if the command is
killed outright (SIGKILL), its anvil dies with it (Linux), and the next run stops one a previous run
left (<data dir>/anvil.pid). A port something else answers on is refused with a clear message.
"""

from __future__ import annotations

import asyncio
import logging
import sys
import time
from dataclasses import replace
from pathlib import Path

from eth_account import Account
from web3 import Web3

from core import deployments, logs
from core.anvil import Anvil, PortInUse, port_in_use, stop_stale
from core.chain import connect
from core.config import Settings
from core.deployments import Deployment
from core.networks import ANVIL_DEV_KEY
from core.store import transaction
from core.store.chain_bound import reset_for_fresh_chain
from core.store.projections import get_tip
from scripts.compile import BUILD_DIR, compile_contracts
from scripts.deploy import Roles, deploy_system
from service.runtime import serve

log = logging.getLogger("agentledger.run")

#: How often anvil writes its state file, in seconds: what a SIGKILL of `make run` can lose (the
#: next start then sees an indexed block the chain lacks, and starts a fresh chain).
STATE_INTERVAL_SECONDS = 1
STATE_PREFIX = "anvil-state-"
#: The anchor interval on make run's own chain, unless one is configured: a local chain's blocks cost
#: nothing, and a newcomer's first `verify` should find its entry anchored (daily is for real chains).
LOCAL_ANCHOR_SECONDS = 60.0


def local_chain_state(settings: Settings) -> Path:
    """The anvil state file of this build of the contracts (named by the compiler input's fingerprint,
    so contracts rebuilt from other sources start a fresh chain); older builds' files are removed."""
    build = (BUILD_DIR / ".fingerprint").read_text().strip()[:16]
    state = settings.data_dir / f"{STATE_PREFIX}{build}.json"
    for old in settings.data_dir.glob(f"{STATE_PREFIX}*.json"):
        if old != state:
            old.unlink()
    return state


def kept_deployment(w3: Web3, settings: Settings) -> Deployment | None:
    """The deployment of the last run when this chain still holds it and the database followed this
    chain up to a block it still has, else None."""
    try:
        dep = deployments.load(w3.eth.chain_id, settings.deployments_dir)
    except FileNotFoundError:
        return None
    if w3.eth.block_number < dep.deploy_block or any(
        not w3.eth.get_code(Web3.to_checksum_address(a)) for a in dep.contracts.values()
    ):
        return None
    db = settings.database.connect()
    try:
        tip = get_tip(db, dep.chain_id)
    finally:
        db.close()
    if tip is None:  # a database that never followed this chain: its audit log is not what the chain anchored
        return None
    number, block_hash = tip[0], tip[1]
    block = w3.eth.get_block(number) if number <= w3.eth.block_number else None
    if block is None or block["hash"].to_0x_hex() != block_hash:
        return None
    return dep


def start_anvil(settings: Settings, state: Path, pid_file: Path) -> Anvil:
    return Anvil(
        settings.anvil_port,
        log_path=settings.data_dir / "anvil.log",
        pid_file=pid_file,
        extra_args=["--state", str(state), "--state-interval", str(STATE_INTERVAL_SECONDS)],
    ).start()


def _refuse(port: int, variable: str) -> int:
    print(
        f"error: port {port} is in use by another process (something answers there); stop it, or set {variable}"
        " to a free port",
        file=sys.stderr,
    )
    return 2


def main() -> int:
    settings = Settings.load()
    logs.configure(settings.log_format)
    pid_file = settings.data_dir / "anvil.pid"
    if not settings.rpc_url:
        # An anvil a previous run left (its process was killed before it could stop it) is ours to stop;
        # anything else answering on the port is not: refuse rather than deploy onto someone's node.
        stale = stop_stale(pid_file)
        if stale is not None:
            log.warning("stopped the anvil (pid %d) a previous run left behind", stale)
            # its socket may outlive it by a moment (a loaded machine tears a process down slowly)
            deadline = time.monotonic() + 10
            while port_in_use(settings.anvil_port) and time.monotonic() < deadline:
                time.sleep(0.1)
        if port_in_use(settings.anvil_port):
            return _refuse(settings.anvil_port, "AGENTLEDGER_ANVIL_PORT")
    api_host = "127.0.0.1" if settings.api_host in ("0.0.0.0", "::", "") else settings.api_host  # noqa: S104
    if port_in_use(settings.api_port, api_host):
        return _refuse(settings.api_port, "AGENTLEDGER_API_PORT")
    compile_contracts()
    anvil: Anvil | None = None
    try:
        if settings.rpc_url:
            rpc_url = settings.rpc_url
            w3 = connect(rpc_url)
            dep = deployments.load(w3.eth.chain_id, settings.deployments_dir)
        else:
            settings.data_dir.mkdir(parents=True, exist_ok=True)
            state = local_chain_state(settings)
            try:
                anvil = start_anvil(settings, state, pid_file)
            except PortInUse:
                return _refuse(settings.anvil_port, "AGENTLEDGER_ANVIL_PORT")
            rpc_url = anvil.rpc_url
            log.info("anvil on %s (log: %s, state: %s)", rpc_url, settings.data_dir / "anvil.log", state)
            w3 = connect(rpc_url)
            kept = kept_deployment(w3, settings)
            if kept is not None:
                dep = kept
                log.info("the chain of the last run, at block %d: its contracts and data kept", w3.eth.block_number)
            else:
                if state.exists():
                    # a chain the database cannot follow: start from nothing rather than deploy beside it
                    anvil.stop()
                    state.unlink()
                    anvil = start_anvil(settings, state, pid_file)
                    w3 = connect(rpc_url)
                deployer = Account.from_key(ANVIL_DEV_KEY)
                # A fresh chain: drop what names the old one (core.store.chain_bound); accounts, keys,
                # balances and the audit log stay.
                db = settings.database.connect()
                with transaction(db):
                    dropped = reset_for_fresh_chain(db)
                db.close()
                log.info("a fresh chain: dropped %d rows naming the old one", sum(dropped.values()))
                dep = deploy_system(w3, deployer, Roles.from_env(deployer.address))
                path = deployments.save(dep, settings.deployments_dir)
                log.info("deployed %d contracts from block %d: %s", len(dep.contracts), dep.deploy_block, path)
            if settings.anchor_interval == 0:
                settings = replace(settings, anchor_interval=LOCAL_ANCHOR_SECONDS)
        status = asyncio.run(serve(settings, dep, rpc_url))
    except KeyboardInterrupt:
        status = 0
    finally:
        if anvil is not None:
            anvil.stop()
            log.info("anvil stopped")
    return status


if __name__ == "__main__":
    raise SystemExit(main())
