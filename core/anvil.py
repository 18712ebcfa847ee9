"""Start and stop a local anvil node (from npm @foundry-rs/anvil) for `make run` and the tests."""

from __future__ import annotations

import os
import signal
import socket
import subprocess
import time
import urllib.error
import urllib.request
from pathlib import Path
from types import TracebackType

from core.chain import ROOT

ANVIL_BIN = ROOT / "node_modules" / ".bin" / "anvil"


def free_port() -> int:
    with socket.socket() as s:
        s.bind(("127.0.0.1", 0))
        port: int = s.getsockname()[1]
        return port


class Anvil:
    """A real anvil process on 127.0.0.1:`port`; a context manager that always stops it."""

    def __init__(
        self,
        port: int | None = None,
        *,
        chain_id: int = 31337,
        block_time: float | None = None,
        extra_args: list[str] | None = None,
        log_path: Path | None = None,
    ) -> None:
        self.port = port or free_port()
        self.chain_id = chain_id
        self.block_time = block_time
        self.extra_args = extra_args or []
        self.log_path = log_path
        self.proc: subprocess.Popen[bytes] | None = None

    @property
    def rpc_url(self) -> str:
        return f"http://127.0.0.1:{self.port}"

    def start(self, timeout: float = 30.0) -> Anvil:
        if not ANVIL_BIN.exists():
            raise FileNotFoundError(f"{ANVIL_BIN} is missing: run `npm ci`")
        args = [str(ANVIL_BIN), "--host", "127.0.0.1", "--port", str(self.port), "--chain-id", str(self.chain_id)]
        if self.block_time is not None:
            args += ["--block-time", str(self.block_time)]
        args += self.extra_args
        out = open(self.log_path, "ab") if self.log_path else subprocess.DEVNULL  # noqa: SIM115
        # Own process group: Ctrl-C in a terminal reaches us, and we stop anvil ourselves.
        self.proc = subprocess.Popen(args, stdout=out, stderr=subprocess.STDOUT, start_new_session=True)
        deadline = time.monotonic() + timeout
        while time.monotonic() < deadline:
            if self.proc.poll() is not None:
                raise RuntimeError(f"anvil exited with code {self.proc.returncode}")
            if self._answers():
                return self
            time.sleep(0.05)
        self.stop()
        raise TimeoutError(f"anvil did not answer on port {self.port} within {timeout}s")

    def _answers(self) -> bool:
        body = b'{"jsonrpc":"2.0","id":1,"method":"eth_chainId","params":[]}'
        headers = {"Content-Type": "application/json"}
        req = urllib.request.Request(self.rpc_url, data=body, headers=headers)  # noqa: S310 (our http URL)
        try:
            with urllib.request.urlopen(req, timeout=1) as resp:  # noqa: S310
                return bool(resp.status == 200)
        except (urllib.error.URLError, ConnectionError, TimeoutError):
            return False

    def stop(self, timeout: float = 10.0) -> None:
        proc, self.proc = self.proc, None
        if proc is None or proc.poll() is not None:
            return
        os.killpg(proc.pid, signal.SIGTERM)
        try:
            proc.wait(timeout)
        except subprocess.TimeoutExpired:
            os.killpg(proc.pid, signal.SIGKILL)
            proc.wait()

    def __enter__(self) -> Anvil:
        return self.start()

    def __exit__(self, et: type[BaseException] | None, ev: BaseException | None, tb: TracebackType | None) -> None:
        self.stop()
