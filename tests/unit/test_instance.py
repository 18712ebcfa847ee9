"""core.instance: which owner of a claim is certainly gone."""

from __future__ import annotations

import os
import socket
import subprocess
import sys

from core import instance


def test_who_is_gone() -> None:
    me = instance.current()
    host, pid, start, _token = me.rsplit(":", 3)
    assert (host, int(pid)) == (socket.gethostname(), os.getpid())
    assert not instance.is_gone(me) and not instance.is_gone(None) and not instance.is_gone("garbage")
    assert instance.is_gone(f"{host}:{pid}:{start}:another")  # this pid under another token: an earlier start
    assert not instance.is_gone(f"some-other-host:{pid}:{start}:x")  # not judged here
    child = subprocess.run(
        [sys.executable, "-c", "from core import instance; print(instance.current())"],
        capture_output=True,
        text=True,
        check=True,
    )
    exited = child.stdout.strip()
    assert exited.split(":")[0] == host and instance.is_gone(exited)  # the process has exited
    parent = os.getppid()  # alive, but started at another time than this made-up id says
    assert not instance.is_gone(f"{host}:{parent}:0:x")
    assert instance.is_gone(f"{host}:{parent}:1:x") == (sys.platform == "linux")


def test_on_this_host() -> None:
    host = socket.gethostname()
    assert instance.on_this_host(instance.current()) and instance.on_this_host(f"{host}:1:0:x")
    assert not instance.on_this_host("some-other-host:1:0:x")
    assert not instance.on_this_host(None) and not instance.on_this_host("")
