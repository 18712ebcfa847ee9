"""This process as the owner of what it holds in the shared database (Idempotency-Key claims,
checkout sessions it is completing): an instance id per process start, and whether the owner named
by such an id is certainly gone.

An id is `host:pid:start:token`: the host name, the process id, the process's start time (Linux:
field 22 of /proc/<pid>/stat, clock ticks since boot; elsewhere 0) and a random token. An owner is
certainly gone when it ran on this host and no process with its pid runs (or a zombie), or one does
but started at another time (the pid was reused, e.g. PID 1 in a container restarted), or it is this
very pid under another token. Owners on other hosts are never judged here: for those, the callers'
time limits apply.
"""

from __future__ import annotations

import os
import secrets
import socket
from functools import cache
from pathlib import Path

__all__ = ["current", "is_gone", "on_this_host"]


def _start_ticks(pid: int) -> int | None:
    """The process's start time in clock ticks since boot (Linux); 0 where /proc does not exist;
    None when there is no such process, or it is a zombie (exited, not yet reaped)."""
    proc = Path("/proc")
    if not proc.is_dir():
        try:
            os.kill(pid, 0)
        except ProcessLookupError:
            return None
        except PermissionError:
            pass
        return 0
    try:
        stat = (proc / str(pid) / "stat").read_text()
    except OSError:
        return None
    fields = stat[stat.rindex(")") + 2 :].split()  # after "pid (comm) ": state is field 3, starttime 22
    if fields[0] in ("Z", "X"):
        return None
    return int(fields[19])


@cache
def _current(pid: int) -> str:
    return f"{socket.gethostname()}:{pid}:{_start_ticks(pid) or 0}:{secrets.token_hex(6)}"


def current() -> str:
    """This process's instance id (a child process after fork gets its own)."""
    return _current(os.getpid())


def is_gone(owner: str | None) -> bool:
    """True only when the process that wrote `owner` certainly no longer runs (see the module doc)."""
    if not owner or owner == current():
        return False
    try:
        host, raw_pid, raw_start, _token = owner.rsplit(":", 3)
        pid, start = int(raw_pid), int(raw_start)
    except ValueError:
        return False
    if host != socket.gethostname():
        return False
    if pid == os.getpid():
        return True  # this pid under another token: an earlier start of ours
    running = _start_ticks(pid)
    return running is None or (start != 0 and running != 0 and running != start)


def on_this_host(owner: str | None) -> bool:
    """Whether `owner` names a process of this host (the only ones is_gone can judge)."""
    return bool(owner) and str(owner).rsplit(":", 3)[0] == socket.gethostname()
