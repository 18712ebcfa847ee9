"""Start and stop a local anvil node (from npm @foundry-rs/anvil) for `make run` and the tests.

An anvil must never outlive the process that started it (a SIGKILLed `make run` left its anvil
running, and the next `make run` deployed onto that old chain): on Linux the node is started with
PR_SET_PDEATHSIG, so the kernel kills it when its parent dies, whatever the signal; anywhere, a pid
file (`pid_file`) lets the next start find and stop an anvil a previous run left. A port that
already answers is refused before anvil is started: the node that answers there is not ours.
"""

from __future__ import annotations

import contextlib
import os
import platform
import signal
import socket
import subprocess
import sys
import threading
import time
import urllib.error
import urllib.request
from pathlib import Path
from types import TracebackType

from core.chain import ROOT

ANVIL_BIN = ROOT / "node_modules" / ".bin" / "anvil"
_PR_SET_PDEATHSIG = 1


def free_port() -> int:
    with socket.socket() as s:
        s.bind(("127.0.0.1", 0))
        port: int = s.getsockname()[1]
        return port


def port_in_use(port: int, host: str = "127.0.0.1") -> bool:
    """Whether something accepts connections on host:port."""
    with socket.socket() as s:
        s.settimeout(1.0)
        return s.connect_ex((host, port)) == 0


def anvil_binary() -> Path:
    """The native anvil of this platform from the npm package, when present: started directly, it is
    the process that dies with its parent (the npm wrapper is a node process that would leave it
    behind if it were killed itself); the wrapper otherwise."""
    system = platform.system().lower()
    machine = {"x86_64": "amd64", "amd64": "amd64", "aarch64": "arm64", "arm64": "arm64"}.get(
        platform.machine().lower(), platform.machine().lower()
    )
    native = ROOT / "node_modules" / "@foundry-rs" / f"anvil-{system}-{machine}" / "bin" / "anvil"
    return native if native.exists() else ANVIL_BIN


#: Run as `python -c _LAUNCHER <parent pid> <binary> <args...>`: ask the kernel to SIGKILL this process
#: when its parent dies (PR_SET_PDEATHSIG survives exec), then become anvil. A fresh interpreter (no
#: threads) rather than a preexec_fn, which is unsafe in a process with threads.
_LAUNCHER = (
    "import ctypes, os, sys\n"
    f"ctypes.CDLL(None).prctl({_PR_SET_PDEATHSIG}, {int(signal.SIGKILL)}, 0, 0, 0)\n"
    "if os.getppid() != int(sys.argv[1]):\n"  # the parent died before the request took effect
    "    os._exit(1)\n"
    "os.execv(sys.argv[2], sys.argv[2:])\n"
)


def _dies_with_parent(args: list[str]) -> list[str]:
    """`args` run so that the process dies with this one (Linux; elsewhere unchanged)."""
    if sys.platform != "linux" or threading.current_thread() is not threading.main_thread():
        # the signal follows the thread that started the child: a worker thread's exit would kill it
        return args
    return [sys.executable, "-I", "-S", "-c", _LAUNCHER, str(os.getpid()), *args]


class Anvil:
    """A real anvil process on 127.0.0.1:`port`; a context manager that always stops it. It dies with
    the process that started it (Linux); `pid_file`, when given, names it until it is stopped."""

    def __init__(
        self,
        port: int | None = None,
        *,
        chain_id: int = 31337,
        block_time: float | None = None,
        extra_args: list[str] | None = None,
        log_path: Path | None = None,
        pid_file: Path | None = None,
    ) -> None:
        self.port = port or free_port()
        self.chain_id = chain_id
        self.block_time = block_time
        self.extra_args = extra_args or []
        self.log_path = log_path
        self.pid_file = pid_file
        self.proc: subprocess.Popen[bytes] | None = None

    @property
    def rpc_url(self) -> str:
        return f"http://127.0.0.1:{self.port}"

    def start(self, timeout: float = 30.0) -> Anvil:
        binary = anvil_binary()
        if not binary.exists():
            raise FileNotFoundError(f"{binary} is missing: run `npm ci`")
        if port_in_use(self.port):
            raise PortInUse(self.port)
        args = [str(binary), "--host", "127.0.0.1", "--port", str(self.port), "--chain-id", str(self.chain_id)]
        if self.block_time is not None:
            args += ["--block-time", str(self.block_time)]
        args += self.extra_args
        out = open(self.log_path, "ab") if self.log_path else subprocess.DEVNULL  # noqa: SIM115
        # Own process group: Ctrl-C in a terminal reaches us, and we stop anvil ourselves.
        self.proc = subprocess.Popen(
            _dies_with_parent(args), stdout=out, stderr=subprocess.STDOUT, start_new_session=True
        )
        if self.pid_file is not None:
            self.pid_file.write_text(f"{self.proc.pid} {self.port}\n")
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
        if proc is None:
            return
        if proc.poll() is None:
            os.killpg(proc.pid, signal.SIGTERM)
            try:
                proc.wait(timeout)
            except subprocess.TimeoutExpired:
                os.killpg(proc.pid, signal.SIGKILL)
                proc.wait()
        if self.pid_file is not None:
            with contextlib.suppress(FileNotFoundError):
                self.pid_file.unlink()

    def __enter__(self) -> Anvil:
        return self.start()

    def __exit__(self, et: type[BaseException] | None, ev: BaseException | None, tb: TracebackType | None) -> None:
        self.stop()


class PortInUse(RuntimeError):
    def __init__(self, port: int) -> None:
        super().__init__(f"port {port} is already in use by another process")
        self.port = port


def stop_stale(pid_file: Path, timeout: float = 10.0) -> int | None:
    """Stop the anvil a previous run left behind, as its pid file names it (only if that process is
    still an anvil); the pid stopped, or None. The pid file is removed either way."""
    try:
        pid = int(pid_file.read_text().split()[0])
    except (OSError, ValueError, IndexError):
        return None
    stopped = None
    if _is_anvil(pid):
        with contextlib.suppress(ProcessLookupError):
            os.kill(pid, signal.SIGTERM)
            deadline = time.monotonic() + timeout
            while _is_anvil(pid) and time.monotonic() < deadline:
                time.sleep(0.05)
            if _is_anvil(pid):
                os.kill(pid, signal.SIGKILL)
        stopped = pid
    with contextlib.suppress(FileNotFoundError):
        pid_file.unlink()
    return stopped


def _is_anvil(pid: int) -> bool:
    """Whether `pid` runs an anvil (Linux: its command line; elsewhere: whether it runs at all)."""
    cmdline = Path(f"/proc/{pid}/cmdline")
    if Path("/proc").is_dir():
        try:
            stat = Path(f"/proc/{pid}/stat").read_text()
            if stat[stat.rindex(")") + 2 :].startswith(("Z", "X")):
                return False
            return b"anvil" in cmdline.read_bytes()
        except OSError:
            return False
    try:
        os.kill(pid, 0)
    except ProcessLookupError:
        return False
    except PermissionError:
        return True
    return True
