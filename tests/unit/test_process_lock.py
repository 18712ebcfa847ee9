"""core.store.ProcessLock: one holder at a time across processes, released when its holder dies."""

from __future__ import annotations

import os
import signal
import subprocess
import sys
import threading
from collections.abc import Iterator
from contextlib import contextmanager
from pathlib import Path

from core.chain import ROOT
from core.store import ProcessLock, open_database

HOLDER = """
import sys
from core.store import ProcessLock, open_database
with ProcessLock(open_database(sys.argv[1]), "operator-x").held():
    print("held", flush=True)
    sys.stdin.readline()
"""


@contextmanager
def _holder(db: Path) -> Iterator[subprocess.Popen[str]]:
    """A process holding "operator-x" on `db` until it reads a line from stdin (or is killed)."""
    with subprocess.Popen(
        [sys.executable, "-c", HOLDER, str(db)], cwd=ROOT, stdin=subprocess.PIPE, stdout=subprocess.PIPE, text=True
    ) as child:
        try:
            assert child.stdout is not None and child.stdout.readline().strip() == "held"
            yield child
        finally:
            child.kill()


def _acquire_in_thread(lock: ProcessLock) -> threading.Event:
    got = threading.Event()

    def take() -> None:
        with lock.held():
            got.set()

    threading.Thread(target=take, daemon=True).start()
    return got


def test_another_process_waits_until_the_holder_releases(tmp_path: Path) -> None:
    with _holder(tmp_path / "a.db") as child:
        got = _acquire_in_thread(ProcessLock(open_database(tmp_path / "a.db"), "operator-x"))
        assert not got.wait(0.5)  # held by the child
        assert child.stdin is not None
        child.stdin.write("\n")
        child.stdin.flush()
        assert got.wait(10)


def test_a_killed_holder_releases_the_lock(tmp_path: Path) -> None:
    with _holder(tmp_path / "b.db") as child:
        got = _acquire_in_thread(ProcessLock(open_database(tmp_path / "b.db"), "operator-x"))
        assert not got.wait(0.5)
        os.kill(child.pid, signal.SIGKILL)
        assert got.wait(10)


def test_other_names_and_databases_do_not_wait(tmp_path: Path) -> None:
    with _holder(tmp_path / "c.db"):
        assert _acquire_in_thread(ProcessLock(open_database(tmp_path / "c.db"), "operator-y")).wait(10)
        assert _acquire_in_thread(ProcessLock(open_database(tmp_path / "d.db"), "operator-x")).wait(10)
