"""The tests' throwaway PostgreSQL cluster (tests/pg_kit.py) does not outlive a killed owner."""

from __future__ import annotations

import os
import signal
import socket
import subprocess
import sys
import time
from pathlib import Path

from core.chain import ROOT

OWNER = """
import time
from tests.pg_kit import PgCluster
cluster = PgCluster().start()
print(cluster.dir, cluster.port, flush=True)
time.sleep(600)
"""


def _listening(port: int) -> bool:
    with socket.socket() as s:
        return s.connect_ex(("127.0.0.1", port)) == 0


def test_a_cluster_whose_owner_is_killed_is_stopped_and_removed() -> None:
    """kill -9 of the owner (as of a pytest run cut off by a timeout): its watchdog stops the server
    and removes its directory, instead of leaving a postgres running under /tmp."""
    owner = subprocess.Popen(
        [sys.executable, "-c", OWNER],
        cwd=ROOT,
        env={**os.environ, "PYTHONPATH": str(ROOT)},
        stdout=subprocess.PIPE,
        text=True,
    )
    try:
        assert owner.stdout is not None
        directory, port = owner.stdout.readline().split()
        assert Path(directory, "data", "postmaster.pid").exists() and _listening(int(port))
    finally:
        owner.send_signal(signal.SIGKILL)
        owner.wait()
        assert owner.stdout is not None
        owner.stdout.close()
    deadline = time.monotonic() + 30
    while Path(directory).exists() or _listening(int(port)):
        assert time.monotonic() < deadline, "the cluster outlived its owner"
        time.sleep(0.2)
