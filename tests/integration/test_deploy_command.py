"""`python -m scripts.deploy` against real anvil nodes, and `make run`'s process end to end."""

from __future__ import annotations

import json
import os
import signal
import subprocess
import sys
import time
import urllib.request
from pathlib import Path
from typing import Any

import pytest
from eth_account import Account
from eth_utils import keccak

from core import deployments
from core.anvil import Anvil, free_port
from core.chain import CONTRACT_NAMES, ROOT, connect, send
from core.config import Settings
from core.networks import ANVIL_DEV_KEY, NETWORKS
from core.store import connect as store_connect
from core.store.projections import set_tip
from scripts.deploy import Roles, deploy_system
from scripts.run import kept_deployment
from tests.pg_redirect import child_env
from tests.run_kit import get_json as _get_json
from tests.run_kit import run_env as _run_env
from tests.run_kit import start_run as _start_run
from tests.run_kit import stop_run as _stop
from tests.run_kit import wait_synced as _wait_synced

DEPLOYER_KEY = "0x" + keccak(text="agentledger-deploy-test").hex()


def run_deploy(rpc: str, out: Path, env_extra: dict[str, str]) -> subprocess.CompletedProcess[str]:
    env = {k: v for k, v in os.environ.items() if not k.startswith("AGENTLEDGER_")}
    env.update(env_extra)
    return subprocess.run(
        [sys.executable, "-m", "scripts.deploy", "--rpc", rpc, "--out", str(out)],
        cwd=ROOT,
        env=env,
        capture_output=True,
        text=True,
        timeout=120,
    )


def fund(anvil: Anvil, address: str) -> None:
    w3 = connect(anvil.rpc_url)
    w3.provider.make_request("anvil_setBalance", [address, hex(10**20)])  # type: ignore[arg-type]


def test_deploy_with_env_key_writes_every_address_and_the_deploy_block(tmp_path: Path) -> None:
    deployer = Account.from_key(DEPLOYER_KEY)
    with Anvil() as node:
        fund(node, deployer.address)
        w3 = connect(node.rpc_url)
        w3.provider.make_request("evm_mine", [])  # type: ignore[arg-type]
        w3.provider.make_request("evm_mine", [])  # type: ignore[arg-type]
        start_block = w3.eth.block_number
        proc = run_deploy(node.rpc_url, tmp_path, {"AGENTLEDGER_DEPLOYER_KEY": DEPLOYER_KEY})
        assert proc.returncode == 0, proc.stderr
        assert DEPLOYER_KEY[2:] not in proc.stdout + proc.stderr  # the key is never printed
        dep = json.loads((tmp_path / "31337.json").read_text())
        assert dep["chain_id"] == 31337
        assert dep["mock_usdc"] is True
        assert set(dep["contracts"]) == set(CONTRACT_NAMES)
        assert dep["deploy_block"] == start_block + 1
        assert dep["deployer"] == deployer.address
        for address in dep["contracts"].values():
            assert len(w3.eth.get_code(address)) > 0
        # Roles are wired: the registry's REGISTRAR_ROLE belongs to the operator (the deployer here).
        reg = w3.eth.contract(
            address=dep["contracts"]["AgentRegistry"],
            abi=json.loads((ROOT / "contracts/build/AgentRegistry.json").read_text())["abi"],
        )
        assert reg.functions.hasRole(reg.functions.REGISTRAR_ROLE().call(), deployer.address).call()


def test_deploy_with_keystore_and_handover_of_admin(tmp_path: Path) -> None:
    deployer = Account.from_key(DEPLOYER_KEY)
    keystore = tmp_path / "key.json"
    keystore.write_text(json.dumps(Account.encrypt(DEPLOYER_KEY, "correct horse", iterations=2)))
    new_admin = Account.from_key(keccak(text="new-admin")).address
    with Anvil() as node:
        fund(node, deployer.address)
        env = {
            "AGENTLEDGER_DEPLOYER_KEYSTORE": str(keystore),
            "AGENTLEDGER_DEPLOYER_PASSWORD": "correct horse",
            "AGENTLEDGER_ADMIN": new_admin,
        }
        proc = run_deploy(node.rpc_url, tmp_path, env)
        assert proc.returncode == 0, proc.stderr
        dep = json.loads((tmp_path / "31337.json").read_text())
        assert dep["roles"]["admin"] == new_admin
        w3 = connect(node.rpc_url)
        abi = json.loads((ROOT / "contracts/build/PaymentGateway.json").read_text())["abi"]
        gw = w3.eth.contract(address=dep["contracts"]["PaymentGateway"], abi=abi)
        admin_role = gw.functions.DEFAULT_ADMIN_ROLE().call()
        assert gw.functions.hasRole(admin_role, new_admin).call()
        assert not gw.functions.hasRole(admin_role, deployer.address).call()


def test_deploy_refuses_without_a_key(tmp_path: Path) -> None:
    with Anvil() as node:
        proc = run_deploy(node.rpc_url, tmp_path, {})
    assert proc.returncode != 0
    assert "AGENTLEDGER_DEPLOYER_KEY" in proc.stderr
    assert not (tmp_path / "31337.json").exists()


def test_deploy_has_no_key_argument(tmp_path: Path) -> None:
    proc = subprocess.run(
        [sys.executable, "-m", "scripts.deploy", "--key", DEPLOYER_KEY],
        cwd=ROOT,
        capture_output=True,
        text=True,
        timeout=60,
    )
    assert proc.returncode == 2  # argparse: unrecognized arguments
    assert "unrecognized arguments" in proc.stderr


@pytest.mark.parametrize("chain_id", [84532, 8453])
def test_base_chains_use_real_usdc_and_deploy_no_mock(tmp_path: Path, chain_id: int) -> None:
    deployer = Account.from_key(DEPLOYER_KEY)
    with Anvil(chain_id=chain_id) as node:
        fund(node, deployer.address)
        proc = run_deploy(node.rpc_url, tmp_path, {"AGENTLEDGER_DEPLOYER_KEY": DEPLOYER_KEY})
        assert proc.returncode == 0, proc.stderr
        dep = json.loads((tmp_path / f"{chain_id}.json").read_text())
        assert dep["mock_usdc"] is False
        assert "MockUSDC" not in dep["contracts"]
        assert dep["usdc"] == NETWORKS[chain_id].usdc
        w3 = connect(node.rpc_url)
        abi = json.loads((ROOT / "contracts/build/AgentPayouts.json").read_text())["abi"]
        payouts = w3.eth.contract(address=dep["contracts"]["AgentPayouts"], abi=abi)
        assert payouts.functions.usdc().call() == NETWORKS[chain_id].usdc


def test_anvil_dev_key_is_refused_off_the_local_chain(tmp_path: Path) -> None:
    with Anvil(chain_id=84532) as node:
        fund(node, Account.from_key(ANVIL_DEV_KEY).address)
        proc = run_deploy(node.rpc_url, tmp_path, {"AGENTLEDGER_DEPLOYER_KEY": ANVIL_DEV_KEY})
    assert proc.returncode != 0
    assert "development key" in proc.stderr
    assert not (tmp_path / "84532.json").exists()


def _port_open(port: int) -> bool:
    import socket

    with socket.socket() as s:
        return s.connect_ex(("127.0.0.1", port)) == 0


def test_make_run_serves_healthz_and_ctrl_c_stops_everything(tmp_path: Path) -> None:
    anvil_port, api_port = free_port(), free_port()
    env = {k: v for k, v in os.environ.items() if not k.startswith("AGENTLEDGER_")}
    env.update(
        AGENTLEDGER_ANVIL_PORT=str(anvil_port),
        AGENTLEDGER_API_PORT=str(api_port),
        AGENTLEDGER_DEPLOYMENTS_DIR=str(tmp_path / "deployments"),
        AGENTLEDGER_DATA_DIR=str(tmp_path / "var"),
    )
    db_file = tmp_path / "var" / "agentledger.db"
    env.update(child_env(db_file))  # make test-postgresql: the database standing for that file
    log_path = tmp_path / "run.log"
    with open(log_path, "wb") as log:
        proc = subprocess.Popen([sys.executable, "-m", "scripts.run"], cwd=ROOT, env=env, stdout=log, stderr=log)
    try:
        body: dict[str, Any] | None = None
        deadline = time.monotonic() + 90
        while time.monotonic() < deadline and (body is None or body["status"] != "ok"):
            # "degraded" while the indexer makes its first step after the API is up
            assert proc.poll() is None, log_path.read_text()
            try:
                body = _get_json(f"http://127.0.0.1:{api_port}/healthz")
            except OSError:
                time.sleep(0.2)
            else:
                time.sleep(0.05)
        assert body is not None, "healthz never answered"
        dep = json.loads((tmp_path / "deployments" / "31337.json").read_text())
        assert body["status"] == "ok", body
        assert body["chainId"] == 31337
        assert body["backend"] == ("postgresql" if "AGENTLEDGER_DATABASE_URL" in env else "sqlite")
        assert body["contracts"] == dep["contracts"]
        assert set(body["contracts"]) == set(CONTRACT_NAMES)
        assert body["latestBlock"] >= dep["deploy_block"]
        # the runtime's background jobs, one runner, their state in /healthz
        jobs = body["jobs"]
        assert set(jobs) == {
            "checkout-sweep",
            "anchor",
            "outbox",
            "drop-settle",
            "drop-expire",
            "drop-reconcile",
            "hire-settle",
            "hire-health",
            "hire-reputation",
        }, jobs
        assert jobs["outbox"]["state"] == "running"
        # its own local chain: the log anchored every minute (daily is for real chains)
        assert jobs["anchor"]["schedule"] == "every 60 s", jobs["anchor"]
        assert jobs["checkout-sweep"]["schedule"] == "every 30 s" and jobs["checkout-sweep"]["lastError"] is None
        assert _port_open(anvil_port)
        # The indexer runs in the same process: a new on-chain agent reaches the SQLite file.
        w3 = connect(f"http://127.0.0.1:{anvil_port}")
        operator = Account.from_key(ANVIL_DEV_KEY)
        registry = w3.eth.contract(
            address=dep["contracts"]["AgentRegistry"],
            abi=json.loads((ROOT / "contracts/build/AgentRegistry.json").read_text())["abi"],
        )
        receipt = send(w3, operator, registry.functions.mint(operator.address, operator.address, "agl_00000000beef", 0))
        deadline = time.monotonic() + 30
        while time.monotonic() < deadline:
            body = _get_json(f"http://127.0.0.1:{api_port}/healthz")
            if body["indexer"]["seen"] is not None and body["indexer"]["seen"] >= receipt["blockNumber"]:
                break
            time.sleep(0.05)
        assert body["indexer"]["state"] == "synced"
        db = store_connect(db_file)
        rows = list(db.execute("SELECT wallet_id, owner FROM agents"))
        db.close()
        assert rows == [("agl_00000000beef", operator.address)]
    finally:
        proc.send_signal(signal.SIGINT)
        code = proc.wait(timeout=30)
    assert code == 0, log_path.read_text()
    assert "anvil stopped" in log_path.read_text()
    assert not _port_open(api_port)
    assert not _port_open(anvil_port)  # the anvil it started is gone too


def _indexed_agents(db_file: Path) -> list[tuple[str, str]]:
    db = store_connect(db_file)
    try:
        return [(r[0], r[1]) for r in db.execute("SELECT wallet_id, owner FROM agents")]
    finally:
        db.close()


def test_make_run_keeps_its_chain_starts_fresh_when_the_database_cannot_follow_and_make_reset_clears(
    tmp_path: Path,
) -> None:
    """`make run` keeps the local chain across restarts (anvil's state file), so what is on-chain and
    what the database derived from it stay together; a database whose indexed block the chain lacks
    gets a fresh chain (accounts and balances survive, the old chain's rows go); `make reset` then
    removes chain and SQLite file."""
    anvil_port, api_port, log_path = free_port(), free_port(), tmp_path / "run.log"
    db_file = tmp_path / "var" / "agentledger.db"
    base = f"http://127.0.0.1:{api_port}/api/agents"
    proc = _start_run(tmp_path, anvil_port, api_port, log_path)
    try:
        first = _wait_synced(api_port, proc, log_path)
        req = urllib.request.Request(  # noqa: S310 (loopback)
            f"{base}/register",
            json.dumps({"name": "keeper", "specialty": "email"}).encode(),
            {"Content-Type": "application/json"},
        )
        with urllib.request.urlopen(req, timeout=5) as resp:  # noqa: S310
            reg = json.loads(resp.read())
        w3 = connect(f"http://127.0.0.1:{anvil_port}")
        operator = Account.from_key(ANVIL_DEV_KEY)
        registry = w3.eth.contract(
            address=first["contracts"]["AgentRegistry"],
            abi=json.loads((ROOT / "contracts/build/AgentRegistry.json").read_text())["abi"],
        )
        minted = send(w3, operator, registry.functions.mint(operator.address, operator.address, "agl_0000000000aa", 0))
        while _wait_synced(api_port, proc, log_path)["indexer"]["seen"] < minted["blockNumber"]:
            time.sleep(0.1)
    finally:
        _stop(proc)
    dep = json.loads((tmp_path / "deployments" / "31337.json").read_text())
    assert len(list((tmp_path / "var").glob("anvil-state-*.json"))) == 1

    proc = _start_run(tmp_path, anvil_port, api_port, log_path)
    try:
        second = _wait_synced(api_port, proc, log_path)
        assert "the chain of the last run" in log_path.read_text()
        assert second["contracts"] == first["contracts"]
        assert json.loads((tmp_path / "deployments" / "31337.json").read_text()) == dep  # nothing redeployed
        assert second["latestBlock"] >= minted["blockNumber"]
        # the agent minted on the last run's chain is still on it, and still indexed
        assert _indexed_agents(db_file) == [("agl_0000000000aa", operator.address)]
    finally:
        _stop(proc)

    # A database that indexed a block this chain does not have (a state dump older than the index,
    # another chain's database): a fresh chain, not contracts the indexer cannot follow.
    db = store_connect(db_file)
    db.execute("UPDATE sync_state SET block_hash = ?", ("0x" + "ab" * 32,))
    db.close()
    proc = _start_run(tmp_path, anvil_port, api_port, log_path)
    try:
        third = _wait_synced(api_port, proc, log_path)
        assert "a fresh chain: dropped" in log_path.read_text().rsplit("anvil on", 1)[1]
        assert third["deployBlock"] == 1 and third["latestBlock"] < minted["blockNumber"]  # started from nothing
        assert _indexed_agents(db_file) == []  # the old chain's agent went with it
        req = urllib.request.Request(  # noqa: S310 (loopback)
            f"{base}/balance?agentId={reg['agent']['wallet']}", headers={"Authorization": f"Bearer {reg['api_key']}"}
        )
        with urllib.request.urlopen(req, timeout=5) as resp:  # noqa: S310
            assert json.loads(resp.read())["balance"] == 0  # the account, its key and agent survived
    finally:
        _stop(proc)

    reset = subprocess.run(
        [sys.executable, "-m", "scripts.reset"],
        cwd=ROOT,
        env=_run_env(tmp_path, anvil_port, api_port),
        capture_output=True,
        text=True,
        timeout=60,
    )
    if child_env(db_file):  # PostgreSQL: a server's database is its administrator's to drop
        assert reset.returncode == 2 and "reset that node or database yourself" in reset.stderr, reset
        assert (tmp_path / "deployments" / "31337.json").exists()
    else:
        assert reset.returncode == 0, reset.stderr
        assert not db_file.exists() and not (tmp_path / "deployments" / "31337.json").exists()
        assert not list((tmp_path / "var").glob("anvil-state-*.json"))


# ---- an anvil never outlives `make run`; a busy port is refused ---------------------------------


def _gone(pid: int) -> bool:
    """The process has exited (a zombie waiting for its reaper counts as gone)."""
    try:
        state = Path(f"/proc/{pid}/stat").read_text().rsplit(")", 1)[1].split()[0]
    except OSError:
        return True
    return state in ("Z", "X")


def test_sigkill_of_make_run_takes_its_anvil_and_the_next_run_stops_a_leftover(tmp_path: Path) -> None:
    anvil_port, api_port, log_path = free_port(), free_port(), tmp_path / "run.log"
    pid_file = tmp_path / "var" / "anvil.pid"
    proc = _start_run(tmp_path, anvil_port, api_port, log_path)
    try:
        _wait_synced(api_port, proc, log_path)
        anvil_pid = int(pid_file.read_text().split()[0])
        assert not _gone(anvil_pid)
    finally:
        proc.kill()  # SIGKILL: no handler runs, nothing of ours can stop the anvil
        proc.wait(timeout=30)
    deadline = time.monotonic() + 10
    while not (_gone(anvil_pid) and not _port_open(anvil_port)):
        assert time.monotonic() < deadline, "the anvil outlived the process that started it"
        time.sleep(0.05)

    # Where the kernel cannot do it (not Linux), the pid file names a leftover: the next run stops it
    # (and never deploys onto it) before starting its own chain.
    leftover = Anvil(anvil_port, pid_file=pid_file).start()
    try:
        w3 = connect(leftover.rpc_url)
        for _ in range(5):
            w3.provider.make_request("evm_mine", [])  # type: ignore[arg-type]
        proc = _start_run(tmp_path, anvil_port, api_port, log_path)
        try:
            body = _wait_synced(api_port, proc, log_path)
            assert leftover.proc is not None and leftover.proc.wait(timeout=10) is not None  # stopped
            assert f"stopped the anvil (pid {leftover.proc.pid})" in log_path.read_text()
            dep = json.loads((tmp_path / "deployments" / "31337.json").read_text())
            assert body["contracts"] == dep["contracts"] and dep["deploy_block"] == 1  # a fresh chain
        finally:
            proc.send_signal(signal.SIGINT)
            assert proc.wait(timeout=30) == 0
    finally:
        leftover.stop()


def test_make_run_refuses_a_port_something_else_answers_on(tmp_path: Path) -> None:
    env = {k: v for k, v in os.environ.items() if not k.startswith("AGENTLEDGER_")}
    anvil_port, api_port = free_port(), free_port()
    env.update(
        AGENTLEDGER_ANVIL_PORT=str(anvil_port),
        AGENTLEDGER_API_PORT=str(api_port),
        AGENTLEDGER_DEPLOYMENTS_DIR=str(tmp_path / "deployments"),
        AGENTLEDGER_DATA_DIR=str(tmp_path / "var"),
    )

    def make_run() -> subprocess.CompletedProcess[str]:
        return subprocess.run(
            [sys.executable, "-m", "scripts.run"], cwd=ROOT, env=env, capture_output=True, text=True, timeout=60
        )

    with Anvil(anvil_port) as foreign:  # someone else's node (another project's anvil) on the port
        before = connect(foreign.rpc_url).eth.block_number
        done = make_run()
        assert done.returncode == 2, done.stderr
        assert f"port {anvil_port} is in use" in done.stderr and "AGENTLEDGER_ANVIL_PORT" in done.stderr
        assert not (tmp_path / "deployments" / "31337.json").exists()  # nothing deployed onto it
        assert connect(foreign.rpc_url).eth.block_number == before and foreign.proc is not None
        assert foreign.proc.poll() is None  # and it is left alone
    import socket

    with socket.socket() as busy:
        busy.bind(("127.0.0.1", api_port))
        busy.listen()
        done = make_run()
        assert done.returncode == 2, done.stderr
        assert f"port {api_port} is in use" in done.stderr and "AGENTLEDGER_API_PORT" in done.stderr
    assert not _port_open(anvil_port)  # no anvil was started


def test_the_chain_of_the_last_run_is_kept_only_for_a_database_that_followed_it(tmp_path: Path) -> None:
    """scripts.run.kept_deployment: a new database (its audit log is not what the chain anchored) or one
    whose indexed block the chain lacks gets a fresh chain; one that followed this chain keeps it."""
    settings = Settings(deployments_dir=tmp_path / "deployments", data_dir=tmp_path / "var", db_path="")
    (tmp_path / "var").mkdir()
    with Anvil() as node:
        w3 = connect(node.rpc_url)
        deployer = Account.from_key(ANVIL_DEV_KEY)
        assert kept_deployment(w3, settings) is None  # nothing deployed yet
        dep = deploy_system(w3, deployer, Roles.from_env(deployer.address))
        deployments.save(dep, settings.deployments_dir)
        assert kept_deployment(w3, settings) is None  # a database that never followed this chain
        head = w3.eth.get_block("latest")
        db = settings.database.connect()
        set_tip(db, dep.chain_id, head["number"], head["hash"].to_0x_hex(), head["number"], head["number"], 0.0)
        assert kept_deployment(w3, settings) == dep
        set_tip(db, dep.chain_id, head["number"], "0x" + "cd" * 32, head["number"], head["number"], 0.0)
        assert kept_deployment(w3, settings) is None  # indexed a block this chain does not have
        set_tip(db, dep.chain_id, head["number"] + 5, head["hash"].to_0x_hex(), head["number"], head["number"], 0.0)
        assert kept_deployment(w3, settings) is None  # indexed past this chain's head (an older state dump)
        db.close()
