"""The shared end-to-end scenarios (sdk/scenarios/scenarios.json), run by the Python SDK against a live
`make run`: `python -m scripts.run` in a process of its own (its own anvil, every contract deployed,
the indexer and every background job, SQLite, or PostgreSQL under the redirect), once for the module;
each scenario is its script sdk/scenarios/python/<name>.py in a process of its own, given the service
(AGENTLEDGER_URL), the chain (AGENTLEDGER_RPC_URL) and funded keys (AGENTLEDGER_PRIVATE_KEYS: anvil's
development accounts 1-9; account 0 is the service's operator, whose nonces a script must not race).

Every listed scenario must have a Python script that passes, or be named in NOT_YET with why."""

from __future__ import annotations

import json
import os
import subprocess
import sys
import time
import urllib.request
from collections.abc import Iterator
from dataclasses import dataclass
from pathlib import Path
from typing import Any

import pytest
from agentledger_sdk import AgentLedger
from eth_account import Account

from core.anvil import free_port
from core.chain import ROOT
from tests.pg_redirect import child_env

SCENARIOS = ROOT / "sdk" / "scenarios"
SCRIPTS = SCENARIOS / "python"
LISTED: dict[str, str] = json.loads((SCENARIOS / "scenarios.json").read_text())["scenarios"]
#: Scenarios without a passing Python script yet, each with why (empty: every one runs).
NOT_YET: dict[str, str] = {}
ANVIL_MNEMONIC = "test test test test test test test test test test test junk"


def dev_keys() -> list[str]:
    Account.enable_unaudited_hdwallet_features()
    return [
        Account.from_mnemonic(ANVIL_MNEMONIC, account_path=f"m/44'/60'/0'/0/{i}").key.to_0x_hex() for i in range(1, 10)
    ]


@dataclass
class Live:
    env: dict[str, str]  # the scripts'
    service_env: dict[str, str]  # make run's (its database, deployments, data directory)
    log: Path


def _healthz(url: str) -> dict[str, Any] | None:
    try:
        with urllib.request.urlopen(url + "/healthz", timeout=5) as resp:  # noqa: S310 - loopback
            body: dict[str, Any] = json.loads(resp.read())
            return body
    except OSError:
        return None


@pytest.fixture(scope="module")
def live(tmp_path_factory: pytest.TempPathFactory) -> Iterator[Live]:
    tmp = tmp_path_factory.mktemp("make-run")
    anvil_port, api_port = free_port(), free_port()
    env = {k: v for k, v in os.environ.items() if not k.startswith("AGENTLEDGER_")}
    env.update(
        AGENTLEDGER_ANVIL_PORT=str(anvil_port),
        AGENTLEDGER_API_PORT=str(api_port),
        AGENTLEDGER_DEPLOYMENTS_DIR=str(tmp / "deployments"),
        AGENTLEDGER_DATA_DIR=str(tmp / "var"),
        AGENTLEDGER_POLL_INTERVAL="0.05",
        AGENTLEDGER_DROP_SETTLE_INTERVAL="1",  # the drop scenario waits for a settle after the notice
    )
    env.update(child_env(tmp / "var" / "agentledger.db"))
    log = tmp / "run.log"
    with open(log, "wb") as out:
        proc = subprocess.Popen([sys.executable, "-m", "scripts.run"], cwd=ROOT, env=env, stdout=out, stderr=out)
    url = f"http://127.0.0.1:{api_port}"
    try:
        deadline = time.monotonic() + 120
        while (body := _healthz(url)) is None or body.get("status") != "ok":
            assert proc.poll() is None, log.read_text()[-4000:]
            assert time.monotonic() < deadline, f"make run did not become healthy: {body}"
            time.sleep(0.2)
        assert body["backend"] == ("postgresql" if "AGENTLEDGER_DATABASE_URL" in env else "sqlite")
        script_env = {k: v for k, v in os.environ.items() if not k.startswith("AGENTLEDGER_")}
        script_env.update(
            AGENTLEDGER_URL=url,
            AGENTLEDGER_RPC_URL=f"http://127.0.0.1:{anvil_port}",
            AGENTLEDGER_PRIVATE_KEYS=",".join(dev_keys()),
        )
        yield Live(script_env, env, log)
    finally:
        proc.terminate()
        try:
            proc.wait(30)
        except subprocess.TimeoutExpired:
            proc.kill()
            proc.wait(10)


def test_every_listed_scenario_has_a_python_script_or_is_named_not_yet() -> None:
    scripts = {p.stem for p in SCRIPTS.glob("*.py") if not p.name.startswith("_")}
    assert set(NOT_YET) <= set(LISTED), "NOT_YET names a scenario that is not listed"
    assert set(LISTED) - set(NOT_YET) <= scripts, f"no Python script for {sorted(set(LISTED) - set(NOT_YET) - scripts)}"
    assert scripts <= set(LISTED), f"scripts of unlisted scenarios: {sorted(scripts - set(LISTED))}"


@pytest.mark.timeout(300)
@pytest.mark.parametrize("name", sorted(set(LISTED) - set(NOT_YET)))
def test_scenario_passes_against_make_run(live: Live, name: str) -> None:
    done = subprocess.run(
        [sys.executable, str(SCRIPTS / f"{name}.py")],
        cwd=SCRIPTS,
        env=live.env,
        capture_output=True,
        text=True,
        timeout=240,
    )
    assert done.returncode == 0, f"{name}: {done.stdout[-2000:]}\n{done.stderr[-4000:]}"
    summary = json.loads(done.stdout.strip().splitlines()[-1])
    assert summary["ok"] is True, summary


def test_an_anchored_decision_verifies_against_the_root_on_the_chain(live: Live) -> None:
    """What no scenario reaches (anchoring is the operator's, nightly): once `python -m scripts.anchor
    --once` has anchored the log, the SDK's verification reads AuditAnchor.rootAt from the chain."""
    url, rpc = live.env["AGENTLEDGER_URL"], live.env["AGENTLEDGER_RPC_URL"]
    with AgentLedger(url) as al:
        agent = al.register("anchored", "content_seo").agent.id
        logged = al.log_decision(agent, "routine", "ab" * 32, "gpt-x", "1")
        before = al.verify_decision(logged, rpc_url=rpc)
        assert before.ok and not before.anchored and before.root_onchain is None, before.problems
        subprocess.run(
            [sys.executable, "-m", "scripts.anchor", "--once", "--rpc", rpc],
            cwd=ROOT,
            env=live.service_env,
            check=True,
            capture_output=True,
            timeout=120,
        )
        after = al.verify_decision(logged, rpc_url=rpc)
    assert after.ok, after.problems
    assert after.anchored and after.root_onchain is True and after.tree_size >= logged.audit_id
