"""`make run`: everything on the embedded default, in one process you stop with Ctrl-C.

With AGENTLEDGER_RPC_URL unset: start a local anvil on AGENTLEDGER_ANVIL_PORT (8545), deploy
every contract with anvil's development key (local only), write deployments/31337.json, and
serve the API on AGENTLEDGER_API_HOST:AGENTLEDGER_API_PORT (127.0.0.1:8080).
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

from eth_account import Account

from core import deployments, logs
from core.anvil import Anvil, PortInUse, port_in_use, stop_stale
from core.chain import connect
from core.config import Settings
from core.networks import ANVIL_DEV_KEY
from core.store import transaction
from core.store.chain_bound import reset_for_fresh_chain
from scripts.compile import compile_contracts
from scripts.deploy import Roles, deploy_system
from service.runtime import serve

log = logging.getLogger("agentledger.run")


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
            try:
                anvil = Anvil(settings.anvil_port, log_path=settings.data_dir / "anvil.log", pid_file=pid_file).start()
            except PortInUse:
                return _refuse(settings.anvil_port, "AGENTLEDGER_ANVIL_PORT")
            rpc_url = anvil.rpc_url
            log.info("anvil on %s (log: %s)", rpc_url, settings.data_dir / "anvil.log")
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
