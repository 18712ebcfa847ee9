"""`python -m indexer --until-head` as an operator runs it: on a terminal (a real pseudo-terminal) its
backfill shows a bar redrawn in place (blocks, blocks/s, events/s, ETA); on a pipe, plain lines."""

from __future__ import annotations

import os
import pty
import re
import subprocess
import sys
from pathlib import Path

from core import deployments
from core.chain import ROOT
from tests.integration.chainkit import System
from tests.integration.indexer_kit import mine

LINE = re.compile(r"block \d+/\d+ \(\d+%\) [\d,]+ blocks/s [\d,]+ events/s ETA [\d,]+s")


def _command(system: System, tmp_path: Path, db: str) -> tuple[list[str], dict[str, str]]:
    deployments.save(system.deployment, tmp_path / "deployments")
    env = {
        **os.environ,
        "AGENTLEDGER_DEPLOYMENTS_DIR": str(tmp_path / "deployments"),
        "AGENTLEDGER_LOG_FORMAT": "text",
        "TERM": "xterm",
        "COLUMNS": "120",
    }
    rpc: str = system.w3.provider.endpoint_uri  # type: ignore[attr-defined]
    return [sys.executable, "-m", "indexer", "--rpc", rpc, "--db", str(tmp_path / db), "--until-head"], env


def test_on_a_terminal_the_backfill_is_a_bar_redrawn_in_place(system: System, tmp_path: Path) -> None:
    mine(system, 200)  # several ranges (the first is 16 blocks)
    cmd, env = _command(system, tmp_path, "tty.db")
    master, slave = pty.openpty()
    proc = subprocess.Popen(cmd, cwd=ROOT, env=env, stdin=subprocess.DEVNULL, stdout=subprocess.DEVNULL, stderr=slave)
    os.close(slave)
    out = b""
    try:
        while True:
            try:
                chunk = os.read(master, 65536)
            except OSError:  # EIO: the child closed the terminal
                break
            if not chunk:
                break
            out += chunk
    finally:
        os.close(master)
        assert proc.wait(timeout=60) == 0, out.decode(errors="replace")[-2000:]
    text = out.decode()
    head = system.w3.eth.block_number
    bars = [part for part in text.split("\r") if part.startswith("backfill [")]
    assert bars, text
    last = bars[-1].split("\x1b[K")[0]
    assert re.fullmatch(r"backfill \[#+\] 100% block [\d,]+/[\d,]+ [\d,]+ blocks/s [\d,]+ events/s ETA 0s", last), last
    assert f"block {head:,}/{head:,}" in last
    assert "\x1b[K" in text and f"indexed to block {head}" in text


def test_on_a_pipe_the_backfill_is_plain_lines(system: System, tmp_path: Path) -> None:
    mine(system, 200)
    cmd, env = _command(system, tmp_path, "pipe.db")
    done = subprocess.run(cmd, cwd=ROOT, env=env, capture_output=True, text=True, timeout=60, check=False)
    assert done.returncode == 0, done.stderr[-2000:]
    head = system.w3.eth.block_number
    assert "\r" not in done.stderr and "\x1b" not in done.stderr
    lines = [ln for ln in done.stderr.splitlines() if ln.startswith("block ")]
    assert lines and all(LINE.fullmatch(ln) for ln in lines), done.stderr
    assert lines[-1].startswith(f"block {head}/{head} (100%)")
    assert done.stderr.rstrip().endswith(f"indexed to block {head} (final {head})")
