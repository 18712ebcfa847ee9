"""`make run` (python -m scripts.run) as a child process for the tests: its own ports, data and
deployments directories under the test's tmp_path, on the test's backend (tests.pg_redirect)."""

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

from core.chain import ROOT
from tests.pg_redirect import child_env


def get_json(url: str) -> Any:
    with urllib.request.urlopen(url, timeout=2) as resp:  # noqa: S310 (loopback test server)
        return json.loads(resp.read())


def run_env(tmp_path: Path, anvil_port: int, api_port: int) -> dict[str, str]:
    env = {k: v for k, v in os.environ.items() if not k.startswith("AGENTLEDGER_")}
    env.update(
        AGENTLEDGER_ANVIL_PORT=str(anvil_port),
        AGENTLEDGER_API_PORT=str(api_port),
        AGENTLEDGER_DEPLOYMENTS_DIR=str(tmp_path / "deployments"),
        AGENTLEDGER_DATA_DIR=str(tmp_path / "var"),
    )
    env.update(child_env(tmp_path / "var" / "agentledger.db"))  # make test-postgresql: its database
    return env


def start_run(tmp_path: Path, anvil_port: int, api_port: int, log_path: Path) -> subprocess.Popen[bytes]:
    with open(log_path, "ab") as log:
        return subprocess.Popen(
            [sys.executable, "-m", "scripts.run"],
            cwd=ROOT,
            env=run_env(tmp_path, anvil_port, api_port),
            stdout=log,
            stderr=log,
        )


def wait_synced(api_port: int, proc: subprocess.Popen[bytes], log_path: Path) -> dict[str, Any]:
    deadline = time.monotonic() + 90
    while time.monotonic() < deadline:
        assert proc.poll() is None, log_path.read_text()
        try:
            body: dict[str, Any] = get_json(f"http://127.0.0.1:{api_port}/healthz")
            if body.get("indexer", {}).get("state") == "synced":
                return body
        except OSError:
            pass
        time.sleep(0.2)
    raise AssertionError("never synced: " + log_path.read_text()[-2000:])


def stop_run(proc: subprocess.Popen[bytes]) -> None:
    proc.send_signal(signal.SIGINT)
    assert proc.wait(timeout=30) == 0
